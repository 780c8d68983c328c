// status.cc — names of error codes and the printable form of a Status.
#include "flash/common/status.h"

namespace pdl {

const char* errc_name(Errc c) {
  switch (c) {
    case Errc::kOk: return "ok";
    case Errc::kIoError: return "io error";
    case Errc::kPowerCut: return "power cut";
    case Errc::kNandRule: return "nand rule violated";
    case Errc::kCorrupt: return "corrupt";
    case Errc::kFull: return "full";
    case Errc::kNotFound: return "not found";
    case Errc::kInvalidArgument: return "invalid argument";
    case Errc::kBusy: return "busy";
    case Errc::kUnsupported: return "unsupported";
    case Errc::kReadOnly: return "read-only";
    case Errc::kExists: return "exists";
    case Errc::kNameTooLong: return "name too long";
    case Errc::kBadBlock: return "bad block";
    case Errc::kHostFull: return "host file system full";
    case Errc::kTooLarge: return "file too large";
  }
  return "unknown";
}

std::string Status::to_string() const {
  if (is_ok()) return "ok";
  std::string s = errc_name(code_);
  if (msg_ && !msg_->empty()) {
    s += ": ";
    s += *msg_;
  }
  return s;
}

}  // namespace pdl
