//! The sweep document (`iolab.sweep/1`) and the pure logic behind it: the knee, the `--max-p99` point and
//! per-point trial statistics (mean, Student-t 95 % confidence interval, spread: [`iolab_stats::inference`]).
//! Its renderings (the printed table, shaped like the seeds' per-QD and per-block-size figures, and CSV) are
//! the exporters' ([`crate::export`]); steady-state detection is [`crate::steady`].
//!
//! `iolab sweep` (crates/cli/src/sweep.rs) runs one job per point and fills a [`SweepResult`]; everything
//! here only reads numbers, so it is unit-tested on fixed data (the tests at the end of this file). The
//! rules are documented once, in docs/SWEEPS.md, and restated on the functions that implement them.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use iolab_stats::inference;

use crate::model::RunResult;
use crate::steady::SteadyStateResult;

/// Schema identifier stored in [`SweepResult::schema`] (described by `docs/schema/iolab.sweep.v1.json`).
pub const SWEEP_SCHEMA: &str = "iolab.sweep/1";
/// Default knee rule, IOPS side: the next point gains less than this many percent of IOPS...
pub const DEFAULT_KNEE_IOPS_GAIN_PCT: f64 = 10.0;
/// ...while its p99 latency grows by more than this many percent.
pub const DEFAULT_KNEE_LAT_GROWTH_PCT: f64 = 20.0;

/// The whole sweep: its axes, every point's full run result, and the analysis.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SweepResult {
    /// Always [`SWEEP_SCHEMA`].
    pub schema: String,
    /// Version of iolab that produced the sweep.
    pub iolab_version: String,
    /// Start of the sweep, RFC 3339 UTC.
    pub started_at: String,
    /// The sweep was stopped early (Ctrl-C): `points` holds the points that ran (the last one may be partial).
    pub partial: bool,
    /// Base seed: trial `t` (0-based) of every point runs with seed `base_seed + t` (wrapping).
    pub base_seed: u64,
    /// Runs per point (`--trials`).
    pub trials: u32,
    /// The swept fields, outermost first; the last one varies fastest.
    pub axes: Vec<SweepAxis>,
    /// The load axis the knee and `--max-p99` are computed along (`qd`, `workers` or `rate`), if any is swept.
    pub load_axis: Option<String>,
    /// Number of points the sweep planned (`points` is shorter when interrupted).
    pub points_planned: usize,
    /// Preconditioning run before the first point (`--steady-state`), if asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preconditioning: Option<SteadyStateResult>,
    /// One entry per point, in run order.
    pub points: Vec<SweepPoint>,
    /// The knee of each line of the load axis; `None` when no load axis is swept.
    pub knee: Option<KneeReport>,
    /// The highest load whose p99 stays within `--max-p99`, per line; `None` when not asked or no load axis.
    pub max_p99: Option<MaxP99Report>,
}

/// One swept field.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SweepAxis {
    /// The job key (as in a job file: `qd`, `bs`, `read_pct`, ...).
    pub key: String,
    /// The values, as text the key accepts, in run order.
    pub values: Vec<String>,
}

/// One point of the sweep.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SweepPoint {
    /// Position in the sweep, from 0.
    pub index: usize,
    /// The swept fields' values at this point (job key -> text).
    pub params: BTreeMap<String, String>,
    /// The line this point belongs to: points sharing every non-load value form one line along the load axis.
    pub line: usize,
    /// The load axis value as a number (qd, workers, or IOPS for rate); `None` without a load axis.
    pub load: Option<f64>,
    /// The full run result of the point (with `--trials N`, of its first trial).
    pub result: RunResult,
    /// Each trial's headline numbers (only with `--trials` above 1).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub trials: Vec<TrialMetrics>,
    /// Per metric: mean over the trials, 95 % confidence interval and spread.
    pub summary: PointSummary,
}

