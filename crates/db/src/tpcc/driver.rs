//! The run, on the crate's closed loop ([`crate::driver`]): one user per [`Terminal`], each running the
//! five transactions back to back (no keying or think time, as HammerDB runs by default) in the mix dealt by
//! its [`Deck`]; NOPM and TPM as the headline figures; the database's own count of new orders,
//! `sum(d_next_o_id)` (HammerDB's NOPM), read at both edges of the window.

use super::rand::{Deck, TxType};
use super::txn::Terminal;
use crate::database::{Conn, Database, TxEnd};
use crate::driver::{self, Client, Performed, Spec};
use crate::workload::{Figure, WorkloadObserver};
use crate::{DbError, WorkloadError};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

pub use crate::driver::{Measured, TxStats};

/// What the run is asked.
#[derive(Clone, Debug)]
pub struct RunSpec {
    /// Users.
    pub users: u32,
    /// Warehouses in the database.
    pub warehouses: u64,
    /// Items in the database.
    pub items: u64,
    /// The seed.
    pub seed: u64,
    /// Ramp before the window.
    pub ramp: Duration,
    /// The window asked for.
    pub duration: Duration,
}

/// The five transactions' names, in [`TxType::ALL`]'s order.
const KINDS: [&str; 5] = ["new_order", "payment", "order_status", "delivery", "stock_level"];

/// The headline figures of a tpcc run so far: NOPM and TPM over the window's `measured_s` seconds.
fn figures(completed: u64, new_orders: u64, measured_s: f64) -> Vec<Figure> {
    let rate = |n: u64| (measured_s > 0.0).then(|| n as f64 * 60.0 / measured_s);
    vec![
        Figure {
            shown: "NOPM",
            metric: "nopm",
            help: "new orders per minute over the measured window so far",
            value: rate(new_orders),
        },
        Figure {
            shown: "TPM",
            metric: "tpm",
            help: "transactions per minute over the measured window so far, every type, committed or rolled back",
            value: rate(completed),
        },
    ]
}

/// Reads `sum(d_next_o_id)`.
fn next_order_ids(conn: &mut dyn Conn) -> Option<u64> {
    let rows = conn.query("SELECT CAST(sum(d_next_o_id) AS bigint) AS next_ids FROM district", &[]).ok()?;
    rows.first("the next order ids").and_then(|r| r.int("next_ids")).ok().map(|v| v as u64)
}

/// One user: a terminal and its deck.
struct User {
    term: Terminal,
    deck: Deck,
}

impl Client for User {
    fn next(&mut self, conn: &mut dyn Conn) -> Result<Performed, DbError> {
        let kind = self.deck.draw(self.term.rng());
        let mut retries = 0;
        let ran = self.term.perform(kind, conn, &mut retries)?;
        let headline = kind == TxType::NewOrder && ran.done == TxEnd::Committed;
        Ok(Performed { kind: kind.index(), done: ran.done, retries, extra: ran.skipped, headline })
    }
}

/// Runs the users for the ramp and the window on `database` (the devices under its directory read at the
/// window's edges); `stop` is the caller's stop flag, `observer` told where the run is.
pub fn run(
    database: &dyn Database,
    spec: &RunSpec,
    stop: &AtomicBool,
    observer: &dyn WorkloadObserver,
) -> Result<Measured, WorkloadError> {
    debug_assert!(TxType::ALL.iter().zip(KINDS).all(|(t, k)| t.name() == k && KINDS[t.index()] == k));
    let dialect = database.dialect();
    let users = (0..spec.users)
        .map(|i| User {
            term: Terminal::new(i, spec.warehouses, spec.items, spec.seed, &dialect),
            deck: Deck::new(),
        })
        .collect();
    let run =
        Spec { ramp: spec.ramp, duration: spec.duration, kinds: &KINDS, figures, edge: Some(next_order_ids) };
    driver::run(database, &run, users, stop, observer)
}
