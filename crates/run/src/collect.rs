//! Interval collection while the workers run: each worker sends its intervals in order; an interval of the
//! whole run is complete when every worker sent it. Complete intervals go to the observer (live bars), to the
//! caller's interval hook (steady state, search steps) and into the run's time series ([`IntervalSeries`]);
//! per-worker intervals are also summed per group, for the group's largest per-interval mean response time.

use crate::layers::RunCache;
use crate::wire::WireInterval;
use crate::{env, IntervalHook, Observer};
use iolab_engine::WorkerEvent;
use iolab_plan::Plan;
use iolab_stats::{IntervalOp, IntervalStats, IntervalTxn, TimePoint, TimeSeries};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How often the collection loop wakes without a message (ticks, the stop flag, the memory watch).
const POLL: Duration = Duration::from_millis(100);

/// A window's last interval shorter than this share of an interval joins the point before it instead of
/// being a point of its own: a sliver's rate is noise (a steady-state or I/O-count run that ends 11 ms into
/// an interval). So a run of N seconds has N points of about one second each, as fio's `log_avg_msec=1000`.
const SHORT_TAIL_SHARE: f64 = 0.5;

/// How often the cache's memory watch runs (`--cache-shrink`), seconds.
const MEM_CHECK_PERIOD_S: f64 = 1.0;

/// What the run's collection loop gathered.
pub(crate) struct Collected {
    /// The run's time series, its last intervals still open.
    pub series: IntervalSeries,
    /// Per group: the largest per-interval mean response time of reads and of writes (ns).
    pub group_interval_max: Vec<(Option<f64>, Option<f64>)>,
    /// Process CPU time and instant when the measurement began (end of ramp), if it did.
    pub cpu_start: Option<((f64, f64), Instant)>,
    /// The block devices' counters (/proc/diskstats) when the measurement began.
    pub disks_at_start: Option<BTreeMap<String, iolab_device::diskstats::Counters>>,
    /// Over several hosts: this rank (0) told the others that its interval hook ended the measurement.
    pub announced: bool,
    /// Over several hosts: every group interval, for the merge over ranks of the maxima.
    pub group_kept: Option<Vec<GroupInterval>>,
    /// Intervals some worker never closed (an early stop).
    pending: BTreeMap<u64, (IntervalStats, usize)>,
    /// Group intervals some member never closed.
    group_pending: BTreeMap<(usize, u64), (IntervalStats, usize)>,
}

impl Collected {
    /// Folds the intervals some worker never closed (early stop) into the series and the group maxima: they
    /// still count.
    pub fn close_pending(&mut self) {
        for (k, (s, _)) in std::mem::take(&mut self.pending) {
            self.series.leftover(k, &s);
        }
        for ((g, _), (s, _)) in std::mem::take(&mut self.group_pending) {
            self.group_done(g, &s);
        }
    }

    /// Group `g`'s interval `s` is complete (or is all there is of it): into the group's maxima, and kept
    /// for the merge over ranks.
    fn group_done(&mut self, g: usize, s: &IntervalStats) {
        let gi = GroupInterval::of(g, s);
        gi.fold(&mut self.group_interval_max[g]);
        if let Some(kept) = self.group_kept.as_mut() {
            kept.push(gi);
        }
    }
}

/// One group's interval reduced to what its mean response times need: per op kind, the ops and their
/// summed response time (ns, exact).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct GroupInterval {
    /// The group's index.
    pub group: u32,
    /// The interval's number.
    pub index: u64,
    /// Reads, then writes: (ops, summed response time in ns).
    pub ops: [(u64, u64); 2],
}

impl GroupInterval {
    fn of(group: usize, s: &IntervalStats) -> GroupInterval {
        let part = |o: &IntervalOp| (o.lat.count(), u64::try_from(o.lat.sum_ns()).unwrap_or(u64::MAX));
        GroupInterval { group: group as u32, index: s.index, ops: [part(&s.read), part(&s.write)] }
    }

    /// Adds another rank's part of the same group interval.
    pub(crate) fn add(&mut self, other: &GroupInterval) {
        for (a, b) in self.ops.iter_mut().zip(other.ops) {
            *a = (a.0 + b.0, a.1.saturating_add(b.1));
        }
    }

