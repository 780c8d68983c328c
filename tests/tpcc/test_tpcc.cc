// test_tpcc.cc — pdl-tpcc (tpcc/): the loader's row counts, each transaction's effects, the
// workload's mix and determinism, the consistency conditions after short runs on every method
// and journal mode, and that the same seed gives the same database on every method.
//
// Tiny scales (100 items, 30 customers per district) keep each case well under a second or
// two; the unix VFS holds the loaded source, as in pdl-tpcc.
#include <catch2/catch.hpp>

#include <cmath>
#include <map>

#include "tests/support/test_util.h"
#include "tpcc/check.h"
#include "tpcc/figures.h"
#include "tpcc/fleet.h"
#include "tpcc/loader.h"
#include "tpcc/terminal.h"
#include "tpcc/workload.h"
#include "vfs/pdl_vfs.h"

using namespace pdl;
using namespace pdl::tpcc;

namespace {

void require_ok(const Status& st) {
  INFO(st.to_string());
  REQUIRE(st.is_ok());
}

int64_t q(sql::Db& db, const std::string& sql) {
  int64_t v = 0;
  require_ok(db.query_int(sql, &v));
  return v;
}

double qf(sql::Db& db, const std::string& sql) {
  sql::Stmt s;
  require_ok(s.prepare(db.get(), sql));
  require_ok(s.row());
  const double v = s.f64(0);
  s.reset();
  return v;
}

// A loaded database on the unix VFS at `path`.
void load_unix(sql::Db& db, const std::string& path, const Scale& s, uint64_t seed) {
  require_ok(db.open("file:" + path + "?vfs=unix"));
  require_ok(db.exec("PRAGMA page_size=2048; PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF"));
  require_ok(load(db, s, seed));
  require_ok(db.exec("PRAGMA journal_mode=DELETE"));
}

std::string dir_of(const std::string& path) { return path.substr(0, path.rfind('/')); }

// The smallest chip auto_chip_bytes allows for the database at `path` and 256 KiB of growth.
uint64_t chip_for(const std::string& path, const std::vector<MethodSpec>& methods) {
  sql::Db db;
  require_ok(db.open("file:" + path + "?vfs=unix&mode=ro"));
  const int64_t pages = q(db, "PRAGMA page_count");
  return auto_chip_bytes(uint64_t(pages) * 2048, 256 << 10, 2048, methods);
}

uint64_t checksum(sql::Db& db) {
  uint64_t c = 0;
  require_ok(content_checksum(db, &c));
  return c;
}

}  // namespace

TEST_CASE("loader: the specification's cardinalities at a tiny scale, consistent from the start",
          "[tpcc][loader]") {
  const Scale s = Scale::make(2, 0.001);
  REQUIRE(s.items == 100);
  REQUIRE(s.customers == 30);
  REQUIRE(s.new_orders == 9);
  sql::Db db;
  load_unix(db, test::temp_path("load.db"), s, 5);
  CHECK(q(db, "SELECT count(*) FROM item") == 100);
  CHECK(q(db, "SELECT count(*) FROM warehouse") == 2);
  CHECK(q(db, "SELECT count(*) FROM district") == 20);
  CHECK(q(db, "SELECT count(*) FROM stock") == 200);
  CHECK(q(db, "SELECT count(*) FROM customer") == 600);
  CHECK(q(db, "SELECT count(*) FROM history") == 600);
  CHECK(q(db, "SELECT count(*) FROM orders") == 600);
  CHECK(q(db, "SELECT count(*) FROM new_order") == 180);
  const int64_t lines = q(db, "SELECT count(*) FROM order_line");
  CHECK(lines == q(db, "SELECT sum(o_ol_cnt) FROM orders"));
  CHECK(lines >= 600 * 5);
  CHECK(lines <= 600 * 15);
  // Each customer ordered exactly once (O_C_ID is a permutation per district).
  CHECK(q(db, "SELECT count(*) FROM (SELECT DISTINCT o_w_id, o_d_id, o_c_id FROM orders)") == 600);
  // Every last name in use exists in every district (Payment by last name always finds one).
  CHECK(q(db, "SELECT count(*) FROM (SELECT c_w_id, c_d_id, count(DISTINCT c_last) AS n FROM "
              "customer GROUP BY 1, 2) WHERE n <> 30") == 0);
  CHECK(qf(db, "SELECT w_ytd FROM warehouse WHERE w_id = 1") == Approx(3000.0));
  CheckReport r;
  require_ok(check_database(db, &r));
  INFO(r.summary());
  CHECK(r.ok());
  CHECK(r.conditions.size() == 11);
  // Deterministic: the same seed loads the same content, another seed another.
  sql::Db again, other;
  load_unix(again, test::temp_path("again.db"), s, 5);
  load_unix(other, test::temp_path("other.db"), s, 6);
  CHECK(checksum(again) == r.checksum);
  CHECK(checksum(other) != r.checksum);
}

