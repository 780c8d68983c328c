// workload.cc — see workload.h.
#include "tpcc/workload.h"

#include "tpcc/loader.h"

namespace pdl::tpcc {

const char* txn_name(TxnType t) {
  switch (t) {
    case TxnType::kNewOrder: return "NewOrder";
    case TxnType::kPayment: return "Payment";
    case TxnType::kOrderStatus: return "OrderStatus";
    case TxnType::kDelivery: return "Delivery";
    case TxnType::kStockLevel: return "StockLevel";
  }
  return "?";
}

Workload::Workload(const Scale& scale, uint64_t seed)
    : scale_(scale), seed_(seed), c_(NURandC::for_run(NURandC::for_load(seed), seed)) {}

int64_t Workload::other_warehouse(Rng& r, int64_t w) const {
  const int64_t o = r.uniform(1, scale_.warehouses - 1);
  return o >= w ? o + 1 : o;
}

void Workload::customer(Rng& r, TxnInput* t) const {
  t->by_last_name = r.uniform(1, 100) <= 60;
  if (t->by_last_name)
    t->c_last = last_name(nurand(r, 255, 0, scale_.last_names - 1, c_.c_last));
  else
    t->c_id = nurand(r, 1023, 1, scale_.customers, c_.c_id);
}

TxnInput Workload::input(uint64_t index) const {
  Rng r(derive_seed(seed_, 0x7C0000000000ull + index));
  TxnInput t;
  t.now = kRunStart + int64_t(index);
  t.w_id = r.uniform(1, scale_.warehouses);
  t.d_id = r.uniform(1, scale_.districts);
  const int64_t mix = r.uniform(1, 100);
  if (mix <= 45) {
    t.type = TxnType::kNewOrder;
    t.c_w_id = t.w_id;
    t.c_d_id = t.d_id;
    t.c_id = nurand(r, 1023, 1, scale_.customers, c_.c_id);
    const int64_t n = r.uniform(5, 15);
    t.rollback = r.uniform(1, 100) == 1;
    for (int64_t i = 0; i < n; i++) {
      OrderLineInput l;
      l.i_id = nurand(r, 8191, 1, scale_.items, c_.ol_i_id);
      l.supply_w_id = t.w_id;
      if (scale_.warehouses > 1 && r.uniform(1, 100) == 1)
        l.supply_w_id = other_warehouse(r, t.w_id);
      l.quantity = r.uniform(1, 10);
      t.lines.push_back(l);
    }
    if (t.rollback) t.lines.back().i_id = scale_.items + 1;
  } else if (mix <= 88) {
    t.type = TxnType::kPayment;
    if (scale_.warehouses == 1 || r.uniform(1, 100) <= 85) {
      t.c_w_id = t.w_id;
      t.c_d_id = t.d_id;
    } else {
      t.c_w_id = other_warehouse(r, t.w_id);
      t.c_d_id = r.uniform(1, scale_.districts);
    }
    customer(r, &t);
    t.h_amount = r.decimal(1.00, 5000.00, 2);
  } else if (mix <= 92) {
    t.type = TxnType::kOrderStatus;
    t.c_w_id = t.w_id;
    t.c_d_id = t.d_id;
    customer(r, &t);
  } else if (mix <= 96) {
    t.type = TxnType::kDelivery;
    t.carrier_id = r.uniform(1, 10);
  } else {
    t.type = TxnType::kStockLevel;
    t.threshold = r.uniform(10, 20);
  }
  return t;
}

}  // namespace pdl::tpcc
