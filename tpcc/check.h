// check.h — after a run: TPC-C's consistency conditions (TPC-C 5.11 §3.3.2), SQLite's
// integrity_check, and a checksum of the database's content.
//
// Conditions checked (each as the number of warehouses/districts/orders/... violating it):
//   1 W_YTD = Σ D_YTD                         2 D_NEXT_O_ID − 1 = max O_ID = max NO_O_ID
//   3 max NO_O_ID − min NO_O_ID + 1 = #NEW-ORDER rows (per district)
//   4 Σ O_OL_CNT = #ORDER-LINE rows (per district)
//   5 O_CARRIER_ID null ⇔ a NEW-ORDER row      6 O_OL_CNT = #its ORDER-LINE rows
//   7 OL_DELIVERY_D null ⇔ O_CARRIER_ID null   8 W_YTD = Σ H_AMOUNT (per warehouse)
//   9 D_YTD = Σ H_AMOUNT (per district)
//  10 C_BALANCE = Σ delivered OL_AMOUNT − Σ H_AMOUNT (per customer)
//  12 C_BALANCE + C_YTD_PAYMENT = Σ delivered OL_AMOUNT (per customer)
// (11 holds only for an unchanged database and is not checked.) Money is REAL: sums compare
// within one cent.
//
// The checksum hashes every row of every table in primary-key order (history in rowid order),
// each value with its SQLite type: two databases with the same content have the same checksum
// whatever their page layout, VFS or journal mode.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "flash/common/status.h"
#include "sql/sql.h"

namespace pdl::tpcc {

struct ConditionResult {
  int number = 0;
  std::string what;
  int64_t violations = 0;
};

struct CheckReport {
  std::vector<ConditionResult> conditions;
  std::string integrity;  // PRAGMA integrity_check's first row: "ok" when sound
  uint64_t checksum = 0;
  bool ok() const;
  std::string summary() const;  // "conditions 1-10,12 ok; integrity ok" or what failed
};

Status check_consistency(sql::Db& db, std::vector<ConditionResult>* out);
Status content_checksum(sql::Db& db, uint64_t* out);
// All three.
Status check_database(sql::Db& db, CheckReport* out);

}  // namespace pdl::tpcc
