//! Line data: one shard's slots of `line_bytes`, in chunks allocated as slots are first used.

use crate::counts::SharedCounts;
use crate::line::NO_SLOT;
use crate::policy;
use std::sync::atomic::Ordering::Relaxed;

/// Line data: slots of `line_bytes` in chunks allocated as slots are first used. A slot's state word
/// (dirty, being written back, generation) lives in `state`; a free slot's word links the free list. Without
/// data ([`CacheConfig::keep_data`] false) every slot's data is one scratch line, chunk 0.
#[derive(Debug)]
pub(crate) struct Slab {
    pub(crate) keep_data: bool,
    pub(crate) line_bytes: usize,
    chunk_shift: u32,
    pub(crate) chunks: Vec<Option<Box<[u8]>>>,
    pub(crate) state: Vec<u32>,
    pub(crate) high_water: u32,
    pub(crate) free: u32,
}

impl Slab {
    pub(crate) fn new(line_bytes: usize, expected_slots: usize, keep_data: bool) -> Slab {
        let per_mib = ((1usize << 20) / line_bytes).max(1);
        let wanted = if keep_data { per_mib.min((expected_slots / 8).max(1)) } else { 1 };
        let chunk_shift = usize::BITS - 1 - wanted.leading_zeros();
        let chunk_lines = 1usize << chunk_shift;
        let chunks = if keep_data { expected_slots.div_ceil(chunk_lines) } else { 1 };
        Slab {
            keep_data,
            line_bytes,
            chunk_shift,
            chunks: Vec::with_capacity(chunks),
            state: Vec::with_capacity(expected_slots),
            high_water: 0,
            free: NO_SLOT,
        }
    }

    fn chunk_bytes(&self) -> usize {
        self.line_bytes << self.chunk_shift
    }

    /// A free slot; allocates its chunk when it is the first slot used in it.
    pub(crate) fn alloc(&mut self, shared: &SharedCounts) -> u32 {
        if self.free != NO_SLOT {
            let s = self.free;
            self.free = self.state[s as usize];
            return s;
        }
        let s = self.high_water;
        assert!(s < policy::MAX_VALUE, "cache shard out of slots");
        self.high_water += 1;
        if s as usize >= self.state.len() {
            self.state.push(0);
        }
        let c = self.locate(s).0;
        while c >= self.chunks.len() {
            self.chunks.push(None);
        }
        if self.chunks[c].is_none() {
            let bytes = self.chunk_bytes();
            self.chunks[c] = Some(vec![0u8; bytes].into_boxed_slice());
            shared.data_bytes.fetch_add(bytes as u64, Relaxed);
        }
        s
    }

    pub(crate) fn free_slot(&mut self, s: u32) {
        self.state[s as usize] = self.free;
        self.free = s;
    }

    /// Slot `s`'s chunk and byte offset in it (chunk 0, offset 0 for every slot without data).
    #[inline]
    fn locate(&self, s: u32) -> (usize, usize) {
        if !self.keep_data {
            return (0, 0);
        }
        ((s >> self.chunk_shift) as usize, (s as usize & ((1 << self.chunk_shift) - 1)) * self.line_bytes)
    }

    #[inline]
    pub(crate) fn data(&self, s: u32) -> &[u8] {
        let (c, off) = self.locate(s);
        &self.chunks[c].as_deref().expect("slot in an allocated chunk")[off..off + self.line_bytes]
    }

    #[inline]
    pub(crate) fn data_mut(&mut self, s: u32) -> &mut [u8] {
        let (c, off) = self.locate(s);
        &mut self.chunks[c].as_deref_mut().expect("slot in an allocated chunk")[off..off + self.line_bytes]
    }

    /// Moves slot `from`'s data and state to slot `to`.
    pub(crate) fn move_slot(&mut self, from: u32, to: u32) {
        if !self.keep_data {
            self.state[to as usize] = self.state[from as usize];
            return;
        }
        let (cf, ct) = ((from >> self.chunk_shift) as usize, (to >> self.chunk_shift) as usize);
        let mask = (1usize << self.chunk_shift) - 1;
        let (of, ot) = ((from as usize & mask) * self.line_bytes, (to as usize & mask) * self.line_bytes);
        let line_bytes = self.line_bytes;
        if cf == ct {
            self.chunks[cf].as_deref_mut().expect("chunk").copy_within(of..of + line_bytes, ot);
        } else {
            let (lo, hi) = self.chunks.split_at_mut(cf.max(ct));
            let (a, b) =
                (lo[cf.min(ct)].as_deref_mut().expect("chunk"), hi[0].as_deref_mut().expect("chunk"));
            if cf < ct {
                b[ot..ot + line_bytes].copy_from_slice(&a[of..of + line_bytes]);
            } else {
                a[ot..ot + line_bytes].copy_from_slice(&b[of..of + line_bytes]);
            }
        }
        self.state[to as usize] = self.state[from as usize];
    }

    /// After compaction: slots `0..used` are in use, the rest free; frees the chunks above them.
    pub(crate) fn truncate(&mut self, used: u32, shared: &SharedCounts) {
        self.high_water = used;
        self.free = NO_SLOT;
        let keep = if self.keep_data { (used as usize).div_ceil(1 << self.chunk_shift) } else { 1 };
        let bytes = self.chunk_bytes() as u64;
        for c in self.chunks.iter_mut().skip(keep) {
            if c.take().is_some() {
                shared.data_bytes.fetch_sub(bytes, Relaxed);
            }
        }
    }

    pub(crate) fn metadata_bytes(&self) -> usize {
        self.state.capacity() * 4 + self.chunks.capacity() * std::mem::size_of::<Option<Box<[u8]>>>()
    }
}
