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
//! Policies ([`policy`]): LRU, ARC and S3-FIFO (1-bit). The index is sharded by line, one lock per shard.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod policy;
pub mod seq;

pub use iolab_spec::{CacheMode, CachePolicy};
pub use seq::SeqDetector;

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
    /// Internal index of the flush record.
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
}

/// The cache shared by all workers of a run.
pub struct Cache {
    config: CacheConfig,
}

impl Cache {
    /// A cache for `config`. Memory for lines is taken as lines are filled, in chunks, not up front.
    pub fn new(config: CacheConfig) -> Result<Cache, CacheError> {
        Ok(Cache { config })
    }

    /// The configuration.
    pub fn config(&self) -> &CacheConfig {
        &self.config
    }

    /// A read of `buf.len()` bytes at `offset` of `target`. `bypass`: the op is part of a sequential stream
    /// past the cutoff: it is served from the cache only if every line is there, and never fills.
    pub fn read(&self, target: u16, offset: u64, buf: &mut [u8], bypass: bool) -> ReadOutcome {
        let _ = (target, offset, buf, bypass);
        todo!()
    }

    /// A write of `data` at `offset` of `target`. `bypass` as for [`Cache::read`]: forwarded, never allocates.
    pub fn write(&self, target: u16, offset: u64, data: &[u8], bypass: bool) -> WriteOutcome {
        let _ = (target, offset, data, bypass);
        todo!()
    }

    /// A forwarded op completed. `buf` is the op's buffer (a read's data, to fill from and to overlay newer
    /// cached lines onto; a write's data, to update cached lines with). `ok`: the target transferred it all.
    pub fn finish(&self, ticket: Ticket, buf: &mut [u8], ok: bool) {
        let _ = (ticket, buf, ok);
        todo!()
    }

    /// The next dirty line to write back, its data copied into `buf` (at least one line long), or None. Lines
    /// come when the dirty share is above `dirty_max_pct`, when dirty lines were evicted, after
    /// [`Cache::request_flush`], and for every dirty line when `all` (the end of a run).
    pub fn next_flush(&self, all: bool, buf: &mut [u8]) -> Option<Flush> {
        let _ = (all, buf);
        todo!()
    }

    /// A write-back completed; `ok` false keeps the line dirty.
    pub fn finish_flush(&self, flush: Flush, ok: bool) {
        let _ = (flush, ok);
        todo!()
    }

    /// Asks for every dirty line to be written back (flush on demand).
    pub fn request_flush(&self) {
        todo!()
    }

    /// Dirty lines now (including lines being written back).
    pub fn dirty_lines(&self) -> u64 {
        todo!()
    }

    /// Changes the capacity (memory pressure: shrink; or grow back up to the configured capacity), evicting
    /// as needed and freeing the memory of whole chunks no longer used. Returns the new capacity in bytes.
    pub fn set_capacity(&self, bytes: u64) -> u64 {
        let _ = bytes;
        todo!()
    }

    /// Bytes of RAM the cache holds now (data chunks and metadata).
    pub fn memory_bytes(&self) -> u64 {
        todo!()
    }

    /// The counters so far.
    pub fn stats(&self) -> CacheStats {
        todo!()
    }
}
