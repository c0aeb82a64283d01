//! The build: the tables, the data in units of work (the fixed tables; then suppliers, parts with their
//! PARTSUPP rows, customers, and orders with their lines, each in chunks of [`UNIT_KEYS`] keys), loaded on
//! several connections at once where the engine allows ([`crate::Dialect::parallel_load`]); then keys,
//! indexes and statistics. Every unit draws from its own stream of the seed, so the database is the same
//! whatever the number of loaders. Timed from the first CREATE to the last statistic.

use super::gen::{self, Remark, Scale, TextPool};
use super::schema::{self, TABLES};
use crate::engine::{Conn, Engine};
use crate::{DbError, Error, Value};
use iolab_plan::rng::Rng;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// Keys per unit of work.
pub const UNIT_KEYS: i64 = 10_000;
/// Rows per bulk load call.
pub const CHUNK_ROWS: usize = 10_000;
/// Loaders at most.
pub const MAX_LOADERS: usize = 8;
/// Salt of the load's random streams.
const LOAD_SALT: u64 = 0x7c90_0000_0000_0000;

/// Rows loaded, per table (in [`TABLES`]' order).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RowCounts(pub [u64; 8]);

impl RowCounts {
    fn add(&mut self, other: &RowCounts) {
        for (a, b) in self.0.iter_mut().zip(other.0) {
            *a += b;
        }
    }
}

/// What the build did.
#[derive(Debug)]
pub struct Built {
    /// Seconds it took.
    pub seconds: f64,
    /// Connections that loaded at once.
    pub loaders: u32,
    /// Rows per table.
    pub rows: RowCounts,
}

/// One unit of the load.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Unit {
    /// REGION and NATION.
    Fixed,
    /// Suppliers of chunk n.
    Suppliers(i64),
    /// Parts (and their PARTSUPP rows) of chunk n.
    Parts(i64),
    /// Customers of chunk n.
    Customers(i64),
    /// Orders (and their lines) of chunk n.
    Orders(i64),
}

impl Unit {
    /// The unit's own random stream.
    fn rng(self, seed: u64) -> Rng {
        let (table, chunk) = match self {
            Unit::Fixed => (0u64, 0),
            Unit::Suppliers(n) => (1, n),
            Unit::Parts(n) => (2, n),
            Unit::Customers(n) => (3, n),
            Unit::Orders(n) => (4, n),
        };
        Rng::for_worker(seed ^ LOAD_SALT ^ (table << 40), chunk as u32)
    }
}

/// The units for `scale`, the biggest first (so loaders finish together).
fn units(scale: &Scale) -> Vec<Unit> {
    let chunks = |n: i64| 0..(n + UNIT_KEYS - 1) / UNIT_KEYS;
    let mut out: Vec<Unit> = chunks(scale.orders).map(Unit::Orders).collect();
    out.extend(chunks(scale.parts).map(Unit::Parts));
    out.extend(chunks(scale.customers).map(Unit::Customers));
    out.extend(chunks(scale.suppliers).map(Unit::Suppliers));
    out.push(Unit::Fixed);
    out
}

/// The suppliers whose comments hold a complaint or a recommendation: SF × 5 of each, drawn once.
fn remarks(scale: &Scale, seed: u64) -> HashMap<i64, Remark> {
    let mut rng = Rng::for_worker(seed ^ LOAD_SALT ^ (9 << 40), 0);
    let each = ((scale.sf * 5.0).round() as i64).min(scale.suppliers / 2);
    let mut out = HashMap::new();
    for remark in [Remark::Complaints, Remark::Recommends] {
        let mut placed = 0;
        while placed < each {
            let key = gen::uniform(&mut rng, 1, scale.suppliers);
            if let std::collections::hash_map::Entry::Vacant(e) = out.entry(key) {
                e.insert(remark);
                placed += 1;
            }
        }
    }
    out
}

/// Collects rows per table and hands them to the engine in chunks.
struct Writer<'a> {
    conn: &'a mut dyn Conn,
    stop: &'a AtomicBool,
    pending: Vec<Vec<Vec<Value>>>,
    counts: RowCounts,
}

impl<'a> Writer<'a> {
    fn push(&mut self, table: usize, row: Vec<Value>) -> Result<(), Error> {
        self.pending[table].push(row);
        if self.pending[table].len() >= CHUNK_ROWS {
            self.flush(table)?;
        }
        Ok(())
    }

    fn flush(&mut self, i: usize) -> Result<(), Error> {
        if self.stop.load(Ordering::Relaxed) {
            return Err(Error::Interrupted);
        }
        let rows = std::mem::take(&mut self.pending[i]);
        if rows.is_empty() {
            return Ok(());
        }
        let t = &TABLES[i];
        self.conn.load(t.name, &t.column_names(), &rows).map_err(|e| {
            Error::Db(DbError { retryable: false, message: format!("loading {}: {}", t.name, e.message) })
        })?;
        self.counts.0[i] += rows.len() as u64;
        Ok(())
    }

