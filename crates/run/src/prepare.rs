//! Everything about a run that can reject its input, before anything is created or written: the job's scratch
//! targets are named, the job is planned, the engine for files and devices is chosen, every target is probed
//! (no side effects) and the plan is bound to the targets' sizes and sector sizes; then verification, the
//! cache device and `--throttle` are checked. A dry run ends here.

use crate::target::PreparedTarget;
use crate::{integrity, layers, CheckMode, Error, Observer, Result};
use iolab_device::{Access, OpenRequest, Output, Probe, TargetKind, WriteGate};
use iolab_plan::sizing::{DataKept, MemoryNeed};
use iolab_plan::{Plan, Region, TargetGeometry};
use iolab_spec::{CacheSpec, EngineKind, JobSpec, TargetSpec};
use iolab_stats::Warning;

/// Size of the default scratch file.
const SCRATCH_SIZE: u64 = 1 << 30;

/// A job planned, probed and bound; nothing created yet.
pub(crate) struct Prepared {
    /// The job, its scratch targets filled in.
    pub job: JobSpec,
    /// The plan (queue depths lowered to 1 when the sync engine serves files).
    pub plan: Plan,
    /// `regions[w][i]`: worker `w`'s region in its `i`-th target.
    pub regions: Vec<Vec<Region>>,
    /// The run's targets, in plan order.
    pub targets: Vec<PreparedTarget>,
    /// The engine for files and devices.
    pub file_engine: EngineKind,
    /// `--throttle`: the block devices to limit, (name, major, minor).
    pub throttle_devices: Option<Vec<(String, u32, u32)>>,
    /// Warnings so far (engine fallback, sync engine depth).
    pub warnings: Vec<Warning>,
    /// `--journal`: its directory, held from the write gate's claim.
    pub journal_dir: Option<std::fs::File>,
    /// `--trace`: the trace output, claimed in the gate.
    pub trace: Option<Output>,
}

/// The `--dry-run` document: the resolved job, nothing created or changed.
#[derive(Clone, Debug, serde::Serialize)]
pub struct DryRun {
    /// The plan the run would follow.
    pub plan: Plan,
    /// `regions[w][i]`: worker `w`'s region in its `i`-th target.
    pub regions: Vec<Vec<Region>>,
    /// The engine for files and devices.
    pub file_engine: EngineKind,
    /// Per run target: what probing found.
    pub targets: Vec<Probe>,
    /// The job's Exchange sizing (`[exchange]`), when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exchange: Option<iolab_report::verdict::Sizing>,
}

impl DryRun {
    /// The planned ramp plus duration, seconds; `None` for a count-limited run, whose length is unknown.
    pub fn planned_s(&self) -> Option<f64> {
        let duration_ns = self.plan.duration_ns?;
        Some(self.plan.ramp_ns.saturating_add(duration_ns) as f64 / 1e9)
    }
}

impl Prepared {
    /// The `--dry-run` document of the prepared job.
    pub fn dry_run(&self) -> DryRun {
        DryRun {
            plan: self.plan.clone(),
            regions: self.regions.clone(),
            file_engine: self.file_engine,
            targets: self.targets.iter().map(|t| t.probe.clone()).collect(),
            exchange: crate::verdict::sizing(&self.job),
        }
    }
}

