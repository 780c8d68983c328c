// check.cc — see check.h.
#include "tpcc/check.h"

#include <cstring>

#include "tpcc/schema.h"

namespace pdl::tpcc {
namespace {

struct Condition {
  int number;
  const char* what;
  const char* sql;  // counts the violations
};

const Condition kConditions[] = {
    {1, "W_YTD = sum(D_YTD)",
     "SELECT count(*) FROM warehouse WHERE abs(w_ytd - (SELECT coalesce(sum(d_ytd), 0) FROM "
     "district WHERE d_w_id = w_id)) > 0.01"},
    {2, "D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID)",
     "SELECT count(*) FROM district WHERE d_next_o_id - 1 IS NOT (SELECT max(o_id) FROM orders "
     "WHERE o_w_id = d_w_id AND o_d_id = d_id) OR d_next_o_id - 1 <> coalesce((SELECT "
     "max(no_o_id) FROM new_order WHERE no_w_id = d_w_id AND no_d_id = d_id), d_next_o_id - 1)"},
    {3, "max(NO_O_ID) - min(NO_O_ID) + 1 = rows in NEW-ORDER",
     "SELECT count(*) FROM (SELECT max(no_o_id) - min(no_o_id) + 1 AS span, count(*) AS n FROM "
     "new_order GROUP BY no_w_id, no_d_id) WHERE span <> n"},
    {4, "sum(O_OL_CNT) = rows in ORDER-LINE",
     "SELECT count(*) FROM district WHERE (SELECT coalesce(sum(o_ol_cnt), 0) FROM orders WHERE "
     "o_w_id = d_w_id AND o_d_id = d_id) <> (SELECT count(*) FROM order_line WHERE "
     "ol_w_id = d_w_id AND ol_d_id = d_id)"},
    {5, "O_CARRIER_ID null iff a NEW-ORDER row",
     "SELECT count(*) FROM orders WHERE (o_carrier_id IS NULL) <> EXISTS (SELECT 1 FROM "
     "new_order WHERE no_w_id = o_w_id AND no_d_id = o_d_id AND no_o_id = o_id)"},
    {6, "O_OL_CNT = its ORDER-LINE rows",
     "SELECT count(*) FROM orders WHERE o_ol_cnt <> (SELECT count(*) FROM order_line WHERE "
     "ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id)"},
    {7, "OL_DELIVERY_D null iff O_CARRIER_ID null",
     "SELECT count(*) FROM order_line JOIN orders ON o_w_id = ol_w_id AND o_d_id = ol_d_id AND "
     "o_id = ol_o_id WHERE (ol_delivery_d IS NULL) <> (o_carrier_id IS NULL)"},
    {8, "W_YTD = sum(H_AMOUNT)",
     "SELECT count(*) FROM warehouse LEFT JOIN (SELECT h_w_id, sum(h_amount) AS s FROM history "
     "GROUP BY h_w_id) ON h_w_id = w_id WHERE abs(w_ytd - coalesce(s, 0)) > 0.01"},
    {9, "D_YTD = sum(H_AMOUNT)",
     "SELECT count(*) FROM district LEFT JOIN (SELECT h_w_id, h_d_id, sum(h_amount) AS s FROM "
     "history GROUP BY h_w_id, h_d_id) ON h_w_id = d_w_id AND h_d_id = d_id WHERE "
     "abs(d_ytd - coalesce(s, 0)) > 0.01"},
    {10, "C_BALANCE = sum(delivered OL_AMOUNT) - sum(H_AMOUNT)",
     "WITH ol AS (SELECT o_w_id AS w, o_d_id AS d, o_c_id AS c, sum(ol_amount) AS s FROM orders "
     "JOIN order_line ON ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id WHERE "
     "ol_delivery_d IS NOT NULL GROUP BY 1, 2, 3), h AS (SELECT h_c_w_id AS w, h_c_d_id AS d, "
     "h_c_id AS c, sum(h_amount) AS s FROM history GROUP BY 1, 2, 3) SELECT count(*) FROM "
     "customer LEFT JOIN ol ON ol.w = c_w_id AND ol.d = c_d_id AND ol.c = c_id LEFT JOIN h ON "
     "h.w = c_w_id AND h.d = c_d_id AND h.c = c_id WHERE abs(c_balance - (coalesce(ol.s, 0) - "
     "coalesce(h.s, 0))) > 0.01"},
    {12, "C_BALANCE + C_YTD_PAYMENT = sum(delivered OL_AMOUNT)",
     "WITH ol AS (SELECT o_w_id AS w, o_d_id AS d, o_c_id AS c, sum(ol_amount) AS s FROM orders "
     "JOIN order_line ON ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id WHERE "
     "ol_delivery_d IS NOT NULL GROUP BY 1, 2, 3) SELECT count(*) FROM customer LEFT JOIN ol ON "
     "ol.w = c_w_id AND ol.d = c_d_id AND ol.c = c_id WHERE abs(c_balance + c_ytd_payment - "
     "coalesce(ol.s, 0)) > 0.01"},
};

// FNV-1a, 64 bits.
void mix(uint64_t* h, const void* p, size_t n) {
  const auto* b = static_cast<const unsigned char*>(p);
  for (size_t i = 0; i < n; i++) *h = (*h ^ b[i]) * 0x100000001B3ull;
}

}  // namespace

bool CheckReport::ok() const {
  for (const ConditionResult& c : conditions)
    if (c.violations != 0) return false;
  return integrity == "ok";
}

std::string CheckReport::summary() const {
  std::string bad;
  for (const ConditionResult& c : conditions)
    if (c.violations != 0)
      bad += (bad.empty() ? "" : ", ") + std::string("condition ") + std::to_string(c.number) +
             " (" + c.what + "): " + std::to_string(c.violations) + " violations";
  std::string s = bad.empty() ? "consistency 1-10,12 ok" : "FAILED " + bad;
  return s + "; integrity_check " + integrity;
}

Status check_consistency(sql::Db& db, std::vector<ConditionResult>* out) {
  out->clear();
  for (const Condition& c : kConditions) {
    ConditionResult r;
    r.number = c.number;
    r.what = c.what;
    PDL_TRY(db.query_int(c.sql, &r.violations));
    out->push_back(r);
  }
  return Status::ok();
}

Status content_checksum(sql::Db& db, uint64_t* out) {
  uint64_t h = 0xCBF29CE484222325ull;
  for (const TableDef& t : tables()) {
    sql::Stmt s;
    PDL_TRY(s.prepare(db.get(), std::string("SELECT * FROM ") + t.name + " ORDER BY " +
                                    t.order_by));
    mix(&h, t.name, std::strlen(t.name));
    const int cols = sqlite3_column_count(s.get());
    for (bool row = true;;) {
      PDL_TRY(s.step(&row));
      if (!row) break;
      for (int c = 0; c < cols; c++) {
        const unsigned char type = uint8_t(sqlite3_column_type(s.get(), c));
        mix(&h, &type, 1);
        if (type == SQLITE_INTEGER) {
          const int64_t v = s.i64(c);
          mix(&h, &v, sizeof v);
        } else if (type == SQLITE_FLOAT) {
          const double v = s.f64(c);
          mix(&h, &v, sizeof v);
        } else if (type != SQLITE_NULL) {
          const std::string v = s.text(c);
          const uint32_t n = uint32_t(v.size());
          mix(&h, &n, sizeof n);
          mix(&h, v.data(), v.size());
        }
      }
    }
  }
  *out = h;
  return Status::ok();
}

Status check_database(sql::Db& db, CheckReport* out) {
  PDL_TRY(check_consistency(db, &out->conditions));
  PDL_TRY(db.query_text("PRAGMA integrity_check", &out->integrity));
  return content_checksum(db, &out->checksum);
}

}  // namespace pdl::tpcc
