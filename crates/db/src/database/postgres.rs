//! PostgreSQL: a private server iolab starts in the database's directory ([`super::server`]), or the user's
//! own (`--url`), through the `postgres` crate's synchronous client.
//!
//! Either way the workload's tables live in one schema, [`SCHEMA`], that iolab makes and marks as its own
//! (a comment on the schema): on a user's server iolab creates and drops that schema and touches nothing
//! else; a schema of that name that is not iolab's is refused. Each connection sets its `search_path` to it.
//! Transactions run at READ COMMITTED (PostgreSQL's default, HammerDB's), with `FOR UPDATE` on the rows a
//! transaction reads and then updates; a serialization failure (40001) or a deadlock (40P01) is retried.
//! A bulk load uses COPY. A query's columns' names (`Statement::columns`) are kept with its prepared
//! statement, so its answers share them.

use super::connect::connect_bounded;
use super::server::{Server, ServerOptions};
use super::url::ServerUrl;
use super::{ColumnNames, Conn, Database, Dialect, Rows, TxKind};
use crate::{DbError, Value, WorkloadError};
use postgres::types::{ToSql, Type};
use postgres::{Client, Statement};
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// The schema of iolab's tables.
pub const SCHEMA: &str = "iolab_tpcc";

/// The comment that marks [`SCHEMA`] as iolab's.
const SCHEMA_MARK: &str = "made by iolab db; iolab drops it after the run";

/// A PostgreSQL database: a private server, or the user's.
#[derive(Debug)]
pub struct Postgres {
    config: postgres::Config,
    server: Option<Server>,
    dir: Option<PathBuf>,
    url: Option<ServerUrl>,
    keep: bool,
    version: String,
    settings: Vec<(String, String)>,
    closed: bool,
}

fn pg_error(e: postgres::Error) -> DbError {
    use postgres::error::SqlState;
    let retryable = matches!(
        e.code(),
        Some(c) if *c == SqlState::T_R_SERIALIZATION_FAILURE || *c == SqlState::T_R_DEADLOCK_DETECTED
    );
    let message = match e.as_db_error() {
        Some(db) => format!("PostgreSQL: {}: {}", db.severity(), db.message()),
        None => format!("PostgreSQL: {e}"),
    };
    DbError { retryable, message }
}

/// How long a connection to the private server may take, start-up exchange included.
const PRIVATE_CONNECT_TIMEOUT: Duration = Duration::from_secs(60);

impl Postgres {
    /// Starts a private server in `dir` (an empty directory iolab made) and makes the schema.
    pub fn private(
        dir: &Path,
        options: &ServerOptions,
        keep: bool,
        stop: &AtomicBool,
    ) -> Result<Postgres, WorkloadError> {
        Postgres::private_in(dir, options, keep, stop, None)
    }

    /// [`Postgres::private`], the server in the cgroup whose `cgroup.procs` is `cgroup_procs`, when given
    /// (`--memory`; [`Server::start_in`]).
    pub fn private_in(
        dir: &Path,
        options: &ServerOptions,
        keep: bool,
        stop: &AtomicBool,
        cgroup_procs: Option<&Path>,
    ) -> Result<Postgres, WorkloadError> {
        let server = Server::start_in(dir, options, stop, cgroup_procs)?;
        let config = server.config();
        let pg = Postgres::unready(config, Some(server), Some(dir.to_path_buf()), None, keep);
        pg.ready(stop)
    }

    /// The database a kept directory holds (`--keep`): its server started on the data as it was left (crash
    /// recovery first), nothing made or dropped; closing stops the server and leaves the directory.
    pub fn existing(
        dir: &Path,
        options: &ServerOptions,
        stop: &AtomicBool,
    ) -> Result<Postgres, WorkloadError> {
        let server = Server::start_existing(dir, options, stop)?;
        let config = server.config();
        let mut pg = Postgres::unready(config, Some(server), Some(dir.to_path_buf()), None, true);
        let mut client = pg.client(Some(stop))?;
        let rows = client
            .query(
                "SELECT obj_description(oid, 'pg_namespace') FROM pg_namespace WHERE nspname = $1",
                &[&SCHEMA],
            )
            .map_err(pg_error)?;
        pg.closed = false;
        let comment: Option<String> = rows.first().and_then(|r| r.get(0));
        if comment.as_deref() != Some(SCHEMA_MARK) {
            return Err(WorkloadError::Setup(format!("'{}' holds no database iolab built", dir.display())));
        }
        let version =
            client.query_one("SHOW server_version", &[]).ok().and_then(|r| r.try_get::<_, String>(0).ok());
        pg.version = format!("PostgreSQL {}", version.unwrap_or_else(|| "?".into()));
        Ok(pg)
    }

