//! The kernel's own counters of block devices (/proc/diskstats), and the devices under a path.
//!
//! What a database did to its storage is read here, not guessed: [`devices_under`] finds the block device a
//! path's file system sits on (for a partition, also its whole disk; for device-mapper or MD, the devices it
//! is built from, all the way down), and [`read`] takes a snapshot of their counters. The difference of two
//! snapshots ([`Counters::since`]) is what the devices did in between: reads, writes, discards and flushes
//! completed, their sectors and the milliseconds spent on them (fields 4 to 17 of
//! Documentation/admin-guide/iostats.rst; discards since Linux 4.18, flushes since 5.5, read as 0 before).

use crate::sys;
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

/// The counters of one block device, as /proc/diskstats has them (cumulative since boot; sectors of 512 bytes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// Reads completed.
    pub reads: u64,
    /// Sectors read.
    pub read_sectors: u64,
    /// Milliseconds spent reading (summed over requests).
    pub read_ms: u64,
    /// Writes completed.
    pub writes: u64,
    /// Sectors written.
    pub write_sectors: u64,
    /// Milliseconds spent writing.
    pub write_ms: u64,
    /// Discards completed.
    pub discards: u64,
    /// Sectors discarded.
    pub discard_sectors: u64,
    /// Milliseconds spent discarding.
    pub discard_ms: u64,
    /// Flush requests completed.
    pub flushes: u64,
    /// Milliseconds spent flushing.
    pub flush_ms: u64,
    /// Milliseconds the device had I/O in flight (its busy time).
    pub busy_ms: u64,
}

impl Counters {
    /// What happened between `earlier` and `self` (a counter that went backwards, a device replaced,
    /// counts 0).
    pub fn since(&self, earlier: &Counters) -> Counters {
        let d = |a: u64, b: u64| a.saturating_sub(b);
        Counters {
            reads: d(self.reads, earlier.reads),
            read_sectors: d(self.read_sectors, earlier.read_sectors),
            read_ms: d(self.read_ms, earlier.read_ms),
            writes: d(self.writes, earlier.writes),
            write_sectors: d(self.write_sectors, earlier.write_sectors),
            write_ms: d(self.write_ms, earlier.write_ms),
            discards: d(self.discards, earlier.discards),
            discard_sectors: d(self.discard_sectors, earlier.discard_sectors),
            discard_ms: d(self.discard_ms, earlier.discard_ms),
            flushes: d(self.flushes, earlier.flushes),
            flush_ms: d(self.flush_ms, earlier.flush_ms),
            busy_ms: d(self.busy_ms, earlier.busy_ms),
        }
    }
}

/// Parses the text of /proc/diskstats: device name to counters. Lines that do not parse are skipped.
pub fn parse(text: &str) -> BTreeMap<String, Counters> {
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let mut fields = line.split_whitespace();
        let (Some(_major), Some(_minor), Some(name)) = (fields.next(), fields.next(), fields.next()) else {
            continue;
        };
        let v: Vec<u64> = fields.map(|f| f.parse().unwrap_or(0)).collect();
        if v.len() < 11 {
            continue;
        }
        let at = |i: usize| v.get(i).copied().unwrap_or(0);
        out.insert(
            name.to_string(),
            Counters {
                reads: at(0),
                read_sectors: at(2),
                read_ms: at(3),
                writes: at(4),
                write_sectors: at(6),
                write_ms: at(7),
                busy_ms: at(9),
                discards: at(11),
                discard_sectors: at(13),
                discard_ms: at(14),
                flushes: at(15),
                flush_ms: at(16),
            },
        );
    }
    out
}

/// A snapshot of every device's counters; empty when /proc/diskstats cannot be read.
pub fn read() -> BTreeMap<String, Counters> {
    fs::read_to_string("/proc/diskstats").map(|t| parse(&t)).unwrap_or_default()
}

/// The block device `file` is (a device node) or whose file system holds it (a file), by its kernel name
/// as /proc/diskstats has it; `None` on no block device (tmpfs, overlay, NFS) or when it cannot be read.
pub fn device_of(file: &fs::File) -> Option<String> {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let meta = file.metadata().ok()?;
    if meta.file_type().is_block_device() {
        return sys::block_info(sys::DevNum::from_dev(meta.rdev())).map(|b| b.name);
    }
    if let Some(b) = sys::block_info(sys::DevNum::from_dev(meta.dev())) {
        return Some(b.name);
    }
    let path = fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd())).ok()?;
    devices_under(&path).into_iter().next().map(|d| d.name)
}

