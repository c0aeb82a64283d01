//! The job model: what one run asked for, in layers.
//!
//! A job has run-level settings (duration, ramp, seed, engine, ...), a default [`Layer`] of worker and
//! access-spec settings, optional default access specs (`[[spec]]`), and optional worker tables
//! (`[worker.NAME]`, each with its own layer and specs). Command-line flags form a *forced* layer that
//! wins over every table, so `iolab run job.toml --qd 16` runs every worker at depth 16.
//!
//! Every key has one name everywhere: `--read-pct` on the command line is `read_pct` in TOML and JSON.
//! [`Layer::set`] and [`JobSpec::set_run`] are the single parser per key, used by the TOML reader and the
//! CLI alike, so the two cannot disagree.

use crate::cache::{CacheMode, CachePolicy, CacheSize, CacheSpec};
use crate::consent::{Consent, CONSENT_KEYS};
use crate::error::{suggest, Place, SpecError};
use crate::exchange::ExchangeSpec;
use crate::loadgen::LoadgenSpec;
use crate::profile::ProfileMeta;
use crate::target::{is_target_name, TargetSpec};
use crate::throttle::ThrottleSpec;
use crate::units::{
    parse_count, parse_duration_ns, parse_percent, parse_size, Arrival, BlockSizes, Dist, MAX_PHASES,
    MAX_WORKERS, MAX_WORKER_TABLES,
};
use crate::verdict::VerdictSpec;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Keys valid only at the top level of a job file.
pub const RUN_KEYS: &[&str] = &[
    "name",
    "duration",
    "ramp",
    "ios",
    "bytes",
    "seed",
    "engine",
    "direct",
    "prealloc",
    "clock",
    "workers",
    "cache",
    "cache_dev",
    "cache_line",
    "cache_mode",
    "cache_policy",
    "cache_admit",
    "cache_seq_cutoff",
    "cache_max_mem",
    "cache_shrink",
    "cache_dirty_max",
    "throttle",
    "verify",
    "verify_fail",
    "journal",
    "inject",
    "stop_on_error",
    "trace",
];
/// Keys of one worker (valid at the top level as defaults, and in `[worker.NAME]`).
pub const WORKER_KEYS: &[&str] = &[
    "target",
    "size",
    "offset",
    "length",
    "qd",
    "rate",
    "arrival",
    "think",
    "burst",
    "data",
    "fsync",
    "fdatasync",
    "sync",
];
/// Tables valid at the top level of a job file.
pub const TABLE_KEYS: &[&str] =
    &["spec", "worker", "targets", "profile", "exchange", "verdict", "users", "transaction", "phase"];
/// Keys of one access spec (valid at the top level, in `[worker.NAME]` and in `[[spec]]` tables).
pub const SPEC_KEYS: &[&str] = &["bs", "rw", "read_pct", "random_pct", "trim_pct", "align", "dist", "weight"];

/// Largest queue depth per worker (io_uring ring entries are sized from it).
pub const MAX_QD: u32 = 4096;
/// Fio-style read/write pattern shorthand; sets `read_pct` and `random_pct` unless those are given.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Rw {
    /// Sequential reads.
    Read,
    /// Sequential writes.
    Write,
    /// Random reads.
    Randread,
    /// Random writes.
    Randwrite,
    /// Sequential mixed (50% reads unless `read_pct` says otherwise).
    Rw,
    /// Random mixed (50% reads unless `read_pct` says otherwise).
    Randrw,
}

impl Rw {
    /// (read %, random %) implied by the pattern.
    pub fn implied(self) -> (f64, f64) {
        match self {
            Rw::Read => (100.0, 0.0),
            Rw::Write => (0.0, 0.0),
            Rw::Randread => (100.0, 100.0),
            Rw::Randwrite => (0.0, 100.0),
            Rw::Rw => (50.0, 0.0),
            Rw::Randrw => (50.0, 100.0),
        }
    }
}

/// What written blocks contain.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, Default)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum DataPattern {
    /// Incompressible pseudo-random bytes, altered per write so no two writes are identical.
    #[default]
    Random,
    /// All zeros.
    Zero,
    /// `pct` percent of each 4 KiB chunk is zeros, the rest random (fio's buffer_compress_percentage).
    Compressible {
        /// Compressible share, 0..=100.
        pct: u8,
    },
}

/// Which I/O engine runs file and device targets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum EngineKind {
    /// io_uring where the kernel allows, else sync with a one-line notice.
    #[default]
    Auto,
    /// io_uring, or an error if unavailable.
    IoUring,
    /// pread/pwrite, one I/O at a time per worker.
    Sync,
}

/// How iolab lays out a file it creates (or the part it adds to a file it extends): the `prealloc` key,
/// `--prealloc` flag. fio's `fallocate=` option, plus whether the bytes are written before the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Prealloc {
    /// Reserve the whole size in one `fallocate(2)` call (contiguous where the file system can), then write
    /// data over it, so reads never hit holes or unwritten extents. The default (fio: `fallocate=native`
    /// and its layout writes).
    #[default]
    Fallocate,
    /// No reservation: the data is written sequentially, 1 MiB at a time, and the file system allocates as
    /// the writes come (fio: `fallocate=none` with its layout writes).
    Write,
    /// Nothing allocated or written: the file is created empty (a smaller one left as it is), and the run's own
    /// writes grow and allocate it, as appending writers do: the fragmenting case (fio: `fallocate=none` on a
    /// write job, which fio does not lay out). Reads of what the run has not written yet are short (past the
    /// end of the file) or hit holes.
    None,
}

impl Prealloc {
    /// The key's value, as typed: `fallocate`, `write` or `none`.
    pub fn as_str(self) -> &'static str {
        match self {
            Prealloc::Fallocate => "fallocate",
            Prealloc::Write => "write",
            Prealloc::None => "none",
        }
    }
}

/// Which clock runs the workers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum ClockKind {
    /// The monotonic clock.
    #[default]
    Real,
    /// Virtual time: only for emulated (`sim:`) targets; time jumps from event to event, so runs are
    /// deterministic and take no wall time. For tests and what-if runs.
    Virtual,
}

