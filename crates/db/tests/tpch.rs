//! The TPC-H-derived query set on real engines, at a tiny scale: on SQLite every query runs and the
//! answers whose size the data's structure fixes have it (Q1's four return-flag and line-status groups,
//! Q4's five priorities, Q12's two ship modes, the one-row aggregates); with root and PostgreSQL's server
//! programs, every answer on PostgreSQL equals SQLite's on the same generated data (row for row, numbers
//! to within rounding), which checks the SQL both engines were given and the loader of each.

use iolab_db::database::postgres::Postgres;
use iolab_db::database::server::ServerOptions;
use iolab_db::database::sqlite::Sqlite;
use iolab_db::harness::{DatabaseKind, Setup};
use iolab_db::tpch::{self, queries};
use iolab_db::workload::Unobserved;
use iolab_db::{Database, Harness};
use std::os::unix::fs::PermissionsExt;
use std::sync::atomic::AtomicBool;

/// The smallest scale: 15,000 orders, 60,000 lines; every query finds rows.
const SCALE: f64 = 0.01;
const SEED: u64 = 11;

type Answer = Vec<Vec<Option<String>>>;

/// Builds on `engine` and runs every query; the answers by query number.
fn answers(engine: &dyn Database) -> Vec<(u32, Answer)> {
    let stop = AtomicBool::new(false);
    tpch::load::build(engine, SCALE, SEED, &stop, &|_| ()).unwrap();
    let mut conn = engine.connect().unwrap();
    (1..=22)
        .map(|q| {
            let a = conn
                .query_text(&queries::text(q, engine.name(), SCALE))
                .unwrap_or_else(|e| panic!("Q{q}: {e}"));
            (q, a)
        })
        .collect()
}

#[test]
fn tpch_on_sqlite_answers_every_query_with_the_sizes_the_data_fixes() {
    let t = tempfile::tempdir().unwrap();
    let a = answers(&Sqlite::new(t.path()));
    let rows = |q: u32| a[(q - 1) as usize].1.len();
    assert_eq!(rows(1), 4, "Q1: A/F, N/F, N/O, R/F");
    let flags: Vec<String> =
        a[0].1.iter().map(|r| format!("{}{}", r[0].as_deref().unwrap(), r[1].as_deref().unwrap())).collect();
    assert_eq!(flags, ["AF", "NF", "NO", "RF"]);
    assert_eq!(rows(4), 5, "Q4: one row per priority");
    assert_eq!(rows(12), 2, "Q12: MAIL and SHIP");
    for q in [6, 14, 17, 19] {
        assert_eq!(rows(q), 1, "Q{q} is one aggregate");
    }
    assert!(rows(5) <= 5, "Q5: the nations of ASIA");
    assert!(rows(22) <= 7, "Q22: seven country codes");
    assert!(rows(13) > 1, "Q13: customers by their number of orders");
    // Q13 counts every customer once: its groups add up to the customers.
    let customers: u64 = a[12].1.iter().map(|r| r[1].as_deref().unwrap().parse::<u64>().unwrap()).sum();
    assert_eq!(customers, (150_000.0 * SCALE) as u64);
}

/// `a` and `b` are the same cell: equal text (blank-padded CHAR trimmed), or numbers within rounding.
fn same(a: &Option<String>, b: &Option<String>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => {
            let (a, b) = (a.trim(), b.trim());
            if a == b {
                return true;
            }
            match (a.parse::<f64>(), b.parse::<f64>()) {
                (Ok(x), Ok(y)) => (x - y).abs() <= 1e-6 * x.abs().max(y.abs()).max(1.0),
                _ => false,
            }
        }
        _ => false,
    }
}

