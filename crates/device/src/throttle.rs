//! `--throttle`: emulate a slower path in front of real block devices with the kernel's own I/O throttling
//! (docs/THROTTLE.md).
//!
//! [`apply`] creates a cgroup `iolab-<pid>` at the root of the hierarchy that has the block I/O controller
//! (cgroup v2 `io.max` when the unified hierarchy has the `io` controller, else cgroup v1
//! `blkio.throttle.*`), writes the limits for each target device and moves the whole iolab process (every
//! thread; threads started later inherit it) into it. The returned [`ThrottleGuard`] moves the process back
//! and removes the cgroup when dropped; [`cleanup_on_exit`] does the same on a forced exit.
//!
//! The kernel throttles per whole disk: a partition is mapped to its disk (`/sys/dev/block/MAJ:MIN/partition`
//! and `../dev`), and the limit then covers iolab's I/O to every partition of that disk. Limits apply to
//! the I/O of the processes in the cgroup only, that is to iolab alone.
//!
//! Every failure is a [`ThrottleError`] whose text says the likely cause and a hint, as the CLI prints it.

use iolab_doc::{Throttled, ThrottledDevice};
use iolab_spec::ThrottleSpec;
use std::collections::BTreeMap;
use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// Why `--throttle` could not be set up. Nothing is left behind: no cgroup, the process where it was.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ThrottleError {
    /// The target path cannot be examined.
    #[error("--throttle: cannot stat '{path}': {error}")]
    Stat {
        /// The path as typed.
        path: String,
        /// What stat(2) said.
        error: io::Error,
    },
    /// The target is a file, a directory or a character device: the kernel throttles block devices.
    #[error(
        "--throttle applies to block devices only, and '{path}' is {what}{holder}\n  likely cause: the kernel \
         throttles I/O per block device (cgroup blkio / io.max), not per file\n  hint: give the block device \
         itself as the target (e.g. --target /dev/sdX; iolab reads and writes it directly), or drop --throttle"
    )]
    NotBlockDevice {
        /// The path as typed.
        path: String,
        /// "a file", "a directory" or "a character device".
        what: &'static str,
        /// ` on /dev/NAME (MAJ:MIN)`, the device holding it, when known; else empty.
        holder: String,
    },
    /// Neither cgroup v2 `io` nor cgroup v1 `blkio` is mounted.
    #[error(
        "--throttle: no cgroup block I/O controller found (neither cgroup v2 'io' in cgroup.controllers under \
         /sys/fs/cgroup nor a cgroup v1 'blkio' hierarchy with blkio.throttle.* files)\n  likely cause: the \
         controller is not mounted (containers often hide it) or the kernel lacks CONFIG_BLK_DEV_THROTTLING\n  \
         hint: mount it (mount -t cgroup -o blkio none /sys/fs/cgroup/blkio), or drop --throttle"
    )]
    NoController,
    /// /proc/self/cgroup cannot be read.
    #[error("--throttle: cannot read /proc/self/cgroup: {error}")]
    ProcCgroup {
        /// What the read said.
        error: io::Error,
    },
    /// /proc/self/cgroup does not say where the process is in the hierarchy found.
    #[error("--throttle: /proc/self/cgroup has no line for the {hierarchy} hierarchy")]
    NoCgroupLine {
        /// [`CgroupKind::name`] of the hierarchy.
        hierarchy: &'static str,
    },
    /// The spec sets no limit.
    #[error("--throttle: no limit given (rbps, wbps, riops or wiops)")]
    NoLimit,
    /// No block device to throttle.
    #[error(
        "--throttle applies to block devices, and this job has none\n  hint: give a block device as the \
         target (--target /dev/sdX), or drop --throttle"
    )]
    NoDevices,
    /// MAJ:MIN is not in sysfs.
    #[error(
        "--throttle: '{name}' ({maj}:{min}) is not a block device the kernel knows ({sysfs}: {error})\n  hint: \
         --throttle applies to block-device targets only; drop it for files"
    )]
    UnknownDevice {
        /// The target's name.
        name: String,
        /// Major number.
        maj: u32,
        /// Minor number.
        min: u32,
        /// The sysfs directory looked up.
        sysfs: String,
        /// Why the lookup failed.
        error: io::Error,
    },
    /// Creating or joining the cgroup was refused, and iolab is not root.
    #[error(
        "--throttle needs root: cannot {action}: {error}\n  likely cause: iolab is not running as root, and only \
         root can create cgroups and set I/O limits\n  hint: run iolab as root (sudo iolab run ...), or drop \
         --throttle"
    )]
    NeedsRoot {
        /// What iolab tried ("create the cgroup '...'").
        action: String,
        /// What the kernel said.
        error: io::Error,
    },
    /// Creating or joining the cgroup was refused to root: the cgroup file system is read-only.
    #[error(
        "--throttle needs root with write access to the cgroup file system: cannot {action}: {error}\n  likely \
         cause: the cgroup file system is read-only here (an unprivileged container)\n  hint: run iolab on \
         the host or in a privileged container, or drop --throttle"
    )]
    ReadOnly {
        /// What iolab tried.
        action: String,
        /// What the kernel said.
        error: io::Error,
    },
    /// Creating or joining the cgroup failed otherwise.
    #[error("--throttle: cannot {action}: {error}\n  hint: drop --throttle to run without throttling")]
    Cgroup {
        /// What iolab tried.
        action: String,
        /// What the kernel said.
        error: io::Error,
    },
    /// Writing a limit failed.
    #[error(
        "--throttle: cannot limit '{name}' ({hierarchy}): writing '{line}' to {file} failed: {error}\n  likely \
         cause: {cause}\n  hint: throttle another device, or drop --throttle"
    )]
    Limit {
        /// The targets on the disk.
        name: String,
        /// [`CgroupKind::name`] of the hierarchy.
        hierarchy: &'static str,
        /// The line written.
        line: String,
        /// The control file written to.
        file: &'static str,
        /// What the kernel said.
        error: io::Error,
        /// The likely cause, from the errno.
        cause: &'static str,
    },
}

