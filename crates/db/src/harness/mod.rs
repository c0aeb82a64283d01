//! The storage side of an application run, as a library: what `iolab run`'s `iolab_run::execute` is to a
//! job, [`Harness`] is to a [`Workload`]. It prints nothing, installs no signal handler, and takes a plain
//! [`Setup`] (no command-line types).
//!
//! 1. [`Harness::claim`] checks the setup and claims every path it will write in the command's one
//!    [`WriteGate`] (the database's directory, a workload's other directories, `--capture`'s outputs),
//!    before anything is made, and checks the file systems under the directories have room for the
//!    workload's build (`space`): a refusal is [`WorkloadError::Setup`].
//! 2. [`Harness::run`] makes, in order, the directories, the `--memory` cgroup (iolab joins it for SQLite;
//!    a private server joins it between its fork and its exec), the database (a SQLite file, a private
//!    PostgreSQL server, or the user's server), arms `--throttle` and `--capture` over the directories,
//!    counts the database's own I/O (its processes, or iolab's for SQLite, in a cgroup's block I/O
//!    accounting: `watch`), then runs the workload's steps: build, each point's run and check (one point,
//!    or a sweep over users), document; `cleanup` on every path. It then undoes what it made in the reverse order: the
//!    database closed (a private server stopped), the cgroups removed, the directories removed (unless
//!    `--keep`), on success, on error and on a raised stop flag alike. An exit that skips destructors (a
//!    second Ctrl-C) is the caller's to handle with [`crate::cleanup_on_exit`].
//!
//! The workload tells the caller's observer what it does through the harness's own (`watch`), which
//! puts `--throttle` on when the workload starts and records `--capture` over each measured window.

mod dir;
mod setup;
mod space;
mod watch;

pub use dir::{cleanup_on_exit as remove_dirs_on_exit, DbDir};
pub use setup::{window_capture_path, DatabaseKind, Setup, Typed, MIN_MEMORY};
pub use watch::CaptureWritten;

use crate::database::postgres::Postgres;
use crate::database::server::ServerOptions;
use crate::database::sqlite::Sqlite;
use crate::database::Database;
use crate::workload::{Context, StorageSettings, UsersPoint, Workload, WorkloadObserver};
use crate::WorkloadError;
use iolab_device::ioacct::{IoAccount, Members};
use iolab_device::memlimit::MemoryLimit;
use iolab_device::WriteGate;
use iolab_report::db::Setting;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use watch::HarnessObserver;

/// A setup checked and its paths claimed, nothing made yet.
#[derive(Debug)]
pub struct Harness {
    setup: Setup,
    claimed: setup::Claimed,
    /// The user counts of the workload's points.
    users: Vec<u32>,
}

/// What a run gave: the workload's document and what each window's capture wrote.
#[derive(Debug)]
pub struct Ran<D> {
    /// The workload's document.
    pub document: D,
    /// Per window, in order: the trace written (its ops) or why not; empty without `--capture`.
    pub captures: Vec<CaptureWritten>,
}

/// The labels of a run's windows when it has several points: `users-N` each.
fn window_labels(users: &[u32]) -> Vec<String> {
    if users.len() < 2 {
        return Vec::new();
    }
    users.iter().map(|u| format!("users-{u}")).collect()
}

impl Harness {
    /// Checks `setup` and claims its paths in `gate` for `workload` (whose points decide how many traces
    /// `--capture` writes). Nothing is made; every refusal is [`WorkloadError::Setup`].
    pub fn claim<W: Workload>(
        setup: Setup,
        workload: &W,
        gate: &mut WriteGate,
    ) -> Result<Harness, WorkloadError> {
        setup.check()?;
        let users = workload.users();
        assert!(!users.is_empty(), "a workload runs at least one point");
        let claimed = setup::claim(&setup, &window_labels(&users), gate)?;
        space::check(&setup, &claimed, workload)?;
        Ok(Harness { setup, claimed, users })
    }

    /// The path of the database's directory, when iolab keeps one (not with `--url`).
    pub fn dir(&self) -> Option<&str> {
        self.claimed.dir.as_ref().map(|(p, _)| p.as_str())
    }

    /// Runs `workload` on the storage side the setup asked for (the module doc says the order), telling
    /// `observer`; `stop` raised ends it early. Undoes everything it made on every path.
    pub fn run<W: Workload>(
        self,
        mut workload: W,
        observer: &dyn WorkloadObserver,
        stop: &AtomicBool,
    ) -> Result<Ran<W::Document>, WorkloadError> {
        let watch = HarnessObserver::new(observer, self.claimed.captures);
        let made = Made::make(&self.setup, self.claimed.dir, self.claimed.also, &watch, stop, &workload)?;
        let result = made.arm(&self.setup, &watch, workload.iolab_does_io()).and_then(|()| {
            let also: Vec<&Path> = made.also.iter().map(DbDir::path).collect();
            let cx = Context { database: made.database.as_ref(), also: &also, stop, observer: &watch };
            let done = steps(&mut workload, &cx, &self.users, || made.storage(&watch));
            let cleaned = workload.cleanup(&cx);
            done.and_then(|d| cleaned.map(|()| d))
        });
        let closed = made.close(&watch);
        let captures = watch.finish_captures();
        let document = result?;
        closed?;
        Ok(Ran { document, captures })
    }
}

