//! One fio reporting group as an iolab [`RunResult`]: the mapping of docs/FIO.md, "fio results".

use std::collections::BTreeMap;

use iolab_report::{
    Cpu, Depth, Env, ErrorDetail, ErrorSummary, MeasuredBy, OpSet, OpSummary, RunResult, TargetEnv,
    WorkerResult,
};
use serde_json::{json, Value};

use super::parse::{FioDir, FioHeader, FioJob, FioSync};
use crate::fio::units::{parse_bool, parse_size, parse_time_ns};

/// What every group of one report shares.
pub(crate) struct GroupContext<'a> {
    /// The report's header.
    pub head: &'a FioHeader,
    /// The file's name.
    pub source: &'a str,
    /// Reporting groups in the report.
    pub groups: usize,
}

/// 2^20.
const MIB: f64 = 1_048_576.0;

/// An option's value as the job ran it.
fn opt<'a>(j: &'a FioJob, key: &str) -> Option<&'a str> {
    j.opts.get(key).map(String::as_str)
}

/// `iodepth` (fio's default 1).
fn iodepth(j: &FioJob) -> u32 {
    opt(j, "iodepth").and_then(|v| v.trim().parse().ok()).unwrap_or(1)
}

/// `numjobs` (fio's default 1).
fn numjobs(j: &FioJob) -> u32 {
    opt(j, "numjobs").and_then(|v| v.trim().parse().ok()).unwrap_or(1)
}

/// One direction of a job entry: fio's `lat_ns` only with its percentiles, `clat_ns` as service time.
fn op_summary(d: &FioDir) -> OpSummary {
    OpSummary {
        ops: d.ops,
        bytes: d.bytes,
        iops: d.iops,
        mb_s: d.bw_bytes / 1e6,
        mib_s: d.bw_bytes / MIB,
        lat_ns: d.lat.summary,
        service_lat_ns: d.clat.summary,
        short: d.short,
        errors: 0,
    }
}

/// Sums of counts and rates; latency only when one of the parts has every op (never averaged or merged).
fn sum(parts: &[&OpSummary]) -> OpSummary {
    let total = |f: fn(&OpSummary) -> f64| parts.iter().map(|p| f(p)).sum::<f64>();
    let ops: u64 = parts.iter().map(|p| p.ops).sum();
    let sole = parts
        .iter()
        .find(|p| p.ops == ops && ops > 0)
        .filter(|_| parts.iter().filter(|p| p.ops > 0).count() == 1);
    OpSummary {
        ops,
        bytes: parts.iter().map(|p| p.bytes).sum(),
        iops: total(|p| p.iops),
        mb_s: total(|p| p.mb_s),
        mib_s: total(|p| p.mib_s),
        lat_ns: sole.and_then(|p| p.lat_ns),
        service_lat_ns: sole.and_then(|p| p.service_lat_ns),
        short: parts.iter().map(|p| p.short).sum(),
        errors: parts.iter().map(|p| p.errors).sum(),
    }
}

/// A job entry's fsync/fdatasync calls as a flush row: fio times each from its issue, which is where iolab's
/// flush latency starts too, so the one summary is both response and service time. The rate is over the job's
/// longest direction runtime (fio reports none for syncs).
fn flush_summary(s: &FioSync, runtime_ms: f64) -> OpSummary {
    OpSummary {
        ops: s.ops,
        bytes: 0,
        iops: if runtime_ms > 0.0 { s.ops as f64 / (runtime_ms / 1000.0) } else { 0.0 },
        mb_s: 0.0,
        mib_s: 0.0,
        lat_ns: s.lat.summary,
        service_lat_ns: s.lat.summary,
        short: 0,
        errors: 0,
    }
}

