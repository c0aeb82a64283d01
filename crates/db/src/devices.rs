//! What the block devices under a database did over a window, as the documents show it ([`DeviceView`]):
//! [`DeviceWindow`] reads /proc/diskstats for the devices under the database's directory when it opens and when
//! it is read, through `iolab-device`'s `diskstats`. Also the database's files as a whole: their size
//! ([`dir_bytes`], [`dir_files`]) and [`evict`], which writes them back and drops them from the page cache,
//! so what reads them next reads the device (a cold start, as after a restart).

use iolab_device::diskstats::{self, BlockDevice, Counters};
use iolab_report::db::{DatabaseIo, DeviceView};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

/// A measured window over the devices under a directory.
#[derive(Debug)]
pub struct DeviceWindow {
    devices: Vec<BlockDevice>,
    start: BTreeMap<String, Counters>,
    opened: Instant,
}

impl DeviceWindow {
    /// Opens a window over the devices under `dir` (none for `None`: a server of the user's own).
    pub fn open(dir: Option<&Path>) -> DeviceWindow {
        let devices = dir.map(diskstats::devices_under).unwrap_or_default();
        DeviceWindow::over(devices)
    }

    /// Opens a window over `devices`.
    pub fn over(devices: Vec<BlockDevice>) -> DeviceWindow {
        let start = if devices.is_empty() { BTreeMap::new() } else { diskstats::read() };
        DeviceWindow { devices, start, opened: Instant::now() }
    }

    /// Seconds since the window opened.
    pub fn seconds(&self) -> f64 {
        self.opened.elapsed().as_secs_f64()
    }

    /// The devices.
    pub fn devices(&self) -> &[BlockDevice] {
        &self.devices
    }

    /// What each device did since the window opened, and the seconds since.
    pub fn deltas(&self) -> (Vec<(BlockDevice, Counters)>, f64) {
        let now = if self.devices.is_empty() { BTreeMap::new() } else { diskstats::read() };
        let s = self.opened.elapsed().as_secs_f64();
        let out = self
            .devices
            .iter()
            .filter_map(|d| Some((d.clone(), now.get(&d.name)?.since(self.start.get(&d.name)?))))
            .collect();
        (out, s)
    }

    /// The window so far, as the documents show it.
    pub fn views(&self) -> Vec<DeviceView> {
        let (deltas, s) = self.deltas();
        deltas.iter().map(|(d, c)| device_view(d, c, s)).collect()
    }
}

/// The sum of two deltas (a query's runs).
pub fn add(a: &Counters, b: &Counters) -> Counters {
    Counters {
        reads: a.reads + b.reads,
        read_sectors: a.read_sectors + b.read_sectors,
        read_ms: a.read_ms + b.read_ms,
        writes: a.writes + b.writes,
        write_sectors: a.write_sectors + b.write_sectors,
        write_ms: a.write_ms + b.write_ms,
        discards: a.discards + b.discards,
        discard_sectors: a.discard_sectors + b.discard_sectors,
        discard_ms: a.discard_ms + b.discard_ms,
        flushes: a.flushes + b.flushes,
        flush_ms: a.flush_ms + b.flush_ms,
        busy_ms: a.busy_ms + b.busy_ms,
    }
}

/// A device's counters over `s` seconds as the documents show them.
pub fn device_view(d: &BlockDevice, c: &Counters, s: f64) -> DeviceView {
    let rate = |n: u64| if s > 0.0 { n as f64 / s } else { 0.0 };
    let mean = |num: u64, den: u64| (den > 0).then(|| num as f64 / den as f64);
    DeviceView {
        name: d.name.clone(),
        role: d.role.into(),
        model: d.model.clone(),
        reads: c.reads,
        writes: c.writes,
        flushes: c.flushes,
        discards: c.discards,
        read_bytes: c.read_sectors * 512,
        write_bytes: c.write_sectors * 512,
        discard_bytes: c.discard_sectors * 512,
        read_iops: rate(c.reads),
        write_iops: rate(c.writes),
        flushes_per_s: rate(c.flushes),
        read_mean_bytes: mean(c.read_sectors * 512, c.reads),
        write_mean_bytes: mean(c.write_sectors * 512, c.writes),
        read_mean_ms: mean(c.read_ms, c.reads),
        write_mean_ms: mean(c.write_ms, c.writes),
        flush_mean_ms: mean(c.flush_ms, c.flushes),
        busy: if s > 0.0 { (c.busy_ms as f64 / 1000.0 / s).min(1.0) } else { 0.0 },
    }
}

/// The database's own I/O (`io`, as the harness counted it over `s` seconds) beside the devices' table:
/// its rates, and each disk's totals from the row of the same name.
pub fn beside(io: Option<DatabaseIo>, devices: &[DeviceView], s: f64) -> Option<DatabaseIo> {
    let mut io = io?;
    let rate = |n: u64| if s > 0.0 { n as f64 / s } else { 0.0 };
    for d in &mut io.disks {
        d.read_iops = rate(d.reads);
        d.write_iops = rate(d.writes);
        let row = devices.iter().find(|v| v.name == d.name);
        d.device_read_bytes = row.map(|v| v.read_bytes);
        d.device_write_bytes = row.map(|v| v.write_bytes);
    }
    Some(io)
}

/// Whether the database read nothing from the devices under it in the window: its own reads where they
/// were counted (other processes' reads of the same devices are not the database's), else the devices'.
/// False without devices.
pub fn read_nothing(devices: &[DeviceView], io: Option<&DatabaseIo>) -> bool {
    if devices.is_empty() {
        return false;
    }
    match io.and_then(DatabaseIo::read_bytes) {
        Some(own) => own == 0,
        None => devices.iter().all(|d| d.reads == 0),
    }
}

