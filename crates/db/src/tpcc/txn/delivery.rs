//! Delivery (clause 2.7): the oldest new order of each of the home warehouse's ten districts is delivered
//! by a carrier: taken off the new orders, its lines dated, their amount added to the customer's balance.
//!
//! Implementation choices: it runs at once, not queued for deferred execution (as HammerDB runs it), the
//! ten districts in one transaction; a district with no new order waiting is skipped and counted
//! ([`Ran::skipped`]); under READ COMMITTED a concurrent delivery may take a district's oldest order first,
//! and then the next oldest is taken (up to [`TAKE_TRIES`] times).

use super::{now_s, Ran, Terminal};
use crate::database::{self, Conn, TxKind, TxOutcome};
use crate::tpcc::load::DISTRICTS;
use crate::tpcc::rand::uniform;
use crate::DbError;

/// How many times a delivery tries to take a district's oldest new order that other deliveries keep taking
/// first.
pub const TAKE_TRIES: u32 = 8;

impl Terminal {
    /// Delivery (2.7): the oldest new order of each of the home warehouse's ten districts is delivered.
    pub fn delivery(&mut self, conn: &mut dyn Conn, retries: &mut u64) -> Result<Ran, DbError> {
        let w = self.w_id as i64;
        let carrier = uniform(&mut self.rng, 1, 10) as i64;
        let mut skipped = 0;
        let done = database::transaction(conn, TxKind::Write, retries, |conn| {
            skipped = 0;
            let now = now_s();
            for d in 1..=DISTRICTS as i64 {
                match take_oldest_new_order(conn, w, d)? {
                    Some(o) => deliver(conn, [w, d, o], carrier, now)?,
                    None => skipped += 1,
                }
            }
            Ok(TxOutcome::Commit)
        })?;
        Ok(Ran { done, skipped })
    }
}

/// Deletes the oldest new order of a district and returns its id; `None` when none is waiting. Under
/// READ COMMITTED another delivery may take the oldest between the SELECT and the DELETE (the DELETE then
/// finds nothing): the next oldest is tried, a few times.
fn take_oldest_new_order(conn: &mut dyn Conn, w: i64, d: i64) -> Result<Option<i64>, DbError> {
    for _ in 0..TAKE_TRIES {
        let oldest = conn.query(
            "SELECT min(no_o_id) AS oldest FROM new_order WHERE no_w_id = $1 AND no_d_id = $2",
            &[w.into(), d.into()],
        )?;
        let Some(o) = oldest.first("delivery's oldest new order")?.int_or_null("oldest")? else {
            return Ok(None);
        };
        let deleted = conn.execute(
            "DELETE FROM new_order WHERE no_w_id = $1 AND no_d_id = $2 AND no_o_id = $3",
            &[w.into(), d.into(), o.into()],
        )?;
        if deleted > 0 {
            return Ok(Some(o));
        }
    }
    Ok(None)
}

/// Delivers order `o` of warehouse `w`, district `d` (`[w, d, o]`) by `carrier` at `now`: the carrier set,
/// the lines dated, their amount added to the customer's balance.
fn deliver(conn: &mut dyn Conn, [w, d, o]: [i64; 3], carrier: i64, now: i64) -> Result<(), DbError> {
    let order = conn.query(
        "UPDATE orders SET o_carrier_id = $4 WHERE o_w_id = $1 AND o_d_id = $2 AND o_id = $3 RETURNING o_c_id",
        &[w.into(), d.into(), o.into(), carrier.into()],
    )?;
    let c = order.first("delivery's order")?.int("o_c_id")?;
    conn.execute(
        "UPDATE order_line SET ol_delivery_d = $4 WHERE ol_w_id = $1 AND ol_d_id = $2 AND ol_o_id = $3",
        &[w.into(), d.into(), o.into(), now.into()],
    )?;
    let sum = conn.query(
        "SELECT CAST(sum(ol_amount) AS bigint) AS amount FROM order_line WHERE ol_w_id = $1 AND ol_d_id = $2 AND ol_o_id = $3",
        &[w.into(), d.into(), o.into()],
    )?;
    let amount = sum.first("delivery's order lines")?.int_or_null("amount")?.unwrap_or(0);
    conn.execute(
        "UPDATE customer SET c_balance = c_balance + $4, c_delivery_cnt = c_delivery_cnt + 1 \
         WHERE c_w_id = $1 AND c_d_id = $2 AND c_id = $3",
        &[w.into(), d.into(), c.into(), amount.into()],
    )?;
    Ok(())
}
