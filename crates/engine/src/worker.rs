//! The worker loop: one thread, one engine, `qd` slots.
//!
//! Each turn of the loop (1) decides whether to stop issuing, (2) fills free slots with new ops, (3) submits
//! them and waits for completions in one engine call, (4) records each completion. Times, all on the engine's
//! clock:
//!
//! - *intended start*: in closed loop, the moment the slot became free (the reap that freed it), so our own
//!   turn-around counts against us, as fio's `lat` does; in open loop, the op's scheduled arrival, so queueing
//!   behind a slow device is measured, not omitted (coordinated omission);
//! - *submitted*: taken just before the `submit_and_reap` call that hands the op to the kernel;
//! - *completed*: taken just after the call that returned the completion.
//!
//! Response time (`lat`) = completed - intended; service time = completed - submitted. The measurement window
//! is [ramp end, end): a completion inside it is recorded (with its full latency, even if the op was intended
//! during the ramp), one outside is not. After the end no new op is issued and ops in flight are drained
//! unrecorded. Count-limited runs (`ios`, `bytes`) count ops issued after the ramp and record every completion
//! after it.
//!
//! Slots (`Slot`): `user_data` = generation << 32 | slot index. A slot is busy from push to reap; its two
//! buffers (read 2i, write 2i+1) belong to the kernel for that time. Completions are matched by index and
//! generation, and a mismatch is a bug (assert), never silently accepted.
//!
//! Nothing in the loop allocates, locks or formats per I/O; histograms are preallocated and intervals are
//! sent to the cli thread once per interval.

use crate::buffers::{stamp_write, Buffers};
use crate::cache::{CacheEngine, WorkerCache};
use crate::fault::FaultEngine;
use crate::link::LinkEngine;
use crate::mem::MemEngine;
use crate::sim::{SimEngine, SimTarget};
use crate::sync::SyncEngine;
use crate::uring::UringEngine;
use crate::verify::VerifyEngine;
use crate::{Completion, Engine, EngineError, Op, RealClock};
use iolab_plan::arrival::Arrivals;
use iolab_plan::gen::{GenOp, OpGen};
use iolab_plan::rng::Rng;
use iolab_plan::{Region, WorkerPlan};
use iolab_stats::{IntervalStats, LatencyHistogram, OpStats};
use iolab_device::MemStore;
use std::fs::File;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Barrier};
use std::time::Instant;

/// Salt for the arrival stream so it is independent of the op stream.
const ARRIVAL_SALT: u64 = 0xA441_7A15_0000_0001;
/// Longest wait in one engine call, so a stop request is seen even when the device hangs.
const TICK_NS: u64 = 200_000_000;

/// Which engine a worker runs.
#[derive(Clone, Debug)]
pub enum EngineChoice {
    /// io_uring on the worker's files.
    Uring,
    /// pread/pwrite on the worker's files.
    Sync,
    /// In-process RAM disk.
    Mem(Arc<MemStore>),
    /// In-process, no copy.
    Null,
    /// Emulated devices, one per worker target.
    Sim {
        /// The worker's targets' devices and data.
        targets: Vec<SimTarget>,
        /// This worker's client number on each device.
        client: usize,
        /// Virtual time instead of the real clock.
        virtual_clock: bool,
    },
}

