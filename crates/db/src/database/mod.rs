//! The engine seam: what a workload needs of a database, and nothing more.
//!
//! A workload writes its SQL once, with `$1, $2, ...` parameters, in the subset SQLite and PostgreSQL share
//! (and MariaDB would: `RETURNING` aside, which MariaDB has for DELETE and INSERT since 10.5). What differs
//! is in a [`Dialect`]: how a table is declared (`WITHOUT ROWID`), whether a read locks (`FOR UPDATE`),
//! whether keys are added after the load. An [`Database`] opens connections and describes itself; a [`Conn`]
//! runs statements, transactions and bulk loads, and answers a query with [`Rows`], read by column name.
//! [`transaction`] is the one retry loop.
//!
//! Adding MariaDB/InnoDB: a `Conn` over the `mysql` crate (`?` parameters: rewrite `$N` as the SQLite engine
//! does), a `Dialect` (`ENGINE=InnoDB`, `FOR UPDATE`, keys inline), retryable errors 1213 (deadlock) and
//! 1205 (lock wait timeout), and for a private server a start and stop like [`server`]'s (`mariadb-install-db`
//! into the directory, `mariadbd --skip-networking --socket=...`).

mod connect;
pub mod postgres;
pub mod rows;
pub mod server;
pub mod sqlite;
pub mod url;

pub use rows::{ColumnNames, Row, Rows};

use crate::{DbError, Value, WorkloadError};
use std::path::Path;

/// The database engine a run uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DatabaseKind {
    /// SQLite, embedded: one file in WAL mode, run inside iolab.
    Sqlite,
    /// PostgreSQL: a private server iolab starts, or the user's (`url`).
    Postgres,
}

impl DatabaseKind {
    /// Parses `--database`'s value (`sqlite`, `postgres` or `postgresql`); the error quotes it.
    pub fn parse(text: &str) -> Result<DatabaseKind, WorkloadError> {
        match text.trim() {
            "sqlite" => Ok(DatabaseKind::Sqlite),
            "postgres" | "postgresql" => Ok(DatabaseKind::Postgres),
            other => Err(WorkloadError::Setup(format!(
                "invalid value '{other}' for '--database': expected sqlite or postgres"
            ))),
        }
    }

    /// Its name: `sqlite` or `postgres`.
    pub fn name(self) -> &'static str {
        match self {
            DatabaseKind::Sqlite => "sqlite",
            DatabaseKind::Postgres => "postgres",
        }
    }
}

/// Whether a transaction writes: SQLite takes its write lock at the start of a writing one
/// (`BEGIN IMMEDIATE`), so two writers never deadlock upgrading a read lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TxKind {
    /// Reads only.
    Read,
    /// Reads and writes.
    Write,
}

/// How an engine's SQL differs from the shared subset.
#[derive(Clone, Copy, Debug)]
pub struct Dialect {
    /// Appended to a `SELECT` that reads a row the transaction then updates (`" FOR UPDATE"`, or `""`
    /// where the whole database is locked for writing anyway).
    pub for_update: &'static str,
    /// Appended to a `CREATE TABLE` with a primary key (`" WITHOUT ROWID"` in SQLite: the table is its
    /// key's B-tree, as InnoDB's and the TPC-C implementations' clustered tables are).
    pub keyed_table_options: &'static str,
    /// Primary keys are added after the load (PostgreSQL: faster than maintaining them row by row); else
    /// they are declared with the table.
    pub keys_after_load: bool,
    /// More than one connection can load at once (PostgreSQL); SQLite has one writer.
    pub parallel_load: bool,
}