/// The warnings the database's own I/O gives beside the devices': a device that did much more than the
/// database ([`DatabaseIo::warning`]).
pub fn database_io_warnings(io: Option<&DatabaseIo>) -> Vec<String> {
    io.and_then(DatabaseIo::warning).into_iter().collect()
}

/// Calls `f` with each regular file under `dir` and its size (16 levels deep at most).
fn walk(dir: &Path, f: &mut dyn FnMut(&Path, u64)) {
    fn go(p: &Path, depth: u32, f: &mut dyn FnMut(&Path, u64)) {
        let Ok(entries) = std::fs::read_dir(p) else { return };
        for e in entries.flatten() {
            match e.file_type() {
                Ok(t) if t.is_dir() && depth < 16 => go(&e.path(), depth + 1, f),
                Ok(t) if t.is_file() => f(&e.path(), e.metadata().map(|m| m.len()).unwrap_or(0)),
                _ => {}
            }
        }
    }
    go(dir, 0, f)
}

/// Bytes in the files under `dir`.
pub fn dir_bytes(dir: &Path) -> u64 {
    let mut n = 0;
    walk(dir, &mut |_, len| n += len);
    n
}

/// Files under `dir`.
pub fn dir_files(dir: &Path) -> u64 {
    let mut n = 0;
    walk(dir, &mut |_, _| n += 1);
    n
}

/// Writes back every file under `dir` (fsync) and drops its pages from the page cache
/// (`POSIX_FADV_DONTNEED`), so the next reads of it go to the device; returns the bytes of the files
/// advised. Pages a process holds mapped, and a server's own buffers, stay. Files that cannot be opened are
/// skipped.
pub fn evict(dir: &Path) -> u64 {
    use nix::fcntl::{posix_fadvise, PosixFadviseAdvice};
    let mut bytes = 0;
    walk(dir, &mut |p, len| {
        let Ok(f) = std::fs::File::open(p) else { return };
        let _ = f.sync_all();
        if posix_fadvise(&f, 0, 0, PosixFadviseAdvice::POSIX_FADV_DONTNEED).is_ok() {
            bytes += len;
        }
    });
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_over_nothing_is_empty_and_files_are_counted_and_evicted() {
        let w = DeviceWindow::open(None);
        assert!(w.views().is_empty());
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir(t.path().join("sub")).unwrap();
        std::fs::write(t.path().join("a"), vec![1u8; 5000]).unwrap();
        std::fs::write(t.path().join("sub/b"), vec![2u8; 3000]).unwrap();
        assert_eq!((dir_bytes(t.path()), dir_files(t.path())), (8000, 2));
        assert_eq!(evict(t.path()), 8000);
        let d = add(
            &Counters { reads: 1, busy_ms: 2, ..Default::default() },
            &Counters { reads: 3, ..Default::default() },
        );
        assert_eq!((d.reads, d.busy_ms), (4, 2));
    }

    fn disk(reads: u64, writes: u64) -> DeviceView {
        let c = Counters {
            reads,
            read_sectors: reads * 8,
            writes,
            write_sectors: writes * 8,
            ..Default::default()
        };
        device_view(&BlockDevice { name: "loop3".into(), role: "filesystem", model: None }, &c, 2.0)
    }

    fn own(read_bytes: u64, write_bytes: u64) -> DatabaseIo {
        DatabaseIo {
            whose: "iolab's process (SQLite runs in it)".into(),
            source: Some("cgroup-v1 blkio /sys/fs/cgroup/blkio/iolab-acct-1".into()),
            unmeasured: None,
            disks: vec![iolab_report::db::DatabaseDiskIo {
                name: "loop3".into(),
                reads: read_bytes / 4096,
                writes: write_bytes / 4096,
                read_bytes,
                write_bytes,
                discards: Some(0),
                read_iops: 0.0,
                write_iops: 0.0,
                device_read_bytes: None,
                device_write_bytes: None,
            }],
            unseen: String::new(),
        }
    }

    /// Issue 37, item 1: the device read (another process did), the database did not: it was served from
    /// memory all the same. Counted, its own reads decide; not counted, the device's.
    #[test]
    fn served_from_memory_is_the_database_s_own_reads_where_counted() {
        let devices = [disk(5000, 100)];
        assert!(read_nothing(&devices, Some(&own(0, 4096))));
        assert!(!read_nothing(&devices, Some(&own(4096, 0))));
        let mut unmeasured = own(0, 0);
        unmeasured.source = None;
        unmeasured.unmeasured = Some("iolab is not root".into());
        assert!(!read_nothing(&devices, Some(&unmeasured)), "not counted is not 0");
        assert!(read_nothing(&[disk(0, 100)], None));
        assert!(!read_nothing(&[], Some(&own(0, 0))), "no devices, nothing to say");
    }

    #[test]
    fn the_database_s_io_beside_the_devices_has_their_totals_and_its_rates() {
        let io = beside(Some(own(0, 8 << 20)), &[disk(5000, 100)], 2.0).unwrap();
        let d = &io.disks[0];
        assert_eq!((d.device_read_bytes, d.device_write_bytes), (Some(5000 * 4096), Some(100 * 4096)));
        assert_eq!(d.write_iops, 1024.0);
        assert!(database_io_warnings(Some(&io)).len() == 1, "the device read 19.5 MiB, the database none");
        assert_eq!(beside(None, &[], 1.0), None);
    }
}
