// loader.cc — see loader.h. Column values follow TPC-C 5.11 §4.3.3.1; money is stored as REAL
// (DECIMAL affinity in SQLite), timestamps as integer seconds.
#include "tpcc/loader.h"

#include <numeric>
#include <vector>

#include "tpcc/random.h"

namespace pdl::tpcc {
namespace {

// Streams of derive_seed() for the loader's tables.
enum Stream : uint64_t { kItem = 1, kWarehouse, kDistrict, kStock, kCustomer, kOrders };

class Loader {
 public:
  Loader(sql::Db& db, const Scale& s, uint64_t seed, const LoadProgress& p)
      : db_(db), s_(s), seed_(seed), progress_(p), c_(NURandC::for_load(seed)) {}

  Status run() {
    for (const TableDef& t : tables()) PDL_TRY(db_.exec(t.ddl));
    PDL_TRY(items());
    PDL_TRY(warehouses());
    for (const char* ddl : indexes()) PDL_TRY(db_.exec(ddl));
    return Status::ok();
  }

 private:
  // One table's insert statement inside a transaction committed every kBatch rows.
  struct Table {
    const char* name;
    sql::Stmt ins;
    uint64_t done = 0, total = 0;
  };
  static constexpr uint64_t kBatch = 20000;

  Status begin(Table* t, const char* name, const char* sql) {
    t->name = name;
    t->total = s_.rows(name);
    PDL_TRY(t->ins.prepare(db_.get(), sql));
    return db_.exec("BEGIN");
  }
  Status row_done(Table* t) {
    PDL_TRY(t->ins.run());
    if (++t->done % kBatch == 0) {
      PDL_TRY(db_.exec("COMMIT; BEGIN"));
      if (progress_) progress_(t->name, t->done, t->total);
    }
    return Status::ok();
  }
  Status end(Table* t) {
    PDL_TRY(db_.exec("COMMIT"));
    if (progress_) progress_(t->name, t->done, t->done);
    return Status::ok();
  }

  Status items() {
    Rng r(derive_seed(seed_, kItem));
    Table t;
    PDL_TRY(begin(&t, "item", "INSERT INTO item VALUES (?1, ?2, ?3, ?4, ?5)"));
    for (int64_t i = 1; i <= s_.items; i++) {
      t.ins.bind(1, i).bind(2, r.uniform(1, 10000)).bind(3, r.astring(14, 24));
      t.ins.bind(4, r.decimal(1.00, 100.00, 2)).bind(5, r.data_with_original());
      PDL_TRY(row_done(&t));
    }
    return end(&t);
  }

  // Street 1, street 2, city, state, zip bound at parameters first .. first + 4.
  static void address(sql::Stmt& st, int first, Rng& r) {
    st.bind(first, r.astring(10, 20)).bind(first + 1, r.astring(10, 20));
    st.bind(first + 2, r.astring(10, 20)).bind(first + 3, r.astring(2, 2));
    st.bind(first + 4, r.zip());
  }

  Status warehouses() {
    Rng rw(derive_seed(seed_, kWarehouse)), rd(derive_seed(seed_, kDistrict));
    Table w, d;
    PDL_TRY(begin(&w, "warehouse", "INSERT INTO warehouse VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9)"));
    // W_YTD = sum of the districts' D_YTD = sum of the loaded HISTORY amounts (10.00 per
    // customer): 300,000.00 at scale 1, as in §4.3.3.1; consistency conditions 1, 8 and 9.
    const double d_ytd = 10.0 * s_.customers;
    for (int64_t wid = 1; wid <= s_.warehouses; wid++) {
      w.ins.bind(1, wid).bind(2, rw.astring(6, 10));
      address(w.ins, 3, rw);
      w.ins.bind(8, rw.decimal(0.0, 0.2, 4)).bind(9, d_ytd * s_.districts);
      PDL_TRY(row_done(&w));
    }
    PDL_TRY(end(&w));
    PDL_TRY(begin(&d, "district",
                  "INSERT INTO district VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11)"));
    for (int64_t wid = 1; wid <= s_.warehouses; wid++)
      for (int64_t did = 1; did <= s_.districts; did++) {
        d.ins.bind(1, did).bind(2, wid).bind(3, rd.astring(6, 10));
        address(d.ins, 4, rd);
        d.ins.bind(9, rd.decimal(0.0, 0.2, 4)).bind(10, d_ytd).bind(11, int64_t(s_.customers) + 1);
        PDL_TRY(row_done(&d));
      }
    PDL_TRY(end(&d));
    PDL_TRY(stock());
    PDL_TRY(customers());
    return orders();
  }

  Status stock() {
    Rng r(derive_seed(seed_, kStock));
    Table t;
    PDL_TRY(begin(&t, "stock",
                  "INSERT INTO stock VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,"
                  "?16,?17)"));
    for (int64_t wid = 1; wid <= s_.warehouses; wid++)
      for (int64_t i = 1; i <= s_.items; i++) {
        t.ins.bind(1, i).bind(2, wid).bind(3, r.uniform(10, 100));
        for (int k = 0; k < 10; k++) t.ins.bind(4 + k, r.astring(24, 24));
        t.ins.bind(14, int64_t(0)).bind(15, int64_t(0)).bind(16, int64_t(0));
        t.ins.bind(17, r.data_with_original());
        PDL_TRY(row_done(&t));
      }
    return end(&t);
  }

