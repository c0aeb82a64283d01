//! iolab-plan: from what the user asked for ([`iolab_spec::JobSpec`]) to a resolved, bounded [`Plan`].
//!
//! Planning is pure: layers are merged (built-in defaults, then the job's top level, the worker table, the
//! access spec, and command-line flags), every number is checked against its limit, seeds are fixed, and the
//! per-worker generators of offsets ([`gen::OpGen`]) and arrivals ([`arrival::Arrivals`]) are built here.
//! Checks that need a target's size or sector size run in [`Plan::bind`], once the targets were probed.

#![deny(missing_docs)]

pub mod arrival;
pub mod dist;
pub mod gen;
pub mod loadgen;
pub mod sizing;
pub mod sprandom;
pub mod writes;

use iolab_spec::{
    Arrival, Band, BlockSizeWeight, ClockKind, DataPattern, Dist, EngineKind, JobSpec, Layer, NamedTarget,
    Prealloc, TargetSpec,
};
use serde::Serialize;

/// Default measured duration when neither a duration nor an I/O or byte count is given.
pub const DEFAULT_DURATION_NS: u64 = 10_000_000_000;
/// Default ramp (warm-up) for duration-based runs.
pub const DEFAULT_RAMP_NS: u64 = 1_000_000_000;
/// Time-series interval unless the job says (`interval`).
pub const DEFAULT_INTERVAL_NS: u64 = 1_000_000_000;
/// Default outstanding I/Os per worker.
pub const DEFAULT_QD: u32 = 32;
/// Default block size.
pub const DEFAULT_BS: u64 = 4096;
/// Upper bound on I/O buffer memory per worker (two buffers of the largest block size per slot).
pub const MAX_BUFFER_BYTES_PER_WORKER: u64 = 4 << 30;

/// Upper bound on I/O buffer memory of the whole run.
pub const MAX_BUFFER_BYTES_TOTAL: u64 = 16 << 30;

/// A planning error: values that are fine alone but impossible together. Exit code 2.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct PlanError(pub String);

/// The resolved run.
#[derive(Clone, Debug, Serialize)]
pub struct Plan {
    /// Job name.
    pub name: String,
    /// Seed of every random choice (printed and stored).
    pub seed: u64,
    /// Measured time, when the run is duration-based.
    pub duration_ns: Option<u64>,
    /// Warm-up excluded from every statistic.
    pub ramp_ns: u64,
    /// The time series' interval. Documents carry it once, as `config.interval_s` (the interval the run
    /// used, after any widening on virtual time), so the plan's own copy is not serialised.
    #[serde(skip)]
    pub interval_ns: u64,
    /// I/O count limit (all workers).
    pub ios: Option<u64>,
    /// Byte limit (all workers).
    pub bytes: Option<u64>,
    /// Engine for file and device targets.
    pub engine: EngineKind,
    /// O_DIRECT.
    pub direct: bool,
    /// Who set `direct` when the user did not type it ([`JobSpec::direct_set_by`]), for the hints; not
    /// serialised (the warnings carry it).
    #[serde(skip)]
    pub direct_set_by: Option<String>,
    /// How a file iolab creates (or extends) is laid out (`prealloc`); left out of the document when it is the
    /// default, `fallocate`.
    #[serde(default, skip_serializing_if = "is_default_prealloc")]
    pub prealloc: Prealloc,
    /// Real or virtual time.
    pub clock: ClockKind,
    /// Writes to block devices allowed.
    pub allow_write_device: bool,
    /// Writes to mounted or signed devices allowed.
    pub destroy_data: bool,
    /// Writes to existing files iolab did not make allowed (`--overwrite`); left out of the document when
    /// not given.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub overwrite: bool,
    /// The distinct targets of the run.
    pub targets: Vec<TargetPlan>,
    /// One entry per worker thread.
    pub workers: Vec<WorkerPlan>,
    /// Users and transactions (`[users]`, `[[transaction]]`), when the job has them.
    pub loadgen: Option<loadgen::LoadgenPlan>,
    /// The total queue depth the job asked for, kept when the engine runs less (the sync engine does one I/O
    /// at a time per worker, so the workers' `qd` were lowered to 1); `None` when the workers run as asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub asked_depth: Option<u32>,
}

fn is_default_prealloc(p: &Prealloc) -> bool {
    *p == Prealloc::default()
}

/// One distinct target.
#[derive(Clone, Debug, Serialize)]
pub struct TargetPlan {
    /// As parsed.
    pub spec: TargetSpec,
    /// Display name.
    pub name: String,
    /// Its name in the job's `[targets]` (`db`), when a worker named it as `@db`.
    pub role: Option<String>,
    /// Size to create a missing file with (`size`).
    pub create_size: Option<u64>,
    /// The span its workers address by default (`[targets]` `footprint`): their region where the target is
    /// larger, the whole target where it is smaller ([`Plan::bind`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub footprint: Option<u64>,
    /// Some worker reads it.
    pub reads: bool,
    /// Some worker writes it.
    pub writes: bool,
}

/// Think time: the worker issues `burst` I/Os, waits until all of them completed, then idles `ns` before the
/// next burst (fio's `thinktime` with `thinktime_blocks`, Iometer's transfer delay and burst length). The
/// first I/O of a burst is intended at the end of the idle time, so a late wake-up counts against the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Think {
    /// Idle time after each burst, ns.
    pub ns: u64,
    /// I/Os per burst.
    pub burst: u32,
}

