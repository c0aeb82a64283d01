//! What every `iolab db` workload shares in the binary: its flags checked and its paths claimed in the write
//! gate before anything is made ([`prepare`]); the database directory, the memory limit (`--memory`) and the
//! engine made in that order and undone in the reverse ([`open`], [`Opened`]); the observer that prints
//! notices and runs `--capture` over the measured window ([`Watch`]); and what is added to a result
//! afterwards (the memory limit's setting and warning, the capture written). A leaf: it imports no command.

use crate::exit::{outputs_not_written, usage};
use crate::saving::Saver;
use anyhow::Result;
use iolab_db::dir::DbDir;
use iolab_db::engine::postgres::Postgres;
use iolab_db::engine::server::ServerOptions;
use iolab_db::engine::sqlite::Sqlite;
use iolab_db::{Engine, Observer};
use iolab_device::memlimit::MemoryLimit;
use iolab_device::{DirState, Output, WriteGate};
use iolab_report::db::{DeviceView, Setting};
use iolab_spec::throttle::ThrottleSpec;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The smallest `--memory`: the pages a database needs at hand to run at all (its processes' private
/// memory is apart: the limit moves with it).
pub const MIN_MEMORY: u64 = 16 << 20;

/// A whole number flag in `lo..=hi`.
pub fn number(flag: &str, text: &str, lo: u64, hi: u64) -> Result<u64> {
    let v = iolab_spec::units::parse_count(text)
        .map_err(|e| usage(format!("invalid value '{text}' for '{flag}': {e}")))?;
    if v.fract() != 0.0 || v < lo as f64 || v > hi as f64 {
        return Err(usage(format!(
            "invalid value '{text}' for '{flag}': expected a whole number in {lo}..={hi}"
        )));
    }
    Ok(v as u64)
}

/// A duration flag.
pub fn duration(flag: &str, text: &str) -> Result<Duration> {
    iolab_spec::units::parse_duration_ns(text)
        .map(Duration::from_nanos)
        .map_err(|e| usage(format!("invalid value '{text}' for '{flag}': {e}")))
}

/// `--seed`, or a fresh one.
pub fn seed(text: Option<&str>) -> Result<u64> {
    match text {
        Some(s) => s
            .trim()
            .parse()
            .map_err(|_| usage(format!("invalid value '{s}' for '--seed': expected a whole number"))),
        None => Ok(crate::points::fresh_seed()),
    }
}

/// The database directory: `--dir`, or `iolab-db-PID` in `$IOLAB_SCRATCH_DIR` or the current directory.
pub fn dir_path(dir: Option<&str>) -> String {
    dir.map(str::to_string).unwrap_or_else(|| {
        let base = std::env::var("IOLAB_SCRATCH_DIR").unwrap_or_else(|_| ".".into());
        format!("{}/iolab-db-{}", base.trim_end_matches('/'), std::process::id())
    })
}

/// An `iolab-db` error as the binary says it: the environment's and the input's are exit-2 usage errors.
pub fn db_error(e: iolab_db::Error) -> anyhow::Error {
    if e.is_setup() {
        usage(e)
    } else {
        anyhow::Error::new(e)
    }
}

/// The flags every workload has.
pub struct EngineFlags<'a> {
    /// `--engine`.
    pub engine: &'a str,
    /// `--dir`.
    pub dir: Option<&'a str>,
    /// `--url`.
    pub url: Option<&'a str>,
    /// `--shared-buffers`.
    pub shared_buffers: &'a str,
    /// `--keep`.
    pub keep: bool,
    /// `--memory`, `--throttle`, `--capture`.
    pub storage: &'a crate::args::db::DbStorageArgs,
    /// The user counts of a sweep over users (`--users 1,2,4`): `--capture FILE` then records one trace per
    /// point, into [`point_capture_path`]; empty for one window.
    pub capture_points: &'a [u32],
}

impl crate::args::db::DbCommonArgs {
    /// Begins the command's [`Session`] in `gate` with `url` (`--url`, where the command has it), and opens
    /// the catalog's [`Saver`] (none with `--no-save`) between `--json` and the engine's flags, as
    /// `iolab db tpcc` does.
    pub fn begin(&self, gate: WriteGate, url: Option<&str>) -> Result<(Session, Option<Saver>)> {
        Session::begin_with(gate, &self.flags(url), self.json.as_deref(), self.quiet, true, |gate, quiet| {
            Saver::open(&self.catalog, quiet, false, gate)
        })
    }

