//! Whether a block device or a file is in use, and by what. One rule for both: a device or file is in use when
//! anything built on it is mounted, swapped on, held open by another process, or (a device) held by the
//! kernel for a device stacked on it; a file also when it backs a loop device, or another process holds a
//! lock on it or maps it. What is in use is never written, not even with `--destroy-data`.
//!
//! "Built on" is walked recursively and by identity: a device's partitions, the devices holding it
//! (device-mapper, MD RAID, bcache: sysfs `holders/`), and the loop devices whose backing file is it or any of
//! those (the loop driver's own record, [`crate::loops`]), and so on down. A loop device's bytes live
//! beneath it, so for one the walk also starts at the device it is backed by (down through loop devices over
//! loop devices) and takes in the other loop devices over the same backing file, and the file itself is in
//! use when another process holds it. Processes are found in /proc
//! (`fd/`, `maps`, and /proc/locks), which shows every process to root and a user's own to a user: an
//! unprivileged run sees less, and the exclusive open of a device (O_EXCL) is the kernel's second line.

mod overlay;

use crate::loops::{self, Backing, LoopDevice};
use crate::sys::{self, DevNum};
use std::collections::{HashMap, HashSet, VecDeque};
use std::fs;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::PathBuf;

/// How many devices a walk visits at most: far more than any real stack, small enough to stay instant.
const MAX_NODES: usize = 4096;

/// How many loop devices over loop devices a walk follows down.
const MAX_DEPTH: usize = 16;

/// How a device in a walk relates to the device under test.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Relation {
    /// The device itself, or one of its partitions (or a partition of a device beneath it): in use only
    /// when mounted, swap or held open.
    Part,
    /// Stacked on it (a holder, or a loop device over it or over the same backing file): another view of
    /// its bytes, so in use by being there.
    Stacked,
    /// Beneath it: the device a loop device under test is backed by, whose bytes it writes.
    Beneath,
}

/// One device in the walk.
#[derive(Clone, Debug)]
struct Node {
    dev: DevNum,
    /// How to name it in a message: `'/dev/loop0'`, `'/dev/loop5' (a loop device over '/dev/loop0')`.
    shown: String,
    relation: Relation,
}

/// A device's kernel name, or MAJ:MIN when sysfs has none.
fn name_of(d: DevNum) -> String {
    sys::block_info(d).map_or_else(|| format!("{}:{}", d.major, d.minor), |i| i.name)
}

/// Where the bytes of the device under test live: itself, and for a loop device the devices beneath it
/// (followed down through loop devices over loop devices) and the backing file at the bottom, if any.
fn beneath(dev: DevNum, shown: &str, loops: &[LoopDevice]) -> (Vec<Node>, Option<(DevNum, u64)>) {
    let mut roots = vec![Node { dev, shown: format!("'{shown}'"), relation: Relation::Part }];
    let mut cur = dev;
    for _ in 0..MAX_DEPTH {
        let Some(l) = loops.iter().find(|l| l.dev == cur) else { break };
        match l.backing {
            Backing::Device(b) => {
                let shown =
                    format!("'/dev/{}' (beneath '/dev/{}', a loop device over it)", name_of(b), l.name);
                roots.push(Node { dev: b, shown, relation: Relation::Beneath });
                cur = b;
            }
            Backing::File { dev, ino } => return (roots, Some((dev, ino))),
        }
    }
    (roots, None)
}

/// `roots` and everything built on any of them, recursively; also the loop devices over `file`.
fn built_on(roots: Vec<Node>, file: Option<(DevNum, u64)>, loops: &[LoopDevice]) -> Vec<Node> {
    let mut seen: HashSet<DevNum> = roots.iter().map(|n| n.dev).collect();
    let mut queue = VecDeque::from(roots);
    for l in loops.iter().filter(|l| file.is_some_and(|(d, i)| l.backing == Backing::File { dev: d, ino: i }))
    {
        if seen.insert(l.dev) {
            let shown = format!("'/dev/{}' (a loop device over the same file)", l.name);
            queue.push_back(Node { dev: l.dev, shown, relation: Relation::Stacked });
        }
    }
    let mut out = Vec::new();
    while let Some(node) = queue.pop_front() {
        for child in children(&node, loops) {
            if out.len() + queue.len() < MAX_NODES && seen.insert(child.dev) {
                queue.push_back(child);
            }
        }
        out.push(node);
    }
    out
}

