//! The transaction driver: LoadGen-style users issuing transactions (named sequences of I/Os), used by
//! [`crate::run_worker`] instead of the plain op loop when the worker's plan has transactions.
//!
//! A *transaction in progress* holds one slot (`qd` = the worker's users x outstanding) and has exactly one
//! I/O in flight: its steps run in order, the next issued when the previous completes, because a transaction is
//! a dependent chain (a mail is logged, then its pages are written, then read back), and because its latency is
//! then the sum of its steps' latencies plus any wait, which is what a user of the storage sees.
//!
//! Dispatch:
//! - *rate mode* (LoadGen's normal mode): arrivals follow the worker's schedule ([`Arrivals`], users x per-user
//!   rate, Poisson by default). An arrival is *dispatched* at its scheduled time whether or not a slot is free;
//!   it waits in a ring of pending arrivals ([`PENDING_CAP`] entries, allocated once). When the ring is full,
//!   further arrivals stay in the schedule (nothing is lost or allocated) and are counted from its mean rate
//!   until there is room again. A transaction's *intended start* is its scheduled arrival, so the wait for a
//!   slot counts in its latency (no coordinated omission).
//! - *stress mode*: every free slot starts a transaction at once; its intended start is the moment the slot was
//!   freed, as in closed loop. At most users x outstanding transactions are in progress.
//!
//! Times and the window follow the plain loop (`worker.rs`): a step's I/O goes into the worker's read or write
//! `OpStats` with response time = completion - the step's issue, service time = completion - submission; a
//! transaction completing in [ramp end, end) is recorded with latency = completion - intended start, into a
//! histogram per transaction type and one overall. The *backlog* (dispatched, not completed: pending + in
//! progress) is sampled when each interval closes and goes into [`IntervalStats::txn`] with the interval's
//! dispatched and completed counts. After the end (or a stop), nothing new is issued, transactions in progress
//! are abandoned after their current I/O, and in-flight I/O is drained unrecorded.
//!
//! Nothing here allocates, locks or formats per I/O or per transaction: slots, the pending ring and the
//! histograms are allocated before the barrier; intervals are sent once per interval.

use crate::buffers::stamp_write;
use crate::worker::{
    push_op, retry_if_transient, slot_buffer, submit_batch, wait_deadline, WorkerEvent, WorkerOutput,
    WorkerSetup,
};
use crate::{Completion, Engine, EngineError};
use iolab_plan::arrival::Arrivals;
use iolab_plan::gen::GenOp;
use iolab_plan::loadgen::{TxnGen, PENDING_CAP};
use iolab_plan::rng::Rng;
use iolab_spec::loadgen::LoadgenMode;
use iolab_stats::{IntervalStats, LatencyHistogram, OpStats};
use std::sync::atomic::Ordering;
use std::sync::mpsc::Sender;

/// Salt for the transaction stream (types and offsets), independent of the arrival stream.
const TXN_SALT: u64 = 0x7258_4E00_0000_0003;
/// Salt for the arrival stream (the plain loop's value, so the schedules agree in kind).
const ARRIVAL_SALT: u64 = 0xA441_7A15_0000_0001;

/// What one worker measured about its transactions (the I/Os themselves are in [`WorkerOutput`]'s
/// `read`/`write`).
#[derive(Debug)]
pub struct TxnStats {
    /// Transactions dispatched in the window (rate mode: scheduled arrivals in [ramp end, end), including any
    /// beyond the pending ring; stress mode: started), plus those carried in from the ramp (dispatched then,
    /// not completed by the window's start), so dispatched - completed = `backlog_at_end`.
    pub dispatched: u64,
    /// Transactions completed in the window.
    pub completed: u64,
    /// Completed transactions of which some step failed.
    pub failed: u64,
    /// Per transaction type (plan order): dispatched in the window.
    pub dispatched_by_type: Vec<u64>,
    /// Per transaction type: latency (intended start -> last step's completion) of those completed in the window.
    pub latency_by_type: Vec<LatencyHistogram>,
    /// All types together.
    pub latency: LatencyHistogram,
    /// Dispatched and not completed when the run ended (pending + in progress + beyond the ring).
    pub backlog_at_end: u64,
    /// Largest backlog seen in the window.
    pub backlog_max: u64,
    /// Most transactions in progress at once.
    pub executing_max: u64,
    /// Arrivals that found the pending ring full (counted from the schedule, not held).
    pub beyond_ring: u64,
}

