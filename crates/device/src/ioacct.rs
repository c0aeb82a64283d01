//! The block I/O of chosen processes, apart from everyone else's on the same disks: a cgroup's block I/O
//! accounting (docs/DB.md, "The database's own I/O").
//!
//! [`IoAccount::create`] makes a cgroup `iolab-acct-<pid>` at the root of the hierarchy that has the block
//! I/O controller, moves the processes given (iolab's own, or a database server's) into it, and reads what
//! they issued per disk ([`IoAccount::read`]): cgroup v2 `io.stat`, or cgroup v1
//! `blkio.throttle.io_serviced` and `io_service_bytes`. A v1 cgroup counts only on a disk where throttling
//! is active, so a limit that never binds ([`NEVER_BINDS`] bytes a second, reads and writes) is written for
//! each disk. [`IoAccount::of_throttle`] reads the `--throttle` cgroup instead (it holds the same processes,
//! and its real limits switch the counting on). Dropping an account made here moves what is still in it back
//! and removes it; [`cleanup_on_exit`] does the same on a forced exit.
//!
//! What a cgroup counts is what its tasks submitted: under v1, the kernel's flusher threads' writeback of
//! their dirty pages and a journalling file system's own commits (ext4's jbd2) are counted for the root
//! cgroup, not for them; writeback their own fsync forces is theirs. Counts are of bios as submitted
//! (before merging and splitting), so compare bytes with /proc/diskstats, not requests. Under v1 a flush,
//! which carries no data, is counted as a write of no bytes, and discards have a row of their own (kernel
//! 6.18: docs/DB.md says what was checked).

use crate::throttle::CgroupKind;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The limit written for each disk under v1, bytes a second (1 PiB/s): it switches the counting on and
/// never binds.
pub const NEVER_BINDS: u64 = 1 << 50;

/// What the processes in an account issued to one disk (or since the account was made).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IoCounts {
    /// Reads submitted.
    pub reads: u64,
    /// Writes submitted (under v1 with empty flushes among them).
    pub writes: u64,
    /// Bytes read.
    pub read_bytes: u64,
    /// Bytes written.
    pub write_bytes: u64,
    /// Discards submitted; `None` where the kernel's file has no discard count.
    pub discards: Option<u64>,
}

impl IoCounts {
    /// What was counted since `earlier` (never below zero).
    pub fn since(&self, earlier: &IoCounts) -> IoCounts {
        IoCounts {
            reads: self.reads.saturating_sub(earlier.reads),
            writes: self.writes.saturating_sub(earlier.writes),
            read_bytes: self.read_bytes.saturating_sub(earlier.read_bytes),
            write_bytes: self.write_bytes.saturating_sub(earlier.write_bytes),
            discards: self.discards.zip(earlier.discards).map(|(a, b)| a.saturating_sub(b)),
        }
    }
}

/// A disk the account counts: its kernel name and numbers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AccountedDisk {
    /// The kernel name of the whole disk (`loop3`, `sda`).
    pub name: String,
    /// Its major and minor numbers.
    pub device: (u32, u32),
}

/// Whose processes go into a new account.
#[derive(Clone, Debug)]
pub enum Members {
    /// The whole iolab process (every thread; threads started later inherit it): an engine inside it.
    Iolab,
    /// Other processes (a server iolab started); those they start later inherit it.
    Processes(Vec<u32>),
    /// Both: a server's processes and iolab's own, whose children started later (a copy tool) inherit it.
    ProcessesAndIolab(Vec<u32>),
}

/// Cgroups to undo on a forced exit; an [`IoAccount`] takes its own out when dropped.
static REGISTRY: crate::cgroup::CgroupRegistry = crate::cgroup::CgroupRegistry::new();

/// Undoes every account still in place (moves iolab back, removes the cgroups). For the signal handler's
/// forced exit, after the servers in them were stopped.
pub fn cleanup_on_exit() {
    REGISTRY.undo_where(|_| true);
}

/// A cgroup whose block I/O accounting is read: made here (removed when dropped) or the throttle's.
#[derive(Debug)]
pub struct IoAccount {
    kind: CgroupKind,
    dir: PathBuf,
    disks: Vec<AccountedDisk>,
    /// `cgroup.procs` where what is in it goes back, when this account made the cgroup.
    made: Option<PathBuf>,
}

