//! Whether a block device or a file is in use, and by what. One rule for both: a device or file is in use when
//! anything built on it is mounted, swapped on, held open by another process, or (a device) held by the
//! kernel for a device stacked on it; a file also when it backs a loop device, or another process holds a
//! lock on it or maps it. What is in use is never written, not even with `--destroy-data`.
//!
//! "Built on" is walked recursively and by identity: a device's partitions, the devices holding it
//! (device-mapper, MD RAID, bcache: sysfs `holders/`), and the loop devices whose backing file is it or any of
//! those (the loop driver's own record, [`crate::loops`]), and so on down. Processes are found in /proc
//! (`fd/`, `maps`, and /proc/locks), which shows every process to root and a user's own to a user: an
//! unprivileged run sees less, and the exclusive open of a device (O_EXCL) is the kernel's second line.

use crate::loops::{self, Backing};
use crate::sys::{self, DevNum};
use std::collections::{HashSet, VecDeque};
use std::fs;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::PathBuf;

/// How many devices a walk visits at most: far more than any real stack, small enough to stay instant.
const MAX_NODES: usize = 4096;

/// One device built on (or being) the device under test.
#[derive(Clone, Debug)]
struct Node {
    dev: DevNum,
    /// How to name it in a message: `'/dev/loop0'`, `'/dev/loop5' (a loop device over '/dev/loop0')`.
    shown: String,
    /// Something stacked on the device under test (a holder or a loop device), not the device itself or
    /// one of its partitions.
    stacked: bool,
}

/// The block device `dev` (named `shown`) and everything built on it, recursively.
fn built_on(dev: DevNum, shown: &str) -> Vec<Node> {
    let loops = loops::attached();
    let mut seen = HashSet::from([dev]);
    let mut queue = VecDeque::from([Node { dev, shown: format!("'{shown}'"), stacked: false }]);
    let mut out = Vec::new();
    while let Some(node) = queue.pop_front() {
        for child in children(&node, &loops) {
            if out.len() + queue.len() < MAX_NODES && seen.insert(child.dev) {
                queue.push_back(child);
            }
        }
        out.push(node);
    }
    out
}

/// The devices directly built on `node`: partitions, holders and loop devices over it.
fn children(node: &Node, loops: &[loops::LoopDevice]) -> Vec<Node> {
    let mut out = Vec::new();
    let name_of =
        |d: DevNum| sys::block_info(d).map_or_else(|| format!("{}:{}", d.major, d.minor), |i| i.name);
    let parent = name_of(node.dev);
    if let Some(info) = sys::block_info(node.dev) {
        for (name, dev) in sys::partitions(&info.sys_dir) {
            let shown = format!("'/dev/{name}' (a partition of '/dev/{parent}')");
            out.push(Node { dev, shown, stacked: node.stacked });
        }
        for (name, dev) in sys::holders(&info.sys_dir) {
            let shown =
                format!("'/dev/{name}' (stacked on '/dev/{parent}': device-mapper, LVM, RAID or bcache)");
            out.push(Node { dev, shown, stacked: true });
        }
    }
    for l in loops.iter().filter(|l| l.backing == Backing::Device(node.dev)) {
        let shown = format!("'/dev/{}' (a loop device over '/dev/{parent}')", l.name);
        out.push(Node { dev: l.dev, shown, stacked: true });
    }
    out
}

/// How the block device at `path` (device number `dev`), or anything built on it, is in use; `None` when
/// nothing is.
pub(crate) fn device_in_use(path: &str, dev: DevNum) -> Option<String> {
    let nodes = built_on(dev, path);
    let mounts = sys::mounts();
    for n in &nodes {
        if let Some(m) = mounts.iter().find(|m| m.dev == n.dev) {
            return Some(format!("{} is mounted at {}", n.shown, m.mount_point));
        }
    }
    let swaps = sys::swap_devices();
    for n in &nodes {
        if let Some((name, _)) = swaps.iter().find(|(_, d)| *d == n.dev) {
            return Some(format!("{} is in use as swap ({name} in /proc/swaps)", n.shown));
        }
    }
    let devs: Vec<DevNum> = nodes.iter().map(|n| n.dev).collect();
    if let Some((i, who)) = open_by_another(|m| {
        let dev = DevNum::from_dev(m.rdev());
        m.file_type().is_block_device().then(|| devs.iter().position(|d| *d == dev)).flatten()
    }) {
        return Some(format!("{} is held open by {who}", nodes[i].shown));
    }
    nodes
        .iter()
        .find(|n| n.stacked)
        .map(|n| format!("{} is built on it; remove or detach what is stacked on it first", n.shown))
}

/// What may count as a file being used by another process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Holding {
    /// Only what shares the file's data live: a loop device, swap, a lock or a mapping (an output replaces
    /// a file by rename, which leaves a plain reader its old copy).
    Shared,
    /// Also a plain open descriptor (a target is written in place, under anyone who has it open).
    Open,
}