/// Everything one worker needs.
pub struct WorkerSetup {
    /// The worker's plan.
    pub plan: WorkerPlan,
    /// Its region in each of its targets.
    pub regions: Vec<Region>,
    /// Its files (path targets), in target order.
    pub files: Vec<Arc<File>>,
    /// Its engine.
    pub engine: EngineChoice,
    /// The link in front of each of its targets (`link:`), if any.
    pub links: Vec<Option<crate::link::SharedLink>>,
    /// The run's block cache, when there is one.
    pub cache: Option<WorkerCache>,
    /// `--verify`: headers on writes, checks on reads, read-back after the run.
    pub verify: Option<crate::verify::WorkerVerify>,
    /// `--inject`: faults put into the target's I/O.
    pub faults: Option<crate::fault::WorkerFaults>,
    /// Raise `stop` at the first failed I/O (`--stop-on-error`).
    pub stop_on_error: bool,
    /// The run seed.
    pub seed: u64,
    /// Warm-up.
    pub ramp_ns: u64,
    /// Measured time (None: until the I/O or byte limit).
    pub duration_ns: Option<u64>,
    /// Time-series interval.
    pub interval_ns: u64,
    /// The run's clock epoch.
    pub epoch: Instant,
    /// Set to stop issuing (Ctrl-C, or another worker failed).
    pub stop: Arc<AtomicBool>,
    /// Raised by the cli to end the measurement now as if its time were up (steady state reached, a search
    /// step decided): the result is complete, not partial.
    pub finish: Arc<AtomicBool>,
    /// All workers start together.
    pub barrier: Arc<Barrier>,
    /// Where intervals go.
    pub events: Sender<WorkerEvent>,
}

/// Sent from workers to the cli thread while running.
#[derive(Debug)]
pub enum WorkerEvent {
    /// One finished interval of one worker.
    Interval {
        /// Worker index.
        worker: u32,
        /// Its counts and latencies.
        stats: IntervalStats,
    },
}

/// What one worker measured.
#[derive(Debug)]
pub struct WorkerOutput {
    /// Worker index.
    pub index: u32,
    /// Engine name.
    pub engine: &'static str,
    /// Engine features in effect.
    pub features: Vec<String>,
    /// Reads in the window.
    pub read: OpStats,
    /// Writes in the window.
    pub write: OpStats,
    /// Length of the measurement window.
    pub window_ns: u64,
    /// Ops issued in the window.
    pub issued: u64,
    /// Open loop: arrivals due before the end that were never issued.
    pub backlog_at_end: u64,
    /// EAGAIN/EINTR resubmissions.
    pub retries: u64,
    /// Stopped by a stop request before its end.
    pub stopped_early: bool,
    /// Users and transactions (`crate::txn`), when the worker ran them.
    pub txn: Option<crate::txn::TxnStats>,
    /// Runs with a block cache: read response times by where the data came from.
    pub read_sources: Option<Box<ReadSources>>,
}

/// Response times of reads served from the block cache and from the target, recorded in the window.
#[derive(Debug, Default)]
pub struct ReadSources {
    /// Reads served from the cache.
    pub from_cache: LatencyHistogram,
    /// Reads that went to the target.
    pub from_target: LatencyHistogram,
}

/// Closes intervals up to (not including) `k`, sending each to the cli thread; empty ones too, so a stall shows
/// as zero IOPS rather than as a gap.
fn advance_interval(interval: &mut IntervalStats, k: u64, worker: u32, events: &Sender<WorkerEvent>) {
    while interval.index < k {
        let next = IntervalStats::new(interval.index + 1);
        let _ = events.send(WorkerEvent::Interval { worker, stats: std::mem::replace(interval, next) });
    }
}

/// The deadline of one `submit_and_reap`: a tick, bounded by the end and, while a slot (or queue room) is free,
/// by the next arrival. After the stop only the tick bounds it: draining needs no clock.
pub(crate) fn wait_deadline(now: u64, stopping: bool, end: Option<u64>, next_arrival: Option<u64>) -> u64 {
    let mut deadline = now + TICK_NS;
    if !stopping {
        if let Some(e) = end {
            deadline = deadline.min(e.max(now));
        }
        if let Some(a) = next_arrival {
            deadline = deadline.min(a);
        }
    }
    deadline
}