/// A connection: one user's session.
pub trait Conn: Send {
    /// Runs a statement; returns the rows it changed.
    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64, DbError>;
    /// Runs a query; returns its rows, under its columns' names.
    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Rows, DbError>;
    /// Runs statements without parameters (DDL), separated by semicolons.
    fn batch(&mut self, sql: &str) -> Result<(), DbError>;
    /// Starts a transaction.
    fn begin(&mut self, kind: TxKind) -> Result<(), DbError>;
    /// Commits it.
    fn commit(&mut self) -> Result<(), DbError>;
    /// Rolls it back.
    fn rollback(&mut self) -> Result<(), DbError>;
    /// Loads `rows` into `table` (the fastest way the engine has: COPY, or prepared INSERTs in one
    /// transaction), committed when it returns.
    fn load(&mut self, table: &str, columns: &[&str], rows: &[Vec<Value>]) -> Result<(), DbError>;
    /// Makes a bulk load cheaper on this connection (no fsync per commit), or undoes that (`false`).
    fn loading(&mut self, on: bool) -> Result<(), DbError>;
    /// Runs a query without parameters and returns its rows as text (NULL as `None`), whatever the
    /// columns' types (an analytics answer's decimals and dates included). Default: [`Conn::query`]'s
    /// values written out.
    fn query_text(&mut self, sql: &str) -> Result<Vec<Vec<Option<String>>>, DbError> {
        let rows = self.query(sql, &[])?;
        Ok(rows
            .into_cells()
            .into_iter()
            .map(|r| {
                r.into_iter()
                    .map(|v| match v {
                        Value::Null => None,
                        Value::Int(i) => Some(i.to_string()),
                        Value::Real(x) => Some(x.to_string()),
                        Value::Text(s) => Some(s),
                    })
                    .collect()
            })
            .collect())
    }
}

/// A database: where connections come from.
pub trait Database: Send + Sync {
    /// `sqlite` or `postgres`.
    fn name(&self) -> &'static str;
    /// How its SQL differs.
    fn dialect(&self) -> Dialect;
    /// A new connection, ready for the workload's tables.
    fn connect(&self) -> Result<Box<dyn Conn>, WorkloadError>;
    /// The engine's version, as it reports it.
    fn version(&self) -> String;
    /// The settings that decide durability and caching, as (name, value).
    fn settings(&self) -> Vec<(String, String)>;
    /// The directory of the database's files, when iolab keeps them.
    fn dir(&self) -> Option<&Path>;
    /// The user's server, its password left out, when it is the user's.
    fn url(&self) -> Option<String>;
    /// The account a private server runs as, in words (`postgres (uid 101)`).
    fn server_user(&self) -> Option<String>;
    /// Ends the engine: drops what iolab made on a user's server (unless kept), stops a private server.
    /// Called once; dropping an engine without it does the same, less carefully.
    fn close(&mut self) -> Result<(), WorkloadError>;
    /// The processes of a private server iolab started, known by construction ([`server::Server::processes`]);
    /// empty for an engine that runs inside iolab (SQLite) or a server of the user's. Default: none.
    fn server_processes(&self) -> Vec<u32> {
        Vec::new()
    }
    /// Makes the database's files whole: what the engine holds in its log or memory is written into them
    /// (SQLite: the write-ahead log checkpointed and emptied; PostgreSQL: CHECKPOINT). Default: nothing.
    fn checkpoint(&self) -> Result<(), WorkloadError> {
        Ok(())
    }
    /// Copies the database into `to` (an empty directory iolab made) the engine's own way, durable on
    /// return; returns the method's name (`sqlite-backup`, `pg_basebackup`). A raised `stop` ends it with
    /// [`WorkloadError::Interrupted`]. Default: refused.
    fn copy_to(
        &self,
        _to: &Path,
        _stop: &std::sync::atomic::AtomicBool,
    ) -> Result<&'static str, WorkloadError> {
        Err(WorkloadError::Setup(format!("the {} engine cannot copy its database", self.name())))
    }
}

/// How a transaction body ended, when the database did not refuse it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TxOutcome {
    /// Commit it.
    Commit,
    /// Roll it back on purpose (new-order's unused item).
    Rollback,
}

/// Retries after which a transaction is given up (counted as failed).
pub const MAX_RETRIES: u32 = 100;

/// What [`transaction`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TxEnd {
    /// Committed.
    Committed,
    /// Rolled back on purpose.
    RolledBack,
    /// Still refused after [`MAX_RETRIES`] retries.
    GaveUp,
}

