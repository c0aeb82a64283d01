//! The five transactions (clauses 2.4 to 2.8), as one user (a *terminal*) runs them.
//!
//! Each transaction draws its inputs first (so a retry after a busy database or a deadlock runs the same
//! transaction again) and then runs its statements through [`engine::transaction`]. The profile is the
//! spec's, with the usual implementation choices, each noted where it is made: a district's next order id
//! is taken with `UPDATE ... RETURNING`; stock is updated with one `UPDATE ... RETURNING`; a new order's
//! lines lock their stock rows in item order (so two new orders never deadlock), the unused item of a
//! rolled-back order kept last; a delivery runs at once, not queued (as HammerDB runs it), skipping a
//! district with no new order waiting (when a concurrent delivery takes a district's oldest order
//! first, the next is taken); stock-level draws its district per
//! transaction.

use super::load::{CUSTOMERS, DISTRICTS};
use super::rand::{last_name, nurand, uniform, Constants, A_C_ID, A_C_LAST, A_OL_I_ID};
use crate::engine::{self, Conn, Dialect, Done, Outcome, TxKind};
use crate::{DbError, Value};
use iolab_rng::Rng;

/// How many times a delivery tries to take a district's oldest new order that other deliveries keep taking
/// first.
const TAKE_TRIES: u32 = 8;

/// Seconds since the epoch, for the tables' dates.
fn now_s() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64)
}

/// One user: its home warehouse, its random stream and the run's NURand constants.
pub struct Terminal {
    /// Home warehouse.
    pub w_id: u64,
    warehouses: u64,
    items: u64,
    rng: Rng,
    c: Constants,
    for_update: &'static str,
}

/// What one transaction did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ran {
    /// Committed, rolled back or given up.
    pub done: Done,
    /// Districts a delivery skipped (no new order waiting).
    pub skipped: u64,
}

fn int(rows: &[Vec<Value>], row: usize, col: usize, what: &str) -> Result<i64, DbError> {
    rows.get(row)
        .and_then(|r| r.get(col))
        .and_then(Value::int)
        .ok_or_else(|| DbError::fatal(format!("{what}: no row, or not an integer")))
}

fn text(rows: &[Vec<Value>], row: usize, col: usize) -> String {
    rows.get(row).and_then(|r| r.get(col)).and_then(Value::text).unwrap_or("").to_string()
}

/// One order line's inputs.
#[derive(Clone, Copy, Debug)]
struct Line {
    i_id: u64,
    supply_w_id: u64,
    quantity: u64,
}

impl Terminal {
    /// User `user` (0-based) of a run on `warehouses` warehouses of `items` items: its home warehouse is
    /// `user mod warehouses + 1`, its stream the seed's stream number `user + 1`.
    pub fn new(user: u32, warehouses: u64, items: u64, seed: u64, dialect: &Dialect) -> Terminal {
        let (_, run) = Constants::from_seed(seed);
        Terminal {
            w_id: user as u64 % warehouses + 1,
            warehouses,
            items,
            rng: Rng::for_worker(seed, user + 1),
            c: run,
            for_update: dialect.for_update,
        }
    }

    /// The random stream (the driver draws the mix from it).
    pub fn rng(&mut self) -> &mut Rng {
        &mut self.rng
    }

    /// Another warehouse than home, uniformly (home when there is only one).
    fn other_warehouse(&mut self) -> u64 {
        if self.warehouses == 1 {
            return self.w_id;
        }
        let w = uniform(&mut self.rng, 1, self.warehouses - 1);
        if w >= self.w_id {
            w + 1
        } else {
            w
        }
    }

    /// A customer, by last name (60 %) or by id: (c_last, c_id), one of them set.
    fn customer(&mut self) -> (Option<String>, u64) {
        if uniform(&mut self.rng, 1, 100) <= 60 {
            (Some(last_name(nurand(&mut self.rng, A_C_LAST, self.c.c_last, 0, 999))), 0)
        } else {
            (None, nurand(&mut self.rng, A_C_ID, self.c.c_id, 1, CUSTOMERS))
        }
    }

