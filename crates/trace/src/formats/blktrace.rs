//! blktrace's binary output (`blktrace -d DEV -o NAME`, the per-CPU files concatenated, or `blkparse -d`'s
//! dump) and `blkparse`'s default text.
//!
//! A binary event is `struct blk_io_trace` (48 bytes: magic, sequence, time ns, sector, bytes, action, pid,
//! device, cpu, error, pdu_len) and `pdu_len` bytes after it, in the byte order of the machine that traced
//! (told by the magic 0x65617400 | version). An op is an **issue** event (`D`: the request handed to the
//! driver, after the block layer merged and split what was queued), so a curve is the device's view; queue
//! (`Q`), completion (`C`) and every other event, and notify events, are passed over. Response times are not
//! matched from completions.

use super::{field, length, quote, seconds_ns, Lines, Origin, Source, Targets};
use crate::binary::read_some;
use crate::{BadRecords, TraceError, TraceOp, TraceRecord};
use std::io::{BufRead, Read};

/// The magic without its version byte.
pub(crate) const MAGIC: u32 = 0x6561_7400;
const EVENT: usize = 48;
const TA_ISSUE: u32 = 7;
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
    origin: Origin,
    targets: Targets,
    passed_over: u64,
    lost: bool,
}

impl<R: Read> Blktrace<R> {
    pub(crate) fn new(input: R, path: &str, little: bool) -> Self {
        Blktrace {
            input,
            path: path.to_string(),
            little,
            event: [0; EVENT],
            index: 0,
            origin: Origin::default(),
            targets: Targets::default(),
            passed_over: 0,
            lost: false,
        }
    }

    fn u32_at(&self, at: usize) -> u32 {
        let b: [u8; 4] = self.event[at..at + 4].try_into().expect("4 bytes");
        if self.little {
            u32::from_le_bytes(b)
        } else {
            u32::from_be_bytes(b)
        }
    }
    fn u64_at(&self, at: usize) -> u64 {
        let b: [u8; 8] = self.event[at..at + 8].try_into().expect("8 bytes");
        if self.little {
            u64::from_le_bytes(b)
        } else {
            u64::from_be_bytes(b)
        }
    }
    fn u16_at(&self, at: usize) -> u16 {
        let b: [u8; 2] = self.event[at..at + 2].try_into().expect("2 bytes");
        if self.little {
            u16::from_le_bytes(b)
        } else {
            u16::from_be_bytes(b)
        }
    }

    /// Skips the event's payload.
    fn skip_pdu(&mut self) -> Result<u64, TraceError> {
        let len = self.u16_at(46) as u64;
        std::io::copy(&mut (&mut self.input).take(len), &mut std::io::sink())
            .map_err(|e| TraceError::io(&self.path, e))
    }

    /// The event in `self.event` as an op, if it is an issue (offsets of `struct blk_io_trace`: time 8,
    /// sector 16, bytes 24, action 28, device 36, error 44, pdu_len 46).
    fn op(&mut self) -> Result<Option<TraceRecord>, String> {
        let action = self.u32_at(28);
        let category = action >> TC_SHIFT;
        if action & 0xffff != TA_ISSUE || category & TC_NOTIFY != 0 {
            return Ok(None);
        }
        let bytes = self.u32_at(24);
        let op = kind(category, bytes);
        let dev = self.u32_at(36);
        let target = self.targets.id(&format!("{},{}", dev >> 20, dev & 0xf_ffff))?;
        let sector = self.u64_at(16);
        let offset = sector.checked_mul(512).ok_or(format!("sector {sector} is past 2^64 bytes"))?;
        let start = self.origin.rel(self.u64_at(8));
        Ok(Some(TraceRecord::new(start, op, target, offset, bytes)))
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

impl<R: Read> Source for Blktrace<R> {
    fn next_record(&mut self, bad: &mut BadRecords) -> Result<Option<TraceRecord>, TraceError> {
        while !self.lost {
            let n = read_some(&mut self.input, &mut self.event).map_err(|e| TraceError::io(&self.path, e))?;
            let index = self.index;
            self.index += 1;
            if n == 0 {
                return Ok(None);
            }
            if n < EVENT {
                bad.push(index, format!("the last event is cut short: {n} of {EVENT} bytes"));
                return Ok(None);
            }
            if self.u32_at(0) & 0xffff_ff00 != MAGIC {
                bad.push(index, format!("no blktrace magic (found {:#010x}): the rest of the file cannot be framed and is not read", self.u32_at(0)));
                self.lost = true;
                return Ok(None);
            }
            let op = self.op();
            let pdu = self.u16_at(46) as u64;
            if self.skip_pdu()? < pdu {
                bad.push(index, format!("the payload of {pdu} bytes is cut short"));
                return Ok(None);
            }
            match op {
                Ok(Some(r)) => return Ok(Some(r)),
                Ok(None) => self.passed_over += 1,
                Err(why) => bad.push(index, why),
            }
        }
        Ok(None)
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
    lines: Lines<R>,
    origin: Origin,
    targets: Targets,
    passed_over: u64,
    in_summary: bool,
}

impl<R: BufRead> Blkparse<R> {
    pub(crate) fn new(input: R, path: &str) -> Self {
        Blkparse {
            lines: Lines::new(input, path),
            origin: Origin::default(),
            targets: Targets::default(),
            passed_over: 0,
            in_summary: false,
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

fn parse_event(w: &[&str], origin: &mut Origin, targets: &mut Targets) -> Result<TraceRecord, String> {
    let start = origin.rel(seconds_ns(w[3]).ok_or(format!("time {:?} is not seconds", w[3]))?);
    let rwbs = w.get(6).copied().unwrap_or("");
    let target = targets.id(w[0])?;
    let (offset, len) = match (w.get(7), w.get(8), w.get(9)) {
        (Some(sector), Some(&"+"), Some(count)) => {
            let sector: u64 = field(sector, "sector")?;
            let count: u64 = field(count, "sector count")?;
            (sector.checked_mul(512).ok_or("sector past 2^64 bytes")?, length(count.saturating_mul(512))?)
        }
        _ => (0, 0),
    };
    Ok(TraceRecord::new(start, rwbs_kind(rwbs), target, offset, len))
}

impl<R: BufRead> Source for Blkparse<R> {
    fn next_record(&mut self, bad: &mut BadRecords) -> Result<Option<TraceRecord>, TraceError> {
        while let Some((n, line)) = self.lines.next_line()? {
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
            if w[5] != "D" {
                self.passed_over += 1;
                continue;
            }
            match parse_event(&w, &mut self.origin, &mut self.targets) {
                Ok(r) => return Ok(Some(r)),
                Err(why) => bad.push(n, why),
            }
        }
        Ok(None)
    }
    fn targets(&self) -> &[String] {
        &self.targets.names
    }
    fn passed_over(&self) -> u64 {
        self.passed_over
    }
}
