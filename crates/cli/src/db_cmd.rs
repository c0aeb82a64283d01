//! `iolab db tpcc`: a TPC-C-derived workload on a real database. The flags become `iolab-db` options; the
//! database's directory, `--json` and `--capture` are claimed in the command's write gate before anything is
//! made; the engine is made (a SQLite file, a private PostgreSQL server, or the user's server; under
//! `--memory`'s cgroup); the workload builds, runs and checks; the engine is closed, the cgroup and the
//! directory removed on every path (return, error, the first Ctrl-C through the stop flag; an immediate exit
//! through `signals::clean_up`); the `iolab.db/1` document is printed and written (all of it through
//! [`db_setup::Session`]). `iolab db tpch` and `iolab db copy` are dispatched to their modules.

use crate::args::db::{DbArgs, DbWhat, TpccArgs};
use crate::db_setup::{self, duration, number, EngineFlags, Session};
use crate::exit::ExitStatus;
use anyhow::Result;
use iolab_db::tpcc::{self, Options};
use iolab_db::Observer;
use iolab_device::WriteGate;
use iolab_report::Document;

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
    let flags = EngineFlags {
        engine: &a.engine,
        dir: a.dir.as_deref(),
        url: a.url.as_deref(),
        shared_buffers: &a.shared_buffers,
        keep: a.keep,
        memory: a.memory.as_deref(),
        capture: a.capture.as_deref(),
    };
    let session = Session::begin(WriteGate::new(), &flags, a.json.as_deref(), a.quiet)?;
    session.watch.notice(&format!("db tpcc on {}, seed {}", a.engine, o.seed));
    let connections = o.users + iolab_db::tpcc::build::MAX_LOADERS + 10;
    let (mut doc, memory) = session.run(connections, None, "iolab db tpcc", |engine| {
        tpcc::run(engine, &o, &session.stop, &session.watch)
    })?;
    if let Some(m) = memory {
        doc.warnings.extend(db_setup::memory_warning(Some(&m), &doc.devices, doc.engine.size_bytes));
        doc.engine.settings.push(m);
    }
    session.output(&Document::Db(&doc))?;
    let failed: u64 = doc.run.transactions.iter().map(|t| t.failed).sum();
    Ok(if doc.consistent() && failed == 0 { ExitStatus::Ok } else { ExitStatus::Fail })
}
