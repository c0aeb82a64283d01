//! iolab-cache: a block cache in front of any target, shared by all workers of a run.
//!
//! The cache is engine- and clock-agnostic: it decides and copies, the engine (iolab-engine `CacheEngine`)
//! issues the I/Os. A read either hits (every line of it is cached: the data is copied into the caller's
//! buffer now) or is forwarded to the target with a [`Ticket`]; a write is absorbed (write-back) or forwarded
//! with a ticket. When a forwarded op completes, the caller hands the ticket back ([`Cache::finish`]), and the
//! cache fills lines from a read, updates or invalidates lines after a write, and overlays cached lines that
//! are newer than the target onto the read's buffer. Dirty lines go back to the target through
//! [`Cache::next_flush`] / [`Cache::finish_flush`].
//!
//! Coherence rule: a read issued after a write was acknowledged never returns older data, whatever the
//! interleaving of concurrent ops: a fill whose lines were written while it was in flight is not inserted, a
//! dirty line stays readable until its write-back is acknowledged, and a read that reaches the target gets
//! newer cached lines copied over what the target returned.
//!
//! How each part of that holds (docs/CACHE.md has the full rules): every forwarded op notes, per line, a
//! write count of the line's bucket at issue; writes and write-backs bump it at start and end, and forwarded
//! writes are also counted as in flight. A fill or write-allocate happens only if the count did not move and
//! no forwarded write to the line is in flight. A forwarded read keeps a copy of the lines that were dirty
//! when it was issued, for the case where they were written back and evicted before it completed. A clean
//! line that raced with another write is dropped, so the target decides. In write-back mode a forwarded write
//! puts its bytes into the cached lines at issue (dirty), so every write-back from then on carries them.
//!
//! Policies ([`policy`]): LRU, ARC and S3-FIFO (1-bit). The index is sharded by line, one lock per shard
//! (one shard below 1024 lines, so the policy is exact). The policy's index is the only map from line to
//! data: each resident key carries its data slot. Data lives in per-shard chunks allocated as lines are first
//! filled; nothing is allocated per op on the hit path or the steady-state miss path.
//!
//! Obligations of the caller: finish every ticket exactly once (with `ok = false` on error) and every flush
//! exactly once; until then the lines involved stay marked in flight (no fills there) or being written back.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod index;
pub mod policy;
pub mod seq;

pub use iolab_spec::{CacheMode, CachePolicy};
pub use seq::SeqDetector;

use index::{hash64, Index};
use policy::Policy;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::{Mutex, MutexGuard, OnceLock};

/// A resolved cache configuration (sizes in bytes).
#[derive(Clone, Debug, PartialEq)]
pub struct CacheConfig {
    /// Capacity of the data store.
    pub capacity_bytes: u64,
    /// Bytes per line (a power of two, at least 512).
    pub line_bytes: u32,
    /// What happens to writes.
    pub mode: CacheMode,
    /// Which line to evict.
    pub policy: CachePolicy,
    /// A line is admitted on its n-th miss (1 = at once).
    pub admit_after: u32,
    /// Percent of lines that may be dirty before [`Cache::next_flush`] starts returning lines (write-back).
    pub dirty_max_pct: f64,
    /// Number of targets whose lines share the cache (line keys are `(target, line)`).
    pub targets: u16,
    /// Keep each line's data (false: metadata only, for emulated targets whose data nobody reads back: every
    /// line then shares one scratch line per shard, so hits and fills cost their copies but no memory).
    pub keep_data: bool,
}

/// Invalid configurations.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum CacheError {
    /// The configuration cannot work.
    #[error("{0}")]
    Config(String),
}

/// A forwarded op's claim, handed back to [`Cache::finish`] when the target completes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ticket {
    /// Internal index of the in-flight record.
    pub id: u32,
}

/// What to do with a read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadOutcome {
    /// Every line was cached; the data is in the buffer. Complete the op now (or after the cache device's time).
    Hit,
    /// Read the target into the same buffer, then call [`Cache::finish`].
    Forward(Ticket),
}

/// What to do with a write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteOutcome {
    /// Write-back: the data is in the cache (dirty). Complete the op now.
    Absorbed,
    /// Write the data to the target, then call [`Cache::finish`].
    Forward(Ticket),
}

/// A dirty line to write back: write `len` bytes of the flush buffer at `offset` of `target`, then call
/// [`Cache::finish_flush`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Flush {
    /// The line's dirty generation when the write-back started (a write to the line meanwhile makes it
    /// stale, and [`Cache::finish_flush`] then leaves the line dirty).
    pub id: u32,
    /// Target index.
    pub target: u16,
    /// Byte offset.
    pub offset: u64,
    /// Bytes (one line).
    pub len: u32,
}

/// Counters of one run's cache, as the result reports them.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CacheStats {
    /// Line lookups of reads that found the line.
    pub hits: u64,
    /// Line lookups of reads that did not.
    pub misses: u64,
    /// Read ops served entirely from the cache.
    pub reads_from_cache: u64,
    /// Read ops that went to the target (misses, partial hits and bypassed reads).
    pub reads_from_target: u64,
    /// Write ops absorbed by the cache (write-back).
    pub writes_absorbed: u64,
    /// Write ops sent to the target.
    pub writes_to_target: u64,
    /// Lines inserted.
    pub fills: u64,
    /// Fills not inserted because a write to the line raced with them, or admission said no.
    pub fills_skipped: u64,
    /// Dirty lines written back to the target.
    pub writebacks: u64,
    /// Lines evicted.
    pub evictions: u64,
    /// Ops that bypassed the cache (sequential streams past the cutoff).
    pub bypassed: u64,
    /// Lines invalidated by writes (read-only mode, or partial writes that could not update a line).
    pub invalidations: u64,
    /// Dirty lines when the run ended, before the exit flush.
    pub dirty_at_end: u64,
    /// Capacity now, in bytes (after any shrink).
    pub capacity_bytes: u64,
    /// Lines cached now.
    pub lines: u64,
    /// Index and policy memory per line of capacity, in bytes, measured from the structures' sizes.
    pub metadata_bytes_per_line: f64,
    /// RAM the cache holds (data chunks and metadata), as [`Cache::memory_bytes`].
    #[serde(default)]
    pub memory_bytes: u64,
    /// Flushes on demand asked for ([`Cache::request_flush`], `kill -USR1`).
    #[serde(default)]
    pub flush_requests: u64,
    /// Reads issued to a real cache device (`--cache-dev PATH`): hits and write-backs' reads of their line.
    #[serde(default)]
    pub device_reads: u64,
    /// Writes issued to a real cache device: absorbed writes, fills and write-through updates.
    #[serde(default)]
    pub device_writes: u64,
    /// Fill or update writes to a real cache device not issued because all of the worker's fill buffers were
    /// busy (the line is in the cache's RAM anyway; the device just did not carry that write).
    #[serde(default)]
    pub device_writes_dropped: u64,
}

/// Counts of the I/O a real cache device carried (kept by the engine through [`Cache::note_device_io`]).
#[derive(Debug, Default)]
struct DeviceCounters {
    reads: AtomicU64,
    writes: AtomicU64,
    dropped: AtomicU64,
}

/// One I/O to a real cache device, for the counters ([`Cache::note_device_io`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceIo {
    /// A read was issued.
    Read,
    /// A write was issued.
    Write,
    /// A fill or update write was dropped for lack of a free buffer.
    WriteDropped,
}

/// Slot state bits: dirty, being written back, and a 30-bit dirty generation.
const DIRTY: u32 = 1 << 31;
const FLUSHING: u32 = 1 << 30;
const GEN: u32 = FLUSHING - 1;
/// End of a free list.
const NONE: u32 = u32::MAX;
/// A line key is `target << 48 | line`.
const LINE_BITS: u32 = 48;
const LINE_MASK: u64 = (1 << LINE_BITS) - 1;

#[inline]
fn key_of(target: u16, line: u64) -> u64 {
    ((target as u64) << LINE_BITS) | (line & LINE_MASK)
}

#[inline]
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Counters kept per shard (under its lock) and summed by [`Cache::stats`].
#[derive(Clone, Debug, Default)]
struct Counters {
    hits: u64,
    misses: u64,
    reads_from_cache: u64,
    reads_from_target: u64,
    writes_absorbed: u64,
    writes_to_target: u64,
    fills: u64,
    fills_skipped: u64,
    writebacks: u64,
    evictions: u64,
    bypassed: u64,
    invalidations: u64,
}

/// Counts shared by the shards, changed under a shard's lock, read without one.
#[derive(Debug, Default)]
struct Globals {
    /// Dirty lines, resident or awaiting write-back, including those being written back.
    dirty: AtomicU64,
    /// Resident dirty lines not being written back.
    res_dirty_idle: AtomicU64,
    /// Evicted dirty lines queued for write-back.
    wb_queued: AtomicU64,
    /// Bytes of data chunks allocated.
    data_bytes: AtomicU64,
    /// Dirty lines (as `dirty`) by [`dirty_bucket`] of their target: what a flush of a target waits for.
    dirty_of: [AtomicU64; DIRTY_BUCKETS],
}

