//! The workload plug-in: what every application workload is to the [`crate::harness`], in the manner of
//! go-tpc's `Workloader` (prepare, run, check, cleanup, output) and BenchBase's `BenchmarkModule`.
//!
//! A workload never sees the storage side of a run: the harness has made the database's directory, held its
//! pages under `--memory`, started its engine, and puts `--throttle` and `--capture` on and off at the
//! measured window's edges, which the workload marks by telling its observer ([`WorkloadObserver::window`]).
//! The harness calls the steps in order, [`Workload::build`], then [`Workload::run`] and
//! [`Workload::check`] for each of its points (one, or one per user count of a sweep), then
//! [`Workload::document`], and [`Workload::cleanup`] on every path (success, error, stop), and undoes what
//! it made in the reverse order. A workload prints nothing: it tells its observer, which the binary
//! draws as notices, bars and `--metrics`, and a test records.

use crate::database::Database;
use crate::WorkloadError;
use iolab_report::db::{DatabaseIo, DeviceView, Setting};
use std::path::Path;
use std::sync::atomic::AtomicBool;

/// What a workload is given at every step.
pub struct Context<'a> {
    /// The database the harness opened.
    pub database: &'a dyn Database,
    /// Directories the harness made for the workload besides the database's, in the order the setup
    /// named them (a copy's destination).
    pub also: &'a [&'a Path],
    /// Raised to stop (Ctrl-C, SIGTERM, SIGHUP): a workload ends its measured part early (the document is
    /// then partial) or, before there is anything to report, returns [`WorkloadError::Interrupted`].
    pub stop: &'a AtomicBool,
    /// Where the workload tells what it does.
    pub observer: &'a dyn WorkloadObserver,
}

/// What the harness did to the storage under the database, for the document to say: the memory limit's
/// setting (its budget and the peaks seen) and the throttle in place.
#[derive(Clone, Debug, Default)]
pub struct StorageSettings {
    /// `--memory`'s setting (`memory_limit`).
    pub memory: Option<Setting>,
    /// `--memory`'s budget for pages, bytes.
    pub memory_bytes: Option<u64>,
    /// `--throttle`'s setting (`throttle`).
    pub throttle: Option<Setting>,
    /// With `--capture`: each measured window's trace file, in the order the windows ran (a sweep's
    /// points), `None` where that window's trace was not written.
    pub captures: Vec<Option<String>>,
}

impl StorageSettings {
    /// Adds the settings to a document's engine `settings` and, when a database held under `--memory` read
    /// nothing from its devices in the window (`devices::read_nothing`), a warning that the
    /// database (`size` bytes) fits in the memory given, to its `warnings`.
    pub fn add_to(
        &self,
        settings: &mut Vec<Setting>,
        warnings: &mut Vec<String>,
        (devices, io): (&[DeviceView], Option<&DatabaseIo>),
        size: Option<u64>,
    ) {
        warnings.extend(self.memory_warning(devices, io, size));
        settings.extend(self.memory.iter().chain(&self.throttle).cloned());
    }

    /// The database (`size` bytes) against the memory that could hold it: `--memory`'s budget, else the
    /// machine's (`machine` bytes); none without a size or a memory.
    pub fn memory_fit(
        &self,
        size: Option<u64>,
        machine: Option<u64>,
    ) -> Option<iolab_report::db_window::MemoryFit> {
        let size = size?;
        match self.memory_bytes {
            Some(m) => iolab_report::db_window::MemoryFit::of(size, m, true),
            None => iolab_report::db_window::MemoryFit::of(size, machine?, false),
        }
    }

    /// The warning for a run under `--memory` whose database read nothing from its devices (its own reads
    /// where counted, else the devices'): the limit was above the database.
    pub fn memory_warning(
        &self,
        devices: &[DeviceView],
        io: Option<&DatabaseIo>,
        size: Option<u64>,
    ) -> Option<String> {
        let m = self.memory.as_ref()?;
        crate::devices::read_nothing(devices, io).then(|| {
            format!(
                "under --memory {} the database still read nothing from its devices: it ({}) fits in the memory given; give a smaller --memory",
                m.value,
                size.map_or("?".into(), iolab_device::format_bytes)
            )
        })
    }
}

/// An application workload on a real database: one folder of this crate each (`tpcc`, `tpch`, `copy`,
/// `ycsb`), run by [`crate::harness::Harness::run`].
pub trait Workload {
    /// The document it returns (`iolab_report::db::DbResult` for tpcc, ...).
    type Document;

    /// Its name as documents and notices say it: `tpcc`.
    fn name(&self) -> &'static str;

    /// The seed of every random choice it makes (printed before anything is built).
    fn seed(&self) -> u64;

    /// Connections a private server must accept for it (its users and loaders, with room to spare).
    fn connections(&self) -> u32;

    /// The user counts it runs at, one point each: one for a single run, several for a sweep over users
    /// (HammerDB's autopilot), each point with its own ramp, window and check on the one database. With
    /// several, `--capture FILE` records one trace per point (FILE with `.users-N` before its
    /// extension). Never empty.
    fn users(&self) -> Vec<u32>;

    /// What its build writes, estimated before anything is made, for the free-space check
    /// (`harness::space`); `database` is the engine. Default: nothing known (no check).
    fn space_need(&self, database: crate::database::DatabaseKind) -> Option<SpaceNeed> {
        let _ = database;
        None
    }

