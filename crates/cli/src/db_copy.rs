//! `iolab db copy`: snapshot replication of a database iolab builds. The flags become `iolab-db` options;
//! the source directory, the destination (`--to`, a directory iolab makes and removes), `--json` and
//! `--capture` are claimed before anything is made; the source is built and copied ([`iolab_db::copy`]); the
//! engine, memory limit and both directories are undone on every path; the `iolab.dbcopy/1` document is
//! printed and written, then the capture.

use crate::args::db::CopyArgs;
use crate::db_setup::{self, db_error, number, EngineFlags, Watch};
use crate::exit::{usage, ExitStatus};
use crate::output::{claim, print, write_all};
use anyhow::{Context, Result};
use iolab_db::copy::{self, Options, Source};
use iolab_db::dir::DbDir;
use iolab_db::Observer;
use iolab_device::WriteGate;
use iolab_report::{Document, JsonExporter, TextExporter};

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
    Ok(Options { source, seed: db_setup::seed(a.seed.as_deref())?, evict: !a.warm })
}

/// Runs `iolab db copy`.
pub fn copy(a: &CopyArgs) -> Result<ExitStatus> {
    let o = options(a)?;
    let mut gate = WriteGate::new();
    let json = claim(&mut gate, "--json", a.json.as_deref())?;
    let flags = EngineFlags {
        engine: &a.engine,
        dir: a.dir.as_deref(),
        url: None,
        shared_buffers: &a.shared_buffers,
        keep: a.keep,
        memory: a.memory.as_deref(),
        capture: a.capture.as_deref(),
    };
    let mut prepared = db_setup::prepare(&flags, &mut gate)?;
    let to_state = gate.database_dir("--to", &a.to).map_err(usage)?;
    let quiet = a.quiet || json.as_ref().is_some_and(|j| j.is_stdout());
    let stop = crate::signals::stop_flag(quiet);
    let watch = Watch::new(quiet, &mut prepared);
    watch.notice(&format!("db copy on {}, seed {}", a.engine, o.seed));
    // The destination first, so it is removed after the engine and the source.
    let to = DbDir::make(a.to.as_ref(), to_state, a.keep).map_err(db_error)?;
    let opened = db_setup::open(&prepared, &stop, &watch, iolab_db::tpcc::build::MAX_LOADERS + 10)?;
    let result = watch.arm(&db_setup::dirs(&opened, Some(to.path()))).and_then(|()| {
        copy::run(opened.engine.as_ref(), to.path(), &o, &stop, &watch).map_err(|e| match e {
            iolab_db::Error::Interrupted => anyhow::anyhow!(
                "interrupted before the copy was done; nothing to report (both directories were removed)"
            ),
            e => db_error(e).context("iolab db copy"),
        })
    });
    let memory = opened.memory_setting();
    let closed = opened.close();
    drop(to);
    let mut doc = result?;
    closed.map_err(db_error).context("closing the database")?;
    if let Some(m) = memory {
        doc.engine.settings.push(m);
    }
    if !quiet {
        print(&TextExporter.render(&Document::DbCopy(&doc)))?;
    }
    if let Some(out) = &json {
        write_all(vec![(out, Ok(JsonExporter.render(&Document::DbCopy(&doc))))])?;
    }
    watch.finish()?;
    Ok(ExitStatus::Ok)
}
