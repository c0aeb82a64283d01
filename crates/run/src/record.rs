//! `--trace FILE`: the run's trace. The output was claimed in the write gate by `prepare`; here it is opened
//! (a new file beside the path, renamed over it once complete, as every output is), a header naming the
//! run's targets and clock is written, and an [`iolab_trace::BackgroundWriter`] thread takes the workers'
//! batches. After the workers are joined, [`RunTrace::finish`] waits for the last batch and commits the file.

use crate::{Error, Result};
use iolab_device::{Output, StreamOutput};
use iolab_engine::WorkerTrace;
use iolab_plan::{Plan, WorkerPlan};
use iolab_spec::ClockKind;
use iolab_trace::binary::TraceClock;
use iolab_trace::{BackgroundWriter, TraceHeader, TraceWriter};

/// Records per batch a worker fills before sending it.
pub(crate) const BATCH_RECORDS: usize = 4096;
/// Batches that may wait for the writer thread before a worker's send blocks (16 × 4,096 × 48 B = 3 MiB).
pub(crate) const QUEUED_BATCHES: usize = 16;

/// The run's trace writer (see the module header).
pub(crate) struct RunTrace {
    out: StreamOutput,
    writer: BackgroundWriter,
    path: String,
}

/// What was recorded.
pub(crate) struct Recorded {
    /// The path as the user gave it.
    pub path: String,
    /// Records written.
    pub records: u64,
}

impl Recorded {
    /// The notice saying it: records and path, and how often a worker waited for the writer thread.
    pub(crate) fn said(&self, waits: u64) -> String {
        let behind = match waits {
            0 => String::new(),
            n => format!("; a worker waited for the trace writer {n} times"),
        };
        format!("iolab: trace: {} records written to '{}'{behind}", self.records, self.path)
    }
}

impl RunTrace {
    /// Opens `out` and starts the writer thread with the header of `plan`'s run.
    pub(crate) fn start(out: &Output, plan: &Plan) -> Result<RunTrace> {
        let context = || format!("writing the trace '{}'", out.path());
        let stream = out.stream().map_err(|e| Error::usage(e).context(context()))?;
        let file = stream.writer().map_err(|e| Error::usage(e).context(context()))?;
        let origin = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        let header = TraceHeader {
            clock: if plan.clock == ClockKind::Virtual { TraceClock::Virtual } else { TraceClock::Monotonic },
            clock_origin_unix_ns: origin,
            targets: plan.targets.iter().map(|t| t.name.clone()).collect(),
        };
        let writer = TraceWriter::new(file, &header).map_err(|e| Error::usage(e).context(context()))?;
        Ok(RunTrace {
            out: stream,
            writer: BackgroundWriter::spawn(writer, BATCH_RECORDS, QUEUED_BATCHES),
            path: out.path().to_string(),
        })
    }

    /// Worker `w`'s sender and its targets' run indices.
    pub(crate) fn worker(&self, w: &WorkerPlan) -> WorkerTrace {
        WorkerTrace { sender: self.writer.sender(), targets: w.targets.iter().map(|&i| i as u16).collect() }
    }

    /// Waits for the writer thread to write every batch (the workers have been joined, their senders
    /// dropped), then puts the file at its path.
    pub(crate) fn finish(self) -> Result<Recorded> {
        let context = || format!("writing the trace '{}'", self.path);
        let records = self.writer.finish().map_err(|e| Error::usage(e).context(context()))?;
        self.out.commit().map_err(|e| Error::usage(e).context(context()))?;
        Ok(Recorded { path: self.path, records })
    }
}
