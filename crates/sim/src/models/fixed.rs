//! `sim:fixed`: every request takes exactly `latency`, `servers` at a time, the rest wait first-in first-out.

use crate::{Done, Model, Request};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// The fixed-latency device. Its timing rule is that of iolab-engine's `SimEngine`: a request submitted at
/// `now` completes at `max(now, earliest free server) + latency`, so completions come in submission order.
pub struct Fixed {
    latency_ns: u64,
    servers: BinaryHeap<Reverse<u64>>,
    due: VecDeque<Done>,
}

impl Fixed {
    /// A device serving `servers` requests at once, with room for `max_in_flight`.
    pub fn new(latency_ns: u64, servers: u32, max_in_flight: usize) -> Fixed {
        let n = (servers as usize).min(max_in_flight.max(1)).max(1);
        let mut heap = BinaryHeap::with_capacity(n);
        for _ in 0..n {
            heap.push(Reverse(0));
        }
        Fixed { latency_ns, servers: heap, due: VecDeque::with_capacity(max_in_flight.max(1)) }
    }
}

impl Model for Fixed {
    fn submit(&mut self, now_ns: u64, req: Request) {
        let Reverse(free) = self.servers.pop().unwrap_or(Reverse(0));
        let done = free.max(now_ns) + self.latency_ns;
        self.servers.push(Reverse(done));
        debug_assert!(self.due.back().is_none_or(|d| d.at_ns <= done));
        self.due.push_back(Done { tag: req.tag, at_ns: done });
    }
    fn next_event_ns(&self) -> Option<u64> {
        self.due.front().map(|d| d.at_ns)
    }
    fn advance(&mut self, now_ns: u64, done: &mut Vec<Done>) {
        while let Some(d) = self.due.front() {
            if d.at_ns > now_ns {
                break;
            }
            done.push(*d);
            self.due.pop_front();
        }
    }
    fn in_flight(&self) -> usize {
        self.due.len()
    }
    fn expected_service_ns(&self, _write: bool, _len: u32) -> f64 {
        self.latency_ns as f64
    }
}
