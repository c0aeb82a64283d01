//! `--trace`: a worker's recorder. Every completed op (ramp included, EAGAIN retries not: one record per op
//! as the driver saw it end) becomes one [`TraceRecord`] in a batch taken from the run's
//! [`iolab_trace::BackgroundWriter`] pool; a full batch is sent to the writer thread and a new one taken.
//! So per I/O there is a push into a preallocated `Vec`: no allocation, lock or syscall. Per batch
//! (4,096 records) there is one lock of the pool and one channel send, which waits only when the writer
//! thread is behind by all the queued batches; each such wait is counted ([`Recorder::waits`]) and said.

use super::interface::WorkerTrace;
use iolab_plan::gen::{GenOp, OpKind};
use iolab_trace::{TraceOp, TraceRecord, TraceSender};

/// One worker's recorder (see the module header).
pub(crate) struct Recorder {
    sender: TraceSender,
    /// The run's target index of each of the worker's targets.
    targets: Vec<u16>,
    worker: u16,
    /// The worker's start on the engine's clock (the window's start, after the barrier): a record's times
    /// are from there, so the ramp is [0, ramp) in every worker's records.
    pub(crate) origin: u64,
    batch: Vec<TraceRecord>,
    /// Sends that had to wait for the writer thread.
    pub(crate) waits: u64,
    /// The writer thread stopped (its error comes back from its `finish`): nothing more is recorded.
    broken: bool,
}

impl Recorder {
    /// A recorder for worker `worker`, its first batch taken now (before the barrier).
    pub(crate) fn new(t: &WorkerTrace, worker: u32) -> Recorder {
        Recorder {
            sender: t.sender.clone(),
            targets: t.targets.clone(),
            worker: worker as u16,
            origin: 0,
            batch: t.sender.batch(),
            waits: 0,
            broken: false,
        }
    }

    /// Records one completed op: intended start, submitted, completed (engine clock; recorded from
    /// [`Recorder::origin`]), the op and its result.
    #[inline]
    pub(crate) fn record(&mut self, times: (u64, u64, u64), op: &GenOp, result: i32) {
        let (start_ns, submit_ns, complete_ns) = times;
        let o = self.origin;
        self.batch.push(TraceRecord {
            start_ns: start_ns.saturating_sub(o),
            submit_ns: Some(submit_ns.saturating_sub(o)),
            complete_ns: Some(complete_ns.saturating_sub(o)),
            op: match op.kind {
                OpKind::Read => TraceOp::Read,
                OpKind::Write => TraceOp::Write,
                OpKind::Flush => TraceOp::Flush,
                OpKind::Trim => TraceOp::Discard,
            },
            target: self.targets.get(op.target as usize).copied().unwrap_or(op.target),
            worker: self.worker,
            offset: op.offset,
            len: op.len,
            result: Some(result),
        });
        if self.batch.len() >= self.sender.batch_len() {
            self.send();
        }
    }

    #[cold]
    fn send(&mut self) {
        let full = std::mem::replace(&mut self.batch, self.sender.batch());
        if self.broken {
            self.batch.clear();
            return;
        }
        match self.sender.send_counting(full) {
            Ok(waited) => self.waits += u64::from(waited),
            Err(_) => self.broken = true,
        }
    }

    /// Sends what is left; returns the sends that waited.
    pub(crate) fn finish(mut self) -> u64 {
        if !self.batch.is_empty() && !self.broken {
            let last = std::mem::take(&mut self.batch);
            if let Ok(waited) = self.sender.send_counting(last) {
                self.waits += u64::from(waited);
            }
        }
        self.waits
    }
}