    /// The engine flags, with `url` (`--url`, where the command has it).
    pub fn flags<'a>(&'a self, url: Option<&'a str>) -> EngineFlags<'a> {
        EngineFlags {
            engine: &self.engine,
            dir: self.dir.as_deref(),
            url,
            shared_buffers: &self.shared_buffers,
            keep: self.keep,
            storage: &self.storage,
            capture_points: &[],
        }
    }
}

/// The flags checked and the paths claimed, nothing made yet.
pub struct Prepared {
    /// `--engine postgres`.
    pub postgres: bool,
    url: Option<String>,
    shared_buffers: u64,
    keep: bool,
    dir: Option<(DirState, String)>,
    memory_bytes: Option<u64>,
    throttle: Option<ThrottleSpec>,
    capture: Vec<Output>,
}

/// Where a sweep's point with `users` users writes its trace: FILE with `.users-N` before its extension
/// (`tpcc.iolabtrace` becomes `tpcc.users-4.iolabtrace`; `trace` becomes `trace.users-4`).
pub fn point_capture_path(file: &str, users: u32) -> String {
    let name_at = file.rfind('/').map_or(0, |i| i + 1);
    match file[name_at..].rfind('.').filter(|&dot| dot > 0) {
        Some(dot) => format!("{}.users-{users}{}", &file[..name_at + dot], &file[name_at + dot..]),
        None => format!("{file}.users-{users}"),
    }
}

/// Claims `--capture`: its FILE, or for a sweep over users one file per point ([`point_capture_path`]),
/// each gated as the one file would be.
fn claim_captures(gate: &mut WriteGate, f: &EngineFlags) -> Result<Vec<Output>> {
    let Some(file) = f.storage.capture.as_deref() else { return Ok(Vec::new()) };
    if f.capture_points.is_empty() {
        return Ok(crate::output::claim(gate, "--capture", Some(file))?.into_iter().collect());
    }
    if file == "-" {
        return Err(usage(
            "invalid value '-' for '--capture': a sweep over users records one trace per user count, each in a file of its own; give a FILE (FILE.users-N are written)",
        ));
    }
    let mut out = Vec::new();
    for &u in f.capture_points {
        out.extend(crate::output::claim(gate, "--capture", Some(&point_capture_path(file, u)))?);
    }
    Ok(out)
}

/// Checks the engine flags and claims the database directory and `--capture` in `gate`; every refusal
/// here is the user's (exit 2) and comes before anything is made.
pub fn prepare(f: &EngineFlags, gate: &mut WriteGate) -> Result<Prepared> {
    let postgres = match f.engine {
        "sqlite" => false,
        "postgres" | "postgresql" => true,
        other => {
            return Err(usage(format!("invalid value '{other}' for '--engine': expected sqlite or postgres")))
        }
    };
    if f.url.is_some() && !postgres {
        return Err(usage("--url names a PostgreSQL server: add --engine postgres"));
    }
    if f.url.is_some() && f.dir.is_some() {
        return Err(usage(
            "--url and --dir exclude each other: a server of your own keeps its files where it keeps them",
        ));
    }
    let shared_buffers = iolab_spec::units::parse_size(f.shared_buffers)
        .map_err(|e| usage(format!("invalid value '{}' for '--shared-buffers': {e}", f.shared_buffers)))?;
    let memory_bytes = memory_flag(f, postgres, shared_buffers)?;
    let throttle = throttle_flag(f)?;
    let capture_flag = f.storage.capture.as_deref();
    if capture_flag.is_some() {
        if f.url.is_some() {
            return Err(usage(
                "--capture records the devices under --dir; a server of your own (--url) has no devices iolab knows",
            ));
        }
        iolab_trace::capture::tracefs().map_err(|e| usage(format!("--capture: {e}")))?;
    }
    let capture = claim_captures(gate, f)?;
    let dir = match f.url {
        None => {
            let path = dir_path(f.dir);
            Some((gate.database_dir("--dir", &path).map_err(usage)?, path))
        }
        Some(_) => None,
    };
    Ok(Prepared {
        postgres,
        url: f.url.map(str::to_string),
        shared_buffers,
        keep: f.keep,
        dir,
        memory_bytes,
        throttle,
        capture,
    })
}

