//! `mem:` targets: an in-process RAM disk shared by all workers.
//!
//! The store is a boxed slice of `AtomicU64` accessed with `Relaxed` loads and stores. That makes concurrent
//! overlapping I/Os sound in Rust's memory model (no data race, no `unsafe`) while behaving like a real disk:
//! the last writer wins per 8-byte word, and a block written by two I/Os at once may be torn. Relaxed atomics
//! compile to plain moves on x86-64 and aarch64, so a copy costs about what `memcpy` does word by word.

use crate::error::TargetError;
use crate::sys::mem_available_bytes;
use std::sync::atomic::{AtomicU64, Ordering};

/// An in-process RAM disk with 512-byte sectors, shared by all workers. Concurrent overlapping I/Os behave like
/// a real disk (last writer wins per 8-byte word; torn blocks possible), and are sound: memory is `[AtomicU64]`
/// accessed with Relaxed loads/stores (no data race in Rust's model). Offsets and lengths are multiples of 8.
pub struct MemStore {
    words: Box<[AtomicU64]>,
}

impl std::fmt::Debug for MemStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemStore").field("size_bytes", &self.size_bytes()).finish()
    }
}

impl MemStore {
    /// Allocates `size_bytes` of zeroed memory and touches every page now: a RAM disk is committed memory,
    /// and page faults must not happen during the run.
    ///
    /// Fails with [`TargetError::OutOfMemory`] when `size_bytes` exceeds MemAvailable (/proc/meminfo) or the
    /// allocation fails, and with [`TargetError::InvalidSize`] when it is 0 or not a multiple of 8.
    pub fn new(size_bytes: u64) -> Result<MemStore, TargetError> {
        if size_bytes == 0 || size_bytes % 8 != 0 {
            return Err(TargetError::InvalidSize {
                path: "mem".into(),
                size_bytes,
                expected: "a positive multiple of 8 bytes",
            });
        }
        let available_bytes = mem_available_bytes();
        let out_of_memory = TargetError::OutOfMemory { requested_bytes: size_bytes, available_bytes };
        // 0 means /proc/meminfo was unreadable: let the allocation decide.
        if available_bytes != 0 && size_bytes > available_bytes {
            return Err(out_of_memory);
        }
        let word_count = usize::try_from(size_bytes / 8)
            .map_err(|_| TargetError::OutOfMemory { requested_bytes: size_bytes, available_bytes })?;
        let mut words: Vec<AtomicU64> = Vec::new();
        words.try_reserve_exact(word_count).map_err(|_| out_of_memory)?;
        // Writing every word (rather than relying on calloc's lazily mapped zero pages) commits the memory.
        words.resize_with(word_count, || AtomicU64::new(0));
        Ok(MemStore { words: words.into_boxed_slice() })
    }

    /// Capacity in bytes.
    pub fn size_bytes(&self) -> u64 {
        self.words.len() as u64 * 8
    }

    /// Copies `buf.len()` bytes at `offset` into `buf`.
    ///
    /// # Panics
    /// When `offset` or `buf.len()` is not a multiple of 8, or the range ends past [`MemStore::size_bytes`]
    /// (the plan keeps every op inside the target and aligned to 512 bytes, so this is a bug in the caller).
    #[inline]
    pub fn read(&self, offset: u64, buf: &mut [u8]) {
        let words = self.range(offset, buf.len());
        for (chunk, word) in buf.chunks_exact_mut(8).zip(words) {
            chunk.copy_from_slice(&word.load(Ordering::Relaxed).to_ne_bytes());
        }
    }

    /// Copies `buf` into the store at `offset`.
    ///
    /// # Panics
    /// As [`MemStore::read`].
    #[inline]
    pub fn write(&self, offset: u64, buf: &[u8]) {
        let words = self.range(offset, buf.len());
        for (chunk, word) in buf.chunks_exact(8).zip(words) {
            let mut bytes = [0u8; 8];
            bytes.copy_from_slice(chunk);
            word.store(u64::from_ne_bytes(bytes), Ordering::Relaxed);
        }
    }

    #[inline]
    fn range(&self, offset: u64, len: usize) -> &[AtomicU64] {
        assert!(
            offset % 8 == 0 && len % 8 == 0,
            "MemStore I/O must be 8-byte aligned: offset {offset}, length {len}"
        );
        let first = (offset / 8) as usize;
        &self.words[first..first + len / 8]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mem_store_write_read_round_trip_at_several_offsets() {
        let store = MemStore::new(1 << 20).unwrap();
        assert_eq!(store.size_bytes(), 1 << 20);
        for (i, offset) in [0u64, 8, 512, 4096, 65536 + 24, (1 << 20) - 4096].into_iter().enumerate() {
            let data: Vec<u8> = (0..4096).map(|b| (b as u8).wrapping_mul(31).wrapping_add(i as u8)).collect();
            let len = data.len().min(((1 << 20) - offset) as usize);
            store.write(offset, &data[..len]);
            let mut back = vec![0u8; len];
            store.read(offset, &mut back);
            assert_eq!(back, &data[..len], "offset {offset}");
        }
    }

    #[test]
    fn mem_store_new_memory_reads_zero() {
        let store = MemStore::new(4096).unwrap();
        let mut buf = vec![0xffu8; 4096];
        store.read(0, &mut buf);
        assert!(buf.iter().all(|&b| b == 0));
    }

    #[test]
    fn mem_store_more_than_available_is_out_of_memory() {
        let available = mem_available_bytes();
        if available == 0 {
            eprintln!("skipped: /proc/meminfo unreadable");
            return;
        }
        let too_big = (available + (1 << 30)) & !7;
        assert!(matches!(MemStore::new(too_big), Err(TargetError::OutOfMemory { .. })));
    }

    #[test]
    #[should_panic(expected = "8-byte aligned")]
    fn mem_store_unaligned_offset_panics() {
        let store = MemStore::new(4096).unwrap();
        store.write(4, &[0u8; 8]);
    }

    /// Prints the cost of a 4 KiB copy each way; run with `--release -- --nocapture` for real numbers.
    #[test]
    fn mem_store_4k_copy_speed_is_printed() {
        let store = MemStore::new(64 << 20).unwrap();
        let mut buf = vec![7u8; 4096];
        let count = 100_000u64;
        let start = std::time::Instant::now();
        for i in 0..count {
            store.write((i * 4096) % (64 << 20), &buf);
        }
        let write_ns = start.elapsed().as_nanos() as f64 / count as f64;
        let start = std::time::Instant::now();
        for i in 0..count {
            store.read((i * 4096) % (64 << 20), &mut buf);
        }
        let read_ns = start.elapsed().as_nanos() as f64 / count as f64;
        std::hint::black_box(&buf);
        println!("MemStore 4 KiB copy: write {write_ns:.0} ns, read {read_ns:.0} ns");
    }
}