    /// Whether iolab's own process (or a tool it starts, such as `pg_basebackup`) issues some of the
    /// measured I/O beside a private server: then the database's own I/O counts iolab's too. Default: no.
    fn iolab_does_io(&self) -> bool {
        false
    }

    /// Creates and loads the database (go-tpc's Prepare).
    fn build(&mut self, cx: &Context<'_>) -> Result<(), WorkloadError>;

    /// The measured part of `point`: its window opened and closed through the observer. A raised stop ends
    /// it early, and the harness runs no further point.
    fn run(&mut self, cx: &Context<'_>, point: UsersPoint) -> Result<(), WorkloadError>;

    /// Checks what `point`'s run left (consistency conditions). Default: nothing to check.
    fn check(&mut self, cx: &Context<'_>, point: UsersPoint) -> Result<(), WorkloadError> {
        let _ = (cx, point);
        Ok(())
    }

    /// The document of what was built, run and checked (the points that ran), with what the harness did to
    /// the storage.
    fn document(
        &mut self,
        cx: &Context<'_>,
        storage: &StorageSettings,
    ) -> Result<Self::Document, WorkloadError>;

    /// Drops what the workload made that the harness does not remove (its schema on a user's server).
    /// Called once on every path. Default: nothing.
    fn cleanup(&mut self, cx: &Context<'_>) -> Result<(), WorkloadError> {
        let _ = cx;
        Ok(())
    }
}

/// A workload's build size, estimated from sizes measured on real builds (docs/DB.md, "Free space").
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpaceNeed {
    /// Bytes under the database's directory, then under each other directory the setup names, in its order.
    pub bytes: Vec<u64>,
    /// The flags that size it, as typed: `--warehouses 20`.
    pub sized_by: String,
    /// The flag to lower: `--warehouses`.
    pub flag: &'static str,
}

/// One point of a run: the workload at `users` users, point `index` (from 0) of `count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UsersPoint {
    /// Its place, from 0.
    pub index: usize,
    /// Points in the run (1: a single run; more: a sweep over users).
    pub count: usize,
    /// Users at this point.
    pub users: u32,
}

/// A headline figure of a workload so far, as the bars and `--metrics` show it (tpcc's NOPM).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Figure {
    /// As a bar shows it: `NOPM`.
    pub shown: &'static str,
    /// Its `--metrics` name: `nopm`.
    pub metric: &'static str,
    /// Its `--metrics` help.
    pub help: &'static str,
    /// The value; `None` before the window.
    pub value: Option<f64>,
}

/// Where a workload's run is, as the observer is told about every [`LIVE_EVERY`] from the driver's thread
/// and once at the end of each window: what a progress bar and `--metrics` show, whatever the workload.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Live {
    /// Users (connections) running.
    pub users: u32,
    /// Seconds since the users started.
    pub elapsed_s: f64,
    /// The ramp asked for, seconds.
    pub ramp_s: f64,
    /// The window asked for, seconds.
    pub duration_s: f64,
    /// Seconds of the window so far (0 in the ramp).
    pub measured_s: f64,
    /// Operations completed in the window so far, per kind, in the workload's order (tpcc: its five
    /// transactions, committed or rolled back).
    pub completed: Vec<(&'static str, u64)>,
    /// The workload's headline figures so far.
    pub figures: Vec<Figure>,
}

impl Live {
    /// Operations of every kind completed in the window so far.
    pub fn completed_total(&self) -> u64 {
        self.completed.iter().map(|(_, n)| n).sum()
    }
}

/// How often the observer hears where a run is.
pub const LIVE_EVERY: std::time::Duration = std::time::Duration::from_millis(100);

/// What the caller of a workload is told as it goes. Only `notice` must be written; the rest marks the
/// measured window's edges and feeds live displays (progress bars, `--metrics`), and does nothing unless
/// implemented. Shared with the loading and user threads, hence `Sync`.
pub trait WorkloadObserver: Sync {
    /// A line for people (what is being done now).
    fn notice(&self, text: &str);

    /// The measured window opens (`true`: just before the device counters are first read) or closes
    /// (`false`: just after they are last read). The harness starts and stops `--capture` here, and puts
    /// `--throttle` on at the first opening if the workload has not started before. Default: nothing.
    fn window(&self, open: bool) {
        let _ = open;
    }

    /// The build loaded `rows` more rows, of about `expected` in all; called after each chunk, from
    /// whichever thread loaded it.
    fn loaded(&self, rows: u64, expected: u64) {
        let _ = (rows, expected);
    }

    /// A run at `users` users starts (its ramp): point `index` (from 0) of `count` (1 for a single run).
    fn point(&self, index: usize, count: usize, users: u32) {
        let _ = (index, count, users);
    }

    /// Where the run is.
    fn live(&self, live: &Live) {
        let _ = live;
    }

    /// The database's own I/O since the measured window last opened, to its close (to now while it is
    /// open), when the harness counts it (docs/DB.md, "The database's own I/O"): counts by disk, to be put
    /// beside the devices' with `devices::beside`. Default: `None` (nothing counts it).
    fn database_io(&self) -> Option<DatabaseIo> {
        None
    }
}

/// An observer that ignores everything: for tests and callers that need no notices.
pub struct Unobserved;

impl WorkloadObserver for Unobserved {
    fn notice(&self, _: &str) {}
}
