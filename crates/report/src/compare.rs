//! Comparing runs and sweeps side by side (`iolab compare`, schema `iolab.compare/1`): per metric, each side's
//! value, the difference and the percent change relative to the first side (the *baseline*), worded as the
//! seeds word it ("IOPS +133%", "read p99 -80%"), which side is better, and, with at least 3 trials per side,
//! whether the difference is statistically significant.
//!
//! # Sides, units and trials
//!
//! A [`Side`] is one run, several runs (its *trials*: repetitions of one configuration, e.g. every run tagged
//! `hba=qle2560`), or one or more sweeps. Runs are compared as one *unit*; sweeps are compared per point, a
//! point being matched across sides by its swept values (`params`); points that not every side has are listed
//! as unmatched. A side's value for a metric is:
//!
//! - with one trial, the run's own number;
//! - for response-time statistics (mean, percentiles, max of the totals and of each group) with several
//!   trials that all carry their histograms, the statistic of the **merged** histogram (the percentile of all
//!   the I/Os of all the trials; percentiles are never averaged);
//! - otherwise the arithmetic mean over the trials (IOPS, MB/s, CPU per I/O, depth, transactions per hour;
//!   and percentiles of documents without histograms, which the JSON marks `mean_of_trials`).
//!
//! The spread of a side with several trials is the sample standard deviation of its per-trial values.
//!
//! # The test
//!
//! Welch's unequal-variances t-test, two-sided, on the per-trial values of each side (one value per run),
//! run when both sides have at least [`MIN_TRIALS_FOR_TEST`] trials. With sample means m₁, m₂, sample
//! variances s₁², s₂² and sizes n₁, n₂:
//!
//! ```text
//! t  = (m₂ − m₁) / √(s₁²/n₁ + s₂²/n₂)
//! ν  = (s₁²/n₁ + s₂²/n₂)² / ( (s₁²/n₁)²/(n₁−1) + (s₂²/n₂)²/(n₂−1) )          (Welch–Satterthwaite)
//! p  = 2·(1 − F_ν(|t|)) = I_{ν/(ν+t²)}(ν/2, 1/2)
//! ```
//!
//! where F_ν is Student's t distribution function and I_x(a, b) the regularized incomplete beta function
//! (Abramowitz & Stegun 26.7.1 and 26.5.27), computed by its continued fraction with the modified Lentz
//! method (Numerical Recipes, 3rd ed., §6.4), with ln Γ from the Lanczos approximation (g = 7, 9 terms;
//! relative error ~1e-15). References: B. L. Welch, "The generalization of Student's problem when several
//! different population variances are involved", Biometrika 34 (1947); F. E. Satterthwaite, Biometrics
//! Bulletin 2 (1946). The difference is *significant* when p < alpha (default 0.05).
//!
//! Assumptions: each trial is an independent run, and the per-trial values are roughly normal (means of many
//! I/Os are, by the central limit theorem; a max is not, so read the test on max latency with care). The
//! variances may differ. When both sides have zero spread the test degenerates: equal means give p = 1,
//! different means p = 0 (a deterministic difference, e.g. an emulated device on virtual time).
//!
//! Everything here reads numbers only; the cli (crates/cli/src/compare.rs) resolves catalog IDs, tag queries
//! and files into [`Side`]s. The rules are documented for users in docs/COMPARE.md.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

use iolab_stats::LatencyHistogram;
use serde::{Deserialize, Serialize};

use crate::sweep::{SweepResult, TrialMetrics};
use crate::text::{format_duration_ns, format_rate, table};
use crate::{OpSummary, RunResult};

/// Schema identifier stored in [`Comparison::schema`].
pub const COMPARE_SCHEMA: &str = "iolab.compare/1";
/// Default significance level of the test.
pub const DEFAULT_ALPHA: f64 = 0.05;
/// Trials each side needs before the difference is tested.
pub const MIN_TRIALS_FOR_TEST: usize = 3;
/// The test's name, as printed and stored.
pub const TEST_NAME: &str = "Welch's t-test (two-sided, unequal variances)";

// ---------------------------------------------------------------------------------------------------------
// Inputs
// ---------------------------------------------------------------------------------------------------------

/// The documents of one side.
#[derive(Clone, Debug)]
pub enum SideDocs {
    /// One run, or several runs of one configuration (its trials).
    Runs(Vec<RunResult>),
    /// One sweep, or several sweeps whose points' runs are pooled as trials.
    Sweeps(Vec<SweepResult>),
}

/// One side of a comparison.
#[derive(Clone, Debug)]
pub struct Side {
    /// What the user typed for it (a catalog ID, a tag query, a path), shown beside its letter.
    pub source: String,
    /// Its documents.
    pub docs: SideDocs,
}

/// Why a comparison could not be made. Each message quotes the side as the user gave it.
#[derive(Clone, Debug, PartialEq)]
pub enum CompareError {
    /// Fewer than two sides.
    TooFewSides(usize),
    /// A side without any document.
    EmptySide(String),
    /// Runs on one side, sweeps on another (the first source is the baseline's).
    MixedKinds {
        /// Source of a run side.
        runs: String,
        /// Source of a sweep side.
        sweeps: String,
    },
    /// `alpha` outside (0, 1).
    BadAlpha(f64),
    /// Sweeps with no point (params) in common.
    NoCommonPoint,
    /// `--metric` left nothing to compare, or named an unknown metric.
    Metric(String),
}

impl std::fmt::Display for CompareError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::TooFewSides(n) => write!(f, "compare needs at least two sides, got {n}"),
            Self::EmptySide(s) => write!(f, "'{s}' holds no run to compare"),
            Self::MixedKinds { runs, sweeps } => write!(
                f,
                "cannot compare '{runs}' (runs) with '{sweeps}' (a sweep): compare runs with runs, sweeps with sweeps"
            ),
            Self::BadAlpha(a) => write!(f, "invalid value '{a}' for '--alpha': expected a number between 0 and 1"),
            Self::NoCommonPoint => {
                write!(f, "the sweeps have no point in common (no swept values match on every side)")
            }
            Self::Metric(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for CompareError {}

/// Options of a comparison.
#[derive(Clone, Debug)]
pub struct CompareOptions {
    /// Significance level of the test, in (0, 1).
    pub alpha: f64,
    /// Keep only the metrics this filter selects.
    pub metrics: MetricFilter,
}

impl Default for CompareOptions {
    fn default() -> Self {
        Self { alpha: DEFAULT_ALPHA, metrics: MetricFilter::all() }
    }
}

// ---------------------------------------------------------------------------------------------------------
// Metrics
// ---------------------------------------------------------------------------------------------------------

/// Which direction of a metric is better.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Better {
    /// More is better (IOPS, MB/s, transactions per hour).
    Higher,
    /// Less is better (latency, CPU per I/O).
    Lower,
    /// Neither (achieved depth: informative, not a goal).
    Neither,
}

/// How a metric's values are printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// Operations per second.
    Iops,
    /// 10^6 bytes per second.
    MbS,
    /// Nanoseconds.
    Ns,
    /// Outstanding I/Os.
    Depth,
    /// Transactions per hour.
    PerHour,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Kind {
    All,
    Read,
    Write,
}

