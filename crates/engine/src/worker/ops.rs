//! The op loop: the driver of a worker without transactions. Each turn (1) decides whether to stop issuing,
//! (2) fills free slots with new ops, (3) submits them and waits for completions in one engine call, (4)
//! records each completion. Times, all on the engine's clock:
//!
//! - *intended start*: in closed loop, the moment the slot became free (the reap that freed it), so our own
//!   turn-around counts against us, as fio's `lat` does; in open loop, the op's scheduled arrival, so queueing
//!   behind a slow device is measured, not omitted (coordinated omission);
//! - *submitted*: taken just before the engine call that hands the op to the kernel;
//! - *completed*: taken just after the call that returned the completion.
//!
//! Response time (`lat`) = completed - intended; service time = completed - submitted. The window is the
//! shared one ([`super::window`]). Count-limited runs (`ios`, `bytes`) count ops issued (generated) with an
//! intended start after the ramp, and record every completion after it.
//!
//! Nothing in the loop allocates, locks or formats per I/O; histograms are preallocated and intervals are
//! sent to the cli thread once per interval. With `--trace`, each completion (ramp included) also goes into
//! the worker's trace batch ([`super::record`]).

use super::backlog::Backlog;
use super::interface::{ReadSources, SplitCounter, WorkerOutput, WorkerSetup};
use super::record::Recorder;
use super::slots::{submit_early, Slots};
use super::window::{begin, Window, WorkerSeries, PREPARE_IDLE_NS};
use crate::dedupe::DedupeState;
use crate::{Completion, Engine, EngineError};
use iolab_plan::arrival::Arrivals;
use iolab_plan::gen::{GenOp, OpGen, OpKind};
use iolab_rng::Rng;
use iolab_stats::OpStats;
use std::sync::atomic::Ordering;

/// The op loop's state; a slot's own state is its op's intended start.
struct OpLoop<'a> {
    s: &'a WorkerSetup,
    gen: OpGen,
    slots: Slots<u64>,
    done: Vec<Completion>,
    read: OpStats,
    write: OpStats,
    flush: OpStats,
    trim: OpStats,
    /// `fsync`/`fdatasync` every N writes: where the worker is between flushes.
    flushing: Option<Flushing>,
    /// `verify_backlog`: where the worker is between read-backs of what it wrote.
    backlog: Option<Backlog>,
    series: WorkerSeries<'a>,
    sources: Option<Box<ReadSources>>,
    ios_limit: u64,
    bytes_limit: u64,
    /// Ops (and their bytes) generated with an intended start after the ramp: what the limits count.
    issued: u64,
    issued_bytes: u64,
    last_completion: u64,
    /// Think time (closed loop): where the worker is in its bursts.
    think: Option<Thinking>,
    /// Reads and writes per target, when the worker has several (see [`WorkerOutput::per_target`]).
    per_target: Option<Vec<(OpStats, OpStats)>>,
    /// Split I/Os per target, when some target has extent boundaries.
    splits: Option<SplitCounter<'a>>,
    /// `--trace`: every completed op, ramp included (one predictable branch per I/O when off).
    trace: Option<Recorder>,
    /// `iolab replay`: the trace's ops in place of the generator and the arrivals.
    replay: Option<Replaying<'a>>,
    /// Open loop: each op's lag (submit - intended start), iolab's own delay in issuing it.
    lag: Option<Box<iolab_stats::LatencyHistogram>>,
    /// Whether a completion has more to do than the common path: per-target stats, split I/Os, `--trace`,
    /// replay or open-loop lag. One branch per I/O instead of one per feature.
    extras: bool,
    /// The ops in flight when the window closed, counted as they complete after it.
    at_end: iolab_stats::InFlightAtEnd,
    /// A block cache serves hits from RAM at push, on the real clock: each refill pushes the ops it would
    /// serve first ([`Engine::serves_at_push`]), so a hit does not wait for the refill's other ops to reach
    /// the kernel; the others wait in `later` meanwhile.
    hits_first: bool,
    later: Vec<(u64, GenOp)>,
    /// When the worker issues its first op: the window's start plus its `start_delay`.
    starts_at: u64,
    /// Its flow group (`flow`), when it is in one.
    flow: Option<Flowing<'a>>,
    /// Its queue-depth search (`latency_target`), when it has one.
    search: Option<crate::depth_search::DepthSearch>,
}

