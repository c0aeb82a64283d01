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
//! - `metrics.rs`: which metrics a side offers, and each trial's value of one;
//! - `document.rs`: the comparison document (`iolab.compare/1`), plain serde data;
//! - `foreign.rs`: notes for runs another tool measured (fio), where its definitions differ from iolab's;
//! - this module: [`compare`], which builds the document;
//! - the text and Markdown renderings are the exporters' ([`crate::export`]).
//!
//! Everything here reads numbers only; the cli (crates/cli/src/compare.rs) resolves catalog IDs, tag queries
//! and files into [`Side`]s. The rules are documented for users in docs/COMPARE.md.

use std::collections::{BTreeMap, HashMap};

use iolab_stats::{inference, LatencyHistogram};

mod document;
mod foreign;
mod input;
mod metrics;
#[cfg(test)]
mod tests;

pub use document::{
    change_phrase, change_verdict, format_pct, side_letter, Better, Change, ChangeVerdict, Comparison,
    MetricComparison, SideInfo, SideValue, Unit, UnitComparison, UnmatchedPoint, ValueSource, WelchTest,
    COMPARE_SCHEMA, DEFAULT_ALPHA, MIN_TRIALS_FOR_TEST, SAME_REL, TEST_NAME,
};
pub use foreign::FIO_DEFINITION_NOTES;
pub use input::{CompareError, Side, SideDocs};
pub use metrics::MetricFilter;

use document::same;
use metrics::{extract, histogram_stat, merged_histogram, metric_defs, Kind, MetricDef, Scope, Trial};

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

