//! `--verify` in the engine stack: [`VerifyEngine`] stamps a header into every block a write carries and checks
//! every block a read returns against the run's [`iolab_verify::Verifier`]; its `finish` reads back what this
//! worker wrote.
//!
//! It is the outermost layer (base <- faults <- links <- cache <- verify), so it sees ops exactly as the worker
//! issues them and completions exactly as the worker will. Per op, at push: a write gets a new generation per
//! block ([`Verifier::begin_write`]) and its blocks are stamped in the slot's write buffer, which already holds
//! the worker's data pattern ([`Verifier::stamp`]: header, sector tags, crc32c); a read snapshots each block's
//! state ([`Verifier::begin_read`]). At completion: a write acknowledges each block it wrote whole, or marks it
//! failed ([`Verifier::end_write`]); a read judges each block it returned whole ([`Verifier::end_read`]).
//! Blocks an op covers only in part (which [`Verifier::choose_block`] rules out) are not stamped, count as
//! failed writes and are not checked on reads, so they can never raise an alarm.
//!
//! The per-slot state is preallocated from `qd` and the buffer length (one 8-byte ticket per block of the
//! largest op), so nothing is allocated or locked per I/O. Counts go into a [`Tally`] of this engine, added to
//! the verifier at `finish` (and on drop), not into shared counters per I/O.
//!
//! The op's `user_data` is replaced by the slot index (`buf / 2`: slot i uses buffers 2i and 2i+1) on the way
//! down and restored on the way up.
//!
//! **Durable acknowledgments** (`--journal` when the workload makes writes durable: [`WorkerDurable`]). This
//! layer sees every write complete and every flush issued and completed, in the order the worker does, so it
//! knows what the workload was told is durable: a write that completes as a synchronous write
//! ([`Op::sync`]), and every write of a target that had completed before a flush of that target was pushed,
//! once that flush completes successfully (a flush makes durable what completed before it was issued; a write
//! reaped after the flush was pushed waits for the next one, even if it completed earlier). Per worker target,
//! the writes completed since the last flush wait in a list (at most [`PENDING_MAX`]; past that they are
//! counted as not logged); pushing a flush moves the list to the flush's slot; its success makes them
//! acknowledged durable. Acknowledged writes go to the run's [`DurableLog`] in batches: at each successful
//! flush, and for synchronous writes once [`HANDOFF_RECORDS`] are waiting or [`HANDOFF_NS`] has passed: one
//! lock per flush or batch, none per I/O. Nothing of this exists in a run without a journal or without
//! durable writes.

use crate::{Completion, Engine, EngineError, Op, OpKind, WriteSync};
use iolab_verify::durable::{DurableLog, Record};
use iolab_verify::{Outcome, Tally, Ticket, Verifier};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// What a worker needs to verify.
#[derive(Clone)]
pub struct WorkerVerify {
    /// The run's verifier.
    pub verifier: Arc<Verifier>,
    /// The verifier's id of each of the worker's targets (its index among the run's targets).
    pub ids: Vec<u16>,
    /// The worker's region (offset, length) in each of its targets: what the read-back pass reads.
    pub regions: Vec<(u64, u64)>,
    /// Read back every block this worker wrote after the run.
    pub readback: bool,
    /// Raised to stop the run at a mismatch (`--verify-fail stop`).
    pub stop: Arc<AtomicBool>,
    /// Where acknowledgments of durable writes go: `--journal` with a workload that makes writes durable.
    pub durable: Option<WorkerDurable>,
}

/// What a worker needs to log its durable acknowledgments (see the module documentation).
#[derive(Clone)]
pub struct WorkerDurable {
    /// The run's durable-write log.
    pub log: Arc<DurableLog>,
    /// The worker flushes (`fsync`, `fdatasync`): its plain writes wait for their flush.
    pub flushes: bool,
}

/// Writes per worker target waiting for their flush, at most (1 MiB of records): past it a write's
/// acknowledgment is counted as not logged rather than kept (a worker flushing every 100,000 writes of 1 MiB
/// would otherwise keep 25 million records).
pub const PENDING_MAX: usize = 1 << 16;
/// Synchronous writes' acknowledgments handed to the log once this many wait ...
pub const HANDOFF_RECORDS: usize = 256;
/// ... or once the oldest waited this long (1 ms): well under the log's own commit period.
pub const HANDOFF_NS: u64 = 1_000_000;

