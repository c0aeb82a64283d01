//! Capturing a live block device's I/O through the kernel's block trace events: a tracefs instance of its
//! own (so nobody else's tracing is disturbed) with `block:block_rq_issue` and `block:block_rq_complete`
//! filtered to the device, read from its `trace_pipe`. An op is an issue (as in blktrace's `D`), completed by
//! the next completion of the same sector. Linux only, root only; times are the trace clock's (tracefs
//! `local`), relative to the first event. Where tracefs is not mounted, the capture mounts it at
//! /sys/kernel/tracing (as trace-cmd does) and unmounts it when done, on a signal too.
//!
//! [`capture_devices`] records several devices at once into one trace (one target each, in the order
//! given), until told to stop, and says when the events are on (`iolab db --capture`: the capture spans
//! the workload's measured window).

use crate::binary::{TraceClock, TraceHeader, TraceWriter};
use crate::formats::blktrace::rwbs_kind;
use crate::formats::seconds_ns;
use crate::TraceRecord;
use std::collections::HashMap;
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Why a capture could not run.
#[derive(Debug, thiserror::Error)]
pub enum CaptureError {
    /// The machine cannot trace block I/O for this user.
    #[error("block tracing is unavailable: {0}")]
    Unavailable(String),
    /// The device is not a block device.
    #[error("{0}")]
    Device(String),
    /// Tracing failed midway.
    #[error("{0}")]
    Io(String),
}

/// Where tracefs is mounted when iolab mounts it (the place the kernel documents).
const TRACING: &str = "/sys/kernel/tracing";

/// Where tracefs is, or why it cannot be used. Where it is not mounted, root mounts it as trace-cmd does;
/// here only to see that it can be (mounted and unmounted again at once): a capture mounts it for its own
/// time (`TracefsMount`).
pub fn tracefs() -> Result<PathBuf, CaptureError> {
    let (dir, _mount) = TracefsMount::ensure()?;
    Ok(dir)
}

/// tracefs where it is mounted with block events, at either of its two places.
fn mounted_tracefs() -> Option<PathBuf> {
    ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"]
        .into_iter()
        .map(Path::new)
        .find(|dir| dir.join("events/block/block_rq_issue").is_dir() && dir.join("instances").is_dir())
        .map(Path::to_path_buf)
}

/// True while this process has tracefs mounted ([`TracefsMount`]): for [`remove_live_instance`].
static MOUNTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// tracefs mounted at /sys/kernel/tracing by this process because nothing was (`true`), unmounted when
/// dropped, after the capture's instance is gone; or tracefs that was there already (`false`), left alone.
struct TracefsMount(bool);

impl TracefsMount {
    /// Finds tracefs, or mounts it when it is not mounted; root only.
    fn ensure() -> Result<(PathBuf, TracefsMount), CaptureError> {
        // SAFETY: geteuid has no preconditions and cannot fail.
        if unsafe { libc::geteuid() } != 0 {
            return Err(CaptureError::Unavailable("capturing needs root (tracefs block events)".into()));
        }
        if let Some(dir) = mounted_tracefs() {
            return Ok((dir, TracefsMount(false)));
        }
        // SAFETY: constant NUL-terminated strings that live across the call; tracefs takes no data.
        let rc = unsafe {
            libc::mount(
                c"nodev".as_ptr(),
                c"/sys/kernel/tracing".as_ptr(),
                c"tracefs".as_ptr(),
                0,
                std::ptr::null(),
            )
        };
        if rc != 0 {
            let e = std::io::Error::last_os_error();
            return Err(CaptureError::Unavailable(format!(
                "tracefs is not mounted and mounting it at {TRACING} failed ({e}); a container may not allow it"
            )));
        }
        MOUNTED.store(true, std::sync::atomic::Ordering::SeqCst);
        let mount = TracefsMount(true);
        match mounted_tracefs() {
            Some(dir) => Ok((dir, mount)),
            None => Err(CaptureError::Unavailable(format!(
                "tracefs mounted at {TRACING} has no block events (a kernel without CONFIG_BLK_DEV_IO_TRACE?)"
            ))),
        }
    }
}