    /// The user's server at `url`; makes the schema there. `stop` raised ends the first connection attempt.
    pub fn url(url: &ServerUrl, keep: bool, stop: &AtomicBool) -> Result<Postgres, WorkloadError> {
        let pg = Postgres::unready(url.config().clone(), None, None, Some(url.clone()), keep);
        pg.ready(stop)
    }

    /// A database not yet connected to (closed: nothing to undo until [`Postgres::ready`]).
    fn unready(
        config: postgres::Config,
        server: Option<Server>,
        dir: Option<PathBuf>,
        url: Option<ServerUrl>,
        keep: bool,
    ) -> Postgres {
        let (version, settings) = (String::new(), Vec::new());
        Postgres { config, server, dir, url, keep, version, settings, closed: true }
    }

    /// The server as messages name it: the URL without its password, or the private server.
    fn shown(&self) -> &str {
        self.url.as_ref().map_or("the private server", ServerUrl::shown)
    }

    /// A connection, its wait bounded ([`connect_bounded`]).
    fn client(&self, stop: Option<&AtomicBool>) -> Result<Client, WorkloadError> {
        let timeout = self.url.as_ref().map_or(PRIVATE_CONNECT_TIMEOUT, ServerUrl::connect_timeout);
        let scrub = |m: &str| self.url.as_ref().map_or_else(|| m.to_string(), |u| u.scrub(m));
        connect_bounded(&self.config, timeout, stop, self.shown(), &scrub)
    }

    /// Connects, makes the schema and reads the server's version and settings.
    fn ready(mut self, stop: &AtomicBool) -> Result<Postgres, WorkloadError> {
        let mut client = self.client(Some(stop))?;
        let shown = self.shown().to_string();
        make_schema(&mut client, &shown)?;
        // The schema is iolab's now: closing drops it (a private server: stops it).
        self.closed = false;
        let show = |client: &mut Client, name: &str| -> String {
            client
                .query_one(&format!("SHOW {name}"), &[])
                .ok()
                .and_then(|r| r.try_get::<_, String>(0).ok())
                .unwrap_or_else(|| "?".into())
        };
        let version = format!("PostgreSQL {}", show(&mut client, "server_version"));
        let settings =
            ["shared_buffers", "fsync", "synchronous_commit", "full_page_writes", "wal_sync_method"]
                .iter()
                .map(|n| (n.to_string(), show(&mut client, n)))
                .collect();
        self.version = version;
        self.settings = settings;
        Ok(self)
    }
}

/// Makes [`SCHEMA`]: anew when absent, again when it is iolab's (a run that was killed), refused when it is
/// someone else's.
fn make_schema(client: &mut Client, shown: &str) -> Result<(), WorkloadError> {
    let rows = client
        .query("SELECT obj_description(oid, 'pg_namespace') FROM pg_namespace WHERE nspname = $1", &[&SCHEMA])
        .map_err(pg_error)?;
    if let Some(row) = rows.first() {
        let comment: Option<String> = row.get(0);
        if comment.as_deref() != Some(SCHEMA_MARK) {
            return Err(WorkloadError::Setup(format!(
                "{shown} has a schema '{SCHEMA}' that iolab did not make; iolab creates and drops only its own\n  \
                 hint: drop or rename that schema, or use another database"
            )));
        }
        client.batch_execute(&format!("DROP SCHEMA {SCHEMA} CASCADE")).map_err(pg_error)?;
    }
    client
        .batch_execute(&format!("CREATE SCHEMA {SCHEMA}; COMMENT ON SCHEMA {SCHEMA} IS '{SCHEMA_MARK}'"))
        .map_err(pg_error)?;
    Ok(())
}

impl Database for Postgres {
    fn server_processes(&self) -> Vec<u32> {
        self.server.as_ref().map(Server::processes).unwrap_or_default()
    }

