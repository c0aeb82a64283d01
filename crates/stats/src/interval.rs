//! Intervals and the time series: per-second (by default) throughput and latency over the run.
//!
//! Each worker accumulates an [`IntervalStats`] and flushes it to the cli thread once per
//! interval; the cli merges the workers' intervals of the same index, turns them into a
//! [`TimePoint`] and pushes it into a bounded [`TimeSeries`], which the report exports.

use crate::histogram::LatencyHistogram;

/// Default capacity of a [`TimeSeries`]: 4096 points (68 minutes at 1 s before the first
/// compaction), 4096 x 64 bytes = 256 KiB.
pub const DEFAULT_TIMESERIES_CAP: usize = 4096;

/// One worker's per-interval accumulator.
#[derive(Clone, Debug)]
pub struct IntervalStats {
    /// Interval number since measurement start (0-based).
    pub index: u64,
    /// Reads completed in this interval.
    pub read: IntervalOp,
    /// Writes completed in this interval.
    pub write: IntervalOp,
    /// Transactions (users-and-transactions runs only; zeros otherwise).
    pub txn: IntervalTxn,
    /// Reads served from the block cache in this interval (runs with a cache only; zero otherwise).
    pub cache_hits: u64,
    /// The run has a block cache: time points carry a hit ratio.
    pub cached: bool,
    /// Open loop: I/Os whose arrival was due and that were not yet issued when the interval closed (the queue
    /// of late arrivals waiting for a free slot). Merging sums them, so the merged backlog is the run's.
    pub backlog: u64,
    /// Flushes (fsync, fdatasync) completed in this interval.
    pub flushes: u64,
    /// Trims completed in this interval.
    pub trims: u64,
}

/// Transaction counters of one interval (LoadGen's `Task Dispatched/sec`, `Task Completed/sec`), and the
/// backlog when the interval closed. Merging sums them, so the merged backlog is the run's.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IntervalTxn {
    /// Transactions dispatched (arrived, in rate mode; started, in stress mode) in this interval.
    pub dispatched: u64,
    /// Transactions completed in this interval.
    pub completed: u64,
    /// Dispatched and not completed (queued + executing) when the interval closed.
    pub backlog: u64,
}

/// Counts and a coarse latency histogram for one op kind within one interval.
#[derive(Clone, Debug)]
pub struct IntervalOp {
    /// Completed ops.
    pub ops: u64,
    /// Actual bytes transferred.
    pub bytes: u64,
    /// Response-time histogram, coarse (2 significant digits, <= 1%).
    pub lat: LatencyHistogram,
}

impl Default for IntervalOp {
    fn default() -> Self {
        Self::new()
    }
}

impl IntervalOp {
    /// An empty interval of one op kind (a coarse histogram).
    pub fn new() -> Self {
        Self { ops: 0, bytes: 0, lat: LatencyHistogram::coarse() }
    }

    /// Adds `other` (the same op kind from another worker, or the other kind for an "all" view).
    pub fn merge(&mut self, other: &IntervalOp) {
        self.ops += other.ops;
        self.bytes += other.bytes;
        self.lat.merge(&other.lat);
    }

    fn reset(&mut self) {
        self.ops = 0;
        self.bytes = 0;
        self.lat.reset();
    }
}

impl IntervalStats {
    /// An empty interval (allocates two coarse histograms, ~74 KB).
    pub fn new(index: u64) -> Self {
        Self {
            index,
            read: IntervalOp::new(),
            write: IntervalOp::new(),
            txn: IntervalTxn::default(),
            cache_hits: 0,
            cached: false,
            backlog: 0,
            flushes: 0,
            trims: 0,
        }
    }

    /// Records one completion. Hot path: no allocation.
    #[inline]
    pub fn record(&mut self, is_write: bool, bytes: u64, lat_ns: u64) {
        let op = if is_write { &mut self.write } else { &mut self.read };
        op.ops += 1;
        op.bytes += bytes;
        op.lat.record(lat_ns);
    }