#[derive(Clone, Copy)]
struct TxnSlot {
    txn: u16,
    step: u16,
    steps: u16,
    failed: bool,
    busy: bool,
    generation: u32,
    /// The transaction's intended start.
    txn_intended_ns: u64,
    /// When the current step was issued.
    step_start_ns: u64,
    submitted_ns: u64,
    op: GenOp,
}

impl Default for TxnSlot {
    fn default() -> Self {
        TxnSlot {
            txn: 0,
            step: 0,
            steps: 0,
            failed: false,
            busy: false,
            generation: 0,
            txn_intended_ns: 0,
            step_start_ns: 0,
            submitted_ns: 0,
            op: GenOp { target: 0, write: false, offset: 0, len: 0 },
        }
    }
}

/// A fixed-capacity FIFO of pending arrivals: (intended start, transaction type).
struct Ring {
    buf: Vec<(u64, u16)>,
    head: usize,
    len: usize,
}

impl Ring {
    fn new(cap: usize) -> Ring {
        Ring { buf: vec![(0, 0); cap.max(1)], head: 0, len: 0 }
    }
    #[inline]
    fn is_full(&self) -> bool {
        self.len == self.buf.len()
    }
    #[inline]
    fn push(&mut self, v: (u64, u16)) {
        debug_assert!(!self.is_full());
        let i = (self.head + self.len) % self.buf.len();
        self.buf[i] = v;
        self.len += 1;
    }
    #[inline]
    fn pop(&mut self) -> Option<(u64, u16)> {
        if self.len == 0 {
            return None;
        }
        let v = self.buf[self.head];
        self.head = (self.head + 1) % self.buf.len();
        self.len -= 1;
        Some(v)
    }
}

/// At the start of the window: the transactions dispatched during the ramp and not completed (pending, in
/// progress, due beyond the ring) are carried into the window's dispatched count, so that dispatched -
/// completed = the backlog at the end, exactly, as LoadGen's counters read over a whole run.
fn carry_in(slots: &[TxnSlot], ring: &Ring, arrivals: &Option<Arrivals>, now: u64, stats: &mut TxnStats) {
    for sl in slots.iter().filter(|s| s.busy) {
        stats.dispatched += 1;
        stats.dispatched_by_type[sl.txn as usize] += 1;
    }
    for k in 0..ring.len {
        let (_, txn) = ring.buf[(ring.head + k) % ring.buf.len()];
        stats.dispatched += 1;
        stats.dispatched_by_type[txn as usize] += 1;
    }
    stats.dispatched += arrivals.as_ref().map_or(0, |a| a.due_before(now));
}

/// Closes intervals up to (not including) `k`, each with the current backlog.
fn close_intervals(
    interval: &mut IntervalStats,
    k: u64,
    backlog: u64,
    worker: u32,
    events: &Sender<WorkerEvent>,
) {
    while interval.index < k {
        interval.txn.backlog = backlog;
        let next = IntervalStats::new(interval.index + 1);
        let _ = events.send(WorkerEvent::Interval { worker, stats: std::mem::replace(interval, next) });
    }
}

/// Issues step `sl.step` of the slot's transaction: generates the I/O, stamps a write, bumps the generation
/// and pushes it (no syscall).
#[inline]
fn issue_step<E: Engine>(
    engine: &mut E,
    gen: &mut TxnGen,
    sl: &mut TxnSlot,
    slot: u32,
    now: u64,
    seq: &mut u64,
    data: iolab_spec::DataPattern,
) {
    let op = gen.step_op(sl.txn, sl.step);
    let buf = slot_buffer(slot, op.write);
    if op.write {
        *seq += 1;
        stamp_write(engine.buffer_mut(buf), op.len as usize, op.offset, *seq, data);
    }
    sl.generation = sl.generation.wrapping_add(1);
    sl.step_start_ns = now;
    sl.op = op;
    push_op(engine, slot, sl.generation, &op);
}

