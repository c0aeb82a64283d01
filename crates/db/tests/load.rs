//! The bulk load's data, pinned: a tpcc and a tpch database built on SQLite from a fixed seed have the
//! same rows per table and the same contents (a checksum of every table, read in key order) as when these
//! figures were taken, and the progress told adds up to the rows loaded. A change to a generator, a random
//! stream or the loader's order of draws fails here; a change that only moves code does not.

use iolab_db::bulk::Table;
use iolab_db::database::postgres::Postgres;
use iolab_db::database::server::ServerOptions;
use iolab_db::database::sqlite::Sqlite;
use iolab_db::{tpcc, tpch, Conn, Database};
use std::os::unix::fs::PermissionsExt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// TPC-C's columns stamped with the time of the load, left out of the checksum.
const CLOCK_COLUMNS: [&str; 4] = ["c_since", "h_date", "o_entry_d", "ol_delivery_d"];

/// FNV-1a of `table`'s `columns` (without the clock's), every row in the order of `order`.
fn checksum(conn: &mut dyn Conn, table: &str, columns: &[&str], order: &[&str]) -> u64 {
    let kept: Vec<&str> = columns.iter().copied().filter(|c| !CLOCK_COLUMNS.contains(c)).collect();
    let order = if order.is_empty() { kept.join(", ") } else { order.join(", ") };
    let rows = conn.query_text(&format!("SELECT {} FROM {table} ORDER BY {order}", kept.join(", "))).unwrap();
    let mut hash = 0xcbf2_9ce4_8422_2325u64;
    for cell in rows.iter().flatten() {
        for b in cell.as_deref().unwrap_or("\u{0}NULL").bytes().chain([0x1f]) {
            hash = (hash ^ b as u64).wrapping_mul(0x100_0000_01b3);
        }
    }
    hash
}

/// The checksum of each of `tables` on `engine`.
fn checksums(engine: &dyn Database, tables: &[Table]) -> Vec<u64> {
    let mut conn = engine.connect().unwrap();
    tables.iter().map(|t| checksum(conn.as_mut(), t.name, &t.column_names(), t.key)).collect()
}

#[test]
fn a_tpcc_build_loads_the_same_rows_as_before() {
    let t = tempfile::tempdir().unwrap();
    let engine = Sqlite::new(t.path());
    let (stop, told) = (AtomicBool::new(false), AtomicU64::new(0));
    let on_rows = |n| {
        told.fetch_add(n, Ordering::Relaxed);
    };
    let built = tpcc::build::build(&engine, 1, 1000, 7, &stop, &on_rows).unwrap();
    assert_eq!(built.loaders, 1, "SQLite has one writer");
    assert_eq!(built.rows.0, [1000, 1, 1000, 10, 30_000, 30_000, 30_000, 299_799, 9000]);
    assert_eq!(told.load(Ordering::Relaxed), built.rows.0.iter().sum::<u64>());
    assert_eq!(
        checksums(&engine, &tpcc::schema::TABLES),
        [
            0x8821_3fe9_3b25_c8a7,
            0x627b_8c1a_1561_8a96,
            0x278b_1fb5_af81_09fd,
            0x0bf1_df71_247a_6648,
            0x15c1_2171_4083_ac4c,
            0x98c0_4261_d801_6482,
            0xb458_81a4_ac4f_b66e,
            0xa62b_4680_6bd3_ad5a,
            0x2806_625b_3162_b283,
        ]
    );
}

#[test]
fn a_tpch_build_loads_the_same_rows_as_before() {
    let t = tempfile::tempdir().unwrap();
    let engine = Sqlite::new(t.path());
    let told = std::sync::atomic::AtomicU64::new(0);
    let on_rows = |n| {
        told.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
    };
    let built = tpch::load::build(&engine, 0.01, 11, &AtomicBool::new(false), &on_rows).unwrap();
    assert_eq!(built.loaders, 1, "SQLite has one writer");
    assert_eq!(built.rows.0, [5, 25, 100, 2000, 8000, 1500, 15_000, 59_984]);
    // The progress told is every row loaded, and the expected count is close to it.
    let total: u64 = built.rows.0.iter().sum();
    assert_eq!(told.into_inner(), total);
    let expected = tpch::load::expected_rows(&tpch::gen::Scale::new(0.01));
    assert!(expected.abs_diff(total) * 100 < total, "expected {expected}, loaded {total}");
    assert_eq!(
        checksums(&engine, &tpch::schema::TABLES),
        [
            0x0a02_6dd6_c1c0_0d7f,
            0xdd39_7f61_36f0_ae13,
            0x71fe_ccd2_bdd5_b1d2,
            0xa319_0f34_733b_b51d,
            0x4bd7_9ff4_33e7_f6c4,
            0xb8e4_c811_7528_b1de,
            0xefc7_55d9_3fe0_d874,
            0x11c9_30fa_e246_5d28,
        ]
    );
}

/// Two warehouses on SQLite (one loader) and on a private PostgreSQL server (a loader per warehouse where
/// there are CPUs for them): the same rows, the same contents.
#[test]
fn a_parallel_tpcc_build_on_postgres_loads_what_sqlite_loads() {
    if !nix::unistd::geteuid().is_root() || iolab_db::database::server::find_bindir().is_err() {
        return iolab_testkit::skip(format_args!("needs root and PostgreSQL's server programs"));
    }
    let stop = AtomicBool::new(false);
    let s = tempfile::tempdir().unwrap();
    let lite = Sqlite::new(s.path());
    let serial = tpcc::build::build(&lite, 2, 1000, 5, &stop, &|_| ()).unwrap();
    let p = tempfile::Builder::new().prefix("iolab-load-").tempdir_in("/tmp").unwrap();
    std::fs::set_permissions(p.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let dir = p.path().join("db");
    std::fs::create_dir(&dir).unwrap();
    let options = ServerOptions { shared_buffers_bytes: 32 << 20, max_connections: 20 };
    let mut pg = Postgres::private(&dir, &options, false, &stop).unwrap();
    let parallel = tpcc::build::build(&pg, 2, 1000, 5, &stop, &|_| ()).unwrap();
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get()) as u32;
    assert_eq!(parallel.loaders, cpus.min(2));
    assert_eq!(parallel.rows, serial.rows);
    assert_eq!(checksums(&pg, &tpcc::schema::TABLES), checksums(&lite, &tpcc::schema::TABLES));
    pg.close().unwrap();
}