/// Worker and access-spec settings; every field optional so layers can be merged (later wins).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Layer {
    /// Targets of the worker.
    pub target: Option<Vec<TargetSpec>>,
    /// Size of files to create (and of the region, when no `length`).
    pub size: Option<u64>,
    /// Start of the worker's region in each target.
    pub offset: Option<u64>,
    /// Length of the worker's region (default: to the end of the target).
    pub length: Option<u64>,
    /// Outstanding I/Os per worker.
    pub qd: Option<u32>,
    /// Open-loop rate in IOPS (at the top level: total, split over workers; in a worker table: that worker's).
    pub rate: Option<f64>,
    /// Open-loop rate as a bandwidth, bytes per second (`rate = "100MB/s"`), split as `rate` is; the plan turns
    /// it into IOPS at the worker's mean I/O size. At most one of `rate` and `rate_bytes` is set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_bytes: Option<f64>,
    /// Inter-arrival law in open loop.
    pub arrival: Option<Arrival>,
    /// Think time in closed loop: after each burst of `burst` I/Os, the worker waits for them to complete,
    /// then idles this long before the next burst (fio's `thinktime`, Iometer's transfer delay).
    pub think: Option<u64>,
    /// I/Os per burst between think times (fio's `thinktime_blocks`, Iometer's burst length); default 1.
    pub burst: Option<u32>,
    /// Written data.
    pub data: Option<DataPattern>,
    /// Flush (fsync) after every this many writes; 0: never.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fsync: Option<u32>,
    /// Flush (fdatasync: data, and only the metadata needed to read it) after every this many writes; 0: never.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fdatasync: Option<u32>,
    /// Whether each write is durable when it completes (O_DSYNC, O_SYNC).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync: Option<crate::WriteSync>,
    /// Block sizes.
    pub bs: Option<BlockSizes>,
    /// Pattern shorthand.
    pub rw: Option<Rw>,
    /// Share of reads, percent.
    pub read_pct: Option<f64>,
    /// Share of random (vs sequential) offsets, percent.
    pub random_pct: Option<f64>,
    /// Share of ops that are trims (discards), percent; the rest are reads and writes by `read_pct`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trim_pct: Option<f64>,
    /// Offset alignment of random I/O (default: the I/O's own size).
    pub align: Option<u64>,
    /// Spread of random offsets.
    pub dist: Option<Dist>,
    /// Relative weight of an access spec among the worker's specs.
    pub weight: Option<u32>,
}

fn range_u32(place: &Place, text: &str, lo: u32, hi: u32, what: &str) -> Result<u32, SpecError> {
    let expected = || format!("{what} from {lo} to {hi}");
    let v: i64 = text.trim().parse().map_err(|_| SpecError::invalid(place, text, expected()))?;
    if v < lo as i64 || v > hi as i64 {
        return Err(SpecError::invalid(place, text, expected()));
    }
    Ok(v as u32)
}

/// Sets one `cache*` key. Returns `Ok(false)` for an unknown key.
fn set_cache(c: &mut CacheSpec, key: &str, text: &str, place: &Place) -> Result<bool, SpecError> {
    let bad = |what: &str| SpecError::invalid(place, text, what.to_string());
    match key {
        "cache" => {
            let t = text.trim();
            c.size = Some(if t.ends_with('%') {
                let p = parse_percent(t).map_err(|e| SpecError::invalid(place, text, e))?;
                CacheSize::Percent(p)
            } else if t == "0" || t == "off" || t == "none" {
                CacheSize::Bytes(0)
            } else {
                CacheSize::Bytes(
                    parse_size(t)
                        .map_err(|_| bad("a size ('8G'), a percentage of the targets ('25%'), or 0"))?,
                )
            })
        }
        "cache_dev" => {
            let t = TargetSpec::parse(text).map_err(|e| SpecError::invalid(place, text, e))?;
            if !matches!(t, TargetSpec::Mem { .. } | TargetSpec::Sim(_) | TargetSpec::Path { .. }) {
                return Err(bad("'mem:SIZE' (RAM), an emulated device ('sim:ssd'), or a file or block device (real targets only)"));
            }
            c.dev = Some(t)
        }
        "cache_line" => {
            let v = positive_size(place, text)?;
            if !v.is_power_of_two() || !(512..=(1 << 20)).contains(&v) {
                return Err(bad("a power of two from 512 to 1M, e.g. '4K'"));
            }
            c.line_bytes = Some(v)
        }
        "cache_mode" => {
            c.mode = Some(match text.trim() {
                "write-through" | "wt" => CacheMode::WriteThrough,
                "write-around" | "wa" => CacheMode::WriteAround,
                "write-back" | "wb" => CacheMode::WriteBack,
                "read-only" | "ro" => CacheMode::ReadOnly,
                _ => return Err(bad("'write-through', 'write-around', 'write-back' or 'read-only'")),
            })
        }
        "cache_policy" => {
            c.policy = Some(match text.trim() {
                "lru" => CachePolicy::Lru,
                "arc" => CachePolicy::Arc,
                "s3-fifo" | "s3fifo" => CachePolicy::S3Fifo,
                "s3-fifo-1bit" => CachePolicy::S3Fifo1Bit,
                _ => return Err(bad("'lru', 'arc', 's3-fifo' or 's3-fifo-1bit'")),
            })
        }
        "cache_admit" => c.admit_after = Some(range_u32(place, text, 1, 255, "a number of misses")?),
        "cache_seq_cutoff" => {
            c.seq_cutoff_bytes = Some(parse_size(text).map_err(|e| SpecError::invalid(place, text, e))?)
        }
        "cache_max_mem" => c.max_mem_bytes = Some(positive_size(place, text)?),
        "cache_shrink" => c.shrink = Some(parse_bool(place, text)?),
        "cache_dirty_max" => {
            let p = parse_percent(text).map_err(|e| SpecError::invalid(place, text, e))?;
            if p <= 0.0 {
                return Err(bad("a percentage above 0, e.g. '50%'"));
            }
            c.dirty_max_pct = Some(p)
        }
        _ => return Ok(false),
    }
    Ok(true)
}

fn positive_size(place: &Place, text: &str) -> Result<u64, SpecError> {
    let v = parse_size(text).map_err(|e| SpecError::invalid(place, text, e))?;
    if v == 0 {
        return Err(SpecError::invalid(place, text, "a size above 0, e.g. '8G'"));
    }
    Ok(v)
}

fn parse_bool(place: &Place, text: &str) -> Result<bool, SpecError> {
    match text.trim() {
        "true" | "yes" | "1" | "on" => Ok(true),
        "false" | "no" | "0" | "off" => Ok(false),
        _ => Err(SpecError::invalid(place, text, "true or false")),
    }
}

