//! I/O buffers: one slab per worker, aligned to 4 KiB (direct I/O needs sector alignment; 4 KiB covers every
//! logical block size in use), allocated and filled once before the run, never reallocated. Each slot has a
//! read buffer and a write buffer, so data read from the target never leaks into what is written next.
//!
//! Alignment without `unsafe`: the slab is a `Vec` of 4 KiB-aligned pages, viewed as bytes through bytemuck.

use iolab_spec::DataPattern;

/// One 4 KiB page with 4 KiB alignment.
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C, align(4096))]
pub struct AlignedPage([u8; 4096]);

/// `count` buffers of `size` bytes each (size rounded up to whole pages).
pub struct Buffers {
    pages: Vec<AlignedPage>,
    pages_per_buffer: usize,
    count: u32,
}

impl Buffers {
    /// Allocates and fills the buffers: writes get `pattern`, seeded by `seed`.
    pub fn new(count: u32, size: u64, pattern: DataPattern, seed: u64) -> Buffers {
        let pages_per_buffer = size.div_ceil(4096).max(1) as usize;
        let mut b = Buffers {
            pages: vec![AlignedPage([0; 4096]); pages_per_buffer * count as usize],
            pages_per_buffer,
            count,
        };
        let mut x = seed | 1;
        let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut b.pages);
        for chunk in bytes.chunks_exact_mut(4096) {
            x = fill_random(&mut chunk[..random_len(pattern)], x);
        }
        b
    }

    /// Number of buffers.
    pub fn count(&self) -> u32 {
        self.count
    }

    /// Size of each buffer in bytes.
    pub fn buffer_size(&self) -> usize {
        self.pages_per_buffer * 4096
    }

    /// Buffer `i`.
    #[inline]
    pub fn get(&self, i: u32) -> &[u8] {
        let p = &self.pages[i as usize * self.pages_per_buffer..(i as usize + 1) * self.pages_per_buffer];
        bytemuck::cast_slice(p)
    }

    /// Buffer `i`, mutable.
    #[inline]
    pub fn get_mut(&mut self, i: u32) -> &mut [u8] {
        let p = &mut self.pages[i as usize * self.pages_per_buffer..(i as usize + 1) * self.pages_per_buffer];
        bytemuck::cast_slice_mut(p)
    }

    /// Start address of buffer `i` (for registering with the kernel).
    pub fn as_mut_ptr(&mut self, i: u32) -> *mut u8 {
        self.get_mut(i).as_mut_ptr()
    }
}

/// The random bytes at the start of each 4 KiB of `pattern`'s data; the rest of the 4 KiB is zeros.
#[inline]
pub(crate) fn random_len(pattern: DataPattern) -> usize {
    match pattern {
        DataPattern::Zero => 0,
        DataPattern::Random => 4096,
        DataPattern::Compressible { pct } => 4096 - (4096 * pct.min(100) as usize) / 100,
    }
}

/// Fills `bytes` (whole 8-byte words) from the xorshift64* state `x`; returns the state after.
#[inline]
pub(crate) fn fill_random(bytes: &mut [u8], mut x: u64) -> u64 {
    for word in bytes.chunks_exact_mut(8) {
        // xorshift64*: fast, incompressible enough for storage that compresses or deduplicates.
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        word.copy_from_slice(&x.wrapping_mul(0x2545_F491_4F6C_DD1D).to_ne_bytes());
    }
    x
}

/// Makes each write's content unique without rewriting the buffer: stamps the offset and a sequence number into
/// the first 16 bytes of every 4 KiB of the write (fio's scramble_buffers does the same), so storage that
/// deduplicates cannot fold repeated writes. Zero-filled data is left alone.
#[inline]
pub fn stamp_write(buf: &mut [u8], len: usize, offset: u64, seq: u64, pattern: DataPattern) {
    if pattern == DataPattern::Zero {
        return;
    }
    let mut at = 0;
    while at + 16 <= len {
        buf[at..at + 8].copy_from_slice(&(offset + at as u64).to_ne_bytes());
        buf[at + 8..at + 16].copy_from_slice(&seq.to_ne_bytes());
        at += 4096;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_are_page_aligned_and_sized() {
        let mut b = Buffers::new(3, 5000, DataPattern::Random, 1);
        assert_eq!(b.buffer_size(), 8192);
        for i in 0..3 {
            assert_eq!(b.as_mut_ptr(i) as usize % 4096, 0);
        }
    }

    #[test]
    fn compressible_pattern_has_zero_tail() {
        let b = Buffers::new(1, 4096, DataPattern::Compressible { pct: 50 }, 1);
        assert!(b.get(0)[2048..].iter().all(|&x| x == 0));
        assert!(b.get(0)[..2048].iter().filter(|&&x| x == 0).count() < 64);
    }

    #[test]
    fn stamp_changes_every_4k_of_a_write() {
        let mut b = Buffers::new(1, 8192, DataPattern::Random, 1);
        let before = b.get(0).to_vec();
        stamp_write(b.get_mut(0), 8192, 4096, 7, DataPattern::Random);
        assert_ne!(&before[..16], &b.get(0)[..16]);
        assert_ne!(&before[4096..4112], &b.get(0)[4096..4112]);
        assert_eq!(&before[16..4096], &b.get(0)[16..4096]);
    }
}
