//! `iolab db copy`: snapshot replication of a database iolab builds. The flags become `iolab-db` options;
//! the source directory, the destination (`--to`, a directory iolab makes and removes), `--json` and
//! `--capture` are claimed before anything is made; the source is built and copied ([`iolab_db::copy`]); the
//! engine, memory limit and both directories are undone on every path; the `iolab.dbcopy/1` document is
//! saved in the catalog (kind `db_copy`, as `iolab db tpcc` saves), printed and written, then the capture.

use crate::args::db::CopyArgs;
use crate::db_setup::BuildShown;
use crate::db_setup::{self, number};
use crate::exit::{usage, ExitStatus};
use crate::progress::DbBars;
use anyhow::Result;
use iolab_db::copy::{self, Options, Source};
use iolab_db::dir::DbDir;
use iolab_db::Observer;
use iolab_device::WriteGate;

fn options(a: &CopyArgs) -> Result<Options> {
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
    Ok(Options { source, seed: db_setup::seed(a.common.seed.as_deref())?, evict: !a.warm })
}

/// Runs `iolab db copy`.
pub fn copy(a: &CopyArgs) -> Result<ExitStatus> {
    let o = options(a)?;
    let c = &a.common;
    let mut gate = WriteGate::new();
    let to_state = gate.database_dir("--to", &a.to).map_err(usage)?;
    let (session, saver) = c.begin(gate, None)?;
    session.watch.notice(&format!("db copy on {}, seed {}", c.engine, o.seed));
    // The destination first, so it is removed after the engine and the source.
    let to = DbDir::make(a.to.as_ref(), to_state, c.keep).map_err(db_setup::db_error)?;
    let connections = iolab_db::bulk::MAX_LOADERS + 10;
    let shown = BuildShown { watch: &session.watch, bars: DbBars::new(session.live) };
    let result = session.run(connections, Some(to.path()), "iolab db copy", |engine| {
        copy::run(engine, to.path(), &o, &session.stop, &shown)
    });
    shown.bars.finish();
    drop(to);
    let (mut doc, limits) = result?;
    doc.engine.settings.extend(limits.memory.into_iter().chain(limits.throttle));
    session.save_and_output(saver.as_ref(), &doc)?;
    Ok(ExitStatus::Ok)
}
