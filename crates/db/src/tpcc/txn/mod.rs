//! The five transactions (clauses 2.4 to 2.8), as one user (a *terminal*) runs them, one file each:
//! [`new_order`], [`payment`], [`order_status`], [`delivery`] and [`stock_level`], each noting the
//! implementation choices made there.
//!
//! Each transaction draws its inputs first (so a retry after a busy database or a deadlock runs the same
//! transaction again) and then runs its statements through [`crate::database::transaction`], reading what
//! they return by column name ([`crate::database::Rows`]). What the five share is here: the [`Terminal`]
//! (home warehouse, random stream, the run's NURand constants), what one transaction did ([`Ran`]), the
//! draws of another warehouse and of a customer, a customer found by last name, and
//! [`Terminal::perform`], which runs one transaction of a [`TxType`].

pub mod delivery;
pub mod new_order;
pub mod order_status;
pub mod payment;
pub mod stock_level;

use super::load::CUSTOMERS;
use super::rand::{last_name, nurand, uniform, Constants, TxType, A_C_ID, A_C_LAST};
use crate::database::{Conn, Dialect, TxEnd};
use crate::DbError;
use iolab_rng::Rng;

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
    pub done: TxEnd,
    /// Districts a delivery skipped (no new order waiting).
    pub skipped: u64,
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

    /// Runs one transaction of `kind` on `conn`, adding its retries to `retries`.
    pub fn perform(&mut self, kind: TxType, conn: &mut dyn Conn, retries: &mut u64) -> Result<Ran, DbError> {
        match kind {
            TxType::NewOrder => self.new_order(conn, retries),
            TxType::Payment => self.payment(conn, retries),
            TxType::OrderStatus => self.order_status(conn, retries),
            TxType::Delivery => self.delivery(conn, retries),
            TxType::StockLevel => self.stock_level(conn, retries),
        }
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

    /// The id of the customer named `last` in a district: the one at position n/2 rounded up of those
    /// sorted by first name (2.5.2.2; Payment and Order-Status).
    fn customer_by_name(conn: &mut dyn Conn, w: i64, d: i64, last: &str) -> Result<i64, DbError> {
        let rows = conn.query(
            "SELECT c_id FROM customer WHERE c_w_id = $1 AND c_d_id = $2 AND c_last = $3 ORDER BY c_first",
            &[w.into(), d.into(), last.into()],
        )?;
        if rows.is_empty() {
            return Err(DbError::fatal(format!("no customer named {last} in warehouse {w}, district {d}")));
        }
        rows.row((rows.len() - 1) / 2, "the customer by last name")?.int("c_id")
    }
}