/// The headline numbers of one run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrialMetrics {
    /// The run's seed.
    pub seed: u64,
    /// The run was interrupted.
    pub partial: bool,
    /// All ops per second.
    pub iops: f64,
    /// 10^6 bytes per second.
    pub mb_s: f64,
    /// Mean response time of all ops, ns; None (null) when no op succeeded.
    pub lat_mean_ns: Option<f64>,
    /// p99 response time of all ops, ns; None (null) when no op succeeded.
    pub lat_p99_ns: Option<f64>,
    /// Achieved queue depth (Little's law over all workers).
    pub achieved_depth: f64,
    /// Mean response time of reads, ns (None without reads): the seeds' cache tables report read latency.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_lat_mean_ns: Option<f64>,
    /// Runs with a block cache: read ops served from the cache, percent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_read_pct: Option<f64>,
    /// p99 of the run's flushes (fsync, fdatasync), ns; absent without flushes: a commit's durable part.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flush_p99_ns: Option<f64>,
}

impl TrialMetrics {
    /// The headline numbers of a run result.
    pub fn from_result(r: &RunResult) -> Self {
        let lat = r.total.all.lat_ns.as_ref();
        Self {
            seed: r.seed,
            partial: r.partial,
            iops: r.total.all.iops,
            mb_s: r.total.all.mb_s,
            lat_mean_ns: lat.map(|l| l.mean),
            lat_p99_ns: lat.map(|l| l.p99 as f64),
            achieved_depth: r.depth.achieved,
            read_lat_mean_ns: r.total.read.lat_ns.as_ref().map(|l| l.mean),
            cache_read_pct: r.cache.as_ref().map(|c| c.hit_ratio * 100.0),
            flush_p99_ns: r.total.flush.as_ref().and_then(|f| f.lat_ns.as_ref()).map(|l| l.p99 as f64),
        }
    }
}

/// Per-metric statistics over a point's trials.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PointSummary {
    /// Number of trials.
    pub n: u32,
    /// All ops per second.
    pub iops: MetricSummary,
    /// 10^6 bytes per second.
    pub mb_s: MetricSummary,
    /// Mean response time, ns; None (null) when a trial had no successful op.
    pub lat_mean_ns: Option<MetricSummary>,
    /// p99 response time, ns; None (null) when a trial had no successful op.
    pub lat_p99_ns: Option<MetricSummary>,
    /// Achieved queue depth.
    pub achieved_depth: MetricSummary,
    /// Mean response time of reads, ns; absent when a trial had no reads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_lat_mean_ns: Option<MetricSummary>,
    /// Read ops served from the block cache, percent; absent without a cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_read_pct: Option<MetricSummary>,
    /// p99 of the flushes, ns; absent when a trial had none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flush_p99_ns: Option<MetricSummary>,
}

impl PointSummary {
    /// Statistics over `trials` (at least one).
    pub fn from_trials(trials: &[TrialMetrics]) -> Self {
        let of = |f: fn(&TrialMetrics) -> f64| summarize(&trials.iter().map(f).collect::<Vec<f64>>());
        Self {
            n: trials.len() as u32,
            iops: of(|t| t.iops),
            mb_s: of(|t| t.mb_s),
            lat_mean_ns: optional(trials, |t| t.lat_mean_ns),
            lat_p99_ns: optional(trials, |t| t.lat_p99_ns),
            achieved_depth: of(|t| t.achieved_depth),
            read_lat_mean_ns: optional(trials, |t| t.read_lat_mean_ns),
            cache_read_pct: optional(trials, |t| t.cache_read_pct),
            flush_p99_ns: optional(trials, |t| t.flush_p99_ns),
        }
    }
}

/// Statistics of a metric that every trial has, or None.
fn optional(trials: &[TrialMetrics], f: fn(&TrialMetrics) -> Option<f64>) -> Option<MetricSummary> {
    let v: Option<Vec<f64>> = trials.iter().map(f).collect();
    v.filter(|v| !v.is_empty()).map(|v| summarize(&v))
}

