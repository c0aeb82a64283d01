//! The timing of a full-duplex storage link (`link:`): a FIFO pipe per direction at the payload bandwidth,
//! plus a fixed latency per command.
//!
//! A write's payload crosses the host-to-device pipe before the command reaches the device; a read's payload
//! crosses the device-to-host pipe after the device finishes. Commands without payload take no pipe time.
//! The two directions are independent (full duplex), so reads and writes each get the full `mb_s`. The
//! command latency (HBA, switch and protocol processing, propagation) is added once per command, on the way
//! to the device. Flushes and trims cross as commands without payload (a trim's range list is a few bytes)
//! and reach the device with their kind unchanged. Link-level flow control (buffer credits, TCP windows) is
//! not modelled: the pipe is always ready to send.

use iolab_spec::LinkParams;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// A request on its way to the device: (arrival, sequence, slot).
type Arrival = (u64, u64, u32);

/// One link's state: when each direction is next free.
#[derive(Clone, Debug)]
pub struct LinkTiming {
    params: LinkParams,
    ns_per_byte: f64,
    /// When the host-to-device pipe is next free, ns (fractional, so many small transfers do not drift).
    out_free: f64,
    /// When the device-to-host pipe is next free, ns.
    in_free: f64,
}

impl LinkTiming {
    /// A link with both directions idle.
    pub fn new(params: &LinkParams) -> LinkTiming {
        LinkTiming {
            params: params.clone(),
            ns_per_byte: 1e3 / params.mb_s.max(1e-9),
            out_free: 0.0,
            in_free: 0.0,
        }
    }

    /// The link's parameters.
    pub fn params(&self) -> &LinkParams {
        &self.params
    }

    /// Time for `len` bytes of payload on one direction, ns.
    pub fn transfer_ns(&self, len: u32) -> f64 {
        len as f64 * self.ns_per_byte
    }

    /// A command leaves the host at `now_ns`; returns when it reaches the device: a write's payload crosses
    /// the outbound pipe (queued behind earlier transfers), then the command latency.
    pub fn to_device(&mut self, now_ns: u64, write: bool, len: u32) -> u64 {
        let mut t = now_ns as f64;
        if write && len > 0 {
            let start = self.out_free.max(t);
            self.out_free = start + self.transfer_ns(len);
            t = self.out_free;
        }
        t.ceil() as u64 + self.params.latency_ns
    }

    /// The device finished at `done_ns`; returns when the host sees the completion: a read's payload crosses
    /// the inbound pipe (queued behind earlier transfers).
    pub fn to_host(&mut self, done_ns: u64, write: bool, len: u32) -> u64 {
        if write || len == 0 {
            return done_ns;
        }
        let start = self.in_free.max(done_ns as f64);
        self.in_free = start + self.transfer_ns(len);
        self.in_free.ceil() as u64
    }
}

/// A model behind a link (`link:PRESET:sim:...`): requests cross [`LinkTiming`] on the way in and out, so the
/// pair behaves as one [`Model`](crate::Model) whose completions are the times the host sees them.
pub struct Linked {
    link: LinkTiming,
    inner: Box<dyn crate::Model>,
    /// The original request per slot; the inner model sees the slot index as the tag.
    slots: Vec<crate::Request>,
    free: Vec<u32>,
    /// Requests on their way to the device: (arrival, sequence, slot).
    arrivals: BinaryHeap<Reverse<Arrival>>,
    /// Completions on their way to the host: (seen at, sequence, slot).
    returns: BinaryHeap<Reverse<(u64, u64, u32)>>,
    seq: u64,
    scratch: Vec<crate::Done>,
}

impl Linked {
    /// `inner` behind a link with `params`, with room for `max_in_flight` requests.
    pub fn new(params: &LinkParams, inner: Box<dyn crate::Model>, max_in_flight: usize) -> Linked {
        let cap = max_in_flight.max(1);
        Linked {
            link: LinkTiming::new(params),
            inner,
            slots: vec![crate::Request::read(0, 0, 0); cap],
            free: (0..cap as u32).rev().collect(),
            arrivals: BinaryHeap::with_capacity(cap),
            returns: BinaryHeap::with_capacity(cap),
            seq: 0,
            scratch: Vec::with_capacity(cap),
        }
    }

