//! `iolab db copy`: snapshot replication of a database iolab builds. The flags become the library's setup
//! (the destination, `--to`, a directory the harness claims, makes and removes beside the database's) and
//! `iolab_db::copy` options; the rest is [`db_run::run`]'s, and the `iolab.dbcopy/1` document is saved in
//! the catalog as kind `db_copy`.

use crate::args::db::CopyArgs;
use crate::db_run::{self, number, Command, DbOutcome};
use crate::exit::{usage, ExitStatus};
use anyhow::Result;
use iolab_db::copy::{Copy, Options, Source};
use iolab_report::db_copy::CopyResult;

fn options(a: &CopyArgs, seed: u64) -> Result<Options> {
    let source = match &a.scale {
        Some(text) => {
            let scale: f64 = text.trim().parse().map_err(|_| {
                usage(format!("invalid value '{text}' for '--scale': expected a number such as 0.1 or 1"))
            })?;
            if !(iolab_db::tpch::MIN_SCALE..=iolab_db::tpch::MAX_SCALE).contains(&scale) {
                return Err(usage(format!(
                    "invalid value '{text}' for '--scale': expected {} to {}",
                    iolab_db::tpch::MIN_SCALE,
                    iolab_db::tpch::MAX_SCALE
                )));
            }
            Source::Tpch { scale }
        }
        None => Source::Tpcc {
            warehouses: number("--warehouses", &a.warehouses, 1, 10_000)?,
            items: number("--items", &a.items, 1000, iolab_db::tpcc::SPEC_ITEMS)?,
        },
    };
    Ok(Options { source, seed, evict: !a.warm })
}

/// Runs `iolab db copy`.
pub fn copy(a: &CopyArgs) -> Result<ExitStatus> {
    let mut c = db_run::common(&a.common, None)?;
    let o = options(a, c.seed)?;
    c.setup.also.push(("--to", a.to.clone()));
    let cmd = Command {
        headline: format!("db copy on {}, seed {}", c.setup.database.name(), o.seed),
        metrics: None,
        point_s: None,
        outcome,
    };
    db_run::run(&a.common, c.setup, Copy::new(o), cmd)
}

fn outcome(d: &CopyResult) -> DbOutcome<'_> {
    DbOutcome { doc: d, good: true }
}
