//! `--verify` in the engine stack: [`VerifyEngine`] stamps a header into every block a write carries and checks
//! every block a read returns against the run's [`iolab_verify::Verifier`]; its `finish` reads back what this
//! worker wrote.
//!
//! CONTRACT STUB.

use crate::{Completion, Engine, EngineError, Op};
use iolab_verify::Verifier;
use std::sync::atomic::AtomicBool;
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
}

/// An engine whose writes carry headers and whose reads are checked.
pub struct VerifyEngine<E: Engine> {
    inner: E,
    _wv: WorkerVerify,
}

impl<E: Engine> VerifyEngine<E> {
    /// Wraps `inner`; the worker keeps at most `qd` ops in flight, and buffers 0, 2, .., 2(qd-1) (the slots'
    /// read buffers) are free for the read-back pass once the worker is done.
    pub fn new(inner: E, wv: WorkerVerify, _qd: u32) -> VerifyEngine<E> {
        VerifyEngine { inner, _wv: wv }
    }
}

impl<E: Engine> Engine for VerifyEngine<E> {
    fn name(&self) -> &'static str {
        self.inner.name()
    }
    fn features(&self) -> Vec<String> {
        self.inner.features()
    }
    fn now_ns(&self) -> u64 {
        self.inner.now_ns()
    }
    fn buffer_mut(&mut self, buf: u32) -> &mut [u8] {
        self.inner.buffer_mut(buf)
    }
    fn push(&mut self, op: Op) {
        self.inner.push(op)
    }
    fn submit_and_reap(&mut self, d: Option<u64>, out: &mut Vec<Completion>) -> Result<(), EngineError> {
        self.inner.submit_and_reap(d, out)
    }
    fn finish(&mut self) -> Result<(), EngineError> {
        self.inner.finish()
    }
}
