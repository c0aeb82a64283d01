//! `iolab db tpcc`: a TPC-C-derived workload on a real database. The flags become the library's setup and
//! `iolab_db::tpcc` options; everything else is [`db_run::run`]'s: the session and the harness (the paths
//! claimed before anything is made; the directory, memory limit, database, throttle and capture made and
//! undone on every path), the bars and `--metrics`, and the document saved in the catalog (as a `db` entry,
//! or `db_sweep` for several `--users`: HammerDB's autopilot), printed and written. `iolab db tpch` and `iolab
//! db copy` are dispatched to their modules.

use crate::args::db::{DbArgs, DbWhat, TpccArgs};
use crate::db_run::{self, number, Command, DbOutcome};
use crate::exit::{usage, ExitStatus};
use anyhow::Result;
use iolab_db::tpcc::{self, Options, Tpcc, TpccDocument};
use iolab_report::db::DbResult;

/// Runs `iolab db`.
pub fn db(args: &DbArgs) -> Result<ExitStatus> {
    match &args.what {
        DbWhat::Tpcc(a) => tpcc(a),
        DbWhat::Tpch(a) => crate::db_tpch::tpch(a),
        DbWhat::Copy(a) => crate::db_copy::copy(a),
        DbWhat::Ycsb(a) => crate::db_ycsb::ycsb(a),
        DbWhat::Check(a) => crate::db_check::check(a),
    }
}

/// The user counts of `--users`: one number, or a list or range (a sweep), each in 1..=1024.
fn users_list(text: &str) -> Result<Vec<u32>> {
    let values = iolab_spec::sweep::parse_list("--users", "workers", text, MAX_USER_COUNTS).map_err(usage)?;
    values.iter().map(|v| number("--users", v, 1, 1024).map(|n| n as u32)).collect()
}

/// Most user counts in one sweep.
const MAX_USER_COUNTS: usize = 64;

/// The options of `a`, with the seed of the common flags.
fn options(a: &TpccArgs, seed: u64) -> Result<Options> {
    let (ramp, duration) = db_run::window(&a.window)?;
    Ok(Options {
        warehouses: number("--warehouses", &a.warehouses, 1, 10_000)?,
        items: number("--items", &a.items, 1000, tpcc::SPEC_ITEMS)?,
        ramp,
        duration,
        seed,
    })
}

fn tpcc(a: &TpccArgs) -> Result<ExitStatus> {
    let c = db_run::common(&a.common, a.url.as_deref())?;
    let o = options(a, c.seed)?;
    let users = users_list(&a.users)?;
    let cmd = Command {
        headline: format!("db tpcc on {}, seed {}", c.setup.database.name(), o.seed),
        metrics: a.metrics.as_deref(),
        point_s: Some((o.ramp + o.duration).as_secs_f64()),
        outcome,
    };
    db_run::run(&a.common, c.setup, Tpcc::new(o, users), cmd)
}

/// A tpcc document's kind and exit status.
fn outcome(d: &TpccDocument) -> DbOutcome<'_> {
    match d {
        TpccDocument::Run(r) => DbOutcome { doc: &**r, good: good(r) },
        TpccDocument::Sweep(s) => {
            DbOutcome { doc: &**s, good: !s.points.is_empty() && s.points.iter().all(|p| good(&p.result)) }
        }
    }
}

/// A run that passed its consistency conditions and gave up no transaction.
fn good(d: &DbResult) -> bool {
    d.consistent() && d.run.transactions.iter().all(|t| t.failed == 0)
}