/// `--memory`, checked: the budget for pages in bytes.
fn memory_flag(f: &EngineFlags, postgres: bool, shared_buffers: u64) -> Result<Option<u64>> {
    Ok(match f.storage.memory.as_deref() {
        None => None,
        Some(_) if f.url.is_some() => {
            return Err(usage(
                "--memory holds a server iolab starts; a server of your own (--url) is yours to limit",
            ))
        }
        Some(text) => {
            let bytes = iolab_spec::units::parse_size(text)
                .map_err(|e| usage(format!("invalid value '{text}' for '--memory': {e}")))?;
            // PostgreSQL's shared buffers are shared memory, counted with the pages.
            let least = if postgres { shared_buffers + MIN_MEMORY } else { MIN_MEMORY };
            if bytes < least {
                return Err(usage(format!(
                    "invalid value '{text}' for '--memory': at least {} {}",
                    iolab_device::format_bytes(least),
                    if postgres {
                        "of pages: --shared-buffers, which are counted with them, and 16 MiB"
                    } else {
                        "of pages"
                    }
                )));
            }
            if !nix::unistd::geteuid().is_root() {
                return Err(usage(
                    "--memory needs root: only root can create a cgroup and set its memory limit\n  hint: run iolab as root, or drop --memory and build a database larger than memory",
                ));
            }
            if iolab_device::memlimit::detect().is_none() {
                return Err(usage(iolab_device::memlimit::MemoryError::NoController));
            }
            Some(bytes)
        }
    })
}

/// `--throttle`, checked: the limits, parsed as `iolab run --throttle`'s.
fn throttle_flag(f: &EngineFlags) -> Result<Option<ThrottleSpec>> {
    let Some(text) = f.storage.throttle.as_deref() else { return Ok(None) };
    let spec = ThrottleSpec::parse(text)
        .map_err(|e| usage(format!("invalid value '{text}' for '--throttle': {e}")))?;
    if f.url.is_some() {
        return Err(usage(
            "--throttle holds the devices under --dir; a server of your own (--url) is yours to throttle",
        ));
    }
    if !nix::unistd::geteuid().is_root() {
        return Err(usage(
            "--throttle needs root: only root can create a cgroup and set its I/O limits\n  hint: run iolab as root, or drop --throttle",
        ));
    }
    if iolab_device::throttle::detect().is_none() {
        return Err(usage(iolab_device::throttle::ThrottleError::NoController));
    }
    Ok(Some(spec))
}

/// What [`open`] made, undone in field order when dropped: the engine (stopping a server), then the memory
/// limit's cgroup (empty once the server is gone), then the directory.
pub struct Opened {
    /// The engine.
    pub engine: Box<dyn Engine>,
    /// `--memory`'s cgroup.
    pub memory: Option<MemoryLimit>,
    /// The database directory (none for `--url`).
    pub dir: Option<DbDir>,
}

/// Makes the directory, the memory limit (iolab joins it for SQLite; a private server joins it as it
/// starts) and the engine, saying what it does on `notices`. `max_connections` sizes a private server.
pub fn open(p: &Prepared, stop: &AtomicBool, notices: &dyn Observer, max_connections: u32) -> Result<Opened> {
    let dir = p
        .dir
        .as_ref()
        .map(|(state, path)| DbDir::make(path.as_ref(), *state, p.keep))
        .transpose()
        .map_err(db_error)?;
    let memory = p.memory_bytes.map(MemoryLimit::create).transpose().map_err(usage)?;
    if let Some(m) = &memory {
        if !p.postgres {
            m.join().map_err(usage)?;
        }
        notices.notice(&format!(
            "pages of {} held under {}, private memory apart ({})",
            if p.postgres { "the PostgreSQL server" } else { "iolab and its SQLite database" },
            iolab_device::format_bytes(m.budget_bytes()),
            m.describe()
        ));
    }
    let engine: Box<dyn Engine> = match (&dir, &p.url) {
        (_, Some(url)) => Box::new(Postgres::url(url, p.keep).map_err(db_error)?),
        (Some(d), None) if p.postgres => {
            let options = ServerOptions { shared_buffers_bytes: p.shared_buffers, max_connections };
            let procs = memory.as_ref().map(MemoryLimit::procs_file);
            let pg = Postgres::private_in(d.path(), &options, p.keep, stop, procs.as_deref()).map_err(
                |e| match e {
                    iolab_db::Error::Interrupted => anyhow::anyhow!(
                    "interrupted while starting the PostgreSQL server (it was stopped, its directory removed)"
                ),
                    e => db_error(e),
                },
            )?;
            notices.notice(&format!(
                "private PostgreSQL server in {}, run as {}",
                d.path().display(),
                pg.server_user().unwrap_or_default()
            ));
            Box::new(pg)
        }
        (Some(d), None) => Box::new(Sqlite::new(d.path())),
        (None, None) => unreachable!("a directory unless --url"),
    };
    Ok(Opened { engine, memory, dir })
}

