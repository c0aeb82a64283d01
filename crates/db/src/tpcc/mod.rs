//! `iolab db tpcc`: an OLTP workload derived from the TPC-C specification (revision 5.11), in the manner of
//! HammerDB's TPROC-C: the nine tables and the five transactions in the standard mix, NURand keys, no
//! keying or think time, reported as new orders per minute (NOPM) and transactions per minute (TPM) with
//! per-transaction response times, and the consistency conditions checked afterwards. It is *derived from*
//! TPC-C, not compliant with it (no terminals, no audited durability, scaled items when asked, money in
//! integer cents) and its numbers are not comparable with published TPC results.
//!
//! [`Tpcc`] is the workload the harness runs ([`crate::workload::Workload`]): it builds ([`build`]), then at
//! each user count runs (`driver`) and checks ([`check`]), and returns the `iolab.db/1` document, or for
//! several user counts (HammerDB's autopilot) the `iolab.dbsweep/1` one. The parts: [`rand`] (NURand, the strings, the mix's deck),
//! [`schema`], `load`, [`txn`] (the five transactions).

pub mod build;
pub mod check;
pub(crate) mod driver;
pub(crate) mod load;
pub mod rand;
pub mod schema;
pub mod txn;

use crate::database::Database;
use crate::workload::{Context, StorageSettings, UsersPoint, Workload, WorkloadObserver};
use crate::WorkloadError;
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

/// What `iolab db tpcc` asks (the user counts apart: [`Tpcc::new`]).
#[derive(Clone, Debug)]
pub struct Options {
    /// Warehouses to build.
    pub warehouses: u64,
    /// Items (stock per warehouse).
    pub items: u64,
    /// Ramp.
    pub ramp: Duration,
    /// Measured window.
    pub duration: Duration,
    /// The seed.
    pub seed: u64,
}

/// What `iolab db tpcc` returns: one run's document, or a sweep's over users.
#[derive(Clone, Debug)]
pub enum TpccDocument {
    /// One user count (`iolab.db/1`).
    Run(Box<DbResult>),
    /// Several (`iolab.dbsweep/1`).
    Sweep(Box<DbSweepResult>),
}

/// The tpcc workload: built once, then run and checked at each user count.
pub struct Tpcc {
    o: Options,
    users: Vec<u32>,
    start_unix_s: u64,
    built: Option<build::Built>,
    /// The last point's start (Unix seconds) and measurements, until it is checked.
    measured: Option<(u64, driver::Measured)>,
    points: Vec<DbSweepPoint>,
}

impl Tpcc {
    /// The workload of `o` at each of `users` (one: a single run; several: a sweep over users, in order).
    pub fn new(o: Options, users: Vec<u32>) -> Tpcc {
        Tpcc { o, users, start_unix_s: now_unix_s(), built: None, measured: None, points: Vec::new() }
    }
}

impl Workload for Tpcc {
    type Document = TpccDocument;

