//! `iolab db tpcc`: a TPC-C-derived workload on a real database. The flags become `iolab-db` options; the
//! database's directory and the `--json` output are claimed in the command's write gate before anything is
//! made; the engine is made (a SQLite file, a private PostgreSQL server, or the user's server); the workload
//! builds, runs and checks; the engine is closed and the directory removed on every path (return, error,
//! the first Ctrl-C through the stop flag; an immediate exit through `signals::clean_up`); the `iolab.db/1`
//! document is printed and written.

use crate::args::db::{DbArgs, DbWhat, TpccArgs};
use crate::db_setup::{self, db_error, duration, number, EngineFlags, Watch};
use crate::exit::ExitStatus;
use crate::output::{claim, print, write_all};
use anyhow::{Context, Result};
use iolab_db::tpcc::{self, Options};
use iolab_db::Observer;
use iolab_device::WriteGate;
use iolab_report::db::DbResult;
use iolab_report::{Document, JsonExporter, TextExporter};

/// Runs `iolab db`.
pub fn db(args: &DbArgs) -> Result<ExitStatus> {
    match &args.what {
        DbWhat::Tpcc(a) => tpcc(a),
        DbWhat::Tpch(a) => crate::db_tpch::tpch(a),
        DbWhat::Copy(a) => crate::db_copy::copy(a),
    }
}

fn options(a: &TpccArgs) -> Result<Options> {
    Ok(Options {
        warehouses: number("--warehouses", &a.warehouses, 1, 10_000)?,
        users: number("--users", &a.users, 1, 1024)? as u32,
        items: number("--items", &a.items, 1000, tpcc::SPEC_ITEMS)?,
        ramp: duration("--ramp", &a.ramp)?,
        duration: duration("--duration", &a.duration)?,
        seed: db_setup::seed(a.seed.as_deref())?,
    })
}

fn tpcc(a: &TpccArgs) -> Result<ExitStatus> {
    let o = options(a)?;
    let mut gate = WriteGate::new();
    let json = claim(&mut gate, "--json", a.json.as_deref())?;
    let flags = EngineFlags {
        engine: &a.engine,
        dir: a.dir.as_deref(),
        url: a.url.as_deref(),
        shared_buffers: &a.shared_buffers,
        keep: a.keep,
        memory: a.memory.as_deref(),
        capture: a.capture.as_deref(),
    };
    let mut prepared = db_setup::prepare(&flags, &mut gate)?;
    let quiet = a.quiet || json.as_ref().is_some_and(|j| j.is_stdout());
    let stop = crate::signals::stop_flag(quiet);
    let watch = Watch::new(quiet, &mut prepared);
    watch.notice(&format!("db tpcc on {}, seed {}", a.engine, o.seed));

    // The directory before the engine, so the engine (a server in it) is closed before it is removed.
    let opened = db_setup::open(&prepared, &stop, &watch, o.users + iolab_db::tpcc::build::MAX_LOADERS + 10)?;
    let result = watch.arm(&db_setup::dirs(&opened, None)).and_then(|()| {
        tpcc::run(opened.engine.as_ref(), &o, &stop, &watch).map_err(|e| match e {
            iolab_db::Error::Interrupted => anyhow::anyhow!(
                "interrupted while building the database; nothing to report (the database was removed)"
            ),
            e => db_error(e).context("iolab db tpcc"),
        })
    });
    let memory = opened.memory_setting();
    let closed = opened.close();
    let mut doc = result?;
    closed.map_err(db_error).context("closing the database")?;
    if let Some(m) = memory {
        doc.warnings.extend(db_setup::memory_warning(Some(&m), &doc.devices, doc.engine.size_bytes));
        doc.engine.settings.push(m);
    }
    output(&doc, quiet, json.as_ref())?;
    watch.finish()?;
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