/// The think time `base` asks for: closed loop only (an open-loop rate already says when I/Os start).
fn think_of(name: &str, base: &Layer, rate: Option<f64>) -> Result<Option<Think>, PlanError> {
    match (base.think, base.burst, rate) {
        (None, None, _) | (None, Some(_), Some(_)) => Ok(None),
        (None, Some(_), None) => Err(PlanError(format!(
            "worker '{name}': 'burst' counts I/Os between think times (closed loop) or arriving at once (with 'rate'); give 'think' (e.g. think = \"10ms\") or 'rate' too"
        ))),
        (Some(_), _, Some(_)) => Err(PlanError(format!(
            "worker '{name}': 'think' is for closed loop; with 'rate' the arrivals already say when each I/O starts"
        ))),
        (Some(ns), burst, None) => Ok(Some(Think { ns, burst: burst.unwrap_or(1) })),
    }
}

/// A worker's place in a flow group (fio's `flow`): the group's workers issue I/Os in the ratio of their
/// weights; one ahead of its share issues nothing, waits for its I/Os in flight, then `sleep_ns`, and looks
/// again (fio's flow.c `flow_threshold_exceeded`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Flow {
    /// The group (`flow_id`).
    pub id: u32,
    /// This worker's weight in it (`flow`).
    pub weight: u32,
    /// How long it waits, once drained, before it looks again (`flow_sleep`).
    pub sleep_ns: u64,
}

/// How long a worker ahead of its flow share waits before it looks again, when `flow_sleep` is not given
/// (fio looks again at once, spinning).
pub const DEFAULT_FLOW_SLEEP_NS: u64 = 10_000;

/// Salt of the stream a worker's start delay is drawn from (`start_delay = "1s-5s"`).
const START_DELAY_SALT: u64 = 0x5354_4152_5444_4c59;

/// The flow group `base` puts a worker in, if any.
fn flow_of(name: &str, base: &Layer) -> Result<Option<Flow>, PlanError> {
    match (base.flow, base.flow_id, base.flow_sleep) {
        (Some(weight), id, sleep) => Ok(Some(Flow {
            id: id.unwrap_or(0),
            weight,
            sleep_ns: sleep.unwrap_or(DEFAULT_FLOW_SLEEP_NS),
        })),
        (None, None, None) => Ok(None),
        (None, ..) => Err(PlanError(format!(
            "worker '{name}': 'flow_id' and 'flow_sleep' are for a worker in a flow group; give its weight too (e.g. flow = 1)"
        ))),
    }
}

/// The start delay of worker `index`: the one given, or a draw from the range given, from the run's seed.
fn start_delay_of(base: &Layer, seed: u64, index: u32) -> u64 {
    match base.start_delay {
        None => 0,
        Some((lo, hi)) if lo == hi => lo,
        Some((lo, hi)) => lo + iolab_rng::Rng::for_worker(seed ^ START_DELAY_SALT, index).below(hi - lo + 1),
    }
}

/// The queue-depth search of a worker (`latency_target`, fio's io_u.c `lat_target_*`): from depth 1, after
/// each window, up while `percentile` of the window's I/Os took at most `target_ns` from submission, down
/// when they did not, never above the worker's `qd`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct LatencyTarget {
    /// The latency to meet, ns.
    pub target_ns: u64,
    /// How long each depth runs before the search decides, ns (0: at every completion).
    pub window_ns: u64,
    /// The share of a window's I/Os that must meet it, percent.
    pub percentile: f64,
}

/// The queue-depth search `base` asks for: closed loop only (in open loop the arrivals set the depth).
fn latency_target_of(
    name: &str,
    base: &Layer,
    rate: Option<f64>,
) -> Result<Option<LatencyTarget>, PlanError> {
    let Some(target_ns) = base.latency_target else {
        if base.latency_window.is_some() || base.latency_percentile.is_some() {
            return Err(PlanError(format!(
                "worker '{name}': 'latency_window' and 'latency_percentile' are for the depth search; give 'latency_target' (e.g. latency_target = \"1ms\") too"
            )));
        }
        return Ok(None);
    };
    if rate.is_some() {
        return Err(PlanError(format!(
            "worker '{name}': 'latency_target' searches the depth of a closed loop; with 'rate' the arrivals set the depth"
        )));
    }
    Ok(Some(LatencyTarget {
        target_ns,
        window_ns: base.latency_window.unwrap_or(0),
        percentile: base.latency_percentile.unwrap_or(100.0),
    }))
}

