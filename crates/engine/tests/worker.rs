//! `run_worker` driven directly, on `sim:fixed` with virtual time: the counts and latencies are exact, so
//! the worker's bookkeeping (window, ramp, intervals, open and closed loop, limits, stop) is checked exactly.
//!
//! Not covered here: EAGAIN/EINTR resubmission. `run_worker` builds its engine from an `EngineChoice`, and
//! no engine it can build returns EAGAIN on demand (sim never fails an op), so the retry path cannot be
//! provoked from outside the crate.

use iolab_engine::sim::SimTarget;
use iolab_engine::{
    run_worker, EngineChoice, WorkerControl, WorkerEvent, WorkerOutput, WorkerSetup, WorkerTask, WorkerTools,
};
use iolab_plan::{Plan, TargetGeometry};
use iolab_spec::{JobSpec, SimSpec, TargetSpec};
use iolab_stats::IntervalStats;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

const SIM: &str = "sim:fixed,latency=100us,servers=8,size=1G";
const US100: u64 = 100_000;
const INTERVAL_NS: u64 = 100_000_000;

struct Run {
    out: WorkerOutput,
    intervals: Vec<IntervalStats>,
    wall: Duration,
}

/// The emulated engine over `targets`, alone on virtual time or on the real clock.
fn sim_choice(targets: Vec<SimTarget>, virtual_clock: bool) -> EngineChoice {
    match virtual_clock {
        true => EngineChoice::alone_on_virtual_time(targets),
        false => EngineChoice::Sim { targets, client: 0, seat: None },
    }
}

/// Plans `job` (a TOML job file) over `target`, binds it, and runs its single worker on `sim:fixed` with the
/// target's latency and servers. `stop_after`: raise the stop flag before the start (Some(ZERO)) or after a
/// wall-clock delay.
fn run(job: &str, target: &str, virtual_clock: bool, stop_after: Option<Duration>) -> Run {
    run_with(job, target, virtual_clock, stop_after, Vec::new())
}

/// [`run`], with extent boundaries for the worker's target (split I/Os are counted against them).
fn run_with(
    job: &str,
    target: &str,
    virtual_clock: bool,
    stop_after: Option<Duration>,
    boundaries: Vec<Option<Arc<[u64]>>>,
) -> Run {
    let spec = JobSpec::from_toml(job, "test.toml").expect("job parses");
    let target = TargetSpec::parse(target).expect("target parses");
    let TargetSpec::Sim(SimSpec::Fixed { latency_ns, servers, size_bytes }) = target else {
        panic!("test bug: not a sim:fixed target")
    };
    let plan = Plan::from_spec(&spec, Some(&target)).expect("plan");
    let regions = plan.bind(&[TargetGeometry { size_bytes, block_bytes: 512 }]).expect("bind");
    assert_eq!(plan.workers.len(), 1, "test bug: one worker expected");
    let stop = Arc::new(AtomicBool::new(stop_after == Some(Duration::ZERO)));
    let (tx, rx) = mpsc::channel();
    let setup = WorkerSetup {
        task: WorkerTask {
            plan: plan.workers[0].clone(),
            regions: regions[0].clone(),
            seed: plan.seed,
            ramp_ns: plan.ramp_ns,
            duration_ns: plan.duration_ns,
            interval_ns: INTERVAL_NS,
            boundaries,
            replay: None,
            flow: None,
        },
        tools: WorkerTools {
            engine: sim_choice(
                vec![SimTarget::single(
                    &SimSpec::Fixed { latency_ns, servers, size_bytes },
                    plan.seed,
                    plan.workers[0].qd,
                    false,
                )],
                virtual_clock,
            ),
            files: Vec::new(),
            links: Vec::new(),
            cache: None,
            verify: None,
            faults: None,
            trace: None,
        },
        control: WorkerControl { stop: stop.clone(), ..WorkerControl::alone(tx) },
    };
    let stopper = match stop_after {
        Some(d) if !d.is_zero() => Some(std::thread::spawn(move || {
            std::thread::sleep(d);
            stop.store(true, Ordering::Relaxed);
        })),
        _ => None,
    };
    let started = Instant::now();
    let out = run_worker(setup).unwrap_or_else(|e| panic!("run_worker (seed {}): {e}", plan.seed));
    let wall = started.elapsed();
    if let Some(h) = stopper {
        h.join().expect("stopper thread");
    }
    let intervals = rx.iter().map(|WorkerEvent::Interval { stats, .. }| stats).collect();
    Run { out, intervals, wall }
}