/// Hands the pushed batch to the kernel and waits once: stamps each pushed slot's submission time (one clock
/// read for the batch), counts them in flight, and returns the submission time.
pub(crate) fn submit_batch<E: Engine>(
    engine: &mut E,
    pushed: &mut Vec<u32>,
    in_flight: &mut usize,
    deadline: u64,
    done: &mut Vec<Completion>,
    stamp: impl FnMut(usize, u64),
) -> Result<u64, EngineError> {
    let t_sub = hand_over(engine, pushed, in_flight, stamp);
    engine.submit_and_reap(Some(deadline), done)?;
    Ok(t_sub)
}

/// Stamps the pushed slots' submission time, counts them in flight and forgets them: the bookkeeping of
/// every call that hands ops to the kernel.
fn hand_over<E: Engine>(
    engine: &mut E,
    pushed: &mut Vec<u32>,
    in_flight: &mut usize,
    mut stamp: impl FnMut(usize, u64),
) -> u64 {
    let t = engine.now_ns();
    for &i in pushed.iter() {
        stamp(i as usize, t);
    }
    *in_flight += pushed.len();
    pushed.clear();
    t
}

/// Whether the `refilled`-th op pushed in one turn goes to the kernel at once, before the turn's remaining
/// refills: after the 1st, 3rd, 7th, 15th, ... (chunks of 1, 2, 4, 8, ...).
///
/// Why: the kernel builds every request of one submit call before the device sees the first (the block
/// layer's plug), about 2 µs each on a virtio disk, so when a burst of 31 completions was refilled with one
/// call the first new read reached the device ~60 µs after its slot freed, and a device that completes in
/// bursts sat idle meanwhile (16 % fewer IOPS than fio, which submits each op alone; docs/BENCHMARKS.md).
/// Doubling chunks bound the wait of the k-th op to about k others' build time and cost log2(n) + 1 submit
/// calls per refill of n (fio's default: n).
#[inline]
pub(crate) fn submit_early(refilled: u32) -> bool {
    refilled.wrapping_add(1).is_power_of_two()
}

/// Hands the ops pushed so far to the kernel without waiting ([`Engine::submit`]): stamps their submission
/// time and counts them in flight.
pub(crate) fn submit_now<E: Engine>(
    engine: &mut E,
    pushed: &mut Vec<u32>,
    in_flight: &mut usize,
    stamp: impl FnMut(usize, u64),
) -> Result<(), EngineError> {
    hand_over(engine, pushed, in_flight, stamp);
    engine.submit()
}

/// Slot `slot`'s buffer for `op`: reads land in buffer 2i, writes come from 2i+1, so read data never leaks
/// into a later write.
#[inline]
pub(crate) fn slot_buffer(slot: u32, write: bool) -> u32 {
    2 * slot + u32::from(write)
}

/// Pushes `op` for slot `slot` at `generation` (`user_data = generation << 32 | slot`); no syscall.
#[inline]
pub(crate) fn push_op<E: Engine>(engine: &mut E, slot: u32, generation: u32, op: &GenOp) {
    engine.push(Op {
        user_data: (generation as u64) << 32 | slot as u64,
        write: op.write,
        target: op.target,
        offset: op.offset,
        len: op.len,
        buf: slot_buffer(slot, op.write),
    });
}

/// Checks that completion `c` belongs to slot `idx` in flight with this generation (a mismatch is a bug and
/// asserts), and pushes the op again on EAGAIN/EINTR (same slot, same intended start). Returns true when it
/// was resubmitted; the caller then leaves the slot busy.
pub(crate) fn retry_if_transient<E: Engine>(
    engine: &mut E,
    c: &Completion,
    busy: bool,
    generation: u32,
    op: &GenOp,
    pushed: &mut Vec<u32>,
) -> bool {
    let idx = (c.user_data & 0xFFFF_FFFF) as u32;
    assert!(
        busy && generation == (c.user_data >> 32) as u32,
        "completion for slot {idx} that is not in flight (bug)"
    );
    if c.result == -libc::EAGAIN || c.result == -libc::EINTR {
        push_op(engine, idx, generation, op);
        pushed.push(idx);
        return true;
    }
    assert!(c.result != -libc::EFAULT, "EFAULT: iolab passed a bad buffer (bug)");
    false
}