/// Mean, 95 % confidence interval of the mean and spread of one metric over a point's trials.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MetricSummary {
    /// Arithmetic mean.
    pub mean: f64,
    /// Lower end of the two-sided 95 % confidence interval of the mean (Student t, n-1 degrees of freedom);
    /// `None` with fewer than 2 trials.
    pub ci95_low: Option<f64>,
    /// Upper end of the same interval.
    pub ci95_high: Option<f64>,
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
    /// Coefficient of variation: sample standard deviation / mean; `None` with fewer than 2 trials or a zero mean.
    pub cv: Option<f64>,
}

/// Mean, Student-t 95 % confidence interval (mean ± t_{0.975,n-1} · s/√n, s the sample standard deviation),
/// min, max and coefficient of variation (sample standard deviation / |mean|) of `values`, all as defined in
/// [`iolab_stats::inference`]. An empty slice gives zeros.
pub fn summarize(values: &[f64]) -> MetricSummary {
    if values.is_empty() {
        return MetricSummary { mean: 0.0, ci95_low: None, ci95_high: None, min: 0.0, max: 0.0, cv: None };
    }
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let ci = inference::confidence_interval_95(values);
    MetricSummary {
        mean: inference::mean(values),
        ci95_low: ci.map(|c| c.0),
        ci95_high: ci.map(|c| c.1),
        min,
        max,
        cv: inference::coefficient_of_variation(values),
    }
}

/// The knee along one line of the load axis, points in load order as `(iops, p99_ns)`: the first point `i`
/// such that going to point `i+1` gains less than `iops_gain_pct` % of IOPS while p99 latency grows by more
/// than `lat_growth_pct` %. Past the knee, more load buys latency, not throughput. `None` when no step
/// qualifies (the knee is beyond the sweep) or a point has no IOPS or no latency to compare against.
///
/// A knee must hold for the rest of the line: no later point may beat the knee's IOPS by `iops_gain_pct` %
/// or more (on noisy data one flat step followed by four times the IOPS is a dip, not a knee; issue 25).
pub fn find_knee(points: &[(f64, f64)], iops_gain_pct: f64, lat_growth_pct: f64) -> Option<usize> {
    (0..points.len().saturating_sub(1)).find(|&k| {
        let ((i0, l0), (i1, l1)) = (points[k], points[k + 1]);
        if !(i0 > 0.0 && l0 > 0.0) {
            return false;
        }
        let gain = (i1 - i0) / i0 * 100.0;
        let growth = (l1 - l0) / l0 * 100.0;
        let best_after = points[k + 1..].iter().map(|p| p.0).fold(0.0, f64::max);
        let holds = (best_after - i0) / i0 * 100.0 < iops_gain_pct;
        gain < iops_gain_pct && growth > lat_growth_pct && holds
    })
}

/// The highest load whose p99 stays within `limit_ns`, points in load order as p99 values: the last point
/// within the limit before p99 crosses it for good, that is at two points in a row or at the last point (a
/// later point that dips back under it after that does not count). A single point over the limit between
/// points within it is an outlier of a noisy run, not the end of the curve (issue 25: a first point's one
/// spike said "no load met the limit" though the next two did). `None` when no point qualifies.
pub fn find_max_p99(p99_ns: &[f64], limit_ns: f64) -> Option<usize> {
    let over = |i: usize| p99_ns.get(i).is_none_or(|&p| p > limit_ns);
    let end = (0..p99_ns.len()).find(|&i| over(i) && over(i + 1)).unwrap_or(p99_ns.len());
    (0..end).rev().find(|&i| !over(i))
}

/// The points of a line whose p99 was over `limit_ns` while a heavier point's was within it: the
/// answer's noise, said beside it.
pub fn p99_outliers(p99_ns: &[f64], limit_ns: f64, answer: Option<usize>) -> Vec<usize> {
    let Some(a) = answer else { return Vec::new() };
    (0..a).filter(|&i| p99_ns[i] > limit_ns).collect()
}

/// The knee of every line.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KneeReport {
    /// The load axis (`qd`, `workers` or `rate`).
    pub axis: String,
    /// The rule's IOPS gain threshold, percent.
    pub iops_gain_pct: f64,
    /// The rule's p99 growth threshold, percent.
    pub lat_growth_pct: f64,
    /// One entry per line, in run order.
    pub lines: Vec<LineMark>,
}

