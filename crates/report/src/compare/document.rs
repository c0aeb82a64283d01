//! The comparison document (`iolab.compare/1`, described by `docs/schema/iolab.compare.v1.json`): plain serde
//! data, and the small vocabulary its values are built with (side letters, percent changes, better or worse).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub use crate::plugin::{Better, Unit};

/// Schema identifier stored in [`Comparison::schema`].
pub const COMPARE_SCHEMA: &str = "iolab.compare/1";
/// Default significance level of the test.
pub const DEFAULT_ALPHA: f64 = 0.05;
/// Trials each side needs before the difference is tested.
pub const MIN_TRIALS_FOR_TEST: usize = 3;
/// The test's name, as printed and stored.
pub const TEST_NAME: &str = "Welch's t-test (two-sided, unequal variances)";

/// The result of Welch's t-test between a baseline and another side.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WelchTest {
    /// The t statistic, (mean of the side − mean of the baseline) / standard error; `None` when infinite
    /// (both sides without spread and different means).
    pub t: Option<f64>,
    /// Welch–Satterthwaite degrees of freedom (n₁ + n₂ − 2 when both spreads are zero).
    pub df: f64,
    /// Two-sided p-value.
    pub p: f64,
    /// p < alpha.
    pub significant: bool,
}

impl WelchTest {
    /// Welch's two-sided t-test of `side` against `base` ([`iolab_stats::inference::welch_t_test`]), significant
    /// when p < `alpha`. `None` when either has fewer than 2 finite values.
    pub fn from_trials(base: &[f64], side: &[f64], alpha: f64) -> Option<WelchTest> {
        let w = iolab_stats::inference::welch_t_test(base, side)?;
        Some(WelchTest { t: w.t, df: w.df, p: w.p, significant: w.p < alpha })
    }
}

/// A whole comparison: `iolab.compare/1`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// Always [`COMPARE_SCHEMA`].
    pub schema: String,
    /// What its sides hold, the kinds' [`crate::plugin::Comparing::name`]: `runs`, `sweeps`, `db` (database
    /// runs), `db_sweeps` (database sweeps over users), `db_tpch`, `db_copy`.
    pub kind: String,
    /// Significance level of the test.
    pub alpha: f64,
    /// The test's name ([`TEST_NAME`]) and when it runs.
    pub test: String,
    /// The sides, baseline first (letters A, B, C, ...).
    pub sides: Vec<SideInfo>,
    /// One entry for runs; one per matched point for sweeps (in the baseline's order).
    pub units: Vec<UnitComparison>,
    /// Sweep points not every side has (their params and the letters of the sides that have them).
    pub unmatched_points: Vec<UnmatchedPoint>,
    /// Things to know when reading the numbers (partial runs, averaged percentiles, differing configurations).
    pub notes: Vec<String>,
}

/// One side as described in the comparison.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SideInfo {
    /// Its letter: `A` (the baseline), `B`, ...
    pub label: String,
    /// What the user gave for it.
    pub source: String,
    /// Runs (or sweeps) it holds.
    pub documents: usize,
    /// The runs' ids (of the sweeps' first points for sweeps, empty there).
    pub run_ids: Vec<String>,
    /// The runs' seeds.
    pub seeds: Vec<u64>,
}

/// A sweep point only some sides have.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct UnmatchedPoint {
    /// Its swept values.
    pub params: BTreeMap<String, String>,
    /// Letters of the sides that have it.
    pub present_in: Vec<String>,
}

/// The comparison of one unit: the runs, or one sweep point.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct UnitComparison {
    /// The point's swept values; `None` for runs.
    pub params: Option<BTreeMap<String, String>>,
    /// Trials per side in this unit.
    pub trials: Vec<usize>,
    /// Every metric all sides have, in display order.
    pub metrics: Vec<MetricComparison>,
}

/// Where a side's value comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ValueSource {
    /// The single run's own number.
    SingleRun,
    /// The statistic of the trials' merged histograms.
    MergedHistograms,
    /// The arithmetic mean of the trials' values.
    MeanOfTrials,
}

/// One side's value of a metric.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SideValue {
    /// The value compared (see [`ValueSource`]).
    pub value: f64,
    /// Where it comes from.
    pub source: ValueSource,
    /// The per-trial values.
    pub trials: Vec<f64>,
    /// Mean of the per-trial values.
    pub mean: f64,
    /// Sample standard deviation of the per-trial values; `None` with one trial.
    pub sd: Option<f64>,
    /// Smallest per-trial value.
    pub min: f64,
    /// Largest per-trial value.
    pub max: f64,
}

