//! File layout: where a file target's bytes lie on its device, from the kernel's FIEMAP ioctl, and which
//! I/Os cross a boundary between two pieces of it (*split I/Os*: the file system turns each into two or more
//! device commands, and on a disk, a seek between them).
//!
//! A file's *extents* here are the pieces filefrag counts: the kernel's extent records merged where one
//! continues the previous one both in the file and on the device (ext4 records at most 128 MiB each, so
//! one contiguous 1 GiB file is 8 records but 1 extent). A *boundary* is an offset in the file where the
//! mapping stops being contiguous: the start of an extent that does not continue the one before, and the end
//! of an extent followed by a hole. An I/O `[offset, offset + len)` is split when a boundary lies strictly
//! inside it. Block devices, `mem:`, `null:` and `sim:` targets have no layout.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::sync::Arc;

/// The layout of one file: its extents and the boundaries between them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Layout {
    /// Extents, physically contiguous records merged (what `filefrag` prints as "N extents found").
    pub extents: u64,
    /// Bytes mapped (allocated, written or not): the file's size less its holes.
    pub mapped_bytes: u64,
    /// The boundaries (offsets in the file), sorted, without 0: immutable, shared with every worker that
    /// uses the file.
    pub boundaries: Arc<[u64]>,
}

/// One extent record as FIEMAP returns it: where it is in the file, where on the device, how long.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ExtentRecord {
    /// Offset in the file.
    pub logical: u64,
    /// Offset on the device.
    pub physical: u64,
    /// Length in bytes.
    pub length: u64,
}

impl Layout {
    /// Folds the kernel's records (in file order) into extents and boundaries: a record that starts where
    /// the previous one ended, in the file and on the device, continues its extent.
    pub fn from_records(records: &[ExtentRecord]) -> Layout {
        let mut extents = 0u64;
        let mut mapped_bytes = 0u64;
        let mut boundaries: Vec<u64> = Vec::new();
        let mut prev: Option<ExtentRecord> = None;
        for r in records.iter().filter(|r| r.length > 0) {
            mapped_bytes += r.length;
            let continues = prev.is_some_and(|p| {
                p.logical + p.length == r.logical && p.physical.checked_add(p.length) == Some(r.physical)
            });
            if !continues {
                extents += 1;
                if let Some(p) = prev.filter(|p| p.logical + p.length < r.logical) {
                    boundaries.push(p.logical + p.length);
                }
                boundaries.push(r.logical);
            }
            prev = Some(*r);
        }
        if let Some(p) = prev {
            boundaries.push(p.logical + p.length);
        }
        boundaries.retain(|&b| b > 0);
        boundaries.dedup();
        Layout { extents, mapped_bytes, boundaries: boundaries.into() }
    }
}

/// Whether `[offset, offset + len)` has a boundary strictly inside it (`boundaries` sorted). A binary search:
/// no allocation, no lock.
#[inline]
pub fn crosses(boundaries: &[u64], offset: u64, len: u32) -> bool {
    let first_after = boundaries.partition_point(|&b| b <= offset);
    boundaries.get(first_after).is_some_and(|&b| b < offset + len as u64)
}

/// The layout of `file`, or `None` when its file system has no FIEMAP (tmpfs, network file systems) or the
/// call fails: a layout describes the target, so its absence is never an error. Dirty pages are written
/// first (`FIEMAP_FLAG_SYNC`), so a buffered run's delayed allocations are counted where they landed.
pub fn file_layout(file: &File) -> Option<Layout> {
    let mut records = Vec::new();
    let mut start = 0u64;
    loop {
        let mut req = Box::new(FiemapRequest::new(start));
        fiemap(file, &mut req).ok()?;
        let got = (req.head.mapped_extents as usize).min(BATCH);
        for e in &req.extents[..got] {
            records.push(ExtentRecord { logical: e.logical, physical: e.physical, length: e.length });
        }
        let last = req.extents[..got].last();
        match last {
            Some(e) if e.flags & FIEMAP_EXTENT_LAST == 0 => start = e.logical + e.length,
            _ => break,
        }
    }
    Some(Layout::from_records(&records))
}

/// Extent records asked for per call: 512 (28 KiB), so even a badly fragmented file takes few calls.
const BATCH: usize = 512;
/// `FIEMAP_FLAG_SYNC`: write dirty pages before mapping.
const FIEMAP_FLAG_SYNC: u32 = 0x1;
/// `FIEMAP_EXTENT_LAST`: the file's last extent.
const FIEMAP_EXTENT_LAST: u32 = 0x1;
/// `FS_IOC_FIEMAP` = `_IOWR('f', 11, struct fiemap)`, in the asm-generic encoding (x86, arm, riscv):
/// read-write (3) << 30 | size 32 << 16 | 'f' << 8 | 11.
const FS_IOC_FIEMAP: u64 = (3 << 30) | (32 << 16) | ((b'f' as u64) << 8) | 11;