/// A block device under a path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockDevice {
    /// The kernel's name (`vda`, `nvme0n1p2`, `dm-0`, `loop3`), as /proc/diskstats has it.
    pub name: String,
    /// How it relates to the path: `filesystem` (the file system is on it), `disk` (the whole disk of
    /// that partition), `member` (a device a device-mapper or MD device is built from).
    pub role: &'static str,
    /// Its model, device-mapper name or loop backing file, when sysfs says.
    pub model: Option<String>,
}

/// The block devices under `path`'s file system, the file system's own first; empty for a file system on no
/// block device (tmpfs, overlay, NFS).
pub fn devices_under(path: &Path) -> Vec<BlockDevice> {
    use std::os::unix::fs::MetadataExt;
    let Ok(meta) = fs::metadata(path) else { return Vec::new() };
    let canonical = fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let mount = sys::mount_of(&canonical);
    let Some(info) = sys::block_info_for_fs(meta.dev(), mount.as_ref()) else { return Vec::new() };
    let mut out =
        vec![BlockDevice { name: info.name.clone(), role: "filesystem", model: info.model.clone() }];
    if info.sys_dir.join("partition").exists() {
        if let Some(disk) = info.sys_dir.parent().and_then(sys::dev_of).and_then(sys::block_info) {
            out.push(BlockDevice { name: disk.name, role: "disk", model: disk.model });
        }
    }
    let mut stack = members(&info.sys_dir);
    while let Some(dir) = stack.pop() {
        let Some(dev) = sys::dev_of(&dir) else { continue };
        let Some(m) = sys::block_info(dev) else { continue };
        if out.iter().any(|d| d.name == m.name) || out.len() >= MAX_DEVICES {
            continue;
        }
        stack.extend(members(&m.sys_dir));
        out.push(BlockDevice { name: m.name, role: "member", model: m.model });
    }
    out
}

/// At most this many devices are followed under one path (a bound on a deep or wide device stack).
const MAX_DEVICES: usize = 64;

/// The sysfs directories of the devices `dir`'s device is built from (its `slaves`).
fn members(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(dir.join("slaves")) else { return Vec::new() };
    let mut out: Vec<PathBuf> = entries.flatten().filter_map(|e| fs::canonicalize(e.path()).ok()).collect();
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diskstats_parses_every_field_and_old_kernels_read_zero_flushes() {
        let text = "\
 253       0 vda 100 1 800 50 200 2 1600 70 0 90 120 3 0 24 5 7 9
   7       0 loop0 5 0 40 1 6 0 48 2 0 3 3
 bad line
";
        let s = parse(text);
        let vda = s["vda"];
        assert_eq!((vda.reads, vda.read_sectors, vda.read_ms), (100, 800, 50));
        assert_eq!((vda.writes, vda.write_sectors, vda.write_ms, vda.busy_ms), (200, 1600, 70, 90));
        assert_eq!((vda.discards, vda.discard_sectors, vda.discard_ms), (3, 24, 5));
        assert_eq!((vda.flushes, vda.flush_ms), (7, 9));
        let lo = s["loop0"];
        assert_eq!((lo.reads, lo.writes, lo.discards, lo.flushes), (5, 6, 0, 0));
        assert_eq!(s.len(), 2);
    }

    #[test]
    fn diskstats_delta_never_goes_below_zero() {
        let a = Counters { reads: 10, writes: 5, ..Counters::default() };
        let b = Counters { reads: 15, writes: 3, ..Counters::default() };
        let d = b.since(&a);
        assert_eq!((d.reads, d.writes), (5, 0));
    }

    #[test]
    fn the_root_file_system_has_its_device_in_diskstats() {
        let devices = devices_under(Path::new("/"));
        let Some(first) = devices.first() else {
            return iolab_testkit::skip(format_args!("/ is on no block device here"));
        };
        assert_eq!(first.role, "filesystem");
        assert!(read().contains_key(&first.name), "{first:?} in /proc/diskstats");
    }
}
