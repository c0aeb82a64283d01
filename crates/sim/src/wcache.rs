//! The write cache in front of every emulated device ([`Cached`]), on the caller's clock like the media
//! model behind it.
//!
//! Three kinds ([`WriteCache`], chosen per preset and with `wcache=`):
//!
//! - **Volatile** (write-back into memory lost on power failure). A write is taken into the cache: its bytes
//!   cross the cache's interface at `mb_s`, one transfer after another, then it completes `write_ns` later.
//!   From its completion it is dirty and drains to the media in the background, oldest first, as ordinary
//!   media writes (up to `drain_depth` at once), timed by the media model itself. The cache holds at most
//!   `size_bytes` of dirty data (counted until the media has it) and one extent per [`LINE_BYTES`] of its
//!   size; a write that does not fit waits, first-in first-out, until draining makes room. A flush completes
//!   `flush_ns` after every write that completed before the flush was submitted is on the media. A durable
//!   (FUA) write goes straight to the media and completes when both its own data and every write completed
//!   before it are there. Reads go to the media.
//! - **PowerProtected** (capacitors, battery): writes are cached and drain as above, but the cache is stable:
//!   a durable write is an ordinary cached write, a flush costs `flush_ns` and waits for nothing.
//! - **WriteThrough**: reads and writes (durable or not) go to the media untouched; a flush costs `flush_ns`.
//!   This kind is its own, smaller model, [`WriteThrough`]: [`Cached::build`] returns it, and [`Cached`] is
//!   only ever a write-back cache.
//!
//! On every kind a trim costs `trim_ns` and drops the dirty data of its range that has not yet been sent to the
//! media (an extent it cuts in the middle is split); a write larger than the whole cache, or any write sent
//! to the media while cached data of its range is dirty, supersedes that dirty data the same way.
//!
//! Nothing allocates after [`Cached::build`]; nothing is random, so the pair is deterministic for the media's
//! seed. The bookkeeping is sized at build and asserted where it is used: the slot table holds at most
//! `max_in_flight` waiting flushes and durable writes and never grows, and the dirty byte and extent counts
//! never go below zero.

use crate::{Done, Model, ReqKind, Request};
pub use iolab_spec::sim::{WriteCache, WriteCacheParams};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// The cache holds at most one extent (a write's dirty range, or a piece of one) per this many bytes of its
/// size, between [`MIN_EXTENTS`] and [`MAX_EXTENTS`]: a real cache tracks fixed-size lines.
pub const LINE_BYTES: u64 = 4096;
/// The fewest extents a cache holds.
pub const MIN_EXTENTS: usize = 64;
/// The most extents a cache holds (2 MiB of bookkeeping).
pub const MAX_EXTENTS: usize = 65_536;

/// Tags of the media requests that drain the cache.
const DRAIN_BIT: u64 = 1 << 63;
/// Tags of the media requests of a slot (a durable write waiting for earlier writes). Any other media request
/// carries its host tag, which is below this bit.
const SLOT_BIT: u64 = 1 << 62;

/// Dirty data in the cache, not yet sent to the media.
#[derive(Clone, Copy, Debug)]
struct Extent {
    offset: u64,
    len: u32,
    /// Order of the write that made it (pieces of one write share it).
    seq: u64,
    /// When its write completed: from then it may drain, and a flush submitted then covers it.
    ready_ns: u64,
}

/// A flush or durable write waiting for earlier writes to reach the media. (A request that completes with its
/// media request alone needs no slot: its media request carries its host tag.)
#[derive(Clone, Copy, Debug, Default)]
struct Slot {
    tag: u64,
    /// Writes of seq below this must be stable before it completes.
    barrier: u64,
    /// Its own media request is outstanding.
    media: bool,
    /// Added to the time it became complete.
    extra_ns: u64,
}

