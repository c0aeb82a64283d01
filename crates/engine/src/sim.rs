//! Emulated devices. `sim:fixed` serves each I/O in exactly `latency`, with `servers` I/Os in service at once
//! and the rest queued first-in first-out inside the device: a device with a known capacity of
//! `servers / latency` IOPS, which makes queueing theory checkable (Little's law, response vs service time).
//!
//! Timing is a deadline queue, never a sleep per I/O. Each pushed op gets its completion time when it is
//! pushed (`max(now, earliest free server) + latency`); [`Engine::submit_and_reap`] waits until the earliest
//! deadline (or the caller's) and returns every op due by then. On the real clock it sleeps until shortly
//! before that deadline and spins the rest (sleep wake-up jitter on Linux is tens of microseconds); on virtual
//! time it jumps the clock to the deadline, so a run is exact, deterministic for its seed, and takes no wall time.
//! Emulated devices keep no data in this version: reads return the buffer unchanged.

use crate::buffers::Buffers;
use crate::{Completion, Engine, EngineError, Op, RealClock};
use std::cell::Cell;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// Spin (rather than sleep) for the last part of a wait on the real clock.
const SPIN_NS: u64 = 150_000;

/// An emulated `sim:fixed` device, private to one worker.
pub struct SimEngine {
    latency_ns: u64,
    /// Times at which each server becomes free (at most `min(servers, slots)` entries).
    servers: BinaryHeap<Reverse<u64>>,
    /// In-flight ops in completion order (FIFO with equal service times keeps them sorted).
    due: VecDeque<(u64, Completion)>,
    buffers: Buffers,
    clock: Option<RealClock>,
    virtual_now: Cell<u64>,
}

impl SimEngine {
    /// A fixed-latency device. `clock` None runs on virtual time starting at 0.
    pub fn new(
        latency_ns: u64,
        servers: u32,
        slot_count: u32,
        buffers: Buffers,
        clock: Option<RealClock>,
    ) -> SimEngine {
        let n = servers.min(slot_count).max(1) as usize;
        let mut heap = BinaryHeap::with_capacity(n);
        for _ in 0..n {
            heap.push(Reverse(0));
        }
        SimEngine {
            latency_ns,
            servers: heap,
            due: VecDeque::with_capacity(slot_count as usize),
            buffers,
            clock,
            virtual_now: Cell::new(0),
        }
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
        let now = self.now_ns();
        let Reverse(free) = self.servers.pop().unwrap_or(Reverse(0));
        let done = free.max(now) + self.latency_ns;
        self.servers.push(Reverse(done));
        debug_assert!(self.due.back().is_none_or(|(t, _)| *t <= done));
        self.due.push_back((done, Completion { user_data: op.user_data, result: op.len as i32 }));
    }
    fn submit_and_reap(
        &mut self,
        deadline_ns: Option<u64>,
        out: &mut Vec<Completion>,
    ) -> Result<(), EngineError> {
        let target = match (self.due.front().map(|(t, _)| *t), deadline_ns) {
            (Some(t), Some(d)) => t.min(d),
            (Some(t), None) => t,
            (None, Some(d)) => d,
            (None, None) => return Ok(()),
        };
        self.wait_until(target);
        let now = self.now_ns();
        while let Some((t, c)) = self.due.front() {
            if *t > now {
                break;
            }
            out.push(*c);
            self.due.pop_front();
        }
        Ok(())
    }
}