impl Opened {
    /// The memory limit as an engine setting (`memory_limit`: the budget for pages, the controller, the
    /// peaks of pages and of private memory), read before the cgroup goes.
    pub fn memory_setting(&self) -> Option<Setting> {
        let fmt = iolab_device::format_bytes;
        self.memory.as_ref().map(|m| Setting {
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
        })
    }

    /// Closes the engine, then lets the rest go (memory limit, directory); the engine's close result.
    pub fn close(mut self) -> Result<(), iolab_db::Error> {
        let closed = self.engine.close();
        drop(self);
        closed
    }
}

/// The warning for a run under `--memory` whose devices read nothing: the limit was above the database.
pub fn memory_warning(
    memory: Option<&Setting>,
    devices: &[DeviceView],
    size_bytes: Option<u64>,
) -> Option<String> {
    let m = memory?;
    (!devices.is_empty() && devices.iter().all(|d| d.reads == 0)).then(|| {
        format!(
            "under --memory {} the devices still read nothing: the database ({}) fits in it; give a smaller --memory",
            m.value,
            size_bytes.map_or("?".into(), iolab_device::format_bytes)
        )
    })
}

/// The capture's state over the windows.
enum Capture {
    /// No `--capture`, or every window recorded.
    Off,
    /// Waiting for the next window: the devices to record.
    Armed(Vec<String>),
    /// Recording until the flag is raised; the devices, to arm again for the next window.
    Running(Vec<String>, Arc<AtomicBool>, std::thread::JoinHandle<Result<(u64, Vec<u8>), String>>),
}

/// The observer of a db workload: notices on stderr (unless quiet; above the bars when live), and
/// `--capture` started when a measured window opens and stopped when it closes. One output per window (a
/// sweep over users has one window per point): each window's trace is written to its output as the window
/// closes, so only one trace is ever held in memory.
pub struct Watch {
    quiet: bool,
    live: bool,
    capture: Mutex<Capture>,
    throttle: Mutex<Throttle>,
    outputs: Vec<Output>,
    /// Per window closed, in order: the ops written to its output, or why not.
    written: Mutex<Vec<Result<u64, String>>>,
}

/// The block devices to record under `dirs`: those that take requests (blk-mq, with `/sys/block/NAME/mq`):
/// a partition's events are its disk's, a device-mapper or MD device's are its members'.
fn capture_devices(dirs: &[&Path]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for dir in dirs {
        for d in iolab_device::diskstats::devices_under(dir) {
            let path = format!("/dev/{}", d.name);
            if Path::new("/sys/block").join(&d.name).join("mq").is_dir() && !out.contains(&path) {
                out.push(path);
            }
        }
    }
    out
}

/// Starts recording `devices` on a thread of its own; returns once the events are on (or failed).
fn start_capture(devices: Vec<String>) -> Result<Capture, String> {
    let stop = Arc::new(AtomicBool::new(false));
    let (ready_tx, ready_rx) = std::sync::mpsc::channel::<()>();
    let flag = stop.clone();
    let recorded = devices.clone();
    let handle = std::thread::Builder::new()
        .name("iolab-db-capture".into())
        .spawn(move || {
            let mut trace = Vec::new();
            let ready = move || {
                let _ = ready_tx.send(());
            };
            iolab_trace::capture::capture_devices(&recorded, &flag, &ready, &mut trace)
                .map(|n| (n, trace))
                .map_err(|e| e.to_string())
        })
        .map_err(|e| format!("starting the capture thread: {e}"))?;
    // The events are on before the window's first counters are read (or it failed).
    let _ = ready_rx.recv_timeout(Duration::from_secs(10));
    Ok(Capture::Running(devices, stop, handle))
}