/// Plans, probes and binds `job`, and checks everything that needs the bound plan.
pub(crate) fn prepare(
    mut job: JobSpec,
    check: Option<&CheckMode>,
    gate: &WriteGate,
    obs: &mut dyn Observer,
) -> Result<Prepared> {
    let (scratch_specs, scratch_target) = scratch_targets(&mut job);
    if !scratch_specs.is_empty() {
        note_stale_scratch(obs);
    }
    let mut plan = Plan::from_spec(&job, scratch_target.as_ref()).map_err(Error::usage)?;
    let mut warnings = Vec::new();
    let file_engine = choose_engine(&mut plan, &mut warnings, obs)?;
    let requests: Vec<OpenRequest> = plan
        .targets
        .iter()
        .map(|t| {
            let scratch = scratch_specs.contains(&t.spec);
            OpenRequest {
                spec: t.spec.clone(),
                direct: plan.direct,
                writes: t.writes,
                create_size: create_size(t, scratch),
                prealloc: plan.prealloc,
                scratch,
                consent: plan.consent(),
                fill_progress: None,
                stop: None,
            }
        })
        .collect();
    // Collisions first: two uses of one file is the clearer message than what either use finds there.
    let (trace, journal_dir) = claim_paths(gate.clone(), &job, &requests, check)?;
    let probes =
        requests.iter().map(iolab_device::probe).collect::<Result<Vec<_>, _>>().map_err(Error::usage)?;
    let targets: Vec<PreparedTarget> = requests
        .into_iter()
        .zip(probes)
        .map(|(request, probe)| {
            let size_bytes = probe.will_extend_to.unwrap_or(probe.size_bytes);
            let geometry = TargetGeometry { size_bytes, block_bytes: probe.logical_block_size };
            PreparedTarget { request, probe, geometry }
        })
        .collect();
    let geometry: Vec<TargetGeometry> = targets.iter().map(|t| t.geometry).collect();
    let regions = plan.bind(&geometry).map_err(Error::usage)?;
    warnings.extend(footprints_scaled(&plan, &geometry));
    integrity::check_job(&job, &plan, &regions, check)?;
    crate::atomic::check(&plan)?;
    layers::check_cache_dev(&plan, &job.cache, &regions)?;
    let data = DataKept::of(&plan, &job.cache, job.integrity.verifying());
    check_memory(&plan, &regions, (&job.cache, data), iolab_device::memory_headroom())?;
    let throttle_devices = throttle_devices(&job, &targets)?;
    Ok(Prepared { job, plan, regions, targets, file_engine, throttle_devices, warnings, trace, journal_dir })
}

/// The size to create (or extend) a target's file with: its `create_size`, a scratch file's default; none for
/// an existing file of a target with a footprint, which is used at its own size (a smaller one scales the
/// footprint down: [`footprints_scaled`]).
fn create_size(t: &iolab_plan::TargetPlan, scratch: bool) -> Option<u64> {
    let existing = matches!(&t.spec, TargetSpec::Path { path } if std::path::Path::new(path).exists());
    if t.footprint.is_some() && existing && !scratch {
        return None;
    }
    t.create_size.or(if scratch { Some(SCRATCH_SIZE) } else { None })
}

/// A warning for each target smaller than the job's footprint of it: its workers address all of it instead
/// ([`Plan::bind`]).
fn footprints_scaled(plan: &Plan, geometry: &[TargetGeometry]) -> Vec<Warning> {
    let scaled = plan.targets.iter().zip(geometry).filter_map(|(t, g)| {
        let footprint = t.footprint.filter(|&f| f > g.size_bytes)?;
        Some(Warning::FootprintScaled {
            target: t.role.clone().unwrap_or_else(|| t.name.clone()),
            footprint_bytes: footprint,
            size_bytes: g.size_bytes,
        })
    });
    scaled.collect()
}

/// Claims the run's targets, journal, cache device and trace in (a copy of) the caller's gate, which holds its
/// outputs and catalog: a path named twice where one use writes is refused before anything is created.
/// Returns the trace output (`--trace`) and the journal's directory, held from its claim (`--journal`).
fn claim_paths(
    mut gate: WriteGate,
    job: &JobSpec,
    requests: &[OpenRequest],
    check: Option<&CheckMode>,
) -> Result<(Option<Output>, Option<std::fs::File>)> {
    for r in requests {
        if let Some(path) = path_of(&r.spec) {
            gate.target(path, if r.writes { Access::Writes } else { Access::Reads }).map_err(Error::usage)?;
        }
    }
    let journal_dir = match (check, &job.integrity.journal) {
        (Some(CheckMode::Journal(path)), _) => {
            gate.claim("--journal", &path.to_string_lossy(), Access::Reads).map_err(Error::usage)?;
            None
        }
        (_, Some(path)) => {
            Some(gate.journal("--journal", path, job.integrity.journal_named_by).map_err(Error::usage)?)
        }
        _ => None,
    };
    if let Some(path) = job.cache.dev.as_ref().and_then(path_of) {
        gate.claim("--cache-dev", path, Access::Writes).map_err(Error::usage)?;
    }
    let trace = job
        .trace
        .as_ref()
        .map(|path| gate.output_named("--trace", path, job.trace_named_by))
        .transpose()
        .map_err(Error::usage)?;
    Ok((trace, journal_dir))
}

