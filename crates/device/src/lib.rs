//! iolab-device: where the bytes of a run live.
//!
//! The engine submits ops against a target; this crate finds, checks and opens it. Targets are regular files,
//! block devices, an in-process RAM disk (`mem:`), a target that does nothing (`null:`) and an emulated
//! device (`sim:`, served by the sim crate; here it only has a size).
//!
//! The guiding rule is **never destroy data**. Opening is two-phase:
//! - [`probe`] has no side effects at all. It says what [`open`] will find and do (create a file, extend
//!   one) and returns every refusal up front: a missing file without `--size`, a read-only run that would
//!   need a bigger file, a write job on a block device without `--allow-write-device`, on a device or file
//!   in use (anything built on it mounted, swapped on, held open, locked or mapped: never), on one that
//!   carries a signature without `--destroy-data`, or on an existing file iolab did not make
//!   ([`ownership`]) without `--overwrite`.
//! - [`open`] calls [`probe`] again, then opens with O_DIRECT when asked (never falling back silently),
//!   creates and fills new files with incompressible data so that no read hits a hole, and registers scratch
//!   files for removal at exit ([`scratch`]).
//!
//! An error leaves the target as it was: a half-made file is removed, a half-extended one truncated back.
//!
//! [`layout`] maps a file target's extents (FIEMAP) and counts the I/Os that cross their boundaries. The
//! crate's `unsafe` is in six places, each allowed where it is with its SAFETY comment (everything else is
//! denied it): that ioctl, the loop driver's `LOOP_GET_STATUS64` (`loops`), in [`mem`] the huge-page
//! advice and the RAM disk's copy, [`helddir`]'s `statx` (for the mount id, which tells a bind mount
//! apart), and [`atomic`]'s `statx` (a target's atomic-write limits).

#![deny(missing_docs)]
#![deny(unsafe_code)]

pub mod atomic;
mod cgroup;
pub mod diskstats;
pub mod error;
pub mod gate;
pub mod headroom;
pub mod helddir;
pub mod host;
mod inuse;
pub mod ioacct;
pub mod layout;
mod loops;
pub mod mem;
pub mod memlimit;
mod open;
pub mod ownership;
pub mod pseudofs;
pub mod scratch;
pub mod signature;
mod sys;
pub mod throttle;

pub use error::{format_bytes, TargetError};
pub use gate::{Access, GateError, Output, StreamOutput, WriteGate};
pub use headroom::{memory_headroom, MemoryBound, MemoryHeadroom};
pub use helddir::{DirState, HeldDir};
pub use layout::Layout;
pub use mem::MemStore;
pub use open::{open, probe};
pub use scratch::{register_scratch, remove_scratch_files, stale_scratch_files, ScratchGuard};
pub use signature::{detect_signature, SIGNATURE_HEAD_BYTES};
pub use sys::{mem_available_bytes, mem_total_bytes, MEMINFO_ENV};
pub use throttle::{ThrottleError, ThrottleGuard};

use iolab_spec::{Prealloc, TargetSpec};
use std::fmt;
use std::sync::Arc;

/// What kind of target a spec resolved to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TargetKind {
    /// A regular file.
    File,
    /// A block device (whole disk, partition, loop, dm, md, …).
    BlockDevice,
    /// An in-process RAM disk ([`MemStore`]).
    Mem,
    /// Completes every op at once without copying.
    Null,
    /// An emulated device.
    Sim,
}

impl TargetKind {
    /// The name used in reports: "file", "block_device", "mem", "null" or "sim".
    pub fn as_str(self) -> &'static str {
        match self {
            TargetKind::File => "file",
            TargetKind::BlockDevice => "block_device",
            TargetKind::Mem => "mem",
            TargetKind::Null => "null",
            TargetKind::Sim => "sim",
        }
    }
}