    /// Adds another worker's interval (normally of the same index) into `self`.
    pub fn merge(&mut self, other: &IntervalStats) {
        let ops = self.read.ops + self.write.ops + other.read.ops + other.write.ops;
        self.read.merge(&other.read);
        self.write.merge(&other.write);
        self.txn.dispatched += other.txn.dispatched;
        self.txn.completed += other.txn.completed;
        self.txn.backlog += other.txn.backlog;
        self.cache_hits += other.cache_hits;
        self.cached |= other.cached;
        self.backlog += other.backlog;
        self.flushes += other.flushes;
        self.trims += other.trims;
        debug_assert_eq!(self.read.ops + self.write.ops, ops, "an interval's merge keeps every op");
        debug_assert!(self.cache_hits <= self.read.ops + self.write.ops, "a cache hit is an op");
    }

    /// Empties the accumulator for reuse as interval `index`, keeping the allocations.
    pub fn reset(&mut self, index: u64) {
        self.index = index;
        self.read.reset();
        self.write.reset();
        self.txn = IntervalTxn::default();
        self.cache_hits = 0;
        self.backlog = 0;
        self.flushes = 0;
        self.trims = 0;
    }
}

/// One point of the time series, computed from the merged [`IntervalStats`] of all workers.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TimePoint {
    /// Start of the interval, seconds since measurement start.
    pub t_s: f64,
    /// Length of the interval in seconds (doubles each time the series is compacted).
    pub interval_s: f64,
    /// Reads per second.
    pub read_iops: f64,
    /// Writes per second.
    pub write_iops: f64,
    /// All ops per second.
    pub iops: f64,
    /// Throughput in 10^6 bytes per second.
    pub mb_s: f64,
    /// Mean response time of all ops in the interval (exact); None (null) when no op succeeded in it.
    pub lat_mean_ns: Option<f64>,
    /// p99 response time of all ops in the interval (coarse, <= 1%); None when no op succeeded in it. After
    /// compaction this is the maximum of the merged points' p99, an upper bound of the true p99.
    pub lat_p99_ns: Option<u64>,
    /// Runs with a block cache: the share of reads served from the cache (0-1); None without reads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_hit_ratio: Option<f64>,
    /// Flushes per second (not in `iops`, which is reads and writes); absent when none.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub flush_iops: f64,
    /// Trims per second (not in `iops`); absent when none.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub trim_iops: f64,
}

/// True for 0 (what serde skips).
fn is_zero(v: &f64) -> bool {
    *v == 0.0
}

impl TimePoint {
    /// Converts a merged interval of `interval_s` seconds. A non-positive or non-finite length
    /// gives zero rates rather than infinities (JSON cannot carry them).
    pub fn from_interval(s: &IntervalStats, interval_s: f64) -> Self {
        TimePoint::from_interval_part(s, interval_s, interval_s)
    }

    /// Converts the first `length_s` seconds of interval `s` (intervals of `interval_s` seconds): the last
    /// interval of a window that ends inside it. The point starts where the interval does (`index x
    /// interval_s`) and its rates are over `length_s`. A non-positive or non-finite length gives zero rates.
    pub fn from_interval_part(s: &IntervalStats, interval_s: f64, length_s: f64) -> Self {
        let valid = length_s.is_finite() && length_s > 0.0;
        let start_s =
            if interval_s.is_finite() && interval_s > 0.0 { s.index as f64 * interval_s } else { 0.0 };
        let per_s = |n: u64| if valid { n as f64 / length_s } else { 0.0 };
        let ops = s.read.ops + s.write.ops;
        let mut lat = s.read.lat.clone();
        lat.merge(&s.write.lat);
        Self {
            t_s: if valid { start_s } else { 0.0 },
            interval_s: if valid { length_s } else { 0.0 },
            read_iops: per_s(s.read.ops),
            write_iops: per_s(s.write.ops),
            iops: per_s(ops),
            mb_s: per_s(s.read.bytes + s.write.bytes) / 1e6,
            lat_mean_ns: lat.mean(),
            lat_p99_ns: lat.quantile(0.99),
            cache_hit_ratio: (s.cached && s.read.ops > 0).then(|| s.cache_hits as f64 / s.read.ops as f64),
            flush_iops: per_s(s.flushes),
            trim_iops: per_s(s.trims),
        }
    }

    /// Ops in the point (iops x interval length).
    fn ops(&self) -> f64 {
        self.iops * self.interval_s
    }