/// The file or device path behind a target (through links), if it has one.
fn path_of(spec: &TargetSpec) -> Option<&str> {
    match spec {
        TargetSpec::Path { path } => Some(path),
        TargetSpec::Link { target, .. } => path_of(target),
        _ => None,
    }
}

/// Refuses a run whose I/O buffers, RAM disks and cache together need more memory than is available
/// (`available_bytes`, MemAvailable; 0 when unknown, then nothing is refused), before anything is allocated:
/// otherwise the run would allocate towards the OOM killer.
fn check_memory(
    plan: &Plan,
    regions: &[Vec<Region>],
    cache: (&CacheSpec, DataKept),
    headroom: iolab_device::MemoryHeadroom,
) -> Result<()> {
    let (cache, data) = cache;
    let line = cache.line_bytes.unwrap_or(iolab_spec::cache::DEFAULT_CACHE_LINE);
    let need = MemoryNeed::of(plan, regions, cache, line, data);
    if headroom.fits(need.total_bytes()) {
        return Ok(());
    }
    let b = iolab_report::format_bytes;
    let mut parts =
        vec![format!("I/O buffers {} (2 x qd x largest block, per worker)", b(need.buffers_bytes))];
    if need.ram_disks_bytes > 0 {
        parts.push(format!("mem: targets {}", b(need.ram_disks_bytes)));
    }
    if need.cache_bytes > 0 {
        let what = if data.kept() { "cache" } else { "cache metadata" };
        parts.push(format!("{what} {}", b(need.cache_bytes)));
    }
    Err(Error::usage(format!(
        "this run needs {} of memory before it starts ({}), but only {} is available ({})\n  \
         hint: lower --qd, --bs or --workers, use a smaller mem: target, or a smaller --cache (or --cache-max-mem)",
        b(need.total_bytes()),
        parts.join(", "),
        b(headroom.bytes),
        headroom.limit.describe()
    )))
}

/// Says where scratch files of iolab processes that no longer run are (a `kill -9` leaves them): they take
/// space the run may need, and only the user can tell whether they still matter.
fn note_stale_scratch(obs: &mut dyn Observer) {
    let dir = std::env::var("IOLAB_SCRATCH_DIR").unwrap_or_else(|_| ".".into());
    let stale = iolab_device::stale_scratch_files(std::path::Path::new(&dir));
    if !stale.is_empty() {
        let list: Vec<String> = stale.iter().map(|p| format!("'{}'", p.display())).collect();
        obs.notice(&format!(
            "iolab: scratch files left by iolab processes that no longer run (killed?): {}; remove them when \
             they are no longer needed",
            list.join(", ")
        ));
    }
}

/// The default target is a scratch file iolab creates and removes; likewise each named target without a
/// path. Gives the job's named targets their scratch paths; returns every scratch spec, and the default
/// target's when the job names no target at all.
fn scratch_targets(job: &mut JobSpec) -> (Vec<TargetSpec>, Option<TargetSpec>) {
    let mut scratch_specs: Vec<TargetSpec> = Vec::new();
    for (name, t) in job.targets.iter_mut() {
        if t.spec.is_none() {
            let spec = TargetSpec::Path { path: scratch_path(Some(name)) };
            scratch_specs.push(spec.clone());
            t.spec = Some(spec);
            if t.footprint.is_none() {
                t.size = t.size.or(Some(SCRATCH_SIZE));
            }
        }
    }
    let scratch_target = if has_any_target(job) {
        None
    } else {
        let spec = TargetSpec::Path { path: scratch_path(None) };
        scratch_specs.push(spec.clone());
        Some(spec)
    };
    (scratch_specs, scratch_target)
}

fn has_any_target(job: &JobSpec) -> bool {
    job.forced.target.is_some()
        || job.defaults.target.is_some()
        || job.worker_tables.iter().any(|w| w.layer.target.is_some())
}

