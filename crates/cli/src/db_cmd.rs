//! `iolab db tpcc`: a TPC-C-derived workload on a real database. The flags become `iolab-db` options; the
//! database's directory and the `--json` output are claimed in the command's write gate before anything is
//! made; the engine is made (a SQLite file, a private PostgreSQL server, or the user's server); the workload
//! builds, runs and checks; the engine is closed and the directory removed on every path (return, error,
//! the first Ctrl-C through the stop flag; an immediate exit through `signals::clean_up`); the `iolab.db/1`
//! document is printed and written.

use crate::args::db::{DbArgs, DbWhat, TpccArgs};
use crate::exit::{usage, ExitStatus};
use crate::output::{claim, print, write_all};
use anyhow::{Context, Result};
use iolab_db::dir::DbDir;
use iolab_db::engine::postgres::Postgres;
use iolab_db::engine::server::ServerOptions;
use iolab_db::engine::sqlite::Sqlite;
use iolab_db::tpcc::{self, Observer, Options};
use iolab_db::Engine;
use iolab_device::WriteGate;
use iolab_report::db::DbResult;
use iolab_report::{Document, JsonExporter, TextExporter};
use std::time::Duration;

/// Runs `iolab db`.
pub fn db(args: &DbArgs) -> Result<ExitStatus> {
    match &args.what {
        DbWhat::Tpcc(a) => tpcc(a),
    }
}

/// Notices on stderr, unless quiet.
struct Notices {
    quiet: bool,
}

impl Observer for Notices {
    fn notice(&self, text: &str) {
        if !self.quiet {
            eprintln!("iolab: {text}");
        }
    }
}

/// A whole number flag in `lo..=hi`.
fn number(flag: &str, text: &str, lo: u64, hi: u64) -> Result<u64> {
    let v = iolab_spec::units::parse_count(text)
        .map_err(|e| usage(format!("invalid value '{text}' for '{flag}': {e}")))?;
    if v.fract() != 0.0 || v < lo as f64 || v > hi as f64 {
        return Err(usage(format!(
            "invalid value '{text}' for '{flag}': expected a whole number in {lo}..={hi}"
        )));
    }
    Ok(v as u64)
}

fn duration(flag: &str, text: &str) -> Result<Duration> {
    iolab_spec::units::parse_duration_ns(text)
        .map(Duration::from_nanos)
        .map_err(|e| usage(format!("invalid value '{text}' for '{flag}': {e}")))
}

fn options(a: &TpccArgs) -> Result<Options> {
    let seed = match &a.seed {
        Some(s) => s
            .trim()
            .parse()
            .map_err(|_| usage(format!("invalid value '{s}' for '--seed': expected a whole number")))?,
        None => crate::points::fresh_seed(),
    };
    Ok(Options {
        warehouses: number("--warehouses", &a.warehouses, 1, 10_000)?,
        users: number("--users", &a.users, 1, 1024)? as u32,
        items: number("--items", &a.items, 1000, tpcc::SPEC_ITEMS)?,
        ramp: duration("--ramp", &a.ramp)?,
        duration: duration("--duration", &a.duration)?,
        seed,
    })
}

/// The database directory: `--dir`, or `iolab-db-PID` in `$IOLAB_SCRATCH_DIR` or the current directory.
fn dir_path(a: &TpccArgs) -> String {
    a.dir.clone().unwrap_or_else(|| {
        let base = std::env::var("IOLAB_SCRATCH_DIR").unwrap_or_else(|_| ".".into());
        format!("{}/iolab-db-{}", base.trim_end_matches('/'), std::process::id())
    })
}

/// An `iolab-db` error as the binary says it: the environment's and the input's are exit-2 usage errors.
fn db_error(e: iolab_db::Error) -> anyhow::Error {
    if e.is_setup() {
        usage(e)
    } else {
        anyhow::Error::new(e)
    }
}

fn tpcc(a: &TpccArgs) -> Result<ExitStatus> {
    let o = options(a)?;
    let postgres = match a.engine.as_str() {
        "sqlite" => false,
        "postgres" | "postgresql" => true,
        other => {
            return Err(usage(format!("invalid value '{other}' for '--engine': expected sqlite or postgres")))
        }
    };
    if a.url.is_some() && !postgres {
        return Err(usage("--url names a PostgreSQL server: add --engine postgres"));
    }
    if a.url.is_some() && a.dir.is_some() {
        return Err(usage(
            "--url and --dir exclude each other: a server of your own keeps its files where it keeps them",
        ));
    }
    let shared_buffers = iolab_spec::units::parse_size(&a.shared_buffers)
        .map_err(|e| usage(format!("invalid value '{}' for '--shared-buffers': {e}", a.shared_buffers)))?;
    let mut gate = WriteGate::new();
    let json = claim(&mut gate, "--json", a.json.as_deref())?;
    let dir_state = match &a.url {
        None => {
            let path = dir_path(a);
            Some((gate.database_dir("--dir", &path).map_err(usage)?, path))
        }
        Some(_) => None,
    };
    let quiet = a.quiet || json.as_ref().is_some_and(|j| j.is_stdout());
    let stop = crate::signals::stop_flag(quiet);
    let notices = Notices { quiet };
    notices.notice(&format!("db tpcc on {}, seed {}", a.engine, o.seed));

    // The directory before the engine, so the engine (a server in it) is closed before it is removed.
    let dir = dir_state
        .map(|(state, path)| DbDir::make(path.as_ref(), state, a.keep))
        .transpose()
        .map_err(db_error)?;
    let mut engine: Box<dyn Engine> = match (&dir, &a.url) {
        (_, Some(url)) => Box::new(Postgres::url(url, a.keep).map_err(db_error)?),
        (Some(d), None) if postgres => {
            let options = ServerOptions {
                shared_buffers_bytes: shared_buffers,
                max_connections: o.users + iolab_db::tpcc::build::MAX_LOADERS + 10,
            };
            let pg = Postgres::private(d.path(), &options, a.keep, &stop).map_err(|e| match e {
                iolab_db::Error::Interrupted => anyhow::anyhow!("interrupted while starting the PostgreSQL server (it was stopped, its directory removed)"),
                e => db_error(e),
            })?;
            notices.notice(&format!(
                "private PostgreSQL server in {}, run as {}",
                d.path().display(),
                pg.server_user().unwrap_or_default()
            ));
            Box::new(pg)
        }
        (Some(d), None) => Box::new(Sqlite::new(d.path())),
        (None, None) => unreachable!("a directory unless --url"),
    };
    let result = tpcc::run(engine.as_ref(), &o, &stop, &notices);
    let closed = engine.close();
    drop(engine);
    drop(dir);
    let doc = match result {
        Ok(doc) => doc,
        Err(iolab_db::Error::Interrupted) => {
            return Err(anyhow::anyhow!(
                "interrupted while building the database; nothing to report (the database was removed)"
            ))
        }
        Err(e) => return Err(db_error(e)).context("iolab db tpcc"),
    };
    closed.map_err(db_error).context("closing the database")?;
    output(&doc, quiet, json.as_ref())?;
    let failed: u64 = doc.run.transactions.iter().map(|t| t.failed).sum();
    Ok(if doc.consistent() && failed == 0 { ExitStatus::Ok } else { ExitStatus::Fail })
}

fn output(doc: &DbResult, quiet: bool, json: Option<&iolab_device::Output>) -> Result<()> {
    if !quiet {
        print(&TextExporter.render(&Document::Db(doc)))?;
    }
    match json {
        Some(out) => write_all(vec![(out, Ok(JsonExporter.render(&Document::Db(doc))))]),
        None => Ok(()),
    }
}
