//! The result document: everything one run produced, as serialised to JSON (`iolab.result/1`).
//!
//! The cli fills a [`RunResult`] from the engine's merged [`OpStats`], the environment probe and
//! the warnings; the exporters in this crate only read it. Field names are the JSON keys and are
//! described by `docs/schema/iolab.result.v1.json` (a test keeps the two in sync).

use std::collections::BTreeMap;

use iolab_stats::{LatSummary, OpStats, TimePoint, Warning};
use serde::{Deserialize, Serialize};

/// Schema identifier stored in [`RunResult::schema`].
pub const SCHEMA: &str = "iolab.result/1";

/// Everything one run produced.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// Version of iolab that produced the result.
    pub iolab_version: String,
    /// Unique id of the run (hex).
    pub run_id: String,
    /// Start of the run, RFC 3339 UTC.
    pub started_at: String,
    /// Start of the run, seconds since the Unix epoch.
    pub started_unix_s: f64,
    /// The run was stopped early (Ctrl-C); the numbers cover the time actually measured.
    pub partial: bool,
    /// Seed of every random choice (offsets, op mix, arrivals).
    pub seed: u64,
    /// The resolved job (plan), kept whole ([`crate::config`]).
    pub config: crate::config::RunConfig,
    /// Machine, engine and targets.
    pub env: Env,
    /// Seconds of warm-up excluded from the measurement.
    pub ramp_s: f64,
    /// Seconds measured.
    pub measured_s: f64,
    /// The I/Os in flight when the window closed: how many, the longest, and how long after the end the
    /// last completed (none of them is in another figure). Absent in documents from before it was counted
    /// and in imported results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_flight_at_end: Option<iolab_stats::InFlightAtEnd>,
    /// Totals over all workers.
    pub total: OpSet,
    /// Per-worker results.
    pub workers: Vec<WorkerResult>,
    /// Per target, in the plan's order: reads and writes summed over every worker that used it (Iometer's
    /// per-disk results). Empty when a transactions worker spread over several targets cannot be split.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub targets: Vec<TargetResult>,
    /// CPU used by the whole process.
    pub cpu: Cpu,
    /// Requested and achieved queue depth.
    pub depth: Depth,
    /// Open-loop rate results; `None` in closed loop.
    pub rate: Option<RateResult>,
    /// Conditions that make the result questionable.
    pub warnings: Vec<Warning>,
    /// Per-interval throughput and latency.
    pub timeseries: Vec<TimePoint>,
    /// Failed and short I/O.
    pub errors: ErrorSummary,
    /// Results merged per worker group (the `[worker.NAME]` table each worker came from), so a database and
    /// a log stream are reported apart. Histograms are merged, never averaged.
    #[serde(default)]
    pub groups: Vec<GroupResult>,
    /// Pass/fail against the job's thresholds (`[verdict]`, Exchange profiles); absent when none were set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<crate::verdict::Verdict>,
    /// The merged response-time histograms, so percentiles can be recomputed and runs merged later (the
    /// catalog keeps them; `compare` and `report` use them). Absent in documents from before they existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub histograms: Option<HistogramSet>,
    /// Users and transactions (`[users]`, `[[transaction]]`); absent for plain workloads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loadgen: Option<crate::loadgen::LoadgenResult>,
    /// Steady-state detection (`--steady-state`): reached or not, after how long, the window's values; absent
    /// when not asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady_state: Option<crate::steady::SteadyStateResult>,
    /// The block cache (`--cache`), when the run had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<crate::cache::CacheResult>,
    /// Data verification (`--verify`, `iolab verify`), when the run verified.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify: Option<iolab_doc::VerifyResult>,
    /// Injected faults (`--inject`), when the run injected any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inject: Option<iolab_doc::InjectResult>,
    /// The tool that measured the run when it was not iolab (a fio result imported with `iolab import
    /// fio-result`); absent in iolab's own runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured_by: Option<MeasuredBy>,
    /// A run over several hosts (MPI ranks): one row per rank, beside the merged totals above; absent in a
    /// single-host run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<HostResult>,
    /// A run over several hosts: how far apart the ranks started their workers, and when they finished.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ranks: Option<RanksResult>,
    /// `iolab replay`: what was replayed from which trace, at what speed, and how late each op started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<ReplayResult>,
}

