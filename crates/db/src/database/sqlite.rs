//! SQLite: the embedded engine (the bundled library, nothing to install). One database file in the
//! database's directory, in WAL mode with `synchronous=FULL`, so every commit is a real fsync of the log and
//! every checkpoint one of the database file; one connection per user, each waiting up to
//! [`BUSY_TIMEOUT_MS`] for the write lock (SQLite has one writer at a time) before its transaction is
//! retried and the retry counted. A query's columns' names (rusqlite's `Statement::column_name`) are kept per
//! statement, so its answers share them.

use super::{ColumnNames, Conn, Database, Dialect, Rows, TxKind};
use crate::{DbError, Value, WorkloadError};
use rusqlite::types::{ToSqlOutput, ValueRef};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// How long a connection waits for the write lock before SQLite answers busy.
pub const BUSY_TIMEOUT_MS: u64 = 5_000;

/// The database file's name in the directory.
pub const FILE_NAME: &str = "tpcc.sqlite";

/// A SQLite database in a directory.
#[derive(Debug)]
pub struct Sqlite {
    dir: PathBuf,
    file: PathBuf,
}

impl Sqlite {
    /// The database in `dir` (made by the caller; the file is created by the first connection).
    pub fn new(dir: &Path) -> Sqlite {
        Sqlite { dir: dir.to_path_buf(), file: dir.join(FILE_NAME) }
    }
}

impl Database for Sqlite {
    fn name(&self) -> &'static str {
        "sqlite"
    }

    fn dialect(&self) -> Dialect {
        Dialect {
            for_update: "",
            keyed_table_options: " WITHOUT ROWID",
            keys_after_load: false,
            parallel_load: false,
        }
    }

    fn connect(&self) -> Result<Box<dyn Conn>, WorkloadError> {
        let conn = rusqlite::Connection::open(&self.file).map_err(|e| {
            WorkloadError::Setup(format!("cannot open SQLite database '{}': {e}", self.file.display()))
        })?;
        conn.busy_timeout(std::time::Duration::from_millis(BUSY_TIMEOUT_MS)).map_err(db_error)?;
        // WAL is kept in the file; synchronous is per connection.
        conn.pragma_update(None, "journal_mode", "WAL").map_err(db_error)?;
        conn.pragma_update(None, "synchronous", "FULL").map_err(db_error)?;
        conn.set_prepared_statement_cache_capacity(64);
        Ok(Box::new(SqliteConn { conn, columns: HashMap::new() }))
    }

    fn version(&self) -> String {
        format!("SQLite {}", rusqlite::version())
    }

    fn settings(&self) -> Vec<(String, String)> {
        vec![
            ("journal_mode".into(), "wal".into()),
            ("synchronous".into(), "full".into()),
            ("busy_timeout".into(), format!("{BUSY_TIMEOUT_MS} ms")),
            ("cache_size".into(), "2 MB per connection (the default)".into()),
        ]
    }

    fn dir(&self) -> Option<&Path> {
        Some(&self.dir)
    }

    fn url(&self) -> Option<String> {
        None
    }

    fn server_user(&self) -> Option<String> {
        None
    }

    fn close(&mut self) -> Result<(), WorkloadError> {
        Ok(())
    }

    fn checkpoint(&self) -> Result<(), WorkloadError> {
        let conn = rusqlite::Connection::open(&self.file).map_err(|e| WorkloadError::Db(db_error(e)))?;
        conn.busy_timeout(std::time::Duration::from_millis(BUSY_TIMEOUT_MS)).map_err(db_error)?;
        conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(())).map_err(db_error)?;
        Ok(())
    }

    /// SQLite's online backup API: the database copied page by page ([`BACKUP_PAGES_PER_STEP`] at a time)
    /// into `to/`[`FILE_NAME`] through a connection with `synchronous=FULL`, whose last step commits and
    /// syncs the copy.
    fn copy_to(
        &self,
        to: &Path,
        stop: &std::sync::atomic::AtomicBool,
    ) -> Result<&'static str, WorkloadError> {
        use rusqlite::backup::{Backup, StepResult};
        let src = rusqlite::Connection::open(&self.file).map_err(|e| WorkloadError::Db(db_error(e)))?;
        let target = to.join(FILE_NAME);
        let mut dst = rusqlite::Connection::open(&target).map_err(|e| {
            WorkloadError::Setup(format!("cannot create SQLite database '{}': {e}", target.display()))
        })?;
        dst.pragma_update(None, "synchronous", "FULL").map_err(db_error)?;
        {
            let backup = Backup::new(&src, &mut dst).map_err(db_error)?;
            loop {
                if stop.load(std::sync::atomic::Ordering::Relaxed) {
                    return Err(WorkloadError::Interrupted);
                }
                match backup.step(BACKUP_PAGES_PER_STEP).map_err(db_error)? {
                    StepResult::Done => break,
                    StepResult::More => {}
                    // Another connection holds a lock: wait a little, as the backup API asks.
                    _ => std::thread::sleep(std::time::Duration::from_millis(5)),
                }
            }
        }
        dst.close().map_err(|(_, e)| db_error(e))?;
        Ok("sqlite-backup")
    }
}