impl fmt::Display for TargetKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Everything [`probe`] and [`open`] need to know about one target of one run.
#[derive(Clone, Debug, PartialEq)]
pub struct OpenRequest {
    /// The target as the user named it.
    pub spec: TargetSpec,
    /// Open with O_DIRECT (the default). When the file system refuses, the open fails with
    /// [`TargetError::DirectUnsupported`]; there is no silent fallback to buffered I/O.
    pub direct: bool,
    /// The job writes to this target: open read-write, and apply the block-device safety checks.
    pub writes: bool,
    /// `--size`: the size of a file to create when it is missing, or to extend an existing smaller file to
    /// (write jobs only). An error for block devices.
    pub create_size: Option<u64>,
    /// How a file [`open`] creates, or the part it adds to one it extends, is laid out (`--prealloc`):
    /// reserved and written (the default), written, or left sparse for the run's writes to allocate.
    pub prealloc: Prealloc,
    /// iolab chose this path itself (a default run): the file is created, and removed at exit.
    pub scratch: bool,
    /// What the command line consented to: writing a block device (`--allow-write-device`), one that
    /// carries a signature (`--destroy-data`), an existing file iolab did not make (`--overwrite`).
    pub consent: iolab_spec::Consent,
    /// Called while [`open`] fills a created or extended file; see [`FillProgress`]. `None`: no reports.
    pub fill_progress: Option<FillProgress>,
    /// Raised (by the caller's Ctrl-C handling) to stop a fill between chunks: [`open`] then fails with
    /// [`TargetError::Interrupted`] and removes what it created. `None`: a fill always runs to its end.
    pub stop: Option<StopFlag>,
}

/// A stop request a long fill watches (see [`OpenRequest::stop`]).
#[derive(Clone, Debug, Default)]
pub struct StopFlag(pub Arc<std::sync::atomic::AtomicBool>);

impl StopFlag {
    /// Whether a stop was requested.
    pub fn raised(&self) -> bool {
        self.0.load(std::sync::atomic::Ordering::Relaxed)
    }
}

/// A flag is not part of what a request asks for: any two compare equal.
impl PartialEq for StopFlag {
    fn eq(&self, _other: &StopFlag) -> bool {
        true
    }
}

/// A report of fill progress, `(bytes written, bytes to write)`: called by [`open`] on the opening thread
/// when a fill starts, after every [`FILL_PROGRESS_STEP_BYTES`] and when it ends; never during a run. The
/// caller decides what to show (the cli draws a bar on a terminal); this crate draws nothing.
#[derive(Clone)]
pub struct FillProgress(pub Arc<dyn Fn(u64, u64) + Send + Sync>);

/// How often a fill reports progress: every 4 MiB, so a report costs nothing next to the writes.
pub const FILL_PROGRESS_STEP_BYTES: u64 = 4 << 20;

impl fmt::Debug for FillProgress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("FillProgress(..)")
    }
}

/// A callback is not part of what a request asks for: any two compare equal.
impl PartialEq for FillProgress {
    fn eq(&self, _other: &FillProgress) -> bool {
        true
    }
}

impl OpenRequest {
    /// A read-only, O_DIRECT request with no `--size` and no flags: the safest defaults.
    pub fn new(spec: TargetSpec) -> OpenRequest {
        OpenRequest {
            spec,
            direct: true,
            writes: false,
            create_size: None,
            prealloc: Prealloc::default(),
            scratch: false,
            consent: iolab_spec::Consent::default(),
            fill_progress: None,
            stop: None,
        }
    }
}

/// What [`open`] will find and do, learned without side effects.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Probe {
    /// The target name for reports ([`TargetSpec::display_name`]).
    pub name: String,
    /// What the target is.
    pub kind: TargetKind,
    /// The size ops may address: the file length (after creating or extending), the device size, or the
    /// size given to `mem:`, `null:` or `sim:`.
    pub size_bytes: u64,
    /// The alignment (offset, length and buffer address) that I/O through the opened target needs.
    /// With O_DIRECT: the device's logical block size; 4096 in a probe when the device is unknown (tmpfs,
    /// overlay, nfs), refined by [`open`] with a test read. Buffered: 1 (the page cache accepts any I/O).
    /// `mem:`, `null:` and `sim:`: 512.
    pub logical_block_size: u32,
    /// The logical block size of the device under the target as sysfs reports it, whatever the I/O mode;
    /// `None` when there is no block device (tmpfs, network file systems, virtual targets).
    pub device_block_size: Option<u32>,
    /// The path exists (always true for virtual targets).
    pub exists: bool,
    /// [`open`] will create the file (and fill it).
    pub will_create: bool,
    /// [`open`] will extend the existing file to this size (and fill the new part).
    pub will_extend_to: Option<u64>,
    /// The file system type holding a file (or a mounted device's file system), from /proc/self/mountinfo.
    pub fs_type: Option<String>,
    /// Where that file system is mounted.
    pub mount_point: Option<String>,
    /// The model of the device under the target (sysfs `device/model`; "device-mapper NAME" and
    /// "loop over FILE" for those stacked devices).
    pub device_model: Option<String>,
    /// The device is rotational (sysfs `queue/rotational`).
    pub rotational: Option<bool>,
    /// A file on tmpfs or ramfs: a RAM target, not a device.
    pub tmpfs: bool,
    /// The device under the target is a loop device that reads its backing file through the page cache
    /// (sysfs `loop/dio` is 0): that file. Reads may then be served from memory whatever `--buffered` says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loop_cached_backing: Option<String>,
}

