//! One virtual timeline for all the workers of a run on virtual time (`--clock virtual`).
//!
//! Each worker keeps its own engine stack and its own stack of calls, but they all run on one thread, as
//! coroutines (the worker module's `run_on_timeline`), and only one runs at a time: the one
//! holding the *turn*. A worker gives up the turn when it waits ([`Seat::wait`]: until a deadline, or until
//! one of the run's emulated devices completes one of its requests) and when it ends ([`Seat`]'s drop). The
//! timeline then hands the turn to the next worker due, advancing the run's one clock to the earliest
//! deadline or device event when nobody is due now. Ties go to the lowest worker index, so the order in which
//! workers act, and so every device's state, depends only on the seed: a run on virtual time is
//! deterministic, and one emulated device, link or cache device is shared exactly as on the real clock.
//!
//! A worker that is due first again keeps the turn without a switch; a switch is a coroutine switch (tens of
//! nanoseconds), not a thread hand-off. The first turn is given once every worker has joined
//! ([`Seat::join`], right after the run's barrier) or left, so no worker touches shared state (devices, the
//! cache, the verifier) before all are in place.
//!
//! The one `unsafe` here is the switch itself: `suspend` uses the current coroutine's `Yielder`, which the
//! coroutine's body publishes in a thread-local for as long as it runs.

use corosensei::Yielder;
use iolab_sim::SharedDevice;
use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// Where a worker is on the timeline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Not joined yet: the first turn waits for it.
    Absent,
    /// Joined, waiting for its first turn.
    Ready,
    /// Holding the turn.
    Running,
    /// Waiting until a time (None: only for a completion).
    Waiting(Option<u64>),
    /// Ended.
    Left,
}

struct Place {
    phase: Phase,
    /// A device completed one of its requests since it last ran.
    mail: bool,
}

struct State {
    places: Vec<Place>,
    /// Workers not yet joined or left.
    absent: usize,
    /// The worker holding the turn.
    holder: Option<usize>,
    devices: Vec<Arc<SharedDevice>>,
}

/// The timeline of a run: its clock, its workers' turns and the emulated devices whose events wake them.
pub struct Timeline {
    state: Mutex<State>,
    /// The run's clock; written by the worker holding the turn, under the lock.
    now_ns: AtomicU64,
}

impl std::fmt::Debug for Timeline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Timeline").field("now_ns", &self.now_ns()).finish()
    }
}

thread_local! {
    /// The `Yielder` of the coroutine running on this thread (null outside one): set by the coroutine's body
    /// when it starts and again after every switch back into it.
    static YIELDER: Cell<*const Yielder<(), ()>> = const { Cell::new(std::ptr::null()) };
}

/// Runs `body` as the body of the coroutine given `yielder`, so that [`Seat`]s inside it can switch out.
pub(crate) fn with_yielder<R>(yielder: &Yielder<(), ()>, body: impl FnOnce() -> R) -> R {
    YIELDER.with(|y| y.set(yielder));
    let r = body();
    YIELDER.with(|y| y.set(std::ptr::null()));
    r
}

/// Switches back to the executor; returns when it resumes this coroutine.
fn suspend() {
    let y = YIELDER.with(Cell::get);
    assert!(!y.is_null(), "a worker gave up its turn outside the timeline's executor (bug)");
    // SAFETY: `y` was set by `with_yielder` from the `&Yielder` of the coroutine running now (it is restored
    // below after every switch, and cleared when a body ends), and that body has not returned, so the Yielder,
    // which lives in its coroutine's stack frame, is alive. Yielder is !Send: we are on its thread.
    unsafe { &*y }.suspend(());
    YIELDER.with(|c| c.set(y));
}

impl Timeline {
    /// A timeline for `workers` workers (their indexes are their client numbers on `devices`), starting at 0.
    pub fn new(workers: usize, devices: Vec<Arc<SharedDevice>>) -> Arc<Timeline> {
        let places = (0..workers).map(|_| Place { phase: Phase::Absent, mail: false }).collect();
        Arc::new(Timeline {
            state: Mutex::new(State { places, absent: workers, holder: None, devices }),
            now_ns: AtomicU64::new(0),
        })
    }

