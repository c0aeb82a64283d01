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
//! run when both sides have at least [`MIN_TRIALS_FOR_TEST`] trials; the formulas and references are in
//! [`iolab_stats::inference`]. The difference is *significant* when p < alpha (default 0.05).
//!
//! Assumptions: each trial is an independent run, and the per-trial values are roughly normal (means of many
//! I/Os are, by the central limit theorem; a max is not, so read the test on max latency with care). The
//! variances may differ.
//!
//! # Where things are
//!
//! - `input.rs`: the sides as the cli hands them over, and the errors;
//! - `metrics.rs`: the `--metric` filter, and the vocabulary the I/O and tpcc metrics are defined in;
//! - `io.rs`, `db.rs`: what compare reads from I/O runs and sweeps, and from tpcc runs and sweeps over users
//!   (each a [`crate::plugin::Comparing`], which their kinds declare; other kinds declare theirs in their own
//!   file under `crate::kinds`);
//! - `document.rs`: the comparison document (`iolab.compare/1`), plain serde data;
//! - this module: [`compare`], which builds the document from any kind's sides, the same way for all;
//! - the text and Markdown renderings are the exporters' ([`crate::export`]).
//!
//! Everything here reads numbers only; the cli (crates/cli/src/compare.rs) resolves catalog IDs, tag queries
//! and files into [`Side`]s. The rules are documented for users in docs/COMPARE.md.

use std::collections::{BTreeMap, HashMap};

use iolab_stats::{inference, LatencyHistogram};

pub(crate) mod db;
mod document;
mod input;
pub(crate) mod io;
pub(crate) mod metrics;
#[cfg(test)]
mod tests;

pub use document::{
    change_phrase, change_verdict, format_pct, side_letter, Better, Change, ChangeVerdict, Comparison,
    MetricComparison, SideInfo, SideValue, Unit, UnitComparison, UnmatchedPoint, ValueSource, WelchTest,
    COMPARE_SCHEMA, DEFAULT_ALPHA, MIN_TRIALS_FOR_TEST, SAME_REL, TEST_NAME,
};
pub use input::{CompareError, Side};
pub use io::FIO_DEFINITION_NOTES;
pub use metrics::MetricFilter;

use crate::plugin::{ComparedTrial, Comparing, Document, Metric, Peers};
use document::same;

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

/// The merged histograms of one side's trials, by [`crate::plugin::Merged::histogram`]: merged once, read
/// for each statistic.
type HistCache = HashMap<String, Option<LatencyHistogram>>;

