//! The measurement window and the time series, one implementation for both drivers (the op loop and the
//! transactions).
//!
//! All times are on the engine's clock. The window is [ramp end, end): a completion inside it is recorded
//! (with its full latency, even if the op was intended during the ramp), one outside is not. A driver stops
//! issuing at the end, on its own limit (the op loop's I/O or byte count), when the cli raises `finish` (after
//! the ramp: the result is complete) or `stop` (the result is partial and the window closes at once). After
//! the stop no new op is issued and ops in flight are drained unrecorded. Intervals are closed as completions
//! pass their end, and also when nothing completes, so a stall shows as zero IOPS rather than as a gap.

use super::interface::{WorkerEvent, WorkerSetup};
use super::pace::{Pacer, Pacing, Wait};
use crate::Engine;
use iolab_plan::arrival::Arrivals;
use iolab_rng::Rng;
use iolab_spec::Arrival;
use iolab_stats::IntervalStats;
use std::sync::atomic::Ordering;
use std::sync::mpsc::Sender;

/// Longest wait in one engine call, so a stop request is seen even when the device hangs.
const TICK_NS: u64 = 200_000_000;

/// A worker's window: where it starts and ends, and whether (and why) the worker has stopped issuing.
pub(crate) struct Window {
    /// When the worker started (after the barrier).
    pub(crate) start: u64,
    /// The end of the ramp: the window's start.
    pub(crate) measure_start: u64,
    /// The planned end (None: until a limit).
    pub(crate) end: Option<u64>,
    last_interval: u64,
    interval_ns: u64,
    /// Completions at or after this are not recorded: the end, or a stop request.
    record_until: u64,
    /// No new op is issued.
    pub(crate) stopping: bool,
    /// Stopped by a stop request before the end or a limit.
    pub(crate) stopped_early: bool,
    stop_at: Option<u64>,
    /// Longest wait in one engine call: [`TICK_NS`] on the real clock; on virtual time none, unless nothing
    /// else bounds the wait (a tick there is a wake-up per 200 ms of virtual time, an hour of CPU over years).
    tick_ns: Option<u64>,
    /// On the real clock, how the worker waits for an arrival: sleeps until a margin before it, then spins
    /// (`super::pace`); None on virtual time, where it wakes at the arrival exactly. The op loop's learns from
    /// its wake-ups ([`Window::waited`]); the transaction driver's keeps the first margin (its rate is per
    /// task, not the plan's, so the CPU cap would not hold).
    pacer: Option<Pacer>,
}

/// Waits for all workers at the barrier, then opens the window at the engine's clock, with the arrival
/// schedule of `rate` per second (None: closed loop, or transactions in stress mode), of `arrival` (its law, and
/// the arrivals at each instant), starting there.
pub(crate) fn begin<E: Engine>(
    engine: &E,
    s: &WorkerSetup,
    rate: Option<f64>,
    arrival: (Arrival, u32),
) -> (Window, Option<Arrivals>) {
    s.control.barrier.wait();
    // On virtual time, nothing happens before every worker has its place on the run's timeline.
    if let crate::EngineChoice::Sim { seat: Some(seat), .. } = &s.tools.engine {
        seat.join();
    }
    let start = engine.now_ns();
    let rng = || Rng::for_worker(s.task.seed ^ crate::salts::ARRIVAL, s.task.plan.index);
    let (law, burst) = arrival;
    // A delayed worker's first arrival is at its start (`start_delay`).
    let first = start + s.task.plan.start_delay_ns;
    (Window::open(start, s), rate.map(|r| Arrivals::new(r, law, first, rng()).in_bursts(burst)))
}

impl Window {
    /// The window of a worker that starts at `start`.
    pub(crate) fn open(start: u64, s: &WorkerSetup) -> Window {
        debug_assert!(s.task.interval_ns > 0, "an interval has a length");
        let measure_start = start + s.task.ramp_ns;
        let end = s.task.duration_ns.map(|d| measure_start + d);
        let real_clock = !matches!(s.tools.engine, crate::EngineChoice::Sim { seat: Some(_), .. });
        Window {
            start,
            measure_start,
            end,
            last_interval: s
                .task
                .duration_ns
                .map(|d| d.div_ceil(s.task.interval_ns).max(1) - 1)
                .unwrap_or(u64::MAX),
            interval_ns: s.task.interval_ns,
            record_until: end.unwrap_or(u64::MAX),
            stopping: false,
            stopped_early: false,
            stop_at: None,
            tick_ns: real_clock.then_some(TICK_NS),
            pacer: real_clock.then(|| Pacer::new(s.task.plan.rate_iops)),
        }
    }

