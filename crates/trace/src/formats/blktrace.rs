//! blktrace's binary output (`blktrace -d DEV -o NAME`, the per-CPU files concatenated, or `blkparse -d`'s
//! dump) and `blkparse`'s default text.
//!
//! A binary event is `struct blk_io_trace` (48 bytes: magic, sequence, time ns, sector, bytes, action, pid,
//! device, cpu, error, pdu_len) and `pdu_len` bytes after it, in the byte order of the machine that traced
//! (told by the magic 0x65617400 | version). An op is an **issue** event (`D`: the request handed to the
//! driver, after the block layer merged and split what was queued), so a curve is the device's view; queue
//! (`Q`) and every other event, and notify events, are passed over; a completion (`C`) gives the issue of
//! the same sector its completion time and result (ops come out in issue order, each held until its
//! completion or until 4,096 later issues wait behind it).

use super::{field, length, quote, seconds_ns, NumberedLines, Pending, RecordSource, Targets, TimeOrigin};
use crate::binary::read_some;
use crate::{BadRecords, TraceError, TraceOp, TraceRecord};
use std::io::{BufRead, Read};

/// The magic without its version byte.
pub(crate) const MAGIC: u32 = 0x6561_7400;
const EVENT: usize = 48;
const TA_ISSUE: u32 = 7;
const TA_COMPLETE: u32 = 8;
const TC_SHIFT: u32 = 16;
const TC_WRITE: u32 = 1 << 1;
const TC_FLUSH: u32 = 1 << 2;
const TC_NOTIFY: u32 = 1 << 10;
const TC_DISCARD: u32 = 1 << 13;

/// The byte order a file's first four bytes announce: Some(true) little-endian, Some(false) big-endian.
pub(crate) fn byte_order(first: &[u8]) -> Option<bool> {
    let b: [u8; 4] = first.get(..4)?.try_into().ok()?;
    if u32::from_le_bytes(b) & 0xffff_ff00 == MAGIC {
        Some(true)
    } else if u32::from_be_bytes(b) & 0xffff_ff00 == MAGIC {
        Some(false)
    } else {
        None
    }
}

pub(crate) struct Blktrace<R: Read> {
    input: R,
    path: String,
    little: bool,
    event: [u8; EVENT],
    index: u64,
    origin: TimeOrigin,
    targets: Targets,
    passed_over: u64,
    pending: Pending,
    ended: bool,
}

impl<R: Read> Blktrace<R> {
    pub(crate) fn new(input: R, path: &str, little: bool) -> Self {
        Blktrace {
            input,
            path: path.to_string(),
            little,
            event: [0; EVENT],
            index: 0,
            origin: TimeOrigin::default(),
            targets: Targets::default(),
            passed_over: 0,
            pending: Pending::default(),
            ended: false,
        }
    }

    /// `N` bytes of the event at `at`, in little-endian order whatever the trace's byte order.
    fn le_bytes_at<const N: usize>(&self, at: usize) -> [u8; N] {
        let mut b: [u8; N] = self.event[at..at + N].try_into().expect("a field inside the event");
        if !self.little {
            b.reverse();
        }
        b
    }
    fn u32_at(&self, at: usize) -> u32 {
        u32::from_le_bytes(self.le_bytes_at(at))
    }
    fn u64_at(&self, at: usize) -> u64 {
        u64::from_le_bytes(self.le_bytes_at(at))
    }
    fn u16_at(&self, at: usize) -> u16 {
        u16::from_le_bytes(self.le_bytes_at(at))
    }

    /// Skips the event's payload.
    fn skip_pdu(&mut self) -> Result<u64, TraceError> {
        let len = self.u16_at(46) as u64;
        std::io::copy(&mut (&mut self.input).take(len), &mut std::io::sink())
            .map_err(|e| TraceError::io(&self.path, e))
    }

