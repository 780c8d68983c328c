// terminal.cc — see terminal.h. The SQL follows the profiles of TPC-C 5.11 §2.4.2–§2.8.2.
#include "tpcc/terminal.h"

#include <sqlite3.h>

#include <string>
#include <vector>

namespace pdl::tpcc {
namespace {

const char* const kSql[] = {
    "BEGIN",
    "COMMIT",
    "ROLLBACK",
    // New-Order
    "SELECT w_tax FROM warehouse WHERE w_id = ?1",
    "SELECT d_tax, d_next_o_id FROM district WHERE d_w_id = ?1 AND d_id = ?2",
    "UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = ?1 AND d_id = ?2",
    "SELECT c_discount, c_last, c_credit FROM customer WHERE c_w_id = ?1 AND c_d_id = ?2 "
    "AND c_id = ?3",
    "INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, "
    "o_all_local) VALUES (?1, ?2, ?3, ?4, ?5, NULL, ?6, ?7)",
    "INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (?1, ?2, ?3)",
    "SELECT i_price, i_name, i_data FROM item WHERE i_id = ?1",
    "SELECT s_quantity, s_data, s_dist_01, s_dist_02, s_dist_03, s_dist_04, s_dist_05, "
    "s_dist_06, s_dist_07, s_dist_08, s_dist_09, s_dist_10 FROM stock WHERE s_w_id = ?1 AND "
    "s_i_id = ?2",
    "UPDATE stock SET s_quantity = ?3, s_ytd = s_ytd + ?4, s_order_cnt = s_order_cnt + 1, "
    "s_remote_cnt = s_remote_cnt + ?5 WHERE s_w_id = ?1 AND s_i_id = ?2",
    "INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, "
    "ol_delivery_d, ol_quantity, ol_amount, ol_dist_info) VALUES (?1, ?2, ?3, ?4, ?5, ?6, NULL, "
    "?7, ?8, ?9)",
    // Payment
    "UPDATE warehouse SET w_ytd = w_ytd + ?2 WHERE w_id = ?1",
    "SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip FROM warehouse WHERE w_id = ?1",
    "UPDATE district SET d_ytd = d_ytd + ?3 WHERE d_w_id = ?1 AND d_id = ?2",
    "SELECT d_name, d_street_1, d_street_2, d_city, d_state, d_zip FROM district WHERE "
    "d_w_id = ?1 AND d_id = ?2",
    "SELECT c_id FROM customer WHERE c_w_id = ?1 AND c_d_id = ?2 AND c_last = ?3 ORDER BY c_first",
    "SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, "
    "c_since, c_credit, c_credit_lim, c_discount, c_balance, c_data FROM customer WHERE "
    "c_w_id = ?1 AND c_d_id = ?2 AND c_id = ?3",
    "UPDATE customer SET c_balance = c_balance - ?4, c_ytd_payment = c_ytd_payment + ?4, "
    "c_payment_cnt = c_payment_cnt + 1 WHERE c_w_id = ?1 AND c_d_id = ?2 AND c_id = ?3",
    "UPDATE customer SET c_balance = c_balance - ?4, c_ytd_payment = c_ytd_payment + ?4, "
    "c_payment_cnt = c_payment_cnt + 1, c_data = ?5 WHERE c_w_id = ?1 AND c_d_id = ?2 AND "
    "c_id = ?3",
    "INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    // Order-Status
    "SELECT c_balance, c_first, c_middle, c_last FROM customer WHERE c_w_id = ?1 AND "
    "c_d_id = ?2 AND c_id = ?3",
    "SELECT o_id, o_entry_d, o_carrier_id FROM orders WHERE o_w_id = ?1 AND o_d_id = ?2 AND "
    "o_c_id = ?3 ORDER BY o_id DESC LIMIT 1",
    "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line "
    "WHERE ol_w_id = ?1 AND ol_d_id = ?2 AND ol_o_id = ?3",
    // Delivery
    "SELECT no_o_id FROM new_order WHERE no_w_id = ?1 AND no_d_id = ?2 ORDER BY no_o_id LIMIT 1",
    "DELETE FROM new_order WHERE no_w_id = ?1 AND no_d_id = ?2 AND no_o_id = ?3",
    "SELECT o_c_id FROM orders WHERE o_w_id = ?1 AND o_d_id = ?2 AND o_id = ?3",
    "UPDATE orders SET o_carrier_id = ?4 WHERE o_w_id = ?1 AND o_d_id = ?2 AND o_id = ?3",
    "UPDATE order_line SET ol_delivery_d = ?4 WHERE ol_w_id = ?1 AND ol_d_id = ?2 AND "
    "ol_o_id = ?3",
    "SELECT SUM(ol_amount) FROM order_line WHERE ol_w_id = ?1 AND ol_d_id = ?2 AND ol_o_id = ?3",
    "UPDATE customer SET c_balance = c_balance + ?4, c_delivery_cnt = c_delivery_cnt + 1 WHERE "
    "c_w_id = ?1 AND c_d_id = ?2 AND c_id = ?3",
    // Stock-Level
    "SELECT d_next_o_id FROM district WHERE d_w_id = ?1 AND d_id = ?2",
    "SELECT COUNT(DISTINCT s_i_id) FROM order_line, stock WHERE ol_w_id = ?1 AND ol_d_id = ?2 "
    "AND ol_o_id < ?3 AND ol_o_id >= ?4 AND s_w_id = ?1 AND s_i_id = ol_i_id AND "
    "s_quantity < ?5",
};
static_assert(sizeof kSql / sizeof kSql[0] == 34);

}  // namespace

Status Terminal::prepare() {
  static_assert(sizeof kSql / sizeof kSql[0] == kStatements);
  for (int i = 0; i < kStatements; i++) PDL_TRY(st_[size_t(i)].prepare(db_.get(), kSql[i]));
  return Status::ok();
}

Status Terminal::run(const TxnInput& in, TxnOutcome* out) {
  *out = TxnOutcome{};
  PDL_TRY(st_[kBegin].run());
  Status st;
  switch (in.type) {
    case TxnType::kNewOrder: st = new_order(in, out); break;
    case TxnType::kPayment: st = payment(in, out); break;
    case TxnType::kOrderStatus: st = order_status(in, out); break;
    case TxnType::kDelivery: st = delivery(in, out); break;
    case TxnType::kStockLevel: st = stock_level(in, out); break;
  }
  if (st.is_ok() && !out->rolled_back) st = st_[kCommit].run();
  if (!st.is_ok() || out->rolled_back) {
    for (sql::Stmt& s : st_) s.reset();
    // After a failed COMMIT or statement SQLite may have rolled back already.
    if (sqlite3_get_autocommit(db_.get()) == 0) {
      const Status rb = st_[kRollback].run();
      if (st.is_ok()) st = rb;
    }
  }
  return st;
}

Status Terminal::pick_customer(const TxnInput& in, int64_t* c_id) {
  if (!in.by_last_name) {
    *c_id = in.c_id;
    return Status::ok();
  }
  sql::Stmt& s = st_[kCustomerByLast];
  s.bind(1, in.c_w_id).bind(2, in.c_d_id).bind(3, in.c_last);
  std::vector<int64_t> ids;
  for (bool row = true;;) {
    PDL_TRY(s.step(&row));
    if (!row) break;
    ids.push_back(s.i64(0));
  }
  if (ids.empty())
    return Status::error(Errc::kNotFound, "no customer named " + in.c_last + " in warehouse " +
                                              std::to_string(in.c_w_id) + " district " +
                                              std::to_string(in.c_d_id));
  *c_id = ids[(ids.size() - 1) / 2];  // position ceil(n / 2), 1-based
  return Status::ok();
}

Status Terminal::new_order(const TxnInput& in, TxnOutcome* out) {
  sql::Stmt& w = st_[kNoWarehouse];
  PDL_TRY(w.bind(1, in.w_id).row());
  const double w_tax = w.f64(0);
  w.reset();
  sql::Stmt& d = st_[kNoDistrict];
  PDL_TRY(d.bind(1, in.w_id).bind(2, in.d_id).row());
  const double d_tax = d.f64(0);
  const int64_t o_id = d.i64(1);
  d.reset();
  PDL_TRY(st_[kNoDistrictNext].bind(1, in.w_id).bind(2, in.d_id).run());
  sql::Stmt& c = st_[kNoCustomer];
  PDL_TRY(c.bind(1, in.w_id).bind(2, in.d_id).bind(3, in.c_id).row());
  const double discount = c.f64(0);
  c.reset();
  bool all_local = true;
  for (const OrderLineInput& l : in.lines) all_local = all_local && l.supply_w_id == in.w_id;
  PDL_TRY(st_[kNoOrder].bind(1, o_id).bind(2, in.d_id).bind(3, in.w_id).bind(4, in.c_id)
              .bind(5, in.now).bind(6, int64_t(in.lines.size())).bind(7, int64_t(all_local))
              .run());
  PDL_TRY(st_[kNoNewOrder].bind(1, o_id).bind(2, in.d_id).bind(3, in.w_id).run());
  double total = 0;
  int64_t number = 0;
  for (const OrderLineInput& l : in.lines) {
    number++;
    sql::Stmt& item = st_[kNoItem];
    bool found = false;
    PDL_TRY(item.bind(1, l.i_id).step(&found));
    if (!found) {  // the unused item of a rolled-back New-Order (§2.4.2.3)
      out->rolled_back = true;
      out->o_id = o_id;
      return Status::ok();
    }
    const double price = item.f64(0);
    item.reset();
    sql::Stmt& s = st_[kNoStock];
    PDL_TRY(s.bind(1, l.supply_w_id).bind(2, l.i_id).row());
    int64_t qty = s.i64(0);
    const std::string dist = s.text(1 + int(in.d_id));
    s.reset();
    qty = qty >= l.quantity + 10 ? qty - l.quantity : qty - l.quantity + 91;
    PDL_TRY(st_[kNoStockUpdate].bind(1, l.supply_w_id).bind(2, l.i_id).bind(3, qty)
                .bind(4, l.quantity).bind(5, int64_t(l.supply_w_id != in.w_id)).run());
    const double amount = double(l.quantity) * price;
    total += amount;
    PDL_TRY(st_[kNoLine].bind(1, o_id).bind(2, in.d_id).bind(3, in.w_id).bind(4, number)
                .bind(5, l.i_id).bind(6, l.supply_w_id).bind(7, l.quantity).bind(8, amount)
                .bind(9, dist).run());
  }
  out->o_id = o_id;
  out->c_id = in.c_id;
  out->count = number;
  out->amount = total * (1 - discount) * (1 + w_tax + d_tax);
  return Status::ok();
}

Status Terminal::payment(const TxnInput& in, TxnOutcome* out) {
  PDL_TRY(st_[kPayWarehouseUpd].bind(1, in.w_id).bind(2, in.h_amount).run());
  sql::Stmt& w = st_[kPayWarehouse];
  PDL_TRY(w.bind(1, in.w_id).row());
  const std::string w_name = w.text(0);
  w.reset();
  PDL_TRY(st_[kPayDistrictUpd].bind(1, in.w_id).bind(2, in.d_id).bind(3, in.h_amount).run());
  sql::Stmt& d = st_[kPayDistrict];
  PDL_TRY(d.bind(1, in.w_id).bind(2, in.d_id).row());
  const std::string d_name = d.text(0);
  d.reset();
  int64_t c_id = 0;
  PDL_TRY(pick_customer(in, &c_id));
  sql::Stmt& c = st_[kPayCustomer];
  PDL_TRY(c.bind(1, in.c_w_id).bind(2, in.c_d_id).bind(3, c_id).row());
  const bool bad_credit = c.text(10) == "BC";
  std::string data = bad_credit ? c.text(14) : std::string();
  c.reset();
  if (bad_credit) {  // §2.5.2.2: prepend the payment to C_DATA, keep 500 characters
    data = std::to_string(c_id) + " " + std::to_string(in.c_d_id) + " " +
           std::to_string(in.c_w_id) + " " + std::to_string(in.d_id) + " " +
           std::to_string(in.w_id) + " " + std::to_string(in.h_amount) + " | " + data;
    if (data.size() > 500) data.resize(500);
    PDL_TRY(st_[kPayCustomerUpdBc].bind(1, in.c_w_id).bind(2, in.c_d_id).bind(3, c_id)
                .bind(4, in.h_amount).bind(5, data).run());
  } else {
    PDL_TRY(st_[kPayCustomerUpd].bind(1, in.c_w_id).bind(2, in.c_d_id).bind(3, c_id)
                .bind(4, in.h_amount).run());
  }
  PDL_TRY(st_[kPayHistory].bind(1, c_id).bind(2, in.c_d_id).bind(3, in.c_w_id).bind(4, in.d_id)
              .bind(5, in.w_id).bind(6, in.now).bind(7, in.h_amount)
              .bind(8, w_name + "    " + d_name).run());
  out->c_id = c_id;
  out->amount = in.h_amount;
  return Status::ok();
}

Status Terminal::order_status(const TxnInput& in, TxnOutcome* out) {
  int64_t c_id = 0;
  PDL_TRY(pick_customer(in, &c_id));
  sql::Stmt& c = st_[kOsCustomer];
  PDL_TRY(c.bind(1, in.c_w_id).bind(2, in.c_d_id).bind(3, c_id).row());
  c.reset();
  sql::Stmt& o = st_[kOsOrder];
  PDL_TRY(o.bind(1, in.c_w_id).bind(2, in.c_d_id).bind(3, c_id).row());
  const int64_t o_id = o.i64(0);
  o.reset();
  sql::Stmt& l = st_[kOsLines];
  l.bind(1, in.c_w_id).bind(2, in.c_d_id).bind(3, o_id);
  int64_t lines = 0;
  for (bool row = true;;) {
    PDL_TRY(l.step(&row));
    if (!row) break;
    lines++;
  }
  out->c_id = c_id;
  out->o_id = o_id;
  out->count = lines;
  return Status::ok();
}

Status Terminal::delivery(const TxnInput& in, TxnOutcome* out) {
  for (int64_t d = 1; d <= scale_.districts; d++) {
    sql::Stmt& no = st_[kDlNewOrder];
    bool row = false;
    PDL_TRY(no.bind(1, in.w_id).bind(2, d).step(&row));
    if (!row) continue;  // no undelivered order in this district: skipped (§2.7.4.2)
    const int64_t o_id = no.i64(0);
    no.reset();
    PDL_TRY(st_[kDlNewOrderDel].bind(1, in.w_id).bind(2, d).bind(3, o_id).run());
    sql::Stmt& o = st_[kDlOrder];
    PDL_TRY(o.bind(1, in.w_id).bind(2, d).bind(3, o_id).row());
    const int64_t c_id = o.i64(0);
    o.reset();
    PDL_TRY(st_[kDlOrderUpd].bind(1, in.w_id).bind(2, d).bind(3, o_id).bind(4, in.carrier_id)
                .run());
    PDL_TRY(st_[kDlLinesUpd].bind(1, in.w_id).bind(2, d).bind(3, o_id).bind(4, in.now).run());
    sql::Stmt& sum = st_[kDlLinesSum];
    PDL_TRY(sum.bind(1, in.w_id).bind(2, d).bind(3, o_id).row());
    const double amount = sum.f64(0);
    sum.reset();
    PDL_TRY(st_[kDlCustomerUpd].bind(1, in.w_id).bind(2, d).bind(3, c_id).bind(4, amount).run());
    out->count++;
  }
  return Status::ok();
}

Status Terminal::stock_level(const TxnInput& in, TxnOutcome* out) {
  sql::Stmt& d = st_[kSlDistrict];
  PDL_TRY(d.bind(1, in.w_id).bind(2, in.d_id).row());
  const int64_t next = d.i64(0);
  d.reset();
  sql::Stmt& n = st_[kSlCount];
  PDL_TRY(n.bind(1, in.w_id).bind(2, in.d_id).bind(3, next).bind(4, next - 20)
              .bind(5, in.threshold).row());
  out->count = n.i64(0);
  n.reset();
  return Status::ok();
}

}  // namespace pdl::tpcc