impl Layer {
    /// Sets one worker or spec key from its text. `place` names where the text came from (for errors).
    /// Returns `Ok(false)` when `key` is not a layer key.
    pub fn set(&mut self, key: &str, text: &str, place: &Place) -> Result<bool, SpecError> {
        match key {
            "target" => {
                let t = TargetSpec::parse(text).map_err(|e| SpecError::invalid(place, text, e))?;
                self.target.get_or_insert_with(Vec::new).push(t);
            }
            "size" => self.size = Some(positive_size(place, text)?),
            "offset" => self.offset = Some(parse_size(text).map_err(|e| SpecError::invalid(place, text, e))?),
            "length" => self.length = Some(positive_size(place, text)?),
            "qd" => self.qd = Some(range_u32(place, text, 1, MAX_QD, "a whole number")?),
            "rate" if text.trim().ends_with("/s") => {
                let bytes = crate::units::parse_bandwidth(text)
                    .expect("ends with /s")
                    .map_err(|e| SpecError::invalid(place, text, e))?;
                if bytes > 1e12 {
                    return Err(SpecError::invalid(place, text, "a bandwidth of at most 1TB/s"));
                }
                (self.rate, self.rate_bytes) = (None, Some(bytes));
            }
            "rate" => {
                let v = parse_count(text).map_err(|e| SpecError::invalid(place, text, e))?;
                if v <= 0.0 || v > 1e9 {
                    return Err(SpecError::invalid(
                        place,
                        text,
                        "an I/O rate above 0 and at most 1G IOPS, e.g. '5000' or '10k'",
                    ));
                }
                (self.rate, self.rate_bytes) = (Some(v), None);
            }
            "think" => {
                let ns = parse_duration_ns(text).map_err(|e| SpecError::invalid(place, text, e))?;
                if ns == 0 || ns > 3_600_000_000_000 {
                    return Err(SpecError::invalid(
                        place,
                        text,
                        "a think time above 0 and at most 1h, e.g. '10ms'",
                    ));
                }
                self.think = Some(ns);
            }
            "burst" => self.burst = Some(range_u32(place, text, 1, 1 << 20, "a whole number of I/Os")?),
            "arrival" => {
                self.arrival = Some(match text.trim() {
                    "fixed" | "uniform" => Arrival::Fixed,
                    "poisson" | "exponential" => Arrival::Poisson,
                    _ => return Err(SpecError::invalid(place, text, "'fixed' or 'poisson'")),
                })
            }
            "data" => {
                let t = text.trim();
                self.data = Some(match t {
                    "random" => DataPattern::Random,
                    "zero" | "zeros" => DataPattern::Zero,
                    _ => match t.strip_prefix("compress:").map(parse_percent) {
                        Some(Ok(p)) => DataPattern::Compressible { pct: p.round() as u8 },
                        _ => {
                            return Err(SpecError::invalid(
                                place,
                                text,
                                "'random', 'zero' or 'compress:PCT' (e.g. compress:50)",
                            ))
                        }
                    },
                })
            }
            "bs" => self.bs = Some(BlockSizes::parse(text).map_err(|e| SpecError::invalid(place, text, e))?),
            "rw" => {
                self.rw = Some(match text.trim() {
                    "read" => Rw::Read,
                    "write" => Rw::Write,
                    "randread" => Rw::Randread,
                    "randwrite" => Rw::Randwrite,
                    "rw" | "readwrite" => Rw::Rw,
                    "randrw" => Rw::Randrw,
                    _ => {
                        return Err(SpecError::invalid(
                            place,
                            text,
                            "one of read, write, randread, randwrite, rw, randrw",
                        ))
                    }
                })
            }
            "read_pct" => {
                self.read_pct = Some(parse_percent(text).map_err(|e| SpecError::invalid(place, text, e))?)
            }
            "random_pct" => {
                self.random_pct = Some(parse_percent(text).map_err(|e| SpecError::invalid(place, text, e))?)
            }
            "trim_pct" | "fsync" | "fdatasync" | "sync" => self.set_durability(key, text, place)?,
            "align" => self.align = Some(positive_size(place, text)?),
            "dist" => self.dist = Some(Dist::parse(text).map_err(|e| SpecError::invalid(place, text, e))?),
            "weight" => self.weight = Some(range_u32(place, text, 0, 1_000_000, "a whole number")?),
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Sets one of the durability keys ([`crate::durability`]): `fsync`, `fdatasync`, `sync`, `trim_pct`.
    fn set_durability(&mut self, key: &str, text: &str, place: &Place) -> Result<(), SpecError> {
        match key {
            "trim_pct" => {
                self.trim_pct = Some(parse_percent(text).map_err(|e| SpecError::invalid(place, text, e))?)
            }
            "fsync" => self.fsync = Some(crate::durability::parse_flush_every(place, text)?),
            "fdatasync" => self.fdatasync = Some(crate::durability::parse_flush_every(place, text)?),
            _ => self.sync = Some(crate::WriteSync::parse(place, text)?),
        }
        Ok(())
    }

    /// `self` with every field that `over` sets replaced by `over`'s value.
    pub fn merged(&self, over: &Layer) -> Layer {
        macro_rules! pick {
            ($($f:ident),*) => { Layer { $($f: over.$f.clone().or_else(|| self.$f.clone())),* } };
        }
        let mut merged = pick!(
            target, size, offset, length, qd, rate, rate_bytes, arrival, think, burst, data, fsync,
            fdatasync, sync, bs, rw, read_pct, random_pct, trim_pct, align, dist, weight
        );
        // A rate is one setting in one of two units: the layer that sets it sets both.
        if over.rate.is_some() || over.rate_bytes.is_some() {
            (merged.rate, merged.rate_bytes) = (over.rate, over.rate_bytes);
        }
        merged
    }

    /// True when no field is set.
    pub fn is_empty(&self) -> bool {
        *self == Layer::default()
    }
}

/// A named worker table: `count` identical workers with their own settings and access specs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WorkerSpec {
    /// The table name (`db` in `[worker.db]`).
    pub name: String,
    /// How many identical workers this table makes.
    pub count: u32,
    /// The worker's settings.
    pub layer: Layer,
    /// The worker's access specs (`[[worker.NAME.spec]]`); empty = one spec from the layers.
    pub specs: Vec<Layer>,
}

/// What one run asked for.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct JobSpec {
    /// The job file, if any.
    pub file: Option<String>,
    /// A name for the job.
    pub name: Option<String>,
    /// Measured time (after the ramp).
    pub duration_ns: Option<u64>,
    /// Warm-up time excluded from every statistic.
    pub ramp_ns: Option<u64>,
    /// Stop after this many I/Os in all (instead of a duration).
    pub ios: Option<u64>,
    /// Stop after this many bytes in all (instead of a duration).
    pub bytes: Option<u64>,
    /// Seed of every random choice.
    pub seed: Option<u64>,
    /// Engine for file and device targets.
    pub engine: Option<EngineKind>,
    /// O_DIRECT (true, the default) or the page cache.
    pub direct: Option<bool>,
    /// How a created file is laid out (`prealloc`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prealloc: Option<Prealloc>,
    /// Real or virtual time.
    pub clock: Option<ClockKind>,
    /// Number of identical default workers (only without worker tables).
    pub workers: Option<u32>,
    /// What the user consented to on the command line (`--allow-write-device`, `--destroy-data`,
    /// `--overwrite`). Never read from a job file, a profile or an import, and never serialised: a job that
    /// travels (a dry run, the ranks of a run over several hosts) carries no consent, each process takes its
    /// own from its own command line.
    #[serde(skip)]
    pub consent: Consent,
    /// The block cache in front of the targets (`cache`, `cache_*` keys).
    #[serde(default)]
    pub cache: CacheSpec,
    /// Kernel I/O throttling of block-device targets (`throttle`: cgroup blkio or io.max).
    pub throttle: Option<ThrottleSpec>,
    /// Data verification and fault injection (`verify`, `verify_fail`, `journal`, `inject`, `stop_on_error`).
    #[serde(default)]
    pub integrity: IntegritySpec,
    /// Top-level worker/spec settings (defaults for every worker).
    pub defaults: Layer,
    /// Top-level `[[spec]]` tables (default specs for workers that have none).
    pub specs: Vec<Layer>,
    /// `[worker.NAME]` tables, in file order.
    pub worker_tables: Vec<WorkerSpec>,
    /// Settings forced on every worker and spec (from command-line flags).
    pub forced: Layer,
    /// Named targets (`[targets]`), referenced by workers as `target = "@NAME"`.
    pub targets: BTreeMap<String, NamedTarget>,
    /// `[profile]`: what the job is for, its sources and expected behaviour.
    pub profile: Option<ProfileMeta>,
    /// `[exchange]`: Exchange sizing (mailboxes, IOPS per mailbox) that sets target sizes and rates.
    pub exchange: Option<ExchangeSpec>,
    /// `[verdict]`: pass/fail thresholds.
    pub verdict: Option<VerdictSpec>,
    /// `[users]` and `[[transaction]]`: LoadGen-style users issuing transactions.
    pub loadgen: Option<LoadgenSpec>,
    /// `[[phase]]` tables: phases run one after another, each with its own workers and result
    /// ([`crate::phase`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub phases: Vec<PhaseSpec>,
    /// Record every I/O of the run into this file, iolab's binary trace format (`trace`, `--trace`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<String>,
}

