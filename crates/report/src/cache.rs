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
    /// Where the store lives: "mem" (RAM) or the emulated cache device that timed hits.
    pub device: String,
    /// Capacity asked for (after resolving a percentage and the memory cap).
    pub configured_bytes: u64,
    /// Line lookups that hit / all line lookups of reads (0-1).
    pub hit_ratio: f64,
    /// Read ops served from the cache, percent of read ops.
    pub reads_from_cache_pct: f64,
    /// The counters (capacity at the end, lines, hits, misses, write-backs, evictions, bypassed, ...).
    #[serde(flatten)]
    pub counters: iolab_cache::CacheStats,
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
