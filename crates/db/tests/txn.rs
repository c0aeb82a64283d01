//! The five transactions, pinned: one terminal runs two decks of the mix (200 transactions) from a fixed
//! seed on a freshly built two-warehouse database (1000 items, so remote lines and remote payments run
//! too), then one delivery after two of its districts' new orders are gone (so the skip runs); what each
//! transaction did (committed, rolled back, given up, districts skipped) and what the database then holds
//! (a checksum of every table, read in key order) are the figures taken when this test was written. A
//! change to a transaction's statements, its draws or what it writes fails here; a change that only moves
//! code or reads its results differently does not.

use iolab_db::bulk::Table;
use iolab_db::database::postgres::Postgres;
use iolab_db::database::server::ServerOptions;
use iolab_db::database::sqlite::Sqlite;
use iolab_db::database::TxEnd;
use iolab_db::tpcc::rand::{Deck, TxType};
use iolab_db::tpcc::txn::{Ran, Terminal};
use iolab_db::{tpcc, Conn, Database};
use std::os::unix::fs::PermissionsExt;
use std::sync::atomic::AtomicBool;

/// The seed of the build and of the terminal.
const SEED: u64 = 1;
/// Warehouses built.
const WAREHOUSES: u64 = 2;
/// Items built.
const ITEMS: u64 = 1000;
/// Transactions of the mix (two decks).
const MIX: usize = 200;

/// TPC-C's columns stamped with the clock (at the load or by a transaction): only whether each is NULL
/// goes into the checksum.
const CLOCK_COLUMNS: [&str; 4] = ["c_since", "h_date", "o_entry_d", "ol_delivery_d"];

/// A column as the checksum reads it: a clock column as 0 (NULL) or 1.
fn read_as(column: &str) -> String {
    if CLOCK_COLUMNS.contains(&column) {
        format!("CASE WHEN {column} IS NULL THEN 0 ELSE 1 END")
    } else {
        column.to_string()
    }
}

/// FNV-1a of every row of `table`, in key order (every column's order for a table without a key).
fn checksum(conn: &mut dyn Conn, table: &Table) -> u64 {
    let columns: Vec<String> = table.column_names().into_iter().map(read_as).collect();
    let order = if table.key.is_empty() { columns.join(", ") } else { table.key.join(", ") };
    let rows = conn
        .query_text(&format!("SELECT {} FROM {} ORDER BY {order}", columns.join(", "), table.name))
        .unwrap();
    let mut hash = 0xcbf2_9ce4_8422_2325u64;
    for cell in rows.iter().flatten() {
        for b in cell.as_deref().unwrap_or("\u{0}NULL").bytes().chain([0x1f]) {
            hash = (hash ^ b as u64).wrapping_mul(0x100_0000_01b3);
        }
    }
    hash
}

/// The checksum of every TPC-C table on `engine`.
fn checksums(engine: &dyn Database) -> Vec<u64> {
    let mut conn = engine.connect().unwrap();
    tpcc::schema::TABLES.iter().map(|t| checksum(conn.as_mut(), t)).collect()
}

