//! What compare reads from I/O documents, runs ([`RUNS`]) and sweeps ([`SWEEPS`]): totals, read and write,
//! flushes and trims, groups, transactions, service time, CPU and depth, each trial a run or the headline
//! numbers a sweep point keeps of each of its trials; the notes on partial runs, trials of different
//! configurations and runs another tool measured (fio results imported with `iolab import fio-result`,
//! marked by [`crate::MeasuredBy`], where its definitions differ from iolab's).

use iolab_stats::LatencyHistogram;

use super::document::side_letter;
use super::metrics::{MetricDef, MetricOp, MetricScope, Stat, LATENCY, TRANSACTIONS};
use crate::model::{OpSummary, RunResult};
use crate::plugin::{ComparedPoint, ComparedTrial, Comparing, Document, HistogramParts, Metric, Peers};
use crate::sweep::{SweepResult, TrialMetrics};

/// Where fio's definitions differ from iolab's: the notes a comparison with a fio-measured side carries (also
/// in docs/FIO.md, "fio results").
pub const FIO_DEFINITION_NOTES: [&str; 4] = [
    "latency: iolab's response time runs from each I/O's intended start; fio's `lat` runs from when fio issued \
     the I/O, so in open loop (fio rate/rate_iops) fio leaves out the queueing delay (coordinated omission) \
     and its latency can look better than iolab's for the same load",
    "service latency: iolab's service time (submission -> completion) is close to fio's `clat`; a fio run has \
     response-time percentiles only when fio ran with lat_percentiles=1",
    "CPU: iolab counts the whole process (all workers and threads); fio's usr_cpu/sys_cpu are per job and leave \
     out fio's own main thread",
    "percentiles: fio's come from its own histogram bins (about 1-3% resolution), iolab's from HDR histograms \
     (0.1%); differences of a few percent in a percentile are not meaningful",
];

/// The `--metric` names of I/O metrics, with what they stand for.
const METRIC_NAMES: &[(&str, &str)] = &[
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
    ("latency", LATENCY),
    ("lat", LATENCY),
    ("tx", TRANSACTIONS),
];

/// Runs, compared whole: one run, or several of one configuration (its trials).
pub(crate) struct Runs;

/// Sweeps, compared point by point (a point matched across sides by its swept values, its runs pooled as
/// trials across the sweeps of a side).
pub(crate) struct Sweeps;

/// What compare reads from runs.
pub(crate) static RUNS: Runs = Runs;
/// What compare reads from sweeps.
pub(crate) static SWEEPS: Sweeps = Sweeps;

impl Comparing for Runs {
    fn name(&self) -> &'static str {
        "runs"
    }
    fn one(&self) -> &'static str {
        "an I/O run"
    }
    fn many(&self) -> &'static str {
        "I/O runs"
    }
    fn peers(&self) -> Peers {
        Peers::Io
    }
    fn metric_names(&self) -> &'static [(&'static str, &'static str)] {
        METRIC_NAMES
    }
    fn points<'a>(&self, doc: &'a dyn Document) -> Vec<ComparedPoint<'a>> {
        vec![ComparedPoint { params: None, trials: vec![ComparedTrial::document(doc)] }]
    }
    fn side(
        &self,
        docs: &[&dyn Document],
        letter: &str,
        source: &str,
        notes: &mut Vec<String>,
    ) -> (Vec<String>, Vec<u64>) {
        let r: Vec<&RunResult> = docs.iter().filter_map(|d| d.as_any().downcast_ref()).collect();
        if r.iter().any(|r| r.partial) {
            notes.push(format!("side {letter} ('{source}') includes a partial (interrupted) run"));
        }
        if r.iter().any(|x| strip_seed(x.config.as_value()) != strip_seed(r[0].config.as_value())) {
            notes.push(format!(
                "side {letter} ('{source}'): its runs have different configurations; they are treated as trials of one"
            ));
        }
        (r.iter().map(|r| r.run_id.clone()).collect(), r.iter().map(|r| r.seed).collect())
    }
    fn notes(&self, sides: &[(&str, Vec<&dyn Document>)]) -> Vec<String> {
        foreign_notes(sides, |d| d.as_any().downcast_ref::<RunResult>().into_iter().collect())
    }
    fn metrics(&self, trials: &[Vec<ComparedTrial<'_>>]) -> Vec<Metric> {
        metrics(trials)
    }
}