/// A job entry's reads, writes and both (trims and flushes apart, as fio and iolab keep them, when it did any).
fn op_set(j: &FioJob) -> OpSet {
    let (read, write) = (op_summary(&j.read), op_summary(&j.write));
    let all = sum(&[&read, &write]);
    let runtime_ms = [&j.read, &j.write, &j.trim].iter().map(|d| d.runtime_ms).fold(0.0, f64::max);
    let flush = (j.sync.ops > 0).then(|| flush_summary(&j.sync, runtime_ms));
    let trim = (j.trim.ops > 0).then(|| op_summary(&j.trim));
    OpSet { read, write, all, flush, trim }
}

/// The sum of the parts that are there (`None` when none is); no latency, as for every total over entries.
fn sum_some<'a>(parts: impl Iterator<Item = Option<&'a OpSummary>>) -> Option<OpSummary> {
    let parts: Vec<&OpSummary> = parts.flatten().collect();
    (!parts.is_empty()).then(|| OpSummary { lat_ns: None, service_lat_ns: None, ..sum(&parts) })
}

/// The files a job used (`filename`, `:`-separated), or fio's default name in `directory`.
fn targets(j: &FioJob) -> Vec<String> {
    match opt(j, "filename") {
        Some(f) => f.split(':').filter(|s| !s.is_empty()).map(str::to_string).collect(),
        None => {
            let dir = opt(j, "directory").map_or(String::new(), |d| format!("{}/", d.trim_end_matches('/')));
            vec![format!("{dir}{}.0.0", j.name)]
        }
    }
}

/// Mean I/Os in flight by Little's law: per direction (trims too), IOPS × mean clat, and the syncs.
fn littles_law(j: &FioJob, set: &OpSet) -> f64 {
    let dirs: f64 = [&j.read, &j.write, &j.trim].iter().map(|d| d.iops * d.clat.mean / 1e9).sum();
    dirs + set.flush.as_ref().map_or(0.0, |f| f.iops * j.sync.lat.mean / 1e9)
}

fn worker(index: usize, j: &FioJob) -> WorkerResult {
    let set = op_set(j);
    let achieved_depth = littles_law(j, &set);
    WorkerResult {
        index: index as u32,
        name: j.name.clone(),
        qd: iodepth(j),
        targets: targets(j),
        rate_iops: opt(j, "rate_iops").and_then(|v| v.split(',').next()?.trim().parse().ok()),
        total: set,
        achieved_depth,
    }
}

/// Seconds measured: the longest direction runtime (fio's `job_runtime` sums the jobs of a
/// `group_reporting` entry), else the longest `job_runtime`.
fn measured_s(jobs: &[&FioJob]) -> f64 {
    let dirs = jobs
        .iter()
        .map(|j| j.read.runtime_ms.max(j.write.runtime_ms).max(j.trim.runtime_ms))
        .fold(0.0, f64::max);
    let ms = if dirs > 0.0 { dirs } else { jobs.iter().map(|j| j.job_runtime_ms).fold(0.0, f64::max) };
    ms / 1000.0
}

/// `ramp_time`, seconds (a bare number is seconds).
pub(crate) fn ramp_s(jobs: &[&FioJob]) -> f64 {
    let ns = jobs.iter().filter_map(|j| opt(j, "ramp_time").and_then(|v| parse_time_ns(v, 1_000_000_000)));
    ns.max().unwrap_or(0) as f64 / 1e9
}

/// CPU seconds from `usr_cpu`/`sys_cpu` (percent of one CPU over `job_runtime`).
fn cpu(jobs: &[&FioJob], ops: u64, measured_s: f64) -> Cpu {
    let secs = |pct: fn(&FioJob) -> f64| {
        jobs.iter().map(|j| pct(j) / 100.0 * j.job_runtime_ms / 1000.0).sum::<f64>()
    };
    let (user_s, sys_s) = (secs(|j| j.usr_cpu), secs(|j| j.sys_cpu));
    Cpu {
        user_s,
        sys_s,
        cpu_ns_per_io: iolab_stats::per_op(user_s + sys_s, ops).map(|s| s * 1e9),
        cores_used: if measured_s > 0.0 { (user_s + sys_s) / measured_s } else { 0.0 },
        peak_rss_bytes: None,
    }
}

