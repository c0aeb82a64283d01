//! A finished run's worker outputs, merged into the result: per worker, per group (with their histograms),
//! the totals, the process's CPU time, the machine and targets (`env`), the open-loop rate, the loadgen,
//! cache, verification and injection sections, and the warnings ([`crate::warnings`]).

use crate::collect::{group_of, Collected};
use crate::integrity::RunIntegrity;
use crate::layers::Layers;
use crate::layout::TargetLayouts;
use crate::target::RunTarget;
use crate::warnings::{
    run_warnings, CacheFacts, DeviceShare, GroupLag, PathTarget, RateFacts, RunFacts, WriteCacheFacts,
};
use crate::{env, loadgen, Result};
use iolab_device::{TargetKind, ThrottleGuard};
use iolab_engine::WorkerOutput;
use iolab_plan::{Plan, Region};
use iolab_report::{
    Cpu, Depth, Env, ErrorSummary, GroupHistograms, GroupRate, GroupResult, HistogramSet, OpSet,
    PacingResult, RateResult, RunResult, TargetEnv, TargetResult, WorkerResult,
};
use iolab_spec::ClockKind;
use iolab_stats::{InFlightAtEnd, OpStats, TimePoint, Warning};
use std::time::Instant;

/// Everything a run left behind once its workers are joined.
pub(crate) struct Finished {
    /// The plan.
    pub plan: Plan,
    /// The bound regions.
    pub regions: Vec<Vec<Region>>,
    /// The run's targets, open.
    pub targets: Vec<RunTarget>,
    /// The workers' outputs, in worker order.
    pub outputs: Vec<WorkerOutput>,
    /// Per run target: the file's layout before and after the run, `None` for other targets.
    pub layouts: Vec<Option<TargetLayouts>>,
    /// Emulated devices, links, the cache.
    pub layers: Layers,
    /// Verification and faults.
    pub integrity: RunIntegrity,
    /// The throttle, released once the result is built.
    pub throttle: Option<ThrottleGuard>,
    /// What the collection loop gathered.
    pub collected: Collected,
    /// Process CPU time and instant when the workers were done.
    pub cpu_end: ((f64, f64), Instant),
    /// The block devices' counters (/proc/diskstats) then.
    pub disks_at_end: std::collections::BTreeMap<String, iolab_device::diskstats::Counters>,
    /// When the workers started: RFC 3339 and Unix seconds.
    pub started_at: String,
    /// Unix seconds of `started_at`.
    pub started_unix_s: f64,
    /// The run's id.
    pub run_id_bits: u64,
    /// Warnings so far.
    pub warnings: Vec<Warning>,
}

/// The merged read, write, flush and trim statistics of a set of workers.
struct Merged {
    read: OpStats,
    write: OpStats,
    flush: OpStats,
    trim: OpStats,
}

impl Merged {
    fn new() -> Merged {
        Merged { read: OpStats::new(), write: OpStats::new(), flush: OpStats::new(), trim: OpStats::new() }
    }

    /// Adds one worker's statistics.
    fn add(&mut self, o: &WorkerOutput) {
        self.read.merge(&o.read);
        self.write.merge(&o.write);
        self.flush.merge(&o.flush);
        self.trim.merge(&o.trim);
    }

    /// The digests: reads, writes, both, and flushes and trims when there were any.
    fn set(&self, measured_s: f64) -> OpSet {
        OpSet::from_stats(&self.read, &self.write, measured_s).with_others(
            &self.flush,
            &self.trim,
            measured_s,
        )
    }
}