/// A worker's durable acknowledgments on their way to the log.
struct Durable {
    log: Arc<DurableLog>,
    flushes: bool,
    /// Per worker target: writes completed since a flush of it was last pushed, and how many more did not fit.
    pending: Vec<(Vec<Record>, u64)>,
    /// Per slot: the writes the flush in it covers (and how many did not fit).
    covered: Vec<(Vec<Record>, u64)>,
    /// Acknowledged durable, not yet handed to the log.
    batch: Vec<Record>,
    /// When the batch was last handed over.
    handed_ns: u64,
}

impl Durable {
    fn new(wd: WorkerDurable, targets: usize, qd: usize) -> Durable {
        Durable {
            log: wd.log,
            flushes: wd.flushes,
            pending: vec![(Vec::new(), 0); targets],
            covered: vec![(Vec::new(), 0); qd],
            batch: Vec::with_capacity(HANDOFF_RECORDS),
            handed_ns: 0,
        }
    }

    /// A write of worker target `target` completed whole; `generation` is what it vouches for.
    #[inline]
    fn write_done(&mut self, target: usize, r: Record, sync: WriteSync) {
        if r.generation == 0 {
            return;
        }
        if sync.is_durable() {
            self.batch.push(r);
        } else if self.flushes {
            let (list, over) = &mut self.pending[target];
            if list.len() < PENDING_MAX {
                list.push(r);
            } else {
                *over += 1;
            }
        }
    }

    /// A flush of worker target `target` is pushed in `slot`: it covers the writes completed so far.
    fn flush_pushed(&mut self, target: usize, slot: usize) {
        debug_assert!(
            self.covered[slot].0.is_empty() && self.covered[slot].1 == 0,
            "slot still covers (bug)"
        );
        std::mem::swap(&mut self.pending[target], &mut self.covered[slot]);
    }

    /// The flush in `slot` of worker target `target` completed with `result`.
    fn flush_done(&mut self, target: usize, slot: usize, result: i32, now: u64) {
        let (list, over) = &mut self.covered[slot];
        if result >= 0 {
            // Acknowledged durable: to the log at once (one lock per flush).
            self.batch.append(list);
            if *over > 0 {
                self.log.not_logged(std::mem::take(over));
            }
            self.hand_over(now);
        } else if result == -libc::EAGAIN || result == -libc::EINTR {
            // Not done at all; the worker issues it again, and that flush covers these writes too.
            let (p, p_over) = &mut self.pending[target];
            p.append(list);
            *p_over += std::mem::take(over);
        } else {
            // A failed flush makes nothing durable, and a later one may not either (the kernel may have
            // dropped the dirty data): these writes are never vouched for.
            list.clear();
            *over = 0;
        }
    }

    /// After a turn: hands the batch over when it is large or old enough.
    #[inline]
    fn turn_done(&mut self, now: u64) {
        if self.batch.len() >= HANDOFF_RECORDS
            || (!self.batch.is_empty() && now.saturating_sub(self.handed_ns) >= HANDOFF_NS)
        {
            self.hand_over(now);
        }
    }

    fn hand_over(&mut self, now: u64) {
        self.log.submit(&mut self.batch);
        self.handed_ns = now;
    }
}

#[derive(Clone, Copy)]
struct SlotOp {
    op: Op,
    /// The worker's `user_data` (None: a read of the read-back pass).
    user_data: Option<u64>,
    busy: bool,
}

/// An engine whose writes carry headers and whose reads are checked.
pub struct VerifyEngine<E: Engine> {
    inner: E,
    wv: WorkerVerify,
    block: u64,
    qd: usize,
    /// Tickets per slot: one per block of the largest op, plus two partial edge blocks.
    per_slot: usize,
    slots: Vec<SlotOp>,
    tickets: Vec<Ticket>,
    reaped: Vec<Completion>,
    tally: Tally,
    durable: Option<Durable>,
}