/// Runs `answers` on SQLite and on a private PostgreSQL server and asserts the answers are the same, row
/// for row; says SKIP (as test `name`) without root or PostgreSQL's server programs.
fn both_engines_agree(name: &str, answers: fn(&dyn Database) -> Vec<(u32, Answer)>) {
    let root = nix::unistd::geteuid().is_root();
    let found = iolab_db::database::server::find_bindir().is_ok();
    if !root || !found {
        return eprintln!(
            "SKIP {name}: {}",
            if !root {
                "not root (the server runs as the 'postgres' account)"
            } else {
                "no PostgreSQL server programs"
            }
        );
    }
    let s = tempfile::tempdir().unwrap();
    let lite = answers(&Sqlite::new(s.path()));
    let p = tempfile::Builder::new().prefix("iolab-tpch-").tempdir_in("/tmp").unwrap();
    std::fs::set_permissions(p.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let dir = p.path().join("db");
    std::fs::create_dir(&dir).unwrap();
    let options = ServerOptions { shared_buffers_bytes: 32 << 20, max_connections: 20 };
    let mut pg = Postgres::private(&dir, &options, false, &AtomicBool::new(false)).unwrap();
    let post = answers(&pg);
    pg.close().unwrap();
    assert_eq!(lite.len(), post.len());
    for ((q, l), (_, p)) in lite.iter().zip(&post) {
        assert_eq!(l.len(), p.len(), "Q{q}: rows on SQLite and on PostgreSQL");
        for (i, (lr, pr)) in l.iter().zip(p).enumerate() {
            assert!(
                lr.iter().zip(pr).all(|(a, b)| same(a, b)),
                "Q{q} row {i}: SQLite {lr:?}, PostgreSQL {pr:?}"
            );
        }
    }
}

#[test]
fn tpch_on_postgres_gives_sqlites_answers() {
    both_engines_agree("tpch_on_postgres_gives_sqlites_answers", answers);
}

/// Runs tpch through the harness on SQLite in `dir`, which the harness makes and removes after.
fn run(dir: &std::path::Path, o: tpch::Options, tests: tpch::Tests) -> iolab_report::db_tpch::TpchResult {
    let mut setup = Setup::new(DatabaseKind::Sqlite);
    setup.dir = Some(dir.display().to_string());
    let workload = tpch::Tpch::new(o, tests);
    let harness = Harness::claim(setup, &workload, &mut iolab_device::WriteGate::new()).unwrap();
    harness.run(workload, &Unobserved, &AtomicBool::new(false)).unwrap().document
}

#[test]
fn the_tpch_document_has_every_query_in_the_power_order() {
    let t = tempfile::tempdir().unwrap();
    let o =
        tpch::Options { scale: 0.01, runs: 2, queries: queries::POWER_ORDER.to_vec(), cold: true, seed: 3 };
    let dir = t.path().join("db");
    let doc = run(&dir, o, tpch::Tests::default());
    assert!(!dir.exists(), "the harness removed the database's directory");
    let order: Vec<u32> = doc.queries.iter().map(|q| q.number).collect();
    assert_eq!(order, queries::POWER_ORDER);
    assert!(doc.queries.iter().all(|q| q.runs_s.len() == 2));
    assert_eq!(doc.power.queries, 22);
    assert!(doc.power.geomean_s > 0.0 && doc.power.geomean_s <= doc.power.total_s);
    assert_eq!(doc.config.start, "cold");
    assert!(doc.config.evicted_bytes.unwrap() > 0);
    let v = serde_json::to_value(&doc).unwrap();
    iolab_report::schema_check::check_document(&v, iolab_report::schema_check::DB_TPCH_SCHEMA);
}

/// Orders, lines, distinct order keys, distinct (order, line number) pairs and lines without an order.
fn census(conn: &mut dyn iolab_db::Conn) -> [u64; 5] {
    let one = |conn: &mut dyn iolab_db::Conn, sql: &str| -> u64 {
        conn.query_text(sql).unwrap()[0][0].as_deref().unwrap().parse().unwrap()
    };
    [
        one(conn, "select count(*) from orders"),
        one(conn, "select count(*) from lineitem"),
        one(conn, "select count(distinct o_orderkey) from orders"),
        one(conn, "select count(*) from (select distinct l_orderkey, l_linenumber from lineitem) as d"),
        one(conn, "select count(*) from lineitem where l_orderkey not in (select o_orderkey from orders)"),
    ]
}

/// Builds on `engine`, runs refresh pairs 1 and 2 (RF1 then RF2 each), checking after each that the
/// orders are as many as before, the lines changed by what RF1 inserted less what RF2 deleted, every key
/// is unique and no line lost its order; then the 22 queries' answers.
fn refreshed(engine: &dyn Database) -> Vec<(u32, Answer)> {
    let stop = AtomicBool::new(false);
    tpch::load::build(engine, SCALE, SEED, &stop, &|_| ()).unwrap();
    let mut conn = engine.connect().unwrap();
    let scale = tpch::gen::Scale::new(SCALE);
    let pool = tpch::gen::TextPool::new(SEED);
    let before = census(conn.as_mut());
    assert_eq!(before, [15_000, before[1], 15_000, before[1], 0]);
    let mut lines = before[1];
    for pair in [1, 2] {
        let rf1 = tpch::refresh::rf1(conn.as_mut(), &scale, SEED, &pool, pair).unwrap();
        let rf2 = tpch::refresh::rf2(conn.as_mut(), &scale, pair).unwrap();
        assert_eq!((rf1.orders, rf2.orders), (15, 15), "pair {pair}: SF × 1,500 orders each way");
        assert!(rf1.lineitems >= 15 && rf2.lineitems >= 15, "pair {pair}: each order has lines");
        lines = lines + rf1.lineitems - rf2.lineitems;
        assert_eq!(census(conn.as_mut()), [15_000, lines, 15_000, lines, 0], "after pair {pair}");
    }
    (1..=22).map(|q| (q, conn.query_text(&queries::text(q, engine.name(), SCALE)).unwrap())).collect()
}

#[test]
fn a_refresh_pair_on_sqlite_keeps_the_orders_and_the_keys_unique() {
    let t = tempfile::tempdir().unwrap();
    let a = refreshed(&Sqlite::new(t.path()));
    assert_eq!(a.len(), 22);
}

#[test]
fn after_refresh_pairs_postgres_still_gives_sqlites_answers() {
    both_engines_agree("after_refresh_pairs_postgres_still_gives_sqlites_answers", refreshed);
}

#[test]
fn the_tpch_document_with_refresh_and_two_streams_has_every_part() {
    let t = tempfile::tempdir().unwrap();
    let o =
        tpch::Options { scale: 0.01, runs: 1, queries: queries::POWER_ORDER.to_vec(), cold: false, seed: 3 };
    let tests = tpch::Tests { refresh: true, streams: 2 };
    let doc = run(&t.path().join("db"), o, tests);
    let pair = doc.refresh.as_ref().expect("the power test's refresh pair");
    assert_eq!((pair.rf1.orders, pair.rf2.orders, pair.rf1.pair), (15, 15, 1));
    let th = doc.throughput.as_ref().expect("the throughput test");
    assert_eq!(th.query_streams.len(), 2);
    for (s, stream) in th.query_streams.iter().enumerate() {
        let order: Vec<u32> = stream.queries.iter().map(|q| q.number).collect();
        assert_eq!(order, tpch::streams::STREAM_ORDER[s + 1], "stream {}", s + 1);
        assert!(stream.seconds <= th.elapsed_s);
    }
    let pairs: Vec<(String, u32)> = th.refresh.iter().map(|r| (r.function.clone(), r.pair)).collect();
    assert_eq!(pairs, [("RF1".into(), 2), ("RF2".into(), 2), ("RF1".into(), 3), ("RF2".into(), 3)]);
    let d = doc.derived.as_ref().expect("the derived figures");
    assert_eq!(d.power_basis, "22 queries and RF1, RF2");
    let q = d.qphh_at_size.unwrap();
    assert!((q * q - d.power_at_size * d.throughput_at_size.unwrap()).abs() < 1e-6 * q * q);
    let v = serde_json::to_value(&doc).unwrap();
    iolab_report::schema_check::check_document(&v, iolab_report::schema_check::DB_TPCH_SCHEMA);
}
