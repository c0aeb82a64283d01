//! The in-process engines: `mem:` copies to and from a RAM disk ([`MemStore`]), `null:` completes without
//! touching any byte. Neither makes a system call, so they measure iolab's own cost per I/O: op generation,
//! slot keeping, time stamps and histogram recording.

use crate::buffers::Buffers;
use crate::{Completion, Engine, EngineError, Op, OpKind, RealClock};
use iolab_device::MemStore;
use std::sync::Arc;

/// `mem:` or `null:` engine.
pub struct MemEngine {
    store: Option<Arc<MemStore>>,
    buffers: Buffers,
    queued: Vec<Op>,
    clock: RealClock,
}

impl MemEngine {
    /// A `mem:` engine over `store`, or a `null:` engine when `store` is None.
    pub fn new(
        store: Option<Arc<MemStore>>,
        buffers: Buffers,
        slot_count: u32,
        clock: RealClock,
    ) -> MemEngine {
        MemEngine { store, buffers, queued: Vec::with_capacity(slot_count as usize), clock }
    }
}

impl Engine for MemEngine {
    fn name(&self) -> &'static str {
        if self.store.is_some() {
            "mem"
        } else {
            "null"
        }
    }
    fn features(&self) -> Vec<String> {
        vec![if self.store.is_some() { "in_process_copy".into() } else { "no_copy".into() }]
    }
    #[inline]
    fn now_ns(&self) -> u64 {
        self.clock.now_ns()
    }
    fn buffer_mut(&mut self, buf: u32) -> &mut [u8] {
        self.buffers.get_mut(buf)
    }
    #[inline]
    unsafe fn push(&mut self, op: Op) {
        self.queued.push(op);
    }
    fn submit_and_reap(
        &mut self,
        deadline_ns: Option<u64>,
        out: &mut Vec<Completion>,
    ) -> Result<(), EngineError> {
        if self.queued.is_empty() {
            self.clock.sleep_until(deadline_ns);
            return Ok(());
        }
        for op in self.queued.drain(..) {
            if let Some(store) = &self.store {
                let len = op.len as usize;
                match op.kind {
                    OpKind::Write => store.write(op.offset, &self.buffers.get(op.buf)[..len]),
                    OpKind::Read => store.read(op.offset, &mut self.buffers.get_mut(op.buf)[..len]),
                    OpKind::Trim => store.discard(op.offset, len),
                    OpKind::Flush => {} // RAM holds nothing volatile beneath it
                }
            }
            out.push(Completion {
                user_data: op.user_data,
                result: op.len as i32,
                cached: false,
                done_ns: 0,
                start_ns: 0,
            });
        }
        Ok(())
    }
    /// Nothing to hand over early: this engine copies in `submit_and_reap`.
    fn submit(&mut self) -> Result<(), EngineError> {
        Ok(())
    }
    /// Nothing held back.
    fn finish(&mut self) -> Result<(), EngineError> {
        Ok(())
    }
}