/// The merged histogram of `trials` for `m`; `None` when a trial has no part of it, one does not decode, or
/// the merged count disagrees with the op counts (then the caller falls back to the mean of the trials).
fn merged_histogram(m: &crate::plugin::Merged, trials: &[ComparedTrial<'_>]) -> Option<LatencyHistogram> {
    let mut acc: Option<LatencyHistogram> = None;
    let mut ops = 0u64;
    for t in trials {
        let (hs, n) = (m.parts)(*t)?;
        ops = ops.saturating_add(n);
        for h in hs {
            match &mut acc {
                None => acc = Some(h),
                Some(a) => a.merge(&h),
            }
        }
    }
    acc.filter(|h| h.count() == ops && ops > 0)
}

fn side_value(m: &Metric, trials: &[ComparedTrial<'_>], cache: &mut HistCache) -> Option<SideValue> {
    let values: Vec<f64> = trials.iter().filter_map(|t| (m.value)(*t)).collect();
    if values.is_empty() {
        return None;
    }
    let (mean, var) = inference::mean_and_sample_variance(&values);
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let (value, source) = if values.len() == 1 && trials.len() == 1 {
        (values[0], ValueSource::SingleRun)
    } else if let Some(merged) = &m.merged {
        let h = cache.entry(merged.histogram.clone()).or_insert_with(|| merged_histogram(merged, trials));
        match h.as_ref().and_then(|h| merged.quantile.of(h)) {
            Some(v) => (v, ValueSource::MergedHistograms),
            None => (mean, ValueSource::MeanOfTrials),
        }
    } else {
        (mean, ValueSource::MeanOfTrials)
    };
    let sd = (values.len() > 1).then(|| var.sqrt());
    Some(SideValue { value, source, trials: values, mean, sd, min, max })
}

fn compare_unit(
    rules: &dyn Comparing,
    params: Option<BTreeMap<String, String>>,
    sides: &[Vec<ComparedTrial<'_>>],
    opts: &CompareOptions,
) -> UnitComparison {
    let mut caches: Vec<HistCache> = sides.iter().map(|_| HistCache::new()).collect();
    let mut metrics = Vec::new();
    for m in rules.metrics(sides) {
        if !opts.metrics.keeps(&m) {
            continue;
        }
        let values: Option<Vec<SideValue>> =
            sides.iter().zip(caches.iter_mut()).map(|(t, c)| side_value(&m, t, c)).collect();
        let Some(values) = values else { continue };
        metrics.push(metric_comparison(m, values, opts));
    }
    UnitComparison { params, trials: sides.iter().map(Vec::len).collect(), metrics }
}

/// One metric across the sides: each side against the baseline, the best.
fn metric_comparison(m: Metric, values: Vec<SideValue>, opts: &CompareOptions) -> MetricComparison {
    let base = &values[0];
    let changes = values
        .iter()
        .enumerate()
        .skip(1)
        .map(|(i, v)| {
            let diff = v.value - base.value;
            let pct = (base.value != 0.0).then(|| 100.0 * diff / base.value);
            let test = (base.trials.len() >= MIN_TRIALS_FOR_TEST && v.trials.len() >= MIN_TRIALS_FOR_TEST)
                .then(|| WelchTest::from_trials(&base.trials, &v.trials, opts.alpha))
                .flatten();
            let phrase = match ratio_of(m.ratio, base.value, v.value) {
                Some(r) => format!("{} {r} ({})", m.label, pct.map_or("n/a".into(), format_pct)),
                None => change_phrase(&m.label, pct),
            };
            Change {
                side: side_letter(i),
                diff,
                pct,
                verdict: change_verdict(m.better, base.value, v.value),
                phrase,
                test,
            }
        })
        .collect();
    let best = best_sides(m.better, &values);
    MetricComparison {
        key: m.key,
        label: m.label,
        scope: m.scope,
        unit: m.unit,
        better: m.better,
        sides: values,
        changes,
        best,
        ratio: m.ratio,
    }
}

/// A side's value as a ratio of the baseline's (`0.52x`), for the metrics that show one
/// ([`crate::plugin::Metric::ratio`]); `None` for the others, or a baseline of 0.
pub(crate) fn ratio_of(ratio: bool, base: f64, value: f64) -> Option<String> {
    (ratio && base > 0.0 && value.is_finite()).then(|| format!("{:.2}x", value / base))
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

/// What compare reads from each side's documents; a side with none, or whose points are all empty (a sweep
/// of no point), is [`CompareError::EmptySide`].
fn side_rules(sides: &[Side]) -> Result<Vec<&'static dyn Comparing>, CompareError> {
    let mut all = Vec::with_capacity(sides.len());
    for s in sides {
        let rules = s.rules()?.ok_or_else(|| CompareError::EmptySide(s.source.clone()))?;
        if s.docs.iter().all(|d| rules.points(d.as_ref()).iter().all(|p| p.trials.is_empty())) {
            return Err(CompareError::EmptySide(s.source.clone()));
        }
        all.push(rules);
    }
    Ok(all)
}

/// The `iolab runs --kind` that lists a side's peers: the kind of its first document as users type it.
fn typed_kind(s: &Side) -> &'static str {
    let kind = s.docs.first().map(|d| d.kind());
    kind.and_then(|k| k.entries().first()).map_or("", |e| e.printed())
}

/// Refuses sides that do not compare: a kind that compares only with its own beside another kind; a
/// database run beside an I/O run; documents compared whole beside sweeps; any two other kinds.
fn check_peers(sides: &[Side], rules: &[&'static dyn Comparing]) -> Result<(), CompareError> {
    let other_workload = |i: usize, o: usize| CompareError::OtherWorkload {
        source: sides[i].source.clone(),
        what: rules[i].one(),
        kind: typed_kind(&sides[i]),
        other: sides[o].source.clone(),
        other_what: rules[o].one(),
    };
    for (i, r) in rules.iter().enumerate().filter(|(_, r)| r.peers() == Peers::OwnKind) {
        if let Some(o) = rules.iter().position(|x| x.name() != r.name()) {
            return Err(other_workload(i, o));
        }
    }
    let db = rules.iter().position(|r| r.peers() == Peers::Database);
    let io = rules.iter().position(|r| r.peers() == Peers::Io);
    if let (Some(db), Some(io)) = (db, io) {
        return Err(CompareError::DbWithIo { db: sides[db].source.clone(), io: sides[io].source.clone() });
    }
    let whole = rules.iter().position(|r| !r.by_point());
    let points = rules.iter().position(|r| r.by_point());
    if let (Some(r), Some(w)) = (whole, points) {
        return Err(CompareError::MixedKinds {
            runs: sides[r].source.clone(),
            sweeps: sides[w].source.clone(),
        });
    }
    match rules.iter().position(|r| r.name() != rules[0].name()) {
        Some(o) => Err(other_workload(0, o)),
        None => Ok(()),
    }
}

/// Compares the sides (the first is the baseline). See the module header for the rules.
pub fn compare(sides: &[Side], opts: &CompareOptions) -> Result<Comparison, CompareError> {
    if sides.len() < 2 {
        return Err(CompareError::TooFewSides(sides.len()));
    }
    if !(opts.alpha > 0.0 && opts.alpha < 1.0) {
        return Err(CompareError::BadAlpha(opts.alpha));
    }
    let all_rules = side_rules(sides)?;
    check_peers(sides, &all_rules)?;
    let rules = all_rules[0];
    let docs: Vec<(&str, Vec<&dyn Document>)> =
        sides.iter().map(|s| (s.source.as_str(), s.docs.iter().map(AsRef::as_ref).collect())).collect();
    let mut notes = Vec::new();
    let infos: Vec<SideInfo> = docs
        .iter()
        .enumerate()
        .map(|(i, (source, d))| {
            let label = side_letter(i);
            let (run_ids, seeds) = rules.side(d, &label, source, &mut notes);
            SideInfo { label, source: source.to_string(), documents: d.len(), run_ids, seeds }
        })
        .collect();
    notes.extend(rules.notes(&docs));
    let mut unmatched_points = Vec::new();
    let units = units(rules, sides, opts, &mut unmatched_points)?;
    if units.iter().all(|u| u.metrics.is_empty()) {
        return Err(CompareError::Metric(
            "no metric to compare: the --metric filter matches no metric that every side has".to_string(),
        ));
    }
    notes.extend(averaged_note(&units));
    Ok(Comparison {
        schema: COMPARE_SCHEMA.to_string(),
        kind: rules.name().to_string(),
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

/// The note on response-time statistics of the totals and groups that are means over trials, not read from
/// merged histograms (at most six named).
fn averaged_note(units: &[UnitComparison]) -> Option<String> {
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
    if averaged.is_empty() {
        return None;
    }
    let mut labels: Vec<&str> = Vec::new();
    for l in averaged {
        if !labels.contains(&l) {
            labels.push(l);
        }
    }
    let more = if labels.len() > 6 { format!(" and {} more", labels.len() - 6) } else { String::new() };
    labels.truncate(6);
    Some(format!(
        "{}{more}: means over trials, not from merged histograms (documents without histograms, or sweep points with trials)",
        labels.join(", ")
    ))
}

/// The units: one per point every side has (matched by its params, in the order first seen; a document
/// compared whole is one point without params); the points not every side has go to `unmatched`.
fn units(
    rules: &dyn Comparing,
    sides: &[Side],
    opts: &CompareOptions,
    unmatched: &mut Vec<UnmatchedPoint>,
) -> Result<Vec<UnitComparison>, CompareError> {
    let per_side: Vec<Vec<PointTrials<'_>>> = sides.iter().map(|s| side_points(rules, s)).collect();
    let mut units = Vec::new();
    let mut seen: Vec<&Option<BTreeMap<String, String>>> = Vec::new();
    for points in &per_side {
        for (params, _) in points {
            if seen.contains(&params) {
                continue;
            }
            seen.push(params);
            let found: Vec<Option<&Vec<ComparedTrial<'_>>>> =
                per_side.iter().map(|pts| pts.iter().find(|(p, _)| p == params).map(|(_, t)| t)).collect();
            if found.iter().all(Option::is_some) {
                let trials: Vec<Vec<ComparedTrial<'_>>> = found.into_iter().flatten().cloned().collect();
                units.push(compare_unit(rules, params.clone(), &trials, opts));
            } else if let Some(params) = params {
                let present_in = found
                    .iter()
                    .enumerate()
                    .filter(|(_, f)| f.is_some())
                    .map(|(i, _)| side_letter(i))
                    .collect();
                unmatched.push(UnmatchedPoint { params: params.clone(), present_in });
            }
        }
    }
    if units.is_empty() {
        return Err(CompareError::NoCommonPoint);
    }
    Ok(units)
}

/// A point's params and its trials.
type PointTrials<'a> = (Option<BTreeMap<String, String>>, Vec<ComparedTrial<'a>>);

/// A side's points: params -> trials, pooling points with the same params (across its documents too: the
/// trials of runs, the points of several sweeps).
fn side_points<'a>(rules: &dyn Comparing, s: &'a Side) -> Vec<PointTrials<'a>> {
    let mut out: Vec<PointTrials<'a>> = Vec::new();
    for p in s.docs.iter().flat_map(|d| rules.points(d.as_ref())) {
        match out.iter_mut().find(|(params, _)| *params == p.params) {
            Some((_, t)) => t.extend(p.trials),
            None => out.push((p.params, p.trials)),
        }
    }
    out
}
