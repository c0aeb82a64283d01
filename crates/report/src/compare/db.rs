//! What compare reads from tpcc documents, runs ([`TPCC`]) and their sweeps over users ([`TPCC_SWEEPS`]):
//! NOPM and TPM, each transaction type's rate and response times (merged over trials from their
//! histograms), the devices under the database matched by role; and what every database document's
//! comparison notes ([`db_notes`]): what its workload is derived from, the engines and devices each side
//! ran on.

use std::collections::BTreeMap;

use iolab_stats::LatencyHistogram;

use super::document::side_letter;
use super::metrics::{device_keys, device_metrics, MetricDef, MetricOp, MetricScope, Stat, DEVICES};
use crate::db::{DbResult, DeviceView, TPCC_DISCLAIMER};
use crate::db_sweep::DbSweepResult;
use crate::plugin::{ComparedPoint, ComparedTrial, Comparing, Document, HistogramParts, Metric, Peers};

/// The `--metric` names of database metrics (the devices' too), with what they stand for.
pub(crate) const METRIC_NAMES: &[(&str, &str)] = &[
    ("nopm", "nopm"),
    ("tpm", "tpm"),
    ("per_minute", "per_minute"),
    ("p95", "p95"),
    ("busy", "busy"),
    ("device", DEVICES),
];

/// tpcc runs, compared whole: one, or several of one configuration (its trials).
pub(crate) struct TpccRuns;

/// tpcc sweeps over users, compared point by point (a point is a user count).
pub(crate) struct TpccSweeps;

/// What compare reads from tpcc runs.
pub(crate) static TPCC: TpccRuns = TpccRuns;
/// What compare reads from tpcc sweeps over users.
pub(crate) static TPCC_SWEEPS: TpccSweeps = TpccSweeps;

impl Comparing for TpccRuns {
    fn name(&self) -> &'static str {
        "db"
    }
    fn one(&self) -> &'static str {
        "a tpcc run, iolab db tpcc"
    }
    fn many(&self) -> &'static str {
        "tpcc runs"
    }
    fn peers(&self) -> Peers {
        Peers::Database
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
        let d: Vec<&DbResult> = docs.iter().filter_map(|d| d.as_any().downcast_ref()).collect();
        if d.iter().any(|r| r.partial) {
            notes.push(format!("side {letter} ('{source}') includes a partial (interrupted) run"));
        }
        let config = |r: &DbResult| serde_json::to_value((&r.config, &r.engine.name)).ok();
        if d.iter().any(|r| config(r) != config(d[0])) {
            notes.push(format!(
                "side {letter} ('{source}'): its runs have different configurations; they are treated as trials of one"
            ));
        }
        (Vec::new(), d.iter().map(|r| r.header.seed).collect())
    }
    fn notes(&self, sides: &[(&str, Vec<&dyn Document>)]) -> Vec<String> {
        let mut notes = db_notes(sides, Some(TPCC_DISCLAIMER), |d| {
            d.as_any().downcast_ref().map(tpcc_run).into_iter().collect()
        });
        let runs: Vec<Vec<&DbResult>> =
            sides.iter().map(|(_, d)| d.iter().filter_map(|d| d.as_any().downcast_ref()).collect()).collect();
        notes.extend(settings_differ(&runs));
        notes
    }
    fn metrics(&self, trials: &[Vec<ComparedTrial<'_>>]) -> Vec<Metric> {
        metrics(trials)
    }
}

