//! iolab's binary trace format, version 1 (docs/TRACES.md has the specification).
//!
//! A header, then fixed-size records, all little-endian:
//!
//! ```text
//! header   0  magic "iolabtrc" (8 bytes)      record  0  start_ns     u64  intended start
//!          8  version u16 = 1                          8  submit_ns    u64  u64::MAX = not recorded
//!         10  record size u16 = 48                    16  complete_ns  u64  u64::MAX = not recorded
//!         12  header length u32 (multiple of 8)       24  offset       u64  bytes
//!         16  clock origin u64, Unix ns (0: unknown)  32  len          u32  bytes
//!         24  clock u32 (see TraceClock)              36  result       i32  bytes or -errno; i32::MIN = none
//!         28  target count u32                        40  target       u16  index into the names
//!         32  per target: name length u16, UTF-8      42  op           u8   see TraceOp
//!             zero padding to the header length       43  flags        u8   0 (reserved)
//!                                                     44  worker       u16
//!                                                     46  reserved     u16  0
//! ```
//!
//! The record count is not in the header, so a file cut short by a crash still reads to its last whole record
//! (a partial last record is reported as a bad record). Readers refuse a newer version and accept a larger
//! record size (later versions append fields).

use crate::{BadRecords, TraceError, TraceOp, TraceRecord};
use std::io::{self, Read, Write};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// The file's first eight bytes.
pub const MAGIC: [u8; 8] = *b"iolabtrc";
/// The version this code writes.
pub const VERSION: u16 = 1;
/// Bytes per record in version 1.
pub const RECORD_SIZE: usize = 48;
const FIXED_HEADER: usize = 32;
/// Most targets a trace names: a record's target is a 16-bit index.
pub const MAX_TARGETS: usize = 1 << 16;
/// Longest target name, in bytes (Linux's `PATH_MAX`).
pub const MAX_NAME_BYTES: usize = 4096;
/// Largest header, in bytes: the fixed part and every name, far above what `MAX_TARGETS` real paths take.
pub const MAX_HEADER_BYTES: usize = 16 << 20;
const NONE_U64: u64 = u64::MAX;
const NONE_I32: i32 = i32::MIN;

/// Which clock the times were read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum TraceClock {
    /// Not known (converted foreign traces).
    #[default]
    Unknown = 0,
    /// CLOCK_MONOTONIC (a real-clock run).
    Monotonic = 1,
    /// CLOCK_REALTIME.
    Realtime = 2,
    /// iolab's virtual time (`--clock virtual`).
    Virtual = 3,
}

impl TraceClock {
    fn from_code(c: u32) -> TraceClock {
        match c {
            1 => TraceClock::Monotonic,
            2 => TraceClock::Realtime,
            3 => TraceClock::Virtual,
            _ => TraceClock::Unknown,
        }
    }

    /// Its name in `trace show`.
    pub fn as_str(self) -> &'static str {
        match self {
            TraceClock::Unknown => "unknown",
            TraceClock::Monotonic => "monotonic",
            TraceClock::Realtime => "realtime",
            TraceClock::Virtual => "virtual",
        }
    }
}

/// What a trace file says before its records.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TraceHeader {
    /// The clock the times come from.
    pub clock: TraceClock,
    /// Wall-clock time (Unix ns) of time 0, 0 when unknown.
    pub clock_origin_unix_ns: u64,
    /// Target names; a record's `target` indexes this list.
    pub targets: Vec<String>,
}