#[derive(Clone, Copy, Default)]
struct Slot {
    intended_ns: u64,
    submitted_ns: u64,
    op: Option<GenOp>,
    generation: u32,
    busy: bool,
}

/// Builds the worker's engine (in this thread: io_uring SINGLE_ISSUER rings belong to their creator), waits for
/// all workers at the barrier, then runs. A setup failure still passes the barrier and raises the stop flag, so
/// the other workers end at once.
pub fn run_worker(setup: WorkerSetup) -> Result<WorkerOutput, EngineError> {
    let w = &setup.plan;
    // A cache needs staging buffers for its write-backs (and a real cache device its own), as large as a line.
    let staging = setup.cache.as_ref().map_or(0, |c| c.extra_buffers(w.qd));
    let line = setup.cache.as_ref().map_or(0, |c| c.cache.config().line_bytes as u64);
    // Under --verify the data also depends on the run: a sector an earlier run with the same seed left behind
    // (a torn or lost write) then never equals what this run wrote there, so it cannot pass for it. Written
    // bytes are not reproducible under --verify anyway (headers carry the run id and a timestamp).
    let run_salt = setup.verify.as_ref().map_or(0, |v| v.verifier.run_id());
    let data_seed = setup.seed ^ w.index as u64 ^ run_salt;
    let buffers = Buffers::new(2 * w.qd + staging, w.max_bs.max(line), w.data, data_seed);
    let slots = w.qd + setup.cache.as_ref().map_or(0, |c| c.extra_slots());
    let clock = RealClock::new(setup.epoch);
    let fail = |e: EngineError| {
        setup.stop.store(true, Ordering::Relaxed);
        setup.barrier.wait();
        Err(e)
    };
    let layered = setup.cache.is_some()
        || setup.links.iter().any(Option::is_some)
        || setup.verify.is_some()
        || setup.faults.is_some();
    if !layered {
        return match &setup.engine {
            EngineChoice::Uring => match UringEngine::new(slots, setup.files.clone(), buffers, clock) {
                Ok(mut e) => run(&mut e, &setup),
                Err(err) => fail(err),
            },
            EngineChoice::Sync => run(&mut SyncEngine::new(setup.files.clone(), buffers, clock), &setup),
            EngineChoice::Mem(store) => {
                run(&mut MemEngine::new(Some(store.clone()), buffers, slots, clock), &setup)
            }
            EngineChoice::Null => run(&mut MemEngine::new(None, buffers, slots, clock), &setup),
            EngineChoice::Sim { targets, client, virtual_clock } => {
                let c = if *virtual_clock { None } else { Some(clock) };
                run(&mut SimEngine::new(targets.clone(), *client, slots, buffers, c), &setup)
            }
        };
    }
    // Layers over a boxed base engine: base <- faults <- links <- cache <- verify.
    let base: Box<dyn Engine> = match &setup.engine {
        EngineChoice::Uring => match UringEngine::new(slots, setup.files.clone(), buffers, clock) {
            Ok(e) => Box::new(e),
            Err(err) => return fail(err),
        },
        EngineChoice::Sync => Box::new(SyncEngine::new(setup.files.clone(), buffers, clock)),
        EngineChoice::Mem(store) => Box::new(MemEngine::new(Some(store.clone()), buffers, slots, clock)),
        EngineChoice::Null => Box::new(MemEngine::new(None, buffers, slots, clock)),
        EngineChoice::Sim { targets, client, virtual_clock } => {
            let c = if *virtual_clock { None } else { Some(clock) };
            Box::new(SimEngine::new(targets.clone(), *client, slots, buffers, c))
        }
    };
    let faulty: Box<dyn Engine> = match &setup.faults {
        Some(wf) => Box::new(FaultEngine::new(base, wf.clone(), slots)),
        None => base,
    };
    let linked: Box<dyn Engine> = if setup.links.iter().any(Option::is_some) {
        Box::new(LinkEngine::new(faulty, &setup.links, slots))
    } else {
        faulty
    };
    let cached: Box<dyn Engine> = match &setup.cache {
        Some(wc) => Box::new(CacheEngine::new(linked, wc.clone(), w.qd)),
        None => linked,
    };
    match &setup.verify {
        Some(wv) => run(&mut VerifyEngine::new(cached, wv.clone(), w.qd), &setup),
        None => run(&mut { cached }, &setup),
    }
}