/// Pages each step of a backup copies (4 MiB of 4 KiB pages).
pub const BACKUP_PAGES_PER_STEP: std::os::raw::c_int = 1024;

/// One connection.
struct SqliteConn {
    conn: rusqlite::Connection,
    /// Each query's columns' names, by its SQL (as SQLite reads it).
    columns: HashMap<String, ColumnNames>,
}

/// Whether SQLite's answer means "try again": the lock was not had within the busy timeout.
fn db_error(e: rusqlite::Error) -> DbError {
    let retryable = matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseBusy) | Some(rusqlite::ErrorCode::DatabaseLocked)
    );
    DbError { retryable, message: format!("SQLite: {e}") }
}

/// `$N` parameters as SQLite's `?N` (SQLite reads `$1` as a *named* parameter, numbered by first use).
fn sqlite_params(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '$' && chars.peek().is_some_and(char::is_ascii_digit) {
            out.push('?');
        } else {
            out.push(c);
        }
    }
    out
}

struct Param<'a>(&'a Value);

impl rusqlite::ToSql for Param<'_> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(match self.0 {
            Value::Null => ToSqlOutput::Borrowed(ValueRef::Null),
            Value::Int(v) => ToSqlOutput::Borrowed(ValueRef::Integer(*v)),
            Value::Real(v) => ToSqlOutput::Borrowed(ValueRef::Real(*v)),
            Value::Text(s) => ToSqlOutput::Borrowed(ValueRef::Text(s.as_bytes())),
        })
    }
}

fn cell(v: ValueRef<'_>) -> Value {
    match v {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => Value::Int(i),
        ValueRef::Real(r) => Value::Real(r),
        ValueRef::Text(t) | ValueRef::Blob(t) => Value::Text(String::from_utf8_lossy(t).into_owned()),
    }
}

/// Whether `columns` are still `st`'s columns' names (a table may have changed under a `SELECT *`).
fn same_columns(st: &rusqlite::Statement<'_>, columns: &ColumnNames) -> bool {
    st.column_count() == columns.len()
        && columns.iter().enumerate().all(|(i, c)| st.column_name(i).is_ok_and(|n| n == c))
}

/// `st`'s columns' names.
fn column_names(st: &rusqlite::Statement<'_>) -> ColumnNames {
    st.column_names().into_iter().map(str::to_string).collect()
}

impl SqliteConn {
    fn statement(&self, sql: &str) -> Result<rusqlite::CachedStatement<'_>, DbError> {
        self.conn.prepare_cached(&sqlite_params(sql)).map_err(db_error)
    }
}

impl Conn for SqliteConn {
    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64, DbError> {
        let mut st = self.statement(sql)?;
        let n = st.execute(rusqlite::params_from_iter(params.iter().map(Param))).map_err(db_error)?;
        Ok(n as u64)
    }

    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Rows, DbError> {
        let text = sqlite_params(sql);
        let mut st = self.conn.prepare_cached(&text).map_err(db_error)?;
        let columns = match self.columns.get(&text) {
            Some(known) if same_columns(&st, known) => known.clone(),
            _ => {
                let made = column_names(&st);
                self.columns.insert(text, made.clone());
                made
            }
        };
        let mut rows = st.query(rusqlite::params_from_iter(params.iter().map(Param))).map_err(db_error)?;
        let mut out = Vec::new();
        while let Some(row) = rows.next().map_err(db_error)? {
            let mut cells = Vec::with_capacity(columns.len());
            for i in 0..columns.len() {
                cells.push(cell(row.get_ref(i).map_err(db_error)?));
            }
            out.push(cells);
        }
        Ok(Rows::new(columns, out))
    }

