// cut_at_nand.h — a Nand wrapper for deterministic crash tests (header-only, tests only).
//
// CutAt forwards every operation to the EmulatedNand beneath it and cuts its power (with the
// configured tear) at the first program or erase a predicate picks; later operations fail as
// on a frozen chip. Used by the regression suites that pin one exact crash point each.
#pragma once

#include <functional>

#include "flash/device/emulated_nand.h"

namespace pdl::test {

// A Nand that cuts the power of the EmulatedNand beneath it at the first operation a predicate
// picks: (is_erase, is_obsolete_mark, ppa or block).
class CutAt final : public Nand {
 public:
  explicit CutAt(EmulatedNand& n) : n_(n) {}
  std::function<bool(bool, bool, uint32_t)> when;
  Tear tear = Tear::kNone;
  uint64_t tear_seed = 0;
  bool fired = false;

  const Geometry& geometry() const override { return n_.geometry(); }
  Status read(Ppa p, std::span<uint8_t> d, std::span<uint8_t> s) override { return n_.read(p, d, s); }
  Status program(Ppa p, std::span<const uint8_t> d, std::span<const uint8_t> s, uint32_t doff,
                 uint32_t soff) override {
    arm(false, d.empty() && s.size() == 1, p);
    return n_.program(p, d, s, doff, soff);
  }
  Status erase(uint32_t b) override {
    arm(true, false, b);
    return n_.erase(b);
  }
  Status flush() override { return n_.flush(); }
  const NandCounters& counters() const override { return n_.counters(); }
  void reset_counters() override { n_.reset_counters(); }
  void set_counting(bool on) override { n_.set_counting(on); }
  uint32_t erase_count(uint32_t b) const override { return n_.erase_count(b); }

 private:
  void arm(bool erase, bool mark, uint32_t where) {
    if (!n_.frozen() && when && when(erase, mark, where)) {
      n_.cut_power_after(0, tear, tear_seed);
      when = nullptr;
      fired = true;
    }
  }
  EmulatedNand& n_;
};

}  // namespace pdl::test