/// Each job's `error` (the errno that stopped it), counted once, under reads for read-only jobs and writes
/// otherwise (fio does not say which direction failed).
fn errors(jobs: &[&FioJob], total: &OpSet) -> ErrorSummary {
    let detail = |short: u64| ErrorDetail { count: 0, short, by_errno: BTreeMap::new() };
    let mut e = ErrorSummary {
        total: 0,
        read: detail(total.read.short),
        write: detail(total.write.short),
        flush: None,
        trim: None,
        retries: 0,
    };
    for j in jobs.iter().filter(|j| j.error != 0) {
        let trims_only = j.read.ops == 0
            && j.write.ops == 0
            && (j.trim.ops > 0 || opt(j, "rw").or(opt(j, "readwrite")).is_some_and(|rw| rw.contains("trim")));
        let d = if trims_only {
            e.trim.get_or_insert_with(|| detail(total.trim.as_ref().map_or(0, |t| t.short)))
        } else if j.write.ops == 0 && j.read.ops > 0 {
            &mut e.read
        } else {
            &mut e.write
        };
        d.count += 1;
        *d.by_errno.entry(iolab_report::errno_name(j.error as i32)).or_insert(0) += 1;
        e.total += 1;
    }
    e
}

/// What fio's report says of the machine (not much) and of the targets.
fn env(jobs: &[&FioJob], names: &[String]) -> Env {
    let first = jobs[0];
    let size = opt(first, "size").and_then(|s| parse_size(s, 1024)).unwrap_or(0);
    let direct = opt(first, "direct").is_some_and(|v| parse_bool(Some(v)) == Some(true));
    let targets = names
        .iter()
        .map(|n| TargetEnv {
            name: n.clone(),
            kind: if n.starts_with("/dev/") { "block_device" } else { "file" }.to_string(),
            size_bytes: size,
            fs_type: None,
            device_model: None,
            direct,
            logical_block_size: 0,
            created: false,
            scratch: false,
            fill_s: None,
            layout: None,
            huge_page_bytes: None,
            mount_options: None,
            write_cache: None,
        })
        .collect();
    let unknown = || "unknown".to_string();
    Env {
        hostname: unknown(),
        kernel: unknown(),
        cpu_model: unknown(),
        cpu_count: 0,
        mem_total_bytes: 0,
        engine: opt(first, "ioengine").unwrap_or("psync").to_string(),
        engine_features: Vec::new(),
        targets,
        throttle: None,
    }
}

/// A job's `fsync`/`fdatasync`/`sync` options as iolab's plan writes a worker's durability (what labels the
/// flush and write rows), or `None` when it asked for none.
fn durability(j: &FioJob) -> Option<Value> {
    let every = |key| opt(j, key).and_then(|v| v.trim().parse::<u64>().ok()).filter(|n| *n > 0);
    let (flush_every, data_only) = match (every("fsync"), every("fdatasync")) {
        (Some(n), _) => (n, false),
        (None, Some(n)) => (n, true),
        (None, None) => (0, false),
    };
    let write_sync = match opt(j, "sync").map(str::trim) {
        Some("1" | "sync") => "sync",
        Some("dsync") => "dsync",
        _ => "none",
    };
    (flush_every > 0 || write_sync != "none").then(
        || json!({ "flush_every": flush_every, "flush_data_only": data_only, "write_sync": write_sync }),
    )
}

/// `{"plan": {name, targets[, workers]}, "fio": {...}}`: the plan part is what the catalog lists (profile,
/// targets); `workers` (each job's `qd` and `durability`) only when a job flushed or synced its writes.
fn config(ctx: &GroupContext<'_>, groupid: u64, jobs: &[&FioJob], names: &[String]) -> Value {
    let stem = ctx.source.rsplit('/').next().unwrap_or(ctx.source);
    let name = if jobs[0].name.is_empty() { stem } else { jobs[0].name.as_str() };
    let mut plan = json!({
        "name": name,
        "targets": names.iter().map(|n| json!({ "name": n })).collect::<Vec<_>>(),
    });
    if jobs.iter().any(|j| durability(j).is_some()) {
        let workers = jobs.iter().map(|j| match durability(j) {
            Some(d) => json!({ "qd": iodepth(j), "durability": d }),
            None => json!({ "qd": iodepth(j) }),
        });
        plan["workers"] = Value::Array(workers.collect());
    }
    json!({
        "plan": plan,
        "fio": {
            "fio version": ctx.head.version,
            "groupid": groupid,
            "global options": ctx.head.global,
            "job options": jobs.iter().map(|j| &j.own).collect::<Vec<_>>(),
        },
    })
}