/// The workload's steps, in order: build; each point's run and check, until the last or a stop; the
/// document, with what the harness did to the storage (read by `storage` before anything is undone).
fn steps<W: Workload>(
    workload: &mut W,
    cx: &Context<'_>,
    users: &[u32],
    storage: impl FnOnce() -> Result<StorageSettings, WorkloadError>,
) -> Result<W::Document, WorkloadError> {
    workload.build(cx)?;
    let mut ran = 0;
    for (index, &u) in users.iter().enumerate() {
        if cx.stop.load(Ordering::Relaxed) {
            break;
        }
        let point = UsersPoint { index, count: users.len(), users: u };
        cx.observer.point(index, users.len(), u);
        workload.run(cx, point)?;
        workload.check(cx, point)?;
        ran += 1;
    }
    if ran == 0 {
        return Err(WorkloadError::Interrupted);
    }
    workload.document(cx, &storage()?)
}

/// What [`Harness::run`] made, undone in field order when dropped: the database (stopping a private
/// server), then the memory limit's cgroup (empty once the server is gone), then the directories.
struct Made {
    database: Box<dyn Database>,
    memory: Option<MemoryLimit>,
    dir: Option<DbDir>,
    also: Vec<DbDir>,
}

impl Made {
    /// Makes the directories, the memory limit and the database, saying what it does on `watch`.
    fn make<W: Workload>(
        setup: &Setup,
        dir: Option<(String, iolab_device::HeldDir)>,
        also: Vec<(String, iolab_device::HeldDir)>,
        watch: &HarnessObserver<'_>,
        stop: &AtomicBool,
        workload: &W,
    ) -> Result<Made, WorkloadError> {
        let dir = dir.map(|(_, held)| DbDir::make(held, setup.keep)).transpose()?;
        let also =
            also.into_iter().map(|(_, held)| DbDir::make(held, setup.keep)).collect::<Result<Vec<_>, _>>()?;
        let memory = memory_limit(setup, watch)?;
        let database = open_database(setup, dir.as_ref(), memory.as_ref(), stop, watch, workload)?;
        Ok(Made { database, memory, dir, also })
    }

    /// The directories the run writes: the database's, then the others.
    fn dirs(&self) -> Vec<&Path> {
        self.dir.iter().chain(&self.also).map(DbDir::path).collect()
    }

    /// Arms `--throttle` (a private server's processes are moved in when it goes on) and `--capture` over
    /// the run's directories.
    fn arm(&self, setup: &Setup, watch: &HarnessObserver<'_>, iolab_too: bool) -> Result<(), WorkloadError> {
        if let Some(spec) = &setup.throttle {
            watch.arm_throttle(spec, &self.dirs(), self.database.server_processes())?;
        }
        let (whose, account) = self.accounting(setup, iolab_too);
        watch.arm_accounting(whose, account);
        watch.arm_capture(&self.dirs())
    }

    /// Whose I/O is the database's, and the account that counts it or why none can (docs/DB.md, "The
    /// database's own I/O"); `iolab_too`: iolab's own process and its children count too (a copy's
    /// `pg_basebackup`). With `--throttle` its cgroup, which holds the same processes, counts it once it
    /// is on: one cgroup serves both (a process is in one cgroup of a hierarchy).
    fn accounting(&self, setup: &Setup, iolab_too: bool) -> (&'static str, Result<IoAccount, String>) {
        let (whose, members) = match (&setup.url, setup.private_server()) {
            (Some(_), _) => {
                let why = "a server of your own (--url): iolab knows none of its processes".to_string();
                return ("the server's processes", Err(why));
            }
            (None, true) if iolab_too => (
                "the PostgreSQL server's processes and iolab's (with pg_basebackup, its child)",
                Members::ProcessesAndIolab(self.database.server_processes()),
            ),
            (None, true) => {
                ("the PostgreSQL server's processes", Members::Processes(self.database.server_processes()))
            }
            (None, false) => ("iolab's process (SQLite runs in it)", Members::Iolab),
        };
        if setup.throttle.is_some() {
            return (whose, Err("--throttle's cgroup never went on".into()));
        }
        if let Some(why) = unified_conflict(self.memory.as_ref()) {
            return (whose, Err(why.into()));
        }
        (whose, accounting_devices(&self.dirs()).and_then(|d| IoAccount::create(&d, &members)))
    }

