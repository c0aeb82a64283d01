//! A sweep as a pure state machine: the cross product of the swept fields (the points, with the line and
//! load each has along the load axis), then every point run `trials` times with seeds counted from a base,
//! the trials folded into the sweep's points.
//!
//! What a value means (a list such as `1..64:x2`, a flag, a job key) is the binary's business: it parses the
//! flags into [`Axis`] values, builds each point's job from its values and runs the [`Trial`]s this module
//! asks for through a [`Runner`]. The analysis of the finished sweep (knee, `--max-p99`, confidence
//! intervals) is `iolab_report::sweep`. docs/SWEEPS.md is the user's guide.

use crate::runner::{ended_early, Runner};
use iolab_report::sweep::{PointSummary, SweepPoint, TrialMetrics};
use iolab_report::RunResult;
use std::collections::BTreeMap;

/// Most points one sweep may have (the product of the lists' lengths).
pub const MAX_POINTS: usize = 1000;

// A job's phases run as the points of one sweep.
const _: () = assert!(iolab_spec::MAX_PHASES <= MAX_POINTS);
/// Most trials per point.
pub const MAX_TRIALS: u32 = 100;
/// Load axes, outermost first: the knee is found along the innermost one swept.
pub const LOAD_KEYS: [&str; 3] = ["workers", "rate", "qd"];

/// One swept field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Axis {
    /// The job key (`qd`, `bs`, `read_pct`, ...).
    pub key: String,
    /// The flag the user typed (`--qd`, `--set read_pct`), for messages.
    pub flag: String,
    /// The values, as text the key accepts, in run order. A one-value axis is a plain setting: applied to
    /// every point, but not shown as swept.
    pub values: Vec<String>,
}

/// Puts the axes in cross-product order, outermost first: the fields that are not load fields (in the order
/// given), then workers, rate and qd.
pub fn order_axes(axes: &mut [Axis]) {
    axes.sort_by_key(|a| LOAD_KEYS.iter().position(|k| *k == a.key).map_or(0, |i| i + 1));
}

/// The load axis: the innermost load field swept over more than one value.
pub fn load_axis(axes: &[Axis]) -> Option<&str> {
    axes.iter()
        .rev()
        .find(|a| LOAD_KEYS.contains(&a.key.as_str()) && a.values.len() > 1)
        .map(|a| a.key.as_str())
}

/// A sweep that has too many points.
#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    /// The product of the lists' lengths is above [`MAX_POINTS`].
    #[error("the sweep has more than {MAX_POINTS} points ({sizes}); shorten a list or split the sweep")]
    TooManyPoints {
        /// Each axis's flag and length, `--qd 7 × --bs 12`.
        sizes: String,
    },
}

/// One point of the cross product.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    /// Each axis's value at this point, in axis order (one-value axes included).
    pub values: Vec<String>,
    /// The swept fields' values (job key -> text); one-value axes are left out.
    pub params: BTreeMap<String, String>,
    /// The line of the load axis this point is on: points that differ only in the load field share one.
    pub line: usize,
    /// The load field's value as a number, when there is a load axis.
    pub load: Option<f64>,
    /// The seed this point's job fixes, if any; its trials count from it instead of the base seed. `None`
    /// until the caller has built the point's job.
    pub seed: Option<u64>,
}

impl Point {
    /// `qd=8 bs=4k`, for messages.
    pub fn describe(&self) -> String {
        describe(&self.params)
    }
}

/// `qd=8 bs=4k`, for messages; `(no swept field)` without any.
pub fn describe(params: &BTreeMap<String, String>) -> String {
    if params.is_empty() {
        return "(no swept field)".into();
    }
    params.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" ")
}

