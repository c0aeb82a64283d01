//! The refresh functions (clause 2.5): RF1, new sales, inserts SF × 1,500 orders with their 1 to 7 lines
//! each; RF2, old sales, deletes as many of the oldest orders with their lines. Each runs as one
//! transaction (the spec allows batches; at iolab's scales one is a few thousand rows).
//!
//! Refresh pair `p` (1 in the power test, 2 onwards in the throughput test's refresh stream) works on
//! fixed order numbers, so every pair touches its own orders and a database refreshed `p` times holds
//! the same rows whatever the engine:
//!
//! - RF1 of pair `p` generates orders `O + (p − 1) × K` to `O + p × K − 1` (O the loaded orders, K =
//!   SF × 1,500) with [`gen::order`] from the pair's own stream of the seed: the same rules as the load,
//!   keys continuing the sparse key space (the first 8 of every 32) beyond the loaded ones. Its rows are
//!   generated before the transaction starts, as dbgen writes its refresh data before the test.
//! - RF2 of pair `p` deletes orders `(p − 1) × K` to `p × K − 1`, the oldest ones: a key range that
//!   holds no other order, since new orders take keys beyond the loaded ones.
//!
//! Orders keep their count after a pair; lines change by the difference between the lines of the orders
//! inserted and of those deleted, as in the spec.

use super::gen::{self, Scale, TextPool};
use super::schema::{self, TABLES};
use crate::database::{transaction, Conn, TxEnd, TxKind, TxOutcome};
use crate::{DbError, Value, WorkloadError};
use iolab_rng::Rng;
use std::ops::Range;
use std::time::Instant;

/// Salt of the refresh functions' random streams (apart from the load's).
const REFRESH_SALT: u64 = 0x5ef2_0000_0000_0000;
/// Rows per INSERT statement.
const ROWS_PER_STATEMENT: usize = 200;

/// The refresh pairs the order numbers allow (RF2 of the last one deletes the last of them).
pub fn max_pairs(scale: &Scale) -> u32 {
    (scale.orders / orders_per_pair(scale)).min(u32::MAX as i64) as u32
}

/// Orders each refresh function inserts or deletes: SF × 1,500, at least one.
pub fn orders_per_pair(scale: &Scale) -> i64 {
    ((scale.sf * 1_500.0).round() as i64).max(1)
}

/// The order numbers (0-based) RF1 of `pair` inserts.
pub fn new_orders(scale: &Scale, pair: u32) -> Range<i64> {
    let k = orders_per_pair(scale);
    let first = scale.orders + (i64::from(pair) - 1) * k;
    first..first + k
}

/// The order numbers (0-based) RF2 of `pair` deletes.
pub fn old_orders(scale: &Scale, pair: u32) -> Range<i64> {
    let k = orders_per_pair(scale);
    let first = (i64::from(pair) - 1) * k;
    first..first + k
}

/// What a refresh function did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Refreshed {
    /// Orders inserted or deleted.
    pub orders: u64,
    /// Lines inserted or deleted.
    pub lineitems: u64,
    /// Seconds from the transaction's start to its commit (retries included).
    pub seconds: f64,
}

/// `v` as an SQL literal (text quoted, its quotes doubled).
fn literal(v: &Value, out: &mut String) {
    match v {
        Value::Null => out.push_str("NULL"),
        Value::Int(i) => out.push_str(&i.to_string()),
        Value::Real(r) => out.push_str(&format!("{r:?}")),
        Value::Text(t) => {
            out.push('\'');
            out.push_str(&t.replace('\'', "''"));
            out.push('\'');
        }
    }
}

/// INSERT statements for `rows` of table `t`, [`ROWS_PER_STATEMENT`] rows each.
fn inserts(t: usize, rows: &[Vec<Value>]) -> Vec<String> {
    let table = &TABLES[t];
    rows.chunks(ROWS_PER_STATEMENT)
        .map(|chunk| {
            let mut sql = format!("INSERT INTO {} ({}) VALUES ", table.name, table.column_names().join(", "));
            for (i, row) in chunk.iter().enumerate() {
                sql.push_str(if i == 0 { "(" } else { ", (" });
                for (j, v) in row.iter().enumerate() {
                    if j > 0 {
                        sql.push_str(", ");
                    }
                    literal(v, &mut sql);
                }
                sql.push(')');
            }
            sql
        })
        .collect()
}