/// Target names of the group's jobs, each once, in order.
fn target_names(workers: &[WorkerResult]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for t in workers.iter().flat_map(|w| &w.targets) {
        if !names.contains(t) {
            names.push(t.clone());
        }
    }
    names
}

/// A stable 8-hex-digit run id from the report and the group (importing the same file twice gives the same ids).
fn run_id(ctx: &GroupContext<'_>, groupid: u64) -> String {
    let key = format!("{}\n{}\n{}\n{groupid}", ctx.head.version, ctx.head.report_unix_s, ctx.source);
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in key.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{:08x}", h as u32)
}

/// The iolab document of reporting group `groupid` (its job entries `jobs`, non-empty), started at
/// `start_unix_s`.
pub(crate) fn run(ctx: &GroupContext<'_>, groupid: u64, jobs: &[&FioJob], start_unix_s: f64) -> RunResult {
    let workers: Vec<WorkerResult> = jobs.iter().enumerate().map(|(i, j)| worker(i, j)).collect();
    let total = match workers.as_slice() {
        [one] => one.total.clone(),
        many => {
            let part = |f: fn(&WorkerResult) -> &OpSummary| sum(&many.iter().map(f).collect::<Vec<_>>());
            let mut set = OpSet {
                read: part(|w| &w.total.read),
                write: part(|w| &w.total.write),
                all: part(|w| &w.total.all),
                flush: sum_some(many.iter().map(|w| w.total.flush.as_ref())),
                trim: sum_some(many.iter().map(|w| w.total.trim.as_ref())),
            };
            for s in [&mut set.read, &mut set.write, &mut set.all] {
                (s.lat_ns, s.service_lat_ns) = (None, None);
            }
            set
        }
    };
    let names = target_names(&workers);
    let measured = measured_s(jobs);
    let requested = match jobs {
        [one] => iodepth(one) * numjobs(one),
        many => many.iter().map(|j| iodepth(j)).sum(),
    };
    let seed = jobs.iter().find_map(|j| opt(j, "randseed").and_then(|s| s.trim().parse().ok()));
    RunResult {
        schema: iolab_report::SCHEMA.to_string(),
        iolab_version: env!("CARGO_PKG_VERSION").to_string(),
        run_id: run_id(ctx, groupid),
        started_at: iolab_doc::time::format_rfc3339(start_unix_s),
        started_unix_s: start_unix_s,
        partial: false,
        seed: seed.unwrap_or(0),
        config: config(ctx, groupid, jobs, &names).into(),
        env: env(jobs, &names),
        ramp_s: ramp_s(jobs),
        measured_s: measured,
        in_flight_at_end: None,
        cpu: cpu(jobs, total.all.ops, measured),
        depth: Depth { requested, achieved: workers.iter().map(|w| w.achieved_depth).sum() },
        rate: None,
        warnings: Vec::new(),
        timeseries: Vec::new(),
        errors: errors(jobs, &total),
        groups: Vec::new(),
        verdict: None,
        histograms: None,
        loadgen: None,
        steady_state: None,
        replay: None,
        cache: None,
        verify: None,
        inject: None,
        measured_by: Some(MeasuredBy {
            tool: "fio".to_string(),
            version: ctx.head.version.clone(),
            source: ctx.source.to_string(),
            notes: super::notes::notes(ctx.groups, groupid, jobs, seed.is_some()),
        }),
        hosts: Vec::new(),
        ranks: None,
        total,
        workers,
        targets: Vec::new(),
    }
}
