//! `sim:array`: member disks in RAID 0, 5 or 10 behind a controller.
//!
//! The host address space is cut into stripe units of `stripe` bytes laid out row by row over the members:
//!
//! - RAID 0: unit u is on member `u mod N`, row `u / N`.
//! - RAID 5 (left-symmetric): row r has its parity on member `N - 1 - (r mod N)` and data unit k on member
//!   `(parity + 1 + k) mod N`. A read touches only data. A write covering whole rows writes their data and
//!   parity at once; any other write reads the old data and old parity of the units it touches (in parallel),
//!   and once all those reads are done writes the new data and parity (read-modify-write: 4 member I/Os for a
//!   small write).
//! - RAID 10: member pairs (0,1), (2,3), ... are mirrors and units are striped over the pairs; a read goes to
//!   the mirror with fewer requests in flight (the first on a tie), a write to both.
//!
//! A request spanning units is split; pieces that are contiguous on one member are merged into one member
//! request. The host request completes when its last member request does, plus `controller`. When the array
//! is smaller than its members allow (`size=`), each member holds its part at the start of the disk, so HDD
//! members seek over a shorter stroke ("short-stroking").
//!
//! Member events are processed in time order inside [`Model::advance`], and the writes of a read-modify-write
//! are submitted at the exact time its reads completed. Each member sits behind its own write cache
//! (write-through unless `member=...:wcache=` says otherwise: arrays turn their disks' caches off); the
//! controller's write cache is put in front of the whole array by [`crate::build`] ([`crate::wcache`]).
//! Not modelled: the controller's read cache, controller queueing (its overhead is a fixed delay), degraded
//! mode and rebuilds.

use crate::models::dist::ServiceDist;
use crate::wcache::Cached;
use crate::{Done, Model, ReqKind, Request};
use iolab_rng::SplitMix64;
use iolab_spec::{ArrayParams, Member, Raid};
use std::collections::VecDeque;

/// Spindle speed difference between neighbouring HDD members (member i turns at
/// `1 + SPINDLE_SPREAD x (i - (N-1)/2)` times nominal): unsynchronised spindles drift in phase, so two
/// mirrors pass through every relative angle (one cycle every 2,000 revolutions, 12 s at 10K RPM).
pub const SPINDLE_SPREAD: f64 = 0.0005;

#[derive(Clone, Copy, Debug, Default)]
struct Slot {
    tag: u64,
    offset: u64,
    len: u32,
    write: bool,
    /// Read-modify-write reads outstanding.
    reads: u32,
    /// Other member requests outstanding.
    ops: u32,
}

#[derive(Clone, Copy, Debug)]
struct PendOp {
    off: u64,
    len: u64,
    write: bool,
    preread: bool,
}

/// The array model.
pub struct Array {
    p: ArrayParams,
    n: u64,
    members: Vec<Box<dyn Model>>,
    slots: Vec<Slot>,
    free: Vec<u32>,
    host_done: VecDeque<Done>,
    scratch: Vec<Done>,
    /// Per column (member, or mirrored pair for RAID 10): a member request being merged.
    pend: Vec<Option<PendOp>>,
    /// Fraction of each member's capacity the array uses.
    span: f64,
    /// Member requests issued since build.
    member_requests: u64,
}

