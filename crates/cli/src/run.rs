//! `iolab run`: spec -> plan -> probe targets -> bind -> open -> workers -> result -> output.
//!
//! Everything that can reject the user's input runs before anything is created or written: the job is parsed
//! and planned, every target is probed (no side effects) and the plan is bound to the targets' sizes and
//! sector sizes. Only then are files created and filled, and workers started.

use crate::args::RunArgs;
use crate::env;
use anyhow::{bail, Context, Result};
use iolab_engine::{EngineChoice, WorkerEvent, WorkerOutput, WorkerSetup};
use iolab_plan::{Plan, TargetGeometry};
use iolab_report::{
    format_rate, Cpu, Depth, Env, ErrorSummary, OpSet, RateResult, RunResult, TargetEnv, WorkerResult,
};
use iolab_spec::{ClockKind, EngineKind, JobSpec, SimSpec, TargetSpec};
use iolab_stats::{IntervalStats, OpStats, TimePoint, TimeSeries, Warning};
use iolab_target::{OpenRequest, TargetKind};
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

fn usage<E: std::fmt::Display>(e: E) -> anyhow::Error {
    anyhow::Error::new(UsageError).context(e.to_string())
}

/// How a run ended, for the exit code.
pub enum Outcome {
    /// Finished; no I/O errors.
    Ok,
    /// Finished, but I/O errors occurred.
    IoErrors,
}

fn has_any_target(job: &JobSpec) -> bool {
    job.forced.target.is_some()
        || job.defaults.target.is_some()
        || job.worker_tables.iter().any(|w| w.layer.target.is_some())
}

