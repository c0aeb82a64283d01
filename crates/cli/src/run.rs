//! `iolab run`: spec -> plan -> probe targets -> bind -> open -> workers -> result -> output.
//!
//! Everything that can reject the user's input runs before anything is created or written: the job is parsed
//! and planned, every target is probed (no side effects) and the plan is bound to the targets' sizes and
//! sector sizes. Only then are files created and filled, and workers started.

use crate::args::RunArgs;
use crate::env;
use anyhow::{bail, Context, Result};
use iolab_engine::{WorkerEvent, WorkerOutput, WorkerSetup};
use iolab_plan::{Plan, TargetGeometry};
use iolab_report::{
    Cpu, Depth, Env, ErrorSummary, GroupResult, OpSet, RateResult, RunResult, TargetEnv, WorkerResult,
};
use iolab_spec::{ClockKind, EngineKind, JobSpec, TargetSpec};
use iolab_stats::{IntervalStats, OpStats, TimePoint, TimeSeries, Warning};
use iolab_device::{OpenRequest, TargetKind};
use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Barrier};
use std::time::{Duration, Instant};

/// Size of the default scratch file.
const SCRATCH_SIZE: u64 = 1 << 30;

/// Marks an error as the user's (exit code 2): bad input, configuration, environment.
#[derive(Debug)]
pub struct UsageError;
impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("usage")
    }
}
impl std::error::Error for UsageError {}

pub fn usage<E: std::fmt::Display>(e: E) -> anyhow::Error {
    anyhow::Error::new(UsageError).context(e.to_string())
}

/// How a run ended, for the exit code.
pub enum Outcome {
    /// Finished; no I/O errors.
    Ok,
    /// Finished, but I/O errors occurred.
    IoErrors,
    /// Finished, but the verdict is FAIL (thresholds not met).
    Fail,
}

fn has_any_target(job: &JobSpec) -> bool {
    job.forced.target.is_some()
        || job.defaults.target.is_some()
        || job.worker_tables.iter().any(|w| w.layer.target.is_some())
}

/// A callback on each finished interval (index, all workers merged); `true` ends the measurement, complete.
pub type IntervalHook<'a> = &'a mut dyn FnMut(u64, &TimePoint) -> bool;

/// How [`execute`] runs: everything that is not part of the job itself.
pub struct ExecOptions<'a> {
    /// Time-series interval, ns (at least 10 ms).
    pub interval_ns: u64,
    /// Print nothing but errors.
    pub quiet: bool,
    /// Show the live line on a terminal.
    pub live: bool,
    /// Called with each finished interval of the whole run (all workers merged) and its index; returning
    /// `true` ends the measurement there, complete (not partial): steady-state detection, search steps.
    pub on_interval: Option<IntervalHook<'a>>,
    /// `iolab verify`: check the targets against a journal or for self-consistency (the job only reads).
    pub check: Option<crate::integrity::CheckMode>,
}

/// What [`execute`] produced.
pub enum Executed {
    /// `--dry-run`: the resolved job, nothing created or changed.
    DryRun(serde_json::Value),
    /// A finished (or interrupted, `partial`) run.
    Done(Box<RunResult>),
}

/// Runs `iolab run`: builds the job from the arguments, executes it, prints and writes the result.
pub fn run(args: &RunArgs) -> Result<Outcome> {
    if args.profile.find_max {
        return crate::profile::find_max(args);
    }
    let job = build_job(args)?;
    let judged = job.clone();
    let interval_ns = parse_interval(&args.interval)?;
    let _scratch_guard = iolab_device::ScratchGuard;
    let mut opts = ExecOptions {
        interval_ns,
        quiet: args.quiet,
        live: !args.quiet && std::io::stderr().is_terminal(),
        on_interval: None,
        check: None,
    };
    let steady = crate::sweep::steady_rule(&args.steady)?;
    if let (Some(_), Some(d)) = (&steady, &args.duration) {
        return Err(usage(format!("'--duration {d}' and '--steady-state' both bound the run; a steady-state run lasts until steady or '--steady-state-limit'")));
    }
    // The catalog opens before anything is created or run: a bad one is an exit-2 error with nothing done.
    let saver = crate::catalog_cmd::Saver::open(&args.catalog, args.quiet, args.dry_run)?;
    let result = match (&steady, args.dry_run) {
        (Some(rule), false) => {
            let (mut r, ss) = crate::sweep::run_until_steady(job, rule, interval_ns, opts.quiet, opts.live)?;
            r.steady_state = Some(ss);
            r
        }
        _ => match execute(job, args.dry_run, &mut opts)? {
            Executed::DryRun(mut doc) => {
                if let Some(sizing) = crate::profile::sizing_json(&judged) {
                    doc["exchange"] = sizing;
                }
                write_out("-", &serde_json::to_string_pretty(&doc)?)?;
                return Ok(Outcome::Ok);
            }
            Executed::Done(r) => r,
        },
    };
    let mut result = result;
    crate::profile::judge(&judged, &args.profile, &mut result);
    let saved = crate::catalog_cmd::save(
        saver.as_ref(),
        iolab_catalog::EntryKind::Run,
        &iolab_report::to_json(&result),
    );
    output(&result, args.quiet, args.json.as_deref(), args.csv.as_deref())?;
    saved?;
    Ok(outcome_of(&result))
}

