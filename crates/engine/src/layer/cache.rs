//! The block cache in front of a worker's targets ([`iolab_cache::Cache`], shared by all workers).
//!
//! [`CacheEngine`] wraps any engine (a real one, a link, an emulated device). A read that hits is copied from
//! the cache into the op's buffer at push and completes in the next `submit_and_reap` without touching the
//! engine underneath (or, with an emulated cache device such as `--cache-dev sim:ssd`, when that device's
//! model says a read of it would finish). A write-back write is absorbed the same way. Every other op is
//! forwarded with a ticket, and its completion goes back through the cache (fills, updates, and overlaying
//! newer cached lines onto what the target returned) before the worker sees it. Dirty lines are written back
//! through the engine underneath from a few staging buffers of its own: while the run goes on when the cache
//! asks for it (above its dirty limit, evicted dirty lines, on demand), and all of them in [`Engine::finish`],
//! so a clean exit loses no acknowledged write.
//!
//! A real cache device (`--cache-dev PATH`, [`RealDevice`]) is one more file of the engine underneath, after
//! the worker's own targets (so it shares the worker's io_uring ring). The cache's data stays in RAM and
//! decides every answer; the device carries, for real, the I/O a flash cache would do, each a whole number
//! of lines at the line's place on the device ([`RealDevice::place`]):
//!
//! - a hit completes when a read of its lines from the device completes (into a buffer of the engine's own,
//!   never the op's); an absorbed write-back write completes when a write of its lines completes;
//! - a fill after a miss and a write-through (or write-around) update write their lines to the device off the
//!   op's path, from [`FILL_STAGING`] buffers; with none free the write is dropped and counted;
//! - a write-back first reads its line from the device, then writes it to the target.
//!
//! What the device receives is filler from the engine's buffers, not the lines' bytes (the RAM copy is what
//! reads are served from), so it is not a cache image anyone could recover; see docs/CACHE.md.

use crate::tags::Tags;
use crate::{Completion, Engine, EngineError, Op, OpKind, WriteSync};
use iolab_cache::{Cache, DeviceIo, ForwardTicket, ReadOutcome, SeqDetector, WriteBack, WriteOutcome};
use iolab_sim::{Done, ReqKind, Request, SharedDevice};
use std::sync::Arc;

/// Staging buffers per worker for write-backs: at most this many write-backs in flight per worker.
pub const WRITE_BACK_STAGING: u32 = 8;

/// Buffers per worker for fill and update writes to a real cache device: at most this many in flight per
/// worker; a fill finding none free is not written to the device (counted in `device_writes_dropped`).
pub const FILL_STAGING: u32 = 8;

/// A real cache device (`--cache-dev PATH`) in a worker's engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RealDevice {
    /// Its target number in the worker's engine: the number of the worker's own targets (it comes after them).
    pub target: u16,
    /// Bytes of it in use: a whole number of lines, at most its size.
    pub size_bytes: u64,
    /// The first of its engine buffers ([`WorkerCache::extra_buffers`]): `qd` for hits and absorbed writes,
    /// then [`FILL_STAGING`] for fills, then one sink that write-backs read their line into.
    pub first_buf: u32,
}

impl RealDevice {
    /// Where a line lives on the device: its line number, shifted per target by a large odd stride, modulo
    /// the device's lines. Stable for the run (the same line always goes to the same place); two lines may
    /// share a place, as they do when the cache is smaller than the data set.
    pub fn place(&self, line_bytes: u64, target: u16, line: u64) -> u64 {
        let lines = (self.size_bytes / line_bytes).max(1);
        let stride = (target as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) % lines;
        ((line % lines + stride) % lines) * line_bytes
    }

    /// The device I/O that carries an op on `target` at `offset`, `len` bytes: the whole lines it touches, at
    /// the first line's place, capped at `max_bytes` (the buffer) and at the device's end.
    pub fn extent(&self, line_bytes: u64, target: u16, offset: u64, len: u32, max_bytes: u64) -> (u64, u32) {
        let first = offset / line_bytes;
        let last = (offset + (len as u64).max(1) - 1) / line_bytes;
        let lines = (self.size_bytes / line_bytes).max(1);
        let n = (last - first + 1).min((max_bytes / line_bytes).max(1)).min(lines);
        let at = self.place(line_bytes, target, first).min((lines - n) * line_bytes);
        (at, (n * line_bytes) as u32)
    }
}

