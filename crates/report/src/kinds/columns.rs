//! What several kinds share in the catalog: the columns of `iolab runs` their headline figures are shown in
//! (IOPS, MB/s and p99 always; NOPM and a tpch query set's times when an entry listed has them), and how a
//! run's and a database document's columns are read out of their JSON.

use iolab_doc::Columns;
use serde_json::Value;

use super::plan_name::plan_name;
use crate::format::{format_duration_ns, format_rate};
use crate::plugin::catalog::{f64_at, push_unique, str_at};
use crate::plugin::{Column, ColumnShown};

/// Why a database document has no CSV form ([`crate::Kind::without_csv`]).
pub(crate) const DATABASE_RUN_WITHOUT_CSV: &str =
    "a database run: it has no CSV form (its numbers are one window's, with no time series)";

/// A figure as a rate with `decimals`, or `-`.
fn rate(c: &Columns, key: &str, decimals: usize) -> String {
    c.figure(key).map_or("-".into(), |v| format_rate(v, decimals))
}

/// Headline IOPS (a run's, a sweep's best point's, a search's largest passing step's).
pub(crate) const IOPS: Column = Column {
    header: "IOPS",
    place: 10,
    shown: ColumnShown::Always,
    figures: &["iops"],
    cell: |c| rate(c, "iops", 1),
};

/// Headline MB/s (10^6 bytes per second; a copy's rate).
pub(crate) const MB_S: Column = Column {
    header: "MB/s",
    place: 20,
    shown: ColumnShown::Always,
    figures: &["mb_s"],
    cell: |c| rate(c, "mb_s", 1),
};

/// A database run's new orders per minute (a sweep's best point's).
pub(crate) const NOPM: Column = Column {
    header: "NOPM",
    place: 30,
    shown: ColumnShown::WhenAny,
    figures: &["nopm"],
    cell: |c| rate(c, "nopm", 0),
};

/// A tpch query set's headline: the total of its query times and their geometric mean, `8.53 s / 236 ms`.
pub(crate) const QUERIES: Column = Column {
    header: "queries (total / geomean)",
    place: 40,
    shown: ColumnShown::WhenAny,
    figures: &["query_total_s", "query_geomean_s"],
    cell: query_times,
};

/// Headline p99 response time (a database run's: its new orders').
pub(crate) const P99: Column = Column {
    header: "p99",
    place: 90,
    shown: ColumnShown::Always,
    figures: &["p99_ns"],
    cell: |c| c.figure("p99_ns").map_or("-".into(), format_duration_ns),
};

/// What a sweep's figures are when its points had several trials: `mean of 3 trials`.
pub(crate) const TRIALS: Column = Column {
    header: "figures",
    place: 95,
    shown: ColumnShown::WhenAny,
    figures: &["trials"],
    cell: |c| c.figure("trials").map_or("-".into(), |n| format!("mean of {n:.0} trials")),
};

fn query_times(c: &Columns) -> String {
    let s = |v: Option<f64>| v.map_or("-".into(), |v| format_duration_ns(v * 1e9));
    match c.figure("query_total_s") {
        Some(_) => format!("{} / {}", s(c.figure("query_total_s")), s(c.figure("query_geomean_s"))),
        None => "-".into(),
    }
}

/// Target names of a run document: the plan's targets (what the user asked for), else the environment's.
pub(crate) fn run_targets(doc: &Value, out: &mut Vec<String>) {
    let plan = doc.pointer("/config/plan/targets").and_then(Value::as_array);
    let env = doc.pointer("/env/targets").and_then(Value::as_array);
    for t in plan.or(env).into_iter().flatten() {
        if let Some(n) = t.get("name").and_then(Value::as_str) {
            push_unique(out, n);
        }
    }
}

/// The columns of a run (`iolab.result/1`): its id, its name (its job's, else its workload's), targets, and
/// the totals' IOPS, MB/s and p99. `swept` are a sweep's axis keys, left out of an unnamed run's name.
pub(crate) fn run_columns(doc: &Value, swept: &[&str], c: &mut Columns) {
    c.profile = doc.pointer("/config/plan").and_then(|p| plan_name(p, swept));
    run_targets(doc, &mut c.targets);
    c.set_figure("iops", f64_at(doc, "/total/all/iops"));
    c.set_figure("mb_s", f64_at(doc, "/total/all/mb_s"));
    c.set_figure("p99_ns", f64_at(doc, "/total/all/lat_ns/p99"));
}

/// The name of a database run: its workload and engine (`tpcc sqlite`), what `iolab runs --profile` matches.
pub(crate) fn db_name(doc: &Value) -> Option<String> {
    let workload = str_at(doc, "/workload")?;
    Some(match str_at(doc, "/engine/name") {
        Some(engine) => format!("{workload} {engine}"),
        None => workload,
    })
}

/// The columns of a database run (`iolab.db/1`; the common part of the other database documents): its
/// name, the block devices under the database as its targets (the directory, or the user's server, where
/// there are none; a copy adds its devices before), NOPM, and new-order p99 as its p99. Such a document has
/// `start_unix_s`, whole seconds, and no RFC 3339 start of its own.
pub(crate) fn db_columns(doc: &Value, c: &mut Columns) {
    c.profile = db_name(doc);
    let start = f64_at(doc, "/start_unix_s");
    c.started_unix_s = c.started_unix_s.or(start);
    c.started_at = c.started_at.take().or_else(|| start.map(iolab_doc::time::format_rfc3339));
    c.partial = doc.get("partial").and_then(Value::as_bool).unwrap_or(false);
    for d in doc.get("devices").and_then(Value::as_array).into_iter().flatten() {
        if let Some(n) = d.get("name").and_then(Value::as_str) {
            push_unique(&mut c.targets, n);
        }
    }
    if c.targets.is_empty() {
        if let Some(at) = str_at(doc, "/engine/dir").or_else(|| str_at(doc, "/engine/url")) {
            c.targets.push(at);
        }
    }
    c.set_figure("nopm", f64_at(doc, "/run/nopm"));
    let txs = doc.pointer("/run/transactions").and_then(Value::as_array).into_iter().flatten();
    let new_order = txs.into_iter().find(|t| t["name"].as_str() == Some("new_order"));
    c.set_figure("p99_ns", new_order.and_then(|t| f64_at(t, "/latency_ns/p99")));
}