    /// What the run did to the storage, read while it is all in place.
    fn storage(&self, watch: &HarnessObserver<'_>) -> Result<StorageSettings, WorkloadError> {
        Ok(StorageSettings {
            memory: self.memory.as_ref().map(memory_setting),
            memory_bytes: self.memory.as_ref().map(MemoryLimit::budget_bytes),
            throttle: watch.throttle_setting()?,
            captures: watch.captured(),
        })
    }

    /// Closes the database, then lets the rest go (throttle, memory limit, directories: one that cannot be
    /// removed, as a mount point inside it, is left and said on `watch`); the database's close result.
    fn close(self, watch: &HarnessObserver<'_>) -> Result<(), WorkloadError> {
        let Made { mut database, memory, dir, also } = self;
        let closed = database.close();
        // The server has stopped: its cgroups are empty and can go.
        watch.throttle_off();
        watch.accounting_off();
        drop(database);
        drop(memory);
        for d in dir.into_iter().chain(also) {
            if let Err(why) = d.remove() {
                watch.notice(&why);
            }
        }
        closed
    }
}

/// Why the database's I/O cannot be counted beside `--memory`: when both the block I/O and the memory
/// controllers are cgroup v2's, a process is in one cgroup of the one hierarchy, and moving the database
/// into an account would take it out of its memory limit.
fn unified_conflict(memory: Option<&MemoryLimit>) -> Option<&'static str> {
    use iolab_device::{memlimit::MemoryKind, throttle::CgroupKind};
    memory?;
    let io_v2 = matches!(iolab_device::throttle::detect(), Some(CgroupKind::V2 { .. }));
    let memory_v2 = matches!(iolab_device::memlimit::detect(), Some(MemoryKind::V2 { .. }));
    (io_v2 && memory_v2).then_some(
        "cgroup v2 holds a process in one cgroup, and --memory's holds the database: not counted with --memory (drop it to count the database's I/O)",
    )
}

/// The block devices under `dirs` to count the database's I/O on, or why there are none.
fn accounting_devices(dirs: &[&Path]) -> Result<Vec<(String, u32, u32)>, String> {
    let devices = watch::block_devices(dirs)?;
    if devices.is_empty() {
        let shown: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
        return Err(format!(
            "no block device under {} (tmpfs, overlay or a network file system?)",
            shown.join(" or ")
        ));
    }
    Ok(devices)
}

/// The `--memory` cgroup, with iolab in it for SQLite (a private server joins it as it starts).
fn memory_limit(setup: &Setup, watch: &HarnessObserver<'_>) -> Result<Option<MemoryLimit>, WorkloadError> {
    let Some(budget) = &setup.memory else { return Ok(None) };
    let m = MemoryLimit::create(budget.value).map_err(|e| WorkloadError::Setup(e.to_string()))?;
    if setup.database == DatabaseKind::Sqlite {
        m.join().map_err(|e| WorkloadError::Setup(e.to_string()))?;
    }
    watch.notice(&format!(
        "pages of {} held under {}, private memory apart ({})",
        if setup.private_server() { "the PostgreSQL server" } else { "iolab and its SQLite database" },
        iolab_device::format_bytes(m.budget_bytes()),
        m.describe()
    ));
    Ok(Some(m))
}

/// The memory limit as a setting (`memory_limit`: the budget for pages, the controller, the peaks of pages
/// and of private memory), read before the cgroup goes.
fn memory_setting(m: &MemoryLimit) -> Setting {
    let fmt = iolab_device::format_bytes;
    Setting {
        name: "memory_limit".into(),
        value: format!(
            "{} for pages ({}, peak {})",
            fmt(m.budget_bytes()),
            m.kind_name(),
            m.peaks().map_or("?".into(), |(pages, private)| format!(
                "{} of pages, {} private memory apart",
                fmt(pages),
                fmt(private)
            ))
        ),
    }
}

/// The database the setup names: the user's server, a private server in `dir` (in the memory cgroup when
/// given) sized for the workload's connections, or a SQLite file in `dir`.
fn open_database<W: Workload>(
    setup: &Setup,
    dir: Option<&DbDir>,
    memory: Option<&MemoryLimit>,
    stop: &AtomicBool,
    watch: &HarnessObserver<'_>,
    workload: &W,
) -> Result<Box<dyn Database>, WorkloadError> {
    Ok(match (dir, &setup.url) {
        (_, Some(url)) => Box::new(Postgres::url(url, setup.keep, stop)?),
        (Some(d), None) if setup.private_server() => {
            let options = ServerOptions {
                shared_buffers_bytes: setup.shared_buffers_bytes,
                max_connections: workload.connections(),
            };
            let procs = memory.map(MemoryLimit::procs_file);
            let pg = Postgres::private_in(d.path(), &options, setup.keep, stop, procs.as_deref())?;
            watch.notice(&format!(
                "private PostgreSQL server in {}, run as {}",
                d.path().display(),
                pg.server_user().unwrap_or_default()
            ));
            Box::new(pg)
        }
        (Some(d), None) => Box::new(Sqlite::new(d.path())),
        (None, None) => unreachable!("a directory unless --url"),
    })
}
