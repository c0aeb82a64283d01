//! What the kernel tells about mounts, block devices and memory, read from /proc and /sys.
//!
//! Everything here is read-only and best effort: a missing or unreadable file yields `None` (or an empty
//! list), never an error, because this information only describes the target in the report or feeds a
//! safety check that has a second line of defence (the exclusive open of a device).

use std::fs;
use std::path::{Path, PathBuf};

/// A device number split into major and minor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct DevNum {
    pub major: u64,
    pub minor: u64,
}

impl DevNum {
    /// Splits a `dev_t` as glibc's `major()`/`minor()` do.
    pub fn from_dev(dev: u64) -> DevNum {
        DevNum {
            major: ((dev >> 32) & 0xffff_f000) | ((dev >> 8) & 0xfff),
            minor: ((dev >> 12) & 0xffff_ff00) | (dev & 0xff),
        }
    }

    fn parse(s: &str) -> Option<DevNum> {
        let (major, minor) = s.trim().split_once(':')?;
        Some(DevNum { major: major.parse().ok()?, minor: minor.parse().ok()? })
    }
}

/// One line of /proc/self/mountinfo.
#[derive(Clone, Debug)]
pub(crate) struct Mount {
    pub dev: DevNum,
    pub mount_point: String,
    pub fs_type: String,
    pub source: String,
    pub read_only: bool,
    /// The mount's own options (`rw,relatime`).
    pub options: String,
    /// The file system's own options (overlayfs: `upperdir=`, `lowerdir=`), escapes undone.
    pub super_options: String,
}