/// The result of a finished run.
pub(crate) fn result(run: Finished) -> Result<RunResult> {
    let Finished { plan, outputs, collected, mut warnings, .. } = run;
    let interval_ns = plan.interval_ns;
    let measured_ns = outputs.iter().map(|o| o.window_ns).max().unwrap_or(0);
    let measured_s = measured_ns as f64 / 1e9;
    let (workers, all) = worker_results(&plan, &outputs, measured_s);
    let total = all.set(measured_s);
    let mut histograms = HistogramSet::from_stats(&all.read, &all.write);
    let groups = group_results(&plan, &outputs, &workers, &collected, measured_s, &mut histograms);
    debug_assert_adds_up(&total, &workers, &groups);
    let cpu = cpu(collected.cpu_start, run.cpu_end, total.all.ops);
    let requested_depth = plan.requested_depth();
    let achieved_depth: f64 = workers.iter().map(|w| w.achieved_depth).sum();
    let n_intervals = (measured_ns.div_ceil(interval_ns)).max(1);
    let (timeseries, txn_intervals) =
        collected.series.finish(n_intervals, measured_s, run.layers.cache.is_some());
    let loadgen = loadgen::result(&plan, &outputs, &txn_intervals, measured_s, interval_ns, &mut warnings);
    let interval_s = interval_ns as f64 / 1e9;
    let series: Vec<TimePoint> = timeseries.points().to_vec();
    let rate = rate_result(&plan, &outputs, &workers);
    let retries = outputs.iter().map(|o| o.retries).sum();
    let errors = ErrorSummary::from_stats(&all.read, &all.write, retries).with_others(&all.flush, &all.trim);
    let cache = cache_result(&run.layers, &outputs);
    let in_flight_at_end = in_flight_at_end(&outputs);
    let facts = RunFacts {
        open_loop: plan.open_loop(),
        rate_mode: loadgen::rate_mode(&plan),
        // The depth the workers ran with: a sync engine's lowered depth has its own warning, not a low-depth one.
        requested_depth: plan.workers.iter().map(|w| w.qd).sum(),
        achieved_depth,
        engine: outputs.first().map_or("", |o| o.engine).to_string(),
        ramp_s: ramp_ns(&plan, &outputs) as f64 / 1e9,
        total_ops: total.all.ops,
        interval_iops: interval_iops(&series, interval_s),
        virtual_time: plan.clock == ClockKind::Virtual,
        timed: plan.duration_ns.is_some(),
        direct: plan.direct,
        buffered_set_by: plan.direct_set_by.clone().filter(|_| !plan.direct),
        path_targets: path_targets(&run.targets, &plan),
        mem_total_bytes: iolab_device::mem_total_bytes(),
        targets_with_holes: read_targets_with_holes(&run.targets, &plan),
        layouts: run.layouts.iter().flatten().map(|l| l.facts.clone()).collect(),
        rate: rate.as_ref().map(|r| rate_facts(r, group_lags(&plan, &outputs))),
        errors: errors.total,
        eio_injected: injects_eio(&run.integrity),
        short_ios: all.read.short + all.write.short,
        saturated: all.read.lat.saturated() + all.write.lat.saturated(),
        measured_s,
        cache: cache.as_ref().map(cache_facts),
        dropped_data: dropped_data(&plan, &run.layers),
        write_caches: write_caches(&plan, &run.layers, &run.regions, measured_ns + ramp_ns(&plan, &outputs)),
        in_flight_at_end,
        max_recorded_ns: max_recorded_ns(&total),
        drains_for_flushes: plan.workers.iter().any(|w| w.durability.flush_every > 0),
        device_io: device_io(&run.targets, collected.disks_at_start.as_ref(), &run.disks_at_end, &total),
    };
    warnings.extend(run_warnings(&facts));
    let dirty = run.layers.cache.as_ref().map_or(0, |c| c.cache.dirty_lines());
    let (verify, inject) = run.integrity.results(&mut warnings, dirty)?;
    let config = serde_json::json!({ "plan": plan, "regions": run.regions, "interval_s": interval_s }).into();
    let env = environment(&outputs, (&run.targets, &run.layouts), run.throttle.as_ref());
    let result = RunResult {
        schema: iolab_report::SCHEMA.to_string(),
        iolab_version: env!("CARGO_PKG_VERSION").to_string(),
        run_id: format!("{:08x}", run.run_id_bits as u32),
        started_at: run.started_at,
        started_unix_s: run.started_unix_s,
        partial: outputs.iter().any(|o| o.stopped_early),
        seed: plan.seed,
        config,
        env,
        ramp_s: ramp_ns(&plan, &outputs) as f64 / 1e9,
        measured_s,
        in_flight_at_end: Some(in_flight_at_end),
        total,
        workers,
        targets: target_results(&plan, &outputs, measured_s),
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
        replay: None,
        cache,
        verify,
        inject,
        measured_by: None,
        hosts: Vec::new(),
        ranks: None,
    };
    drop(run.throttle);
    Ok(result)
}

