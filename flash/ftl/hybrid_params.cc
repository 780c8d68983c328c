// hybrid_params.cc — HybridStore::resolve_params: defaults and ranges of a BAST or FAST device
// (log blocks, the merge reserve, the logical size). The method and obsolete mode are already
// checked (StoreParams::check_method); messages name the parameter.
//
// Every logical block needs a data block of its own, the log blocks come on top, and a full
// merge needs one erased block (the reserve) before it frees the old ones: so the logical size
// is at most (data blocks - log blocks - reserve) blocks, and there is no thin provisioning.
#include <string>

#include "flash/ftl/hybrid_store.h"

namespace pdl {

Status HybridStore::resolve_params(StoreParams* p, const Geometry& g) {
  auto bad = [](const std::string& m) { return Status::error(Errc::kInvalidArgument, m); };
  if (p->method != Method::kFtl || (p->ftl != FtlKind::kBast && p->ftl != FtlKind::kFast))
    return bad("ftl: the hybrid engine runs method=ftl with ftl=bast or ftl=fast only");
  if (p->log_region != 0) return bad("log_region: only the ipl method has a log region");
  if (p->log_sector != 0) return bad("log_sector: only the ipl method has log sectors");
  if (p->sb_slots != 0) return bad("sb_slots: only method=stablebuffer has staging slots");
  p->max_differential = 0;
  p->obsolete = ObsoleteMode::kMemory;  // no obsolete marks: the maps say what is current
  const uint32_t data_blocks = g.blocks > kSuperblockBlocks ? g.blocks - kSuperblockBlocks : 0;
  const char* kind = p->ftl == FtlKind::kFast ? "fast" : "bast";
  const uint32_t min_logs = p->ftl == FtlKind::kFast ? 2 : 1;  // FAST: sequential + random
  if (p->log_blocks == 0) p->log_blocks = StoreParams::kLogBlocksDefault;
  if (p->log_blocks < min_logs)
    return bad("log_blocks: " + std::to_string(p->log_blocks) + ": " + kind + " needs at least " +
               std::to_string(min_logs) +
               (min_logs == 2 ? " (one sequential and at least one random log block)" : ""));
  if (p->gc_reserve_blocks == 0) p->gc_reserve_blocks = 1;
  if (uint64_t(p->log_blocks) + p->gc_reserve_blocks + 1 > data_blocks)
    return bad("log_blocks: " + std::to_string(p->log_blocks) + " log blocks and " +
               std::to_string(p->gc_reserve_blocks) + " reserve block(s) leave no data block of " +
               "the chip's " + std::to_string(data_blocks));
  const uint64_t capacity =
      uint64_t(data_blocks - p->log_blocks - p->gc_reserve_blocks) * g.pages_per_block;
  if (p->logical_pages == 0) p->logical_pages = uint32_t(std::min<uint64_t>(capacity, 0xFFFFFFEFu));
  if (p->logical_pages > capacity)
    return bad("logical_pages: " + std::string(kind) + " with " + std::to_string(p->log_blocks) +
               " log blocks offers at most " + std::to_string(capacity) +
               " logical pages on this chip (" +
               std::to_string(data_blocks - p->log_blocks - p->gc_reserve_blocks) +
               " data blocks of " + std::to_string(g.pages_per_block) + " pages), asked for " +
               std::to_string(p->logical_pages));
  return Status::ok();
}

}  // namespace pdl
