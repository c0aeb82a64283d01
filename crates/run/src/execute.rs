//! One run, in order: prepare (everything that can reject the input), then open (create and fill where
//! needed), throttle, build the layers and the verifier, start the workers, collect their intervals, join
//! them and assemble the result. Scratch files stay until the caller's [`iolab_device::ScratchGuard`] drops
//! (a sweep reuses them from point to point).

use crate::assemble::{self, Finished};
use crate::collect::{self, Watch};
use crate::integrity::RunIntegrity;
use crate::layers::Layers;
use crate::observe::Started;
use crate::prepare::{self, Prepared};
use crate::record::RunTrace;
use crate::target::{PreparedTarget, RunTarget};
use crate::verdict::Judging;
use crate::{env, multi, Error, ExecOptions, Executed, IntervalHook, Observer, Result, RunShape, RunSync};
use iolab_device::{OpenRequest, OpenedTarget, Probe, ThrottleGuard};
use iolab_engine::{
    WorkerControl, WorkerEvent, WorkerOutcome, WorkerOutput, WorkerSetup, WorkerTask, WorkerTools,
};
use iolab_plan::sizing::DataKept;
use iolab_spec::{EngineKind, Prealloc};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Barrier};
use std::thread::JoinHandle;
use std::time::Instant;

/// The run's interval. On virtual time, a window of known length (the duration, or a timed replay's span)
/// with more intervals than the bounded time series holds has its interval doubled until it fits: the series
/// would merge that many neighbours anyway, and every interval costs its wall time, so a month of virtual
/// time would otherwise take minutes. Said in a notice when widened.
fn widened_interval(
    plan: &iolab_plan::Plan,
    replay: Option<&crate::replay::ReplaySource>,
    observer: &mut dyn crate::Observer,
) -> u64 {
    let interval_ns = plan.interval_ns;
    let replay_span =
        || replay.and_then(|r| Some(r.records.iter().map(|x| x.start_ns).max()? as f64 / r.speed?));
    let span_ns = plan.duration_ns.map(|d| d as f64).or_else(replay_span);
    let Some(span_ns) = span_ns.filter(|_| plan.clock == iolab_spec::ClockKind::Virtual) else {
        return interval_ns;
    };
    let cap = iolab_stats::DEFAULT_TIMESERIES_CAP as f64;
    let mut widened = interval_ns.max(1);
    while span_ns / widened as f64 > cap && widened < u64::MAX / 2 {
        widened *= 2;
    }
    if widened != interval_ns {
        observer.notice(&format!(
            "virtual time: intervals of {} s (not {} s), so the {:.0} s window has at most {} of them",
            widened as f64 / 1e9,
            interval_ns as f64 / 1e9,
            span_ns / 1e9,
            cap
        ));
    }
    widened
}

/// Runs one job: plan, probe, bind, open, workers, result. With `dry_run`, stops after the checks and returns
/// the resolved job. Raising `opts.stop` ends the run with a partial result; raised before the targets are
/// open, the run does not start ("interrupted").
pub fn execute(job: iolab_spec::JobSpec, dry_run: bool, opts: &mut ExecOptions<'_>) -> Result<Executed> {
    let judging = Judging::of(&job);
    match run(job, dry_run, opts).map_err(|e| judging.name_sizing_flags(e))? {
        Executed::Done { mut result, unwritten } => {
            result.verdict = judging.verdict(&result);
            Ok(Executed::Done { result, unwritten })
        }
        dry => Ok(dry),
    }
}