impl Array {
    /// An array with parameters `p`; member `i` is seeded from `seed` and `i`. Room for `max_in_flight` host
    /// requests (members get room for twice as many plus 16).
    pub fn new(p: &ArrayParams, seed: u64, max_in_flight: usize) -> Array {
        let n = p.disks.max(1) as u64;
        let member_room = max_in_flight * 2 + 16;
        let members: Vec<Box<dyn Model>> = (0..n)
            .map(|i| -> Box<dyn Model> {
                let s = SplitMix64::derived(seed, i + 1).next_u64();
                match &p.member {
                    Member::Hdd(h) => {
                        let speed = 1.0 + SPINDLE_SPREAD * (i as f64 - (n - 1) as f64 / 2.0);
                        Cached::build(&h.wcache, h.queue_depth as usize, member_room, |room| {
                            Box::new(crate::models::Hdd::with_speed(h, s, room, speed))
                        })
                    }
                    Member::Ssd(d) => Cached::build(&d.wcache, d.channels as usize, member_room, |room| {
                        Box::new(crate::models::Ssd::new(d, s, room))
                    }),
                }
            })
            .collect();
        let cap = max_in_flight.max(1);
        let data = p.data_disks().max(1) as u64;
        let row_bytes = data * p.stripe_bytes;
        let rows = p.size_bytes.div_ceil(row_bytes);
        let span = ((rows * p.stripe_bytes) as f64 / p.member.size_bytes() as f64).min(1.0);
        Array {
            p: p.clone(),
            n,
            members,
            slots: vec![Slot::default(); cap],
            free: (0..cap as u32).rev().collect(),
            host_done: VecDeque::with_capacity(cap),
            scratch: Vec::with_capacity(cap * 4 + 64),
            pend: vec![None; n as usize],
            span,
            member_requests: 0,
        }
    }

    /// Requests in flight on member `i` (for tests and diagnostics).
    pub fn member_in_flight(&self, i: usize) -> usize {
        self.members[i].in_flight()
    }

    /// Member requests issued since the array was built (after merging contiguous pieces): the I/O cost of
    /// the RAID level, e.g. 4 per small RAID-5 write.
    pub fn member_requests(&self) -> u64 {
        self.member_requests
    }

    #[allow(clippy::too_many_arguments)]
    fn emit(&mut self, slot: u32, col: usize, off: u64, len: u64, write: bool, preread: bool, now: u64) {
        if let Some(p) = &mut self.pend[col] {
            if p.write == write && p.preread == preread && p.off + p.len == off {
                p.len += len;
                return;
            }
        }
        self.flush(slot, col, now);
        self.pend[col] = Some(PendOp { off, len, write, preread });
    }

    fn flush(&mut self, slot: u32, col: usize, now: u64) {
        let Some(op) = self.pend[col].take() else { return };
        let tag = ((slot as u64) << 1) | op.preread as u64;
        let kind = if op.write { ReqKind::Write } else { ReqKind::Read };
        let req = |_: ()| Request { tag, kind, durable: false, offset: op.off, len: op.len as u32 };
        let s = &mut self.slots[slot as usize];
        self.member_requests += 1 + (self.p.raid == Raid::Raid10 && op.write) as u64;
        match self.p.raid {
            Raid::Raid0 | Raid::Raid5 => {
                if op.preread {
                    s.reads += 1;
                } else {
                    s.ops += 1;
                }
                self.members[col].submit(now, req(()));
            }
            Raid::Raid10 => {
                let (a, b) = (2 * col, 2 * col + 1);
                if op.write {
                    s.ops += 2;
                    self.members[a].submit(now, req(()));
                    self.members[b].submit(now, req(()));
                } else {
                    s.ops += 1;
                    let m = if self.members[b].in_flight() < self.members[a].in_flight() { b } else { a };
                    self.members[m].submit(now, req(()));
                }
            }
        }
    }

    fn flush_all(&mut self, slot: u32, now: u64) {
        for col in 0..self.pend.len() {
            self.flush(slot, col, now);
        }
    }

