// store_params.h — parameters of a page-update method, fixed at format time (kept in the
// superblock, docs/format.md §2).
#pragma once

#include <cstdint>
#include <string>

#include "flash/common/status.h"
#include "flash/device/geometry.h"

namespace pdl {

enum class Method : uint8_t {
  kPdl = 1,  // page-differential logging (seed 000)
  kOpu = 2,  // out-place update, page-level mapping (seed 000 §3)
};

enum class ObsoleteMode : uint8_t {
  kSpare = 1,   // the paper's experiments: program the spare area a second time
  kMemory = 2,  // seed 000 §6 enhancement: obsolete bits in RAM, rebuilt from sequence numbers
};

struct StoreParams {
  Method method = Method::kPdl;
  // Max_Differential_Size (seed 000 §4.3), bytes, record header included. 0 = a page.
  uint32_t max_differential = 256;
  ObsoleteMode obsolete = ObsoleteMode::kSpare;
  // Logical pages offered; 0 = every page of the data area minus the GC reserve.
  uint32_t logical_pages = 0;
  // Free blocks kept back so garbage collection can always run (>= 2).
  uint32_t gc_reserve_blocks = 0;

  // Fill defaults for `g` and check ranges; messages name the parameter.
  Status resolve(const Geometry& g);
  std::string describe() const;  // "pdl max_diff=256 obsolete=spare"
};

const char* method_name(Method m);
const char* obsolete_name(ObsoleteMode m);
// Parse "pdl"/"opu" and "spare"/"memory"; false if unknown.
bool parse_method(const std::string& s, Method* m);
bool parse_obsolete(const std::string& s, ObsoleteMode* m);

// Blocks at the start of the chip that hold the two superblock copies.
inline constexpr uint32_t kSuperblockBlocks = 2;

}  // namespace pdl
