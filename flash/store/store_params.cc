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
    case Method::kFtl: return "ftl";
    case Method::kStableBuffer: return "stablebuffer";
  }
  return "?";
}

const char* ftl_name(FtlKind k) {
  switch (k) {
    case FtlKind::kNone: return "none";
    case FtlKind::kPage: return "page";
    case FtlKind::kBast: return "bast";
    case FtlKind::kFast: return "fast";
  }
  return "?";
}

const char* sb_recognition_name(SbRecognition r) {
  return r == SbRecognition::kIncremental ? "incremental" : "ondemand";
}

const char* sb_flush_name(SbFlush f) { return f == SbFlush::kProactive ? "proactive" : "passive"; }

const char* obsolete_name(ObsoleteMode m) {
  return m == ObsoleteMode::kMemory ? "memory" : "spare";
}

bool parse_method(const std::string& s, Method* m) {
  if (s == "pdl") *m = Method::kPdl;
  else if (s == "opu") *m = Method::kOpu;
  else if (s == "ipu") *m = Method::kIpu;
  else if (s == "ipl") *m = Method::kIpl;
  else if (s == "ftl") *m = Method::kFtl;
  else if (s == "stablebuffer") *m = Method::kStableBuffer;
  else return false;
  return true;
}

bool parse_ftl(const std::string& s, FtlKind* k) {
  if (s == "page") *k = FtlKind::kPage;
  else if (s == "bast") *k = FtlKind::kBast;
  else if (s == "fast") *k = FtlKind::kFast;
  else return false;
  return true;
}

bool parse_sb_recognition(const std::string& s, SbRecognition* r) {
  if (s == "ondemand") *r = SbRecognition::kOnDemand;
  else if (s == "incremental") *r = SbRecognition::kIncremental;
  else return false;
  return true;
}

bool parse_sb_flush(const std::string& s, SbFlush* f) {
  if (s == "passive") *f = SbFlush::kPassive;
  else if (s == "proactive") *f = SbFlush::kProactive;
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
      method != Method::kIpl && !is_ftl_device(method))
    return bad("method: unknown method");
  if (is_ftl_device(method) != (ftl != FtlKind::kNone))
    return bad(is_ftl_device(method) ? "ftl: an ftl or stablebuffer store needs ftl=page, bast "
                                       "or fast"
                                     : "ftl: only the ftl and stablebuffer methods have an FTL");
  if (ftl != FtlKind::kNone && ftl != FtlKind::kPage && ftl != FtlKind::kBast &&
      ftl != FtlKind::kFast)
    return bad("ftl: must be page, bast or fast");
  if (method != Method::kStableBuffer && sb_slots != 0)
    return bad("sb_slots: only the stablebuffer method has a staging area");
  if ((ftl == FtlKind::kNone || ftl == FtlKind::kPage) && log_blocks != 0)
    return bad("log_blocks: only the bast and fast FTLs have log blocks");
  if (obsolete != ObsoleteMode::kSpare && obsolete != ObsoleteMode::kMemory)
    return bad("obsolete: must be spare or memory");
  if (nvm_bytes != 0 && !can_use_nvm(method))
    return bad("nvm: only the pdl and ipl methods keep data in NVM");
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
  if (is_ftl_device(method)) s += std::string(" ftl=") + ftl_name(ftl);
  if (log_blocks != 0) s += " log_blocks=" + std::to_string(log_blocks);
  if (method == Method::kStableBuffer) s += " sb_slots=" + std::to_string(sb_slots);
  if (nvm_bytes != 0) s += " nvm=" + std::to_string(nvm_bytes);
  s += " logical_pages=" + std::to_string(logical_pages);
  return s;
}

}  // namespace pdl