/// [`execute`] before the verdict: prepare, stage, start, collect, join, assemble.
fn run(job: iolab_spec::JobSpec, dry_run: bool, opts: &mut ExecOptions<'_>) -> Result<Executed> {
    let ExecOptions { on_interval, check, stop, observer, gate, sync, replay } = opts;
    let sync = sync.clone();
    let sync = sync.as_deref();
    let mut p = prepared(job, sync, (replay.as_ref(), check.as_ref()), gate, &mut **observer)?;
    if dry_run {
        return Ok(Executed::DryRun(Box::new(p.dry_run())));
    }
    // Before the fill: every rank is still going (a Ctrl-C on one ends the run on all).
    let go = if stop.load(Ordering::Relaxed) { Err(Error::usage("interrupted")) } else { Ok(()) };
    agreed(sync, "fill", go)?;
    let mut shown = Started::new(&mut **observer, &RunShape::of(&p.plan));
    let mut staged = stage(&mut p, sync, stop, check.as_ref(), &mut *shown)?;
    // Before the ramp: the ranks release their workers at one instant.
    let released_unix_s = sync.map(multi::start_together);
    p.plan.interval_ns = widened_interval(&p.plan, replay.as_ref(), &mut *shown);
    let running = start(&p, &staged, replay.as_ref(), stop)?;
    // Collect intervals while the workers run; the observer shows the ramp and measure phases.
    let watch = Watch {
        stop,
        finish: &running.finish,
        observer: &mut *shown,
        on_interval: on_interval.as_deref_mut().map(|h| h as IntervalHook<'_>),
        cache: staged.layers.cache.as_mut(),
        ranks: sync,
    };
    let mut collected = collect::collect(&p.plan, &running.rx, watch);
    drop(shown);
    let cpu_end = (env::process_cpu_s(), Instant::now());
    let disks_at_end = iolab_device::diskstats::read();
    collected.close_pending();
    let Joined { outputs, unwritten, replaying, started } = join(running, &mut **observer);
    let done_unix_s = multi::unix_now();
    let outputs = multi::done(sync, outputs, collected.announced)?;
    let lag_histograms: Vec<_> = outputs.iter().filter_map(|o| o.lag.clone()).collect();
    let target_names: Vec<String> = p.plan.targets.iter().map(|t| t.name.clone()).collect();
    let times = Times { cpu_end, disks_at_end, started };
    let run = finished(p, staged, (outputs, collected), times);
    let mut result = match (sync, released_unix_s) {
        (Some(s), Some(released)) => multi::result_over_ranks(s, run, (released, done_unix_s))?,
        _ => assemble::result(run)?,
    };
    if let (Some(src), Some(replaying)) = (replay.as_ref(), replaying) {
        add_replay(&mut result, src, replaying, &lag_histograms, &target_names);
    }
    Ok(Executed::Done { result: Box::new(result), unwritten })
}

/// The job planned, probed, bound and checked (over several hosts: rank 0's job for this rank, and every
/// rank agreed).
fn prepared(
    job: iolab_spec::JobSpec,
    sync: Option<&dyn RunSync>,
    (replay, check): (Option<&crate::replay::ReplaySource>, Option<&crate::CheckMode>),
    gate: &iolab_device::WriteGate,
    observer: &mut dyn Observer,
) -> Result<Prepared> {
    let job = match sync {
        Some(s) => multi::share_job(s, job)?,
        None => job,
    };
    if let (Some(s), Some(src)) = (sync, replay) {
        multi::one_host_replay(s, &src.path)?;
    }
    agreed(sync, "prepare", prepare::prepare(job, check, gate, observer))
}

/// When a run's workers started and were done.
struct Times {
    /// Process CPU time and instant when the workers were done.
    cpu_end: ((f64, f64), Instant),
    /// The block devices' counters then.
    disks_at_end: BTreeMap<String, iolab_device::diskstats::Counters>,
    /// When the workers started: RFC 3339 and Unix seconds.
    started: (String, f64),
}

/// What a run left once its workers are joined, for [`assemble`].
fn finished(
    p: Prepared,
    staged: Staged,
    (outputs, collected): (Vec<WorkerOutput>, collect::Collected),
    times: Times,
) -> Finished {
    let layouts = crate::target::layouts_after(&p.plan, &staged.targets, &outputs);
    let Prepared { plan, regions, warnings, .. } = p;
    let Staged { targets, throttle, layers, integrity, run_id_bits } = staged;
    let Times { cpu_end, disks_at_end, started: (started_at, started_unix_s) } = times;
    Finished {
        plan,
        regions,
        targets,
        outputs,
        layouts,
        layers,
        integrity,
        throttle,
        collected,
        cpu_end,
        disks_at_end,
        started_at,
        started_unix_s,
        run_id_bits,
        warnings,
    }
}

/// The result's `replay` block: the workers' ops and lags together, and a timed replay's depth left to the
/// trace (no low-depth warning: `--qd` only bounds it).
fn add_replay(
    result: &mut iolab_report::RunResult,
    src: &crate::replay::ReplaySource,
    (ops, skipped): Replaying,
    lags: &[Box<iolab_stats::LatencyHistogram>],
    target_names: &[String],
) {
    let mut lag = iolab_stats::LatencyHistogram::new();
    for l in lags {
        lag.merge(l);
    }
    let replayed = ops.iter().map(|o| o.ops.len() as u64).sum();
    result.replay = Some(crate::replay::result(src, (replayed, skipped), &lag, target_names));
    if src.speed.is_some() {
        result.warnings.retain(|w| !matches!(w, iolab_stats::Warning::LowDepth { .. }));
    }
}

/// What a run is made of once its targets are open, before its workers start.
struct Staged {
    targets: Vec<RunTarget>,
    throttle: Option<ThrottleGuard>,
    layers: Layers,
    integrity: RunIntegrity,
    run_id_bits: u64,
}

/// Opens (creates, fills) the targets, takes their layouts, applies the throttle, builds the layers and the
/// verification and faults; over several hosts, each step agreed by every rank.
fn stage(
    p: &mut Prepared,
    sync: Option<&dyn RunSync>,
    stop: &Arc<AtomicBool>,
    check: Option<&crate::CheckMode>,
    shown: &mut dyn Observer,
) -> Result<Staged> {
    let opened = open_targets(&mut p.targets, stop, shown);
    let opened = match sync {
        Some(s) => multi::agree_opened(s, opened, &target_paths(p))?,
        None => opened?,
    };
    // The file targets' extents, now that they are prepared: the workers count I/Os against them.
    let prepared = std::mem::take(&mut p.targets);
    let targets: Vec<RunTarget> =
        prepared.into_iter().zip(opened).map(|(t, o)| RunTarget::new(t, o, &p.plan)).collect();
    let throttle = agreed(sync, "throttle", apply_throttle(p, shown))?;
    // Emulated devices, links and the cache, verification and faults; then the workers.
    let layers = Layers::build(&p.plan, &p.job.cache, &p.regions, p.job.integrity.verifying());
    let layers = agreed(sync, "layers", layers)?;
    let emulated = p.plan.targets.iter().any(|t| matches!(t.spec.base(), iolab_spec::TargetSpec::Sim(_)));
    if emulated && layers.data == DataKept::Verify {
        shown.notice(
            "iolab: emulated devices and the cache keep written data in memory: --verify reads it back",
        );
    }
    if let Some(rc) = &layers.cache {
        shown.cache_started(&rc.cache);
    }
    let run_id_bits = run_id_bits(p.plan.seed);
    let journal = (check, p.journal_dir.as_ref());
    let integrity = RunIntegrity::build(&p.job, &p.plan, &p.regions, &targets, journal, run_id_bits);
    let integrity = agreed(sync, "integrity", integrity)?;
    Ok(Staged { targets, throttle, layers, integrity, run_id_bits })
}

/// `r` on this host alone; over several hosts, `r` when every rank succeeded at `stage`, or every rank's
/// error naming the rank that failed ([`multi::agree`]).
fn agreed<T>(sync: Option<&dyn RunSync>, stage: &str, r: Result<T>) -> Result<T> {
    match sync {
        Some(s) => multi::agree(s, stage, r),
        None => r,
    }
}

/// Per run target, its path when it is a file or device.
fn target_paths(p: &Prepared) -> Vec<Option<String>> {
    p.plan
        .targets
        .iter()
        .map(|t| match t.spec.base() {
            iolab_spec::TargetSpec::Path { path } => Some(path.clone()),
            _ => None,
        })
        .collect()
}

/// Opens every target, creating and filling where needed (with a notice and the observer's progress).
fn open_targets(
    targets: &mut [PreparedTarget],
    stop: &Arc<AtomicBool>,
    obs: &mut dyn Observer,
) -> Result<Vec<OpenedTarget>> {
    let mut opened = Vec::new();
    for PreparedTarget { request: r, probe: p, .. } in targets {
        // A Ctrl-C during a long fill stops it between chunks (what it created is removed).
        r.stop = Some(iolab_device::StopFlag(stop.clone()));
        announce_layout(r, p, obs);
        let t = iolab_device::open(r)
            .map_err(|e| Error::usage(e).context(format_args!("opening target '{}'", p.name)))?;
        if stop.load(Ordering::Relaxed) {
            return Err(Error::usage("interrupted while preparing targets"));
        }
        opened.push(t);
    }
    Ok(opened)
}

/// Says how a target about to be created or extended is laid out (`--prealloc`), and hooks the fill's
/// progress when there is one.
fn announce_layout(r: &mut OpenRequest, p: &Probe, obs: &mut dyn Observer) {
    if let iolab_spec::TargetSpec::Mem { size_bytes } = r.spec {
        // A RAM disk is committed page by page before the run: seconds for several GiB, said and shown.
        if size_bytes >= 1 << 30 {
            let size = iolab_report::format_bytes(size_bytes);
            obs.notice(&format!(
                "iolab: allocating '{}' ({size} of RAM, committed before the run)...",
                p.name
            ));
        }
        r.fill_progress = obs.fill_hook("allocating", &p.name, size_bytes);
        return;
    }
    if !p.will_create && p.will_extend_to.is_none() {
        return;
    }
    let verb = if p.will_create { "creating" } else { "extending" };
    let size_bytes = p.will_extend_to.unwrap_or(p.size_bytes);
    let how = match r.prealloc {
        Prealloc::Fallocate => "reserving it and writing data so reads never hit holes...",
        Prealloc::Write => {
            "writing data so reads never hit holes (allocated as written, --prealloc write)..."
        }
        Prealloc::Reserve => {
            "reserved and not written: unwritten extents the run's writes convert, as etcd's WAL (--prealloc reserve)"
        }
        Prealloc::None if p.will_create => {
            "empty: the run's own writes grow and allocate it (--prealloc none)"
        }
        Prealloc::None => "left as it is: the run's own writes grow and allocate the rest (--prealloc none)",
    };
    obs.notice(&format!("iolab: {verb} '{}' ({}), {how}", p.name, iolab_report::format_bytes(size_bytes)));
    if matches!(r.prealloc, Prealloc::Fallocate | Prealloc::Write) {
        r.fill_progress = obs.fill_hook(verb, &p.name, size_bytes);
    }
}

/// `--throttle`: applies the limits checked by `prepare`, with a notice saying what is in place.
fn apply_throttle(p: &Prepared, obs: &mut dyn Observer) -> Result<Option<ThrottleGuard>> {
    let (Some(spec), Some(devs)) = (&p.job.throttle, &p.throttle_devices) else { return Ok(None) };
    let guard = iolab_device::throttle::apply(spec, devs).map_err(Error::Throttle)?;
    obs.notice(&format!("iolab: throttled: {}", iolab_device::throttle::describe(&guard)));
    Ok(Some(guard))
}

/// The workers' threads: one per worker, or, on virtual time, one for all (coroutines on the run's timeline).
enum Threads {
    PerWorker(Vec<JoinHandle<WorkerOutcome>>),
    Together(JoinHandle<Vec<WorkerOutcome>>),
}

/// The workers, started: their threads, their events, the flag that ends the measurement complete, the
/// trace they record into, the replay's ops, and when they started (RFC 3339, Unix seconds).
struct Running {
    threads: Threads,
    rx: mpsc::Receiver<WorkerEvent>,
    finish: Arc<AtomicBool>,
    trace: Option<RunTrace>,
    replaying: Option<Replaying>,
    started: (String, f64),
}

/// A replay's ops per worker, and the trace's records skipped (by reason).
type Replaying = (Vec<Arc<iolab_engine::ReplayOps>>, std::collections::BTreeMap<String, u64>);

/// Starts the workers: one thread per worker (on virtual time, one thread for all), released together (the
/// barrier) once all exist.
fn start(
    p: &Prepared,
    staged: &Staged,
    replay: Option<&crate::replay::ReplaySource>,
    stop: &Arc<AtomicBool>,
) -> Result<Running> {
    let finish = Arc::new(AtomicBool::new(false));
    let trace = p.trace.as_ref().map(|out| RunTrace::start(out, &p.plan)).transpose()?;
    let replaying = replay.map(|src| {
        let (ops, skipped) = crate::replay::map(src, &p.plan.workers, &p.regions);
        (ops.into_iter().map(Arc::new).collect::<Vec<_>>(), skipped)
    });
    let together = staged.layers.on_timeline();
    // Workers on one thread pass no barrier of their own: their thread does, for all of them.
    let parties = if together { 2 } else { p.plan.workers.len() + 1 };
    let barrier = Arc::new(Barrier::new(parties));
    let own_barrier = Arc::new(Barrier::new(1));
    let (tx, rx) = mpsc::channel::<WorkerEvent>();
    let control = WorkerControl {
        epoch: Instant::now(),
        barrier: if together { own_barrier } else { barrier.clone() },
        stop: stop.clone(),
        finish: finish.clone(),
        stop_on_error: staged.integrity.stop_on_error,
        events: tx,
    };
    let replay_ops = replaying.as_ref().map(|(ops, _)| &ops[..]);
    let mut setups = Vec::new();
    let flows = iolab_engine::flow::FlowGroup::for_workers(&p.plan.workers);
    for (index, w) in p.plan.workers.iter().enumerate() {
        let mut task = WorkerTask::of(&p.plan, index, p.regions[index].clone());
        task.flow = flows[index].clone();
        task.boundaries = crate::target::boundaries(&staged.targets, &w.targets);
        task.replay = replay_ops.and_then(|r| r.get(w.index as usize)).cloned();
        let tools = tools(p, staged, w, trace.as_ref(), stop)?;
        setups.push(WorkerSetup { task, tools, control: control.clone() });
    }
    drop(control);
    let threads = spawn(setups, together, barrier)?;
    Ok(Running { threads, rx, finish, trace, replaying, started: env::now_rfc3339() })
}

/// What worker `w` does its I/O with: the engine, links and cache of the run's layers, its verification and
/// faults, its files (a real cache device after its own targets) and its trace recorder.
fn tools(
    p: &Prepared,
    staged: &Staged,
    w: &iolab_plan::WorkerPlan,
    trace: Option<&RunTrace>,
    stop: &Arc<AtomicBool>,
) -> Result<WorkerTools> {
    let layers = &staged.layers;
    let (engine, links, cache) = layers.worker(w, &staged.targets, p.file_engine == EngineKind::Sync)?;
    let (verify, faults) = staged.integrity.worker(w, &p.regions[w.index as usize], stop);
    // A real cache device comes after the worker's own targets (iolab_engine::cache::RealDevice).
    let own = w.targets.iter().filter_map(|&i| staged.targets[i].file.clone());
    let files = own.chain(layers.cache_dev_file()).collect();
    Ok(WorkerTools { engine, files, links, cache, verify, faults, trace: trace.map(|t| t.worker(w)) })
}

/// Spawns the workers' threads and releases them together once all exist.
fn spawn(setups: Vec<WorkerSetup>, together: bool, barrier: Arc<Barrier>) -> Result<Threads> {
    let spawn = |name: String| std::thread::Builder::new().name(name);
    let threads = if together {
        let b = barrier.clone();
        let h = spawn("iolab-timeline".into()).spawn(move || {
            b.wait();
            iolab_engine::run_on_timeline(setups)
        });
        Threads::Together(h.map_err(|e| Error::internal(e).context("starting the workers' thread"))?)
    } else {
        let mut handles = Vec::new();
        for setup in setups {
            let name = format!("iolab-w{}", setup.task.plan.index);
            let h = spawn(name).spawn(move || iolab_engine::run_worker(setup));
            handles.push(h.map_err(|e| Error::internal(e).context("starting a worker thread"))?);
        }
        Threads::PerWorker(handles)
    };
    barrier.wait();
    Ok(threads)
}

/// The workers, joined.
struct Joined {
    /// Their outputs in worker order, or the first worker's error.
    outputs: Result<Vec<WorkerOutput>>,
    /// The run's own outputs not written (`--trace`): the run was measured and its result stands.
    unwritten: Vec<String>,
    /// The replay's ops.
    replaying: Option<Replaying>,
    /// When they started: RFC 3339 and Unix seconds.
    started: (String, f64),
}

/// Joins the workers and finishes their trace.
fn join(running: Running, observer: &mut dyn Observer) -> Joined {
    let Running { threads, trace, replaying, started, .. } = running;
    let outputs = join_workers(threads);
    let mut unwritten = Vec::new();
    if let (Some(trace), Ok(local)) = (trace, &outputs) {
        let waits = local.iter().map(|o| o.trace_waits).sum();
        match trace.finish() {
            Ok(recorded) => observer.notice(&recorded.said(waits)),
            Err(e) => unwritten.push(e.to_string()),
        }
    }
    Joined { outputs, unwritten, replaying, started }
}

/// Joins the workers; their outputs in worker order, or the first worker's error.
fn join_workers(threads: Threads) -> Result<Vec<WorkerOutput>> {
    let panicked = || Error::internal("a worker thread panicked (a bug in iolab); please report it");
    let results = match threads {
        Threads::PerWorker(handles) => {
            handles.into_iter().map(|h| h.join().map_err(|_| panicked())).collect::<Result<Vec<_>>>()?
        }
        Threads::Together(h) => h.join().map_err(|_| panicked())?,
    };
    let mut outputs: Vec<WorkerOutput> = Vec::new();
    let mut first_error = None;
    for r in results {
        match r {
            Ok(o) => outputs.push(o),
            Err(e) => {
                if first_error.is_none() {
                    first_error = Some(e);
                }
            }
        }
    }
    if let Some(e) = first_error {
        return Err(Error::usage(e));
    }
    outputs.sort_by_key(|o| o.index);
    Ok(outputs)
}

/// The run's id: from the seed, the time and the process, so two runs with one seed differ. Its low 32 bits
/// are the result's `run_id`; all 64 go into every verification header.
fn run_id_bits(seed: u64) -> u64 {
    let t =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
    let mut s = seed ^ t ^ (std::process::id() as u64) << 32;
    iolab_rng::splitmix64(&mut s)
}
