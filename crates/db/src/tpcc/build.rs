//! The build: the tables, the items, then the warehouses (in parallel where the engine allows), then keys,
//! indexes and statistics, through the shared bulk load ([`crate::bulk`]).

use super::load;
use super::schema::{INDEXES, TABLES};
use crate::bulk::{self, Load, OnRows};
use crate::database::Database;
use crate::WorkloadError;
use std::sync::atomic::AtomicBool;

/// What the build did.
pub type Built = bulk::Built<9>;

/// About how many rows a database of `warehouses` and `items` holds: the items, and per warehouse itself,
/// its stock, 10 districts, 30,000 customers, history rows and orders, 9,000 new orders and about 300,000
/// order lines (5 to 15 per order, 10 on average). What the build's progress counts towards.
pub fn expected_rows(warehouses: u64, items: u64) -> u64 {
    let per_warehouse = 1
        + items
        + load::DISTRICTS
        + 3 * load::DISTRICTS * load::CUSTOMERS
        + load::DISTRICTS * (load::CUSTOMERS - load::FIRST_NEW_ORDER + 1)
        + 10 * load::DISTRICTS * load::CUSTOMERS;
    items + warehouses * per_warehouse
}

/// A unit of the load.
enum Unit {
    /// The ITEM table.
    Items,
    /// Warehouse n and what it holds.
    Warehouse(u64),
}

/// Builds a database of `warehouses` warehouses and `items` items from `seed`; `on_rows` is told of the
/// rows loaded as they are (from the loading threads).
pub fn build(
    engine: &dyn Database,
    warehouses: u64,
    items: u64,
    seed: u64,
    stop: &AtomicBool,
    on_rows: OnRows<'_>,
) -> Result<Built, WorkloadError> {
    let now =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64);
    let generate = |out: &mut bulk::Writer<'_, 9>, unit: &Unit| match *unit {
        Unit::Items => load::items(out, items, seed),
        Unit::Warehouse(w) => load::warehouse(out, w, items, seed, now),
    };
    let plan = Load {
        tables: &TABLES,
        indexes: &INDEXES,
        first: vec![Unit::Items],
        units: (1..=warehouses).map(Unit::Warehouse).collect(),
        generate: &generate,
    };
    bulk::build(engine, &plan, stop, on_rows)
}