/// What to do when verification finds a bad block.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VerifyFail {
    /// Stop the run at the first mismatch (the default).
    #[default]
    Stop,
    /// Count every mismatch and go on.
    Continue,
}

/// Data verification and fault injection.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct IntegritySpec {
    /// Stamp a header into every written block and check every block read (`verify`).
    pub verify: Option<bool>,
    /// Stop or continue at a mismatch (`verify_fail`).
    pub verify_fail: Option<VerifyFail>,
    /// Keep acknowledged write generations in this file (`journal`); implies `verify`.
    pub journal: Option<String>,
    /// Faults to inject (`inject`, repeatable).
    pub inject: Vec<crate::inject::InjectSpec>,
    /// End the run at the first I/O error (`stop_on_error`); by default errors are counted and the run goes on.
    pub stop_on_error: Option<bool>,
}

impl IntegritySpec {
    /// Verification is on (`verify` or a journal).
    pub fn verifying(&self) -> bool {
        self.verify.unwrap_or(false) || self.journal.is_some()
    }
    /// Command-line values replace the job file's; `inject` given on the command line replaces the file's list.
    pub fn apply_overrides(&mut self, cli: &IntegritySpec) {
        if cli.verify.is_some() {
            self.verify = cli.verify;
        }
        if cli.verify_fail.is_some() {
            self.verify_fail = cli.verify_fail;
        }
        if cli.journal.is_some() {
            self.journal = cli.journal.clone();
        }
        if !cli.inject.is_empty() {
            self.inject = cli.inject.clone();
        }
        if cli.stop_on_error.is_some() {
            self.stop_on_error = cli.stop_on_error;
        }
    }
}

/// One entry of `[targets]`: `db = "/data/db.edb"`, or `db = { path = "/data/db.edb", size = "200G" }`, or
/// `db = { size = "200G" }` (a scratch file of that size unless the user names one with `--target db=PATH`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct NamedTarget {
    /// The target; `None` until the user (or the cli's scratch default) gives one.
    pub spec: Option<TargetSpec>,
    /// Size of the file to create if missing.
    pub size: Option<u64>,
}