impl Probe {
    /// A probe with only what every target has; the rest (filesystem, device, creation) left empty.
    pub fn bare(name: String, kind: TargetKind, size_bytes: u64, logical_block_size: u32) -> Probe {
        Probe {
            name,
            kind,
            size_bytes,
            logical_block_size,
            device_block_size: None,
            exists: true,
            will_create: false,
            will_extend_to: None,
            fs_type: None,
            mount_point: None,
            device_model: None,
            rotational: None,
            tmpfs: false,
            loop_cached_backing: None,
        }
    }
}

/// An opened target, ready for an engine.
#[derive(Debug)]
pub struct OpenedTarget {
    /// The probe, refreshed after opening: `logical_block_size` may be refined; `exists`, `will_create` and
    /// `will_extend_to` keep describing what was found before opening (see `created` and `fill_s`).
    pub probe: Probe,
    /// Path targets: opened read-only or read-write as the job needs, with O_DIRECT when `direct`.
    pub file: Option<std::fs::File>,
    /// The file descriptor has O_DIRECT.
    pub direct: bool,
    /// [`open`] created the file.
    pub created: bool,
    /// The file is a scratch file that [`open`] created and registered for removal at exit (an existing
    /// file is never registered, even when `req.scratch`).
    pub scratch: bool,
    /// Seconds spent writing data into a created or extended file; `None` when nothing was written
    /// (`--prealloc none`, or no file created or extended).
    pub fill_s: Option<f64>,
    /// An existing file with holes (SEEK_HOLE): reads of holes never touch the device.
    pub has_holes: bool,
    /// `mem:` targets: the RAM disk.
    pub mem: Option<Arc<MemStore>>,
    /// A file of iolab's that this run writes: its mark is set again ([`ownership::seal`]) when this is
    /// dropped, so whoever holds the file for the run's writes holds this too, and drops it after the last.
    pub seal: Option<ownership::Seal>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn target_kind_names_match_report_strings() {
        let kinds =
            [TargetKind::File, TargetKind::BlockDevice, TargetKind::Mem, TargetKind::Null, TargetKind::Sim];
        let names: Vec<String> = kinds.iter().map(|k| k.to_string()).collect();
        assert_eq!(names, ["file", "block_device", "mem", "null", "sim"]);
    }

    #[test]
    fn open_with_a_raised_stop_flag_stops_the_fill_and_removes_the_new_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f0");
        let mut req = OpenRequest::new(TargetSpec::Path { path: path.display().to_string() });
        req.direct = false;
        req.writes = true;
        req.create_size = Some(64 << 20);
        let stop = StopFlag::default();
        stop.0.store(true, std::sync::atomic::Ordering::Relaxed);
        req.stop = Some(stop);
        let e = open(&req).unwrap_err();
        assert!(matches!(e, TargetError::Interrupted { .. }), "{e}");
        assert!(!path.exists(), "the half-filled file is removed");
        // An extended file is cut back to its old size.
        std::fs::write(&path, vec![7u8; 8192]).unwrap();
        req.consent.overwrite = true;
        let e = open(&req).unwrap_err();
        assert!(matches!(e, TargetError::Interrupted { .. }), "{e}");
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 8192);
    }

    #[test]
    fn open_with_fill_progress_reports_start_steps_and_end() {
        use std::sync::Mutex;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f0");
        let mut req = OpenRequest::new(TargetSpec::Path { path: path.display().to_string() });
        req.direct = false;
        let total = 9 * FILL_PROGRESS_STEP_BYTES / 4 + 4096;
        req.create_size = Some(total);
        let calls: Arc<Mutex<Vec<(u64, u64)>>> = Arc::default();
        let sink = calls.clone();
        req.fill_progress = Some(FillProgress(Arc::new(move |done, of| {
            sink.lock().unwrap().push((done, of));
        })));
        assert_eq!(req.clone(), req, "a callback does not change what the request asks for");
        assert_eq!(format!("{:?}", req.fill_progress), "Some(FillProgress(..))");
        open(&req).unwrap();
        let calls = calls.lock().unwrap().clone();
        assert_eq!(calls.first(), Some(&(0, total)));
        assert_eq!(calls.last(), Some(&(total, total)));
        assert!(calls.windows(2).all(|w| w[0].0 < w[1].0), "{calls:?}");
        assert!(calls.iter().all(|&(_, of)| of == total));
        // Start, one report per step (2 here), end: never per write.
        assert_eq!(calls.len(), 4, "{calls:?}");
    }
}