/// The scratch file for the default target (`role` None) or for a named target without a path.
fn scratch_path(role: Option<&str>) -> String {
    let dir = std::env::var("IOLAB_SCRATCH_DIR").unwrap_or_else(|_| ".".into());
    let dir = dir.trim_end_matches('/');
    let base = match role {
        None => format!("{dir}/iolab-scratch-{}", std::process::id()),
        Some(r) => format!("{dir}/iolab-scratch-{}-{r}", std::process::id()),
    };
    // A name taken by anything this process did not create (a file, or a symlink, even a dangling one: never
    // followed) is never reused: the next free one is chosen, and the file is then created with O_EXCL, so a
    // name taken meanwhile fails. This process's own scratch files are reused (a sweep makes them once).
    let free = |p: &String| {
        std::fs::symlink_metadata(p).is_err()
            || std::path::absolute(p).is_ok_and(|a| iolab_device::scratch::is_scratch(&a))
    };
    (0..)
        .map(|n| if n == 0 { format!("{base}.dat") } else { format!("{base}.{n}.dat") })
        .find(free)
        .unwrap_or_else(|| format!("{base}.dat"))
}

/// The engine for files and devices: `auto` is io_uring when the kernel has it, else the sync engine (with a
/// notice and a warning); the sync engine does one I/O at a time, so queue depths become 1 (with a warning).
fn choose_engine(plan: &mut Plan, warnings: &mut Vec<Warning>, obs: &mut dyn Observer) -> Result<EngineKind> {
    let mut file_engine = plan.engine;
    if !plan.targets.iter().any(|t| !t.spec.is_virtual()) {
        return Ok(file_engine);
    }
    match plan.engine {
        EngineKind::Auto => {
            if let Err(e) = iolab_engine::uring::probe() {
                let reason = e.to_string().lines().next().unwrap_or("io_uring unavailable").to_string();
                obs.notice(&format!("iolab: io_uring unavailable ({reason}); using the sync engine"));
                warnings.push(Warning::EngineFallback { reason });
                file_engine = EngineKind::Sync;
            } else {
                file_engine = EngineKind::IoUring;
            }
        }
        EngineKind::IoUring => iolab_engine::uring::probe().map_err(Error::usage)?,
        EngineKind::Sync => {}
    }
    if file_engine == EngineKind::Sync {
        let deep = plan.workers.iter().map(|w| w.qd).max().unwrap_or(1);
        if deep > 1 {
            warnings.push(Warning::SyncEngineDepth { requested: deep });
            plan.run_one_at_a_time();
        }
    }
    Ok(file_engine)
}

/// `--throttle`: the kernel's cgroup limits on the block devices, checked now (applied before the workers).
fn throttle_devices(job: &JobSpec, targets: &[PreparedTarget]) -> Result<Option<Vec<(String, u32, u32)>>> {
    if job.throttle.is_none() {
        return Ok(None);
    }
    let mut devs = Vec::new();
    let probes = targets.iter().map(|t| &t.probe);
    for p in probes.filter(|p| !matches!(p.kind, TargetKind::Mem | TargetKind::Null | TargetKind::Sim)) {
        let (major, minor) = iolab_device::throttle::device_numbers(&p.name).map_err(Error::Throttle)?;
        devs.push((p.name.clone(), major, minor));
    }
    if devs.is_empty() {
        return Err(Error::usage("--throttle limits block devices, but this job has none (emulated targets have link: and sim: parameters instead)"));
    }
    Ok(Some(devs))
}

#[cfg(test)]
mod tests {
    use super::DryRun;

    fn dry_run(job: &str) -> DryRun {
        let job = iolab_spec::JobSpec::from_toml(job, "j").unwrap();
        let plan =
            iolab_plan::Plan::from_spec(&job, Some(&iolab_spec::TargetSpec::Null { size_bytes: 1 << 30 }))
                .unwrap();
        DryRun {
            plan,
            regions: vec![],
            file_engine: iolab_spec::EngineKind::Sync,
            targets: vec![],
            exchange: None,
        }
    }

    #[test]
    fn planned_time_is_ramp_and_duration_and_unknown_for_a_count() {
        assert_eq!(dry_run("duration = \"10s\"\nramp = \"1s\"\n").planned_s(), Some(11.0));
        assert_eq!(dry_run("ios = 1000\n").planned_s(), None);
    }
}