/// One worker thread.
#[derive(Clone, Debug, Serialize)]
pub struct WorkerPlan {
    /// 0-based index over all workers.
    pub index: u32,
    /// Table name, with an instance suffix when count > 1 (`db.2`).
    pub name: String,
    /// The worker table it came from (`db`; `worker` for the default workers): results are also merged per group.
    pub group: String,
    /// Indices into [`Plan::targets`].
    pub targets: Vec<usize>,
    /// Outstanding I/Os.
    pub qd: u32,
    /// Open-loop rate of this worker, IOPS; None = closed loop.
    pub rate_iops: Option<f64>,
    /// Inter-arrival law in open loop.
    pub arrival: Arrival,
    /// Open loop: I/Os arriving at each arrival instant (`burst` with `rate`; the instants at `rate / burst`).
    #[serde(skip_serializing_if = "is_one")]
    pub arrival_burst: u32,
    /// Closed loop with think time: bursts of I/Os, each drained, then an idle time ([`Think`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub think: Option<Think>,
    /// How long after the run's start it issues its first I/O, ns (`start_delay`, fio's `startdelay`).
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub start_delay_ns: u64,
    /// Its place in a flow group (`flow`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flow: Option<Flow>,
    /// Its queue-depth search (`latency_target`), if any: `qd` is then the most it tries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_target: Option<LatencyTarget>,
    /// Written data.
    pub data: DataPattern,
    /// A share of writes whose data copies an earlier write's (`dedupe`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dedupe: Option<writes::DedupePlan>,
    /// Read-backs as the run goes (`verify_backlog`): after every `.0` writes, `.1` reads of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify_backlog: Option<(u32, u32)>,
    /// Every write is atomic (`atomic`, RWF_ATOMIC).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub atomic: bool,
    /// Region start in each target.
    pub region_offset: u64,
    /// Region length (None = to the end of the target).
    pub region_length: Option<u64>,
    /// The walk over bands of the region (the `band` key, fio's `zonemode=strided`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub band: Option<Band>,
    /// Access specs.
    pub specs: Vec<AccessPlan>,
    /// This worker's share of the I/O limit.
    pub ios: Option<u64>,
    /// This worker's share of the byte limit.
    pub bytes: Option<u64>,
    /// Largest block size of any spec.
    pub max_bs: u64,
    /// This worker's users and transactions; when set, the engine runs transactions instead of the op loop.
    pub loadgen: Option<loadgen::WorkerTxnPlan>,
    /// How its writes are made durable: flushes every N writes, synchronous writes.
    #[serde(default, skip_serializing_if = "Durability::is_plain")]
    pub durability: Durability,
}

/// How a worker makes its writes durable ([`iolab_spec::durability`]): a flush after every `flush_every`
/// writes (the worker lets its in-flight ops complete, issues the flush, and issues the next op when the flush
/// completes, as an application that commits does), and synchronous writes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Durability {
    /// Flush after every this many writes; 0: never.
    pub flush_every: u32,
    /// The flush is fdatasync (the data and the metadata needed to read it) rather than fsync.
    pub flush_data_only: bool,
    /// Each write durable when it completes (O_DSYNC, O_SYNC).
    pub write_sync: iolab_spec::WriteSync,
}

impl Durability {
    /// Nothing asked: no flushes, plain writes (what the plan's JSON leaves out).
    pub fn is_plain(&self) -> bool {
        *self == Durability::default()
    }

    /// The worker's durability from its merged layer: `fsync` or `fdatasync` (not both), and `sync`.
    fn of(name: &str, base: &Layer) -> Result<Durability, PlanError> {
        let (flush_every, flush_data_only) = match (base.fsync.unwrap_or(0), base.fdatasync.unwrap_or(0)) {
            (0, 0) => (0, false),
            (n, 0) => (n, false),
            (0, n) => (n, true),
            (a, b) => {
                return Err(PlanError(format!(
                "worker '{name}': 'fsync = {a}' and 'fdatasync = {b}' both ask for flushes; give one of them"
            )))
            }
        };
        Ok(Durability { flush_every, flush_data_only, write_sync: base.sync.unwrap_or_default() })
    }
}

/// One resolved access spec.
#[derive(Clone, Debug, Serialize)]
pub struct AccessPlan {
    /// Relative weight among the worker's specs.
    pub weight: u32,
    /// Block sizes and their weights.
    pub bs: Vec<BlockSizeWeight>,
    /// Reads, percent.
    pub read_pct: f64,
    /// Random offsets, percent.
    pub random_pct: f64,
    /// Trims (discards), percent of the spec's ops; reads and writes share the rest by `read_pct`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub trim_pct: f64,
    /// Alignment of random offsets (None = each I/O's own size).
    pub align: Option<u64>,
    /// Bytes the sequential cursor skips after each sequential I/O; negative: backwards (the `seq_skip` key).
    #[serde(default, skip_serializing_if = "is_zero_i64")]
    pub seq_skip: i64,
    /// I/Os per random offset (the `random_run` key): every this many I/Os a random offset is drawn, the
    /// others follow the one before; 1: every random I/O draws its own.
    #[serde(skip_serializing_if = "is_one_u32")]
    pub random_run: u32,
    /// Within a random run, the I/Os after the first are at its offset, not after it (fio's
    /// `rw_sequencer=identical`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub random_run_identical: bool,
    /// Each trim is followed by a write of the same block (the `trim_then_write` key).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub trim_then_write: bool,
    /// Spread of random offsets.
    pub dist: Dist,
}

/// What [`Plan::bind`] needs to know about each target.
#[derive(Clone, Copy, Debug)]
pub struct TargetGeometry {
    /// Usable size in bytes.
    pub size_bytes: u64,
    /// Offsets and lengths must be multiples of this (1 for buffered files).
    pub block_bytes: u32,
}

/// A worker's region in one target, after binding.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Region {
    /// First byte.
    pub offset: u64,
    /// Length in bytes.
    pub length: u64,
}

/// The first layer (most specific first) that sets `pct` or `rw` decides; `pct` beats `rw` in one layer.
fn resolve_pct(
    layers: &[&Layer],
    pct: impl Fn(&Layer) -> Option<f64>,
    from_rw: impl Fn((f64, f64)) -> f64,
    default: f64,
) -> f64 {
    for l in layers {
        if let Some(p) = pct(l) {
            return p;
        }
        if let Some(rw) = l.rw {
            return from_rw(rw.implied());
        }
    }
    default
}

