// spare.h — the spare-area header every programmed page carries (docs/format.md §3).
//
// Layout (little-endian, first 32 bytes of the spare; the rest stays 0xFF):
//    0  u8   bad-block marker (0xFF = good; never programmed by pdl)
//    1  u8   page type (PageType)
//    2  u8   format version (1)
//    3  u8   flags, stored inverted (0xFF = none): bit 0 clear = commit page (stores of
//            superblock format 2: this page's seq is a commit record, "every seq <= mine that is
//            on flash is committed"; docs/format.md §3); bit 1 clear = group page (an IPL merge
//            page holding an atomic group's data: it counts only if a commit record covers its
//            seq). Stores of format 1 leave it 0xFF. Bit 2 clear = the obsolete mark is read by
//            majority (every page this pdl programs; older pages: any 0 bit means obsolete).
//    4  u32  logical page (base pages, IPL data pages); record count (differential pages);
//            0 (superblock); logical block (IPL empty-merge marker) — SpareHeader's accessors
//    8  u64  creation sequence number (the paper's time stamp; one global counter)
//   16  u32  CRC-32C of the whole data area
//   20  u32  aux: bytes used in a differential page's data area; pages its merge wrote (IPL
//            data page of a merge; 0 for a direct write); 0 otherwise
//   24  u8   obsolete mark: 0xFF live; programmed to 0x00 (a second program) when obsolete.
//            With flag bit 2 clear it reads obsolete iff at least 4 of its 8 bits are 0, so
//            one flipped bit never turns live into obsolete or back.
//   25  u8[3] reserved (0xFF)
//   28  u32  CRC-32C of bytes [1, 24)  — the obsolete mark is outside it, so marking a page
//            obsolete never invalidates the header
// A torn program (power cut mid-program) fails one of the two CRCs and the page is garbage.
// A header failing its CRC is first repaired if at most two bits of bytes [1, 24) and [28, 32)
// flipped: those 216 bits lie within CRC-32C's Hamming distance 6, so at most one pattern of one
// or two flips can match, and it gives the header that was programmed (docs/format.md §3).
#pragma once

#include <cstdint>
#include <span>

namespace pdl {

enum class PageType : uint8_t {
  kSuperblock = 0x5B,
  kBase = 0xBA,          // a whole logical page (PDL base page, OPU page)
  kDifferential = 0xDF,  // a page of differential records (record.h)
  kIplData = 0xDA,       // IPU/IPL data page; aux = pages written by its merge, 0 = direct
  kIplEmpty = 0xE0,      // IPU/IPL marker of a merge that wrote no page; lpn = logical block
  kFtlTrim = 0x7D,       // BAST/FAST trim record: spare only (data area erased); lpn = the
                         // logical page unmapped (docs/format.md §9)
};

// Bytes 4..8 mean one thing per page type; they are read and written through the accessor that
// names that meaning (a superblock page leaves them 0).
struct SpareHeader {
  PageType type = PageType::kBase;
  uint64_t seq = 0;
  uint32_t data_crc = 0;
  uint32_t aux = 0;
  bool commit = false;    // a commit page: seq is a commit record (atomic groups)
  bool group = false;     // IPL merge page of an open group: void unless a commit covers seq
  bool obsolete = false;  // decoded only; encode always writes "live"
  bool repaired = false;  // decoded only: one or two flipped bits of the header were corrected

  // kBase, kIplData: the logical page the page holds.
  uint32_t logical_page() const { return word4_; }
  void set_logical_page(uint32_t lpn) { word4_ = lpn; }
  // kDifferential: how many differential records its data area holds.
  uint32_t record_count() const { return word4_; }
  void set_record_count(uint32_t n) { word4_ = n; }
  // kIplEmpty: the logical block whose merge wrote no page.
  uint32_t logical_block() const { return word4_; }
  void set_logical_block(uint32_t lbn) { word4_ = lbn; }
  // The raw 32-bit word at byte 4, whatever the type (encoding, decoding, dumps of unknown types).
  uint32_t raw_word4() const { return word4_; }
  void set_raw_word4(uint32_t w) { word4_ = w; }

 private:
  uint32_t word4_ = 0;
};

inline constexpr uint32_t kSpareBytesUsed = 32;
inline constexpr uint32_t kSpareObsoleteAt = 24;
inline constexpr uint8_t kSpareFlagCommit = 0x01;  // byte 3, stored inverted
inline constexpr uint8_t kSpareFlagGroup = 0x02;   // byte 3, stored inverted
inline constexpr uint8_t kSpareFlagMajorityMark = 0x04;  // byte 3, stored inverted
// Decode of the obsolete mark byte: by majority (flag bit 2 clear), else any 0 bit.
bool obsolete_mark_set(uint8_t mark, bool majority);

enum class SpareState : uint8_t { kErased, kValid, kCorrupt };

// Fill `spare` with 0xFF and encode `h` (live) into its first 32 bytes.
void spare_encode(const SpareHeader& h, std::span<uint8_t> spare);
// Classify and decode. kErased: the first 32 bytes are all 0xFF. A header one or two flipped
// bits away from a valid one decodes as that header (kValid, h->repaired set).
SpareState spare_decode(std::span<const uint8_t> spare, SpareHeader* h);
// True if every byte is 0xFF.
bool all_ff(std::span<const uint8_t> bytes);

}  // namespace pdl