impl Comparing for TpccSweeps {
    fn name(&self) -> &'static str {
        "db_sweeps"
    }
    fn one(&self) -> &'static str {
        "a tpcc sweep over users"
    }
    fn many(&self) -> &'static str {
        "tpcc sweeps over users"
    }
    fn peers(&self) -> Peers {
        Peers::Database
    }
    fn by_point(&self) -> bool {
        true
    }
    fn metric_names(&self) -> &'static [(&'static str, &'static str)] {
        METRIC_NAMES
    }
    /// A sweep's user counts (`users=4`), each its run.
    fn points<'a>(&self, doc: &'a dyn Document) -> Vec<ComparedPoint<'a>> {
        let Some(s) = doc.as_any().downcast_ref::<DbSweepResult>() else { return Vec::new() };
        s.points
            .iter()
            .map(|p| ComparedPoint {
                params: Some(BTreeMap::from([("users".to_string(), p.users.to_string())])),
                trials: vec![ComparedTrial::of(&p.result)],
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
        let w: Vec<&DbSweepResult> = docs.iter().filter_map(|d| d.as_any().downcast_ref()).collect();
        if w.iter().any(|w| w.partial) {
            notes.push(format!("side {letter} ('{source}') includes a partial (interrupted) sweep"));
        }
        (Vec::new(), w.iter().map(|w| w.header.seed).collect())
    }
    fn notes(&self, sides: &[(&str, Vec<&dyn Document>)]) -> Vec<String> {
        let mut notes = db_notes(sides, Some(TPCC_DISCLAIMER), |d| {
            let sweep = d.as_any().downcast_ref::<DbSweepResult>();
            sweep.into_iter().flat_map(|w| w.points.iter().map(|p| tpcc_run(&p.result))).collect()
        });
        // A sweep's points differ in users by design: sweeps over the same users list them alike.
        let runs: Vec<Vec<&DbResult>> = sides
            .iter()
            .map(|(_, d)| {
                let sweeps = d.iter().filter_map(|d| d.as_any().downcast_ref::<DbSweepResult>());
                sweeps.flat_map(|w| w.points.iter().map(|p| &p.result)).collect()
            })
            .collect();
        notes.extend(settings_differ(&runs));
        notes
    }
    fn metrics(&self, trials: &[Vec<ComparedTrial<'_>>]) -> Vec<Metric> {
        metrics(trials)
    }
}

/// The settings of a tpcc run a comparison names when they differ between sides, as the flags that set
/// them (`--database`, `--users`, `--memory`, ...) or the engine's names (`shared_buffers`), each with its
/// value: a setting's detail in parentheses (a memory limit's peaks) is left out, since it differs run to run.
fn run_settings(r: &DbResult) -> Vec<(String, String)> {
    let c = &r.config;
    let mut out = vec![
        ("--database".to_string(), r.engine.name.clone()),
        ("engine".to_string(), r.engine.version.clone()),
        ("--warehouses".to_string(), c.warehouses.to_string()),
        ("--items".to_string(), c.items.to_string()),
        ("--users".to_string(), c.users.to_string()),
        ("--ramp".to_string(), format!("{} s", c.ramp_s)),
        ("--duration".to_string(), format!("{} s", c.duration_s)),
    ];
    for s in &r.engine.settings {
        let name = match s.name.as_str() {
            "memory_limit" => "--memory".to_string(),
            "throttle" => "--throttle".to_string(),
            other => other.to_string(),
        };
        let value = s.value.split(" (").next().unwrap_or_default().trim().to_string();
        out.push((name, value));
    }
    out
}

/// `settings differ between the sides: --memory A none, B 32.0 MiB for pages; --users A 8, B 16`, naming
/// each setting whose values are not the same on every side (a side whose runs differ lists each value);
/// none when they are the same.
pub(crate) fn settings_differ(sides: &[Vec<&DbResult>]) -> Option<String> {
    let per_side: Vec<Vec<Vec<(String, String)>>> =
        sides.iter().map(|runs| runs.iter().map(|r| run_settings(r)).collect()).collect();
    let mut names: Vec<String> = Vec::new();
    for (name, _) in per_side.iter().flatten().flatten() {
        if !names.contains(name) {
            names.push(name.clone());
        }
    }
    let value_on = |side: &Vec<Vec<(String, String)>>, name: &str| -> String {
        let mut values: Vec<String> = Vec::new();
        for run in side {
            let v = run.iter().find(|(n, _)| n == name).map_or("none".to_string(), |(_, v)| v.clone());
            if !values.contains(&v) {
                values.push(v);
            }
        }
        values.join(" or ")
    };
    let differ: Vec<String> = names
        .iter()
        .filter_map(|name| {
            let values: Vec<String> = per_side.iter().map(|s| value_on(s, name)).collect();
            if values.iter().all(|v| *v == values[0]) {
                return None;
            }
            let each: Vec<String> =
                values.iter().enumerate().map(|(i, v)| format!("{} {v}", side_letter(i))).collect();
            Some(format!("{name} {}", each.join(", ")))
        })
        .collect();
    (!differ.is_empty()).then(|| {
        format!(
            "settings differ between the sides: {}; the differences are these settings' as much as the storage's",
            differ.join("; ")
        )
    })
}

/// A database run as the notes need it: its engine and the devices under it.
pub(crate) type EngineOn<'a> = (&'a str, Vec<&'a DeviceView>);

fn tpcc_run(r: &DbResult) -> EngineOn<'_> {
    (r.engine.name.as_str(), r.devices.iter().collect())
}