/// The blocks `[offset, offset + len)` touches: the first block's offset and the count.
#[inline]
fn span(block: u64, offset: u64, len: u32) -> (u64, u64) {
    let first = offset / block * block;
    let end = (offset + len as u64).div_ceil(block) * block;
    (first, (end - first) / block)
}

impl<E: Engine> VerifyEngine<E> {
    /// Wraps `inner`; the worker keeps at most `qd` ops in flight, and buffers 0, 2, .., 2(qd-1) (the slots'
    /// read buffers) are free for the read-back pass once the worker is done.
    pub fn new(mut inner: E, wv: WorkerVerify, qd: u32) -> VerifyEngine<E> {
        let block = wv.verifier.block_bytes() as u64;
        let buffer_len = inner.buffer_mut(0).len() as u64;
        let per_slot = (buffer_len / block) as usize + 2;
        let qd = qd.max(1) as usize;
        let durable = wv.durable.clone().map(|wd| Durable::new(wd, wv.ids.len(), qd));
        let idle = Op {
            user_data: 0,
            kind: OpKind::Read,
            sync: WriteSync::None,
            target: 0,
            offset: 0,
            len: 0,
            buf: 0,
        };
        VerifyEngine {
            inner,
            wv,
            block,
            qd,
            per_slot,
            slots: vec![SlotOp { op: idle, user_data: None, busy: false }; qd],
            tickets: vec![Ticket::default(); qd * per_slot],
            reaped: Vec::with_capacity(2 * qd),
            tally: Tally::default(),
            durable,
        }
    }

    /// Blocks judged so far by this engine (not yet added to the verifier).
    pub fn tally(&self) -> Tally {
        self.tally
    }

    fn push_op(&mut self, op: Op, user_data: Option<u64>) {
        let slot = (op.buf / 2) as usize;
        assert!(
            slot < self.qd && !self.slots[slot].busy,
            "op on slot {slot} that is busy or out of range (bug)"
        );
        let v = &*self.wv.verifier;
        let id = self.wv.ids[op.target as usize];
        let (first, count) = span(self.block, op.offset, op.len);
        assert!(count as usize <= self.per_slot, "op longer than the buffer (bug)");
        let tickets = &mut self.tickets[slot * self.per_slot..][..count as usize];
        let end = op.offset + op.len as u64;
        // A trim's data is gone: a verified job has none (the plan refuses them). A flush moves no data.
        debug_assert!(op.kind != OpKind::Trim, "a trim in a verified run (bug)");
        if op.kind == OpKind::Write {
            let now = self.inner.now_ns();
            let buf = self.inner.buffer_mut(op.buf);
            for (k, t) in tickets.iter_mut().enumerate() {
                let boff = first + k as u64 * self.block;
                *t = v.begin_write(id, boff);
                if boff >= op.offset && boff + self.block <= end {
                    let at = (boff - op.offset) as usize;
                    v.stamp(&mut buf[at..at + self.block as usize], id, boff, *t, now);
                }
            }
        } else if op.kind == OpKind::Read {
            for (k, t) in tickets.iter_mut().enumerate() {
                *t = v.begin_read(id, first + k as u64 * self.block);
            }
        } else if op.kind == OpKind::Flush {
            if let Some(d) = &mut self.durable {
                d.flush_pushed(op.target as usize, slot);
            }
        }
        self.slots[slot] = SlotOp { op, user_data, busy: true };
        // SAFETY: the worker's op (its `push` caller's promise holds), or a read-back read into a slot's read
        // buffer while the worker has nothing in flight; either way the slot is busy until its completion.
        unsafe { self.inner.push(Op { user_data: slot as u64, ..op }) };
    }