/// How a worker uses a target, folded into its [`TargetPlan`] by [`Plan::add_target`].
#[derive(Clone, Copy, Debug, Default)]
pub struct TargetUse {
    /// The worker reads it.
    pub reads: bool,
    /// The worker writes it.
    pub writes: bool,
    /// Size a missing file should be created with.
    pub create_size: Option<u64>,
    /// The target's `[targets]` footprint.
    pub footprint: Option<u64>,
}

impl Plan {
    /// What the command line consented to, as the target stage takes it.
    pub fn consent(&self) -> iolab_spec::Consent {
        iolab_spec::Consent {
            allow_write_device: self.allow_write_device,
            destroy_data: self.destroy_data,
            overwrite: self.overwrite,
        }
    }

    /// The index of `spec` in [`Plan::targets`], adding it on first use; folds in how this user uses it (reads,
    /// writes, the largest create size) and its `[targets]` name.
    pub fn add_target(&mut self, spec: &TargetSpec, role: Option<&str>, used: TargetUse) -> usize {
        let i = match self.targets.iter().position(|p| &p.spec == spec) {
            Some(i) => i,
            None => {
                self.targets.push(TargetPlan {
                    spec: spec.clone(),
                    name: spec.display_name(),
                    role: None,
                    create_size: None,
                    footprint: None,
                    reads: false,
                    writes: false,
                });
                self.targets.len() - 1
            }
        };
        let tp = &mut self.targets[i];
        tp.reads |= used.reads;
        tp.writes |= used.writes;
        if tp.role.is_none() {
            tp.role = role.map(str::to_string);
        }
        tp.create_size = tp.create_size.max(used.create_size);
        tp.footprint = tp.footprint.max(used.footprint);
        i
    }

    /// Resolves a job. `default_target` is used by workers with no target anywhere (the cli's scratch file).
    pub fn from_spec(job: &JobSpec, default_target: Option<&TargetSpec>) -> Result<Plan, PlanError> {
        if !job.phases.is_empty() {
            return Err(PlanError(
                "a job with [[phase]] tables runs phase by phase (`iolab run` runs them in order); a sweep or a search takes a job without phases".into(),
            ));
        }
        let mut plan = Plan::header(job);
        let default_table = iolab_spec::WorkerSpec {
            name: "worker".into(),
            count: job.workers.unwrap_or(1),
            layer: Layer::default(),
            specs: Vec::new(),
        };
        // A job with users and transactions gets its workers from `loadgen::resolve` instead of the tables.
        if let Some(lg) = &job.loadgen {
            loadgen::resolve(job, lg, default_target, &mut plan)?;
        }
        let tables = worker_tables(job, &default_table);
        let rates = RateSplit::new(job, &tables)?;
        let mut index = 0u32;
        for table in &tables {
            for instance in 0..table.count {
                let worker = plan.table_worker(job, table, instance, index, &rates, default_target)?;
                plan.workers.push(worker);
                index += 1;
            }
        }
        writes::share_dedupe(&mut plan.workers);
        plan.check_total_buffers()?;
        plan.share_limits()?;
        plan.check_virtual_clock()?;
        Ok(plan)
    }

    /// The run-level settings (duration, ramp, seed, engine, clock, safety switches), with no targets or workers yet.
    fn header(job: &JobSpec) -> Plan {
        let duration_ns = match (job.duration_ns, job.ios, job.bytes) {
            (None, None, None) => Some(DEFAULT_DURATION_NS),
            (d, _, _) => d,
        };
        // Warm-up is excluded by default for timed runs (fio's default of 0 counts cold caches and ramping
        // queues); count-limited runs measure every I/O unless a ramp is asked for.
        let ramp_ns = job.ramp_ns.unwrap_or(if duration_ns.is_some() { DEFAULT_RAMP_NS } else { 0 });
        let seed = job.seed.unwrap_or_else(fresh_seed);
        Plan {
            name: job.name.clone().unwrap_or_else(|| "iolab".into()),
            seed,
            duration_ns,
            ramp_ns,
            interval_ns: job.interval_ns.unwrap_or(DEFAULT_INTERVAL_NS),
            ios: job.ios,
            bytes: job.bytes,
            engine: job.engine.unwrap_or_default(),
            direct: job.direct.unwrap_or(true),
            direct_set_by: job.direct_set_by.clone(),
            prealloc: job.prealloc.unwrap_or_default(),
            clock: job.clock.unwrap_or_default(),
            allow_write_device: job.consent.allow_write_device,
            destroy_data: job.consent.destroy_data,
            overwrite: job.consent.overwrite,
            targets: Vec::new(),
            workers: Vec::new(),
            loadgen: None,
            asked_depth: None,
        }
    }

