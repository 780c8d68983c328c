// workload.h — the TPC-C transaction sequence: which transaction comes i-th, and its inputs
// (TPC-C 5.11 §2.4.1, §2.5.1, §2.6.1, §2.7.1, §2.8.1, and the mix of §5.2.3).
//
// Transaction i's inputs depend only on (scale, seed, i): each draws from its own Rng stream.
// So every page-update method runs exactly the same sequence, any slice of it can be
// generated on its own (warm-up rounds, then the measured run), and a run replays from its
// seed. The mix is drawn per transaction: New-Order 45%, Payment 43%, Order-Status 4%,
// Delivery 4%, Stock-Level 4%; 1% of New-Orders name an unused item on their last line and are
// rolled back (§2.4.1.4).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tpcc/random.h"
#include "tpcc/schema.h"

namespace pdl::tpcc {

enum class TxnType : uint8_t { kNewOrder, kPayment, kOrderStatus, kDelivery, kStockLevel };
inline constexpr int kTxnTypes = 5;
const char* txn_name(TxnType t);  // "NewOrder", "Payment", ...

struct OrderLineInput {
  int64_t i_id = 0, supply_w_id = 0, quantity = 0;
};

struct TxnInput {
  TxnType type = TxnType::kNewOrder;
  int64_t w_id = 0, d_id = 0;
  int64_t now = 0;  // logical timestamp (loader.h)
  // Customer (New-Order: by id; Payment, Order-Status: by id or by last name).
  int64_t c_w_id = 0, c_d_id = 0, c_id = 0;
  bool by_last_name = false;
  std::string c_last;
  // New-Order
  std::vector<OrderLineInput> lines;
  bool rollback = false;  // the last line names an unused item
  // Payment
  double h_amount = 0;
  // Delivery
  int64_t carrier_id = 0;
  // Stock-Level
  int64_t threshold = 0;
};

class Workload {
 public:
  Workload(const Scale& scale, uint64_t seed);
  TxnInput input(uint64_t index) const;
  const Scale& scale() const { return scale_; }

 private:
  int64_t other_warehouse(Rng& r, int64_t w) const;
  void customer(Rng& r, TxnInput* t) const;  // by last name 60%, else by id
  Scale scale_;
  uint64_t seed_;
  NURandC c_;
};

}  // namespace pdl::tpcc
