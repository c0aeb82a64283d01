//! The initial database (clause 4.3.3.1): the items, then per warehouse its stock, districts, customers with
//! one history row each, 3,000 orders per district with their lines (the first 2,100 delivered), and the
//! last 900 orders of each district waiting as new orders.
//!
//! The rows are written through the shared bulk load ([`crate::bulk::Writer`]), each table in its key's
//! order. Where the engine allows ([`crate::Dialect::parallel_load`]), warehouses load on several
//! connections at once; every warehouse's data comes from its own stream of the seed, so the database is
//! the same whatever the number of loaders.

use super::rand::{astring, data, last_name, nstring, nurand, uniform, zip, Constants, A_C_LAST};
use super::schema::TABLES;
use crate::{Value, WorkloadError};
use iolab_rng::Rng;

/// Districts per warehouse.
pub const DISTRICTS: u64 = 10;
/// Customers per district, and orders per district at the start.
pub const CUSTOMERS: u64 = 3000;
/// The first order of a district not yet delivered at the start (the last 900 wait as new orders).
pub const FIRST_NEW_ORDER: u64 = 2101;
/// Salt of the load's random streams (each warehouse's stream is this and its number).
const LOAD_SALT: u64 = 0x10ad_0000_0000_0000;

fn index(name: &str) -> usize {
    TABLES.iter().position(|t| t.name == name).expect("a TPC-C table")
}

/// The writer of TPC-C's tables.
type Writer<'a> = crate::bulk::Writer<'a, 9>;

/// Writes the ITEM table: `items` rows.
pub(crate) fn items(w: &mut Writer<'_>, items: u64, seed: u64) -> Result<(), WorkloadError> {
    let mut rng = Rng::for_worker(seed ^ LOAD_SALT, 0);
    let item = index("item");
    for i in 1..=items {
        let row = vec![
            Value::Int(i as i64),
            Value::Int(uniform(&mut rng, 1, 10_000) as i64),
            astring(&mut rng, 14, 24).into(),
            Value::Int(uniform(&mut rng, 100, 10_000) as i64),
            data(&mut rng).into(),
        ];
        w.push(item, row)?;
    }
    Ok(())
}

/// Street, street, city, state and zip.
fn address(rng: &mut Rng) -> [Value; 5] {
    [
        astring(rng, 10, 20).into(),
        astring(rng, 10, 20).into(),
        astring(rng, 10, 20).into(),
        astring(rng, 2, 2).into(),
        zip(rng).into(),
    ]
}

/// A tax or discount rate in 0..=`max_ten_thousandths` / 10,000.
fn rate(rng: &mut Rng, max_ten_thousandths: u64) -> Value {
    Value::Real(uniform(rng, 0, max_ten_thousandths) as f64 / 10_000.0)
}

/// Writes warehouse `w` (stock for `items` items, its districts, customers, history, orders, order lines
/// and new orders), its rows stamped with time `now` (seconds since the epoch).
pub(crate) fn warehouse(
    out: &mut Writer<'_>,
    w: u64,
    items: u64,
    seed: u64,
    now: i64,
) -> Result<(), WorkloadError> {
    let (c_load, _) = Constants::from_seed(seed);
    let mut rng = Rng::for_worker(seed ^ LOAD_SALT, w as u32);
    let wid = Value::Int(w as i64);
    let mut row = vec![wid.clone(), astring(&mut rng, 6, 10).into()];
    row.extend(address(&mut rng));
    row.extend([rate(&mut rng, 2000), Value::Int(30_000_000)]);
    out.push(index("warehouse"), row)?;

    let stock = index("stock");
    for i in 1..=items {
        let mut row = vec![Value::Int(i as i64), wid.clone(), Value::Int(uniform(&mut rng, 10, 100) as i64)];
        row.extend((0..10).map(|_| Value::from(astring(&mut rng, 24, 24))));
        row.extend([Value::Int(0), Value::Int(0), Value::Int(0), data(&mut rng).into()]);
        out.push(stock, row)?;
    }
    for d in 1..=DISTRICTS {
        let did = Value::Int(d as i64);
        let mut row = vec![did.clone(), wid.clone(), astring(&mut rng, 6, 10).into()];
        row.extend(address(&mut rng));
        row.extend([rate(&mut rng, 2000), Value::Int(3_000_000), Value::Int(CUSTOMERS as i64 + 1)]);
        out.push(index("district"), row)?;
    }
    for d in 1..=DISTRICTS {
        load_district(out, &mut rng, (w, d), items, c_load, now)?;
    }
    Ok(())
}

