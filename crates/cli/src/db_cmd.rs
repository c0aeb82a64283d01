//! `iolab db tpcc`: a TPC-C-derived workload on a real database. The flags become `iolab-db` options; the
//! database's directory, the `--json` output and the catalog are claimed in the command's write gate before
//! anything is made (a catalog that cannot take the result is refused then, as for `iolab run`); `--metrics`
//! is served; the engine is made (a SQLite file, a private PostgreSQL server, or the user's server); the
//! workload builds, runs and checks, at one user count (`iolab.db/1`) or at several on the one database
//! (`--users 1,2,4`: `iolab.dbsweep/1`, HammerDB's autopilot), shown live on a terminal ([`Shown`]: the bars
//! of `progress::DbBars`); the engine is closed and the directory removed on every path (return, error, the
//! first Ctrl-C through the stop flag; an immediate exit through `signals::clean_up`); the document is saved
//! in the catalog (kind `db` or `db_sweep`), printed and written.

use crate::args::db::{DbArgs, DbWhat, TpccArgs};
use crate::exit::{usage, ExitStatus};
use crate::output::{claim, print, write_all};
use crate::progress::{DbBars, OverallBar};
use crate::saving::Saver;
use anyhow::{Context, Result};
use iolab_catalog::EntryKind;
use iolab_db::dir::DbDir;
use iolab_db::engine::postgres::Postgres;
use iolab_db::engine::server::ServerOptions;
use iolab_db::engine::sqlite::Sqlite;
use iolab_db::tpcc::{self, Live, Observer, Options};
use iolab_db::Engine;
use iolab_device::WriteGate;
use iolab_report::db::DbResult;
use iolab_report::db_sweep::DbSweepResult;
use iolab_report::{Document, JsonExporter, TextExporter};
use std::time::Duration;

/// Runs `iolab db`.
pub fn db(args: &DbArgs) -> Result<ExitStatus> {
    match &args.what {
        DbWhat::Tpcc(a) => tpcc(a),
    }
}

/// How a database run is shown: notices on stderr unless quiet (above the bars when live), the bars of
/// [`DbBars`] and, for several user counts, the sweep's overall bar; `--metrics` fed as it goes.
struct Shown {
    quiet: bool,
    live: bool,
    bars: DbBars,
    overall: Option<OverallBar>,
}

impl Observer for Shown {
    fn notice(&self, text: &str) {
        if !self.quiet {
            crate::progress::notice(self.live, &format!("iolab: {text}"));
        }
    }

    fn loaded(&self, rows: u64, expected: u64) {
        if let Some(m) = crate::metrics::current_db() {
            m.loaded(rows);
        }
        self.bars.loaded(rows, expected);
    }

    fn point(&self, index: usize, count: usize, users: u32) {
        if let Some(m) = crate::metrics::current_db() {
            m.point(users);
        }
        if let Some(o) = &self.overall {
            if index > 0 {
                o.end();
            }
            o.begin(&format!("users {users} ({}/{count})", index + 1), true);
        }
        self.bars.point();
    }

    fn running(&self, live: &Live) {
        if let Some(m) = crate::metrics::current_db() {
            m.running(live);
        }
        self.bars.running(live);
    }
}

/// The user counts of `--users`: one number, or a list or range (a sweep), each in 1..=1024.
fn users_list(text: &str) -> Result<Vec<u32>> {
    let values = iolab_spec::sweep::parse_list("--users", "workers", text, MAX_USER_COUNTS).map_err(usage)?;
    values.iter().map(|v| number("--users", v, 1, 1024).map(|n| n as u32)).collect()
}

/// Most user counts in one sweep.
const MAX_USER_COUNTS: usize = 64;

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
        users: users_list(&a.users)?.into_iter().max().unwrap_or(1),
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

/// What a run made: one document, or a sweep's.
enum Outcome {
    Run(Box<DbResult>),
    Sweep(Box<DbSweepResult>),
}

fn tpcc(a: &TpccArgs) -> Result<ExitStatus> {
    let mut o = options(a)?;
    let users = users_list(&a.users)?;
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
    let quiet = a.quiet || json.as_ref().is_some_and(|j| j.is_stdout());
    let saver = Saver::open(&a.catalog, quiet, false, &mut gate)?;
    let dir_state = match &a.url {
        None => {
            let path = dir_path(a);
            Some((gate.database_dir("--dir", &path).map_err(usage)?, path))
        }
        Some(_) => None,
    };
    crate::metrics::serve_db(a.metrics.as_deref(), "tpcc", if postgres { "postgres" } else { "sqlite" })?;
    let live = !quiet && std::io::IsTerminal::is_terminal(&std::io::stderr());
    let stop = crate::signals::stop_flag(quiet || live);
    let planned = (o.ramp + o.duration).as_secs_f64();
    let notices = Shown {
        quiet,
        live,
        bars: DbBars::new(live),
        overall: (users.len() > 1).then(|| OverallBar::sweep(live, vec![Some(planned); users.len()])),
    };
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
    let result = if users.len() == 1 {
        o.users = users[0];
        tpcc::run(engine.as_ref(), &o, &stop, &notices).map(|d| Outcome::Run(Box::new(d)))
    } else {
        tpcc::sweep(engine.as_ref(), &o, &users, &stop, &notices).map(|s| Outcome::Sweep(Box::new(s)))
    };
    notices.bars.finish();
    drop(notices);
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
    if let Outcome::Sweep(s) = &doc {
        if s.points.is_empty() {
            return Err(anyhow::anyhow!("interrupted before the first user count ran; nothing to report"));
        }
    }
    let (kind, document, good) = match &doc {
        Outcome::Run(d) => (EntryKind::Db, Document::Db(d), good(d)),
        Outcome::Sweep(s) => (
            EntryKind::DbSweep,
            Document::DbSweep(s),
            !s.points.is_empty() && s.points.iter().all(|p| good(&p.result)),
        ),
    };
    let text = JsonExporter.render(&document);
    // As every command that saves: the save first, then the outputs, then the first error of either, so a
    // catalog that cannot take the result never hides its numbers.
    let saved = crate::saving::save(saver.as_ref(), kind, &text);
    let written = output(&document, &text, quiet, json.as_ref());
    saved?;
    written?;
    Ok(if good { ExitStatus::Ok } else { ExitStatus::Fail })
}

/// A run that passed its consistency conditions and gave up no transaction.
fn good(d: &DbResult) -> bool {
    d.consistent() && d.run.transactions.iter().all(|t| t.failed == 0)
}

fn output(
    doc: &Document<'_>,
    json_text: &str,
    quiet: bool,
    json: Option<&iolab_device::Output>,
) -> Result<()> {
    if !quiet {
        print(&TextExporter.render(doc))?;
    }
    match json {
        Some(out) => write_all(vec![(out, Ok(json_text.to_string()))]),
        None => Ok(()),
    }
}