    /// Acknowledges or checks the blocks of the op completed by `c`; returns the worker's completion (None for
    /// the read-back pass's own reads).
    fn complete(&mut self, c: Completion) -> Option<Completion> {
        let slot = c.user_data as usize;
        let s = self.slots[slot];
        assert!(s.busy, "completion for slot {slot} that is not in flight (bug)");
        self.slots[slot].busy = false;
        let op = s.op;
        let v = &*self.wv.verifier;
        let id = self.wv.ids[op.target as usize];
        let (first, count) = span(self.block, op.offset, op.len);
        let tickets = &self.tickets[slot * self.per_slot..][..count as usize];
        // What the completion says reached (or came from) the target: nothing on an error, the first
        // `result` bytes on a short transfer.
        let done_end = op.offset + c.result.max(0) as u64;
        let whole = |boff: u64| boff >= op.offset && boff + self.block <= done_end;
        if op.kind == OpKind::Write {
            for (k, t) in tickets.iter().enumerate() {
                let boff = first + k as u64 * self.block;
                let generation = v.end_write(id, boff, *t, c.result >= 0 && whole(boff));
                if let Some(d) = &mut self.durable {
                    let r = Record { target: id, block: boff / self.block, generation };
                    d.write_done(op.target as usize, r, op.sync);
                }
            }
        } else if op.kind == OpKind::Flush {
            if let Some(d) = &mut self.durable {
                d.flush_done(op.target as usize, slot, c.result, self.inner.now_ns());
            }
        } else if op.kind == OpKind::Read && c.result >= 0 {
            let readback = s.user_data.is_none();
            let buf = self.inner.buffer_mut(op.buf);
            for (k, t) in tickets.iter().enumerate() {
                let boff = first + k as u64 * self.block;
                if whole(boff) {
                    let at = (boff - op.offset) as usize;
                    let o = v.end_read(
                        id,
                        boff,
                        *t,
                        &buf[at..at + self.block as usize],
                        &mut self.tally,
                        readback,
                    );
                    if matches!(o, Outcome::Bad(_)) && v.stop_requested() {
                        self.wv.stop.store(true, Ordering::Relaxed);
                    }
                }
            }
        }
        s.user_data.map(|u| Completion { user_data: u, ..c })
    }

    fn flush_tally(&mut self) {
        self.wv.verifier.add_tally(&std::mem::take(&mut self.tally));
        if let Some(d) = &mut self.durable {
            d.hand_over(0);
        }
    }

    /// The read-back pass: every block of this worker's regions that has been written, in runs of contiguous
    /// written blocks up to the buffer length, `qd` reads in flight through the slots' read buffers. Ends early
    /// when the run is asked to stop.
    fn readback(&mut self) -> Result<(), EngineError> {
        let max_blocks = (self.inner.buffer_mut(0).len() as u64 / self.block).max(1);
        let regions = self.wv.regions.clone();
        let mut free: Vec<u32> = (0..self.qd as u32).rev().collect();
        let mut in_flight = 0usize;
        // Cursor: region index and the next block offset in it.
        let (mut ri, mut next) = (0usize, None::<u64>);
        let mut reaped = std::mem::take(&mut self.reaped);
        loop {
            while !free.is_empty() && !self.wv.stop.load(Ordering::Relaxed) {
                let Some((target, offset, blocks)) = self.next_run(&regions, &mut ri, &mut next, max_blocks)
                else {
                    break;
                };
                let slot = free.pop().expect("a free slot");
                let op = Op {
                    user_data: 0,
                    kind: OpKind::Read,
                    sync: WriteSync::None,
                    target,
                    offset,
                    len: (blocks * self.block) as u32,
                    buf: 2 * slot,
                };
                self.push_op(op, None);
                in_flight += 1;
            }
            if in_flight == 0 {
                break;
            }
            self.inner.submit_and_reap(None, &mut reaped)?;
            for c in reaped.drain(..) {
                let slot = c.user_data as u32;
                let op = self.slots[slot as usize].op;
                if c.result == -libc::EAGAIN || c.result == -libc::EINTR {
                    // Transient, as in the worker: read the same blocks again.
                    self.slots[slot as usize].busy = false;
                    self.push_op(op, None);
                    continue;
                }
                // Blocks an error or a short read left unread are counted, never silently passed.
                let read = c.result.max(0) as u64 / self.block;
                self.tally.readback_unread += (op.len as u64 / self.block).saturating_sub(read);
                let _ = self.complete(c);
                free.push(slot);
                in_flight -= 1;
            }
        }
        self.reaped = reaped;
        Ok(())
    }