/// Buckets of [`Globals::dirty_of`]: targets share one when their ids are equal modulo this, and a flush of one
/// then also waits for the other's lines (never less than it must).
const DIRTY_BUCKETS: usize = 32;

/// The [`Globals::dirty_of`] bucket of the line `key`.
#[inline]
fn dirty_bucket(key: u64) -> usize {
    ((key >> LINE_BITS) as usize) % DIRTY_BUCKETS
}

impl Globals {
    /// One more dirty line, `key`.
    #[inline]
    fn dirtied(&self, key: u64) {
        self.dirty.fetch_add(1, Relaxed);
        self.dirty_of[dirty_bucket(key)].fetch_add(1, Relaxed);
    }

    /// One dirty line fewer, `key` (now clean, or dropped after its write-back).
    #[inline]
    fn cleaned(&self, key: u64) {
        self.dirty.fetch_sub(1, Relaxed);
        self.dirty_of[dirty_bucket(key)].fetch_sub(1, Relaxed);
    }
}

/// Line data: slots of `line_bytes` in chunks allocated as slots are first used. A slot's state word
/// (dirty, being written back, generation) lives in `state`; a free slot's word links the free list. Without
/// data ([`CacheConfig::keep_data`] false) every slot's data is one scratch line, chunk 0.
#[derive(Debug)]
struct Slab {
    keep_data: bool,
    line_bytes: usize,
    chunk_shift: u32,
    chunks: Vec<Option<Box<[u8]>>>,
    state: Vec<u32>,
    hwm: u32,
    free: u32,
}

impl Slab {
    fn new(line_bytes: usize, expected_slots: usize, keep_data: bool) -> Slab {
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
            hwm: 0,
            free: NONE,
        }
    }

    fn chunk_bytes(&self) -> usize {
        self.line_bytes << self.chunk_shift
    }

    /// A free slot; allocates its chunk when it is the first slot used in it.
    fn alloc(&mut self, g: &Globals) -> u32 {
        if self.free != NONE {
            let s = self.free;
            self.free = self.state[s as usize];
            return s;
        }
        let s = self.hwm;
        assert!(s < policy::MAX_VALUE, "cache shard out of slots");
        self.hwm += 1;
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
            g.data_bytes.fetch_add(bytes as u64, Relaxed);
        }
        s
    }

    fn free_slot(&mut self, s: u32) {
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
    fn data(&self, s: u32) -> &[u8] {
        let (c, off) = self.locate(s);
        &self.chunks[c].as_deref().expect("slot in an allocated chunk")[off..off + self.line_bytes]
    }

    #[inline]
    fn data_mut(&mut self, s: u32) -> &mut [u8] {
        let (c, off) = self.locate(s);
        &mut self.chunks[c].as_deref_mut().expect("slot in an allocated chunk")[off..off + self.line_bytes]
    }

    /// Moves slot `from`'s data and state to slot `to`.
    fn move_slot(&mut self, from: u32, to: u32) {
        if !self.keep_data {
            self.state[to as usize] = self.state[from as usize];
            return;
        }
        let (cf, ct) = ((from >> self.chunk_shift) as usize, (to >> self.chunk_shift) as usize);
        let mask = (1usize << self.chunk_shift) - 1;
        let (of, ot) = ((from as usize & mask) * self.line_bytes, (to as usize & mask) * self.line_bytes);
        let lb = self.line_bytes;
        if cf == ct {
            self.chunks[cf].as_deref_mut().expect("chunk").copy_within(of..of + lb, ot);
        } else {
            let (lo, hi) = self.chunks.split_at_mut(cf.max(ct));
            let (a, b) =
                (lo[cf.min(ct)].as_deref_mut().expect("chunk"), hi[0].as_deref_mut().expect("chunk"));
            if cf < ct {
                b[ot..ot + lb].copy_from_slice(&a[of..of + lb]);
            } else {
                a[ot..ot + lb].copy_from_slice(&b[of..of + lb]);
            }
        }
        self.state[to as usize] = self.state[from as usize];
    }

    /// After compaction: slots `0..used` are in use, the rest free; frees the chunks above them.
    fn truncate(&mut self, used: u32, g: &Globals) {
        self.hwm = used;
        self.free = NONE;
        let keep = if self.keep_data { (used as usize).div_ceil(1 << self.chunk_shift) } else { 1 };
        let bytes = self.chunk_bytes() as u64;
        for c in self.chunks.iter_mut().skip(keep) {
            if c.take().is_some() {
                g.data_bytes.fetch_sub(bytes, Relaxed);
            }
        }
    }

    fn metadata_bytes(&self) -> usize {
        self.state.capacity() * 4 + self.chunks.capacity() * std::mem::size_of::<Option<Box<[u8]>>>()
    }
}

/// An evicted dirty line awaiting write-back (its data stays in `slot` and stays readable).
#[derive(Clone, Copy, Debug)]
struct WbEntry {
    key: u64,
    slot: u32,
    queued: bool,
}

/// Dirty lines evicted by the policy, until their write-back completes: a bounded reserve (the soft limit
/// `reserve`; a shrink may exceed it), an index by key, and a FIFO of entries waiting to be handed out.
#[derive(Debug)]
struct Wb {
    entries: Vec<WbEntry>,
    free: Vec<u32>,
    index: Index,
    queue: VecDeque<u32>,
    live: usize,
    reserve: usize,
}

impl Wb {
    fn new(reserve: usize) -> Wb {
        Wb {
            entries: Vec::with_capacity(reserve),
            free: Vec::with_capacity(reserve),
            index: Index::new(reserve.max(4)),
            queue: VecDeque::with_capacity(reserve),
            live: 0,
            reserve,
        }
    }

    #[inline]
    fn find(&self, key: u64) -> Option<u32> {
        if self.live == 0 {
            return None;
        }
        let entries = &self.entries;
        self.index.find(key, hash64(key), |e| entries[e as usize].key)
    }

    fn add(&mut self, key: u64, slot: u32) -> u32 {
        if self.live + 1 > self.index.max_ids() {
            let entries = &self.entries;
            let live = entries
                .iter()
                .enumerate()
                .filter(|(_, e)| e.slot != NONE)
                .map(|(i, e)| (i as u32, hash64(e.key)))
                .collect::<Vec<_>>();
            self.index.rebuild((self.live + 1) * 2, live.into_iter());
        }
        let e = match self.free.pop() {
            Some(e) => e,
            None => {
                self.entries.push(WbEntry { key: 0, slot: NONE, queued: false });
                (self.entries.len() - 1) as u32
            }
        };
        self.entries[e as usize] = WbEntry { key, slot, queued: false };
        self.index.insert(hash64(key), e);
        self.live += 1;
        e
    }

    /// Drops entry `e` (and its place in the queue), returning its slot.
    fn remove(&mut self, e: u32) -> u32 {
        let ent = self.entries[e as usize];
        let entries = &self.entries;
        self.index.remove(hash64(ent.key), e, |i| hash64(entries[i as usize].key));
        if ent.queued {
            self.queue.retain(|&q| q != e);
        }
        self.entries[e as usize] = WbEntry { key: 0, slot: NONE, queued: false };
        self.free.push(e);
        self.live -= 1;
        ent.slot
    }

    fn enqueue(&mut self, e: u32) {
        debug_assert!(!self.entries[e as usize].queued);
        self.entries[e as usize].queued = true;
        self.queue.push_back(e);
    }

    fn metadata_bytes(&self) -> usize {
        self.entries.capacity() * std::mem::size_of::<WbEntry>()
            + self.free.capacity() * 4
            + self.index.bytes()
            + self.queue.capacity() * 4
    }
}

/// Where a cached line is: resident in the policy, or evicted and awaiting write-back (wb entry).
#[derive(Clone, Copy, Debug)]
enum Place {
    Resident,
    Wb(u32),
}

#[derive(Clone, Copy, Debug)]
struct LineRef {
    slot: u32,
    place: Place,
}

/// One shard of the index: its policy, data, write-back list, and write counters for poisoning fills.
struct Shard {
    policy: Box<dyn Policy>,
    slab: Slab,
    wb: Wb,
    /// Writes seen per bucket of lines (a fill or forwarded write whose lines' counts moved during its flight
    /// raced with another write).
    writes: Vec<u32>,
    /// Forwarded writes in flight per bucket (no fill or write-allocate while one is: the target may not
    /// have its data yet).
    inflight: Vec<u32>,
    bucket_mask: usize,
    /// Misses per line (hashed), for admission after n misses; empty when every line is admitted at once.
    admits: Vec<u8>,
    admit_mask: usize,
    admit_after: u32,
    /// Resident dirty lines not being written back.
    dirty_idle: usize,
    /// Cursor of the dirty-line scan.
    scan: usize,
    write_back: bool,
    c: Counters,
}