fn side_value(def: &MetricDef, trials: &[Trial<'_>], cache: &mut HistCache) -> Option<SideValue> {
    let values: Vec<f64> = trials.iter().filter_map(|t| extract(def, *t)).collect();
    if values.is_empty() {
        return None;
    }
    let (mean, var) = inference::mean_and_sample_variance(&values);
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let (value, source) = if values.len() == 1 && trials.len() == 1 {
        (values[0], ValueSource::SingleRun)
    } else if def.stat.is_latency() && matches!(def.scope, Scope::Total | Scope::Group(_) | Scope::DbTx(_)) {
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
        let better = def.better();
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
                    .then(|| WelchTest::from_trials(&base.trials, &v.trials, opts.alpha))
                    .flatten();
                let phrase = match ratio_of(&def.key(), base.value, v.value) {
                    Some(r) => format!("{label} {r} ({})", pct.map_or("n/a".into(), format_pct)),
                    None => change_phrase(&label, pct),
                };
                Change {
                    side: side_letter(i),
                    diff,
                    pct,
                    verdict: change_verdict(better, base.value, v.value),
                    phrase,
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

/// A side's value as a ratio of the baseline's (`0.52x`), for the metrics that show one
/// ([`metrics::shows_ratio`]); `None` for the others, or a baseline of 0.
pub(crate) fn ratio_of(key: &str, base: f64, value: f64) -> Option<String> {
    (metrics::shows_ratio(key) && base > 0.0 && value.is_finite()).then(|| format!("{:.2}x", value / base))
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
            SideDocs::Db(d) => d.is_empty(),
            SideDocs::DbSweeps(w) => w.is_empty() || w.iter().all(|w| w.points.is_empty()),
            SideDocs::Tpch(t) => t.is_empty(),
            SideDocs::Copy(c) => c.is_empty(),
        };
        if empty {
            return Err(CompareError::EmptySide(s.source.clone()));
        }
    }
    check_own_kind(sides)?;
    if let (Some(db), Some(io)) =
        (sides.iter().find(|s| s.docs.is_db()), sides.iter().find(|s| !s.docs.is_db()))
    {
        return Err(CompareError::DbWithIo { db: db.source.clone(), io: io.source.clone() });
    }
    let run_side = sides.iter().find(|s| !s.docs.is_sweep());
    let sweep_side = sides.iter().find(|s| s.docs.is_sweep());
    if let (Some(r), Some(w)) = (run_side, sweep_side) {
        return Err(CompareError::MixedKinds { runs: r.source.clone(), sweeps: w.source.clone() });
    }
    let mut notes = Vec::new();
    let infos: Vec<SideInfo> = sides.iter().enumerate().map(|(i, s)| side_info(i, s, &mut notes)).collect();
    notes.extend(foreign::foreign_notes(sides));
    notes.extend(db_notes(sides));
    let mut unmatched_points = Vec::new();
    let units = match run_side {
        Some(_) => {
            let trials: Vec<Vec<Trial<'_>>> = sides
                .iter()
                .map(|s| match &s.docs {
                    SideDocs::Runs(r) => r.iter().map(Trial::Full).collect(),
                    SideDocs::Db(d) => d.iter().map(Trial::Db).collect(),
                    SideDocs::Tpch(t) => t.iter().map(Trial::Tpch).collect(),
                    SideDocs::Copy(c) => c.iter().map(Trial::Copy).collect(),
                    SideDocs::Sweeps(_) | SideDocs::DbSweeps(_) => Vec::new(),
                })
                .collect();
            vec![compare_unit(None, &trials, opts)]
        }
        None => sweep_units(sides, opts, &mut unmatched_points)?,
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
    let kind = match &sides[0].docs {
        SideDocs::Runs(_) => "runs",
        SideDocs::Sweeps(_) => "sweeps",
        SideDocs::Db(_) => "db",
        SideDocs::DbSweeps(_) => "db_sweeps",
        SideDocs::Tpch(_) => "db_tpch",
        SideDocs::Copy(_) => "db_copy",
    };
    Ok(Comparison {
        schema: COMPARE_SCHEMA.to_string(),
        kind: kind.to_string(),
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

/// The units of sweeps: one per point every side has (matched by its params, in the order first seen);
/// the points not every side has go to `unmatched`.
fn sweep_units(
    sides: &[Side],
    opts: &CompareOptions,
    unmatched: &mut Vec<UnmatchedPoint>,
) -> Result<Vec<UnitComparison>, CompareError> {
    let per_side: Vec<Vec<PointTrials<'_>>> = sides.iter().map(sweep_points).collect();
    let mut units = Vec::new();
    let mut seen: Vec<&BTreeMap<String, String>> = Vec::new();
    for points in &per_side {
        for (params, _) in points {
            if seen.contains(&params) {
                continue;
            }
            seen.push(params);
            let found: Vec<Option<&Vec<Trial<'_>>>> =
                per_side.iter().map(|pts| pts.iter().find(|(p, _)| p == params).map(|(_, t)| t)).collect();
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
                unmatched.push(UnmatchedPoint { params: params.clone(), present_in });
            }
        }
    }
    if units.is_empty() {
        return Err(CompareError::NoCommonPoint);
    }
    Ok(units)
}

fn side_info(i: usize, s: &Side, notes: &mut Vec<String>) -> SideInfo {
    let label = side_letter(i);
    let (documents, run_ids, seeds) = match &s.docs {
        SideDocs::Runs(r) => {
            if r.iter().any(|r| r.partial) {
                notes.push(format!("side {label} ('{}') includes a partial (interrupted) run", s.source));
            }
            if r.iter().any(|x| strip_seed(x.config.as_value()) != strip_seed(r[0].config.as_value())) {
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
        SideDocs::Db(d) => {
            if d.iter().any(|r| r.partial) {
                notes.push(format!("side {label} ('{}') includes a partial (interrupted) run", s.source));
            }
            let config = |r: &crate::db::DbResult| serde_json::to_value((&r.config, &r.engine.name)).ok();
            if d.iter().any(|r| config(r) != config(&d[0])) {
                notes.push(format!(
                    "side {label} ('{}'): its runs have different configurations; they are treated as trials of one",
                    s.source
                ));
            }
            (d.len(), Vec::new(), d.iter().map(|r| r.header.seed).collect())
        }
        SideDocs::DbSweeps(w) => {
            if w.iter().any(|w| w.partial) {
                notes.push(format!("side {label} ('{}') includes a partial (interrupted) sweep", s.source));
            }
            (w.len(), Vec::new(), w.iter().map(|w| w.header.seed).collect())
        }
        SideDocs::Tpch(t) => {
            if t.iter().any(|r| r.partial) {
                notes.push(format!(
                    "side {label} ('{}') includes a partial (interrupted) query set",
                    s.source
                ));
            }
            let config = |r: &crate::db_tpch::TpchResult| (r.config.scale, r.engine.name.clone());
            if t.iter().any(|r| config(r) != config(&t[0])) {
                notes.push(format!(
                    "side {label} ('{}'): its query sets have different scales or engines; they are treated as trials of one",
                    s.source
                ));
            }
            (t.len(), Vec::new(), t.iter().map(|r| r.header.seed).collect())
        }
        SideDocs::Copy(c) => (c.len(), Vec::new(), c.iter().map(|r| r.header.seed).collect()),
    };
    SideInfo { label, source: s.source.clone(), documents, run_ids, seeds }
}

/// The database runs of a side, as the notes need them: each run's engine and the devices under it.
fn db_runs(s: &Side) -> Vec<(&str, Vec<&crate::db::DeviceView>)> {
    fn tpcc(r: &crate::db::DbResult) -> (&str, Vec<&crate::db::DeviceView>) {
        (r.engine.name.as_str(), r.devices.iter().collect())
    }
    match &s.docs {
        SideDocs::Db(d) => d.iter().map(tpcc).collect(),
        SideDocs::DbSweeps(w) => w.iter().flat_map(|w| w.points.iter().map(|p| tpcc(&p.result))).collect(),
        SideDocs::Tpch(t) => t.iter().map(|r| (r.engine.name.as_str(), r.devices.iter().collect())).collect(),
        SideDocs::Copy(c) => c
            .iter()
            .map(|r| {
                (r.engine.name.as_str(), r.source_devices.iter().chain(&r.destination_devices).collect())
            })
            .collect(),
        SideDocs::Runs(_) | SideDocs::Sweeps(_) => Vec::new(),
    }
}

/// Refuses a tpch query set or a database copy beside any other kind of document: each compares only with
/// its own kind.
fn check_own_kind(sides: &[Side]) -> Result<(), CompareError> {
    for s in sides {
        let Some((what, kind)) = s.docs.only_with_its_own() else { continue };
        if let Some(o) = sides.iter().find(|o| o.docs.only_with_its_own() != Some((what, kind))) {
            return Err(CompareError::OtherWorkload {
                source: s.source.clone(),
                what,
                kind,
                other: o.source.clone(),
                other_what: o.docs.kind_words(),
            });
        }
    }
    Ok(())
}

/// What to know when comparing database runs: what the workload is derived from (the documents' own
/// disclaimer); which engine and devices each side ran on (the device rows compare them by their role under
/// the database's file system); and, with one engine on one side and another on the other, that the
/// difference is the engines' as much as the storage's.
fn db_notes(sides: &[Side]) -> Vec<String> {
    let runs = db_runs;
    if sides.iter().all(|s| runs(s).is_empty()) {
        return Vec::new();
    }
    let mut notes: Vec<String> = match &sides[0].docs {
        SideDocs::Tpch(_) => vec![crate::db_tpch::TPCH_DISCLAIMER.to_string()],
        SideDocs::Copy(_) => Vec::new(),
        _ => vec![crate::db::TPCC_DISCLAIMER.to_string()],
    };
    let mut engines: Vec<&str> = Vec::new();
    let mut where_: Vec<String> = Vec::new();
    for (i, s) in sides.iter().enumerate() {
        let rs = runs(s);
        let mut devices: Vec<String> = Vec::new();
        for d in rs.iter().flat_map(|(_, ds)| ds) {
            let name = format!("{} ({})", d.name, d.role);
            if !devices.contains(&name) {
                devices.push(name);
            }
        }
        let mut names: Vec<&str> = Vec::new();
        for (engine, _) in &rs {
            if !names.contains(engine) {
                names.push(engine);
            }
            if !engines.contains(engine) {
                engines.push(engine);
            }
        }
        let on = if devices.is_empty() { "no device view".to_string() } else { devices.join(", ") };
        where_.push(format!("{} {} on {on}", side_letter(i), names.join("+")));
    }
    notes.push(format!("engines and devices: {}", where_.join("; ")));
    if engines.len() > 1 {
        notes.push(
            "the sides ran different database engines: the differences are the engines' as much as the storage's"
                .to_string(),
        );
    }
    notes
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

/// A sweep side's points: params -> trials, pooling points with the same params (across sweeps too). A
/// database sweep's points are its user counts (`users=4`).
fn sweep_points(s: &Side) -> Vec<PointTrials<'_>> {
    let mut out: Vec<PointTrials<'_>> = Vec::new();
    if let SideDocs::DbSweeps(sweeps) = &s.docs {
        for p in sweeps.iter().flat_map(|w| &w.points) {
            let params = BTreeMap::from([("users".to_string(), p.users.to_string())]);
            match out.iter_mut().find(|(q, _)| *q == params) {
                Some((_, t)) => t.push(Trial::Db(&p.result)),
                None => out.push((params, vec![Trial::Db(&p.result)])),
            }
        }
        return out;
    }
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
