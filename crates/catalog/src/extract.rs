//! The columns the catalog keeps beside each document, read out of it: what `iolab runs` lists and filters
//! on (profile, targets, headline IOPS, MB/s and p99, start time). The document stays the source of truth;
//! these are an index of it, recomputed by a migration when a column is added.
//!
//! Also the entry ids: 8 hex digits, stable (derived from the run id or the content, never from the clock),
//! extended when they collide.

use serde_json::Value;

use crate::EntryKind;

/// The indexed facts of one document.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Columns {
    /// RFC 3339 start of the run, sweep or search.
    pub started_at: Option<String>,
    /// Start, Unix seconds.
    pub started_unix_s: Option<f64>,
    /// The run's own id (`run_id`), for runs.
    pub run_id: Option<String>,
    /// Job or profile name (`config.plan.name`); for a run without one, its workload ([`crate::name`]).
    pub profile: Option<String>,
    /// Target display names, in order, without duplicates.
    pub targets: Vec<String>,
    /// Interrupted (Ctrl-C): the document is partial.
    pub partial: bool,
    /// Headline IOPS.
    pub iops: Option<f64>,
    /// Headline MB/s (10^6 bytes per second).
    pub mb_s: Option<f64>,
    /// Headline p99 response time, ns.
    pub p99_ns: Option<f64>,
    /// iolab version that wrote the document.
    pub iolab_version: Option<String>,
    /// Headline new orders per minute of a database run (of a sweep over users: its best point).
    pub nopm: Option<f64>,
    /// Headline of a tpch query set: the sum of its query times, seconds.
    pub query_total_s: Option<f64>,
    /// The geometric mean of a tpch query set's query times, seconds.
    pub query_geomean_s: Option<f64>,
}

fn str_at(v: &Value, pointer: &str) -> Option<String> {
    v.pointer(pointer).and_then(Value::as_str).map(str::to_string)
}

fn f64_at(v: &Value, pointer: &str) -> Option<f64> {
    v.pointer(pointer).and_then(Value::as_f64)
}

fn push_unique(list: &mut Vec<String>, name: &str) {
    if !list.iter().any(|t| t == name) {
        list.push(name.to_string());
    }
}

/// Target names of a run document: the plan's targets (what the user asked for), else the environment's.
fn run_targets(doc: &Value, out: &mut Vec<String>) {
    let plan = doc.pointer("/config/plan/targets").and_then(Value::as_array);
    let env = doc.pointer("/env/targets").and_then(Value::as_array);
    for t in plan.or(env).into_iter().flatten() {
        if let Some(n) = t.get("name").and_then(Value::as_str) {
            push_unique(out, n);
        }
    }
}

/// Reads the columns of `doc`. Missing fields become `None`; nothing here fails, so any document that parses
/// as JSON can be kept (a result from an older or newer iolab lists with what it has).
pub fn columns(kind: EntryKind, doc: &Value) -> Columns {
    let mut c = Columns {
        started_at: str_at(doc, "/started_at"),
        started_unix_s: f64_at(doc, "/started_unix_s"),
        partial: doc
            .get("partial")
            .or_else(|| doc.get("interrupted"))
            .and_then(Value::as_bool)
            .unwrap_or(false),
        iolab_version: str_at(doc, "/iolab_version"),
        ..Columns::default()
    };
    match kind {
        EntryKind::Run | EntryKind::Verify => {
            c.run_id = str_at(doc, "/run_id");
            c.profile = doc.pointer("/config/plan").and_then(|p| crate::name::plan_name(p, &[]));
            run_targets(doc, &mut c.targets);
            c.iops = f64_at(doc, "/total/all/iops");
            c.mb_s = f64_at(doc, "/total/all/mb_s");
            c.p99_ns = f64_at(doc, "/total/all/lat_ns/p99");
        }
        EntryKind::Sweep => {
            // Headline of a sweep: its best point (highest IOPS), with that point's MB/s and p99.
            let points = doc.get("points").and_then(Value::as_array);
            let axes = doc.get("axes").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
            let swept: Vec<&str> = axes.iter().filter_map(|a| a["key"].as_str()).collect();
            let mut best: Option<&Value> = None;
            for p in points.into_iter().flatten() {
                let r = &p["result"];
                if c.profile.is_none() {
                    c.profile = r.pointer("/config/plan").and_then(|p| crate::name::plan_name(p, &swept));
                }
                if c.started_unix_s.is_none() {
                    c.started_unix_s = f64_at(r, "/started_unix_s");
                }
                run_targets(r, &mut c.targets);
                let better = match best {
                    None => true,
                    Some(b) => f64_at(r, "/total/all/iops") > f64_at(b, "/total/all/iops"),
                };
                if better {
                    best = Some(r);
                }
            }
            if let Some(b) = best {
                c.iops = f64_at(b, "/total/all/iops");
                c.mb_s = f64_at(b, "/total/all/mb_s");
                c.p99_ns = f64_at(b, "/total/all/lat_ns/p99");
            }
        }
        EntryKind::FindMax => {
            c.profile = str_at(doc, "/profile");
            if let Some(ts) = doc.get("targets").and_then(Value::as_array) {
                for t in ts.iter().filter_map(Value::as_str) {
                    push_unique(&mut c.targets, t);
                }
            }
            // Headline of a search: the achieved IOPS of the largest passing step.
            let steps = doc.get("steps").and_then(Value::as_array);
            let passing = steps.into_iter().flatten().filter(|s| s["pass"].as_bool() == Some(true));
            let best = passing.max_by(|a, b| {
                f64_at(a, "/value").unwrap_or(0.0).total_cmp(&f64_at(b, "/value").unwrap_or(0.0))
            });
            c.iops = best.and_then(|s| f64_at(s, "/achieved_iops"));
        }
        EntryKind::Db => db_columns(doc, &mut c),
        EntryKind::DbSweep => db_sweep_columns(doc, &mut c),
        EntryKind::DbTpch => {
            db_columns(doc, &mut c);
            c.query_total_s = f64_at(doc, "/power/total_s");
            c.query_geomean_s = f64_at(doc, "/power/geomean_s");
        }
        EntryKind::DbCopy => copy_columns(doc, &mut c),
    }
    c
}

