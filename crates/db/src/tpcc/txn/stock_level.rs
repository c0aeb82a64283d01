//! Stock-Level (clause 2.8): how many of the items of a district's last 20 orders have a stock below a
//! threshold of 10 to 20; reads only.
//!
//! Implementation choices: the district is drawn per transaction (the spec fixes one per terminal); it
//! runs as a reading transaction (SQLite's `BEGIN DEFERRED`); the count is one join of the order lines and
//! the home warehouse's stock, counting distinct items.

use super::{Ran, Terminal};
use crate::database::{self, Conn, TxKind, TxOutcome};
use crate::tpcc::load::DISTRICTS;
use crate::tpcc::rand::uniform;
use crate::DbError;

impl Terminal {
    /// Stock-Level (2.8): how many of the items of a district's last 20 orders are below a threshold of
    /// 10 to 20; reads only.
    pub fn stock_level(&mut self, conn: &mut dyn Conn, retries: &mut u64) -> Result<Ran, DbError> {
        let w = self.w_id as i64;
        let d = uniform(&mut self.rng, 1, DISTRICTS) as i64;
        let threshold = uniform(&mut self.rng, 10, 20) as i64;
        let done = database::transaction(conn, TxKind::Read, retries, |conn| {
            let next = conn.query(
                "SELECT d_next_o_id FROM district WHERE d_w_id = $1 AND d_id = $2",
                &[w.into(), d.into()],
            )?;
            let next = next.first("stock-level's district")?.int("d_next_o_id")?;
            conn.query(
                "SELECT count(DISTINCT s_i_id) AS low_stock FROM order_line, stock WHERE ol_w_id = $1 AND ol_d_id = $2 \
                 AND ol_o_id < $3 AND ol_o_id >= $4 AND s_w_id = $1 AND s_i_id = ol_i_id AND s_quantity < $5",
                &[w.into(), d.into(), next.into(), (next - 20).into(), threshold.into()],
            )?;
            Ok(TxOutcome::Commit)
        })?;
        Ok(Ran { done, skipped: 0 })
    }
}