    /// New-Order (2.4): 5 to 15 lines, 1 % of them from a remote warehouse, 1 % of orders rolled back on an
    /// unused item.
    pub fn new_order(&mut self, conn: &mut dyn Conn, retries: &mut u64) -> Result<Ran, DbError> {
        let w = self.w_id as i64;
        let d = uniform(&mut self.rng, 1, DISTRICTS) as i64;
        let c = nurand(&mut self.rng, A_C_ID, self.c.c_id, 1, CUSTOMERS) as i64;
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
        let all_local = lines.iter().all(|l| l.supply_w_id == self.w_id) as i64;
        let stock_sql: Vec<String> = (1..=DISTRICTS)
            .map(|dist| {
                format!(
                    "UPDATE stock SET s_quantity = CASE WHEN s_quantity >= $3 + 10 THEN s_quantity - $3 \
                     ELSE s_quantity - $3 + 91 END, s_ytd = s_ytd + $3, s_order_cnt = s_order_cnt + 1, \
                     s_remote_cnt = s_remote_cnt + $4 WHERE s_w_id = $1 AND s_i_id = $2 RETURNING s_data, s_dist_{dist:02}"
                )
            })
            .collect();
        let done = engine::transaction(conn, TxKind::Write, retries, |conn| {
            let now = now_s();
            let wh = conn.query("SELECT w_tax FROM warehouse WHERE w_id = $1", &[w.into()])?;
            int_or_real(&wh, "warehouse")?;
            let dist = conn.query(
                "UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = $1 AND d_id = $2 RETURNING d_tax, d_next_o_id",
                &[w.into(), d.into()],
            )?;
            let o_id = int(&dist, 0, 1, "district")? - 1;
            conn.query(
                "SELECT c_discount, c_last, c_credit FROM customer WHERE c_w_id = $1 AND c_d_id = $2 AND c_id = $3",
                &[w.into(), d.into(), c.into()],
            )?;
            conn.execute(
                "INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
                &[o_id.into(), d.into(), w.into(), c.into(), now.into(), Value::Null, (count as i64).into(), all_local.into()],
            )?;
            conn.execute(
                "INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES ($1, $2, $3)",
                &[o_id.into(), d.into(), w.into()],
            )?;
            for (n, l) in lines.iter().enumerate() {
                let item =
                    conn.query("SELECT i_price, i_name, i_data FROM item WHERE i_id = $1", &[l.i_id.into()])?;
                if item.is_empty() {
                    return Ok(Outcome::Rollback);
                }
                let price = int(&item, 0, 0, "item")?;
                let remote = (l.supply_w_id != self.w_id) as i64;
                let stock = conn.query(
                    &stock_sql[d as usize - 1],
                    &[l.supply_w_id.into(), l.i_id.into(), l.quantity.into(), remote.into()],
                )?;
                let dist_info = text(&stock, 0, 1);
                conn.execute(
                    "INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, \
                     ol_delivery_d, ol_quantity, ol_amount, ol_dist_info) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
                    &[
                        o_id.into(),
                        d.into(),
                        w.into(),
                        (n as i64 + 1).into(),
                        l.i_id.into(),
                        l.supply_w_id.into(),
                        Value::Null,
                        l.quantity.into(),
                        (l.quantity as i64 * price).into(),
                        dist_info.into(),
                    ],
                )?;
            }
            Ok(Outcome::Commit)
        })?;
        Ok(Ran { done, skipped: 0 })
    }

    /// The id of the customer named `last` in a district: the one at position n/2 rounded up of those
    /// sorted by first name (2.5.2.2).
    fn customer_by_name(conn: &mut dyn Conn, w: i64, d: i64, last: &str) -> Result<i64, DbError> {
        let rows = conn.query(
            "SELECT c_id FROM customer WHERE c_w_id = $1 AND c_d_id = $2 AND c_last = $3 ORDER BY c_first",
            &[w.into(), d.into(), last.into()],
        )?;
        if rows.is_empty() {
            return Err(DbError::fatal(format!("no customer named {last} in warehouse {w}, district {d}")));
        }
        int(&rows, (rows.len() - 1) / 2, 0, "customer")
    }

