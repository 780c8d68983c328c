// schema.cc — see schema.h.
#include "tpcc/schema.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace pdl::tpcc {

Scale Scale::make(int warehouses, double factor) {
  Scale s;
  s.warehouses = warehouses;
  s.factor = factor;
  s.items = std::max(100, int(std::lround(100000 * factor)));
  s.customers = std::max(30, int(std::lround(3000 * factor)));
  s.new_orders = std::max(1, int(std::lround(s.customers * 0.3)));
  s.last_names = std::min(1000, s.customers);
  return s;
}

std::string Scale::describe() const {
  char buf[200];
  std::snprintf(buf, sizeof buf, "%d warehouse%s, scale %g (%d items, %d customers/district)",
                warehouses, warehouses == 1 ? "" : "s", factor, items, customers);
  return buf;
}

uint64_t Scale::rows(const std::string& t) const {
  const uint64_t w = uint64_t(warehouses), d = w * uint64_t(districts);
  if (t == "item") return uint64_t(items);
  if (t == "warehouse") return w;
  if (t == "district") return d;
  if (t == "stock") return w * uint64_t(items);
  if (t == "customer" || t == "history" || t == "orders") return d * uint64_t(customers);
  if (t == "new_order") return d * uint64_t(new_orders);
  if (t == "order_line") return d * uint64_t(customers) * 10;  // 5..15 per order: about 10
  return 0;
}

uint64_t Scale::total_rows() const {
  uint64_t n = 0;
  for (const TableDef& t : tables()) n += rows(t.name);
  return n;
}

const std::vector<TableDef>& tables() {
  static const std::vector<TableDef> kTables = {
      {"item",
       "CREATE TABLE item (i_id INTEGER PRIMARY KEY, i_im_id INTEGER, i_name VARCHAR(24), "
       "i_price DECIMAL(5,2), i_data VARCHAR(50))",
       "i_id"},
      {"warehouse",
       "CREATE TABLE warehouse (w_id INTEGER PRIMARY KEY, w_name VARCHAR(10), "
       "w_street_1 VARCHAR(20), w_street_2 VARCHAR(20), w_city VARCHAR(20), w_state CHAR(2), "
       "w_zip CHAR(9), w_tax DECIMAL(4,4), w_ytd DECIMAL(12,2))",
       "w_id"},
      {"district",
       "CREATE TABLE district (d_id INTEGER, d_w_id INTEGER, d_name VARCHAR(10), "
       "d_street_1 VARCHAR(20), d_street_2 VARCHAR(20), d_city VARCHAR(20), d_state CHAR(2), "
       "d_zip CHAR(9), d_tax DECIMAL(4,4), d_ytd DECIMAL(12,2), d_next_o_id INTEGER, "
       "PRIMARY KEY (d_w_id, d_id))",
       "d_w_id, d_id"},
      {"stock",
       "CREATE TABLE stock (s_i_id INTEGER, s_w_id INTEGER, s_quantity INTEGER, "
       "s_dist_01 CHAR(24), s_dist_02 CHAR(24), s_dist_03 CHAR(24), s_dist_04 CHAR(24), "
       "s_dist_05 CHAR(24), s_dist_06 CHAR(24), s_dist_07 CHAR(24), s_dist_08 CHAR(24), "
       "s_dist_09 CHAR(24), s_dist_10 CHAR(24), s_ytd INTEGER, s_order_cnt INTEGER, "
       "s_remote_cnt INTEGER, s_data VARCHAR(50), PRIMARY KEY (s_w_id, s_i_id))",
       "s_w_id, s_i_id"},
      {"customer",
       "CREATE TABLE customer (c_id INTEGER, c_d_id INTEGER, c_w_id INTEGER, "
       "c_first VARCHAR(16), c_middle CHAR(2), c_last VARCHAR(16), c_street_1 VARCHAR(20), "
       "c_street_2 VARCHAR(20), c_city VARCHAR(20), c_state CHAR(2), c_zip CHAR(9), "
       "c_phone CHAR(16), c_since TIMESTAMP, c_credit CHAR(2), c_credit_lim DECIMAL(12,2), "
       "c_discount DECIMAL(4,4), c_balance DECIMAL(12,2), c_ytd_payment DECIMAL(12,2), "
       "c_payment_cnt INTEGER, c_delivery_cnt INTEGER, c_data VARCHAR(500), "
       "PRIMARY KEY (c_w_id, c_d_id, c_id))",
       "c_w_id, c_d_id, c_id"},
      {"history",
       "CREATE TABLE history (h_c_id INTEGER, h_c_d_id INTEGER, h_c_w_id INTEGER, "
       "h_d_id INTEGER, h_w_id INTEGER, h_date TIMESTAMP, h_amount DECIMAL(6,2), "
       "h_data VARCHAR(24))",
       "rowid"},
      {"orders",
       "CREATE TABLE orders (o_id INTEGER, o_d_id INTEGER, o_w_id INTEGER, o_c_id INTEGER, "
       "o_entry_d TIMESTAMP, o_carrier_id INTEGER, o_ol_cnt INTEGER, o_all_local INTEGER, "
       "PRIMARY KEY (o_w_id, o_d_id, o_id))",
       "o_w_id, o_d_id, o_id"},
      {"new_order",
       "CREATE TABLE new_order (no_o_id INTEGER, no_d_id INTEGER, no_w_id INTEGER, "
       "PRIMARY KEY (no_w_id, no_d_id, no_o_id))",
       "no_w_id, no_d_id, no_o_id"},
      {"order_line",
       "CREATE TABLE order_line (ol_o_id INTEGER, ol_d_id INTEGER, ol_w_id INTEGER, "
       "ol_number INTEGER, ol_i_id INTEGER, ol_supply_w_id INTEGER, ol_delivery_d TIMESTAMP, "
       "ol_quantity INTEGER, ol_amount DECIMAL(6,2), ol_dist_info CHAR(24), "
       "PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number))",
       "ol_w_id, ol_d_id, ol_o_id, ol_number"},
  };
  return kTables;
}

const std::vector<const char*>& indexes() {
  static const std::vector<const char*> kIndexes = {
      "CREATE INDEX customer_last ON customer (c_w_id, c_d_id, c_last, c_first)",
      "CREATE INDEX orders_customer ON orders (o_w_id, o_d_id, o_c_id, o_id)",
  };
  return kIndexes;
}

}  // namespace pdl::tpcc
