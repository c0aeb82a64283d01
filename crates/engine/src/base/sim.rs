//! Emulated devices (`sim:fixed`, `sim:hdd`, `sim:ssd`, `sim:array`): the models of iolab-sim driven on the
//! real clock or on virtual time, with the data kept in a sparse store so reads return what was written.
//!
//! Timing is a deadline queue, never a sleep per I/O. A pushed op is submitted to its device's model at once
//! (the model computes when it will finish; a model that reorders, like the HDD's command queue, may revise
//! that as more ops arrive). [`Engine::submit_and_reap`] asks the devices for completions due now and for
//! their next event, and waits until the earlier of that event and the caller's deadline. On the real clock
//! it sleeps until shortly before and spins the rest (sleep wake-up jitter on Linux is tens of microseconds);
//! on virtual time the worker gives up its turn on the run's [`Timeline`](crate::timeline::Timeline), which
//! moves the run's one clock to the next event of any worker or device, so a run is exact, deterministic for
//! its seed, and takes no wall time.
//!
//! A device is one [`SharedDevice`] for the whole run: every worker using it submits to the same model (its
//! queue, its head position, its channels), and each worker collects its own completions, on either clock.

use crate::buffers::Buffers;
use crate::tags::Tags;
use crate::timeline::Seat;
use crate::{Completion, Engine, EngineError, Op, OpKind, RealClock};
use iolab_sim::{Done, ReqKind, Request, SharedDevice, SparseStore};
use std::sync::Arc;

/// Spin (rather than sleep) for the last part of a wait on the real clock.
const SPIN_NS: u64 = 150_000;

/// One emulated target of a worker: its device and, when the run keeps data, its store.
#[derive(Clone)]
pub struct SimTarget {
    /// The run's device.
    pub device: Arc<SharedDevice>,
    /// The device's data.
    pub store: Option<Arc<SparseStore>>,
}

impl SimTarget {
    /// A device of its own for one worker (client 0), with its data kept when `keep_data`: how tests and
    /// single-worker tools build one.
    pub fn single(spec: &iolab_spec::SimSpec, seed: u64, slots: u32, keep_data: bool) -> SimTarget {
        let model = iolab_sim::build(spec, seed, slots as usize);
        SimTarget {
            device: Arc::new(SharedDevice::new(model, 1, slots as usize)),
            store: keep_data.then(|| Arc::new(SparseStore::new(spec.size_bytes(), u64::MAX))),
        }
    }
}

impl std::fmt::Debug for SimTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SimTarget").field("keeps_data", &self.store.is_some()).finish()
    }
}

/// The clock an emulated device runs on.
#[derive(Clone, Debug)]
pub enum SimClock {
    /// The real clock: waits sleep, then spin.
    Real(RealClock),
    /// Virtual time: this worker's seat on the run's timeline (its index is the worker's client number).
    Virtual(Arc<Seat>),
}

/// A worker's view of its emulated devices.
pub struct SimEngine {
    targets: Vec<SimTarget>,
    client: usize,
    /// In-flight ops by tag (the request tag the device models see).
    ops: Tags<Op>,
    done: Vec<Done>,
    buffers: Buffers,
    clock: SimClock,
}

impl SimEngine {
    /// An engine over `targets` (indexed like the worker's targets) as client `client` of each device, with
    /// room for `slot_count` ops, on `clock` (on virtual time the client is the seat's index).
    pub fn new(
        targets: Vec<SimTarget>,
        client: usize,
        slot_count: u32,
        buffers: Buffers,
        clock: SimClock,
    ) -> SimEngine {
        if let SimClock::Virtual(seat) = &clock {
            assert_eq!(seat.index(), client, "on virtual time a worker's client number is its seat");
        }
        SimEngine {
            targets,
            client,
            ops: Tags::new(slot_count),
            done: Vec::with_capacity(slot_count as usize),
            buffers,
            clock,
        }
    }

    /// An engine alone on virtual time over `targets` (client 0): how tests and single-worker tools run one.
    pub fn alone(targets: Vec<SimTarget>, slot_count: u32, buffers: Buffers) -> SimEngine {
        let seat = Seat::alone(targets.iter().map(|t| t.device.clone()).collect());
        SimEngine::new(targets, 0, slot_count, buffers, SimClock::Virtual(seat))
    }

