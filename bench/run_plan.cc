// run_plan.cc — deduplicated update-workload runs, probed and run on a pool of threads.
#include "bench/run_plan.h"
#include "bench/wall_clock.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <numeric>
#include <thread>

#include "bench/bench_options.h"
#include "flash/image/open_store.h"
#include "flash/device/emulated_nand.h"

namespace pdl::bench {
namespace {

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

}  // namespace

std::string RunSpec::key() const {
  std::string k = method.key + "|" + obsolete_label(method.method, mode) +
                  "|" + std::to_string(blocks) + "|" + std::to_string(t_read) + "/" +
                  std::to_string(t_program) + "/" + std::to_string(t_erase) + "|" +
                  std::to_string(n_updates) + "|" + num(changed_pct) + "|" + num(min_scaled_pct) +
                  "|" + placement_name(placement) + "|" + std::to_string(logical_page);
  for (double p : update_pcts) k += "|" + num(p);
  return k;
}

std::string RunSpec::describe() const {
  std::string d = method.label + " " + obsolete_label(method.method, mode) + " N=" +
                  std::to_string(n_updates) + " changed=" + num(changed_pct) + "%";
  if (update_pcts.size() != 1 || update_pcts[0] != 100) {
    d += " updateops=";
    for (size_t i = 0; i < update_pcts.size(); i++) d += (i ? "," : "") + num(update_pcts[i]);
  }
  if (t_read || t_program || t_erase)
    d += " T=" + std::to_string(t_read) + "/" + std::to_string(t_program) + "/" +
         std::to_string(t_erase) + "us";
  if (placement != Placement::kFields) d += std::string(" placement=") + placement_name(placement);
  if (logical_page) d += " logical_page=" + std::to_string(logical_page);
  return d + " " + std::to_string(blocks) + " blocks";
}

uint32_t log_sector_bytes(const MethodPreset& m) {
  if (m.method != Method::kIpl) return 0;
  return m.log_sector ? m.log_sector : 512;
}

Geometry run_chip(const MethodPreset& m, uint32_t blocks, uint32_t t_read, uint32_t t_program,
                  uint32_t t_erase) {
  Geometry g = chip(blocks, t_read, t_program, t_erase);
  if (m.method == Method::kIpl && m.log_sector && !m.uses_nvm())
    g.partial_programs = std::max<uint32_t>(4, g.page_data / m.log_sector);
  g.nvm_bytes = m.nvm_bytes(g.blocks);  // the NVM entries' device has the NVM they use
  return g;
}

uint32_t RunPlan::logical_page(const RunSpec& s) const {
  const uint32_t lp = s.logical_page ? s.logical_page : base_.logical_page;
  return std::max(lp, chip(s.blocks).page_data);
}

size_t RunPlan::add(const RunSpec& spec) {
  RunSpec s = spec;
  if (!s.method.has_obsolete_modes()) s.mode = ObsoleteMode::kSpare;
  const std::string k = s.key();
  auto it = index_.find(k);
  if (it != index_.end()) return it->second;
  specs_.push_back(s);
  results_.emplace_back();
  index_[k] = specs_.size() - 1;
  return specs_.size() - 1;
}

uint32_t RunPlan::logical_pages(uint32_t blocks) const {
  const Geometry g = chip(blocks);
  const uint64_t data_pages = uint64_t(g.blocks - kSuperblockBlocks) * g.pages_per_block;
  return uint32_t(std::max<uint64_t>(1, uint64_t(double(data_pages) * data_pct_ / 100.0)));
}

RunResult RunPlan::run_one(const RunSpec& s) const {
  RunResult r;
  const auto t0 = Clock::now();
  WorkloadConfig cfg = base_;
  cfg.n_updates = s.n_updates;
  cfg.changed_pct = s.changed_pct;
  cfg.placement = s.placement;
  if (s.logical_page) cfg.logical_page = s.logical_page;
  cfg.update_pct = 100;
  cfg.note_updates = s.method.note_updates;
  cfg.label = s.describe();
  if (s.method.method == Method::kIpu) cfg.min_measure_ops = std::min(cfg.min_measure_ops, kIpuMinOps);
  const Geometry g = run_chip(s.method, s.blocks, s.t_read, s.t_program, s.t_erase);
  std::unique_ptr<UpdateBench> b;
  StoreParams params = s.method.params(logical_pages(s.blocks), s.mode, g.blocks);
  params.gc_victim = cfg.gc_victim;
  r.status = UpdateBench::create(g, params, cfg, &b);
  if (!r.status.is_ok()) return r;
  r.setup = b->setup();
  const uint64_t base_ops = r.setup.window_ops;
  for (double p : s.update_pcts) {
    uint64_t ops = base_ops;
    if (s.min_scaled_pct > 0 && cfg.measure_ops == 0 && p < 100)
      ops = uint64_t(std::ceil(double(base_ops) * 100.0 / std::max(p, s.min_scaled_pct)));
    Measurement m;
    r.status = b->measure(p, ops, &m);
    if (!r.status.is_ok()) return r;
    r.m.push_back(std::move(m));
  }
  r.wall_s = seconds_since(t0);
  return r;
}

void RunPlan::execute(unsigned jobs) {
  // Probe every method once, on the smallest chip any of its runs uses (at most 256 blocks).
  std::map<std::string, uint32_t> probe_blocks;
  std::map<std::string, MethodPreset> probe_method;
  for (const RunSpec& s : specs_) {
    auto [it, fresh] = probe_blocks.emplace(s.method.key, s.blocks);
    if (!fresh) it->second = std::min(it->second, s.blocks);
    probe_method.emplace(s.method.key, s.method);
  }
  for (const auto& [key, blocks] : probe_blocks) {
    const uint32_t pb = std::min<uint32_t>(blocks, 256);
    const Geometry g = run_chip(probe_method[key], pb);
    std::unique_ptr<EmulatedNand> nand;
    Status st = EmulatedNand::create_ram(g, &nand);
    std::unique_ptr<PageStore> store;
    if (st.is_ok())
      st = format_store(*nand,
                        probe_method[key].params(logical_pages(pb), ObsoleteMode::kSpare, pb),
                        &store);
    if (!st.is_ok()) {
      unavailable_[key] = st;
      std::fprintf(stderr, "pdl-bench: method %s (%s) unavailable: format_store failed: %s\n",
                   probe_method[key].label.c_str(), key.c_str(), st.to_string().c_str());
    }
  }

  // Longest runs first (by chip blocks and measured windows), so the pool ends together.
  std::vector<size_t> order(specs_.size());
  std::iota(order.begin(), order.end(), 0);
  auto weight = [&](size_t i) {
    const RunSpec& s = specs_[i];
    double w = 0;
    for (double p : s.update_pcts)
      w += s.min_scaled_pct > 0 && p < 100 ? 100.0 / std::max(p, s.min_scaled_pct) : 1.0;
    return double(s.blocks) * (base_.warm_rounds + base_.measure_rounds * w);
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return weight(a) > weight(b); });