/// Unmounts tracefs when this process mounted it; where another process uses it by now (EBUSY) it stays.
/// Tried again by the capture's own drop when the exit path's try found it still in use.
fn unmount_own_tracefs() {
    use std::sync::atomic::Ordering::SeqCst;
    // SAFETY: a constant NUL-terminated path that lives across the call.
    if MOUNTED.load(SeqCst) && unsafe { libc::umount2(c"/sys/kernel/tracing".as_ptr(), 0) } == 0 {
        MOUNTED.store(false, SeqCst);
    }
}

impl Drop for TracefsMount {
    fn drop(&mut self) {
        if self.0 {
            unmount_own_tracefs();
        }
    }
}

/// The kernel's internal device number (`MKDEV`: major << 20 | minor) of block device `device`, and its
/// `major,minor` as the events print it.
fn kernel_dev(device: &str) -> Result<(u64, String), CaptureError> {
    let meta = std::fs::metadata(device).map_err(|e| CaptureError::Device(format!("{device}: {e}")))?;
    if !meta.file_type().is_block_device() {
        return Err(CaptureError::Device(format!("{device} is not a block device")));
    }
    let dev = meta.rdev();
    let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff);
    let minor = (dev & 0xff) | ((dev >> 12) & !0xff);
    Ok((major << 20 | minor, format!("{major},{minor}")))
}

/// The tracefs instance of a capture under way, for [`remove_live_instance`].
static LIVE: std::sync::Mutex<Option<PathBuf>> = std::sync::Mutex::new(None);

/// A tracefs instance, removed on drop; while it lives, [`remove_live_instance`] (a signal handler's exit
/// path) removes it too.
struct Instance(PathBuf);

impl Instance {
    fn create(dir: PathBuf) -> Result<Instance, CaptureError> {
        std::fs::create_dir(&dir)
            .map_err(|e| CaptureError::Unavailable(format!("{}: {e}", dir.display())))?;
        *LIVE.lock().unwrap_or_else(|p| p.into_inner()) = Some(dir.clone());
        Ok(Instance(dir))
    }

    fn write(&self, file: &str, text: &str) -> Result<(), CaptureError> {
        std::fs::write(self.0.join(file), text)
            .map_err(|e| CaptureError::Io(format!("{}/{file}: {e}", self.0.display())))
    }
}

/// Disables the instance's events and removes it.
fn remove_instance(dir: &Path) {
    for e in ["block_rq_issue", "block_rq_complete"] {
        let _ = std::fs::write(dir.join(format!("events/block/{e}/enable")), "0");
    }
    let _ = std::fs::remove_dir(dir);
}

impl Drop for Instance {
    /// Removes the instance while holding [`LIVE`]'s lock: a second signal's exit path waits for the removal
    /// to finish instead of finding nothing to remove and exiting halfway through it.
    fn drop(&mut self) {
        let mut live = LIVE.lock().unwrap_or_else(|p| p.into_inner());
        remove_instance(&self.0);
        live.take();
    }
}

/// Removes the instances `iolab-PID` under `instances` that no live capture holds: what an iolab killed
/// with SIGKILL left behind (its events still on, tracing the device for nobody). An instance is stale
/// when its process is gone, when the process of that number started after the instance was made (the
/// number was reused: it cannot be the capture that made it), or when it is this process's and no capture
/// of its own is under way. Only iolab's names are tried.
fn sweep_stale_instances(instances: &Path) {
    let Ok(entries) = std::fs::read_dir(instances) else { return };
    let own_live = LIVE.lock().unwrap_or_else(|p| p.into_inner()).is_some();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.strip_prefix("iolab-")) else { continue };
        let Ok(pid) = pid.parse::<u32>() else { continue };
        let stale = if pid == std::process::id() {
            !own_live
        } else {
            let made = entry.metadata().ok().and_then(|m| m.modified().ok());
            let alive = Path::new(&format!("/proc/{pid}")).exists();
            !alive || process_start(pid).zip(made).is_some_and(|(started, made)| started_after(started, made))
        };
        if stale {
            remove_instance(&entry.path());
        }
    }
}

