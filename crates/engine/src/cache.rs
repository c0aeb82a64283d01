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

use crate::{Completion, Engine, EngineError, Op};
use iolab_cache::{Cache, Flush, ReadOutcome, SeqDetector, Ticket, WriteOutcome};
use iolab_sim::{Done, Request, SharedDevice};
use std::sync::Arc;

/// Staging buffers per worker for write-backs: at most this many write-backs in flight per worker.
pub const FLUSH_STAGING: u32 = 8;

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
    /// The first of [`FLUSH_STAGING`] engine buffers reserved for write-backs.
    pub first_staging_buf: u32,
}

#[derive(Clone, Copy)]
enum Pending {
    Free,
    /// A forwarded op; `ticket` None when the op's target is not cached.
    Op {
        op: Op,
        ticket: Option<Ticket>,
    },
    /// A write-back from staging buffer `buf`.
    Flush {
        flush: Flush,
        buf: u32,
    },
    /// A hit being timed by the cache device.
    DevHit {
        op: Op,
    },
}

/// An engine with the block cache in front.
pub struct CacheEngine<E: Engine> {
    inner: E,
    wc: WorkerCache,
    seq: SeqDetector,
    pending: Vec<Pending>,
    free: Vec<u32>,
    staging: Vec<u32>,
    ready: Vec<Completion>,
    reaped: Vec<Completion>,
    dev_done: Vec<Done>,
    /// Ops and write-backs in the inner engine (pushed, not yet completed).
    in_inner: usize,
    /// Hits waiting for the cache device.
    in_dev: usize,
}

impl<E: Engine> CacheEngine<E> {
    /// Wraps `inner`, which has room for `slots` ops of the worker plus [`FLUSH_STAGING`] write-backs.
    pub fn new(inner: E, wc: WorkerCache, slots: u32) -> CacheEngine<E> {
        let n = (slots + FLUSH_STAGING) as usize;
        let seq = SeqDetector::new(wc.ids.len(), wc.seq_cutoff);
        let staging = (wc.first_staging_buf..wc.first_staging_buf + FLUSH_STAGING).rev().collect();
        CacheEngine {
            inner,
            wc,
            seq,
            pending: vec![Pending::Free; n],
            free: (0..n as u32).rev().collect(),
            staging,
            ready: Vec::with_capacity(n),
            reaped: Vec::with_capacity(n),
            dev_done: Vec::with_capacity(n),
            in_inner: 0,
            in_dev: 0,
        }
    }

    fn take_tag(&mut self, p: Pending) -> u32 {
        let tag = self.free.pop().expect("more ops in flight than slots (bug)");
        self.pending[tag as usize] = p;
        tag
    }

    fn forward(&mut self, op: Op, ticket: Option<Ticket>) {
        let tag = self.take_tag(Pending::Op { op, ticket });
        self.inner.push(Op { user_data: tag as u64, ..op });
        self.in_inner += 1;
    }

    /// A hit or an absorbed write: complete now, or when the cache device would have served it.
    fn served(&mut self, op: Op) {
        match self.wc.dev.clone() {
            None => {
                self.ready.push(Completion { user_data: op.user_data, result: op.len as i32, cached: true })
            }
            Some((dev, client)) => {
                let now = self.inner.now_ns();
                let tag = self.take_tag(Pending::DevHit { op });
                let offset = (op.offset % self.wc.dev_size.max(1)) & !511;
                dev.submit(client, now, Request { tag: tag as u64, write: op.write, offset, len: op.len });
                self.in_dev += 1;
            }
        }
    }

    /// Pushes write-backs while staging buffers are free; `all` at the end of the run. Returns true when the
    /// cache had nothing more to hand out.
    fn issue_flushes(&mut self, all: bool) -> bool {
        while let Some(&buf) = self.staging.last() {
            let ids = &self.wc.ids;
            let mine = |t: u16| ids.contains(&t);
            let Some(flush) = self.wc.cache.next_flush_for(all, self.inner.buffer_mut(buf), &mine) else {
                return true;
            };
            self.staging.pop();
            let tag = self.take_tag(Pending::Flush { flush, buf });
            let target = self
                .wc
                .ids
                .iter()
                .position(|&id| id == flush.target)
                .expect("a flush for a target of this worker") as u16;
            self.inner.push(Op {
                user_data: tag as u64,
                write: true,
                target,
                offset: flush.offset,
                len: flush.len,
                buf,
            });
            self.in_inner += 1;
        }
        false
    }

