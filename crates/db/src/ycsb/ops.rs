//! The five operations of YCSB's CoreWorkload as one user runs them, each one transaction through the
//! crate's retry loop ([`crate::database::transaction`]): *read* (every field of one record), *update* (one
//! field, YCSB's `writeallfields=false`), *insert* (the next record number, shared by the users), *scan*
//! (up to `max_scan` records from a key on, the length uniform), and *read-modify-write* (a read and an
//! update of the same record; YCSB runs them as two statements, here they are one transaction so the
//! record cannot change between them).
//!
//! An operation draws everything first (the kind from the mix, the record, the field, the new value), so a
//! retry after a busy database runs the same operation again.

use super::keys::{self, Chooser};
use super::load::{self, FIELDS};
use crate::database::{transaction, Conn, TxEnd, TxKind, TxOutcome};
use crate::driver::{Client, Performed};
use crate::{DbError, Value};
use iolab_rng::Rng;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// An operation of the mix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum YcsbOp {
    /// Every field of one record.
    Read,
    /// One field of one record.
    Update,
    /// A new record.
    Insert,
    /// Records from a key on.
    Scan,
    /// A read and an update of one record, in one transaction.
    ReadModifyWrite,
}

impl YcsbOp {
    /// Every kind, in the document's order.
    pub const ALL: [YcsbOp; 5] =
        [YcsbOp::Read, YcsbOp::Update, YcsbOp::Insert, YcsbOp::Scan, YcsbOp::ReadModifyWrite];

    /// Its place in [`YcsbOp::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// Its name as documents say it.
    pub fn name(self) -> &'static str {
        NAMES[self.index()]
    }
}

/// The kinds' names, in [`YcsbOp::ALL`]'s order.
pub const NAMES: [&str; 5] = ["read", "update", "insert", "scan", "read_modify_write"];

/// What the users share: the records there are (loaded, then inserted and committed) and the next record
/// number an insert takes.
#[derive(Debug)]
pub struct Shared {
    /// Records that exist: the loaded ones and the inserts committed.
    pub count: AtomicU64,
    /// The next record number to insert.
    pub next: AtomicU64,
}

impl Shared {
    /// After a load of `records`.
    pub fn new(records: u64) -> Arc<Shared> {
        Arc::new(Shared { count: AtomicU64::new(records), next: AtomicU64::new(records) })
    }
}

/// One user of a YCSB run.
pub struct User {
    rng: Rng,
    /// Cumulative percents of [`YcsbOp::ALL`], the last 100.
    mix: [u32; 5],
    chooser: Chooser,
    max_scan: u64,
    shared: Arc<Shared>,
    read_sql: String,
    scan_sql: String,
    update_sql: [String; FIELDS],
    insert_sql: String,
}

/// The field list of a read and a scan.
fn fields() -> String {
    (0..FIELDS).map(|i| format!("field{i}")).collect::<Vec<_>>().join(", ")
}

impl User {
    /// User `index` of a run seeded `seed`, with the mix's percents (in [`YcsbOp::ALL`]'s order, summing to
    /// 100), its chooser and the scans' longest length.
    pub fn new(
        index: u32,
        seed: u64,
        pcts: [u32; 5],
        chooser: Chooser,
        max_scan: u64,
        shared: Arc<Shared>,
    ) -> User {
        let mut mix = pcts;
        for i in 1..mix.len() {
            mix[i] += mix[i - 1];
        }
        assert_eq!(mix[4], 100, "a mix's percents sum to 100: {pcts:?}");
        let params = (2..=FIELDS + 1).map(|i| format!("${i}")).collect::<Vec<_>>().join(", ");
        User {
            rng: Rng::for_worker(seed, index + 1),
            mix,
            chooser,
            max_scan: max_scan.max(1),
            shared,
            read_sql: format!("SELECT {} FROM usertable WHERE ycsb_key = $1", fields()),
            scan_sql: format!(
                "SELECT ycsb_key, {} FROM usertable WHERE ycsb_key >= $1 ORDER BY ycsb_key LIMIT $2",
                fields()
            ),
            update_sql: std::array::from_fn(|i| {
                format!("UPDATE usertable SET field{i} = $1 WHERE ycsb_key = $2")
            }),
            insert_sql: format!("INSERT INTO usertable (ycsb_key, {}) VALUES ($1, {params})", fields()),
        }
    }

