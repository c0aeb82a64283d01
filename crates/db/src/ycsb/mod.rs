//! `iolab db ycsb`: a key-value workload in the manner of YCSB's CoreWorkload (Cooper et al., "Benchmarking
//! Cloud Serving Systems with YCSB", SoCC 2010): one table of records, each a key and ten 100-byte fields
//! (`load`); users that run operations back to back with no think time on the crate's closed loop
//! (`driver`), in the mix of one of YCSB's six core workloads ([`Mix`]), on records chosen as
//! YCSB chooses them ([`keys`]); reported as operations per second and per-operation response times
//! (`ops`), with the devices under the database over the window. It is YCSB-*style*: iolab's own client
//! and SQL (YCSB's JDBC binding's statements), so its numbers compare with YCSB's in kind.
//!
//! The workloads, as YCSB's `workloads/workloada` to `workloadf` define them:
//!
//! | workload | mix | records chosen | what it is |
//! |---|---|---|---|
//! | a | read 50 %, update 50 % | zipfian | update heavy (a session store) |
//! | b | read 95 %, update 5 % | zipfian | read mostly (photo tagging) |
//! | c | read 100 % | zipfian | read only (a profile cache) |
//! | d | read 95 %, insert 5 % | latest | read the newest (status updates) |
//! | e | scan 95 %, insert 5 % | zipfian, scans of 1 to 100 records | short ranges (threaded conversations) |
//! | f | read 50 %, read-modify-write 50 % | zipfian | read, modify, write (a user database) |

pub mod keys;
pub(crate) mod load;
pub(crate) mod ops;

use crate::database::Database;
use crate::driver::{self, Measured, Spec};
use crate::workload::{Context, Figure, StorageSettings, UsersPoint, Workload};
use crate::WorkloadError;
use iolab_report::db::{DatabaseIo, DbHeader, DeviceView, MixShare, TxResult};
use iolab_report::kinds::db_ycsb::{YcsbConfig, YcsbResult, YcsbRun, DB_YCSB_SCHEMA, YCSB_DISCLAIMER};
use keys::{Chooser, Distribution};
use ops::{Shared, User, YcsbOp};
use std::time::Duration;

/// A window shorter than this is flagged: the database's caches and checkpoints have not settled.
pub const SHORT_WINDOW_S: f64 = 60.0;

/// The longest scan of workload E, records (YCSB's `maxscanlength`).
pub const MAX_SCAN: u32 = 100;

/// One of YCSB's six core workloads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mix {
    /// Update heavy.
    A,
    /// Read mostly.
    B,
    /// Read only.
    C,
    /// Read the newest.
    D,
    /// Short ranges.
    E,
    /// Read, modify, write.
    F,
}

impl Mix {
    /// The workload of `letter` (`a` to `f`, either case); `None` for anything else.
    pub fn parse(letter: &str) -> Option<Mix> {
        Some(match letter.trim().to_ascii_lowercase().as_str() {
            "a" => Mix::A,
            "b" => Mix::B,
            "c" => Mix::C,
            "d" => Mix::D,
            "e" => Mix::E,
            "f" => Mix::F,
            _ => return None,
        })
    }

    /// Its letter.
    pub fn letter(self) -> &'static str {
        ["a", "b", "c", "d", "e", "f"][self as usize]
    }

    /// Percent of each operation, in `ops::YcsbOp::ALL`'s order (read, update, insert, scan,
    /// read-modify-write).
    pub fn pcts(self) -> [u32; 5] {
        match self {
            Mix::A => [50, 50, 0, 0, 0],
            Mix::B => [95, 5, 0, 0, 0],
            Mix::C => [100, 0, 0, 0, 0],
            Mix::D => [95, 0, 5, 0, 0],
            Mix::E => [0, 0, 5, 95, 0],
            Mix::F => [50, 0, 0, 0, 50],
        }
    }

    /// Which records its operations favour.
    pub fn distribution(self) -> Distribution {
        if self == Mix::D {
            Distribution::Latest
        } else {
            Distribution::Zipfian
        }
    }
}