TEST_CASE("workload: the mix, the rolled-back New-Orders and the inputs are deterministic",
          "[tpcc][workload]") {
  const Scale s = Scale::make(3, 0.01);
  const Workload w(s, 11), same(s, 11), other(s, 12);
  std::map<TxnType, int> n;
  int rollbacks = 0, remote_lines = 0, lines = 0, by_last = 0, customer_picks = 0;
  const int kN = 100000;
  bool differs = false;
  for (int i = 0; i < kN; i++) {
    const TxnInput t = w.input(uint64_t(i));
    const TxnInput u = same.input(uint64_t(i));
    REQUIRE(t.type == u.type);
    REQUIRE(t.c_id == u.c_id);
    REQUIRE(t.c_last == u.c_last);
    REQUIRE(t.lines.size() == u.lines.size());
    differs = differs || other.input(uint64_t(i)).type != t.type;
    n[t.type]++;
    REQUIRE(t.w_id >= 1);
    REQUIRE(t.w_id <= 3);
    REQUIRE(t.d_id >= 1);
    REQUIRE(t.d_id <= 10);
    if (t.type == TxnType::kNewOrder) {
      REQUIRE(t.lines.size() >= 5);
      REQUIRE(t.lines.size() <= 15);
      rollbacks += t.rollback;
      for (size_t k = 0; k < t.lines.size(); k++) {
        const OrderLineInput& l = t.lines[k];
        const bool unused = t.rollback && k + 1 == t.lines.size();
        REQUIRE(l.i_id == (unused ? s.items + 1 : std::clamp<int64_t>(l.i_id, 1, s.items)));
        REQUIRE(l.quantity >= 1);
        REQUIRE(l.quantity <= 10);
        remote_lines += l.supply_w_id != t.w_id;
        lines++;
      }
      REQUIRE(t.c_id >= 1);
      REQUIRE(t.c_id <= s.customers);
    }
    if (t.type == TxnType::kPayment || t.type == TxnType::kOrderStatus) {
      customer_picks++;
      by_last += t.by_last_name;
      if (!t.by_last_name) {
        REQUIRE(t.c_id >= 1);
        REQUIRE(t.c_id <= s.customers);
      }
    }
    if (t.type == TxnType::kPayment) {
      REQUIRE(t.h_amount >= 1.0);
      REQUIRE(t.h_amount <= 5000.0);
    }
  }
  CHECK(differs);
  auto pct = [&](TxnType t) { return 100.0 * n[t] / kN; };
  CHECK(pct(TxnType::kNewOrder) == Approx(45).margin(0.7));
  CHECK(pct(TxnType::kPayment) == Approx(43).margin(0.7));
  CHECK(pct(TxnType::kOrderStatus) == Approx(4).margin(0.3));
  CHECK(pct(TxnType::kDelivery) == Approx(4).margin(0.3));
  CHECK(pct(TxnType::kStockLevel) == Approx(4).margin(0.3));
  CHECK(100.0 * rollbacks / n[TxnType::kNewOrder] == Approx(1).margin(0.25));
  CHECK(100.0 * remote_lines / lines == Approx(1).margin(0.25));
  CHECK(100.0 * by_last / customer_picks == Approx(60).margin(1.5));
}

