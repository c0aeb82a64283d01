//! How much a workload's database takes on disk, for the free-space check before anything is made
//! (`harness::space`): linear models fitted to real builds, measured (debug build, ext4, 4 KiB pages,
//! PostgreSQL 15) as the directory's size after a build and a short run:
//!
//! ```text
//! iolab db tpcc  [--database postgres] --warehouses W --items I --users 1 --ramp 0s --duration 1s --dir D --keep
//! iolab db ycsb  [--database postgres] --records R --ramp 0s --duration 1s --dir D --keep
//! iolab db tpch  [--database postgres] --scale SF --runs 1 --dir D --keep
//! du -sb D
//! ```
//!
//! | build | SQLite | PostgreSQL (WAL included) |
//! |---|---|---|
//! | tpcc W=1, 10,000 items | 42.2 MB | 184.6 MB |
//! | tpcc W=2, 10,000 items | 84.4 MB | 310.0 MB |
//! | tpcc W=1, 100,000 items | 80.3 MB | 264.3 MB |
//! | ycsb 20,000 records | 93.8 MB | 81.7 MB |
//! | ycsb 40,000 records | 187.8 MB | 122.8 MB |
//! | tpch SF 0.01 | 13.2 MB | 74.5 MB |
//! | tpch SF 0.03 | 39.9 MB | 125.3 MB |
//! | tpch SF 0.1 (docs/DB.md) | 133 MB | 361 MB |
//!
//! The models round up; the check adds a margin (`harness::space::margin`) for what a run adds.

use crate::database::DatabaseKind;

const MB: f64 = 1e6;

/// An engine's sizes: fixed bytes (PostgreSQL's catalog and WAL segments), then per unit.
struct Model {
    fixed: f64,
    per_unit: f64,
}

impl Model {
    fn bytes(&self, units: f64) -> u64 {
        (self.fixed + self.per_unit * units).ceil() as u64
    }
}

/// tpcc: a warehouse without its stock (districts, customers, history, orders, order lines), bytes.
const TPCC_WAREHOUSE: [f64; 2] = [38.0 * MB, 117.0 * MB];
/// tpcc: a warehouse's stock row for one item (and the item's own row), bytes.
const TPCC_STOCK_ROW: [f64; 2] = [425.0, 890.0];
/// Fixed bytes of each engine's database (SQLite: none worth counting).
const FIXED: [f64; 2] = [0.0, 60.0 * MB];
/// ycsb: one record (ten 100-byte fields; SQLite keeps most of each in an overflow page of its own).
const YCSB_RECORD: [f64; 2] = [4_700.0, 2_060.0];
/// tpch: one scale factor (6 million lines), bytes.
const TPCH_SCALE: [f64; 2] = [1_340.0 * MB, 3_000.0 * MB];

fn engine(kind: DatabaseKind) -> usize {
    match kind {
        DatabaseKind::Sqlite => 0,
        DatabaseKind::Postgres => 1,
    }
}

/// A tpcc database of `warehouses` with `items` items.
pub(crate) fn tpcc_bytes(kind: DatabaseKind, warehouses: u64, items: u64) -> u64 {
    let e = engine(kind);
    let per_warehouse = TPCC_WAREHOUSE[e] + TPCC_STOCK_ROW[e] * items as f64;
    Model { fixed: FIXED[e], per_unit: per_warehouse }.bytes(warehouses as f64)
}

/// A tpch database of scale factor `scale`.
pub(crate) fn tpch_bytes(kind: DatabaseKind, scale: f64) -> u64 {
    let e = engine(kind);
    Model { fixed: FIXED[e], per_unit: TPCH_SCALE[e] }.bytes(scale)
}

/// A ycsb table of `records`.
pub(crate) fn ycsb_bytes(kind: DatabaseKind, records: u64) -> u64 {
    let e = engine(kind);
    Model { fixed: FIXED[e], per_unit: YCSB_RECORD[e] }.bytes(records as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The models cover every measured build in the module doc.
    #[test]
    fn the_models_cover_the_measured_builds() {
        use DatabaseKind::{Postgres as P, Sqlite as S};
        for (got, measured) in [
            (tpcc_bytes(S, 1, 10_000), 42.2),
            (tpcc_bytes(S, 2, 10_000), 84.4),
            (tpcc_bytes(S, 1, 100_000), 80.3),
            (tpcc_bytes(P, 1, 10_000), 184.6),
            (tpcc_bytes(P, 2, 10_000), 310.0),
            (tpcc_bytes(P, 1, 100_000), 264.3),
            (ycsb_bytes(S, 20_000), 93.8),
            (ycsb_bytes(S, 40_000), 187.8),
            (ycsb_bytes(P, 20_000), 81.7),
            (ycsb_bytes(P, 40_000), 122.8),
            (tpch_bytes(S, 0.01), 13.2),
            (tpch_bytes(S, 0.03), 39.9),
            (tpch_bytes(S, 0.1), 133.0),
            (tpch_bytes(P, 0.01), 74.5),
            (tpch_bytes(P, 0.03), 125.3),
            (tpch_bytes(P, 0.1), 361.0),
        ] {
            let got = got as f64 / MB;
            assert!(got >= measured * 0.95 && got <= measured * 1.25, "{got} MB against {measured} MB");
        }
    }
}
