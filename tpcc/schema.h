// schema.h — the TPC-C database: scale, the nine tables and their indexes (TPC-C 5.11 §1.3, §4.3).
//
// Table and column names are the specification's (warehouse.w_ytd, district.d_next_o_id, ...;
// ORDER is `orders`, NEW-ORDER is `new_order`, ORDER-LINE is `order_line`), so any TPC-C
// checker can read a pdl-tpcc database. Each table has its specification primary key; two
// secondary indexes serve the lookups the transactions make by other columns: customer by
// (w, d, last name, first name) for Payment and Order-Status, and orders by (w, d, customer,
// o_id) for Order-Status's "most recent order of the customer".
//
// Scale: --warehouses N and --scale F. F shrinks what the specification sizes per warehouse
// besides districts (always 10): items 100,000 × F, customers per district 3,000 × F (and as
// many orders), new orders per district 900 × F. F = 1 is the specification's cardinalities.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace pdl::tpcc {

struct Scale {
  int warehouses = 1;
  double factor = 1.0;
  int districts = 10;     // per warehouse (§4.3.3.1, never scaled)
  int items = 100000;     // ITEM rows, and STOCK rows per warehouse
  int customers = 3000;   // per district; ORDER rows per district too
  int new_orders = 900;   // NEW-ORDER rows per district (the newest orders)
  int last_names = 1000;  // C_LAST numbers in use: 0 .. last_names - 1

  // The cardinalities for N warehouses at factor F (F in (0, 1]; small F is clamped so each
  // table keeps enough rows for the transactions: at least 100 items and 30 customers).
  static Scale make(int warehouses, double factor);
  std::string describe() const;  // "1 warehouse, scale 0.05 (5000 items, 150 customers/district)"

  // Rows the loader writes, per table in load order (for progress and tests).
  uint64_t rows(const std::string& table) const;
  uint64_t total_rows() const;
};

struct TableDef {
  const char* name;
  const char* ddl;       // CREATE TABLE
  const char* order_by;  // a total order of its rows (for checksums)
};

// The nine tables in load order.
const std::vector<TableDef>& tables();
// CREATE INDEX statements (created after the load).
const std::vector<const char*>& indexes();

}  // namespace pdl::tpcc
