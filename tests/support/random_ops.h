// random_ops.h — one random operation on a PageStore with its model of the contents kept in
// step (header-only, tests only): the table round-trip tests' workload.
//
// sync_model: a sync; in a store with atomic groups one refused with kFull (the group outgrew
// the room: IPL keeps each shadow-merged logical block's committed erase block until the
// commit) aborts the group and the model goes back to `committed`, as test_atomic_commit does.
// random_op: per the Mix's percentages, a write (a few bytes changed, or a whole page; a write
// refused with kFull in an atomic store syncs and is tried again), a trim, a sync, and in the
// rest, if `aborts` and the store is atomic, an abort (else nothing).
// require_reads: every lpn reads as the model says — its page, or kNotFound (REQUIRE, naming
// the lpn and the status).
#pragma once

#include <catch2/catch.hpp>

#include <random>

#include "flash/store/page_store.h"
#include "tests/support/store_state.h"
#include "tests/support/test_util.h"

namespace pdl::test {

struct OpMix {
  unsigned write = 70;  // r < write: a write
  unsigned trim = 84;   // r < trim: a trim
  unsigned sync = 96;   // r < sync: a sync; else an abort (atomic, `aborts`) or nothing
  bool aborts = true;
};

inline void sync_model(PageStore& store, StoreState& model, StoreState& committed) {
  const Status st = store.sync();
  INFO("sync: " << st.to_string());
  if (st.is(Errc::kFull) && store.atomic()) {
    REQUIRE(store.abort().is_ok());
    model = committed;
    return;
  }
  REQUIRE(st.is_ok());
  committed = model;
}

inline void random_op(PageStore& store, StoreState& model, StoreState& committed,
                      std::mt19937_64& rng, const OpMix& mix = OpMix()) {
  const Lpn l = Lpn(rng() % store.logical_pages());
  const unsigned r = unsigned(rng() % 100);
  if (r < mix.write) {
    std::vector<uint8_t> p = model[l] ? *model[l] : random_page(rng, store.page_size());
    if (model[l] && rng() % 4 != 0) {
      const size_t off = rng() % (p.size() - 8);
      for (size_t k = 0; k < 1 + rng() % 8; k++) p[off + k] = uint8_t(rng());
    } else {
      p = random_page(rng, store.page_size());
    }
    Status st = store.write(l, p);
    if (st.is(Errc::kFull) && store.atomic()) {
      sync_model(store, model, committed);
      st = store.write(l, p);
    }
    INFO("write " << l << ": " << st.to_string());
    REQUIRE(st.is_ok());
    model[l] = p;
  } else if (r < mix.trim) {
    REQUIRE(store.trim(l).is_ok());
    model[l].reset();
  } else if (r < mix.sync) {
    sync_model(store, model, committed);
  } else if (mix.aborts && store.atomic()) {
    REQUIRE(store.abort().is_ok());
    model = committed;
  }
}

inline void require_reads(PageStore& store, const StoreState& model) {
  std::vector<uint8_t> got(store.page_size());
  for (Lpn l = 0; l < model.size(); l++) {
    const Status st = store.read(l, got);
    INFO("lpn " << l << ": " << st.to_string());
    if (model[l]) {
      REQUIRE(st.is_ok());
      REQUIRE(got == *model[l]);
    } else {
      REQUIRE(st.is(Errc::kNotFound));
    }
  }
}

}  // namespace pdl::test