/// What a worker needs to put the run's cache in front of its targets.
#[derive(Clone)]
pub struct WorkerCache {
    /// The run's cache.
    pub cache: Arc<Cache>,
    /// The cache's id of each of the worker's targets (its index among the run's targets).
    pub ids: Vec<u16>,
    /// An emulated cache device that times hits, with this worker's client number on it.
    pub dev: Option<(Arc<SharedDevice>, usize)>,
    /// Size of the cache device (hits are timed at the op's offset modulo it).
    pub dev_size: u64,
    /// Sequential cutoff in bytes (0 = never bypass).
    pub seq_cutoff: u64,
    /// The first of [`WRITE_BACK_STAGING`] engine buffers reserved for write-backs.
    pub first_staging_buf: u32,
    /// A real cache device (`--cache-dev PATH`): one more file of the engine underneath.
    pub real_dev: Option<RealDevice>,
}

impl WorkerCache {
    /// Engine buffers the cache needs beyond the worker's `2 * qd`: write-back staging, and with a real
    /// device `qd` device buffers, [`FILL_STAGING`] fill buffers and one sink.
    pub fn extra_buffers(&self, qd: u32) -> u32 {
        WRITE_BACK_STAGING + if self.real_dev.is_some() { qd + FILL_STAGING + 1 } else { 0 }
    }

    /// Ops the engine underneath must hold beyond the worker's `qd`: write-backs, and fills to a real device.
    pub fn extra_slots(&self) -> u32 {
        WRITE_BACK_STAGING + if self.real_dev.is_some() { FILL_STAGING } else { 0 }
    }
}

/// What the cache has in flight under one tag.
#[derive(Clone, Copy)]
enum Pending {
    /// A forwarded op; `ticket` None when the op's target is not cached.
    Op { op: Op, ticket: Option<ForwardTicket> },
    /// A write-back from staging buffer `buf`.
    WriteBack { write_back: WriteBack, buf: u32 },
    /// A hit being timed by the cache device.
    DevHit { op: Op },
    /// A hit (read) or an absorbed write carried by the real cache device, with device buffer `buf`.
    DevIo { op: Op, buf: u32 },
    /// A fill or update written to the real cache device from fill buffer `buf`.
    DevFill { buf: u32 },
    /// A write-back reading its line from the real cache device before writing staging buffer `buf`.
    WriteBackRead { write_back: WriteBack, buf: u32 },
}

/// An engine with the block cache in front.
pub struct CacheEngine<E: Engine> {
    inner: E,
    wc: WorkerCache,
    seq: SeqDetector,
    pending: Tags<Pending>,
    staging: Vec<u32>,
    ready: Vec<Completion>,
    reaped: Vec<Completion>,
    dev_done: Vec<Done>,
    /// Ops and write-backs in the inner engine (pushed, not yet completed).
    in_inner: usize,
    /// Hits waiting for the cache device.
    in_dev: usize,
    /// Free device buffers for hits and absorbed writes (real device).
    dev_bufs: Vec<u32>,
    /// Free fill buffers (real device).
    fill_bufs: Vec<u32>,
    /// The worker's slots: device buffers for hits come first, then fill buffers, then the sink that
    /// write-backs read their line into (shared by them all, never read by us).
    dev_slots: u32,
    line_bytes: u64,
    /// Flushes (fsync) of the worker waiting for their target's dirty lines to be written back: a flush is
    /// forwarded to the target only when none is left, so it never says durable what is only in RAM.
    held_flushes: Vec<Op>,
    /// `--inject early-flush-ack`: some flushes are forwarded at once, dirty lines or not (the bug on purpose).
    early_flush_ack: Option<super::fault::EarlyFlushAck>,
}

impl<E: Engine> CacheEngine<E> {
    /// Wraps `inner`, which has room for `slots` ops of the worker plus [`WorkerCache::extra_slots`].
    pub fn new(inner: E, wc: WorkerCache, slots: u32) -> CacheEngine<E> {
        let n = (slots + wc.extra_slots()) as usize;
        let seq = SeqDetector::new(wc.ids.len(), wc.seq_cutoff);
        let staging = (wc.first_staging_buf..wc.first_staging_buf + WRITE_BACK_STAGING).rev().collect();
        let (dev_bufs, fill_bufs) = match &wc.real_dev {
            Some(rd) => {
                let f = rd.first_buf;
                ((f..f + slots).rev().collect(), (f + slots..f + slots + FILL_STAGING).rev().collect())
            }
            None => (Vec::new(), Vec::new()),
        };
        let line_bytes = wc.cache.config().line_bytes as u64;
        let held_flushes = Vec::with_capacity(slots as usize);
        CacheEngine {
            held_flushes,
            early_flush_ack: None,
            inner,
            wc,
            seq,
            pending: Tags::new(n as u32),
            staging,
            ready: Vec::with_capacity(n),
            reaped: Vec::with_capacity(n),
            dev_done: Vec::with_capacity(n),
            in_inner: 0,
            in_dev: 0,
            dev_bufs,
            fill_bufs,
            dev_slots: slots,
            line_bytes,
        }
    }