/// One rank of a run over several hosts: its host, its own totals, CPU and warnings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HostResult {
    /// The MPI rank.
    pub rank: u32,
    /// The host the rank ran on.
    pub host: String,
    /// Its workers.
    pub workers: u32,
    /// Its own reads, writes and both, over the run's measured time.
    pub total: OpSet,
    /// The CPU time of its process over the measurement.
    pub cpu: Cpu,
    /// Seconds from the run's common start (the earliest rank's) to when its workers were released.
    pub start_offset_s: f64,
    /// Seconds from the run's common start to when its last worker had finished.
    pub done_s: f64,
    /// Its own warnings (found while preparing its targets).
    pub warnings: Vec<iolab_stats::Warning>,
    /// Its host's kernel (`Linux 6.8.0`), as `env.kernel` says rank 0's; empty in results written before
    /// it was kept.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kernel: String,
    /// Its host's CPU model, as `env.cpu_model` says rank 0's; empty in results written before it was kept.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub cpu_model: String,
}

/// The ranks of a run over several hosts, together.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RanksResult {
    /// Number of ranks.
    pub size: u32,
    /// The measured start skew: the latest rank's release minus the earliest's, by the hosts' clocks, seconds.
    pub start_skew_s: f64,
    /// Seconds from the common start to when the first rank had finished its I/O.
    pub first_done_s: f64,
    /// Seconds from the common start to when the last rank had finished its I/O.
    pub last_done_s: f64,
    /// `--stonewall`: the run ended for every rank when the first rank finished its I/O count.
    pub stonewall: bool,
}

/// `iolab replay`: the trace, what became ops and what did not, and the lag (docs/TRACES.md, "Replay").
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReplayResult {
    /// The trace file as given.
    pub trace: String,
    /// Its records.
    pub records: u64,
    /// Records issued as ops.
    pub replayed: u64,
    /// Records not issued, by reason (`not_read_or_write`: flushes, discards, other ops; `beyond_target`:
    /// the range does not fit in the target it maps to; `no_target`: its trace target maps to none;
    /// `unmapped`: on a trace device `--map` leaves out; `empty`: zero length; `too_large`: longer than
    /// 64 MiB). Summed over the workers.
    pub skipped: std::collections::BTreeMap<String, u64>,
    /// `1x`, `2x`, ... (scheduled from the trace clock, divided by the factor), or `max` (closed loop at the
    /// queue depth).
    pub speed: String,
    /// Actual submit - scheduled start, per op (timed replay only; `null` at `max`).
    pub lag_ns: Option<iolab_stats::LatSummary>,
    /// `--map`: each trace device mapped, by its name in the trace, to the name of its run target (as
    /// `targets[].name`). Absent without `--map` (the targets map by position).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub map: std::collections::BTreeMap<String, String>,
    /// The trace clock's tick: the largest step dividing every record's start time (1 s for a trace in whole
    /// seconds); 0 when all start at one time.
    #[serde(default)]
    pub clock_tick_ns: u64,
    /// The most records sharing one start time, issued together at a timed speed (unless `spread`).
    #[serde(default)]
    pub most_at_one_time: u64,
    /// `--spread`: records sharing a start time were spread evenly over the clock's tick.
    #[serde(default)]
    pub spread: bool,
}