/// What `iolab db ycsb` asks.
#[derive(Clone, Debug)]
pub struct Options {
    /// The core workload.
    pub mix: Mix,
    /// Records to load.
    pub records: u64,
    /// Users.
    pub users: u32,
    /// Ramp before the window.
    pub ramp: Duration,
    /// The window.
    pub duration: Duration,
    /// The seed of the data and of every user's stream.
    pub seed: u64,
}

/// The ycsb workload: the table loaded, then one window of the mix.
pub struct Ycsb {
    o: Options,
    start_unix_s: u64,
    built: Option<load::Built>,
    measured: Option<Measured>,
}

impl Ycsb {
    /// The workload of `o`.
    pub fn new(o: Options) -> Ycsb {
        Ycsb { o, start_unix_s: 0, built: None, measured: None }
    }
}

/// The headline figure so far: operations per second.
fn figures(completed: u64, _: u64, measured_s: f64) -> Vec<Figure> {
    vec![Figure {
        shown: "ops/s",
        metric: "ops_per_second",
        help: "operations per second over the measured window so far, every kind",
        value: (measured_s > 0.0).then(|| completed as f64 / measured_s),
    }]
}

impl Workload for Ycsb {
    type Document = YcsbResult;

    fn name(&self) -> &'static str {
        "ycsb"
    }

    fn seed(&self) -> u64 {
        self.o.seed
    }

    fn connections(&self) -> u32 {
        self.o.users + crate::bulk::MAX_LOADERS + 10
    }

    fn users(&self) -> Vec<u32> {
        vec![self.o.users]
    }

    fn space_need(&self, database: crate::database::DatabaseKind) -> Option<crate::workload::SpaceNeed> {
        Some(crate::workload::SpaceNeed {
            bytes: vec![crate::sizes::ycsb_bytes(database, self.o.records)],
            sized_by: format!("--records {}", self.o.records),
            flag: "--records",
        })
    }

    fn build(&mut self, cx: &Context<'_>) -> Result<(), WorkloadError> {
        self.start_unix_s =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
        let records = self.o.records;
        cx.observer.notice(&format!(
            "loading {} records of {} fields × {} bytes on {}",
            records,
            load::FIELDS,
            load::FIELD_BYTES,
            cx.database.version()
        ));
        let built =
            load::build(cx.database, records, self.o.seed, cx.stop, &|n| cx.observer.loaded(n, records))?;
        cx.observer.notice(&format!("loaded in {:.1} s", built.seconds));
        self.built = Some(built);
        Ok(())
    }

    fn run(&mut self, cx: &Context<'_>, point: UsersPoint) -> Result<(), WorkloadError> {
        let o = &self.o;
        cx.observer.notice(&format!(
            "running workload {} with {} user{}: {:.0} s ramp, {:.0} s measured",
            o.mix.letter(),
            point.users,
            if point.users == 1 { "" } else { "s" },
            o.ramp.as_secs_f64(),
            o.duration.as_secs_f64()
        ));
        let shared = Shared::new(o.records);
        let chooser = Chooser::new(o.mix.distribution(), o.records);
        let users = (0..point.users)
            .map(|i| User::new(i, o.seed, o.mix.pcts(), chooser.clone(), u64::from(MAX_SCAN), shared.clone()))
            .collect();
        let spec = Spec { ramp: o.ramp, duration: o.duration, kinds: &ops::NAMES, figures, edge: None };
        self.measured = Some(driver::run(cx.database, &spec, users, cx.stop, cx.observer)?);
        Ok(())
    }

    fn document(&mut self, cx: &Context<'_>, storage: &StorageSettings) -> Result<YcsbResult, WorkloadError> {
        let m = self.measured.take().expect("the harness runs before the document");
        let built = self.built.as_ref().expect("the harness builds first");
        let size_bytes = cx.database.dir().map(crate::devices::dir_bytes);
        let ran = (&m, size_bytes, cx.observer.database_io());
        let mut doc = document(cx.database, &self.o, self.start_unix_s, built, ran);
        let seen = (&doc.devices[..], doc.database_io.as_ref());
        storage.add_to(&mut doc.engine.settings, &mut doc.warnings, seen, doc.engine.size_bytes);
        Ok(doc)
    }
}

/// The per-minute rate of `n` events in `s` seconds (0 for an empty window).
fn per_minute(n: u64, s: f64) -> f64 {
    if s > 0.0 {
        n as f64 * 60.0 / s
    } else {
        0.0
    }
}

