//! Reading fio's JSON (`--output-format=json`, fio 3.x): the header, each job entry and its read and write
//! sections, as plain values the builder turns into iolab documents.

use std::collections::BTreeMap;

use iolab_stats::LatSummary;
use serde_json::Value;

use super::FioResultError;

/// The percentiles iolab keeps, as fio's keys' values (`"99.900000"`), in [`LatSummary`] order.
const KEPT: [f64; 6] = [50.0, 90.0, 95.0, 99.0, 99.9, 99.99];

/// The report's header.
#[derive(Clone, Debug)]
pub(crate) struct FioHeader {
    /// `fio version` (`fio-3.33`).
    pub version: String,
    /// Report time (`timestamp_ms`, else `timestamp`), Unix seconds.
    pub report_unix_s: f64,
    /// `global options` (job files with a `[global]` section), as strings.
    pub global: BTreeMap<String, String>,
}

/// fio's latency statistics of one kind (`lat_ns`, `clat_ns`) in one direction.
#[derive(Clone, Debug, Default)]
pub(crate) struct FioLat {
    /// Mean, ns.
    pub mean: f64,
    /// The summary, when fio reported every percentile iolab keeps.
    pub summary: Option<LatSummary>,
}

/// One direction (`read`, `write`) of a job entry.
#[derive(Clone, Debug, Default)]
pub(crate) struct FioDir {
    /// `total_ios`.
    pub ops: u64,
    /// `io_bytes`.
    pub bytes: u64,
    /// `iops`.
    pub iops: f64,
    /// `bw_bytes` (bytes per second).
    pub bw_bytes: f64,
    /// `runtime`, ms.
    pub runtime_ms: f64,
    /// `short_ios`.
    pub short: u64,
    /// `lat_ns`: issue -> completion.
    pub lat: FioLat,
    /// `clat_ns`: submission -> completion.
    pub clat: FioLat,
}

/// The `sync` section of a job entry: fio's fsync/fdatasync calls (fio 3.x has no bytes or rate for them).
#[derive(Clone, Debug, Default)]
pub(crate) struct FioSync {
    /// How many: `total_ios`, or the latency's `N` where fio reports `total_ios` as 0 (fio 3.33 always does).
    pub ops: u64,
    /// `lat_ns`: from issue to completion of each sync.
    pub lat: FioLat,
}

/// One entry of `jobs[]` (a job, or a whole group under `group_reporting`).
#[derive(Clone, Debug)]
pub(crate) struct FioJob {
    /// `jobname`.
    pub name: String,
    /// `groupid`.
    pub groupid: u64,
    /// `error` (errno of the error that stopped the job; 0 when none).
    pub error: i64,
    /// `job_runtime`, ms (summed over the jobs of an entry under `group_reporting`).
    pub job_runtime_ms: f64,
    /// `usr_cpu`, percent of one CPU over `job_runtime`.
    pub usr_cpu: f64,
    /// `sys_cpu`, percent of one CPU over `job_runtime`.
    pub sys_cpu: f64,
    /// `elapsed`, whole seconds since fio started.
    pub elapsed_s: f64,
    /// The job's own options (`job options`), as strings.
    pub own: BTreeMap<String, String>,
    /// Global options overlaid by the job's own: what the job ran with, as far as the report says.
    pub opts: BTreeMap<String, String>,
    /// Reads.
    pub read: FioDir,
    /// Writes.
    pub write: FioDir,
    /// Trims (`trim`; zero when the report has none).
    pub trim: FioDir,
    /// fsync/fdatasync calls (`sync`; zero when the report has none).
    pub sync: FioSync,
}

/// An object's values as strings (fio writes every option as a string).
fn options(v: Option<&Value>) -> BTreeMap<String, String> {
    let Some(Value::Object(m)) = v else { return BTreeMap::new() };
    m.iter().map(|(k, v)| (k.clone(), v.as_str().map_or_else(|| v.to_string(), str::to_string))).collect()
}

fn f64_of(v: &Value, key: &str) -> f64 {
    v.get(key).and_then(Value::as_f64).unwrap_or(0.0)
}

fn u64_of(v: &Value, key: &str) -> u64 {
    v.get(key).and_then(Value::as_u64).unwrap_or(0)
}