impl ReplayResult {
    /// The replay in words, for every rendering: the trace, its speed and what was replayed or skipped, then
    /// the lag (timed replay).
    pub fn summary_lines(&self) -> Vec<String> {
        use crate::format::{format_count, format_duration_ns};
        let mut first = format!(
            "{} at {}: {} of {} records replayed",
            self.trace,
            self.speed,
            format_count(self.replayed),
            format_count(self.records)
        );
        if !self.skipped.is_empty() {
            let why: Vec<String> =
                self.skipped.iter().map(|(why, n)| format!("{} {why}", format_count(*n))).collect();
            first.push_str(&format!(", skipped {}", why.join(", ")));
        }
        let mut lines = vec![first];
        if self.most_at_one_time > 1 && self.speed != "max" {
            let how = if self.spread { "spread evenly over the tick (--spread)" } else { "issued together" };
            lines.push(format!(
                "the trace clock ticks every {}: up to {} records share a start time, {how}",
                format_duration_ns(self.clock_tick_ns as f64),
                format_count(self.most_at_one_time)
            ));
        }
        if !self.map.is_empty() {
            let map: Vec<String> =
                self.map.iter().map(|(disk, target)| format!("{disk} -> {target}")).collect();
            lines.push(format!("mapped {}", map.join(", ")));
        }
        match &self.lag_ns {
            Some(l) => lines.push(format!(
                "lag (submit - scheduled start) mean {} p50 {} p99 {} max {}",
                format_duration_ns(l.mean),
                format_duration_ns(l.p50 as f64),
                format_duration_ns(l.p99 as f64),
                format_duration_ns(l.max as f64)
            )),
            None if self.speed == "max" => {
                lines.push("as fast as the queue depth allows: no schedule, no lag".into())
            }
            None => {}
        }
        lines
    }
}

/// Another tool measured the run; iolab only translated its result (see `docs/FIO.md`, "fio results").
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MeasuredBy {
    /// The tool (`fio`).
    pub tool: String,
    /// Its version as it reported it (`fio-3.33`).
    pub version: String,
    /// The file the result was read from.
    pub source: String,
    /// What differs from an iolab run and what the tool's result did not have.
    pub notes: Vec<String>,
}

impl MeasuredBy {
    /// One line for people: `measured by fio (fio-3.33) from results.json`.
    pub fn line(&self) -> String {
        format!("measured by {} ({}) from {}", self.tool, self.version, self.source)
    }
}

impl RunResult {
    /// Parses a result written by the JSON exporter ([`crate::JsonExporter`]).
    pub fn from_json(s: &str) -> Result<RunResult, serde_json::Error> {
        serde_json::from_str(s)
    }
}

/// Response-time histograms of a run, each the base64 of [`iolab_stats::LatencyHistogram::to_base64`] (a
/// 60-byte exact-moments prefix, then HdrHistogram's V2 encoding); `None` where no op of that kind completed.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HistogramSet {
    /// Always `iolab-hdr/1`.
    pub encoding: String,
    /// All reads.
    pub read: Option<String>,
    /// All writes.
    pub write: Option<String>,
    /// Per group (by name): reads and writes.
    pub groups: BTreeMap<String, GroupHistograms>,
}

/// One group's response-time histograms (see [`HistogramSet`]).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GroupHistograms {
    /// Reads.
    pub read: Option<String>,
    /// Writes.
    pub write: Option<String>,
}

/// Name of the histogram encoding in [`HistogramSet::encoding`].
pub const HISTOGRAM_ENCODING: &str = "iolab-hdr/1";

impl HistogramSet {
    /// Encodes a run's merged read and write stats (`groups` added by the caller).
    pub fn from_stats(read: &OpStats, write: &OpStats) -> Self {
        HistogramSet {
            encoding: HISTOGRAM_ENCODING.to_string(),
            read: encode(read),
            write: encode(write),
            groups: BTreeMap::new(),
        }
    }
}

/// The base64 of an op kind's response histogram, `None` when empty.
pub fn encode(s: &OpStats) -> Option<String> {
    (s.lat.count() > 0).then(|| s.lat.to_base64())
}

/// The workers of one group (one `[worker.NAME]` table), merged.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GroupResult {
    /// The table name (`db`, `log`; `worker` for default workers).
    pub name: String,
    /// Workers in the group.
    pub workers: u32,
    /// Targets the group used (display names).
    pub targets: Vec<String>,
    /// Offered open-loop rate of the group, IOPS; `None` in closed loop.
    pub rate_iops: Option<f64>,
    /// The group's reads, writes, all, flushes and trims ([`OpSet`]), as fields of its own in the JSON.
    #[serde(flatten)]
    pub total: OpSet,
    /// Sum of the workers' achieved depths (Little's law).
    pub achieved_depth: f64,
    /// Largest per-interval mean read response time, ns (what Jetstress's Perfmon-sampled "maximum" sees);
    /// `None` without reads.
    pub read_interval_mean_max_ns: Option<f64>,
    /// Largest per-interval mean write response time, ns; `None` without writes.
    pub write_interval_mean_max_ns: Option<f64>,
}