/// The exit code a result deserves: bad data or I/O errors first, then a failed verdict.
pub fn outcome_of(result: &RunResult) -> Outcome {
    if result.errors.total > 0 || result.verify.as_ref().is_some_and(|v| v.mismatches > 0) {
        Outcome::IoErrors
    } else if result.verdict.as_ref().is_some_and(|v| !v.pass) {
        Outcome::Fail
    } else {
        Outcome::Ok
    }
}

/// The job `iolab run` asked for: the job file, then the command-line flags on top.
pub fn build_job(args: &RunArgs) -> Result<JobSpec> {
    let mut job = match (&args.job, crate::profile::load(&args.profile)?) {
        (Some(_), Some(_)) => {
            return Err(usage("give a job file or --profile NAME, not both (`iolab profiles show NAME > job.toml` makes a job file to edit)"))
        }
        (Some(path), None) => JobSpec::from_file(path).map_err(usage)?,
        (None, Some(job)) => job,
        (None, None) => JobSpec::default(),
    };
    let cli = args.to_overrides().map_err(usage)?;
    let given: Vec<String> = cli.targets.keys().cloned().collect();
    job.check_target_names(&given).map_err(usage)?;
    job.apply_overrides(&cli);
    crate::loadgen::apply_flags(&args.loadgen, &mut job).map_err(usage)?;
    crate::profile::resolve(&mut job, &args.profile)?;
    Ok(job)
}

/// Parses `--interval`.
pub fn parse_interval(text: &str) -> Result<u64> {
    iolab_spec::units::parse_duration_ns(text).ok().filter(|&n| n >= 10_000_000).ok_or_else(|| {
        usage(format!(
            "invalid value '{text}' for '--interval': expected a duration of at least 10ms, e.g. '1s'"
        ))
    })
}

/// Prints the text summary (unless quiet or stdout carries JSON/CSV) and writes `--json` / `--csv`.
pub fn output(result: &RunResult, quiet: bool, json: Option<&str>, csv: Option<&str>) -> Result<()> {
    if !quiet && json != Some("-") && csv != Some("-") {
        write_out("-", &iolab_report::render_text(result))?;
    }
    if let Some(path) = json {
        write_out(path, &iolab_report::to_json(result))
            .with_context(|| format!("writing --json '{path}'"))?;
    }
    if let Some(path) = csv {
        write_out(path, &iolab_report::timeseries_csv(result))
            .with_context(|| format!("writing --csv '{path}'"))?;
    }
    Ok(())
}

/// The scratch file for the default target (`role` None) or for a named target without a path.
fn scratch_path(role: Option<&str>) -> String {
    let dir = std::env::var("IOLAB_SCRATCH_DIR").unwrap_or_else(|_| ".".into());
    let dir = dir.trim_end_matches('/');
    match role {
        None => format!("{dir}/iolab-scratch-{}.dat", std::process::id()),
        Some(r) => format!("{dir}/iolab-scratch-{}-{r}.dat", std::process::id()),
    }
}