/// The `--max-p99` point of every line.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MaxP99Report {
    /// The load axis.
    pub axis: String,
    /// The p99 limit, ns.
    pub limit_ns: u64,
    /// One entry per line, in run order.
    pub lines: Vec<LineMark>,
}

/// The marked point of one line.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LineMark {
    /// The line's index.
    pub line: usize,
    /// The values of the non-load swept fields that define the line (empty with only a load axis).
    pub params: BTreeMap<String, String>,
    /// Index of the marked point in `points`; `None` when no point qualifies.
    pub point: Option<usize>,
    /// The load axis value at that point, as text.
    pub value: Option<String>,
}

impl SweepResult {
    /// The phases of a job (`[[phase]]` tables), run as the points of a sweep along the `phase` axis alone.
    pub fn is_phases(&self) -> bool {
        self.axes.len() == 1 && self.axes[0].key == "phase"
    }

    /// Computes [`SweepResult::knee`] and [`SweepResult::max_p99`] from the points' summaries (means over
    /// trials), per line, in load order. Without a load axis both are `None`.
    pub fn analyze(&mut self, iops_gain_pct: f64, lat_growth_pct: f64, max_p99_ns: Option<u64>) {
        let Some(axis) = self.load_axis.clone() else {
            self.knee = None;
            self.max_p99 = None;
            return;
        };
        let mut knee_lines = Vec::new();
        let mut p99_lines = Vec::new();
        for line in self.line_indices() {
            let mut pts: Vec<&SweepPoint> = self.points.iter().filter(|p| p.line == line).collect();
            pts.sort_by(|a, b| a.load.unwrap_or(0.0).total_cmp(&b.load.unwrap_or(0.0)));
            let mut params = pts.first().map(|p| p.params.clone()).unwrap_or_default();
            params.remove(&axis);
            let mark = |i: Option<usize>| LineMark {
                line,
                params: params.clone(),
                point: i.map(|i| pts[i].index),
                value: i.and_then(|i| pts[i].params.get(&axis).cloned()),
            };
            // A point without a latency (no op succeeded) passes no latency limit: its p99 counts as endless.
            let p99 = |p: &SweepPoint| p.summary.lat_p99_ns.as_ref().map_or(f64::INFINITY, |m| m.mean);
            let pairs: Vec<(f64, f64)> = pts.iter().map(|p| (p.summary.iops.mean, p99(p))).collect();
            knee_lines.push(mark(find_knee(&pairs, iops_gain_pct, lat_growth_pct)));
            if let Some(limit) = max_p99_ns {
                let p99: Vec<f64> = pairs.iter().map(|p| p.1).collect();
                p99_lines.push(mark(find_max_p99(&p99, limit as f64)));
            }
        }
        self.knee = Some(KneeReport { axis: axis.clone(), iops_gain_pct, lat_growth_pct, lines: knee_lines });
        self.max_p99 = max_p99_ns.map(|limit_ns| MaxP99Report { axis, limit_ns, lines: p99_lines });
    }

    /// The distinct line indices, in run order.
    fn line_indices(&self) -> Vec<usize> {
        let mut v: Vec<usize> = Vec::new();
        for p in &self.points {
            if !v.contains(&p.line) {
                v.push(p.line);
            }
        }
        v
    }