/// What to know when comparing database documents: what the workload is derived from (`disclaimer`, the
/// documents' own); which engine and devices each side ran on (`runs` gives them for a document; the device
/// rows compare them by their role under the database's file system); and, with one engine on one side and
/// another on the other, that the difference is the engines' as much as the storage's.
pub(crate) fn db_notes<'a>(
    sides: &[(&str, Vec<&'a dyn Document>)],
    disclaimer: Option<&str>,
    runs: impl Fn(&'a dyn Document) -> Vec<EngineOn<'a>>,
) -> Vec<String> {
    let per_side: Vec<Vec<EngineOn<'a>>> =
        sides.iter().map(|(_, docs)| docs.iter().flat_map(|d| runs(*d)).collect()).collect();
    if per_side.iter().all(Vec::is_empty) {
        return Vec::new();
    }
    let mut notes: Vec<String> = disclaimer.map(str::to_string).into_iter().collect();
    let mut engines: Vec<&str> = Vec::new();
    let mut where_: Vec<String> = Vec::new();
    for (i, rs) in per_side.iter().enumerate() {
        let mut devices: Vec<String> = Vec::new();
        for d in rs.iter().flat_map(|(_, ds)| ds) {
            let name = format!("{} ({})", d.name, d.role);
            if !devices.contains(&name) {
                devices.push(name);
            }
        }
        let mut names: Vec<&str> = Vec::new();
        for (engine, _) in rs {
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

/// A tpcc run's value of one metric.
fn value(def: &MetricDef, trial: ComparedTrial<'_>) -> Option<f64> {
    let r = trial.get::<DbResult>()?;
    match &def.scope {
        MetricScope::Db => match def.stat {
            Stat::Nopm => Some(r.run.nopm),
            Stat::Tpm => Some(r.run.tpm),
            _ => None,
        },
        MetricScope::DbTx(t) => {
            let t = r.run.transactions.iter().find(|x| &x.name == t)?;
            let lat = t.latency_ns.as_ref();
            match def.stat {
                Stat::PerMinute => Some(t.per_minute),
                Stat::Mean => Some(lat?.mean),
                Stat::P50 => Some(lat?.p50 as f64),
                Stat::P95 => Some(lat?.p95 as f64),
                Stat::P99 => Some(lat?.p99 as f64),
                Stat::Max => Some(lat?.max as f64),
                _ => None,
            }
        }
        _ => None,
    }
}

/// A tpcc run's part of a transaction type's merged histogram: the type's histogram and its committed and
/// rolled-back transactions.
fn parts(scope: &MetricScope, _kind: MetricOp, trial: ComparedTrial<'_>) -> HistogramParts {
    let (Some(r), MetricScope::DbTx(name)) = (trial.get::<DbResult>(), scope) else { return None };
    let x = r.run.transactions.iter().find(|x| &x.name == name)?;
    let h = LatencyHistogram::from_base64(&x.histogram).ok()?;
    Some((vec![h], x.committed + x.rolled_back))
}

/// Where a tpcc run's devices are, and the window they cover.
fn devices(trial: ComparedTrial<'_>) -> Option<(&[DeviceView], f64)> {
    trial.get::<DbResult>().map(|r| (r.devices.as_slice(), r.run.measured_s))
}

/// The metrics of tpcc runs: NOPM and TPM; per transaction type its rate and response times; per device that
/// every run has (by role, else by name, [`device_keys`]) reads, writes and flushes, their time per request,
/// and the busy share.
fn metrics(all_trials: &[Vec<ComparedTrial<'_>>]) -> Vec<Metric> {
    let dbs: Vec<&DbResult> = all_trials.iter().flatten().filter_map(|t| t.get::<DbResult>()).collect();
    let def = |scope: MetricScope, stat: Stat| MetricDef { scope, op: MetricOp::All, stat };
    let mut defs = vec![def(MetricScope::Db, Stat::Nopm), def(MetricScope::Db, Stat::Tpm)];
    let mut types: Vec<&str> = Vec::new();
    for t in dbs.iter().flat_map(|r| &r.run.transactions) {
        if !types.contains(&t.name.as_str()) {
            types.push(&t.name);
        }
    }
    for t in types {
        for stat in [Stat::PerMinute, Stat::Mean, Stat::P50, Stat::P95, Stat::P99, Stat::Max] {
            defs.push(def(MetricScope::DbTx(t.to_string()), stat));
        }
    }
    let mut metrics: Vec<Metric> = defs.into_iter().map(|d| d.metric(value, parts)).collect();
    let lists: Vec<&[DeviceView]> = dbs.iter().map(|r| r.devices.as_slice()).collect();
    for key in device_keys(&lists) {
        metrics.extend(device_metrics(&key, &key, devices));
    }
    metrics
}