impl IoAccount {
    /// Makes an account over `devices` ((path, major, minor), partitions counted on their disk) holding
    /// `members`. The error says why the I/O cannot be counted (no controller, not root, ...); nothing is
    /// left behind.
    pub fn create(devices: &[(String, u32, u32)], members: &Members) -> Result<IoAccount, String> {
        if crate::cgroup::effective_uid() != Some(0) {
            return Err("iolab is not root: only root can make a cgroup to count it in".into());
        }
        let kind = crate::throttle::detect().ok_or(
            "no cgroup block I/O controller (neither cgroup v2 'io' nor a cgroup v1 'blkio' hierarchy)",
        )?;
        let text =
            std::fs::read_to_string("/proc/self/cgroup").map_err(|e| format!("/proc/self/cgroup: {e}"))?;
        let v1 = matches!(kind, CgroupKind::V1 { .. });
        let own = crate::cgroup::own(&text, if v1 { Some("blkio") } else { None })
            .ok_or_else(|| format!("/proc/self/cgroup has no {} line", kind.name()))?;
        let disks = whole_disks(Path::new("/sys"), devices)?;
        let back = kind.mount().join(own.trim_start_matches('/')).join("cgroup.procs");
        Self::create_in(kind, disks, back, members)
    }

    /// [`IoAccount::create`] on a given hierarchy, disks and way back.
    fn create_in(
        kind: CgroupKind,
        disks: Vec<AccountedDisk>,
        back: PathBuf,
        members: &Members,
    ) -> Result<IoAccount, String> {
        let mount = kind.mount().to_path_buf();
        if let CgroupKind::V2 { .. } = kind {
            let control = mount.join("cgroup.subtree_control");
            let enabled = std::fs::read_to_string(&control).unwrap_or_default();
            if !enabled.split_whitespace().any(|c| c == "io") {
                std::fs::write(&control, "+io").map_err(|e| {
                    format!("cannot enable the io controller in '{}': {e}", control.display())
                })?;
            }
        }
        crate::cgroup::sweep_stale(&mount, "iolab-acct-");
        let dir = mount.join(format!("iolab-acct-{}", std::process::id()));
        std::fs::create_dir(&dir)
            .map_err(|e| format!("cannot create the cgroup '{}': {e}", dir.display()))?;
        let joined = matches!(members, Members::Iolab | Members::ProcessesAndIolab(_));
        REGISTRY.add(crate::cgroup::Created { dir: dir.clone(), back: back.clone(), joined });
        // From here on an error drops the account: what moved in goes back, the cgroup goes.
        let account = IoAccount { kind, dir, disks, made: Some(back) };
        if let CgroupKind::V1 { .. } = account.kind {
            for d in &account.disks {
                for file in ["blkio.throttle.read_bps_device", "blkio.throttle.write_bps_device"] {
                    let line = format!("{}:{} {NEVER_BINDS}", d.device.0, d.device.1);
                    std::fs::write(account.dir.join(file), &line)
                        .map_err(|e| format!("cannot write '{line}' to {file} for {}: {e}", d.name))?;
                }
            }
        }
        let procs = account.dir.join("cgroup.procs");
        let pids = match members {
            Members::Iolab => vec![std::process::id()],
            Members::Processes(p) => p.clone(),
            Members::ProcessesAndIolab(p) => p.iter().copied().chain([std::process::id()]).collect(),
        };
        for pid in pids {
            match std::fs::write(&procs, pid.to_string()) {
                Ok(()) => {}
                // Gone before its move: nothing of it to count.
                Err(e) if e.raw_os_error() == Some(libc::ESRCH) => {}
                Err(e) => {
                    return Err(format!("cannot move process {pid} into '{}': {e}", account.dir.display()))
                }
            }
        }
        Ok(account)
    }

    /// An account reading the `--throttle` cgroup `guard` made (it holds the processes to count; its limits
    /// switch the counting on), over `devices` as [`IoAccount::create`] takes them.
    pub fn of_throttle(
        guard: &crate::ThrottleGuard,
        devices: &[(String, u32, u32)],
    ) -> Result<IoAccount, String> {
        let kind = crate::throttle::detect().ok_or("the throttle's controller is gone")?;
        let disks = whole_disks(Path::new("/sys"), devices)?;
        Ok(IoAccount { kind, dir: PathBuf::from(&guard.applied().cgroup), disks, made: None })
    }

