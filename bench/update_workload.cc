// update_workload.cc — the [PDL] §5.1 update workload: load, warm up, measure.
#include "bench/update_workload.h"
#include "bench/wall_clock.h"
#include "flash/image/methods.h"
#include "flash/image/open_store.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace pdl::bench {
namespace {

// Prints a progress line on stderr at most every 2 s of wall time.
class Progress {
 public:
  Progress(bool on, std::string label) : on_(on), label_(std::move(label)) {}
  template <typename F>
  void tick(uint64_t i, F&& line) {
    if (!on_ || (i & 4095) != 0) return;
    const auto now = Clock::now();
    if (std::chrono::duration<double>(now - last_).count() < 2.0) return;
    last_ = now;
    std::fprintf(stderr, "  [%s] %s\n", label_.c_str(), line().c_str());
  }
  void say(const std::string& s) const {
    if (on_) std::fprintf(stderr, "  [%s] %s\n", label_.c_str(), s.c_str());
  }

 private:
  bool on_;
  std::string label_;
  Clock::time_point last_ = Clock::now();
};

std::string fmt(const char* f, double a, double b = 0, double c = 0) {
  char buf[200];
  std::snprintf(buf, sizeof buf, f, a, b, c);
  return buf;
}

}  // namespace

const char* placement_name(Placement p) { return p == Placement::kRun ? "run" : "fields"; }

PageChanger::PageChanger(size_t page_size, double changed_pct, uint32_t change_run,
                         Placement placement)
    : page_size_(page_size),
      run_(std::clamp<size_t>(change_run, 1, page_size)),
      placement_(placement) {
  const double want = std::round(changed_pct / 100.0 * double(page_size));
  total_ = std::clamp<size_t>(want < 1 ? 1 : size_t(want), 1, page_size);
  slots_.resize((page_size_ + run_ - 1) / run_);
  for (size_t i = 0; i < slots_.size(); i++) slots_[i] = uint32_t(i);
}

void PageChanger::change(std::span<uint8_t> page, std::mt19937_64& rng,
                         std::vector<ChangeRun>* runs) {
  if (placement_ == Placement::kRun) {
    const size_t off = size_t(rng() % (page_size_ - total_ + 1));
    for (size_t i = 0; i < total_; i++) page[off + i] ^= uint8_t(1 + rng() % 255);
    if (runs) runs->push_back({uint32_t(off), uint32_t(total_)});
    return;
  }
  // Distinct field slots by a partial Fisher-Yates shuffle of a permutation: any permutation
  // is a valid start, so slots_ is never reset.
  size_t left = total_;
  const size_t n = slots_.size();
  for (size_t k = 0; left > 0 && k < n; k++) {
    const size_t j = k + size_t(rng() % (n - k));
    std::swap(slots_[k], slots_[j]);
    const size_t off = size_t(slots_[k]) * run_;
    const size_t len = std::min({run_, left, page_size_ - off});
    for (size_t i = 0; i < len; i++) page[off + i] ^= uint8_t(1 + rng() % 255);  // never equal
    if (runs) runs->push_back({uint32_t(off), uint32_t(len)});
    left -= len;
  }
}

void random_fill(std::span<uint8_t> page, std::mt19937_64& rng) {
  size_t i = 0;
  for (; i + 8 <= page.size(); i += 8) {
    const uint64_t v = rng();
    std::memcpy(page.data() + i, &v, 8);
  }
  for (; i < page.size(); i++) page[i] = uint8_t(rng());
}

Status load_store(PageStore& store, std::mt19937_64& rng) {
  std::vector<uint8_t> page(store.page_size());
  for (Lpn l = 0; l < store.logical_pages(); l++) {
    random_fill(page, rng);
    PDL_TRY(store.write(l, page));
  }
  return store.sync();
}

OpRunner::OpRunner(PageStore& store, Nand& nand, const WorkloadConfig& cfg,
                   std::mt19937_64& rng)
    : store_(store),
      nand_(nand),
      cfg_(cfg),
      rng_(rng),
      store_pages_(std::max<uint32_t>(1, cfg.logical_page / store.page_size())),
      changer_(size_t(store_pages_) * store.page_size(), cfg.changed_pct, cfg.change_run,
               cfg.placement),
      page_(size_t(store_pages_) * store.page_size()),
      pick_(0, store.logical_pages() / store_pages_ - 1),
      is_update_(std::clamp(cfg.update_pct / 100.0, 0.0, 1.0)) {}