/// A process that started at `started` cannot have made an instance made at `made`: it started after
/// (by more than a second: both clocks are coarse).
fn started_after(started: std::time::SystemTime, made: std::time::SystemTime) -> bool {
    started.duration_since(made).is_ok_and(|d| d > Duration::from_secs(1))
}

/// When process `pid` started (the boot time in /proc/stat plus its start in /proc/PID/stat); None when
/// either cannot be read.
fn process_start(pid: u32) -> Option<std::time::SystemTime> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Field 22, counted after the command name (which may hold spaces and parentheses).
    let ticks: u64 = stat.rsplit_once(')')?.1.split_whitespace().nth(19)?.parse().ok()?;
    let btime: u64 = std::fs::read_to_string("/proc/stat")
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("btime "))?
        .trim()
        .parse()
        .ok()?;
    // SAFETY: sysconf reads a constant of the system; no memory is shared.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    let since_epoch = Duration::from_secs(btime) + Duration::from_millis(ticks * 1000 / hz);
    Some(std::time::UNIX_EPOCH + since_epoch)
}

/// Removes the tracefs instance of a capture under way, if any: for an exit that skips destructors (a
/// second Ctrl-C), so the kernel does not go on tracing the device.
///
/// The capture's own thread may still hold the instance's `trace_pipe` open (the kernel then refuses to remove
/// the instance): the removal is tried again for up to half a second, while the lock keeps the capture's own
/// removal waiting; a capture told to stop closes its pipe within one read (20 ms).
/// tracefs, when the capture mounted it, is unmounted after.
pub fn remove_live_instance() {
    let mut live = LIVE.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(dir) = live.take() {
        for _ in 0..50 {
            remove_instance(&dir);
            if !dir.exists() {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    unmount_own_tracefs();
}

/// Records `device`'s I/O for `duration`, or until `stop` is raised, into `out` as an iolab binary trace;
/// returns the ops recorded. Events are parsed as they are read: only the records are held, never the text.
pub fn capture(
    device: &str,
    duration: Duration,
    stop: &AtomicBool,
    out: &mut Vec<u8>,
) -> Result<u64, CaptureError> {
    record(&[device.to_string()], Some(Instant::now() + duration), stop, &|| {}, out)
}

/// Records the I/O of the block devices `devices` (paths, `/dev/NAME`; each a target of the trace, in
/// this order) until `stop` is raised, into `out` as an iolab binary trace; returns the ops recorded.
/// `ready` is called once the events are on: what the devices do from then on is in the trace.
pub fn capture_devices(
    devices: &[String],
    stop: &AtomicBool,
    ready: &dyn Fn(),
    out: &mut Vec<u8>,
) -> Result<u64, CaptureError> {
    record(devices, None, stop, ready, out)
}

/// [`capture`] and [`capture_devices`]: until `end` (if any) or `stop`.
fn record(
    devices: &[String],
    end: Option<Instant>,
    stop: &AtomicBool,
    ready: &dyn Fn(),
    out: &mut Vec<u8>,
) -> Result<u64, CaptureError> {
    if devices.is_empty() || devices.len() > u16::MAX as usize {
        return Err(CaptureError::Device(format!("{} devices to capture", devices.len())));
    }
    let devs = devices.iter().map(|d| kernel_dev(d)).collect::<Result<Vec<_>, _>>()?;
    // Declared before the instance: dropped after it.
    let (root, _mount) = TracefsMount::ensure()?;
    sweep_stale_instances(&root.join("instances"));
    let instance = Instance::create(root.join(format!("instances/iolab-{}", std::process::id())))?;
    let filter: Vec<String> = devs.iter().map(|(dev, _)| format!("dev == {dev}")).collect();
    for e in ["block_rq_issue", "block_rq_complete"] {
        instance.write(&format!("events/block/{e}/filter"), &filter.join(" || "))?;
        instance.write(&format!("events/block/{e}/enable"), "1")?;
    }
    let mut events = EventParser::default();
    if devs.len() > 1 {
        events.targets = devs.iter().enumerate().map(|(i, (_, text))| (text.clone(), i as u16)).collect();
    }
    ready();
    let records = read_pipe(&instance.0.join("trace_pipe"), end, stop, events)?;
    drop(instance);
    let header =
        TraceHeader { clock: TraceClock::Unknown, clock_origin_unix_ns: 0, targets: devices.to_vec() };
    let mut w =
        TraceWriter::new(std::mem::take(out), &header).map_err(|e| CaptureError::Io(e.to_string()))?;
    for r in &records {
        w.write(r).map_err(|e| CaptureError::Io(e.to_string()))?;
    }
    *out = w.finish().map_err(|e| CaptureError::Io(e.to_string()))?.0;
    Ok(records.len() as u64)
}

/// The ops `trace_pipe` yields until `end` (if any) or `stop`, whichever comes first, however busy the
/// pipe is, parsed by `events`.
fn read_pipe(
    pipe: &Path,
    end: Option<Instant>,
    stop: &AtomicBool,
    mut events: EventParser,
) -> Result<Vec<TraceRecord>, CaptureError> {
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(pipe)
        .map_err(|e| CaptureError::Io(format!("{}: {e}", pipe.display())))?;
    let (mut partial, mut buf) = (Vec::new(), vec![0u8; 1 << 16]);
    while end.is_none_or(|end| Instant::now() < end) && !stop.load(Ordering::Relaxed) {
        match f.read(&mut buf) {
            Ok(n) if n > 0 => {
                partial.extend_from_slice(&buf[..n]);
                let complete = partial.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
                events.lines(&String::from_utf8_lossy(&partial[..complete]));
                partial.drain(..complete);
            }
            Ok(_) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(20))
            }
            Err(e) => return Err(CaptureError::Io(format!("{}: {e}", pipe.display()))),
        }
    }
    Ok(events.records)
}

/// One event line: (is issue, time ns, `major,minor`, rwbs, bytes, sector, sectors, error).
#[allow(clippy::type_complexity)]
fn parse_line(line: &str) -> Option<(bool, u64, &str, &str, u32, u64, u64, i32)> {
    let (issue, at) = match (line.find(" block_rq_issue: "), line.find(" block_rq_complete: ")) {
        (Some(at), _) => (true, at),
        (None, Some(at)) => (false, at),
        _ => return None,
    };
    let time = seconds_ns(line[..at].split_whitespace().last()?.trim_end_matches(':'))?;
    let w: Vec<&str> = line[at..].split_whitespace().skip(1).collect();
    let plus = w.iter().position(|&t| t == "+")?;
    let sector: u64 = w.get(plus - 1)?.parse().ok()?;
    let sectors: u64 = w.get(plus + 1)?.parse().ok()?;
    let bytes =
        if issue { w.get(2)?.parse().ok()? } else { sectors.saturating_mul(512).min(u32::MAX as u64) as u32 };
    let error = if issue { 0 } else { w.last()?.trim_matches(['[', ']']).parse().unwrap_or(0) };
    Some((issue, time, w.first()?, w.get(1)?, bytes, sector, sectors, error))
}

/// Issues waiting for their completion, and the ops so far.
#[derive(Default)]
struct EventParser {
    records: Vec<TraceRecord>,
    /// Issues by (target, sector).
    pending: HashMap<(u16, u64), usize>,
    origin: Option<u64>,
    /// Targets by `major,minor` when there are several (else every op is target 0).
    targets: HashMap<String, u16>,
}

impl EventParser {
    /// Takes complete event lines: an issue is an op, completed by the next completion of its sector.
    fn lines(&mut self, text: &str) {
        for line in text.lines() {
            let Some((issue, time, dev, rwbs, bytes, sector, _, error)) = parse_line(line) else { continue };
            let target = if self.targets.is_empty() {
                0
            } else {
                match self.targets.get(dev) {
                    Some(t) => *t,
                    None => continue,
                }
            };
            let t = time.saturating_sub(*self.origin.get_or_insert(time));
            if issue {
                let mut r = TraceRecord::new(t, rwbs_kind(rwbs), target, sector.saturating_mul(512), bytes);
                r.submit_ns = Some(t);
                self.pending.insert((target, sector), self.records.len());
                self.records.push(r);
            } else if let Some(i) = self.pending.remove(&(target, sector)) {
                let r: &mut TraceRecord = &mut self.records[i];
                r.complete_ns = Some(t);
                r.result = Some(if error != 0 { -error.abs() } else { r.len as i32 });
            }
        }
    }
}

/// The ops of tracefs block event lines: issues, completed by the next completion of their sector.
pub fn parse_events(text: &str) -> Vec<TraceRecord> {
    let mut p = EventParser::default();
    p.lines(text);
    p.records
}

#[cfg(test)]
mod tests {

    #[test]
    fn an_instance_made_before_its_process_started_is_not_its() {
        let t0 = std::time::UNIX_EPOCH + Duration::from_secs(1_000_000);
        assert!(started_after(t0 + Duration::from_secs(5), t0));
        assert!(!started_after(t0 + Duration::from_millis(500), t0), "within the clocks' grain");
        assert!(!started_after(t0, t0 + Duration::from_secs(5)));
        let me = process_start(std::process::id()).expect("this process's start");
        let now = std::time::SystemTime::now();
        assert!(me <= now + Duration::from_secs(1), "{me:?} after {now:?}");
        assert!(now.duration_since(me).unwrap() < Duration::from_secs(3600), "{me:?}");
    }

    use super::*;
    use crate::TraceOp;

    #[test]
    fn tracefs_lines_become_ops_with_completions() {
        let text = "\
            fio-4242  [001] d..1.  100.000100: block_rq_issue: 7,0 R 4096 () 8 + 8 none,0,0 [fio]\n\
            fio-4242  [001] d..1.  100.000200: block_rq_issue: 7,0 WS 8192 () 64 + 16 [fio]\n\
            <idle>-0  [001] d.h1.  100.000300: block_rq_complete: 7,0 R () 8 + 8 none,0,0 [0]\n\
            <idle>-0  [001] d.h1.  100.000400: block_rq_complete: 7,0 WS () 64 + 16 [-5]\n\
            # comment\n";
        let r = parse_events(text);
        assert_eq!(r.len(), 2);
        assert_eq!(
            (r[0].op, r[0].offset, r[0].len, r[0].complete_ns, r[0].result),
            (TraceOp::Read, 4096, 4096, Some(200_000), Some(4096))
        );
        assert_eq!((r[1].op, r[1].start_ns, r[1].result), (TraceOp::Write, 100_000, Some(-5)));
    }

    #[test]
    fn events_of_several_devices_go_to_their_targets() {
        let text = "\
            x-1  [000] d..1.  5.000100: block_rq_issue: 7,0 R 4096 () 8 + 8 none,0,0 [x]\n\
            x-1  [000] d..1.  5.000150: block_rq_issue: 7,1 W 4096 () 8 + 8 none,0,0 [x]\n\
            x-1  [000] d..1.  5.000160: block_rq_issue: 7,9 W 4096 () 8 + 8 none,0,0 [x]\n\
            x-1  [000] d.h1.  5.000200: block_rq_complete: 7,1 W () 8 + 8 none,0,0 [0]\n\
            x-1  [000] d.h1.  5.000300: block_rq_complete: 7,0 R () 8 + 8 none,0,0 [0]\n";
        let mut p = EventParser {
            targets: [("7,0".to_string(), 0u16), ("7,1".to_string(), 1u16)].into_iter().collect(),
            ..Default::default()
        };
        p.lines(text);
        let r = p.records;
        assert_eq!(r.len(), 2, "7,9 is not captured");
        assert_eq!((r[0].target, r[0].op, r[0].complete_ns), (0, TraceOp::Read, Some(200_000)));
        assert_eq!((r[1].target, r[1].op, r[1].complete_ns), (1, TraceOp::Write, Some(100_000)));
    }

    #[test]
    fn a_capture_where_tracing_is_unavailable_says_why() {
        match tracefs() {
            Ok(dir) => {
                eprintln!("tracefs at {}: the capture itself is tested in tests/capture.rs", dir.display())
            }
            Err(e) => assert!(e.to_string().contains("root") || e.to_string().contains("tracefs"), "{e}"),
        }
    }
}