impl TraceHeader {
    fn encode(&self) -> io::Result<Vec<u8>> {
        let mut names = Vec::new();
        for t in &self.targets {
            if t.len() > MAX_NAME_BYTES {
                return Err(invalid(format!("target name longer than {MAX_NAME_BYTES} bytes: {t:.40}...")));
            }
            let len = t.len() as u16;
            names.extend_from_slice(&len.to_le_bytes());
            names.extend_from_slice(t.as_bytes());
        }
        let header_len = (FIXED_HEADER + names.len()).div_ceil(8) * 8;
        if self.targets.len() > MAX_TARGETS || header_len > MAX_HEADER_BYTES {
            return Err(invalid(format!(
                "{} targets in a header of {header_len} bytes; a trace names at most {MAX_TARGETS} in {MAX_HEADER_BYTES}",
                self.targets.len()
            )));
        }
        let mut out = Vec::with_capacity(header_len);
        out.extend_from_slice(&MAGIC);
        out.extend_from_slice(&VERSION.to_le_bytes());
        out.extend_from_slice(&(RECORD_SIZE as u16).to_le_bytes());
        out.extend_from_slice(&(header_len as u32).to_le_bytes());
        out.extend_from_slice(&self.clock_origin_unix_ns.to_le_bytes());
        out.extend_from_slice(&(self.clock as u32).to_le_bytes());
        out.extend_from_slice(&(self.targets.len() as u32).to_le_bytes());
        out.extend_from_slice(&names);
        out.resize(header_len, 0);
        Ok(out)
    }
}

fn invalid(msg: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, msg)
}

/// Encodes one record into its 48 bytes.
pub fn encode(r: &TraceRecord, out: &mut [u8; RECORD_SIZE]) {
    out[0..8].copy_from_slice(&r.start_ns.to_le_bytes());
    out[8..16].copy_from_slice(&r.submit_ns.unwrap_or(NONE_U64).to_le_bytes());
    out[16..24].copy_from_slice(&r.complete_ns.unwrap_or(NONE_U64).to_le_bytes());
    out[24..32].copy_from_slice(&r.offset.to_le_bytes());
    out[32..36].copy_from_slice(&r.len.to_le_bytes());
    out[36..40].copy_from_slice(&r.result.unwrap_or(NONE_I32).to_le_bytes());
    out[40..42].copy_from_slice(&r.target.to_le_bytes());
    out[42] = r.op as u8;
    out[43] = 0;
    out[44..46].copy_from_slice(&r.worker.to_le_bytes());
    out[46..48].copy_from_slice(&[0, 0]);
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}
fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}
fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes(b[at..at + 2].try_into().expect("2 bytes"))
}

/// Decodes one record (the first 48 bytes of `b`); an unknown op code is an error with the code.
#[inline]
pub fn decode(b: &[u8]) -> Result<TraceRecord, String> {
    let op = TraceOp::from_code(b[42]).ok_or_else(|| format!("op code {} is none of 0-4", b[42]))?;
    let opt = |v: u64| (v != NONE_U64).then_some(v);
    let result = i32::from_le_bytes(b[36..40].try_into().expect("4 bytes"));
    Ok(TraceRecord {
        start_ns: u64_at(b, 0),
        submit_ns: opt(u64_at(b, 8)),
        complete_ns: opt(u64_at(b, 16)),
        offset: u64_at(b, 24),
        len: u32_at(b, 32),
        result: (result != NONE_I32).then_some(result),
        target: u16_at(b, 40),
        op,
        worker: u16_at(b, 44),
    })
}

/// Writes a trace: the header at once, then records through a buffer allocated once (no allocation per
/// record). Errors of the underlying writer come back from the call that flushed.
pub struct TraceWriter<W: Write> {
    out: W,
    buf: Vec<u8>,
    records: u64,
}

impl<W: Write> TraceWriter<W> {
    /// Bytes buffered before a write to `out`.
    pub const BUFFER: usize = 1 << 20;

    /// Writes `header` to `out` and returns the writer for the records.
    pub fn new(mut out: W, header: &TraceHeader) -> io::Result<TraceWriter<W>> {
        out.write_all(&header.encode()?)?;
        Ok(TraceWriter { out, buf: Vec::with_capacity(Self::BUFFER), records: 0 })
    }

    /// Appends one record.
    #[inline]
    pub fn write(&mut self, r: &TraceRecord) -> io::Result<()> {
        if self.buf.len() + RECORD_SIZE > self.buf.capacity() {
            self.flush_buffer()?;
        }
        let mut bytes = [0u8; RECORD_SIZE];
        encode(r, &mut bytes);
        self.buf.extend_from_slice(&bytes);
        self.records += 1;
        Ok(())
    }

    /// Records written so far.
    pub fn records(&self) -> u64 {
        self.records
    }

    fn flush_buffer(&mut self) -> io::Result<()> {
        self.out.write_all(&self.buf)?;
        self.buf.clear();
        Ok(())
    }