    /// Issues the member requests of host request `slot`: phase 1 (reads, full-row writes and the reads of
    /// read-modify-writes) or phase 2 (the writes of read-modify-writes).
    fn issue(&mut self, slot: u32, phase2: bool, now: u64) {
        let s = self.slots[slot as usize];
        let stripe = self.p.stripe_bytes;
        let end = s.offset + s.len as u64;
        let n = self.n;
        match self.p.raid {
            Raid::Raid0 | Raid::Raid10 => {
                let cols = if self.p.raid == Raid::Raid0 { n } else { n / 2 };
                let mut pos = s.offset;
                while pos < end {
                    let u = pos / stripe;
                    let inside = pos % stripe;
                    let chunk = (stripe - inside).min(end - pos);
                    let moff = (u / cols) * stripe + inside;
                    self.emit(slot, (u % cols) as usize, moff, chunk, s.write, false, now);
                    pos += chunk;
                }
            }
            Raid::Raid5 => {
                let data = n - 1;
                let row_bytes = data * stripe;
                let mut row = s.offset / row_bytes;
                while row * row_bytes < end {
                    let row_start = row * row_bytes;
                    let lo = s.offset.max(row_start);
                    let hi = end.min(row_start + row_bytes);
                    let parity = (n - 1 - row % n) as usize;
                    let base = row * stripe;
                    let full = lo == row_start && hi == row_start + row_bytes;
                    if !s.write {
                        self.row_chunks(slot, row, lo, hi, parity, |a, col, off, len| {
                            a.emit(slot, col, off, len, false, false, now)
                        });
                    } else if full {
                        if !phase2 {
                            for k in 0..data {
                                let col = ((parity as u64 + 1 + k) % n) as usize;
                                self.emit(slot, col, base, stripe, true, false, now);
                            }
                            self.emit(slot, parity, base, stripe, true, false, now);
                        }
                    } else {
                        let (mut pmin, mut pmax) = (u64::MAX, 0);
                        self.row_chunks(slot, row, lo, hi, parity, |a, col, off, len| {
                            pmin = pmin.min(off);
                            pmax = pmax.max(off + len);
                            a.emit(slot, col, off, len, phase2, !phase2, now)
                        });
                        self.emit(slot, parity, pmin, pmax - pmin, phase2, !phase2, now);
                    }
                    row += 1;
                }
            }
        }
        self.flush_all(slot, now);
    }

    /// Calls `f(self, member, member offset, len)` for each data-unit piece of host range [lo, hi) in RAID-5
    /// row `row`.
    fn row_chunks(
        &mut self,
        _slot: u32,
        row: u64,
        lo: u64,
        hi: u64,
        parity: usize,
        mut f: impl FnMut(&mut Self, usize, u64, u64),
    ) {
        let stripe = self.p.stripe_bytes;
        let n = self.n;
        let row_start = row * (n - 1) * stripe;
        let mut pos = lo;
        while pos < hi {
            let k = (pos - row_start) / stripe;
            let inside = (pos - row_start) % stripe;
            let chunk = (stripe - inside).min(hi - pos);
            let col = ((parity as u64 + 1 + k) % n) as usize;
            f(self, col, row * stripe + inside, chunk);
            pos += chunk;
        }
    }

    fn complete_member(&mut self, tag: u64, at: u64) {
        let slot = (tag >> 1) as u32;
        let preread = tag & 1 == 1;
        {
            let s = &mut self.slots[slot as usize];
            if preread {
                s.reads -= 1;
            } else {
                s.ops -= 1;
            }
        }
        if preread && self.slots[slot as usize].reads == 0 {
            self.issue(slot, true, at);
        }
        let s = self.slots[slot as usize];
        if s.reads == 0 && s.ops == 0 {
            self.host_done.push_back(Done { tag: s.tag, at_ns: at + self.p.controller_ns });
            self.free.push(slot);
        }
    }

    fn member_dist(&self, write: bool, len: u32) -> ServiceDist {
        match &self.p.member {
            Member::Hdd(h) => ServiceDist::hdd(h, write, len, self.span),
            Member::Ssd(d) => ServiceDist::ssd(d, write, len),
        }
    }
}