    /// Whether it is read through cgroup v1 (which cannot see the kernel's writeback for its processes).
    pub fn v1(&self) -> bool {
        matches!(self.kind, CgroupKind::V1 { .. })
    }

    /// The disks counted.
    pub fn disks(&self) -> &[AccountedDisk] {
        &self.disks
    }

    /// One line for documents: `cgroup-v1 blkio /sys/fs/cgroup/blkio/iolab-acct-42`, `(the throttle's)`
    /// after it when it is `--throttle`'s cgroup.
    pub fn describe(&self) -> String {
        let whose = if self.made.is_some() { "" } else { " (the throttle's)" };
        let kind = match self.kind {
            CgroupKind::V1 { .. } => "cgroup-v1 blkio",
            CgroupKind::V2 { .. } => "cgroup-v2 io.stat",
        };
        format!("{kind} {}{whose}", self.dir.display())
    }

    /// What the processes in the account issued to each disk counted since it was made, by disk name.
    pub fn read(&self) -> Result<BTreeMap<String, IoCounts>, String> {
        let read = |f: &str| {
            std::fs::read_to_string(self.dir.join(f))
                .map_err(|e| format!("{}: {e}", self.dir.join(f).display()))
        };
        let by_device = match self.kind {
            CgroupKind::V1 { .. } => {
                parse_v1(&read("blkio.throttle.io_serviced")?, &read("blkio.throttle.io_service_bytes")?)
            }
            CgroupKind::V2 { .. } => parse_v2(&read("io.stat")?),
        };
        Ok(self
            .disks
            .iter()
            .map(|d| (d.name.clone(), by_device.get(&d.device).copied().unwrap_or_default()))
            .collect())
    }
}

impl Drop for IoAccount {
    /// Moves out whatever is still in a cgroup this account made and removes it.
    fn drop(&mut self) {
        if self.made.is_some() {
            self.evacuate();
            REGISTRY.undo_where(|c| c.dir == self.dir);
        }
    }
}

impl IoAccount {
    /// Moves every process in a cgroup this account made back where it came from.
    fn evacuate(&self) {
        let Some(back) = &self.made else { return };
        let listed = std::fs::read_to_string(self.dir.join("cgroup.procs")).unwrap_or_default();
        for pid in listed.split_whitespace() {
            let _ = std::fs::write(back, pid);
        }
    }
}

/// The whole disks of `devices` ((path, major, minor)), each once, named as the kernel names them.
fn whole_disks(sysfs: &Path, devices: &[(String, u32, u32)]) -> Result<Vec<AccountedDisk>, String> {
    let mut out: Vec<AccountedDisk> = Vec::new();
    for (path, maj, min) in devices {
        let device = crate::throttle::whole_disk(sysfs, *maj, *min)
            .map_err(|e| format!("{path} ({maj}:{min}) is not a block device the kernel knows: {e}"))?;
        if out.iter().any(|d| d.device == device) {
            continue;
        }
        let name = crate::throttle::dev_name(sysfs, device.0, device.1)
            .unwrap_or_else(|| format!("{}:{}", device.0, device.1));
        out.push(AccountedDisk { name, device });
    }
    if out.is_empty() {
        return Err("no block device to count on".into());
    }
    Ok(out)
}