void OpRunner::set_update_pct(double pct) {
  is_update_ = std::bernoulli_distribution(std::clamp(pct / 100.0, 0.0, 1.0));
}

Status OpRunner::run_one(OpCost* cost) {
  Nand& nand = nand_;
  const uint32_t k = store_pages_;
  const size_t ps = store_.page_size();
  const Lpn first = pick_(rng_) * k;  // the logical page's first store page
  const bool update = is_update_(rng_);
  auto part = [&](uint32_t i) { return std::span<uint8_t>(page_).subspan(i * ps, ps); };
  const NandCounters c0 = nand.counters();
  for (uint32_t i = 0; i < k; i++) PDL_TRY(store_.read(first + i, part(i)));
  const NandCounters c1 = nand.counters();
  cost->read = c1 - c0;
  cost->write = NandCounters{};
  cost->update = update;
  if (!update) return Status::ok();
  for (uint32_t u = 0; u < cfg_.n_updates; u++) {
    if (!cfg_.note_updates) {
      changer_.change(page_, rng_);
      continue;
    }
    runs_.clear();
    changer_.change(page_, rng_, &runs_);
    for (const ChangeRun& r : runs_)
      for (size_t off = r.offset, end = size_t(r.offset) + r.len; off < end;) {
        const size_t len = std::min(end, (off / ps + 1) * ps) - off;  // up to the page's end
        store_.note_update(first + Lpn(off / ps), uint32_t(off % ps), uint32_t(len));
        off += len;
      }
  }
  for (uint32_t i = 0; i < k; i++) PDL_TRY(store_.write(first + i, part(i)));
  cost->write = nand.counters() - c1;
  return Status::ok();
}

StoreStats stats_delta(const StoreStats& a, const StoreStats& b) {
  StoreStats d;
  d.reads = a.reads - b.reads;
  d.writes = a.writes - b.writes;
  d.trims = a.trims - b.trims;
  d.syncs = a.syncs - b.syncs;
  d.base_pages_written = a.base_pages_written - b.base_pages_written;
  d.diff_pages_written = a.diff_pages_written - b.diff_pages_written;
  d.diff_records = a.diff_records - b.diff_records;
  d.diff_bytes = a.diff_bytes - b.diff_bytes;
  d.case1 = a.case1 - b.case1;
  d.case2 = a.case2 - b.case2;
  d.case3 = a.case3 - b.case3;
  d.obsolete_marks = a.obsolete_marks - b.obsolete_marks;
  d.gc_runs = a.gc_runs - b.gc_runs;
  d.gc_base_moves = a.gc_base_moves - b.gc_base_moves;
  d.gc_diff_moves = a.gc_diff_moves - b.gc_diff_moves;
  d.gc_diff_pages = a.gc_diff_pages - b.gc_diff_pages;
  d.gc_merges = a.gc_merges - b.gc_merges;
  d.tombstones = a.tombstones - b.tombstones;
  d.log_records = a.log_records - b.log_records;
  d.log_bytes = a.log_bytes - b.log_bytes;
  d.log_sectors = a.log_sectors - b.log_sectors;
  d.merges = a.merges - b.merges;
  d.merge_pages = a.merge_pages - b.merge_pages;
  d.switch_merges = a.switch_merges - b.switch_merges;
  d.partial_merges = a.partial_merges - b.partial_merges;
  d.full_merges = a.full_merges - b.full_merges;
  d.hinted_writes = a.hinted_writes - b.hinted_writes;
  return d;
}

namespace {

FlashCost cost_delta(const FlashCost& a, const FlashCost& b) {
  FlashCost d;
  d.page_reads = a.page_reads - b.page_reads;
  d.spare_reads = a.spare_reads - b.spare_reads;
  d.programs = a.programs - b.programs;
  d.erases = a.erases - b.erases;
  d.bytes_read = a.bytes_read - b.bytes_read;
  d.bytes_programmed = a.bytes_programmed - b.bytes_programmed;
  d.sim_us = a.sim_us - b.sim_us;
  return d;
}

}  // namespace