/// A worker in a flow group ([`crate::flow`]): its own count, whether it has joined, and, while it is ahead
/// of its share, whether it waits (for its ops in flight, then `flow_sleep`).
struct Flowing<'a> {
    group: &'a crate::flow::FlowGroup,
    plan: iolab_plan::Flow,
    mine: u64,
    joined: bool,
    /// Ahead of its share at the last look: nothing is issued, no arrival is waited for.
    held: bool,
    /// Drained while held: when it looks again.
    idle_until: Option<u64>,
}

impl Flowing<'_> {
    /// Whether the worker may issue an op at `now` (joining at its first look); `drained`: nothing in flight.
    fn may_issue(&mut self, now: u64, drained: bool) -> bool {
        if !self.joined {
            self.group.join(self.plan.weight);
            self.joined = true;
        }
        if let Some(until) = self.idle_until {
            if now < until {
                return false;
            }
            self.idle_until = None;
        }
        self.held = self.group.ahead(self.plan.weight, self.mine);
        if self.held && drained {
            self.idle_until = Some(now + self.plan.sleep_ns);
        }
        !self.held
    }

    /// One op issued.
    fn count(&mut self) {
        self.group.count();
        self.mine += 1;
    }

    /// The worker stops issuing: it leaves the group with its weight and count.
    fn leave(&mut self) {
        if std::mem::take(&mut self.joined) {
            self.group.leave(self.plan.weight, self.mine);
        }
    }
}

/// `iolab replay`'s source of ops: each op's intended start is the worker's start + its trace time / speed,
/// so timing never drifts (no gap is slept); at speed `max` it is the moment a slot is free (closed loop).
struct Replaying<'a> {
    ops: &'a [(u64, iolab_plan::gen::GenOp)],
    next: usize,
    start: u64,
    speed: Option<f64>,
    /// Actual submit - scheduled start, per op (timed replay).
    lag: Box<iolab_stats::LatencyHistogram>,
}

impl Replaying<'_> {
    /// The next op's scheduled start (timed replay), if there is one.
    #[inline]
    fn next_at(&self) -> Option<u64> {
        let speed = self.speed?;
        self.ops.get(self.next).map(|&(t, _)| self.start + (t as f64 / speed) as u64)
    }

    /// The next op and its intended start, when it is due at `now`.
    #[inline]
    fn due(&mut self, now: u64) -> Option<(u64, iolab_plan::gen::GenOp)> {
        let &(_, op) = self.ops.get(self.next)?;
        let intended = match self.next_at() {
            Some(t) if t > now => return None,
            Some(t) => t,
            None => now,
        };
        self.next += 1;
        Some((intended, op))
    }

    fn done(&self) -> bool {
        self.next >= self.ops.len()
    }
}

/// A worker that flushes every `every` writes, as an application that commits does: after the N-th write it
/// issues nothing new until its ops in flight have completed, then flushes each target written since the last
/// flush, and goes on when every flush has completed. A flush thus covers exactly the writes before it (a
/// flush only makes durable what completed before it was issued), and its latency is the flush's own.
struct Flushing {
    every: u32,
    /// Writes issued since the last flush.
    writes: u32,
    /// Per worker target: written since the last flush.
    dirty: Vec<bool>,
    /// Flushes in flight.
    in_flight: u32,
    /// Draining or flushing: nothing else is issued.
    due: bool,
}

impl Flushing {
    /// Counts a write to `target`; true when a flush is now due.
    #[inline]
    fn wrote(&mut self, target: u16) -> bool {
        self.writes += 1;
        self.dirty[target as usize] = true;
        if self.writes >= self.every {
            self.due = true;
        }
        self.due
    }

    /// The next target to flush, if any is dirty (cleared as it is taken).
    fn take_dirty(&mut self) -> Option<u16> {
        let t = self.dirty.iter().position(|d| *d)?;
        self.dirty[t] = false;
        Some(t as u16)
    }

    /// A flush completed; true when the barrier is over.
    fn flushed(&mut self) -> bool {
        self.in_flight -= 1;
        if self.in_flight == 0 && !self.dirty.iter().any(|d| *d) {
            self.writes = 0;
            self.due = false;
        }
        !self.due
    }
}

/// A worker with think time: I/Os left in the current burst, and the end of the idle time after a burst once
/// the burst has drained ([`iolab_plan::Think`]).
struct Thinking {
    plan: iolab_plan::Think,
    left: u32,
    idle_until: Option<u64>,
}