/// What the terminal's transactions did: per type (in [`TxType::ALL`]'s order) its name, committed, rolled
/// back and given up; then the districts deliveries skipped and the retries.
#[derive(Debug, PartialEq, Eq)]
struct Outcomes {
    per_type: Vec<(&'static str, u64, u64, u64)>,
    skipped: u64,
    retries: u64,
}

/// Runs one transaction of `kind`.
fn run_one(term: &mut Terminal, kind: TxType, conn: &mut dyn Conn, retries: &mut u64) -> Ran {
    match kind {
        TxType::NewOrder => term.new_order(conn, retries),
        TxType::Payment => term.payment(conn, retries),
        TxType::OrderStatus => term.order_status(conn, retries),
        TxType::Delivery => term.delivery(conn, retries),
        TxType::StockLevel => term.stock_level(conn, retries),
    }
    .unwrap_or_else(|e| panic!("{}: {e}", kind.name()))
}

/// Counts `ran` into `out`.
fn count(out: &mut Outcomes, kind: TxType, ran: Ran) {
    let t = &mut out.per_type[kind.index()];
    match ran.done {
        TxEnd::Committed => t.1 += 1,
        TxEnd::RolledBack => t.2 += 1,
        TxEnd::GaveUp => t.3 += 1,
    }
    out.skipped += ran.skipped;
}

/// Builds the database on `engine`, runs the mix and the skipping delivery, checks the consistency
/// conditions after the mix; returns the outcomes and the tables' checksums.
fn run(engine: &dyn Database) -> (Outcomes, Vec<u64>) {
    tpcc::build::build(engine, WAREHOUSES, ITEMS, SEED, &AtomicBool::new(false), &|_| ()).unwrap();
    let mut conn = engine.connect().unwrap();
    let mut term = Terminal::new(0, WAREHOUSES, ITEMS, SEED, &engine.dialect());
    let mut deck = Deck::new();
    let mut out = Outcomes {
        per_type: TxType::ALL.iter().map(|t| (t.name(), 0, 0, 0)).collect(),
        skipped: 0,
        retries: 0,
    };
    for _ in 0..MIX {
        let kind = deck.draw(term.rng());
        let ran = run_one(&mut term, kind, conn.as_mut(), &mut out.retries);
        count(&mut out, kind, ran);
    }
    let checks = tpcc::check::check_all(conn.as_mut()).unwrap();
    assert!(checks.iter().all(|c| c.passed), "{checks:?}");
    conn.batch("DELETE FROM new_order WHERE no_w_id = 1 AND no_d_id IN (3, 8)").unwrap();
    let ran = run_one(&mut term, TxType::Delivery, conn.as_mut(), &mut out.retries);
    count(&mut out, TxType::Delivery, ran);
    drop(conn);
    (out, checksums(engine))
}

/// The outcomes of the figures taken.
fn expected_outcomes() -> Outcomes {
    Outcomes {
        per_type: vec![
            ("new_order", 88, 2, 0),
            ("payment", 86, 0, 0),
            ("order_status", 8, 0, 0),
            ("delivery", 9, 0, 0),
            ("stock_level", 8, 0, 0),
        ],
        skipped: 2,
        retries: 0,
    }
}

/// The tables' checksums of the figures taken, in [`tpcc::schema::TABLES`]' order.
const EXPECTED_CHECKSUMS: [u64; 9] = [
    0x2872_1d38_51f3_7350,
    0xa4a1_c66e_e69e_7312,
    0xf6a8_367f_b609_1fd2,
    0x2f81_fceb_a284_90d2,
    0x4855_7cdc_09bc_fedd,
    0x4aa0_3ddc_16aa_2614,
    0x9825_f379_ac69_9406,
    0xc6a7_1121_5b06_d40d,
    0x36cd_dba7_7dc4_69fb,
];

#[test]
fn the_transactions_on_sqlite_do_what_they_did() {
    let t = tempfile::tempdir().unwrap();
    let (outcomes, sums) = run(&Sqlite::new(t.path()));
    assert_eq!(outcomes, expected_outcomes());
    assert_eq!(sums, EXPECTED_CHECKSUMS, "{sums:#018x?}");
}

/// The same on a private PostgreSQL server: the same outcomes, the same rows.
#[test]
fn the_transactions_on_postgres_do_what_they_do_on_sqlite() {
    if !nix::unistd::geteuid().is_root() || iolab_db::database::server::find_bindir().is_err() {
        return iolab_testkit::skip(format_args!("needs root and PostgreSQL's server programs"));
    }
    let p = tempfile::Builder::new().prefix("iolab-txn-").tempdir_in("/tmp").unwrap();
    std::fs::set_permissions(p.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let dir = p.path().join("db");
    std::fs::create_dir(&dir).unwrap();
    let options = ServerOptions { shared_buffers_bytes: 32 << 20, max_connections: 20 };
    let mut pg = Postgres::private(&dir, &options, false, &AtomicBool::new(false)).unwrap();
    let (outcomes, sums) = run(&pg);
    pg.close().unwrap();
    assert_eq!(outcomes, expected_outcomes());
    assert_eq!(sums, EXPECTED_CHECKSUMS, "{sums:#018x?}");
}