/// Drives the worker, then lets the engine finish (a write-back cache writes its dirty lines back).
fn run<E: Engine>(engine: &mut E, s: &WorkerSetup) -> Result<WorkerOutput, EngineError> {
    let out = drive(engine, s)?;
    engine.finish()?;
    Ok(out)
}

fn drive<E: Engine>(engine: &mut E, s: &WorkerSetup) -> Result<WorkerOutput, EngineError> {
    if s.plan.loadgen.is_some() {
        return crate::txn::drive_transactions(engine, s);
    }
    let w = &s.plan;
    let qd = w.qd as usize;
    let mut gen = OpGen::new(w, &s.regions, Rng::for_worker(s.seed, w.index));
    let mut slots = vec![Slot::default(); qd];
    let mut free: Vec<u32> = (0..qd as u32).rev().collect();
    let mut pushed: Vec<u32> = Vec::with_capacity(qd);
    let mut done: Vec<Completion> = Vec::with_capacity(2 * qd);
    let mut read = OpStats::new();
    let mut write = OpStats::new();
    let mut interval = IntervalStats::new(0);
    let mut sources = s.cache.as_ref().map(|_| Box::<ReadSources>::default());
    let (ios_limit, bytes_limit) = (w.ios.unwrap_or(u64::MAX), w.bytes.unwrap_or(u64::MAX));

    s.barrier.wait();
    let start = engine.now_ns();
    let measure_start = start + s.ramp_ns;
    let end = s.duration_ns.map(|d| measure_start + d);
    let last_interval = s.duration_ns.map(|d| d.div_ceil(s.interval_ns).max(1) - 1).unwrap_or(u64::MAX);
    let mut arrivals = w
        .rate_iops
        .map(|r| Arrivals::new(r, w.arrival, start, Rng::for_worker(s.seed ^ ARRIVAL_SALT, w.index)));

    let (mut issued, mut issued_bytes, mut retries, mut seq) = (0u64, 0u64, 0u64, 0u64);
    let mut in_flight = 0usize;
    let mut stopping = false;
    let mut stopped_early = false;
    let mut stop_at = None;
    let mut last_completion = measure_start;
    let mut record_until = end.unwrap_or(u64::MAX);
    let mut now = start;

    loop {
        // 1. Stop issuing at the end, on a limit, or on request.
        if !stopping {
            let over_time = end.is_some_and(|e| now >= e);
            let limit = issued >= ios_limit
                || issued_bytes >= bytes_limit
                || (now >= measure_start && s.finish.load(Ordering::Relaxed));
            let requested = s.stop.load(Ordering::Relaxed);
            if over_time || limit || requested {
                stopping = true;
                stopped_early = requested && !over_time && !limit;
                stop_at = Some(if over_time { end.unwrap_or(now) } else { now });
                if requested {
                    record_until = record_until.min(now);
                }
            }
        }
        // 2. Fill free slots.
        let mut refilled = 0u32;
        if !stopping {
            while let Some(&slot) = free.last() {
                let intended = match &mut arrivals {
                    None => now,
                    Some(a) => {
                        let t = a.peek();
                        if t > now || end.is_some_and(|e| t >= e) {
                            break;
                        }
                        a.take()
                    }
                };
                if issued >= ios_limit || issued_bytes >= bytes_limit {
                    break;
                }
                free.pop();
                let op = gen.next_op();
                if intended >= measure_start {
                    issued += 1;
                    issued_bytes += op.len as u64;
                }
                let buf = slot_buffer(slot, op.write);
                if op.write {
                    seq += 1;
                    stamp_write(engine.buffer_mut(buf), op.len as usize, op.offset, seq, w.data);
                }
                let sl = &mut slots[slot as usize];
                debug_assert!(!sl.busy, "a free slot is not busy");
                sl.generation = sl.generation.wrapping_add(1);
                sl.intended_ns = intended;
                sl.op = Some(op);
                sl.busy = true;
                push_op(engine, slot, sl.generation, &op);
                pushed.push(slot);
                refilled += 1;
                if submit_early(refilled) && !free.is_empty() {
                    submit_now(engine, &mut pushed, &mut in_flight, |i, t| slots[i].submitted_ns = t)?;
                }
            }
        }
        if stopping && in_flight == 0 && pushed.is_empty() {
            break;
        }
        // 3. Submit and wait: for a completion, the next arrival, the end, or a tick.
        let next_arrival = arrivals.as_ref().filter(|_| !free.is_empty()).map(Arrivals::peek);
        let deadline = wait_deadline(now, stopping, end, next_arrival);
        submit_batch(engine, &mut pushed, &mut in_flight, deadline, &mut done, |i, t| {
            slots[i].submitted_ns = t
        })?;
        now = engine.now_ns();

        // 4. Record completions.
        for c in done.drain(..) {
            let idx = (c.user_data & 0xFFFF_FFFF) as usize;
            let sl = &mut slots[idx];
            let op = sl.op.unwrap_or(GenOp { target: 0, write: false, offset: 0, len: 0 });
            if retry_if_transient(engine, &c, sl.busy, sl.generation, &op, &mut pushed) {
                retries += 1;
                in_flight -= 1;
                continue;
            }
            in_flight -= 1;
            sl.busy = false;
            free.push(idx as u32);
            // The window counts completions in [ramp end, end): throughput is what the target delivered in the
            // window, even for ops that queued during the ramp (open loop under overload).
            if now < measure_start || now >= record_until {
                continue;
            }
            let lat = now - sl.intended_ns;
            let svc = now - sl.submitted_ns;
            let stats = if op.write { &mut write } else { &mut read };
            if c.result >= 0 {
                stats.record_ok(op.len, c.result as u32, lat, svc);
                advance_interval(
                    &mut interval,
                    ((now - measure_start) / s.interval_ns).min(last_interval),
                    w.index,
                    &s.events,
                );
                interval.record(op.write, c.result as u64, lat);
                if let Some(src) = sources.as_deref_mut().filter(|_| !op.write) {
                    interval.cache_hits += u64::from(c.cached);
                    let h = if c.cached { &mut src.from_cache } else { &mut src.from_target };
                    h.record(lat);
                }
            } else {
                stats.record_error(-c.result);
                if s.stop_on_error {
                    s.stop.store(true, Ordering::Relaxed);
                }
            }
            last_completion = now;
        }
        // Keep the live view moving when nothing completes.
        if now >= measure_start {
            advance_interval(
                &mut interval,
                ((now - measure_start) / s.interval_ns).min(last_interval),
                w.index,
                &s.events,
            );
        }
    }
    let _ = s.events.send(WorkerEvent::Interval { worker: w.index, stats: interval });

    let stop = stop_at.unwrap_or(now);
    let window_end = match s.duration_ns {
        Some(_) if !stopped_early => stop,
        _ => {
            if stopped_early {
                stop
            } else {
                last_completion
            }
        }
    };
    let backlog_at_end = arrivals.as_ref().map_or(0, |a| a.due_before(stop));
    Ok(WorkerOutput {
        index: w.index,
        engine: engine.name(),
        features: engine.features(),
        read,
        write,
        window_ns: window_end.saturating_sub(measure_start),
        issued,
        backlog_at_end,
        retries,
        stopped_early,
        txn: None,
        read_sources: sources,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_plan::{Plan, TargetGeometry};
    use iolab_spec::{JobSpec, TargetSpec};
    use std::sync::mpsc;

    #[test]
    fn early_submits_come_in_doubling_chunks() {
        let at: Vec<u32> = (1..=64).filter(|&n| submit_early(n)).collect();
        assert_eq!(at, [1, 3, 7, 15, 31, 63]);
    }

    /// `null:` under a recorder: how many ops each `submit` and each `submit_and_reap` handed over.
    struct Recorder {
        inner: MemEngine,
        since: u32,
        submits: Vec<u32>,
        waits: Vec<u32>,
    }

    impl Engine for Recorder {
        fn name(&self) -> &'static str {
            "recorder"
        }
        fn features(&self) -> Vec<String> {
            Vec::new()
        }
        fn now_ns(&self) -> u64 {
            self.inner.now_ns()
        }
        fn buffer_mut(&mut self, buf: u32) -> &mut [u8] {
            self.inner.buffer_mut(buf)
        }
        fn push(&mut self, op: Op) {
            self.since += 1;
            self.inner.push(op)
        }
        fn submit(&mut self) -> Result<(), EngineError> {
            self.submits.push(std::mem::take(&mut self.since));
            Ok(())
        }
        fn submit_and_reap(&mut self, d: Option<u64>, out: &mut Vec<Completion>) -> Result<(), EngineError> {
            self.waits.push(std::mem::take(&mut self.since));
            self.inner.submit_and_reap(d, out)
        }
    }

    /// A refill of all 32 slots (every op of `null:` completes in the next call) goes out as 1, 2, 4, 8 and
    /// 16 ops by `submit` and the last one with the wait, turn after turn.
    #[test]
    fn a_full_refill_goes_out_early_in_doubling_chunks() {
        let job = "ios = 320\nramp = \"0\"\nseed = 1\nqd = 32\nbs = \"4k\"\nrw = \"randread\"\n";
        let spec = JobSpec::from_toml(job, "test.toml").expect("job parses");
        let target = TargetSpec::parse("null:16M").expect("target parses");
        let plan = Plan::from_spec(&spec, Some(&target)).expect("plan");
        let regions = plan.bind(&[TargetGeometry { size_bytes: 16 << 20, block_bytes: 512 }]).expect("bind");
        let (tx, _rx) = mpsc::channel();
        let setup = WorkerSetup {
            plan: plan.workers[0].clone(),
            regions: regions[0].clone(),
            files: Vec::new(),
            engine: EngineChoice::Null,
            links: Vec::new(),
            cache: None,
            verify: None,
            faults: None,
            stop_on_error: false,
            seed: plan.seed,
            ramp_ns: 0,
            duration_ns: None,
            interval_ns: 1_000_000_000,
            epoch: Instant::now(),
            stop: Arc::new(AtomicBool::new(false)),
            finish: Arc::new(AtomicBool::new(false)),
            barrier: Arc::new(Barrier::new(1)),
            events: tx,
        };
        let clock = RealClock::new(setup.epoch);
        let inner = MemEngine::new(None, Buffers::new(64, 4096, setup.plan.data, 1), 32, clock);
        let mut e = Recorder { inner, since: 0, submits: Vec::new(), waits: Vec::new() };
        let out = run(&mut e, &setup).expect("run");
        assert_eq!(out.read.ops, 320);
        assert_eq!(e.submits, [1, 2, 4, 8, 16].repeat(10), "early submits");
        assert_eq!(e.waits[..10], [1; 10], "what each wait handed over");
        assert!(e.waits[10..].iter().all(|&n| n == 0), "nothing is pushed while draining: {:?}", e.waits);
    }
}
