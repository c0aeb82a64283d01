//! What the inputs are called in legends and bars: each run or sweep by its workload (the job or profile
//! name, then what tells the inputs apart: the I/O mix, block size, depth, workers, offered rate, target),
//! not by the file it came from; the input's own name is added only when two workloads are the same.
//!
//! A workload is read from the run's resolved plan (`config.plan`), so it names what ran, whatever the file
//! was called. A sweep is named by its first point's plan without the fields it sweeps.

use serde_json::Value;

use super::{DocBody, ReportDoc};
use crate::RunResult;

/// The plan name of a run without a job file or profile.
const DEFAULT_JOB_NAME: &str = "iolab";

/// Facet keys, in naming order.
const FACET_KEYS: [&str; 7] = ["job", "io", "bs", "qd", "workers", "rate", "target"];

/// One facet of a workload: its key (one of [`FACET_KEYS`]) and its text.
type Facet = (&'static str, String);

/// The facets of a run's workload. `io`, `bs` and `qd` are left out when the workers differ in them (a
/// profile's groups), where the job name says more.
pub(crate) fn facets(r: &RunResult) -> Vec<Facet> {
    let plan = &r.config["plan"];
    let workers = plan["workers"].as_array().map(Vec::as_slice).unwrap_or_default();
    let specs: Vec<&Value> =
        workers.iter().flat_map(|w| w["specs"].as_array().into_iter().flatten()).collect();
    let mut out = Vec::new();
    if let Some(name) = plan["name"].as_str().filter(|n| !n.is_empty() && *n != DEFAULT_JOB_NAME) {
        out.push(("job", name.to_string()));
    }
    let shared = |texts: Vec<String>| -> Option<String> {
        let first = texts.first()?.clone();
        texts.iter().all(|t| *t == first).then_some(first)
    };
    out.extend(shared(specs.iter().map(|s| io_text(s)).collect()).map(|t| ("io", t)));
    out.extend(shared(specs.iter().map(|s| bs_text(s)).collect()).map(|t| ("bs", t)));
    out.extend(shared(workers.iter().map(|w| format!("qd {}", w["qd"])).collect()).map(|t| ("qd", t)));
    if workers.len() > 1 {
        out.push(("workers", format!("{} workers", workers.len())));
    }
    let rate: f64 = workers.iter().filter_map(|w| w["rate_iops"].as_f64()).sum();
    if rate > 0.0 {
        out.push(("rate", format!("{} IOPS offered", super::charts::compact(rate))));
    }
    let targets: Vec<&str> =
        plan["targets"].as_array().into_iter().flatten().filter_map(|t| t["name"].as_str()).collect();
    if !targets.is_empty() {
        out.push(("target", format!("on {}", targets.join(" + "))));
    }
    out
}

/// An access spec's mix as fio names it: `randread`, `write`, `randrw 70/30`, `rw 70/30 (50% random)`.
fn io_text(spec: &Value) -> String {
    let read = spec["read_pct"].as_f64().unwrap_or(0.0);
    let random = spec["random_pct"].as_f64().unwrap_or(0.0);
    let prefix = if random >= 100.0 { "rand" } else { "" };
    let op = match read {
        r if r >= 100.0 => "read".to_string(),
        r if r <= 0.0 => "write".to_string(),
        r => format!("rw {}/{}", r.round(), (100.0 - r).round()),
    };
    match random {
        x if x >= 100.0 || x <= 0.0 => format!("{prefix}{op}"),
        x => format!("{op} ({}% random)", x.round()),
    }
}

/// An access spec's block size: `4k`, `1m`, or `4k-64k` for a mix.
fn bs_text(spec: &Value) -> String {
    let sizes: Vec<u64> =
        spec["bs"].as_array().into_iter().flatten().filter_map(|b| b["size_bytes"].as_u64()).collect();
    match (sizes.iter().min(), sizes.iter().max()) {
        (Some(lo), Some(hi)) if lo == hi => size_text(*lo),
        (Some(lo), Some(hi)) => format!("{}-{}", size_text(*lo), size_text(*hi)),
        _ => String::new(),
    }
}

/// A block size as fio writes it: `512`, `4k`, `1m`.
fn size_text(b: u64) -> String {
    const K: u64 = 1024;
    if b >= K * K && b % (K * K) == 0 {
        format!("{}m", b / (K * K))
    } else if b >= K && b % K == 0 {
        format!("{}k", b / K)
    } else {
        b.to_string()
    }
}

/// The facets of a sweep: its first point's, without those of the fields it sweeps.
fn sweep_facets(s: &crate::sweep::SweepResult) -> Vec<Facet> {
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

/// The facets of an input.
fn doc_facets(d: &ReportDoc) -> Vec<Facet> {
    match &d.body {
        DocBody::Run(r) => facets(r),
        DocBody::Sweep(s) => sweep_facets(s),
        DocBody::Mrc(_) | DocBody::FindMax(_) | DocBody::Db(_) | DocBody::DbSweep(_) => Vec::new(),
    }
}

/// A run's whole workload in one line: every facet (`randread 4k qd 32 on sim:ssd,nvme`).
pub(crate) fn workload(r: &RunResult) -> String {
    facets(r).into_iter().map(|f| f.1).collect::<Vec<_>>().join(" ")
}

/// The names of `docs` in legends, one per input: the job name and the facets whose values differ between
/// the inputs; the input's label, in brackets, when that leaves two names the same (or a name empty).
pub(crate) fn workload_names(docs: &[ReportDoc]) -> Vec<String> {
    let all: Vec<Vec<Facet>> = docs.iter().map(doc_facets).collect();
    let value =
        |f: &[Facet], key: &str| f.iter().find(|x| x.0 == key).map(|x| x.1.clone()).unwrap_or_default();
    let differs = |key: &str| all.iter().any(|f| value(f, key) != value(&all[0], key));
    let keys: Vec<&str> = FACET_KEYS.into_iter().filter(|k| *k == "job" || differs(k)).collect();
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
