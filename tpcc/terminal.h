// terminal.h — runs TPC-C transactions on one SQLite connection (TPC-C 5.11 §2.4–2.8).
//
// Each transaction is one SQLite transaction (BEGIN … COMMIT); a New-Order naming an unused
// item is rolled back (§2.4.2.3), and so is any transaction whose statement fails (the error is
// returned). Delivery runs inline, all ten districts in one transaction. Statements are
// prepared once per Terminal.
#pragma once

#include <array>
#include <cstdint>

#include "flash/common/status.h"
#include "sql/sql.h"
#include "tpcc/workload.h"

namespace pdl::tpcc {

// What a transaction did, for reports and tests.
struct TxnOutcome {
  bool rolled_back = false;  // New-Order with an unused item (intended)
  int64_t o_id = 0;          // New-Order: the order id; Order-Status: the order shown
  int64_t c_id = 0;          // the customer chosen (by id or by last name)
  int64_t count = 0;         // Delivery: orders delivered; Stock-Level: items below threshold;
                             // Order-Status: order lines shown; New-Order: lines inserted
  double amount = 0;         // New-Order: total amount; Payment: amount paid
};

class Terminal {
 public:
  Terminal(sql::Db& db, const Scale& scale) : db_(db), scale_(scale) {}
  Status prepare();
  Status run(const TxnInput& in, TxnOutcome* out);

 private:
  Status new_order(const TxnInput& in, TxnOutcome* out);
  Status payment(const TxnInput& in, TxnOutcome* out);
  Status order_status(const TxnInput& in, TxnOutcome* out);
  Status delivery(const TxnInput& in, TxnOutcome* out);
  Status stock_level(const TxnInput& in, TxnOutcome* out);
  // The customer of `in`: its id, or (by last name) the one at position ceil(n/2) of those
  // with that name ordered by first name (§2.5.2.2).
  Status pick_customer(const TxnInput& in, int64_t* c_id);

  enum S {
    kBegin, kCommit, kRollback,
    kNoWarehouse, kNoDistrict, kNoDistrictNext, kNoCustomer, kNoOrder, kNoNewOrder, kNoItem,
    kNoStock, kNoStockUpdate, kNoLine,
    kPayWarehouseUpd, kPayWarehouse, kPayDistrictUpd, kPayDistrict, kCustomerByLast,
    kPayCustomer, kPayCustomerUpd, kPayCustomerUpdBc, kPayHistory,
    kOsCustomer, kOsOrder, kOsLines,
    kDlNewOrder, kDlNewOrderDel, kDlOrder, kDlOrderUpd, kDlLinesUpd, kDlLinesSum, kDlCustomerUpd,
    kSlDistrict, kSlCount,
    kStatements
  };
  sql::Db& db_;
  Scale scale_;
  std::array<sql::Stmt, kStatements> st_;
};

}  // namespace pdl::tpcc