impl Comparing for Sweeps {
    fn name(&self) -> &'static str {
        "sweeps"
    }
    fn one(&self) -> &'static str {
        "an I/O sweep"
    }
    fn many(&self) -> &'static str {
        "I/O sweeps"
    }
    fn peers(&self) -> Peers {
        Peers::Io
    }
    fn by_point(&self) -> bool {
        true
    }
    fn metric_names(&self) -> &'static [(&'static str, &'static str)] {
        METRIC_NAMES
    }
    /// A sweep's points; a point with trials compares their headline numbers, one without its run.
    fn points<'a>(&self, doc: &'a dyn Document) -> Vec<ComparedPoint<'a>> {
        let Some(s) = doc.as_any().downcast_ref::<SweepResult>() else { return Vec::new() };
        s.points
            .iter()
            .map(|p| ComparedPoint {
                params: Some(p.params.clone()),
                trials: if p.trials.is_empty() {
                    vec![ComparedTrial::of(&p.result)]
                } else {
                    p.trials.iter().map(ComparedTrial::of).collect()
                },
            })
            .collect()
    }
    fn side(
        &self,
        docs: &[&dyn Document],
        letter: &str,
        source: &str,
        notes: &mut Vec<String>,
    ) -> (Vec<String>, Vec<u64>) {
        let w: Vec<&SweepResult> = docs.iter().filter_map(|d| d.as_any().downcast_ref()).collect();
        if w.iter().any(|w| w.partial) {
            notes.push(format!("side {letter} ('{source}') includes a partial (interrupted) sweep"));
        }
        (Vec::new(), w.iter().map(|w| w.base_seed).collect())
    }
    fn notes(&self, sides: &[(&str, Vec<&dyn Document>)]) -> Vec<String> {
        foreign_notes(sides, |d| {
            d.as_any()
                .downcast_ref::<SweepResult>()
                .map(|w| w.points.iter().map(|p| &p.result).collect())
                .unwrap_or_default()
        })
    }
    fn metrics(&self, trials: &[Vec<ComparedTrial<'_>>]) -> Vec<Metric> {
        metrics(trials)
    }
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

/// Notes for the sides measured by another tool: one per such side (which tool and version), then, once, where
/// the definitions differ. Empty when iolab measured every run. `runs` gives a document's runs.
fn foreign_notes<'a>(
    sides: &[(&str, Vec<&'a dyn Document>)],
    runs: impl Fn(&'a dyn Document) -> Vec<&'a RunResult>,
) -> Vec<String> {
    let mut notes = Vec::new();
    for (i, (source, docs)) in sides.iter().enumerate() {
        let runs: Vec<&RunResult> = docs.iter().flat_map(|d| runs(*d)).collect();
        let mut tools: Vec<String> = Vec::new();
        for m in runs.iter().filter_map(|r| r.measured_by.as_ref()) {
            let t = format!("{} ({})", m.tool, m.version);
            if !tools.contains(&t) {
                tools.push(t);
            }
        }
        if tools.is_empty() {
            continue;
        }
        let all = runs.iter().all(|r| r.measured_by.is_some());
        notes.push(format!(
            "side {} ('{source}'): {} measured by {}, not by iolab",
            side_letter(i),
            if all { "runs" } else { "some runs" },
            tools.join(", ")
        ));
    }
    if !notes.is_empty() {
        notes.extend(FIO_DEFINITION_NOTES.iter().map(|n| n.to_string()));
    }
    notes
}

/// A run's summary of one op kind in a scope (the totals or a group).
pub(crate) fn op_summary<'a>(r: &'a RunResult, scope: &MetricScope, kind: MetricOp) -> Option<&'a OpSummary> {
    let set = match scope {
        MetricScope::Total => &r.total,
        MetricScope::Group(g) => &r.groups.iter().find(|x| &x.name == g)?.total,
        _ => return None,
    };
    match kind {
        MetricOp::Read => Some(&set.read),
        MetricOp::Write => Some(&set.write),
        MetricOp::All => Some(&set.all),
        MetricOp::Flush => set.flush.as_ref(),
        MetricOp::Trim => set.trim.as_ref(),
    }
}

/// One trial's value of an I/O metric: a whole run's, or the headline numbers of a sweep point's trial.
fn value(def: &MetricDef, trial: ComparedTrial<'_>) -> Option<f64> {
    if let Some(t) = trial.get::<TrialMetrics>() {
        return headline(def, t);
    }
    let r = trial.get::<RunResult>()?;
    match &def.scope {
        MetricScope::Total | MetricScope::Group(_) => {
            let s = op_summary(r, &def.scope, def.op)?;
            let lat = s.lat_ns.as_ref();
            Some(match def.stat {
                Stat::Iops => s.iops,
                Stat::MbS => s.mb_s,
                Stat::Mean => lat?.mean,
                Stat::P50 => lat?.p50 as f64,
                Stat::P99 => lat?.p99 as f64,
                Stat::P999 => lat?.p999 as f64,
                Stat::Max => lat?.max as f64,
                Stat::ServiceMean => s.service_lat_ns.as_ref()?.mean,
                Stat::CpuPerIo if def.scope == MetricScope::Total => r.cpu.cpu_ns_per_io?,
                Stat::Depth => match &def.scope {
                    MetricScope::Group(g) => r.groups.iter().find(|x| &x.name == g)?.achieved_depth,
                    _ => r.depth.achieved,
                },
                _ => return None,
            })
        }
        MetricScope::Tx | MetricScope::TxType(_) => {
            let lg = r.loadgen.as_ref()?;
            let (per_hour, lat) = match &def.scope {
                MetricScope::TxType(t) => {
                    let t = lg.transactions.iter().find(|x| &x.name == t)?;
                    (t.transactions_per_hour, t.latency_ns.as_ref())
                }
                _ => (lg.transactions_per_hour, lg.latency_ns.as_ref()),
            };
            Some(match def.stat {
                Stat::TxPerHour => per_hour,
                Stat::Mean => lat?.mean,
                Stat::P50 => lat?.p50 as f64,
                Stat::P99 => lat?.p99 as f64,
                Stat::P999 => lat?.p999 as f64,
                Stat::Max => lat?.max as f64,
                _ => return None,
            })
        }
        MetricScope::Db | MetricScope::DbTx(_) => None,
    }
}

/// The headline numbers a sweep point keeps of each trial: the totals' IOPS, MB/s, mean, p99 and depth.
fn headline(def: &MetricDef, t: &TrialMetrics) -> Option<f64> {
    if def.scope != MetricScope::Total || def.op != MetricOp::All {
        return None;
    }
    match def.stat {
        Stat::Iops => Some(t.iops),
        Stat::MbS => Some(t.mb_s),
        Stat::Mean => t.lat_mean_ns,
        Stat::P99 => t.lat_p99_ns,
        Stat::Depth => Some(t.achieved_depth),
        _ => None,
    }
}

/// A run's part of a merged histogram of reads, writes or both, in the totals or a group: its histograms
/// and its op count. `None` for a trial that is not a full run, or lacks the histograms.
fn parts(scope: &MetricScope, kind: MetricOp, trial: ComparedTrial<'_>) -> HistogramParts {
    let r = trial.get::<RunResult>()?;
    let hs = r.histograms.as_ref()?;
    let (read, write) = match scope {
        MetricScope::Total => (hs.read.as_ref(), hs.write.as_ref()),
        MetricScope::Group(g) => match hs.groups.get(g) {
            Some(gh) => (gh.read.as_ref(), gh.write.as_ref()),
            None => (None, None),
        },
        _ => return None,
    };
    let ops = op_summary(r, scope, kind).map_or(0, |s| s.ops);
    let wanted = match kind {
        MetricOp::Read => [read, None],
        MetricOp::Write => [write, None],
        MetricOp::All => [read, write],
        // No merged histograms of flushes or trims are kept: the trials' mean stands.
        MetricOp::Flush | MetricOp::Trim => return None,
    };
    let hs: Option<Vec<LatencyHistogram>> =
        wanted.into_iter().flatten().map(|p| LatencyHistogram::from_base64(p).ok()).collect();
    Some((hs?, ops))
}

/// Every I/O metric the trials can provide, in display order (totals, read, write, service, CPU, depth,
/// groups, transactions). Read and write rows appear only when some trial had ops of that kind; group rows
/// only when some trial has more than one group (a single group repeats the totals).
fn metrics(all_trials: &[Vec<ComparedTrial<'_>>]) -> Vec<Metric> {
    defs(all_trials).into_iter().map(|d| d.metric(value, parts)).collect()
}

fn defs(all_trials: &[Vec<ComparedTrial<'_>>]) -> Vec<MetricDef> {
    let fulls = || all_trials.iter().flatten().filter_map(|t| t.get::<RunResult>());
    let has_kind = |scope: &MetricScope, kind: MetricOp| {
        fulls().any(|r| op_summary(r, scope, kind).is_some_and(|s| s.ops > 0))
    };
    let op_block = |scope: MetricScope, defs: &mut Vec<MetricDef>| {
        let mut kinds = vec![MetricOp::All];
        kinds.extend([MetricOp::Read, MetricOp::Write].into_iter().filter(|&k| has_kind(&scope, k)));
        // Pure reads or pure writes: the kind's rows would repeat the "all" rows; keep them only for mixes.
        if kinds.len() == 2 {
            kinds.truncate(1);
        }
        for kind in kinds {
            for stat in [Stat::Iops, Stat::MbS, Stat::Mean, Stat::P50, Stat::P99, Stat::P999, Stat::Max] {
                defs.push(MetricDef { scope: scope.clone(), op: kind, stat });
            }
        }
        // Flushes and trims: their own rows when a side issued any (a flush moves no bytes: no MB/s).
        for kind in [MetricOp::Flush, MetricOp::Trim].into_iter().filter(|&k| has_kind(&scope, k)) {
            for stat in [Stat::Iops, Stat::Mean, Stat::P50, Stat::P99, Stat::P999, Stat::Max] {
                defs.push(MetricDef { scope: scope.clone(), op: kind, stat });
            }
        }
        defs.push(MetricDef { scope: scope.clone(), op: MetricOp::All, stat: Stat::ServiceMean });
        if scope == MetricScope::Total {
            defs.push(MetricDef { scope: scope.clone(), op: MetricOp::All, stat: Stat::CpuPerIo });
        }
        defs.push(MetricDef { scope, op: MetricOp::All, stat: Stat::Depth });
    };
    let mut defs = Vec::new();
    op_block(MetricScope::Total, &mut defs);
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
            op_block(MetricScope::Group(g), &mut defs);
        }
    }
    if fulls().any(|r| r.loadgen.is_some()) {
        let lat = [Stat::TxPerHour, Stat::Mean, Stat::P50, Stat::P99, Stat::P999, Stat::Max];
        for stat in lat {
            defs.push(MetricDef { scope: MetricScope::Tx, op: MetricOp::All, stat });
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
                    defs.push(MetricDef { scope: MetricScope::TxType(t.clone()), op: MetricOp::All, stat });
                }
            }
        }
    }
    defs
}