    /// Decides at `now` whether to stop issuing: at the end, on the driver's own `limit`, on finish (after
    /// the ramp) or on request. Returns true at the turn it stops (once).
    #[inline]
    pub(crate) fn check_stop(&mut self, now: u64, limit: bool, s: &WorkerSetup) -> bool {
        if self.stopping {
            return false;
        }
        let over_time = self.end.is_some_and(|e| now >= e);
        let limit = limit || (now >= self.measure_start && s.control.finish.load(Ordering::Relaxed));
        let requested = s.control.stop.load(Ordering::Relaxed);
        if !(over_time || limit || requested) {
            return false;
        }
        self.stopping = true;
        self.stopped_early = requested && !over_time && !limit;
        self.stop_at = Some(if over_time { self.end.unwrap_or(now) } else { now });
        if requested {
            self.record_until = self.record_until.min(now);
        }
        true
    }

    /// Whether a completion at `now` is recorded.
    #[inline]
    pub(crate) fn records(&self, now: u64) -> bool {
        now >= self.measure_start && now < self.record_until
    }

    /// Whether a completion at `now` comes after what is recorded (the end, or a stop request).
    #[inline]
    pub(crate) fn past(&self, now: u64) -> bool {
        now >= self.record_until
    }

    /// How long after the end of what is recorded (the end, or a stop request) a completion at `now` comes;
    /// `None` when it is recorded or in the ramp.
    #[inline]
    pub(crate) fn after_end(&self, now: u64) -> Option<u64> {
        self.past(now).then(|| now - self.record_until)
    }

    /// Whether `now` is past the ramp.
    #[inline]
    pub(crate) fn measuring(&self, now: u64) -> bool {
        now >= self.measure_start
    }

    /// The interval a completion at `now` (past the ramp) belongs to: the last one takes what completes at
    /// the very end.
    #[inline]
    pub(crate) fn interval_at(&self, now: u64) -> u64 {
        ((now - self.measure_start) / self.interval_ns).min(self.last_interval)
    }

    /// When the worker stopped issuing (`now` while it has not).
    pub(crate) fn stop(&self, now: u64) -> u64 {
        self.stop_at.unwrap_or(now)
    }

    /// How long the ramp lasted once the driver is done at `now`: the planned ramp, or less when the worker
    /// stopped issuing before it ended (a stop request, a limit reached during the ramp).
    pub(crate) fn ramp_length(&self, now: u64) -> u64 {
        self.stop(now).min(self.measure_start).saturating_sub(self.start)
    }

    /// The window's length once the driver is done at `now`: up to the stop, or, for a run without a
    /// duration that was not stopped early, up to `last_completion` when the driver gives one (the op loop
    /// under an I/O or byte limit).
    pub(crate) fn length(&self, now: u64, last_completion: Option<u64>) -> u64 {
        debug_assert!(self.record_until >= self.start, "recording never ends before the worker started");
        let stop = self.stop(now);
        let end = match last_completion {
            Some(last) if self.end.is_none() && !self.stopped_early => last,
            _ => stop,
        };
        end.saturating_sub(self.measure_start)
    }

    /// When to stop waiting for an arrival due at `a`: on the real clock a margin before it, and from then on
    /// at once (a poll), so the worker spins the last stretch instead of trusting a timer to wake it on time
    /// (`super::pace`); on virtual time at `a` itself.
    #[inline]
    fn before_arrival(&self, now: u64, a: u64) -> u64 {
        match self.pacer.as_ref().map(|p| p.wait(now, a)) {
            None => a,
            Some(Wait::Sleep(until)) => until,
            Some(Wait::Spin) => now,
        }
    }

    /// After one wait that began at `from`, asked to end at `deadline`, bounded by an arrival or not
    /// (`for_arrival`), and ended at `now` having `completed` something or not: a timed wait for an arrival
    /// that ended at or after its deadline with nothing completed says how late the timer woke
    /// ([`Pacer::learn`]); a poll (the spin before an arrival) that found nothing gets a pause hint.
    #[inline]
    pub(crate) fn waited(&mut self, from: u64, deadline: u64, for_arrival: bool, completed: bool, now: u64) {
        let Some(p) = self.pacer.as_mut() else { return };
        if completed || !for_arrival {
            return;
        }
        if deadline > from {
            if now >= deadline && now > from {
                p.learn(deadline, now);
            }
        } else {
            std::hint::spin_loop();
        }
    }