/// Runs `body` as one writing transaction, timed; a transaction the database still refuses after the
/// retries is an error.
fn timed(
    conn: &mut dyn Conn,
    what: &str,
    body: impl FnMut(&mut dyn Conn) -> Result<TxOutcome, DbError>,
) -> Result<f64, WorkloadError> {
    let started = Instant::now();
    let mut retries = 0;
    let failed = |message: String| WorkloadError::Db(DbError { retryable: false, message });
    match transaction(conn, TxKind::Write, &mut retries, body) {
        Ok(TxEnd::Committed) => Ok(started.elapsed().as_secs_f64()),
        Ok(_) => Err(failed(format!("{what}: still refused after {retries} retries"))),
        Err(e) => Err(failed(format!("{what}: {}", e.message))),
    }
}

/// RF1 of `pair`: its new orders and their lines inserted in one transaction.
pub fn rf1(
    conn: &mut dyn Conn,
    scale: &Scale,
    seed: u64,
    pool: &TextPool,
    pair: u32,
) -> Result<Refreshed, WorkloadError> {
    let mut rng = Rng::for_worker(seed ^ REFRESH_SALT, pair);
    let (mut orders, mut lines) = (Vec::new(), Vec::new());
    for n in new_orders(scale, pair) {
        let (order, its_lines) = gen::order(&mut rng, pool, n, scale);
        orders.push(order);
        lines.extend(its_lines);
    }
    let mut statements = inserts(schema::ORDERS, &orders);
    statements.extend(inserts(schema::LINEITEM, &lines));
    let seconds = timed(conn, &format!("RF1 of pair {pair}"), |c| {
        for sql in &statements {
            c.batch(sql)?;
        }
        Ok(TxOutcome::Commit)
    })?;
    Ok(Refreshed { orders: orders.len() as u64, lineitems: lines.len() as u64, seconds })
}

/// RF2 of `pair`: its old orders and their lines deleted in one transaction.
pub fn rf2(conn: &mut dyn Conn, scale: &Scale, pair: u32) -> Result<Refreshed, WorkloadError> {
    let range = old_orders(scale, pair);
    let keys = [Value::Int(gen::order_key(range.start)), Value::Int(gen::order_key(range.end - 1))];
    let (mut orders, mut lineitems) = (0, 0);
    let seconds = timed(conn, &format!("RF2 of pair {pair}"), |c| {
        lineitems = c.execute("DELETE FROM lineitem WHERE l_orderkey BETWEEN $1 AND $2", &keys)?;
        orders = c.execute("DELETE FROM orders WHERE o_orderkey BETWEEN $1 AND $2", &keys)?;
        Ok(TxOutcome::Commit)
    })?;
    Ok(Refreshed { orders, lineitems, seconds })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_take_their_own_orders() {
        let s = Scale::new(0.01);
        assert_eq!(orders_per_pair(&s), 15);
        assert_eq!(new_orders(&s, 1), 15_000..15_015);
        assert_eq!(new_orders(&s, 2), 15_015..15_030);
        assert_eq!(old_orders(&s, 2), 15..30);
        assert_eq!(max_pairs(&s), 1_000);
        // The new orders' keys lie beyond every loaded key.
        assert!(gen::order_key(new_orders(&s, 1).start) > gen::order_key(s.orders - 1));
    }

    #[test]
    fn literals_quote_text() {
        let rows = vec![vec![Value::Int(1), Value::Text("it's".into()), Value::Real(0.5), Value::Null]];
        let sql = inserts(schema::REGION, &rows);
        assert_eq!(sql.len(), 1);
        assert!(sql[0].ends_with("VALUES (1, 'it''s', 0.5, NULL)"), "{}", sql[0]);
        let many = vec![vec![Value::Int(1)]; ROWS_PER_STATEMENT + 1];
        assert_eq!(inserts(schema::REGION, &many).len(), 2);
    }
}
