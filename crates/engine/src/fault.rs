//! `--inject`: [`FaultEngine`] sits right above the target's engine and puts faults into its I/O on purpose.
//!
//! CONTRACT STUB.

use crate::{Completion, Engine, EngineError, Op};
use iolab_spec::InjectSpec;
use std::sync::Arc;

/// The run's fault injection, shared by all workers: what to inject and what was injected.
pub struct Faults {
    _specs: Vec<InjectSpec>,
}

impl Faults {
    /// Faults for a run; choices are deterministic for `seed`. `block_bytes` is the verification block (what
    /// "a damaged block" means when counting live and detected injections).
    pub fn new(specs: Vec<InjectSpec>, _seed: u64, _block_bytes: u32) -> Faults {
        Faults { _specs: specs }
    }
    /// The `inject` block of the result; with `--verify`, `mismatch_blocks` (target id, block offset) are the
    /// blocks verification failed, to count live injections that were detected.
    pub fn result(&self, _mismatch_blocks: Option<&[(u16, u64)]>) -> iolab_verify::InjectResult {
        unimplemented!()
    }
}

/// What a worker needs to inject faults.
#[derive(Clone)]
pub struct WorkerFaults {
    /// The run's faults.
    pub faults: Arc<Faults>,
    /// The run's id of each of the worker's targets.
    pub ids: Vec<u16>,
    /// The worker's region (offset, length) in each of its targets (a misdirected write lands inside it).
    pub regions: Vec<(u64, u64)>,
    /// The worker's index (its own random stream).
    pub worker: u32,
}

/// An engine that injects faults into the I/O of the engine underneath.
pub struct FaultEngine<E: Engine> {
    inner: E,
    _wf: WorkerFaults,
}

impl<E: Engine> FaultEngine<E> {
    /// Wraps `inner`, which has room for `slots` ops.
    pub fn new(inner: E, wf: WorkerFaults, _slots: u32) -> FaultEngine<E> {
        FaultEngine { inner, _wf: wf }
    }
}

impl<E: Engine> Engine for FaultEngine<E> {
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