/// Which kernel interface throttles block I/O on this machine, and where its hierarchy is mounted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CgroupKind {
    /// cgroup v1 `blkio` controller: `blkio.throttle.{read,write}_{bps,iops}_device`, one `MAJ:MIN VALUE` each.
    V1 {
        /// Mount point of the blkio hierarchy (usually /sys/fs/cgroup/blkio).
        mount: PathBuf,
    },
    /// cgroup v2 `io` controller: `io.max`, `MAJ:MIN rbps=.. wbps=.. riops=.. wiops=..`.
    V2 {
        /// Mount point of the unified hierarchy (/sys/fs/cgroup, or /sys/fs/cgroup/unified in hybrid mode).
        mount: PathBuf,
    },
}

impl CgroupKind {
    /// Short name for messages and the result: `cgroup-v1 blkio` or `cgroup-v2 io.max`.
    pub fn name(&self) -> &'static str {
        match self {
            CgroupKind::V1 { .. } => "cgroup-v1 blkio",
            CgroupKind::V2 { .. } => "cgroup-v2 io.max",
        }
    }

    /// The hierarchy's mount point.
    pub fn mount(&self) -> &Path {
        match self {
            CgroupKind::V1 { mount } | CgroupKind::V2 { mount } => mount,
        }
    }
}

/// Finds the block I/O controller: cgroup v2 `io` (listed in the unified hierarchy's `cgroup.controllers`)
/// is preferred, else a cgroup v1 `blkio` hierarchy with the `blkio.throttle.*` files. `None` when neither
/// is mounted (or the kernel lacks CONFIG_BLK_DEV_THROTTLING). Has no side effects.
pub fn detect() -> Option<CgroupKind> {
    let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap_or_default();
    let (mut v2, mut v1) = cgroup_mounts(&mounts);
    // Without /proc, fall back to the usual places.
    if v2.is_empty() {
        v2 = vec![PathBuf::from("/sys/fs/cgroup"), PathBuf::from("/sys/fs/cgroup/unified")];
    }
    if v1.is_empty() {
        v1 = vec![PathBuf::from("/sys/fs/cgroup/blkio")];
    }
    for mount in v2 {
        let controllers = std::fs::read_to_string(mount.join("cgroup.controllers")).unwrap_or_default();
        if controllers.split_whitespace().any(|c| c == "io") {
            return Some(CgroupKind::V2 { mount });
        }
    }
    v1.into_iter()
        .find(|m| m.join("blkio.throttle.read_bps_device").exists())
        .map(|mount| CgroupKind::V1 { mount })
}

/// Mount points of cgroup2 hierarchies and of cgroup v1 hierarchies with the blkio controller, from the text
/// of /proc/self/mounts.
fn cgroup_mounts(mounts: &str) -> (Vec<PathBuf>, Vec<PathBuf>) {
    crate::cgroup::mounts(mounts, "blkio")
}

/// The block device `path` names (symlinks followed: /dev/disk/by-id/... works), as (major, minor).
/// Fails, with a hint, when it is not a block device: the kernel throttles devices, not files.
pub fn device_numbers(path: &str) -> Result<(u32, u32), ThrottleError> {
    let meta =
        std::fs::metadata(path).map_err(|error| ThrottleError::Stat { path: path.to_string(), error })?;
    if meta.file_type().is_block_device() {
        let rdev = meta.rdev();
        return Ok((libc::major(rdev), libc::minor(rdev)));
    }
    let what = match meta.file_type() {
        t if t.is_dir() => "a directory",
        t if t.is_char_device() => "a character device",
        _ => "a file",
    };
    let (maj, min) = (libc::major(meta.dev()), libc::minor(meta.dev()));
    let holder = match dev_name(Path::new("/sys"), maj, min) {
        Some(name) => format!(" on /dev/{name} ({maj}:{min})"),
        None => String::new(),
    };
    Err(ThrottleError::NotBlockDevice { path: path.to_string(), what, holder })
}

