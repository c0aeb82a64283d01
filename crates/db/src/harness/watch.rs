//! The harness's own observer: it stands between a workload and the caller's observer, forwards everything,
//! and acts on the measured window's edges: `--throttle` goes on when the workload starts (the first point
//! or window: the build is not held), the database's own I/O is read at each window's opening and closing
//! edges (`database_io` tells the workload), `--capture` records each window on a thread of its own and
//! writes its trace to the window's output as it closes (so only one trace is ever held in memory).

use crate::workload::{Live, WorkloadObserver};
use iolab_device::ioacct::{IoAccount, IoCounts};
use iolab_device::throttle::ThrottleGuard;
use iolab_device::Output;
use iolab_report::db::{DatabaseDiskIo, DatabaseIo, Setting};
use iolab_spec::throttle::ThrottleSpec;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

/// One window's capture: what its output received (ops), or why not.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CaptureWritten {
    /// The output's path.
    pub path: String,
    /// The ops written, or why the trace was not.
    pub result: Result<u64, String>,
}

/// A recording's thread: the trace's ops and bytes, or why it failed.
type Recording = JoinHandle<Result<(u64, Vec<u8>), String>>;

/// The capture's state over the windows.
enum Capture {
    /// No `--capture`, or every window recorded.
    Off,
    /// Waiting for the next window: the devices to record.
    Armed(Vec<String>),
    /// Recording until the flag is raised; the devices, to arm again for the next window.
    Running(Vec<String>, Arc<AtomicBool>, Recording),
}

/// `--throttle` over a workload: armed before the build, on when the workload starts, off when the
/// harness drops it (after the engine stopped).
enum Throttle {
    /// No `--throttle`, or taken off.
    Off,
    /// The limits and the devices under the run's directories ((path, major, minor)).
    Armed(ThrottleSpec, Vec<(String, u32, u32)>),
    /// In place.
    On(ThrottleGuard),
    /// Putting it in place failed: the run was not throttled.
    Failed(String),
}

/// What the accounting cannot see, as documents say it.
const UNSEEN_V1: &str = "cgroup v1 counts what the database's processes submitted: the kernel's background writeback of their dirty pages (flusher threads) and the file system's own journal commits (ext4's jbd2) count for the root cgroup, not for them; writeback their own fsync forces is theirs";

/// What cgroup v2's io.stat cannot see.
const UNSEEN_V2: &str = "cgroup v2 counts what the database's processes submitted, and their dirty pages' writeback where the memory controller is on v2 too; the file system's own journal commits (ext4's jbd2) count for the root cgroup, not for them";

/// An account's counters by disk name at one moment.
type Reading = BTreeMap<String, IoCounts>;

/// The database's own I/O (docs/DB.md, "The database's own I/O"): whose, how it is counted or why not, and
/// the counters at the measured window's opening and closing edges.
struct Accounting {
    /// `the PostgreSQL server's processes`, `iolab's process (SQLite runs in it)`.
    whose: String,
    /// The account, or why there is none.
    account: Result<IoAccount, String>,
    /// The counters when the window opened, and when it closed (absent while it is open).
    edges: Option<(Reading, Option<Reading>)>,
}

impl Accounting {
    /// The account and what it counted over the window (to its close, or to now while it is open), or why
    /// there is nothing to show.
    fn window(&self) -> Result<(&IoAccount, Vec<DatabaseDiskIo>), String> {
        let account = self.account.as_ref().map_err(Clone::clone)?;
        let (start, end) = self.edges.as_ref().ok_or("no measured window opened")?;
        let now;
        let end = match end {
            Some(end) => end,
            None => {
                now = account.read().map_err(|e| format!("reading the counters failed: {e}"))?;
                &now
            }
        };
        Ok((account, disk_counts(start, end)))
    }
}

