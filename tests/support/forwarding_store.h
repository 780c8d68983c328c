// forwarding_store.h — a PageStore that forwards every call to the store it owns (header-only,
// tests only): the base of the tests' decorators, which override only the calls they change (a
// store whose trims can be refused, one whose tables are a digest of its contents, a device
// recording the lpns written to it).
//
// Forwarded: the data calls (read, write, trim, sync, peek), commit mode and abort, the state
// queries (dirty, uncommitted_pages, halted, is_mapped, sizes, params, stats, costs, free
// blocks, check, locate, block_info) and nand(). Not forwarded (PageStore's defaults): the
// tables and checkpoint calls, wear levelling, format upgrades, note_update, flash_store.
#pragma once

#include <memory>

#include "flash/store/page_store.h"

namespace pdl::test {

class ForwardingStore : public PageStore {
 public:
  explicit ForwardingStore(std::unique_ptr<PageStore> s) : s_(std::move(s)) {}

  Status read(Lpn l, std::span<uint8_t> p) override { return s_->read(l, p); }
  Status write(Lpn l, std::span<const uint8_t> p) override { return s_->write(l, p); }
  Status trim(Lpn l) override { return s_->trim(l); }
  Status sync() override { return s_->sync(); }
  Status set_commit_mode(CommitMode m) override { return s_->set_commit_mode(m); }
  bool atomic() const override { return s_->atomic(); }
  Status abort() override { return s_->abort(); }
  bool dirty() const override { return s_->dirty(); }
  uint64_t uncommitted_pages() const override { return s_->uncommitted_pages(); }
  Status halted() const override { return s_->halted(); }
  bool is_mapped(Lpn l) const override { return s_->is_mapped(l); }
  uint32_t page_size() const override { return s_->page_size(); }
  uint32_t logical_pages() const override { return s_->logical_pages(); }
  const StoreParams& params() const override { return s_->params(); }
  const StoreStats& stats() const override { return s_->stats(); }
  const CostBreakdown& costs() const override { return s_->costs(); }
  void set_classifier(LpnClassifier c) override { s_->set_classifier(std::move(c)); }
  void reset_stats() override { s_->reset_stats(); }
  Status peek(Lpn l, std::span<uint8_t> p) override { return s_->peek(l, p); }
  Nand& nand() override { return s_->nand(); }
  uint32_t free_blocks() const override { return s_->free_blocks(); }
  size_t mapping_bytes_per_lpn() const override { return s_->mapping_bytes_per_lpn(); }
  Status check() const override { return s_->check(); }
  LpnLocation locate(Lpn l) const override { return s_->locate(l); }
  BlockInfo block_info(uint32_t b) const override { return s_->block_info(b); }

 protected:
  PageStore& inner() const { return *s_; }

 private:
  std::unique_ptr<PageStore> s_;
};

}  // namespace pdl::test