/// Every point of the sweep, in run order: an odometer over the axes, the last axis varying fastest.
pub fn points(axes: &[Axis]) -> Result<Vec<Point>, SweepError> {
    let count =
        axes.iter().try_fold(1usize, |n, a| n.checked_mul(a.values.len()).filter(|&n| n <= MAX_POINTS));
    let Some(count) = count else {
        let sizes: Vec<String> = axes.iter().map(|a| format!("{} {}", a.flag, a.values.len())).collect();
        return Err(SweepError::TooManyPoints { sizes: sizes.join(" × ") });
    };
    let load_key = load_axis(axes);
    let mut points = Vec::with_capacity(count);
    let mut lines: Vec<BTreeMap<String, String>> = Vec::new();
    for i in 0..count {
        let mut rem = i;
        let mut values: Vec<String> = Vec::with_capacity(axes.len());
        for a in axes.iter().rev() {
            values.push(a.values[rem % a.values.len()].clone());
            rem /= a.values.len();
        }
        values.reverse();
        let params: BTreeMap<String, String> = axes
            .iter()
            .zip(&values)
            .filter(|(a, _)| a.values.len() > 1)
            .map(|(a, v)| (a.key.clone(), v.clone()))
            .collect();
        let mut line_key = params.clone();
        let load =
            load_key.and_then(|k| line_key.remove(k)).and_then(|v| iolab_spec::units::parse_count(&v).ok());
        let line = match lines.iter().position(|l| *l == line_key) {
            Some(l) => l,
            None => {
                lines.push(line_key);
                lines.len() - 1
            }
        };
        points.push(Point { values, params, line, load, seed: None });
    }
    Ok(points)
}

/// One run of a sweep: trial `trial` (from 0) of point `point` (an index into the sweep's points).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Trial {
    /// The point's index.
    pub point: usize,
    /// The trial, from 0.
    pub trial: u32,
    /// The run's seed: the point's own seed (else the base seed) plus the trial.
    pub seed: u64,
}

/// What a sweep's runs produced.
#[derive(Debug)]
pub struct SweepOutcome {
    /// The points run, in order; the last may have fewer trials when the sweep was interrupted.
    pub points: Vec<SweepPoint>,
    /// The sweep ended early (Ctrl-C, or a run that did).
    pub partial: bool,
}

/// The sweep's runs as a state machine: [`Sweep::next`] says which trial to run, [`Sweep::record`] folds its
/// result, [`Sweep::finish`] gives the points. [`run`] drives it with a [`Runner`].
#[derive(Debug)]
pub struct Sweep<'a> {
    points: &'a [Point],
    trials: u32,
    base_seed: u64,
    point: usize,
    trial: u32,
    results: Vec<RunResult>,
    done: Vec<SweepPoint>,
    partial: bool,
    ended: bool,
}

impl<'a> Sweep<'a> {
    /// A sweep of `points`, each run `trials` times (at least 1), seeds counted from `base_seed` where a
    /// point's job fixes none.
    pub fn new(points: &'a [Point], trials: u32, base_seed: u64) -> Self {
        Sweep {
            points,
            trials: trials.max(1),
            base_seed,
            point: 0,
            trial: 0,
            results: Vec::new(),
            done: Vec::new(),
            partial: false,
            ended: points.is_empty(),
        }
    }

    /// The next trial to run; `None` when the sweep is over.
    pub fn next(&self) -> Option<Trial> {
        if self.ended {
            return None;
        }
        let seed = self.points[self.point].seed.unwrap_or(self.base_seed).wrapping_add(self.trial as u64);
        Some(Trial { point: self.point, trial: self.trial, seed })
    }

    /// Folds the result of the trial [`Sweep::next`] asked for. `stop`: the run ended early, so the sweep
    /// ends here, partial, with the trials run so far.
    pub fn record(&mut self, result: RunResult, stop: bool) {
        if self.ended {
            return;
        }
        self.results.push(result);
        if stop {
            self.interrupt();
            return;
        }
        self.trial += 1;
        if self.trial == self.trials {
            self.fold_point();
            self.trial = 0;
            self.point += 1;
            self.ended = self.point == self.points.len();
        }
    }

    /// Ends the sweep before the next trial (Ctrl-C), partial; a point with some trials run is kept.
    pub fn interrupt(&mut self) {
        self.partial = true;
        self.fold_point();
        self.ended = true;
    }

