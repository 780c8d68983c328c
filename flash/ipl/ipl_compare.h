// ipl_compare.h — an IplStore's whole tables compared field by field with those of a scan
// mount of the same chip (IPL and IPU): the checkpoint replay tests and `pdl fsck`'s
// checkpoint check (flash/image/tables_compare.h), which through the PageStore interface see
// only per lpn its location and per block its state.
//
// Compared (ipl_compare.cc): the header — method, geometry echo, the format-1 and atomic-group
// flags, next seq, the open group's start, the commit log's block and its used
// log sectors, the NVM commit slot's turn, the bad count; per logical page its slot state,
// mapped, has_log, pending trim; per logical block its erase block, used log sectors and the
// log sectors left garbage (as a set: only membership is read); per erase block its owner
// (a logical block, the commit log, a kept block or none), bad, retiring; the free blocks; the
// blocks and logical blocks purge() must still handle (as sets: purge() takes them in any
// order); the open group (pending trims, touched and kept logical blocks, dirty flag, program
// count — empty after any mount).
//
// The committed seq (the commit cut-off: items newer than it and older than the open group's
// start are void) is not compared for equality. The scan's is the newest commit record on
// flash. A replay's is the newer of that and, when the checkpoint had nothing to purge, every
// seq the checkpoint handed out (ipl_replay.cc) — as the run time's is after set_commit_mode
// (ipl_commit.cc): with no void item on flash everything programmed counts. The seqs between
// the two are then held only by items that count under either cut-off (seen: a plain merge's
// pages, which count without a commit record, the record after them lost to a cut), so a
// replay's may be newer than the scan's, never older; the items each treats as void are
// compared as the page states and the blocks to purge. For a
// checkpoint's own tables it is not compared at all: per page, programs commit themselves
// without moving the run time's cut-off, which may then be older than the scan's.
//
// Compared only for a replay (`from` kReplay), which builds a fresh store as the scan does:
// the free queue's order (block order in both), the erased marks (none: every free block is
// erased before use), the scrub marks and count (none), the wear-levelling clocks (erases
// since the mount, the clock's last look: zero, never).
// Left out for the checkpoint's own tables (`from` kCheckpoint), the run time's state a scan
// cannot rebuild and no read tells apart: the free queue's order (FIFO or by erase count, the
// scan's is block order), which free blocks are known erased, the scrub marks, the
// wear-levelling clocks. Never compared: note_update hints, stats, the I/O buffers (not
// tables: ipl_tables.cc saves none of them).
#pragma once

#include <cstdint>

#include "flash/common/status.h"

namespace pdl {

class IplStore;

// How the store compared with a scan was mounted.
enum class IplTablesFrom : uint8_t {
  kReplay,      // a checkpoint plus the blocks declared since (IplStore::replay)
  kCheckpoint,  // the checkpoint's tables alone (IplStore::mount_tables)
};

// OK if `mounted` and `scan` (IplStore::mount of the same chip, the same commit mode) agree;
// else kCorrupt naming the first field that differs, both values ("<field>: <from> x, scan y").
Status compare_ipl_tables(const IplStore& mounted, const IplStore& scan, IplTablesFrom from);

}  // namespace pdl