    /// The next run of contiguous written blocks (target index, offset, block count), at most `max_blocks`.
    fn next_run(
        &self,
        regions: &[(u64, u64)],
        ri: &mut usize,
        next: &mut Option<u64>,
        max_blocks: u64,
    ) -> Option<(u16, u64, u64)> {
        let v = &*self.wv.verifier;
        while *ri < regions.len() {
            let (off, len) = regions[*ri];
            let id = self.wv.ids[*ri];
            let size = v.targets().get(id as usize).map_or(0, |t| t.size_bytes);
            let end = (off + len).min(size) / self.block * self.block;
            let from = next.unwrap_or(off.div_ceil(self.block) * self.block);
            let Some(at) = v.next_written(id, from, end) else {
                *ri += 1;
                *next = None;
                continue;
            };
            let mut n = 1;
            while n < max_blocks && at + n * self.block < end && v.written(id, at + n * self.block) {
                n += 1;
            }
            *next = Some(at + n * self.block);
            return Some((*ri as u16, at, n));
        }
        None
    }
}

impl<E: Engine> Engine for VerifyEngine<E> {
    super::delegate_to_inner!();
    fn features(&self) -> Vec<String> {
        self.inner.features()
    }
    unsafe fn push(&mut self, op: Op) {
        self.push_op(op, Some(op.user_data));
    }
    fn serves_at_push(&self, op: &Op) -> bool {
        self.inner.serves_at_push(op)
    }
    fn submit_and_reap(&mut self, d: Option<u64>, out: &mut Vec<Completion>) -> Result<(), EngineError> {
        let mut reaped = std::mem::take(&mut self.reaped);
        let r = self.inner.submit_and_reap(d, &mut reaped);
        for c in reaped.drain(..) {
            if let Some(c) = self.complete(c) {
                out.push(c);
            }
        }
        self.reaped = reaped;
        if let Some(d) = &mut self.durable {
            d.turn_done(self.inner.now_ns());
        }
        r
    }
    fn submit(&mut self) -> Result<(), EngineError> {
        self.inner.submit()
    }
    fn finish(&mut self) -> Result<(), EngineError> {
        let r = if self.wv.readback && !self.wv.verifier.stop_requested() { self.readback() } else { Ok(()) };
        self.flush_tally();
        r?;
        self.inner.finish()
    }
}

