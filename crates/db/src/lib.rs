//! iolab-db: real databases in the loop. A workload runs on a real database engine whose files live on the
//! storage under test, so its numbers are an application's (new orders per minute, transaction response
//! times) with the storage's own view beside them (the block devices' counters over the same window).
//!
//! - [`engine`] is the seam between a workload and a database: an [`Engine`] builds connections ([`Conn`]:
//!   statements with `$N` parameters, transactions, bulk load), says how its SQL differs ([`Dialect`]) and
//!   cleans up after itself; [`engine::transaction`] runs a transaction body again when the database answers
//!   busy, a serialization failure or a deadlock, and counts each retry. Two engines: [`engine::sqlite`]
//!   (a file in WAL mode with real fsyncs) and [`engine::postgres`] (a private server iolab starts,
//!   [`engine::server`], or the user's own through a URL). A third (MariaDB/InnoDB) is a `Conn`, a
//!   `Dialect` and, for a private server, a start and stop like `server`'s.
//! - [`dir`] is the database's directory: made by iolab, marked as its own, removed at exit and on signals.
//! - [`tpcc`] is a workload derived from the TPC-C specification: build, run, consistency checks, and the
//!   `iolab.db/1` document (`iolab_report::db`).
//!
//! Nothing here prints or installs a signal handler: the caller passes a stop flag and an observer for
//! notices, and calls [`cleanup_on_exit`] from its own handler when it must exit at once.

#![deny(missing_docs)]

pub mod dir;
pub mod engine;
mod error;
pub mod tpcc;
mod value;

pub use engine::{Conn, Dialect, Engine, TxKind};
pub use error::{DbError, Error};
pub use value::Value;

/// What an exit that skips destructors must undo (a second Ctrl-C): private database servers are stopped
/// at once (SIGQUIT: PostgreSQL's immediate shutdown) and waited for a few seconds, then the database
/// directories iolab made are removed. Safe to call from any thread, and more than once.
pub fn cleanup_on_exit() {
    engine::server::cleanup_on_exit();
    dir::cleanup_on_exit();
}