/// Runs the worker's users until the end, a finish or a stop request. See the module header.
pub fn drive_transactions<E: Engine>(engine: &mut E, s: &WorkerSetup) -> Result<WorkerOutput, EngineError> {
    let w = &s.plan;
    let lg = match &w.loadgen {
        Some(l) => l,
        None => unreachable!("drive_transactions without transactions (bug)"),
    };
    let qd = w.qd as usize;
    let n_types = lg.transactions.len();
    let mut gen = TxnGen::new(lg, &s.regions, Rng::for_worker(s.seed ^ TXN_SALT, w.index));
    let mut slots = vec![TxnSlot::default(); qd];
    let mut free: Vec<u32> = (0..qd as u32).rev().collect();
    let mut pushed: Vec<u32> = Vec::with_capacity(qd);
    let mut done: Vec<Completion> = Vec::with_capacity(2 * qd);
    let mut read = OpStats::new();
    let mut write = OpStats::new();
    let mut interval = IntervalStats::new(0);
    let rate_mode = lg.mode == LoadgenMode::Rate;
    let mut ring = Ring::new(if rate_mode { PENDING_CAP } else { 1 });
    let mut stats = TxnStats {
        dispatched: 0,
        completed: 0,
        failed: 0,
        dispatched_by_type: vec![0; n_types],
        latency_by_type: (0..n_types).map(|_| LatencyHistogram::new()).collect(),
        latency: LatencyHistogram::new(),
        backlog_at_end: 0,
        backlog_max: 0,
        executing_max: 0,
        beyond_ring: 0,
    };

    s.barrier.wait();
    let start = engine.now_ns();
    let measure_start = start + s.ramp_ns;
    let end = s.duration_ns.map(|d| measure_start + d);
    let last_interval = s.duration_ns.map(|d| d.div_ceil(s.interval_ns).max(1) - 1).unwrap_or(u64::MAX);
    let mut arrivals = lg
        .rate_per_s
        .filter(|_| rate_mode)
        .map(|r| Arrivals::new(r, lg.arrival, start, Rng::for_worker(s.seed ^ ARRIVAL_SALT, w.index)));

    let (mut retries, mut seq, mut issued) = (0u64, 0u64, 0u64);
    let mut in_flight = 0usize;
    let mut executing = 0u64;
    let mut stopping = false;
    let mut stopped_early = false;
    let mut stop_at = None;
    let mut record_until = end.unwrap_or(u64::MAX);
    let mut now = start;
    // Transactions completed at or after the end before the stop was noticed: outside the window, so still in
    // its backlog (dispatched - completed = backlog at end holds exactly).
    let mut late = 0u64;
    // Backlog: pending in the ring + in progress + due arrivals the ring had no room for.
    let backlog_now = |ring: &Ring, executing: u64, arrivals: &Option<Arrivals>, now: u64| -> u64 {
        ring.len as u64 + executing + arrivals.as_ref().map_or(0, |a| a.due_before(now + 1))
    };

    let mut carried = false;
    loop {
        if !carried && now >= measure_start {
            carried = true;
            carry_in(&slots, &ring, &arrivals, measure_start, &mut stats);
        }
        if !stopping {
            // 1. Rate mode: every due arrival is dispatched into the pending ring (while it has room), also at the end
            // (arrivals due before the end count even when they will never start).
            if let Some(a) = &mut arrivals {
                while !ring.is_full() && a.peek() <= now && end.is_none_or(|e| a.peek() < e) {
                    let t = a.take();
                    let txn = gen.next_txn();
                    ring.push((t, txn));
                    if t >= measure_start {
                        stats.dispatched += 1;
                        stats.dispatched_by_type[txn as usize] += 1;
                        if now >= measure_start {
                            interval.txn.dispatched += 1;
                        }
                    }
                }
            }
        }
        // 2. Stop issuing at the end, on finish, or on request.
        if !stopping {
            let over_time = end.is_some_and(|e| now >= e);
            let finish = now >= measure_start && s.finish.load(Ordering::Relaxed);
            let requested = s.stop.load(Ordering::Relaxed);
            if over_time || finish || requested {
                stopping = true;
                stopped_early = requested && !over_time && !finish;
                let at = if over_time { end.unwrap_or(now) } else { now };
                stop_at = Some(at);
                if requested {
                    record_until = record_until.min(now);
                }
                // Arrivals due before the end that the ring had no room for were dispatched too.
                let beyond = arrivals.as_ref().map_or(0, |a| a.due_before(at));
                stats.beyond_ring += beyond;
                stats.dispatched += beyond;
                stats.backlog_at_end = ring.len as u64 + executing + beyond + late;
            }
        }
        if !stopping {
            // 3. Start transactions in free slots.
            while let Some(&slot) = free.last() {
                let (intended, txn) = if rate_mode {
                    match ring.pop() {
                        Some(p) => p,
                        None => break,
                    }
                } else {
                    let txn = gen.next_txn();
                    if now >= measure_start {
                        stats.dispatched += 1;
                        stats.dispatched_by_type[txn as usize] += 1;
                        interval.txn.dispatched += 1;
                    }
                    (now, txn)
                };
                free.pop();
                let sl = &mut slots[slot as usize];
                debug_assert!(!sl.busy, "a free slot is not busy");
                sl.busy = true;
                sl.txn = txn;
                sl.step = 0;
                sl.steps = gen.step_count(txn);
                sl.failed = false;
                sl.txn_intended_ns = intended;
                issue_step(engine, &mut gen, sl, slot, now, &mut seq, w.data);
                pushed.push(slot);
                executing += 1;
            }
            stats.executing_max = stats.executing_max.max(executing);
            if now >= measure_start {
                stats.backlog_max = stats.backlog_max.max(backlog_now(&ring, executing, &arrivals, now));
            }
        }
        if stopping && in_flight == 0 && pushed.is_empty() {
            break;
        }
        // 4. Submit and wait: for a completion, the next arrival (while the ring has room), the end, or a tick.
        let next_arrival = arrivals.as_ref().filter(|_| !ring.is_full()).map(Arrivals::peek);
        let deadline = wait_deadline(now, stopping, end, next_arrival);
        let batch = pushed.len() as u64;
        let t_sub = submit_batch(engine, &mut pushed, &mut in_flight, deadline, &mut done, |i, t| {
            slots[i].submitted_ns = t
        })?;
        if t_sub >= measure_start {
            issued += batch;
        }
        now = engine.now_ns();
        if !carried && now >= measure_start {
            carried = true;
            carry_in(&slots, &ring, &arrivals, measure_start, &mut stats);
        }

        // 5. Completions: record the I/O, then issue the next step or complete the transaction.
        for c in done.drain(..) {
            let idx = (c.user_data & 0xFFFF_FFFF) as usize;
            let sl = &mut slots[idx];
            let op = sl.op;
            in_flight -= 1;
            if retry_if_transient(engine, &c, sl.busy, sl.generation, &op, &mut pushed) {
                retries += 1;
                continue;
            }
            let in_window = now >= measure_start && now < record_until;
            if in_window {
                close_intervals(
                    &mut interval,
                    ((now - measure_start) / s.interval_ns).min(last_interval),
                    backlog_now(&ring, executing, &arrivals, now),
                    w.index,
                    &s.events,
                );
                let stats_k = if op.write { &mut write } else { &mut read };
                if c.result >= 0 {
                    stats_k.record_ok(op.len, c.result as u32, now - sl.step_start_ns, now - sl.submitted_ns);
                    interval.record(op.write, c.result as u64, now - sl.step_start_ns);
                } else {
                    stats_k.record_error(-c.result);
                }
            }
            if c.result < 0 {
                sl.failed = true;
                if s.stop_on_error {
                    s.stop.store(true, std::sync::atomic::Ordering::Relaxed);
                }
            }
            sl.step += 1;
            if sl.step < sl.steps && !stopping {
                issue_step(engine, &mut gen, sl, idx as u32, now, &mut seq, w.data);
                pushed.push(idx as u32);
                continue;
            }
            // The transaction is over: complete, or abandoned after the end.
            sl.busy = false;
            free.push(idx as u32);
            executing -= 1;
            if sl.step == sl.steps && !stopping && now >= record_until {
                late += 1;
            }
            if sl.step == sl.steps && in_window {
                let lat = now - sl.txn_intended_ns;
                stats.completed += 1;
                stats.failed += u64::from(sl.failed);
                stats.latency.record(lat);
                stats.latency_by_type[sl.txn as usize].record(lat);
                interval.txn.completed += 1;
            }
        }
        // Keep the series moving when nothing completes.
        if now >= measure_start && !stopping {
            close_intervals(
                &mut interval,
                ((now - measure_start) / s.interval_ns).min(last_interval),
                backlog_now(&ring, executing, &arrivals, now),
                w.index,
                &s.events,
            );
        }
    }
    interval.txn.backlog = stats.backlog_at_end;
    let _ = s.events.send(WorkerEvent::Interval { worker: w.index, stats: interval });

    let stop = stop_at.unwrap_or(now);
    Ok(WorkerOutput {
        index: w.index,
        engine: engine.name(),
        features: engine.features(),
        read,
        write,
        window_ns: stop.saturating_sub(measure_start),
        issued,
        backlog_at_end: 0,
        retries,
        stopped_early,
        txn: Some(stats),
        read_sources: None,
    })
}