/// Machine, engine and targets.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Env {
    /// Host name.
    pub hostname: String,
    /// Kernel release (`uname -r`).
    pub kernel: String,
    /// CPU model name.
    pub cpu_model: String,
    /// Online CPUs.
    pub cpu_count: u32,
    /// Total RAM in bytes.
    pub mem_total_bytes: u64,
    /// Engine used (`io_uring`, `sync`, `null`, `sim`).
    pub engine: String,
    /// Engine features in use (e.g. `fixed_buffers`, `sqpoll`).
    pub engine_features: Vec<String>,
    /// The targets, in the order of the job.
    pub targets: Vec<TargetEnv>,
    /// `--throttle`: the kernel I/O limits applied to the block devices (cgroup kind, path, per-device limits).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throttle: Option<iolab_doc::Throttled>,
}

/// One target as it was opened.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TargetEnv {
    /// Path or name as the user typed it.
    pub name: String,
    /// `file`, `block_device`, `mem`, `null` or `sim`; `directory` for a database document's directory.
    pub kind: String,
    /// Size in bytes.
    pub size_bytes: u64,
    /// Filesystem type (e.g. `ext4`), when known.
    pub fs_type: Option<String>,
    /// Device model, when known.
    pub device_model: Option<String>,
    /// Opened with O_DIRECT.
    pub direct: bool,
    /// Logical block size in bytes.
    pub logical_block_size: u32,
    /// iolab created the file.
    pub created: bool,
    /// iolab will delete the file after the run.
    pub scratch: bool,
    /// Seconds spent filling the file before the run, if it was filled.
    pub fill_s: Option<f64>,
    /// A file target's layout on its device (FIEMAP) and the I/Os that crossed a boundary between its
    /// extents; absent for other targets and on file systems without FIEMAP.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layout: Option<TargetLayout>,
    /// A `mem:` RAM disk's bytes on transparent huge pages (0: all on 4 KiB pages, where every random 4 KiB
    /// copy also pays a page-table walk); absent for other targets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub huge_page_bytes: Option<u64>,
    /// The mount options of the file system holding it (`rw,relatime,errors=remount-ro`), where read; absent
    /// in run results so far and in older documents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mount_options: Option<String>,
    /// The write cache of the device under it as the kernel drives it (`write back`, `write through`), where
    /// read; absent in run results so far and in older documents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_cache: Option<String>,
}

/// How a file target lies on its device: its extents (physically contiguous pieces, as `filefrag` counts
/// them) before and after the run, and the run's split I/Os.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TargetLayout {
    /// How iolab laid out the file it created or extended (`--prealloc`: `fallocate`, `write` or `none`);
    /// absent for a file it found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prealloc: Option<String>,
    /// Extents once the target was prepared, before the ramp: the map the run's I/Os were counted against.
    pub extents_before: u64,
    /// Extents after the run: its writes into holes add some, which the next run meets.
    pub extents_after: u64,
    /// I/Os recorded in the window whose range crossed an extent boundary of the map taken before the ramp.
    pub split_ios: u64,
}

impl TargetLayout {
    /// For people, as every rendering shows it: `3 extents`, `1 extent before the run, 30 after`,
    /// `30 extents, 1,234 split I/Os` (split I/Os only where there were boundaries to cross).
    pub fn summary(&self) -> String {
        let count = crate::format::format_count;
        let plural = |n: u64| if n == 1 { "extent" } else { "extents" };
        let mut text = format!("{} {}", count(self.extents_before), plural(self.extents_before));
        if self.extents_after != self.extents_before {
            text.push_str(&format!(" before the run, {} after", count(self.extents_after)));
        }
        if self.extents_before > 1 {
            text.push_str(&format!(", {} split I/Os", count(self.split_ios)));
        }
        text
    }
}

/// One target's reads, writes and both, over every worker that used it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TargetResult {
    /// The target's name, as in `env.targets` and the plan.
    pub name: String,
    /// Reads.
    pub read: OpSummary,
    /// Writes.
    pub write: OpSummary,
    /// Reads and writes, with merged (never averaged) histograms.
    pub all: OpSummary,
}

