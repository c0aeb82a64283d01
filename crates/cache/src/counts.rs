//! Counters: each shard's own (under its lock), those the shards share (atomics), and a real cache device's.

use crate::line::LINE_BITS;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Counts of the I/O a real cache device carried (kept by the engine through [`Cache::note_device_io`]).
#[derive(Debug, Default)]
pub(crate) struct DeviceCounters {
    pub(crate) reads: AtomicU64,
    pub(crate) writes: AtomicU64,
    pub(crate) dropped: AtomicU64,
}

/// Counters kept per shard (under its lock) and summed by [`Cache::stats`].
#[derive(Clone, Debug, Default)]
pub(crate) struct ShardCounters {
    pub(crate) hits: u64,
    pub(crate) misses: u64,
    pub(crate) reads_from_cache: u64,
    pub(crate) reads_from_target: u64,
    pub(crate) writes_absorbed: u64,
    pub(crate) writes_to_target: u64,
    pub(crate) fills: u64,
    pub(crate) fills_skipped: u64,
    pub(crate) writebacks: u64,
    pub(crate) evictions: u64,
    pub(crate) bypassed: u64,
    pub(crate) invalidations: u64,
    pub(crate) absorbed_bytes: u64,
    pub(crate) writes_forwarded_full: u64,
}

impl ShardCounters {
    /// Adds `other`'s counts to these.
    pub(crate) fn add(&mut self, other: &ShardCounters) {
        self.hits += other.hits;
        self.misses += other.misses;
        self.reads_from_cache += other.reads_from_cache;
        self.reads_from_target += other.reads_from_target;
        self.writes_absorbed += other.writes_absorbed;
        self.writes_to_target += other.writes_to_target;
        self.fills += other.fills;
        self.fills_skipped += other.fills_skipped;
        self.writebacks += other.writebacks;
        self.evictions += other.evictions;
        self.bypassed += other.bypassed;
        self.invalidations += other.invalidations;
        self.absorbed_bytes += other.absorbed_bytes;
        self.writes_forwarded_full += other.writes_forwarded_full;
    }
}

/// Counts shared by the shards, changed under a shard's lock, read without one.
#[derive(Debug, Default)]
pub(crate) struct SharedCounts {
    /// Dirty lines, resident or awaiting write-back, including those being written back.
    pub(crate) dirty: AtomicU64,
    /// The most lines `dirty` ever counted.
    pub(crate) peak_dirty: AtomicU64,
    /// Resident dirty lines not being written back.
    pub(crate) resident_dirty_idle: AtomicU64,
    /// Evicted dirty lines queued for write-back.
    pub(crate) evicted_queued: AtomicU64,
    /// Bytes of data chunks allocated.
    pub(crate) data_bytes: AtomicU64,
    /// Dirty lines (as `dirty`) by [`dirty_bucket`] of their target: what a flush of a target waits for.
    pub(crate) dirty_of: [AtomicU64; DIRTY_BUCKETS],
}

/// Buckets of [`SharedCounts::dirty_of`]: targets share one when their ids are equal modulo this, and a flush of one
/// then also waits for the other's lines (never less than it must).
const DIRTY_BUCKETS: usize = 32;

/// The [`SharedCounts::dirty_of`] bucket of the line `key`.
#[inline]
pub(crate) fn dirty_bucket(key: u64) -> usize {
    ((key >> LINE_BITS) as usize) % DIRTY_BUCKETS
}

impl SharedCounts {
    /// One more dirty line, `key`.
    #[inline]
    pub(crate) fn dirtied(&self, key: u64) {
        let now = self.dirty.fetch_add(1, Relaxed) + 1;
        if now > self.peak_dirty.load(Relaxed) {
            self.peak_dirty.fetch_max(now, Relaxed);
        }
        self.dirty_of[dirty_bucket(key)].fetch_add(1, Relaxed);
    }

    /// One dirty line fewer, `key` (now clean, or dropped after its write-back).
    #[inline]
    pub(crate) fn cleaned(&self, key: u64) {
        self.dirty.fetch_sub(1, Relaxed);
        self.dirty_of[dirty_bucket(key)].fetch_sub(1, Relaxed);
    }
}
