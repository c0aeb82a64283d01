//! A worker's slots: `qd` in-flight records, the bookkeeping both drivers (the op loop and the transactions)
//! share. A slot is busy from push to reap; its two buffers (read 2i, write 2i+1) belong to the kernel for
//! that time. `user_data` = generation << 32 | slot index: completions are matched by index and generation,
//! and a mismatch is a bug (assert), never silently accepted. A slot is free again only when its driver
//! releases it (the op loop at once, the transactions when the last step is done).
//!
//! Submission: ops pushed in a turn are handed to the kernel together with the turn's wait
//! ([`Slots::submit_and_wait`]), except the first ones of a refill, which go out early ([`submit_early`],
//! [`Slots::submit_now`]). Each hand-over stamps the submission time of what it hands over (one clock read
//! for the batch) and counts it in flight.

use crate::buffers::stamp_write;
use crate::dedupe::DedupeState;
use crate::{Completion, Engine, EngineError, Op, OpKind, WriteSync};
use iolab_plan::gen::GenOp;
use iolab_plan::Durability;
use iolab_spec::DataPattern;

/// One slot: the op it holds and when it was handed over, plus the driver's own state `X` (the op loop's
/// intended start, a transaction's progress).
#[derive(Clone, Copy)]
pub(crate) struct Slot<X> {
    /// The op in flight (or last in flight).
    pub(crate) op: GenOp,
    /// Bumped at every push of a new op, so a stale completion is caught.
    pub(crate) generation: u32,
    /// Pushed and not yet released by its driver.
    pub(crate) busy: bool,
    /// When its op was handed to the kernel.
    pub(crate) submitted_ns: u64,
    /// The driver's state.
    pub(crate) driver_state: X,
}

/// The `qd` slots of a worker, their free list, the ops pushed and not yet handed over, and the counts that
/// go with them.
pub(crate) struct Slots<X> {
    slots: Vec<Slot<X>>,
    free: Vec<u32>,
    pushed: Vec<u32>,
    in_flight: usize,
    /// Writes stamped so far (each write's buffer gets a sequence number).
    writes: u64,
    data: DataPattern,
    /// Duplicate writes (`dedupe`): each write's data made whole, unique or a copy, instead of stamped.
    dedupe: Option<DedupeState>,
    /// How writes and flushes are made durable (each op's [`Op::sync`]).
    durability: Durability,
    /// EAGAIN/EINTR resubmissions.
    pub(crate) retries: u64,
}

/// Slot `slot`'s buffer for `op`: reads land in buffer 2i, writes come from 2i+1, so read data never leaks
/// into a later write.
#[inline]
pub(crate) fn slot_buffer(slot: u32, write: bool) -> u32 {
    2 * slot + u32::from(write)
}

/// What an op of `kind` asks of durability: a write is synchronous as the worker's `sync` says; a flush is
/// fdatasync ([`WriteSync::Dsync`]) or fsync ([`WriteSync::Sync`]).
#[inline]
fn sync_of(kind: OpKind, d: &Durability) -> WriteSync {
    match kind {
        OpKind::Write => d.write_sync,
        OpKind::Flush if d.flush_data_only => WriteSync::Dsync,
        OpKind::Flush => WriteSync::Sync,
        OpKind::Read | OpKind::Trim => WriteSync::None,
    }
}

/// Pushes `op` for slot `slot` at `generation` (`user_data = generation << 32 | slot`); no syscall.
#[inline]
fn push_op<E: Engine>(engine: &mut E, slot: u32, generation: u32, op: &GenOp, d: &Durability) {
    let op = Op {
        user_data: (generation as u64) << 32 | slot as u64,
        kind: op.kind,
        sync: sync_of(op.kind, d),
        target: op.target,
        offset: op.offset,
        len: op.len,
        buf: slot_buffer(slot, op.kind == OpKind::Write),
    };
    // SAFETY: the slot is busy from here until its completion is reaped (`Slots::issue`, `Slots::reap`), and
    // only a free slot's buffers are written (`stamp_write` before this push) or handed out, so nothing
    // touches buffer `op.buf` while the op is in flight.
    unsafe { engine.push(op) };
}