    /// Payment (2.5): 85 % to a customer of the home warehouse, 15 % to one of a remote warehouse; 60 % by
    /// last name.
    pub fn payment(&mut self, conn: &mut dyn Conn, retries: &mut u64) -> Result<Ran, DbError> {
        let w = self.w_id as i64;
        let d = uniform(&mut self.rng, 1, DISTRICTS) as i64;
        let local = self.warehouses == 1 || uniform(&mut self.rng, 1, 100) <= 85;
        let (c_w, c_d) = if local {
            (w, d)
        } else {
            (self.other_warehouse() as i64, uniform(&mut self.rng, 1, DISTRICTS) as i64)
        };
        let (last, id) = self.customer();
        let amount = uniform(&mut self.rng, 100, 500_000) as i64;
        let for_update = self.for_update;
        let done = engine::transaction(conn, TxKind::Write, retries, |conn| {
            let wh = conn.query(
                "UPDATE warehouse SET w_ytd = w_ytd + $2 WHERE w_id = $1 \
                 RETURNING w_name, w_street_1, w_street_2, w_city, w_state, w_zip",
                &[w.into(), amount.into()],
            )?;
            let dist = conn.query(
                "UPDATE district SET d_ytd = d_ytd + $3 WHERE d_w_id = $1 AND d_id = $2 \
                 RETURNING d_name, d_street_1, d_street_2, d_city, d_state, d_zip",
                &[w.into(), d.into(), amount.into()],
            )?;
            let c = match &last {
                Some(name) => Self::customer_by_name(conn, c_w, c_d, name)?,
                None => id as i64,
            };
            let cust = conn.query(
                &format!(
                    "SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, \
                     c_since, c_credit, c_credit_lim, c_discount, c_balance FROM customer \
                     WHERE c_w_id = $1 AND c_d_id = $2 AND c_id = $3{for_update}"
                ),
                &[c_w.into(), c_d.into(), c.into()],
            )?;
            if cust.is_empty() {
                return Err(DbError::fatal(format!("no customer {c} in warehouse {c_w}, district {c_d}")));
            }
            if text(&cust, 0, 10) == "BC" {
                let data = conn.query(
                    "SELECT c_data FROM customer WHERE c_w_id = $1 AND c_d_id = $2 AND c_id = $3",
                    &[c_w.into(), c_d.into(), c.into()],
                )?;
                let mut new = format!(
                    "{c} {c_d} {c_w} {d} {w} {}.{:02}|{}",
                    amount / 100,
                    amount % 100,
                    text(&data, 0, 0)
                );
                new.truncate(500);
                conn.execute(
                    "UPDATE customer SET c_balance = c_balance - $4, c_ytd_payment = c_ytd_payment + $4, \
                     c_payment_cnt = c_payment_cnt + 1, c_data = $5 WHERE c_w_id = $1 AND c_d_id = $2 AND c_id = $3",
                    &[c_w.into(), c_d.into(), c.into(), amount.into(), new.into()],
                )?;
            } else {
                conn.execute(
                    "UPDATE customer SET c_balance = c_balance - $4, c_ytd_payment = c_ytd_payment + $4, \
                     c_payment_cnt = c_payment_cnt + 1 WHERE c_w_id = $1 AND c_d_id = $2 AND c_id = $3",
                    &[c_w.into(), c_d.into(), c.into(), amount.into()],
                )?;
            }
            let h_data = format!("{}    {}", text(&wh, 0, 0), text(&dist, 0, 0));
            conn.execute(
                "INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
                &[
                    c.into(),
                    c_d.into(),
                    c_w.into(),
                    d.into(),
                    w.into(),
                    now_s().into(),
                    amount.into(),
                    h_data.into(),
                ],
            )?;
            Ok(Outcome::Commit)
        })?;
        Ok(Ran { done, skipped: 0 })
    }

    /// Order-Status (2.6): a customer's balance and last order with its lines; reads only.
    pub fn order_status(&mut self, conn: &mut dyn Conn, retries: &mut u64) -> Result<Ran, DbError> {
        let w = self.w_id as i64;
        let d = uniform(&mut self.rng, 1, DISTRICTS) as i64;
        let (last, id) = self.customer();
        let done = engine::transaction(conn, TxKind::Read, retries, |conn| {
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
            if let Some(o) = order.first().and_then(|r| r[0].int()) {
                conn.query(
                    "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line \
                     WHERE ol_w_id = $1 AND ol_d_id = $2 AND ol_o_id = $3",
                    &[w.into(), d.into(), o.into()],
                )?;
            }
            Ok(Outcome::Commit)
        })?;
        Ok(Ran { done, skipped: 0 })
    }