    /// Combines `self` with the point that follows it.
    fn absorb(&mut self, next: &TimePoint) {
        let interval_s = self.interval_s + next.interval_s;
        let rate = |a: f64, b: f64| {
            if interval_s > 0.0 {
                (a * self.interval_s + b * next.interval_s) / interval_s
            } else {
                0.0
            }
        };
        let (ops_a, ops_b) = (self.ops(), next.ops());
        let lat_mean_ns = match (self.lat_mean_ns, next.lat_mean_ns) {
            (Some(a), Some(b)) => Some((a * ops_a + b * ops_b) / (ops_a + ops_b)),
            (a, b) => a.or(b),
        };
        self.read_iops = rate(self.read_iops, next.read_iops);
        self.write_iops = rate(self.write_iops, next.write_iops);
        self.flush_iops = rate(self.flush_iops, next.flush_iops);
        self.trim_iops = rate(self.trim_iops, next.trim_iops);
        self.iops = rate(self.iops, next.iops);
        self.mb_s = rate(self.mb_s, next.mb_s);
        self.lat_mean_ns = lat_mean_ns;
        self.lat_p99_ns = self.lat_p99_ns.max(next.lat_p99_ns);
        let reads = |p: &TimePoint| p.read_iops * p.interval_s;
        self.cache_hit_ratio = match (self.cache_hit_ratio, next.cache_hit_ratio) {
            (Some(a), Some(b)) if reads(self) + reads(next) > 0.0 => {
                Some((a * reads(self) + b * reads(next)) / (reads(self) + reads(next)))
            }
            (a, b) => a.or(b),
        };
        self.interval_s = interval_s;
    }
}

/// Bounded time series: at most `cap` points, memory stays flat for any run length.
///
/// When full, adjacent pairs are merged (ops summed, rates and means weighted by time and ops,
/// p99 = max of the pair, an upper bound) and every later point covers twice as many raw
/// intervals, so `interval_s` doubles. The last point may be partially filled.
#[derive(Clone, Debug)]
pub struct TimeSeries {
    points: Vec<TimePoint>,
    cap: usize,
    /// Raw intervals per stored point.
    stride: u64,
    /// Raw intervals in the last stored point (<= stride).
    last_fill: u64,
}

impl Default for TimeSeries {
    fn default() -> Self {
        Self::new(DEFAULT_TIMESERIES_CAP)
    }
}

impl TimeSeries {
    /// An empty series holding at most `cap` points (at least 2).
    pub fn new(cap: usize) -> Self {
        let cap = cap.max(2);
        Self { points: Vec::with_capacity(cap), cap, stride: 1, last_fill: 0 }
    }

    /// Appends the next raw interval.
    pub fn push(&mut self, p: TimePoint) {
        debug_assert!(p.interval_s > 0.0, "an interval has a length");
        if self.last_fill < self.stride {
            if let Some(last) = self.points.last_mut() {
                last.absorb(&p);
                self.last_fill += 1;
                return;
            }
        }
        if self.points.len() >= self.cap {
            self.compact();
            if self.last_fill < self.stride {
                if let Some(last) = self.points.last_mut() {
                    last.absorb(&p);
                    self.last_fill += 1;
                    return;
                }
            }
        }
        self.points.push(p);
        self.last_fill = 1;
    }

    /// Merges `p`, the interval that follows the last point, into that point (rates and means weighted by
    /// time and ops, as compaction does); pushes it when the series is empty. For a last interval too short
    /// to be a point of its own.
    pub fn extend_last(&mut self, p: TimePoint) {
        match self.points.last_mut() {
            Some(last) => last.absorb(&p),
            None => self.push(p),
        }
    }

    /// Stored points, oldest first.
    pub fn points(&self) -> &[TimePoint] {
        &self.points
    }

    /// Raw intervals represented by each stored point (1, 2, 4, ...).
    pub fn stride(&self) -> u64 {
        self.stride
    }