/// Runs `iolab run`.
pub fn run(args: &RunArgs) -> Result<Outcome> {
    let quiet = args.quiet;
    // 1. Spec: job file, then flags on top.
    let mut job = match &args.job {
        Some(path) => JobSpec::from_file(path).map_err(usage)?,
        None => JobSpec::default(),
    };
    job.apply_overrides(&args.to_overrides().map_err(usage)?);
    let interval_ns = iolab_spec::units::parse_duration_ns(&args.interval)
        .ok()
        .filter(|&n| n >= 10_000_000)
        .ok_or_else(|| {
            usage(format!(
                "invalid value '{}' for '--interval': expected a duration of at least 10ms, e.g. '1s'",
                args.interval
            ))
        })?;

    // 2. The default target: a scratch file iolab creates and removes.
    let scratch_target = if has_any_target(&job) {
        None
    } else {
        let dir = std::env::var("IOLAB_SCRATCH_DIR").unwrap_or_else(|_| ".".into());
        let path = format!("{}/iolab-scratch-{}.dat", dir.trim_end_matches('/'), std::process::id());
        Some(TargetSpec::Path { path })
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
                        eprintln!("iolab: io_uring unavailable ({reason}); using the sync engine");
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
    let requests: Vec<OpenRequest> = plan
        .targets
        .iter()
        .map(|t| {
            let scratch = scratch_target.as_ref() == Some(&t.spec);
            OpenRequest {
                spec: t.spec.clone(),
                direct: plan.direct,
                writes: t.writes,
                create_size: t.create_size.or(if scratch { Some(SCRATCH_SIZE) } else { None }),
                scratch,
                allow_write_device: plan.allow_write_device,
                destroy_data: plan.destroy_data,
            }
        })
        .collect();
    let mut probes = Vec::new();
    for r in &requests {
        probes.push(iolab_target::probe(r).map_err(usage)?);
    }
    let geometry: Vec<TargetGeometry> = probes
        .iter()
        .map(|p| TargetGeometry {
            size_bytes: p.will_extend_to.unwrap_or(p.size_bytes),
            block_bytes: p.logical_block_size,
        })
        .collect();
    let regions = plan.bind(&geometry).map_err(usage)?;

    if args.dry_run {
        let doc = serde_json::json!({
            "plan": plan,
            "regions": regions,
            "file_engine": file_engine,
            "targets": probes,
        });
        println!("{}", serde_json::to_string_pretty(&doc)?);
        return Ok(Outcome::Ok);
    }

    // 6. Open (create and fill where needed). Scratch files are removed when this guard drops, or by the
    // signal handler.
    let stop = Arc::new(AtomicBool::new(false));
    crate::signals::install(stop.clone(), quiet);
    let _scratch_guard = iolab_target::ScratchGuard;
    let mut opened = Vec::new();
    for (r, p) in requests.iter().zip(&probes) {
        if (p.will_create || p.will_extend_to.is_some()) && !quiet {
            eprintln!(
                "iolab: {} '{}' ({}), writing data so reads never hit holes...",
                if p.will_create { "creating" } else { "extending" },
                p.name,
                iolab_report::format_bytes(p.will_extend_to.unwrap_or(p.size_bytes))
            );
        }
        let t =
            iolab_target::open(r).map_err(usage).with_context(|| format!("opening target '{}'", p.name))?;
        if stop.load(Ordering::Relaxed) {
            bail!(usage("interrupted while preparing targets"));
        }
        opened.push(t);
    }
    let files: Vec<Option<Arc<std::fs::File>>> =
        opened.iter_mut().map(|t| t.file.take().map(Arc::new)).collect();

    // 7. Workers.
    let epoch = Instant::now();
    let barrier = Arc::new(Barrier::new(plan.workers.len() + 1));
    let (tx, rx) = mpsc::channel::<WorkerEvent>();
    let mut handles = Vec::new();
    for (w, wregions) in plan.workers.iter().zip(&regions) {
        let first = &plan.targets[w.targets[0]].spec;
        let engine = match first {
            TargetSpec::Path { .. } => {
                if file_engine == EngineKind::Sync {
                    EngineChoice::Sync
                } else {
                    EngineChoice::Uring
                }
            }
            TargetSpec::Mem { .. } => EngineChoice::Mem(
                opened[w.targets[0]].mem.clone().context("mem target without a store (bug)")?,
            ),
            TargetSpec::Null { .. } => EngineChoice::Null,
            TargetSpec::Sim(SimSpec::Fixed { latency_ns, servers, .. }) => EngineChoice::SimFixed {
                latency_ns: *latency_ns,
                servers: *servers,
                virtual_clock: plan.clock == ClockKind::Virtual,
            },
        };
        let setup = WorkerSetup {
            plan: w.clone(),
            regions: wregions.clone(),
            files: w.targets.iter().filter_map(|&i| files[i].clone()).collect(),
            engine,
            seed: plan.seed,
            ramp_ns: plan.ramp_ns,
            duration_ns: plan.duration_ns,
            interval_ns,
            epoch,
            stop: stop.clone(),
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

    // 8. Collect intervals while the workers run; show a live line on a terminal.
    let live = !quiet && std::io::stderr().is_terminal();
    let n_workers = plan.workers.len();
    let mut pending: BTreeMap<u64, (IntervalStats, usize)> = BTreeMap::new();
    let mut finished_intervals: BTreeMap<u64, IntervalStats> = BTreeMap::new();
    let ramp = Duration::from_nanos(plan.ramp_ns);
    let mut cpu_start = None;
    let total_s = (plan.ramp_ns + plan.duration_ns.unwrap_or(0)) as f64 / 1e9;
    loop {
        if cpu_start.is_none() && (wall_start.elapsed() >= ramp || virtual_time) {
            cpu_start = Some((env::process_cpu_s(), Instant::now()));
        }
        match rx.recv_timeout(Duration::from_millis(100)) {
            Ok(WorkerEvent::Interval { stats, .. }) => {
                let k = stats.index;
                let e = pending.entry(k).or_insert_with(|| (IntervalStats::new(k), 0));
                e.0.merge(&stats);
                e.1 += 1;
                if e.1 == n_workers {
                    let (s, _) = pending.remove(&k).unwrap_or_else(|| (IntervalStats::new(k), 0));
                    if live {
                        let p = TimePoint::from_interval(&s, interval_ns as f64 / 1e9);
                        let elapsed = plan.ramp_ns as f64 / 1e9 + (k + 1) as f64 * interval_ns as f64 / 1e9;
                        eprint!(
                            "\r\x1b[2K[{elapsed:>5.0}s/{total_s:.0}s] {} IOPS  {:.1} MB/s  mean {}  p99 {}",
                            format_rate(p.iops, 0),
                            p.mb_s,
                            iolab_report::format_duration_ns(p.lat_mean_ns),
                            iolab_report::format_duration_ns(p.lat_p99_ns as f64)
                        );
                        let _ = std::io::stderr().flush();
                    }
                    finished_intervals.insert(k, s);
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if live && pending.is_empty() && finished_intervals.is_empty() && wall_start.elapsed() < ramp
                {
                    eprint!(
                        "\r\x1b[2K[ramp {:.0}s/{:.0}s]",
                        wall_start.elapsed().as_secs_f64(),
                        ramp.as_secs_f64()
                    );
                    let _ = std::io::stderr().flush();
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    if live {
        eprint!("\r\x1b[2K");
    }
    let cpu_end = (env::process_cpu_s(), Instant::now());
    // Intervals some worker never closed (early stop) still count.
    for (k, (s, _)) in pending {
        finished_intervals.entry(k).or_insert_with(|| IntervalStats::new(k)).merge(&s);
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

    let mut timeseries = TimeSeries::new(iolab_stats::DEFAULT_TIMESERIES_CAP);
    let interval_s = interval_ns as f64 / 1e9;
    let n_intervals = (measured_ns.div_ceil(interval_ns)).max(1);
    for k in 0..n_intervals {
        let s = finished_intervals.remove(&k).unwrap_or_else(|| IntervalStats::new(k));
        let this_s = (measured_s - k as f64 * interval_s).clamp(1e-9, interval_s);
        timeseries.push(TimePoint::from_interval(&s, this_s));
    }
    let series: Vec<TimePoint> = timeseries.points().to_vec();

    // Warnings are data.
    if !open_loop
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
    let path_probes: Vec<(&iolab_target::Probe, &iolab_plan::TargetPlan)> = probes
        .iter()
        .zip(&plan.targets)
        .filter(|(p, _)| matches!(p.kind, TargetKind::File | TargetKind::BlockDevice))
        .collect();
    if !plan.direct && !path_probes.is_empty() {
        warnings.push(Warning::BufferedIo);
        let mem_total = iolab_target::mem_total_bytes();
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
    let errors = ErrorSummary::from_stats(&read, &write);
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
        run_id: run_id(plan.seed, started_unix_s),
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
            mem_total_bytes: iolab_target::mem_total_bytes(),
            engine: engine_name,
            engine_features,
            targets: target_env,
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
    };

    // 10. Output.
    if !quiet && args.json.as_deref() != Some("-") && args.csv.as_deref() != Some("-") {
        print!("{}", iolab_report::render_text(&result));
    }
    if let Some(path) = &args.json {
        write_out(path, &iolab_report::to_json(&result))
            .with_context(|| format!("writing --json '{path}'"))?;
    }
    if let Some(path) = &args.csv {
        write_out(path, &iolab_report::timeseries_csv(&result))
            .with_context(|| format!("writing --csv '{path}'"))?;
    }
    Ok(if result.errors.total > 0 { Outcome::IoErrors } else { Outcome::Ok })
}

fn write_out(path: &str, text: &str) -> std::io::Result<()> {
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

fn run_id(seed: u64, t: f64) -> String {
    let mut s = seed ^ t.to_bits() ^ (std::process::id() as u64) << 32;
    format!("{:08x}", iolab_plan::rng::splitmix64(&mut s) as u32)
}
