//! `iolab db tpcc`: a TPC-C-derived workload on a real database. The flags become `iolab-db` options; the
//! `--json` output, the catalog, `--capture` and the database's directory are claimed in the command's
//! write gate before anything is made (a catalog that cannot take the result is refused then, as for
//! `iolab run`); `--metrics` is served; the engine is made (a SQLite file, a private PostgreSQL server, or the
//! user's server; under `--memory`'s cgroup); the workload builds, runs and checks, at one user count
//! (`iolab.db/1`) or at several on the one database (`--users 1,2,4`: `iolab.dbsweep/1`, HammerDB's
//! autopilot), shown live on a terminal ([`Shown`]: the bars of `progress::DbBars`) with `--capture` over the
//! measured window; the engine is closed, the cgroup and the directory removed on every path (return, error,
//! the first Ctrl-C through the stop flag; an immediate exit through `signals::clean_up`); the document is
//! saved in the catalog (kind `db` or `db_sweep`), printed and written (all of it but the catalog, the sweep
//! and the bars through [`db_setup::Session`]). `iolab db tpch` and `iolab db copy` are dispatched to their
//! modules (saved as kinds `db_tpch` and `db_copy`).

use crate::args::db::{DbArgs, DbWhat, TpccArgs};
use crate::db_setup::{self, duration, number, Session, Watch};
use crate::exit::{usage, ExitStatus};
use crate::progress::{DbBars, OverallBar};
use crate::saving::Saver;
use anyhow::Result;
use iolab_db::tpcc::{self, Live, Options};
use iolab_db::Observer;
use iolab_device::WriteGate;
use iolab_report::db::DbResult;
use iolab_report::db_sweep::DbSweepResult;
use iolab_report::Document;

/// Runs `iolab db`.
pub fn db(args: &DbArgs) -> Result<ExitStatus> {
    match &args.what {
        DbWhat::Tpcc(a) => tpcc(a),
        DbWhat::Tpch(a) => crate::db_tpch::tpch(a),
        DbWhat::Copy(a) => crate::db_copy::copy(a),
    }
}

/// How a database run is shown: notices and `--capture` through the session's [`Watch`] (notices on
/// stderr unless quiet, above the bars when live), the bars of [`DbBars`] and, for several user counts,
/// the sweep's overall bar; `--metrics` fed as it goes.
struct Shown<'a> {
    watch: &'a Watch,
    bars: DbBars,
    overall: Option<OverallBar>,
}

impl Observer for Shown<'_> {
    fn notice(&self, text: &str) {
        self.watch.notice(text);
    }

    fn window(&self, open: bool) {
        self.watch.window(open);
    }

    fn loaded(&self, rows: u64, expected: u64) {
        if let Some(m) = crate::metrics::current_db() {
            m.loaded(rows);
        }
        self.bars.loaded(rows, expected);
    }

    fn point(&self, index: usize, count: usize, users: u32) {
        self.watch.point(index, count, users);
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

fn options(a: &TpccArgs) -> Result<Options> {
    Ok(Options {
        warehouses: number("--warehouses", &a.warehouses, 1, 10_000)?,
        users: users_list(&a.users)?.into_iter().max().unwrap_or(1),
        items: number("--items", &a.items, 1000, tpcc::SPEC_ITEMS)?,
        ramp: duration("--ramp", &a.ramp)?,
        duration: duration("--duration", &a.duration)?,
        seed: db_setup::seed(a.common.seed.as_deref())?,
    })
}

/// What a run made: one document, or a sweep's.
enum Outcome {
    Run(Box<DbResult>),
    Sweep(Box<DbSweepResult>),
}

/// `--memory`'s and `--throttle`'s settings and warning added to a result.
fn add_limits(doc: &mut DbResult, limits: &db_setup::Limits) {
    limits.add_to(&mut doc.engine.settings, &mut doc.warnings, &doc.devices, doc.engine.size_bytes);
}

fn tpcc(a: &TpccArgs) -> Result<ExitStatus> {
    let mut o = options(a)?;
    let users = users_list(&a.users)?;
    let c = &a.common;
    let mut flags = c.flags(a.url.as_deref());
    flags.capture_points = if users.len() > 1 { &users } else { &[] };
    let (session, saver) =
        Session::begin_with(WriteGate::new(), &flags, c.json.as_deref(), c.quiet, true, |gate, quiet| {
            Saver::open(&c.catalog, quiet, false, gate)
        })?;
    let postgres = matches!(c.engine.as_str(), "postgres" | "postgresql");
    crate::metrics::serve_db(a.metrics.as_deref(), "tpcc", if postgres { "postgres" } else { "sqlite" })?;
    let planned = (o.ramp + o.duration).as_secs_f64();
    let shown = Shown {
        watch: &session.watch,
        bars: DbBars::new(session.live),
        overall: (users.len() > 1).then(|| OverallBar::sweep(session.live, vec![Some(planned); users.len()])),
    };
    shown.notice(&format!("db tpcc on {}, seed {}", c.engine, o.seed));
    let connections = o.users + iolab_db::bulk::MAX_LOADERS + 10;
    let result = session.run(connections, None, "iolab db tpcc", |engine| {
        if users.len() == 1 {
            o.users = users[0];
            tpcc::run(engine, &o, &session.stop, &shown).map(|d| Outcome::Run(Box::new(d)))
        } else {
            tpcc::sweep(engine, &o, &users, &session.stop, &shown).map(|s| Outcome::Sweep(Box::new(s)))
        }
    });
    shown.bars.finish();
    drop(shown);
    let (mut doc, limits) = result?;
    match &mut doc {
        Outcome::Run(d) => add_limits(d, &limits),
        Outcome::Sweep(s) => {
            if s.points.is_empty() {
                return Err(anyhow::anyhow!(
                    "interrupted before the first user count ran; nothing to report"
                ));
            }
            // With --capture, each point names its trace (one per user count, in order).
            let traces = session.watch.capture_paths();
            for (i, p) in s.points.iter_mut().enumerate() {
                add_limits(&mut p.result, &limits);
                p.capture = traces.get(i).cloned();
            }
        }
    }
    let (document, good): (&dyn Document, bool) = match &doc {
        Outcome::Run(d) => (&**d, good(d)),
        Outcome::Sweep(s) => (&**s, !s.points.is_empty() && s.points.iter().all(|p| good(&p.result))),
    };
    session.save_and_output(saver.as_ref(), document)?;
    Ok(if good { ExitStatus::Ok } else { ExitStatus::Fail })
}

/// A run that passed its consistency conditions and gave up no transaction.
fn good(d: &DbResult) -> bool {
    d.consistent() && d.run.transactions.iter().all(|t| t.failed == 0)
}
