// file_media.h — an emulated chip's stored bytes in an image file (docs/format.md §1), read
// and written through a shared memory mapping where that is safe, with pread/pwrite elsewhere.
//
// Host room: host storage for a block is reserved (fallocate, the file's size kept) before
// this process first writes into it, so a write never stops half-way for want of room: a full
// host file system fails the write with kHostFull before any byte changes (on a file system
// without fallocate the write is attempted as is, and a short one is a torn program, as after
// a power cut). An erase needs no room: a block whose room is not reserved is erased by
// punching a hole (ext4 on a full disk may refuse one it must split an extent for: kHostFull,
// the erase count put back and the record dropped); one that is keeps its storage and is
// overwritten with zeros (re-allocating it page by page on every program cost more than the
// rest of the emulation).
//
// The mapping (MAP_SHARED over the whole file, made at the first need) serves only blocks
// whose host storage is known to be allocated — reserved by this process, or found fully
// allocated when the image was opened (SEEK_DATA/SEEK_HOLE) — plus the redo record and, so:
//   * holes stay holes: reading a hole through a shared mapping allocates it on tmpfs, so
//     every other block is read with pread (through a small cache of raw pages: 1024, or
//     PDL_IMAGE_READ_CACHE=N pages, 0 for none);
//   * a full host file system is an error status, never a SIGBUS: stores reach only
//     allocated storage. Mapped stores are used only where fallocate guarantees later writes
//     into the range (tmpfs, ext4); on xfs (reflinked copies), a copy-on-write file system (btrfs), NFS, FUSE
//     or anything unknown a write into an fallocated range can still fail, which through a
//     mapping is a SIGBUS that a library cannot handle, so there every access is
//     pread/pwrite. So it is when the mapping cannot be made (address-space limits: a big
//     sparse image still opens under a low RLIMIT_AS) or the host has no fallocate, and
//     always with the environment variable PDL_IMAGE_IO=pread.
// Atomicity against the host process dying (SIGKILL): every mutation (nand_media.h) first
// writes a redo record (redo_record.h: the final bytes, CRC-32C, its sequence number last;
// for a program into an erased page, its undo: that page zeroed),
// then applies the mutation, then clears the sequence. A writable open redoes a pending
// record and clears it; a read-only open, which may not write, overlays it on what it reads.
// flush() is fsync: every store before it, mapped or written, is then durable on the host.
// The process owns the file (flock, emulated_nand.cc), so the read cache is never stale.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "flash/device/nand_media.h"

namespace pdl::detail {

// Where the parts of an image file lie (docs/format.md §1).
struct ImageLayout {
  uint64_t pages_off = 0;    // the page array
  uint64_t pages_bytes = 0;
  uint64_t record_off = 0;   // the redo record area; 0: none (a version-1 image, read-only)
  uint64_t record_bytes = 0;
  uint64_t counts_off = 0;   // the erase-count table
  uint32_t raw_page = 0;
  uint32_t pages_per_block = 0;
  uint32_t blocks = 0;
  uint64_t nvm_off = 0;      // the NVM area (version 3); 0: none in this file
  uint64_t nvm_bytes = 0;
  uint64_t file_bytes() const {
    if (nvm_off) return nvm_off + nvm_bytes;
    return record_off ? record_off + record_bytes : pages_off + pages_bytes;
  }
};

// The media of an open image file `fd` (locked; owned from here on, closed even on failure),
// with the erase counts read from its table. Redoes (or, read-only, overlays) a pending redo
// record; fails with kCorrupt if the record names a place outside the chip.
// EmulatedNand::host_io for an open descriptor of a file or directory.
std::string host_io_mode(int fd);

Status open_file_media(int fd, const std::string& path, const ImageLayout& layout,
                       std::vector<uint32_t> counts, bool read_only,
                       std::unique_ptr<NandMedia>* out);

}  // namespace pdl::detail
