//! New-Order (clause 2.4): an order of 5 to 15 lines entered for a customer of a district of the home
//! warehouse, 1 % of its lines supplied by a remote warehouse, 1 % of orders rolled back on an unused item.
//!
//! Implementation choices: the district's next order id is taken with one `UPDATE ... RETURNING`; each
//! line's stock is updated with one `UPDATE ... RETURNING` that reads back its `s_data` and the district's
//! `s_dist_NN`; the lines lock their stock rows in order (supplying warehouse, then item), so two new orders
//! never deadlock, the unused item of an order that rolls back kept last (the spec's last item).

use super::{now_s, Ran, Terminal};
use crate::database::{self, Conn, TxKind, TxOutcome};
use crate::tpcc::load::{CUSTOMERS, DISTRICTS};
use crate::tpcc::rand::{nurand, uniform, A_C_ID, A_OL_I_ID};
use crate::{DbError, Value};

/// One order line's inputs.
#[derive(Clone, Copy, Debug)]
struct Line {
    i_id: u64,
    supply_w_id: u64,
    quantity: u64,
}

/// What an order's statements share: its warehouse, district and customer, and its district's stock
/// statement and column.
struct Order {
    w: i64,
    d: i64,
    c: i64,
    stock_sql: String,
    dist_column: String,
}

impl Terminal {
    /// New-Order (2.4): 5 to 15 lines, 1 % of them from a remote warehouse, 1 % of orders rolled back on an
    /// unused item.
    pub fn new_order(&mut self, conn: &mut dyn Conn, retries: &mut u64) -> Result<Ran, DbError> {
        let w = self.w_id as i64;
        let d = uniform(&mut self.rng, 1, DISTRICTS) as i64;
        let c = nurand(&mut self.rng, A_C_ID, self.c.c_id, 1, CUSTOMERS) as i64;
        let lines = self.draw_lines();
        let dist_column = format!("s_dist_{d:02}");
        let order = Order { w, d, c, stock_sql: stock_sql(&dist_column), dist_column };
        let done = database::transaction(conn, TxKind::Write, retries, |conn| {
            let o_id = self.enter_order(conn, &order, &lines)?;
            for (n, line) in lines.iter().enumerate() {
                if !self.enter_line(conn, &order, o_id, n as i64 + 1, line)? {
                    return Ok(TxOutcome::Rollback);
                }
            }
            Ok(TxOutcome::Commit)
        })?;
        Ok(Ran { done, skipped: 0 })
    }

    /// The order's lines, in the order they lock their stock: 5 to 15, the last an unused item in 1 % of
    /// orders.
    fn draw_lines(&mut self) -> Vec<Line> {
        let count = uniform(&mut self.rng, 5, 15);
        let rollback = uniform(&mut self.rng, 1, 100) == 1;
        let unused = self.items + 1;
        let mut lines: Vec<Line> = (0..count)
            .map(|n| {
                let i_id = if rollback && n == count - 1 {
                    unused
                } else {
                    nurand(&mut self.rng, A_OL_I_ID, self.c.ol_i_id, 1, self.items)
                };
                let remote = self.warehouses > 1 && uniform(&mut self.rng, 1, 100) == 1;
                let supply_w_id = if remote { self.other_warehouse() } else { self.w_id };
                Line { i_id, supply_w_id, quantity: uniform(&mut self.rng, 1, 10) }
            })
            .collect();
        lines.sort_by_key(|l| (l.i_id == unused, l.supply_w_id, l.i_id));
        lines
    }

    /// Reads the warehouse's tax, takes the district's next order id, reads the customer and inserts the
    /// order and its new-order row; returns the order's id.
    fn enter_order(&self, conn: &mut dyn Conn, order: &Order, lines: &[Line]) -> Result<i64, DbError> {
        let Order { w, d, c, .. } = *order;
        let all_local = lines.iter().all(|l| l.supply_w_id == self.w_id) as i64;
        let now = now_s();
        let wh = conn.query("SELECT w_tax FROM warehouse WHERE w_id = $1", &[w.into()])?;
        wh.first("new-order's warehouse")?.real("w_tax")?;
        let dist = conn.query(
            "UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = $1 AND d_id = $2 RETURNING d_tax, d_next_o_id",
            &[w.into(), d.into()],
        )?;
        let o_id = dist.first("new-order's district")?.int("d_next_o_id")? - 1;
        conn.query(
            "SELECT c_discount, c_last, c_credit FROM customer WHERE c_w_id = $1 AND c_d_id = $2 AND c_id = $3",
            &[w.into(), d.into(), c.into()],
        )?;
        conn.execute(
            "INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
            &[o_id.into(), d.into(), w.into(), c.into(), now.into(), Value::Null, (lines.len() as i64).into(), all_local.into()],
        )?;
        conn.execute(
            "INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES ($1, $2, $3)",
            &[o_id.into(), d.into(), w.into()],
        )?;
        Ok(o_id)
    }

    /// Line `number` of order `o_id`: the item read, its stock updated, the line inserted; false (and
    /// nothing done) when the item is unused.
    fn enter_line(
        &self,
        conn: &mut dyn Conn,
        order: &Order,
        o_id: i64,
        number: i64,
        l: &Line,
    ) -> Result<bool, DbError> {
        let item =
            conn.query("SELECT i_price, i_name, i_data FROM item WHERE i_id = $1", &[l.i_id.into()])?;
        if item.is_empty() {
            return Ok(false);
        }
        let price = item.first("new-order's item")?.int("i_price")?;
        let remote = (l.supply_w_id != self.w_id) as i64;
        let stock = conn.query(
            &order.stock_sql,
            &[l.supply_w_id.into(), l.i_id.into(), l.quantity.into(), remote.into()],
        )?;
        let dist_info = stock.first("new-order's stock")?.text(&order.dist_column)?;
        conn.execute(
            "INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, \
             ol_delivery_d, ol_quantity, ol_amount, ol_dist_info) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
            &[
                o_id.into(),
                order.d.into(),
                order.w.into(),
                number.into(),
                l.i_id.into(),
                l.supply_w_id.into(),
                Value::Null,
                l.quantity.into(),
                (l.quantity as i64 * price).into(),
                dist_info.into(),
            ],
        )?;
        Ok(true)
    }
}

/// The stock update of a line, returning `s_data` and the order's district's `dist_column`.
fn stock_sql(dist_column: &str) -> String {
    format!(
        "UPDATE stock SET s_quantity = CASE WHEN s_quantity >= $3 + 10 THEN s_quantity - $3 \
         ELSE s_quantity - $3 + 91 END, s_ytd = s_ytd + $3, s_order_cnt = s_order_cnt + 1, \
         s_remote_cnt = s_remote_cnt + $4 WHERE s_w_id = $1 AND s_i_id = $2 RETURNING s_data, {dist_column}"
    )
}
