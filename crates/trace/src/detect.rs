//! Which format a trace is in, told by its content (never by its name), and the one reader over all of them.

use crate::binary::{TraceClock, TraceReader, MAGIC};
use crate::formats::{blktrace, cloudphysics, fio_log, iolab_csv, msr, RecordSource};
use crate::{BadRecords, TraceError, TraceHeader, TraceRecord};
use std::io::{BufRead, BufReader, Read};

/// A trace format iolab reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// iolab's binary trace ([`crate::binary`]).
    Iolab,
    /// iolab's CSV export ([`crate::csv`]).
    IolabCsv,
    /// The CloudPhysics/vscsi CSV.
    CloudPhysics,
    /// The SNIA/MSR Cambridge CSV.
    Msr,
    /// A fio iolog, version 2 or 3.
    FioLog(u8),
    /// blktrace's binary events, little- (true) or big-endian.
    Blktrace(bool),
    /// `blkparse`'s text.
    Blkparse,
}

impl Format {
    /// Its name in messages.
    pub fn name(self) -> &'static str {
        match self {
            Format::Iolab => "iolab binary trace",
            Format::IolabCsv => "iolab trace CSV",
            Format::CloudPhysics => "CloudPhysics CSV",
            Format::Msr => "MSR Cambridge CSV",
            Format::FioLog(2) => "fio iolog v2",
            Format::FioLog(_) => "fio iolog v3",
            Format::Blktrace(_) => "blktrace binary",
            Format::Blkparse => "blkparse text",
        }
    }
}

/// The format of a trace whose first bytes are `start` (as many as there are, up to a few KiB), or what the
/// start looked like.
pub fn detect(start: &[u8]) -> Result<Format, String> {
    if start.starts_with(&MAGIC) {
        return Ok(Format::Iolab);
    }
    if let Some(little) = blktrace::byte_order(start) {
        return Ok(Format::Blktrace(little));
    }
    let text = String::from_utf8_lossy(start);
    let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    if let Some(v) = fio_log::version(first) {
        return Ok(Format::FioLog(v));
    }
    type LooksLike = fn(&str) -> bool;
    let checks: [(LooksLike, Format); 4] = [
        (iolab_csv::looks_like, Format::IolabCsv),
        (cloudphysics::looks_like, Format::CloudPhysics),
        (msr::looks_like, Format::Msr),
        (blktrace::looks_like, Format::Blkparse),
    ];
    for (looks_like, format) in checks {
        if looks_like(first) {
            return Ok(format);
        }
    }
    if start.is_empty() {
        return Err("the file is empty".into());
    }
    let shown: String = first.chars().take(60).collect();
    Err(format!("its first line is {shown:?}"))
}

/// A trace being read: its format, its records one at a time, and the bad records met so far.
pub struct Trace {
    format: Format,
    source: Box<dyn RecordSource>,
    header: TraceHeader,
    /// Bad records met so far, with their line or record numbers.
    pub bad: BadRecords,
}

impl Trace {
    /// The format it was recognised as.
    pub fn format(&self) -> Format {
        self.format
    }

    /// The next record.
    pub fn next_record(&mut self) -> Result<Option<TraceRecord>, TraceError> {
        self.source.next_record(&mut self.bad)
    }

    /// The next records in `batch` (cleared first), as many as its capacity holds (at least one); empty at
    /// the end. Cheaper per record than [`Trace::next_record`] on a long trace: one call a batch.
    pub fn next_batch(&mut self, batch: &mut Vec<TraceRecord>) -> Result<(), TraceError> {
        batch.clear();
        self.source.next_records(&mut self.bad, batch)
    }

    /// The header: iolab's as written, or for a foreign trace, the targets met so far on an unknown clock.
    pub fn header(&self) -> TraceHeader {
        TraceHeader { targets: self.source.targets().to_vec(), ..self.header.clone() }
    }

    /// Target names met so far.
    pub fn targets(&self) -> &[String] {
        self.source.targets()
    }

    /// Entries that are not ops and were passed over (fio file actions, blktrace events other than issues).
    pub fn passed_over(&self) -> u64 {
        self.source.passed_over()
    }
}

impl<R: Read> RecordSource for TraceReader<R> {
    fn next_record(&mut self, bad: &mut BadRecords) -> Result<Option<TraceRecord>, TraceError> {
        TraceReader::next_record(self, bad)
    }
    fn next_records(&mut self, bad: &mut BadRecords, out: &mut Vec<TraceRecord>) -> Result<(), TraceError> {
        TraceReader::next_records(self, bad, out)
    }
    fn targets(&self) -> &[String] {
        &self.header().targets
    }
    fn passed_over(&self) -> u64 {
        0
    }
}

/// Opens the trace at `path`, recognising its format by content.
pub fn open(path: &str) -> Result<Trace, TraceError> {
    let file = std::fs::File::open(path).map_err(|e| TraceError::io(path, e))?;
    open_reader(file, path)
}

/// Reads a trace from `input` (named `path` in messages), recognising its format by content.
pub fn open_reader(input: impl Read + 'static, path: &str) -> Result<Trace, TraceError> {
    let mut input = BufReader::with_capacity(256 << 10, input);
    let start = input.fill_buf().map_err(|e| TraceError::io(path, e))?;
    let start = &start[..start.len().min(4096)];
    let format = detect(start).map_err(|why| TraceError::Unrecognised { path: path.to_string(), why })?;
    let mut header = TraceHeader { clock: TraceClock::Unknown, ..TraceHeader::default() };
    let source: Box<dyn RecordSource> = match format {
        Format::Iolab => {
            // The reader reads whole chunks of records itself: past what detection buffered, straight from
            // the input (one copy, not two).
            let buffered = std::io::Cursor::new(input.buffer().to_vec());
            let reader = TraceReader::new(buffered.chain(input.into_inner()), path)?;
            header = reader.header().clone();
            Box::new(reader)
        }
        Format::IolabCsv => Box::new(iolab_csv::IolabCsv::new(input, path)),
        Format::CloudPhysics => Box::new(cloudphysics::CloudPhysics::new(input, path)),
        Format::Msr => Box::new(msr::Msr::new(input, path)),
        Format::FioLog(v) => Box::new(fio_log::FioLog::new(input, path, v)),
        Format::Blktrace(little) => Box::new(blktrace::Blktrace::new(input, path, little)),
        Format::Blkparse => Box::new(blktrace::Blkparse::new(input, path)),
    };
    Ok(Trace { format, source, header, bad: BadRecords::default() })
}
