//! A database kept by an earlier run (`--keep`), checked again: `iolab db check --dir DIR` after a crash
//! test (the machine, the server or iolab killed mid-run) asks whether what the database acknowledged
//! survived. The database is opened as it was left, nothing built, made or dropped: SQLite replays its WAL
//! when the file is opened, PostgreSQL's server runs its crash recovery before it accepts connections.
//! Then the engine's own integrity check where it has one for the whole database (SQLite's `PRAGMA
//! integrity_check`; PostgreSQL has none built in, and none is claimed), and, for a tpcc database, TPC-C's
//! four consistency conditions ([`crate::tpcc::check`]).

use crate::database::postgres::Postgres;
use crate::database::server::ServerOptions;
use crate::database::sqlite::{Sqlite, FILE_NAME};
use crate::database::{Conn, Database};
use crate::{DbError, WorkloadError};
use iolab_report::db::ConsistencyCheck;
use std::path::Path;
use std::sync::atomic::AtomicBool;

/// What the check of a kept database found (written as JSON by `iolab db check --json`).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct KeptCheck {
    /// `sqlite` or `postgres`.
    pub engine: &'static str,
    /// The engine's version.
    pub version: String,
    /// The workload whose tables it holds (`tpcc`, `tpch`, `ycsb`), when known.
    pub workload: Option<&'static str>,
    /// Each check, in order: the engine's own (condition 0) first, then the workload's.
    pub checks: Vec<ConsistencyCheck>,
    /// Every check passed.
    pub passed: bool,
    /// What the engine recovered when it opened the database, in words: the database was not closed
    /// cleanly (SQLite: a write-ahead log with frames beside the file; PostgreSQL: its log says "automatic
    /// recovery in progress"), or `None`.
    pub recovered: Option<String>,
}

impl KeptCheck {
    fn new(
        engine: &'static str,
        version: String,
        workload: Option<&'static str>,
        checks: Vec<ConsistencyCheck>,
    ) -> KeptCheck {
        let passed = checks.iter().all(|c| c.passed);
        KeptCheck { engine, version, workload, checks, passed, recovered: None }
    }
}

/// Opens the database kept in `dir` (SQLite's file, or a PostgreSQL data directory) and checks it. `stop`
/// raised ends a wait for the server.
pub fn check(dir: &Path, stop: &AtomicBool) -> Result<KeptCheck, WorkloadError> {
    if dir.join(FILE_NAME).is_file() {
        let wal_bytes = std::fs::metadata(dir.join(format!("{FILE_NAME}-wal"))).map_or(0, |m| m.len());
        let db = Sqlite::new(dir);
        let mut conn = db.connect()?;
        let mut checks = vec![sqlite_integrity(conn.as_mut())?];
        let workload = workload_of(conn.as_mut(), "SELECT name FROM sqlite_master WHERE type = 'table'")?;
        checks.extend(workload_checks(conn.as_mut(), workload)?);
        let mut found = KeptCheck::new("sqlite", db.version(), workload, checks);
        // A WAL header alone is 32 bytes; frames beside it are commits not yet checkpointed into the file.
        if wal_bytes > 32 {
            found.recovered =
                Some(format!("its write-ahead log held {wal_bytes} bytes of commits, replayed on open"));
        }
        return Ok(found);
    }
    if dir.join("pgdata").is_dir() {
        let options = ServerOptions { shared_buffers_bytes: 32 << 20, max_connections: 10 };
        let mut db = Postgres::existing(dir, &options, stop)?;
        let result = (|| {
            let mut conn = db.connect()?;
            let sql = format!(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = '{}'",
                crate::database::postgres::SCHEMA
            );
            let workload = workload_of(conn.as_mut(), &sql)?;
            let checks = workload_checks(conn.as_mut(), workload)?;
            Ok(KeptCheck::new("postgres", db.version(), workload, checks))
        })();
        let log = std::fs::read_to_string(dir.join("postgres.log")).unwrap_or_default();
        let recovered = log.contains("automatic recovery in progress").then(|| {
            "the server was not shut down cleanly: its crash recovery replayed the WAL (postgres.log)"
                .to_string()
        });
        let result = result.map(|found| KeptCheck { recovered, ..found });
        db.close()?;
        return result;
    }
    Err(WorkloadError::Setup(format!(
        "'{}' holds no database iolab kept (neither {FILE_NAME} nor pgdata/)\n  hint: keep one with `iolab db ... --dir {} --keep`",
        dir.display(),
        dir.display()
    )))
}

/// SQLite's own check of every page, index and table (condition 0).
fn sqlite_integrity(conn: &mut dyn Conn) -> Result<ConsistencyCheck, DbError> {
    let rows = conn.query("PRAGMA integrity_check", &[])?;
    let problems: Vec<String> = rows
        .iter("integrity_check")
        .filter_map(|r| r.text("integrity_check").ok().map(str::to_string))
        .filter(|line| line != "ok")
        .collect();
    Ok(ConsistencyCheck {
        condition: 0,
        rule: "SQLite's PRAGMA integrity_check: every page, index and table well formed".into(),
        passed: problems.is_empty(),
        violations: problems.len() as u64,
        example: problems.into_iter().next(),
    })
}

/// The workload whose tables the database holds, from their names (`sql` lists them, column 1).
fn workload_of(conn: &mut dyn Conn, sql: &str) -> Result<Option<&'static str>, DbError> {
    let names: Vec<String> =
        conn.query_text(sql)?.into_iter().filter_map(|r| r.into_iter().next().flatten()).collect();
    let has = |t: &str| names.iter().any(|n| n.eq_ignore_ascii_case(t));
    Ok(if has("warehouse") && has("order_line") {
        Some("tpcc")
    } else if has("lineitem") {
        Some("tpch")
    } else if has("usertable") {
        Some("ycsb")
    } else {
        None
    })
}

/// The workload's own conditions: TPC-C's four for a tpcc database; none for the others (their data has
/// no invariant the workload keeps).
fn workload_checks(conn: &mut dyn Conn, workload: Option<&str>) -> Result<Vec<ConsistencyCheck>, DbError> {
    match workload {
        Some("tpcc") => crate::tpcc::check::check_all(conn),
        _ => Ok(Vec::new()),
    }
}