/// The columns of a sweep over users (`iolab.dbsweep/1`): those of its point with the most new orders per
/// minute.
fn db_sweep_columns(doc: &Value, c: &mut Columns) {
    let points = doc.get("points").and_then(Value::as_array).into_iter().flatten();
    let best = points.map(|p| &p["result"]).max_by(|a, b| {
        f64_at(a, "/run/nopm").unwrap_or(-1.0).total_cmp(&f64_at(b, "/run/nopm").unwrap_or(-1.0))
    });
    match best {
        Some(b) => db_columns(b, c),
        None => c.profile = db_name(doc),
    }
    c.partial = doc.get("partial").and_then(Value::as_bool).unwrap_or(c.partial);
}

/// The columns of a copy (`iolab.dbcopy/1`): its targets are the source's devices, then the destination's
/// (before [`db_columns`], whose fallback to the directory applies only when there are none); its headline
/// its MB/s.
fn copy_columns(doc: &Value, c: &mut Columns) {
    for d in ["source_devices", "destination_devices"].iter().filter_map(|k| doc.get(*k)) {
        for n in d.as_array().into_iter().flatten().filter_map(|d| d.get("name")?.as_str()) {
            push_unique(&mut c.targets, n);
        }
    }
    db_columns(doc, c);
    c.mb_s = f64_at(doc, "/copy/mb_per_s");
}

/// The name of a database run: its workload and engine (`tpcc sqlite`), what `iolab runs --profile` matches.
fn db_name(doc: &Value) -> Option<String> {
    let workload = str_at(doc, "/workload")?;
    Some(match str_at(doc, "/engine/name") {
        Some(engine) => format!("{workload} {engine}"),
        None => workload,
    })
}

/// The columns of a database run (`iolab.db/1`; the common part of `iolab.dbtpch/1` and `iolab.dbcopy/1`):
/// its name, the block devices under the database as its targets (the directory, or the user's server,
/// where there are none; a copy adds its devices after), NOPM, and new-order p99 as its p99. Such a
/// document has `start_unix_s`, whole seconds, and no RFC 3339 start of its own.
fn db_columns(doc: &Value, c: &mut Columns) {
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
    c.nopm = f64_at(doc, "/run/nopm");
    let txs = doc.pointer("/run/transactions").and_then(Value::as_array).into_iter().flatten();
    let new_order = txs.into_iter().find(|t| t["name"].as_str() == Some("new_order"));
    c.p99_ns = new_order.and_then(|t| f64_at(t, "/latency_ns/p99"));
}