TEST_CASE("NURand run constant differs from the load's by 65..119, never 96 or 112",
          "[tpcc][random]") {
  for (uint64_t seed = 0; seed < 200; seed++) {
    const NURandC load = NURandC::for_load(seed), run = NURandC::for_run(load, seed);
    const int64_t d = std::llabs(run.c_last - load.c_last);
    REQUIRE(d >= 65);
    REQUIRE(d <= 119);
    REQUIRE(d != 96);
    REQUIRE(d != 112);
  }
  Rng r(3);
  for (int i = 0; i < 10000; i++) {
    const int64_t v = nurand(r, 1023, 1, 30, 77);
    REQUIRE(v >= 1);
    REQUIRE(v <= 30);
  }
  CHECK(last_name(371) == "PRICALLYOUGHT");
  CHECK(last_name(0) == "BARBARBAR");
}

TEST_CASE("transactions: each one's effects on a tiny database", "[tpcc][transactions]") {
  const Scale s = Scale::make(2, 0.001);
  sql::Db db;
  load_unix(db, test::temp_path("txn.db"), s, 9);
  Terminal term(db, s);
  require_ok(term.prepare());
  TxnOutcome out;

  SECTION("New-Order inserts the order, its lines and a new_order row and updates stock") {
    TxnInput t;
    t.type = TxnType::kNewOrder;
    t.w_id = t.c_w_id = 1;
    t.d_id = t.c_d_id = 3;
    t.c_id = 7;
    t.now = kRunStart;
    t.lines = {{5, 1, 3}, {6, 2, 10}, {5, 1, 4}, {40, 1, 1}, {41, 1, 2}};
    const int64_t next = q(db, "SELECT d_next_o_id FROM district WHERE d_w_id=1 AND d_id=3");
    const int64_t qty5 = q(db, "SELECT s_quantity FROM stock WHERE s_w_id=1 AND s_i_id=5");
    const int64_t remote6 = q(db, "SELECT s_remote_cnt FROM stock WHERE s_w_id=2 AND s_i_id=6");
    require_ok(term.run(t, &out));
    CHECK_FALSE(out.rolled_back);
    CHECK(out.o_id == next);
    CHECK(out.count == 5);
    CHECK(q(db, "SELECT d_next_o_id FROM district WHERE d_w_id=1 AND d_id=3") == next + 1);
    const std::string o = " WHERE o_w_id=1 AND o_d_id=3 AND o_id=" + std::to_string(next);
    CHECK(q(db, "SELECT o_ol_cnt FROM orders" + o) == 5);
    CHECK(q(db, "SELECT o_c_id FROM orders" + o) == 7);
    CHECK(q(db, "SELECT o_all_local FROM orders" + o) == 0);
    CHECK(q(db, "SELECT o_carrier_id IS NULL FROM orders" + o) == 1);
    CHECK(q(db, "SELECT count(*) FROM new_order WHERE no_w_id=1 AND no_d_id=3 AND no_o_id=" +
                    std::to_string(next)) == 1);
    CHECK(q(db, "SELECT count(*) FROM order_line WHERE ol_w_id=1 AND ol_d_id=3 AND ol_o_id=" +
                    std::to_string(next)) == 5);
    // Item 5 ordered twice (3, then 4), each per §2.4.2.2: minus the quantity, plus 91 when
    // fewer than quantity + 10 would remain.
    int64_t expect = qty5;
    for (int64_t k : {3, 4}) expect = expect >= k + 10 ? expect - k : expect - k + 91;
    CHECK(q(db, "SELECT s_quantity FROM stock WHERE s_w_id=1 AND s_i_id=5") == expect);
    CHECK(q(db, "SELECT s_order_cnt FROM stock WHERE s_w_id=1 AND s_i_id=5") == 2);
    CHECK(q(db, "SELECT s_remote_cnt FROM stock WHERE s_w_id=2 AND s_i_id=6") == remote6 + 1);
    const double sum = qf(db, "SELECT sum(ol_amount) FROM order_line WHERE ol_w_id=1 AND "
                              "ol_d_id=3 AND ol_o_id=" + std::to_string(next));
    const double factor = qf(db, "SELECT (1 - c_discount) * (1 + w_tax + d_tax) FROM customer, "
                                 "warehouse, district WHERE c_w_id=1 AND c_d_id=3 AND c_id=7 AND "
                                 "w_id=1 AND d_w_id=1 AND d_id=3");
    CHECK(out.amount == Approx(sum * factor));
  }

  SECTION("a New-Order naming an unused item is rolled back and changes nothing") {
    const uint64_t before = checksum(db);
    TxnInput t;
    t.type = TxnType::kNewOrder;
    t.w_id = t.c_w_id = 2;
    t.d_id = t.c_d_id = 1;
    t.c_id = 1;
    t.lines = {{1, 2, 1}, {2, 2, 1}, {s.items + 1, 2, 1}};
    require_ok(term.run(t, &out));
    CHECK(out.rolled_back);
    CHECK(checksum(db) == before);
    CHECK(sqlite3_get_autocommit(db.get()) == 1);
  }

  SECTION("Payment moves the amount through warehouse, district, customer and history") {
    TxnInput t;
    t.type = TxnType::kPayment;
    t.w_id = 1;
    t.d_id = 2;
    t.c_w_id = 2;  // a remote customer
    t.c_d_id = 5;
    t.by_last_name = true;
    t.c_last = last_name(4);
    t.h_amount = 123.45;
    t.now = kRunStart + 5;
    // By last name: the customer at position ceil(n/2) ordered by c_first.
    sql::Stmt ids;
    require_ok(ids.prepare(db.get(), "SELECT c_id FROM customer WHERE c_w_id=2 AND c_d_id=5 AND "
                                     "c_last='" + t.c_last + "' ORDER BY c_first"));
    std::vector<int64_t> v;
    for (bool row = true;;) {
      require_ok(ids.step(&row));
      if (!row) break;
      v.push_back(ids.i64(0));
    }
    REQUIRE_FALSE(v.empty());
    const int64_t cid = v[(v.size() + 1) / 2 - 1];
    const std::string c = " FROM customer WHERE c_w_id=2 AND c_d_id=5 AND c_id=" + std::to_string(cid);
    const double w0 = qf(db, "SELECT w_ytd FROM warehouse WHERE w_id=1");
    const double d0 = qf(db, "SELECT d_ytd FROM district WHERE d_w_id=1 AND d_id=2");
    const double b0 = qf(db, "SELECT c_balance" + c);
    const int64_t n0 = q(db, "SELECT c_payment_cnt" + c);
    const int64_t h0 = q(db, "SELECT count(*) FROM history");
    require_ok(term.run(t, &out));
    CHECK(out.c_id == cid);
    CHECK(qf(db, "SELECT w_ytd FROM warehouse WHERE w_id=1") == Approx(w0 + 123.45));
    CHECK(qf(db, "SELECT d_ytd FROM district WHERE d_w_id=1 AND d_id=2") == Approx(d0 + 123.45));
    CHECK(qf(db, "SELECT c_balance" + c) == Approx(b0 - 123.45));
    CHECK(q(db, "SELECT c_payment_cnt" + c) == n0 + 1);
    CHECK(q(db, "SELECT count(*) FROM history") == h0 + 1);
    CHECK(q(db, "SELECT count(*) FROM history WHERE h_c_id=" + std::to_string(cid) +
                " AND h_c_w_id=2 AND h_c_d_id=5 AND h_w_id=1 AND h_d_id=2 AND h_amount=123.45") == 1);
    if (q(db, "SELECT c_credit = 'BC'" + c)) {
      std::string data;
      require_ok(db.query_text("SELECT c_data" + c, &data));
      CHECK(data.rfind(std::to_string(cid) + " 5 2 2 1 ", 0) == 0);
      CHECK(data.size() <= 500);
    }
  }

  SECTION("Order-Status reads the customer's newest order and changes nothing") {
    const uint64_t before = checksum(db);
    TxnInput t;
    t.type = TxnType::kOrderStatus;
    t.w_id = t.c_w_id = 1;
    t.d_id = t.c_d_id = 4;
    t.c_id = 12;
    require_ok(term.run(t, &out));
    CHECK(out.o_id == q(db, "SELECT max(o_id) FROM orders WHERE o_w_id=1 AND o_d_id=4 AND o_c_id=12"));
    CHECK(out.count == q(db, "SELECT o_ol_cnt FROM orders WHERE o_w_id=1 AND o_d_id=4 AND o_id=" +
                                 std::to_string(out.o_id)));
    CHECK(checksum(db) == before);
  }

  SECTION("Delivery delivers the oldest new order of every district") {
    const std::string oldest =
        "SELECT min(no_o_id) FROM new_order WHERE no_w_id=2 AND no_d_id=";
    std::vector<int64_t> first;
    for (int d = 1; d <= 10; d++) first.push_back(q(db, oldest + std::to_string(d)));
    const int64_t o7 = first[6];
    const int64_t c7 = q(db, "SELECT o_c_id FROM orders WHERE o_w_id=2 AND o_d_id=7 AND o_id=" +
                                 std::to_string(o7));
    const std::string cw = " FROM customer WHERE c_w_id=2 AND c_d_id=7 AND c_id=" + std::to_string(c7);
    const double b0 = qf(db, "SELECT c_balance" + cw);
    const double amount = qf(db, "SELECT sum(ol_amount) FROM order_line WHERE ol_w_id=2 AND "
                                 "ol_d_id=7 AND ol_o_id=" + std::to_string(o7));
    TxnInput t;
    t.type = TxnType::kDelivery;
    t.w_id = 2;
    t.carrier_id = 6;
    t.now = kRunStart + 9;
    require_ok(term.run(t, &out));
    CHECK(out.count == 10);
    for (int d = 1; d <= 10; d++) {
      CAPTURE(d);
      const std::string o = std::to_string(first[size_t(d - 1)]);
      CHECK(q(db, oldest + std::to_string(d)) == first[size_t(d - 1)] + 1);
      CHECK(q(db, "SELECT o_carrier_id FROM orders WHERE o_w_id=2 AND o_d_id=" +
                      std::to_string(d) + " AND o_id=" + o) == 6);
      CHECK(q(db, "SELECT count(*) FROM order_line WHERE ol_w_id=2 AND ol_d_id=" +
                      std::to_string(d) + " AND ol_o_id=" + o + " AND ol_delivery_d <> " +
                      std::to_string(kRunStart + 9)) == 0);
    }
    CHECK(qf(db, "SELECT c_balance" + cw) == Approx(b0 + amount));
    CheckReport r;
    require_ok(check_database(db, &r));
    INFO(r.summary());
    CHECK(r.ok());
  }

  SECTION("Stock-Level counts the recent items below the threshold and changes nothing") {
    const uint64_t before = checksum(db);
    TxnInput t;
    t.type = TxnType::kStockLevel;
    t.w_id = 1;
    t.d_id = 8;
    t.threshold = 60;
    require_ok(term.run(t, &out));
    const int64_t next = q(db, "SELECT d_next_o_id FROM district WHERE d_w_id=1 AND d_id=8");
    const int64_t expect = q(
        db, "SELECT count(*) FROM (SELECT DISTINCT ol_i_id FROM order_line WHERE ol_w_id=1 AND "
            "ol_d_id=8 AND ol_o_id >= " + std::to_string(next - 20) + ") JOIN stock ON "
            "s_w_id=1 AND s_i_id=ol_i_id WHERE s_quantity < 60");
    CHECK(out.count == expect);
    CHECK(out.count > 0);
    CHECK(checksum(db) == before);
  }
}