/// A media model behind a write-back cache, volatile or power-loss protected (see the module docs).
pub struct Cached {
    p: WriteCacheParams,
    inner: Box<dyn Model>,
    ns_per_byte: f64,
    /// When the cache's interface is next free, ns (fractional, so small transfers do not drift).
    pipe_free: f64,
    /// Flushes and durable writes waiting: at most `max_in_flight`, never grown.
    slots: Vec<Slot>,
    free: Vec<u32>,
    /// Slots of flushes and durable writes still waiting.
    waiters: Vec<u32>,
    /// Host completions whose time is known: (at, sequence, tag).
    due: BinaryHeap<Reverse<(u64, u64, u64)>>,
    due_seq: u64,
    /// Dirty extents not yet sent to the media, in write order.
    dirty: VecDeque<Extent>,
    /// Per drain slot: (len, seq) of the extent on its way to the media.
    draining: Vec<Option<(u32, u64)>>,
    drain_free: Vec<u32>,
    /// Writes waiting for room: (tag, offset, len).
    waiting: VecDeque<(u64, u64, u32)>,
    /// Dirty bytes and extents, dirty or draining.
    held_bytes: u64,
    held_extents: usize,
    max_extents: usize,
    next_seq: u64,
    in_flight: usize,
    scratch: Vec<Done>,
    /// How full it got ([`Model::write_cache_fill`]), and when it took its first write.
    fill: crate::WriteCacheFill,
    first_write_ns: Option<u64>,
}

impl Cached {
    /// `p`'s cache in front of the media model that `media(room)` builds with room for `room` requests;
    /// room for `max_in_flight` host requests, draining up to `drain_depth` writes at once.
    pub fn build(
        p: &WriteCacheParams,
        drain_depth: usize,
        max_in_flight: usize,
        media: impl FnOnce(usize) -> Box<dyn Model>,
    ) -> Box<dyn Model> {
        if p.kind == WriteCache::WriteThrough {
            // No cache to keep: reads and writes go straight to the media (no step of the cache's own per
            // completion), flushes and trims cost their fixed figures.
            return Box::new(WriteThrough::new(p, max_in_flight, media(max_in_flight.max(1))));
        }
        Box::new(Cached::new(p, drain_depth, max_in_flight, media))
    }

    /// As [`Cached::build`], unboxed, for a write-back cache (`p.kind` volatile or power-loss protected).
    pub fn new(
        p: &WriteCacheParams,
        drain_depth: usize,
        max_in_flight: usize,
        media: impl FnOnce(usize) -> Box<dyn Model>,
    ) -> Cached {
        assert_ne!(
            p.kind,
            WriteCache::WriteThrough,
            "a write-through device is a WriteThrough (Cached::build)"
        );
        let cap = max_in_flight.max(1);
        let depth = drain_depth.max(1);
        let max_extents = ((p.size_bytes / LINE_BYTES) as usize).clamp(MIN_EXTENTS, MAX_EXTENTS);
        Cached {
            p: p.clone(),
            inner: media(cap + depth),
            ns_per_byte: 1e3 / p.mb_s.max(1e-9),
            pipe_free: 0.0,
            slots: vec![Slot::default(); cap],
            free: (0..cap as u32).rev().collect(),
            waiters: Vec::with_capacity(cap),
            due: BinaryHeap::with_capacity(cap),
            due_seq: 0,
            dirty: VecDeque::with_capacity(max_extents),
            draining: vec![None; depth],
            drain_free: (0..depth as u32).rev().collect(),
            waiting: VecDeque::with_capacity(cap),
            held_bytes: 0,
            held_extents: 0,
            max_extents,
            next_seq: 0,
            in_flight: 0,
            scratch: Vec::with_capacity(cap + depth),
            fill: crate::WriteCacheFill {
                size_bytes: p.size_bytes,
                volatile: p.kind == WriteCache::Volatile,
                ..Default::default()
            },
            first_write_ns: None,
        }
    }

    /// No flush or durable write waiting, nothing draining or held, no write waiting for room: the media's
    /// completions are all there is, and they need no step at any time between.
    fn idle(&self) -> bool {
        self.waiters.is_empty() && self.held_bytes == 0 && self.waiting.is_empty() && self.dirty.is_empty()
    }

    /// The cache's parameters.
    pub fn params(&self) -> &WriteCacheParams {
        &self.p
    }

    /// Bytes of dirty data in the cache (not yet on the media, draining included).
    pub fn dirty_bytes(&self) -> u64 {
        self.held_bytes
    }

    fn push_due(&mut self, at: u64, tag: u64) {
        self.due.push(Reverse((at, self.due_seq, tag)));
        self.due_seq += 1;
    }

    /// A slot for a waiting flush or durable write, among the `max_in_flight` made at build.
    fn take_slot(&mut self, s: Slot) -> u32 {
        let i = self.free.pop().expect(
            "write cache: a free slot (the table holds max_in_flight waiting requests and never grows: more in \
             flight breaks the Model contract)",
        );
        self.slots[i as usize] = s;
        self.waiters.push(i);
        i
    }