    /// The points run so far and whether the sweep ended early.
    pub fn finish(self) -> SweepOutcome {
        SweepOutcome { points: self.done, partial: self.partial }
    }

    /// Turns the current point's trials (if any) into a [`SweepPoint`]: the first trial's result, every
    /// trial's metrics and their summary.
    fn fold_point(&mut self) {
        if self.results.is_empty() {
            return;
        }
        let mut results = std::mem::take(&mut self.results);
        let p = &self.points[self.point];
        let metrics: Vec<TrialMetrics> = results.iter().map(TrialMetrics::from_result).collect();
        let summary = PointSummary::from_trials(&metrics);
        let mut first = results.swap_remove(0);
        first.partial = first.partial || metrics.iter().any(|m| m.partial);
        self.done.push(SweepPoint {
            index: self.point,
            params: p.params.clone(),
            line: p.line,
            load: p.load,
            result: first,
            trials: if self.trials > 1 { metrics } else { Vec::new() },
            summary,
        });
    }
}

/// Runs every trial of `sweep` with `runner`, point after point, until done or stopped.
pub fn run<R: Runner<Trial> + ?Sized>(
    mut sweep: Sweep<'_>,
    runner: &mut R,
) -> Result<SweepOutcome, R::Error> {
    while let Some(trial) = sweep.next() {
        if runner.stop_requested() {
            sweep.interrupt();
            break;
        }
        let result = runner.run(trial)?;
        let stop = ended_early(runner, &result);
        sweep.record(result, stop);
    }
    Ok(sweep.finish())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::mock;

    fn axis(key: &str, values: &[&str]) -> Axis {
        Axis {
            key: key.into(),
            flag: format!("--{key}"),
            values: values.iter().map(|v| v.to_string()).collect(),
        }
    }

    /// Runs every trial, recording what it was asked; stops (Ctrl-C) after `stop_after` runs if given, or
    /// returns a partial result at run `partial_at`.
    struct MockRunner {
        asked: Vec<Trial>,
        stop_after: Option<usize>,
        partial_at: Option<usize>,
    }

    impl MockRunner {
        fn new() -> Self {
            MockRunner { asked: Vec::new(), stop_after: None, partial_at: None }
        }
    }

    impl Runner<Trial> for MockRunner {
        type Error = String;
        fn run(&mut self, trial: Trial) -> Result<RunResult, String> {
            self.asked.push(trial);
            let mut r = mock::result();
            r.seed = trial.seed;
            r.total.all.iops = 1000.0 * (trial.point + 1) as f64 + trial.trial as f64;
            r.partial = self.partial_at == Some(self.asked.len());
            Ok(r)
        }
        fn stop_requested(&self) -> bool {
            self.stop_after.is_some_and(|n| self.asked.len() >= n)
        }
    }

    #[test]
    fn points_two_axes_cross_product_last_axis_fastest() {
        let mut axes = vec![axis("qd", &["1", "2", "4"]), axis("bs", &["4K", "8K"])];
        order_axes(&mut axes);
        assert_eq!(axes[0].key, "bs", "non-load fields outermost");
        let p = points(&axes).unwrap();
        let got: Vec<String> = p.iter().map(Point::describe).collect();
        assert_eq!(got, ["bs=4K qd=1", "bs=4K qd=2", "bs=4K qd=4", "bs=8K qd=1", "bs=8K qd=2", "bs=8K qd=4"]);
        assert_eq!(p.iter().map(|p| p.line).collect::<Vec<_>>(), [0, 0, 0, 1, 1, 1]);
        assert_eq!(p[2].load, Some(4.0));
    }

    #[test]
    fn points_one_value_axis_applied_but_not_swept() {
        let axes = vec![axis("rw", &["randwrite"]), axis("qd", &["1", "2"])];
        let p = points(&axes).unwrap();
        assert_eq!(p[1].values, ["randwrite", "2"]);
        assert_eq!(p[1].describe(), "qd=2");
        assert_eq!(load_axis(&axes), Some("qd"));
        assert_eq!(points(&[axis("rw", &["read"])]).unwrap()[0].describe(), "(no swept field)");
    }

    #[test]
    fn points_over_the_limit_is_error_naming_the_lists() {
        let many: Vec<String> = (0..40).map(|i| i.to_string()).collect();
        let big = Axis { key: "qd".into(), flag: "--qd".into(), values: many.clone() };
        let other = Axis { key: "bs".into(), flag: "--bs".into(), values: many };
        let e = points(&[other, big]).unwrap_err().to_string();
        assert_eq!(
            e,
            "the sweep has more than 1000 points (--bs 40 × --qd 40); shorten a list or split the sweep"
        );
    }

    #[test]
    fn sweep_two_axes_three_trials_asks_every_trial_in_order() {
        let axes = vec![axis("bs", &["4K", "8K"]), axis("qd", &["1", "2"])];
        let mut pts = points(&axes).unwrap();
        pts[3].seed = Some(100);
        let mut runner = MockRunner::new();
        let out = run(Sweep::new(&pts, 3, 7), &mut runner).unwrap();
        let asked: Vec<(usize, u32, u64)> = runner.asked.iter().map(|t| (t.point, t.trial, t.seed)).collect();
        let mut want = Vec::new();
        for point in 0..4 {
            for trial in 0..3u32 {
                want.push((point, trial, if point == 3 { 100 } else { 7 } + trial as u64));
            }
        }
        assert_eq!(asked, want);
        assert!(!out.partial);
        assert_eq!(out.points.len(), 4);
        let p = &out.points[1];
        assert_eq!((p.index, p.line, p.load), (1, 0, Some(2.0)));
        assert_eq!(p.trials.len(), 3);
        assert_eq!(p.result.total.all.iops, 2000.0, "the first trial's result");
        assert_eq!(p.summary.n, 3);
    }

    #[test]
    fn sweep_single_trial_keeps_no_trial_list() {
        let pts = points(&[axis("qd", &["1", "2"])]).unwrap();
        let out = run(Sweep::new(&pts, 1, 0), &mut MockRunner::new()).unwrap();
        assert!(out.points.iter().all(|p| p.trials.is_empty()));
    }

    #[test]
    fn sweep_stop_mid_point_keeps_the_trials_run() {
        let pts = points(&[axis("qd", &["1", "2", "4"])]).unwrap();
        let mut runner = MockRunner { stop_after: Some(4), ..MockRunner::new() };
        let out = run(Sweep::new(&pts, 3, 0), &mut runner).unwrap();
        assert_eq!(runner.asked.len(), 4);
        assert!(out.partial);
        assert_eq!(out.points.len(), 2);
        assert_eq!(out.points[1].trials.len(), 1);
        assert!(!out.points[1].result.partial);
    }

    #[test]
    fn sweep_stop_between_points_runs_nothing_more() {
        let pts = points(&[axis("qd", &["1", "2", "4"])]).unwrap();
        let mut runner = MockRunner::new();
        let mut sweep = Sweep::new(&pts, 1, 0);
        let t = sweep.next().unwrap();
        sweep.record(runner.run(t).unwrap(), false);
        sweep.interrupt();
        assert_eq!(sweep.next(), None);
        let out = sweep.finish();
        assert!(out.partial);
        assert_eq!(out.points.len(), 1);
    }

    #[test]
    fn sweep_partial_run_ends_sweep_and_marks_point() {
        let pts = points(&[axis("qd", &["1", "2"])]).unwrap();
        let mut runner = MockRunner { partial_at: Some(2), ..MockRunner::new() };
        let out = run(Sweep::new(&pts, 2, 0), &mut runner).unwrap();
        assert_eq!(runner.asked.len(), 2);
        assert!(out.partial);
        assert_eq!(out.points.len(), 1);
        assert!(out.points[0].result.partial, "a partial trial marks its point partial");
    }
}