/// Whether the `refilled`-th op pushed in one turn goes to the kernel at once, before the turn's remaining
/// refills: after the 1st, 3rd, 7th, 15th, ... (chunks of 1, 2, 4, 8, ...).
///
/// Why: the kernel builds every request of one submit call before the device sees the first (the block
/// layer's plug), about 2 µs each on a virtio disk, so when a burst of 31 completions was refilled with one
/// call the first new read reached the device ~60 µs after its slot freed, and a device that completes in
/// bursts sat idle meanwhile (16 % fewer IOPS than fio, which submits each op alone; docs/BENCHMARKS.md).
/// Doubling chunks bound the wait of the k-th op to about k others' build time and cost log2(n) + 1 submit
/// calls per refill of n (fio's default: n).
#[inline]
pub(crate) fn submit_early(refilled: u32) -> bool {
    refilled.wrapping_add(1).is_power_of_two()
}

impl<X: Copy + Default> Slots<X> {
    /// `qd` free slots; writes are stamped for `data` and made durable as `durability` says.
    pub(crate) fn new(qd: usize, data: DataPattern, durability: Durability) -> Slots<X> {
        let idle = Slot {
            op: GenOp { target: 0, kind: OpKind::Read, offset: 0, len: 0 },
            generation: 0,
            busy: false,
            submitted_ns: 0,
            driver_state: X::default(),
        };
        Slots {
            slots: vec![idle; qd],
            free: (0..qd as u32).rev().collect(),
            pushed: Vec::with_capacity(qd),
            in_flight: 0,
            writes: 0,
            data,
            dedupe: None,
            durability,
            retries: 0,
        }
    }
}

impl<X> Slots<X> {
    /// The same slots, writing `dedupe`'s data when set.
    pub(crate) fn with_dedupe(mut self, dedupe: Option<DedupeState>) -> Slots<X> {
        self.dedupe = dedupe;
        self
    }

    /// The slot the next [`Slots::take_free`] returns, if any is free.
    #[inline]
    pub(crate) fn next_free(&self) -> Option<u32> {
        self.free.last().copied()
    }

    /// How many slots are free.
    #[inline]
    pub(crate) fn free(&self) -> usize {
        self.free.len()
    }

    /// Whether `engine` would complete `op` at its push ([`Engine::serves_at_push`]), asked with the op the
    /// worker would push.
    #[inline]
    pub(crate) fn serves_at_push<E: Engine>(&self, engine: &E, op: &GenOp) -> bool {
        let kind = op.kind;
        let (target, offset, len) = (op.target, op.offset, op.len);
        let sync = sync_of(kind, &self.durability);
        engine.serves_at_push(&Op { user_data: 0, kind, sync, target, offset, len, buf: 0 })
    }

    /// Whether a slot is free.
    #[inline]
    pub(crate) fn any_free(&self) -> bool {
        !self.free.is_empty()
    }

    /// Takes the next free slot (see [`Slots::next_free`]).
    #[inline]
    pub(crate) fn take_free(&mut self) -> u32 {
        let slot = self.free.pop().expect("a free slot");
        debug_assert!(!self.slots[slot as usize].busy, "a free slot is not busy");
        slot
    }

    /// Slot `i`.
    #[inline]
    pub(crate) fn get(&self, i: u32) -> &Slot<X> {
        &self.slots[i as usize]
    }

    /// Slot `i`, mutable.
    #[inline]
    pub(crate) fn get_mut(&mut self, i: u32) -> &mut Slot<X> {
        &mut self.slots[i as usize]
    }

    /// Slots taken (in flight, pushed, or being filled).
    #[inline]
    pub(crate) fn taken(&self) -> usize {
        self.slots.len() - self.free.len()
    }