    /// The worker plan of one instance of `table`, adding its targets to the plan.
    fn table_worker(
        &mut self,
        job: &JobSpec,
        table: &iolab_spec::WorkerSpec,
        instance: u32,
        index: u32,
        rates: &RateSplit,
        default_target: Option<&TargetSpec>,
    ) -> Result<WorkerPlan, PlanError> {
        let base = job.defaults.merged(&table.layer).merged(&job.forced);
        let name =
            if table.count > 1 { format!("{}.{}", table.name, instance + 1) } else { table.name.clone() };
        let tspecs = worker_targets(job, &base, &name, default_target)?;
        let specs = access_plans(job, table, &base, &name, self.direct)?;
        // A trim changes data as a write does: it needs what a write needs.
        let writes = specs.iter().any(|s| s.weight > 0 && (s.read_pct < 100.0 || s.trim_pct > 0.0));
        let reads = specs.iter().any(|s| s.weight > 0 && s.read_pct > 0.0 && s.trim_pct < 100.0);
        let durability = Durability::of(&name, &base)?;
        let targets = self.add_worker_targets(&name, &tspecs, reads, writes, base.size)?;
        let qd = base.qd.unwrap_or(DEFAULT_QD);
        let max_bs = specs.iter().flat_map(|s| s.bs.iter().map(|b| b.size_bytes)).max().unwrap_or(DEFAULT_BS);
        check_worker_buffers(&name, qd, max_bs)?;
        let rate_iops = rates.of_table(job, table).map(|r| r.iops(mean_op_bytes(&specs)));
        let think = think_of(&name, &base, rate_iops)?;
        let flow = flow_of(&name, &base)?;
        let latency_target = latency_target_of(&name, &base, rate_iops)?;
        let band = band_of(&name, base.band, &specs, max_bs)?;
        sprandom_fits(&name, &specs, targets.len())?;
        let dedupe = writes::dedupe_of(&name, &base)?;
        let virtual_targets = tspecs.iter().all(|t| t.0.is_virtual());
        let atomic = writes::atomic_of(&name, &base, self.direct, virtual_targets)?;
        let verify_backlog = writes::backlog_of(&name, &base, job.integrity.verifying())?;
        Ok(WorkerPlan {
            index,
            name,
            group: table.name.clone(),
            targets,
            qd,
            rate_iops,
            arrival: base.arrival.unwrap_or_default(),
            arrival_burst: if rate_iops.is_some() { base.burst.unwrap_or(1) } else { 1 },
            think,
            start_delay_ns: start_delay_of(&base, self.seed, index),
            flow,
            latency_target,
            data: base.data.unwrap_or_default(),
            dedupe,
            verify_backlog,
            atomic,
            region_offset: base.offset.unwrap_or(0),
            region_length: base.length,
            band,
            specs,
            ios: None,
            bytes: None,
            max_bs,
            loadgen: None,
            durability,
        })
    }

    /// The indices of one worker's targets, added to the plan, once they are known to be of one kind.
    fn add_worker_targets(
        &mut self,
        name: &str,
        tspecs: &[WorkerTarget],
        reads: bool,
        writes: bool,
        size: Option<u64>,
    ) -> Result<Vec<usize>, PlanError> {
        let virtual_kinds: Vec<bool> = tspecs.iter().map(|t| t.0.is_virtual()).collect();
        if virtual_kinds.iter().any(|v| *v) && virtual_kinds.iter().any(|v| !*v) {
            return Err(PlanError(format!(
                "worker '{name}' mixes files/devices with mem:/null:/sim: targets; give them to separate workers"
            )));
        }
        let mut targets = Vec::new();
        for (t, role, declared_size, footprint) in tspecs {
            // A footprint sizes a created file unless `size` (`--size`) says otherwise.
            let create_size = size.max(*declared_size).or(*footprint);
            let use_ = TargetUse { reads, writes, create_size, footprint: *footprint };
            let i = self.add_target(t, role.as_deref(), use_);
            if !targets.contains(&i) {
                targets.push(i);
            }
        }
        Ok(targets)
    }

    /// Whether the I/O buffers of all workers together stay within [`MAX_BUFFER_BYTES_TOTAL`].
    fn check_total_buffers(&self) -> Result<(), PlanError> {
        let total_buffers: u64 = self.workers.iter().map(|w| 2 * w.qd as u64 * w.max_bs).sum();
        if total_buffers > MAX_BUFFER_BYTES_TOTAL {
            return Err(PlanError(format!(
                "the workers' I/O buffers need {} in all (2 x qd x largest block size per worker); at most {} (fewer 'workers', lower 'qd' or 'bs')",
                iolab_spec::units::format_size(total_buffers),
                iolab_spec::units::format_size(MAX_BUFFER_BYTES_TOTAL)
            )));
        }
        Ok(())
    }

    /// Each worker's share of the `ios` and `bytes` limits, and whether there is at least one I/O per worker.
    fn share_limits(&mut self) -> Result<(), PlanError> {
        let n = self.workers.len() as u64;
        for (i, w) in self.workers.iter_mut().enumerate() {
            let share = |total: u64| total / n + u64::from((i as u64) < total % n);
            w.ios = self.ios.map(share);
            w.bytes = self.bytes.map(share);
        }
        if self.ios.is_some_and(|t| t < n) {
            return Err(PlanError(format!("'ios' {} is fewer than the {n} workers", self.ios.unwrap_or(0))));
        }
        Ok(())
    }

    /// Whether a virtual-clock run has only emulated (`sim:`) targets.
    fn check_virtual_clock(&self) -> Result<(), PlanError> {
        if self.clock == ClockKind::Virtual {
            if let Some(t) = self.targets.iter().find(|t| !matches!(t.spec.base(), TargetSpec::Sim(_))) {
                return Err(PlanError(format!(
                    "--clock virtual needs emulated targets (sim:...), but '{}' is not one",
                    t.name
                )));
            }
        }
        Ok(())
    }

