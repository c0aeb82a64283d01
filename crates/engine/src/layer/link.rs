//! `link:` in front of any target: an emulated FC, iSCSI or FCoE path between the host and the target.
//!
//! [`LinkEngine`] wraps any engine. An op on a linked target is held until the link has carried it to the
//! device (a write's payload crosses the outbound pipe, then the command latency; see
//! [`iolab_sim::LinkTiming`]), then pushed to the engine underneath; its completion is held until a read's
//! payload has crossed the inbound pipe. Both waits are deadline queues on the inner engine's clock, so on
//! virtual time they are exact and on the real clock they cost no sleep per I/O: the wrapper waits in the
//! inner engine's `submit_and_reap`, bounded by its own next deadline. Ops on targets without a link pass
//! straight through.

use crate::tags::Tags;
use crate::{Completion, Engine, EngineError, Op, OpKind};
use iolab_sim::LinkTiming;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::{Arc, Mutex};

/// One link of the run, shared by every worker whose target is behind it (so two workers share its
/// bandwidth, as on a real path), on either clock.
pub type SharedLink = Arc<Mutex<LinkTiming>>;

/// An op in flight through the link, and its result once the engine underneath returned it.
#[derive(Clone, Copy)]
struct Entry {
    op: Op,
    result: i32,
}

/// An engine behind per-target links.
pub struct LinkEngine<E: Engine> {
    inner: E,
    links: Vec<Option<SharedLink>>,
    /// In-flight ops by tag (the user_data the inner engine sees).
    entries: Tags<Entry>,
    /// Ops crossing the link to the device: (arrival, sequence, tag).
    outbound: BinaryHeap<Reverse<(u64, u64, u32)>>,
    /// Completions crossing the link back: (arrival at the host, sequence, tag).
    inbound: BinaryHeap<Reverse<(u64, u64, u32)>>,
    seq: u64,
    /// Ops pushed to the inner engine and not yet completed there.
    in_inner: usize,
    reaped: Vec<Completion>,
}

impl<E: Engine> LinkEngine<E> {
    /// Wraps `inner`; `links[t]` is the link in front of target `t` (None: no link). Room for `slots` ops.
    pub fn new(inner: E, links: &[Option<SharedLink>], slots: u32) -> LinkEngine<E> {
        let n = slots as usize;
        LinkEngine {
            inner,
            links: links.to_vec(),
            entries: Tags::new(slots),
            outbound: BinaryHeap::with_capacity(n),
            inbound: BinaryHeap::with_capacity(n),
            seq: 0,
            in_inner: 0,
            reaped: Vec::with_capacity(n),
        }
    }

    /// The link in front of engine target `t`. Targets past the worker's own (a real cache device, appended by
    /// the cli after them) have none: their ops pass straight through.
    fn link_of(&self, t: u16) -> Option<&SharedLink> {
        self.links.get(t as usize).and_then(Option::as_ref)
    }

    fn next_seq(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }

    fn push_inner(&mut self, tag: u32) {
        let op = self.entries.get(tag).op;
        // SAFETY: the worker's op, held while it crossed the link: the promise its `push` caller made holds
        // until the completion comes back through this engine.
        unsafe { self.inner.push(Op { user_data: tag as u64, ..op }) };
        self.in_inner += 1;
    }