    /// Worker `index`'s seat. Each worker takes exactly one; the worker leaves the timeline when the last
    /// clone of it is dropped.
    pub fn seat(self: &Arc<Timeline>, index: usize) -> Arc<Seat> {
        let workers = self.lock().places.len();
        assert!(index < workers, "worker {index} has no place on a timeline of {workers}");
        Arc::new(Seat { timeline: self.clone(), index })
    }

    /// The run's virtual time, in nanoseconds.
    #[inline]
    pub fn now_ns(&self) -> u64 {
        self.now_ns.load(Ordering::Acquire)
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The worker to resume: the one holding the turn, or, when nobody does, the next one due (None when no
    /// worker can run again). The executor's question after every switch.
    pub(crate) fn holder(&self) -> Option<usize> {
        let mut s = self.lock();
        if s.holder.is_none() {
            self.pass_turn(&mut s);
        }
        s.holder
    }

    /// Gives the turn to the next worker due (if any), moving the clock as far as needed.
    fn pass_turn(&self, s: &mut State) {
        s.holder = None;
        if s.absent > 0 {
            return;
        }
        if let Some(next) = self.next_due(s) {
            s.places[next].phase = Phase::Running;
            s.places[next].mail = false;
            s.holder = Some(next);
        }
    }

    /// The next worker to run: the lowest-index one that is due now (ready, past its deadline or with mail);
    /// when none is, the clock moves to the earliest deadline or device event and the search repeats. When
    /// nothing can ever happen (workers waiting for completions no device will deliver), the lowest-index
    /// waiting worker runs, so its wait returns empty instead of hanging.
    fn next_due(&self, s: &mut State) -> Option<usize> {
        let mut now = self.now_ns();
        loop {
            let mut device_next: Option<u64> = None;
            for d in &s.devices {
                let places = &mut s.places;
                if let Some(t) = d.settle(now, &mut |client| places[client].mail = true) {
                    device_next = Some(device_next.map_or(t, |m| m.min(t)));
                }
            }
            if let Some(i) = s.places.iter().position(|p| due(p, now)) {
                return Some(i);
            }
            let deadline = s
                .places
                .iter()
                .filter_map(|p| match p.phase {
                    Phase::Waiting(until) => until,
                    _ => None,
                })
                .min();
            let next = match (device_next, deadline) {
                (Some(a), Some(b)) => a.min(b),
                (a, b) => match a.or(b) {
                    Some(t) => t,
                    None => return s.places.iter().position(|p| matches!(p.phase, Phase::Waiting(_))),
                },
            };
            now = now.max(next);
            self.now_ns.store(now, Ordering::Release);
        }
    }
}

/// Whether a worker is due at `now`.
fn due(p: &Place, now: u64) -> bool {
    match p.phase {
        Phase::Ready => true,
        Phase::Waiting(until) => p.mail || until.is_some_and(|t| t <= now),
        Phase::Absent | Phase::Running | Phase::Left => false,
    }
}

/// A worker's place on a [`Timeline`]; leaving it (the drop of its last clone) ends the worker's part.
pub struct Seat {
    timeline: Arc<Timeline>,
    index: usize,
}

impl std::fmt::Debug for Seat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Seat").field("index", &self.index).finish()
    }
}

impl Seat {
    /// A one-worker timeline over `devices`, already joined: how a lone engine (tests, tools) runs on
    /// virtual time, on its caller's thread (alone, it never has to switch).
    pub fn alone(devices: Vec<Arc<SharedDevice>>) -> Arc<Seat> {
        let seat = Timeline::new(1, devices).seat(0);
        seat.join();
        seat
    }

    /// The timeline this seat is on.
    pub fn timeline(&self) -> &Arc<Timeline> {
        &self.timeline
    }

    /// This worker's index (its client number on the timeline's devices).
    pub fn index(&self) -> usize {
        self.index
    }

    /// The run's virtual time.
    #[inline]
    pub fn now_ns(&self) -> u64 {
        self.timeline.now_ns()
    }

    /// Takes the worker's place and returns at its first turn, given once every worker has joined or left.
    /// Joining again is a no-op.
    pub fn join(&self) {
        let t = &*self.timeline;
        let mut s = t.lock();
        if s.places[self.index].phase != Phase::Absent {
            return;
        }
        s.places[self.index].phase = Phase::Ready;
        s.absent -= 1;
        if s.absent == 0 && s.holder.is_none() {
            t.pass_turn(&mut s);
        }
        if s.holder != Some(self.index) {
            drop(s);
            suspend();
        }
    }