    /// Checks the plan against the targets' sizes and sector sizes (indexed like [`Plan::targets`]) and returns
    /// each worker's region in each of its targets.
    pub fn bind(&self, geometry: &[TargetGeometry]) -> Result<Vec<Vec<Region>>, PlanError> {
        let fmt = iolab_spec::units::format_size;
        let mut out = Vec::new();
        for w in &self.workers {
            let mut regions = Vec::new();
            for &ti in &w.targets {
                let g = geometry[ti];
                let t = &self.targets[ti];
                let blk = g.block_bytes.max(1) as u64;
                if w.region_offset >= g.size_bytes {
                    return Err(PlanError(format!(
                        "worker '{}': 'offset' {} is beyond the end of target '{}' ({})",
                        w.name,
                        fmt(w.region_offset),
                        t.name,
                        fmt(g.size_bytes)
                    )));
                }
                let rest = g.size_bytes - w.region_offset;
                let length = w.region_length.unwrap_or(t.footprint.map_or(rest, |f| f.min(rest)));
                if w.region_offset + length > g.size_bytes {
                    return Err(PlanError(format!(
                        "worker '{}': region {}+{} ('offset'/'length') runs past the end of target '{}' ({})",
                        w.name,
                        fmt(w.region_offset),
                        fmt(length),
                        t.name,
                        fmt(g.size_bytes)
                    )));
                }
                if w.region_offset % blk != 0 {
                    return Err(PlanError(format!(
                        "worker '{}': 'offset' {} is not a multiple of the {}-byte sectors of target '{}'",
                        w.name, w.region_offset, blk, t.name
                    )));
                }
                for s in &w.specs {
                    for b in &s.bs {
                        if b.size_bytes > length {
                            return Err(PlanError(format!(
                                "block size {} ('bs') is larger than target '{}' ({}{})",
                                fmt(b.size_bytes),
                                t.name,
                                fmt(length),
                                if w.region_length.is_some() || w.region_offset > 0 {
                                    " in this worker's region"
                                } else {
                                    ""
                                }
                            )));
                        }
                        if b.size_bytes % blk != 0 {
                            return Err(PlanError(format!(
                                "block size {} ('bs') is not a multiple of the {blk}-byte logical block size of target '{}'{}",
                                fmt(b.size_bytes),
                                t.name,
                                if self.direct { " (needed for direct I/O; --buffered lifts this)" } else { "" }
                            )));
                        }
                    }
                    if let Some(a) = s.align {
                        if a % blk != 0 {
                            return Err(PlanError(format!(
                                "'align' {a} is not a multiple of the {blk}-byte logical block size of target '{}'",
                                t.name
                            )));
                        }
                    }
                    if s.seq_skip.unsigned_abs() % blk != 0 {
                        return Err(PlanError(format!(
                            "'seq_skip' {} is not a multiple of the {blk}-byte logical block size of target '{}'",
                            s.seq_skip, t.name
                        )));
                    }
                    sequence_fits(&w.name, s, length, &t.name)?;
                }
                regions.push(Region { offset: w.region_offset, length });
            }
            out.push(regions);
        }
        Ok(out)
    }

    /// Total requested depth: the sum of the workers' qd, or the depth asked for when the engine runs less.
    pub fn requested_depth(&self) -> u32 {
        self.asked_depth.unwrap_or_else(|| self.workers.iter().map(|w| w.qd).sum())
    }

    /// Lowers every worker's queue depth to 1 (the sync engine runs one I/O at a time per worker), keeping
    /// the depth asked for as [`Plan::requested_depth`].
    pub fn run_one_at_a_time(&mut self) {
        self.asked_depth = Some(self.requested_depth());
        for w in &mut self.workers {
            w.qd = 1;
        }
    }

    /// True when any worker runs open loop.
    pub fn open_loop(&self) -> bool {
        self.workers.iter().any(|w| w.rate_iops.is_some())
    }
}

/// (target, its `[targets]` name, its declared size, its footprint) of one worker.
type WorkerTarget = (TargetSpec, Option<String>, Option<u64>, Option<u64>);

/// The worker tables a job's workers come from: none for a `[users]` job, else its tables or the default one.
fn worker_tables<'a>(
    job: &'a JobSpec,
    default_table: &'a iolab_spec::WorkerSpec,
) -> Vec<&'a iolab_spec::WorkerSpec> {
    if job.loadgen.is_some() {
        Vec::new()
    } else if job.worker_tables.is_empty() {
        vec![default_table]
    } else {
        job.worker_tables.iter().collect()
    }
}

/// An open-loop rate as the job gives it: IOPS, or a bandwidth that becomes IOPS at a worker's mean I/O size.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Offered {
    Iops(f64),
    BytesPerSec(f64),
}

impl Offered {
    /// The rate `layer` sets, in whichever unit.
    fn of(layer: &Layer) -> Option<Offered> {
        layer.rate.map(Offered::Iops).or(layer.rate_bytes.map(Offered::BytesPerSec))
    }

    fn divided(self, n: u64) -> Offered {
        let n = n.max(1) as f64;
        match self {
            Offered::Iops(r) => Offered::Iops(r / n),
            Offered::BytesPerSec(b) => Offered::BytesPerSec(b / n),
        }
    }

    /// In IOPS, for a worker whose I/Os are `mean_bytes` long on average.
    fn iops(self, mean_bytes: f64) -> f64 {
        match self {
            Offered::Iops(r) => r,
            Offered::BytesPerSec(b) => b / mean_bytes.max(1.0),
        }
    }
}