Status UpdateBench::create(const Geometry& geometry, const StoreParams& params,
                           const WorkloadConfig& cfg, std::unique_ptr<UpdateBench>* out) {
  std::unique_ptr<UpdateBench> b(new UpdateBench());
  b->cfg_ = cfg;
  SetupInfo& res = b->setup_;
  const Geometry g = geometry.resolved();
  PDL_TRY(g.validate());
  res.geo = g;
  res.params = params;
  PDL_TRY(resolve_store_params(&res.params, g));
  res.method = method_label(res.params, g.page_data);
  res.data_blocks = g.blocks - kSuperblockBlocks;
  Progress prog(cfg.progress, cfg.label.empty() ? res.method : cfg.label);
  Progress warn(true, cfg.label.empty() ? res.method : cfg.label);

  // (a) a fresh chip and store
  PDL_TRY(EmulatedNand::create_ram(g, &b->nand_));
  EmulatedNand& nand = *b->nand_;
  PDL_TRY(format_store(nand, res.params, &b->store_));
  PageStore& store = *b->store_;
  res.params = store.params();
  res.logical_pages = store.logical_pages();
  const uint32_t ps = store.page_size();
  if (cfg.logical_page % ps != 0 || cfg.logical_page / ps > res.logical_pages)
    return Status::error(Errc::kInvalidArgument,
                         "logical page of " + std::to_string(cfg.logical_page) +
                             " bytes: not a multiple of the " + std::to_string(ps) +
                             "-byte flash page, or larger than the store");
  res.logical_page = std::max(cfg.logical_page, ps);
  b->rng_.seed(cfg.seed);
  b->runner_ = std::make_unique<OpRunner>(store, nand, b->cfg_, b->rng_);
  OpRunner& runner = *b->runner_;
  runner.set_update_pct(100);
  res.bytes_per_change =
      PageChanger(res.logical_page, cfg.changed_pct, cfg.change_run, cfg.placement)
          .bytes_per_change();

  // (b) load
  auto t0 = Clock::now();
  prog.say("load: " + std::to_string(res.logical_pages) + " logical pages (" +
           store.params().describe() + ")");
  PDL_TRY(load_store(store, b->rng_));
  res.load_wall_s = seconds_since(t0);

  // (c) warm up to warm_rounds erases per data block
  const uint64_t erases0 = nand.counters().erases;
  const double target = cfg.warm_rounds * res.data_blocks;
  // The erase rate of the last round of warm-up sizes the measure window.
  const double mark_at = std::max(0.0, target - double(res.data_blocks));
  uint64_t mark_ops = 0, mark_erases = 0;
  bool marked = mark_at <= 0;
  const uint64_t warm_cap = std::max<uint64_t>(1000000, 2000ull * res.logical_pages);
  t0 = Clock::now();
  OpCost cost;
  if (cfg.update_pct > 0) {
    while (double(nand.counters().erases - erases0) < target) {
      if (res.warm_ops >= warm_cap) {
        res.warm_capped = true;
        break;
      }
      PDL_TRY(runner.run_one(&cost));
      res.warm_ops++;
      const uint64_t e = nand.counters().erases - erases0;
      if (!marked && double(e) >= mark_at) {
        marked = true;
        mark_ops = res.warm_ops;
        mark_erases = e;
      }
      prog.tick(res.warm_ops, [&] {
        return fmt("warm-up: %.0f ops, %.2f / %.2f gc rounds", double(res.warm_ops),
                   double(e) / res.data_blocks, cfg.warm_rounds);
      });
    }
  }
  const uint64_t warm_erases = nand.counters().erases - erases0;
  res.warm_wall_s = seconds_since(t0);
  res.gc_rounds_reached = double(warm_erases) / res.data_blocks;
  prog.say(fmt("warm-up done: %.0f ops, %.2f gc rounds, %.1f s", double(res.warm_ops),
               res.gc_rounds_reached, res.warm_wall_s));
  if (res.warm_capped)
    warn.say(fmt("WARNING: warm-up stopped at its operation cap (%.2f gc rounds)",
                 res.gc_rounds_reached));

  // The window: measure_rounds gc rounds at the last warm-up round's erase rate.
  const uint64_t d_ops = res.warm_ops - mark_ops, d_er = warm_erases - mark_erases;
  if (d_ops > 0) res.warm_last_erases_per_op = double(d_er) / double(d_ops);
  uint64_t ops = cfg.measure_ops;
  if (ops == 0) {
    if (d_er > 0 && d_ops > 0) {
      const double per_erase = double(d_ops) / double(d_er);
      ops = uint64_t(std::ceil(cfg.measure_rounds * res.data_blocks * per_erase));
    }
    ops = std::clamp(ops, cfg.min_measure_ops, cfg.max_measure_ops);
  }
  res.window_ops = ops;
  *out = std::move(b);
  return Status::ok();
}

