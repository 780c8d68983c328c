// status.h — the one error vocabulary used inside pdl.
//
// Every fallible call below the edges (VFS, FUSE, tools) returns a Status. It is a small value:
// an error code plus, only on failure, a message. The edges translate it exactly once
// (SQLITE_* in vfs/, -errno in fuse/, an exit code + message in tools). No exceptions are used
// for control flow, and none may cross a C ABI.
//
// Invariant: Status::ok() carries no message and allocates nothing, so the hot path is free.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>

namespace pdl {

enum class Errc : unsigned char {
  kOk = 0,
  kIoError,          // the medium or the host failed an operation
  kPowerCut,         // the emulated device is frozen (power cut): nothing reaches the media
  kNandRule,         // a NAND rule was broken (program over programmed bits, NOP, address)
  kCorrupt,          // bytes on flash fail a check (CRC, magic, bounds): never returned as data
  kFull,             // out of flash space; the store is unchanged and consistent
  kNotFound,         // the logical page is not mapped (reads return zeros alongside)
  kInvalidArgument,  // a parameter is out of range or contradicts the image
  kBusy,             // the image is held by another process
  kUnsupported,      // the image or request uses a feature this build does not have
  kReadOnly,         // a change was asked of something opened read-only
  kExists,           // a name to be created is taken
  kNameTooLong,      // a file name is longer than the volume allows
  kBadBlock,         // the chip failed a program or erase: the block must be retired
  kHostFull,         // the host file system holding an emulated chip's image is full (ENOSPC,
                     // EDQUOT): the operation touched nothing on the chip, and the chip is
                     // not at fault — no block is retired for it; it may work once the host
                     // has room again
  kTooLarge,         // a file offset or size beyond what the volume can ever hold (EFBIG)
};

class [[nodiscard]] Status {
 public:
  Status() = default;
  static Status ok() { return Status(); }
  static Status error(Errc code, std::string_view msg) { return Status(code, msg); }

  bool is_ok() const { return code_ == Errc::kOk; }
  explicit operator bool() const { return is_ok(); }
  Errc code() const { return code_; }
  bool is(Errc c) const { return code_ == c; }
  // The message, or "" for ok.
  std::string_view message() const { return msg_ ? std::string_view(*msg_) : std::string_view(); }
  // "<code name>: <message>" for logs and tools.
  std::string to_string() const;

 private:
  Status(Errc code, std::string_view msg)
      : code_(code), msg_(std::make_shared<const std::string>(msg)) {}
  Errc code_ = Errc::kOk;
  std::shared_ptr<const std::string> msg_;
};

const char* errc_name(Errc c);

}  // namespace pdl

// Propagate a failing Status from the current function.
#define PDL_TRY(expr)                         \
  do {                                        \
    ::pdl::Status pdl_try_status_ = (expr);   \
    if (!pdl_try_status_.is_ok()) return pdl_try_status_; \
  } while (0)
