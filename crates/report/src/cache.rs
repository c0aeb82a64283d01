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
    /// The cache's own counters, over the whole run (ramp and exit write-back included): line lookups (`hits`,
    /// `misses`), read ops by source, write-backs, evictions, bypassed ops, capacity and lines at the end,
    /// metadata per line.
    #[serde(flatten)]
    pub counters: iolab_doc::CacheStats,
    /// Dirty lines still in the cache after the workers' exit write-back (write-backs that failed); 0 on a clean run.
    pub dirty_after_exit: u64,
    /// Response time of reads by source, in the window.
    pub latency: CacheLatency,
    /// Times the cache shrank because memory ran low (`--cache-shrink`).
    #[serde(default)]
    pub shrinks: Vec<CacheShrink>,
}

impl CacheResult {
    /// What the cache was and did, in three lines for people (the run's text, the Markdown and HTML reports):
    /// its kind and size with the share of the window's read requests it served (a request counts as served
    /// when every line it needs was cached: `iolab mrc --line` counts lines, and says so); read latency by where reads were
    /// served from; what it did with writes. The run's own numbers include its hits.
    pub fn summary_lines(&self) -> [String; 3] {
        use crate::format::{format_bytes, format_count, format_duration_ns};
        let k = &self.counters;
        let window_reads = self.window_reads_from_cache + self.window_reads_from_target;
        let share = if window_reads == 0 {
            0.0
        } else {
            100.0 * self.window_reads_from_cache as f64 / window_reads as f64
        };
        let lat = |l: &Option<LatSummary>| {
            l.as_ref().map_or("-".to_string(), |l| {
                format!("mean {} p99 {}", format_duration_ns(l.mean), format_duration_ns(l.p99 as f64))
            })
        };
        [
            format!(
                "{} {}, {} on {} ({} lines of {}): {share:.1}% of the window's reads from cache, counted in requests ({} from cache, {} from the target)",
                self.mode,
                self.policy,
                format_bytes(k.capacity_bytes),
                self.device,
                format_count(k.lines),
                format_bytes(self.line_bytes as u64),
                format_count(self.window_reads_from_cache),
                format_count(self.window_reads_from_target),
            ),
            format!(
                "read latency from cache {}{} · from the target {}",
                lat(&self.latency.from_cache),
                match (&self.latency.hit_service, &self.latency.hit_dispatch) {
                    (Some(_), Some(_)) => format!(
                        " (service {}, dispatch delay {})",
                        lat(&self.latency.hit_service),
                        lat(&self.latency.hit_dispatch)
                    ),
                    _ => String::new(),
                },
                lat(&self.latency.from_target)
            ),
            format!(
                "writes {} absorbed, {} to the target; write-backs {}; evictions {}; dirty at the end {}",
                format_count(k.writes_absorbed),
                format_count(k.writes_to_target),
                format_count(k.writebacks),
                format_count(k.evictions),
                format_count(k.dirty_at_end),
            ),
        ]
    }
}

/// Read response times by where the data came from.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CacheLatency {
    /// Reads served from the cache.
    pub from_cache: Option<LatSummary>,
    /// Reads served by the target.
    pub from_target: Option<LatSummary>,
    /// Reads served from the cache: their service time, from when the cache began serving them (a hit in
    /// RAM: its copy began; a hit timed by a cache device: its hand-over to it) to their completion.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hit_service: Option<LatSummary>,
    /// Reads served from the cache: their dispatch delay, from their intended start until the cache began
    /// serving them (iolab's own turn-around). `from_cache` is, op by op, the sum of the two.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hit_dispatch: Option<LatSummary>,
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