    fn name(&self) -> &'static str {
        "tpcc"
    }

    fn seed(&self) -> u64 {
        self.o.seed
    }

    fn connections(&self) -> u32 {
        self.users.iter().copied().max().unwrap_or(1) + crate::bulk::MAX_LOADERS + 10
    }

    fn users(&self) -> Vec<u32> {
        self.users.clone()
    }

    fn space_need(&self, database: crate::database::DatabaseKind) -> Option<crate::workload::SpaceNeed> {
        Some(crate::workload::SpaceNeed {
            bytes: vec![crate::sizes::tpcc_bytes(database, self.o.warehouses, self.o.items)],
            sized_by: format!("--warehouses {} with {} items", self.o.warehouses, self.o.items),
            flag: "--warehouses",
        })
    }

    fn build(&mut self, cx: &Context<'_>) -> Result<(), WorkloadError> {
        self.start_unix_s = now_unix_s();
        self.built = Some(build_database(cx.database, &self.o, cx.stop, cx.observer)?);
        Ok(())
    }

    fn run(&mut self, cx: &Context<'_>, point: UsersPoint) -> Result<(), WorkloadError> {
        let (o, users) = (&self.o, point.users);
        cx.observer.notice(&format!(
            "running {users} user{}: {:.0} s ramp, {:.0} s measured",
            if users == 1 { "" } else { "s" },
            o.ramp.as_secs_f64(),
            o.duration.as_secs_f64()
        ));
        let spec = driver::RunSpec {
            users,
            warehouses: o.warehouses,
            items: o.items,
            seed: o.seed,
            ramp: o.ramp,
            duration: o.duration,
        };
        // A single run's document starts with its build; a sweep's points each at their own start.
        let start_unix_s = if point.count == 1 { self.start_unix_s } else { now_unix_s() };
        let measured = driver::run(cx.database, &spec, cx.stop, cx.observer)?;
        self.measured = Some((start_unix_s, measured));
        Ok(())
    }

    fn check(&mut self, cx: &Context<'_>, point: UsersPoint) -> Result<(), WorkloadError> {
        cx.observer.notice("checking the consistency conditions");
        let mut conn = cx.database.connect()?;
        let consistency = check::check_all(conn.as_mut())?;
        drop(conn);
        let (start_unix_s, measured) = self.measured.take().expect("a point is checked after it ran");
        let built = self.built.as_ref().expect("a point runs after the build");
        let size_bytes = cx.database.dir().map(crate::devices::dir_bytes);
        let io = cx.observer.database_io();
        let ran = Ran { users: point.users, start_unix_s, built, measured: &measured, size_bytes, io };
        let result = document(cx.database, &self.o, &ran, consistency);
        self.points.push(DbSweepPoint { users: point.users, result, capture: None });
        Ok(())
    }

    fn document(
        &mut self,
        _: &Context<'_>,
        storage: &StorageSettings,
    ) -> Result<TpccDocument, WorkloadError> {
        for (i, p) in self.points.iter_mut().enumerate() {
            p.capture = storage.captures.get(i).cloned().flatten();
            let d = &mut p.result;
            let seen = (&d.devices[..], d.database_io.as_ref());
            storage.add_to(&mut d.engine.settings, &mut d.warnings, seen, d.engine.size_bytes);
            let machine = d.header.env.as_ref().map(|e| e.mem_total_bytes);
            d.memory_fit = storage.memory_fit(d.engine.size_bytes, machine);
        }
        if self.users.len() == 1 {
            let point = self.points.pop().expect("the harness runs a point before the document");
            return Ok(TpccDocument::Run(Box::new(point.result)));
        }
        let points = std::mem::take(&mut self.points);
        let partial = points.len() < self.users.len() || points.iter().any(|p| p.result.partial);
        // The machine and storage as the last point saw them (its size the largest).
        let env = points.last().and_then(|p| p.result.header.env.clone());
        let mut s = DbSweepResult {
            header: DbHeader {
                env,
                ..DbHeader::new(
                    DB_SWEEP_SCHEMA,
                    "tpcc",
                    Some(TPCC_DISCLAIMER),
                    self.o.seed,
                    self.start_unix_s,
                )
            },
            axis: "users".into(),
            users: self.users.clone(),
            points,
            knee: None,
            partial,
        };
        s.analyze(DEFAULT_KNEE_IOPS_GAIN_PCT, DEFAULT_KNEE_LAT_GROWTH_PCT);
        Ok(TpccDocument::Sweep(Box::new(s)))
    }
}

fn now_unix_s() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// The build, with its notices and the rows it loads told to the observer.
fn build_database(
    database: &dyn Database,
    o: &Options,
    stop: &AtomicBool,
    observer: &dyn WorkloadObserver,
) -> Result<build::Built, WorkloadError> {
    observer.notice(&format!(
        "building {} warehouse{} ({} items) on {}",
        o.warehouses,
        if o.warehouses == 1 { "" } else { "s" },
        o.items,
        database.version()
    ));
    let expected = build::expected_rows(o.warehouses, o.items);
    let built =
        build::build(database, o.warehouses, o.items, o.seed, stop, &|n| observer.loaded(n, expected))?;
    observer.notice(&format!("built in {:.1} s", built.seconds));
    Ok(built)
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
        .zip(&m.ops)
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

/// One point as it ran, for its document.
struct Ran<'a> {
    users: u32,
    start_unix_s: u64,
    built: &'a build::Built,
    measured: &'a driver::Measured,
    size_bytes: Option<u64>,
    /// The database's own I/O over the window, as the harness counted it.
    io: Option<iolab_report::db::DatabaseIo>,
}