/// Undoes the octal escapes (`\040` for a space) of mountinfo paths.
fn unescape(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\'
            && i + 3 < bytes.len()
            && bytes[i + 1..i + 4].iter().all(|b| (b'0'..=b'7').contains(b))
        {
            let v = (bytes[i + 1] - b'0') as u32 * 64
                + (bytes[i + 2] - b'0') as u32 * 8
                + (bytes[i + 3] - b'0') as u32;
            out.push(v as u8);
            i += 4;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn parse_mountinfo(text: &str) -> Vec<Mount> {
    let mut mounts = Vec::new();
    for line in text.lines() {
        let Some((left, right)) = line.split_once(" - ") else { continue };
        let left: Vec<&str> = left.split(' ').collect();
        let right: Vec<&str> = right.split(' ').collect();
        if left.len() < 6 || right.len() < 2 {
            continue;
        }
        let Some(dev) = DevNum::parse(left[2]) else { continue };
        let read_only = left[5].split(',').any(|o| o == "ro");
        mounts.push(Mount {
            dev,
            mount_point: unescape(left[4]),
            fs_type: right[0].to_string(),
            source: unescape(right[1]),
            read_only,
            options: left[5].to_string(),
            super_options: right.get(2).map_or_else(String::new, |o| unescape(o)),
        });
    }
    mounts
}

/// All mounts of this process's mount namespace.
pub(crate) fn mounts() -> Vec<Mount> {
    fs::read_to_string("/proc/self/mountinfo").map(|t| parse_mountinfo(&t)).unwrap_or_default()
}

/// The mount holding the canonical path `path`: the longest mount point that is a prefix of it on a
/// component boundary; of mounts stacked on the same point, the last (topmost) one.
pub(crate) fn mount_of(path: &Path) -> Option<Mount> {
    let mut best: Option<Mount> = None;
    for m in mounts() {
        if path.starts_with(&m.mount_point)
            && best.as_ref().is_none_or(|b| m.mount_point.len() >= b.mount_point.len())
        {
            best = Some(m);
        }
    }
    best
}

/// What sysfs says about a block device.
#[derive(Clone, Debug, Default)]
pub(crate) struct BlockInfo {
    /// The kernel name, e.g. "sda1", "nvme0n1", "loop0".
    pub name: String,
    /// The sysfs directory of the device (canonical).
    pub sys_dir: PathBuf,
    pub logical_block_size: Option<u32>,
    pub rotational: Option<bool>,
    pub model: Option<String>,
    /// A loop device whose backing file is read through the page cache (sysfs `loop/dio` is 0): that file.
    pub loop_cached_backing: Option<String>,
}

fn read_trimmed(path: &Path) -> Option<String> {
    let s = fs::read_to_string(path).ok()?;
    let s = s.trim();
    (!s.is_empty()).then(|| s.to_string())
}

/// Reads /sys/dev/block/MAJ:MIN; `None` when the number has no sysfs entry (tmpfs, overlay, nfs, btrfs's
/// anonymous device numbers).
pub(crate) fn block_info(dev: DevNum) -> Option<BlockInfo> {
    let sys_dir = fs::canonicalize(format!("/sys/dev/block/{}:{}", dev.major, dev.minor)).ok()?;
    let name = sys_dir.file_name()?.to_string_lossy().into_owned();
    // A partition has no queue or device directory of its own: use the whole disk's (its sysfs parent).
    let disk_dir = if sys_dir.join("partition").exists() {
        sys_dir.parent().map(Path::to_path_buf).unwrap_or_else(|| sys_dir.clone())
    } else {
        sys_dir.clone()
    };
    let queue = disk_dir.join("queue");
    let logical_block_size = read_trimmed(&queue.join("logical_block_size")).and_then(|s| s.parse().ok());
    let rotational = read_trimmed(&queue.join("rotational")).map(|s| s == "1");
    let model = read_trimmed(&disk_dir.join("device/model"))
        .or_else(|| read_trimmed(&disk_dir.join("device/device/model")))
        .or_else(|| read_trimmed(&disk_dir.join("dm/name")).map(|n| format!("device-mapper {n}")))
        .or_else(|| read_trimmed(&disk_dir.join("loop/backing_file")).map(|f| format!("loop over {f}")));
    let loop_cached_backing = loop_cached_backing(&disk_dir);
    Some(BlockInfo { name, sys_dir, logical_block_size, rotational, model, loop_cached_backing })
}

/// The backing file of the loop device whose sysfs directory is `disk_dir` when the loop driver reads it
/// through the page cache (`loop/dio` is 0); `None` for a loop device with direct I/O, or any other device.
pub(crate) fn loop_cached_backing(disk_dir: &Path) -> Option<String> {
    let dio = read_trimmed(&disk_dir.join("loop/dio"))?;
    (dio == "0").then(|| read_trimmed(&disk_dir.join("loop/backing_file"))).flatten()
}

/// The block device behind a file system: st_dev's sysfs entry, or else the mount's source device (btrfs
/// and others report an anonymous st_dev).
pub(crate) fn block_info_for_fs(st_dev: u64, mount: Option<&Mount>) -> Option<BlockInfo> {
    if let Some(info) = block_info(DevNum::from_dev(st_dev)) {
        return Some(info);
    }
    let source = &mount?.source;
    if !source.starts_with("/dev/") {
        return None;
    }
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let meta = fs::metadata(source).ok()?;
    if !meta.file_type().is_block_device() {
        return None;
    }
    block_info(DevNum::from_dev(meta.rdev()))
}

/// The device number in a sysfs block directory's `dev` file.
pub(crate) fn dev_of(dir: &Path) -> Option<DevNum> {
    DevNum::parse(&read_trimmed(&dir.join("dev"))?)
}

/// The partitions of the disk whose sysfs directory is `dir`: (name, device number).
pub(crate) fn partitions(dir: &Path) -> Vec<(String, DevNum)> {
    let Ok(entries) = fs::read_dir(dir) else { return Vec::new() };
    let mut out: Vec<(String, DevNum)> = entries
        .flatten()
        .filter(|e| e.path().join("partition").exists())
        .filter_map(|e| Some((e.file_name().to_string_lossy().into_owned(), dev_of(&e.path())?)))
        .collect();
    out.sort();
    out
}

/// The devices holding the one whose sysfs directory is `dir` (device-mapper, MD, bcache): (name, number).
pub(crate) fn holders(dir: &Path) -> Vec<(String, DevNum)> {
    let Ok(entries) = fs::read_dir(dir.join("holders")) else { return Vec::new() };
    let mut out: Vec<(String, DevNum)> = entries
        .flatten()
        .filter_map(|e| {
            let dev = fs::canonicalize(e.path()).ok().and_then(|p| dev_of(&p))?;
            Some((e.file_name().to_string_lossy().into_owned(), dev))
        })
        .collect();
    out.sort();
    out
}

/// The names in /proc/swaps (the kernel's octal escapes undone).
fn swap_names() -> Vec<String> {
    let Ok(text) = fs::read_to_string("/proc/swaps") else { return Vec::new() };
    text.lines().skip(1).filter_map(|l| l.split_whitespace().next()).map(unescape).collect()
}

/// The swap files in /proc/swaps (regular files, not devices), with their metadata (identity).
pub(crate) fn swap_files() -> Vec<(String, fs::Metadata)> {
    swap_names()
        .into_iter()
        .filter_map(|name| {
            let meta = fs::metadata(name.trim_end_matches(" (deleted)")).ok().filter(|m| m.is_file())?;
            Some((name, meta))
        })
        .collect()
}

/// Device numbers of the block devices in /proc/swaps, with their names.
pub(crate) fn swap_devices() -> Vec<(String, DevNum)> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let mut out = Vec::new();
    for name in swap_names() {
        if let Ok(meta) = fs::metadata(&name) {
            if meta.file_type().is_block_device() {
                out.push((name, DevNum::from_dev(meta.rdev())));
            }
        }
    }
    out
}

/// Test hook: a file read instead of /proc/meminfo by [`mem_total_bytes`] and [`mem_available_bytes`], so a
/// test can make memory look low (`--cache-shrink`). Not for users: set only by tests.
pub const MEMINFO_ENV: &str = "IOLAB_MEMINFO";

fn meminfo_kib(key: &str) -> Option<u64> {
    let path = std::env::var_os(MEMINFO_ENV).unwrap_or_else(|| "/proc/meminfo".into());
    let text = fs::read_to_string(path).ok()?;
    text.lines().find_map(|l| {
        let rest = l.strip_prefix(key)?.strip_prefix(':')?;
        rest.split_whitespace().next()?.parse::<u64>().ok()
    })
}

/// Total RAM in bytes (MemTotal in /proc/meminfo); 0 when unknown.
///
/// Test hook: when `$IOLAB_MEMINFO` ([`MEMINFO_ENV`]) names a file, it is read instead of /proc/meminfo
/// (same format), so tests can fake a machine short of memory.
pub fn mem_total_bytes() -> u64 {
    meminfo_kib("MemTotal").unwrap_or(0).saturating_mul(1024)
}

/// RAM available for new allocations without swapping, in bytes (MemAvailable in /proc/meminfo); 0 when
/// unknown.
///
/// Test hook: when `$IOLAB_MEMINFO` ([`MEMINFO_ENV`]) names a file, it is read instead of /proc/meminfo
/// (same format): `--cache-shrink` end-to-end tests use it to make MemAvailable look low.
pub fn mem_available_bytes() -> u64 {
    meminfo_kib("MemAvailable").unwrap_or(0).saturating_mul(1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_loop_device_without_direct_io_names_its_page_cached_backing_file() {
        let dir = tempfile::tempdir().unwrap();
        let disk = dir.path();
        assert_eq!(loop_cached_backing(disk), None, "not a loop device");
        fs::create_dir(disk.join("loop")).unwrap();
        fs::write(disk.join("loop/backing_file"), "/var/tmp/disk.img\n").unwrap();
        fs::write(disk.join("loop/dio"), "1\n").unwrap();
        assert_eq!(loop_cached_backing(disk), None, "direct I/O: no page cache");
        fs::write(disk.join("loop/dio"), "0\n").unwrap();
        assert_eq!(loop_cached_backing(disk).as_deref(), Some("/var/tmp/disk.img"));
    }

    #[test]
    fn mountinfo_parses_escapes_and_optional_fields() {
        let text = "27 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw\n\
                    30 25 0:27 / /mnt/my\\040disk ro,relatime - tmpfs tmpfs rw,size=4k\n";
        let m = parse_mountinfo(text);
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].dev, DevNum { major: 254, minor: 0 });
        assert_eq!(m[0].fs_type, "ext4");
        assert_eq!(m[1].mount_point, "/mnt/my disk");
        assert!(m[1].read_only);
    }

    #[test]
    fn devnum_splits_like_glibc() {
        // glibc's makedev().
        let makedev = |major: u64, minor: u64| {
            ((major & 0xfff) << 8) | ((major & !0xfff) << 32) | (minor & 0xff) | ((minor & !0xff) << 12)
        };
        let dev = makedev(259, 65537);
        assert_eq!(DevNum::from_dev(dev), DevNum { major: 259, minor: 65537 });
    }

    #[test]
    fn mem_total_is_known_on_linux() {
        assert!(mem_total_bytes() > 0);
        assert!(mem_available_bytes() <= mem_total_bytes());
    }
}