impl JobSpec {
    /// Sets one run-level key from its text. Returns `Ok(false)` when `key` is not a run key.
    pub fn set_run(&mut self, key: &str, text: &str, place: &Place) -> Result<bool, SpecError> {
        match key {
            "name" => self.name = Some(text.to_string()),
            "duration" => {
                let v = parse_duration_ns(text).map_err(|e| SpecError::invalid(place, text, e))?;
                if v == 0 {
                    return Err(SpecError::invalid(place, text, "a duration above 0, e.g. '30s'"));
                }
                self.duration_ns = Some(v)
            }
            "ramp" => {
                self.ramp_ns = Some(parse_duration_ns(text).map_err(|e| SpecError::invalid(place, text, e))?)
            }
            "ios" => {
                let v = parse_count(text).map_err(|e| SpecError::invalid(place, text, e))?;
                if v < 1.0 || v.fract() != 0.0 {
                    return Err(SpecError::invalid(
                        place,
                        text,
                        "a whole number of I/Os, at least 1, e.g. '1M'",
                    ));
                }
                self.ios = Some(v as u64)
            }
            "bytes" => self.bytes = Some(positive_size(place, text)?),
            "seed" => {
                let t = text.trim();
                let v = match t.strip_prefix("0x") {
                    Some(h) => u64::from_str_radix(h, 16).ok(),
                    None => t.parse::<u64>().ok(),
                };
                self.seed =
                    Some(v.ok_or_else(|| SpecError::invalid(place, text, "a whole number from 0 to 2^64-1"))?)
            }
            "engine" => {
                self.engine = Some(match text.trim() {
                    "auto" => EngineKind::Auto,
                    "io_uring" | "uring" => EngineKind::IoUring,
                    "sync" | "psync" => EngineKind::Sync,
                    _ => return Err(SpecError::invalid(place, text, "'auto', 'io_uring' or 'sync'")),
                })
            }
            "direct" => self.direct = Some(parse_bool(place, text)?),
            "prealloc" => {
                self.prealloc = Some(match text.trim() {
                    "fallocate" => Prealloc::Fallocate,
                    "write" => Prealloc::Write,
                    "none" => Prealloc::None,
                    _ => return Err(SpecError::invalid(place, text, "'fallocate', 'write' or 'none'")),
                })
            }
            "clock" => {
                self.clock = Some(match text.trim() {
                    "real" => ClockKind::Real,
                    "virtual" => ClockKind::Virtual,
                    _ => return Err(SpecError::invalid(place, text, "'real' or 'virtual'")),
                })
            }
            "workers" => self.workers = Some(range_u32(place, text, 1, MAX_WORKERS, "a whole number")?),
            k if CONSENT_KEYS.contains(&k) => return Err(Consent::refuse(k, place)),
            "throttle" => {
                self.throttle =
                    Some(ThrottleSpec::parse(text).map_err(|e| SpecError::invalid(place, text, e))?)
            }
            "verify" => self.integrity.verify = Some(parse_bool(place, text)?),
            "verify_fail" => {
                self.integrity.verify_fail = Some(match text.trim() {
                    "stop" => VerifyFail::Stop,
                    "continue" => VerifyFail::Continue,
                    _ => return Err(SpecError::invalid(place, text, "'stop' or 'continue'")),
                })
            }
            "journal" => {
                if text.trim().is_empty() {
                    return Err(SpecError::invalid(place, text, "a file path for the journal"));
                }
                self.integrity.journal = Some(text.to_string())
            }
            "inject" => self.integrity.inject.push(
                crate::inject::InjectSpec::parse(text).map_err(|e| SpecError::invalid(place, text, e))?,
            ),
            "stop_on_error" => self.integrity.stop_on_error = Some(parse_bool(place, text)?),
            "trace" => {
                if text.trim().is_empty() {
                    return Err(SpecError::invalid(place, text, "a file path for the trace"));
                }
                self.trace = Some(text.to_string())
            }
            k if k.starts_with("cache") => return set_cache(&mut self.cache, k, text, place),
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Parses a job file's text; `file` names it in errors.
    pub fn from_toml(text: &str, file: &str) -> Result<JobSpec, SpecError> {
        let table: toml::Table = text
            .parse()
            .map_err(|e: toml::de::Error| SpecError::Syntax { file: file.into(), message: e.to_string() })?;
        let mut job = JobSpec { file: Some(file.to_string()), ..JobSpec::default() };
        let top_known: Vec<&str> =
            RUN_KEYS.iter().chain(WORKER_KEYS).chain(SPEC_KEYS).chain(TABLE_KEYS).copied().collect();
        for (key, value) in &table {
            let place = Place::Key { file: file.into(), table: String::new(), key: key.clone() };
            match key.as_str() {
                "spec" => job.specs = read_specs(value, file, "[[spec]]")?,
                "inject" => {
                    let items = match value {
                        toml::Value::Array(items) => items.clone(),
                        one => vec![one.clone()],
                    };
                    for item in &items {
                        job.set_run(key, &scalar_text(item, &place)?, &place)?;
                    }
                }
                "targets" => job.targets = read_targets(value, file)?,
                "phase" => job.phases = read_phases(value, file)?,
                "profile" => job.profile = Some(ProfileMeta::from_toml(value, file)?),
                "exchange" => job.exchange = Some(ExchangeSpec::from_toml(value, file)?),
                "verdict" => job.verdict = Some(VerdictSpec::from_toml(value, file)?),
                "users" | "transaction" => {
                    if job.loadgen.is_none() {
                        job.loadgen = Some(LoadgenSpec::from_job_table(&table, file)?);
                    }
                }
                "worker" => {
                    let workers = value.as_table().ok_or_else(|| SpecError::Conflict {
                        place: place.clone(),
                        message: "expected worker tables such as [worker.db]".into(),
                    })?;
                    check_table_count(workers.len(), &place)?;
                    for (name, w) in workers {
                        job.worker_tables.push(read_worker(name, w, file)?);
                    }
                }
                k if CONSENT_KEYS.contains(&k) => return Err(Consent::refuse(k, &place)),
                _ => {
                    if RUN_KEYS.contains(&key.as_str()) {
                        job.set_run(key, &scalar_text(value, &place)?, &place)?;
                    } else if !set_layer_value(&mut job.defaults, key, value, &place)? {
                        return Err(SpecError::UnknownKey {
                            file: file.into(),
                            table: String::new(),
                            key: key.clone(),
                            suggestion: suggest(key, &top_known).map(str::to_string),
                        });
                    }
                }
            }
        }
        if !job.phases.is_empty() && !job.worker_tables.is_empty() {
            return Err(SpecError::Conflict {
                place: Place::Key { file: file.into(), table: String::new(), key: "phase".into() },
                message: "[worker.NAME] tables and [[phase]] tables both define workers; put the workers in each phase ([phase.worker.NAME])".into(),
            });
        }
        if job.workers.is_some() && !job.worker_tables.is_empty() {
            return Err(SpecError::Conflict {
                place: Place::Key { file: file.into(), table: String::new(), key: "workers".into() },
                message: "'workers' counts default workers; with [worker.NAME] tables, set 'count' inside each table".into(),
            });
        }
        Ok(job)
    }

    /// Applies command-line values: run keys replace the job's, and the layer is forced on every worker and spec.
    pub fn apply_overrides(&mut self, cli: &JobSpec) {
        macro_rules! over {
            ($($f:ident),*) => { $( if cli.$f.is_some() { self.$f = cli.$f.clone(); } )* };
        }
        over!(name, duration_ns, ramp_ns, ios, bytes, seed, engine, direct, prealloc, clock, trace);
        self.consent = self.consent.or(cli.consent);
        if cli.throttle.is_some() {
            self.throttle = cli.throttle;
        }
        self.cache.apply_overrides(&cli.cache);
        self.integrity.apply_overrides(&cli.integrity);
        if cli.workers.is_some() {
            if self.worker_tables.is_empty() {
                self.workers = cli.workers;
            } else {
                for w in &mut self.worker_tables {
                    w.count = cli.workers.unwrap_or(w.count);
                }
            }
        }
        self.apply_overrides_to_phases(cli);
        self.forced = self.forced.merged(&cli.forced);
        for (name, t) in &cli.targets {
            let e = self.targets.entry(name.clone()).or_default();
            if t.spec.is_some() {
                e.spec = t.spec.clone();
            }
            if t.size.is_some() {
                e.size = t.size;
            }
        }
    }

    /// Sets a named target from `--target NAME=TARGET`. The name must be declared in the job's `[targets]`
    /// (checked by [`JobSpec::check_target_names`] once the job file is read).
    pub fn set_named_target(&mut self, name: &str, text: &str, place: &Place) -> Result<(), SpecError> {
        let spec = parse_named_spec(text, place)?;
        self.targets.entry(name.to_string()).or_default().spec = Some(spec);
        Ok(())
    }

    /// Checks that every `@NAME` a worker uses, and every name given on the command line (`given`), is
    /// declared in `[targets]`.
    pub fn check_target_names(&self, given: &[String]) -> Result<(), SpecError> {
        let declared: Vec<&str> = self.targets.keys().map(String::as_str).collect();
        let mut used: Vec<(String, Place)> = Vec::new();
        let file = self.file.clone().unwrap_or_default();
        for (table, layer) in std::iter::once((String::new(), &self.defaults))
            .chain(self.worker_tables.iter().map(|w| (format!("[worker.{}]", w.name), &w.layer)))
        {
            for t in layer.target.iter().flatten() {
                if let TargetSpec::Named { name } = t {
                    used.push((
                        name.clone(),
                        Place::Key { file: file.clone(), table: table.clone(), key: "target".into() },
                    ));
                }
            }
        }
        for n in given {
            used.push((n.clone(), Place::Flag("--target".into())));
        }
        for (name, place) in used {
            if !self.targets.contains_key(&name) {
                let hint = match suggest(&name, &declared) {
                    Some(s) => format!("; did you mean '{s}'?"),
                    None if declared.is_empty() => "; the job declares no [targets]".to_string(),
                    None => format!("; declared: {}", declared.join(", ")),
                };
                return Err(SpecError::invalid(
                    &place,
                    format!("@{name}"),
                    format!("a target declared in [targets]{hint}"),
                ));
            }
        }
        Ok(())
    }
}

/// The text of a scalar TOML value, as the user wrote it (strings without quotes).
pub(crate) fn scalar_text(v: &toml::Value, place: &Place) -> Result<String, SpecError> {
    match v {
        toml::Value::String(s) => Ok(s.clone()),
        toml::Value::Integer(i) => Ok(i.to_string()),
        toml::Value::Float(f) => Ok(f.to_string()),
        toml::Value::Boolean(b) => Ok(b.to_string()),
        other => {
            Err(SpecError::invalid(place, other.to_string(), "a single value (string, number or boolean)"))
        }
    }
}

fn set_layer_value(
    layer: &mut Layer,
    key: &str,
    value: &toml::Value,
    place: &Place,
) -> Result<bool, SpecError> {
    if key == "target" {
        if let toml::Value::Array(items) = value {
            if items.is_empty() {
                return Err(SpecError::invalid(place, "[]", "at least one target"));
            }
            for item in items {
                layer.set(key, &scalar_text(item, place)?, place)?;
            }
            return Ok(true);
        }
    }
    if !WORKER_KEYS.contains(&key) && !SPEC_KEYS.contains(&key) {
        return Ok(false);
    }
    layer.set(key, &scalar_text(value, place)?, place)
}

fn read_targets(value: &toml::Value, file: &str) -> Result<BTreeMap<String, NamedTarget>, SpecError> {
    let conflict = |key: &str, message: String| SpecError::Conflict {
        place: Place::Key { file: file.into(), table: "[targets]".into(), key: key.into() },
        message,
    };
    let t = value.as_table().ok_or_else(|| {
        conflict("targets", "expected a table such as [targets] with db = \"/data/db.edb\"".into())
    })?;
    let mut out = BTreeMap::new();
    for (name, v) in t {
        if !is_target_name(name) {
            return Err(conflict(name, "a target name is a letter, then letters, digits, '_' or '-'".into()));
        }
        let place = Place::Key { file: file.into(), table: "[targets]".into(), key: name.clone() };
        let mut nt = NamedTarget::default();
        match v {
            toml::Value::Table(fields) => {
                for (k, fv) in fields {
                    let place =
                        Place::Key { file: file.into(), table: format!("[targets.{name}]"), key: k.clone() };
                    let text = scalar_text(fv, &place)?;
                    match k.as_str() {
                        "path" | "target" => nt.spec = Some(parse_named_spec(&text, &place)?),
                        "size" => nt.size = Some(positive_size(&place, &text)?),
                        _ => {
                            return Err(SpecError::UnknownKey {
                                file: file.into(),
                                table: format!("[targets.{name}]"),
                                key: k.clone(),
                                suggestion: suggest(k, &["path", "size"]).map(str::to_string),
                            })
                        }
                    }
                }
            }
            other => nt.spec = Some(parse_named_spec(&scalar_text(other, &place)?, &place)?),
        }
        out.insert(name.clone(), nt);
    }
    Ok(out)
}

fn parse_named_spec(text: &str, place: &Place) -> Result<TargetSpec, SpecError> {
    match TargetSpec::parse(text).map_err(|e| SpecError::invalid(place, text, e))? {
        TargetSpec::Named { .. } => {
            Err(SpecError::invalid(place, text, "a path, mem:, null: or sim: target"))
        }
        t => Ok(t),
    }
}

fn read_specs(value: &toml::Value, file: &str, table: &str) -> Result<Vec<Layer>, SpecError> {
    let items = value.as_array().ok_or_else(|| SpecError::Conflict {
        place: Place::Key { file: file.into(), table: String::new(), key: "spec".into() },
        message: format!("expected an array of tables, written {table}"),
    })?;
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let tname = format!("{table} #{}", i + 1);
        let t = item.as_table().ok_or_else(|| SpecError::Conflict {
            place: Place::Key { file: file.into(), table: tname.clone(), key: "spec".into() },
            message: "expected a table of access-spec keys".into(),
        })?;
        let mut layer = Layer::default();
        for (key, v) in t {
            let place = Place::Key { file: file.into(), table: tname.clone(), key: key.clone() };
            if !SPEC_KEYS.contains(&key.as_str()) {
                return Err(SpecError::UnknownKey {
                    file: file.into(),
                    table: tname,
                    key: key.clone(),
                    suggestion: suggest(key, SPEC_KEYS).map(str::to_string),
                });
            }
            set_layer_value(&mut layer, key, v, &place)?;
        }
        out.push(layer);
    }
    if out.len() > 100 {
        return Err(SpecError::Conflict {
            place: Place::Key { file: file.into(), table: table.into(), key: "spec".into() },
            message: "at most 100 access specs per worker (Iometer's limit)".into(),
        });
    }
    Ok(out)
}

pub(crate) fn read_worker(name: &str, value: &toml::Value, file: &str) -> Result<WorkerSpec, SpecError> {
    let tname = format!("[worker.{name}]");
    let t = value.as_table().ok_or_else(|| SpecError::Conflict {
        place: Place::Key { file: file.into(), table: String::new(), key: format!("worker.{name}") },
        message: "expected a table".into(),
    })?;
    let mut w = WorkerSpec { name: name.to_string(), count: 1, layer: Layer::default(), specs: Vec::new() };
    let known: Vec<&str> = WORKER_KEYS.iter().chain(SPEC_KEYS).copied().chain(["count", "spec"]).collect();
    for (key, v) in t {
        let place = Place::Key { file: file.into(), table: tname.clone(), key: key.clone() };
        match key.as_str() {
            "count" => {
                w.count = range_u32(&place, &scalar_text(v, &place)?, 1, MAX_WORKERS, "a whole number")?
            }
            "spec" => w.specs = read_specs(v, file, &format!("[[worker.{name}.spec]]"))?,
            k if CONSENT_KEYS.contains(&k) => return Err(Consent::refuse(k, &place)),
            _ => {
                if !set_layer_value(&mut w.layer, key, v, &place)? {
                    let run_key = RUN_KEYS.contains(&key.as_str());
                    return Err(SpecError::UnknownKey {
                        file: file.into(),
                        table: tname,
                        key: if run_key {
                            format!("{key}' (a run setting: put it at the top of the file)")
                        } else {
                            key.clone()
                        },
                        suggestion: if run_key { None } else { suggest(key, &known).map(str::to_string) },
                    });
                }
            }
        }
    }
    Ok(w)
}

// ---------------------------------------------------------------------------------------------------------
// [[phase]] tables (crate::phase runs them)

/// The run settings a phase may set for itself.
pub const PHASE_RUN_KEYS: &[&str] = &["duration", "ramp", "ios", "bytes"];

/// One `[[phase]]` table.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PhaseSpec {
    /// `name` (default `phase N`).
    pub name: String,
    /// Its `[phase.worker.NAME]` tables; none means the file's default worker.
    pub worker_tables: Vec<WorkerSpec>,
    /// Its own `duration`, `ramp`, `ios` and `bytes`, parsed as the top-level keys are.
    pub run: JobSpec,
}