/// The devices directly built on `node`: partitions, holders and loop devices over it.
fn children(node: &Node, loops: &[LoopDevice]) -> Vec<Node> {
    let mut out = Vec::new();
    let parent = name_of(node.dev);
    let part = if node.relation == Relation::Stacked { Relation::Stacked } else { Relation::Part };
    if let Some(info) = sys::block_info(node.dev) {
        for (name, dev) in sys::partitions(&info.sys_dir) {
            let shown = format!("'/dev/{name}' (a partition of '/dev/{parent}')");
            out.push(Node { dev, shown, relation: part });
        }
        for (name, dev) in sys::holders(&info.sys_dir) {
            let shown =
                format!("'/dev/{name}' (stacked on '/dev/{parent}': device-mapper, LVM, RAID or bcache)");
            out.push(Node { dev, shown, relation: Relation::Stacked });
        }
    }
    for l in loops.iter().filter(|l| l.backing == Backing::Device(node.dev)) {
        let shown = format!("'/dev/{}' (a loop device over '/dev/{parent}')", l.name);
        out.push(Node { dev: l.dev, shown, relation: Relation::Stacked });
    }
    out
}

/// How the block device at `path` (device number `dev`), anything built on it, or (for a loop device)
/// anything beneath it is in use; `None` when nothing is.
pub(crate) fn device_in_use(path: &str, dev: DevNum) -> Option<String> {
    let loops = loops::attached();
    let (roots, file) = beneath(dev, path, &loops);
    let nodes = built_on(roots, file, &loops);
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
    if let Some(n) = nodes.iter().find(|n| n.relation == Relation::Stacked) {
        return Some(format!("{} is built on it; remove or detach what is stacked on it first", n.shown));
    }
    let (fdev, ino) = file?;
    file_users(&[(fdev, ino)], Holding::Open).map(|u| format!("the file beneath it: {u}"))
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

/// How the file at `path` (its metadata `meta`) is in use, under any of its identities (its own, and its
/// other names through overlayfs: [`overlay::identities`]); `None` when it is not.
pub(crate) fn file_in_use(path: &std::path::Path, meta: &fs::Metadata, holding: Holding) -> Option<String> {
    let ids = overlay::identities(path, (meta.dev(), meta.ino()));
    for &(st_dev, st_ino) in &ids {
        if let Some(l) = loops::backed_by_file(st_dev, st_ino) {
            let loop_path = format!("/dev/{}", l.name);
            return Some(match device_in_use(&loop_path, l.dev) {
                Some(u) => format!("it backs the loop device {loop_path}, and {u}"),
                None => format!(
                    "it backs the loop device {loop_path} (detach it with `losetup -d {loop_path}` first)"
                ),
            });
        }
    }
    let ids: Vec<(DevNum, u64)> = ids.into_iter().map(|(d, i)| (DevNum::from_dev(d), i)).collect();
    file_users(&ids, holding)
}

/// How a file known by `ids` (device, inode) is used other than by a loop device: swap, a lock, a mapping
/// or (with [`Holding::Open`]) an open descriptor of another process.
fn file_users(ids: &[(DevNum, u64)], holding: Holding) -> Option<String> {
    let same = |m: &fs::Metadata| ids.contains(&(DevNum::from_dev(m.dev()), m.ino()));
    if let Some(name) = sys::swap_files().into_iter().find(|(_, m)| same(m)).map(|(n, _)| n) {
        return Some(format!("it is in use as swap ({name} in /proc/swaps)"));
    }
    for &(dev, ino) in ids {
        if let Some(who) = locked_by(dev, ino) {
            return Some(format!("{who} holds a lock on it (a live database or disk image)"));
        }
        if let Some(who) = mapped_by(dev, ino) {
            return Some(format!("{who} maps it into memory"));
        }
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

/// How many times a holder must be seen, [`HOLDER_RECHECK`] apart, to count: tools open devices for a moment
/// (`losetup` opens every loop device to look for overlaps, udev probes new devices), a user of the device
/// holds it throughout.
const HOLDER_LOOKS: u32 = 4;

/// The pause between two looks for a holder.
const HOLDER_RECHECK: std::time::Duration = std::time::Duration::from_millis(50);

/// The first open descriptor of another process for which `hit` gives a value, with the process named;
/// only a holder seen at every one of [`HOLDER_LOOKS`] looks counts.
fn open_by_another<T>(hit: impl Fn(&fs::Metadata) -> Option<T>) -> Option<(T, String)> {
    let mut found = open_by_another_now(&hit)?;
    for _ in 1..HOLDER_LOOKS {
        std::thread::sleep(HOLDER_RECHECK);
        found = open_by_another_now(&hit)?;
    }
    Some(found)
}

/// One look for [`open_by_another`].
fn open_by_another_now<T>(hit: &impl Fn(&fs::Metadata) -> Option<T>) -> Option<(T, String)> {
    for (pid, dir) in other_processes() {
        let Ok(fds) = fs::read_dir(dir.join("fd")) else { continue };
        for fd in fds.flatten() {
            if let Some(v) = fs::metadata(fd.path()).ok().as_ref().and_then(hit) {
                return Some((v, describe_process(pid)));
            }
        }
    }
    None
}

/// Which of the files `files` (by device and inode, each with its name for a message) another process
/// uses: holds open, maps, locks, or has as its working directory; `None` when none is. A directory with
/// anything in use beneath it is in use ([`crate::helddir`]). Only a use seen at every one of
/// [`HOLDER_LOOKS`] looks counts, as for [`open_by_another`].
pub(crate) fn any_in_use(files: &HashMap<(DevNum, u64), PathBuf>) -> Option<String> {
    let mut found = any_in_use_now(files)?;
    for _ in 1..HOLDER_LOOKS {
        std::thread::sleep(HOLDER_RECHECK);
        found = any_in_use_now(files)?;
    }
    Some(found)
}

/// One look for [`any_in_use`].
fn any_in_use_now(files: &HashMap<(DevNum, u64), PathBuf>) -> Option<String> {
    let name = |m: &fs::Metadata| files.get(&(DevNum::from_dev(m.dev()), m.ino()));
    let me = std::process::id();
    let locks = lock_holders().into_iter().filter(|(pid, _, _)| *pid != Some(me));
    if let Some((who, path)) = locks.into_iter().find_map(|(_, who, key)| Some((who, files.get(&key)?))) {
        return Some(format!("{who} holds a lock on '{}'", path.display()));
    }
    for (pid, dir) in other_processes() {
        if let Some(path) = fs::metadata(dir.join("cwd")).ok().as_ref().and_then(name) {
            return Some(format!(
                "{} works in '{}' (its current directory)",
                describe_process(pid),
                path.display()
            ));
        }
        let fds = fs::read_dir(dir.join("fd")).into_iter().flatten().flatten();
        if let Some(path) = fds.filter_map(|fd| fs::metadata(fd.path()).ok()).find_map(|m| name(&m)) {
            return Some(format!("{} holds '{}' open", describe_process(pid), path.display()));
        }
        let maps = fs::read_to_string(dir.join("maps")).unwrap_or_default();
        if let Some(path) = maps.lines().filter_map(maps_key).find_map(|k| files.get(&k)) {
            return Some(format!("{} maps '{}' into memory", describe_process(pid), path.display()));
        }
    }
    None
}

/// The device and inode a maps line names ("7f00-7f10 rw-s 00000000 fd:01 1234 /path").
fn maps_key(line: &str) -> Option<(DevNum, u64)> {
    let mut fields = line.split_whitespace();
    let (major, minor) = fields.nth(3)?.split_once(':')?;
    let ino: u64 = fields.next()?.parse().ok()?;
    let dev =
        DevNum { major: u64::from_str_radix(major, 16).ok()?, minor: u64::from_str_radix(minor, 16).ok()? };
    (ino != 0).then_some((dev, ino))
}

/// Every lock in /proc/locks: the holder's pid (none for an OFD lock), who it is in words, and the file's
/// device and inode.
fn lock_holders() -> Vec<(Option<u32>, String, (DevNum, u64))> {
    let text = fs::read_to_string("/proc/locks").unwrap_or_default();
    text.lines().filter_map(lock_line).collect()
}

/// One line of /proc/locks: "1: POSIX  ADVISORY  WRITE 1234 08:01:5678 0 EOF" (a blocked waiter's line has
/// "->" first); as [`lock_holders`] gives it.
fn lock_line(line: &str) -> Option<(Option<u32>, String, (DevNum, u64))> {
    let fields: Vec<&str> = line.split_whitespace().filter(|f| *f != "->").collect();
    let (pid, id) = (fields.get(4)?, fields.get(5)?);
    let mut parts = id.split(':');
    let major = u64::from_str_radix(parts.next()?, 16).ok()?;
    let minor = u64::from_str_radix(parts.next()?, 16).ok()?;
    let inode: u64 = parts.next()?.parse().ok()?;
    let pid = pid.parse::<u32>().ok().filter(|&p| p > 0);
    let who = pid.map_or_else(|| "a process (an open file description lock)".to_string(), describe_process);
    Some((pid, who, (DevNum { major, minor }, inode)))
}

/// A lock on the file in /proc/locks (POSIX, flock or OFD; an OFD lock shows no pid).
fn locked_by(dev: DevNum, ino: u64) -> Option<String> {
    lock_holders().into_iter().find_map(|(_, who, key)| (key == (dev, ino)).then_some(who))
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
            iolab_testkit::skip(format_args!("flock(1) is not installed"));
            return;
        };
        let mut found = None;
        for _ in 0..100 {
            found = file_in_use(&path, &meta, Holding::Shared);
            if found.is_some() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let _ = child.kill();
        let _ = child.wait();
        let found = found.expect("a lock held by another process is found");
        assert!(found.contains("holds a lock on it"), "{found}");
        assert_eq!(file_in_use(&path, &meta, Holding::Open), None, "once the lock is gone");
    }
}