    fn name(&self) -> &'static str {
        "postgres"
    }

    fn dialect(&self) -> Dialect {
        Dialect {
            for_update: " FOR UPDATE",
            keyed_table_options: "",
            keys_after_load: true,
            parallel_load: true,
        }
    }

    fn connect(&self) -> Result<Box<dyn Conn>, WorkloadError> {
        let mut client = self.client(None)?;
        client.batch_execute(&format!("SET search_path TO {SCHEMA}")).map_err(pg_error)?;
        Ok(Box::new(PgConn { client, statements: HashMap::new() }))
    }

    fn version(&self) -> String {
        self.version.clone()
    }

    fn settings(&self) -> Vec<(String, String)> {
        self.settings.clone()
    }

    fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    fn url(&self) -> Option<String> {
        self.url.as_ref().map(|u| u.shown().to_string())
    }

    fn server_user(&self) -> Option<String> {
        self.server.as_ref().map(Server::user_text)
    }

    fn close(&mut self) -> Result<(), WorkloadError> {
        if std::mem::replace(&mut self.closed, true) {
            return Ok(());
        }
        if self.server.is_none() && !self.keep {
            let mut client = self.client(None)?;
            client.batch_execute(&format!("DROP SCHEMA IF EXISTS {SCHEMA} CASCADE")).map_err(pg_error)?;
        }
        match &mut self.server {
            Some(s) => s.stop(),
            None => Ok(()),
        }
    }

    /// CHECKPOINT on the private server; nothing on a server of the user's own (its files are not iolab's to
    /// make whole or drop from the page cache, and CHECKPOINT may need rights iolab's account lacks).
    fn checkpoint(&self) -> Result<(), WorkloadError> {
        if self.server.is_none() {
            return Ok(());
        }
        let mut client = self.client(None)?;
        client.batch_execute("CHECKPOINT").map_err(pg_error)?;
        Ok(())
    }

    /// `pg_basebackup` against the private server ([`Server::base_backup`]); a server of the user's own
    /// is refused (its files are not iolab's to copy).
    fn copy_to(&self, to: &Path, stop: &AtomicBool) -> Result<&'static str, WorkloadError> {
        match &self.server {
            Some(s) => s.base_backup(to, stop).map(|_| "pg_basebackup"),
            None => Err(WorkloadError::Setup(
                "iolab db copy needs a private server (--url names a server of your own, whose files iolab does not copy)"
                    .into(),
            )),
        }
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        let _ = self.close();
    }
}

/// One connection, with its prepared statements.
struct PgConn {
    client: Client,
    statements: HashMap<String, Prepared>,
}

/// A prepared statement and its columns' names.
#[derive(Clone)]
struct Prepared {
    statement: Statement,
    columns: ColumnNames,
}

impl PgConn {
    fn statement(&mut self, sql: &str) -> Result<Prepared, DbError> {
        if let Some(s) = self.statements.get(sql) {
            return Ok(s.clone());
        }
        let statement = self.client.prepare(sql).map_err(pg_error)?;
        let columns = statement.columns().iter().map(|c| c.name().to_string()).collect();
        let prepared = Prepared { statement, columns };
        self.statements.insert(sql.to_string(), prepared.clone());
        Ok(prepared)
    }
}

/// `v` as the Rust type the parameter's SQL type takes.
fn param(v: &Value, ty: &Type) -> Result<Box<dyn ToSql + Sync>, DbError> {
    let mismatch = || DbError::fatal(format!("a {v:?} parameter where PostgreSQL expects {ty}"));
    Ok(match (v, ty) {
        (Value::Int(i), t) if *t == Type::INT2 => Box::new(i16::try_from(*i).map_err(|_| mismatch())?),
        (Value::Int(i), t) if *t == Type::INT4 => Box::new(i32::try_from(*i).map_err(|_| mismatch())?),
        (Value::Int(i), t) if *t == Type::INT8 => Box::new(*i),
        (Value::Int(i), t) if *t == Type::FLOAT8 => Box::new(*i as f64),
        (Value::Real(r), t) if *t == Type::FLOAT8 => Box::new(*r),
        (Value::Real(r), t) if *t == Type::FLOAT4 => Box::new(*r as f32),
        (Value::Text(s), _) => Box::new(s.clone()),
        (Value::Null, t) if *t == Type::INT2 => Box::new(None::<i16>),
        (Value::Null, t) if *t == Type::INT4 => Box::new(None::<i32>),
        (Value::Null, t) if *t == Type::INT8 => Box::new(None::<i64>),
        (Value::Null, t) if *t == Type::FLOAT8 => Box::new(None::<f64>),
        (Value::Null, _) => Box::new(None::<String>),
        _ => return Err(mismatch()),
    })
}

fn params(st: &Statement, values: &[Value]) -> Result<Vec<Box<dyn ToSql + Sync>>, DbError> {
    st.params().iter().zip(values).map(|(ty, v)| param(v, ty)).collect()
}

/// The cell `i` of `row` as a [`Value`].
fn cell(row: &postgres::Row, i: usize) -> Result<Value, DbError> {
    let ty = row.columns()[i].type_();
    let got = |e: postgres::Error| pg_error(e);
    Ok(if *ty == Type::INT2 {
        row.try_get::<_, Option<i16>>(i).map_err(got)?.map(i64::from).into()
    } else if *ty == Type::INT4 {
        row.try_get::<_, Option<i32>>(i).map_err(got)?.map(i64::from).into()
    } else if *ty == Type::INT8 {
        row.try_get::<_, Option<i64>>(i).map_err(got)?.into()
    } else if *ty == Type::FLOAT8 {
        row.try_get::<_, Option<f64>>(i).map_err(got)?.into()
    } else if *ty == Type::FLOAT4 {
        row.try_get::<_, Option<f32>>(i).map_err(got)?.map(f64::from).into()
    } else if [Type::TEXT, Type::VARCHAR, Type::BPCHAR, Type::NAME].contains(ty) {
        row.try_get::<_, Option<String>>(i).map_err(got)?.into()
    } else {
        return Err(DbError::fatal(format!("a result column of type {ty}, which iolab does not read")));
    })
}

