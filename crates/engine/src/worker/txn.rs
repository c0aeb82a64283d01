//! The transaction driver: LoadGen-style users issuing transactions (named sequences of I/Os), used by
//! [`crate::run_worker`] instead of the op loop ([`super::ops`]) when the worker's plan has transactions.
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
//! Times, slots and the window are the op loop's ([`super::slots`], [`super::window`]): a step's I/O goes into the worker's read or write
//! `OpStats` with response time = completion - the step's issue, service time = completion - submission; a
//! transaction completing in [ramp end, end) is recorded with latency = completion - intended start, into a
//! histogram per transaction type and one overall. The *backlog* (dispatched, not completed: pending + in
//! progress) is sampled when each interval closes and goes into [`IntervalStats::txn`](iolab_stats::IntervalStats::txn) with the interval's
//! dispatched and completed counts. After the end (or a stop), nothing new is issued, transactions in progress
//! are abandoned after their current I/O, and in-flight I/O is drained unrecorded.
//!
//! Nothing here allocates, locks or formats per I/O or per transaction: slots, the pending ring and the
//! histograms are allocated before the barrier; intervals are sent once per interval.

use super::interface::{SplitCounter, TxnStats, WorkerOutput, WorkerSetup};
use super::record::Recorder;
use super::slots::Slots;
use super::window::{begin, Window, WorkerSeries};
use crate::dedupe::DedupeState;
use crate::{Completion, Engine, EngineError};
use iolab_plan::arrival::Arrivals;
use iolab_plan::gen::OpKind;
use iolab_plan::loadgen::{TxnGen, WorkerTxnPlan, PENDING_CAP};
use iolab_rng::Rng;
use iolab_spec::loadgen::LoadgenMode;
use iolab_stats::OpStats;
use std::sync::atomic::Ordering;

/// A slot's transaction in progress.
#[derive(Clone, Copy, Default)]
struct Progress {
    txn: u16,
    step: u16,
    steps: u16,
    failed: bool,
    /// The transaction's intended start.
    intended_ns: u64,
    /// When the current step was issued.
    step_start_ns: u64,
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
    /// The pending arrivals, oldest first.
    fn iter(&self) -> impl Iterator<Item = &(u64, u16)> {
        (0..self.len).map(|k| &self.buf[(self.head + k) % self.buf.len()])
    }
}

/// The transaction driver's state.
struct TxnLoop<'a> {
    s: &'a WorkerSetup,
    gen: TxnGen,
    slots: Slots<Progress>,
    done: Vec<Completion>,
    read: OpStats,
    write: OpStats,
    series: WorkerSeries<'a>,
    rate_mode: bool,
    ring: Ring,
    stats: TxnStats,
    /// Transactions in progress.
    executing: u64,
    /// Transactions completed at or after the end before the stop was noticed: outside the window, so still
    /// in its backlog (dispatched - completed = backlog at end holds exactly).
    late: u64,
    /// The I/Os in flight when the window closed, counted as they complete after it.
    at_end: iolab_stats::InFlightAtEnd,
    /// The ramp's backlog has been carried into the window.
    carried: bool,
    /// Split I/Os per target, when some target has extent boundaries.
    splits: Option<SplitCounter<'a>>,
    /// `--trace`: every completed step's I/O (its intended start is the step's issue).
    trace: Option<Recorder>,
}

/// Runs the worker's users until the end, a finish or a stop request. See the module header.
pub(crate) fn drive_transactions<E: Engine>(
    engine: &mut E,
    s: &WorkerSetup,
) -> Result<WorkerOutput, EngineError> {
    let w = &s.task.plan;
    let lg: &WorkerTxnPlan = match &w.loadgen {
        Some(l) => l,
        None => unreachable!("drive_transactions without transactions (bug)"),
    };
    let qd = w.qd as usize;
    let rate_mode = lg.mode == LoadgenMode::Rate;
    let mut l = TxnLoop {
        s,
        gen: TxnGen::new(lg, &s.task.regions, Rng::for_worker(s.task.seed ^ crate::salts::TXN, w.index)),
        slots: Slots::new(qd, w.data, w.durability).with_dedupe(DedupeState::of_worker(
            w,
            &s.task.regions,
            s.task.seed,
        )),
        done: Vec::with_capacity(2 * qd),
        read: OpStats::new(),
        write: OpStats::new(),
        series: WorkerSeries::new(w.index, &s.control.events),
        rate_mode,
        ring: Ring::new(if rate_mode { PENDING_CAP } else { 1 }),
        stats: TxnStats::new(lg.transactions.len()),
        executing: 0,
        late: 0,
        at_end: iolab_stats::InFlightAtEnd::default(),
        carried: false,
        splits: SplitCounter::new(&s.task.boundaries),
        trace: s.tools.trace.as_ref().map(|t| Recorder::new(t, s.task.plan.index)),
    };
    let (window, arrivals) = begin(engine, s, lg.rate_per_s.filter(|_| rate_mode), (lg.arrival, 1));
    if let Some(t) = l.trace.as_mut() {
        t.origin = window.start;
    }
    l.run(engine, window, arrivals)
}