/// The mean size of a worker's I/Os: its access specs' block sizes weighted by their shares.
fn mean_op_bytes(specs: &[AccessPlan]) -> f64 {
    let total: f64 = specs.iter().map(|s| s.weight as f64).sum();
    specs
        .iter()
        .map(|s| {
            let bs_total: f64 = s.bs.iter().map(|b| b.weight as f64).sum();
            let mean: f64 =
                s.bs.iter().map(|b| b.size_bytes as f64 * b.weight as f64).sum::<f64>() / bs_total.max(1.0);
            mean * s.weight as f64 / total.max(1.0)
        })
        .sum()
}

/// How the open-loop rate is split: each worker table's own, or a share of the top-level (or forced) one.
struct RateSplit {
    /// The rate shared by the workers without their own.
    shared: Option<Offered>,
    /// Workers sharing it.
    sharing: u64,
}

impl RateSplit {
    /// The split over `tables`, once their worker count is known to be within [`iolab_spec::MAX_WORKERS`].
    fn new(job: &JobSpec, tables: &[&iolab_spec::WorkerSpec]) -> Result<RateSplit, PlanError> {
        let total_workers: u64 = tables.iter().map(|t| t.count as u64).sum();
        if total_workers > iolab_spec::MAX_WORKERS as u64 {
            return Err(PlanError(format!(
                "{total_workers} workers in all; at most {} ('workers' / 'count')",
                iolab_spec::MAX_WORKERS
            )));
        }
        let forced = Offered::of(&job.forced);
        let own_rate_workers: u64 = if forced.is_some() {
            0
        } else {
            tables.iter().filter(|t| Offered::of(&t.layer).is_some()).map(|t| t.count as u64).sum()
        };
        Ok(RateSplit {
            shared: forced.or(Offered::of(&job.defaults)),
            sharing: total_workers - own_rate_workers,
        })
    }

    /// The open-loop rate of each worker of `table`: its own, unless forced, else its part of the shared one.
    fn of_table(&self, job: &JobSpec, table: &iolab_spec::WorkerSpec) -> Option<Offered> {
        match (Offered::of(&job.forced), Offered::of(&table.layer)) {
            (None, Some(own)) => Some(own),
            _ => self.shared.map(|r| r.divided(self.sharing)),
        }
    }
}

/// One worker's targets, `@NAME` resolved through `[targets]`, else the default target.
fn worker_targets(
    job: &JobSpec,
    base: &Layer,
    name: &str,
    default_target: Option<&TargetSpec>,
) -> Result<Vec<WorkerTarget>, PlanError> {
    let Some(t) = &base.target else {
        return match default_target {
            Some(t) => Ok(vec![(t.clone(), None, None, None)]),
            None => Err(PlanError(format!(
                "worker '{name}' has no target; give --target PATH (or 'target' in the job file)"
            ))),
        };
    };
    let mut v = Vec::new();
    for spec in t {
        v.push(match spec {
            TargetSpec::Named { name: tn } => match job.targets.get(tn) {
                Some(NamedTarget { spec: Some(s), size, footprint }) => {
                    (s.clone(), Some(tn.clone()), *size, *footprint)
                }
                Some(NamedTarget { spec: None, .. }) => {
                    return Err(PlanError(format!(
                        "worker '{name}' uses target '@{tn}', which has no path; give --target {tn}=PATH"
                    )))
                }
                None => {
                    return Err(PlanError(format!(
                        "worker '{name}' uses target '@{tn}', which [targets] does not declare"
                    )))
                }
            },
            other => (other.clone(), None, None, None),
        });
    }
    Ok(v)
}

/// One worker's access specs (the table's, else the job's, else one default), of which one must have weight.
fn access_plans(
    job: &JobSpec,
    table: &iolab_spec::WorkerSpec,
    base: &Layer,
    name: &str,
    direct: bool,
) -> Result<Vec<AccessPlan>, PlanError> {
    let spec_layers: Vec<Layer> = if !table.specs.is_empty() {
        table.specs.clone()
    } else if !job.specs.is_empty() {
        job.specs.clone()
    } else {
        vec![Layer::default()]
    };
    let mut specs = Vec::new();
    for sl in &spec_layers {
        specs.push(access_plan(job, table, base, sl, direct)?);
    }
    if specs.iter().all(|s| s.weight == 0) {
        return Err(PlanError(format!("worker '{name}': every access spec has weight 0")));
    }
    Ok(specs)
}

/// A worker's `band`, checked: every I/O fits in a band, and the band walk is the only thing that moves the
/// worker's offsets (no skips, random runs, trim-write pairs or block sequences beside it).
fn band_of(
    name: &str,
    band: Option<Band>,
    specs: &[AccessPlan],
    max_bs: u64,
) -> Result<Option<Band>, PlanError> {
    let Some(b) = band else { return Ok(None) };
    let fmt = iolab_spec::units::format_size;
    if b.size < max_bs {
        return Err(PlanError(format!(
            "worker '{name}': 'band' {} is smaller than its largest I/O ({}); a band must hold one",
            fmt(b.size),
            fmt(max_bs)
        )));
    }
    for s in specs {
        let other = if s.seq_skip != 0 {
            Some("seq_skip")
        } else if s.random_run > 1 {
            Some("random_run")
        } else if s.trim_then_write {
            Some("trim_then_write")
        } else if matches!(s.dist, Dist::Sequence { .. } | Dist::Sprandom { .. }) {
            Some("dist")
        } else {
            None
        };
        if let Some(key) = other {
            return Err(PlanError(format!(
                "worker '{name}': 'band' and '{key}' both move the worker's offsets; give one of them"
            )));
        }
    }
    Ok(Some(b))
}

