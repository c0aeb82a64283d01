//! The sync engine: pread/pwrite through std's positional file I/O, one I/O at a time per worker.
//!
//! Ops are executed in [`Engine::submit_and_reap`], after the worker stamped the submission time, so service
//! time covers the system call. The plan runs this engine at depth 1 (a deeper queue would only wait in line
//! inside the worker); use more workers for concurrency, as with fio's psync.

use crate::buffers::Buffers;
use crate::{Completion, Engine, EngineError, Op, RealClock};
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::Arc;

/// pread/pwrite engine.
pub struct SyncEngine {
    files: Vec<Arc<File>>,
    buffers: Buffers,
    queued: Vec<Op>,
    clock: RealClock,
}

impl SyncEngine {
    /// An engine over `files` with `buffers`.
    pub fn new(files: Vec<Arc<File>>, buffers: Buffers, clock: RealClock) -> SyncEngine {
        SyncEngine { files, buffers, queued: Vec::with_capacity(64), clock }
    }
}

impl Engine for SyncEngine {
    fn name(&self) -> &'static str {
        "sync"
    }
    fn features(&self) -> Vec<String> {
        vec!["pread_pwrite".into()]
    }
    #[inline]
    fn now_ns(&self) -> u64 {
        self.clock.now_ns()
    }
    fn buffer_mut(&mut self, buf: u32) -> &mut [u8] {
        self.buffers.get_mut(buf)
    }
    fn push(&mut self, op: Op) {
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
            let file = &self.files[op.target as usize];
            let len = op.len as usize;
            let r = if op.write {
                file.write_at(&self.buffers.get(op.buf)[..len], op.offset)
            } else {
                file.read_at(&mut self.buffers.get_mut(op.buf)[..len], op.offset)
            };
            let result = match r {
                Ok(n) => n as i32,
                Err(e) => -e.raw_os_error().unwrap_or(libc::EIO),
            };
            out.push(Completion { user_data: op.user_data, result, cached: false, done_ns: 0 });
        }
        Ok(())
    }
    /// Nothing to hand over early: this engine runs each op in `submit_and_reap`.
    fn submit(&mut self) -> Result<(), EngineError> {
        Ok(())
    }
    /// Nothing held back.
    fn finish(&mut self) -> Result<(), EngineError> {
        Ok(())
    }
}