/// The intervals are exactly `0..count`, once each, and their reads add up to the window's.
fn assert_intervals(r: &Run, count: u64) {
    let idx: Vec<u64> = r.intervals.iter().map(|i| i.index).collect();
    assert_eq!(idx, (0..count).collect::<Vec<_>>(), "interval indices");
    let ops: u64 = r.intervals.iter().map(|i| i.read.ops + i.write.ops).sum();
    assert_eq!(ops, r.out.read.ops + r.out.write.ops, "interval ops add up to the total");
}

fn assert_all_latencies(h: &iolab_stats::LatencyHistogram, ns: u64, what: &str) {
    assert_eq!((h.min(), h.max()), (ns, ns), "{what}: every latency is {ns} ns");
}

const CLOSED: &str = "duration = \"1s\"\nramp = \"0\"\nseed = 1\nclock = \"virtual\"\nqd = 4\nbs = \"4k\"\nrw = \"randread\"\n";

#[test]
fn closed_loop_qd4_runs_at_exactly_qd_over_latency() {
    let r = run(CLOSED, SIM, true, None);
    let o = &r.out;
    // qd 4 with 8 servers: 4 ops every 100 us. The first batch completes at 100 us and the last one issued
    // completes at exactly 1 s, outside the window [0, 1 s): 9,999 batches of 4 are recorded (the pipeline
    // is empty for the first 100 us of a run without ramp).
    assert_eq!(o.read.ops, 39_996, "{o:?}");
    assert_eq!(o.write.ops, 0);
    assert_eq!(o.read.bytes, 39_996 * 4096);
    assert_eq!((o.read.short, o.read.errors), (0, 0));
    assert_all_latencies(&o.read.lat, US100, "response");
    assert_all_latencies(&o.read.service_lat, US100, "service");
    assert_eq!(o.window_ns, 1_000_000_000);
    assert!(!o.stopped_early);
    assert_eq!((o.backlog_at_end, o.retries), (0, 0));
    assert_eq!(o.engine, "sim");
    assert!(o.features.iter().any(|f| f == "virtual_time"), "{:?}", o.features);
    assert_intervals(&r, 10);
    // Every full interval holds 1,000 batches; the first misses the batch at 0.
    let per: Vec<u64> = r.intervals.iter().map(|i| i.read.ops).collect();
    assert_eq!(per[0], 3_996, "{per:?}");
    assert!(per[1..].iter().all(|&n| n == 4_000), "{per:?}");
}

#[test]
fn ramp_completions_are_excluded_from_the_window() {
    let job = CLOSED.replace("ramp = \"0\"", "ramp = \"500ms\"");
    let r = run(&job, SIM, true, None);
    let o = &r.out;
    // Window [0.5 s, 1.5 s): completions at 0.5 s, 0.5001 s, ..., 1.4999 s: 10,000 batches of 4.
    assert_eq!(o.read.ops, 40_000, "{o:?}");
    assert_all_latencies(&o.read.lat, US100, "response");
    assert_all_latencies(&o.read.service_lat, US100, "service");
    assert_eq!(o.window_ns, 1_000_000_000);
    assert_intervals(&r, 10);
}

#[test]
fn virtual_time_runs_are_deterministic() {
    let a = run(CLOSED, SIM, true, None);
    let b = run(CLOSED, SIM, true, None);
    assert_eq!(a.out.read.ops, b.out.read.ops);
    assert_eq!(a.out.read.lat.sum_ns(), b.out.read.lat.sum_ns());
}

#[test]
fn open_loop_below_capacity_has_response_equal_to_service() {
    let job = CLOSED.replace("qd = 4", "qd = 4\nrate = 10000\narrival = \"fixed\"");
    let r = run(&job, SIM, true, None);
    let o = &r.out;
    // Arrivals every 100 us from 0; each is served in 100 us; the one arriving at 0.9999 s completes at
    // exactly 1 s, outside the window.
    assert!(o.read.ops.abs_diff(10_000) <= 1, "{o:?}");
    assert_all_latencies(&o.read.lat, US100, "response");
    assert_all_latencies(&o.read.service_lat, US100, "service");
    assert_eq!(o.backlog_at_end, 0);
    assert_eq!(o.window_ns, 1_000_000_000);
    assert_intervals(&r, 10);
}