TEST_CASE("cost split: the parts sum to the chip's counters, shared work by bytes programmed",
          "[tpcc][figures]") {
  ImageCounters d;
  d.costs.cls[0].flash = {10, 0, 4, 0, 0, 3000, 1000};  // database
  d.costs.cls[1].flash = {2, 0, 2, 0, 0, 1000, 300};    // journal
  d.costs.cls[3].flash = {0, 0, 0, 0, 0, 0, 0};         // directory
  d.costs.gc = {4, 0, 4, 1, 0, 8000, 2000};
  d.nand = {16, 0, 10, 1, 0, 12000, 3300};
  d.volume.kind[0].bytes_written = 6000;
  d.volume.kind[1].bytes_written = 2000;
  const CostSplit c = split_costs(d);
  CHECK(c.database.sim_us == Approx(1000 + 0.75 * 2000));
  CHECK(c.journal.sim_us == Approx(300 + 0.25 * 2000));
  CHECK(c.database.sim_us + c.journal.sim_us + c.directory.sim_us == Approx(c.total.sim_us));
  CHECK(c.database.erases + c.journal.erases == Approx(1.0));
  CHECK(c.database.write_amplification() == Approx((3000 + 6000) / 6000.0));
  CHECK(c.total.sqlite_bytes == 8000);
  std::vector<double> v{1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  CHECK(percentile(v, 50) == 5);
  CHECK(percentile(v, 95) == 10);
  CHECK(percentile(v, 10) == 1);
}

namespace {

struct FleetRun {
  std::vector<CheckReport> checks;
  std::vector<Measurement> measured;
  WarmupReport warmup;
};

// A loaded source database (unix VFS) in a fresh temporary file; returns its path.
std::string loaded_source(const char* stem, const Scale& s, uint64_t seed) {
  const std::string path = test::temp_path(stem);
  sql::Db db;
  load_unix(db, path, s, seed);
  return path;
}

std::vector<MethodSpec> methods_of(const std::string& list) {
  std::vector<MethodSpec> m;
  std::string err;
  INFO(err);
  REQUIRE(parse_methods(list, &m, &err));
  return m;
}

FleetRun run_fleet(const std::string& source, const Scale& s, uint64_t seed,
                   const std::string& journal, const std::vector<MethodSpec>& methods,
                   uint64_t chip, double gc_rounds, uint64_t warmup, uint64_t txns,
                   bool unix_first = false) {
  setenv("PDL_VFS_QUIET", "1", 0);
  FleetConfig cfg;
  cfg.scale = s;
  cfg.seed = seed;
  cfg.journal = journal;
  cfg.chip_bytes = chip;
  cfg.dir = dir_of(test::temp_path("fleet"));
  cfg.unix_first = unix_first;
  INFO("fleet: seed " << seed << ", journal_mode=" << journal << ", chip " << chip);
  FleetRun r;
  Fleet f(cfg, methods);
  require_ok(f.open(source));
  require_ok(f.set_cache_pct(5));
  require_ok(f.warm_up(gc_rounds, 5000, warmup, &r.warmup));
  require_ok(f.set_cache_pct(5));  // from the database's size after the warm-up
  require_ok(f.measure(txns, 0, &r.measured));
  require_ok(f.check(&r.checks));
  require_ok(f.close());
  return r;
}

}  // namespace

TEST_CASE("a short run on every method and journal mode keeps TPC-C consistent and identical",
          "[tpcc][fleet]") {
  const std::string journal = GENERATE(as<std::string>{}, "delete", "wal", "memory");
  INFO("journal_mode=" << journal);
  const Scale s = Scale::make(1, 0.001);
  const std::string src = loaded_source("src.db", s, 21);
  const std::vector<MethodSpec> methods = all_methods();
  const uint64_t chip = chip_for(src, methods);
  // 40 transactions of warm-up, then 150 measured: on this chip of about 50 blocks, OPU and
  // the IPL/IPU merges are collecting garbage by then (the warm-up to a GC target has its
  // own case below).
  const FleetRun r = run_fleet(src, s, 21, journal, methods, chip, 0, 40, 150);
  REQUIRE(r.measured.size() == methods.size() + 1);  // + the unix reference
  CHECK(r.warmup.transactions == 40);
  for (size_t i = 0; i < r.measured.size(); i++) {
    const Measurement& m = r.measured[i];
    INFO(m.label << ": " << r.checks[i].summary());
    CHECK(r.checks[i].ok());
    CHECK(r.checks[i].checksum == r.checks[0].checksum);
    CHECK(m.txns == 150);
    CHECK(m.first_txn == r.measured[0].first_txn);
    CHECK(m.cache_pages == std::max<int64_t>(1, std::llround(double(m.db_pages) * 5 / 100)));
    CHECK(m.cpu_s > 0);  // host CPU time of its transactions, counted per member
    if (!m.has_flash) continue;
    // The measured phase did flash work, and the split accounts for all of it.
    const CostSplit c = split_costs(m.flash);
    CHECK(c.total.sim_us > 0);
    CHECK(c.database.sim_us + c.journal.sim_us + c.directory.sim_us ==
          Approx(c.total.sim_us).epsilon(1e-9));
    CHECK(c.database.sqlite_bytes > 0);
    if (journal == "memory") CHECK(c.journal.sqlite_bytes == 0);
    else CHECK(c.journal.sqlite_bytes > 0);
    uint64_t typed = 0;
    for (const TypeFigures& t : m.types) typed += t.count;
    CHECK(typed == 150);
  }
}

TEST_CASE("the unix reference can run first: same transactions, same content, methods after",
          "[tpcc][fleet]") {
  const Scale s = Scale::make(1, 0.001);
  const std::string src = loaded_source("first.db", s, 8);
  const std::vector<MethodSpec> methods = methods_of("pdl,opu");
  const FleetRun r = run_fleet(src, s, 8, "wal", methods, chip_for(src, methods), 0, 20, 30, true);
  REQUIRE(r.measured.size() == 3);
  CHECK(r.measured[0].key == "unix");
  CHECK_FALSE(r.measured[0].has_flash);
  CHECK(r.measured[1].key == "pdl");
  CHECK(r.measured[2].key == "opu");
  for (size_t i = 0; i < r.measured.size(); i++) {
    INFO(r.measured[i].label);
    CHECK(r.measured[i].first_txn == r.measured[0].first_txn);
    CHECK(r.measured[i].txns == 30);
    CHECK(r.checks[i].ok());
    CHECK(r.checks[i].checksum == r.checks[0].checksum);
  }
}

TEST_CASE("warm-up runs every method until its chip has erased its blocks as often as asked",
          "[tpcc][fleet][warmup]") {
  const Scale s = Scale::make(1, 0.001);
  const std::string src = loaded_source("warm.db", s, 5);
  const std::vector<MethodSpec> methods = methods_of("pdl,opu,ipl64k");
  const FleetRun r = run_fleet(src, s, 5, "delete", methods, chip_for(src, methods), 0.3, 0, 10);
  CHECK(r.warmup.reached);
  CHECK(r.warmup.transactions % 50 == 0);  // whole lockstep rounds
  for (size_t i = 0; i < methods.size(); i++) {
    INFO(methods[i].label);
    CHECK(r.warmup.gc_rounds[i] >= 0.3);
  }
  // PDL programs least, so its chip is the last to get there.
  CHECK(r.warmup.gc_rounds[0] < r.warmup.gc_rounds[1]);
  for (const CheckReport& c : r.checks) CHECK(c.ok());
}

TEST_CASE("determinism: the same seed gives the same database on every method, run after run",
          "[tpcc][fleet][determinism]") {
  const Scale s = Scale::make(1, 0.001);
  const std::string src = loaded_source("det.db", s, 33);
  const std::vector<MethodSpec> methods = methods_of("pdl,opu,ipl");
  const uint64_t chip = chip_for(src, methods);
  const FleetRun a = run_fleet(src, s, 33, "delete", methods, chip, 0, 40, 120);
  const FleetRun b = run_fleet(src, s, 33, "wal", methods, chip, 0, 40, 120);
  const FleetRun c = run_fleet(src, s, 34, "delete", methods, chip, 0, 40, 120);
  for (const FleetRun* r : {&a, &b})
    for (const CheckReport& k : r->checks) CHECK(k.checksum == a.checks[0].checksum);
  // Another seed drives other transactions over the same loaded rows.
  CHECK(c.checks[0].checksum != a.checks[0].checksum);
  // And the flash figures repeat exactly: simulated time is a pure function of the operations.
  const FleetRun a2 = run_fleet(src, s, 33, "delete", methods, chip, 0, 40, 120);
  for (size_t i = 0; i < methods.size(); i++) {
    CHECK(a2.measured[i].flash.nand.sim_us == a.measured[i].flash.nand.sim_us);
    CHECK(a2.measured[i].flash.nand.programs == a.measured[i].flash.nand.programs);
  }
}