/// 64-bit FNV-1a: a fixed, dependency-free hash, so an id computed today is computed the same way by any
/// later iolab (std's hashers promise no such thing).
pub fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// The id candidates of a document, shortest first: 8 hex digits, then 10, 12, ... 16, then 16 digits of
/// hashes salted with a counter (the same document saved again). A run's first 8 digits are its `run_id`
/// (already printed in its header), so `iolab show <run id>` works; other documents use a hash of their text.
pub fn id_candidates<'a>(
    kind: EntryKind,
    run_id: Option<&str>,
    text: &'a str,
) -> impl Iterator<Item = String> + 'a {
    let content = format!("{:016x}", fnv1a(format!("{}\n{text}", kind.as_str()).as_bytes()));
    let base: String = match run_id {
        Some(r) if r.len() == 8 && r.bytes().all(|b| b.is_ascii_hexdigit()) => {
            format!("{}{}", r.to_ascii_lowercase(), &content[..8])
        }
        _ => content,
    };
    let widths = (8..=16).step_by(2).map(move |w| base[..w].to_string());
    let salted = (1u64..).map(move |n| format!("{:016x}", fnv1a(format!("{n}\n{text}").as_bytes())));
    widths.chain(salted)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a_matches_the_reference_vector() {
        // FNV-1a 64 of "a" (http://www.isthe.com/chongo/tech/comp/fnv/).
        assert_eq!(fnv1a(b"a"), 0xaf63dc4c8601ec8c);
    }

    #[test]
    fn run_id_is_the_first_candidate() {
        let ids: Vec<String> = id_candidates(EntryKind::Run, Some("2a924406"), "{}").take(3).collect();
        assert_eq!(ids[0], "2a924406");
        assert!(ids[1].starts_with("2a924406") && ids[1].len() == 10);
        assert!(ids[2].starts_with(&ids[1]) && ids[2].len() == 12);
    }

    #[test]
    fn candidates_never_end() {
        let ids: Vec<String> = id_candidates(EntryKind::Sweep, None, "x").take(20).collect();
        assert_eq!(ids.len(), 20);
        assert!(ids.iter().all(|i| i.len() >= 8 && i.bytes().all(|b| b.is_ascii_hexdigit())));
    }

    #[test]
    fn columns_of_a_sweep_take_the_best_point() {
        let doc = serde_json::json!({
            "started_at": "2025-01-01T00:00:00Z",
            "partial": false,
            "points": [
                {"result": {"config": {"plan": {"name": "j", "targets": [{"name": "mem:1G"}]}},
                            "total": {"all": {"iops": 10.0, "mb_s": 1.0, "lat_ns": {"p99": 5}}}}},
                {"result": {"config": {"plan": {"name": "j", "targets": [{"name": "mem:1G"}, {"name": "null:1G"}]}},
                            "total": {"all": {"iops": 20.0, "mb_s": 2.0, "lat_ns": {"p99": 9}}}}}
            ]
        });
        let c = columns(EntryKind::Sweep, &doc);
        assert_eq!(c.profile.as_deref(), Some("j"));
        assert_eq!(c.targets, ["mem:1G", "null:1G"]);
        assert_eq!((c.iops, c.mb_s, c.p99_ns), (Some(20.0), Some(2.0), Some(9.0)));
    }

    #[test]
    fn columns_of_a_db_run_and_of_a_sweep_over_users() {
        let run = |users: u32, nopm: f64| {
            serde_json::json!({
                "schema": "iolab.db/1", "workload": "tpcc", "start_unix_s": 1_700_000_000u64, "partial": false,
                "engine": {"name": "sqlite", "dir": "/mnt/t/db"},
                "config": {"users": users},
                "run": {"nopm": nopm, "transactions": [
                    {"name": "payment", "latency_ns": {"p99": 1000}},
                    {"name": "new_order", "latency_ns": {"p99": 5000}}]},
                "devices": [{"name": "nvme0n1p1"}, {"name": "nvme0n1"}]
            })
        };
        let c = columns(EntryKind::Db, &run(1, 1500.0));
        assert_eq!(c.profile.as_deref(), Some("tpcc sqlite"));
        assert_eq!(c.targets, ["nvme0n1p1", "nvme0n1"]);
        assert_eq!((c.nopm, c.p99_ns, c.iops), (Some(1500.0), Some(5000.0), None));
        assert_eq!(c.started_at.as_deref(), Some("2023-11-14T22:13:20Z"));
        let sweep = serde_json::json!({
            "schema": "iolab.dbsweep/1", "partial": true,
            "points": [{"users": 1, "result": run(1, 1500.0)}, {"users": 2, "result": run(2, 2500.0)}]
        });
        let c = columns(EntryKind::DbSweep, &sweep);
        assert_eq!((c.nopm, c.partial), (Some(2500.0), true));
        let mut no_devices = run(1, 1.0);
        no_devices["devices"] = serde_json::json!([]);
        assert_eq!(columns(EntryKind::Db, &no_devices).targets, ["/mnt/t/db"]);
    }

    #[test]
    fn columns_of_garbage_are_empty_not_errors() {
        let c = columns(EntryKind::Run, &serde_json::json!([1, 2, 3]));
        assert_eq!(c, Columns::default());
    }
}
