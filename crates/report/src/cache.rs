//! The block cache's part of a result (`cache`): what was configured, the counters, where reads were served
//! from and at what latency, and what happened to memory.

use iolab_stats::LatSummary;
use serde::{Deserialize, Serialize};

/// `cache` in `iolab.result/1`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CacheResult {
    /// write-through, write-around, write-back or read-only.
    pub mode: String,
    /// lru, arc or s3-fifo.
    pub policy: String,
    /// Bytes per line.
    pub line_bytes: u32,
    /// Where the store lives: "mem" (RAM), the emulated cache device that timed hits, or the path of the real
    /// cache device that carried the cache's I/O (`--cache-dev PATH`).
    pub device: String,
    /// Capacity asked for (after resolving a percentage and the memory cap).
    pub configured_bytes: u64,
    /// Read ops served from the cache / all read ops, in the measurement window (0-1): the seeds' "reads from
    /// cache" share.
    pub hit_ratio: f64,
    /// Read ops served from the cache in the window.
    pub window_reads_from_cache: u64,
    /// Read ops served by the target in the window.
    pub window_reads_from_target: u64,
    /// The cache's own counters, over the whole run (ramp and exit flush included): line lookups (`hits`,
    /// `misses`), read ops by source, write-backs, evictions, bypassed ops, capacity and lines at the end,
    /// metadata per line.
    #[serde(flatten)]
    pub counters: iolab_cache::CacheStats,
    /// Dirty lines still in the cache after the workers' exit flush (write-backs that failed); 0 on a clean run.
    pub dirty_after_exit: u64,
    /// Response time of reads by source, in the window.
    pub latency: CacheLatency,
    /// Times the cache shrank because memory ran low (`--cache-shrink`).
    #[serde(default)]
    pub shrinks: Vec<CacheShrink>,
}

/// Read response times by where the data came from.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CacheLatency {
    /// Reads served from the cache.
    pub from_cache: Option<LatSummary>,
    /// Reads served by the target.
    pub from_target: Option<LatSummary>,
}

/// One shrink of the cache under memory pressure.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CacheShrink {
    /// Seconds since the measurement started (negative: during the ramp).
    pub t_s: f64,
    /// MemAvailable that triggered it.
    pub mem_available_bytes: u64,
    /// Capacity after shrinking.
    pub capacity_bytes: u64,
}
