//! The build, through the shared bulk load ([`crate::bulk`]): the tables, the data in units of work (orders
//! with their lines, parts with their PARTSUPP rows, customers, suppliers, each in chunks of [`UNIT_KEYS`]
//! keys, and the fixed tables), loaded on several connections at once where the engine allows
//! ([`crate::Dialect::parallel_load`]); then keys, indexes and statistics. Every unit draws from its own
//! stream of the seed, so the database is the same whatever the number of loaders.

use super::gen::{self, Remark, Scale, TextPool};
use super::schema::{self, INDEXES, TABLES};
use crate::bulk::{self, Load};
use crate::database::Database;
use crate::WorkloadError;
use iolab_rng::Rng;
use std::collections::HashMap;
use std::sync::atomic::AtomicBool;

/// Keys per unit of work.
pub const UNIT_KEYS: i64 = 10_000;
/// Salt of the load's random streams.
const LOAD_SALT: u64 = 0x7c90_0000_0000_0000;

/// What the build did.
pub type Built = bulk::Built<8>;

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

/// The shared inputs of every unit.
struct Inputs<'a> {
    scale: &'a Scale,
    seed: u64,
    pool: &'a TextPool,
    remarks: &'a HashMap<i64, Remark>,
}

/// Writes one unit's rows.
fn generate(w: &mut bulk::Writer<'_, 8>, unit: Unit, at: &Inputs) -> Result<(), WorkloadError> {
    let mut rng = unit.rng(at.seed);
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
    Ok(())
}

/// About how many rows the build at `scale` loads: every table's count, LINEITEM at its mean of 4 lines per
/// order (1 to 7, uniform). For progress; the build's own counts are exact.
pub fn expected_rows(scale: &Scale) -> u64 {
    let s = scale;
    let per_part_suppliers = 4;
    let rows = 25 + 5 + s.suppliers + s.parts * (1 + per_part_suppliers) + s.customers + s.orders * (1 + 4);
    rows.max(0) as u64
}

/// Builds the database at scale `sf` from `seed`, telling `on_rows` the rows as they load.
pub fn build(
    engine: &dyn Database,
    sf: f64,
    seed: u64,
    stop: &AtomicBool,
    on_rows: bulk::OnRows<'_>,
) -> Result<Built, WorkloadError> {
    let started = std::time::Instant::now();
    let scale = Scale::new(sf);
    let pool = TextPool::new(seed);
    let remarks = remarks(&scale, seed);
    let inputs = Inputs { scale: &scale, seed, pool: &pool, remarks: &remarks };
    let plan = Load {
        tables: &TABLES,
        indexes: &INDEXES,
        first: Vec::new(),
        units: units(&scale),
        generate: &|w: &mut bulk::Writer<'_, 8>, unit: &Unit| generate(w, *unit, &inputs),
    };
    let mut built = bulk::build(engine, &plan, stop, on_rows)?;
    // The build's time includes drawing the text pool and the remarks, the inputs of every unit.
    built.seconds = started.elapsed().as_secs_f64();
    Ok(built)
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
