// store_params.cc — names of the method parameters and the checks every method shares (each
// engine resolves the rest: PdlStore::resolve_params, IplStore::resolve_params).
#include "flash/store/store_params.h"

namespace pdl {

const char* method_name(Method m) {
  switch (m) {
    case Method::kPdl: return "pdl";
    case Method::kOpu: return "opu";
    case Method::kIpu: return "ipu";
    case Method::kIpl: return "ipl";
  }
  return "?";
}

const char* obsolete_name(ObsoleteMode m) {
  return m == ObsoleteMode::kMemory ? "memory" : "spare";
}

bool parse_method(const std::string& s, Method* m) {
  if (s == "pdl") *m = Method::kPdl;
  else if (s == "opu") *m = Method::kOpu;
  else if (s == "ipu") *m = Method::kIpu;
  else if (s == "ipl") *m = Method::kIpl;
  else return false;
  return true;
}

bool parse_obsolete(const std::string& s, ObsoleteMode* m) {
  if (s == "spare") *m = ObsoleteMode::kSpare;
  else if (s == "memory") *m = ObsoleteMode::kMemory;
  else return false;
  return true;
}

Status StoreParams::check_method() const {
  auto bad = [](const std::string& m) { return Status::error(Errc::kInvalidArgument, m); };
  if (method != Method::kPdl && method != Method::kOpu && method != Method::kIpu &&
      method != Method::kIpl)
    return bad("method: unknown method");
  if (obsolete != ObsoleteMode::kSpare && obsolete != ObsoleteMode::kMemory)
    return bad("obsolete: must be spare or memory");
  return Status::ok();
}

std::string StoreParams::describe() const {
  std::string s = method_name(method);
  if (writes_differentials(method)) s += " max_diff=" + std::to_string(max_differential);
  if (has_log_region(method)) s += " log_region=" + std::to_string(log_region);
  if (has_log_region(method) && log_sector != 0 && log_sector != kLogSector)
    s += " log_sector=" + std::to_string(log_sector);
  if (has_obsolete_marks(method))
    s += std::string(" obsolete=") + obsolete_name(obsolete);
  s += " logical_pages=" + std::to_string(logical_pages);
  return s;
}

}  // namespace pdl