    /// Sends `req` (a read, or a write past the cache) to the media, where it completes with its host tag.
    fn send_to_media(&mut self, now: u64, req: Request) {
        if req.kind == ReqKind::Write {
            self.drop_range(req.offset, req.len);
        }
        self.inner.submit(now, Request { durable: false, ..req });
    }

    /// Sends the durable write `req` to the media; it completes once it is there and every write completed
    /// before `now` is stable too.
    fn durable_write(&mut self, now: u64, req: Request) {
        let barrier = self.barrier(now);
        self.drop_range(req.offset, req.len);
        let slot = self.take_slot(Slot { tag: req.tag, barrier, media: true, extra_ns: 0 });
        self.inner.submit(now, Request { tag: SLOT_BIT | slot as u64, durable: false, ..req });
    }

    /// Waits for writes completed by `now` to be stable, then completes `extra_ns` later.
    fn wait_stable(&mut self, now: u64, tag: u64, extra_ns: u64) {
        let barrier = self.barrier(now);
        self.take_slot(Slot { tag, barrier, media: false, extra_ns });
        self.finish_waiters(now);
    }

    /// Takes `bytes` and one extent off the dirty counts: an extent reached the media or was dropped whole.
    fn release(&mut self, bytes: u64) {
        self.release_bytes(bytes);
        self.held_extents =
            self.held_extents.checked_sub(1).expect("write cache: an extent released is held");
    }

    /// Takes `bytes` off the dirty count: part of an extent was dropped, or all of one (with [`Self::release`]).
    fn release_bytes(&mut self, bytes: u64) {
        self.held_bytes = self.held_bytes.checked_sub(bytes).expect("write cache: bytes released are held");
    }

    /// The seq below which every write has completed by `now` (the newest extents may not have).
    fn barrier(&self, now: u64) -> u64 {
        let mut b = self.next_seq;
        for e in self.dirty.iter().rev() {
            if e.ready_ns <= now {
                break;
            }
            b = e.seq;
        }
        b
    }

    /// The lowest seq not yet on the media (u64::MAX when everything is).
    fn unstable_from(&self) -> u64 {
        let d = self.dirty.front().map_or(u64::MAX, |e| e.seq);
        self.draining.iter().flatten().map(|&(_, seq)| seq).fold(d, u64::min)
    }

    /// Completes, at `t` plus their extra, the waiters whose media request is done and whose barrier is stable.
    fn finish_waiters(&mut self, t: u64) {
        if self.waiters.is_empty() {
            return;
        }
        let stable = self.unstable_from();
        let mut i = 0;
        while i < self.waiters.len() {
            let slot = self.waiters[i];
            let s = self.slots[slot as usize];
            if s.media || stable < s.barrier {
                i += 1;
                continue;
            }
            self.waiters.swap_remove(i);
            self.free.push(slot);
            self.push_due(t + s.extra_ns, s.tag);
        }
    }

    fn fits(&self, len: u32) -> bool {
        self.held_bytes + len as u64 <= self.p.size_bytes && self.held_extents < self.max_extents
    }

    /// A write into the cache at `now`, or into the queue for room.
    fn cache_write(&mut self, now: u64, tag: u64, offset: u64, len: u32) {
        if self.waiting.is_empty() && self.fits(len) {
            self.admit(now, tag, offset, len);
        } else {
            self.fill.waited_writes += 1;
            self.waiting.push_back((tag, offset, len));
        }
    }

    /// Takes a write that fits at `t`: transfer, then `write_ns`; dirty from its completion.
    fn admit(&mut self, t: u64, tag: u64, offset: u64, len: u32) {
        let start = self.pipe_free.max(t as f64);
        self.pipe_free = start + len as f64 * self.ns_per_byte;
        let ready_ns = self.pipe_free.round() as u64 + self.p.write_ns;
        self.held_bytes += len as u64;
        self.held_extents += 1;
        self.note_taken(t, len);
        self.dirty.push_back(Extent { offset, len, seq: self.next_seq, ready_ns });
        self.next_seq += 1;
        self.push_due(ready_ns, tag);
    }

    /// Counts a write of `len` bytes taken at `t` (already in the dirty count) in [`Self::fill`].
    fn note_taken(&mut self, t: u64, len: u32) {
        let first = *self.first_write_ns.get_or_insert(t);
        self.fill.taken_bytes += len as u64;
        if self.held_bytes > self.fill.peak_dirty_bytes {
            self.fill.peak_dirty_bytes = self.held_bytes;
            self.fill.growth_ns = t - first;
        }
    }