    /// With `--inject early-flush-ack`: the flushes it picks among those that would wait for write-backs are
    /// acknowledged without them (a write-back cache's data-loss bug, on purpose, for tests of verification).
    pub fn with_early_flush_ack(mut self, early: Option<super::fault::EarlyFlushAck>) -> CacheEngine<E> {
        self.early_flush_ack = early;
        self
    }

    /// Pushes one I/O to the real cache device, covering the lines of (`id`, `offset`, `len`).
    fn push_dev(&mut self, tag: u32, write: bool, id: u16, offset: u64, len: u32, buf: u32) {
        let rd = self.wc.real_dev.expect("a real cache device");
        let max = self.inner.buffer_mut(buf).len() as u64;
        let (at, dlen) = rd.extent(self.line_bytes, id, offset, len, max);
        let kind = if write { OpKind::Write } else { OpKind::Read };
        let op = Op {
            user_data: tag as u64,
            kind,
            sync: WriteSync::None,
            target: rd.target,
            offset: at,
            len: dlen,
            buf,
        };
        // SAFETY: `buf` is one of this engine's own device buffers (a hit's, a fill's or the write-back sink),
        // taken from its free list and given back only when this op completes.
        unsafe { self.inner.push(op) };
        self.in_inner += 1;
        self.wc.cache.note_device_io(if write { DeviceIo::Write } else { DeviceIo::Read });
    }

    /// After a forwarded op stored `stored` lines: write them to the real device, off the op's path.
    fn fill_dev(&mut self, op: &Op, stored: u32) {
        if self.wc.real_dev.is_none() || stored == 0 {
            return;
        }
        let Some(buf) = self.fill_bufs.pop() else {
            self.wc.cache.note_device_io(DeviceIo::WriteDropped);
            return;
        };
        let id = self.wc.ids[op.target as usize];
        let tag = self.take_tag(Pending::DevFill { buf });
        self.push_dev(tag, true, id, op.offset, op.len, buf);
    }

    fn take_tag(&mut self, p: Pending) -> u32 {
        self.pending.insert(p)
    }

    fn forward(&mut self, op: Op, ticket: Option<ForwardTicket>) {
        let tag = self.take_tag(Pending::Op { op, ticket });
        // SAFETY: the worker's op, forwarded from `push`: its caller's promise for `op.buf` holds until the
        // completion, which goes back through this engine.
        unsafe { self.inner.push(Op { user_data: tag as u64, ..op }) };
        self.in_inner += 1;
    }

    /// A hit or an absorbed write, its copy begun at `start` (0 when the clock was not read: a device serves
    /// it): complete now, or when the cache device would have served it.
    fn served(&mut self, op: Op, start: u64) {
        if self.wc.real_dev.is_some() {
            let buf = self.dev_bufs.pop().expect("more ops in flight than device buffers (bug)");
            let tag = self.take_tag(Pending::DevIo { op, buf });
            let id = self.wc.ids[op.target as usize];
            return self.push_dev(tag, op.kind == OpKind::Write, id, op.offset, op.len, buf);
        }
        match self.wc.dev.clone() {
            // A hit in RAM is done when its copy is: the caller counts it from then, however long it takes to
            // come back for it (iolab's own delay is not the cache's latency).
            None => {
                let done_ns = self.inner.now_ns();
                self.ready.push(Completion {
                    user_data: op.user_data,
                    result: op.len as i32,
                    cached: true,
                    done_ns,
                    start_ns: start,
                })
            }
            Some((dev, client)) => {
                let now = self.inner.now_ns();
                let tag = self.take_tag(Pending::DevHit { op });
                let offset = (op.offset % self.wc.dev_size.max(1)) & !511;
                let kind = if op.kind == OpKind::Write { ReqKind::Write } else { ReqKind::Read };
                let req = Request { tag: tag as u64, kind, durable: false, offset, len: op.len };
                dev.submit(client, now, req);
                self.in_dev += 1;
            }
        }
    }

    /// Hits are served by a copy from RAM, timed by nothing else (no cache device, real or emulated).
    #[inline]
    fn in_ram(&self) -> bool {
        self.wc.dev.is_none() && self.wc.real_dev.is_none()
    }