    /// Takes the event in `self.event` (offsets of `struct blk_io_trace`: time 8, sector 16, bytes 24,
    /// action 28, device 36, error 44, pdu_len 46): an issue is held until its completion, a completion
    /// completes it. False for every other event (passed over).
    fn take(&mut self) -> Result<bool, String> {
        let action = self.u32_at(28);
        let (code, category) = (action & 0xffff, action >> TC_SHIFT);
        if (code != TA_ISSUE && code != TA_COMPLETE) || category & TC_NOTIFY != 0 {
            return Ok(false);
        }
        let dev = self.u32_at(36);
        let target = self.targets.id(&format!("{},{}", dev >> 20, dev & 0xf_ffff))?;
        let sector = self.u64_at(16);
        let time = self.origin.rel(self.u64_at(8));
        if code == TA_COMPLETE {
            self.pending.complete(target, sector, time, self.u16_at(44) as i32);
            return Ok(false);
        }
        let bytes = self.u32_at(24);
        let offset = sector.checked_mul(512).ok_or(format!("sector {sector} is past 2^64 bytes"))?;
        self.pending.issue(TraceRecord::new(time, kind(category, bytes), target, offset, bytes), sector);
        Ok(true)
    }

    /// Reads the next event into `self.event` and skips its payload; false at the end (or where the
    /// stream can no longer be framed, said in `bad`).
    fn read_event(&mut self, bad: &mut BadRecords) -> Result<bool, TraceError> {
        let n = read_some(&mut self.input, &mut self.event).map_err(|e| TraceError::io(&self.path, e))?;
        let index = self.index;
        self.index += 1;
        if n == 0 {
            return Ok(false);
        }
        if n < EVENT {
            bad.push(index, format!("the last event is cut short: {n} of {EVENT} bytes"));
            return Ok(false);
        }
        if self.u32_at(0) & 0xffff_ff00 != MAGIC {
            let found = self.u32_at(0);
            bad.push(index, format!("no blktrace magic (found {found:#010x}): the rest of the file cannot be framed and is not read"));
            return Ok(false);
        }
        let pdu = self.u16_at(46) as u64;
        if self.skip_pdu()? < pdu {
            bad.push(index, format!("the payload of {pdu} bytes is cut short"));
            return Ok(false);
        }
        Ok(true)
    }
}

/// The kind of an event from its category bits, as blkparse's RWBS column says it.
fn kind(category: u32, bytes: u32) -> TraceOp {
    if category & TC_DISCARD != 0 {
        TraceOp::Discard
    } else if category & TC_WRITE != 0 {
        TraceOp::Write
    } else if bytes > 0 {
        TraceOp::Read
    } else if category & TC_FLUSH != 0 {
        TraceOp::Flush
    } else {
        TraceOp::Other
    }
}

impl<R: Read> RecordSource for Blktrace<R> {
    fn next_record(&mut self, bad: &mut BadRecords) -> Result<Option<TraceRecord>, TraceError> {
        loop {
            if let Some(r) = self.pending.pop(self.ended) {
                return Ok(Some(r));
            }
            if self.ended {
                return Ok(None);
            }
            if !self.read_event(bad)? {
                self.ended = true;
                continue;
            }
            let index = self.index - 1;
            match self.take() {
                Ok(true) => {}
                Ok(false) => self.passed_over += 1,
                Err(why) => bad.push(index, why),
            }
        }
    }
    fn targets(&self) -> &[String] {
        &self.targets.names
    }
    fn passed_over(&self) -> u64 {
        self.passed_over
    }
}

/// `blkparse`'s default text: `MAJ,MIN CPU SEQ SECONDS PID ACTION RWBS SECTOR + COUNT [PROCESS]`; ops are
/// the `D` (issue) lines, as in the binary. The summary blkparse prints at the end is passed over.
pub(crate) struct Blkparse<R: BufRead> {
    lines: NumberedLines<R>,
    origin: TimeOrigin,
    targets: Targets,
    passed_over: u64,
    in_summary: bool,
    pending: Pending,
    ended: bool,
}

impl<R: BufRead> Blkparse<R> {
    pub(crate) fn new(input: R, path: &str) -> Self {
        Blkparse {
            lines: NumberedLines::new(input, path),
            origin: TimeOrigin::default(),
            targets: Targets::default(),
            passed_over: 0,
            in_summary: false,
            pending: Pending::default(),
            ended: false,
        }
    }
}

fn is_device(word: &str) -> bool {
    word.split_once(',').is_some_and(|(a, b)| a.parse::<u32>().is_ok() && b.parse::<u32>().is_ok())
}