    /// The pacing to report once the driver is done: the margin, its cap and the measured wake-ups (None on
    /// virtual time).
    pub(crate) fn take_pacing(&mut self) -> Option<Pacing> {
        self.pacer.take().map(Pacer::into_output)
    }

    /// The deadline of one `submit_and_reap` at `now`: a tick, bounded by the end and, while a slot (or queue
    /// room) is free, by the next arrival. After the stop only the tick bounds it: draining needs no clock.
    #[inline]
    pub(crate) fn deadline(&self, now: u64, next_arrival: Option<u64>) -> u64 {
        let mut deadline = self.tick_ns.map_or(u64::MAX, |t| now.saturating_add(t));
        if !self.stopping {
            if let Some(e) = self.end {
                deadline = deadline.min(e.max(now));
            }
            if let Some(a) = next_arrival {
                deadline = deadline.min(self.before_arrival(now, a));
            }
        }
        if deadline == u64::MAX {
            deadline = now.saturating_add(TICK_NS);
        }
        deadline
    }
}

/// The worker's time series: the open interval, sent to the cli thread when it closes.
pub(crate) struct WorkerSeries<'a> {
    /// The open interval.
    pub(crate) current: IntervalStats,
    /// The next interval's accumulator, made ahead while the worker is idle ([`WorkerSeries::prepare`]), so
    /// that closing an interval at an arrival (a fixed rate that divides the second puts arrivals on the
    /// boundaries) does not first allocate and touch ~74 KB: that took 100-250 us on a virtual machine, the
    /// lag's p99 at 10 IOPS.
    spare: Option<IntervalStats>,
    /// The interval closed last, not yet sent ([`WorkerSeries::deliver`]): sending wakes the cli thread, a
    /// futex wake and on a virtual machine an inter-processor interrupt, tens of microseconds that must not
    /// fall between the end of a spin and the arrival it waited for.
    outbox: Option<IntervalStats>,
    worker: u32,
    events: &'a Sender<WorkerEvent>,
}

/// A wait at least this long with nothing in flight is idle enough to make the next interval's accumulator.
pub(crate) const PREPARE_IDLE_NS: u64 = 1_000_000;