/// Reads the `phase` array of tables of `file`.
pub(crate) fn read_phases(value: &toml::Value, file: &str) -> Result<Vec<PhaseSpec>, SpecError> {
    let top = Place::Key { file: file.into(), table: String::new(), key: "phase".into() };
    let tables = value.as_array().filter(|a| a.iter().all(toml::Value::is_table)).ok_or_else(|| {
        SpecError::Conflict { place: top.clone(), message: "expected [[phase]] tables".into() }
    })?;
    if tables.len() > MAX_PHASES {
        return Err(SpecError::Conflict {
            place: top,
            message: format!("{} [[phase]] tables; a job runs at most {MAX_PHASES} phases", tables.len()),
        });
    }
    let worker_tables: usize =
        tables.iter().map(|t| t.get("worker").and_then(toml::Value::as_table).map_or(0, |w| w.len())).sum();
    if worker_tables > MAX_WORKER_TABLES {
        return Err(SpecError::Conflict {
            place: top,
            message: format!("{worker_tables} [phase.worker.NAME] tables over all phases; a job has at most {MAX_WORKER_TABLES}"),
        });
    }
    tables.iter().enumerate().map(|(i, t)| read_phase(i, t, file)).collect()
}

/// Refuses more worker tables than a run has workers (each table is at least one), before any is read.
fn check_table_count(n: usize, place: &Place) -> Result<(), SpecError> {
    if n > MAX_WORKERS as usize {
        return Err(SpecError::Conflict {
            place: place.clone(),
            message: format!("{n} worker tables; a run has at most {MAX_WORKERS} workers"),
        });
    }
    Ok(())
}