    fn batch(&mut self, sql: &str) -> Result<(), DbError> {
        self.conn.execute_batch(sql).map_err(db_error)
    }

    fn begin(&mut self, kind: TxKind) -> Result<(), DbError> {
        self.conn
            .execute_batch(match kind {
                TxKind::Read => "BEGIN DEFERRED",
                TxKind::Write => "BEGIN IMMEDIATE",
            })
            .map_err(db_error)
    }

    fn commit(&mut self) -> Result<(), DbError> {
        self.conn.execute_batch("COMMIT").map_err(db_error)
    }

    fn rollback(&mut self) -> Result<(), DbError> {
        if self.conn.is_autocommit() {
            return Ok(());
        }
        self.conn.execute_batch("ROLLBACK").map_err(db_error)
    }

    fn load(&mut self, table: &str, columns: &[&str], rows: &[Vec<Value>]) -> Result<(), DbError> {
        let marks: Vec<String> = (1..=columns.len()).map(|i| format!("?{i}")).collect();
        let sql = format!("INSERT INTO {table} ({}) VALUES ({})", columns.join(", "), marks.join(", "));
        self.begin(TxKind::Write)?;
        let result = (|| {
            let mut st = self.conn.prepare_cached(&sql).map_err(db_error)?;
            for row in rows {
                st.execute(rusqlite::params_from_iter(row.iter().map(Param))).map_err(db_error)?;
            }
            Ok(())
        })();
        match result {
            Ok(()) => self.commit(),
            Err(e) => {
                let _ = self.rollback();
                Err(e)
            }
        }
    }

    fn loading(&mut self, on: bool) -> Result<(), DbError> {
        self.conn.pragma_update(None, "synchronous", if on { "OFF" } else { "FULL" }).map_err(db_error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_query_s_answers_share_its_column_names() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = Sqlite::new(dir.path()).connect().unwrap();
        c.batch("CREATE TABLE t (a integer PRIMARY KEY); INSERT INTO t VALUES (1), (2)").unwrap();
        let sql = "SELECT a, CAST(sum(a) AS bigint) AS total FROM t WHERE a >= $1";
        let (one, two) = (c.query(sql, &[Value::Int(1)]).unwrap(), c.query(sql, &[Value::Int(2)]).unwrap());
        assert_eq!(one.columns(), ["a", "total"]);
        assert_eq!(one.columns().as_ptr(), two.columns().as_ptr());
        assert_eq!(two.first("the sum").unwrap().int("total").unwrap(), 2);
    }

    #[test]
    fn dollar_parameters_become_numbered_question_marks() {
        assert_eq!(sqlite_params("SELECT $2, $1, '$x' WHERE a = $10"), "SELECT ?2, ?1, '$x' WHERE a = ?10");
    }

    #[test]
    fn sqlite_round_trips_values_in_wal_mode() {
        let dir = tempfile::tempdir().unwrap();
        let engine = Sqlite::new(dir.path());
        let mut c = engine.connect().unwrap();
        c.batch("CREATE TABLE t (a integer PRIMARY KEY, b varchar(10), c double precision)").unwrap();
        c.load("t", &["a", "b", "c"], &[vec![1i64.into(), "x".into(), 0.5.into()]]).unwrap();
        let rows = c.query("SELECT b, c, a FROM t WHERE a = $1", &[Value::Int(1)]).unwrap();
        assert_eq!(rows.columns(), ["b", "c", "a"]);
        assert_eq!(rows.into_cells(), vec![vec![Value::Text("x".into()), Value::Real(0.5), Value::Int(1)]]);
        let mode = c.query("PRAGMA journal_mode", &[]).unwrap();
        assert_eq!(mode.first("the journal mode").unwrap().text("journal_mode").unwrap(), "wal");
    }
}