impl<'a> WorkerSeries<'a> {
    /// Interval 0 of worker `worker`.
    pub(crate) fn new(worker: u32, events: &'a Sender<WorkerEvent>) -> WorkerSeries<'a> {
        WorkerSeries { current: IntervalStats::new(0), spare: None, outbox: None, worker, events }
    }

    /// Makes the next interval's accumulator now, unless one is ready: to be called when the worker is
    /// about to wait idle (nothing in flight, at least [`PREPARE_IDLE_NS`]).
    pub(crate) fn prepare(&mut self) {
        if self.spare.is_none() {
            self.spare = Some(IntervalStats::new(0));
        }
    }

    /// Closes every interval before `k` (empty ones too), each with the backlogs at this moment:
    /// `txn_backlog` transactions dispatched and not completed, `io_backlog` open-loop arrivals due and not
    /// issued (0 where they do not apply). The last one closed waits in the outbox for [`Self::deliver`];
    /// any before it are sent now.
    #[inline]
    pub(crate) fn close_until(&mut self, k: u64, txn_backlog: u64, io_backlog: u64) {
        while self.current.index < k {
            self.current.txn.backlog = txn_backlog;
            self.current.backlog = io_backlog;
            let next = match self.spare.take() {
                Some(mut ready) => {
                    ready.index = self.current.index + 1;
                    ready
                }
                None => IntervalStats::new(self.current.index + 1),
            };
            let stats = std::mem::replace(&mut self.current, next);
            if let Some(earlier) = self.outbox.replace(stats) {
                let _ = self.events.send(WorkerEvent::Interval { worker: self.worker, stats: earlier });
            }
        }
    }

    /// Sends the interval closed last, if not yet sent: at a wait that is not the last stretch before an
    /// arrival.
    #[inline]
    pub(crate) fn deliver(&mut self) {
        if let Some(stats) = self.outbox.take() {
            let _ = self.events.send(WorkerEvent::Interval { worker: self.worker, stats });
        }
    }

    /// Sends what is left: the interval closed last, then the open one.
    pub(crate) fn close(mut self) {
        self.deliver();
        let _ = self.events.send(WorkerEvent::Interval { worker: self.worker, stats: self.current });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    fn setup(ramp_ns: u64, duration_ns: Option<u64>) -> (WorkerSetup, mpsc::Receiver<WorkerEvent>) {
        let job = "ios = 1\nseed = 1\nqd = 1\nbs = \"4k\"\nrw = \"read\"\n";
        let spec = iolab_spec::JobSpec::from_toml(job, "t.toml").expect("job");
        let target = iolab_spec::TargetSpec::parse("null:1M").expect("target");
        let plan = iolab_plan::Plan::from_spec(&spec, Some(&target)).expect("plan");
        let (mut s, rx) = WorkerSetup::for_test(&plan, Vec::new(), super::super::EngineChoice::Null, 100);
        (s.task.ramp_ns, s.task.duration_ns) = (ramp_ns, duration_ns);
        (s, rx)
    }

    #[test]
    fn window_records_from_ramp_end_to_end_and_stops_at_end() {
        let (s, _rx) = setup(50, Some(1000));
        let mut w = Window::open(10, &s);
        assert!(!w.records(59) && w.records(60) && w.records(1059) && !w.records(1060));
        assert!(!w.check_stop(1059, false, &s));
        assert!(w.check_stop(1070, false, &s), "over time");
        assert!(!w.check_stop(1080, false, &s), "stops once");
        assert!(!w.stopped_early);
        assert_eq!(w.stop(2000), 1060, "the stop is the end, not when it was seen");
        assert_eq!(w.length(2000, Some(1500)), 1000);
        assert_eq!(w.interval_at(1060), 9, "the end belongs to the last interval");
    }

    #[test]
    fn window_stop_request_closes_recording_and_is_early() {
        let (s, _rx) = setup(0, Some(1000));
        let mut w = Window::open(0, &s);
        s.control.stop.store(true, Ordering::Relaxed);
        assert!(w.check_stop(300, false, &s));
        assert!(w.stopped_early && !w.records(300) && w.records(299));
        assert_eq!(w.length(900, None), 300);
    }

    #[test]
    fn window_without_duration_ends_at_the_last_completion_on_a_limit() {
        let (s, _rx) = setup(0, None);
        let mut w = Window::open(0, &s);
        assert!(w.check_stop(500, true, &s));
        assert!(!w.stopped_early);
        assert_eq!(w.length(800, Some(700)), 700, "op loop: the last completion");
        assert_eq!(w.length(800, None), 500, "transactions: the stop");
        assert_eq!(w.deadline(800, Some(10)), 800 + TICK_NS, "draining ignores arrivals");
    }

    #[test]
    fn an_interval_made_ahead_is_the_next_one_and_is_made_once() {
        let (s, rx) = setup(0, Some(1000));
        let mut series = WorkerSeries::new(0, &s.control.events);
        series.current.record(false, 4096, 1_000);
        series.prepare();
        let ready = series.spare.as_ref().map(|r| r as *const IntervalStats);
        series.prepare();
        assert_eq!(series.spare.as_ref().map(|r| r as *const IntervalStats), ready, "not made twice");
        series.close_until(1, 0, 0);
        assert!(rx.try_recv().is_err(), "closed, held until the next wait that is not a spin");
        series.deliver();
        assert!(matches!(rx.try_recv(), Ok(WorkerEvent::Interval { .. })), "delivered");
        assert!(series.spare.is_none(), "the interval made ahead was taken");
        assert_eq!((series.current.index, series.current.read.ops), (1, 0), "the next interval, empty");
        series.close_until(2, 0, 0);
        assert_eq!(series.current.index, 2, "none ready: made then");
        series.close();
        let sent: Vec<u64> =
            rx.try_iter().map(|WorkerEvent::Interval { stats, .. }| stats.read.ops).collect();
        assert_eq!(sent, vec![0, 0], "interval 1 (empty), held, then sent by close before the open one");
    }

    #[test]
    fn series_closes_empty_intervals_with_the_backlog() {
        let (s, rx) = setup(0, Some(1000));
        let mut series = WorkerSeries::new(3, &s.control.events);
        series.close_until(3, 7, 0);
        series.close();
        let got: Vec<(u64, u64)> = rx
            .try_iter()
            .map(|WorkerEvent::Interval { stats, .. }| (stats.index, stats.txn.backlog))
            .collect();
        assert_eq!(got, [(0, 7), (1, 7), (2, 7), (3, 0)]);
    }
}