/// Runs `body` as one transaction of `kind`, again from the start (after a rollback) while the database
/// answers with a retryable error, adding one to `retries` each time; a growing pause (up to 10 ms)
/// between tries keeps retries from spinning. A non-retryable error rolls back and is returned.
pub fn transaction(
    conn: &mut dyn Conn,
    kind: TxKind,
    retries: &mut u64,
    mut body: impl FnMut(&mut dyn Conn) -> Result<TxOutcome, DbError>,
) -> Result<TxEnd, DbError> {
    for attempt in 0..=MAX_RETRIES {
        if attempt > 0 {
            *retries += 1;
            std::thread::sleep(std::time::Duration::from_micros(100 * (attempt as u64).min(100)));
        }
        let result = conn.begin(kind).and_then(|()| body(conn)).and_then(|outcome| match outcome {
            TxOutcome::Commit => conn.commit().map(|()| TxEnd::Committed),
            TxOutcome::Rollback => conn.rollback().map(|()| TxEnd::RolledBack),
        });
        match result {
            Ok(done) => return Ok(done),
            Err(e) => {
                // A failed COMMIT has ended the transaction already; a second ROLLBACK is harmless.
                let _ = conn.rollback();
                if !e.retryable {
                    return Err(e);
                }
            }
        }
    }
    Ok(TxEnd::GaveUp)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A connection that fails the first `busy` commits with a retryable error.
    struct Flaky {
        busy: u32,
        began: u32,
        rolled_back: u32,
    }

    impl Conn for Flaky {
        fn execute(&mut self, _: &str, _: &[Value]) -> Result<u64, DbError> {
            Ok(0)
        }
        fn query(&mut self, _: &str, _: &[Value]) -> Result<Rows, DbError> {
            Ok(Rows::default())
        }
        fn batch(&mut self, _: &str) -> Result<(), DbError> {
            Ok(())
        }
        fn begin(&mut self, _: TxKind) -> Result<(), DbError> {
            self.began += 1;
            Ok(())
        }
        fn commit(&mut self) -> Result<(), DbError> {
            if self.busy > 0 {
                self.busy -= 1;
                return Err(DbError { retryable: true, message: "busy".into() });
            }
            Ok(())
        }
        fn rollback(&mut self) -> Result<(), DbError> {
            self.rolled_back += 1;
            Ok(())
        }
        fn load(&mut self, _: &str, _: &[&str], _: &[Vec<Value>]) -> Result<(), DbError> {
            Ok(())
        }
        fn loading(&mut self, _: bool) -> Result<(), DbError> {
            Ok(())
        }
    }

    #[test]
    fn transaction_retries_busy_commits_and_counts_them() {
        let mut c = Flaky { busy: 3, began: 0, rolled_back: 0 };
        let mut retries = 0;
        let done = transaction(&mut c, TxKind::Write, &mut retries, |_| Ok(TxOutcome::Commit)).unwrap();
        assert_eq!((done, retries, c.began), (TxEnd::Committed, 3, 4));
    }

    #[test]
    fn transaction_gives_up_after_the_limit_and_returns_fatal_errors_at_once() {
        let mut c = Flaky { busy: u32::MAX, began: 0, rolled_back: 0 };
        let mut retries = 0;
        let done = transaction(&mut c, TxKind::Write, &mut retries, |_| Ok(TxOutcome::Commit)).unwrap();
        assert_eq!((done, retries), (TxEnd::GaveUp, MAX_RETRIES as u64));
        let mut c = Flaky { busy: 0, began: 0, rolled_back: 0 };
        let e = transaction(&mut c, TxKind::Read, &mut retries, |_| Err(DbError::fatal("no such table")));
        assert_eq!(e.unwrap_err().message, "no such table");
        assert_eq!((c.began, c.rolled_back), (1, 1));
    }

    #[test]
    fn an_intended_rollback_is_not_a_retry() {
        let mut c = Flaky { busy: 0, began: 0, rolled_back: 0 };
        let mut retries = 0;
        let done = transaction(&mut c, TxKind::Write, &mut retries, |_| Ok(TxOutcome::Rollback)).unwrap();
        assert_eq!((done, retries, c.rolled_back), (TxEnd::RolledBack, 0, 1));
    }
}