/// The rows of a result by op kind: reads, writes and both together, flushes and trims; declared once, for a
/// run's totals ([`RunResult::total`]), a group's and a worker's (flattened into theirs: [`GroupResult`],
/// [`WorkerResult`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OpSet {
    /// Reads.
    pub read: OpSummary,
    /// Writes.
    pub write: OpSummary,
    /// Reads and writes, with merged (never averaged) histograms.
    pub all: OpSummary,
    /// Flushes (fsync, fdatasync), apart from reads and writes (and not in `all`), as fio reports its
    /// `sync` percentiles; absent when none was issued.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flush: Option<OpSummary>,
    /// Trims (discards), apart from reads and writes (and not in `all`); absent when none was issued.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trim: Option<OpSummary>,
}

/// Counts, rates and latency digest of one op kind.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OpSummary {
    /// Completed ops (including short ones).
    pub ops: u64,
    /// Actual bytes transferred.
    pub bytes: u64,
    /// Ops per second of measured time.
    pub iops: f64,
    /// 10^6 bytes per second.
    pub mb_s: f64,
    /// 2^20 bytes per second.
    pub mib_s: f64,
    /// Response time (intended start -> completion); `None` without ops.
    pub lat_ns: Option<LatSummary>,
    /// Service time (submission -> completion); `None` without ops.
    pub service_lat_ns: Option<LatSummary>,
    /// Short completions.
    pub short: u64,
    /// Failed completions.
    pub errors: u64,
}

impl OpSummary {
    /// Digest of `s` over `measured_s` seconds (rates are 0 when `measured_s` is not positive).
    pub fn from_stats(s: &OpStats, measured_s: f64) -> Self {
        let per_s =
            |n: u64| if measured_s.is_finite() && measured_s > 0.0 { n as f64 / measured_s } else { 0.0 };
        Self {
            ops: s.ops,
            bytes: s.bytes,
            iops: per_s(s.ops),
            mb_s: per_s(s.bytes) / 1e6,
            mib_s: per_s(s.bytes) / (1u64 << 20) as f64,
            lat_ns: s.lat.summary(),
            service_lat_ns: s.service_lat.summary(),
            short: s.short,
            errors: s.errors,
        }
    }

    /// Mean number of ops in flight by Little's law: IOPS x mean service time. Service time
    /// (submission -> completion) is used so that open-loop queueing delay, which happens
    /// before submission, does not count as depth. Falls back to response time.
    pub fn littles_law_depth(&self) -> f64 {
        let lat = self.service_lat_ns.or(self.lat_ns);
        lat.map_or(0.0, |l| self.iops * l.mean / 1e9)
    }
}

impl OpSet {
    /// Digests of `read`, `write` and their merge (`all`, histograms merged, never averaged); no flushes or
    /// trims ([`OpSet::with_others`] adds them).
    pub fn from_stats(read: &OpStats, write: &OpStats, measured_s: f64) -> Self {
        let mut all = read.clone();
        all.merge(write);
        Self {
            read: OpSummary::from_stats(read, measured_s),
            write: OpSummary::from_stats(write, measured_s),
            all: OpSummary::from_stats(&all, measured_s),
            flush: None,
            trim: None,
        }
    }

    /// With the digests of `flush` and `trim`, each when it has any op or error.
    pub fn with_others(mut self, flush: &OpStats, trim: &OpStats, measured_s: f64) -> Self {
        self.flush = OpSummary::if_any(flush, measured_s);
        self.trim = OpSummary::if_any(trim, measured_s);
        self
    }
}

impl OpSummary {
    /// The digest of `s` when it has any op or error, else `None` (an op kind the run did not issue).
    pub fn if_any(s: &OpStats, measured_s: f64) -> Option<OpSummary> {
        (s.ops + s.errors > 0).then(|| OpSummary::from_stats(s, measured_s))
    }
}

/// One worker's results.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WorkerResult {
    /// Worker index (0-based).
    pub index: u32,
    /// Job name of the worker.
    pub name: String,
    /// Requested queue depth of this worker.
    pub qd: u32,
    /// Target names the worker used.
    pub targets: Vec<String>,
    /// Offered rate of this worker in open loop.
    pub rate_iops: Option<f64>,
    /// The worker's reads, writes, all, flushes and trims ([`OpSet`]), as fields of its own in the JSON.
    #[serde(flatten)]
    pub total: OpSet,
    /// Mean ops in flight (Little's law, [`OpSummary::littles_law_depth`] of `all`).
    pub achieved_depth: f64,
}