    /// A one-worker `sim:fixed` device (`latency_ns`, `servers`) without data: the engine conformance suite's.
    /// `clock` None runs alone on virtual time.
    pub fn fixed(
        latency_ns: u64,
        servers: u32,
        slots: u32,
        buffers: Buffers,
        clock: Option<RealClock>,
    ) -> SimEngine {
        let spec = iolab_spec::SimSpec::Fixed { latency_ns, servers, size_bytes: 1 << 30 };
        let targets = vec![SimTarget::single(&spec, 0, slots, false)];
        match clock {
            Some(c) => SimEngine::new(targets, 0, slots, buffers, SimClock::Real(c)),
            None => SimEngine::alone(targets, slots, buffers),
        }
    }

    /// Waits on the real clock until `t`.
    fn sleep_until(c: &RealClock, t: u64) {
        loop {
            let now = c.now_ns();
            if now >= t {
                return;
            }
            let left = t - now;
            if left > SPIN_NS {
                std::thread::sleep(std::time::Duration::from_nanos(left - SPIN_NS));
            } else {
                std::hint::spin_loop();
            }
        }
    }

    /// Collects completions due by now into `out`; returns the devices' next event.
    fn poll(&mut self, out: &mut Vec<Completion>) -> Option<u64> {
        let now = self.now_ns();
        let mut next: Option<u64> = None;
        for t in &self.targets {
            if let Some(n) = t.device.poll(self.client, now, &mut self.done) {
                next = Some(next.map_or(n, |m| m.min(n)));
            }
        }
        for d in self.done.drain(..) {
            let op = self.ops.remove(d.tag as u32);
            if op.kind == OpKind::Read {
                if let Some(store) = &self.targets[op.target as usize].store {
                    store.read(op.offset, &mut self.buffers.get_mut(op.buf)[..op.len as usize]);
                }
            }
            out.push(Completion {
                user_data: op.user_data,
                result: op.len as i32,
                cached: false,
                done_ns: 0,
                start_ns: 0,
            });
        }
        next
    }
}

impl Engine for SimEngine {
    fn name(&self) -> &'static str {
        "sim"
    }
    fn features(&self) -> Vec<String> {
        vec![match self.clock {
            SimClock::Virtual(_) => "virtual_time".into(),
            SimClock::Real(_) => "real_time_deadline_queue".into(),
        }]
    }
    #[inline]
    fn now_ns(&self) -> u64 {
        match &self.clock {
            SimClock::Real(c) => c.now_ns(),
            SimClock::Virtual(seat) => seat.now_ns(),
        }
    }
    fn buffer_mut(&mut self, buf: u32) -> &mut [u8] {
        self.buffers.get_mut(buf)
    }
    unsafe fn push(&mut self, op: Op) {
        let t = &self.targets[op.target as usize];
        if op.kind == OpKind::Write {
            if let Some(store) = &t.store {
                // The device holds the data from the moment it accepts the write; a read issued after the
                // write completed sees it.
                store.write(op.offset, &self.buffers.get(op.buf)[..op.len as usize]);
            }
        }
        let tag = self.ops.insert(op);
        let now = self.now_ns();
        t.device.submit(
            self.client,
            now,
            Request {
                tag: tag as u64,
                kind: match op.kind {
                    OpKind::Read => ReqKind::Read,
                    OpKind::Write => ReqKind::Write,
                    OpKind::Flush => ReqKind::Flush,
                    OpKind::Trim => ReqKind::Trim,
                },
                durable: op.sync.is_durable(),
                offset: op.offset,
                len: op.len,
            },
        );
    }
    fn submit_and_reap(
        &mut self,
        deadline_ns: Option<u64>,
        out: &mut Vec<Completion>,
    ) -> Result<(), EngineError> {
        let first = out.len();
        loop {
            let next = self.poll(out);
            let now = self.now_ns();
            if out.len() > first || deadline_ns.is_some_and(|d| now >= d) {
                return Ok(());
            }
            match &self.clock {
                SimClock::Real(c) => match (next, deadline_ns) {
                    (Some(t), Some(d)) => Self::sleep_until(c, t.min(d)),
                    (Some(t), None) | (None, Some(t)) => Self::sleep_until(c, t),
                    (None, None) => return Ok(()),
                },
                // The timeline wakes this worker at its deadline or when a device completes one of its ops.
                SimClock::Virtual(seat) => {
                    if self.ops.is_empty() && deadline_ns.is_none() {
                        return Ok(());
                    }
                    seat.wait(deadline_ns);
                }
            }
        }
    }
    /// Nothing to hand over early: this engine hands each op to its device model at push.
    fn submit(&mut self) -> Result<(), EngineError> {
        Ok(())
    }
    /// Nothing held back.
    fn finish(&mut self) -> Result<(), EngineError> {
        Ok(())
    }
}
