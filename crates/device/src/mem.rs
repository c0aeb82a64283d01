//! `mem:` targets: an in-process RAM disk shared by all workers.
//!
//! The store is a boxed slice of `AtomicU64` accessed with `Relaxed` loads and stores. That makes concurrent
//! overlapping I/Os sound in Rust's memory model (no data race, no `unsafe`) while behaving like a real disk:
//! the last writer wins per 8-byte word, and a block written by two I/Os at once may be torn. Relaxed atomics
//! compile to plain moves on x86-64 and aarch64, so a copy costs about what `memcpy` does word by word.

use crate::error::TargetError;
use std::sync::atomic::AtomicU64;
#[cfg(not(target_arch = "x86_64"))]
use std::sync::atomic::Ordering;

/// An in-process RAM disk with 512-byte sectors, shared by all workers, on transparent huge pages where the
/// kernel grants them. Concurrent overlapping I/Os behave like a real disk (last writer wins per byte; torn
/// blocks possible), and are sound: memory is `[AtomicU64]`, copied with byte-wise relaxed atomic semantics
/// (one `rep movsb` on x86-64, 8-byte relaxed loads and stores elsewhere), so there is no data race in
/// Rust's model. Offsets and lengths are multiples of 8.
pub struct MemStore {
    words: Box<[AtomicU64]>,
    /// Bytes of it backed by huge pages, as the kernel reported after the store was touched.
    huge_bytes: u64,
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
        MemStore::with_huge_pages(size_bytes, true, None, None)
    }

    /// As [`MemStore::new`], asking the kernel for transparent huge pages (`huge`) or not. Huge pages spare a
    /// random 4 KiB copy the page-table walk that 4 KiB pages cost (a 1 GiB store has 262,144 of them, far
    /// more than the TLB holds); the kernel grants them where `/sys/kernel/mm/transparent_hugepage/enabled` is
    /// `always` or `madvise` and it finds free 2 MiB blocks.
    ///
    /// The memory is committed before the run (every page touched, by as many threads as there are cores, a
    /// store of several GiB in seconds), `progress` told as for a file's fill, and a raised `stop` ends it
    /// between chunks with [`TargetError::Interrupted`] (the memory is freed).
    pub fn with_huge_pages(
        size_bytes: u64,
        huge: bool,
        progress: Option<&crate::FillProgress>,
        stop: Option<&crate::StopFlag>,
    ) -> Result<MemStore, TargetError> {
        if size_bytes == 0 || size_bytes % 8 != 0 {
            return Err(TargetError::InvalidSize {
                path: "mem".into(),
                size_bytes,
                expected: "a positive multiple of 8 bytes",
            });
        }
        let headroom = crate::memory_headroom();
        let (available_bytes, limit) = (headroom.bytes, headroom.limit);
        let out_of_memory = TargetError::OutOfMemory { requested_bytes: size_bytes, available_bytes, limit };
        // Nothing known (0): let the allocation decide.
        if !headroom.fits(size_bytes) {
            return Err(out_of_memory);
        }
        let word_count = usize::try_from(size_bytes / 8).map_err(|_| TargetError::OutOfMemory {
            requested_bytes: size_bytes,
            available_bytes,
            limit,
        })?;
        // Zeroed by the allocator (fresh pages from the kernel, mapped lazily), then committed page by page.
        let words: Box<[AtomicU64]> =
            bytemuck::allocation::try_zeroed_slice_box(word_count).map_err(|_| out_of_memory)?;
        if huge {
            advise_huge_pages(words.as_ptr() as usize, word_count * 8);
        }
        commit(&words, progress, stop)?;
        let huge_bytes = if huge { huge_page_bytes(words.as_ptr() as usize, word_count * 8) } else { 0 };
        Ok(MemStore { words, huge_bytes })
    }

    /// Bytes of the store the kernel backs with huge pages.
    pub fn huge_page_bytes(&self) -> u64 {
        self.huge_bytes
    }

    /// What backs the store, in words: "huge pages (1.00 GiB of 1.00 GiB)" or "4 KiB pages".
    pub fn backing(&self) -> String {
        if self.huge_bytes == 0 {
            return "4 KiB pages".into();
        }
        let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
        format!("huge pages ({:.2} GiB of {:.2} GiB)", gib(self.huge_bytes), gib(self.size_bytes()))
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
    #[allow(unsafe_code)]
    pub fn read(&self, offset: u64, buf: &mut [u8]) {
        let words = self.range(offset, buf.len());
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `words` and `buf` are `buf.len()` bytes each (`range` checked the bounds), valid for the
        // call (borrowed) and disjoint (the store's memory is its own); see `copy_bytes`.
        unsafe {
            copy_bytes(words.as_ptr().cast(), buf.as_mut_ptr(), buf.len())
        };
        #[cfg(not(target_arch = "x86_64"))]
        for (chunk, word) in buf.chunks_exact_mut(8).zip(words) {
            chunk.copy_from_slice(&word.load(Ordering::Relaxed).to_ne_bytes());
        }
    }

    /// Copies `buf` into the store at `offset`.
    ///
    /// # Panics
    /// As [`MemStore::read`].
    #[inline]
    #[allow(unsafe_code)]
    pub fn write(&self, offset: u64, buf: &[u8]) {
        let words = self.range(offset, buf.len());
        #[cfg(target_arch = "x86_64")]
        // SAFETY: as in `read`, the other way round: the destination is the store's words, written through
        // their atomic cells (`AtomicU64::as_ptr`), which is what interior mutability allows.
        unsafe {
            copy_bytes(buf.as_ptr(), words.as_ptr().cast::<u8>().cast_mut(), buf.len())
        };
        #[cfg(not(target_arch = "x86_64"))]
        for (chunk, word) in buf.chunks_exact(8).zip(words) {
            let mut bytes = [0u8; 8];
            bytes.copy_from_slice(chunk);
            word.store(u64::from_ne_bytes(bytes), Ordering::Relaxed);
        }
    }

    /// Discards `len` bytes at `offset` (a trim): they read back as zeros, as a RAM disk's discarded pages do.
    pub fn discard(&self, offset: u64, len: usize) {
        for word in self.range(offset, len) {
            word.store(0, std::sync::atomic::Ordering::Relaxed);
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

/// Copies `len` bytes from `src` to `dst` with one `rep movsb`: at the speed of `memcpy` (the CPU's fast-string
/// microcode moves whole cache lines), where a loop of 8-byte atomic loads runs at about half of it.
///
/// Why this is sound while other threads copy into or out of the same store: x86-64 loads and stores are
/// atomic at byte granularity with at least relaxed ordering, so `rep movsb` does exactly what a loop of
/// byte-wise relaxed atomic loads and stores would do (the "byte-wise atomic memcpy" of C++ proposal P1478),
/// which is defined behaviour in Rust's model; an `asm!` block is allowed whatever Rust code it is equivalent
/// to. A torn result under overlapping writes is what a real disk gives too.
///
/// # Safety
/// `src` must be valid for reads and `dst` for writes of `len` bytes, and the two ranges must not overlap.
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
#[inline]
unsafe fn copy_bytes(src: *const u8, dst: *mut u8, len: usize) {
    // SAFETY: the caller's contract; `rep movsb` reads [src, src + len) and writes [dst, dst + len) (the
    // direction flag is clear per the ABI), and touches nothing else.
    unsafe {
        std::arch::asm!(
            "rep movsb",
            inout("rcx") len => _,
            inout("rsi") src => _,
            inout("rdi") dst => _,
            options(nostack, preserves_flags)
        );
    }
}

/// How much of a store one thread commits at a time, between progress reports and stop checks.
const COMMIT_CHUNK_BYTES: usize = 64 << 20;

/// Commits every page of `words` by writing one word in each 4 KiB (the kernel backs it, zeroed, on that
/// first write), chunk by chunk on as many threads as there are cores; reports `(done, total)` bytes from the
/// calling thread and stops between chunks when `stop` is raised.
fn commit(
    words: &[AtomicU64],
    progress: Option<&crate::FillProgress>,
    stop: Option<&crate::StopFlag>,
) -> Result<(), TargetError> {
    use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
    let total = words.len() * 8;
    let chunk_words = COMMIT_CHUNK_BYTES / 8;
    let chunks = words.len().div_ceil(chunk_words);
    let (next, done) = (AtomicUsize::new(0), AtomicUsize::new(0));
    let stopped = || stop.is_some_and(crate::StopFlag::raised);
    let work = |report: bool| {
        while !stopped() {
            let c = next.fetch_add(1, Relaxed);
            if c >= chunks {
                break;
            }
            let part = &words[c * chunk_words..((c + 1) * chunk_words).min(words.len())];
            part.iter().step_by(4096 / 8).for_each(|w| w.store(0, Relaxed));
            let now = done.fetch_add(part.len() * 8, Relaxed) + part.len() * 8;
            if let Some(p) = progress.filter(|_| report) {
                (p.0)(now as u64, total as u64);
            }
        }
    };
    if let Some(p) = progress {
        (p.0)(0, total as u64);
    }
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(chunks.max(1));
    std::thread::scope(|s| {
        for _ in 1..threads {
            s.spawn(|| work(false));
        }
        work(true);
    });
    if stopped() {
        return Err(TargetError::Interrupted { path: "mem".into() });
    }
    if let Some(p) = progress {
        (p.0)(total as u64, total as u64);
    }
    Ok(())
}

/// Asks for transparent huge pages over the 2 MiB-aligned part of `[addr, addr + len)` (memory this process
/// allocated and has not touched yet). Advice only: where the kernel refuses, the store keeps 4 KiB pages.
#[allow(unsafe_code)]
fn advise_huge_pages(addr: usize, len: usize) {
    const HUGE: usize = 2 << 20;
    let start = addr.next_multiple_of(HUGE);
    let end = (addr + len) / HUGE * HUGE;
    if end <= start {
        return;
    }
    // SAFETY: [start, end) lies inside an allocation this process owns (the store's reserved words) and is
    // page-aligned; MADV_HUGEPAGE changes how the kernel backs it, never its contents or its validity, and a
    // failure is ignored.
    let _ = unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE) };
}

/// The AnonHugePages of the mappings overlapping `[addr, addr + len)`, from /proc/self/smaps (0 when
/// unreadable). The advice splits the store's mapping in up to three, so all of them are summed.
fn huge_page_bytes(addr: usize, len: usize) -> u64 {
    let Ok(smaps) = std::fs::read_to_string("/proc/self/smaps") else { return 0 };
    let (mut inside, mut total) = (false, 0);
    for line in smaps.lines() {
        let range = line.split_once(' ').and_then(|(r, _)| r.split_once('-'));
        if let Some((a, b)) = range {
            if let (Ok(a), Ok(b)) = (usize::from_str_radix(a, 16), usize::from_str_radix(b, 16)) {
                inside = a < addr + len && addr < b;
                continue;
            }
        }
        if let Some(kb) = line.strip_prefix("AnonHugePages:").filter(|_| inside) {
            total += kb.trim().trim_end_matches("kB").trim().parse::<u64>().unwrap_or(0) * 1024;
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sys::mem_available_bytes;

    /// Issue 25, item 9: a RAM disk is committed with its progress told (start, chunks, end) and can be stopped.
    #[test]
    fn a_store_is_committed_with_progress_and_stops_on_request() {
        use std::sync::{Arc, Mutex};
        let calls: Arc<Mutex<Vec<(u64, u64)>>> = Arc::default();
        let sink = calls.clone();
        let progress = crate::FillProgress(Arc::new(move |d, t| sink.lock().unwrap().push((d, t))));
        let store = MemStore::with_huge_pages(256 << 20, false, Some(&progress), None).unwrap();
        assert_eq!(store.size_bytes(), 256 << 20);
        let calls = calls.lock().unwrap().clone();
        assert_eq!(calls.first(), Some(&(0, 256 << 20)));
        assert_eq!(calls.last(), Some(&(256 << 20, 256 << 20)));
        let stop = crate::StopFlag::default();
        stop.0.store(true, std::sync::atomic::Ordering::Relaxed);
        let e = MemStore::with_huge_pages(256 << 20, false, None, Some(&stop)).unwrap_err();
        assert!(matches!(e, TargetError::Interrupted { .. }), "{e}");
    }

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

    /// Where the kernel offers transparent huge pages (`always` or `madvise`), a RAM disk gets them: a random
    /// 4 KiB copy then costs no page-table walk.
    #[test]
    fn mem_store_asks_for_huge_pages() {
        let thp = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled").unwrap_or_default();
        if !(thp.contains("[always]") || thp.contains("[madvise]")) {
            iolab_testkit::skip(format_args!("transparent huge pages are off here ({})", thp.trim()));
            return;
        }
        let store = MemStore::new(64 << 20).unwrap();
        assert!(store.huge_page_bytes() > 0, "{}", store.backing());
        assert_eq!(MemStore::with_huge_pages(64 << 20, false, None, None).unwrap().huge_page_bytes(), 0);
    }

    /// Two threads copying into and out of the same bytes: every read returns, byte by byte, what one of the
    /// writers wrote (never anything else).
    #[test]
    fn mem_store_overlapping_copies_read_only_written_bytes() {
        let store = std::sync::Arc::new(MemStore::new(1 << 16).unwrap());
        let writers: Vec<_> = [0x11u8, 0x22]
            .into_iter()
            .map(|b| {
                let s = store.clone();
                std::thread::spawn(move || {
                    for _ in 0..2000 {
                        s.write(4096, &[b; 8192]);
                    }
                })
            })
            .collect();
        let mut buf = vec![0u8; 8192];
        for _ in 0..2000 {
            store.read(4096, &mut buf);
            assert!(buf.iter().all(|&x| x == 0 || x == 0x11 || x == 0x22));
        }
        for w in writers {
            w.join().unwrap();
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
            iolab_testkit::skip(format_args!("/proc/meminfo unreadable"));
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