/// `dist = "sprandom:..."` is fio's preconditioning: the worker's one access spec is random writes of one
/// size, to one target (fio: random writes, one file).
fn sprandom_fits(name: &str, specs: &[AccessPlan], targets: usize) -> Result<(), PlanError> {
    let spr = |s: &AccessPlan| matches!(s.dist, Dist::Sprandom { .. });
    if !specs.iter().any(spr) {
        return Ok(());
    }
    let plain = |s: &AccessPlan| {
        s.read_pct == 0.0
            && s.random_pct == 100.0
            && s.trim_pct == 0.0
            && s.bs.len() == 1
            && !s.trim_then_write
    };
    if specs.len() == 1 && plain(&specs[0]) && targets == 1 {
        return Ok(());
    }
    Err(PlanError(format!(
        "worker '{name}': 'dist = sprandom:...' writes one pass of random writes: it needs one access spec of \
         random writes ('rw = randwrite') of one block size, to one target"
    )))
}

/// Every block of a `sequence` distribution lies in the region (`length` bytes), for each block size.
fn sequence_fits(worker: &str, s: &AccessPlan, length: u64, target: &str) -> Result<(), PlanError> {
    let Dist::Sequence { blocks, .. } = &s.dist else { return Ok(()) };
    let Some(&top) = blocks.iter().max() else { return Ok(()) };
    for b in &s.bs {
        let align = s.align.unwrap_or(b.size_bytes).max(1);
        let slots = length.saturating_sub(b.size_bytes) / align + 1;
        if top >= slots {
            return Err(PlanError(format!(
                "worker '{worker}': block {top} of 'dist = sequence:...' is past the end of its region in target \
                 '{target}' ({slots} blocks of {})",
                iolab_spec::units::format_size(align)
            )));
        }
    }
    Ok(())
}

/// True for 1 (what serde skips).
fn is_one_u32(v: &u32) -> bool {
    *v == 1
}

/// True for 0 (what serde skips).
fn is_zero_u64(v: &u64) -> bool {
    *v == 0
}

/// True for 0 (what serde skips).
fn is_zero_i64(v: &i64) -> bool {
    *v == 0
}

fn is_one(v: &u32) -> bool {
    *v == 1
}

fn is_zero(v: &f64) -> bool {
    *v == 0.0
}

/// One access spec: the read and random shares from the most specific layer, block sizes fit for direct I/O.
fn access_plan(
    job: &JobSpec,
    table: &iolab_spec::WorkerSpec,
    base: &Layer,
    sl: &Layer,
    direct: bool,
) -> Result<AccessPlan, PlanError> {
    let chain: [&Layer; 4] = [&job.forced, sl, &table.layer, &job.defaults];
    let merged = base.merged(sl).merged(&job.forced);
    let read_pct = resolve_pct(&chain, |l| l.read_pct, |(r, _)| r, 100.0);
    let random_pct = resolve_pct(&chain, |l| l.random_pct, |(_, r)| r, 100.0);
    let trim_pct = merged.trim_pct.unwrap_or(0.0);
    let trim_then_write = merged.trim_then_write.unwrap_or(false);
    if trim_then_write && (trim_pct != 50.0 || read_pct != 0.0) {
        return Err(PlanError(format!(
            "'trim_then_write' pairs each trim with a write: it needs trim_pct = 50 and read_pct = 0 (here {trim_pct} and {read_pct})"
        )));
    }
    let bs = merged
        .bs
        .clone()
        .map(|b| b.0)
        .unwrap_or_else(|| vec![BlockSizeWeight { size_bytes: DEFAULT_BS, weight: 1 }]);
    if direct && bs.iter().any(|b| b.size_bytes % 512 != 0) {
        return Err(PlanError(format!(
            "block size '{}' ('bs') is not a multiple of 512 bytes, which direct I/O needs; use a multiple of the device's sector size, or --buffered",
            iolab_spec::BlockSizes(bs.clone()).to_text()
        )));
    }
    Ok(AccessPlan {
        weight: merged.weight.unwrap_or(1),
        bs,
        read_pct,
        random_pct,
        trim_pct,
        align: merged.align,
        seq_skip: merged.seq_skip.unwrap_or(0),
        random_run: merged.random_run.map_or(1, |r| r.0),
        random_run_identical: merged.random_run.is_some_and(|r| r.1 && r.0 > 1),
        trim_then_write,
        dist: merged.dist.clone().unwrap_or(Dist::Uniform),
    })
}

/// Whether one worker's I/O buffers (two of its largest block size per slot) fit the per-worker limit.
fn check_worker_buffers(name: &str, qd: u32, max_bs: u64) -> Result<(), PlanError> {
    let buffer_bytes = 2 * qd as u64 * max_bs;
    if buffer_bytes > MAX_BUFFER_BYTES_PER_WORKER {
        return Err(PlanError(format!(
            "worker '{name}': qd {qd} x block size {} needs {} of I/O buffers; at most {} per worker (lower 'qd' or 'bs')",
            iolab_spec::units::format_size(max_bs),
            iolab_spec::units::format_size(buffer_bytes),
            iolab_spec::units::format_size(MAX_BUFFER_BYTES_PER_WORKER)
        )));
    }
    Ok(())
}

/// A fresh seed: from the OS entropy pool via std's randomly-keyed hasher, mixed with the time and pid.
pub fn fresh_seed() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0),
    );
    h.write_u32(std::process::id());
    h.finish() % 1_000_000_000_000 // short enough to type back
}

#[cfg(test)]
mod tests;