    /// Folds the interval's mean read and write response times into the group's maxima.
    pub(crate) fn fold(&self, max: &mut (Option<f64>, Option<f64>)) {
        let mean = |(ops, sum): (u64, u64)| (ops > 0).then(|| sum as f64 / ops as f64);
        let keep =
            |m: &mut Option<f64>, x: Option<f64>| *m = x.map_or(*m, |x| Some(m.map_or(x, |m| m.max(x))));
        keep(&mut max.0, mean(self.ops[0]));
        keep(&mut max.1, mean(self.ops[1]));
    }
}

/// What the collection loop watches and whom it tells.
pub(crate) struct Watch<'a> {
    /// The stop flag.
    pub stop: &'a AtomicBool,
    /// Raised when the interval hook ends the measurement.
    pub finish: &'a AtomicBool,
    /// The live display.
    pub observer: &'a mut dyn Observer,
    /// The caller's interval hook.
    pub on_interval: Option<IntervalHook<'a>>,
    /// The run's cache, watched for memory.
    pub cache: Option<&'a mut RunCache>,
    /// Over several hosts: the ranks, asked whether another rank ended the measurement (`--stonewall`, or
    /// rank 0's interval hook), and told when rank 0's hook ends it.
    pub ranks: Option<&'a dyn crate::RunSync>,
}

/// Each worker's group, as an index in order of first appearance.
pub(crate) fn group_of(plan: &Plan) -> Vec<usize> {
    let mut names: Vec<&str> = Vec::new();
    plan.workers
        .iter()
        .map(|w| match names.iter().position(|n| *n == w.group) {
            Some(i) => i,
            None => {
                names.push(&w.group);
                names.len() - 1
            }
        })
        .collect()
}

/// Collects the workers' intervals until every worker is done (the channel closes); `wall_start` is when
/// they started.
pub(crate) fn collect(plan: &Plan, rx: &mpsc::Receiver<WorkerEvent>, w: Watch<'_>) -> Collected {
    let Watch { stop, finish, observer, mut on_interval, mut cache, ranks } = w;
    let group_of = group_of(plan);
    let n_groups = group_of.iter().max().map_or(0, |m| m + 1);
    let interval_ns = plan.interval_ns;
    let interval_s = interval_ns as f64 / 1e9;
    let cached = cache.is_some();
    // The time series is built as intervals finish, so memory stays flat however long the run: each finished
    // interval becomes a bounded `TimeSeries` point, except the latest, held until the next one finishes (the
    // last interval of the window may be partial, and its length is known only at the end). Loadgen runs keep
    // each interval's transaction counts (24 bytes) for the backlog chart.
    let mut c = Collected {
        series: IntervalSeries::new(interval_ns, plan.loadgen.is_some(), ranks.is_some()),
        group_interval_max: vec![(None, None); n_groups],
        cpu_start: None,
        disks_at_start: None,
        announced: false,
        group_kept: ranks.is_some().then(Vec::new),
        pending: BTreeMap::new(),
        group_pending: BTreeMap::new(),
    };
    let ramp = Duration::from_nanos(plan.ramp_ns);
    let virtual_time = plan.clock == iolab_spec::ClockKind::Virtual;
    let wall_start = Instant::now();
    let mut next_mem_check = 0.0f64;
    loop {
        if stop.load(Ordering::Relaxed) {
            observer.stopping();
        }
        observer.tick(wall_start.elapsed());
        // Over several hosts: another rank ended the measurement (--stonewall, or rank 0's hook).
        if ranks.is_some_and(|s| s.other_done()) {
            finish.store(true, Ordering::Relaxed);
        }
        if let Some(rc) = cache.as_deref_mut() {
            let t = wall_start.elapsed().as_secs_f64();
            if t >= next_mem_check {
                rc.watch_memory(t - ramp.as_secs_f64());
                next_mem_check = t + MEM_CHECK_PERIOD_S;
            }
        }
        if c.cpu_start.is_none() && (wall_start.elapsed() >= ramp || virtual_time) {
            c.cpu_start = Some((env::process_cpu_s(), Instant::now()));
            c.disks_at_start = Some(iolab_device::diskstats::read());
        }
        let (stats, worker) = match rx.recv_timeout(POLL) {
            Ok(WorkerEvent::Interval { stats, worker }) => (stats, worker),
            Err(mpsc::RecvTimeoutError::Timeout) => continue,
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        };
        let k = stats.index;
        if let Some(&g) = group_of.get(worker as usize) {
            let members = group_of.iter().filter(|&&x| x == g).count();
            if let Some(gs) = gather(&mut c.group_pending, (g, k), &stats, members, None) {
                c.group_done(g, &gs);
                observer.group_interval(g, &gs, interval_s);
            }
        }
        let Some(s) = gather(&mut c.pending, k, &stats, plan.workers.len(), Some(cached)) else { continue };
        observer.interval(&s, interval_s);
        if let Some(cb) = on_interval.as_deref_mut() {
            if cb(k, &TimePoint::from_interval(&s, interval_s)) {
                hook_ends(ranks, finish, &mut c.announced);
            }
        }
        c.series.finished(s);
    }
    c
}

