//! Order-Status (clause 2.6): a customer of a district of the home warehouse (60 % found by last name)
//! asks for their balance and their last order with its lines; reads only.
//!
//! Implementation choices: it runs as a reading transaction (SQLite's `BEGIN DEFERRED`: no write lock
//! taken); a customer by last name is the one at position n/2 rounded up of those sorted by first name
//! (`Terminal::customer_by_name`); the last order is the customer's highest order id (the
//! orders-by-customer index of [`crate::tpcc::schema::INDEXES`] serves it); a customer without an order
//! reads no lines.

use super::{Ran, Terminal};
use crate::database::{self, Conn, TxKind, TxOutcome};
use crate::tpcc::load::DISTRICTS;
use crate::tpcc::rand::uniform;
use crate::DbError;

impl Terminal {
    /// Order-Status (2.6): a customer's balance and last order with its lines; reads only.
    pub fn order_status(&mut self, conn: &mut dyn Conn, retries: &mut u64) -> Result<Ran, DbError> {
        let w = self.w_id as i64;
        let d = uniform(&mut self.rng, 1, DISTRICTS) as i64;
        let (last, id) = self.customer();
        let done = database::transaction(conn, TxKind::Read, retries, |conn| {
            let c = match &last {
                Some(name) => Self::customer_by_name(conn, w, d, name)?,
                None => id as i64,
            };
            conn.query(
                "SELECT c_balance, c_first, c_middle, c_last FROM customer WHERE c_w_id = $1 AND c_d_id = $2 AND c_id = $3",
                &[w.into(), d.into(), c.into()],
            )?;
            let order = conn.query(
                "SELECT o_id, o_entry_d, o_carrier_id FROM orders WHERE o_w_id = $1 AND o_d_id = $2 AND o_c_id = $3 \
                 ORDER BY o_id DESC LIMIT 1",
                &[w.into(), d.into(), c.into()],
            )?;
            if !order.is_empty() {
                let o = order.first("order-status's last order")?.int("o_id")?;
                conn.query(
                    "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line \
                     WHERE ol_w_id = $1 AND ol_d_id = $2 AND ol_o_id = $3",
                    &[w.into(), d.into(), o.into()],
                )?;
            }
            Ok(TxOutcome::Commit)
        })?;
        Ok(Ran { done, skipped: 0 })
    }
}