/// A value in COPY's text format.
fn copy_text(v: &Value, out: &mut String) {
    use std::fmt::Write as _;
    match v {
        Value::Null => out.push_str("\\N"),
        Value::Int(i) => {
            let _ = write!(out, "{i}");
        }
        Value::Real(r) => {
            let _ = write!(out, "{r}");
        }
        Value::Text(s) => {
            for c in s.chars() {
                match c {
                    '\\' => out.push_str("\\\\"),
                    '\t' => out.push_str("\\t"),
                    '\n' => out.push_str("\\n"),
                    '\r' => out.push_str("\\r"),
                    c => out.push(c),
                }
            }
        }
    }
}

impl Conn for PgConn {
    fn execute(&mut self, sql: &str, values: &[Value]) -> Result<u64, DbError> {
        let st = self.statement(sql)?.statement;
        let p = params(&st, values)?;
        let refs: Vec<&(dyn ToSql + Sync)> = p.iter().map(|b| b.as_ref()).collect();
        self.client.execute(&st, &refs).map_err(pg_error)
    }

    fn query(&mut self, sql: &str, values: &[Value]) -> Result<Rows, DbError> {
        let Prepared { statement: st, columns } = self.statement(sql)?;
        let p = params(&st, values)?;
        let refs: Vec<&(dyn ToSql + Sync)> = p.iter().map(|b| b.as_ref()).collect();
        let rows = self.client.query(&st, &refs).map_err(pg_error)?;
        let cells =
            rows.iter().map(|r| (0..r.len()).map(|i| cell(r, i)).collect()).collect::<Result<_, _>>()?;
        Ok(Rows::new(columns, cells))
    }

    fn batch(&mut self, sql: &str) -> Result<(), DbError> {
        self.client.batch_execute(sql).map_err(pg_error)
    }

    /// The simple query protocol: every cell comes back as text, numeric and date columns included.
    fn query_text(&mut self, sql: &str) -> Result<Vec<Vec<Option<String>>>, DbError> {
        let messages = self.client.simple_query(sql).map_err(pg_error)?;
        Ok(messages
            .iter()
            .filter_map(|m| match m {
                postgres::SimpleQueryMessage::Row(r) => {
                    Some((0..r.len()).map(|i| r.get(i).map(str::to_string)).collect())
                }
                _ => None,
            })
            .collect())
    }

    fn begin(&mut self, _kind: TxKind) -> Result<(), DbError> {
        self.client.batch_execute("BEGIN").map_err(pg_error)
    }

    fn commit(&mut self) -> Result<(), DbError> {
        self.client.batch_execute("COMMIT").map_err(pg_error)
    }

    fn rollback(&mut self) -> Result<(), DbError> {
        self.client.batch_execute("ROLLBACK").map_err(pg_error)
    }

    fn load(&mut self, table: &str, columns: &[&str], rows: &[Vec<Value>]) -> Result<(), DbError> {
        let mut text = String::with_capacity(rows.len() * 64);
        for row in rows {
            for (i, v) in row.iter().enumerate() {
                if i > 0 {
                    text.push('\t');
                }
                copy_text(v, &mut text);
            }
            text.push('\n');
        }
        let sql = format!("COPY {table} ({}) FROM STDIN", columns.join(", "));
        let mut w = self.client.copy_in(&sql).map_err(pg_error)?;
        w.write_all(text.as_bytes()).map_err(|e| DbError::fatal(format!("PostgreSQL: COPY {table}: {e}")))?;
        w.finish().map_err(pg_error)?;
        Ok(())
    }

    fn loading(&mut self, on: bool) -> Result<(), DbError> {
        self.client
            .batch_execute(if on {
                "SET synchronous_commit TO off"
            } else {
                "SET synchronous_commit TO DEFAULT"
            })
            .map_err(pg_error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copy_text_escapes_what_copy_reads_specially() {
        let mut s = String::new();
        for v in [Value::Null, Value::Int(-3), Value::Text("a\tb\\c\nd".into())] {
            copy_text(&v, &mut s);
            s.push('|');
        }
        assert_eq!(s, "\\N|-3|a\\tb\\\\c\\nd|");
    }
}