/// The eviction of `key` (data `slot`): a dirty line moves to the write-back list, a clean one is dropped.
fn evicted(
    slab: &mut Slab,
    wb: &mut Wb,
    c: &mut Counters,
    dirty_idle: &mut usize,
    g: &Globals,
    key: u64,
    slot: u32,
) {
    c.evictions += 1;
    let st = slab.state[slot as usize];
    if st & DIRTY != 0 {
        let e = wb.add(key, slot);
        if st & FLUSHING == 0 {
            *dirty_idle -= 1;
            g.res_dirty_idle.fetch_sub(1, Relaxed);
            wb.enqueue(e);
            g.wb_queued.fetch_add(1, Relaxed);
        }
    } else {
        slab.free_slot(slot);
    }
}

impl Shard {
    #[inline]
    fn find(&self, key: u64) -> Option<LineRef> {
        if let Some(slot) = self.policy.peek(key) {
            return Some(LineRef { slot, place: Place::Resident });
        }
        self.wb.find(key).map(|e| LineRef { slot: self.wb.entries[e as usize].slot, place: Place::Wb(e) })
    }

    #[inline]
    fn access(&mut self, key: u64) -> Option<LineRef> {
        if let Some(slot) = self.policy.access_value(key) {
            return Some(LineRef { slot, place: Place::Resident });
        }
        self.wb.find(key).map(|e| LineRef { slot: self.wb.entries[e as usize].slot, place: Place::Wb(e) })
    }

    #[inline]
    fn bucket(&self, h: u64) -> usize {
        (h >> 40) as usize & self.bucket_mask
    }

    #[inline]
    fn admit_slot(&self, h: u64) -> usize {
        (h >> 20) as usize & self.admit_mask
    }

    fn missed(&mut self, h: u64) {
        if !self.admits.is_empty() {
            let i = self.admit_slot(h);
            self.admits[i] = self.admits[i].saturating_add(1);
        }
    }

    fn admitted(&self, h: u64) -> bool {
        self.admits.is_empty() || self.admits[self.admit_slot(h)] as u32 >= self.admit_after
    }

    fn reset_admit(&mut self, h: u64) {
        if !self.admits.is_empty() {
            let i = self.admit_slot(h);
            self.admits[i] = 0;
        }
    }

    /// Whether a new line may be inserted now: the policy has capacity, and in write-back mode a dirty
    /// victim would find room in the write-back reserve (a conservative check: the victim may be clean).
    #[inline]
    fn room(&self) -> bool {
        let cap = self.policy.capacity();
        cap > 0 && (!self.write_back || self.policy.len() < cap || self.wb.live < self.wb.reserve)
    }

    /// Inserts `key` with `data` (one line) and slot state `state` (clean, or dirty for an absorbed write).
    fn insert(&mut self, key: u64, data: &[u8], state: u32, g: &Globals) -> bool {
        if !self.room() {
            return false;
        }
        let slot = self.slab.alloc(g);
        self.slab.data_mut(slot).copy_from_slice(data);
        self.slab.state[slot as usize] = state;
        if state & DIRTY != 0 {
            g.dirtied(key);
            self.dirty_idle += 1;
            g.res_dirty_idle.fetch_add(1, Relaxed);
        }
        let Shard { policy, slab, wb, c, dirty_idle, .. } = self;
        policy.insert_value(key, slot, &mut |k, v| evicted(slab, wb, c, dirty_idle, g, k, v));
        true
    }

    /// Marks a line dirty (or re-dirtied: a new generation, so a write-back in flight does not clean it).
    fn make_dirty(&mut self, key: u64, l: LineRef, g: &Globals) {
        let st = self.slab.state[l.slot as usize];
        if st & DIRTY == 0 {
            g.dirtied(key);
            debug_assert!(matches!(l.place, Place::Resident) && st & FLUSHING == 0);
            self.dirty_idle += 1;
            g.res_dirty_idle.fetch_add(1, Relaxed);
        }
        self.slab.state[l.slot as usize] = DIRTY | (st & FLUSHING) | (st.wrapping_add(1) & GEN);
    }

    /// A dirty line not being written back that the target now holds entirely: clean (an evicted one is
    /// dropped).
    fn make_clean(&mut self, key: u64, l: LineRef, g: &Globals) {
        let st = self.slab.state[l.slot as usize];
        debug_assert!(st & DIRTY != 0 && st & FLUSHING == 0);
        g.cleaned(key);
        match l.place {
            Place::Resident => {
                self.dirty_idle -= 1;
                g.res_dirty_idle.fetch_sub(1, Relaxed);
                self.slab.state[l.slot as usize] = st & GEN;
            }
            Place::Wb(e) => {
                if self.wb.entries[e as usize].queued {
                    g.wb_queued.fetch_sub(1, Relaxed);
                }
                let slot = self.wb.remove(e);
                self.slab.free_slot(slot);
            }
        }
    }

    /// Drops a clean line.
    fn invalidate(&mut self, key: u64, l: LineRef) {
        debug_assert!(self.slab.state[l.slot as usize] & DIRTY == 0);
        if let Place::Resident = l.place {
            self.policy.remove_value(key);
            self.slab.free_slot(l.slot);
            self.c.invalidations += 1;
        }
    }

    /// Hands out the write-back of an evicted dirty line of an accepted target.
    fn pop_wb(
        &mut self,
        accept: &dyn Fn(u16) -> bool,
        buf: &mut [u8],
        g: &Globals,
        shift: u32,
    ) -> Option<Flush> {
        for _ in 0..self.wb.queue.len() {
            let e = self.wb.queue.pop_front()?;
            let ent = self.wb.entries[e as usize];
            let target = (ent.key >> LINE_BITS) as u16;
            if !accept(target) {
                self.wb.queue.push_back(e);
                continue;
            }
            self.wb.entries[e as usize].queued = false;
            g.wb_queued.fetch_sub(1, Relaxed);
            return Some(self.start_flush(ent.key, ent.slot, buf, shift));
        }
        None
    }

    /// Hands out the write-back of a resident dirty line of an accepted target.
    fn scan_dirty(
        &mut self,
        accept: &dyn Fn(u16) -> bool,
        buf: &mut [u8],
        g: &Globals,
        shift: u32,
    ) -> Option<Flush> {
        let n = self.policy.node_slots();
        for step in 0..n {
            let i = (self.scan + step) % n;
            let Some((key, slot)) = self.policy.node(i) else { continue };
            let st = self.slab.state[slot as usize];
            if st & (DIRTY | FLUSHING) == DIRTY && accept((key >> LINE_BITS) as u16) {
                self.scan = i + 1;
                self.dirty_idle -= 1;
                g.res_dirty_idle.fetch_sub(1, Relaxed);
                return Some(self.start_flush(key, slot, buf, shift));
            }
        }
        None
    }

    /// A write-back counts as a write to the line's bucket when it starts and when it ends: a forwarded
    /// write whose flight overlapped it cannot tell whether the target kept its bytes or the write-back's.
    fn start_flush(&mut self, key: u64, slot: u32, buf: &mut [u8], shift: u32) -> Flush {
        let b = self.bucket(hash64(key));
        self.writes[b] = self.writes[b].wrapping_add(1);
        let st = self.slab.state[slot as usize];
        debug_assert!(st & (DIRTY | FLUSHING) == DIRTY);
        self.slab.state[slot as usize] = st | FLUSHING;
        let lb = self.slab.line_bytes;
        buf[..lb].copy_from_slice(self.slab.data(slot));
        Flush {
            id: st & GEN,
            target: (key >> LINE_BITS) as u16,
            offset: (key & LINE_MASK) << shift,
            len: lb as u32,
        }
    }

    /// Sets the policy's capacity (dirty lines evicted go to the write-back list, past its reserve if need
    /// be), then compacts the data into the lowest slots and frees the chunks above them.
    fn set_capacity(&mut self, lines: usize, g: &Globals) {
        let Shard { policy, slab, wb, c, dirty_idle, .. } = self;
        policy.set_capacity_values(lines, &mut |k, v| evicted(slab, wb, c, dirty_idle, g, k, v));
        let used_n = policy.len() + wb.live;
        let hwm = slab.hwm as usize;
        let mut used = vec![false; hwm];
        policy.for_each_value(&mut |_, v| used[*v as usize] = true);
        for e in wb.entries.iter().filter(|e| e.slot != NONE) {
            used[e.slot as usize] = true;
        }
        let mut holes: Vec<u32> = (0..used_n as u32).filter(|&i| !used[i as usize]).collect();
        policy.for_each_value(&mut |_, v| {
            if *v as usize >= used_n {
                let to = holes.pop().expect("a hole below the used count");
                slab.move_slot(*v, to);
                *v = to;
            }
        });
        for e in wb.entries.iter_mut().filter(|e| e.slot != NONE) {
            if e.slot as usize >= used_n {
                let to = holes.pop().expect("a hole below the used count");
                slab.move_slot(e.slot, to);
                e.slot = to;
            }
        }
        debug_assert!(holes.is_empty());
        slab.truncate(used_n as u32, g);
    }

    fn metadata_bytes(&self) -> usize {
        self.policy.metadata_bytes()
            + self.slab.metadata_bytes()
            + self.wb.metadata_bytes()
            + self.writes.capacity() * 4
            + self.inflight.capacity() * 4
            + self.admits.capacity()
            + std::mem::size_of::<Shard>()
    }
}