fn read_phase(index: usize, value: &toml::Value, file: &str) -> Result<PhaseSpec, SpecError> {
    let table = value.as_table().expect("checked by read_phases");
    let tname = format!("[[phase]] #{}", index + 1);
    let mut p = PhaseSpec { name: format!("phase {}", index + 1), ..PhaseSpec::default() };
    for (key, v) in table {
        let place = Place::Key { file: file.into(), table: tname.clone(), key: key.clone() };
        match key.as_str() {
            "name" => p.name = scalar_text(v, &place)?,
            "worker" => {
                let workers = v.as_table().ok_or_else(|| SpecError::Conflict {
                    place: place.clone(),
                    message: "expected worker tables such as [phase.worker.db]".into(),
                })?;
                check_table_count(workers.len(), &place)?;
                for (name, w) in workers {
                    p.worker_tables.push(read_worker(name, w, file)?);
                }
            }
            k if PHASE_RUN_KEYS.contains(&k) => {
                p.run.set_run(k, &scalar_text(v, &place)?, &place)?;
            }
            _ => {
                let known: Vec<&str> = PHASE_RUN_KEYS.iter().copied().chain(["name", "worker"]).collect();
                return Err(SpecError::UnknownKey {
                    file: file.into(),
                    table: tname,
                    key: key.clone(),
                    suggestion: suggest(key, &known).map(str::to_string),
                });
            }
        }
    }
    Ok(p)
}