/// The report's header, or why the text is not a fio 3.x JSON report.
pub(crate) fn header(root: &Value, source: &str) -> Result<FioHeader, FioResultError> {
    let version = root
        .get("fio version")
        .and_then(Value::as_str)
        .ok_or_else(|| FioResultError::NoVersion { file: source.to_string() })?
        .to_string();
    if !version.starts_with("fio-3.") {
        return Err(FioResultError::NotFio3 { file: source.to_string(), version });
    }
    let report_unix_s = match root.get("timestamp_ms").and_then(Value::as_f64) {
        Some(ms) => ms / 1000.0,
        None => f64_of(root, "timestamp"),
    };
    Ok(FioHeader { version, report_unix_s, global: options(root.get("global options")) })
}

/// The value of fio's percentile key nearest `p` (`"99.900000"` for 99.9), if fio reported it.
fn percentile(pct: &serde_json::Map<String, Value>, p: f64) -> Option<u64> {
    pct.iter()
        .find(|(k, _)| k.parse::<f64>().is_ok_and(|x| (x - p).abs() < 1e-6))
        .and_then(|(_, v)| v.as_u64())
}

/// fio's `lat_ns`/`clat_ns` object; the summary only when every kept percentile is there.
pub(crate) fn lat(v: Option<&Value>) -> FioLat {
    let Some(v) = v else { return FioLat::default() };
    let n = u64_of(v, "N");
    let mean = f64_of(v, "mean");
    let summary = v.get("percentile").and_then(Value::as_object).filter(|_| n > 0).and_then(|pct| {
        let p: Vec<u64> = KEPT.iter().map(|&p| percentile(pct, p)).collect::<Option<_>>()?;
        Some(LatSummary {
            min: u64_of(v, "min"),
            mean,
            stdev: f64_of(v, "stddev"),
            p50: p[0],
            p90: p[1],
            p95: p[2],
            p99: p[3],
            p999: p[4],
            p9999: p[5],
            max: u64_of(v, "max"),
        })
    });
    FioLat { mean, summary }
}

fn dir(v: &Value) -> FioDir {
    FioDir {
        ops: u64_of(v, "total_ios"),
        bytes: u64_of(v, "io_bytes"),
        iops: f64_of(v, "iops"),
        bw_bytes: f64_of(v, "bw_bytes"),
        runtime_ms: f64_of(v, "runtime"),
        short: u64_of(v, "short_ios"),
        lat: lat(v.get("lat_ns")),
        clat: lat(v.get("clat_ns")),
    }
}

fn sync(v: Option<&Value>) -> FioSync {
    let Some(v) = v else { return FioSync::default() };
    let lat_v = v.get("lat_ns");
    let n = lat_v.map_or(0, |l| u64_of(l, "N"));
    FioSync { ops: u64_of(v, "total_ios").max(n), lat: lat(lat_v) }
}

/// Entry `i` of `jobs[]`, or why it is not a fio job entry.
pub(crate) fn job(
    v: &Value,
    i: usize,
    global: &BTreeMap<String, String>,
    source: &str,
) -> Result<FioJob, FioResultError> {
    let name = v.get("jobname").and_then(Value::as_str).map_or_else(|| format!("job{i}"), str::to_string);
    let (Some(read), Some(write)) = (v.get("read"), v.get("write")) else {
        return Err(FioResultError::NoDirections { file: source.to_string(), job: name });
    };
    let own = options(v.get("job options"));
    let mut opts = global.clone();
    opts.extend(own.clone());
    Ok(FioJob {
        groupid: u64_of(v, "groupid"),
        error: v.get("error").and_then(Value::as_i64).unwrap_or(0),
        job_runtime_ms: f64_of(v, "job_runtime"),
        usr_cpu: f64_of(v, "usr_cpu"),
        sys_cpu: f64_of(v, "sys_cpu"),
        elapsed_s: f64_of(v, "elapsed"),
        own,
        opts,
        read: dir(read),
        write: dir(write),
        trim: v.get("trim").map(dir).unwrap_or_default(),
        sync: sync(v.get("sync")),
        name,
    })
}