/// The kernel name of a block device (`sda1`), from its sysfs `uevent`.
pub(crate) fn dev_name(sysfs: &Path, maj: u32, min: u32) -> Option<String> {
    let uevent = std::fs::read_to_string(sysfs.join(format!("dev/block/{maj}:{min}/uevent"))).ok()?;
    uevent.lines().find_map(|l| l.strip_prefix("DEVNAME=")).map(str::to_string)
}

/// The whole disk a block device belongs to: itself for a disk, its parent for a partition (sysfs has a
/// `partition` file in a partition's directory, and the disk's directory, `..`, has the disk's `dev`).
/// `sysfs` is the sysfs root (/sys; a fake tree in tests). Fails when MAJ:MIN is not a block device.
pub(crate) fn whole_disk(sysfs: &Path, maj: u32, min: u32) -> io::Result<(u32, u32)> {
    let dir = std::fs::canonicalize(sysfs.join(format!("dev/block/{maj}:{min}")))?;
    if !dir.join("partition").exists() {
        return Ok((maj, min));
    }
    let parent = dir.parent().ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))?;
    let dev = std::fs::read_to_string(parent.join("dev"))?;
    parse_maj_min(dev.trim())
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, format!("bad dev '{dev}'")))
}

fn parse_maj_min(s: &str) -> Option<(u32, u32)> {
    let (a, b) = s.split_once(':')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

/// The v1 writes for one disk: (file, line), one `MAJ:MIN VALUE` per limit that is set.
fn v1_lines(spec: &ThrottleSpec, maj: u32, min: u32) -> Vec<(&'static str, String)> {
    [
        ("blkio.throttle.read_bps_device", spec.rbps),
        ("blkio.throttle.write_bps_device", spec.wbps),
        ("blkio.throttle.read_iops_device", spec.riops),
        ("blkio.throttle.write_iops_device", spec.wiops),
    ]
    .into_iter()
    .filter_map(|(file, v)| v.map(|v| (file, format!("{maj}:{min} {v}"))))
    .collect()
}

/// The v2 `io.max` line for one disk; keys not set are left at their default (`max`).
fn v2_line(spec: &ThrottleSpec, maj: u32, min: u32) -> String {
    let mut line = format!("{maj}:{min}");
    for (key, v) in [("rbps", spec.rbps), ("wbps", spec.wbps), ("riops", spec.riops), ("wiops", spec.wiops)] {
        if let Some(v) = v {
            line.push_str(&format!(" {key}={v}"));
        }
    }
    line
}

/// The cgroup path (relative to the hierarchy's root) this process is in, from /proc/self/cgroup text.
fn own_cgroup(proc_cgroup: &str, v2: bool) -> Option<String> {
    crate::cgroup::own(proc_cgroup, if v2 { None } else { Some("blkio") })
}

/// Cgroups to undo on a forced exit ([`cleanup_on_exit`]); a [`ThrottleGuard`] takes its own out when
/// dropped, so each is undone once.
static REGISTRY: crate::cgroup::CgroupRegistry = crate::cgroup::CgroupRegistry::new();

/// Undoes every throttle still in place: moves the process back to its cgroups and removes the ones iolab
/// created. For the signal handler's forced exit; a normal exit drops the [`ThrottleGuard`] instead.
pub fn cleanup_on_exit() {
    REGISTRY.undo_where(|_| true);
}

/// The throttle in place: iolab runs in its own cgroup until this is dropped, which moves the process back
/// to its original cgroup and removes the created one.
#[derive(Debug)]
pub struct ThrottleGuard {
    dir: PathBuf,
    /// `cgroup.procs` of iolab's own cgroup before the throttle: where every process goes back.
    back: PathBuf,
    applied: Throttled,
}

impl ThrottleGuard {
    /// What was applied.
    pub fn applied(&self) -> &Throttled {
        &self.applied
    }
}

impl Drop for ThrottleGuard {
    /// Moves out whatever is still in the cgroup (a server that did not stop) and removes it.
    fn drop(&mut self) {
        self.evacuate();
        // Nothing left to do when cleanup_on_exit has undone it already.
        REGISTRY.undo_where(|c| c.dir == self.dir);
    }
}

impl ThrottleGuard {
    /// Moves the processes `pids` (another program's, such as a database server iolab started) into the
    /// cgroup too; the processes they start later inherit it. Stop them before the guard is dropped: a
    /// cgroup with processes in it cannot be removed.
    /// A process that ended before its move is passed over; any other failure moves every process
    /// back out (so dropping the guard removes the cgroup) and is the error.
    pub fn add_processes(&self, pids: &[u32]) -> Result<(), ThrottleError> {
        let procs = self.dir.join("cgroup.procs");
        for pid in pids {
            match std::fs::write(&procs, pid.to_string()) {
                Ok(()) => {}
                // Gone between its listing and its move: nothing of it to throttle.
                Err(e) if e.raw_os_error() == Some(libc::ESRCH) => {}
                Err(e) => {
                    self.evacuate();
                    return Err(cgroup_error(
                        &format!("move process {pid} into the cgroup '{}'", self.dir.display()),
                        e,
                    ));
                }
            }
        }
        Ok(())
    }

    /// Moves every process in the cgroup back to iolab's own cgroup of before, so it can be removed.
    fn evacuate(&self) {
        let listed = std::fs::read_to_string(self.dir.join("cgroup.procs")).unwrap_or_default();
        for pid in listed.split_whitespace() {
            let _ = std::fs::write(&self.back, pid);
        }
    }
}

/// One line for messages: `cgroup-v1 blkio /sys/fs/cgroup/blkio/iolab-42: sda (8:0) rbps=100M riops=2000`.
pub fn describe(guard: &ThrottleGuard) -> String {
    let a = &guard.applied;
    let devices: Vec<String> = a
        .devices
        .iter()
        .map(|d| {
            let mut s = format!("{} ({})", d.name, d.device);
            for (k, v, bytes) in [
                ("rbps", d.rbps, true),
                ("wbps", d.wbps, true),
                ("riops", d.riops, false),
                ("wiops", d.wiops, false),
            ] {
                if let Some(v) = v {
                    s.push_str(&format!(" {k}={}", if bytes { human_bytes(v) } else { v.to_string() }));
                }
            }
            s
        })
        .collect();
    format!("{} {}: {}", a.kind, a.cgroup, devices.join("; "))
}

/// Bytes in the spec's own units (binary: `8M` = 8 MiB), exact.
fn human_bytes(v: u64) -> String {
    for (shift, unit) in [(40, "T"), (30, "G"), (20, "M"), (10, "K")] {
        if v >= 1 << shift && v & ((1 << shift) - 1) == 0 {
            return format!("{}{unit}", v >> shift);
        }
    }
    v.to_string()
}

/// Throttles iolab's I/O to `devices` ((name for messages, major, minor), e.g. from [`device_numbers`]) as
/// `spec` says: creates the cgroup `iolab-<pid>`, writes the limits and moves the whole process into it.
/// Call it before the worker threads start (they inherit the cgroup of the thread that creates them; the
/// move itself covers every thread already running). Errors say the likely cause; nothing is left behind.
pub fn apply(spec: &ThrottleSpec, devices: &[(String, u32, u32)]) -> Result<ThrottleGuard, ThrottleError> {
    let kind = detect().ok_or(ThrottleError::NoController)?;
    let proc_cgroup =
        std::fs::read_to_string("/proc/self/cgroup").map_err(|error| ThrottleError::ProcCgroup { error })?;
    let own = own_cgroup(&proc_cgroup, matches!(kind, CgroupKind::V2 { .. }))
        .ok_or(ThrottleError::NoCgroupLine { hierarchy: kind.name() })?;
    apply_in(&kind, Path::new("/sys"), &own, spec, devices)
}

/// [`apply`] on a given hierarchy, sysfs root and original cgroup (relative to the hierarchy's root).
fn apply_in(
    kind: &CgroupKind,
    sysfs: &Path,
    own: &str,
    spec: &ThrottleSpec,
    devices: &[(String, u32, u32)],
) -> Result<ThrottleGuard, ThrottleError> {
    if *spec == ThrottleSpec::default() {
        return Err(ThrottleError::NoLimit);
    }
    if devices.is_empty() {
        return Err(ThrottleError::NoDevices);
    }
    // Whole disks, in order, with the targets on each.
    let mut disks: BTreeMap<(u32, u32), ThrottledDevice> = BTreeMap::new();
    for (name, maj, min) in devices {
        let (dmaj, dmin) = whole_disk(sysfs, *maj, *min).map_err(|error| ThrottleError::UnknownDevice {
            name: name.clone(),
            maj: *maj,
            min: *min,
            sysfs: sysfs.join(format!("dev/block/{maj}:{min}")).display().to_string(),
            error,
        })?;
        let d = disks.entry((dmaj, dmin)).or_insert_with(|| ThrottledDevice {
            name: String::new(),
            device: format!("{dmaj}:{dmin}"),
            partitions: Vec::new(),
            rbps: spec.rbps,
            wbps: spec.wbps,
            riops: spec.riops,
            wiops: spec.wiops,
        });
        if !d.name.split(", ").any(|n| n == name) {
            if !d.name.is_empty() {
                d.name.push_str(", ");
            }
            d.name.push_str(name);
        }
        let part = format!("{maj}:{min}");
        if (*maj, *min) != (dmaj, dmin) && !d.partitions.contains(&part) {
            d.partitions.push(part);
        }
    }

    let mount = kind.mount();
    if let CgroupKind::V2 { .. } = kind {
        let control = mount.join("cgroup.subtree_control");
        let enabled = std::fs::read_to_string(&control).unwrap_or_default();
        if !enabled.split_whitespace().any(|c| c == "io") {
            std::fs::write(&control, "+io").map_err(|e| {
                cgroup_error(&format!("enable the io controller in '{}'", control.display()), e)
            })?;
        }
    }

    crate::cgroup::sweep_stale(mount, "iolab-");
    let dir = mount.join(format!("iolab-{}", std::process::id()));
    std::fs::create_dir(&dir)
        .map_err(|e| cgroup_error(&format!("create the cgroup '{}'", dir.display()), e))?;
    let back = mount.join(own.trim_start_matches('/')).join("cgroup.procs");
    // Registered as joined: the move below is the next step, and moving back is harmless where it failed.
    REGISTRY.add(crate::cgroup::Created { dir: dir.clone(), back: back.clone(), joined: true });
    let guard = ThrottleGuard {
        dir: dir.clone(),
        back,
        applied: Throttled {
            kind: kind.name().to_string(),
            cgroup: dir.display().to_string(),
            devices: disks.values().cloned().collect(),
        },
    };
    // From here on, an error drops the guard: the process is moved back (if it moved) and the cgroup removed.

    for ((maj, min), d) in &disks {
        let writes = match kind {
            CgroupKind::V1 { .. } => v1_lines(spec, *maj, *min),
            CgroupKind::V2 { .. } => vec![("io.max", v2_line(spec, *maj, *min))],
        };
        for (file, line) in writes {
            // One rule per write(2): the kernel parses each write on its own.
            std::fs::write(dir.join(file), &line).map_err(|e| limit_error(kind, &d.name, file, &line, e))?;
        }
    }
    std::fs::write(dir.join("cgroup.procs"), std::process::id().to_string())
        .map_err(|e| cgroup_error(&format!("move iolab into the cgroup '{}'", dir.display()), e))?;
    Ok(guard)
}

/// An error creating or joining the cgroup, with the likely cause.
fn cgroup_error(action: &str, error: io::Error) -> ThrottleError {
    let root = crate::cgroup::effective_uid() == Some(0);
    let action = action.to_string();
    match error.raw_os_error() {
        Some(libc::EPERM | libc::EACCES | libc::EROFS) if !root => ThrottleError::NeedsRoot { action, error },
        Some(libc::EPERM | libc::EACCES | libc::EROFS) => ThrottleError::ReadOnly { action, error },
        _ => ThrottleError::Cgroup { action, error },
    }
}

/// An error writing a limit, with the likely cause.
fn limit_error(
    kind: &CgroupKind,
    name: &str,
    file: &'static str,
    line: &str,
    error: io::Error,
) -> ThrottleError {
    let cause = match error.raw_os_error() {
        Some(libc::ENODEV) => {
            "the kernel cannot throttle this device (it went away, or its driver does not take block \
             cgroup limits)"
        }
        Some(libc::EINVAL | libc::ERANGE) => "the kernel rejected the value or the device",
        Some(libc::EPERM | libc::EACCES) => "iolab is not root (--throttle needs root)",
        _ => "see the error",
    };
    ThrottleError::Limit {
        name: name.to_string(),
        hierarchy: kind.name(),
        line: line.to_string(),
        file,
        error,
        cause,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::{File, OpenOptions};
    use std::os::unix::fs::{FileExt, OpenOptionsExt};
    use std::time::{Duration, Instant};

    fn spec(rbps: Option<u64>, wbps: Option<u64>, riops: Option<u64>, wiops: Option<u64>) -> ThrottleSpec {
        ThrottleSpec { rbps, wbps, riops, wiops }
    }

    #[test]
    fn throttle_v1_lines_one_per_limit() {
        let s = spec(Some(100 << 20), None, Some(2000), Some(500));
        assert_eq!(
            v1_lines(&s, 8, 0),
            vec![
                ("blkio.throttle.read_bps_device", "8:0 104857600".to_string()),
                ("blkio.throttle.read_iops_device", "8:0 2000".to_string()),
                ("blkio.throttle.write_iops_device", "8:0 500".to_string()),
            ]
        );
    }

    #[test]
    fn throttle_v2_line_has_only_set_keys() {
        assert_eq!(
            v2_line(&spec(Some(1 << 20), Some(2 << 20), Some(3), Some(4)), 259, 0),
            "259:0 rbps=1048576 wbps=2097152 riops=3 wiops=4"
        );
        assert_eq!(v2_line(&spec(None, Some(50 << 20), None, None), 8, 16), "8:16 wbps=52428800");
    }

    #[test]
    fn throttle_own_cgroup_per_hierarchy() {
        let text =
            "12:cpu,cpuacct:/a\n7:blkio:/system.slice/x.service\n1:name=systemd:/s\n0::/user.slice/u:1\n";
        assert_eq!(own_cgroup(text, false).as_deref(), Some("/system.slice/x.service"));
        assert_eq!(own_cgroup(text, true).as_deref(), Some("/user.slice/u:1"));
        assert_eq!(own_cgroup("3:io,blkio:/\n", false).as_deref(), Some("/"));
        assert_eq!(own_cgroup("4:memory:/m\n", true), None);
    }

    #[test]
    fn throttle_finds_cgroup_mounts() {
        let mounts = "tmpfs /sys/fs/cgroup tmpfs rw 0 0\n\
                      cgroup /sys/fs/cgroup/cpu cgroup rw,relatime,cpu 0 0\n\
                      cgroup /sys/fs/cgroup/blkio cgroup rw,relatime,blkio 0 0\n\
                      cgroup2 /sys/fs/cgroup/unified cgroup2 rw,relatime 0 0\n";
        let (v2, v1) = cgroup_mounts(mounts);
        assert_eq!(v2, vec![PathBuf::from("/sys/fs/cgroup/unified")]);
        assert_eq!(v1, vec![PathBuf::from("/sys/fs/cgroup/blkio")]);
    }

    #[test]
    fn throttle_human_bytes_exact() {
        assert_eq!(human_bytes(8 << 20), "8M");
        assert_eq!(human_bytes(3 << 30), "3G");
        assert_eq!(human_bytes(1536 << 10), "1536K");
        assert_eq!(human_bytes(1000), "1000");
    }

    /// A sysfs tree with disk sda (8:0) and its partition sda1 (8:1), as the kernel lays it out.
    fn fake_sysfs(root: &Path) {
        let sda = root.join("devices/pci0000:00/block/sda");
        std::fs::create_dir_all(sda.join("sda1")).unwrap();
        std::fs::write(sda.join("dev"), "8:0\n").unwrap();
        std::fs::write(sda.join("uevent"), "MAJOR=8\nMINOR=0\nDEVNAME=sda\nDEVTYPE=disk\n").unwrap();
        std::fs::write(sda.join("sda1/dev"), "8:1\n").unwrap();
        std::fs::write(sda.join("sda1/partition"), "1\n").unwrap();
        std::fs::create_dir_all(root.join("dev/block")).unwrap();
        std::os::unix::fs::symlink("../../devices/pci0000:00/block/sda", root.join("dev/block/8:0")).unwrap();
        std::os::unix::fs::symlink("../../devices/pci0000:00/block/sda/sda1", root.join("dev/block/8:1"))
            .unwrap();
    }

    #[test]
    fn throttle_maps_partition_to_disk() {
        let tmp = tempfile::tempdir().unwrap();
        fake_sysfs(tmp.path());
        assert_eq!(whole_disk(tmp.path(), 8, 1).unwrap(), (8, 0));
        assert_eq!(whole_disk(tmp.path(), 8, 0).unwrap(), (8, 0));
        assert!(whole_disk(tmp.path(), 9, 9).is_err());
        assert_eq!(dev_name(tmp.path(), 8, 0).as_deref(), Some("sda"));
    }

    fn registered(dir: &Path) -> bool {
        REGISTRY.contains(dir)
    }

    #[test]
    fn throttle_v2_on_fake_hierarchy() {
        let tmp = tempfile::tempdir().unwrap();
        fake_sysfs(&tmp.path().join("sys"));
        let mount = tmp.path().join("cg");
        std::fs::create_dir_all(mount.join("user.slice")).unwrap();
        let kind = CgroupKind::V2 { mount: mount.clone() };
        let s = spec(Some(8 << 20), None, Some(200), None);
        let devices = [("data".to_string(), 8, 1), ("log".to_string(), 8, 0), ("data".to_string(), 8, 1)];
        let guard = apply_in(&kind, &tmp.path().join("sys"), "/user.slice", &s, &devices).unwrap();
        let dir = mount.join(format!("iolab-{}", std::process::id()));
        assert_eq!(guard.dir, dir);
        assert!(registered(&dir));
        let read = |p: PathBuf| std::fs::read_to_string(p).unwrap();
        assert_eq!(read(mount.join("cgroup.subtree_control")), "+io");
        assert_eq!(read(dir.join("io.max")), "8:0 rbps=8388608 riops=200");
        assert_eq!(read(dir.join("cgroup.procs")), std::process::id().to_string());
        let a = guard.applied();
        assert_eq!(a.kind, "cgroup-v2 io.max");
        assert_eq!(a.devices.len(), 1);
        assert_eq!(a.devices[0].name, "data, log");
        assert_eq!(a.devices[0].device, "8:0");
        assert_eq!(a.devices[0].partitions, vec!["8:1".to_string()]);
        assert_eq!(
            describe(&guard),
            format!("cgroup-v2 io.max {}: data, log (8:0) rbps=8M riops=200", dir.display())
        );
        let json = serde_json::to_value(a).unwrap();
        assert_eq!(json["devices"][0]["riops"], 200);
        assert!(json["devices"][0].get("wbps").is_none());
        // A real cgroup directory's files go with it; the fake's must be removed by hand.
        for f in ["io.max", "cgroup.procs"] {
            std::fs::remove_file(dir.join(f)).unwrap();
        }
        drop(guard);
        assert!(!dir.exists());
        assert!(!registered(&dir));
        assert_eq!(read(mount.join("user.slice/cgroup.procs")), std::process::id().to_string());
    }

    #[test]
    fn throttle_v1_on_fake_hierarchy_leaves_nothing_on_error() {
        let tmp = tempfile::tempdir().unwrap();
        let sys = tmp.path().join("sys");
        fake_sysfs(&sys);
        let mount = tmp.path().join("blkio");
        std::fs::create_dir_all(&mount).unwrap();
        let kind = CgroupKind::V1 { mount: mount.clone() };
        let dir = mount.join(format!("iolab-{}", std::process::id()));
        let s = spec(None, Some(50 << 20), None, None);
        // Not a block device: rejected before anything is created.
        let e = apply_in(&kind, &sys, "/", &s, &[("file".into(), 0, 42)]).unwrap_err().to_string();
        assert!(e.contains("'file' (0:42) is not a block device"), "{e}");
        assert!(!dir.exists());
        // No hierarchy there: the cgroup cannot be created, and the error says which.
        let e = apply_in(
            &CgroupKind::V1 { mount: tmp.path().join("missing") },
            &sys,
            "/",
            &s,
            &[("d".into(), 8, 1)],
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("cannot create the cgroup"), "{e}");
        let guard = apply_in(&kind, &sys, "/", &s, &[("d".into(), 8, 1)]).unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.join("blkio.throttle.write_bps_device")).unwrap(),
            "8:0 52428800"
        );
        assert!(!dir.join("blkio.throttle.read_bps_device").exists());
        assert_eq!(guard.applied().kind, "cgroup-v1 blkio");
        for f in ["blkio.throttle.write_bps_device", "cgroup.procs"] {
            std::fs::remove_file(dir.join(f)).unwrap();
        }
        drop(guard);
        assert!(!dir.exists());
        assert!(!registered(&dir));
    }

    #[test]
    fn throttle_forced_exit_cleanup_then_drop_is_a_no_op() {
        let tmp = tempfile::tempdir().unwrap();
        let sys = tmp.path().join("sys");
        fake_sysfs(&sys);
        let mount = tmp.path().join("unified");
        std::fs::create_dir_all(&mount).unwrap();
        std::fs::write(mount.join("cgroup.subtree_control"), "cpu io\n").unwrap();
        let kind = CgroupKind::V2 { mount: mount.clone() };
        let guard =
            apply_in(&kind, &sys, "/", &spec(None, None, None, Some(500)), &[("d".into(), 8, 0)]).unwrap();
        let dir = guard.dir.clone();
        // io already enabled: subtree_control untouched.
        assert_eq!(std::fs::read_to_string(mount.join("cgroup.subtree_control")).unwrap(), "cpu io\n");
        assert_eq!(std::fs::read_to_string(dir.join("io.max")).unwrap(), "8:0 wiops=500");
        for f in ["io.max", "cgroup.procs"] {
            std::fs::remove_file(dir.join(f)).unwrap();
        }
        // What cleanup_on_exit does, limited to this test's cgroup (others' tests may hold real ones).
        REGISTRY.undo_where(|c| c.dir == dir);
        assert!(!dir.exists());
        assert!(!registered(&dir));
        assert_eq!(
            std::fs::read_to_string(mount.join("cgroup.procs")).unwrap(),
            std::process::id().to_string()
        );
        std::fs::remove_file(mount.join("cgroup.procs")).unwrap();
        drop(guard);
        assert!(!mount.join("cgroup.procs").exists(), "the guard undid it a second time");
    }

    #[test]
    fn throttle_device_numbers_rejects_files() {
        let tmp = tempfile::NamedTempFile::new().unwrap();
        let e = device_numbers(tmp.path().to_str().unwrap()).unwrap_err().to_string();
        assert!(e.contains("block devices only") && e.contains("is a file") && e.contains("hint:"), "{e}");
        let e = device_numbers("/dev/null").unwrap_err().to_string();
        assert!(e.contains("block devices only") && e.contains("a character device"), "{e}");
        assert!(device_numbers("/nonexistent/dev").is_err());
    }

    /// Detaches the loop device when the test ends, also on failure.
    struct LoopDev(String);
    impl Drop for LoopDev {
        fn drop(&mut self) {
            let _ = std::process::Command::new("losetup").arg("-d").arg(&self.0).status();
        }
    }

    /// Reads `dev` with O_DIRECT 1 MiB reads for `window`; bytes per second.
    fn read_rate(dev: &str, size: u64, window: Duration) -> f64 {
        const CHUNK: usize = 1 << 20;
        let f = OpenOptions::new().read(true).custom_flags(libc::O_DIRECT).open(dev).unwrap();
        let mut buf = vec![0u8; CHUNK + 4096];
        let off = buf.as_ptr().align_offset(4096);
        let chunk = &mut buf[off..off + CHUNK];
        let (start, mut bytes, mut pos) = (Instant::now(), 0u64, 0u64);
        while start.elapsed() < window {
            assert_eq!(f.read_at(chunk, pos).unwrap(), CHUNK);
            bytes += CHUNK as u64;
            pos = (pos + CHUNK as u64) % size;
        }
        bytes as f64 / start.elapsed().as_secs_f64()
    }

    #[test]
    fn throttle_real_loop_device() {
        if crate::cgroup::effective_uid() != Some(0) {
            iolab_testkit::skip(format_args!("throttle_real_loop_device needs root"));
            return;
        }
        let Some(kind) = detect() else {
            iolab_testkit::skip(format_args!("no cgroup blkio/io controller"));
            return;
        };
        const SIZE: u64 = 64 << 20;
        let tmp = tempfile::tempdir().unwrap();
        let img = tmp.path().join("disk.img");
        File::create(&img).unwrap().set_len(SIZE).unwrap();
        let dev = match std::process::Command::new("losetup").arg("--find").arg("--show").arg(&img).output() {
            Ok(o) if o.status.success() => String::from_utf8(o.stdout).unwrap().trim().to_string(),
            other => {
                iolab_testkit::skip(format_args!("no loop device (losetup --find --show: {other:?})"));
                return;
            }
        };
        let _loop = LoopDev(dev.clone());
        let (maj, min) = device_numbers(&dev).unwrap();
        let _moves = crate::cgroup::PROCESS_CGROUP_TESTS.lock().unwrap_or_else(|p| p.into_inner());
        let before = std::fs::read_to_string("/proc/self/cgroup").unwrap();
        let unthrottled = read_rate(&dev, SIZE, Duration::from_millis(300));

        let limit = 8u64 << 20;
        let guard = apply(&spec(Some(limit), None, None, None), &[(dev.clone(), maj, min)]).unwrap();
        let dir = guard.dir.clone();
        let rule = match kind {
            CgroupKind::V1 { .. } => {
                std::fs::read_to_string(dir.join("blkio.throttle.read_bps_device")).unwrap()
            }
            CgroupKind::V2 { .. } => std::fs::read_to_string(dir.join("io.max")).unwrap(),
        };
        assert!(rule.contains(&format!("{maj}:{min}")), "{rule}");
        let throttled = read_rate(&dev, SIZE, Duration::from_millis(1500));
        println!("{}", describe(&guard));
        drop(guard);
        println!(
            "unthrottled {:.1} MiB/s, throttled {:.2} MiB/s (limit {} MiB/s)",
            unthrottled / 1048576.0,
            throttled / 1048576.0,
            limit >> 20
        );
        assert!(!dir.exists(), "cgroup {} left behind", dir.display());
        assert_eq!(std::fs::read_to_string("/proc/self/cgroup").unwrap(), before);
        let ratio = throttled / limit as f64;
        assert!((0.75..=1.25).contains(&ratio), "throttled at {ratio:.2} x the limit");
        assert!(
            unthrottled >= 3.0 * throttled,
            "unthrottled {unthrottled:.0} B/s vs throttled {throttled:.0}"
        );
    }

    /// A server process that cannot be moved (here a kernel thread, which the kernel refuses) leaves no
    /// process behind in the cgroup, and the cgroup goes when the guard does.
    #[test]
    fn a_failed_move_leaves_nothing_in_the_cgroup_and_it_is_removed() {
        if crate::cgroup::effective_uid() != Some(0) {
            return iolab_testkit::skip(format_args!("needs root"));
        }
        if detect().is_none() {
            return iolab_testkit::skip(format_args!("no cgroup blkio/io controller"));
        }
        let tmp = tempfile::tempdir().unwrap();
        let img = tmp.path().join("disk.img");
        File::create(&img).unwrap().set_len(8 << 20).unwrap();
        let dev = match std::process::Command::new("losetup").arg("--find").arg("--show").arg(&img).output() {
            Ok(o) if o.status.success() => String::from_utf8(o.stdout).unwrap().trim().to_string(),
            other => return iolab_testkit::skip(format_args!("no loop device: {other:?}")),
        };
        let _loop = LoopDev(dev.clone());
        let (maj, min) = device_numbers(&dev).unwrap();
        let _moves = crate::cgroup::PROCESS_CGROUP_TESTS.lock().unwrap_or_else(|p| p.into_inner());
        let mut server = std::process::Command::new("sleep").arg("30").spawn().unwrap();
        let guard = apply(&spec(Some(1 << 20), None, None, None), &[(dev.clone(), maj, min)]).unwrap();
        let dir = guard.dir.clone();
        // pid 2 is kthreadd, a kernel thread: its move is refused (not ESRCH).
        let moved = guard.add_processes(&[server.id(), 2]);
        let in_cgroup = std::fs::read_to_string(dir.join("cgroup.procs")).unwrap();
        drop(guard);
        let _ = server.kill();
        let _ = server.wait();
        assert!(moved.is_err(), "the kernel thread's move was refused");
        assert_eq!(in_cgroup.trim(), "", "processes left in the cgroup: {in_cgroup}");
        assert!(!dir.exists(), "cgroup {} left behind", dir.display());
    }
}