/// CPU used by the whole process, including io_uring worker threads.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Cpu {
    /// User CPU seconds.
    pub user_s: f64,
    /// System CPU seconds.
    pub sys_s: f64,
    /// (user + sys) / completed ops, in nanoseconds; None (null) when no op completed successfully. Leaves
    /// out the CPU of the `--metrics` endpoint's thread, as `user_s` and `sys_s` do.
    pub cpu_ns_per_io: Option<f64>,
    /// (user + sys) / measured seconds.
    pub cores_used: f64,
    /// The process's peak resident memory by the end of the run (getrusage's `ru_maxrss`); absent in results
    /// imported from other tools and in those saved by iolab before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_rss_bytes: Option<u64>,
}

/// Requested and achieved queue depth.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Depth {
    /// Sum of qd over workers.
    pub requested: u32,
    /// Sum over workers of IOPS x mean latency (Little's law).
    pub achieved: f64,
}

/// Open-loop results.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RateResult {
    /// Offered arrival rate, ops per second.
    pub offered_iops: f64,
    /// Arrival process (`fixed`, `poisson`, ...).
    pub arrival: String,
    /// Achieved completion rate of the open-loop workers (closed-loop workers of the same run not counted).
    pub achieved_iops: f64,
    /// Arrivals not yet submitted when the run ended.
    pub backlog_at_end: u64,
    /// Per worker group, when the run has more than one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<GroupRate>,
    /// iolab's own delay in issuing each op: its submission minus its scheduled arrival, over the window's
    /// ops of the open-loop workers (merged histograms). Included in the response times; shown apart so a
    /// reader can tell it from the storage's. Absent in documents from before it was measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lag_ns: Option<iolab_stats::LatSummary>,
    /// On the real clock: how the open-loop workers waited for their arrivals. Absent on virtual time (a
    /// worker wakes at its arrival exactly) and in documents from before it was reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pacing: Option<PacingResult>,
}

/// How open-loop workers on the real clock waited for each arrival: they slept until `margin_ns` before it,
/// then spun (polled, reaping completions) to it; the margin is chosen by each worker from its own measured
/// wake-ups (`rule`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PacingResult {
    /// The margin at the end of the run, the largest over the open-loop workers.
    pub margin_ns: u64,
    /// The most the margin could be (the largest over the workers): it bounds the CPU the spin costs.
    pub margin_cap_ns: u64,
    /// How the margin is chosen.
    pub rule: String,
    /// Wake-ups measured (timed waits for an arrival that ended with nothing completed), ramp included.
    pub wake_ups: u64,
    /// How late those wake-ups came after the instant asked for (merged over the workers).
    pub wake_late_ns: Option<iolab_stats::LatSummary>,
}

/// One worker group's rate (see [`RateResult::groups`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GroupRate {
    /// The group.
    pub group: String,
    /// Its workers.
    pub workers: u32,
    /// Its offered rate; `None` for a closed-loop group.
    pub offered_iops: Option<f64>,
    /// Its completions per second.
    pub achieved_iops: f64,
}

/// Failed and short I/O of the run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ErrorSummary {
    /// Failed completions: reads, writes, flushes and trims.
    pub total: u64,
    /// Reads.
    pub read: ErrorDetail,
    /// Writes.
    pub write: ErrorDetail,
    /// Flushes; absent when none failed or was short.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flush: Option<ErrorDetail>,
    /// Trims; absent when none failed or was short.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trim: Option<ErrorDetail>,
    /// Completions with EAGAIN or EINTR that were pushed again (transient; not errors, not in `total`).
    #[serde(default)]
    pub retries: u64,
}

/// Failed and short I/O of one op kind.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ErrorDetail {
    /// Failed completions.
    pub count: u64,
    /// Short completions.
    pub short: u64,
    /// Errno name (`"EIO"`, or `"E<n>"` when unnamed) -> count.
    pub by_errno: BTreeMap<String, u64>,
}