/// A shard on its own cache lines (no false sharing between shard locks).
#[repr(align(128))]
struct Padded(Mutex<Shard>);

/// An in-flight forwarded op.
#[derive(Debug, Default)]
struct Rec {
    target: u16,
    offset: u64,
    len: usize,
    write: bool,
    bypass: bool,
    /// Write-allocate at finish (write-through, and write-back writes that were forwarded).
    alloc: bool,
    /// A read's first missed line, as an index into its lines: the cached lines from there on were only
    /// looked at when it was issued, and are used (the policy told) when it completes, in line order.
    first_miss: usize,
    /// Each line's bucket write count at issue (for a write, the count expected at completion if no other
    /// write touched the bucket: see [`Cache::own_counts`]).
    snaps: Vec<u32>,
    /// A write's (shard, bucket) of each line, with the line's index: scratch for [`Cache::own_counts`].
    tags: Vec<(u64, u32)>,
    /// A write over several lines: how many of its lines after each one share its bucket.
    own_later: Vec<u32>,
    /// A read's copy of the lines that were dirty at issue, to overlay if they are gone at finish.
    saved: Vec<u8>,
    saved_mask: Vec<u64>,
    any_saved: bool,
}

/// A block of in-flight records.
type Segment = Box<[Mutex<Rec>]>;

const SEG: usize = 256;
const MAX_SEGS: usize = 4096;
const STRIPES: usize = 8;

/// The in-flight table: records in segments allocated as more ops are in flight at once (grow-once), ids
/// recycled through striped free lists.
struct Registry {
    segs: Box<[OnceLock<Segment>]>,
    free: [Mutex<Vec<u32>>; STRIPES],
    grown: Mutex<usize>,
}

impl Registry {
    fn new() -> Registry {
        Registry {
            segs: (0..MAX_SEGS).map(|_| OnceLock::new()).collect(),
            free: std::array::from_fn(|_| Mutex::new(Vec::new())),
            grown: Mutex::new(0),
        }
    }

    fn alloc(&self, hint: usize) -> u32 {
        for k in 0..STRIPES {
            if let Some(id) = lock(&self.free[(hint + k) % STRIPES]).pop() {
                return id;
            }
        }
        let mut grown = lock(&self.grown);
        let seg = *grown;
        assert!(seg < MAX_SEGS, "more than {} ops in flight through the cache", SEG * MAX_SEGS);
        self.segs[seg].get_or_init(|| (0..SEG).map(|_| Mutex::new(Rec::default())).collect());
        *grown += 1;
        drop(grown);
        let base = seg * SEG;
        for id in base + 1..base + SEG {
            lock(&self.free[id % STRIPES]).push(id as u32);
        }
        base as u32
    }

    fn get(&self, id: u32) -> &Mutex<Rec> {
        let id = id as usize;
        &self.segs[id / SEG].get().expect("a ticket from this cache")[id % SEG]
    }

    fn release(&self, id: u32) {
        lock(&self.free[id as usize % STRIPES]).push(id);
    }

    fn bytes(&self) -> usize {
        let segs = *lock(&self.grown);
        let mut b = self.segs.len() * std::mem::size_of::<OnceLock<Segment>>()
            + segs * SEG * (std::mem::size_of::<Mutex<Rec>>() + 4);
        for s in self.segs.iter().take(segs).filter_map(|s| s.get()) {
            for r in s.iter() {
                let r = lock(r);
                b += r.snaps.capacity() * 4 + r.saved.capacity() + r.saved_mask.capacity() * 8;
            }
        }
        b
    }
}

/// The part of a line an op touches.
#[derive(Clone, Copy, Debug)]
struct Span {
    /// Byte range within the line.
    lo: usize,
    hi: usize,
    /// Where that range starts in the op's buffer.
    pos: usize,
    /// The op covers the whole line.
    full: bool,
}

impl Span {
    #[inline]
    fn buf(&self) -> std::ops::Range<usize> {
        self.pos..self.pos + (self.hi - self.lo)
    }
}

/// The cache shared by all workers of a run.
pub struct Cache {
    config: CacheConfig,
    line_shift: u32,
    shards: Box<[Padded]>,
    shard_mask: usize,
    max_lines: u64,
    capacity_lines: AtomicU64,
    reg: Registry,
    g: Globals,
    flush_requested: AtomicBool,
    flush_requests: AtomicU64,
    device: DeviceCounters,
    dirty_at_end: AtomicU64,
    flush_cursor: AtomicUsize,
}

impl std::fmt::Debug for Cache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cache")
            .field("config", &self.config)
            .field("shards", &self.shards.len())
            .field("capacity_lines", &self.capacity_lines.load(Relaxed))
            .field("dirty", &self.g.dirty.load(Relaxed))
            .finish_non_exhaustive()
    }
}

/// Fewer lines than this: one shard, so the policy is exact.
const SINGLE_SHARD_BELOW: u64 = 1024;
const MAX_SHARDS: u64 = 64;