  Status customers() {
    Rng r(derive_seed(seed_, kCustomer));
    Table c, h;
    PDL_TRY(begin(&c, "customer",
                  "INSERT INTO customer VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,"
                  "?15,?16,?17,?18,?19,?20,?21)"));
    for (int64_t wid = 1; wid <= s_.warehouses; wid++)
      for (int64_t did = 1; did <= s_.districts; did++)
        for (int64_t cid = 1; cid <= s_.customers; cid++) {
          // The first 1000 customers (or all, when fewer) take each last name in turn; the
          // rest draw NURand(255, 0, 999) (§4.3.3.1, scaled to the names in use).
          const int64_t name = cid <= s_.last_names
                                   ? cid - 1
                                   : nurand(r, 255, 0, s_.last_names - 1, c_.c_last);
          c.ins.bind(1, cid).bind(2, did).bind(3, wid).bind(4, r.astring(8, 16));
          c.ins.bind(5, std::string_view("OE")).bind(6, last_name(name));
          address(c.ins, 7, r);
          c.ins.bind(12, r.nstring(16, 16)).bind(13, kLoadTime);
          c.ins.bind(14, std::string_view(r.uniform(1, 10) == 1 ? "BC" : "GC"));
          c.ins.bind(15, 50000.0).bind(16, r.decimal(0.0, 0.5, 4)).bind(17, -10.0);
          c.ins.bind(18, 10.0).bind(19, int64_t(1)).bind(20, int64_t(0));
          c.ins.bind(21, r.astring(300, 500));
          PDL_TRY(row_done(&c));
        }
    PDL_TRY(end(&c));
    PDL_TRY(begin(&h, "history", "INSERT INTO history VALUES (?1,?2,?3,?4,?5,?6,?7,?8)"));
    for (int64_t wid = 1; wid <= s_.warehouses; wid++)
      for (int64_t did = 1; did <= s_.districts; did++)
        for (int64_t cid = 1; cid <= s_.customers; cid++) {
          h.ins.bind(1, cid).bind(2, did).bind(3, wid).bind(4, did).bind(5, wid);
          h.ins.bind(6, kLoadTime).bind(7, 10.0).bind(8, r.astring(12, 24));
          PDL_TRY(row_done(&h));
        }
    return end(&h);
  }

  Status orders() {
    Rng r(derive_seed(seed_, kOrders));
    Table o, no, ol;
    PDL_TRY(begin(&o, "orders", "INSERT INTO orders VALUES (?1,?2,?3,?4,?5,?6,?7,?8)"));
    sql::Stmt& oi = o.ins;
    PDL_TRY(no.ins.prepare(db_.get(), "INSERT INTO new_order VALUES (?1, ?2, ?3)"));
    no.name = "new_order";
    no.total = s_.rows("new_order");
    PDL_TRY(ol.ins.prepare(db_.get(),
                           "INSERT INTO order_line VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10)"));
    ol.name = "order_line";
    ol.total = s_.rows("order_line");
    const int64_t first_new = int64_t(s_.customers) - s_.new_orders + 1;
    std::vector<int64_t> perm(size_t(s_.customers));
    for (int64_t wid = 1; wid <= s_.warehouses; wid++)
      for (int64_t did = 1; did <= s_.districts; did++) {
        // O_C_ID: a random permutation of the customers (§4.3.3.1).
        std::iota(perm.begin(), perm.end(), 1);
        for (size_t i = perm.size() - 1; i > 0; i--)
          std::swap(perm[i], perm[size_t(r.uniform(0, int64_t(i)))]);
        for (int64_t oid = 1; oid <= s_.customers; oid++) {
          const bool delivered = oid < first_new;
          const int64_t lines = r.uniform(5, 15);
          oi.bind(1, oid).bind(2, did).bind(3, wid).bind(4, perm[size_t(oid - 1)]);
          oi.bind(5, kLoadTime).bind(7, lines).bind(8, int64_t(1));
          if (delivered) oi.bind(6, r.uniform(1, 10));
          else oi.bind_null(6);
          PDL_TRY(oi.run());
          o.done++;
          for (int64_t n = 1; n <= lines; n++) {
            ol.ins.bind(1, oid).bind(2, did).bind(3, wid).bind(4, n);
            ol.ins.bind(5, r.uniform(1, s_.items)).bind(6, wid).bind(8, int64_t(5));
            if (delivered) ol.ins.bind(7, kLoadTime).bind(9, 0.0);
            else ol.ins.bind_null(7).bind(9, r.decimal(0.01, 9999.99, 2));
            ol.ins.bind(10, r.astring(24, 24));
            PDL_TRY(ol.ins.run());
            ol.done++;
          }
          if (!delivered) {
            no.ins.bind(1, oid).bind(2, did).bind(3, wid);
            PDL_TRY(no.ins.run());
            no.done++;
          }
        }
        PDL_TRY(db_.exec("COMMIT; BEGIN"));
        if (progress_) progress_("orders", o.done, o.total);
      }
    PDL_TRY(end(&o));
    if (progress_) {
      progress_("new_order", no.done, no.done);
      progress_("order_line", ol.done, ol.done);
    }
    return Status::ok();
  }

  sql::Db& db_;
  const Scale& s_;
  uint64_t seed_;
  const LoadProgress& progress_;
  NURandC c_;
};

}  // namespace

Status load(sql::Db& db, const Scale& scale, uint64_t seed, const LoadProgress& progress) {
  Loader l(db, scale, seed, progress);
  Status st = l.run();
  if (!st.is_ok() && sqlite3_get_autocommit(db.get()) == 0) (void)db.exec("ROLLBACK");
  return st;
}

}  // namespace pdl::tpcc