    fn finish(mut self) -> Result<RowCounts, Error> {
        for i in 0..TABLES.len() {
            self.flush(i)?;
        }
        Ok(self.counts)
    }
}

/// The shared inputs of every unit.
struct Inputs<'a> {
    scale: &'a Scale,
    seed: u64,
    pool: &'a TextPool,
    remarks: &'a HashMap<i64, Remark>,
}

/// Loads one unit.
fn load_unit(conn: &mut dyn Conn, unit: Unit, at: &Inputs, stop: &AtomicBool) -> Result<RowCounts, Error> {
    let mut rng = unit.rng(at.seed);
    let mut w = Writer { conn, stop, pending: vec![Vec::new(); TABLES.len()], counts: RowCounts::default() };
    let range = |n: i64, total: i64| (n * UNIT_KEYS + 1)..=((n + 1) * UNIT_KEYS).min(total);
    match unit {
        Unit::Fixed => {
            for row in gen::regions(&mut rng, at.pool) {
                w.push(schema::REGION, row)?;
            }
            for row in gen::nations(&mut rng, at.pool) {
                w.push(schema::NATION, row)?;
            }
        }
        Unit::Suppliers(n) => {
            for key in range(n, at.scale.suppliers) {
                let remark = at.remarks.get(&key).copied().unwrap_or(Remark::None);
                w.push(schema::SUPPLIER, gen::supplier(&mut rng, at.pool, key, remark))?;
            }
        }
        Unit::Parts(n) => {
            for key in range(n, at.scale.parts) {
                w.push(schema::PART, gen::part(&mut rng, at.pool, key))?;
                for row in gen::partsupp(&mut rng, at.pool, key, at.scale.suppliers) {
                    w.push(schema::PARTSUPP, row)?;
                }
            }
        }
        Unit::Customers(n) => {
            for key in range(n, at.scale.customers) {
                w.push(schema::CUSTOMER, gen::customer(&mut rng, at.pool, key))?;
            }
        }
        Unit::Orders(n) => {
            // Order numbers are 0-based; keys come from them.
            for i in range(n, at.scale.orders) {
                let (order, lines) = gen::order(&mut rng, at.pool, i - 1, at.scale);
                w.push(schema::ORDERS, order)?;
                for line in lines {
                    w.push(schema::LINEITEM, line)?;
                }
            }
        }
    }
    w.finish()
}

/// Builds the database at scale `sf` from `seed`.
pub fn build(engine: &dyn Engine, sf: f64, seed: u64, stop: &AtomicBool) -> Result<Built, Error> {
    let started = Instant::now();
    let dialect = engine.dialect();
    let scale = Scale::new(sf);
    let mut conn = engine.connect()?;
    conn.batch(&schema::create_tables(&dialect))?;
    conn.loading(true)?;
    let pool = TextPool::new(seed);
    let remarks = remarks(&scale, seed);
    let inputs = Inputs { scale: &scale, seed, pool: &pool, remarks: &remarks };
    let units = units(&scale);
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let loaders = if dialect.parallel_load { units.len().min(cpus).clamp(1, MAX_LOADERS) } else { 1 };
    let mut rows = RowCounts::default();
    if loaders == 1 {
        for u in &units {
            rows.add(&load_unit(conn.as_mut(), *u, &inputs, stop)?);
        }
    } else {
        let next = AtomicUsize::new(0);
        let total = Mutex::new(RowCounts::default());
        let failed = AtomicBool::new(false);
        let results: Vec<Result<(), Error>> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..loaders)
                .map(|_| {
                    scope.spawn(|| -> Result<(), Error> {
                        let mut c = engine.connect()?;
                        c.loading(true)?;
                        loop {
                            let i = next.fetch_add(1, Ordering::Relaxed);
                            if i >= units.len() || failed.load(Ordering::Relaxed) {
                                return Ok(());
                            }
                            match load_unit(c.as_mut(), units[i], &inputs, stop) {
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
    Ok(Built { seconds: started.elapsed().as_secs_f64(), loaders: loaders as u32, rows })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_cover_every_key_once() {
        let scale = Scale::new(0.05);
        let u = units(&scale);
        let orders = u.iter().filter(|u| matches!(u, Unit::Orders(_))).count() as i64;
        assert_eq!(orders, (scale.orders + UNIT_KEYS - 1) / UNIT_KEYS);
        assert_eq!(u.last(), Some(&Unit::Fixed));
        let r = remarks(&Scale::new(1.0), 3);
        assert_eq!(r.values().filter(|r| **r == Remark::Complaints).count(), 5);
        assert_eq!(r.len(), 10);
        assert!(remarks(&Scale::new(0.01), 3).is_empty(), "SF × 5 rounds to none at SF 0.01");
    }
}