    fn inner_done(&mut self) {
        for i in 0..self.scratch.len() {
            let d = self.scratch[i];
            let slot = d.tag as u32;
            let r = self.slots[slot as usize];
            let seen = self.link.to_host(d.at_ns, r.kind != crate::ReqKind::Read, r.len);
            self.returns.push(Reverse((seen, self.seq, slot)));
            self.seq += 1;
        }
        self.scratch.clear();
    }
}

impl crate::Model for Linked {
    fn submit(&mut self, now_ns: u64, req: crate::Request) {
        let slot = self.free.pop().expect(
            "link: a free slot (the table holds max_in_flight requests and never grows: more in flight breaks \
             the Model contract)",
        );
        self.slots[slot as usize] = req;
        let at = self.link.to_device(now_ns, req.kind == crate::ReqKind::Write, req.len);
        self.arrivals.push(Reverse((at, self.seq, slot)));
        self.seq += 1;
    }
    fn next_event_ns(&self) -> Option<u64> {
        [
            self.arrivals.peek().map(|Reverse(a)| a.0),
            self.inner.next_event_ns(),
            self.returns.peek().map(|Reverse(r)| r.0),
        ]
        .into_iter()
        .flatten()
        .min()
    }
    fn advance(&mut self, now_ns: u64, done: &mut Vec<crate::Done>) {
        loop {
            let arrival = self.arrivals.peek().map(|Reverse(a)| a.0).filter(|&t| t <= now_ns);
            let inner = self.inner.next_event_ns().filter(|&t| t <= now_ns);
            match (arrival, inner) {
                (Some(a), i) if i.is_none_or(|i| a <= i) => {
                    let Reverse((at, _, slot)) = self.arrivals.pop().expect("peeked");
                    self.inner.advance(at, &mut self.scratch);
                    self.inner_done();
                    let req = crate::Request { tag: slot as u64, ..self.slots[slot as usize] };
                    self.inner.submit(at, req);
                }
                (_, Some(i)) => {
                    self.inner.advance(i, &mut self.scratch);
                    self.inner_done();
                }
                _ => break,
            }
        }
        self.inner.advance(now_ns, &mut self.scratch);
        self.inner_done();
        while let Some(Reverse((t, _, slot))) = self.returns.peek().copied() {
            if t > now_ns {
                break;
            }
            self.returns.pop();
            done.push(crate::Done { tag: self.slots[slot as usize].tag, at_ns: t });
            self.free.push(slot);
        }
    }
    fn in_flight(&self) -> usize {
        self.slots.len() - self.free.len()
    }
    /// The device's figure plus the command latency and one payload transfer.
    fn expected_service_ns(&self, write: bool, len: u32) -> f64 {
        self.inner.expected_service_ns(write, len)
            + self.link.params.latency_ns as f64
            + self.link.transfer_ns(len)
    }

    fn write_cache_fill(&self) -> Option<crate::WriteCacheFill> {
        self.inner.write_cache_fill()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directions_are_independent_and_commands_cost_latency_once() {
        let p = iolab_spec::sim::link_preset("fc4g").unwrap();
        let mut l = LinkTiming::new(&p);
        // 400 MB/s: 4000 bytes take 10 us.
        assert_eq!(l.to_device(0, true, 4000), 10_000 + 5_000);
        assert_eq!(l.to_device(0, true, 4000), 20_000 + 5_000, "queued behind the first write");
        assert_eq!(l.to_device(0, false, 4000), 5_000, "a read command carries no payload out");
        assert_eq!(l.to_host(0, false, 4000), 10_000, "inbound pipe was idle");
        assert_eq!(l.to_host(100, true, 4000), 100, "a write's completion carries no payload");
        assert_eq!(l.to_device(1_000_000, false, 0), 1_005_000);
    }
}