    /// Takes the waiting writes that now fit.
    fn admit_waiting(&mut self, t: u64) {
        while let Some(&(tag, offset, len)) = self.waiting.front() {
            if !self.fits(len) {
                break;
            }
            self.waiting.pop_front();
            self.admit(t, tag, offset, len);
        }
    }

    /// Drops the dirty data of `[offset, offset + len)` that is not on its way to the media yet.
    fn drop_range(&mut self, offset: u64, len: u32) {
        let (a, b) = (offset, offset + len as u64);
        let mut i = 0;
        while i < self.dirty.len() {
            let e = self.dirty[i];
            let end = e.offset + e.len as u64;
            if len == 0 || end <= a || e.offset >= b {
                i += 1;
                continue;
            }
            if a <= e.offset && end <= b {
                self.dirty.remove(i);
                self.release(e.len as u64);
                continue;
            }
            if a > e.offset && end > b {
                // Cut in the middle: keep both sides when there is room for another extent, else keep it whole.
                if self.held_extents < self.max_extents {
                    let upper = Extent { offset: b, len: (end - b) as u32, ..e };
                    self.dirty[i].len = (a - e.offset) as u32;
                    self.dirty.insert(i + 1, upper);
                    self.release_bytes(b - a);
                    self.held_extents += 1;
                    i += 1;
                }
            } else if a <= e.offset {
                self.dirty[i] = Extent { offset: b, len: (end - b) as u32, ..e };
                self.release_bytes(b - e.offset);
            } else {
                self.dirty[i].len = (a - e.offset) as u32;
                self.release_bytes(end - a);
            }
            i += 1;
        }
    }

    /// When the next dirty extent may start to drain (None: none, or no drain slot free).
    fn next_drain_ns(&self) -> Option<u64> {
        if self.drain_free.is_empty() {
            return None;
        }
        self.dirty.front().map(|e| e.ready_ns)
    }

    /// Sends the ready extents to the media at `t`, as many as there are free drain slots.
    fn start_drains(&mut self, t: u64) {
        while let (Some(&slot), Some(e)) = (self.drain_free.last(), self.dirty.front().copied()) {
            if e.ready_ns > t {
                break;
            }
            self.drain_free.pop();
            self.dirty.pop_front();
            self.draining[slot as usize] = Some((e.len, e.seq));
            self.inner.submit(t, Request::write(DRAIN_BIT | slot as u64, e.offset, e.len));
        }
    }

    /// A media request completed at `t`: a drain, a durable write's own request (it completes once its
    /// barrier is stable, [`Self::finish_waiters`]), or a request that completes with it.
    fn media_done(&mut self, tag: u64, t: u64) {
        if tag & DRAIN_BIT != 0 {
            let slot = (tag & !DRAIN_BIT) as u32;
            let (len, _) = self.draining[slot as usize].take().expect("write cache: a drain completes once");
            self.release(len as u64);
            self.drain_free.push(slot);
        } else if tag & SLOT_BIT != 0 {
            self.slots[(tag & !SLOT_BIT) as usize].media = false;
        } else {
            self.push_due(t, tag);
        }
    }

    /// Moves the media to `t` (an event time) and reacts to what happened there.
    fn step(&mut self, t: u64) {
        let mut buf = std::mem::take(&mut self.scratch);
        self.inner.advance(t, &mut buf);
        for d in buf.drain(..) {
            self.media_done(d.tag, d.at_ns);
        }
        self.scratch = buf;
        self.start_drains(t);
        self.admit_waiting(t);
        self.finish_waiters(t);
    }
}

impl Model for Cached {
    fn submit(&mut self, now_ns: u64, req: Request) {
        assert!(
            req.tag < SLOT_BIT,
            "write cache: host tags are below 2^62 (the cache's own use the top two bits)"
        );
        self.in_flight += 1;
        let kind = self.p.kind;
        match req.kind {
            ReqKind::Read => self.send_to_media(now_ns, req),
            ReqKind::Write if req.durable && kind == WriteCache::Volatile => self.durable_write(now_ns, req),
            ReqKind::Write if req.len as u64 > self.p.size_bytes => self.send_to_media(now_ns, req),
            ReqKind::Write => self.cache_write(now_ns, req.tag, req.offset, req.len),
            ReqKind::Flush if kind == WriteCache::Volatile => {
                self.wait_stable(now_ns, req.tag, self.p.flush_ns)
            }
            ReqKind::Flush => self.push_due(now_ns + self.p.flush_ns, req.tag),
            ReqKind::Trim => {
                self.drop_range(req.offset, req.len);
                self.push_due(now_ns + self.p.trim_ns, req.tag);
                self.admit_waiting(now_ns);
                self.finish_waiters(now_ns);
            }
        }
    }