impl Watch {
    /// A watch without a capture yet; `live`: the command draws bars on stderr, so notices go above them.
    pub fn new(quiet: bool, live: bool, p: &mut Prepared) -> Watch {
        let outputs = std::mem::take(&mut p.capture);
        Watch {
            quiet,
            live,
            capture: Mutex::new(Capture::Off),
            throttle: Mutex::new(Throttle::Off),
            outputs,
            written: Mutex::new(Vec::new()),
        }
    }

    /// With `--throttle`: the devices under `dirs` found now (an error when there are none), the throttle
    /// put in place when the workload starts.
    pub fn arm_throttle(&self, spec: &ThrottleSpec, server: Option<&Path>, dirs: &[&Path]) -> Result<()> {
        let devices = throttle_devices(dirs)?;
        *self.throttle_state() = Throttle::Armed(*spec, devices, server.map(Path::to_path_buf));
        Ok(())
    }

    fn throttle_state(&self) -> std::sync::MutexGuard<'_, Throttle> {
        self.throttle.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Puts an armed throttle in place (once; later calls do nothing).
    fn throttle_on(&self) {
        let mut state = self.throttle_state();
        if !matches!(*state, Throttle::Armed(..)) {
            return;
        }
        if let Throttle::Armed(spec, devices, server) = std::mem::replace(&mut *state, Throttle::Off) {
            *state = match throttle_on(&spec, &devices, server.as_deref()) {
                Ok(guard) => {
                    self.notice(&format!("throttled: {}", iolab_device::throttle::describe(&guard)));
                    Throttle::On(guard)
                }
                Err(e) => Throttle::Failed(e.to_string()),
            };
        }
    }

    /// Takes the throttle off (after the engine stopped): its setting, none when it never went on (the
    /// workload did not start), an error when it failed to go on.
    pub fn end_throttle(&self) -> Result<Option<Setting>> {
        match std::mem::replace(&mut *self.throttle_state(), Throttle::Off) {
            Throttle::On(guard) => {
                Ok(Some(Setting { name: "throttle".into(), value: iolab_device::throttle::describe(&guard) }))
            }
            Throttle::Failed(e) => Err(anyhow::anyhow!("--throttle: {e}; the run was not throttled")),
            Throttle::Off | Throttle::Armed(..) => Ok(None),
        }
    }

    /// With `--capture`: records the devices under `dirs` over each window; an error when there are none.
    pub fn arm(&self, dirs: &[&Path]) -> Result<()> {
        if self.outputs.is_empty() {
            return Ok(());
        }
        let devices = capture_devices(dirs);
        if devices.is_empty() {
            let shown: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
            return Err(usage(format!(
                "--capture: no block device that takes requests under {} (tmpfs, overlay or a network file system?)",
                shown.join(" or ")
            )));
        }
        let each = if self.outputs.len() > 1 { "each measured window" } else { "the measured window" };
        self.notice(&format!("capturing the block I/O of {} over {each}", devices.join(", ")));
        *self.state() = Capture::Armed(devices);
        Ok(())
    }

    fn state(&self) -> std::sync::MutexGuard<'_, Capture> {
        self.capture.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn written(&self) -> std::sync::MutexGuard<'_, Vec<Result<u64, String>>> {
        self.written.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The file each window's trace went to, in order (`None` without `--capture`): what a sweep's points
    /// name.
    pub fn capture_paths(&self) -> Vec<String> {
        self.outputs.iter().map(|o| o.path().to_string()).collect()
    }

    /// Ends a recording: joins its thread and writes its trace to the next output.
    fn close(&self, stop: &AtomicBool, handle: std::thread::JoinHandle<Result<(u64, Vec<u8>), String>>) {
        stop.store(true, Ordering::Relaxed);
        let recorded = handle.join().unwrap_or_else(|_| Err("the capture thread panicked".into()));
        let mut written = self.written();
        let Some(out) = self.outputs.get(written.len()) else { return };
        let result = recorded.and_then(|(n, bytes)| out.write(&bytes).map(|()| n).map_err(|e| e.to_string()));
        written.push(result);
    }