#[test]
fn open_loop_above_capacity_shows_queueing_in_response_not_service() {
    // One server, qd 1: capacity 10,000 IOPS, asked for 20,000.
    let job = CLOSED.replace("qd = 4", "qd = 1\nrate = 20000\narrival = \"fixed\"");
    let r = run(&job, "sim:fixed,latency=100us,servers=1,size=1G", true, None);
    let o = &r.out;
    assert!(o.read.ops.abs_diff(10_000) <= 1, "served at capacity: {o:?}");
    assert_all_latencies(&o.read.service_lat, US100, "service");
    // Op k arrives at 50k us and completes at 100(k+1) us: response 100 + 50k us, up to about 0.5 s.
    assert_eq!(o.read.lat.min(), US100);
    assert!(o.read.lat.max() > 450_000_000, "max response {} ns", o.read.lat.max());
    // About half of the 20,000 arrivals due in the window were never issued.
    assert!(o.backlog_at_end.abs_diff(10_000) <= 2, "backlog {}", o.backlog_at_end);
    assert_intervals(&r, 10);
    let means: Vec<f64> =
        r.intervals.iter().map(|i| i.read.lat.mean().expect("reads in every interval")).collect();
    assert!(means.windows(2).all(|w| w[1] > w[0]), "response grows interval by interval: {means:?}");
}

#[test]
fn ios_limit_issues_exactly_that_many() {
    let job = "ios = 1000\nseed = 1\nclock = \"virtual\"\nqd = 4\nbs = \"4k\"\nrw = \"randrw\"\n";
    let r = run(job, SIM, true, None);
    let o = &r.out;
    assert_eq!(o.read.ops + o.write.ops, 1000, "{o:?}");
    assert!(o.read.ops > 300 && o.write.ops > 300, "randrw mixes: {o:?}");
    assert_all_latencies(&o.read.lat, US100, "read response");
    assert_all_latencies(&o.write.lat, US100, "write response");
    // 250 batches of 4, the last completing at 25 ms.
    assert_eq!(o.window_ns, 25_000_000);
    assert!(!o.stopped_early);
    let ops: u64 = r.intervals.iter().map(|i| i.read.ops + i.write.ops).sum();
    assert_eq!(ops, 1000, "interval ops add up");
}

#[test]
fn stop_before_start_finishes_at_once_on_virtual_time() {
    let r = run(CLOSED, SIM, true, Some(Duration::ZERO));
    assert!(r.out.stopped_early);
    assert_eq!(r.out.read.ops, 0);
    // Not a speed test: the run's planned second on virtual time is never lived through at all.
    assert_eq!(r.out.window_ns, 0, "{:?}", r.out);
}

#[test]
fn stop_before_start_finishes_at_once_on_the_real_clock() {
    let job = CLOSED.replace("duration = \"1s\"", "duration = \"10s\"");
    let r = run(&job, SIM, false, Some(Duration::ZERO));
    assert!(r.out.stopped_early);
    assert_eq!(r.out.read.ops, 0);
    // Half the planned time: a hang guard on a loaded machine, and still proof the run did not go on.
    assert!(r.wall < Duration::from_secs(5), "a 10 s run stopped before its start took {:?}", r.wall);
}

#[test]
fn stop_during_a_real_clock_run_ends_it_within_a_tick() {
    let job = CLOSED.replace("duration = \"1s\"", "duration = \"10s\"");
    let r = run(&job, SIM, false, Some(Duration::from_millis(150)));
    let o = &r.out;
    assert!(o.stopped_early, "{o:?}");
    assert!(o.read.ops > 0, "ran for 150 ms: {o:?}");
    assert_eq!((o.read.errors, o.read.short), (0, 0));
    assert!(r.wall < Duration::from_secs(5), "a 10 s run stopped after 150 ms took {:?}", r.wall);
    // The window ends at the stop, not at the planned end.
    assert!(o.window_ns < 5_000_000_000, "window {} ns", o.window_ns);
    let ops: u64 = r.intervals.iter().map(|i| i.read.ops).sum();
    assert_eq!(ops, o.read.ops, "interval ops add up");
}

/// Split I/Os: 1,000 sequential 96 KiB reads cover [0, 96,000 KiB); with a boundary at every MiB, the 93
/// boundaries inside that span are crossed except those on a multiple of 3 MiB (3,072 KiB = 32 reads of 96
/// KiB, so a read ends there): 93 - 31 = 62. Without boundaries nothing is counted.
#[test]
fn split_ios_are_the_ops_that_cross_an_extent_boundary() {
    let job =
        "ios = 1000\nramp = \"0\"\nseed = 1\nclock = \"virtual\"\nqd = 4\nbs = \"96k\"\nrw = \"read\"\n";
    let mib: Arc<[u64]> = (1..1024u64).map(|m| m << 20).collect();
    let r = run_with(job, SIM, true, None, vec![Some(mib)]);
    assert_eq!(r.out.read.ops, 1000);
    assert_eq!(r.out.split_ios, [62]);
    let r = run_with(job, SIM, true, None, vec![None]);
    assert!(r.out.split_ios.is_empty(), "no target with boundaries, no counter");
}