/// Runs the worker's ops until the end, a limit, a finish or a stop request. See the module header.
pub(crate) fn drive_ops<E: Engine>(engine: &mut E, s: &WorkerSetup) -> Result<WorkerOutput, EngineError> {
    let w = &s.task.plan;
    let qd = w.qd as usize;
    let mut l = OpLoop {
        s,
        gen: OpGen::new(w, &s.task.regions, Rng::for_worker(s.task.seed, w.index)),
        slots: Slots::new(qd, w.data, w.durability).with_dedupe(DedupeState::of_worker(
            w,
            &s.task.regions,
            s.task.seed,
        )),
        done: Vec::with_capacity(2 * qd),
        read: OpStats::new(),
        write: OpStats::new(),
        flush: OpStats::new(),
        trim: OpStats::new(),
        flushing: (w.durability.flush_every > 0).then(|| Flushing {
            every: w.durability.flush_every,
            writes: 0,
            dirty: vec![false; w.targets.len()],
            in_flight: 0,
            due: false,
        }),
        backlog: w.verify_backlog.map(Backlog::new),
        series: WorkerSeries::new(w.index, &s.control.events),
        sources: s.tools.cache.as_ref().map(|_| Box::<ReadSources>::default()),
        ios_limit: w.ios.unwrap_or(u64::MAX),
        bytes_limit: w.bytes.unwrap_or(u64::MAX),
        issued: 0,
        issued_bytes: 0,
        last_completion: 0,
        think: w.think.map(|plan| Thinking { plan, left: plan.burst, idle_until: None }),
        per_target: (w.targets.len() > 1)
            .then(|| w.targets.iter().map(|_| (OpStats::new(), OpStats::new())).collect()),
        splits: SplitCounter::new(&s.task.boundaries),
        trace: s.tools.trace.as_ref().map(|t| Recorder::new(t, w.index)),
        replay: s.task.replay.as_deref().map(|r| Replaying {
            ops: &r.ops,
            next: 0,
            start: 0,
            speed: r.speed,
            lag: Box::default(),
        }),
        lag: w.rate_iops.map(|_| Box::default()),
        extras: false,
        at_end: iolab_stats::InFlightAtEnd::default(),
        hits_first: hits_first(s),
        later: Vec::with_capacity(qd),
        starts_at: 0,
        flow: s.task.flow.as_deref().zip(w.flow).map(|(group, plan)| Flowing {
            group,
            plan,
            mine: 0,
            joined: false,
            held: false,
            idle_until: None,
        }),
        search: None,
    };
    l.extras = l.per_target.is_some()
        || l.splits.is_some()
        || l.trace.is_some()
        || l.replay.is_some()
        || l.lag.is_some();
    let (window, arrivals) = begin(engine, s, w.rate_iops, (w.arrival, w.arrival_burst));
    l.last_completion = window.measure_start;
    l.starts_at = window.start + w.start_delay_ns;
    l.search = w.latency_target.map(|t| crate::depth_search::DepthSearch::new(t, w.qd, l.starts_at));
    if let Some(t) = l.trace.as_mut() {
        t.origin = window.start;
    }
    if let (Some(r), Some(ops)) = (l.replay.as_mut(), s.task.replay.as_deref()) {
        r.start = *ops.start.get_or_init(|| window.start);
    }
    l.run(engine, window, arrivals)
}

/// Whether a refill pushes the ops the block cache serves from RAM first ([`OpLoop::hits_first`]): only where
/// the cache serves at push (no cache device) and handing ops to the kernel costs time in the refill (io_uring's
/// early submits). In-process engines submit nothing early, so there the order is the generator's and a hit
/// costs no second lookup (a hit in `mem:` stays at issue 5's cost, docs/BENCHMARKS.md).
fn hits_first(s: &WorkerSetup) -> bool {
    let in_ram = s.tools.cache.as_ref().is_some_and(|c| c.dev.is_none() && c.real_dev.is_none());
    in_ram && matches!(s.tools.engine, crate::EngineChoice::Uring)
}