    /// Says what each window's capture wrote; an error (exit 3) when one failed, could not be written, or
    /// its window never opened. A recording still running (an error ended the work) is stopped and written.
    pub fn finish(&self) -> Result<()> {
        if let Capture::Running(_, stop, handle) = std::mem::replace(&mut *self.state(), Capture::Off) {
            self.close(&stop, handle);
        }
        let written = std::mem::take(&mut *self.written());
        let mut failed = 0;
        for (i, out) in self.outputs.iter().enumerate() {
            match written.get(i).cloned().unwrap_or_else(|| Err("the measured window never opened".into())) {
                Ok(n) => self.notice(&format!(
                    "captured {} ops into {}",
                    iolab_report::format_count(n),
                    out.path()
                )),
                Err(e) => {
                    eprintln!("iolab: --capture {}: {e}", out.path());
                    failed += 1;
                }
            }
        }
        if failed > 0 {
            return Err(outputs_not_written(failed));
        }
        Ok(())
    }
}

impl Observer for Watch {
    fn notice(&self, text: &str) {
        if !self.quiet {
            crate::progress::notice(self.live, &format!("iolab: {text}"));
        }
    }

    fn point(&self, _index: usize, _count: usize, _users: u32) {
        self.throttle_on();
    }

    fn window(&self, open: bool) {
        if open {
            self.throttle_on();
        }
        let mut state = self.state();
        match (open, std::mem::replace(&mut *state, Capture::Off)) {
            (true, Capture::Armed(devices)) => {
                *state = start_capture(devices).unwrap_or_else(|e| {
                    self.written().push(Err(e));
                    Capture::Off
                });
            }
            (false, Capture::Running(devices, stop, handle)) => {
                drop(state);
                self.close(&stop, handle);
                let more = self.written().len() < self.outputs.len();
                if more {
                    *self.state() = Capture::Armed(devices);
                }
            }
            (_, other) => *state = other,
        }
    }
}

/// What `--memory` and `--throttle` did, as engine settings.
pub struct Limits {
    /// `--memory`'s (`memory_limit`).
    pub memory: Option<Setting>,
    /// `--throttle`'s (`throttle`).
    pub throttle: Option<Setting>,
}

impl Limits {
    /// Adds the settings to a result's engine `settings`, and the memory limit's warning (from the result's
    /// `devices` and the database's `size`) to its `warnings`.
    pub fn add_to(
        &self,
        settings: &mut Vec<Setting>,
        warnings: &mut Vec<String>,
        devices: &[DeviceView],
        size: Option<u64>,
    ) {
        warnings.extend(memory_warning(self.memory.as_ref(), devices, size));
        settings.extend(self.memory.iter().chain(&self.throttle).cloned());
    }
}

/// `--throttle` over a workload: armed before the build, on when the workload starts (the first run's
/// ramp, or the measured window: the build is not held), off once the engine has stopped.
enum Throttle {
    /// No `--throttle`, or done.
    Off,
    /// The limits, the devices under the database ((path, major, minor)), and a private server's
    /// directory, whose processes join.
    Armed(ThrottleSpec, Vec<(String, u32, u32)>, Option<PathBuf>),
    /// In place.
    On(iolab_device::throttle::ThrottleGuard),
    /// Putting it in place failed: the run was not throttled.
    Failed(String),
}

/// The block devices under `dirs`, as `--throttle` names them ((path, major, minor)).
fn throttle_devices(dirs: &[&Path]) -> Result<Vec<(String, u32, u32)>> {
    let mut devices: Vec<(String, u32, u32)> = Vec::new();
    for dir in dirs {
        for d in iolab_device::diskstats::devices_under(dir) {
            let path = format!("/dev/{}", d.name);
            let (major, minor) = iolab_device::throttle::device_numbers(&path).map_err(usage)?;
            if !devices.iter().any(|(p, _, _)| *p == path) {
                devices.push((path, major, minor));
            }
        }
    }
    if devices.is_empty() {
        let shown: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
        return Err(usage(format!("--throttle: no block device under {}", shown.join(" or "))));
    }
    Ok(devices)
}

/// Puts an armed throttle in place: the devices throttled, the engine in the cgroup (SQLite runs inside
/// iolab, which joins; the processes of the private PostgreSQL server in `server` are moved in, and the
/// backends it starts later inherit it).
fn throttle_on(
    spec: &ThrottleSpec,
    devices: &[(String, u32, u32)],
    server: Option<&Path>,
) -> Result<iolab_device::throttle::ThrottleGuard, iolab_device::throttle::ThrottleError> {
    let guard = iolab_device::throttle::apply(spec, devices)?;
    if let Some(dir) = server {
        guard.add_processes(&server_processes(&dir.join("pgdata")))?;
    }
    Ok(guard)
}