    /// Delivery (2.7): the oldest new order of each of the home warehouse's ten districts is delivered.
    pub fn delivery(&mut self, conn: &mut dyn Conn, retries: &mut u64) -> Result<Ran, DbError> {
        let w = self.w_id as i64;
        let carrier = uniform(&mut self.rng, 1, 10) as i64;
        let mut skipped = 0;
        let done = engine::transaction(conn, TxKind::Write, retries, |conn| {
            skipped = 0;
            let now = now_s();
            for d in 1..=DISTRICTS as i64 {
                let Some(o) = Self::take_oldest_new_order(conn, w, d)? else {
                    skipped += 1;
                    continue;
                };
                let order = conn.query(
                    "UPDATE orders SET o_carrier_id = $4 WHERE o_w_id = $1 AND o_d_id = $2 AND o_id = $3 RETURNING o_c_id",
                    &[w.into(), d.into(), o.into(), carrier.into()],
                )?;
                let c = int(&order, 0, 0, "orders")?;
                conn.execute(
                    "UPDATE order_line SET ol_delivery_d = $4 WHERE ol_w_id = $1 AND ol_d_id = $2 AND ol_o_id = $3",
                    &[w.into(), d.into(), o.into(), now.into()],
                )?;
                let sum = conn.query(
                    "SELECT CAST(sum(ol_amount) AS bigint) FROM order_line WHERE ol_w_id = $1 AND ol_d_id = $2 AND ol_o_id = $3",
                    &[w.into(), d.into(), o.into()],
                )?;
                let amount = sum.first().and_then(|r| r[0].int()).unwrap_or(0);
                conn.execute(
                    "UPDATE customer SET c_balance = c_balance + $4, c_delivery_cnt = c_delivery_cnt + 1 \
                     WHERE c_w_id = $1 AND c_d_id = $2 AND c_id = $3",
                    &[w.into(), d.into(), c.into(), amount.into()],
                )?;
            }
            Ok(Outcome::Commit)
        })?;
        Ok(Ran { done, skipped })
    }

    /// Deletes the oldest new order of a district and returns its id; `None` when none is waiting. Under
    /// READ COMMITTED another delivery may take the oldest between the SELECT and the DELETE (the DELETE then
    /// finds nothing): the next oldest is tried, a few times.
    fn take_oldest_new_order(conn: &mut dyn Conn, w: i64, d: i64) -> Result<Option<i64>, DbError> {
        for _ in 0..TAKE_TRIES {
            let oldest = conn.query(
                "SELECT min(no_o_id) FROM new_order WHERE no_w_id = $1 AND no_d_id = $2",
                &[w.into(), d.into()],
            )?;
            let Some(o) = oldest.first().and_then(|r| r[0].int()) else { return Ok(None) };
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

    /// Stock-Level (2.8): how many of the items of a district's last 20 orders are below a threshold of
    /// 10 to 20; reads only.
    pub fn stock_level(&mut self, conn: &mut dyn Conn, retries: &mut u64) -> Result<Ran, DbError> {
        let w = self.w_id as i64;
        let d = uniform(&mut self.rng, 1, DISTRICTS) as i64;
        let threshold = uniform(&mut self.rng, 10, 20) as i64;
        let done = engine::transaction(conn, TxKind::Read, retries, |conn| {
            let next = conn.query(
                "SELECT d_next_o_id FROM district WHERE d_w_id = $1 AND d_id = $2",
                &[w.into(), d.into()],
            )?;
            let next = int(&next, 0, 0, "district")?;
            conn.query(
                "SELECT count(DISTINCT s_i_id) FROM order_line, stock WHERE ol_w_id = $1 AND ol_d_id = $2 \
                 AND ol_o_id < $3 AND ol_o_id >= $4 AND s_w_id = $1 AND s_i_id = ol_i_id AND s_quantity < $5",
                &[w.into(), d.into(), next.into(), (next - 20).into(), threshold.into()],
            )?;
            Ok(Outcome::Commit)
        })?;
        Ok(Ran { done, skipped: 0 })
    }
}

/// Checks that a one-row answer came back (the warehouse exists).
fn int_or_real(rows: &[Vec<Value>], what: &str) -> Result<(), DbError> {
    match rows.first().and_then(|r| r.first()).and_then(Value::real) {
        Some(_) => Ok(()),
        None => Err(DbError::fatal(format!("{what}: no row"))),
    }
}