/// The operations of the mix (those with a share), with their counts, rates and response times.
fn operations(o: &Options, m: &Measured) -> Vec<TxResult> {
    YcsbOp::ALL
        .iter()
        .zip(&m.ops)
        .filter(|(k, _)| o.mix.pcts()[k.index()] > 0)
        .map(|(k, x)| TxResult {
            name: k.name().into(),
            committed: x.committed,
            rolled_back: x.rolled_back,
            retries: x.retries,
            failed: x.failed,
            per_minute: per_minute(x.completed(), m.measured_s),
            latency_ns: x.latency.summary(),
            histogram: x.latency.to_base64(),
        })
        .collect()
}

/// What a reader should know: operations given up, devices that read nothing, a short window, SQLite's one
/// writer.
fn warnings(
    database: &dyn Database,
    o: &Options,
    m: &Measured,
    (devices, io): (&[DeviceView], Option<&DatabaseIo>),
) -> Vec<String> {
    let mut warnings = Vec::new();
    let failed: u64 = m.ops.iter().map(|x| x.failed).sum();
    if failed > 0 {
        warnings.push(format!(
            "{failed} operations were given up after {} retries each: the database was too busy",
            crate::database::MAX_RETRIES
        ));
    }
    warnings.extend(crate::devices::database_io_warnings(io));
    if crate::devices::read_nothing(devices, io) {
        warnings.push(
            "the database read nothing from its devices in the window: the records were served from memory (the engine's cache and the page cache), so this run measured writes, flushes and CPU, not reads; hold the engine's memory under the table's size with --memory, or load more --records than memory holds"
                .into(),
        );
    }
    let s = m.measured_s;
    if s > 0.0 && s < SHORT_WINDOW_S && !m.partial {
        warnings.push(format!(
            "a {s:.0} s window is short: the database's caches and checkpoints have not settled; use --duration 5m for numbers to compare"
        ));
    }
    // Every core workload but C writes.
    if database.name() == "sqlite" && o.users > 1 && o.mix != Mix::C {
        warnings.push(
            "SQLite lets one writer at a time: the users queue for the write lock, so ops/s measures that lock as well as the storage"
                .into(),
        );
    }
    warnings.extend(m.window_end.warning());
    warnings
}

/// The `iolab.dbycsb/1` document of a run.
fn document(
    database: &dyn Database,
    o: &Options,
    start_unix_s: u64,
    built: &load::Built,
    (m, size_bytes, io): (&Measured, Option<u64>, Option<DatabaseIo>),
) -> YcsbResult {
    let s = m.measured_s;
    let devices: Vec<DeviceView> =
        m.devices.iter().map(|(d, c)| crate::devices::device_view(d, c, s)).collect();
    let database_io = crate::devices::beside(io, &devices, s);
    let completed: u64 = m.ops.iter().map(driver::TxStats::completed).sum();
    let mix = YcsbOp::ALL
        .iter()
        .map(|k| MixShare { name: k.name().into(), pct: o.mix.pcts()[k.index()] })
        .collect();
    YcsbResult {
        header: DbHeader {
            env: crate::environment(database, size_bytes),
            ..DbHeader::new(DB_YCSB_SCHEMA, "ycsb", Some(YCSB_DISCLAIMER), o.seed, start_unix_s)
        },
        engine: crate::engine_view(database, size_bytes),
        config: YcsbConfig {
            workload: o.mix.letter().into(),
            records: o.records,
            fields: load::FIELDS as u32,
            field_bytes: load::FIELD_BYTES as u32,
            distribution: o.mix.distribution().name().into(),
            max_scan: MAX_SCAN,
            users: o.users,
            ramp_s: o.ramp.as_secs_f64(),
            duration_s: o.duration.as_secs_f64(),
            mix,
        },
        build: built.view(&load::TABLES),
        run: YcsbRun {
            measured_s: s,
            ops_per_s: if s > 0.0 { completed as f64 / s } else { 0.0 },
            operations: operations(o, m),
            window_end: Some(m.window_end.clone()),
        },
        warnings: warnings(database, o, m, (&devices, database_io.as_ref())),
        devices,
        database_io,
        partial: m.partial,
    }
}
