//! What the inputs are called in legends and bars: each run or sweep by its workload (the job or profile
//! name, then what tells the inputs apart: the I/O mix, block size, depth, workers, offered rate, target),
//! not by the file it came from; the input's own name is added only when two workloads are the same.
//!
//! A workload is read from the run's resolved plan (`config.plan`), so it names what ran, whatever the file
//! was called. A sweep is named by its first point's plan without the fields it sweeps.

use iolab_doc::workload::{bs_text, io_text, DEFAULT_JOB_NAME};
use serde_json::Value;

use super::ReportDoc;
use crate::plugin::Facet;
use crate::RunResult;

/// The I/O facet keys, in naming order (a database run's come after: [`db_facets`]).
const FACET_KEYS: [&str; 7] = ["job", "io", "bs", "qd", "workers", "rate", "target"];

/// The facets of a run's workload. `io`, `bs` and `qd` are left out when the workers differ in them (a
/// profile's groups), where the job name says more.
pub(crate) fn facets(r: &RunResult) -> Vec<Facet> {
    let plan = r.config.plan();
    let workers = &plan.workers;
    let specs: Vec<&Value> = workers.iter().flat_map(|w| &w.specs).collect();
    let mut out = Vec::new();
    if let Some(name) = plan.name.as_deref().filter(|n| !n.is_empty() && *n != DEFAULT_JOB_NAME) {
        out.push(("job", name.to_string()));
    }
    let shared = |texts: Vec<String>| -> Option<String> {
        let first = texts.first()?.clone();
        texts.iter().all(|t| *t == first).then_some(first)
    };
    out.extend(shared(specs.iter().map(|s| io_text(s)).collect()).map(|t| ("io", t)));
    out.extend(shared(specs.iter().map(|s| bs_text(s)).collect()).map(|t| ("bs", t)));
    let qd = |w: &crate::config::PlanWorker| w.qd.map_or("null".to_string(), |q| q.to_string());
    out.extend(shared(workers.iter().map(|w| format!("qd {}", qd(w))).collect()).map(|t| ("qd", t)));
    if workers.len() > 1 {
        out.push(("workers", format!("{} workers", workers.len())));
    }
    let rate: f64 = workers.iter().filter_map(|w| w.rate_iops).sum();
    if rate > 0.0 {
        out.push(("rate", format!("{} IOPS offered", super::charts::compact(rate))));
    }
    let targets: Vec<&str> = plan.targets.iter().map(|t| t.name.as_str()).filter(|n| !n.is_empty()).collect();
    if !targets.is_empty() {
        out.push(("target", format!("on {}", targets.join(" + "))));
    }
    out
}

/// The facets of a sweep: its first point's, without those of the fields it sweeps.
pub(crate) fn sweep_facets(s: &crate::sweep::SweepResult) -> Vec<Facet> {
    let swept: Vec<&str> = s.axes.iter().map(|a| facet_of_field(&a.key)).collect();
    s.points
        .first()
        .map(|p| facets(&p.result))
        .unwrap_or_default()
        .into_iter()
        .filter(|f| !swept.contains(&f.0))
        .collect()
}

/// The facet a swept field changes (`read_pct` changes the I/O mix).
fn facet_of_field(key: &str) -> &str {
    match key {
        "rw" | "read_pct" | "random_pct" => "io",
        "rate" => "rate",
        other => other,
    }
}

/// A run's whole workload in one line: every facet (`randread 4k qd 32 on sim:ssd,nvme`).
pub(crate) fn workload(r: &RunResult) -> String {
    facets(r).into_iter().map(|f| f.1).collect::<Vec<_>>().join(" ")
}

/// The names of `docs` in legends, one per input: the job name and the facets whose values differ between
/// the inputs; the input's label, in brackets, when that leaves two names the same (or a name empty).
pub(crate) fn workload_names(docs: &[&ReportDoc]) -> Vec<String> {
    let all: Vec<Vec<Facet>> = docs.iter().map(|d| d.body.facets()).collect();
    let value =
        |f: &[Facet], key: &str| f.iter().find(|x| x.0 == key).map(|x| x.1.clone()).unwrap_or_default();
    let differs = |key: &str| all.iter().any(|f| value(f, key) != value(&all[0], key));
    let mut keys: Vec<&str> = Vec::new();
    for k in all.iter().flatten().map(|f| f.0) {
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    // The I/O facets in their order; other kinds' (a database run's users, settings) after, as they came.
    keys.sort_by_key(|k| FACET_KEYS.iter().position(|x| x == k).unwrap_or(FACET_KEYS.len()));
    keys.retain(|k| *k == "job" || differs(k));
    let bases: Vec<String> = all
        .iter()
        .map(|f| keys.iter().map(|k| value(f, k)).filter(|v| !v.is_empty()).collect::<Vec<_>>().join(" "))
        .collect();
    bases
        .iter()
        .zip(docs)
        .map(|(base, d)| match (base.is_empty(), bases.iter().filter(|b| *b == base).count() > 1) {
            (true, _) => d.label.clone(),
            (false, true) => format!("{base} ({})", d.label),
            (false, false) => base.clone(),
        })
        .collect()
}

/// The facets of a tpcc run: its workload on its engine (`tpcc on sqlite`), then what tells runs apart: users,
/// warehouses, the engine's version and its settings (`journal_mode=wal synchronous=full`).
pub(crate) fn db_facets(r: &crate::db::DbResult) -> Vec<Facet> {
    let c = &r.config;
    let settings: Vec<String> = r.engine.settings.iter().map(|s| format!("{}={}", s.name, s.value)).collect();
    vec![
        ("job", format!("{} on {}", r.header.workload, r.engine.name)),
        ("version", r.engine.version.clone()),
        ("users", crate::format::counted(c.users as u64, "user")),
        ("warehouses", crate::format::counted(c.warehouses as u64, "warehouse")),
        ("settings", settings.join(" ")),
    ]
}