/// The IOPS of each whole interval of `series` (the last, shorter one left out).
fn interval_iops(series: &[TimePoint], interval_s: f64) -> Vec<f64> {
    series.iter().filter(|p| (p.interval_s - interval_s).abs() < 1e-9).map(|p| p.iops).collect()
}

/// The I/Os in flight when the window closed, over every worker (and rank).
fn in_flight_at_end(outputs: &[WorkerOutput]) -> InFlightAtEnd {
    outputs.iter().fold(InFlightAtEnd::default(), |mut a, o| {
        a.merge(&o.in_flight_at_end);
        a
    })
}

/// The longest I/O of any kind the window recorded.
fn max_recorded_ns(total: &OpSet) -> Option<u64> {
    let others = total.flush.iter().chain(&total.trim);
    std::iter::once(&total.all).chain(others).filter_map(|s| s.lat_ns.as_ref()).map(|l| l.max).max()
}

/// The targets with holes that the run reads: holes matter to reads only (a write-only run on a sparse file,
/// `--prealloc none`, allocates them).
fn read_targets_with_holes(targets: &[RunTarget], plan: &Plan) -> Vec<String> {
    targets
        .iter()
        .map(|t| &t.opened)
        .zip(&plan.targets)
        .filter(|(t, p)| t.has_holes && p.reads)
        .map(|(t, _)| t.probe.name.clone())
        .collect()
}

/// What the warnings need of the block cache.
fn cache_facts(c: &iolab_report::cache::CacheResult) -> CacheFacts {
    CacheFacts {
        shrinks: c.shrinks.len() as u32,
        capacity_bytes: c.counters.capacity_bytes,
        dirty_after_exit: c.dirty_after_exit,
    }
}

/// The block cache's result, its reads by source merged over the workers.
fn cache_result(
    layers: &crate::layers::Layers,
    outputs: &[WorkerOutput],
) -> Option<iolab_report::cache::CacheResult> {
    layers.cache.as_ref().map(|rc| {
        let sources: Vec<&iolab_engine::ReadSources> =
            outputs.iter().filter_map(|o| o.read_sources.as_deref()).collect();
        rc.result(&sources)
    })
}

/// Per worker, its result; and the merged statistics of all.
fn worker_results(plan: &Plan, outputs: &[WorkerOutput], measured_s: f64) -> (Vec<WorkerResult>, Merged) {
    let mut all = Merged::new();
    let mut workers = Vec::new();
    for (o, w) in outputs.iter().zip(&plan.workers) {
        all.add(o);
        let set = OpSet::from_stats(&o.read, &o.write, measured_s).with_others(&o.flush, &o.trim, measured_s);
        workers.push(WorkerResult {
            index: w.index,
            name: w.name.clone(),
            qd: w.qd,
            targets: w.targets.iter().map(|&i| plan.targets[i].name.clone()).collect(),
            rate_iops: w.rate_iops,
            achieved_depth: depth_of(&set),
            total: set,
        });
    }
    (workers, all)
}

/// Mean ops in flight by Little's law, flushes and trims included (a worker that flushes after every write
/// spends much of its time in the flush: its depth is not its writes' alone).
fn depth_of(set: &OpSet) -> f64 {
    let others = [&set.flush, &set.trim].into_iter().flatten().map(|s| s.littles_law_depth()).sum::<f64>();
    set.all.littles_law_depth() + others
}