    /// For each held flush: writes back the dirty lines of its target while staging buffers are free, and
    /// forwards the flush once the target has none left (written back and acknowledged by the target).
    #[inline(never)]
    fn advance_held_flushes(&mut self) {
        let mut i = 0;
        while i < self.held_flushes.len() {
            let op = self.held_flushes[i];
            let id = self.wc.ids[op.target as usize];
            if self.wc.cache.dirty_lines_of(id) == 0 {
                self.held_flushes.swap_remove(i);
                self.forward(op, None);
                continue;
            }
            while let Some(&buf) = self.staging.last() {
                let Some(wb) = self.wc.cache.next_write_back_of(id, self.inner.buffer_mut(buf)) else {
                    break;
                };
                self.staging.pop();
                self.push_write_back(wb, buf);
            }
            i += 1;
        }
    }

    /// Pushes write-backs while staging buffers are free; `all` at the end of the run. Returns true when the
    /// cache had nothing more to hand out.
    fn issue_write_backs(&mut self, all: bool) -> bool {
        while let Some(&buf) = self.staging.last() {
            let ids = &self.wc.ids;
            let mine = |t: u16| ids.contains(&t);
            let Some(write_back) = self.wc.cache.next_write_back_for(all, self.inner.buffer_mut(buf), &mine)
            else {
                return true;
            };
            self.staging.pop();
            self.push_write_back(write_back, buf);
        }
        false
    }

    /// Pushes `write_back`, its line held in staging buffer `buf`: to its target, or, with a real cache
    /// device, first a read of the line from that device.
    fn push_write_back(&mut self, write_back: WriteBack, buf: u32) {
        if let Some(rd) = self.wc.real_dev {
            // A flash cache reads the line from its device before writing it to the target.
            let tag = self.take_tag(Pending::WriteBackRead { write_back, buf });
            let sink = rd.first_buf + self.dev_slots + FILL_STAGING;
            self.push_dev(tag, false, write_back.target, write_back.offset, write_back.len, sink);
            return;
        }
        let tag = self.take_tag(Pending::WriteBack { write_back, buf });
        self.push_write_back_write(tag, write_back, buf);
    }

    /// Pushes the write of `write_back` from staging buffer `buf` to its target.
    fn push_write_back_write(&mut self, tag: u32, write_back: WriteBack, buf: u32) {
        let target = self
            .wc
            .ids
            .iter()
            .position(|&id| id == write_back.target)
            .expect("a write-back for a target of this worker") as u16;
        let op = Op {
            user_data: tag as u64,
            kind: OpKind::Write,
            sync: WriteSync::None,
            target,
            offset: write_back.offset,
            len: write_back.len,
            buf,
        };
        // SAFETY: `buf` is a staging buffer of this engine, off its free list until this write-back completes.
        unsafe { self.inner.push(op) };
        self.in_inner += 1;
    }

    fn take_reaped(&mut self, out: &mut Vec<Completion>) {
        let mut reaped = std::mem::take(&mut self.reaped);
        for c in reaped.drain(..) {
            self.in_inner -= 1;
            let tag = c.user_data as u32;
            // The tag stays taken until its entry is handled (a fill below takes a tag of its own).
            match *self.pending.get(tag) {
                Pending::Op { op, ticket } => {
                    if let Some(t) = ticket {
                        let ok = c.result == op.len as i32;
                        let buf = &mut self.inner.buffer_mut(op.buf)[..op.len as usize];
                        let stored = self.wc.cache.finish(t, buf, ok);
                        self.fill_dev(&op, stored);
                    }
                    out.push(Completion {
                        user_data: op.user_data,
                        result: c.result,
                        cached: false,
                        done_ns: 0,
                        start_ns: 0,
                    });
                }
                Pending::WriteBack { write_back, buf } => {
                    self.wc.cache.finish_write_back(write_back, c.result == write_back.len as i32);
                    self.staging.push(buf);
                }
                Pending::DevIo { op, buf } => {
                    // The data came from (or went into) the cache's RAM; the device's own error is the op's.
                    let result = if c.result < 0 { c.result } else { op.len as i32 };
                    out.push(Completion {
                        user_data: op.user_data,
                        result,
                        cached: true,
                        done_ns: 0,
                        start_ns: 0,
                    });
                    self.dev_bufs.push(buf);
                }
                Pending::DevFill { buf } => self.fill_bufs.push(buf),
                Pending::WriteBackRead { write_back, buf } => {
                    // The line's data is the RAM copy in the staging buffer; the read was the device's cost.
                    *self.pending.get_mut(tag) = Pending::WriteBack { write_back, buf };
                    self.push_write_back_write(tag, write_back, buf);
                    continue;
                }
                Pending::DevHit { .. } => panic!("completion for tag {tag} not in the engine (bug)"),
            }
            self.pending.remove(tag);
        }
        self.reaped = reaped;
    }