/// `MAJ:MIN` as numbers.
fn maj_min(s: &str) -> Option<(u32, u32)> {
    let (a, b) = s.split_once(':')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

/// cgroup v1's `io_serviced` and `io_service_bytes` (`MAJ:MIN Read N` ..., `Discard` on kernels since
/// 4.19), per device.
fn parse_v1(serviced: &str, bytes: &str) -> BTreeMap<(u32, u32), IoCounts> {
    let mut out: BTreeMap<(u32, u32), IoCounts> = BTreeMap::new();
    for (text, ops) in [(serviced, true), (bytes, false)] {
        for line in text.lines() {
            let f: Vec<&str> = line.split_whitespace().collect();
            let [dev, what, n] = f[..] else { continue };
            let (Some(dev), Ok(n)) = (maj_min(dev), n.parse::<u64>()) else { continue };
            let c = out.entry(dev).or_default();
            match (what, ops) {
                ("Read", true) => c.reads = n,
                ("Write", true) => c.writes = n,
                ("Discard", true) => c.discards = Some(n),
                ("Read", false) => c.read_bytes = n,
                ("Write", false) => c.write_bytes = n,
                _ => {}
            }
        }
    }
    out
}

/// cgroup v2's `io.stat` (`MAJ:MIN rbytes=N wbytes=N rios=N wios=N dbytes=N dios=N`), per device.
fn parse_v2(text: &str) -> BTreeMap<(u32, u32), IoCounts> {
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let mut f = line.split_whitespace();
        let Some(dev) = f.next().and_then(maj_min) else { continue };
        let mut c = IoCounts::default();
        for kv in f {
            let Some((k, v)) = kv.split_once('=') else { continue };
            let Ok(v) = v.parse::<u64>() else { continue };
            match k {
                "rbytes" => c.read_bytes = v,
                "wbytes" => c.write_bytes = v,
                "rios" => c.reads = v,
                "wios" => c.writes = v,
                "dios" => c.discards = Some(v),
                _ => {}
            }
        }
        out.insert(dev, c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v1_and_v2_counts_are_read_per_device() {
        let serviced = "254:0 Read 8\n254:0 Write 13\n254:0 Sync 13\n254:0 Async 8\n254:0 Discard 2\n254:0 Total 23\nTotal 23\n";
        let bytes = "254:0 Read 8388608\n254:0 Write 12595200\n254:0 Discard 4096\nTotal 20983808\n";
        let c = parse_v1(serviced, bytes)[&(254, 0)];
        assert_eq!(
            c,
            IoCounts { reads: 8, writes: 13, read_bytes: 8388608, write_bytes: 12595200, discards: Some(2) }
        );
        let old = parse_v1("8:0 Read 1\n8:0 Write 2\n", "8:0 Read 512\n8:0 Write 1024\n")[&(8, 0)];
        assert_eq!(old.discards, None, "a kernel without the Discard row says nothing of discards");
        let v2 = parse_v2("8:16 rbytes=4096 wbytes=8192 rios=1 wios=2 dbytes=0 dios=0\nbad\n");
        assert_eq!(
            v2[&(8, 16)],
            IoCounts { reads: 1, writes: 2, read_bytes: 4096, write_bytes: 8192, discards: Some(0) }
        );
        let later = IoCounts { reads: 5, writes: 2, read_bytes: 10, write_bytes: 4, discards: Some(1) };
        assert_eq!(later.since(&c).reads, 0, "never below zero");
        assert_eq!(later.since(&old).discards, None);
    }

    #[test]
    fn a_v1_account_writes_limits_that_never_bind_and_goes_when_dropped() {
        let tmp = tempfile::tempdir().unwrap();
        let mount = tmp.path().join("blkio");
        std::fs::create_dir_all(&mount).unwrap();
        let kind = CgroupKind::V1 { mount: mount.clone() };
        let disks = vec![AccountedDisk { name: "loop3".into(), device: (7, 3) }];
        let back = mount.join("cgroup.procs");
        let a = IoAccount::create_in(kind, disks, back.clone(), &Members::Processes(vec![4242])).unwrap();
        let dir = mount.join(format!("iolab-acct-{}", std::process::id()));
        let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap();
        assert_eq!(read("blkio.throttle.write_bps_device"), format!("7:3 {NEVER_BINDS}"));
        assert_eq!(read("blkio.throttle.read_bps_device"), format!("7:3 {NEVER_BINDS}"));
        assert_eq!(read("cgroup.procs"), "4242");
        assert_eq!(a.describe(), format!("cgroup-v1 blkio {}", dir.display()));
        std::fs::write(dir.join("blkio.throttle.io_serviced"), "7:3 Read 2\n7:3 Write 3\n").unwrap();
        std::fs::write(dir.join("blkio.throttle.io_service_bytes"), "7:3 Read 8192\n7:3 Write 12288\n")
            .unwrap();
        let counts = a.read().unwrap();
        assert_eq!((counts["loop3"].reads, counts["loop3"].write_bytes), (2, 12288));
        a.evacuate();
        assert_eq!(std::fs::read_to_string(&back).unwrap(), "4242", "what was in it goes back");
        // A real cgroup directory's files go with it; the fake's must be removed by hand.
        for f in std::fs::read_dir(&dir).unwrap() {
            std::fs::remove_file(f.unwrap().path()).unwrap();
        }
        drop(a);
        assert!(!dir.exists());
        assert!(!REGISTRY.contains(&dir));
    }
}