/// One district's customers, history, orders, order lines and new orders.
fn load_district(
    out: &mut Writer<'_>,
    rng: &mut Rng,
    (w, d): (u64, u64),
    items: u64,
    c_load: Constants,
    now: i64,
) -> Result<(), WorkloadError> {
    let (wid, did) = (Value::Int(w as i64), Value::Int(d as i64));
    let (customer, history) = (index("customer"), index("history"));
    for c in 1..=CUSTOMERS {
        let last = if c <= 1000 { c - 1 } else { nurand(rng, A_C_LAST, c_load.c_last, 0, 999) };
        let mut row = vec![
            Value::Int(c as i64),
            did.clone(),
            wid.clone(),
            astring(rng, 8, 16).into(),
            "OE".into(),
            last_name(last).into(),
        ];
        row.extend(address(rng));
        row.extend([
            nstring(rng, 16, 16).into(),
            Value::Int(now),
            if rng.below(10) == 0 { "BC" } else { "GC" }.into(),
            Value::Int(5_000_000),
            rate(rng, 5000),
            Value::Int(-1000),
            Value::Int(1000),
            Value::Int(1),
            Value::Int(0),
            astring(rng, 300, 500).into(),
        ]);
        out.push(customer, row)?;
    }
    for c in 1..=CUSTOMERS {
        let row = vec![
            Value::Int(c as i64),
            did.clone(),
            wid.clone(),
            did.clone(),
            wid.clone(),
            Value::Int(now),
            Value::Int(1000),
            astring(rng, 12, 24).into(),
        ];
        out.push(history, row)?;
    }
    // O_C_ID: a random permutation of the customers.
    let mut customers: Vec<u64> = (1..=CUSTOMERS).collect();
    for i in (1..customers.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        customers.swap(i, j);
    }
    let (orders, lines, new_orders) = (index("orders"), index("order_line"), index("new_order"));
    let mut line_counts = Vec::with_capacity(CUSTOMERS as usize);
    for o in 1..=CUSTOMERS {
        let delivered = o < FIRST_NEW_ORDER;
        let ol_cnt = uniform(rng, 5, 15);
        line_counts.push(ol_cnt);
        let carrier = if delivered { Value::Int(uniform(rng, 1, 10) as i64) } else { Value::Null };
        let row = vec![
            Value::Int(o as i64),
            did.clone(),
            wid.clone(),
            Value::Int(customers[o as usize - 1] as i64),
            Value::Int(now),
            carrier,
            Value::Int(ol_cnt as i64),
            Value::Int(1),
        ];
        out.push(orders, row)?;
    }
    for o in 1..=CUSTOMERS {
        let delivered = o < FIRST_NEW_ORDER;
        for n in 1..=line_counts[o as usize - 1] {
            let row = vec![
                Value::Int(o as i64),
                did.clone(),
                wid.clone(),
                Value::Int(n as i64),
                Value::Int(uniform(rng, 1, items) as i64),
                wid.clone(),
                if delivered { Value::Int(now) } else { Value::Null },
                Value::Int(5),
                Value::Int(if delivered { 0 } else { uniform(rng, 1, 999_999) as i64 }),
                astring(rng, 24, 24).into(),
            ];
            out.push(lines, row)?;
        }
    }
    for o in FIRST_NEW_ORDER..=CUSTOMERS {
        out.push(new_orders, vec![Value::Int(o as i64), did.clone(), wid.clone()])?;
    }
    Ok(())
}