/// What a reader should know: transactions given up, a failed consistency condition, devices that read
/// nothing, a short window, SQLite's one writer.
fn warnings(
    database: &dyn Database,
    ran: &Ran<'_>,
    consistency: &[iolab_report::db::ConsistencyCheck],
    (devices, io): (&[DeviceView], Option<&iolab_report::db::DatabaseIo>),
) -> Vec<String> {
    let m = ran.measured;
    let s = m.measured_s;
    let mut warnings = Vec::new();
    let failed: u64 = m.ops.iter().map(|x| x.failed).sum();
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
    warnings.extend(crate::devices::database_io_warnings(io));
    if crate::devices::read_nothing(devices, io) {
        warnings.push(
            "the database read nothing from its devices in the window: it was served from memory (the engine's cache and the page cache), so this run measured writes, flushes and CPU, not reads; hold the engine's memory under the database's size with --memory, or build more warehouses than memory holds"
                .into(),
        );
    }
    if s > 0.0 && s < SHORT_WINDOW_S && !m.partial {
        warnings.push(format!(
            "a {s:.0} s window is short: checkpoints and caches have not settled (HammerDB's default is 5 minutes after a 2-minute ramp); use --duration 5m for numbers to compare"
        ));
    }
    if database.name() == "sqlite" && ran.users > 1 {
        warnings.push(
            "SQLite lets one writer at a time: the users queue for the write lock, so NOPM measures that lock as well as the storage"
                .into(),
        );
    }
    warnings.extend(m.window_end.warning());
    warnings
}

/// One point's document (`iolab.db/1`).
fn document(
    database: &dyn Database,
    o: &Options,
    ran: &Ran<'_>,
    consistency: Vec<iolab_report::db::ConsistencyCheck>,
) -> DbResult {
    let m = ran.measured;
    let s = m.measured_s;
    let transactions = transactions(m);
    let new_orders = m.ops[TxType::NewOrder.index()].committed;
    let completed: u64 = m.ops.iter().map(driver::TxStats::completed).sum();
    let devices: Vec<DeviceView> =
        m.devices.iter().map(|(d, c)| crate::devices::device_view(d, c, s)).collect();
    let database_io = crate::devices::beside(ran.io.clone(), &devices, s);
    let warnings = warnings(database, ran, &consistency, (&devices, database_io.as_ref()));
    DbResult {
        header: DbHeader {
            env: crate::environment(database, ran.size_bytes),
            ..DbHeader::new(DB_SCHEMA, "tpcc", Some(TPCC_DISCLAIMER), o.seed, ran.start_unix_s)
        },
        engine: crate::engine_view(database, ran.size_bytes),
        config: TpccConfig {
            warehouses: o.warehouses as u32,
            users: ran.users,
            items: o.items as u32,
            customers_per_district: load::CUSTOMERS as u32,
            ramp_s: o.ramp.as_secs_f64(),
            duration_s: o.duration.as_secs_f64(),
            think_time: false,
            mix: TxType::ALL.iter().map(|t| MixShare { name: t.name().into(), pct: t.pct() }).collect(),
        },
        build: ran.built.view(&schema::TABLES),
        run: TpccRun {
            measured_s: s,
            nopm: per_minute(new_orders, s),
            tpm: per_minute(completed, s),
            nopm_database: m.edge_delta.map(|n| per_minute(n, s)),
            transactions,
            delivery_districts_skipped: m.extra,
            window_end: Some(m.window_end.clone()),
            intervals: m.intervals.clone(),
            cpu: m.cpu.clone(),
        },
        consistency,
        devices,
        database_io,
        memory_fit: None,
        warnings,
        partial: m.partial,
    }
}