/// Runs one job: plan, probe, bind, open, workers, result. Scratch files it creates stay until the caller's
/// [`iolab_device::ScratchGuard`] drops (a sweep reuses them from point to point). Ctrl-C ends the run with a
/// partial result; [`crate::signals::stop_requested`] tells the caller.
pub fn execute(mut job: JobSpec, dry_run: bool, opts: &mut ExecOptions<'_>) -> Result<Executed> {
    let quiet = opts.quiet;
    let interval_ns = opts.interval_ns;
    // 2. The default target: a scratch file iolab creates and removes; likewise for each named target
    // without a path.
    let mut scratch_specs: Vec<TargetSpec> = Vec::new();
    for (name, t) in job.targets.iter_mut() {
        if t.spec.is_none() {
            let spec = TargetSpec::Path { path: scratch_path(Some(name)) };
            scratch_specs.push(spec.clone());
            t.spec = Some(spec);
            t.size = t.size.or(Some(SCRATCH_SIZE));
        }
    }
    let scratch_target = if has_any_target(&job) {
        None
    } else {
        let spec = TargetSpec::Path { path: scratch_path(None) };
        scratch_specs.push(spec.clone());
        Some(spec)
    };

    // 3. Plan.
    let mut plan = Plan::from_spec(&job, scratch_target.as_ref()).map_err(usage)?;
    let mut warnings: Vec<Warning> = Vec::new();

    // 4. Engine for files and devices.
    let has_paths = plan.targets.iter().any(|t| !t.spec.is_virtual());
    let mut file_engine = plan.engine;
    if has_paths {
        match plan.engine {
            EngineKind::Auto => {
                if let Err(e) = iolab_engine::uring::probe() {
                    let reason = e.to_string().lines().next().unwrap_or("io_uring unavailable").to_string();
                    if !quiet {
                        crate::progress::notice(
                            opts.live,
                            &format!("iolab: io_uring unavailable ({reason}); using the sync engine"),
                        );
                    }
                    warnings.push(Warning::EngineFallback { reason });
                    file_engine = EngineKind::Sync;
                } else {
                    file_engine = EngineKind::IoUring;
                }
            }
            EngineKind::IoUring => iolab_engine::uring::probe().map_err(usage)?,
            EngineKind::Sync => {}
        }
        if file_engine == EngineKind::Sync {
            let deep = plan.workers.iter().map(|w| w.qd).max().unwrap_or(1);
            if deep > 1 {
                warnings.push(Warning::SyncEngineDepth { requested: deep });
                for w in &mut plan.workers {
                    w.qd = 1;
                }
            }
        }
    }

    // 5. Probe every target (no side effects), then bind the plan to their geometry.
    let mut requests: Vec<OpenRequest> = plan
        .targets
        .iter()
        .map(|t| {
            let scratch = scratch_specs.contains(&t.spec);
            OpenRequest {
                spec: t.spec.clone(),
                direct: plan.direct,
                writes: t.writes,
                create_size: t.create_size.or(if scratch { Some(SCRATCH_SIZE) } else { None }),
                scratch,
                allow_write_device: plan.allow_write_device,
                destroy_data: plan.destroy_data,
                fill_progress: None,
            }
        })
        .collect();
    let mut probes = Vec::new();
    for r in &requests {
        probes.push(iolab_device::probe(r).map_err(usage)?);
    }
    let geometry: Vec<TargetGeometry> = probes
        .iter()
        .map(|p| TargetGeometry {
            size_bytes: p.will_extend_to.unwrap_or(p.size_bytes),
            block_bytes: p.logical_block_size,
        })
        .collect();
    let regions = plan.bind(&geometry).map_err(usage)?;
    crate::integrity::check_job(&job, &plan, &regions, opts.check.as_ref())?;
    crate::layers::check_cache_dev(&plan, &job.cache, &regions)?;
    // `--throttle`: the kernel's cgroup limits on the block devices, checked now, applied before the workers.
    let throttle_devices = match &job.throttle {
        None => None,
        Some(_) => {
            let mut devs = Vec::new();
            for p in probes
                .iter()
                .filter(|p| !matches!(p.kind, TargetKind::Mem | TargetKind::Null | TargetKind::Sim))
            {
                let (major, minor) = crate::throttle::device_numbers(&p.name)
                    .map_err(|e| usage(format!("--throttle: {e:#}")))?;
                devs.push((p.name.clone(), major, minor));
            }
            if devs.is_empty() {
                return Err(usage("--throttle limits block devices, but this job has none (emulated targets have link: and sim: parameters instead)"));
            }
            Some(devs)
        }
    };

    if dry_run {
        let doc = serde_json::json!({
            "plan": plan,
            "regions": regions,
            "file_engine": file_engine,
            "targets": probes,
        });
        return Ok(Executed::DryRun(doc));
    }

    // 6. Open (create and fill where needed). Scratch files are removed when the caller's guard drops, or by
    // the signal handler.
    // With live bars the handler stays silent: the bars are cleared first, then `progress` says "stopping".
    let stop = crate::signals::stop_flag(quiet || opts.live);
    if stop.load(Ordering::Relaxed) {
        bail!(usage("interrupted"));
    }
    let finish = Arc::new(AtomicBool::new(false));
    let mut bars = crate::progress::RunBars::new(
        opts.live,
        crate::progress::RunShape {
            ramp_s: plan.ramp_ns as f64 / 1e9,
            duration_s: plan.duration_ns.map(|d| d as f64 / 1e9),
            ios: plan.ios,
            bytes: plan.bytes,
            virtual_time: plan.clock == ClockKind::Virtual,
        },
    );
    let mut opened = Vec::new();
    for (r, p) in requests.iter_mut().zip(&probes) {
        if (p.will_create || p.will_extend_to.is_some()) && !quiet {
            let verb = if p.will_create { "creating" } else { "extending" };
            let size_bytes = p.will_extend_to.unwrap_or(p.size_bytes);
            crate::progress::notice(
                opts.live,
                &format!(
                    "iolab: {verb} '{}' ({}), writing data so reads never hit holes...",
                    p.name,
                    iolab_report::format_bytes(size_bytes)
                ),
            );
            r.fill_progress = bars.fill_hook(verb, &p.name, size_bytes);
        }
        let t =
            iolab_device::open(r).map_err(usage).with_context(|| format!("opening target '{}'", p.name))?;
        if stop.load(Ordering::Relaxed) {
            bail!(usage("interrupted while preparing targets"));
        }
        opened.push(t);
    }
    let files: Vec<Option<Arc<std::fs::File>>> =
        opened.iter_mut().map(|t| t.file.take().map(Arc::new)).collect();

    let throttle = match (&job.throttle, &throttle_devices) {
        (Some(spec), Some(devs)) => {
            let guard =
                crate::throttle::apply(spec, devs).map_err(|e| usage(format!("--throttle: {e:#}")))?;
            if !quiet {
                crate::progress::notice(
                    opts.live,
                    &format!("iolab: throttled: {}", crate::throttle::describe(&guard)),
                );
            }
            Some(guard)
        }
        _ => None,
    };
    // 7. Emulated devices, links and the cache, verification and faults; then the workers.
    let mut layers = crate::layers::Layers::build(&plan, &job.cache, &regions, &mut warnings)?;
    // `kill -USR1`: flush this run's write-back cache on demand, until the guard drops with the run.
    let _flush_guard = layers.cache.as_ref().map(|rc| crate::flush_signal::register(rc.cache.clone()));
    let run_id_bits = run_id_bits(plan.seed);
    let integrity = crate::integrity::RunIntegrity::build(
        &job,
        &plan,
        &regions,
        (&geometry, &files),
        opts.check.as_ref(),
        run_id_bits,
    )?;
    let epoch = Instant::now();
    let barrier = Arc::new(Barrier::new(plan.workers.len() + 1));
    let (tx, rx) = mpsc::channel::<WorkerEvent>();
    let mut handles = Vec::new();
    for (w, wregions) in plan.workers.iter().zip(&regions) {
        let (engine, links, cache) = layers.worker(w, &opened, file_engine == EngineKind::Sync)?;
        let (verify, faults) = integrity.worker(w, wregions, &stop);
        let setup = WorkerSetup {
            plan: w.clone(),
            regions: wregions.clone(),
            // A real cache device comes after the worker's own targets (iolab_engine::cache::RealDevice).
            files: w
                .targets
                .iter()
                .filter_map(|&i| files[i].clone())
                .chain(layers.cache_dev_file())
                .collect(),
            engine,
            links,
            cache,
            verify,
            faults,
            stop_on_error: integrity.stop_on_error,
            seed: plan.seed,
            ramp_ns: plan.ramp_ns,
            duration_ns: plan.duration_ns,
            interval_ns,
            epoch,
            stop: stop.clone(),
            finish: finish.clone(),
            barrier: barrier.clone(),
            events: tx.clone(),
        };
        let handle = std::thread::Builder::new()
            .name(format!("iolab-w{}", w.index))
            .spawn(move || iolab_engine::run_worker(setup))
            .context("starting a worker thread")?;
        handles.push(handle);
    }
    drop(tx);
    barrier.wait();
    let (started_at, started_unix_s) = env::now_rfc3339();
    let wall_start = Instant::now();
    let virtual_time = plan.clock == ClockKind::Virtual;

    // 8. Collect intervals while the workers run; show the ramp and measure bars on a terminal.
    let n_workers = plan.workers.len();
    let group_of: Vec<usize> = {
        let mut names: Vec<&str> = Vec::new();
        plan.workers
            .iter()
            .map(|w| match names.iter().position(|n| *n == w.group) {
                Some(i) => i,
                None => {
                    names.push(&w.group);
                    names.len() - 1
                }
            })
            .collect()
    };
    let n_groups = group_of.iter().max().map_or(0, |m| m + 1);
    // Per group: the largest per-interval mean response time of reads and of writes (ns).
    let mut group_interval_max: Vec<(Option<f64>, Option<f64>)> = vec![(None, None); n_groups];
    let mut pending: BTreeMap<u64, (IntervalStats, usize)> = BTreeMap::new();
    // The time series is built as intervals finish, so memory stays flat however long the run: each finished
    // interval becomes a bounded `TimeSeries` point, except the latest, held until the next one finishes (the
    // last interval of the window may be partial, and its length is known only at the end). Loadgen runs keep
    // each interval's transaction counts (24 bytes) for the backlog chart.
    let mut series = IntervalSeries::new(interval_ns, plan.loadgen.is_some());
    let mut group_pending: BTreeMap<(usize, u64), (IntervalStats, usize)> = BTreeMap::new();
    let ramp = Duration::from_nanos(plan.ramp_ns);
    let mut cpu_start = None;
    let mut next_mem_check = 0.0f64;
    loop {
        if stop.load(Ordering::Relaxed) {
            bars.stop();
        }
        bars.tick(wall_start.elapsed());
        if let Some(rc) = layers.cache.as_mut() {
            let t = wall_start.elapsed().as_secs_f64();
            if t >= next_mem_check {
                rc.watch_memory(t - ramp.as_secs_f64());
                next_mem_check = t + 1.0;
            }
        }
        if cpu_start.is_none() && (wall_start.elapsed() >= ramp || virtual_time) {
            cpu_start = Some((env::process_cpu_s(), Instant::now()));
        }
        match rx.recv_timeout(Duration::from_millis(100)) {
            Ok(WorkerEvent::Interval { stats, worker }) => {
                let k = stats.index;
                // Per-worker intervals are also per-group samples; a group's interval mean is the mean over
                // its workers' ops in that interval, which needs the group's sums, not the workers' means.
                if let Some(&g) = group_of.get(worker as usize) {
                    group_pending.entry((g, k)).or_insert_with(|| (IntervalStats::new(k), 0)).0.merge(&stats);
                    let e = group_pending.get_mut(&(g, k)).map(|e| {
                        e.1 += 1;
                        e.1
                    });
                    let members = group_of.iter().filter(|&&x| x == g).count();
                    if e == Some(members) {
                        if let Some((gs, _)) = group_pending.remove(&(g, k)) {
                            fold_group_interval(&mut group_interval_max[g], &gs);
                        }
                    }
                }
                let e = pending.entry(k).or_insert_with(|| (IntervalStats::new(k), 0));
                e.0.merge(&stats);
                e.0.cached = layers.cache.is_some();
                e.1 += 1;
                if e.1 == n_workers {
                    let (s, _) = pending.remove(&k).unwrap_or_else(|| (IntervalStats::new(k), 0));
                    bars.interval(&s, interval_ns as f64 / 1e9);
                    if let Some(cb) = opts.on_interval.as_mut() {
                        let p = TimePoint::from_interval(&s, interval_ns as f64 / 1e9);
                        if cb(k, &p) {
                            finish.store(true, Ordering::Relaxed);
                        }
                    }
                    series.finished(s);
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    drop(bars);
    let cpu_end = (env::process_cpu_s(), Instant::now());
    // Intervals some worker never closed (early stop) still count.
    for (k, (s, _)) in pending {
        series.leftover(k, &s);
    }
    for ((g, _), (s, _)) in group_pending {
        fold_group_interval(&mut group_interval_max[g], &s);
    }

    let mut outputs: Vec<WorkerOutput> = Vec::new();
    let mut first_error = None;
    for h in handles {
        match h.join() {
            Ok(Ok(o)) => outputs.push(o),
            Ok(Err(e)) => {
                if first_error.is_none() {
                    first_error = Some(e);
                }
            }
            Err(_) => bail!("a worker thread panicked (a bug in iolab); please report it"),
        }
    }
    if let Some(e) = first_error {
        return Err(usage(e));
    }
    outputs.sort_by_key(|o| o.index);

    // 9. The result.
    let measured_ns = outputs.iter().map(|o| o.window_ns).max().unwrap_or(0);
    let measured_s = measured_ns as f64 / 1e9;
    let mut read = OpStats::new();
    let mut write = OpStats::new();
    let mut workers = Vec::new();
    for (o, w) in outputs.iter().zip(&plan.workers) {
        read.merge(&o.read);
        write.merge(&o.write);
        let set = OpSet::from_stats(&o.read, &o.write, measured_s);
        workers.push(WorkerResult {
            index: w.index,
            name: w.name.clone(),
            qd: w.qd,
            targets: w.targets.iter().map(|&i| plan.targets[i].name.clone()).collect(),
            rate_iops: w.rate_iops,
            achieved_depth: set.all.littles_law_depth(),
            read: set.read,
            write: set.write,
            all: set.all,
        });
    }
    let total = OpSet::from_stats(&read, &write, measured_s);
    let partial = outputs.iter().any(|o| o.stopped_early);
    let mut groups = Vec::new();
    let mut histograms = iolab_report::HistogramSet::from_stats(&read, &write);
    for (g, interval_max) in group_interval_max.iter().enumerate() {
        let (mut gr, mut gw) = (OpStats::new(), OpStats::new());
        let mut members = 0u32;
        let mut targets: Vec<String> = Vec::new();
        let mut rate: Option<f64> = None;
        let mut depth = 0.0;
        let mut name = String::new();
        for ((o, w), wr) in outputs.iter().zip(&plan.workers).zip(&workers) {
            if group_of[w.index as usize] != g {
                continue;
            }
            name = w.group.clone();
            members += 1;
            gr.merge(&o.read);
            gw.merge(&o.write);
            depth += wr.achieved_depth;
            if let Some(r) = w.rate_iops {
                rate = Some(rate.unwrap_or(0.0) + r);
            }
            for t in &wr.targets {
                if !targets.contains(t) {
                    targets.push(t.clone());
                }
            }
        }
        let set = OpSet::from_stats(&gr, &gw, measured_s);
        histograms.groups.insert(
            name.clone(),
            iolab_report::GroupHistograms {
                read: iolab_report::encode_histogram(&gr),
                write: iolab_report::encode_histogram(&gw),
            },
        );
        groups.push(GroupResult {
            name,
            workers: members,
            targets,
            rate_iops: rate,
            read: set.read,
            write: set.write,
            all: set.all,
            achieved_depth: depth,
            read_interval_mean_max_ns: interval_max.0,
            write_interval_mean_max_ns: interval_max.1,
        });
    }

    let ((u0, s0), t0) = cpu_start.unwrap_or((env::process_cpu_s(), cpu_end.1));
    let ((u1, s1), t1) = cpu_end;
    let (user_s, sys_s) = ((u1 - u0).max(0.0), (s1 - s0).max(0.0));
    let total_ops = total.all.ops.max(1);
    let wall_s = t1.duration_since(t0).as_secs_f64().max(1e-9);
    let cpu = Cpu {
        user_s,
        sys_s,
        cpu_ns_per_io: (user_s + sys_s) * 1e9 / total_ops as f64,
        cores_used: (user_s + sys_s) / wall_s,
    };
    let requested_depth = plan.requested_depth();
    let achieved_depth: f64 = workers.iter().map(|w| w.achieved_depth).sum();
    let open_loop = plan.open_loop();

    let n_intervals = (measured_ns.div_ceil(interval_ns)).max(1);
    let (timeseries, txn_intervals) = series.finish(n_intervals, measured_s, layers.cache.is_some());
    let loadgen =
        crate::loadgen::result(&plan, &outputs, &txn_intervals, measured_s, interval_ns, &mut warnings);
    let interval_s = interval_ns as f64 / 1e9;
    let series: Vec<TimePoint> = timeseries.points().to_vec();

    // Warnings are data.
    if !open_loop
        && !crate::loadgen::rate_mode(&plan)
        && achieved_depth < iolab_stats::LOW_DEPTH_RATIO * requested_depth as f64
        && total.all.ops > 0
    {
        warnings.push(Warning::LowDepth { requested: requested_depth as f64, achieved: achieved_depth });
    }
    let full: Vec<f64> =
        series.iter().filter(|p| (p.interval_s - interval_s).abs() < 1e-9).map(|p| p.iops).collect();
    if !virtual_time {
        warnings.extend(iolab_stats::series_warnings(&full));
    }
    let path_probes: Vec<(&iolab_device::Probe, &iolab_plan::TargetPlan)> = probes
        .iter()
        .zip(&plan.targets)
        .filter(|(p, _)| matches!(p.kind, TargetKind::File | TargetKind::BlockDevice))
        .collect();
    if !plan.direct && !path_probes.is_empty() {
        warnings.push(Warning::BufferedIo);
        let mem_total = iolab_device::mem_total_bytes();
        for (p, t) in &path_probes {
            if t.reads && p.size_bytes < mem_total {
                warnings.push(Warning::PageCacheLikely {
                    target: p.name.clone(),
                    target_bytes: p.size_bytes,
                    mem_total_bytes: mem_total,
                });
            }
        }
    }
    for (p, _) in &path_probes {
        if p.tmpfs {
            warnings.push(Warning::TmpfsTarget { target: p.name.clone() });
        }
    }
    for t in &opened {
        if t.has_holes {
            warnings.push(Warning::FileHasHoles { target: t.probe.name.clone() });
        }
    }
    let rate = if open_loop {
        let offered: f64 = plan.workers.iter().filter_map(|w| w.rate_iops).sum();
        let backlog: u64 = outputs.iter().map(|o| o.backlog_at_end).sum();
        let arrival = format!("{:?}", plan.workers[0].arrival).to_lowercase();
        if total.all.iops < 0.95 * offered || backlog > 0 {
            warnings.push(Warning::RateNotSustained {
                offered_iops: offered,
                achieved_iops: total.all.iops,
                backlog_at_end: backlog,
            });
        }
        Some(RateResult {
            offered_iops: offered,
            arrival,
            achieved_iops: total.all.iops,
            backlog_at_end: backlog,
        })
    } else {
        None
    };
    let retries = outputs.iter().map(|o| o.retries).sum();
    let errors = ErrorSummary::from_stats(&read, &write, retries);
    if errors.total > 0 {
        warnings.push(Warning::Errors { count: errors.total });
    }
    let short = read.short + write.short;
    if short > 0 {
        warnings.push(Warning::ShortIo { count: short });
    }
    let saturated = read.lat.saturated() + write.lat.saturated();
    if saturated > 0 {
        warnings.push(Warning::HistogramSaturated { count: saturated });
    }
    if measured_s < iolab_stats::SHORT_RUN_S && !virtual_time && plan.duration_ns.is_some() {
        warnings.push(Warning::ShortRun { measured_s });
    }

    let cache = layers.cache.as_ref().map(|rc| {
        let sources: Vec<&iolab_engine::ReadSources> =
            outputs.iter().filter_map(|o| o.read_sources.as_deref()).collect();
        rc.result(&sources)
    });
    if let Some(c) = &cache {
        if !c.shrinks.is_empty() {
            warnings.push(Warning::CacheShrunk {
                times: c.shrinks.len() as u32,
                capacity_bytes: c.counters.capacity_bytes,
            });
        }
        if c.dirty_after_exit > 0 {
            warnings.push(Warning::CacheDirtyAtExit { lines: c.dirty_after_exit });
        }
    }
    for (t, sim) in plan.targets.iter().zip(&layers.sims) {
        if let Some(store) = sim.as_ref().and_then(|s| s.store.as_ref()).filter(|s| s.overflowed()) {
            warnings.push(Warning::EmulatedDataDropped {
                target: t.name.clone(),
                kept_bytes: store.stored_bytes(),
            });
        }
    }
    let (verify, inject) = integrity.results(&mut warnings)?;
    let engine_name = outputs.first().map(|o| o.engine).unwrap_or("none").to_string();
    let mut engine_features: Vec<String> = Vec::new();
    for o in &outputs {
        for f in &o.features {
            if !engine_features.contains(f) {
                engine_features.push(f.clone());
            }
        }
    }
    let target_env: Vec<TargetEnv> = opened
        .iter()
        .map(|t| TargetEnv {
            name: t.probe.name.clone(),
            kind: t.probe.kind.as_str().to_string(),
            size_bytes: t.probe.size_bytes,
            fs_type: t.probe.fs_type.clone(),
            device_model: t.probe.device_model.clone(),
            direct: t.direct,
            logical_block_size: t.probe.logical_block_size,
            created: t.created,
            scratch: t.scratch,
            fill_s: t.fill_s,
        })
        .collect();
    let config = serde_json::json!({ "plan": plan, "regions": regions, "interval_s": interval_s });
    let result = RunResult {
        schema: iolab_report::SCHEMA.to_string(),
        iolab_version: env!("CARGO_PKG_VERSION").to_string(),
        run_id: format!("{:08x}", run_id_bits as u32),
        started_at,
        started_unix_s,
        partial,
        seed: plan.seed,
        config,
        env: Env {
            hostname: env::hostname(),
            kernel: env::kernel(),
            cpu_model: env::cpu_model(),
            cpu_count: env::cpu_count(),
            mem_total_bytes: iolab_device::mem_total_bytes(),
            engine: engine_name,
            engine_features,
            targets: target_env,
            throttle: throttle.as_ref().and_then(|g| serde_json::to_value(g.applied()).ok()),
        },
        ramp_s: plan.ramp_ns as f64 / 1e9,
        measured_s,
        total,
        workers,
        cpu,
        depth: Depth { requested: requested_depth, achieved: achieved_depth },
        rate,
        warnings,
        timeseries: series,
        errors,
        groups,
        histograms: Some(histograms),
        verdict: None,
        loadgen,
        steady_state: None,
        cache,
        verify,
        inject,
    };

    drop(throttle);
    Ok(Executed::Done(Box::new(result)))
}

/// The run's time series, built as intervals finish (see `execute`).
struct IntervalSeries {
    series: TimeSeries,
    interval_s: f64,
    /// The latest finished interval, not yet a point.
    held: Option<IntervalStats>,
    /// Intervals before this one are points.
    next: u64,
    /// Intervals some worker never closed (an early stop), merged at the end.
    tail: BTreeMap<u64, IntervalStats>,
    /// Per interval, the transaction counts (loadgen runs only).
    txn: Option<BTreeMap<u64, iolab_stats::IntervalTxn>>,
}

impl IntervalSeries {
    fn new(interval_ns: u64, txn: bool) -> IntervalSeries {
        IntervalSeries {
            series: TimeSeries::new(iolab_stats::DEFAULT_TIMESERIES_CAP),
            interval_s: interval_ns as f64 / 1e9,
            held: None,
            next: 0,
            tail: BTreeMap::new(),
            txn: txn.then(BTreeMap::new),
        }
    }

    /// Interval `s` is complete (every worker sent it); workers send theirs in order, so these come in order.
    fn finished(&mut self, s: IntervalStats) {
        if let Some(t) = self.txn.as_mut() {
            t.insert(s.index, s.txn);
        }
        if let Some(h) = self.held.take() {
            while self.next < h.index {
                self.series.push(TimePoint::from_interval(&IntervalStats::new(self.next), self.interval_s));
                self.next += 1;
            }
            self.series.push(TimePoint::from_interval(&h, self.interval_s));
            self.next = h.index + 1;
        }
        self.held = Some(s);
    }

    /// Part of interval `k` that not every worker sent.
    fn leftover(&mut self, k: u64, s: &IntervalStats) {
        self.tail.entry(k).or_insert_with(|| IntervalStats::new(k)).merge(s);
    }

    /// The series over `n` intervals of the `measured_s` window (the last may be partial), and the transaction
    /// counts per interval.
    fn finish(
        mut self,
        n: u64,
        measured_s: f64,
        cached: bool,
    ) -> (TimeSeries, BTreeMap<u64, iolab_stats::IntervalTxn>) {
        if let Some(h) = self.held.take() {
            self.tail.entry(h.index).or_insert_with(|| IntervalStats::new(h.index)).merge(&h);
        }
        let mut txn = self.txn.take().unwrap_or_default();
        for k in self.next..n {
            let mut s = self.tail.remove(&k).unwrap_or_else(|| IntervalStats::new(k));
            s.cached = cached;
            txn.insert(k, s.txn);
            let this_s = (measured_s - k as f64 * self.interval_s).clamp(1e-9, self.interval_s);
            self.series.push(TimePoint::from_interval(&s, this_s));
        }
        (self.series, txn)
    }
}

/// Folds one group interval into the group's per-interval maxima of mean read and write response time.
fn fold_group_interval(max: &mut (Option<f64>, Option<f64>), s: &IntervalStats) {
    if s.read.ops > 0 {
        let m = s.read.lat.mean();
        max.0 = Some(max.0.map_or(m, |x: f64| x.max(m)));
    }
    if s.write.ops > 0 {
        let m = s.write.lat.mean();
        max.1 = Some(max.1.map_or(m, |x: f64| x.max(m)));
    }
}

/// Writes `text` to `path`, or to stdout for `-`.
pub fn write_out(path: &str, text: &str) -> std::io::Result<()> {
    if path == "-" {
        let mut out = std::io::stdout().lock();
        out.write_all(text.as_bytes())?;
        if !text.ends_with('\n') {
            out.write_all(b"\n")?;
        }
        out.flush()
    } else {
        std::fs::write(path, text)
    }
}

/// The run's id: from the seed, the time and the process, so two runs with one seed differ. Its low 32 bits
/// are the result's `run_id`; all 64 go into every verification header.
fn run_id_bits(seed: u64) -> u64 {
    let t =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
    let mut s = seed ^ t ^ (std::process::id() as u64) << 32;
    iolab_plan::rng::splitmix64(&mut s)
}