    /// Writes what is buffered, flushes `out` and returns it with the number of records written.
    pub fn finish(mut self) -> io::Result<(W, u64)> {
        self.flush_buffer()?;
        self.out.flush()?;
        Ok((self.out, self.records))
    }
}

/// A [`TraceWriter`] on a thread of its own, for recording a run: workers fill batches of records (taken
/// from a pool, so a batch is allocated only while the pool grows to its bound) and send them; the thread
/// encodes and writes them, and gives the emptied batches back to the pool.
///
/// ```no_run
/// # use iolab_trace::{BackgroundWriter, TraceHeader, TraceWriter, TraceOp, TraceRecord};
/// let file = std::fs::File::create("run.iolabtrace")?;
/// let header = TraceHeader { targets: vec!["/dev/sdb".into()], ..TraceHeader::default() };
/// let bg = BackgroundWriter::spawn(TraceWriter::new(file, &header)?, 4096, 16);
/// let sender = bg.sender(); // one per worker thread (Clone + Send)
/// let mut batch = sender.batch();
/// batch.push(TraceRecord::new(0, TraceOp::Read, 0, 4096, 4096));
/// sender.send(batch)?; // when full, or at the end of the worker
/// drop(sender);
/// let records = bg.finish()?;
/// # Ok::<(), std::io::Error>(())
/// ```
pub struct BackgroundWriter {
    sender: TraceSender,
    thread: JoinHandle<io::Result<u64>>,
}

/// A handle that sends batches of records to a [`BackgroundWriter`].
#[derive(Clone)]
pub struct TraceSender {
    tx: SyncSender<Vec<TraceRecord>>,
    pool: Arc<Mutex<Vec<Vec<TraceRecord>>>>,
    batch_len: usize,
}

impl TraceSender {
    /// An empty batch with room for the writer's batch length: a recycled one when the pool has one.
    pub fn batch(&self) -> Vec<TraceRecord> {
        let recycled = self.pool.lock().map(|mut p| p.pop()).unwrap_or(None);
        recycled.unwrap_or_else(|| Vec::with_capacity(self.batch_len))
    }

    /// Hands a batch to the writer thread; waits while `batches` batches are already queued. An error means
    /// the writer thread has stopped (its error comes back from [`BackgroundWriter::finish`]).
    pub fn send(&self, batch: Vec<TraceRecord>) -> io::Result<()> {
        self.tx
            .send(batch)
            .map_err(|_| io::Error::new(io::ErrorKind::BrokenPipe, "the trace writer thread has stopped"))
    }

    /// Hands a batch over as [`TraceSender::send`] does, and says whether it had to wait: true when the queue
    /// was full (the writer thread is behind), the only case in which sending blocks.
    pub fn send_counting(&self, batch: Vec<TraceRecord>) -> io::Result<bool> {
        match self.tx.try_send(batch) {
            Ok(()) => Ok(false),
            Err(TrySendError::Full(batch)) => self.send(batch).map(|()| true),
            Err(TrySendError::Disconnected(_)) => {
                Err(io::Error::new(io::ErrorKind::BrokenPipe, "the trace writer thread has stopped"))
            }
        }
    }

    /// Records per batch.
    pub fn batch_len(&self) -> usize {
        self.batch_len
    }
}

impl BackgroundWriter {
    /// Starts the thread writing to `writer`. `batch_len` is the records per batch, `batches` how many may
    /// wait in the queue (and the most the pool keeps).
    pub fn spawn<W: Write + Send + 'static>(
        writer: TraceWriter<W>,
        batch_len: usize,
        batches: usize,
    ) -> BackgroundWriter {
        let (tx, rx) = sync_channel(batches.max(1));
        let pool = Arc::new(Mutex::new(Vec::with_capacity(batches)));
        let thread_pool = Arc::clone(&pool);
        let thread = std::thread::Builder::new()
            .name("iolab-trace".into())
            .spawn(move || write_batches(writer, rx, thread_pool, batches))
            .expect("spawn the trace writer thread");
        BackgroundWriter { sender: TraceSender { tx, pool, batch_len: batch_len.max(1) }, thread }
    }

    /// A sender for one more producer.
    pub fn sender(&self) -> TraceSender {
        self.sender.clone()
    }

    /// Waits until every batch sent (by all senders, which must be dropped first) is written, and returns
    /// the number of records written or the first error.
    pub fn finish(self) -> io::Result<u64> {
        drop(self.sender);
        self.thread.join().unwrap_or_else(|_| Err(io::Error::other("the trace writer thread panicked")))
    }
}