/// Whether a line looks like a blkparse event line.
pub(crate) fn looks_like(line: &str) -> bool {
    let w: Vec<&str> = line.split_whitespace().collect();
    w.len() >= 6 && is_device(w[0]) && w[3].contains('.') && seconds_ns(w[3]).is_some()
}

/// The kind an RWBS column (`R`, `WS`, `FWFS`, `D`, `N`...) says.
pub(crate) fn rwbs_kind(rwbs: &str) -> TraceOp {
    let body = rwbs.trim_start_matches('F');
    if body.starts_with('D') {
        TraceOp::Discard
    } else if body.starts_with('W') {
        TraceOp::Write
    } else if body.starts_with('R') {
        TraceOp::Read
    } else if rwbs.starts_with('F') {
        TraceOp::Flush
    } else {
        TraceOp::Other
    }
}

/// A `D` or `C` line's time, target and sector (0 for requests without one, such as a flush).
fn event_at(w: &[&str], origin: &mut TimeOrigin, targets: &mut Targets) -> Result<(u64, u16, u64), String> {
    let time = origin.rel(seconds_ns(w[3]).ok_or(format!("time {:?} is not seconds", w[3]))?);
    let target = targets.id(w[0])?;
    let sector = match (w.get(7), w.get(8)) {
        (Some(sector), Some(&"+")) => field(sector, "sector")?,
        _ => 0,
    };
    Ok((time, target, sector))
}

/// A `D` line as an op, and its sector.
fn parse_event(
    w: &[&str],
    origin: &mut TimeOrigin,
    targets: &mut Targets,
) -> Result<(TraceRecord, u64), String> {
    let (start, target, sector) = event_at(w, origin, targets)?;
    let rwbs = w.get(6).copied().unwrap_or("");
    let len = match (w.get(8), w.get(9)) {
        (Some(&"+"), Some(count)) => {
            let sectors = field::<u64>(count, "sector count")?;
            length(sectors.checked_mul(512).ok_or(format!("sector count {sectors} is past 2^64 bytes"))?)?
        }
        _ => 0,
    };
    let offset = sector.checked_mul(512).ok_or("sector past 2^64 bytes")?;
    Ok((TraceRecord::new(start, rwbs_kind(rwbs), target, offset, len), sector))
}

/// Takes one event line: a `D` held until its completion, a `C` completing one (its error in brackets at
/// the end); false for other actions.
fn take_line(
    w: &[&str],
    origin: &mut TimeOrigin,
    targets: &mut Targets,
    pending: &mut Pending,
) -> Result<bool, String> {
    match w[5] {
        "D" => {
            let (r, sector) = parse_event(w, origin, targets)?;
            pending.issue(r, sector);
            Ok(true)
        }
        "C" => {
            let (time, target, sector) = event_at(w, origin, targets)?;
            let error = w.last().and_then(|e| e.trim_matches(['[', ']']).parse().ok()).unwrap_or(0);
            pending.complete(target, sector, time, error);
            Ok(false)
        }
        _ => Ok(false),
    }
}

impl<R: BufRead> RecordSource for Blkparse<R> {
    fn next_record(&mut self, bad: &mut BadRecords) -> Result<Option<TraceRecord>, TraceError> {
        loop {
            if let Some(r) = self.pending.pop(self.ended) {
                return Ok(Some(r));
            }
            if self.ended {
                return Ok(None);
            }
            let Some((n, line)) = self.lines.next_line()? else {
                self.ended = true;
                continue;
            };
            let w: Vec<&str> = line.split_whitespace().collect();
            if w.is_empty() || self.in_summary {
                continue;
            }
            if !looks_like(line) {
                if ["CPU", "Total", "Throughput", "Events", "Reads", "Writes"]
                    .iter()
                    .any(|p| w[0].starts_with(p))
                {
                    self.in_summary = true;
                } else {
                    bad.push(n, format!("not a blkparse event line: {}", quote(line)));
                }
                continue;
            }
            match take_line(&w, &mut self.origin, &mut self.targets, &mut self.pending) {
                Ok(true) => {}
                Ok(false) => self.passed_over += 1,
                Err(why) => bad.push(n, why),
            }
        }
    }
    fn targets(&self) -> &[String] {
        &self.targets.names
    }
    fn passed_over(&self) -> u64 {
        self.passed_over
    }
}
