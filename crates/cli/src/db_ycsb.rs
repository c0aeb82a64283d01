//! `iolab db ycsb`: YCSB's core workloads on a real database. The flags become the library's setup and
//! `iolab_db::ycsb` options; the rest is [`db_run::run`]'s, and the `iolab.dbycsb/1` document is saved in
//! the catalog as a `db_ycsb` entry.

use crate::args::db::YcsbArgs;
use crate::db_run::{self, number, Command, DbOutcome};
use crate::exit::{usage, ExitStatus};
use anyhow::Result;
use iolab_db::ycsb::{Mix, Options, Ycsb};
use iolab_report::kinds::db_ycsb::YcsbResult;

fn options(a: &YcsbArgs, seed: u64) -> Result<Options> {
    let mix = Mix::parse(&a.workload).ok_or_else(|| {
        usage(format!(
            "invalid value '{}' for '--workload': expected one of YCSB's core workloads, a to f",
            a.workload
        ))
    })?;
    let (ramp, duration) = db_run::window(&a.window)?;
    Ok(Options {
        mix,
        records: number("--records", &a.records, 100, 1_000_000_000)?,
        users: number("--users", &a.users, 1, 1024)? as u32,
        ramp,
        duration,
        seed,
    })
}

/// Runs `iolab db ycsb`.
pub fn ycsb(a: &YcsbArgs) -> Result<ExitStatus> {
    let c = db_run::common(&a.common, a.url.as_deref())?;
    let o = options(a, c.seed)?;
    let cmd = Command {
        headline: format!(
            "db ycsb workload {} on {}, seed {}",
            o.mix.letter(),
            c.setup.database.name(),
            o.seed
        ),
        metrics: None,
        point_s: None,
        outcome,
    };
    db_run::run(&a.common, c.setup, Ycsb::new(o), cmd)
}

fn outcome(d: &YcsbResult) -> DbOutcome<'_> {
    DbOutcome { doc: d, good: d.run.operations.iter().all(|t| t.failed == 0) }
}
