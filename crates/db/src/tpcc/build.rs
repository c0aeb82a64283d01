//! The build: the tables, the load (in parallel by warehouse where the engine allows), then keys, indexes
//! and statistics, timed from the first CREATE to the last index.

use super::load::{self, RowCounts};
use super::schema;
use crate::engine::Engine;
use crate::Error;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// Loaders at most (connections loading warehouses at once).
pub const MAX_LOADERS: u32 = 8;

/// What the build did.
#[derive(Debug)]
pub struct Built {
    /// Seconds it took.
    pub seconds: f64,
    /// Connections that loaded warehouses at once.
    pub loaders: u32,
    /// Rows per table.
    pub rows: RowCounts,
}

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

/// Builds a database of `warehouses` warehouses and `items` items from `seed`; `on_rows` is told of the
/// rows loaded as they are (from the loading threads).
pub fn build(
    engine: &dyn Engine,
    warehouses: u64,
    items: u64,
    seed: u64,
    stop: &AtomicBool,
    on_rows: load::OnRows<'_>,
) -> Result<Built, Error> {
    let started = Instant::now();
    let dialect = engine.dialect();
    let now =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64);
    let mut conn = engine.connect()?;
    conn.batch(&schema::create_tables(&dialect))?;
    conn.loading(true)?;
    let mut rows = load::load_items(conn.as_mut(), items, seed, stop, on_rows)?;
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
    let loaders = if dialect.parallel_load { (warehouses as u32).min(cpus).clamp(1, MAX_LOADERS) } else { 1 };
    if loaders == 1 {
        for w in 1..=warehouses {
            rows.add(&load::load_warehouse(conn.as_mut(), w, items, seed, now, stop, on_rows)?);
        }
    } else {
        let next = AtomicU64::new(1);
        let total = Mutex::new(RowCounts::default());
        let failed = AtomicBool::new(false);
        let results: Vec<Result<(), Error>> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..loaders)
                .map(|_| {
                    scope.spawn(|| -> Result<(), Error> {
                        let mut c = engine.connect()?;
                        c.loading(true)?;
                        loop {
                            let w = next.fetch_add(1, Ordering::Relaxed);
                            if w > warehouses || failed.load(Ordering::Relaxed) {
                                return Ok(());
                            }
                            let r = load::load_warehouse(c.as_mut(), w, items, seed, now, stop, on_rows);
                            match r {
                                Ok(r) => total.lock().unwrap_or_else(|p| p.into_inner()).add(&r),
                                Err(e) => {
                                    failed.store(true, Ordering::Relaxed);
                                    return Err(e);
                                }
                            }
                        }
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or(Err(Error::Setup("a loader panicked".into()))))
                .collect()
        });
        for r in results {
            r?;
        }
        rows.add(&total.into_inner().unwrap_or_else(|p| p.into_inner()));
    }
    for sql in schema::after_load(&dialect) {
        if stop.load(Ordering::Relaxed) {
            return Err(Error::Interrupted);
        }
        conn.batch(&sql)?;
    }
    conn.loading(false)?;
    Ok(Built { seconds: started.elapsed().as_secs_f64(), loaders, rows })
}
