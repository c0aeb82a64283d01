//! [`JobSpec`]: what one run asked for, and the parts it is made of (worker tables, named targets, phases);
//! how the command line's values win over a job file's ([`JobSpec::apply_overrides`]).

use super::integrity::IntegritySpec;
use super::layer::Layer;
use super::values::{ClockKind, EngineKind, Prealloc};
use crate::cache::CacheSpec;
use crate::consent::Consent;
use crate::error::{suggest, Place, SpecError};
use crate::exchange::ExchangeSpec;
use crate::loadgen::LoadgenSpec;
use crate::profile::ProfileMeta;
use crate::target::TargetSpec;
use crate::throttle::ThrottleSpec;
use crate::verdict::VerdictSpec;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

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
    /// The time series' interval (`--interval`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval_ns: Option<u64>,
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
    /// Who named `trace`: only a path typed on the command line may replace a file. Never read from a file
    /// and never serialised, as [`JobSpec::consent`].
    #[serde(skip)]
    pub trace_named_by: crate::NamedBy,
    /// Who set `direct` when the command line did not ("the profile 'etcd'", "the job file 'j.toml'"), so a
    /// hint about buffered I/O names it instead of a flag the user never typed. Set by the caller that knows
    /// (the cli); cleared when the command line changes `direct` (typing `--buffered` over a profile's
    /// buffered I/O changes nothing: dropping it would not give O_DIRECT). Never read from a file, never serialised.
    #[serde(skip)]
    pub direct_set_by: Option<String>,
}

/// One entry of `[targets]`: `db = "/data/db.edb"`, or `db = { path = "/data/db.edb", size = "200G" }`, or
/// `db = { size = "200G" }` (a scratch file of that size unless the user names one with `--target db=PATH`),
/// or `vda = { footprint = "32G" }` (the span its workers address: a derived job's trace footprint).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct NamedTarget {
    /// The target; `None` until the user (or the cli's scratch default) gives one.
    pub spec: Option<TargetSpec>,
    /// Size of the file to create if missing.
    pub size: Option<u64>,
    /// The span of the target its workers address, from their `offset`: their region's length where the target
    /// is larger, the whole target (the footprint scaled down, and the result says so) where it is smaller;
    /// the size of a scratch or missing file unless `--size` gives one; an existing file is used at its size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub footprint: Option<u64>,
}

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

impl JobSpec {
    /// Applies command-line values: run keys replace the job's, and the layer is forced on every worker and spec.
    pub fn apply_overrides(&mut self, cli: &JobSpec) {
        if cli.direct.is_some() && cli.direct != self.direct {
            self.direct_set_by = None;
        }
        macro_rules! over {
            ($($f:ident),*) => { $( if cli.$f.is_some() { self.$f = cli.$f.clone(); } )* };
        }
        over!(
            name,
            duration_ns,
            ramp_ns,
            interval_ns,
            ios,
            bytes,
            seed,
            engine,
            direct,
            prealloc,
            clock,
            trace
        );
        if cli.trace.is_some() {
            self.trace_named_by = crate::NamedBy::CommandLine;
        }
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
        let spec = TargetSpec::parse_named(text, place)?;
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

    /// Lets the command line win over every phase: a run setting given there is taken out of the phases, and
    /// `--workers` sets every phase's worker counts (called by [`JobSpec::apply_overrides`]).
    fn apply_overrides_to_phases(&mut self, cli: &JobSpec) {
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