    /// Gives up the turn until `until` (None: until a device completes one of this worker's requests) or
    /// until a completion arrives, whichever comes first; returns holding the turn again, with the clock at
    /// the time it woke. The caller holds the turn.
    pub fn wait(&self, until: Option<u64>) {
        let t = &*self.timeline;
        let me = self.index;
        let mut s = t.lock();
        debug_assert_eq!(s.holder, Some(me), "a worker waits only while it holds the turn");
        s.places[me].phase = Phase::Waiting(until);
        t.pass_turn(&mut s);
        if s.holder != Some(me) {
            drop(s);
            suspend();
        }
    }
}

impl Drop for Seat {
    fn drop(&mut self) {
        let mut s = self.timeline.lock();
        let phase = std::mem::replace(&mut s.places[self.index].phase, Phase::Left);
        if phase == Phase::Absent {
            s.absent -= 1;
        }
        if s.holder == Some(self.index) {
            s.holder = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use corosensei::{Coroutine, CoroutineResult};
    use iolab_sim::models::Fixed;
    use iolab_sim::{ReqKind, Request};

    /// Runs `bodies` as coroutines on `timeline`, the way `run_on_timeline` does.
    fn drive(timeline: &Arc<Timeline>, bodies: Vec<Box<dyn FnOnce()>>) {
        let mut cos: Vec<_> = bodies
            .into_iter()
            .map(|b| Coroutine::<(), (), ()>::new(move |y, ()| with_yielder(y, b)))
            .collect();
        for c in &mut cos {
            let _ = c.resume(());
        }
        while let Some(i) = timeline.holder() {
            assert!(matches!(cos[i].resume(()), CoroutineResult::Yield(()) | CoroutineResult::Return(())));
        }
        assert!(cos.iter().all(Coroutine::done), "every worker ran to its end");
    }

    /// Two workers on one 100 ns single-server device: the turn alternates by time, ties to the lower index,
    /// and each wakes exactly when its own request completes.
    #[test]
    fn turns_follow_the_clock_and_the_device() {
        let dev = Arc::new(SharedDevice::new(Box::new(Fixed::new(100, 1, 4)), 2, 4));
        let timeline = Timeline::new(2, vec![dev.clone()]);
        let log = Arc::new(Mutex::new(Vec::new()));
        let bodies = (0..2)
            .map(|i| {
                let seat = timeline.seat(i);
                let (dev, log) = (dev.clone(), log.clone());
                Box::new(move || {
                    seat.join();
                    let mut done = Vec::new();
                    for n in 0..3u64 {
                        let req =
                            Request { tag: n, kind: ReqKind::Read, durable: false, offset: 0, len: 512 };
                        dev.submit(i, seat.now_ns(), req);
                        loop {
                            dev.poll(i, seat.now_ns(), &mut done);
                            if let Some(d) = done.pop() {
                                log.lock().unwrap().push((i, d.at_ns, seat.now_ns()));
                                break;
                            }
                            seat.wait(None);
                        }
                    }
                }) as Box<dyn FnOnce()>
            })
            .collect();
        drive(&timeline, bodies);
        let log = log.lock().unwrap().clone();
        // Worker 0 submits at 0 (done at 100), worker 1 at 0 (done at 200); each resubmits at once.
        assert_eq!(
            log,
            vec![(0, 100, 100), (1, 200, 200), (0, 300, 300), (1, 400, 400), (0, 500, 500), (1, 600, 600)]
        );
    }

    /// A worker that never joins but leaves (a failed setup) does not hold the others back.
    #[test]
    fn a_seat_dropped_unjoined_releases_the_start() {
        let timeline = Timeline::new(2, Vec::new());
        let a = timeline.seat(0);
        let b = timeline.seat(1);
        let woke = Arc::new(AtomicU64::new(0));
        let w = woke.clone();
        let bodies: Vec<Box<dyn FnOnce()>> = vec![
            Box::new(move || {
                a.join();
                a.wait(Some(1_000));
                w.store(a.now_ns(), Ordering::Relaxed);
            }),
            Box::new(move || drop(b)),
        ];
        drive(&timeline, bodies);
        assert_eq!(woke.load(Ordering::Relaxed), 1_000);
    }
}
