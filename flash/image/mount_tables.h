// mount_tables.h — a store rebuilt from checkpointed tables instead of a scan: the dispatch to
// each engine's mount_tables, the counterpart of mount_store's dispatch to their scans.
//
// Contract for every engine's mount_tables(nand, params, mode, reader, out):
//   * reads exactly the sections its save_tables wrote, in order, and finishes the reader
//     (TableReader::finish: no byte left over);
//   * treats the bytes as hostile: every ppa, block, lpn and count is range-checked before it
//     indexes a table; a value out of range is Errc::kCorrupt naming the table; it never
//     crashes or allocates more than the stream can justify;
//   * performs no flash program or erase (reads only if the engine must, e.g. an NVM log);
//   * gives a store equal to the one that saved the tables, whose check() passes — the
//     checkpoint layer runs check() after it and falls back to a full scan on any error.
#pragma once

#include <memory>

#include "flash/device/nand.h"
#include "flash/store/page_store.h"
#include "flash/store/table_stream.h"

namespace pdl {

// The store of `params` (resolved, the superblock's) from tables its engine's save_tables
// wrote. kUnsupported for a method without checkpoint support (the caller scans instead).
Status mount_store_tables(Nand& nand, const StoreParams& params, CommitMode mode,
                          TableReader& r, std::unique_ptr<PageStore>* out);

}  // namespace pdl