impl TxnLoop<'_> {
    fn run<E: Engine>(
        mut self,
        engine: &mut E,
        mut window: Window,
        mut arrivals: Option<Arrivals>,
    ) -> Result<WorkerOutput, EngineError> {
        let mut now = window.start;
        loop {
            self.carry_in(&window, &arrivals, now);
            // 1. Dispatch due arrivals (rate mode).
            if !window.stopping {
                self.dispatch(&window, &mut arrivals, now);
            }
            // 2. Stop issuing at the end, on finish, or on request.
            if window.check_stop(now, false, self.s) {
                self.stopped(&window, &arrivals, now);
            }
            // 3. Start transactions in free slots.
            if !window.stopping {
                self.start_transactions(engine, &window, &arrivals, now);
            }
            if window.stopping && self.slots.drained() {
                break;
            }
            // 4. Submit and wait: for a completion, the next arrival (while the ring has room), the end, or a
            // tick.
            let next_arrival = arrivals.as_ref().filter(|_| !self.ring.is_full()).map(Arrivals::peek);
            let deadline = window.deadline(now, next_arrival);
            self.slots.submit_and_wait(engine, deadline, &mut self.done)?;
            now = engine.now_ns();
            self.carry_in(&window, &arrivals, now);
            // 5. Completions: record the I/O, then issue the next step or complete the transaction.
            let mut done = std::mem::take(&mut self.done);
            for c in done.drain(..) {
                self.complete(engine, &window, &arrivals, now, &c);
            }
            self.done = done;
            // Keep the series moving when nothing completes.
            if window.measuring(now) && !window.stopping {
                self.series.close_until(window.interval_at(now), self.backlog(&arrivals, now), 0);
                self.series.deliver();
            }
        }
        self.series.current.txn.backlog = self.stats.backlog_at_end;
        self.series.close();
        Ok(WorkerOutput {
            index: self.s.task.plan.index,
            engine: engine.name(),
            features: engine.features(),
            read: self.read,
            write: self.write,
            flush: OpStats::new(),
            trim: OpStats::new(),
            window_ns: window.length(now, None),
            ramp_ns: window.ramp_length(now),
            backlog_at_end: 0,
            in_flight_at_end: self.at_end,
            retries: self.slots.retries,
            stopped_early: window.stopped_early,
            txn: Some(self.stats),
            read_sources: None,
            per_target: None,
            split_ios: SplitCounter::into_counts(self.splits),
            trace_waits: self.trace.map_or(0, Recorder::finish),
            lag: None,
            pacing: None,
        })
    }

    /// Backlog at `now`: pending in the ring + in progress + due arrivals the ring had no room for.
    #[inline]
    fn backlog(&self, arrivals: &Option<Arrivals>, now: u64) -> u64 {
        self.ring.len as u64 + self.executing + arrivals.as_ref().map_or(0, |a| a.due_before(now + 1))
    }

    /// Once, at the start of the window: the transactions dispatched during the ramp and not completed
    /// (pending, in progress, due beyond the ring) are carried into the window's dispatched count, so that
    /// dispatched - completed = the backlog at the end, exactly, as LoadGen's counters read over a whole run.
    fn carry_in(&mut self, window: &Window, arrivals: &Option<Arrivals>, now: u64) {
        if self.carried || !window.measuring(now) {
            return;
        }
        self.carried = true;
        let stats = &mut self.stats;
        let in_progress = self.slots.busy().map(|held| held.driver_state.txn);
        for txn in in_progress.chain(self.ring.iter().map(|&(_, txn)| txn)) {
            stats.dispatch(txn);
        }
        stats.dispatched += arrivals.as_ref().map_or(0, |a| a.due_before(window.measure_start));
    }

    /// Step 1, rate mode: every due arrival is dispatched into the pending ring (while it has room), also at
    /// the end (arrivals due before the end count even when they will never start).
    fn dispatch(&mut self, window: &Window, arrivals: &mut Option<Arrivals>, now: u64) {
        let Some(a) = arrivals else { return };
        while !self.ring.is_full() && a.peek() <= now && window.end.is_none_or(|e| a.peek() < e) {
            let t = a.take();
            let txn = self.gen.next_txn();
            self.ring.push((t, txn));
            if t >= window.measure_start {
                self.stats.dispatch(txn);
                if window.measuring(now) {
                    self.series.current.txn.dispatched += 1;
                }
            }
        }
    }

    /// At the stop: arrivals due before it that the ring had no room for were dispatched too; the backlog at
    /// the end is fixed here.
    fn stopped(&mut self, window: &Window, arrivals: &Option<Arrivals>, now: u64) {
        let beyond = arrivals.as_ref().map_or(0, |a| a.due_before(window.stop(now)));
        self.stats.beyond_ring += beyond;
        self.stats.dispatched += beyond;
        self.stats.backlog_at_end = self.ring.len as u64 + self.executing + beyond + self.late;
    }

    /// Step 3: starts transactions in free slots: pending arrivals in rate mode, new ones in stress mode.
    fn start_transactions<E: Engine>(
        &mut self,
        engine: &mut E,
        window: &Window,
        arrivals: &Option<Arrivals>,
        now: u64,
    ) {
        while self.slots.next_free().is_some() {
            let (intended, txn) = if self.rate_mode {
                match self.ring.pop() {
                    Some(p) => p,
                    None => break,
                }
            } else {
                let txn = self.gen.next_txn();
                if window.measuring(now) {
                    self.stats.dispatch(txn);
                    self.series.current.txn.dispatched += 1;
                }
                (now, txn)
            };
            let slot = self.slots.take_free();
            let steps = self.gen.step_count(txn);
            let p =
                Progress { txn, step: 0, steps, failed: false, intended_ns: intended, step_start_ns: now };
            self.slots.get_mut(slot).driver_state = p;
            let op = self.gen.step_op(txn, 0);
            self.slots.issue(engine, slot, op);
            self.executing += 1;
        }
        self.stats.executing_max = self.stats.executing_max.max(self.executing);
        if window.measuring(now) {
            self.stats.backlog_max = self.stats.backlog_max.max(self.backlog(arrivals, now));
        }
    }

    /// Step 5: records the I/O of completion `c` (or resubmits it on a transient error), then issues the next
    /// step of its transaction or completes it.
    fn complete<E: Engine>(
        &mut self,
        engine: &mut E,
        window: &Window,
        arrivals: &Option<Arrivals>,
        now: u64,
        c: &Completion,
    ) {
        let Some(idx) = self.slots.reap(engine, c) else { return };
        if let Some(t) = self.trace.as_mut() {
            let held = self.slots.get(idx);
            t.record((held.driver_state.step_start_ns, held.submitted_ns, now), &held.op, c.result);
        }
        let in_window = window.records(now);
        if let Some(after) = window.after_end(now) {
            self.at_end.add(now - self.slots.get(idx).driver_state.step_start_ns, after);
        }
        if in_window {
            self.series.close_until(window.interval_at(now), self.backlog(arrivals, now), 0);
            self.series.deliver();
            let held = self.slots.get(idx);
            let (op, lat) = (held.op, now - held.driver_state.step_start_ns);
            if let Some(splits) = self.splits.as_mut() {
                splits.count(&op);
            }
            let write = op.kind == OpKind::Write;
            let stats = if write { &mut self.write } else { &mut self.read };
            if c.result >= 0 {
                stats.record_ok(op.len, c.result as u32, lat, now - held.submitted_ns);
                self.series.current.record(write, c.result as u64, lat);
            } else {
                stats.record_error(-c.result);
            }
        }
        let p = &mut self.slots.get_mut(idx).driver_state;
        if c.result < 0 {
            p.failed = true;
            if self.s.control.stop_on_error {
                self.s.control.stop.store(true, Ordering::Relaxed);
            }
        }
        p.step += 1;
        let p = *p;
        if p.step < p.steps && !window.stopping {
            self.slots.get_mut(idx).driver_state.step_start_ns = now;
            let op = self.gen.step_op(p.txn, p.step);
            self.slots.issue(engine, idx, op);
            return;
        }
        // The transaction is over: complete, or abandoned after the end.
        self.slots.release(idx);
        self.executing -= 1;
        if p.step == p.steps && !window.stopping && window.past(now) {
            self.late += 1;
        }
        if p.step == p.steps && in_window {
            let lat = now - p.intended_ns;
            self.stats.completed += 1;
            self.stats.failed += u64::from(p.failed);
            self.stats.latency.record(lat);
            self.stats.latency_by_type[p.txn as usize].record(lat);
            self.series.current.txn.completed += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::sim::SimTarget;
    use crate::{run_worker, EngineChoice, WorkerEvent};
    use iolab_plan::{Plan, TargetGeometry};
    use iolab_spec::{JobSpec, SimSpec, TargetSpec};

    #[test]
    fn ring_wrapping_around_stays_fifo() {
        let mut r = Ring::new(2);
        r.push((1, 10));
        r.push((2, 20));
        assert!(r.is_full());
        assert_eq!(r.pop(), Some((1, 10)));
        r.push((3, 30)); // wraps to the first place
        assert_eq!(r.iter().copied().collect::<Vec<_>>(), [(2, 20), (3, 30)]);
        assert_eq!((r.pop(), r.pop(), r.pop()), (Some((2, 20)), Some((3, 30)), None));
    }

    /// One user in stress mode, transactions of a read then a write, on a 100 us device on virtual time: every
    /// transaction takes exactly two steps of 100 us.
    fn stress_run(duration: &str) -> (WorkerOutput, Vec<iolab_stats::IntervalStats>) {
        let job = format!(
            "duration = \"{duration}\"\nramp = \"0\"\nseed = 1\nclock = \"virtual\"\n[users]\ncount = 1\n\
             mode = \"stress\"\n[[transaction]]\nname = \"t\"\nsteps = [{{ rw = \"randread\", bs = \"4k\" }}, \
             {{ rw = \"write\", bs = \"4k\" }}]\n"
        );
        let spec = JobSpec::from_toml(&job, "t.toml").expect("job parses");
        let sim = SimSpec::Fixed { latency_ns: 100_000, servers: 8, size_bytes: 1 << 30 };
        let plan = Plan::from_spec(&spec, Some(&TargetSpec::Sim(sim.clone()))).expect("plan");
        let regions = plan.bind(&[TargetGeometry { size_bytes: 1 << 30, block_bytes: 512 }]).expect("bind");
        let targets = vec![SimTarget::single(&sim, plan.seed, plan.workers[0].qd, false)];
        let engine = EngineChoice::alone_on_virtual_time(targets);
        let (setup, rx) = WorkerSetup::for_test(&plan, regions[0].clone(), engine, 10_000_000);
        let out = run_worker(setup).expect("run_worker");
        let intervals = rx.iter().map(|WorkerEvent::Interval { stats, .. }| stats).collect();
        (out, intervals)
    }

    #[test]
    fn txn_stress_latency_is_the_sum_of_its_steps_and_the_books_balance() {
        let (out, intervals) = stress_run("100ms");
        let t = out.txn.as_ref().expect("transaction stats");
        // Transactions complete every 200 us; the one completing at exactly 100 ms is outside the window and
        // stays in the backlog.
        assert_eq!(t.completed, 499, "{t:?}");
        assert_eq!((t.latency.min(), t.latency.max()), (200_000, 200_000));
        assert_eq!(t.dispatched, 500);
        assert_eq!(t.dispatched_by_type, [500]);
        assert_eq!(t.backlog_at_end, t.dispatched - t.completed);
        assert_eq!((t.executing_max, t.failed, t.beyond_ring), (1, 0, 0));
        // Steps: reads complete at 100, 300, ... us, writes at 200, 400, ... us.
        assert_eq!((out.read.ops, out.write.ops), (500, 499));
        assert_eq!((out.read.lat.min(), out.read.lat.max()), (100_000, 100_000));
        assert_eq!(out.window_ns, 100_000_000);
        assert!(!out.stopped_early);
        let completed: u64 = intervals.iter().map(|i| i.txn.completed).sum();
        assert_eq!(completed, 499, "interval counts add up");
        assert_eq!(intervals.len(), 10);
        assert_eq!(intervals.last().map(|i| i.txn.backlog), Some(1), "the last interval carries the backlog");
    }
}