fn write_batches<W: Write>(
    mut writer: TraceWriter<W>,
    rx: Receiver<Vec<TraceRecord>>,
    pool: Arc<Mutex<Vec<Vec<TraceRecord>>>>,
    keep: usize,
) -> io::Result<u64> {
    for mut batch in rx {
        for r in &batch {
            writer.write(r)?;
        }
        batch.clear();
        if let Ok(mut p) = pool.lock() {
            if p.len() < keep {
                p.push(batch);
            }
        }
    }
    writer.finish().map(|(_, n)| n)
}

/// Reads an iolab binary trace: the header, then records one by one, decoded in place from a buffer of
/// [`TraceReader::CHUNK_RECORDS`] records (no copy per record).
pub struct TraceReader<R: Read> {
    input: R,
    path: String,
    header: TraceHeader,
    record_size: usize,
    /// Bytes read and not yet decoded are `buf[at..filled]`.
    buf: Vec<u8>,
    at: usize,
    filled: usize,
    index: u64,
}

impl<R: Read> TraceReader<R> {
    /// Reads the header of `input` (named `path` in errors).
    pub fn new(mut input: R, path: &str) -> Result<TraceReader<R>, TraceError> {
        let malformed = |why: String| TraceError::Malformed { path: path.to_string(), why };
        let mut fixed = [0u8; FIXED_HEADER];
        read_full(&mut input, &mut fixed, path)?
            .then_some(())
            .ok_or_else(|| malformed("the header is cut short".into()))?;
        if fixed[0..8] != MAGIC {
            return Err(malformed("no iolab trace magic \"iolabtrc\" at the start".into()));
        }
        let version = u16_at(&fixed, 8);
        if version == 0 || version > VERSION {
            return Err(malformed(format!(
                "trace format version {version}; this iolab reads versions 1 to {VERSION}"
            )));
        }
        let record_size = u16_at(&fixed, 10) as usize;
        let header_len = u32_at(&fixed, 12) as usize;
        if record_size < RECORD_SIZE || !(FIXED_HEADER..=MAX_HEADER_BYTES).contains(&header_len) {
            return Err(malformed(format!(
                "record size {record_size} or header length {header_len} out of range (expected a record size \
                 of at least {RECORD_SIZE} and a header of {FIXED_HEADER} to {MAX_HEADER_BYTES} bytes)"
            )));
        }
        let count = u32_at(&fixed, 28) as usize;
        if count > MAX_TARGETS || count * 2 > header_len - FIXED_HEADER {
            let room = (header_len - FIXED_HEADER) / 2;
            return Err(malformed(format!(
                "the header names {count} targets; expected at most {MAX_TARGETS}, and at most {room} in a header of {header_len} bytes"
            )));
        }
        let mut rest = vec![0u8; header_len - FIXED_HEADER];
        read_full(&mut input, &mut rest, path)?
            .then_some(())
            .ok_or_else(|| malformed("the header is cut short".into()))?;
        let targets = target_names(&rest, count).map_err(malformed)?;
        let header = TraceHeader {
            clock: TraceClock::from_code(u32_at(&fixed, 24)),
            clock_origin_unix_ns: u64_at(&fixed, 16),
            targets,
        };
        Ok(TraceReader {
            input,
            path: path.to_string(),
            header,
            record_size,
            buf: vec![0; record_size * Self::CHUNK_RECORDS],
            at: 0,
            filled: 0,
            index: 0,
        })
    }

    /// Records read from the input at a time.
    pub const CHUNK_RECORDS: usize = 4096;

    /// The header.
    pub fn header(&self) -> &TraceHeader {
        &self.header
    }