impl<E: Engine> Drop for VerifyEngine<E> {
    fn drop(&mut self) {
        self.flush_tally();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::mem::MemEngine;
    use crate::buffers::Buffers;
    use crate::RealClock;
    use iolab_device::MemStore;
    use iolab_spec::DataPattern;
    use iolab_verify::{durable, FailMode, TargetInfo, VerifyConfig};

    const BLOCK: u64 = 4096;

    /// A verifying engine over a 64 KiB `mem:` target with 2 slots, logging durable acknowledgments to a log in
    /// `dir` (`flushes`: the worker flushes).
    fn logging(dir: &std::path::Path, flushes: bool) -> (VerifyEngine<MemEngine>, Arc<DurableLog>) {
        let verifier = Arc::new(
            Verifier::new(VerifyConfig {
                block_bytes: BLOCK as u32,
                run_id: 3,
                targets: vec![TargetInfo { name: "m".into(), size_bytes: 16 * BLOCK }],
                fail: FailMode::Continue,
                journal: None,
            })
            .expect("verifier"),
        );
        let log = Arc::new(
            DurableLog::create(
                &iolab_verify::journal::JournalPlace::hold(&dir.join("j")).expect("hold"),
                3,
                BLOCK as u32,
            )
            .expect("log"),
        );
        let wv = WorkerVerify {
            verifier,
            ids: vec![0],
            regions: vec![(0, 16 * BLOCK)],
            readback: false,
            stop: Arc::new(AtomicBool::new(false)),
            durable: Some(WorkerDurable { log: log.clone(), flushes }),
        };
        let store = Arc::new(MemStore::new(16 * BLOCK).expect("store"));
        let b = Buffers::new(4, BLOCK, DataPattern::Zero, 1);
        let inner = MemEngine::new(Some(store), b, 2, RealClock::new(std::time::Instant::now()));
        (VerifyEngine::new(inner, wv, 2), log)
    }

    fn op(kind: OpKind, sync: WriteSync, block: u64, slot: u32) -> Op {
        let (offset, len) = if kind == OpKind::Flush { (0, 0) } else { (block * BLOCK, BLOCK as u32) };
        Op { user_data: slot as u64, kind, sync, target: 0, offset, len, buf: 2 * slot + 1 }
    }

    /// Pushes `ops` and reaps until each completed.
    fn turn(e: &mut VerifyEngine<MemEngine>, ops: &[Op]) -> Vec<Completion> {
        for o in ops {
            // SAFETY: the test touches no buffer while its op is in flight.
            unsafe { e.push(*o) };
        }
        let mut out = Vec::new();
        while out.len() < ops.len() {
            e.submit_and_reap(None, &mut out).expect("reap");
        }
        out
    }

    /// What reached the log once everything was handed over and committed.
    fn logged(e: VerifyEngine<MemEngine>, log: &Arc<DurableLog>, dir: &std::path::Path) -> Vec<(u64, u32)> {
        drop(e);
        log.commit_every(std::time::Duration::from_secs(60)).stop().expect("commit");
        let c = durable::read_for(&dir.join("j.durable"), 3, BLOCK as u32).expect("read");
        c.map_or_else(Vec::new, |c| c.records.iter().map(|r| (r.block, r.generation)).collect())
    }

    /// A flush makes durable what completed before it was pushed: a write reaped after the flush was pushed
    /// (here in the same turn) waits for the next flush; a failed flush vouches for nothing.
    #[test]
    fn a_flush_vouches_for_the_writes_reaped_before_it_was_pushed() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (mut e, log) = logging(dir.path(), true);
        turn(&mut e, &[op(OpKind::Write, WriteSync::None, 1, 0)]);
        // Block 2's write and the flush go out together: the flush covers block 1 only.
        turn(&mut e, &[op(OpKind::Write, WriteSync::None, 2, 0), op(OpKind::Flush, WriteSync::Dsync, 0, 1)]);
        turn(&mut e, &[op(OpKind::Write, WriteSync::None, 3, 0)]);
        // A flush that fails (EIO from the engine underneath is not what mem: does: simulate its completion).
        let mut d = e.durable.take().expect("durable");
        d.flush_pushed(0, 1);
        d.flush_done(0, 1, -libc::EIO, 0);
        e.durable = Some(d);
        // Blocks 2 and 3 were taken by the flush that failed: vouched for by nobody, not even by the next one.
        turn(&mut e, &[op(OpKind::Flush, WriteSync::Dsync, 0, 1)]);
        assert_eq!(logged(e, &log, dir.path()), vec![(1, 1)]);
        assert_eq!(log.counts().1, 0);
    }

    /// A synchronous write is acknowledged durable at its own completion; a worker that never flushes keeps
    /// no list of plain writes.
    #[test]
    fn a_synchronous_write_is_durable_when_it_completes() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (mut e, log) = logging(dir.path(), false);
        turn(&mut e, &[op(OpKind::Write, WriteSync::Dsync, 4, 0), op(OpKind::Write, WriteSync::None, 5, 1)]);
        turn(&mut e, &[op(OpKind::Write, WriteSync::Dsync, 4, 0)]);
        assert!(e.durable.as_ref().expect("durable").pending[0].0.is_empty(), "no flushes, no list");
        assert_eq!(logged(e, &log, dir.path()), vec![(4, 1), (4, 2)]);
    }

    /// Past [`PENDING_MAX`] writes waiting for a flush, the rest are counted as not logged when it completes.
    #[test]
    fn writes_past_the_pending_limit_are_counted_not_logged() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (mut e, log) = logging(dir.path(), true);
        let d = e.durable.as_mut().expect("durable");
        for i in 0..PENDING_MAX as u64 + 5 {
            d.write_done(0, Record { target: 0, block: i % 16, generation: 1 }, WriteSync::None);
        }
        d.flush_pushed(0, 0);
        d.flush_done(0, 0, 0, 0);
        assert_eq!(log.counts().1, 5);
        assert_eq!(logged(e, &log, dir.path()).len(), PENDING_MAX);
    }

    #[test]
    fn span_covers_partial_edges() {
        assert_eq!(span(4096, 0, 8192), (0, 2));
        assert_eq!(span(4096, 512, 4096), (0, 2));
        assert_eq!(span(512, 1024, 512), (1024, 1));
    }
}