    /// The busy slots.
    pub(crate) fn busy(&self) -> impl Iterator<Item = &Slot<X>> {
        self.slots.iter().filter(|s| s.busy)
    }

    /// Nothing in flight and nothing pushed: a stopping driver is done.
    #[inline]
    pub(crate) fn drained(&self) -> bool {
        self.in_flight == 0 && self.pushed.is_empty()
    }

    /// Pushes `op` for `slot` (no syscall): stamps a write's buffer, bumps the generation, marks the slot
    /// busy.
    #[inline]
    pub(crate) fn issue<E: Engine>(&mut self, engine: &mut E, slot: u32, op: GenOp) {
        if op.kind == OpKind::Write {
            self.writes += 1;
            let buf = engine.buffer_mut(slot_buffer(slot, true));
            match self.dedupe.as_mut() {
                Some(d) => _ = d.fill(buf, op.len as usize),
                None => stamp_write(buf, op.len as usize, op.offset, self.writes, self.data),
            }
        }
        let held = &mut self.slots[slot as usize];
        held.generation = held.generation.wrapping_add(1);
        held.op = op;
        held.busy = true;
        push_op(engine, slot, held.generation, &op, &self.durability);
        self.pushed.push(slot);
    }

    /// Stamps the pushed slots' submission time, counts them in flight and forgets them: the bookkeeping of
    /// every call that hands ops to the kernel.
    #[inline]
    fn hand_over<E: Engine>(&mut self, engine: &E) {
        let t = engine.now_ns();
        for &i in &self.pushed {
            self.slots[i as usize].submitted_ns = t;
        }
        self.in_flight += self.pushed.len();
        self.pushed.clear();
    }

    /// Hands the ops pushed so far to the kernel without waiting ([`Engine::submit`]).
    pub(crate) fn submit_now<E: Engine>(&mut self, engine: &mut E) -> Result<(), EngineError> {
        self.hand_over(engine);
        engine.submit()
    }

    /// Hands the pushed batch to the kernel and waits once, until `deadline` at most; completions go to
    /// `done`.
    pub(crate) fn submit_and_wait<E: Engine>(
        &mut self,
        engine: &mut E,
        deadline: u64,
        done: &mut Vec<Completion>,
    ) -> Result<(), EngineError> {
        self.hand_over(engine);
        engine.submit_and_reap(Some(deadline), done)
    }

    /// Takes completion `c` off the in-flight count and checks that it belongs to a busy slot with this
    /// generation (a mismatch is a bug and asserts). On EAGAIN/EINTR it pushes the same op again (same slot,
    /// same intended start), counts a retry and returns None: the slot stays busy. Else returns the slot,
    /// still busy until its driver releases it.
    #[inline]
    pub(crate) fn reap<E: Engine>(&mut self, engine: &mut E, c: &Completion) -> Option<u32> {
        self.in_flight -= 1;
        let idx = (c.user_data & 0xFFFF_FFFF) as u32;
        let held = &self.slots[idx as usize];
        assert!(
            held.busy && held.generation == (c.user_data >> 32) as u32,
            "completion for slot {idx} that is not in flight (bug)"
        );
        if c.result == -libc::EAGAIN || c.result == -libc::EINTR {
            push_op(engine, idx, held.generation, &held.op, &self.durability);
            self.pushed.push(idx);
            self.retries += 1;
            return None;
        }
        assert!(c.result != -libc::EFAULT, "EFAULT: iolab passed a bad buffer (bug)");
        Some(idx)
    }

    /// Frees slot `i` for a new op.
    #[inline]
    pub(crate) fn release(&mut self, i: u32) {
        self.slots[i as usize].busy = false;
        self.free.push(i);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn early_submits_come_in_doubling_chunks() {
        let at: Vec<u32> = (1..=64).filter(|&n| submit_early(n)).collect();
        assert_eq!(at, [1, 3, 7, 15, 31, 63]);
    }
}