    /// The next kind, from the mix.
    fn draw(&mut self) -> YcsbOp {
        let roll = self.rng.below(100) as u32;
        let at = self.mix.iter().position(|&c| roll < c).unwrap_or(4);
        YcsbOp::ALL[at]
    }

    /// An existing record's key, as the chooser picks it.
    fn existing(&mut self) -> Value {
        let count = self.shared.count.load(Ordering::Relaxed);
        Value::Text(keys::key(self.chooser.next(&mut self.rng, count)))
    }
}

impl Client for User {
    fn next(&mut self, conn: &mut dyn Conn) -> Result<Performed, DbError> {
        let kind = self.draw();
        let mut retries = 0;
        let done = match kind {
            YcsbOp::Read => {
                let k = self.existing();
                transaction(conn, TxKind::Read, &mut retries, |c| {
                    c.query(&self.read_sql, std::slice::from_ref(&k)).map(|_| TxOutcome::Commit)
                })?
            }
            YcsbOp::Update => {
                let (k, f, v) =
                    (self.existing(), self.rng.below(FIELDS as u64) as usize, load::field(&mut self.rng));
                let params = [Value::Text(v), k];
                let sql = &self.update_sql[f];
                transaction(conn, TxKind::Write, &mut retries, |c| {
                    c.execute(sql, &params).map(|_| TxOutcome::Commit)
                })?
            }
            YcsbOp::Insert => {
                let n = self.shared.next.fetch_add(1, Ordering::Relaxed);
                let row = load::row(n, &mut self.rng);
                let sql = &self.insert_sql;
                let done = transaction(conn, TxKind::Write, &mut retries, |c| {
                    c.execute(sql, &row).map(|_| TxOutcome::Commit)
                })?;
                if done == TxEnd::Committed {
                    self.shared.count.fetch_add(1, Ordering::Relaxed);
                }
                done
            }
            YcsbOp::Scan => {
                let (k, len) = (self.existing(), 1 + self.rng.below(self.max_scan));
                let params = [k, Value::Int(len as i64)];
                transaction(conn, TxKind::Read, &mut retries, |c| {
                    c.query(&self.scan_sql, &params).map(|_| TxOutcome::Commit)
                })?
            }
            YcsbOp::ReadModifyWrite => {
                let (k, f, v) =
                    (self.existing(), self.rng.below(FIELDS as u64) as usize, load::field(&mut self.rng));
                let params = [Value::Text(v), k.clone()];
                let (read, update) = (&self.read_sql, &self.update_sql[f]);
                transaction(conn, TxKind::Write, &mut retries, |c| {
                    c.query(read, std::slice::from_ref(&k))?;
                    c.execute(update, &params).map(|_| TxOutcome::Commit)
                })?
            }
        };
        Ok(Performed { kind: kind.index(), done, retries, extra: 0, headline: false })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ycsb::keys::Distribution;

    #[test]
    fn the_mix_is_drawn_in_its_shares() {
        let shared = Shared::new(10);
        let mut u = User::new(0, 1, [50, 50, 0, 0, 0], Chooser::new(Distribution::Uniform, 10), 100, shared);
        let mut counts = [0u32; 5];
        for _ in 0..20_000 {
            counts[u.draw().index()] += 1;
        }
        assert!(counts[0].abs_diff(10_000) < 400 && counts[2..].iter().all(|&c| c == 0), "{counts:?}");
        assert_eq!(NAMES.iter().zip(YcsbOp::ALL).filter(|(n, k)| **n == k.name()).count(), 5);
    }
}