Status UpdateBench::measure(double update_pct, uint64_t ops, Measurement* out) {
  Measurement res;
  res.update_pct = update_pct;
  if (ops == 0) ops = setup_.window_ops;
  Progress prog(cfg_.progress, cfg_.label.empty() ? setup_.method : cfg_.label);
  Progress warn(true, cfg_.label.empty() ? setup_.method : cfg_.label);
  runner_->set_update_pct(update_pct);
  EmulatedNand& nand = *nand_;
  const NandCounters c0 = nand.counters();
  const StoreStats s0 = store_->stats();
  const FlashCost gc0 = store_->costs().gc;
  const auto t0 = Clock::now();
  OpCost cost;
  for (uint64_t i = 0; i < ops; i++) {
    PDL_TRY(runner_->run_one(&cost));
    res.read_step.add(cost.read);
    res.write_step.add(cost.write);
    res.measure_updates += cost.update ? 1 : 0;
    prog.tick(i + 1, [&] { return fmt("measure: %.0f / %.0f ops", double(i + 1), double(ops)); });
  }
  res.wall_s = seconds_since(t0);
  res.measure_ops = ops;
  res.nand = nand.counters() - c0;
  res.stats = stats_delta(store_->stats(), s0);
  res.gc = cost_delta(store_->costs().gc, gc0);
  const double n = double(ops);
  res.read_us = double(res.read_step.sim_us) / n;
  res.write_us = double(res.write_step.sim_us) / n;
  res.total_us = res.read_us + res.write_us;
  res.gc_us = res.gc.sim_us / n;
  res.erases_per_op = double(res.nand.erases) / n;
  res.programs_per_op = double(res.nand.programs) / n;
  res.reads_per_op = double(res.nand.page_reads) / n;
  res.spare_reads_per_op = double(res.nand.spare_reads) / n;
  res.measure_rounds = double(res.nand.erases) / setup_.data_blocks;
  res.avg_diff_bytes =
      res.stats.diff_records ? double(res.stats.diff_bytes) / double(res.stats.diff_records) : 0;
  if (res.read_step.sim_us + res.write_step.sim_us != res.nand.sim_us)
    warn.say(fmt("WARNING: timed read+write %.0f us != chip time %.0f us",
                 double(res.read_step.sim_us + res.write_step.sim_us), double(res.nand.sim_us)));
  prog.say(fmt("measured %.0f ops (%%UpdateOps=%g) in %.1f s: %.1f us/op", n, update_pct,
               res.wall_s) +
           fmt(" %.1f", res.total_us));
  // Compare erase rates per update (read-only operations erase nothing).
  const double upd = update_pct / 100.0;
  // Only judged over windows expected to erase at least half a round of blocks: a shorter
  // window's erase count is mostly noise.
  const double expected_erases = setup_.warm_last_erases_per_op * double(res.measure_updates);
  if (upd > 0 && setup_.warm_last_erases_per_op > 0 && res.measure_updates > 0 &&
      expected_erases >= 0.5 * setup_.data_blocks) {
    const double per_update = double(res.nand.erases) / double(res.measure_updates);
    if (std::fabs(per_update / setup_.warm_last_erases_per_op - 1.0) > 0.2) {
      res.unsteady = true;
      warn.say(
          fmt("WARNING: not in a steady state: %.4f erases per update measured, %.4f in the "
              "last gc round of warm-up",
              per_update, setup_.warm_last_erases_per_op));
    }
  }
  *out = std::move(res);
  return Status::ok();
}

Status run_update_workload(const Geometry& g, const StoreParams& p, const WorkloadConfig& cfg,
                           WorkloadResult* out) {
  std::unique_ptr<UpdateBench> b;
  PDL_TRY(UpdateBench::create(g, p, cfg, &b));
  out->setup = b->setup();
  return b->measure(cfg.update_pct, 0, &out->m);
}

}  // namespace pdl::bench