/// How a side compares with the baseline on one metric (not to be confused with a run's pass/fail
/// [`crate::verdict::Verdict`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeVerdict {
    /// Better than the baseline.
    Better,
    /// Worse than the baseline.
    Worse,
    /// The same value.
    Same,
    /// The metric has no better direction.
    Neutral,
}

/// A side against the baseline on one metric.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Change {
    /// Letter of the side.
    pub side: String,
    /// value − baseline value.
    pub diff: f64,
    /// 100 × diff / baseline value; `None` when the baseline value is 0.
    pub pct: Option<f64>,
    /// Better or worse than the baseline.
    pub verdict: ChangeVerdict,
    /// The change in the seeds' words: `IOPS +133%`, `read p99 -80%`.
    pub phrase: String,
    /// Welch's t-test; `None` unless both sides have at least [`MIN_TRIALS_FOR_TEST`] trials.
    pub test: Option<WelchTest>,
}

/// One metric across the sides.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MetricComparison {
    /// Stable key, the name `--metric` matches: `iops`, `read.p99`, `group.db.write.mean`, `tx.tx_per_hour`,
    /// `nopm`, `txn.new_order.p99`, `device.filesystem.write.iops`.
    pub key: String,
    /// Label as printed: `IOPS`, `read p99`, `db: write mean latency`.
    pub label: String,
    /// `total`, `group:NAME`, `transactions`, `transaction:NAME`, `database` or `device:KEY`.
    pub scope: String,
    /// Unit of the values.
    pub unit: Unit,
    /// Which direction is better.
    pub better: Better,
    /// Per side, baseline first.
    pub sides: Vec<SideValue>,
    /// Each other side against the baseline.
    pub changes: Vec<Change>,
    /// Letters of the sides with the best value; empty when all are equal or the metric has no direction.
    pub best: Vec<String>,
    /// Whether each side's value is also shown as a ratio of the baseline's (`0.52x`,
    /// [`crate::plugin::Metric::ratio`]); not stored.
    #[serde(skip)]
    pub ratio: bool,
}

/// The letter of side `i`: A..Z, then S27, S28, ...
pub fn side_letter(i: usize) -> String {
    if i < 26 {
        char::from(b'A' + i as u8).to_string()
    } else {
        format!("S{}", i + 1)
    }
}

/// A signed percent change in the seeds' style: whole percents from 10 % up (`+133%`, `-80%`), one decimal
/// below (`+2.5%`, `-0.4%`), `0%` for no change.
pub fn format_pct(pct: f64) -> String {
    if !pct.is_finite() {
        return "n/a".to_string();
    }
    if pct == 0.0 {
        return "0%".to_string();
    }
    let sign = if pct > 0.0 { '+' } else { '-' };
    let a = pct.abs();
    if a.round() >= 10.0 {
        format!("{sign}{a:.0}%")
    } else {
        format!("{sign}{a:.1}%")
    }
}

/// `label +N%` (see [`format_pct`]); `label n/a (baseline 0)` without a percentage.
pub fn change_phrase(label: &str, pct: Option<f64>) -> String {
    match pct {
        Some(p) => format!("{label} {}", format_pct(p)),
        None => format!("{label} n/a (baseline 0)"),
    }
}

/// Relative difference below which two values count as the same: 0.05 %, half the last digit of the
/// one-decimal percent the tables print, so a change shown as "0.0%" is never called better or worse.
pub const SAME_REL: f64 = 5e-4;

/// True when `a` and `b` differ by no more than [`SAME_REL`] of the larger magnitude.
pub(crate) fn same(a: f64, b: f64) -> bool {
    a == b || (a - b).abs() <= SAME_REL * a.abs().max(b.abs())
}

/// Better or worse, given the direction; [`ChangeVerdict::Same`] on values within [`SAME_REL`] of each other.
pub fn change_verdict(better: Better, base: f64, value: f64) -> ChangeVerdict {
    if better == Better::Neither {
        ChangeVerdict::Neutral
    } else if same(value, base) {
        ChangeVerdict::Same
    } else if (value > base) == (better == Better::Higher) {
        ChangeVerdict::Better
    } else {
        ChangeVerdict::Worse
    }
}