impl Cache {
    /// A cache for `config`. Memory for lines is taken as lines are filled, in chunks, not up front.
    ///
    /// Fails when the line size is not a power of two of at least 512 bytes, the capacity holds less than one
    /// line (or too many lines for the index), `targets` is 0 or `dirty_max_pct` is not within 0-100.
    pub fn new(config: CacheConfig) -> Result<Cache, CacheError> {
        let lb = config.line_bytes as u64;
        if lb < 512 || !lb.is_power_of_two() {
            return Err(CacheError::Config(format!(
                "cache line {lb} bytes: must be a power of two of at least 512"
            )));
        }
        if config.capacity_bytes < lb {
            return Err(CacheError::Config(format!(
                "cache of {} bytes: must hold at least one {lb}-byte line",
                config.capacity_bytes
            )));
        }
        if config.targets == 0 {
            return Err(CacheError::Config("cache for 0 targets".into()));
        }
        if !(0.0..=100.0).contains(&config.dirty_max_pct) {
            return Err(CacheError::Config(format!(
                "dirty limit {}%: must be within 0-100",
                config.dirty_max_pct
            )));
        }
        let lines = config.capacity_bytes / lb;
        let nshards = if lines < SINGLE_SHARD_BELOW {
            1
        } else {
            let want = lines / 512;
            (1u64 << (63 - want.leading_zeros())).min(MAX_SHARDS)
        };
        let per_shard_max = lines.div_ceil(nshards);
        if per_shard_max * 2 + 1 > index::MAX_ID as u64 || per_shard_max * 2 > policy::MAX_VALUE as u64 {
            return Err(CacheError::Config(format!("cache of {lines} lines: too many lines for the index")));
        }
        let write_back = config.mode == CacheMode::WriteBack;
        let admit_after = config.admit_after.max(1);
        let shards = (0..nshards)
            .map(|i| {
                let cap = (lines / nshards + u64::from(i < lines % nshards)) as usize;
                let reserve = if write_back { (cap / 16).max(2) } else { 0 };
                let buckets = (cap / 2).max(64).next_power_of_two();
                let admits = if admit_after > 1 { cap.max(64).next_power_of_two() } else { 0 };
                Padded(Mutex::new(Shard {
                    policy: policy::new_policy(config.policy, cap),
                    slab: Slab::new(lb as usize, cap + reserve, config.keep_data),
                    wb: Wb::new(reserve),
                    writes: vec![0; buckets],
                    inflight: vec![0; buckets],
                    bucket_mask: buckets - 1,
                    admits: vec![0; admits],
                    admit_mask: admits.saturating_sub(1),
                    admit_after,
                    dirty_idle: 0,
                    scan: 0,
                    write_back,
                    c: Counters::default(),
                }))
            })
            .collect();
        Ok(Cache {
            line_shift: lb.trailing_zeros(),
            shards,
            shard_mask: nshards as usize - 1,
            max_lines: lines,
            capacity_lines: AtomicU64::new(lines),
            reg: Registry::new(),
            g: Globals::default(),
            flush_requested: AtomicBool::new(false),
            flush_requests: AtomicU64::new(0),
            device: DeviceCounters::default(),
            dirty_at_end: AtomicU64::new(u64::MAX),
            flush_cursor: AtomicUsize::new(0),
            config,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &CacheConfig {
        &self.config
    }

    /// Number of index shards (1 below 1024 lines, so the policy is exact; up to 64).
    pub fn shards(&self) -> usize {
        self.shards.len()
    }

    /// The shard of a line: lines are dealt out round-robin (line number plus target, modulo the shard
    /// count), so a contiguous data set spreads exactly evenly and a cache sized to 100 % of it holds all of
    /// it (hashing would overfill some shards and evict while others had room).
    #[inline]
    fn shard(&self, key: u64) -> MutexGuard<'_, Shard> {
        lock(&self.shards[self.shard_of(key)].0)
    }

    #[inline]
    fn shard_of(&self, key: u64) -> usize {
        let spread = (key & LINE_MASK).wrapping_add(key >> LINE_BITS);
        spread as usize & self.shard_mask
    }

    #[inline]
    fn line_range(&self, offset: u64, len: usize) -> std::ops::Range<u64> {
        if len == 0 {
            return 0..0;
        }
        (offset >> self.line_shift)..((offset + len as u64 - 1) >> self.line_shift) + 1
    }

    #[inline]
    fn span(&self, offset: u64, len: usize, line: u64) -> Span {
        let lb = self.config.line_bytes as u64;
        let ls = line << self.line_shift;
        let start = offset.max(ls);
        let end = (offset + len as u64).min(ls + lb);
        Span {
            lo: (start - ls) as usize,
            hi: (end - ls) as usize,
            pos: (start - offset) as usize,
            full: start == ls && end == ls + lb,
        }
    }

    /// A read of `buf.len()` bytes at `offset` of `target`. `bypass`: the op is part of a sequential stream
    /// past the cutoff: it is served from the cache only if every line is there, and never fills.
    pub fn read(&self, target: u16, offset: u64, buf: &mut [u8], bypass: bool) -> ReadOutcome {
        let len = buf.len();
        let lines = self.line_range(offset, len);
        let mut miss_at = None;
        for line in lines.clone() {
            let key = key_of(target, line);
            let mut sh = self.shard(key);
            let found = if bypass { sh.find(key) } else { sh.access(key) };
            let Some(l) = found else {
                miss_at = Some(line);
                break;
            };
            let sp = self.span(offset, len, line);
            buf[sp.buf()].copy_from_slice(&sh.slab.data(l.slot)[sp.lo..sp.hi]);
            sh.c.hits += 1;
            if line + 1 == lines.end {
                sh.c.reads_from_cache += 1;
                sh.c.bypassed += u64::from(bypass);
            }
        }
        let Some(miss_at) = miss_at else { return ReadOutcome::Hit };

        let id = self.reg.alloc((offset >> 16) as usize ^ target as usize);
        let mut guard = lock(self.reg.get(id));
        let rec = &mut *guard;
        *rec = Rec {
            target,
            offset,
            len,
            write: false,
            bypass,
            alloc: false,
            first_miss: (miss_at - lines.start) as usize,
            snaps: std::mem::take(&mut rec.snaps),
            tags: std::mem::take(&mut rec.tags),
            own_later: std::mem::take(&mut rec.own_later),
            saved: std::mem::take(&mut rec.saved),
            saved_mask: std::mem::take(&mut rec.saved_mask),
            any_saved: false,
        };
        rec.snaps.clear();
        let nlines = (lines.end - lines.start) as usize;
        for (i, line) in lines.clone().enumerate() {
            let key = key_of(target, line);
            let h = hash64(key);
            let mut sh = self.shard(key);
            let b = sh.bucket(h);
            rec.snaps.push(sh.writes[b]);
            if i == 0 {
                sh.c.reads_from_target += 1;
                sh.c.bypassed += u64::from(bypass);
            }
            let counted = line >= miss_at;
            match sh.find(key) {
                Some(l) => {
                    sh.c.hits += u64::from(counted);
                    if sh.slab.state[l.slot as usize] & DIRTY != 0 {
                        if !rec.any_saved {
                            rec.any_saved = true;
                            rec.saved.resize(len, 0);
                            rec.saved_mask.clear();
                            rec.saved_mask.resize(nlines.div_ceil(64), 0);
                        }
                        let sp = self.span(offset, len, line);
                        rec.saved[sp.buf()].copy_from_slice(&sh.slab.data(l.slot)[sp.lo..sp.hi]);
                        rec.saved_mask[i / 64] |= 1 << (i % 64);
                    }
                }
                None => {
                    sh.c.misses += u64::from(counted);
                    if !bypass {
                        sh.missed(h);
                    }
                }
            }
        }
        ReadOutcome::Forward(Ticket { id })
    }

    /// A write of `data` at `offset` of `target`. `bypass` as for [`Cache::read`]: forwarded, never allocates.
    pub fn write(&self, target: u16, offset: u64, data: &[u8], bypass: bool) -> WriteOutcome {
        let mode = self.config.mode;
        if mode == CacheMode::WriteBack && !bypass && self.absorb(target, offset, data) {
            return WriteOutcome::Absorbed;
        }
        let len = data.len();
        let id = self.reg.alloc((offset >> 16) as usize ^ target as usize);
        let mut guard = lock(self.reg.get(id));
        let rec = &mut *guard;
        *rec = Rec {
            target,
            offset,
            len,
            write: true,
            bypass,
            alloc: matches!(mode, CacheMode::WriteThrough | CacheMode::WriteBack) && !bypass,
            first_miss: 0,
            snaps: std::mem::take(&mut rec.snaps),
            tags: std::mem::take(&mut rec.tags),
            own_later: std::mem::take(&mut rec.own_later),
            saved: std::mem::take(&mut rec.saved),
            saved_mask: std::mem::take(&mut rec.saved_mask),
            any_saved: false,
        };
        rec.snaps.clear();
        rec.tags.clear();
        for (i, line) in self.line_range(offset, len).enumerate() {
            let key = key_of(target, line);
            let h = hash64(key);
            let mut sh = self.shard(key);
            let b = sh.bucket(h);
            sh.writes[b] = sh.writes[b].wrapping_add(1);
            sh.inflight[b] += 1;
            rec.snaps.push(sh.writes[b]);
            rec.tags.push(((self.shard_of(key) as u64) << 32 | b as u64, i as u32));
            if i == 0 {
                sh.c.writes_to_target += 1;
                sh.c.bypassed += u64::from(bypass);
            }
            let Some(l) = sh.find(key) else { continue };
            match mode {
                CacheMode::ReadOnly => sh.invalidate(key, l),
                // Write-back: the cached line takes the data now and is dirty, so that any write-back of it
                // from now on carries this write's bytes (a write-back started earlier gets a stale
                // generation and goes again).
                CacheMode::WriteBack => {
                    let sp = self.span(offset, len, line);
                    sh.slab.data_mut(l.slot)[sp.lo..sp.hi].copy_from_slice(&data[sp.buf()]);
                    sh.make_dirty(key, l, &self.g);
                }
                CacheMode::WriteThrough | CacheMode::WriteAround => {}
            }
        }
        Self::own_counts(rec);
        WriteOutcome::Forward(Ticket { id })
    }

    /// A write over several lines counts itself once per line, and lines can share a bucket. So that the op
    /// is not its own race: for each line with `c` others of the op in its bucket, `e` of them before it,
    /// the count expected when it completes is its snapshot plus `c` (the op's later counts at issue and
    /// earlier ones at completion), and `c - e` of the op's lines are still in flight in the bucket then.
    fn own_counts(rec: &mut Rec) {
        rec.own_later.clear();
        if rec.tags.len() < 2 {
            return;
        }
        rec.own_later.resize(rec.tags.len(), 0);
        rec.tags.sort_unstable();
        for group in rec.tags.chunk_by(|a, b| a.0 == b.0) {
            let c = group.len() as u32 - 1;
            for (e, &(_, i)) in group.iter().enumerate() {
                rec.snaps[i as usize] = rec.snaps[i as usize].wrapping_add(c);
                rec.own_later[i as usize] = c - e as u32;
            }
        }
    }

    /// Write-back: takes the write into the cache when every line it touches is cached or wholly written.
    fn absorb(&self, target: u16, offset: u64, data: &[u8]) -> bool {
        let len = data.len();
        let lines = self.line_range(offset, len);
        for line in lines.clone() {
            let key = key_of(target, line);
            let sh = self.shard(key);
            if sh.find(key).is_none() && !(self.span(offset, len, line).full && sh.room()) {
                return false;
            }
        }
        let mut all = true;
        for line in lines.clone() {
            let key = key_of(target, line);
            let h = hash64(key);
            let mut sh = self.shard(key);
            let b = sh.bucket(h);
            sh.writes[b] = sh.writes[b].wrapping_add(1);
            let sp = self.span(offset, len, line);
            match sh.access(key) {
                Some(l) => {
                    sh.slab.data_mut(l.slot)[sp.lo..sp.hi].copy_from_slice(&data[sp.buf()]);
                    sh.make_dirty(key, l, &self.g);
                }
                None => all &= sp.full && sh.insert(key, &data[sp.buf()], DIRTY | 1, &self.g),
            }
            if all && line + 1 == lines.end {
                sh.c.writes_absorbed += 1;
            }
        }
        // A line was evicted between the two passes: the write goes to the target too (the lines taken are
        // dirty with the same data, and the forwarded write's completion reconciles them).
        all
    }

    /// A trim (discard) of `len` bytes at `offset` of `target`, on its way to the target: the clean lines it
    /// covers whole are dropped, so no read is served what the target no longer holds. A dirty line stays:
    /// it holds acknowledged writes, and a discard only allows the device to forget (what a discarded range
    /// reads back is not defined), so writing it back later is allowed. Ops in flight on those lines see a
    /// newer write count and do not fill them.
    pub fn discard(&self, target: u16, offset: u64, len: u32) {
        for line in self.line_range(offset, len as usize) {
            if !self.span(offset, len as usize, line).full {
                continue;
            }
            let key = key_of(target, line);
            let h = hash64(key);
            let mut sh = self.shard(key);
            let b = sh.bucket(h);
            sh.writes[b] = sh.writes[b].wrapping_add(1);
            if let Some(l) = sh.find(key) {
                if sh.slab.state[l.slot as usize] & (DIRTY | FLUSHING) == 0 {
                    sh.invalidate(key, l);
                }
            }
        }
    }

    /// A forwarded op completed. `buf` is the op's buffer (a read's data, to fill from and to overlay newer
    /// cached lines onto; a write's data, to update cached lines with). `ok`: the target transferred it all.
    ///
    /// Returns how many lines took data from `buf` (filled from a read, allocated or updated by a write), so
    /// an engine with a real cache device knows whether to write them there.
    pub fn finish(&self, ticket: Ticket, buf: &mut [u8], ok: bool) -> u32 {
        let mut stored = 0u32;
        let mut guard = lock(self.reg.get(ticket.id));
        let rec = &mut *guard;
        assert_eq!(buf.len(), rec.len, "Cache::finish: the buffer is not the op's");
        let (target, offset, len) = (rec.target, rec.offset, rec.len);
        let lines = self.line_range(offset, len);
        if rec.write || ok {
            for (i, line) in lines.enumerate() {
                let key = key_of(target, line);
                let h = hash64(key);
                let mut sh = self.shard(key);
                let b = sh.bucket(h);
                let changed = sh.writes[b] != rec.snaps[i];
                let sp = self.span(offset, len, line);
                if rec.write {
                    sh.writes[b] = sh.writes[b].wrapping_add(1);
                    sh.inflight[b] -= 1;
                    let alone = sh.inflight[b] == rec.own_later.get(i).copied().unwrap_or(0);
                    stored += u32::from(self.finish_write_line(
                        &mut sh,
                        rec,
                        key,
                        sp,
                        &buf[sp.buf()],
                        changed,
                        alone,
                        ok,
                    ));
                } else {
                    let used = !rec.bypass && i >= rec.first_miss;
                    match if used { sh.access(key) } else { sh.find(key) } {
                        Some(l) => buf[sp.buf()].copy_from_slice(&sh.slab.data(l.slot)[sp.lo..sp.hi]),
                        None => {
                            if rec.any_saved && rec.saved_mask[i / 64] & (1 << (i % 64)) != 0 {
                                buf[sp.buf()].copy_from_slice(&rec.saved[sp.buf()]);
                            }
                            if !rec.bypass && sp.full {
                                let racing = changed || sh.inflight[b] != 0;
                                if !racing && sh.admitted(h) && sh.insert(key, &buf[sp.buf()], 0, &self.g) {
                                    sh.c.fills += 1;
                                    stored += 1;
                                    sh.reset_admit(h);
                                } else {
                                    sh.c.fills_skipped += 1;
                                }
                            }
                        }
                    }
                }
            }
        }
        drop(guard);
        self.reg.release(ticket.id);
        stored
    }

    /// A forwarded write's completion on one line. `changed`: another write touched the line's bucket during
    /// this one's flight; `alone`: no other forwarded write to the bucket is in flight. Returns true when the
    /// line took the write's data now (allocated, or updated in write-through and write-around).
    #[allow(clippy::too_many_arguments)]
    fn finish_write_line(
        &self,
        sh: &mut Shard,
        rec: &Rec,
        key: u64,
        sp: Span,
        data: &[u8],
        changed: bool,
        alone: bool,
        ok: bool,
    ) -> bool {
        // A write that would allocate a missing line uses a cached one (the policy is told), as a read does.
        let found = if ok && rec.alloc { sh.access(key) } else { sh.find(key) };
        let Some(l) = found else {
            // Write-allocate a whole line, unless another write raced with this one (the target may hold
            // either's data) or is still in flight.
            if ok && rec.alloc && sp.full && !changed && alone && sh.insert(key, data, 0, &self.g) {
                sh.c.fills += 1;
                return true;
            }
            return false;
        };
        let st = sh.slab.state[l.slot as usize];
        match self.config.mode {
            CacheMode::ReadOnly => sh.invalidate(key, l),
            CacheMode::WriteBack => {
                // The line took the data at issue (or a racing write's since). It becomes clean when the target
                // now holds all of it: a whole-line write, no write-back in flight, no racing write.
                if st & DIRTY != 0 {
                    if ok && sp.full && st & FLUSHING == 0 && !changed {
                        sh.make_clean(key, l, &self.g);
                    } else if st & FLUSHING != 0 {
                        // The write-back in flight may land before or after this write: it must not clean
                        // the line.
                        sh.make_dirty(key, l, &self.g);
                    }
                } else if changed {
                    sh.invalidate(key, l);
                }
            }
            CacheMode::WriteThrough | CacheMode::WriteAround => {
                // A clean line must equal the target: update it, unless the write failed or raced with
                // another write to the line (which one the target kept is unknown: drop the line).
                debug_assert!(st & DIRTY == 0);
                if ok && !changed {
                    sh.slab.data_mut(l.slot)[sp.lo..sp.hi].copy_from_slice(data);
                    return true;
                } else {
                    sh.invalidate(key, l);
                }
            }
        }
        false
    }

    /// The next dirty line to write back, its data copied into `buf` (at least one line long), or None. Lines
    /// come when the dirty share is above `dirty_max_pct`, when dirty lines were evicted, after
    /// [`Cache::request_flush`], and for every dirty line when `all` (the end of a run).
    pub fn next_flush(&self, all: bool, buf: &mut [u8]) -> Option<Flush> {
        self.next_flush_for(all, buf, &|_| true)
    }

    /// [`Cache::next_flush`] restricted to the targets `accept` takes (a worker that can only write to its own
    /// targets). Lines of other targets wait for a caller that accepts them.
    pub fn next_flush_for(&self, all: bool, buf: &mut [u8], accept: &dyn Fn(u16) -> bool) -> Option<Flush> {
        if all {
            let _ =
                self.dirty_at_end.compare_exchange(u64::MAX, self.g.dirty.load(Relaxed), Relaxed, Relaxed);
        }
        self.next_writeback(all, buf, accept)
    }

    /// The next dirty line of `target` to write back, whatever the dirty share: what a flush of that target
    /// (fsync) waits for, line by line, until [`Cache::dirty_lines_of`] says none is left.
    pub fn next_flush_of(&self, target: u16, buf: &mut [u8]) -> Option<Flush> {
        self.next_writeback(true, buf, &|t| t == target)
    }

    /// Dirty lines of `target` (and of the targets that share its count: ids equal modulo 32), those being
    /// written back included. A flush of `target` is done when this is 0.
    pub fn dirty_lines_of(&self, target: u16) -> u64 {
        self.g.dirty_of[dirty_bucket(key_of(target, 0))].load(Relaxed)
    }

    fn next_writeback(&self, all: bool, buf: &mut [u8], accept: &dyn Fn(u16) -> bool) -> Option<Flush> {
        assert!(buf.len() >= self.config.line_bytes as usize, "flush buffer shorter than a line");
        let n = self.shards.len();
        let start = self.flush_cursor.fetch_add(1, Relaxed) % n;
        if self.g.wb_queued.load(Relaxed) > 0 {
            for k in 0..n {
                let mut sh = lock(&self.shards[(start + k) % n].0);
                if !sh.wb.queue.is_empty() {
                    if let Some(f) = sh.pop_wb(accept, buf, &self.g, self.line_shift) {
                        return Some(f);
                    }
                }
            }
        }
        let requested = self.flush_requested.load(Relaxed);
        let limit = self.config.dirty_max_pct / 100.0 * self.capacity_lines.load(Relaxed) as f64;
        let over = self.g.dirty.load(Relaxed) as f64 > limit;
        if !(all || requested || over) {
            return None;
        }
        if self.g.res_dirty_idle.load(Relaxed) == 0 {
            if requested && self.g.wb_queued.load(Relaxed) == 0 {
                self.flush_requested.store(false, Relaxed);
            }
            return None;
        }
        for k in 0..n {
            let mut sh = lock(&self.shards[(start + k) % n].0);
            if sh.dirty_idle > 0 {
                if let Some(f) = sh.scan_dirty(accept, buf, &self.g, self.line_shift) {
                    return Some(f);
                }
            }
        }
        None
    }

    /// A write-back completed; `ok` false keeps the line dirty.
    pub fn finish_flush(&self, flush: Flush, ok: bool) {
        let key = key_of(flush.target, flush.offset >> self.line_shift);
        let mut sh = self.shard(key);
        let Some(l) = sh.find(key) else {
            debug_assert!(false, "finish_flush of a line that is not cached: {flush:?}");
            return;
        };
        let st = sh.slab.state[l.slot as usize];
        if st & FLUSHING == 0 {
            debug_assert!(false, "finish_flush of a line not being written back: {flush:?}");
            return;
        }
        let gen = st & GEN;
        let b = sh.bucket(hash64(key));
        sh.writes[b] = sh.writes[b].wrapping_add(1);
        sh.c.writebacks += u64::from(ok);
        if ok && gen == flush.id {
            self.g.cleaned(key);
            sh.slab.state[l.slot as usize] = gen;
            if let Place::Wb(e) = l.place {
                let slot = sh.wb.remove(e);
                sh.slab.free_slot(slot);
            }
        } else {
            sh.slab.state[l.slot as usize] = DIRTY | gen;
            match l.place {
                Place::Resident => {
                    sh.dirty_idle += 1;
                    self.g.res_dirty_idle.fetch_add(1, Relaxed);
                }
                Place::Wb(e) => {
                    sh.wb.enqueue(e);
                    self.g.wb_queued.fetch_add(1, Relaxed);
                }
            }
        }
    }

    /// Asks for every dirty line to be written back (flush on demand).
    pub fn request_flush(&self) {
        self.flush_requests.fetch_add(1, Relaxed);
        self.flush_requested.store(true, Relaxed);
    }

    /// Counts one I/O issued to (or dropped before) a real cache device; reported in [`CacheStats`].
    pub fn note_device_io(&self, io: DeviceIo) {
        let c = match io {
            DeviceIo::Read => &self.device.reads,
            DeviceIo::Write => &self.device.writes,
            DeviceIo::WriteDropped => &self.device.dropped,
        };
        c.fetch_add(1, Relaxed);
    }

    /// Dirty lines now (including lines being written back).
    pub fn dirty_lines(&self) -> u64 {
        self.g.dirty.load(Relaxed)
    }

    /// Changes the capacity (memory pressure: shrink; or grow back up to the configured capacity), evicting
    /// as needed and freeing the memory of whole chunks no longer used. Returns the new capacity in bytes.
    ///
    /// Dirty lines evicted by a shrink are not dropped: they join the write-back queue (past its usual
    /// reserve if need be) and their data stays until [`Cache::finish_flush`] reports them written.
    pub fn set_capacity(&self, bytes: u64) -> u64 {
        let lines = (bytes >> self.line_shift).min(self.max_lines);
        let n = self.shards.len() as u64;
        for (i, shard) in self.shards.iter().enumerate() {
            let cap = lines / n + u64::from((i as u64) < lines % n);
            lock(&shard.0).set_capacity(cap as usize, &self.g);
        }
        self.capacity_lines.store(lines, Relaxed);
        lines << self.line_shift
    }

    /// Bytes of RAM the cache holds now (data chunks and metadata).
    pub fn memory_bytes(&self) -> u64 {
        self.g.data_bytes.load(Relaxed) + self.metadata_bytes() as u64 + self.reg.bytes() as u64
    }

    fn metadata_bytes(&self) -> usize {
        self.shards.iter().map(|s| lock(&s.0).metadata_bytes()).sum::<usize>()
            + self.shards.len() * std::mem::size_of::<Padded>()
    }

    /// Metadata (index, policy with its ghosts, per-slot state, write-back list, write counters) per line of
    /// the configured capacity, in bytes, measured from the structures' allocated sizes.
    pub fn metadata_bytes_per_line(&self) -> f64 {
        self.metadata_bytes() as f64 / self.max_lines as f64
    }

    /// The counters so far.
    ///
    /// `dirty_at_end` is the dirty count at the first `next_flush(all = true)` (the exit flush), or the dirty
    /// count now if there was none yet.
    pub fn stats(&self) -> CacheStats {
        let mut c = Counters::default();
        let mut lines = 0u64;
        for s in self.shards.iter() {
            let sh = lock(&s.0);
            let x = &sh.c;
            c.hits += x.hits;
            c.misses += x.misses;
            c.reads_from_cache += x.reads_from_cache;
            c.reads_from_target += x.reads_from_target;
            c.writes_absorbed += x.writes_absorbed;
            c.writes_to_target += x.writes_to_target;
            c.fills += x.fills;
            c.fills_skipped += x.fills_skipped;
            c.writebacks += x.writebacks;
            c.evictions += x.evictions;
            c.bypassed += x.bypassed;
            c.invalidations += x.invalidations;
            lines += (sh.policy.len() + sh.wb.live) as u64;
        }
        let end = self.dirty_at_end.load(Relaxed);
        CacheStats {
            hits: c.hits,
            misses: c.misses,
            reads_from_cache: c.reads_from_cache,
            reads_from_target: c.reads_from_target,
            writes_absorbed: c.writes_absorbed,
            writes_to_target: c.writes_to_target,
            fills: c.fills,
            fills_skipped: c.fills_skipped,
            writebacks: c.writebacks,
            evictions: c.evictions,
            bypassed: c.bypassed,
            invalidations: c.invalidations,
            dirty_at_end: if end == u64::MAX { self.dirty_lines() } else { end },
            capacity_bytes: self.capacity_lines.load(Relaxed) << self.line_shift,
            lines,
            metadata_bytes_per_line: self.metadata_bytes_per_line(),
            memory_bytes: self.memory_bytes(),
            flush_requests: self.flush_requests.load(Relaxed),
            device_reads: self.device.reads.load(Relaxed),
            device_writes: self.device.writes.load(Relaxed),
            device_writes_dropped: self.device.dropped.load(Relaxed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(mode: CacheMode, policy: CachePolicy, lines: u64) -> CacheConfig {
        CacheConfig {
            capacity_bytes: lines * 4096,
            line_bytes: 4096,
            mode,
            policy,
            admit_after: 1,
            dirty_max_pct: 50.0,
            targets: 1,
            keep_data: true,
        }
    }

    #[test]
    fn cache_is_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<Cache>();
    }

    #[test]
    fn bad_configs_are_refused() {
        let mut c = config(CacheMode::WriteThrough, CachePolicy::Lru, 4);
        c.line_bytes = 1000;
        assert!(Cache::new(c.clone()).is_err());
        c.line_bytes = 4096;
        c.capacity_bytes = 100;
        assert!(Cache::new(c.clone()).is_err());
        c.capacity_bytes = 1 << 20;
        c.dirty_max_pct = 101.0;
        assert!(Cache::new(c).is_err());
    }

    #[test]
    fn read_miss_fill_then_hit() {
        let cache = Cache::new(config(CacheMode::WriteThrough, CachePolicy::Lru, 8)).unwrap();
        let mut buf = vec![0u8; 8192];
        let ReadOutcome::Forward(t) = cache.read(0, 4096, &mut buf, false) else { panic!("cold hit") };
        buf.fill(7);
        cache.finish(t, &mut buf, true);
        let mut again = vec![0u8; 4096];
        assert_eq!(cache.read(0, 8192, &mut again, false), ReadOutcome::Hit);
        assert!(again.iter().all(|&b| b == 7));
        let s = cache.stats();
        assert_eq!((s.hits, s.misses, s.fills, s.reads_from_cache, s.reads_from_target), (1, 2, 2, 1, 1));
    }

    #[test]
    fn a_write_over_lines_that_share_a_bucket_is_not_its_own_race() {
        // 512 lines: 64 write-count buckets, so 64 lines of one write share some.
        let cache = Cache::new(config(CacheMode::WriteThrough, CachePolicy::Lru, 512)).unwrap();
        let mut data = vec![5u8; 64 * 4096];
        let WriteOutcome::Forward(t) = cache.write(0, 0, &data, false) else {
            panic!("write-through forwards")
        };
        assert_eq!(cache.finish(t, &mut data, true), 64);
        let s = cache.stats();
        assert_eq!((s.fills, s.invalidations), (64, 0));
        assert_eq!(cache.read(0, 0, &mut data, false), ReadOutcome::Hit);
    }

    #[test]
    fn lines_used_after_a_read_missed_and_by_writes_keep_lru_order() {
        let cache = Cache::new(config(CacheMode::WriteThrough, CachePolicy::Lru, 4)).unwrap();
        let mut buf = vec![0u8; 4096];
        let read = |line: u64, lines: usize| {
            let mut b = vec![0u8; lines * 4096];
            if let ReadOutcome::Forward(t) = cache.read(0, line * 4096, &mut b, false) {
                cache.finish(t, &mut b, true);
            }
        };
        [1, 2, 3].into_iter().for_each(|l| read(l, 1));
        // Lines 0 and 1: 0 misses at issue, so 1 is only looked at then; at completion 0 is filled and 1 is
        // used, in line order. Oldest first: 2, 3, 0, 1.
        read(0, 2);
        // A write uses line 3: 2, 0, 1, 3.
        let WriteOutcome::Forward(t) = cache.write(0, 3 * 4096, &buf, false) else { panic!() };
        cache.finish(t, &mut buf, true);
        // Two new lines evict the two oldest, 2 and 0.
        read(5, 1);
        read(6, 1);
        for line in [1, 3, 5, 6] {
            assert_eq!(cache.read(0, line * 4096, &mut buf, false), ReadOutcome::Hit, "line {line}");
        }
        for line in [0, 2] {
            assert_ne!(cache.read(0, line * 4096, &mut buf, false), ReadOutcome::Hit, "line {line}");
        }
    }

    #[test]
    fn partial_lines_are_never_filled() {
        let cache = Cache::new(config(CacheMode::WriteThrough, CachePolicy::Lru, 8)).unwrap();
        let mut buf = vec![0u8; 1024];
        let ReadOutcome::Forward(t) = cache.read(0, 512, &mut buf, false) else { panic!() };
        cache.finish(t, &mut buf, true);
        assert!(matches!(cache.read(0, 512, &mut buf, false), ReadOutcome::Forward(_)));
        assert_eq!(cache.stats().fills, 0);
    }

    #[test]
    fn a_write_during_a_fill_poisons_it() {
        for mode in
            [CacheMode::WriteThrough, CacheMode::WriteAround, CacheMode::ReadOnly, CacheMode::WriteBack]
        {
            let cache = Cache::new(config(mode, CachePolicy::Lru, 8)).unwrap();
            let mut buf = vec![1u8; 4096];
            let ReadOutcome::Forward(r) = cache.read(0, 0, &mut buf, false) else { panic!() };
            // A partial write to the line, forwarded in every mode (write-back cannot absorb it).
            let w = match cache.write(0, 0, &[2u8; 512], false) {
                WriteOutcome::Forward(w) => w,
                WriteOutcome::Absorbed => panic!("{mode:?}: absorbed a partial write to a missing line"),
            };
            cache.finish(r, &mut buf, true); // the target read saw the old data
            cache.finish(w, &mut [2u8; 512], true);
            assert_eq!(cache.stats().fills, 0, "{mode:?}");
            let mut back = vec![0u8; 4096];
            assert!(matches!(cache.read(0, 0, &mut back, false), ReadOutcome::Forward(_)), "{mode:?}");
        }
    }

    #[test]
    fn write_back_absorbs_flushes_and_cleans() {
        let cache = Cache::new(config(CacheMode::WriteBack, CachePolicy::Lru, 8)).unwrap();
        assert_eq!(cache.write(0, 0, &[5u8; 4096], false), WriteOutcome::Absorbed);
        assert_eq!(cache.dirty_lines(), 1);
        // Partial write to a cached line: absorbed; partial to a missing line: forwarded.
        assert_eq!(cache.write(0, 512, &[6u8; 512], false), WriteOutcome::Absorbed);
        assert!(matches!(cache.write(0, 8192, &[6u8; 512], false), WriteOutcome::Forward(_)));
        let mut buf = vec![0u8; 4096];
        assert_eq!(cache.next_flush(false, &mut buf), None, "below the dirty limit");
        let f = cache.next_flush(true, &mut buf).expect("a dirty line");
        assert_eq!((f.target, f.offset, f.len), (0, 0, 4096));
        assert_eq!(&buf[..512], &[5u8; 512]);
        assert_eq!(&buf[512..1024], &[6u8; 512]);
        assert_eq!(cache.next_flush(true, &mut buf), None, "the line is being written back");
        // Re-dirtied during its write-back: stays dirty.
        assert_eq!(cache.write(0, 0, &[7u8; 512], false), WriteOutcome::Absorbed);
        cache.finish_flush(f, true);
        assert_eq!(cache.dirty_lines(), 1);
        let f = cache.next_flush(true, &mut buf).expect("again");
        cache.finish_flush(f, false);
        assert_eq!(cache.dirty_lines(), 1, "a failed write-back keeps the line dirty");
        let f = cache.next_flush(true, &mut buf).expect("again");
        assert_eq!(&buf[..512], &[7u8; 512]);
        cache.finish_flush(f, true);
        assert_eq!(cache.dirty_lines(), 0);
        assert_eq!(cache.stats().writebacks, 2);
    }

    #[test]
    fn request_flush_hands_out_every_dirty_line() {
        let cache = Cache::new(config(CacheMode::WriteBack, CachePolicy::Arc, 16)).unwrap();
        for i in 0..4u64 {
            assert_eq!(cache.write(0, i * 4096, &[1u8; 4096], false), WriteOutcome::Absorbed);
        }
        let mut buf = vec![0u8; 4096];
        assert!(cache.next_flush(false, &mut buf).is_none());
        cache.request_flush();
        let mut n = 0;
        while let Some(f) = cache.next_flush(false, &mut buf) {
            cache.finish_flush(f, true);
            n += 1;
        }
        assert_eq!(n, 4);
        assert_eq!(cache.dirty_lines(), 0);
    }

    #[test]
    fn evicted_dirty_lines_stay_readable_until_written_back() {
        let cache = Cache::new(config(CacheMode::WriteBack, CachePolicy::Lru, 2)).unwrap();
        for i in 0..3u64 {
            assert_eq!(cache.write(0, i * 4096, &[i as u8 + 1; 4096], false), WriteOutcome::Absorbed);
        }
        // Line 0 was evicted while dirty: still readable, and handed out first.
        let mut r = vec![0u8; 4096];
        assert_eq!(cache.read(0, 0, &mut r, false), ReadOutcome::Hit);
        assert!(r.iter().all(|&b| b == 1));
        let mut buf = vec![0u8; 4096];
        let f = cache.next_flush(false, &mut buf).expect("the evicted line");
        assert_eq!(f.offset, 0);
        cache.finish_flush(f, true);
        assert!(matches!(cache.read(0, 0, &mut r, false), ReadOutcome::Forward(_)));
        assert_eq!(cache.dirty_lines(), 2);
    }

    #[test]
    fn write_back_reserve_full_forwards_writes() {
        let cache = Cache::new(config(CacheMode::WriteBack, CachePolicy::Lru, 2)).unwrap();
        // Reserve is 2 lines: 2 resident + 2 evicted dirty, then writes to new lines are forwarded.
        let mut absorbed = 0;
        for i in 0..6u64 {
            if cache.write(0, i * 4096, &[1u8; 4096], false) == WriteOutcome::Absorbed {
                absorbed += 1;
            }
        }
        assert_eq!(absorbed, 4);
        assert_eq!(cache.dirty_lines(), 4);
    }

    #[test]
    fn shrink_and_grow_free_and_take_memory() {
        let cache = Cache::new(config(CacheMode::WriteBack, CachePolicy::S3Fifo, 4096)).unwrap();
        assert!(cache.shards() > 1);
        for i in 0..4096u64 {
            let mut buf = vec![i as u8; 4096];
            match cache.read(0, i * 4096, &mut buf, false) {
                ReadOutcome::Forward(t) => {
                    cache.finish(t, &mut buf, true);
                }
                ReadOutcome::Hit => {}
            }
        }
        for i in 0..64u64 {
            cache.write(0, i * 4096, &[9u8; 4096], false);
        }
        let dirty = cache.dirty_lines();
        let full = cache.memory_bytes();
        assert_eq!(cache.set_capacity(1 << 20), 1 << 20);
        let small = cache.memory_bytes();
        assert!(small < full / 4, "{small} vs {full}");
        assert_eq!(cache.dirty_lines(), dirty, "dirty lines are not dropped");
        // Every dirty line still reads back its data.
        for i in 0..64u64 {
            let mut r = vec![0u8; 4096];
            assert_eq!(cache.read(0, i * 4096, &mut r, false), ReadOutcome::Hit);
            assert!(r.iter().all(|&b| b == 9));
        }
        let mut buf = vec![0u8; 4096];
        while let Some(f) = cache.next_flush(true, &mut buf) {
            assert!(buf.iter().all(|&b| b == 9));
            cache.finish_flush(f, true);
        }
        assert_eq!(cache.set_capacity(u64::MAX), 4096 * 4096);
        for i in 0..4096u64 {
            let mut buf = vec![0u8; 4096];
            if let ReadOutcome::Forward(t) = cache.read(0, i * 4096, &mut buf, false) {
                cache.finish(t, &mut buf, true);
            }
        }
        assert!(cache.memory_bytes() > small * 4);
        // Sharded: each shard holds its share, and hashing spreads lines a little unevenly.
        assert!(cache.stats().lines > 3900, "{}", cache.stats().lines);
    }

    #[test]
    fn admission_after_n_misses() {
        let mut c = config(CacheMode::WriteThrough, CachePolicy::Lru, 8);
        c.admit_after = 2;
        let cache = Cache::new(c).unwrap();
        let mut buf = vec![0u8; 4096];
        for expect_fills in [0, 1] {
            let ReadOutcome::Forward(t) = cache.read(0, 0, &mut buf, false) else { panic!() };
            cache.finish(t, &mut buf, true);
            assert_eq!(cache.stats().fills, expect_fills);
        }
        assert_eq!(cache.read(0, 0, &mut buf, false), ReadOutcome::Hit);
    }

    #[test]
    fn bypass_never_fills_but_hits_cached_lines() {
        let cache = Cache::new(config(CacheMode::WriteThrough, CachePolicy::Lru, 8)).unwrap();
        let mut buf = vec![3u8; 4096];
        let ReadOutcome::Forward(t) = cache.read(0, 0, &mut buf, true) else { panic!() };
        cache.finish(t, &mut buf, true);
        assert_eq!(cache.stats().fills, 0);
        let ReadOutcome::Forward(t) = cache.read(0, 0, &mut buf, false) else { panic!() };
        cache.finish(t, &mut buf, true);
        assert_eq!(cache.read(0, 0, &mut buf, true), ReadOutcome::Hit);
        assert_eq!(cache.stats().bypassed, 2);
    }
}