/// Each disk's counts between two readings, as a document's lines (rates and the disk's totals to come).
fn disk_counts(start: &Reading, end: &Reading) -> Vec<DatabaseDiskIo> {
    end.iter()
        .map(|(name, c)| {
            let d = c.since(start.get(name).unwrap_or(&IoCounts::default()));
            DatabaseDiskIo {
                name: name.clone(),
                reads: d.reads,
                writes: d.writes,
                read_bytes: d.read_bytes,
                write_bytes: d.write_bytes,
                discards: d.discards,
                read_iops: 0.0,
                write_iops: 0.0,
                device_read_bytes: None,
                device_write_bytes: None,
            }
        })
        .collect()
}

/// The harness's observer (the module doc says what it does).
pub(crate) struct HarnessObserver<'a> {
    caller: &'a dyn WorkloadObserver,
    capture: Mutex<Capture>,
    throttle: Mutex<Throttle>,
    /// The database's own I/O; `None` before it is armed.
    accounting: Mutex<Option<Accounting>>,
    /// The processes to move into the throttle's cgroup besides iolab's (a private server's).
    server: Mutex<Vec<u32>>,
    outputs: Vec<Output>,
    written: Mutex<Vec<CaptureWritten>>,
}

fn locked<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The block devices to record under `dirs`: those that take requests (blk-mq, with `/sys/block/NAME/mq`):
/// a partition's events are its disk's, a device-mapper or MD device's are its members'.
pub(crate) fn capture_devices(dirs: &[&Path]) -> Vec<String> {
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

/// The block devices under `dirs` ((path, major, minor)), each once, as `--throttle` and the database's
/// accounting name them; an error when one is not a block device the kernel knows.
pub(crate) fn block_devices(dirs: &[&Path]) -> Result<Vec<(String, u32, u32)>, String> {
    let mut devices: Vec<(String, u32, u32)> = Vec::new();
    for dir in dirs {
        for d in iolab_device::diskstats::devices_under(dir) {
            let path = format!("/dev/{}", d.name);
            let (major, minor) = iolab_device::throttle::device_numbers(&path).map_err(|e| e.to_string())?;
            if !devices.iter().any(|(p, _, _)| *p == path) {
                devices.push((path, major, minor));
            }
        }
    }
    Ok(devices)
}

/// The block devices under `dirs`, as `--throttle` names them ((path, major, minor)).
pub(crate) fn throttle_devices(dirs: &[&Path]) -> Result<Vec<(String, u32, u32)>, crate::WorkloadError> {
    let devices = block_devices(dirs).map_err(crate::WorkloadError::Setup)?;
    if devices.is_empty() {
        let shown: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
        return Err(crate::WorkloadError::Setup(format!(
            "--throttle: no block device under {}",
            shown.join(" or ")
        )));
    }
    Ok(devices)
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

impl<'a> HarnessObserver<'a> {
    /// A watch forwarding to `caller`, with one capture output per window (none without `--capture`).
    pub(crate) fn new(caller: &'a dyn WorkloadObserver, outputs: Vec<Output>) -> HarnessObserver<'a> {
        HarnessObserver {
            caller,
            capture: Mutex::new(Capture::Off),
            throttle: Mutex::new(Throttle::Off),
            accounting: Mutex::new(None),
            server: Mutex::new(Vec::new()),
            outputs,
            written: Mutex::new(Vec::new()),
        }
    }

    /// With `--throttle`: the devices under `dirs` found now (an error when there are none); the throttle
    /// goes on when the workload starts, with `server` (a private server's processes) moved in.
    pub(crate) fn arm_throttle(
        &self,
        spec: &ThrottleSpec,
        dirs: &[&Path],
        server: Vec<u32>,
    ) -> Result<(), crate::WorkloadError> {
        let devices = throttle_devices(dirs)?;
        *locked(&self.server) = server;
        *locked(&self.throttle) = Throttle::Armed(*spec, devices);
        Ok(())
    }

    /// Puts an armed throttle in place (once; later calls do nothing).
    fn throttle_on(&self) {
        let mut state = locked(&self.throttle);
        if !matches!(*state, Throttle::Armed(..)) {
            return;
        }
        if let Throttle::Armed(spec, devices) = std::mem::replace(&mut *state, Throttle::Off) {
            let on = iolab_device::throttle::apply(&spec, &devices)
                .and_then(|guard| guard.add_processes(&locked(&self.server)).map(|()| guard));
            *state = match on {
                Ok(guard) => {
                    self.caller.notice(&format!("throttled: {}", iolab_device::throttle::describe(&guard)));
                    self.account_throttle(&guard, &devices);
                    Throttle::On(guard)
                }
                Err(e) => Throttle::Failed(e.to_string()),
            };
        }
    }

    /// The throttle's setting: none when it never went on (the workload did not start), an error when it
    /// failed to go on (the run was not throttled).
    pub(crate) fn throttle_setting(&self) -> Result<Option<Setting>, crate::WorkloadError> {
        match &*locked(&self.throttle) {
            Throttle::On(guard) => {
                Ok(Some(Setting { name: "throttle".into(), value: iolab_device::throttle::describe(guard) }))
            }
            Throttle::Failed(e) => {
                Err(crate::WorkloadError::Setup(format!("--throttle: {e}; the run was not throttled")))
            }
            Throttle::Off | Throttle::Armed(..) => Ok(None),
        }
    }

    /// Takes the throttle off (after the engine stopped: a cgroup with processes in it cannot be removed).
    pub(crate) fn throttle_off(&self) {
        *locked(&self.throttle) = Throttle::Off;
    }

    /// Counts the database's own I/O (`whose`) in `account` (or says why not) from the next window on.
    pub(crate) fn arm_accounting(&self, whose: &str, account: Result<IoAccount, String>) {
        *locked(&self.accounting) = Some(Accounting { whose: whose.into(), account, edges: None });
    }

    /// Stops counting: the account's cgroup goes (after the server in it stopped).
    pub(crate) fn accounting_off(&self) {
        *locked(&self.accounting) = None;
    }

    /// With `--throttle` on, its cgroup counts the database's I/O: an account reading it replaces the one
    /// armed (which was none: the two would hold the same processes).
    fn account_throttle(&self, guard: &ThrottleGuard, devices: &[(String, u32, u32)]) {
        if let Some(a) = locked(&self.accounting).as_mut() {
            a.account = IoAccount::of_throttle(guard, devices);
        }
    }

    /// Reads the account at a window's edge: `open` starts a window, else closes it.
    fn account_edge(&self, open: bool) {
        let mut state = locked(&self.accounting);
        let Some(a) = state.as_mut() else { return };
        let Ok(account) = &a.account else { return };
        match (account.read(), open, a.edges.take()) {
            (Ok(now), true, _) => a.edges = Some((now, None)),
            (Ok(now), false, Some((start, None))) => a.edges = Some((start, Some(now))),
            (Err(e), _, _) => a.account = Err(format!("reading the counters failed: {e}")),
            (Ok(_), false, edges) => a.edges = edges,
        }
    }

    /// The database's own I/O since the last window opened, to its close (to now while it is open): the
    /// counts by disk, no rates and no device figures yet (the workload adds them beside its devices'), or
    /// why it was not counted. `None` before the accounting is armed.
    pub(crate) fn own_io(&self) -> Option<DatabaseIo> {
        let state = locked(&self.accounting);
        let a = state.as_ref()?;
        let mut io = DatabaseIo {
            whose: a.whose.clone(),
            source: None,
            unmeasured: None,
            disks: Vec::new(),
            unseen: String::new(),
        };
        match a.window() {
            Ok((account, disks)) => {
                io.source = Some(account.describe());
                io.unseen = if account.v1() { UNSEEN_V1 } else { UNSEEN_V2 }.into();
                io.disks = disks;
            }
            Err(why) => io.unmeasured = Some(why),
        }
        Some(io)
    }

    /// With `--capture`: records the devices under `dirs` over each window; an error when there are none.
    pub(crate) fn arm_capture(&self, dirs: &[&Path]) -> Result<(), crate::WorkloadError> {
        if self.outputs.is_empty() {
            return Ok(());
        }
        let devices = capture_devices(dirs);
        if devices.is_empty() {
            let shown: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
            return Err(crate::WorkloadError::Setup(format!(
                "--capture: no block device that takes requests under {} (tmpfs, overlay or a network file system?)",
                shown.join(" or ")
            )));
        }
        let each = if self.outputs.len() > 1 { "each measured window" } else { "the measured window" };
        self.caller.notice(&format!("capturing the block I/O of {} over {each}", devices.join(", ")));
        *locked(&self.capture) = Capture::Armed(devices);
        Ok(())
    }

    /// Ends a recording: joins its thread and writes its trace to the next output.
    fn close(&self, stop: &AtomicBool, handle: Recording) {
        stop.store(true, Ordering::Relaxed);
        let recorded = handle.join().unwrap_or_else(|_| Err("the capture thread panicked".into()));
        let mut written = locked(&self.written);
        let Some(out) = self.outputs.get(written.len()) else { return };
        let result = recorded.and_then(|(n, bytes)| out.write(&bytes).map(|()| n).map_err(|e| e.to_string()));
        written.push(CaptureWritten { path: out.path().to_string(), result });
    }

    /// The trace file of each window closed so far, in order; `None` where its trace was not written.
    pub(crate) fn captured(&self) -> Vec<Option<String>> {
        let written = locked(&self.written);
        written.iter().map(|c| c.result.is_ok().then(|| c.path.clone())).collect()
    }

    /// What each window's capture wrote, in order (a window that never opened says so); a recording still
    /// running (an error ended the work) is stopped and written first.
    pub(crate) fn finish_captures(&self) -> Vec<CaptureWritten> {
        if let Capture::Running(_, stop, handle) =
            std::mem::replace(&mut *locked(&self.capture), Capture::Off)
        {
            self.close(&stop, handle);
        }
        let mut written = std::mem::take(&mut *locked(&self.written));
        for out in self.outputs.iter().skip(written.len()) {
            written.push(CaptureWritten {
                path: out.path().to_string(),
                result: Err("the measured window never opened".into()),
            });
        }
        written
    }
}

impl WorkloadObserver for HarnessObserver<'_> {
    fn notice(&self, text: &str) {
        self.caller.notice(text);
    }

    fn window(&self, open: bool) {
        if open {
            self.throttle_on();
        }
        // Before the capture's trace is written: that is iolab's I/O, not the database's.
        self.account_edge(open);
        let taken = std::mem::replace(&mut *locked(&self.capture), Capture::Off);
        let next = match (open, taken) {
            (true, Capture::Armed(devices)) => start_capture(devices).unwrap_or_else(|e| {
                let mut written = locked(&self.written);
                let path = self.outputs.get(written.len()).map_or(String::new(), |o| o.path().to_string());
                written.push(CaptureWritten { path, result: Err(e) });
                Capture::Off
            }),
            (false, Capture::Running(devices, stop, handle)) => {
                self.close(&stop, handle);
                let more = locked(&self.written).len() < self.outputs.len();
                if more {
                    Capture::Armed(devices)
                } else {
                    Capture::Off
                }
            }
            (_, other) => other,
        };
        *locked(&self.capture) = next;
        self.caller.window(open);
    }

    fn database_io(&self) -> Option<DatabaseIo> {
        self.own_io()
    }

    fn loaded(&self, rows: u64, expected: u64) {
        self.caller.loaded(rows, expected);
    }

    fn point(&self, index: usize, count: usize, users: u32) {
        self.throttle_on();
        self.caller.point(index, count, users);
    }

    fn live(&self, live: &Live) {
        self.caller.live(live);
    }
}