/// The invariants of the merge (TigerBeetle asserts its own where results are assembled): `all` is reads and
/// writes; the workers, and the groups, add up to the total, op kind by op kind, histograms included.
fn debug_assert_adds_up(total: &OpSet, workers: &[WorkerResult], groups: &[GroupResult]) {
    debug_assert_eq!(total.all.ops, total.read.ops + total.write.ops, "all is reads and writes");
    let ops = |s: Option<&iolab_report::OpSummary>| s.map_or(0, |s| s.ops);
    let kinds = |s: &OpSet| [s.read.ops, s.write.ops, ops(s.flush.as_ref()), ops(s.trim.as_ref())];
    let want = kinds(total);
    let sum = |rows: &mut dyn Iterator<Item = [u64; 4]>| {
        rows.fold([0u64; 4], |a, r| std::array::from_fn(|i| a[i] + r[i]))
    };
    let by_worker = sum(&mut workers.iter().map(|w| kinds(&w.total)));
    debug_assert_eq!(by_worker, want, "the workers add up to the total (reads, writes, flushes, trims)");
    let by_group = sum(&mut groups.iter().map(|g| kinds(&g.total)));
    debug_assert_eq!(by_group, want, "the groups add up to the total (reads, writes, flushes, trims)");
    if let Some(lat) = &total.all.lat_ns {
        debug_assert!(lat.min as f64 <= lat.mean && lat.mean <= lat.max as f64, "mean within min..max");
    }
}