impl JobSpec {
    /// Lets the command line win over every phase: a run setting given there is taken out of the phases, and
    /// `--workers` sets every phase's worker counts (called by [`JobSpec::apply_overrides`]).
    pub(crate) fn apply_overrides_to_phases(&mut self, cli: &JobSpec) {
        for p in &mut self.phases {
            if cli.duration_ns.is_some() || cli.ios.is_some() || cli.bytes.is_some() {
                p.run.duration_ns = None;
                p.run.ios = None;
                p.run.bytes = None;
            }
            if cli.ramp_ns.is_some() {
                p.run.ramp_ns = None;
            }
            if let Some(n) = cli.workers {
                for w in &mut p.worker_tables {
                    w.count = n;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toml_job_with_worker_tables_parses() {
        let job = JobSpec::from_toml(
            r#"
            duration = "30s"
            ramp = "5s"
            seed = 7
            target = "mem:1G"
            [worker.db]
            count = 4
            qd = 16
            [[worker.db.spec]]
            bs = "8k"
            read_pct = 70
            random_pct = 100
            weight = 3
            [[worker.db.spec]]
            bs = "64k"
            rw = "read"
            [worker.log]
            bs = "4k"
            rw = "write"
            qd = 1
            "#,
            "j.toml",
        )
        .unwrap();
        assert_eq!(job.duration_ns, Some(30_000_000_000));
        assert_eq!(job.worker_tables.len(), 2);
        assert_eq!(job.worker_tables[0].count, 4);
        assert_eq!(job.worker_tables[0].specs.len(), 2);
        assert_eq!(job.worker_tables[1].layer.rw, Some(Rw::Write));
    }

    #[test]
    fn toml_unknown_key_suggests_the_close_one() {
        let e = JobSpec::from_toml("read_pc = 70\n", "j.toml").unwrap_err();
        assert_eq!(e.to_string(), "job file 'j.toml': unknown key 'read_pc'; did you mean 'read_pct'?");
        let e = JobSpec::from_toml("[worker.a]\nqdd = 3\n", "j.toml").unwrap_err();
        assert!(e.to_string().contains("[worker.a]: unknown key 'qdd'; did you mean 'qd'?"), "{e}");
    }

    #[test]
    fn toml_out_of_range_value_names_key_and_table() {
        let e = JobSpec::from_toml("[worker.db]\nqd = 0\n", "j.toml").unwrap_err();
        assert_eq!(e.to_string(), "invalid value '0' for 'qd' in [worker.db] of job file 'j.toml': expected a whole number from 1 to 4096");
    }

    #[test]
    fn toml_syntax_error_is_reported_with_file() {
        let e = JobSpec::from_toml("qd = = 3", "j.toml").unwrap_err();
        assert!(e.to_string().starts_with("job file 'j.toml' is not valid TOML"), "{e}");
    }

    #[test]
    fn workers_count_with_worker_tables_is_conflict() {
        assert!(JobSpec::from_toml("workers = 2\n[worker.a]\nqd = 1\n", "j.toml").is_err());
    }

    #[test]
    fn layer_merge_prefers_the_later_layer() {
        let flag = Place::Flag("--qd".into());
        let mut a = Layer::default();
        a.set("qd", "4", &flag).unwrap();
        a.set("bs", "4k", &flag).unwrap();
        let mut b = Layer::default();
        b.set("qd", "32", &flag).unwrap();
        let m = a.merged(&b);
        assert_eq!(m.qd, Some(32));
        assert_eq!(m.bs.unwrap().max(), 4096);
    }

    #[test]
    fn prealloc_key_takes_its_three_modes_and_names_them_when_refused() {
        let job = JobSpec::from_toml("prealloc = \"none\"\n", "j.toml").unwrap();
        assert_eq!(job.prealloc, Some(Prealloc::None));
        let mut cli = JobSpec::default();
        cli.set_run("prealloc", "write", &Place::Flag("--prealloc".into())).unwrap();
        let mut job = job;
        job.apply_overrides(&cli);
        assert_eq!(job.prealloc, Some(Prealloc::Write), "the flag wins over the file");
        let e = JobSpec::from_toml("prealloc = \"posix\"\n", "j.toml").unwrap_err().to_string();
        assert!(e.contains("'posix'") && e.contains("'fallocate', 'write' or 'none'"), "{e}");
        for p in [Prealloc::Fallocate, Prealloc::Write, Prealloc::None] {
            let mut j = JobSpec::default();
            j.set_run("prealloc", p.as_str(), &Place::Flag("--prealloc".into())).unwrap();
            assert_eq!(j.prealloc, Some(p), "one name everywhere");
        }
    }

    #[test]
    fn every_layer_field_has_a_key() {
        // Each key sets a distinct field, and the key lists cover every field: a new field without a key fails here.
        let flag = Place::Flag("x".into());
        let samples = [
            ("target", "mem:1G"),
            ("size", "1G"),
            ("offset", "0"),
            ("length", "1G"),
            ("qd", "1"),
            ("rate", "10"),
            ("arrival", "poisson"),
            ("think", "1ms"),
            ("burst", "2"),
            ("data", "zero"),
            ("bs", "4k"),
            ("rw", "read"),
            ("read_pct", "1"),
            ("random_pct", "1"),
            ("trim_pct", "5"),
            ("fsync", "4"),
            ("fdatasync", "1"),
            ("sync", "dsync"),
            ("align", "4k"),
            ("dist", "zipf:1.1"),
            ("weight", "2"),
        ];
        let mut l = Layer::default();
        for (k, v) in samples {
            assert!(l.set(k, v, &flag).unwrap(), "{k}");
        }
        let json = serde_json_like_count(&l);
        assert_eq!(json, WORKER_KEYS.len() + SPEC_KEYS.len());
    }

    fn serde_json_like_count(l: &Layer) -> usize {
        let t = toml::Value::try_from(l).unwrap();
        t.as_table().unwrap().len()
    }

    #[test]
    fn run_keys_parse_and_reject_bad_values() {
        let mut j = JobSpec::default();
        let p = Place::Flag("--duration".into());
        assert!(j.set_run("duration", "-5s", &p).is_err());
        assert!(j.set_run("duration", "0", &p).is_err());
        j.set_run("seed", "0xff", &p).unwrap();
        assert_eq!(j.seed, Some(255));
        assert!(j.set_run("engine", "libaio", &p).is_err());
    }
}