    fn take_reaped(&mut self, out: &mut Vec<Completion>) {
        let mut reaped = std::mem::take(&mut self.reaped);
        for c in reaped.drain(..) {
            self.in_inner -= 1;
            let tag = c.user_data as u32;
            match std::mem::replace(&mut self.pending[tag as usize], Pending::Free) {
                Pending::Op { op, ticket } => {
                    if let Some(t) = ticket {
                        let ok = c.result == op.len as i32;
                        let buf = &mut self.inner.buffer_mut(op.buf)[..op.len as usize];
                        self.wc.cache.finish(t, buf, ok);
                    }
                    out.push(Completion { user_data: op.user_data, result: c.result, cached: false });
                }
                Pending::Flush { flush, buf } => {
                    self.wc.cache.finish_flush(flush, c.result == flush.len as i32);
                    self.staging.push(buf);
                }
                Pending::DevHit { .. } | Pending::Free => {
                    panic!("completion for tag {tag} not in the engine (bug)")
                }
            }
            self.free.push(tag);
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
            let Pending::DevHit { op } = std::mem::replace(&mut self.pending[tag as usize], Pending::Free)
            else {
                panic!("cache device completion for tag {tag} that is not a hit (bug)");
            };
            self.ready.push(Completion { user_data: op.user_data, result: op.len as i32, cached: true });
            self.free.push(tag);
            self.in_dev -= 1;
        }
        next
    }
}

impl<E: Engine> Engine for CacheEngine<E> {
    fn name(&self) -> &'static str {
        self.inner.name()
    }
    fn features(&self) -> Vec<String> {
        let mut f = self.inner.features();
        f.push("block_cache".into());
        f
    }
    #[inline]
    fn now_ns(&self) -> u64 {
        self.inner.now_ns()
    }
    fn buffer_mut(&mut self, buf: u32) -> &mut [u8] {
        self.inner.buffer_mut(buf)
    }
    fn push(&mut self, op: Op) {
        let Some(&id) = self.wc.ids.get(op.target as usize) else {
            return self.forward(op, None);
        };
        let bypass = self.seq.observe(op.target, op.offset, op.len);
        let len = op.len as usize;
        if op.write {
            let data = &self.inner.buffer_mut(op.buf)[..len];
            match self.wc.cache.write(id, op.offset, data, bypass) {
                WriteOutcome::Absorbed => self.served(op),
                WriteOutcome::Forward(t) => self.forward(op, Some(t)),
            }
        } else {
            let buf = &mut self.inner.buffer_mut(op.buf)[..len];
            match self.wc.cache.read(id, op.offset, buf, bypass) {
                ReadOutcome::Hit => self.served(op),
                ReadOutcome::Forward(t) => self.forward(op, Some(t)),
            }
        }
    }
    fn submit_and_reap(
        &mut self,
        deadline_ns: Option<u64>,
        out: &mut Vec<Completion>,
    ) -> Result<(), EngineError> {
        let first = out.len();
        loop {
            self.issue_flushes(false);
            let now = self.inner.now_ns();
            let dev_next = self.poll_dev(now);
            out.append(&mut self.ready);
            let have = out.len() > first;
            let past_deadline = deadline_ns.is_some_and(|d| now >= d);
            let wait = crate::inner_deadline(have || past_deadline, now, dev_next, deadline_ns);
            if wait.is_none() && self.in_inner == 0 {
                return Ok(());
            }
            self.inner.submit_and_reap(wait, &mut self.reaped)?;
            self.take_reaped(out);
            let now = self.inner.now_ns();
            self.poll_dev(now);
            out.append(&mut self.ready);
            if out.len() > first || past_deadline || deadline_ns.is_some_and(|d| now >= d) {
                return Ok(());
            }
        }
    }
    fn finish(&mut self) -> Result<(), EngineError> {
        let mut spare = Vec::new();
        loop {
            let exhausted = self.issue_flushes(true);
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