/// Per group, its result (and its histograms into `histograms`).
fn group_results(
    plan: &Plan,
    outputs: &[WorkerOutput],
    workers: &[WorkerResult],
    collected: &Collected,
    measured_s: f64,
    histograms: &mut HistogramSet,
) -> Vec<GroupResult> {
    let group_of = group_of(plan);
    let mut groups = Vec::new();
    for (g, interval_max) in collected.group_interval_max.iter().enumerate() {
        let mut merged = Merged::new();
        let mut members = 0u32;
        let mut targets: Vec<String> = Vec::new();
        let mut rate: Option<f64> = None;
        let mut depth = 0.0;
        let mut name = String::new();
        for ((o, w), wr) in outputs.iter().zip(&plan.workers).zip(workers) {
            if group_of[w.index as usize] != g {
                continue;
            }
            name = w.group.clone();
            members += 1;
            merged.add(o);
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
        let set = merged.set(measured_s);
        let encoded = GroupHistograms {
            read: iolab_report::encode_histogram(&merged.read),
            write: iolab_report::encode_histogram(&merged.write),
        };
        histograms.groups.insert(name.clone(), encoded);
        groups.push(GroupResult {
            name,
            workers: members,
            targets,
            rate_iops: rate,
            total: set,
            achieved_depth: depth,
            read_interval_mean_max_ns: interval_max.0,
            write_interval_mean_max_ns: interval_max.1,
        });
    }
    groups
}

/// The process's CPU time over the measurement (from the end of the ramp, or from the end when the ramp
/// never ended), per I/O and in cores.
pub(crate) fn cpu(start: Option<((f64, f64), Instant)>, end: ((f64, f64), Instant), ops: u64) -> Cpu {
    let ((u0, s0), t0) = start.unwrap_or((env::process_cpu_s(), end.1));
    let ((u1, s1), t1) = end;
    let (user_s, sys_s) = ((u1 - u0).max(0.0), (s1 - s0).max(0.0));
    let wall_s = t1.duration_since(t0).as_secs_f64().max(1e-9);
    Cpu {
        user_s,
        sys_s,
        cpu_ns_per_io: iolab_stats::per_op(user_s + sys_s, ops).map(|s| s * 1e9),
        cores_used: (user_s + sys_s) / wall_s,
        peak_rss_bytes: env::peak_rss_bytes(),
    }
}

/// Open loop: the offered and achieved rates.
/// Per run target: reads and writes summed over every worker that used it. A worker with several targets
/// kept them apart ([`WorkerOutput::per_target`]); one with a single target is all that target's. A
/// transactions worker over several targets cannot be split, and then there are no per-target results.
fn target_results(plan: &Plan, outputs: &[WorkerOutput], measured_s: f64) -> Vec<TargetResult> {
    let mut per: Vec<(OpStats, OpStats)> =
        plan.targets.iter().map(|_| (OpStats::new(), OpStats::new())).collect();
    for (w, o) in plan.workers.iter().zip(outputs) {
        match (&o.per_target, w.targets.as_slice()) {
            (Some(pt), targets) => {
                for (&g, (r, wr)) in targets.iter().zip(pt) {
                    per[g].0.merge(r);
                    per[g].1.merge(wr);
                }
            }
            (None, [g]) => {
                per[*g].0.merge(&o.read);
                per[*g].1.merge(&o.write);
            }
            (None, _) => return Vec::new(),
        }
    }
    plan.targets
        .iter()
        .zip(per)
        .map(|(t, (r, w))| {
            let set = OpSet::from_stats(&r, &w, measured_s);
            TargetResult { name: t.name.clone(), read: set.read, write: set.write, all: set.all }
        })
        .collect()
}

/// What the warnings need of the open-loop figures.
fn rate_facts(r: &RateResult, lags: Vec<GroupLag>) -> RateFacts {
    RateFacts {
        offered_iops: r.offered_iops,
        achieved_iops: r.achieved_iops,
        backlog_at_end: r.backlog_at_end,
        poisson: r.arrival == "poisson",
        lags,
    }
}

/// Each open-loop group's lag p99 beside its own response time p99 (its workers' reads and writes), so a
/// low-rate group's lateness is never set against the response times of other groups' I/O; groups without
/// a measured lag are left out.
fn group_lags(plan: &Plan, outputs: &[WorkerOutput]) -> Vec<GroupLag> {
    let mut names: Vec<&str> = Vec::new();
    for w in plan.workers.iter().filter(|w| w.rate_iops.is_some()) {
        if !names.contains(&w.group.as_str()) {
            names.push(&w.group);
        }
    }
    let several = plan.workers.iter().any(|w| w.group != plan.workers[0].group);
    let mut lags = Vec::new();
    for name in names {
        let (mut lag, mut response) =
            (iolab_stats::LatencyHistogram::new(), iolab_stats::LatencyHistogram::new());
        for (_, o) in
            plan.workers.iter().zip(outputs).filter(|(w, _)| w.group == name && w.rate_iops.is_some())
        {
            o.lag.as_deref().into_iter().for_each(|l| lag.merge(l));
            response.merge(&o.read.lat);
            response.merge(&o.write.lat);
        }
        if let (Some(l), Some(r)) = (lag.summary(), response.summary()) {
            let group = several.then(|| name.to_string());
            lags.push(GroupLag { group, lag_p99_ns: l.p99, response_p99_ns: r.p99 });
        }
    }
    lags
}

/// The run injects EIO (`--inject eio@N`): its errors are said as injected.
fn injects_eio(integrity: &RunIntegrity) -> bool {
    integrity.faults.as_ref().is_some_and(|f| f.specs().iter().any(|s| s.kind == iolab_spec::InjectKind::Eio))
}

/// The open-loop figures: offered and achieved over the open-loop workers only, and per group when there are
/// several (a closed-loop group marked by no offer), so a run that mixes both never sets one group's offer
/// beside the whole run's completions.
fn rate_result(plan: &Plan, outputs: &[WorkerOutput], workers: &[WorkerResult]) -> Option<RateResult> {
    if !plan.open_loop() {
        return None;
    }
    let open = |w: &&iolab_plan::WorkerPlan| w.rate_iops.is_some();
    let arrival = plan.workers.iter().find(open).map_or(plan.workers[0].arrival, |w| w.arrival);
    let achieved = |pick: &dyn Fn(&iolab_plan::WorkerPlan) -> bool| -> f64 {
        plan.workers.iter().zip(workers).filter(|(p, _)| pick(p)).map(|(_, w)| w.total.all.iops).sum()
    };
    let mut groups: Vec<GroupRate> = Vec::new();
    for w in &plan.workers {
        if groups.iter().any(|g| g.group == w.group) {
            continue;
        }
        let members = plan.workers.iter().filter(|x| x.group == w.group);
        let offered: Vec<f64> = members.clone().filter_map(|x| x.rate_iops).collect();
        groups.push(GroupRate {
            group: w.group.clone(),
            workers: members.count() as u32,
            offered_iops: (!offered.is_empty()).then(|| offered.iter().sum()),
            achieved_iops: achieved(&|x| x.group == w.group),
        });
    }
    let mut lag = iolab_stats::LatencyHistogram::new();
    for l in outputs.iter().filter_map(|o| o.lag.as_deref()) {
        lag.merge(l);
    }
    Some(RateResult {
        lag_ns: lag.summary(),
        pacing: pacing_result(outputs),
        offered_iops: plan.workers.iter().filter_map(|w| w.rate_iops).sum(),
        arrival: format!("{arrival:?}").to_lowercase(),
        achieved_iops: achieved(&|x| x.rate_iops.is_some()),
        backlog_at_end: outputs.iter().map(|o| o.backlog_at_end).sum(),
        groups: if groups.len() > 1 { groups } else { Vec::new() },
    })
}

/// How the open-loop workers on the real clock waited for their arrivals (None on virtual time): the largest
/// margin and cap, the wake-ups merged.
fn pacing_result(outputs: &[WorkerOutput]) -> Option<PacingResult> {
    let mut paced = outputs.iter().filter_map(|o| o.pacing.as_ref()).peekable();
    paced.peek()?;
    let mut late = iolab_stats::LatencyHistogram::coarse();
    let (mut margin_ns, mut margin_cap_ns) = (0, 0);
    for p in paced {
        debug_assert!(p.margin_ns <= p.cap_ns, "a worker's margin is within its cap");
        late.merge(&p.wake_late);
        margin_ns = margin_ns.max(p.margin_ns);
        margin_cap_ns = margin_cap_ns.max(p.cap_ns);
    }
    Some(PacingResult {
        margin_ns,
        margin_cap_ns,
        rule: iolab_engine::MARGIN_RULE.to_string(),
        wake_ups: late.count(),
        wake_late_ns: late.summary(),
    })
}

/// The file and block device targets.
fn path_targets(targets: &[RunTarget], plan: &Plan) -> Vec<PathTarget> {
    targets
        .iter()
        .map(RunTarget::probe)
        .zip(&plan.targets)
        .filter(|(p, _)| matches!(p.kind, TargetKind::File | TargetKind::BlockDevice))
        .map(|(p, t)| PathTarget {
            name: p.name.clone(),
            size_bytes: p.size_bytes,
            reads: t.reads,
            tmpfs: p.tmpfs,
            loop_cached_backing: p.loop_cached_backing.clone(),
        })
        .collect()
}

/// What the one block device under every target did over the window, beside the run's bytes; `None` when
/// a target is not a file or device, the targets are on several devices, or the counters were not read.
fn device_io(
    targets: &[RunTarget],
    start: Option<&std::collections::BTreeMap<String, iolab_device::diskstats::Counters>>,
    end: &std::collections::BTreeMap<String, iolab_device::diskstats::Counters>,
    total: &OpSet,
) -> Option<DeviceShare> {
    let mut names = targets.iter().map(|t| t.file.as_deref().and_then(iolab_device::diskstats::device_of));
    let device = names.next()??;
    if !names.all(|n| n.as_deref() == Some(device.as_str())) {
        return None;
    }
    let d = end.get(&device)?.since(start?.get(&device)?);
    Some(DeviceShare {
        device,
        device_read_bytes: d.read_sectors * 512,
        device_write_bytes: d.write_sectors * 512,
        own_read_bytes: total.read.bytes,
        own_write_bytes: total.write.bytes,
    })
}

/// The ramp as it happened (a run stopped during its ramp did not ramp for as long as planned), ns.
fn ramp_ns(plan: &Plan, outputs: &[WorkerOutput]) -> u64 {
    outputs.iter().map(|o| o.ramp_ns).max().unwrap_or(plan.ramp_ns)
}

/// The write-back caches the run wrote into: each emulated device's own (the outermost: an array's, not its
/// members'), and iolab's block cache in write-back mode, whose dirty data grew over `elapsed_ns` (the ramp
/// and the window).
fn write_caches(
    plan: &Plan,
    layers: &Layers,
    regions: &[Vec<Region>],
    elapsed_ns: u64,
) -> Vec<WriteCacheFacts> {
    let mut facts: Vec<WriteCacheFacts> = plan
        .targets
        .iter()
        .zip(&layers.sims)
        .filter_map(|(t, sim)| {
            let f = sim.as_ref()?.device.write_cache_fill()?;
            Some(WriteCacheFacts {
                target: t.name.clone(),
                cache: "device",
                size_bytes: f.size_bytes,
                written_bytes: f.taken_bytes,
                peak_dirty_bytes: f.peak_dirty_bytes,
                full_writes: f.waited_writes,
                growth_ns: f.growth_ns,
                fits: false,
            })
        })
        .collect();
    let Some(rc) =
        layers.cache.as_ref().filter(|rc| rc.cache.config().mode == iolab_cache::CacheMode::WriteBack)
    else {
        return facts;
    };
    let k = rc.cache.stats();
    let addressed: u64 = iolab_plan::sizing::addressed_bytes(plan, regions).iter().sum();
    let target = match plan.targets.len() {
        1 => plan.targets[0].name.clone(),
        n => format!("{} and {} more", plan.targets[0].name, n - 1),
    };
    facts.push(WriteCacheFacts {
        target,
        cache: "block_cache",
        size_bytes: k.capacity_bytes,
        written_bytes: k.absorbed_bytes,
        peak_dirty_bytes: k.peak_dirty_lines * rc.cache.config().line_bytes as u64,
        full_writes: k.writes_forwarded_full,
        growth_ns: elapsed_ns,
        fits: addressed <= k.capacity_bytes,
    });
    facts
}

/// Emulated targets whose written data outgrew the RAM given to them: (name, bytes kept).
fn dropped_data(plan: &Plan, layers: &Layers) -> Vec<(String, u64)> {
    plan.targets
        .iter()
        .zip(&layers.sims)
        .filter_map(|(t, sim)| {
            let store = sim.as_ref().and_then(|s| s.store.as_ref()).filter(|s| s.overflowed())?;
            Some((t.name.clone(), store.stored_bytes()))
        })
        .collect()
}

/// The result's `env` block: the machine, the engine, the targets, the throttle.
fn environment(
    outputs: &[WorkerOutput],
    (targets, layouts): (&[RunTarget], &[Option<TargetLayouts>]),
    throttle: Option<&ThrottleGuard>,
) -> Env {
    let mut engine_features: Vec<String> = Vec::new();
    for f in outputs.iter().flat_map(|o| &o.features) {
        if !engine_features.contains(f) {
            engine_features.push(f.clone());
        }
    }
    let targets = targets
        .iter()
        .map(|t| &t.opened)
        .zip(layouts)
        .map(|(t, l)| TargetEnv {
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
            layout: l.as_ref().map(|l| l.report.clone()),
            huge_page_bytes: t.mem.as_ref().map(|m| m.huge_page_bytes()),
            mount_options: None,
            write_cache: None,
        })
        .collect();
    Env {
        hostname: env::hostname(),
        kernel: env::kernel(),
        cpu_model: env::cpu_model(),
        cpu_count: env::cpu_count(),
        mem_total_bytes: iolab_device::mem_total_bytes(),
        engine: outputs.first().map(|o| o.engine).unwrap_or("none").to_string(),
        engine_features,
        targets,
        throttle: throttle.map(|g| g.applied().clone()),
    }
}
