//! A shard's bytes on the storage: written as torch.save writes a file (created, written front to back,
//! fsynced when `checkpoint.fsync`, closed), read back front to back, and kept out of the page cache between
//! the two (synced and `POSIX_FADV_DONTNEED`, then counted with `mincore`, or read with O_DIRECT).
//!
//! The bytes are random and incompressible, as DLIO's `torch.rand` tensors are: each rank has one buffer
//! drawn from its seed, and every 4 KiB block written carries its own file and offset in its first 8 bytes,
//! so no two blocks of a run are alike and a deduplicating storage stores every one.

use iolab_rng::Rng;
use std::fs::File;
use std::io::{self, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;

/// Bytes of each write and read.
pub const CHUNK: usize = 4 << 20;
/// The block whose first 8 bytes are stamped, and O_DIRECT's alignment.
const BLOCK: usize = 4096;

/// A rank's buffer: [`CHUNK`] random bytes, aligned for O_DIRECT.
pub struct Buffer {
    v: Vec<u8>,
    off: usize,
}

impl Buffer {
    /// The buffer of rank `rank`, drawn from `seed`.
    pub fn new(seed: u64, rank: u64) -> Buffer {
        let mut v = vec![0u8; CHUNK + BLOCK];
        let off = v.as_ptr().align_offset(BLOCK);
        let mut rng = Rng::for_worker(seed, rank as u32);
        for w in v[off..off + CHUNK].chunks_mut(8) {
            w.copy_from_slice(&rng.next_u64().to_le_bytes()[..w.len()]);
        }
        Buffer { v, off }
    }

    fn bytes(&mut self) -> &mut [u8] {
        &mut self.v[self.off..self.off + CHUNK]
    }
}

/// Writes `len` bytes to a new file `path` (`tag` tells its blocks from every other file's), fsyncs it when
/// asked; returns the bytes written.
pub fn write_shard(path: &Path, len: u64, tag: u64, fsync: bool, buf: &mut Buffer) -> io::Result<u64> {
    let mut f = File::options().write(true).create_new(true).open(path)?;
    let mut at = 0u64;
    while at < len {
        let n = ((len - at) as usize).min(CHUNK);
        let b = buf.bytes();
        for (i, block) in b[..n].chunks_mut(BLOCK).enumerate() {
            let stamp = tag.rotate_left(32) ^ (at + (i * BLOCK) as u64);
            let k = block.len().min(8);
            block[..k].copy_from_slice(&stamp.to_le_bytes()[..k]);
        }
        f.write_all(&b[..n])?;
        at += n as u64;
    }
    if fsync {
        f.sync_all()?;
    }
    Ok(at)
}

/// Reads the file `path` front to back (with O_DIRECT when asked); returns the bytes read.
pub fn read_shard(path: &Path, odirect: bool, buf: &mut Buffer) -> io::Result<u64> {
    let mut o = File::options();
    o.read(true);
    if odirect {
        o.custom_flags(libc::O_DIRECT);
    }
    let f = o.open(path)?;
    let len = f.metadata()?.len();
    let b = buf.bytes();
    let mut at = 0u64;
    // Whole chunks from aligned offsets; the last one comes back short at the end of the file.
    while at < len {
        let got = f.read_at(b, at)?;
        if got == 0 {
            break;
        }
        at += got as u64;
    }
    Ok(at)
}

/// Syncs `path` and drops it from the page cache; returns the bytes of it still cached after.
pub fn drop_from_cache(path: &Path) -> io::Result<u64> {
    let f = File::options().read(true).write(true).open(path)?;
    f.sync_data()?;
    crate::dataset::drop_cached(&f);
    resident_bytes(&f)
}

/// The bytes of `f` in the page cache (`mincore` over a mapping of it).
pub fn resident_bytes(f: &File) -> io::Result<u64> {
    let len = f.metadata()?.len() as usize;
    if len == 0 {
        return Ok(0);
    }
    // SAFETY: sysconf reads no memory of ours.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(4096) as usize;
    // SAFETY: a read-only shared mapping of a file this `File` holds open, of its length, unmapped below
    // before returning; no byte of it is read (mincore only asks the kernel about its pages).
    let map =
        unsafe { libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ, libc::MAP_SHARED, f.as_raw_fd(), 0) };
    if map == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    let mut pages = vec![0u8; len.div_ceil(page)];
    // SAFETY: `map` is the mapping of `len` bytes made above; `pages` has a byte for each of its pages.
    let r = unsafe { libc::mincore(map, len, pages.as_mut_ptr()) };
    let err = io::Error::last_os_error();
    // SAFETY: unmaps the mapping made above, which nothing refers to any more.
    unsafe { libc::munmap(map, len) };
    if r != 0 {
        return Err(err);
    }
    let resident = pages.iter().filter(|p| *p & 1 == 1).count() as u64;
    Ok((resident * page as u64).min(len as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shard_is_written_read_back_and_dropped_from_the_cache() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("s.pt");
        let mut buf = Buffer::new(1, 0);
        let len = CHUNK as u64 + 12_345;
        assert_eq!(write_shard(&p, len, 7, true, &mut buf).unwrap(), len);
        let bytes = std::fs::read(&p).unwrap();
        assert_eq!(bytes.len() as u64, len);
        // Two blocks at the same place of the buffer, a chunk apart, differ by their stamps.
        assert_ne!(bytes[..BLOCK], bytes[CHUNK..CHUNK + BLOCK]);
        assert_eq!(bytes[8..BLOCK], bytes[CHUNK + 8..CHUNK + BLOCK]);
        assert!(resident_bytes(&File::open(&p).unwrap()).unwrap() > 0, "just read: cached");
        let left = drop_from_cache(&p).unwrap();
        // tmpfs keeps its pages (they are the files); a disk's file system lets them go.
        assert!(left == 0 || left >= len - BLOCK as u64, "{left}");
        assert_eq!(read_shard(&p, false, &mut buf).unwrap(), len);
        // O_DIRECT: whole chunks from aligned offsets, the tail short (a file system without O_DIRECT,
        // such as an older tmpfs, refuses the open with EINVAL).
        match read_shard(&p, true, &mut buf) {
            Ok(n) => assert_eq!(n, len),
            Err(e) => assert_eq!(e.raw_os_error(), Some(libc::EINVAL), "{e}"),
        }
    }
}