    /// Hits the cache device has finished by `now`; returns its next event.
    fn poll_dev(&mut self, now: u64) -> Option<u64> {
        let (dev, client) = self.wc.dev.as_ref()?;
        if self.in_dev == 0 {
            return None;
        }
        let next = dev.poll(*client, now, &mut self.dev_done);
        for d in self.dev_done.drain(..) {
            let tag = d.tag as u32;
            let Pending::DevHit { op } = self.pending.remove(tag) else {
                panic!("cache device completion for tag {tag} that is not a hit (bug)");
            };
            self.ready.push(Completion {
                user_data: op.user_data,
                result: op.len as i32,
                cached: true,
                done_ns: 0,
                start_ns: 0,
            });
            self.in_dev -= 1;
        }
        next
    }
}

/// The cache's turn of the shared wait loop ([`super::held_submit_and_reap`]): write-backs are handed out at
/// the start of each turn; what it holds back are hits timed by an emulated cache device (and hits completed
/// at push, which wait in `ready` for the next call).
impl<E: Engine> super::HoldingEngine for CacheEngine<E> {
    fn before_turn(&mut self) {
        self.issue_write_backs(false);
        if !self.held_flushes.is_empty() {
            self.advance_held_flushes();
        }
    }
    fn clock(&self) -> u64 {
        self.inner.now_ns()
    }
    fn release(&mut self, now: u64, out: &mut Vec<Completion>) -> Option<u64> {
        let next = self.poll_dev(now);
        out.append(&mut self.ready);
        next
    }
    fn in_inner(&self) -> usize {
        self.in_inner
    }
    fn reap_inner(&mut self, wait: Option<u64>, out: &mut Vec<Completion>) -> Result<u64, EngineError> {
        self.inner.submit_and_reap(wait, &mut self.reaped)?;
        self.take_reaped(out);
        Ok(self.inner.now_ns())
    }
}

