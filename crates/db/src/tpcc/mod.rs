//! `iolab db tpcc`: an OLTP workload derived from the TPC-C specification (revision 5.11), in the manner of
//! HammerDB's TPROC-C: the nine tables and the five transactions in the standard mix, NURand keys, no
//! keying or think time, reported as new orders per minute (NOPM) and transactions per minute (TPM) with
//! per-transaction response times, and the consistency conditions checked afterwards. It is *derived from*
//! TPC-C, not compliant with it (no terminals, no audited durability, scaled items when asked, money in
//! integer cents) and its numbers are not comparable with published TPC results.
//!
//! [`run`] builds ([`build`]), runs ([`driver`]), checks ([`check`]) and returns the `iolab.db/1` document;
//! [`sweep`] builds once and then runs and checks at each of several user counts (HammerDB's autopilot),
//! returning the `iolab.dbsweep/1` document. The parts: [`rand`] (NURand, the strings, the mix's deck),
//! [`schema`], [`load`], [`txn`] (the five transactions).

pub mod build;
pub mod check;
pub mod driver;
pub mod load;
pub mod rand;
pub mod schema;
pub mod txn;

use crate::database::Database;
use crate::Error;
use iolab_report::db::{
    DbHeader, DbResult, DeviceView, MixShare, TpccConfig, TpccRun, TxResult, DB_SCHEMA, TPCC_DISCLAIMER,
};
use iolab_report::db_sweep::{DbSweepPoint, DbSweepResult, DB_SWEEP_SCHEMA};
use iolab_report::sweep::{DEFAULT_KNEE_IOPS_GAIN_PCT, DEFAULT_KNEE_LAT_GROWTH_PCT};
use rand::TxType;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// The spec's number of items.
pub const SPEC_ITEMS: u64 = 100_000;

/// A window shorter than this is flagged: checkpoints and the database's caches have not settled.
pub const SHORT_WINDOW_S: f64 = 60.0;

/// What `iolab db tpcc` asks.
#[derive(Clone, Debug)]
pub struct Options {
    /// Warehouses to build.
    pub warehouses: u64,
    /// Users.
    pub users: u32,
    /// Items (stock per warehouse).
    pub items: u64,
    /// Ramp.
    pub ramp: Duration,
    /// Measured window.
    pub duration: Duration,
    /// The seed.
    pub seed: u64,
}

pub use crate::Observer;
pub use driver::Live;

/// Builds the database on `engine`, runs the workload, checks consistency and returns the document. The
/// database's files are under `engine.dir()` (the device view reads the devices there).
pub fn run(
    engine: &dyn Database,
    o: &Options,
    stop: &AtomicBool,
    observer: &dyn Observer,
) -> Result<DbResult, Error> {
    let start_unix_s = now_unix_s();
    let built = build_database(engine, o, stop, observer)?;
    observer.point(0, 1, o.users);
    measure(engine, o, start_unix_s, &built, stop, observer)
}

/// Builds the database on `engine`, then runs the workload at each of `users` (in order) on the same
/// database, each with its ramp and window and checked for consistency afterwards; returns the
/// `iolab.dbsweep/1` document with the knee of NOPM against users. A stop during the build is
/// [`Error::Interrupted`]; a stop during a point ends the sweep there, partial, with the points run.
pub fn sweep(
    engine: &dyn Database,
    o: &Options,
    users: &[u32],
    stop: &AtomicBool,
    observer: &dyn Observer,
) -> Result<DbSweepResult, Error> {
    let start_unix_s = now_unix_s();
    let built = build_database(engine, o, stop, observer)?;
    let mut points = Vec::new();
    let mut partial = false;
    for (i, &u) in users.iter().enumerate() {
        if stop.load(std::sync::atomic::Ordering::Relaxed) {
            partial = true;
            break;
        }
        observer.point(i, users.len(), u);
        let point = Options { users: u, ..o.clone() };
        let result = measure(engine, &point, now_unix_s(), &built, stop, observer)?;
        partial |= result.partial;
        points.push(DbSweepPoint { users: u, result, capture: None });
        if partial {
            break;
        }
    }
    partial |= points.len() < users.len();
    let mut s = DbSweepResult {
        header: DbHeader::new(DB_SWEEP_SCHEMA, "tpcc", Some(TPCC_DISCLAIMER), o.seed, start_unix_s),
        axis: "users".into(),
        users: users.to_vec(),
        points,
        knee: None,
        partial,
    };
    s.analyze(DEFAULT_KNEE_IOPS_GAIN_PCT, DEFAULT_KNEE_LAT_GROWTH_PCT);
    Ok(s)
}

fn now_unix_s() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// The build, with its notices and the rows it loads told to the observer.
fn build_database(
    engine: &dyn Database,
    o: &Options,
    stop: &AtomicBool,
    observer: &dyn Observer,
) -> Result<build::Built, Error> {
    observer.notice(&format!(
        "building {} warehouse{} ({} items) on {}",
        o.warehouses,
        if o.warehouses == 1 { "" } else { "s" },
        o.items,
        engine.version()
    ));
    let expected = build::expected_rows(o.warehouses, o.items);
    let built = build::build(engine, o.warehouses, o.items, o.seed, stop, &|n| observer.loaded(n, expected))?;
    observer.notice(&format!("built in {:.1} s", built.seconds));
    Ok(built)
}