    fn next_event_ns(&self) -> Option<u64> {
        [self.due.peek().map(|Reverse(d)| d.0), self.inner.next_event_ns(), self.next_drain_ns()]
            .into_iter()
            .flatten()
            .min()
    }

    fn advance(&mut self, now_ns: u64, done: &mut Vec<Done>) {
        if self.idle() {
            // Nothing of the cache's own waits on a time in between (no barrier, no drain, no dirty data): the
            // media moves to `now_ns` in one step, each completion keeping its own time.
            if self.inner.next_event_ns().is_some_and(|t| t <= now_ns) {
                self.step(now_ns);
            }
        }
        while let Some(t) = [self.inner.next_event_ns(), self.next_drain_ns()]
            .into_iter()
            .flatten()
            .min()
            .filter(|&t| t <= now_ns)
        {
            self.step(t);
        }
        while let Some(Reverse((t, _, tag))) = self.due.peek().copied() {
            if t > now_ns {
                break;
            }
            self.due.pop();
            self.in_flight =
                self.in_flight.checked_sub(1).expect("write cache: a request completing is in flight");
            done.push(Done { tag, at_ns: t });
        }
    }

    fn in_flight(&self) -> usize {
        self.in_flight
    }

    fn write_cache_fill(&self) -> Option<crate::WriteCacheFill> {
        Some(self.fill)
    }

    /// A write into an empty cache costs its transfer plus `write_ns`; everything else is the media's figure.
    fn expected_service_ns(&self, write: bool, len: u32) -> f64 {
        if write && len as u64 <= self.p.size_bytes {
            len as f64 * self.ns_per_byte + self.p.write_ns as f64
        } else {
            self.inner.expected_service_ns(write, len)
        }
    }
}

/// A write-through device ([`WriteCache::WriteThrough`]), the one model of that kind ([`Cached::build`] returns
/// it): every read and write is the media's own request, completed when the media completes it; a flush
/// completes `flush_ns` after it arrives (nothing volatile to write) and a trim `trim_ns` after.
pub struct WriteThrough {
    inner: Box<dyn Model>,
    flush_ns: u64,
    trim_ns: u64,
    /// Flushes and trims: (completion time, arrival order, tag).
    due: BinaryHeap<Reverse<(u64, u64, u64)>>,
    due_seq: u64,
}

impl WriteThrough {
    fn new(p: &WriteCacheParams, max_in_flight: usize, inner: Box<dyn Model>) -> WriteThrough {
        WriteThrough {
            inner,
            flush_ns: p.flush_ns,
            trim_ns: p.trim_ns,
            due: BinaryHeap::with_capacity(max_in_flight.max(1)),
            due_seq: 0,
        }
    }
}

impl Model for WriteThrough {
    fn submit(&mut self, now_ns: u64, req: Request) {
        let cost = match req.kind {
            ReqKind::Read | ReqKind::Write => {
                return self.inner.submit(now_ns, Request { durable: false, ..req })
            }
            ReqKind::Flush => self.flush_ns,
            ReqKind::Trim => self.trim_ns,
        };
        self.due.push(Reverse((now_ns + cost, self.due_seq, req.tag)));
        self.due_seq += 1;
    }

    fn next_event_ns(&self) -> Option<u64> {
        let due = self.due.peek().map(|Reverse(d)| d.0);
        match (self.inner.next_event_ns(), due) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn advance(&mut self, now_ns: u64, done: &mut Vec<Done>) {
        let first = done.len();
        self.inner.advance(now_ns, done);
        while let Some(Reverse((t, _, tag))) = self.due.peek().copied() {
            if t > now_ns {
                break;
            }
            self.due.pop();
            // Merged into the media's completions in time order, after those of the same time (what a stable
            // sort of the two runs gives), in place: a sort allocates its scratch past a few hundred.
            let at = first + done[first..].partition_point(|d| d.at_ns <= t);
            done.insert(at, Done { tag, at_ns: t });
        }
    }

    fn in_flight(&self) -> usize {
        self.inner.in_flight() + self.due.len()
    }

    fn expected_service_ns(&self, write: bool, len: u32) -> f64 {
        self.inner.expected_service_ns(write, len)
    }
}