    /// The worker groups of the points, in first-seen order, when some point has more than one (a job with
    /// `[worker.db]` and `[worker.log]`); none otherwise. Tables show each beside the total.
    pub(crate) fn group_names(&self) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        for p in self.points.iter().filter(|p| p.result.groups.len() > 1) {
            for g in &p.result.groups {
                if !names.contains(&g.name) {
                    names.push(g.name.clone());
                }
            }
        }
        names
    }

    pub(crate) fn is_knee(&self, index: usize) -> bool {
        self.knee.as_ref().is_some_and(|k| k.lines.iter().any(|l| l.point == Some(index)))
    }

    pub(crate) fn is_max_p99(&self, index: usize) -> bool {
        self.max_p99.as_ref().is_some_and(|k| k.lines.iter().any(|l| l.point == Some(index)))
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::export::SWEEP_CSV_METRICS;
    use crate::tests::{csv, json, text};

    /// The emulated device's curve: 100 µs per I/O, 8 servers, so IOPS = qd / 100 µs up to 80,000.
    fn sim_curve() -> Vec<(f64, f64)> {
        [1u32, 2, 4, 8, 16, 32, 64]
            .iter()
            .map(|&qd| {
                let iops = (qd as f64 * 10_000.0).min(80_000.0);
                let p99 = 100_000.0 * (qd as f64 / 8.0).max(1.0);
                (iops, p99)
            })
            .collect()
    }

    #[test]
    fn knee_on_capped_curve_is_at_the_cap() {
        assert_eq!(find_knee(&sim_curve(), 10.0, 20.0), Some(3)); // qd 8
    }

    #[test]
    fn knee_beyond_sweep_is_none() {
        let linear: Vec<(f64, f64)> = (1..6).map(|i| (i as f64 * 1000.0, 100.0)).collect();
        assert_eq!(find_knee(&linear, 10.0, 20.0), None);
    }

    #[test]
    fn knee_needs_both_conditions() {
        // Flat IOPS but flat latency too: no knee (e.g. an open-loop rate beyond what is offered).
        assert_eq!(find_knee(&[(100.0, 10.0), (101.0, 11.0), (102.0, 12.0)], 10.0, 20.0), None);
        // Latency grows but IOPS too: not a knee.
        assert_eq!(find_knee(&[(100.0, 10.0), (150.0, 20.0)], 10.0, 20.0), None);
    }

    #[test]
    fn knee_skips_zero_iops_points() {
        assert_eq!(find_knee(&[(0.0, 0.0), (0.0, 10.0), (100.0, 10.0), (100.0, 20.0)], 10.0, 20.0), Some(2));
    }

    #[test]
    fn max_p99_is_last_of_leading_run_within_limit() {
        let p99: Vec<f64> = sim_curve().iter().map(|p| p.1).collect();
        assert_eq!(find_max_p99(&p99, 300_000.0), Some(4)); // qd 16: 200 µs; qd 32: 400 µs
        assert_eq!(find_max_p99(&p99, 100_000.0), Some(3)); // the limit itself counts
        assert_eq!(find_max_p99(&p99, 50_000.0), None);
        assert_eq!(find_max_p99(&[1.0, 5.0, 6.0, 2.0], 3.0), Some(0), "a dip after crossing does not count");
    }

    /// Issue 25, item 4: on noisy data one point over the limit between points within it is an outlier, not
    /// the end of the curve; two in a row, or the heaviest point, end it. The outliers are said.
    #[test]
    fn max_p99_survives_one_noisy_point() {
        // QD 1 spiked over 2 ms; QD 2 and 4 were within; QD 8 and up over.
        let p99 = [2.4e6, 0.9e6, 1.5e6, 3.0e6, 5.0e6];
        assert_eq!(find_max_p99(&p99, 2e6), Some(2));
        assert_eq!(p99_outliers(&p99, 2e6, Some(2)), vec![0]);
        assert_eq!(find_max_p99(&[1.0, 5.0, 2.0], 3.0), Some(2), "one excursion, then within to the end");
        assert_eq!(find_max_p99(&[1.0, 2.0, 5.0], 3.0), Some(1), "the heaviest point over ends it");
    }

    /// Issue 25, item 4: IOPS flat from QD 4 to 8 with p99 up, then rising fourfold to QD 64, is a dip of a
    /// noisy run, not a knee: a knee must hold for the rest of the line.
    #[test]
    fn a_knee_must_hold_for_the_rest_of_the_line() {
        let noisy = [
            (5_000.0, 1e5),
            (9_000.0, 1.2e5),
            (14_000.0, 2e5),
            (14_600.0, 4e5),
            (30_000.0, 5e5),
            (56_000.0, 6e5),
        ];
        assert_eq!(find_knee(&noisy, 10.0, 20.0), None);
        let mut capped = noisy;
        capped[4].0 = 14_800.0;
        capped[5].0 = 15_000.0;
        assert_eq!(find_knee(&capped, 10.0, 20.0), Some(2));
    }

    #[test]
    fn summarize_three_trials_gives_student_t_interval() {
        let s = summarize(&[90.0, 100.0, 110.0]);
        assert_eq!(s.mean, 100.0);
        // s = 10, t(0.975, 2) = 4.303, half-width = 4.303 * 10 / sqrt(3) = 24.843
        let half = 4.303 * 10.0 / 3f64.sqrt();
        assert!((s.ci95_high.unwrap() - (100.0 + half)).abs() < 1e-9);
        assert!((s.ci95_low.unwrap() - (100.0 - half)).abs() < 1e-9);
        assert_eq!((s.min, s.max), (90.0, 110.0));
        assert!((s.cv.unwrap() - 0.1).abs() < 1e-12);
    }

    #[test]
    fn summarize_one_value_has_no_interval() {
        let s = summarize(&[5.0]);
        assert_eq!((s.mean, s.ci95_low, s.cv), (5.0, None, None));
        assert_eq!(summarize(&[]).mean, 0.0);
    }

    pub(crate) fn sample_sweep() -> SweepResult {
        let base = crate::tests::sample();
        let qds = ["1", "2", "4", "8", "16", "32", "64"];
        let points = sim_curve()
            .iter()
            .zip(qds)
            .enumerate()
            .map(|(i, (&(iops, p99), qd))| {
                let mut result = base.clone();
                result.total.all.iops = iops;
                let t = TrialMetrics {
                    seed: 1,
                    partial: false,
                    iops,
                    mb_s: iops * 4096.0 / 1e6,
                    lat_mean_ns: Some(p99),
                    lat_p99_ns: Some(p99),
                    achieved_depth: qd.parse().unwrap(),
                    read_lat_mean_ns: None,
                    cache_read_pct: None,
                    flush_p99_ns: None,
                };
                SweepPoint {
                    index: i,
                    params: BTreeMap::from([("qd".to_string(), qd.to_string())]),
                    line: 0,
                    load: Some(qd.parse().unwrap()),
                    result,
                    trials: vec![],
                    summary: PointSummary::from_trials(&[t]),
                }
            })
            .collect();
        SweepResult {
            schema: SWEEP_SCHEMA.into(),
            iolab_version: "0.1.0".into(),
            started_at: "2025-01-02T03:04:05Z".into(),
            partial: false,
            base_seed: 1,
            trials: 1,
            axes: vec![SweepAxis { key: "qd".into(), values: qds.map(String::from).to_vec() }],
            load_axis: Some("qd".into()),
            points_planned: 7,
            preconditioning: None,
            points,
            knee: None,
            max_p99: None,
        }
    }

    #[test]
    fn analyze_marks_knee_and_max_p99() {
        let mut s = sample_sweep();
        s.analyze(10.0, 20.0, Some(300_000));
        let k = s.knee.as_ref().unwrap();
        assert_eq!(k.lines[0].point, Some(3));
        assert_eq!(k.lines[0].value.as_deref(), Some("8"));
        assert_eq!(s.max_p99.as_ref().unwrap().lines[0].value.as_deref(), Some("16"));
        let text = text(&s);
        let knee_row = text.lines().find(|l| l.contains("◀ knee")).unwrap();
        assert!(knee_row.trim_start().starts_with("8 "), "{text}");
        assert!(text.contains("◀ max p99 ≤ 300 µs"), "{text}");
        assert!(
            text.contains("knee (qd; first point after which IOPS gains < 10% while p99 grows > 20%): 8"),
            "{text}"
        );
    }

    /// Issue 25, item 4: each point's warnings are printed with the sweep (they were only in its JSON), with
    /// the advice to take trials when points were noisy; lighter loads over the p99 limit are named.
    #[test]
    fn the_sweep_text_says_each_points_warnings_and_the_answers_noise() {
        let mut s = sample_sweep();
        s.points[2].result.warnings =
            vec![iolab_stats::Warning::HighVariability { metric: "iops".into(), cv: 0.4, ramp_s: None }];
        s.points[0].summary.lat_p99_ns.as_mut().unwrap().mean = 400_000.0;
        s.analyze(10.0, 20.0, Some(300_000));
        assert_eq!(s.max_p99.as_ref().unwrap().lines[0].value.as_deref(), Some("16"), "one spike is noise");
        let t = text(&s);
        assert!(t.contains("warning: qd=4: iops varied a lot"), "{t}");
        assert!(t.contains("--trials 3"), "{t}");
        assert!(t.contains("p99 was over the limit at lighter load (qd=1)"), "{t}");
    }

    /// Issue 25, item 5: a sweep of a job with groups shows each group beside the total (the FabricCache
    /// sweep's headline IOPS were mostly the log worker's cached reads; the database's own were hidden).
    #[test]
    fn a_sweep_of_a_job_with_groups_shows_each_group() {
        let mut s = sample_sweep();
        for (i, p) in s.points.iter_mut().enumerate() {
            let mut db = p.result.groups[0].clone();
            db.name = "db".into();
            db.total.all.iops = 800.0 + 100.0 * i as f64;
            let mut log = db.clone();
            log.name = "log".into();
            log.total.all.iops = 31_000.0;
            p.result.groups = vec![db, log];
        }
        let t = text(&s);
        let header = t.lines().find(|l| l.contains("IOPS")).unwrap();
        assert!(
            header.contains("db IOPS") && header.contains("log IOPS") && header.contains("db mean"),
            "{t}"
        );
        assert!(t.contains("1,000.0") && t.contains("31,000.0"), "each group's IOPS: {t}");
    }

    #[test]
    fn analyze_without_load_axis_computes_nothing() {
        let mut s = sample_sweep();
        s.load_axis = None;
        s.analyze(10.0, 20.0, Some(1));
        assert!(s.knee.is_none() && s.max_p99.is_none());
        assert!(text(&s).contains("knee: not computed"));
    }

    #[test]
    fn csv_has_one_row_per_point_and_marks() {
        let mut s = sample_sweep();
        s.analyze(10.0, 20.0, None);
        let csv = csv(&s);
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines.len(), 8);
        assert_eq!(lines[0], format!("qd,{SWEEP_CSV_METRICS}"));
        let knee_cols: Vec<&str> = lines[4].split(',').collect();
        assert_eq!(knee_cols[0], "8");
        let header: Vec<&str> = lines[0].split(',').collect();
        let knee_at = header.iter().position(|h| *h == "knee").unwrap();
        assert_eq!(knee_cols[knee_at], "true");
        assert_eq!(knee_cols.len(), lines[0].split(',').count());
    }

    #[test]
    fn json_matches_the_sweep_schema() {
        let schema: serde_json::Value = serde_json::from_str(crate::schema_check::SWEEP_SCHEMA).unwrap();
        assert_eq!(schema["properties"]["schema"]["const"], SWEEP_SCHEMA);
        let mut s = sample_sweep();
        s.trials = 2;
        let t = TrialMetrics::from_result(&s.points[0].result);
        s.points[0].trials = vec![t.clone(), t];
        s.points[0].summary = PointSummary::from_trials(&s.points[0].trials);
        s.analyze(10.0, 20.0, Some(300_000));
        let v = serde_json::to_value(&s).unwrap();
        assert!(v["points"][0]["summary"]["iops"]["ci95_low"].is_number());
        crate::schema_check::check_document(&v, crate::schema_check::SWEEP_SCHEMA);
        let props = schema["properties"].as_object().unwrap();
        for k in props.keys().filter(|k| *k != "preconditioning") {
            assert!(v.get(k).is_some(), "{k} is declared but not serialised");
        }
    }

    #[test]
    fn json_round_trips() {
        let mut s = sample_sweep();
        s.analyze(10.0, 20.0, Some(300_000));
        let back: SweepResult = serde_json::from_str(&json(&s)).unwrap();
        assert_eq!(back, s);
    }
}
