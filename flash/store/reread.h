// reread.h — reading through transient bit errors.
//
// Read disturb and retention errors can exceed a chip's ECC on one read and not on the next
// (real NAND has read-retry for that), and an ECC can miscorrect, handing back wrong bytes as
// good ones — only the engine's CRCs catch those. So the engine reads a page again, up to
// kReadAttempts reads in all, while the device reports an uncorrectable error or the caller's
// check of the bytes fails. What never passes is reported: a run-time read fails with
// kCorrupt (never wrong bytes); at mount, a page the device keeps refusing fails the mount
// (it may hold the only copy of something), while one that reads but keeps failing its CRC is
// torn, as before. A torn page fails every attempt, so each one costs kReadAttempts - 1 extra
// reads at mount — only after a crash, and only for the few pages it tore.
#pragma once

#include <span>

#include "flash/device/nand.h"

namespace pdl {

inline constexpr int kReadAttempts = 4;

// Read `ppa` until `check()` (which looks at the caller's buffers) accepts it. Returns:
// Ok with *passed = true — accepted; Ok with *passed = false — read, but never accepted;
// kCorrupt — the last attempt was an uncorrectable read; any other device error at once.
template <class Check>
Status read_with_retries(Nand& nand, Ppa ppa, std::span<uint8_t> data, std::span<uint8_t> spare,
                         Check check, bool* passed) {
  *passed = false;
  Status st;
  for (int i = 0; i < kReadAttempts; i++) {
    st = nand.read(ppa, data, spare);
    if (st.is_ok() && check()) {
      *passed = true;
      return st;
    }
    if (!st.is_ok() && !st.is(Errc::kCorrupt)) return st;
  }
  return st;
}

// Without a check: retries uncorrectable reads only.
inline Status read_with_retries(Nand& nand, Ppa ppa, std::span<uint8_t> data,
                                std::span<uint8_t> spare) {
  bool passed;
  return read_with_retries(nand, ppa, data, spare, [] { return true; }, &passed);
}

}  // namespace pdl