impl<E: Engine> Engine for CacheEngine<E> {
    super::delegate_to_inner!();
    fn features(&self) -> Vec<String> {
        let mut f = self.inner.features();
        f.push("block_cache".into());
        f
    }
    unsafe fn push(&mut self, op: Op) {
        let Some(&id) = self.wc.ids.get(op.target as usize) else {
            return self.forward(op, None);
        };
        match op.kind {
            // Held until the target has no dirty line left (at once, without a write-back cache), unless an
            // injected early acknowledgment forwards it with dirty lines still in RAM.
            OpKind::Flush => {
                let eligible = self.wc.cache.dirty_lines_of(id) > 0;
                if let Some(e) = self.early_flush_ack.as_mut().filter(|_| eligible) {
                    if e.fires() {
                        return self.forward(op, None);
                    }
                }
                return self.held_flushes.push(op);
            }
            OpKind::Trim => {
                self.wc.cache.discard(id, op.offset, op.len);
                return self.forward(op, None);
            }
            OpKind::Read | OpKind::Write => {}
        }
        // A synchronous write is not durable in a RAM cache: it goes to the target (the cached lines take its
        // data), as the sequential cut-off's writes do.
        let bypass = self.seq.observe(op.target, op.offset, op.len) || op.sync.is_durable();
        let len = op.len as usize;
        // A hit in RAM is served by the copy below: its service time runs from here.
        let start = if self.in_ram() { self.inner.now_ns() } else { 0 };
        if op.kind == OpKind::Write {
            let data = &self.inner.buffer_mut(op.buf)[..len];
            match self.wc.cache.write(id, op.offset, data, bypass) {
                WriteOutcome::Absorbed => self.served(op, start),
                WriteOutcome::Forward(t) => self.forward(op, Some(t)),
            }
        } else {
            let buf = &mut self.inner.buffer_mut(op.buf)[..len];
            match self.wc.cache.read(id, op.offset, buf, bypass) {
                ReadOutcome::Hit => self.served(op, start),
                ReadOutcome::Forward(t) => self.forward(op, Some(t)),
            }
        }
    }
    /// A read all of whose lines are cached, or a plain write a write-back cache would take, served from RAM
    /// (no cache device): it completes at its push ([`Engine::serves_at_push`]).
    fn serves_at_push(&self, op: &Op) -> bool {
        let Some(&id) = self.wc.ids.get(op.target as usize) else { return false };
        let write = match op.kind {
            OpKind::Read => false,
            OpKind::Write if !op.sync.is_durable() => true,
            _ => return false,
        };
        self.in_ram() && self.wc.cache.would_serve(id, op.offset, op.len, write)
    }
    super::reap_by_holding!();
    /// Hands over what was pushed underneath (misses, write-throughs, write-backs, real cache device I/O):
    /// the target's I/O goes out early as it would without the cache, while hits never reach the engine
    /// underneath. On virtual time the engine underneath is emulated and its `submit` does nothing, so
    /// fixed-seed results are the same either way.
    fn submit(&mut self) -> Result<(), EngineError> {
        self.inner.submit()
    }
    fn finish(&mut self) -> Result<(), EngineError> {
        let mut spare = Vec::new();
        loop {
            let exhausted = self.issue_write_backs(true);
            if exhausted && self.in_inner == 0 {
                break;
            }
            let now = self.inner.now_ns();
            self.inner.submit_and_reap(Some(now + 200_000_000), &mut self.reaped)?;
            self.take_reaped(&mut spare);
            spare.clear();
        }
        self.inner.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::mem::MemEngine;
    use crate::buffers::Buffers;
    use crate::RealClock;
    use iolab_cache::{CacheConfig, CacheMode, CachePolicy};
    use iolab_device::MemStore;
    use iolab_spec::DataPattern;

    /// `mem:` that records every op pushed to it: what reached the engine under the cache.
    struct Counting {
        inner: MemEngine,
        pushed: Vec<Op>,
    }

    impl Engine for Counting {
        crate::layer::delegate_to_inner!();
        fn features(&self) -> Vec<String> {
            self.inner.features()
        }
        unsafe fn push(&mut self, op: Op) {
            self.pushed.push(op);
            // SAFETY: the caller's promise for `op` passes on unchanged.
            unsafe { self.inner.push(op) }
        }
        fn submit_and_reap(&mut self, d: Option<u64>, out: &mut Vec<Completion>) -> Result<(), EngineError> {
            self.inner.submit_and_reap(d, out)
        }
        fn submit(&mut self) -> Result<(), EngineError> {
            self.inner.submit()
        }
        fn finish(&mut self) -> Result<(), EngineError> {
            self.inner.finish()
        }
    }

    const QD: u32 = 2;

    /// A cache of `mode` over a 1 MiB `mem:` target, 4 KiB lines, room for `QD` ops of the worker.
    fn cached(mode: CacheMode) -> (CacheEngine<Counting>, Arc<MemStore>) {
        let config = CacheConfig {
            capacity_bytes: 256 << 10,
            line_bytes: 4096,
            mode,
            policy: CachePolicy::default(),
            admit_after: 1,
            dirty_max_pct: 100.0,
            targets: 1,
            keep_data: true,
        };
        let wc = WorkerCache {
            cache: Arc::new(Cache::new(config).expect("cache")),
            ids: vec![0],
            dev: None,
            dev_size: 0,
            seq_cutoff: 0,
            first_staging_buf: 2 * QD,
            real_dev: None,
        };
        let store = Arc::new(MemStore::new(1 << 20).expect("store"));
        let b = Buffers::new(2 * QD + WRITE_BACK_STAGING, 4096, DataPattern::Zero, 1);
        let clock = RealClock::new(std::time::Instant::now());
        let inner = Counting {
            inner: MemEngine::new(Some(store.clone()), b, QD + wc.extra_slots(), clock),
            pushed: Vec::new(),
        };
        (CacheEngine::new(inner, wc, QD), store)
    }

    /// Pushes `op` and returns its completion.
    fn one(e: &mut CacheEngine<Counting>, op: Op) -> Completion {
        // SAFETY: the test touches the op's buffer only after its completion.
        unsafe { e.push(op) };
        let mut out = Vec::new();
        while out.is_empty() {
            e.submit_and_reap(None, &mut out).expect("submit_and_reap");
        }
        assert_eq!(out.len(), 1);
        out[0]
    }

    fn read(offset: u64) -> Op {
        Op { user_data: 11, kind: OpKind::Read, sync: WriteSync::None, target: 0, offset, len: 4096, buf: 0 }
    }

    /// Issue 25, item 2: a hit in RAM is done when its copy is. However late the worker comes back for it (here
    /// 5 ms, as if the worker had waited on a slow device), the completion carries the time of its copy.
    #[test]
    fn a_ram_hit_is_timed_at_its_copy_not_when_it_is_reaped() {
        let (mut e, store) = cached(CacheMode::WriteThrough);
        store.write(8192, &[0x5A; 4096]);
        one(&mut e, read(8192));
        let before = e.now_ns();
        // SAFETY: the test touches the op's buffer only after its completion.
        unsafe { e.push(read(8192)) };
        let copied = e.now_ns();
        std::thread::sleep(std::time::Duration::from_millis(5));
        let mut out = Vec::new();
        e.submit_and_reap(None, &mut out).expect("submit_and_reap");
        let reaped = e.now_ns();
        let c = out[0];
        assert!(c.cached, "a hit");
        assert!(c.done_ns >= before && c.done_ns <= copied, "timed at the copy: {c:?}");
        assert!(reaped - c.done_ns >= 5_000_000, "not at the reap");
    }

    #[test]
    fn cache_read_hit_completes_without_the_engine_underneath() {
        let (mut e, store) = cached(CacheMode::WriteThrough);
        store.write(4096, &[0x3C; 4096]);
        let c = one(&mut e, read(4096));
        assert_eq!((c.user_data, c.result, c.cached), (11, 4096, false), "the first read misses");
        assert_eq!(e.inner.pushed.len(), 1);
        e.buffer_mut(0).fill(0);
        let c = one(&mut e, read(4096));
        assert_eq!((c.user_data, c.result, c.cached), (11, 4096, true), "the second read hits");
        assert_eq!(e.inner.pushed.len(), 1, "a hit never reaches the engine underneath");
        assert!(e.buffer_mut(0).iter().all(|&b| b == 0x3C), "a hit returns the line's data");
    }

    #[test]
    fn cache_write_back_write_is_absorbed_until_finish() {
        let (mut e, store) = cached(CacheMode::WriteBack);
        e.buffer_mut(1).fill(0xAB);
        let c = one(
            &mut e,
            Op {
                user_data: 5,
                kind: OpKind::Write,
                sync: WriteSync::None,
                target: 0,
                offset: 8192,
                len: 4096,
                buf: 1,
            },
        );
        assert_eq!((c.user_data, c.result, c.cached), (5, 4096, true));
        assert!(e.inner.pushed.is_empty(), "an absorbed write does not reach the target");
        let mut on_target = [0u8; 4096];
        store.read(8192, &mut on_target);
        assert!(on_target.iter().all(|&b| b == 0));
        e.finish().expect("finish");
        store.read(8192, &mut on_target);
        assert!(on_target.iter().all(|&b| b == 0xAB), "finish writes the dirty line back");
        let write_back = e.inner.pushed.first().copied().expect("a write-back");
        assert!(
            write_back.kind == OpKind::Write && write_back.buf >= 2 * QD,
            "from a staging buffer: {write_back:?}"
        );
    }

    fn write_at(offset: u64, sync: WriteSync) -> Op {
        Op { user_data: 5, kind: OpKind::Write, sync, target: 0, offset, len: 4096, buf: 1 }
    }

    fn flush() -> Op {
        Op { user_data: 9, kind: OpKind::Flush, sync: WriteSync::Dsync, target: 0, offset: 0, len: 0, buf: 0 }
    }

    /// Issue 27, item 6: a write-back cache that acknowledged a flush while the data was only in RAM would
    /// lose what the application was told is durable. The flush completes only after the dirty lines of its
    /// target were written back (and the target acknowledged them), then the flush itself reached the target.
    #[test]
    fn a_write_back_cache_acknowledges_a_flush_only_after_the_data_reached_the_target() {
        let (mut e, store) = cached(CacheMode::WriteBack);
        e.buffer_mut(1).fill(0xCD);
        for offset in [0, 8192, 65536] {
            let c = one(&mut e, write_at(offset, WriteSync::None));
            assert!(c.cached, "absorbed");
        }
        assert!(e.inner.pushed.is_empty());
        let c = one(&mut e, flush());
        assert_eq!((c.user_data, c.result), (9, 0));
        for offset in [0, 8192, 65536] {
            let mut on_target = [0u8; 4096];
            store.read(offset, &mut on_target);
            assert!(
                on_target.iter().all(|&b| b == 0xCD),
                "line at {offset} reached the target before the flush"
            );
        }
        let kinds: Vec<OpKind> = e.inner.pushed.iter().map(|o| o.kind).collect();
        assert_eq!(
            kinds,
            [OpKind::Write, OpKind::Write, OpKind::Write, OpKind::Flush],
            "write-backs, then the flush"
        );
        assert_eq!(e.wc.cache.dirty_lines(), 0);
    }

    /// `--inject early-flush-ack` puts in, on purpose, the bug the test above catches: the flush reaches the
    /// target at once while the written line is only in RAM. A flush of a target with no dirty line is not
    /// eligible (it is right either way) and not counted.
    #[test]
    fn an_injected_early_flush_ack_forwards_the_flush_with_dirty_lines_in_ram() {
        use crate::fault::{Faults, WorkerFaults};
        let spec = iolab_spec::InjectSpec::parse("early-flush-ack@1").expect("spec");
        let faults = Arc::new(Faults::new(vec![spec], 1, 4096));
        let wf = WorkerFaults {
            faults: faults.clone(),
            ids: vec![0],
            regions: vec![(0, 1 << 20)],
            worker: 0,
            units: vec![512],
            verifier: None,
        };
        assert!(!wf.hits_target_io(), "no FaultEngine for it");
        let (e, store) = cached(CacheMode::WriteBack);
        let mut e = e.with_early_flush_ack(wf.early_flush_ack());
        e.buffer_mut(1).fill(0xCD);
        assert!(one(&mut e, write_at(8192, WriteSync::None)).cached);
        let c = one(&mut e, flush());
        assert_eq!((c.user_data, c.result), (9, 0), "acknowledged");
        let kinds: Vec<OpKind> = e.inner.pushed.iter().map(|o| o.kind).collect();
        assert_eq!(kinds, [OpKind::Flush], "no write-back before it");
        let mut on_target = [0u8; 4096];
        store.read(8192, &mut on_target);
        assert!(on_target.iter().all(|&b| b == 0), "the data is still only in RAM");
        assert_eq!(e.wc.cache.dirty_lines(), 1);
        e.finish().expect("finish");
        one(&mut e, flush());
        assert_eq!(faults.result(None).faults[0].injected, 1, "the flush with nothing dirty is not counted");
    }

    /// A synchronous write is durable when it completes: a write-back cache does not absorb it.
    #[test]
    fn a_write_back_cache_sends_a_synchronous_write_to_the_target() {
        let (mut e, store) = cached(CacheMode::WriteBack);
        e.buffer_mut(1).fill(0xEF);
        let c = one(&mut e, write_at(4096, WriteSync::Dsync));
        assert!(!c.cached);
        let pushed = e.inner.pushed.first().copied().expect("forwarded");
        assert_eq!((pushed.kind, pushed.sync), (OpKind::Write, WriteSync::Dsync));
        let mut on_target = [0u8; 4096];
        store.read(4096, &mut on_target);
        assert!(on_target.iter().all(|&b| b == 0xEF));
    }

    /// Without a write-back cache a flush goes straight to the target.
    #[test]
    fn a_write_through_cache_forwards_a_flush_at_once() {
        let (mut e, _store) = cached(CacheMode::WriteThrough);
        one(&mut e, flush());
        let kinds: Vec<OpKind> = e.inner.pushed.iter().map(|o| o.kind).collect();
        assert_eq!(kinds, [OpKind::Flush]);
    }

    #[test]
    fn cache_write_through_reaches_the_target_and_updates_the_line() {
        let (mut e, store) = cached(CacheMode::WriteThrough);
        e.buffer_mut(1).fill(0x77);
        let c = one(
            &mut e,
            Op {
                user_data: 6,
                kind: OpKind::Write,
                sync: WriteSync::None,
                target: 0,
                offset: 0,
                len: 4096,
                buf: 1,
            },
        );
        assert_eq!((c.result, c.cached), (4096, false));
        let mut on_target = [0u8; 4096];
        store.read(0, &mut on_target);
        assert!(on_target.iter().all(|&b| b == 0x77));
        let c = one(&mut e, read(0));
        assert!(c.cached, "the written line is cached");
        assert!(e.buffer_mut(0).iter().all(|&b| b == 0x77));
    }

    #[test]
    fn real_device_extent_is_whole_lines_inside_the_device() {
        let rd = RealDevice { target: 1, size_bytes: 16 * 4096, first_buf: 0 };
        // 5000 bytes from 100 bytes into line 1 touch lines 1 and 2.
        assert_eq!(rd.extent(4096, 0, 4096 + 100, 5000, 65536), (4096, 8192));
        // Three lines from line 15 would run past the device's 16 lines: moved back to fit.
        assert_eq!(rd.extent(4096, 0, 15 * 4096, 3 * 4096, 65536), (13 * 4096, 3 * 4096));
        // Capped at the buffer.
        assert_eq!(rd.extent(4096, 0, 0, 8 * 4096, 4096).1, 4096);
        // Another target's lines are spread elsewhere, still on the device.
        let at = rd.place(4096, 3, 5);
        assert!(at < rd.size_bytes && at % 4096 == 0 && at != rd.place(4096, 0, 5));
    }
}