impl ErrorDetail {
    /// Errors and short completions of `s`, errnos named with [`errno_name`].
    pub fn from_stats(s: &OpStats) -> Self {
        let mut by_errno = BTreeMap::new();
        for (&errno, &n) in &s.errors_by_errno {
            *by_errno.entry(errno_name(errno)).or_insert(0) += n;
        }
        Self { count: s.errors, short: s.short, by_errno }
    }
}

impl ErrorSummary {
    /// Errors of the run from the merged read and write stats, and the transient completions pushed again.
    pub fn from_stats(read: &OpStats, write: &OpStats, retries: u64) -> Self {
        Self {
            total: read.errors + write.errors,
            read: ErrorDetail::from_stats(read),
            write: ErrorDetail::from_stats(write),
            flush: None,
            trim: None,
            retries,
        }
    }

    /// With the errors of flushes and trims (counted in `total`), each when it has any.
    pub fn with_others(mut self, flush: &OpStats, trim: &OpStats) -> Self {
        self.total += flush.errors + trim.errors;
        let detail = |s: &OpStats| (s.errors + s.short > 0).then(|| ErrorDetail::from_stats(s));
        self.flush = detail(flush);
        self.trim = detail(trim);
        self
    }
}

/// Linux name of a (positive or negative) errno, `"E<n>"` when not in the small table.
pub fn errno_name(errno: i32) -> String {
    let errno = errno.saturating_abs();
    let name = match errno {
        1 => "EPERM",
        5 => "EIO",
        6 => "ENXIO",
        9 => "EBADF",
        11 => "EAGAIN",
        12 => "ENOMEM",
        13 => "EACCES",
        14 => "EFAULT",
        16 => "EBUSY",
        19 => "ENODEV",
        22 => "EINVAL",
        27 => "EFBIG",
        28 => "ENOSPC",
        30 => "EROFS",
        84 => "EILSEQ",
        95 => "EOPNOTSUPP",
        110 => "ETIMEDOUT",
        125 => "ECANCELED",
        _ => return format!("E{errno}"),
    };
    name.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errno_name_known_and_unknown() {
        assert_eq!(errno_name(5), "EIO");
        assert_eq!(errno_name(-28), "ENOSPC");
        assert_eq!(errno_name(999), "E999");
    }

    #[test]
    fn op_set_all_merges_histograms_not_averages() {
        let (mut read, mut write) = (OpStats::new(), OpStats::new());
        for _ in 0..99 {
            read.record_ok(4096, 4096, 100_000, 90_000);
        }
        write.record_ok(4096, 4096, 10_000_000, 9_000_000);
        write.record_ok(4096, 4096, 10_000_000, 9_000_000);
        let set = OpSet::from_stats(&read, &write, 2.0);
        let all = set.all.lat_ns.unwrap();
        // 101 samples: the 99th percentile (rank 100) is a write. Percentiles are the top of
        // their HDR sub-bucket, at most 0.1% above the sample.
        let within = |got: u64, want: u64| got >= want && got - want <= want / 1000;
        assert!(within(all.p99, 10_000_000), "{}", all.p99);
        assert!(within(all.p50, 100_000), "{}", all.p50);
        assert_eq!(all.max, 10_000_000);
        assert_eq!(set.all.ops, 101);
        assert_eq!(set.all.iops, 50.5);
        assert_eq!(set.write.mb_s, 2.0 * 4096.0 / 2.0 / 1e6);
    }

    #[test]
    fn op_summary_without_ops_has_no_latency_and_zero_rates() {
        let s = OpSummary::from_stats(&OpStats::new(), 0.0);
        assert_eq!((s.ops, s.iops, s.lat_ns), (0, 0.0, None));
        assert_eq!(s.littles_law_depth(), 0.0);
    }

    #[test]
    fn error_detail_names_errnos() {
        let mut s = OpStats::new();
        s.record_error(5);
        s.record_error(-5);
        s.record_error(4242);
        let d = ErrorDetail::from_stats(&s);
        assert_eq!(d.count, 3);
        assert_eq!(d.by_errno, BTreeMap::from([("E4242".to_string(), 1), ("EIO".to_string(), 2)]));
    }
}
