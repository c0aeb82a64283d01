//! Emulated devices (`sim:fixed`, `sim:hdd`, `sim:ssd`, `sim:array`): the models of iolab-sim driven on the
//! real clock or on virtual time, with the data kept in a sparse store so reads return what was written.
//!
//! Timing is a deadline queue, never a sleep per I/O. A pushed op is submitted to its device's model at once
//! (the model computes when it will finish; a model that reorders, like the HDD's command queue, may revise
//! that as more ops arrive). [`Engine::submit_and_reap`] asks the devices for completions due now and for
//! their next event, and waits until the earlier of that event and the caller's deadline. On the real clock
//! it sleeps until shortly before and spins the rest (sleep wake-up jitter on Linux is tens of microseconds);
//! on virtual time it jumps the clock, so a run is exact, deterministic for its seed, and takes no wall time.
//!
//! A device is one [`SharedDevice`] for the whole run: every worker using it submits to the same model (its
//! queue, its head position, its channels), and each worker collects its own completions. On virtual time a
//! device has exactly one worker (the plan enforces it), since each worker's virtual clock is its own.

use crate::buffers::Buffers;
use crate::tags::Tags;
use crate::{Completion, Engine, EngineError, Op, RealClock};
use iolab_sim::{Done, Request, SharedDevice, SparseStore};
use std::cell::Cell;
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

/// A worker's view of its emulated devices.
pub struct SimEngine {
    targets: Vec<SimTarget>,
    client: usize,
    /// In-flight ops by tag (the request tag the device models see).
    ops: Tags<Op>,
    done: Vec<Done>,
    buffers: Buffers,
    clock: Option<RealClock>,
    virtual_now: Cell<u64>,
}

impl SimEngine {
    /// An engine over `targets` (indexed like the worker's targets) as client `client` of each device, with
    /// room for `slot_count` ops. `clock` None runs on virtual time starting at 0.
    pub fn new(
        targets: Vec<SimTarget>,
        client: usize,
        slot_count: u32,
        buffers: Buffers,
        clock: Option<RealClock>,
    ) -> SimEngine {
        SimEngine {
            targets,
            client,
            ops: Tags::new(slot_count),
            done: Vec::with_capacity(slot_count as usize),
            buffers,
            clock,
            virtual_now: Cell::new(0),
        }
    }

    /// A one-worker `sim:fixed` device (`latency_ns`, `servers`) without data: the engine conformance suite's.
    pub fn fixed(
        latency_ns: u64,
        servers: u32,
        slots: u32,
        buffers: Buffers,
        clock: Option<RealClock>,
    ) -> SimEngine {
        let spec = iolab_spec::SimSpec::Fixed { latency_ns, servers, size_bytes: 1 << 30 };
        SimEngine::new(vec![SimTarget::single(&spec, 0, slots, false)], 0, slots, buffers, clock)
    }

    fn wait_until(&self, t: u64) {
        match &self.clock {
            None => {
                if t > self.virtual_now.get() {
                    self.virtual_now.set(t);
                }
            }
            Some(c) => loop {
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
            },
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
            if !op.write {
                if let Some(store) = &self.targets[op.target as usize].store {
                    store.read(op.offset, &mut self.buffers.get_mut(op.buf)[..op.len as usize]);
                }
            }
            out.push(Completion { user_data: op.user_data, result: op.len as i32, cached: false });
        }
        next
    }
}

impl Engine for SimEngine {
    fn name(&self) -> &'static str {
        "sim"
    }
    fn features(&self) -> Vec<String> {
        vec![if self.clock.is_none() { "virtual_time".into() } else { "real_time_deadline_queue".into() }]
    }
    #[inline]
    fn now_ns(&self) -> u64 {
        match &self.clock {
            Some(c) => c.now_ns(),
            None => self.virtual_now.get(),
        }
    }
    fn buffer_mut(&mut self, buf: u32) -> &mut [u8] {
        self.buffers.get_mut(buf)
    }
    fn push(&mut self, op: Op) {
        let t = &self.targets[op.target as usize];
        if op.write {
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
            Request { tag: tag as u64, write: op.write, offset: op.offset, len: op.len },
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
            if out.len() > first {
                return Ok(());
            }
            let now = self.now_ns();
            let target = match (next, deadline_ns) {
                (Some(t), Some(d)) => t.min(d),
                (Some(t), None) => t,
                (None, Some(d)) => d,
                (None, None) => return Ok(()),
            };
            if deadline_ns.is_some_and(|d| now >= d) {
                return Ok(());
            }
            self.wait_until(target.max(now));
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