/// The processes of the PostgreSQL server whose data directory is `pgdata`: its postmaster (the first line
/// of `postmaster.pid`) and every process in its process group (iolab starts it as the group's leader).
fn server_processes(pgdata: &Path) -> Vec<u32> {
    let text = std::fs::read_to_string(pgdata.join("postmaster.pid")).unwrap_or_default();
    let Some(leader) = text.lines().next().and_then(|l| l.trim().parse::<u32>().ok()) else {
        return Vec::new();
    };
    let mut out = vec![leader];
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        // pid (comm) state ppid pgrp ...: the fields after the last ')'.
        let pgrp =
            stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().nth(2)?.parse::<u32>().ok());
        if pgrp == Some(leader) && pid != leader {
            out.push(pid);
        }
    }
    out
}

/// How `iolab db tpch` and `iolab db copy` are shown: notices and `--capture` through the session's
/// [`Watch`], and the build's bar of [`DbBars`] until the work it was built for starts.
pub struct BuildShown<'a> {
    /// Notices and the capture.
    pub watch: &'a Watch,
    /// The build's bar.
    pub bars: crate::progress::DbBars,
}

impl Observer for BuildShown<'_> {
    fn notice(&self, text: &str) {
        self.watch.notice(text);
    }

    fn window(&self, open: bool) {
        if open {
            self.bars.finish();
        }
        self.watch.window(open);
    }

    fn loaded(&self, rows: u64, expected: u64) {
        self.bars.loaded(rows, expected);
    }
}

/// The paths a capture may record under: the database's directory, and a copy's destination.
pub fn dirs<'a>(opened: &'a Opened, also: Option<&'a Path>) -> Vec<&'a Path> {
    let mut out: Vec<&Path> = opened.dir.iter().map(DbDir::path).collect();
    out.extend(also);
    out
}

/// One db command from its flags to its outputs: [`Session::begin_with`] claims `--json` and checks and claims
/// the engine's flags (nothing made); [`Session::run`] makes the directory, memory limit and engine, arms the
/// capture, runs the work and undoes them all on every path; [`Session::output`] prints and writes the
/// document and the capture.
pub struct Session {
    prepared: Prepared,
    json: Option<Output>,
    /// Nothing but errors on the terminal (`--quiet`, or the JSON on stdout).
    pub quiet: bool,
    /// Live bars on the terminal (asked for by the command, not quiet, stderr a terminal).
    pub live: bool,
    /// The process's stop flag (Ctrl-C, SIGTERM, SIGHUP).
    pub stop: Arc<AtomicBool>,
    /// The observer: notices and the capture.
    pub watch: Watch,
}

impl Session {
    /// Claims `json` and the engine's flags `f` in `gate` (which may hold the command's other claims), with
    /// `claim` run between them (told whether the command is quiet: the catalog's saver is claimed there),
    /// and `bars` when the command draws live bars on a terminal (then the signal handler leaves the
    /// terminal to them).
    pub fn begin_with<T>(
        mut gate: WriteGate,
        f: &EngineFlags,
        json: Option<&str>,
        quiet: bool,
        bars: bool,
        claim: impl FnOnce(&mut WriteGate, bool) -> Result<T>,
    ) -> Result<(Session, T)> {
        let json = crate::output::claim(&mut gate, "--json", json)?;
        let quiet = quiet || json.as_ref().is_some_and(Output::is_stdout);
        let claimed = claim(&mut gate, quiet)?;
        let mut prepared = prepare(f, &mut gate)?;
        let live = bars && !quiet && std::io::IsTerminal::is_terminal(&std::io::stderr());
        let stop = crate::signals::stop_flag(quiet || live);
        let watch = Watch::new(quiet, live, &mut prepared);
        Ok((Session { prepared, json, quiet, live, stop, watch }, claimed))
    }