/// One ramp and window at `o.users` users on the built database, the consistency check after it, and its
/// document.
fn measure(
    engine: &dyn Database,
    o: &Options,
    start_unix_s: u64,
    built: &build::Built,
    stop: &AtomicBool,
    observer: &dyn Observer,
) -> Result<DbResult, Error> {
    observer.notice(&format!(
        "running {} user{}: {:.0} s ramp, {:.0} s measured",
        o.users,
        if o.users == 1 { "" } else { "s" },
        o.ramp.as_secs_f64(),
        o.duration.as_secs_f64()
    ));
    let spec = driver::RunSpec {
        users: o.users,
        warehouses: o.warehouses,
        items: o.items,
        seed: o.seed,
        ramp: o.ramp,
        duration: o.duration,
    };
    let measured = driver::run(engine, &spec, engine.dir(), stop, observer)?;
    observer.notice("checking the consistency conditions");
    let mut conn = engine.connect()?;
    let consistency = check::check_all(conn.as_mut())?;
    drop(conn);
    let size_bytes = engine.dir().map(crate::devices::dir_bytes);
    Ok(document(engine, o, start_unix_s, built, &measured, consistency, size_bytes))
}

/// The per-minute rate of `n` events in `s` seconds (0 for an empty window).
fn per_minute(n: u64, s: f64) -> f64 {
    if s > 0.0 {
        n as f64 * 60.0 / s
    } else {
        0.0
    }
}

/// Each transaction type's counts, rate and latency.
fn transactions(m: &driver::Measured) -> Vec<TxResult> {
    let s = m.measured_s;
    TxType::ALL
        .iter()
        .zip(&m.tx)
        .map(|(t, x)| TxResult {
            name: t.name().into(),
            committed: x.committed,
            rolled_back: x.rolled_back,
            retries: x.retries,
            failed: x.failed,
            per_minute: per_minute(x.committed + x.rolled_back, s),
            latency_ns: x.latency.summary(),
            histogram: x.latency.to_base64(),
        })
        .collect()
}

/// What a reader should know: transactions given up, a failed consistency condition, devices that read
/// nothing, a short window, SQLite's one writer.
fn warnings(
    engine: &dyn Database,
    o: &Options,
    m: &driver::Measured,
    consistency: &[iolab_report::db::ConsistencyCheck],
    devices: &[DeviceView],
) -> Vec<String> {
    let s = m.measured_s;
    let mut warnings = Vec::new();
    let failed: u64 = m.tx.iter().map(|x| x.failed).sum();
    if failed > 0 {
        warnings.push(format!(
            "{failed} transactions were given up after {} retries each: the database was too busy or deadlocked too often",
            crate::database::MAX_RETRIES
        ));
    }
    if consistency.iter().any(|c| !c.passed) {
        warnings.push(
            "a consistency condition failed: the transactions did not run correctly on this database".into(),
        );
    }
    if !devices.is_empty() && devices.iter().all(|d| d.reads == 0) {
        warnings.push(
            "the devices read nothing in the window: the database was served from memory (the engine's cache and the page cache), so this run measured writes, flushes and CPU, not reads; hold the engine's memory under the database's size with --memory, or build more warehouses than memory holds"
                .into(),
        );
    }
    if s > 0.0 && s < SHORT_WINDOW_S && !m.partial {
        warnings.push(format!(
            "a {s:.0} s window is short: checkpoints and caches have not settled (HammerDB's default is 5 minutes after a 2-minute ramp); use --duration 5m for numbers to compare"
        ));
    }
    if engine.name() == "sqlite" && o.users > 1 {
        warnings.push(
            "SQLite lets one writer at a time: the users queue for the write lock, so NOPM measures that lock as well as the storage"
                .into(),
        );
    }
    warnings
}

fn document(
    engine: &dyn Database,
    o: &Options,
    start_unix_s: u64,
    built: &build::Built,
    m: &driver::Measured,
    consistency: Vec<iolab_report::db::ConsistencyCheck>,
    size_bytes: Option<u64>,
) -> DbResult {
    let s = m.measured_s;
    let transactions = transactions(m);
    let new_orders = m.tx[TxType::NewOrder.index()].committed;
    let completed: u64 = m.tx.iter().map(|x| x.committed + x.rolled_back).sum();
    let devices: Vec<DeviceView> =
        m.devices.iter().map(|(d, c)| crate::devices::device_view(d, c, s)).collect();
    let warnings = warnings(engine, o, m, &consistency, &devices);
    DbResult {
        header: DbHeader::new(DB_SCHEMA, "tpcc", Some(TPCC_DISCLAIMER), o.seed, start_unix_s),
        engine: crate::engine_view(engine, size_bytes),
        config: TpccConfig {
            warehouses: o.warehouses as u32,
            users: o.users,
            items: o.items as u32,
            customers_per_district: load::CUSTOMERS as u32,
            ramp_s: o.ramp.as_secs_f64(),
            duration_s: o.duration.as_secs_f64(),
            think_time: false,
            mix: TxType::ALL.iter().map(|t| MixShare { name: t.name().into(), pct: t.pct() }).collect(),
        },
        build: built.view(&schema::TABLES),
        run: TpccRun {
            measured_s: s,
            nopm: per_minute(new_orders, s),
            tpm: per_minute(completed, s),
            nopm_database: m.new_orders_database.map(|n| per_minute(n, s)),
            transactions,
            delivery_districts_skipped: m.skipped,
        },
        consistency,
        devices,
        warnings,
        partial: m.partial,
    }
}