/// The interval hook ends the measurement. Over several hosts rank 0's hook decides for every rank (it
/// tells the others once; they follow, as with `--stonewall`), so all ranks' windows end together; the
/// other ranks' hooks see their own intervals and do not decide.
fn hook_ends(ranks: Option<&dyn crate::RunSync>, finish: &AtomicBool, announced: &mut bool) {
    match ranks {
        None => finish.store(true, Ordering::Relaxed),
        Some(s) if s.rank() == 0 => {
            finish.store(true, Ordering::Relaxed);
            if !*announced {
                s.announce_done();
                *announced = true;
            }
        }
        Some(_) => {}
    }
}

/// Adds `stats` to the interval gathered under `key` (and sets its `cached` mark, when given); once `members`
/// parts are in, takes it out, complete.
fn gather<K: Ord + Copy>(
    pending: &mut BTreeMap<K, (IntervalStats, usize)>,
    key: K,
    stats: &IntervalStats,
    members: usize,
    cached: Option<bool>,
) -> Option<IntervalStats> {
    let e = pending.entry(key).or_insert_with(|| (IntervalStats::new(stats.index), 0));
    e.0.merge(stats);
    if let Some(cached) = cached {
        e.0.cached = cached;
    }
    e.1 += 1;
    if e.1 == members {
        pending.remove(&key).map(|(s, _)| s)
    } else {
        None
    }
}

/// The run's time series, built as intervals finish (see [`collect`]).
pub(crate) struct IntervalSeries {
    series: TimeSeries,
    interval_s: f64,
    /// The latest finished interval, not yet a point.
    held: Option<IntervalStats>,
    /// Intervals before this one are points.
    next: u64,
    /// Intervals some worker never closed (an early stop), merged at the end.
    tail: BTreeMap<u64, IntervalStats>,
    /// Per interval, the transaction counts (loadgen runs only).
    txn: Option<BTreeMap<u64, IntervalTxn>>,
    /// Over several hosts: every interval as it finished, and the parts some worker never closed, in their
    /// wire form (counts and encoded coarse histograms, a few hundred bytes each) for the merge over ranks.
    kept: Option<Vec<WireInterval>>,
}

impl IntervalSeries {
    /// A series of intervals of `interval_ns`; with `txn` keeping transaction counts, with `keep` every
    /// interval for the merge over ranks ([`IntervalSeries::take_kept`]).
    pub(crate) fn new(interval_ns: u64, txn: bool, keep: bool) -> IntervalSeries {
        IntervalSeries {
            series: TimeSeries::new(iolab_stats::DEFAULT_TIMESERIES_CAP),
            interval_s: interval_ns as f64 / 1e9,
            held: None,
            next: 0,
            tail: BTreeMap::new(),
            txn: txn.then(BTreeMap::new),
            kept: keep.then(Vec::new),
        }
    }