    /// Merges adjacent pairs in place; called only when full and the last point is complete.
    fn compact(&mut self) {
        let old_len = self.points.len();
        let mut write = 0;
        let mut read = 0;
        while read < old_len {
            let mut p = self.points[read].clone();
            if read + 1 < old_len {
                p.absorb(&self.points[read + 1]);
            }
            self.points[write] = p;
            write += 1;
            read += 2;
        }
        self.points.truncate(write);
        self.last_fill = if old_len % 2 == 1 { self.stride } else { self.stride * 2 };
        self.stride *= 2;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(i: u64, ops: u64) -> TimePoint {
        let mut s = IntervalStats::new(i);
        for k in 0..ops {
            s.record(k % 4 == 0, 4096, 1_000 + i);
        }
        TimePoint::from_interval(&s, 1.0)
    }

    #[test]
    fn interval_record_merge_reset() {
        let mut a = IntervalStats::new(3);
        a.record(false, 4096, 1_000);
        a.record(true, 512, 2_000);
        let mut b = IntervalStats::new(3);
        b.record(false, 4096, 3_000);
        a.merge(&b);
        assert_eq!((a.read.ops, a.read.bytes, a.write.ops, a.write.bytes), (2, 8192, 1, 512));
        assert_eq!(a.read.lat.count(), 2);
        a.reset(4);
        assert_eq!((a.index, a.read.ops, a.write.lat.count()), (4, 0, 0));
    }

    #[test]
    fn time_point_from_interval_computes_rates() {
        let mut s = IntervalStats::new(2);
        for _ in 0..100 {
            s.record(false, 1_000_000, 1_000);
        }
        for _ in 0..100 {
            s.record(true, 1_000_000, 3_000);
        }
        let p = TimePoint::from_interval(&s, 0.5);
        assert_eq!(p.t_s, 1.0);
        assert_eq!((p.read_iops, p.write_iops, p.iops), (200.0, 200.0, 400.0));
        assert_eq!(p.mb_s, 400.0);
        assert_eq!(p.lat_mean_ns, Some(2_000.0));
        assert_eq!(p.lat_p99_ns, Some(3_000));
        let zero = TimePoint::from_interval(&s, 0.0);
        assert!(zero.iops == 0.0 && zero.mb_s.is_finite());
    }

    #[test]
    fn time_series_stays_bounded_and_preserves_total_ops() {
        let mut ts = TimeSeries::new(8);
        let mut total_ops = 0.0;
        let mut max_p99 = None;
        for i in 0..1001u64 {
            let p = point(i, i % 7 + 1);
            total_ops += p.iops * p.interval_s;
            max_p99 = max_p99.max(p.lat_p99_ns);
            ts.push(p);
            assert!(ts.points().len() <= 8);
        }
        let stored_ops: f64 = ts.points().iter().map(|p| p.iops * p.interval_s).sum();
        assert!((stored_ops - total_ops).abs() < 1e-6, "{stored_ops} vs {total_ops}");
        let stored_s: f64 = ts.points().iter().map(|p| p.interval_s).sum();
        assert!((stored_s - 1001.0).abs() < 1e-9);
        assert_eq!(ts.points()[0].interval_s, ts.stride() as f64);
        assert_eq!(ts.points().iter().map(|p| p.lat_p99_ns).max(), Some(max_p99));
        // Points stay contiguous in time.
        for w in ts.points().windows(2) {
            assert!((w[0].t_s + w[0].interval_s - w[1].t_s).abs() < 1e-9);
        }
    }

    #[test]
    fn time_point_of_a_partial_interval_starts_where_the_interval_does() {
        let mut s = IntervalStats::new(4);
        for _ in 0..50 {
            s.record(false, 4096, 1_000);
        }
        let p = TimePoint::from_interval_part(&s, 1.0, 0.25);
        assert_eq!((p.t_s, p.interval_s, p.iops), (4.0, 0.25, 200.0));
    }

    #[test]
    fn time_series_extend_last_keeps_ops_and_time() {
        let mut ts = TimeSeries::new(8);
        ts.push(point(0, 10));
        let mut s = IntervalStats::new(1);
        s.record(false, 4096, 1_000);
        ts.extend_last(TimePoint::from_interval_part(&s, 1.0, 0.1));
        let p = &ts.points()[0];
        assert_eq!(ts.points().len(), 1);
        assert!((p.interval_s - 1.1).abs() < 1e-12 && (p.iops * p.interval_s - 11.0).abs() < 1e-9);
    }

    #[test]
    fn time_series_merge_weights_mean_latency_by_ops() {
        let mut ts = TimeSeries::new(2);
        ts.push(point(0, 1)); // 1 op at 1000 ns
        ts.push(point(1, 3)); // 3 ops at 1001 ns
        ts.push(point(2, 0));
        let p = &ts.points()[0];
        assert_eq!(p.interval_s, 2.0);
        assert_eq!(p.iops, 2.0);
        assert!((p.lat_mean_ns.unwrap() - (1000.0 + 3.0 * 1001.0) / 4.0).abs() < 1e-9);
    }
}