impl OpLoop<'_> {
    fn run<E: Engine>(
        mut self,
        engine: &mut E,
        mut window: Window,
        mut arrivals: Option<Arrivals>,
    ) -> Result<WorkerOutput, EngineError> {
        let mut now = window.start;
        loop {
            // 1. Stop issuing at the end, on a limit, or on request.
            let limit = self.issued >= self.ios_limit
                || self.issued_bytes >= self.bytes_limit
                || self.replay.as_ref().is_some_and(Replaying::done);
            window.check_stop(now, limit, self.s);
            // 2. Fill free slots; once stopping, only the flush (or read-back) the last writes asked for (a
            // count-limited run ends on a write, and that write is not durable without it).
            if window.stopping {
                if let Some(f) = self.flow.as_mut() {
                    f.leave();
                }
            }
            if !window.stopping {
                self.fill(engine, &window, &mut arrivals, now)?;
            } else if self.flushing.as_ref().is_some_and(|f| f.due) {
                self.issue_flushes(engine, now);
            } else if self.backlog_due() {
                // And the read-back the last writes asked for, as fio verifies its backlog before the job ends.
                self.issue_backlog(engine, now)?;
            }
            if window.stopping && self.slots.drained() {
                break;
            }
            // 3. Submit and wait: for a completion, the next arrival, the end, or a tick. Behind a flush barrier
            // no arrival can be issued, so none is waited for (a due one would make the wait return at once,
            // again and again, until the barrier's ops completed: on virtual time, a wait that never lets the
            // clock move).
            // Held back by its flow group, a worker waits for its ops in flight or its look again, not for an
            // arrival that it may not issue.
            let barrier = self.flushing.as_ref().is_some_and(|f| f.due) || self.backlog_due();
            let held = self.flow.as_ref().is_some_and(|f| f.held);
            let next_arrival = arrivals
                .as_ref()
                .filter(|_| self.slots.any_free() && !barrier && !held)
                .map(Arrivals::peek)
                .or(self.think.as_ref().filter(|_| !barrier).and_then(|t| t.idle_until))
                .or(self.flow.as_ref().and_then(|f| f.idle_until))
                .or((now < self.starts_at).then_some(self.starts_at))
                .or(self.replay.as_ref().filter(|_| self.slots.any_free()).and_then(Replaying::next_at));
            let deadline = window.deadline(now, next_arrival);
            self.before_wait(now, deadline, next_arrival.is_some());
            self.slots.submit_and_wait(engine, deadline, &mut self.done)?;
            let waited_from = now;
            now = engine.now_ns();
            window.waited(waited_from, deadline, next_arrival.is_some(), !self.done.is_empty(), now);
            // 4. Record completions.
            let backlog = arrivals.as_ref().map_or(0, |a| a.due_before(now));
            let mut done = std::mem::take(&mut self.done);
            for c in done.drain(..) {
                self.complete(engine, &window, (now, backlog), &c);
            }
            self.done = done;
            if let Some(d) = self.search.as_mut() {
                d.check(now);
            }
            // Keep the live view moving when nothing completes.
            if window.measuring(now) {
                self.series.close_until(window.interval_at(now), 0, backlog);
            }
        }
        if let Some(f) = self.flow.as_mut() {
            f.leave();
        }
        self.series.close();
        let pacing = window.take_pacing().filter(|_| arrivals.is_some());
        Ok(WorkerOutput {
            index: self.s.task.plan.index,
            engine: engine.name(),
            features: engine.features(),
            read: self.read,
            write: self.write,
            flush: self.flush,
            trim: self.trim,
            window_ns: window.length(now, Some(self.last_completion)),
            ramp_ns: window.ramp_length(now),
            backlog_at_end: arrivals.as_ref().map_or(0, |a| a.due_before(window.stop(now))),
            in_flight_at_end: self.at_end,
            retries: self.slots.retries,
            stopped_early: window.stopped_early,
            txn: None,
            read_sources: self.sources,
            per_target: self.per_target,
            split_ios: SplitCounter::into_counts(self.splits),
            trace_waits: self.trace.map_or(0, Recorder::finish),
            lag: self.replay.map(|r| r.lag).or(self.lag),
            pacing,
        })
    }

    /// Before a wait that ends at `deadline` (`for_arrival`: bounded by an arrival): a closed interval is
    /// sent unless this wait is the spin before an arrival, and the next interval is made ahead when the
    /// worker is idle (nothing in flight, at least [`PREPARE_IDLE_NS`]), so neither falls between a spin and
    /// its arrival (`WorkerSeries`).
    #[inline]
    fn before_wait(&mut self, now: u64, deadline: u64, for_arrival: bool) {
        if deadline > now || !for_arrival {
            self.series.deliver();
        }
        if self.slots.taken() == 0 && deadline >= now.saturating_add(PREPARE_IDLE_NS) {
            self.series.prepare();
        }
    }

    /// Fills free slots with new ops (in open loop, only with arrivals due by `now` and before the end), and
    /// hands the first ones of the refill to the kernel early.
    #[inline]
    fn fill<E: Engine>(
        &mut self,
        engine: &mut E,
        window: &Window,
        arrivals: &mut Option<Arrivals>,
        now: u64,
    ) -> Result<(), EngineError> {
        if self.replay.is_some() {
            return self.refill_replay(engine, window, now);
        }
        if self.flushing.as_ref().is_some_and(|f| f.due) {
            self.issue_flushes(engine, now);
            return Ok(());
        }
        if self.backlog_due() {
            return self.issue_backlog(engine, now);
        }
        if now < self.starts_at {
            return Ok(());
        }
        let mut refilled = 0u32;
        let mut later = std::mem::take(&mut self.later);
        while self.slots.free() > later.len()
            && !self.flushing.as_ref().is_some_and(|f| f.due)
            && !self.backlog_due()
        {
            // Ops held back for the kernel (hits first) count as taken.
            let drained = self.slots.drained() && later.is_empty();
            if self.flow.as_mut().is_some_and(|f| !f.may_issue(now, drained)) {
                break;
            }
            let taken = self.slots.taken() + later.len();
            if self.search.as_mut().is_some_and(|d| !d.may_issue(taken, drained)) {
                break;
            }
            let (intended, op) = {
                let intended = match arrivals {
                    None => match self.think_gate(now) {
                        Some(t) => t,
                        None => break,
                    },
                    Some(a) => {
                        let t = a.peek();
                        if t > now || window.end.is_some_and(|e| t >= e) {
                            break;
                        }
                        a.take()
                    }
                };
                if self.issued >= self.ios_limit || self.issued_bytes >= self.bytes_limit {
                    break;
                }
                if let Some(f) = self.flow.as_mut() {
                    f.count();
                }
                (intended, self.gen.next_op())
            };
            if !self.hits_first {
                self.issue(engine, window, (intended, op), Some(&mut refilled))?;
            } else if self.slots.serves_at_push(engine, &op) {
                self.issue(engine, window, (intended, op), None)?;
            } else {
                self.account(window, intended, &op);
                later.push((intended, op));
            }
        }
        // Hits first: what the cache serves at push was served above, before these go to the kernel.
        for (intended, op) in later.drain(..) {
            self.push_in_slot(engine, intended, op, Some(&mut refilled))?;
        }
        self.later = later;
        Ok(())
    }

    /// A flush is due: once the ops in flight have completed, one flush per target written since the last, as
    /// many as there are free slots (the rest when these complete).
    #[inline(never)]
    fn issue_flushes<E: Engine>(&mut self, engine: &mut E, now: u64) {
        let Some(f) = self.flushing.as_mut() else { return };
        if f.in_flight == 0 && !self.slots.drained() {
            return; // the writes before the flush are still in flight
        }
        while self.slots.any_free() {
            let Some(target) = f.take_dirty() else { break };
            let slot = self.slots.take_free();
            self.slots.get_mut(slot).driver_state = now;
            self.slots.issue(engine, slot, GenOp { target, kind: OpKind::Flush, offset: 0, len: 0 });
            f.in_flight += 1;
        }
    }

    /// A read-back is due (`verify_backlog`): nothing else is issued.
    #[inline]
    fn backlog_due(&self) -> bool {
        self.backlog.as_ref().is_some_and(|b| b.due)
    }

    /// A read-back is due: once the ops in flight have completed, its reads, as many as there are free slots
    /// (the rest when these complete); not counted against the limits.
    #[inline(never)]
    fn issue_backlog<E: Engine>(&mut self, engine: &mut E, now: u64) -> Result<(), EngineError> {
        while self.slots.any_free() {
            let drained = self.slots.drained();
            let Some(op) = self.backlog.as_mut().and_then(|b| b.next_read(drained)) else { break };
            self.push_in_slot(engine, now, op, None)?;
        }
        Ok(())
    }

    /// [`OpLoop::refill`] for `iolab replay`: the trace's ops that are due.
    fn refill_replay<E: Engine>(
        &mut self,
        engine: &mut E,
        window: &Window,
        now: u64,
    ) -> Result<(), EngineError> {
        let mut refilled = 0u32;
        while self.slots.next_free().is_some() {
            let Some(due) = self.replay.as_mut().and_then(|r| r.due(now)) else { break };
            self.issue(engine, window, due, Some(&mut refilled))?;
        }
        Ok(())
    }

    /// Issues `op` intended at `intended` in a free slot (counted against the limits when in the window),
    /// submitting early every few refills counted in `refilled` (None: an op served at push, which the kernel
    /// never sees).
    #[inline(always)]
    fn issue<E: Engine>(
        &mut self,
        engine: &mut E,
        window: &Window,
        (intended, op): (u64, iolab_plan::gen::GenOp),
        refilled: Option<&mut u32>,
    ) -> Result<(), EngineError> {
        self.account(window, intended, &op);
        self.push_in_slot(engine, intended, op, refilled)
    }

    /// Counts `op` against the limits (when in the window) and the flush schedule.
    #[inline(always)]
    fn account(&mut self, window: &Window, intended: u64, op: &iolab_plan::gen::GenOp) {
        if intended >= window.measure_start {
            self.issued += 1;
            self.issued_bytes += op.len as u64;
        }
        if op.kind == OpKind::Write {
            if let Some(f) = self.flushing.as_mut() {
                f.wrote(op.target);
            }
            if let Some(b) = self.backlog.as_mut() {
                b.wrote(*op);
            }
        }
    }

    /// Pushes `op`, counted already ([`OpLoop::account`]), in a free slot; see [`OpLoop::issue`].
    #[inline(always)]
    fn push_in_slot<E: Engine>(
        &mut self,
        engine: &mut E,
        intended: u64,
        op: iolab_plan::gen::GenOp,
        refilled: Option<&mut u32>,
    ) -> Result<(), EngineError> {
        let slot = self.slots.take_free();
        self.slots.get_mut(slot).driver_state = intended;
        self.slots.issue(engine, slot, op);
        if let Some(refilled) = refilled {
            *refilled += 1;
            if submit_early(*refilled) && self.slots.any_free() {
                self.slots.submit_now(engine)?;
            }
        }
        Ok(())
    }

    /// A completion's part in the features off the common path: the `--trace` record (ramp included) and,
    /// when the window `records` it, the replay lag, the target's own stats and split I/Os.
    #[inline(never)]
    fn complete_extras(&mut self, idx: u32, now: u64, result: i32, records: bool) {
        let held = self.slots.get(idx);
        let (op, intended, submitted) = (held.op, held.driver_state, held.submitted_ns);
        if let Some(t) = self.trace.as_mut() {
            t.record((intended, submitted, now), &op, result);
        }
        if !records {
            return;
        }
        if let Some(r) = self.replay.as_mut().filter(|r| r.speed.is_some()) {
            r.lag.record(submitted.saturating_sub(intended));
        }
        if let Some(lag) = self.lag.as_mut() {
            lag.record(submitted.saturating_sub(intended));
        }
        self.record_per_target(&op, result, now - intended, now.saturating_sub(submitted));
        if let Some(splits) = self.splits.as_mut() {
            splits.count(&op);
        }
    }

    /// Records a completion in its target's stats, when the worker keeps them apart (several targets).
    #[inline]
    fn record_per_target(&mut self, op: &iolab_plan::gen::GenOp, result: i32, lat: u64, svc: u64) {
        let Some(pt) = self.per_target.as_mut() else { return };
        let (r, w) = &mut pt[op.target as usize];
        let t = match op.kind {
            OpKind::Read => r,
            OpKind::Write => w,
            OpKind::Flush | OpKind::Trim => return, // kept per worker only
        };
        if result >= 0 {
            t.record_ok(op.len, result as u32, lat, svc);
        } else {
            t.record_error(-result);
        }
    }

    /// A flush or trim completed: the flush barrier moves on (in the window or not), and, in the window, it is
    /// recorded in its own stats and counted in the interval (no per-target or cache figures: those are of
    /// reads and writes).
    #[inline(never)]
    fn complete_other(&mut self, idx: u32, window: &Window, at: (u64, u64), result: i32, records: bool) {
        let (now, backlog) = at;
        let held = self.slots.get(idx);
        let (op, lat, svc) = (held.op, now - held.driver_state, now.saturating_sub(held.submitted_ns));
        if op.kind == OpKind::Flush {
            if let Some(f) = self.flushing.as_mut() {
                f.flushed();
            }
        }
        if !records {
            return;
        }
        let stats = if op.kind == OpKind::Flush { &mut self.flush } else { &mut self.trim };
        if result >= 0 {
            // A trim or flush succeeds whole or fails: engines answer 0 (io_uring, the kernel) or the length
            // (in-process targets); its bytes are the range it discarded (none for a flush).
            stats.record_ok(op.len, op.len, lat, svc);
            self.series.close_until(window.interval_at(now), 0, backlog);
            let interval = &mut self.series.current;
            *(if op.kind == OpKind::Flush { &mut interval.flushes } else { &mut interval.trims }) += 1;
        } else {
            stats.record_error(-result);
            if self.s.control.stop_on_error {
                self.s.control.stop.store(true, Ordering::Relaxed);
            }
        }
        self.last_completion = now;
    }

    /// A completion the window does not record: counted in [`OpLoop::at_end`] when it comes after the end
    /// (it was in flight when the window closed).
    #[inline(never)]
    fn unrecorded(&mut self, window: &Window, idx: u32, now: u64) {
        if let Some(after) = window.after_end(now) {
            self.at_end.add(now - self.slots.get(idx).driver_state, after);
        }
    }

    /// With think time, whether an op may start now and its intended start: within a burst at once; after
    /// it, once every op of the burst completed and the idle time that follows has passed (the first op of the
    /// next burst is intended at the idle time's end). Without think time, always, at `now`.
    #[inline]
    fn think_gate(&mut self, now: u64) -> Option<u64> {
        let Some(t) = self.think.as_mut() else { return Some(now) };
        if t.left > 0 {
            t.left -= 1;
            return Some(now);
        }
        if !self.slots.drained() {
            return None;
        }
        match t.idle_until {
            None => {
                t.idle_until = Some(now + t.plan.ns);
                None
            }
            Some(until) if now < until => None,
            Some(until) => {
                t.idle_until = None;
                t.left = t.plan.burst - 1;
                Some(until)
            }
        }
    }

    /// Frees the slot of completion `c` (or resubmits its op on a transient error) and records it when it
    /// falls in the window.
    #[inline]
    fn complete<E: Engine>(&mut self, engine: &mut E, window: &Window, at: (u64, u64), c: &Completion) {
        let (reaped, backlog) = at;
        let Some(idx) = self.slots.reap(engine, c) else { return };
        self.slots.release(idx);
        if let Some(b) = self.backlog.as_mut().filter(|b| b.reading()) {
            b.completed();
        }
        // An op the engine completed before this reap (a cache hit) counts from when it was done.
        let now =
            if c.done_ns == 0 { reaped } else { c.done_ns.clamp(self.slots.get(idx).driver_state, reaped) };
        // The window counts completions in [ramp end, end): throughput is what the target delivered in the
        // window, even for ops that queued during the ramp (open loop under overload).
        let records = window.records(now);
        if self.extras {
            self.complete_extras(idx, now, c.result, records);
        }
        if !records {
            self.unrecorded(window, idx, now);
        }
        let op = self.slots.get(idx).op;
        if matches!(op.kind, OpKind::Flush | OpKind::Trim) {
            return self.complete_other(idx, window, (now, backlog), c.result, records);
        }
        if let Some(d) = self.search.as_mut().filter(|_| c.result >= 0) {
            d.completed(now.saturating_sub(self.slots.get(idx).submitted_ns), now);
        }
        if !records {
            return;
        }
        let held = self.slots.get(idx);
        // A hit done at push was handed over after it: its service time runs from its copy's start.
        let svc = match c.start_ns {
            0 => now.saturating_sub(held.submitted_ns),
            start => now - start.clamp(held.driver_state, now),
        };
        let lat = now - held.driver_state;
        let write = op.kind == OpKind::Write;
        let stats = if write { &mut self.write } else { &mut self.read };
        if c.result >= 0 {
            stats.record_ok(op.len, c.result as u32, lat, svc);
            self.series.close_until(window.interval_at(now), 0, backlog);
            let interval = &mut self.series.current;
            interval.record(write, c.result as u64, lat);
            if let Some(src) = self.sources.as_deref_mut().filter(|_| !write) {
                interval.cache_hits += u64::from(c.cached);
                if c.cached {
                    src.from_cache.record(lat);
                    src.hit_service.record(svc.min(lat));
                    src.hit_dispatch.record(lat - svc.min(lat));
                } else {
                    src.from_target.record(lat);
                }
            }
        } else {
            stats.record_error(-c.result);
            if self.s.control.stop_on_error {
                self.s.control.stop.store(true, Ordering::Relaxed);
            }
        }
        self.last_completion = now;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::buffers::Buffers;
    use crate::cache::{CacheEngine, WorkerCache, WRITE_BACK_STAGING};
    use crate::{EngineChoice, Op};
    use iolab_cache::{Cache, CacheConfig, CacheMode, CachePolicy};
    use iolab_plan::{Plan, TargetGeometry};
    use iolab_spec::{DataPattern, JobSpec, SimSpec, TargetSpec};
    use std::sync::Arc;

    /// What handing requests to the kernel costs on this engine's clock, per request (a virtio disk builds one
    /// in about 2 µs: docs/BENCHMARKS.md; 10 µs makes the cost plain).
    const BUILD_NS: u64 = 10_000;
    /// When a request handed over completes.
    const DEVICE_NS: u64 = 100_000;

    /// A target on a clock that moves only when requests are handed over (`BUILD_NS` each) or waited for:
    /// whatever iolab does between takes no time, so any time a cache hit shows is time spent behind other
    /// requests' hand-over.
    struct Kernel {
        clock: u64,
        buffers: Buffers,
        pushed: Vec<Op>,
        /// Handed over: (completion time, op).
        flying: Vec<(u64, Op)>,
    }

    impl Kernel {
        fn hand_over(&mut self) {
            self.clock += BUILD_NS * self.pushed.len() as u64;
            let done = self.clock + DEVICE_NS;
            self.flying.extend(self.pushed.drain(..).map(|op| (done, op)));
        }
    }

    impl Engine for Kernel {
        fn name(&self) -> &'static str {
            "kernel"
        }
        fn features(&self) -> Vec<String> {
            Vec::new()
        }
        fn now_ns(&self) -> u64 {
            self.clock
        }
        fn buffer_mut(&mut self, buf: u32) -> &mut [u8] {
            self.buffers.get_mut(buf)
        }
        unsafe fn push(&mut self, op: Op) {
            self.pushed.push(op);
        }
        fn submit_and_reap(&mut self, d: Option<u64>, out: &mut Vec<Completion>) -> Result<(), EngineError> {
            self.hand_over();
            let first = self.flying.iter().map(|f| f.0).min();
            let until = match (first, d) {
                (Some(f), Some(d)) => f.min(d.max(self.clock)),
                (f, d) => f.or(d).unwrap_or(self.clock),
            };
            self.clock = self.clock.max(until);
            let now = self.clock;
            for (_, op) in self.flying.iter().filter(|f| f.0 <= now) {
                let (user_data, result) = (op.user_data, op.len as i32);
                out.push(Completion { user_data, result, cached: false, done_ns: 0, start_ns: 0 });
            }
            self.flying.retain(|f| f.0 > now);
            Ok(())
        }
        fn submit(&mut self) -> Result<(), EngineError> {
            self.hand_over();
            Ok(())
        }
        fn finish(&mut self) -> Result<(), EngineError> {
            Ok(())
        }
    }

    /// Issue 36, item 5: a hit in the block cache's RAM is served before the refill hands its other ops to
    /// the kernel, so its response time is its copy's (nothing, on this clock) and none of the refill's
    /// hand-over; its service time and dispatch delay are kept apart. Before, a hit refilled after a few
    /// misses waited for their early submits (here 10 µs a request).
    #[test]
    fn a_ram_hit_is_served_before_the_refill_s_misses_go_to_the_kernel() {
        let job = "duration = \"50ms\"\nramp = \"0\"\nseed = 7\n[worker.w]\nrw = \"randread\"\nbs = \"4k\"\nqd = 16\n";
        let spec = JobSpec::from_toml(job, "t.toml").expect("job parses");
        let sim = SimSpec::Fixed { latency_ns: 1, servers: 1, size_bytes: 1 << 20 };
        let plan = Plan::from_spec(&spec, Some(&TargetSpec::Sim(sim))).expect("plan");
        let regions = plan.bind(&[TargetGeometry { size_bytes: 1 << 20, block_bytes: 512 }]).expect("bind");
        let (mut setup, _rx) =
            WorkerSetup::for_test(&plan, regions[0].clone(), EngineChoice::Uring, 10_000_000);
        let config = CacheConfig {
            capacity_bytes: 512 << 10,
            line_bytes: 4096,
            mode: CacheMode::WriteThrough,
            policy: CachePolicy::default(),
            admit_after: 1,
            dirty_max_pct: 50.0,
            targets: 1,
            keep_data: true,
        };
        let qd = plan.workers[0].qd;
        let wc = WorkerCache {
            cache: Arc::new(Cache::new(config).expect("cache")),
            ids: vec![0],
            dev: None,
            dev_size: 0,
            seq_cutoff: 0,
            first_staging_buf: 2 * qd,
            real_dev: None,
        };
        setup.tools.cache = Some(wc.clone());
        let buffers = Buffers::new(2 * qd + WRITE_BACK_STAGING, 4096, DataPattern::Zero, 1);
        let kernel = Kernel { clock: 0, buffers, pushed: Vec::new(), flying: Vec::new() };
        let mut engine = CacheEngine::new(kernel, wc, qd);
        let out = drive_ops(&mut engine, &setup).expect("run");
        let src = out.read_sources.expect("read sources");
        let hits = src.from_cache.count();
        assert!(hits > 100 && src.from_target.count() > 100, "hits and misses: {src:?}");
        assert_eq!(src.from_cache.max(), 0, "a hit waited for other ops' hand-over");
        assert_eq!((src.hit_service.count(), src.hit_dispatch.count()), (hits, hits));
        assert_eq!((src.hit_service.max(), src.hit_dispatch.max()), (0, 0));
        assert!(src.from_target.min() >= DEVICE_NS + BUILD_NS, "a miss takes the device's time");
    }
}
