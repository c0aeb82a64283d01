//! Per-op-kind accumulator: what one worker (or a merge of workers) measured for reads or writes.
//!
//! The engine calls [`OpStats::record_ok`] / [`OpStats::record_error`] once per completion in the
//! measurement window; the cli merges workers with [`OpStats::merge`] and hands the result to
//! the report. Bytes are the *actual* bytes from the completion, never the requested length.

use std::collections::BTreeMap;

use crate::histogram::LatencyHistogram;

/// What one worker (or a merge of workers) measured for one op kind (read or write) in the
/// measurement window.
#[derive(Clone, Debug)]
pub struct OpStats {
    /// Completed ops that returned >= 0 (including short ones).
    pub ops: u64,
    /// Actual bytes transferred (from the completion result), not the requested length.
    pub bytes: u64,
    /// Completions with 0 <= result < requested length.
    pub short: u64,
    /// Completions with result < 0.
    pub errors: u64,
    /// Positive errno -> count. Only touched on error, where allocating is fine.
    pub errors_by_errno: BTreeMap<i32, u64>,
    /// Response time: intended start -> completion (includes queueing delay in open loop).
    pub lat: LatencyHistogram,
    /// Service time: submission -> completion.
    pub service_lat: LatencyHistogram,
}

impl Default for OpStats {
    fn default() -> Self {
        Self::new()
    }
}

impl OpStats {
    /// Empty stats with two fine histograms (allocated here, never in the record path).
    pub fn new() -> Self {
        Self {
            ops: 0,
            bytes: 0,
            short: 0,
            errors: 0,
            errors_by_errno: BTreeMap::new(),
            lat: LatencyHistogram::new(),
            service_lat: LatencyHistogram::new(),
        }
    }

    /// Records a successful (possibly short) completion. Hot path: no allocation.
    #[inline]
    pub fn record_ok(&mut self, requested: u32, result_bytes: u32, lat_ns: u64, service_ns: u64) {
        self.ops += 1;
        self.bytes += u64::from(result_bytes);
        if result_bytes < requested {
            self.short += 1;
        }
        self.lat.record(lat_ns);
        self.service_lat.record(service_ns);
    }

    /// Records a failed completion. `errno` may be given as `-errno` (the raw CQE result) or
    /// `errno`; it is stored positive.
    pub fn record_error(&mut self, errno: i32) {
        self.errors += 1;
        *self.errors_by_errno.entry(errno.saturating_abs()).or_insert(0) += 1;
    }

    /// Adds `other` into `self`; histograms are merged, never averaged.
    pub fn merge(&mut self, other: &OpStats) {
        self.ops += other.ops;
        self.bytes += other.bytes;
        self.short += other.short;
        self.errors += other.errors;
        for (&errno, &n) in &other.errors_by_errno {
            *self.errors_by_errno.entry(errno).or_insert(0) += n;
        }
        self.lat.merge(&other.lat);
        self.service_lat.merge(&other.service_lat);
        debug_assert!(self.short <= self.ops, "short completions are completions");
        debug_assert_eq!(
            self.errors,
            self.errors_by_errno.values().sum::<u64>(),
            "every error has its errno"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn op_stats_short_completion_counts_actual_bytes() {
        let mut s = OpStats::new();
        s.record_ok(4096, 4096, 10_000, 9_000);
        s.record_ok(4096, 512, 20_000, 19_000);
        assert_eq!((s.ops, s.bytes, s.short), (2, 4608, 1));
        assert_eq!(s.lat.count(), 2);
        assert_eq!(s.service_lat.max(), 19_000);
    }

    #[test]
    fn op_stats_error_is_counted_by_positive_errno() {
        let mut s = OpStats::new();
        s.record_error(-5);
        s.record_error(5);
        s.record_error(28);
        assert_eq!(s.errors, 3);
        assert_eq!(s.errors_by_errno, BTreeMap::from([(5, 2), (28, 1)]));
        assert_eq!(s.ops, 0);
        assert_eq!(s.lat.count(), 0, "errors are not latency samples");
    }

    #[test]
    fn op_stats_merge_adds_counts_and_histograms() {
        let (mut a, mut b) = (OpStats::new(), OpStats::new());
        a.record_ok(4096, 4096, 1_000, 900);
        a.record_error(5);
        b.record_ok(4096, 4096, 3_000, 2_900);
        b.record_error(5);
        a.merge(&b);
        assert_eq!((a.ops, a.bytes, a.errors), (2, 8192, 2));
        assert_eq!(a.errors_by_errno[&5], 2);
        assert_eq!(a.lat.mean(), Some(2_000.0));
    }
}