    /// Makes the engine (a private server sized for `max_connections`), arms the capture over its
    /// directory and `also`, runs `work`, and undoes everything; the work's result (`what` names the
    /// command in errors) and the memory limit's setting.
    pub fn run<T>(
        &self,
        max_connections: u32,
        also: Option<&Path>,
        what: &str,
        work: impl FnOnce(&dyn Engine) -> Result<T, iolab_db::Error>,
    ) -> Result<(T, Limits)> {
        use anyhow::Context;
        let opened = open(&self.prepared, &self.stop, &self.watch, max_connections)?;
        if let Some(spec) = &self.prepared.throttle {
            let server = opened.dir.as_ref().filter(|_| self.prepared.postgres);
            self.watch.arm_throttle(spec, server.map(DbDir::path), &dirs(&opened, also))?;
        }
        let result = self.watch.arm(&dirs(&opened, also)).and_then(|()| {
            work(opened.engine.as_ref()).map_err(|e| match e {
                iolab_db::Error::Interrupted => anyhow::anyhow!(
                    "interrupted before there was anything to report (what iolab made was removed)"
                ),
                e => db_error(e).context(what.to_string()),
            })
        });
        let memory = opened.memory_setting();
        // The server stops first: a cgroup with its processes in it cannot be removed.
        let closed = opened.close();
        let throttle = self.watch.end_throttle();
        let done = result?;
        let limits = Limits { memory, throttle: throttle? };
        closed.map_err(db_error).context("closing the database")?;
        Ok((done, limits))
    }

    /// Saves the document in the catalog (with a saver: as its kind's entry), then prints it, writes
    /// `--json` and the capture ([`Session::output`]), then returns the first error of either: a catalog
    /// that cannot take the result never hides its numbers.
    pub fn save_and_output(&self, saver: Option<&Saver>, doc: &dyn iolab_report::Document) -> Result<()> {
        let entry = crate::saving::entry(doc)?;
        let saved = crate::saving::save(saver, entry, &iolab_report::JsonExporter.render(doc));
        let written = self.output(doc);
        saved?;
        written
    }

    /// Prints the document (unless quiet), writes `--json`, then the capture.
    pub fn output(&self, doc: &dyn iolab_report::Document) -> Result<()> {
        use iolab_report::{JsonExporter, TextExporter};
        if !self.quiet {
            crate::output::print(&TextExporter.render(doc))?;
        }
        if let Some(out) = &self.json {
            crate::output::write_all(vec![(out, Ok(JsonExporter.render(doc)))])?;
        }
        self.watch.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn point_capture_path_puts_the_users_before_the_extension() {
        assert_eq!(point_capture_path("tpcc.iolabtrace", 4), "tpcc.users-4.iolabtrace");
        assert_eq!(point_capture_path("/tmp/a.b/trace", 16), "/tmp/a.b/trace.users-16");
        assert_eq!(point_capture_path("dir/.hidden", 1), "dir/.hidden.users-1");
        assert_eq!(point_capture_path("t.tar.gz", 2), "t.tar.users-2.gz");
    }

    #[test]
    fn a_sweep_claims_one_capture_per_point_and_refuses_stdout() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("t.iolabtrace").display().to_string();
        let storage = |capture: Option<&str>| crate::args::db::DbStorageArgs {
            memory: None,
            throttle: None,
            capture: capture.map(str::to_string),
        };
        let (to_file, to_stdout) = (storage(Some(&file)), storage(Some("-")));
        let flags = |storage, points| EngineFlags {
            engine: "sqlite",
            dir: None,
            url: None,
            shared_buffers: "32M",
            keep: false,
            storage,
            capture_points: points,
        };
        let outs = claim_captures(&mut WriteGate::new(), &flags(&to_file, &[1, 2])).unwrap();
        let paths: Vec<&str> = outs.iter().map(Output::path).collect();
        assert!(paths[0].ends_with("t.users-1.iolabtrace") && paths[1].ends_with("t.users-2.iolabtrace"));
        assert_eq!(claim_captures(&mut WriteGate::new(), &flags(&to_file, &[])).unwrap().len(), 1);
        let e = claim_captures(&mut WriteGate::new(), &flags(&to_stdout, &[1, 2])).unwrap_err();
        assert!(format!("{e:#}").contains("invalid value '-' for '--capture'"), "{e:#}");
        // Each point's file is gated as the one file is: one that is the --json output collides.
        let mut gate = WriteGate::new();
        let json = point_capture_path(&file, 2);
        crate::output::claim(&mut gate, "--json", Some(&json)).unwrap();
        assert!(claim_captures(&mut gate, &flags(&to_file, &[1, 2])).is_err());
    }
}