  size_t todo = 0;
  for (size_t i : order) {
    auto u = unavailable_.find(specs_[i].method.key);
    if (u != unavailable_.end())
      results_[i].status = u->second;
    else
      todo++;
  }
  if (jobs == 0) jobs = std::max(1u, std::thread::hardware_concurrency());
  jobs = unsigned(std::min<size_t>(jobs, std::max<size_t>(todo, 1)));
  std::fprintf(stderr, "pdl-bench: %zu update-workload runs on %u thread(s)\n", todo, jobs);

  std::atomic<size_t> next{0};
  std::mutex mu;
  size_t done = 0;
  const auto t0 = Clock::now();
  auto worker = [&] {
    for (;;) {
      const size_t k = next.fetch_add(1);
      if (k >= order.size()) return;
      const size_t i = order[k];
      if (unavailable_.count(specs_[i].method.key)) continue;
      RunResult r = run_one(specs_[i]);
      std::lock_guard<std::mutex> lock(mu);
      done++;
      if (r.status.is_ok()) {
        const Measurement& last = r.m.back();
        std::fprintf(stderr,
                     "[%3zu/%zu] %s: %.1f us/op at %%UpdateOps=%g, %.2f gc rounds of warm-up, "
                     "%.1f s (elapsed %.0f s)\n",
                     done, todo, specs_[i].describe().c_str(), last.total_us, last.update_pct,
                     r.setup.gc_rounds_reached, r.wall_s, seconds_since(t0));
      } else {
        std::fprintf(stderr, "[%3zu/%zu] %s: FAILED: %s\n", done, todo,
                     specs_[i].describe().c_str(), r.status.to_string().c_str());
      }
      results_[i] = std::move(r);
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < jobs; t++) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
}

}  // namespace pdl::bench