impl Model for Array {
    fn submit(&mut self, now_ns: u64, req: Request) {
        let slot = self.free.pop().expect(
            "array: a free slot (the table holds max_in_flight host requests and never grows: more in flight \
             breaks the Model contract)",
        );
        let (write, len) = req.media_op();
        self.slots[slot as usize] = Slot { tag: req.tag, offset: req.offset, len, write, reads: 0, ops: 0 };
        if len == 0 {
            self.host_done.push_back(Done { tag: req.tag, at_ns: now_ns + self.p.controller_ns });
            self.free.push(slot);
            return;
        }
        self.issue(slot, false, now_ns);
    }

    fn next_event_ns(&self) -> Option<u64> {
        let m = self.members.iter().filter_map(|m| m.next_event_ns()).min();
        match (m, self.host_done.front().map(|d| d.at_ns)) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn advance(&mut self, now_ns: u64, done: &mut Vec<Done>) {
        while let Some(t) = self.members.iter().filter_map(|m| m.next_event_ns()).min() {
            if t > now_ns {
                break;
            }
            let mut buf = std::mem::take(&mut self.scratch);
            for m in self.members.iter_mut() {
                m.advance(t, &mut buf);
            }
            for d in buf.drain(..) {
                self.complete_member(d.tag, d.at_ns);
            }
            self.scratch = buf;
        }
        let mut buf = std::mem::take(&mut self.scratch);
        for m in self.members.iter_mut() {
            m.advance(now_ns, &mut buf);
        }
        debug_assert!(buf.is_empty());
        self.scratch = buf;
        while let Some(d) = self.host_done.front() {
            if d.at_ns > now_ns {
                break;
            }
            done.push(*d);
            self.host_done.pop_front();
        }
    }

    fn in_flight(&self) -> usize {
        self.slots.len() - self.free.len() + self.host_done.len()
    }

    /// For a request within one stripe unit: controller + the member's mean for reads and RAID-0 writes; the
    /// mean of the slower of the two mirrors for RAID-10 writes; for RAID-5 small writes the mean of the slower
    /// of the data and parity reads plus the mean of the slower of the two writes, where (for HDD members) each
    /// write waits for its sectors to come round again after the read and the faster reader has already
    /// turned on by the gap between the reads. A RAID-5 write of a whole row is the slowest of N unit writes.
    fn expected_service_ns(&self, write: bool, len: u32) -> f64 {
        let c = self.p.controller_ns as f64;
        let row_bytes = self.p.data_disks() as u64 * self.p.stripe_bytes;
        if !write {
            return c + self.member_dist(false, len).mean();
        }
        match self.p.raid {
            Raid::Raid0 => c + self.member_dist(true, len).mean(),
            Raid::Raid10 => match &self.p.member {
                // Mirrors do the same writes, so their heads seek alike; their rotational waits are
                // independent (drifting phases) and the slower of two uniform waits averages 2/3 rev.
                Member::Hdd(h) => {
                    c + self.member_dist(true, len).mean() + crate::models::hdd::Geometry::new(h).rev_ns / 6.0
                }
                Member::Ssd(_) => c + self.member_dist(true, len).mean_max(2),
            },
            Raid::Raid5 if len as u64 >= row_bytes => {
                c + self.member_dist(true, self.p.stripe_bytes as u32).mean_max(self.n as u32)
            }
            Raid::Raid5 => {
                let reads = self.member_dist(false, len);
                let phase2 = match &self.p.member {
                    Member::Ssd(_) => self.member_dist(true, len).mean_max(2),
                    Member::Hdd(h) => {
                        let g = crate::models::hdd::Geometry::new(h);
                        let fixed = h.overhead_ns as f64 + len as f64 * g.ns_per_byte;
                        let rev = g.rev_ns;
                        // Completion after the later read, for a disk whose read ended `gap` earlier.
                        let w = |gap: f64| fixed + (-(fixed + gap)).rem_euclid(rev);
                        let w0 = w(0.0);
                        reads.mean_of_gap(|gap| w0.max(w(gap)))
                    }
                };
                c + reads.mean_max(2) + phase2
            }
        }
    }
}