impl Kind {
    fn prefix(self) -> &'static str {
        match self {
            Kind::All => "",
            Kind::Read => "read ",
            Kind::Write => "write ",
        }
    }
    fn key(self) -> &'static str {
        match self {
            Kind::All => "",
            Kind::Read => "read.",
            Kind::Write => "write.",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Stat {
    Iops,
    MbS,
    Mean,
    P50,
    P99,
    P999,
    Max,
    ServiceMean,
    CpuPerIo,
    Depth,
    TxPerHour,
}

/// The stat names `--metric` accepts (besides full keys and `read.`/`write.` prefixed names), with aliases.
const STAT_NAMES: [(&str, &str); 20] = [
    ("iops", "iops"),
    ("mb_s", "mb_s"),
    ("mbs", "mb_s"),
    ("mb/s", "mb_s"),
    ("mean", "mean"),
    ("p50", "p50"),
    ("p99", "p99"),
    ("p999", "p999"),
    ("p99.9", "p999"),
    ("max", "max"),
    ("service_mean", "service_mean"),
    ("service", "service_mean"),
    ("cpu_per_io", "cpu_per_io"),
    ("cpu", "cpu_per_io"),
    ("depth", "depth"),
    ("tx_per_hour", "tx_per_hour"),
    ("tx/hour", "tx_per_hour"),
    ("latency", "@lat"),
    ("lat", "@lat"),
    ("tx", "@tx"),
];

impl Stat {
    fn key(self) -> &'static str {
        match self {
            Stat::Iops => "iops",
            Stat::MbS => "mb_s",
            Stat::Mean => "mean",
            Stat::P50 => "p50",
            Stat::P99 => "p99",
            Stat::P999 => "p999",
            Stat::Max => "max",
            Stat::ServiceMean => "service_mean",
            Stat::CpuPerIo => "cpu_per_io",
            Stat::Depth => "depth",
            Stat::TxPerHour => "tx_per_hour",
        }
    }
    fn label(self) -> &'static str {
        match self {
            Stat::Iops => "IOPS",
            Stat::MbS => "MB/s",
            Stat::Mean => "mean latency",
            Stat::P50 => "p50",
            Stat::P99 => "p99",
            Stat::P999 => "p99.9",
            Stat::Max => "max latency",
            Stat::ServiceMean => "service time",
            Stat::CpuPerIo => "CPU per I/O",
            Stat::Depth => "achieved depth",
            Stat::TxPerHour => "tx/hour",
        }
    }
    fn is_latency(self) -> bool {
        matches!(self, Stat::Mean | Stat::P50 | Stat::P99 | Stat::P999 | Stat::Max)
    }
    fn better(self) -> Better {
        match self {
            Stat::Iops | Stat::MbS | Stat::TxPerHour => Better::Higher,
            Stat::Depth => Better::Neither,
            _ => Better::Lower,
        }
    }
    fn unit(self) -> Unit {
        match self {
            Stat::Iops => Unit::Iops,
            Stat::MbS => Unit::MbS,
            Stat::Depth => Unit::Depth,
            Stat::TxPerHour => Unit::PerHour,
            _ => Unit::Ns,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Scope {
    Total,
    Group(String),
    Tx,
    TxType(String),
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct MetricDef {
    scope: Scope,
    kind: Kind,
    stat: Stat,
}

impl MetricDef {
    fn key(&self) -> String {
        let scope = match &self.scope {
            Scope::Total => String::new(),
            Scope::Group(g) => format!("group.{g}."),
            Scope::Tx => "tx.".to_string(),
            Scope::TxType(t) => format!("txn.{t}."),
        };
        format!("{scope}{}{}", self.kind.key(), self.stat.key())
    }
    fn label(&self) -> String {
        let stat = format!("{}{}", self.kind.prefix(), self.stat.label());
        match &self.scope {
            Scope::Total => stat,
            Scope::Group(g) => format!("{g}: {stat}"),
            Scope::Tx if self.stat == Stat::TxPerHour => stat,
            Scope::Tx => format!("tx {stat}"),
            Scope::TxType(t) if self.stat == Stat::TxPerHour => format!("{t}: {stat}"),
            Scope::TxType(t) => format!("{t}: tx {stat}"),
        }
    }
    fn scope_name(&self) -> String {
        match &self.scope {
            Scope::Total => "total".to_string(),
            Scope::Group(g) => format!("group:{g}"),
            Scope::Tx => "transactions".to_string(),
            Scope::TxType(t) => format!("transaction:{t}"),
        }
    }
}

/// Which metrics to keep (`--metric iops,p99`). A name selects every metric whose key is that name or ends
/// with `.NAME`: `p99` keeps p99 of all, reads, writes, groups and transactions; `read.p99` only reads' p99;
/// `group.db.read.p99` one metric. `latency` (or `lat`) keeps every response-time statistic and `tx`
/// everything about transactions.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct MetricFilter {
    names: Vec<String>,
}

impl MetricFilter {
    /// Every metric.
    pub fn all() -> Self {
        Self { names: Vec::new() }
    }

    /// Parses a comma-separated list; an unknown name is an error quoting it and listing the known ones.
    pub fn parse(text: &str) -> Result<Self, CompareError> {
        let mut names = Vec::new();
        for raw in text.split(',') {
            let token = raw.trim().to_ascii_lowercase();
            if token.is_empty() {
                continue;
            }
            // The last dotted part (or the whole token for `p99.9`, `mb/s`) must be a known stat name.
            let (prefix, last) = match STAT_NAMES.iter().find(|(n, _)| *n == token) {
                Some(_) => ("", token.as_str()),
                None => match token.rsplit_once('.') {
                    Some((p, l)) => (p, l),
                    None => ("", token.as_str()),
                },
            };
            let Some(&(_, canonical)) = STAT_NAMES.iter().find(|(n, _)| *n == last) else {
                let known: Vec<&str> = STAT_NAMES.iter().map(|(n, _)| *n).collect();
                return Err(CompareError::Metric(format!(
                    "invalid value '{raw}' for '--metric': unknown metric '{last}'; expected a comma-separated list of {}, optionally prefixed with read., write., group.NAME., tx. or txn.NAME.",
                    known.join(", ")
                )));
            };
            names.push(if prefix.is_empty() {
                canonical.to_string()
            } else {
                format!("{prefix}.{canonical}")
            });
        }
        Ok(Self { names })
    }

    fn keeps(&self, def: &MetricDef) -> bool {
        if self.names.is_empty() {
            return true;
        }
        let key = def.key();
        self.names.iter().any(|n| match n.as_str() {
            "@lat" => def.stat.is_latency() || def.stat == Stat::ServiceMean,
            "@tx" => matches!(def.scope, Scope::Tx | Scope::TxType(_)),
            n => key == n || key.ends_with(&format!(".{n}")),
        })
    }
}

/// One trial as far as metrics go: a full run, or the headline numbers a multi-trial sweep point keeps.
#[derive(Clone, Copy)]
enum Trial<'a> {
    Full(&'a RunResult),
    Headline(&'a TrialMetrics),
}

fn op_summary<'a>(r: &'a RunResult, scope: &Scope, kind: Kind) -> Option<&'a OpSummary> {
    let set = match scope {
        Scope::Total => (&r.total.read, &r.total.write, &r.total.all),
        Scope::Group(g) => {
            let g = r.groups.iter().find(|x| &x.name == g)?;
            (&g.read, &g.write, &g.all)
        }
        _ => return None,
    };
    Some(match kind {
        Kind::Read => set.0,
        Kind::Write => set.1,
        Kind::All => set.2,
    })
}

fn extract(def: &MetricDef, trial: Trial<'_>) -> Option<f64> {
    let v = match trial {
        Trial::Headline(t) => {
            if def.scope != Scope::Total || def.kind != Kind::All {
                return None;
            }
            match def.stat {
                Stat::Iops => t.iops,
                Stat::MbS => t.mb_s,
                Stat::Mean if t.iops > 0.0 => t.lat_mean_ns,
                Stat::P99 if t.iops > 0.0 => t.lat_p99_ns,
                Stat::Depth => t.achieved_depth,
                _ => return None,
            }
        }
        Trial::Full(r) => match &def.scope {
            Scope::Total | Scope::Group(_) => {
                let s = op_summary(r, &def.scope, def.kind)?;
                let lat = s.lat_ns.as_ref();
                match def.stat {
                    Stat::Iops => s.iops,
                    Stat::MbS => s.mb_s,
                    Stat::Mean => lat?.mean,
                    Stat::P50 => lat?.p50 as f64,
                    Stat::P99 => lat?.p99 as f64,
                    Stat::P999 => lat?.p999 as f64,
                    Stat::Max => lat?.max as f64,
                    Stat::ServiceMean => s.service_lat_ns.as_ref()?.mean,
                    Stat::CpuPerIo if def.scope == Scope::Total && r.total.all.ops > 0 => r.cpu.cpu_ns_per_io,
                    Stat::Depth => match &def.scope {
                        Scope::Group(g) => r.groups.iter().find(|x| &x.name == g)?.achieved_depth,
                        _ => r.depth.achieved,
                    },
                    _ => return None,
                }
            }
            Scope::Tx | Scope::TxType(_) => {
                let lg = r.loadgen.as_ref()?;
                let (per_hour, lat) = match &def.scope {
                    Scope::TxType(t) => {
                        let t = lg.transactions.iter().find(|x| &x.name == t)?;
                        (t.transactions_per_hour, t.latency_ns.as_ref())
                    }
                    _ => (lg.transactions_per_hour, lg.latency_ns.as_ref()),
                };
                match def.stat {
                    Stat::TxPerHour => per_hour,
                    Stat::Mean => lat?.mean,
                    Stat::P50 => lat?.p50 as f64,
                    Stat::P99 => lat?.p99 as f64,
                    Stat::P999 => lat?.p999 as f64,
                    Stat::Max => lat?.max as f64,
                    _ => return None,
                }
            }
        },
    };
    v.is_finite().then_some(v)
}

/// Every metric the trials can provide, in display order (totals, read, write, service, CPU, depth, groups,
/// transactions). Read and write rows appear only when some trial had ops of that kind; group rows only
/// when some trial has more than one group (a single group repeats the totals).
fn metric_defs(all_trials: &[Vec<Trial<'_>>]) -> Vec<MetricDef> {
    let fulls =
        || all_trials.iter().flatten().filter_map(|t| if let Trial::Full(r) = t { Some(*r) } else { None });
    let has_kind =
        |scope: &Scope, kind: Kind| fulls().any(|r| op_summary(r, scope, kind).is_some_and(|s| s.ops > 0));
    let op_block = |scope: Scope, defs: &mut Vec<MetricDef>| {
        let mut kinds = vec![Kind::All];
        kinds.extend([Kind::Read, Kind::Write].into_iter().filter(|&k| has_kind(&scope, k)));
        // Pure reads or pure writes: the kind's rows would repeat the "all" rows; keep them only for mixes.
        if kinds.len() == 2 {
            kinds.truncate(1);
        }
        for kind in kinds {
            for stat in [Stat::Iops, Stat::MbS, Stat::Mean, Stat::P50, Stat::P99, Stat::P999, Stat::Max] {
                defs.push(MetricDef { scope: scope.clone(), kind, stat });
            }
        }
        defs.push(MetricDef { scope: scope.clone(), kind: Kind::All, stat: Stat::ServiceMean });
        if scope == Scope::Total {
            defs.push(MetricDef { scope: scope.clone(), kind: Kind::All, stat: Stat::CpuPerIo });
        }
        defs.push(MetricDef { scope, kind: Kind::All, stat: Stat::Depth });
    };
    let mut defs = Vec::new();
    op_block(Scope::Total, &mut defs);
    let mut groups: Vec<String> = Vec::new();
    for r in fulls() {
        for g in &r.groups {
            if !groups.contains(&g.name) {
                groups.push(g.name.clone());
            }
        }
    }
    if fulls().any(|r| r.groups.len() > 1) {
        for g in groups {
            op_block(Scope::Group(g), &mut defs);
        }
    }
    if fulls().any(|r| r.loadgen.is_some()) {
        let lat = [Stat::TxPerHour, Stat::Mean, Stat::P50, Stat::P99, Stat::P999, Stat::Max];
        for stat in lat {
            defs.push(MetricDef { scope: Scope::Tx, kind: Kind::All, stat });
        }
        let mut types: Vec<String> = Vec::new();
        for r in fulls() {
            for t in r.loadgen.iter().flat_map(|l| &l.transactions) {
                if !types.contains(&t.name) {
                    types.push(t.name.clone());
                }
            }
        }
        if types.len() > 1 {
            for t in types {
                for stat in [Stat::TxPerHour, Stat::Mean, Stat::P99] {
                    defs.push(MetricDef { scope: Scope::TxType(t.clone()), kind: Kind::All, stat });
                }
            }
        }
    }
    defs
}

/// The merged response-time histogram of `trials` for a scope and kind; `None` when a trial is not a full
/// run, lacks its histograms, one does not decode, or the merged count disagrees with the op counts (then
/// the caller falls back to the mean of the trials).
fn merged_histogram(trials: &[Trial<'_>], scope: &Scope, kind: Kind) -> Option<LatencyHistogram> {
    let mut acc: Option<LatencyHistogram> = None;
    let mut ops = 0u64;
    for t in trials {
        let Trial::Full(r) = t else { return None };
        let hs = r.histograms.as_ref()?;
        let (read, write) = match scope {
            Scope::Total => (hs.read.as_ref(), hs.write.as_ref()),
            Scope::Group(g) => match hs.groups.get(g) {
                Some(gh) => (gh.read.as_ref(), gh.write.as_ref()),
                None => (None, None),
            },
            _ => return None,
        };
        ops = ops.saturating_add(op_summary(r, scope, kind).map_or(0, |s| s.ops));
        let parts = match kind {
            Kind::Read => [read, None],
            Kind::Write => [write, None],
            Kind::All => [read, write],
        };
        for p in parts.into_iter().flatten() {
            let h = LatencyHistogram::from_base64(p).ok()?;
            match &mut acc {
                None => acc = Some(h),
                Some(a) => a.merge(&h),
            }
        }
    }
    acc.filter(|h| h.count() == ops && ops > 0)
}

fn histogram_stat(h: &LatencyHistogram, stat: Stat) -> Option<f64> {
    let s = h.summary()?;
    Some(match stat {
        Stat::Mean => s.mean,
        Stat::P50 => s.p50 as f64,
        Stat::P99 => s.p99 as f64,
        Stat::P999 => s.p999 as f64,
        Stat::Max => s.max as f64,
        _ => return None,
    })
}

// ---------------------------------------------------------------------------------------------------------
// Statistics
// ---------------------------------------------------------------------------------------------------------

/// ln Γ(x) for x > 0: the Lanczos approximation with g = 7 and 9 coefficients (relative error about 1e-15),
/// with the reflection formula below 0.5. NaN for x ≤ 0 at the poles.
pub fn ln_gamma(x: f64) -> f64 {
    const G: f64 = 7.0;
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if !x.is_finite() {
        return f64::NAN;
    }
    if x < 0.5 {
        // Γ(x)Γ(1−x) = π / sin(πx)
        let s = (std::f64::consts::PI * x).sin();
        if s == 0.0 {
            return f64::NAN;
        }
        return (std::f64::consts::PI / s.abs()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut a = C[0];
    let t = x + G + 0.5;
    for (i, c) in C.iter().enumerate().skip(1) {
        a += c / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// The continued fraction of the incomplete beta function, by the modified Lentz method (Numerical Recipes
/// 3rd ed., §6.4, `betacf`). Converges fast for x < (a+1)/(a+b+2).
fn beta_continued_fraction(a: f64, b: f64, x: f64) -> f64 {
    const MAX_ITERATIONS: u32 = 10_000;
    const EPS: f64 = 1e-15;
    const TINY: f64 = 1e-300;
    let clamp = |v: f64| if v.abs() < TINY { TINY } else { v };
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 / clamp(1.0 - qab * x / qap);
    let mut h = d;
    for m in 1..=MAX_ITERATIONS {
        let m = f64::from(m);
        let m2 = 2.0 * m;
        // Even step.
        let aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 / clamp(1.0 + aa * d);
        c = clamp(1.0 + aa / c);
        h *= d * c;
        // Odd step.
        let aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 / clamp(1.0 + aa * d);
        c = clamp(1.0 + aa / c);
        let delta = d * c;
        h *= delta;
        if (delta - 1.0).abs() < EPS {
            break;
        }
    }
    h
}

/// The regularized incomplete beta function I_x(a, b) (A&S 26.5.1), for a, b > 0 and x in [0, 1]; NaN
/// outside. Uses the continued fraction directly or through the symmetry I_x(a,b) = 1 − I_{1−x}(b,a),
/// whichever converges fast.
pub fn regularized_incomplete_beta(a: f64, b: f64, x: f64) -> f64 {
    if !(a > 0.0 && b > 0.0 && (0.0..=1.0).contains(&x)) {
        return f64::NAN;
    }
    if x == 0.0 || x == 1.0 {
        return x;
    }
    let ln_front = ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln();
    let front = ln_front.exp();
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_continued_fraction(a, b, x) / a
    } else {
        1.0 - front * beta_continued_fraction(b, a, 1.0 - x) / b
    }
}

/// Two-sided p-value of Student's t statistic `t` with `df` degrees of freedom (df may be fractional, as
/// Welch's is): P(|T| ≥ |t|) = I_{df/(df+t²)}(df/2, 1/2) (A&S 26.7.1). 0 for infinite |t|; NaN for NaN
/// input or df ≤ 0.
pub fn student_t_two_sided_p(t: f64, df: f64) -> f64 {
    if t.is_nan() || df.is_nan() || df <= 0.0 {
        return f64::NAN;
    }
    if t.is_infinite() {
        return 0.0;
    }
    let x = df / (df + t * t);
    regularized_incomplete_beta(df / 2.0, 0.5, x).clamp(0.0, 1.0)
}

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

/// Welch's two-sided t-test of `side` against `base` (see the module header for the formulas). `None` when
/// either has fewer than 2 values; non-finite values are ignored.
pub fn welch_t_test(base: &[f64], side: &[f64], alpha: f64) -> Option<WelchTest> {
    let clean = |v: &[f64]| v.iter().copied().filter(|x| x.is_finite()).collect::<Vec<f64>>();
    let (a, b) = (clean(base), clean(side));
    if a.len() < 2 || b.len() < 2 {
        return None;
    }
    let (m1, v1) = mean_var(&a);
    let (m2, v2) = mean_var(&b);
    let (n1, n2) = (a.len() as f64, b.len() as f64);
    let (q1, q2) = (v1 / n1, v2 / n2);
    let se2 = q1 + q2;
    let (t, df, p) = if se2 > 0.0 {
        let t = (m2 - m1) / se2.sqrt();
        let df = se2 * se2 / (q1 * q1 / (n1 - 1.0) + q2 * q2 / (n2 - 1.0));
        (Some(t), df, student_t_two_sided_p(t, df))
    } else if m1 == m2 {
        (Some(0.0), n1 + n2 - 2.0, 1.0)
    } else {
        (None, n1 + n2 - 2.0, 0.0)
    };
    Some(WelchTest { t, df, p, significant: p < alpha })
}

/// Mean and sample variance (n − 1); variance 0 for one value.
fn mean_var(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    if v.is_empty() {
        return (0.0, 0.0);
    }
    let mean = v.iter().sum::<f64>() / n;
    if v.len() < 2 {
        return (mean, 0.0);
    }
    let var = v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1.0);
    (mean, var)
}

// ---------------------------------------------------------------------------------------------------------
// The comparison document
// ---------------------------------------------------------------------------------------------------------

/// A whole comparison: `iolab.compare/1`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// Always [`COMPARE_SCHEMA`].
    pub schema: String,
    /// `runs` or `sweeps`.
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

/// How a side compares with the baseline on one metric.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
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
    pub verdict: Verdict,
    /// The change in the seeds' words: `IOPS +133%`, `read p99 -80%`.
    pub phrase: String,
    /// Welch's t-test; `None` unless both sides have at least [`MIN_TRIALS_FOR_TEST`] trials.
    pub test: Option<WelchTest>,
}

/// One metric across the sides.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MetricComparison {
    /// Stable key, the name `--metric` matches: `iops`, `read.p99`, `group.db.write.mean`, `tx.tx_per_hour`.
    pub key: String,
    /// Label as printed: `IOPS`, `read p99`, `db: write mean latency`.
    pub label: String,
    /// `total`, `group:NAME`, `transactions` or `transaction:NAME`.
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
fn same(a: f64, b: f64) -> bool {
    a == b || (a - b).abs() <= SAME_REL * a.abs().max(b.abs())
}

/// Better or worse, given the direction; [`Verdict::Same`] on values within [`SAME_REL`] of each other.
pub fn verdict(better: Better, base: f64, value: f64) -> Verdict {
    if better == Better::Neither {
        Verdict::Neutral
    } else if same(value, base) {
        Verdict::Same
    } else if (value > base) == (better == Better::Higher) {
        Verdict::Better
    } else {
        Verdict::Worse
    }
}

fn side_value(def: &MetricDef, trials: &[Trial<'_>], cache: &mut HistCache) -> Option<SideValue> {
    let values: Vec<f64> = trials.iter().filter_map(|t| extract(def, *t)).collect();
    if values.is_empty() {
        return None;
    }
    let (mean, var) = mean_var(&values);
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let (value, source) = if values.len() == 1 && trials.len() == 1 {
        (values[0], ValueSource::SingleRun)
    } else if def.stat.is_latency() && matches!(def.scope, Scope::Total | Scope::Group(_)) {
        let h = cache
            .entry((def.scope.clone(), def.kind))
            .or_insert_with(|| merged_histogram(trials, &def.scope, def.kind));
        match h.as_ref().and_then(|h| histogram_stat(h, def.stat)) {
            Some(v) => (v, ValueSource::MergedHistograms),
            None => (mean, ValueSource::MeanOfTrials),
        }
    } else {
        (mean, ValueSource::MeanOfTrials)
    };
    let sd = (values.len() > 1).then(|| var.sqrt());
    Some(SideValue { value, source, trials: values, mean, sd, min, max })
}

type HistCache = HashMap<(Scope, Kind), Option<LatencyHistogram>>;

fn compare_unit(
    params: Option<BTreeMap<String, String>>,
    sides: &[Vec<Trial<'_>>],
    opts: &CompareOptions,
) -> UnitComparison {
    let mut caches: Vec<HistCache> = sides.iter().map(|_| HistCache::new()).collect();
    let mut metrics = Vec::new();
    for def in metric_defs(sides) {
        if !opts.metrics.keeps(&def) {
            continue;
        }
        let values: Option<Vec<SideValue>> =
            sides.iter().zip(caches.iter_mut()).map(|(t, c)| side_value(&def, t, c)).collect();
        let Some(values) = values else { continue };
        let better = def.stat.better();
        let label = def.label();
        let base = &values[0];
        let changes = values
            .iter()
            .enumerate()
            .skip(1)
            .map(|(i, v)| {
                let diff = v.value - base.value;
                let pct = (base.value != 0.0).then(|| 100.0 * diff / base.value);
                let test = (base.trials.len() >= MIN_TRIALS_FOR_TEST
                    && v.trials.len() >= MIN_TRIALS_FOR_TEST)
                    .then(|| welch_t_test(&base.trials, &v.trials, opts.alpha))
                    .flatten();
                Change {
                    side: side_letter(i),
                    diff,
                    pct,
                    verdict: verdict(better, base.value, v.value),
                    phrase: change_phrase(&label, pct),
                    test,
                }
            })
            .collect();
        let best = best_sides(better, &values);
        metrics.push(MetricComparison {
            key: def.key(),
            label,
            scope: def.scope_name(),
            unit: def.stat.unit(),
            better,
            sides: values,
            changes,
            best,
        });
    }
    UnitComparison { params, trials: sides.iter().map(Vec::len).collect(), metrics }
}

fn best_sides(better: Better, values: &[SideValue]) -> Vec<String> {
    let pick = match better {
        Better::Higher => values.iter().map(|v| v.value).fold(f64::NEG_INFINITY, f64::max),
        Better::Lower => values.iter().map(|v| v.value).fold(f64::INFINITY, f64::min),
        Better::Neither => return Vec::new(),
    };
    if values.iter().all(|v| same(v.value, pick)) {
        return Vec::new();
    }
    values.iter().enumerate().filter(|(_, v)| same(v.value, pick)).map(|(i, _)| side_letter(i)).collect()
}

/// Compares the sides (the first is the baseline). See the module header for the rules.
pub fn compare(sides: &[Side], opts: &CompareOptions) -> Result<Comparison, CompareError> {
    if sides.len() < 2 {
        return Err(CompareError::TooFewSides(sides.len()));
    }
    if !(opts.alpha > 0.0 && opts.alpha < 1.0) {
        return Err(CompareError::BadAlpha(opts.alpha));
    }
    for s in sides {
        let empty = match &s.docs {
            SideDocs::Runs(r) => r.is_empty(),
            SideDocs::Sweeps(w) => w.is_empty() || w.iter().all(|w| w.points.is_empty()),
        };
        if empty {
            return Err(CompareError::EmptySide(s.source.clone()));
        }
    }
    let run_side = sides.iter().find(|s| matches!(s.docs, SideDocs::Runs(_)));
    let sweep_side = sides.iter().find(|s| matches!(s.docs, SideDocs::Sweeps(_)));
    if let (Some(r), Some(w)) = (run_side, sweep_side) {
        return Err(CompareError::MixedKinds { runs: r.source.clone(), sweeps: w.source.clone() });
    }
    let mut notes = Vec::new();
    let infos: Vec<SideInfo> = sides.iter().enumerate().map(|(i, s)| side_info(i, s, &mut notes)).collect();
    let mut unmatched_points = Vec::new();
    let units = match run_side {
        Some(_) => {
            let trials: Vec<Vec<Trial<'_>>> = sides
                .iter()
                .map(|s| match &s.docs {
                    SideDocs::Runs(r) => r.iter().map(Trial::Full).collect(),
                    SideDocs::Sweeps(_) => Vec::new(),
                })
                .collect();
            vec![compare_unit(None, &trials, opts)]
        }
        None => {
            let per_side: Vec<Vec<PointTrials<'_>>> = sides.iter().map(sweep_points).collect();
            let mut units = Vec::new();
            let mut seen: Vec<&BTreeMap<String, String>> = Vec::new();
            for points in &per_side {
                for (params, _) in points {
                    if seen.contains(&params) {
                        continue;
                    }
                    seen.push(params);
                    let found: Vec<Option<&Vec<Trial<'_>>>> = per_side
                        .iter()
                        .map(|pts| pts.iter().find(|(p, _)| p == params).map(|(_, t)| t))
                        .collect();
                    if found.iter().all(Option::is_some) {
                        let trials: Vec<Vec<Trial<'_>>> = found.into_iter().flatten().cloned().collect();
                        units.push(compare_unit(Some(params.clone()), &trials, opts));
                    } else {
                        let present_in = found
                            .iter()
                            .enumerate()
                            .filter(|(_, f)| f.is_some())
                            .map(|(i, _)| side_letter(i))
                            .collect();
                        unmatched_points.push(UnmatchedPoint { params: params.clone(), present_in });
                    }
                }
            }
            if units.is_empty() {
                return Err(CompareError::NoCommonPoint);
            }
            units
        }
    };
    if units.iter().all(|u| u.metrics.is_empty()) {
        return Err(CompareError::Metric(
            "no metric to compare: the --metric filter matches no metric that every side has".to_string(),
        ));
    }
    let averaged: Vec<&str> = units
        .iter()
        .flat_map(|u| &u.metrics)
        .filter(|m| m.sides.iter().any(|s| s.source == ValueSource::MeanOfTrials))
        .filter(|m| {
            let stat = m.key.rsplit('.').next().unwrap_or("");
            ["mean", "p50", "p99", "p999", "max"].contains(&stat)
        })
        .filter(|m| m.scope == "total" || m.scope.starts_with("group:"))
        .map(|m| m.label.as_str())
        .collect();
    if !averaged.is_empty() {
        let mut labels: Vec<&str> = Vec::new();
        for l in averaged {
            if !labels.contains(&l) {
                labels.push(l);
            }
        }
        let more = if labels.len() > 6 { format!(" and {} more", labels.len() - 6) } else { String::new() };
        labels.truncate(6);
        notes.push(format!(
            "{}{more}: means over trials, not from merged histograms (documents without histograms, or sweep points with trials)",
            labels.join(", ")
        ));
    }
    Ok(Comparison {
        schema: COMPARE_SCHEMA.to_string(),
        kind: if run_side.is_some() { "runs" } else { "sweeps" }.to_string(),
        alpha: opts.alpha,
        test: format!(
            "{TEST_NAME} on per-trial values, when both sides have at least {MIN_TRIALS_FOR_TEST} trials"
        ),
        sides: infos,
        units,
        unmatched_points,
        notes,
    })
}

fn side_info(i: usize, s: &Side, notes: &mut Vec<String>) -> SideInfo {
    let label = side_letter(i);
    let (documents, run_ids, seeds) = match &s.docs {
        SideDocs::Runs(r) => {
            if r.iter().any(|r| r.partial) {
                notes.push(format!("side {label} ('{}') includes a partial (interrupted) run", s.source));
            }
            if r.iter().any(|x| strip_seed(&x.config) != strip_seed(&r[0].config)) {
                notes.push(format!(
                    "side {label} ('{}'): its runs have different configurations; they are treated as trials of one",
                    s.source
                ));
            }
            (r.len(), r.iter().map(|r| r.run_id.clone()).collect(), r.iter().map(|r| r.seed).collect())
        }
        SideDocs::Sweeps(w) => {
            if w.iter().any(|w| w.partial) {
                notes.push(format!("side {label} ('{}') includes a partial (interrupted) sweep", s.source));
            }
            (w.len(), Vec::new(), w.iter().map(|w| w.base_seed).collect())
        }
    };
    SideInfo { label, source: s.source.clone(), documents, run_ids, seeds }
}

/// A run's configuration without its seeds, to tell trials of one configuration from different ones.
fn strip_seed(v: &serde_json::Value) -> serde_json::Value {
    match v {
        serde_json::Value::Object(m) => serde_json::Value::Object(
            m.iter().filter(|(k, _)| !k.contains("seed")).map(|(k, v)| (k.clone(), strip_seed(v))).collect(),
        ),
        serde_json::Value::Array(a) => serde_json::Value::Array(a.iter().map(strip_seed).collect()),
        other => other.clone(),
    }
}

/// A sweep point's params and its trials.
type PointTrials<'a> = (BTreeMap<String, String>, Vec<Trial<'a>>);

/// A sweep side's points: params -> trials, pooling points with the same params (across sweeps too).
fn sweep_points(s: &Side) -> Vec<PointTrials<'_>> {
    let mut out: Vec<PointTrials<'_>> = Vec::new();
    let SideDocs::Sweeps(sweeps) = &s.docs else { return out };
    for p in sweeps.iter().flat_map(|w| &w.points) {
        let trials: Vec<Trial<'_>> = if p.trials.is_empty() {
            vec![Trial::Full(&p.result)]
        } else {
            p.trials.iter().map(Trial::Headline).collect()
        };
        match out.iter_mut().find(|(params, _)| params == &p.params) {
            Some((_, t)) => t.extend(trials),
            None => out.push((p.params.clone(), trials)),
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------------------
// Renderings
// ---------------------------------------------------------------------------------------------------------

/// The comparison as JSON (pretty-printed, ends with a newline).
pub fn compare_to_json(c: &Comparison) -> String {
    let mut s = serde_json::to_string_pretty(c).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
    s.push('\n');
    s
}

fn format_value(unit: Unit, v: f64) -> String {
    match unit {
        Unit::Iops => format_rate(v, 1),
        Unit::MbS => format_rate(v, 1),
        Unit::Ns => format_duration_ns(v),
        Unit::Depth => format_rate(v, 2),
        Unit::PerHour => format_rate(v, 0),
    }
}

fn format_diff(unit: Unit, d: f64) -> String {
    if !d.is_finite() {
        return "-".to_string();
    }
    let sign = if d > 0.0 {
        "+"
    } else if d < 0.0 {
        "-"
    } else {
        ""
    };
    format!("{sign}{}", format_value(unit, d.abs()))
}

/// The value cell: the value, `±CV%` with several trials.
fn value_cell(m: &MetricComparison, v: &SideValue) -> String {
    let mut s = format_value(m.unit, v.value);
    if let Some(sd) = v.sd {
        if v.mean != 0.0 {
            let _ = write!(s, " ±{:.1}%", 100.0 * sd / v.mean.abs());
        }
    }
    s
}

fn verdict_word(v: Verdict) -> &'static str {
    match v {
        Verdict::Better => "better",
        Verdict::Worse => "worse",
        Verdict::Same | Verdict::Neutral => "",
    }
}

fn test_cell(t: &Option<WelchTest>) -> String {
    match t {
        None => "-".to_string(),
        Some(t) => {
            format!("{} {}", p_equals(t.p), if t.significant { "significant" } else { "not significant" })
        }
    }
}

/// A p-value with 3 significant figures, `<0.001` below.
pub fn format_p(p: f64) -> String {
    if !p.is_finite() {
        "-".to_string()
    } else if p < 0.001 {
        "<0.001".to_string()
    } else {
        format!("{p:.3}")
    }
}

/// `p=0.042`, or `p<0.001`.
fn p_equals(p: f64) -> String {
    let f = format_p(p);
    if f.starts_with('<') {
        format!("p{f}")
    } else {
        format!("p={f}")
    }
}

fn describe_params(p: &BTreeMap<String, String>) -> String {
    p.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" ")
}

fn side_line(s: &SideInfo, kind: &str) -> String {
    let what = match (kind, s.documents) {
        ("sweeps", 1) => "1 sweep".to_string(),
        ("sweeps", n) => format!("{n} sweeps"),
        (_, 1) => format!("1 run, {}", s.run_ids.first().map_or("", String::as_str)),
        (_, n) => format!("{n} runs as trials"),
    };
    format!("{}  {} ({what}){}", s.label, s.source, if s.label == "A" { " · baseline" } else { "" })
}

struct Rendered {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
    best_cells: Vec<(usize, usize)>,
}

fn unit_table(c: &Comparison, u: &UnitComparison) -> Rendered {
    let n = c.sides.len();
    let tested = u.metrics.iter().any(|m| m.changes.iter().any(|ch| ch.test.is_some()));
    let mut header = vec!["metric".to_string()];
    header.extend(c.sides.iter().map(|s| s.label.clone()));
    for s in c.sides.iter().skip(1) {
        header.push(format!("{}-A", s.label));
        header.push(format!("{} vs A", s.label));
        if tested {
            header.push(format!("{} Welch", s.label));
        }
    }
    let mut rows = Vec::new();
    let mut best_cells = Vec::new();
    for (r, m) in u.metrics.iter().enumerate() {
        let mut row = vec![m.label.clone()];
        for (i, v) in m.sides.iter().enumerate() {
            if m.best.contains(&side_letter(i)) {
                best_cells.push((r, 1 + i));
            }
            row.push(value_cell(m, v));
        }
        for ch in &m.changes {
            row.push(format_diff(m.unit, ch.diff));
            let pct = ch.pct.map_or("n/a".to_string(), format_pct);
            let word = verdict_word(ch.verdict);
            row.push(if word.is_empty() { pct } else { format!("{pct} {word}") });
            if tested {
                row.push(test_cell(&ch.test));
            }
        }
        debug_assert_eq!(row.len(), header.len(), "{n} sides");
        rows.push(row);
    }
    Rendered { header, rows, best_cells }
}

/// The seeds' sentence for one side against the baseline: the headline metrics of the unit (IOPS, MB/s,
/// mean latency, p99, transactions per hour, transaction latency, when kept), each `label +N% (better)`.
fn headline(u: &UnitComparison, side: usize) -> Option<String> {
    const KEYS: [&str; 7] = ["iops", "mb_s", "mean", "p99", "tx.tx_per_hour", "tx.mean", "tx.p99"];
    let parts: Vec<String> = KEYS
        .iter()
        .filter_map(|k| u.metrics.iter().find(|m| m.key == *k))
        .filter_map(|m| m.changes.get(side - 1))
        .map(|ch| {
            let word = verdict_word(ch.verdict);
            let mut s = ch.phrase.clone();
            match &ch.test {
                // A difference the test cannot tell from noise is not called better or worse.
                Some(t) if !t.significant => {
                    let _ = write!(s, " (not significant, Welch {})", p_equals(t.p));
                }
                Some(t) if !word.is_empty() => {
                    let _ = write!(s, " ({word}, significant, Welch {})", p_equals(t.p));
                }
                Some(t) => {
                    let _ = write!(s, " (significant, Welch {})", p_equals(t.p));
                }
                None if !word.is_empty() => {
                    let _ = write!(s, " ({word})");
                }
                None => {}
            }
            s
        })
        .collect();
    (!parts.is_empty()).then(|| parts.join(", "))
}

/// The comparison as a text table: the sides, then per unit (one for runs, one per point for sweeps) a table
/// with each side's value (`*` marks the best), each side's difference and percent change against the
/// baseline with `better`/`worse`, the test when it ran, and the seeds' one-line summary.
pub fn render_compare_text(c: &Comparison) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "iolab compare · changes vs baseline A · * best · with ≥ {MIN_TRIALS_FOR_TEST} trials a side: {TEST_NAME}, alpha {}",
        c.alpha
    );
    for s in &c.sides {
        let _ = writeln!(out, "{}", side_line(s, &c.kind));
    }
    for u in &c.units {
        out.push('\n');
        if let Some(p) = &u.params {
            let trials: Vec<String> = u.trials.iter().map(usize::to_string).collect();
            let _ = writeln!(out, "point {} (trials {})", describe_params(p), trials.join("/"));
        } else if u.trials.iter().any(|&t| t > 1) {
            let trials: Vec<String> = u.trials.iter().map(usize::to_string).collect();
            let _ =
                writeln!(out, "trials {} (values ± coefficient of variation over trials)", trials.join("/"));
        }
        let mut t = unit_table(c, u);
        for &(r, col) in &t.best_cells {
            t.rows[r][col].push_str(" *");
        }
        // Keep the numbers aligned: unmarked value cells get the mark's width.
        for row in &mut t.rows {
            for cell in row.iter_mut().take(c.sides.len() + 1).skip(1) {
                if !cell.ends_with(" *") {
                    cell.push_str("  ");
                }
            }
        }
        let header: Vec<&str> = t.header.iter().map(String::as_str).collect();
        out.push_str(&table(&header, &t.rows));
        for i in 1..c.sides.len() {
            if let Some(h) = headline(u, i) {
                let _ = writeln!(out, "{} vs A: {h}", side_letter(i));
            }
        }
    }
    tail(c, &mut out, "");
    out
}

fn tail(c: &Comparison, out: &mut String, bullet: &str) {
    if !c.unmatched_points.is_empty() {
        out.push('\n');
        for p in &c.unmatched_points {
            let _ = writeln!(
                out,
                "{bullet}point {} only in {}: not compared",
                describe_params(&p.params),
                p.present_in.join(", ")
            );
        }
    }
    if !c.notes.is_empty() {
        out.push('\n');
        for n in &c.notes {
            let _ = writeln!(out, "{bullet}note: {n}");
        }
    }
}

fn md_escape(s: &str) -> String {
    s.replace('|', "\\|").replace('*', "\\*")
}

/// The comparison as Markdown for a ticket: the sides as a list, one table per unit (the best value in
/// bold), and the seeds' one-line summaries as a list.
pub fn render_compare_markdown(c: &Comparison) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "**iolab compare**: changes vs baseline A; best value in bold; with ≥ {MIN_TRIALS_FOR_TEST} trials a side: {TEST_NAME}, alpha {}.\n",
        c.alpha
    );
    for s in &c.sides {
        let _ = writeln!(out, "- {}", md_escape(&side_line(s, &c.kind)));
    }
    for u in &c.units {
        out.push('\n');
        if let Some(p) = &u.params {
            let trials: Vec<String> = u.trials.iter().map(usize::to_string).collect();
            let _ =
                writeln!(out, "**Point {}** (trials {})\n", md_escape(&describe_params(p)), trials.join("/"));
        } else if u.trials.iter().any(|&t| t > 1) {
            let trials: Vec<String> = u.trials.iter().map(usize::to_string).collect();
            let _ = writeln!(
                out,
                "Trials {} (values ± coefficient of variation over trials)\n",
                trials.join("/")
            );
        }
        let mut t = unit_table(c, u);
        for row in &mut t.rows {
            for cell in row.iter_mut() {
                *cell = md_escape(cell);
            }
        }
        for &(r, col) in &t.best_cells {
            t.rows[r][col] = format!("**{}**", t.rows[r][col]);
        }
        let _ = writeln!(out, "| {} |", t.header.join(" | "));
        let align: Vec<&str> = (0..t.header.len()).map(|i| if i == 0 { ":--" } else { "--:" }).collect();
        let _ = writeln!(out, "| {} |", align.join(" | "));
        for row in &t.rows {
            let _ = writeln!(out, "| {} |", row.join(" | "));
        }
        let lines: Vec<String> = (1..c.sides.len())
            .filter_map(|i| headline(u, i).map(|h| format!("{} vs A: {h}", side_letter(i))))
            .collect();
        if !lines.is_empty() {
            out.push('\n');
            for l in lines {
                let _ = writeln!(out, "- {}", md_escape(&l));
            }
        }
    }
    tail(c, &mut out, "- ");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdict_within_half_a_tenth_percent_is_same_not_better_or_worse() {
        assert_eq!(verdict(Better::Higher, 30_021.8, 30_021.7), Verdict::Same);
        assert_eq!(verdict(Better::Lower, 100.0, 100.04), Verdict::Same);
        assert_eq!(verdict(Better::Higher, 100.0, 100.1), Verdict::Better);
        assert_eq!(verdict(Better::Lower, 100.0, 100.1), Verdict::Worse);
    }
    use crate::sweep::{PointSummary, SweepAxis, SweepPoint, SWEEP_SCHEMA};
    use crate::{HistogramSet, OpSet};
    use iolab_stats::OpStats;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    /// A single-group read-only run with `ops` reads of `lat_ns` each (and `slow` reads of `slow_ns`) over 1 s.
    fn run_with(ops: u64, lat_ns: u64, slow: u64, slow_ns: u64, seed: u64) -> RunResult {
        let mut read = OpStats::new();
        for _ in 0..ops {
            read.record_ok(4096, 4096, lat_ns, lat_ns);
        }
        for _ in 0..slow {
            read.record_ok(4096, 4096, slow_ns, slow_ns);
        }
        let write = OpStats::new();
        let mut r = crate::tests::sample();
        r.seed = seed;
        r.run_id = format!("run{seed}");
        r.total = OpSet::from_stats(&read, &write, 1.0);
        r.groups.truncate(1);
        r.groups[0].read = r.total.read.clone();
        r.groups[0].write = r.total.write.clone();
        r.groups[0].all = r.total.all.clone();
        r.depth.achieved = r.total.all.littles_law_depth();
        r.cpu.cpu_ns_per_io = 1000.0;
        r.histograms = Some(HistogramSet::from_stats(&read, &write));
        r
    }

    fn runs(source: &str, r: Vec<RunResult>) -> Side {
        Side { source: source.to_string(), docs: SideDocs::Runs(r) }
    }

    fn metric<'a>(u: &'a UnitComparison, key: &str) -> &'a MetricComparison {
        u.metrics.iter().find(|m| m.key == key).unwrap_or_else(|| {
            panic!("no metric {key} in {:?}", u.metrics.iter().map(|m| &m.key).collect::<Vec<_>>())
        })
    }

    #[test]
    fn format_pct_uses_whole_percents_from_ten_and_signs() {
        assert_eq!(format_pct(133.33), "+133%");
        assert_eq!(format_pct(-80.04), "-80%");
        assert_eq!(format_pct(399.0), "+399%");
        assert_eq!(format_pct(2.54), "+2.5%");
        assert_eq!(format_pct(-0.04), "-0.0%");
        assert_eq!(format_pct(9.96), "+10%");
        assert_eq!(format_pct(0.0), "0%");
        assert_eq!(format_pct(f64::NAN), "n/a");
        assert_eq!(change_phrase("IOPS", Some(133.0)), "IOPS +133%");
        assert_eq!(change_phrase("read p99", Some(-80.0)), "read p99 -80%");
        assert_eq!(change_phrase("IOPS", None), "IOPS n/a (baseline 0)");
    }

    #[test]
    fn verdict_follows_the_metric_direction() {
        assert_eq!(verdict(Better::Higher, 100.0, 233.0), Verdict::Better);
        assert_eq!(verdict(Better::Higher, 100.0, 50.0), Verdict::Worse);
        assert_eq!(verdict(Better::Lower, 100.0, 20.0), Verdict::Better);
        assert_eq!(verdict(Better::Lower, 100.0, 120.0), Verdict::Worse);
        assert_eq!(verdict(Better::Lower, 100.0, 100.0), Verdict::Same);
        assert_eq!(verdict(Better::Neither, 100.0, 120.0), Verdict::Neutral);
    }

    #[test]
    fn two_runs_iops_doubled_latency_halved_marks_b_better() {
        let a = run_with(40_000, 800_000, 0, 0, 1);
        let b = run_with(80_000, 400_000, 0, 0, 2);
        let c =
            compare(&[runs("a.json", vec![a]), runs("b.json", vec![b])], &CompareOptions::default()).unwrap();
        assert_eq!(c.schema, COMPARE_SCHEMA);
        let u = &c.units[0];
        let iops = metric(u, "iops");
        assert_eq!(iops.better, Better::Higher);
        assert_eq!(iops.changes[0].diff, 40_000.0);
        assert_eq!(iops.changes[0].pct, Some(100.0));
        assert_eq!(iops.changes[0].phrase, "IOPS +100%");
        assert_eq!(iops.changes[0].verdict, Verdict::Better);
        assert_eq!(iops.best, vec!["B"]);
        assert_eq!(iops.sides[0].source, ValueSource::SingleRun);
        assert!(iops.changes[0].test.is_none(), "one trial a side: no test");
        let mean = metric(u, "mean");
        assert_eq!(mean.better, Better::Lower);
        assert_eq!(mean.changes[0].phrase, "mean latency -50%");
        assert_eq!(mean.changes[0].verdict, Verdict::Better);
        assert_eq!(mean.best, vec!["B"]);
        let cpu = metric(u, "cpu_per_io");
        assert_eq!((cpu.changes[0].verdict, cpu.best.len()), (Verdict::Same, 0), "equal values: no best");
        let depth = metric(u, "depth");
        assert_eq!((depth.better, depth.changes[0].verdict), (Better::Neither, Verdict::Neutral));
        // Read-only: no separate read rows (they repeat "all"), no group rows (one group repeats the totals).
        assert!(u.metrics.iter().all(|m| !m.key.starts_with("read.") && !m.key.starts_with("group.")));
        let text = render_compare_text(&c);
        assert!(text.contains("B vs A: IOPS +100% (better)"), "{text}");
        assert!(text.contains("80,000.0 *"), "{text}");
        let md = render_compare_markdown(&c);
        assert!(md.contains("| **80,000.0** |"), "{md}");
        let json: serde_json::Value = serde_json::from_str(&compare_to_json(&c)).unwrap();
        assert_eq!(json["schema"], "iolab.compare/1");
        assert_eq!(json["units"][0]["metrics"][0]["changes"][0]["phrase"], "IOPS +100%");
    }

    #[test]
    fn three_sides_compare_each_with_the_baseline_and_mark_the_best() {
        let a = run_with(40_000, 800_000, 0, 0, 1);
        let b = run_with(80_000, 400_000, 0, 0, 2);
        let c3 = run_with(20_000, 1_600_000, 0, 0, 3);
        let c = compare(
            &[runs("a", vec![a]), runs("b", vec![b]), runs("c", vec![c3])],
            &CompareOptions::default(),
        )
        .unwrap();
        let iops = metric(&c.units[0], "iops");
        assert_eq!(iops.changes.len(), 2);
        assert_eq!(iops.changes[1].side, "C");
        assert_eq!(iops.changes[1].phrase, "IOPS -50%");
        assert_eq!(iops.changes[1].verdict, Verdict::Worse);
        assert_eq!(iops.best, vec!["B"]);
        let text = render_compare_text(&c);
        assert!(text.contains("C vs A: IOPS -50% (worse)"), "{text}");
    }

    #[test]
    fn ln_gamma_matches_known_values() {
        assert!(close(ln_gamma(1.0), 0.0, 1e-14));
        assert!(close(ln_gamma(0.5), std::f64::consts::PI.sqrt().ln(), 1e-14));
        assert!(close(ln_gamma(10.0), (362_880.0f64).ln(), 1e-12));
        assert!(close(ln_gamma(0.1), 2.252_712_651_734_206, 1e-12));
    }

    #[test]
    fn incomplete_beta_matches_known_values() {
        // I_x(1, 1) = x; I_x(a, 1) = x^a; I_0.5(a, a) = 0.5.
        assert!(close(regularized_incomplete_beta(1.0, 1.0, 0.3), 0.3, 1e-14));
        assert!(close(regularized_incomplete_beta(3.0, 1.0, 0.4), 0.064, 1e-14));
        assert!(close(regularized_incomplete_beta(7.5, 7.5, 0.5), 0.5, 1e-13));
        assert!(regularized_incomplete_beta(1.0, 1.0, 1.5).is_nan());
        assert!(regularized_incomplete_beta(-1.0, 1.0, 0.5).is_nan());
    }

    #[test]
    fn student_t_p_values_match_tables() {
        // Two-sided p-values 2 * pt(-|t|, df), checked by numeric integration of the t density.
        assert!(
            close(student_t_two_sided_p(2.0, 10.0), 0.073_388, 1e-5),
            "{}",
            student_t_two_sided_p(2.0, 10.0)
        );
        assert!(
            close(student_t_two_sided_p(3.0, 5.0), 0.030_099, 1e-5),
            "{}",
            student_t_two_sided_p(3.0, 5.0)
        );
        // df = 1 is Cauchy: P(|T| >= 1) = 1/2.
        assert!(close(student_t_two_sided_p(1.0, 1.0), 0.5, 1e-12));
        assert!(close(student_t_two_sided_p(-1.0, 1.0), 0.5, 1e-12));
        // The 97.5 % quantiles give p = 0.05.
        assert!(close(student_t_two_sided_p(2.228_138_851_986_274, 10.0), 0.05, 1e-9));
        assert!(close(student_t_two_sided_p(12.706_204_736_174_7, 1.0), 0.05, 1e-9));
        // Large df tends to the normal: 1.959964 -> 0.05.
        assert!(close(student_t_two_sided_p(1.959_963_985, 1e6), 0.05, 1e-5));
        // Fractional df (Welch): 2 * pt(-2.5, 4.5) = 0.059906
        assert!(
            close(student_t_two_sided_p(2.5, 4.5), 0.059_906, 1e-6),
            "{}",
            student_t_two_sided_p(2.5, 4.5)
        );
        assert_eq!(student_t_two_sided_p(0.0, 7.0), 1.0);
        assert_eq!(student_t_two_sided_p(f64::INFINITY, 7.0), 0.0);
        assert!(student_t_two_sided_p(1.0, 0.0).is_nan());
    }

    #[test]
    fn welch_matches_a_worked_example() {
        // Wikipedia's Welch example (t.test(c(27.5,21.0,19.0,23.6,17.0,17.9,16.9,20.1,21.9,22.6,23.1,19.6,19.0,21.7,21.4),
        //            c(27.1,22.0,20.8,23.4,23.4,23.5,25.8,22.0,24.8,20.2,21.9,22.1,22.9,20.5,24.4)))
        // t = -2.4554, df = 24.989, p-value = 0.02138 (checked by numeric integration of the t density)
        let a = [27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6, 23.1, 19.6, 19.0, 21.7, 21.4];
        let b = [27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2, 21.9, 22.1, 22.9, 20.5, 24.4];
        let w = welch_t_test(&a, &b, 0.05).unwrap();
        // t is side - baseline here, so positive.
        assert!(close(w.t.unwrap(), 2.455_356, 1e-6), "{w:?}");
        assert!(close(w.df, 24.988_529, 1e-6), "{w:?}");
        assert!(close(w.p, 0.021_378, 1e-6), "{w:?}");
        assert!(w.significant);
        assert!(!welch_t_test(&a, &b, 0.01).unwrap().significant);
    }

    #[test]
    fn welch_degenerate_cases() {
        assert!(welch_t_test(&[1.0], &[2.0, 3.0], 0.05).is_none());
        let same = welch_t_test(&[5.0, 5.0, 5.0], &[5.0, 5.0, 5.0], 0.05).unwrap();
        assert_eq!((same.t, same.p, same.significant), (Some(0.0), 1.0, false));
        let diff = welch_t_test(&[5.0, 5.0, 5.0], &[6.0, 6.0, 6.0], 0.05).unwrap();
        assert_eq!((diff.t, diff.df, diff.p, diff.significant), (None, 4.0, 0.0, true));
        let nan = welch_t_test(&[f64::NAN, 1.0, 2.0], &[1.0, 2.0, 3.0], 0.05).unwrap();
        assert!(nan.p.is_finite());
    }

    #[test]
    fn trials_test_significance_and_merge_percentiles_from_histograms() {
        // Baseline: 3 trials, each 990 fast ops and 10 slow; the p99 of each trial alone is the fast value
        // (rank 990 of 1000), but merging two trials with more slow ops moves it.
        let a: Vec<RunResult> = (0..3).map(|s| run_with(990 + s, 100_000, 10, 5_000_000, s)).collect();
        let b: Vec<RunResult> =
            (0..3).map(|s| run_with(1_980 + s, 50_000, 20 + 10 * s, 9_000_000, 10 + s)).collect();
        let c = compare(
            &[runs("tag:hba=a", a.clone()), runs("tag:hba=b", b.clone())],
            &CompareOptions::default(),
        )
        .unwrap();
        let u = &c.units[0];
        assert_eq!(u.trials, vec![3, 3]);
        let iops = metric(u, "iops");
        assert_eq!(iops.sides[0].source, ValueSource::MeanOfTrials);
        assert_eq!(iops.sides[0].value, 1001.0);
        assert_eq!(iops.sides[0].trials, vec![1000.0, 1001.0, 1002.0]);
        let t = iops.changes[0].test.as_ref().expect("3 trials a side: tested");
        assert!(t.significant && t.p < 1e-3, "{t:?}");
        // p99 of side B: merged histogram of 1980+1981+1982 fast and 20+30+40 slow ops: 90 slow of 6033 ->
        // the slow ops are above rank 0.99 * 6033 = 5972.7, so p99 is slow (9 ms), though two of the
        // three trials alone have a fast p99 (20/2000 and 30/2011 are at or below 1.5 %... only the third is slow).
        let p99 = metric(u, "p99");
        assert_eq!(p99.sides[1].source, ValueSource::MergedHistograms);
        let mut merged = LatencyHistogram::new();
        for r in &b {
            merged.merge(
                &LatencyHistogram::from_base64(r.histograms.as_ref().unwrap().read.as_ref().unwrap())
                    .unwrap(),
            );
        }
        assert_eq!(p99.sides[1].value, merged.quantile(0.99) as f64);
        let averaged = p99.sides[1].trials.iter().sum::<f64>() / 3.0;
        assert_eq!(p99.sides[1].mean, averaged);
        assert!(p99.sides[1].value != averaged, "merged, not averaged: {} vs {averaged}", p99.sides[1].value);
        // Mean latency from the merged histogram is the op-weighted mean.
        let mean = metric(u, "mean");
        assert!(close(mean.sides[1].value, merged.mean(), 1e-6));
        // Without histograms, the mean of the trials, and a note says so.
        let strip = |v: Vec<RunResult>| {
            v.into_iter()
                .map(|mut r| {
                    r.histograms = None;
                    r
                })
                .collect::<Vec<_>>()
        };
        let c2 = compare(&[runs("a", strip(a)), runs("b", strip(b))], &CompareOptions::default()).unwrap();
        let p99 = metric(&c2.units[0], "p99");
        assert_eq!((p99.sides[1].source, p99.sides[1].value), (ValueSource::MeanOfTrials, averaged));
        assert!(c2.notes.iter().any(|n| n.contains("means over trials")), "{:?}", c2.notes);
        assert!(c.notes.is_empty(), "{:?}", c.notes);
        let text = render_compare_text(&c);
        assert!(text.contains("Welch"), "{text}");
        assert!(text.contains("significant"), "{text}");
    }

    #[test]
    fn identical_trials_are_not_significant() {
        let a: Vec<RunResult> = (0..3).map(|s| run_with(1000 + s, 100_000, 0, 0, s)).collect();
        let b: Vec<RunResult> = (0..3).map(|s| run_with(1002 - s, 100_000, 0, 0, s)).collect();
        let c = compare(&[runs("a", a), runs("b", b)], &CompareOptions::default()).unwrap();
        let t = metric(&c.units[0], "iops").changes[0].test.clone().unwrap();
        assert!(!t.significant && close(t.p, 1.0, 1e-12), "{t:?}");
    }

    #[test]
    fn two_trials_are_not_tested() {
        let a: Vec<RunResult> = (0..2).map(|s| run_with(1000 + s, 100_000, 0, 0, s)).collect();
        let b: Vec<RunResult> = (0..3).map(|s| run_with(2000 + s, 100_000, 0, 0, s)).collect();
        let c = compare(&[runs("a", a), runs("b", b)], &CompareOptions::default()).unwrap();
        assert!(metric(&c.units[0], "iops").changes[0].test.is_none());
    }

    #[test]
    fn groups_compared_where_both_sides_have_them() {
        let mut a = crate::tests::sample();
        let mut db = a.groups[0].clone();
        db.name = "db".into();
        db.all.iops = 1000.0;
        let mut log = db.clone();
        log.name = "log".into();
        a.groups = vec![db.clone(), log];
        let mut b = a.clone();
        b.groups[0].all.iops = 2330.0;
        b.groups.truncate(1);
        let c = compare(&[runs("a", vec![a]), runs("b", vec![b])], &CompareOptions::default()).unwrap();
        let u = &c.units[0];
        let g = metric(u, "group.db.iops");
        assert_eq!(g.changes[0].phrase, "db: IOPS +133%");
        assert_eq!(g.scope, "group:db");
        assert!(u.metrics.iter().all(|m| !m.key.starts_with("group.log.")), "log is only on side A");
        // A read/write mix gets read and write rows.
        assert!(u.metrics.iter().any(|m| m.key == "read.p99"));
        assert!(u.metrics.iter().any(|m| m.key == "write.mean"));
    }

    #[test]
    fn metric_filter_selects_by_name_and_refuses_unknown() {
        let a = crate::tests::sample();
        let mut b = a.clone();
        b.total.all.iops *= 2.0;
        let opts =
            CompareOptions { metrics: MetricFilter::parse("iops,read.p99").unwrap(), ..Default::default() };
        let c = compare(&[runs("a", vec![a.clone()]), runs("b", vec![b.clone()])], &opts).unwrap();
        let keys: Vec<&str> = c.units[0].metrics.iter().map(|m| m.key.as_str()).collect();
        assert_eq!(keys, vec!["iops", "read.iops", "read.p99", "write.iops"], "display order");
        let opts = CompareOptions { metrics: MetricFilter::parse("p99.9").unwrap(), ..Default::default() };
        let c = compare(&[runs("a", vec![a.clone()]), runs("b", vec![b.clone()])], &opts).unwrap();
        assert!(c.units[0].metrics.iter().all(|m| m.key.ends_with("p999")));
        let e = MetricFilter::parse("iops,p98").unwrap_err().to_string();
        assert!(e.starts_with("invalid value 'p98' for '--metric'"), "{e}");
        let opts = CompareOptions { metrics: MetricFilter::parse("tx").unwrap(), ..Default::default() };
        let e = compare(&[runs("a", vec![a.clone()]), runs("b", vec![b])], &opts).unwrap_err();
        assert!(matches!(e, CompareError::Metric(_)), "{e}");
    }

    #[test]
    fn loadgen_transactions_per_hour_and_latency_are_compared() {
        let mut a = crate::tests::sample();
        let lg = crate::loadgen::LoadgenResult {
            users: 1000,
            transactions_per_hour: 10_000.0,
            latency_ns: a.total.all.lat_ns,
            ..Default::default()
        };
        a.loadgen = Some(lg);
        let mut b = a.clone();
        if let Some(l) = b.loadgen.as_mut() {
            l.transactions_per_hour = 17_500.0;
        }
        let c = compare(&[runs("a", vec![a]), runs("b", vec![b])], &CompareOptions::default()).unwrap();
        let tx = metric(&c.units[0], "tx.tx_per_hour");
        assert_eq!(tx.changes[0].phrase, "tx/hour +75%");
        assert_eq!(tx.changes[0].verdict, Verdict::Better);
        assert_eq!(metric(&c.units[0], "tx.p99").label, "tx p99");
    }

    fn sweep(points: &[(&str, f64)], trials: usize) -> SweepResult {
        let base = crate::tests::sample();
        let points = points
            .iter()
            .enumerate()
            .map(|(i, &(qd, iops))| {
                let mut result = base.clone();
                result.total.all.iops = iops;
                let t: Vec<TrialMetrics> = (0..trials)
                    .map(|k| TrialMetrics {
                        seed: k as u64,
                        partial: false,
                        iops: iops + k as f64,
                        mb_s: iops * 4096.0 / 1e6,
                        lat_mean_ns: 1e5,
                        lat_p99_ns: 2e5,
                        achieved_depth: 1.0,
                        read_lat_mean_ns: None,
                        cache_read_pct: None,
                    })
                    .collect();
                SweepPoint {
                    index: i,
                    params: BTreeMap::from([("qd".to_string(), qd.to_string())]),
                    line: 0,
                    load: qd.parse().ok(),
                    result,
                    summary: PointSummary::from_trials(&t),
                    trials: if trials > 1 { t } else { Vec::new() },
                }
            })
            .collect();
        SweepResult {
            schema: SWEEP_SCHEMA.into(),
            iolab_version: "0.1.0".into(),
            started_at: "2025-01-02T03:04:05Z".into(),
            partial: false,
            base_seed: 1,
            trials: trials as u32,
            axes: vec![SweepAxis { key: "qd".into(), values: vec![] }],
            load_axis: Some("qd".into()),
            points_planned: 0,
            preconditioning: None,
            points,
            knee: None,
            max_p99: None,
        }
    }

    fn sweeps(source: &str, w: SweepResult) -> Side {
        Side { source: source.into(), docs: SideDocs::Sweeps(vec![w]) }
    }

    #[test]
    fn sweeps_are_compared_per_point_matched_by_params() {
        let a = sweep(&[("1", 1000.0), ("2", 2000.0), ("4", 3000.0)], 1);
        let b = sweep(&[("2", 3140.0), ("4", 6000.0), ("8", 9000.0)], 1);
        let c = compare(&[sweeps("a.json", a), sweeps("b.json", b)], &CompareOptions::default()).unwrap();
        assert_eq!(c.kind, "sweeps");
        assert_eq!(c.units.len(), 2);
        let p2 = &c.units[0];
        assert_eq!(p2.params.as_ref().unwrap()["qd"], "2");
        assert_eq!(metric(p2, "iops").changes[0].phrase, "IOPS +57%");
        assert_eq!(metric(&c.units[1], "iops").changes[0].phrase, "IOPS +100%");
        let unmatched: Vec<(&str, &Vec<String>)> =
            c.unmatched_points.iter().map(|p| (p.params["qd"].as_str(), &p.present_in)).collect();
        assert_eq!(unmatched, vec![("1", &vec!["A".to_string()]), ("8", &vec!["B".to_string()])]);
        let text = render_compare_text(&c);
        assert!(text.contains("point qd=2"), "{text}");
        assert!(text.contains("point qd=1 only in A: not compared"), "{text}");
    }

    #[test]
    fn sweep_points_with_trials_compare_headline_metrics_with_the_test() {
        let a = sweep(&[("2", 1000.0)], 3);
        let b = sweep(&[("2", 1570.0)], 3);
        let c = compare(&[sweeps("a", a), sweeps("b", b)], &CompareOptions::default()).unwrap();
        let u = &c.units[0];
        assert_eq!(u.trials, vec![3, 3]);
        let keys: Vec<&str> = u.metrics.iter().map(|m| m.key.as_str()).collect();
        assert_eq!(keys, vec!["iops", "mb_s", "mean", "p99", "depth"]);
        let iops = metric(u, "iops");
        assert_eq!(iops.sides[0].value, 1001.0);
        assert!(iops.changes[0].test.as_ref().unwrap().significant);
    }

    #[test]
    fn bad_inputs_are_errors_quoting_the_side() {
        let r = crate::tests::sample();
        let e = compare(&[runs("a", vec![r.clone()])], &CompareOptions::default()).unwrap_err();
        assert_eq!(e, CompareError::TooFewSides(1));
        let e = compare(&[runs("a", vec![r.clone()]), runs("tag:x=y", vec![])], &CompareOptions::default())
            .unwrap_err();
        assert_eq!(e.to_string(), "'tag:x=y' holds no run to compare");
        let e = compare(
            &[runs("r.json", vec![r.clone()]), sweeps("s.json", sweep(&[("1", 1.0)], 1))],
            &CompareOptions::default(),
        )
        .unwrap_err();
        assert!(e.to_string().contains("'r.json' (runs) with 's.json' (a sweep)"), "{e}");
        let opts = CompareOptions { alpha: 1.5, ..Default::default() };
        let e = compare(&[runs("a", vec![r.clone()]), runs("b", vec![r])], &opts).unwrap_err();
        assert!(e.to_string().contains("'--alpha'"), "{e}");
        let e = compare(
            &[sweeps("a", sweep(&[("1", 1.0)], 1)), sweeps("b", sweep(&[("2", 1.0)], 1))],
            &CompareOptions::default(),
        )
        .unwrap_err();
        assert_eq!(e, CompareError::NoCommonPoint);
    }

    #[test]
    fn zero_baseline_has_no_percentage_and_no_panic() {
        let mut a = crate::tests::sample();
        a.cpu.cpu_ns_per_io = 0.0;
        let b = crate::tests::sample();
        let c = compare(&[runs("a", vec![a]), runs("b", vec![b])], &CompareOptions::default()).unwrap();
        let cpu = metric(&c.units[0], "cpu_per_io");
        assert_eq!(cpu.changes[0].pct, None);
        assert_eq!(cpu.changes[0].phrase, "CPU per I/O n/a (baseline 0)");
        let _ = render_compare_text(&c);
        let _ = render_compare_markdown(&c);
    }
}