    /// Moves ops whose link crossing is over into the inner engine, and completions that reached the host to
    /// `out`. Returns the earliest time either queue next has something due.
    fn release(&mut self, now: u64, out: &mut Vec<Completion>) -> Option<u64> {
        while let Some(&Reverse((t, _, tag))) = self.outbound.peek() {
            if t > now {
                break;
            }
            self.outbound.pop();
            self.push_inner(tag);
        }
        while let Some(&Reverse((t, _, tag))) = self.inbound.peek() {
            if t > now {
                break;
            }
            self.inbound.pop();
            self.complete(tag, out);
        }
        let a = self.outbound.peek().map(|Reverse((t, _, _))| *t);
        let b = self.inbound.peek().map(|Reverse((t, _, _))| *t);
        match (a, b) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn complete(&mut self, tag: u32, out: &mut Vec<Completion>) {
        let e = self.entries.remove(tag);
        out.push(Completion {
            user_data: e.op.user_data,
            result: e.result,
            cached: false,
            done_ns: 0,
            start_ns: 0,
        });
    }

    /// Handles the inner engine's completions at `now`: a linked read crosses the inbound pipe first.
    fn take_reaped(&mut self, now: u64, out: &mut Vec<Completion>) {
        let mut reaped = std::mem::take(&mut self.reaped);
        for c in reaped.drain(..) {
            self.in_inner -= 1;
            let tag = c.user_data as u32;
            let e = self.entries.get_mut(tag);
            e.result = c.result;
            let op = e.op;
            let back = match self.link_of(op.target) {
                Some(link) => link.lock().unwrap_or_else(|p| p.into_inner()).to_host(
                    now,
                    op.kind != OpKind::Read,
                    op.len,
                ),
                None => now,
            };
            if back <= now {
                self.complete(tag, out);
            } else {
                let s = self.next_seq();
                self.inbound.push(Reverse((back, s, tag)));
            }
        }
        self.reaped = reaped;
    }
}

super::holding_by_release!(LinkEngine);

impl<E: Engine> Engine for LinkEngine<E> {
    super::delegate_to_inner!();
    fn features(&self) -> Vec<String> {
        let mut f = self.inner.features();
        f.push("link".into());
        f
    }
    unsafe fn push(&mut self, op: Op) {
        let tag = self.entries.insert(Entry { op, result: 0 });
        let now = self.inner.now_ns();
        match self.link_of(op.target) {
            Some(link) => {
                let at = link.lock().unwrap_or_else(|p| p.into_inner()).to_device(
                    now,
                    op.kind == OpKind::Write,
                    op.len,
                );
                let s = self.next_seq();
                self.outbound.push(Reverse((at, s, tag)));
            }
            None => self.push_inner(tag),
        }
    }
    super::reap_by_holding!();
    /// Hands over what was pushed underneath (ops on targets without a link, and linked ops whose crossing
    /// ended by the last `submit_and_reap`): they are the target's I/O like any other, so they go out early
    /// as they would without the link. Ops still crossing the link stay held; their time is the link's.
    /// On virtual time the engine underneath is emulated and its `submit` does nothing, so fixed-seed
    /// results are the same either way.
    fn submit(&mut self) -> Result<(), EngineError> {
        self.inner.submit()
    }
    fn finish(&mut self) -> Result<(), EngineError> {
        self.inner.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::sim::SimEngine;
    use crate::buffers::Buffers;
    use iolab_spec::{DataPattern, LinkParams};

    /// A 100 us emulated device on virtual time behind `link` (400 MB/s: 2.5 ns per byte; 20 us per command).
    fn over_sim(link: Option<SharedLink>) -> LinkEngine<SimEngine> {
        let b = Buffers::new(8, 65536, DataPattern::Random, 1);
        LinkEngine::new(SimEngine::fixed(100_000, 8, 4, b, None), &[link], 4)
    }

    fn link() -> Option<SharedLink> {
        let params = LinkParams { preset: "test".into(), mb_s: 400.0, latency_ns: 20_000 };
        Some(Arc::new(Mutex::new(LinkTiming::new(&params))))
    }

    /// Pushes `op` and returns when its completion comes back, on the engine's clock.
    fn completes_at(e: &mut LinkEngine<SimEngine>, write: bool, len: u32) -> u64 {
        let t0 = e.now_ns();
        let op = Op {
            user_data: 7,
            kind: if write { OpKind::Write } else { OpKind::Read },
            sync: crate::WriteSync::None,
            target: 0,
            offset: 0,
            len,
            buf: u32::from(write),
        };
        // SAFETY: the test never touches the buffer.
        unsafe { e.push(op) };
        let mut out = Vec::new();
        while out.is_empty() {
            e.submit_and_reap(None, &mut out).expect("submit_and_reap");
        }
        assert_eq!(
            out,
            [Completion { user_data: 7, result: len as i32, cached: false, done_ns: 0, start_ns: 0 }]
        );
        e.now_ns() - t0
    }

    #[test]
    fn link_read_pays_the_command_latency_out_and_the_payload_back() {
        let mut e = over_sim(link());
        // 20 us to the device, 100 us there, 4096 x 2.5 ns = 10.24 us for the data to come back.
        assert_eq!(completes_at(&mut e, false, 4096), 20_000 + 100_000 + 10_240);
    }

    #[test]
    fn link_write_pays_the_payload_and_the_command_latency_out() {
        let mut e = over_sim(link());
        assert_eq!(completes_at(&mut e, true, 4096), 10_240 + 20_000 + 100_000);
    }

    #[test]
    fn link_absent_passes_ops_straight_through() {
        let mut e = over_sim(None);
        assert_eq!(completes_at(&mut e, false, 4096), 100_000);
    }

    #[test]
    fn link_payloads_queue_behind_each_other_on_one_pipe() {
        let mut e = over_sim(link());
        for i in 0..2 {
            let op = Op {
                user_data: i,
                kind: OpKind::Write,
                sync: crate::WriteSync::None,
                target: 0,
                offset: 0,
                len: 65536,
                buf: 1,
            };
            // SAFETY: two writes from one buffer, which the test never writes while they are in flight (the
            // engine only reads a write's buffer).
            unsafe { e.push(op) };
        }
        let mut out = Vec::new();
        let mut at = Vec::new();
        while out.len() < 2 {
            let n = out.len();
            e.submit_and_reap(None, &mut out).expect("submit_and_reap");
            at.extend(std::iter::repeat_n(e.now_ns(), out.len() - n));
        }
        // 65536 x 2.5 ns = 163.84 us each; the second leaves when the first has crossed.
        assert_eq!(at, [163_840 + 120_000, 2 * 163_840 + 120_000]);
    }
}