    /// The intervals kept for the merge over ranks, in the order they came (empty unless kept).
    pub(crate) fn take_kept(&mut self) -> Vec<WireInterval> {
        self.kept.take().unwrap_or_default()
    }

    /// Interval `s` is complete (every worker sent it); workers send theirs in order, so these come in order.
    pub(crate) fn finished(&mut self, s: IntervalStats) {
        debug_assert!(
            self.held.as_ref().is_none_or(|h| h.index < s.index) && s.index >= self.next,
            "complete intervals come in order, each once"
        );
        if let Some(k) = self.kept.as_mut() {
            k.push(WireInterval::of(&s));
        }
        if let Some(t) = self.txn.as_mut() {
            t.insert(s.index, s.txn);
        }
        if let Some(h) = self.held.take() {
            while self.next < h.index {
                self.series.push(TimePoint::from_interval(&IntervalStats::new(self.next), self.interval_s));
                self.next += 1;
            }
            self.series.push(TimePoint::from_interval(&h, self.interval_s));
            self.next = h.index + 1;
        }
        self.held = Some(s);
    }

    /// Part of interval `k` that not every worker sent.
    pub(crate) fn leftover(&mut self, k: u64, s: &IntervalStats) {
        if let Some(kept) = self.kept.as_mut() {
            kept.push(WireInterval::of(s));
        }
        self.tail.entry(k).or_insert_with(|| IntervalStats::new(k)).merge(s);
    }

    /// The series over `n` intervals of the `measured_s` window (the last may be partial), and the transaction
    /// counts per interval.
    pub(crate) fn finish(
        mut self,
        n: u64,
        measured_s: f64,
        cached: bool,
    ) -> (TimeSeries, BTreeMap<u64, IntervalTxn>) {
        if let Some(h) = self.held.take() {
            self.tail.entry(h.index).or_insert_with(|| IntervalStats::new(h.index)).merge(&h);
        }
        let mut txn = self.txn.take().unwrap_or_default();
        for k in self.next..n {
            let mut s = self.tail.remove(&k).unwrap_or_else(|| IntervalStats::new(k));
            s.cached = cached;
            txn.insert(k, s.txn);
            let this_s = (measured_s - k as f64 * self.interval_s).clamp(1e-9, self.interval_s);
            let p = TimePoint::from_interval_part(&s, self.interval_s, this_s);
            if k > 0 && this_s < self.interval_s * SHORT_TAIL_SHARE {
                self.series.extend_last(p);
            } else {
                self.series.push(p);
            }
        }
        (self.series, txn)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The series of a window of `measured_s` seconds, 1 s intervals, 100 reads in each.
    fn series_of(measured_s: f64) -> Vec<TimePoint> {
        let n = (measured_s.ceil() as u64).max(1);
        let mut series = IntervalSeries::new(1_000_000_000, false, false);
        for k in 0..n {
            let mut s = IntervalStats::new(k);
            for _ in 0..100 {
                s.record(false, 4096, 1_000);
            }
            series.finished(s);
        }
        series.finish(n, measured_s, false).0.points().to_vec()
    }

    #[test]
    fn series_partial_last_interval_starts_where_it_should() {
        let pts = series_of(2.5);
        let spans: Vec<(f64, f64)> = pts.iter().map(|p| (p.t_s, p.interval_s)).collect();
        assert_eq!(spans, [(0.0, 1.0), (1.0, 1.0), (2.0, 0.5)]);
        assert_eq!(pts[2].iops, 200.0);
    }

    #[test]
    fn series_short_tail_joins_the_point_before_it() {
        let pts = series_of(3.011);
        assert_eq!(pts.len(), 3, "{pts:?}");
        assert_eq!((pts[2].t_s, pts[1].interval_s), (2.0, 1.0));
        assert!((pts[2].interval_s - 1.011).abs() < 1e-9, "{pts:?}");
        let ops: f64 = pts.iter().map(|p| p.iops * p.interval_s).sum();
        assert!((ops - 400.0).abs() < 1e-6, "no op lost: {ops}");
        assert_eq!(series_of(0.2).len(), 1, "a window shorter than an interval is one point");
    }
}