/// How the file `(st_dev, st_ino)` is in use; `None` when it is not.
pub(crate) fn file_in_use(st_dev: u64, st_ino: u64, holding: Holding) -> Option<String> {
    if let Some(l) = loops::backed_by_file(st_dev, st_ino) {
        let loop_path = format!("/dev/{}", l.name);
        return Some(match device_in_use(&loop_path, l.dev) {
            Some(u) => format!("it backs the loop device {loop_path}, and {u}"),
            None => format!(
                "it backs the loop device {loop_path} (detach it with `losetup -d {loop_path}` first)"
            ),
        });
    }
    let same = |m: &fs::Metadata| m.dev() == st_dev && m.ino() == st_ino;
    if let Some(name) = sys::swap_files().into_iter().find(|(_, m)| same(m)).map(|(n, _)| n) {
        return Some(format!("it is in use as swap ({name} in /proc/swaps)"));
    }
    let dev = DevNum::from_dev(st_dev);
    if let Some(who) = locked_by(dev, st_ino) {
        return Some(format!("{who} holds a lock on it (a live database or disk image)"));
    }
    if let Some(who) = mapped_by(dev, st_ino) {
        return Some(format!("{who} maps it into memory"));
    }
    if holding == Holding::Open {
        if let Some((_, who)) = open_by_another(|m| same(m).then_some(0)) {
            return Some(format!("it is held open by {who}"));
        }
    }
    None
}

/// The other processes' /proc directories, with their pid.
fn other_processes() -> Vec<(u32, PathBuf)> {
    let me = std::process::id();
    let Ok(entries) = fs::read_dir("/proc") else { return Vec::new() };
    entries
        .flatten()
        .filter_map(|e| {
            let pid: u32 = e.file_name().to_str()?.parse().ok()?;
            (pid != me).then(|| (pid, e.path()))
        })
        .collect()
}

/// "process 1234 (sqlite3)".
fn describe_process(pid: u32) -> String {
    let comm = fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
    let comm: String = comm.trim().chars().filter(|c| !c.is_control()).take(32).collect();
    if comm.is_empty() {
        format!("process {pid}")
    } else {
        format!("process {pid} ({comm})")
    }
}

/// The first open descriptor of another process for which `hit` gives a value, with the process named.
fn open_by_another<T>(hit: impl Fn(&fs::Metadata) -> Option<T>) -> Option<(T, String)> {
    for (pid, dir) in other_processes() {
        let Ok(fds) = fs::read_dir(dir.join("fd")) else { continue };
        for fd in fds.flatten() {
            if let Some(v) = fs::metadata(fd.path()).ok().as_ref().and_then(&hit) {
                return Some((v, describe_process(pid)));
            }
        }
    }
    None
}

/// A lock on the file in /proc/locks (POSIX, flock or OFD; an OFD lock shows no pid).
fn locked_by(dev: DevNum, ino: u64) -> Option<String> {
    let text = fs::read_to_string("/proc/locks").ok()?;
    text.lines().find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        // "1: POSIX  ADVISORY  WRITE 1234 08:01:5678 0 EOF"; a blocked waiter's line has "->" first.
        let fields: Vec<&str> = fields.into_iter().filter(|f| *f != "->").collect();
        let (pid, id) = (fields.get(4)?, fields.get(5)?);
        let mut parts = id.split(':');
        let major = u64::from_str_radix(parts.next()?, 16).ok()?;
        let minor = u64::from_str_radix(parts.next()?, 16).ok()?;
        let inode: u64 = parts.next()?.parse().ok()?;
        (DevNum { major, minor } == dev && inode == ino).then(|| match pid.parse::<u32>() {
            Ok(pid) if pid > 0 => describe_process(pid),
            _ => "a process (an open file description lock)".to_string(),
        })
    })
}

/// Another process that maps the file (`/proc/PID/maps`: device as hex major:minor, then the inode).
fn mapped_by(dev: DevNum, ino: u64) -> Option<String> {
    let want = format!("{:02x}:{:02x} {ino} ", dev.major, dev.minor);
    other_processes().into_iter().find_map(|(pid, dir)| {
        let maps = fs::read_to_string(dir.join("maps")).ok()?;
        maps.lines().any(|l| maps_line_is(l, &want)).then(|| describe_process(pid))
    })
}

/// True when a maps line's device and inode fields are `want` ("fd:01 1234 ").
fn maps_line_is(line: &str, want: &str) -> bool {
    let mut fields = line.split_whitespace();
    let (Some(dev), Some(ino)) = (fields.nth(3), fields.next()) else { return false };
    want.strip_suffix(' ').is_some_and(|w| w == format!("{dev} {ino}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_maps_line_is_matched_by_device_and_inode() {
        let line = "7f00-7f10 rw-s 00000000 fd:01 1234   /srv/db.sqlite-shm";
        assert!(maps_line_is(line, "fd:01 1234 "));
        assert!(!maps_line_is(line, "fd:01 12345 "));
        assert!(!maps_line_is("7f00-7f10 r--p 00000000 00:00 0", "fd:01 1234 "));
    }

    #[test]
    fn a_file_this_process_locks_is_not_in_use_but_another_process_lock_is() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("locked");
        fs::write(&path, b"live database").unwrap();
        let meta = fs::metadata(&path).unwrap();
        // flock(1) holds the lock in a child process for as long as it sleeps.
        let child = std::process::Command::new("flock").arg("-o").arg(&path).args(["sleep", "5"]).spawn();
        let Ok(mut child) = child else {
            println!("SKIP: flock(1) is not installed");
            return;
        };
        let mut found = None;
        for _ in 0..100 {
            found = file_in_use(meta.dev(), meta.ino(), Holding::Shared);
            if found.is_some() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let _ = child.kill();
        let _ = child.wait();
        let found = found.expect("a lock held by another process is found");
        assert!(found.contains("holds a lock on it"), "{found}");
        assert_eq!(file_in_use(meta.dev(), meta.ino(), Holding::Open), None, "once the lock is gone");
    }
}
