//! The block cache's counters (`iolab-cache`'s `Cache::stats`), as a result's `cache` block carries them.

use serde::{Deserialize, Serialize};

/// Counters of one run's cache, as the result reports them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
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
    /// Bytes of the writes absorbed (write-back).
    #[serde(default)]
    pub absorbed_bytes: u64,
    /// Write-back writes of whole lines sent to the target because the cache had no room for them (every
    /// line cached, the write-back reserve full of dirty lines waiting for the target): the cache was full.
    #[serde(default)]
    pub writes_forwarded_full: u64,
    /// The most lines dirty at once (write-back).
    #[serde(default)]
    pub peak_dirty_lines: u64,
    /// Dirty lines when the run ended, before the exit write-back.
    pub dirty_at_end: u64,
    /// Capacity now, in bytes (after any shrink).
    pub capacity_bytes: u64,
    /// Lines cached now.
    pub lines: u64,
    /// Index and policy memory per line of capacity, in bytes, measured from the structures' sizes.
    pub metadata_bytes_per_line: f64,
    /// RAM the cache holds (data chunks and metadata), as `Cache::memory_bytes`.
    #[serde(default)]
    pub memory_bytes: u64,
    /// Write-backs on demand asked for (`Cache::request_write_back`, `kill -USR1`). Named `flush_requests`
    /// in the result document (its JSON Schema and every saved result).
    #[serde(default, rename = "flush_requests")]
    pub write_back_requests: u64,
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