    /// The next record; a record that does not decode goes to `bad` (numbered from 0) and is skipped.
    #[inline]
    pub fn next_record(&mut self, bad: &mut BadRecords) -> Result<Option<TraceRecord>, TraceError> {
        let targets = self.header.targets.len();
        loop {
            if self.filled - self.at < self.record_size && !self.refill(bad)? {
                return Ok(None);
            }
            let (index, decoded) = (self.index, decode(&self.buf[self.at..self.at + self.record_size]));
            self.at += self.record_size;
            self.index += 1;
            match decoded {
                Ok(r) if (r.target as usize) < targets.max(1) => return Ok(Some(r)),
                decoded => bad_record(bad, index, decoded, targets),
            }
        }
    }

    /// The next good records, as many as `out` has spare capacity for (at least one), appended to it; none at
    /// the end. Records that do not decode go to `bad` and are skipped. Decoded in place, one loop a chunk.
    pub fn next_records(
        &mut self,
        bad: &mut BadRecords,
        out: &mut Vec<TraceRecord>,
    ) -> Result<(), TraceError> {
        let (size, targets) = (self.record_size, self.header.targets.len());
        let end = out.len() + (out.capacity() - out.len()).max(1);
        while out.len() < end {
            if self.filled - self.at < size && !self.refill(bad)? {
                break;
            }
            let n = ((self.filled - self.at) / size).min(end - out.len());
            let chunk = &self.buf[self.at..self.at + n * size];
            for (i, record) in chunk.chunks_exact(size).enumerate() {
                match decode(record) {
                    Ok(r) if (r.target as usize) < targets.max(1) => out.push(r),
                    decoded => bad_record(bad, self.index + i as u64, decoded, targets),
                }
            }
            self.at += n * size;
            self.index += n as u64;
        }
        Ok(())
    }
}

/// Says in `bad` why record `index` was `decoded` so (an unknown op or target).
#[cold]
fn bad_record(bad: &mut BadRecords, index: u64, decoded: Result<TraceRecord, String>, targets: usize) {
    match decoded {
        Ok(r) => bad.push(index, format!("target {} but the header names {targets}", r.target)),
        Err(why) => bad.push(index, why),
    }
}

impl<R: Read> TraceReader<R> {
    /// Reads the next chunk after what is left of this one (less than a record); false at the end of the
    /// input, with a partial last record said in `bad`.
    #[cold]
    fn refill(&mut self, bad: &mut BadRecords) -> Result<bool, TraceError> {
        let left = self.filled - self.at;
        self.buf.copy_within(self.at..self.filled, 0);
        let n =
            read_some(&mut self.input, &mut self.buf[left..]).map_err(|e| TraceError::io(&self.path, e))?;
        (self.at, self.filled) = (0, left + n);
        if self.filled >= self.record_size {
            return Ok(true);
        }
        if self.filled > 0 {
            let size = self.record_size;
            bad.push(self.index, format!("the last record is cut short: {} of {size} bytes", self.filled));
            self.index += 1;
            self.filled = 0;
        }
        Ok(false)
    }
}

fn target_names(b: &[u8], count: usize) -> Result<Vec<String>, String> {
    let mut names = Vec::with_capacity(count);
    let mut at = 0;
    for i in 0..count {
        let len = b.get(at..at + 2).map(|s| u16::from_le_bytes([s[0], s[1]]) as usize);
        let name = len
            .and_then(|len| b.get(at + 2..at + 2 + len))
            .ok_or(format!("target name {i} runs past the header"))?;
        if name.len() > MAX_NAME_BYTES {
            return Err(format!(
                "target name {i} is {} bytes; expected at most {MAX_NAME_BYTES}",
                name.len()
            ));
        }
        names.push(String::from_utf8(name.to_vec()).map_err(|_| format!("target name {i} is not UTF-8"))?);
        at += 2 + name.len();
    }
    Ok(names)
}

/// Fills `buf`; false when the input ended first.
fn read_full(input: &mut impl Read, buf: &mut [u8], path: &str) -> Result<bool, TraceError> {
    let n = read_some(input, buf).map_err(|e| TraceError::io(path, e))?;
    Ok(n == buf.len())
}

/// Reads until `buf` is full or the input ends; returns the bytes read.
pub(crate) fn read_some(input: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match input.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}