/// `struct fiemap` (linux/fiemap.h), the 32-byte header.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct FiemapHead {
    start: u64,
    length: u64,
    flags: u32,
    mapped_extents: u32,
    extent_count: u32,
    reserved: u32,
}

/// `struct fiemap_extent` (linux/fiemap.h), 56 bytes.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct FiemapExtent {
    logical: u64,
    physical: u64,
    length: u64,
    reserved64: [u64; 2],
    flags: u32,
    reserved: [u32; 3],
}

/// The header followed by room for [`BATCH`] records, as the kernel reads and writes it.
#[repr(C)]
struct FiemapRequest {
    head: FiemapHead,
    extents: [FiemapExtent; BATCH],
}

impl FiemapRequest {
    fn new(start: u64) -> FiemapRequest {
        FiemapRequest {
            head: FiemapHead {
                start,
                length: u64::MAX - start,
                flags: FIEMAP_FLAG_SYNC,
                extent_count: BATCH as u32,
                ..FiemapHead::default()
            },
            extents: [FiemapExtent::default(); BATCH],
        }
    }
}

/// The one `unsafe` of this crate: the FIEMAP ioctl.
#[allow(unsafe_code)]
fn fiemap(file: &File, req: &mut FiemapRequest) -> io::Result<()> {
    // SAFETY: `req` is an exclusively borrowed, live `#[repr(C)]` struct fiemap followed by `extent_count`
    // (= BATCH) fiemap_extent records, exactly what FS_IOC_FIEMAP reads and writes (the kernel never writes
    // more records than extent_count); `file` keeps the descriptor open for the call.
    let rc = unsafe { libc::ioctl(file.as_raw_fd(), FS_IOC_FIEMAP as _, req as *mut FiemapRequest) };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(logical: u64, physical: u64, length: u64) -> ExtentRecord {
        ExtentRecord { logical, physical, length }
    }

    #[test]
    fn the_structs_have_the_kernel_s_sizes() {
        assert_eq!(std::mem::size_of::<FiemapHead>(), 32);
        assert_eq!(std::mem::size_of::<FiemapExtent>(), 56);
        assert_eq!(std::mem::size_of::<FiemapRequest>(), 32 + 56 * BATCH);
        assert_eq!(FS_IOC_FIEMAP, 0xC020_660B);
    }

    /// Records that continue each other in the file and on the device are one extent (ext4 splits a
    /// contiguous file into 128 MiB records); a jump on the device or a hole starts a new one.
    #[test]
    fn records_fold_into_extents_and_boundaries() {
        let m = 1u64 << 20;
        let contiguous = Layout::from_records(&[rec(0, 100 * m, 128 * m), rec(128 * m, 228 * m, 64 * m)]);
        assert_eq!(contiguous.extents, 1);
        assert_eq!(&*contiguous.boundaries, &[192 * m]);
        assert_eq!(contiguous.mapped_bytes, 192 * m);
        let moved = Layout::from_records(&[rec(0, 100 * m, 2 * m), rec(2 * m, 50 * m, 2 * m)]);
        assert_eq!(moved.extents, 2);
        assert_eq!(&*moved.boundaries, &[2 * m, 4 * m]);
        let holed = Layout::from_records(&[rec(m, 10 * m, m), rec(4 * m, 11 * m, m)]);
        assert_eq!(holed.extents, 2);
        assert_eq!(&*holed.boundaries, &[m, 2 * m, 4 * m, 5 * m], "a hole is bounded on both sides");
        assert_eq!(Layout::from_records(&[]), Layout::default());
    }

    #[test]
    fn an_io_is_split_only_when_a_boundary_is_strictly_inside_it() {
        let b = [8192u64, 65536];
        assert!(!crosses(&b, 0, 8192), "ends on the boundary");
        assert!(!crosses(&b, 8192, 4096), "starts on it");
        assert!(crosses(&b, 4096, 8192));
        assert!(crosses(&b, 60000, 8192));
        assert!(!crosses(&b, 65536, 1 << 20), "past the last boundary");
        assert!(crosses(&b, 0, 1 << 20), "over both");
        assert!(!crosses(&[], 0, u32::MAX));
    }

    /// A real file: written in two pieces with a hole between, it maps as two extents (where the file system
    /// has FIEMAP; tmpfs before 6.x has none, and then there is no layout).
    #[test]
    fn a_file_with_a_hole_has_two_extents() {
        use std::os::unix::fs::FileExt;
        let dir = tempfile::tempdir().unwrap();
        let f = std::fs::OpenOptions::new()
            .create_new(true)
            .read(true)
            .write(true)
            .open(dir.path().join("f"))
            .unwrap();
        f.write_all_at(&[1u8; 65536], 0).unwrap();
        f.write_all_at(&[2u8; 65536], 1 << 20).unwrap();
        let Some(l) = file_layout(&f) else {
            iolab_testkit::skip(format_args!("no FIEMAP on this file system"));
            return;
        };
        assert_eq!(l.extents, 2, "{l:?}");
        assert_eq!(&*l.boundaries, &[65536, 1 << 20, (1 << 20) + 65536]);
    }
}
