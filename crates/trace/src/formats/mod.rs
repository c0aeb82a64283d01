//! Readers of the trace formats users have. Each reads its input as a stream, one record at a time; a record
//! that does not parse goes to the caller's [`BadRecords`] with its line or record number.

pub(crate) mod blktrace;
pub(crate) mod cloudphysics;
pub(crate) mod fio_log;
pub(crate) mod iolab_csv;
pub(crate) mod msr;

use crate::{BadRecords, TraceError, TraceRecord};
use foldhash::HashMap;
use std::io::{BufRead, Read};

/// A stream of records in one format.
pub(crate) trait RecordSource {
    /// The next good record; bad ones are put in `bad` and skipped.
    fn next_record(&mut self, bad: &mut BadRecords) -> Result<Option<TraceRecord>, TraceError>;
    /// The next good records, up to `out`'s spare capacity (at least one), appended to `out`; none at the end.
    fn next_records(&mut self, bad: &mut BadRecords, out: &mut Vec<TraceRecord>) -> Result<(), TraceError> {
        let room = (out.capacity() - out.len()).max(1);
        for _ in 0..room {
            match self.next_record(bad)? {
                Some(r) => out.push(r),
                None => break,
            }
        }
        Ok(())
    }
    /// The target names met so far (a record's `target` indexes them).
    fn targets(&self) -> &[String];
    /// Entries of the format that are not ops and were passed over (fio's file actions, blktrace events other
    /// than issues, blkparse's summary).
    fn passed_over(&self) -> u64;
}

/// Longest line of a text trace: far above any format's record, and what a line can make allocate.
pub(crate) const MAX_LINE_BYTES: usize = 64 << 10;

/// Lines of a text input, numbered from 1, with invalid UTF-8 replaced (so such a line is reported as bad,
/// not an I/O error).
pub(crate) struct NumberedLines<R: BufRead> {
    input: R,
    path: String,
    raw: Vec<u8>,
    line: String,
    number: u64,
}

impl<R: BufRead> NumberedLines<R> {
    pub(crate) fn new(input: R, path: &str) -> NumberedLines<R> {
        NumberedLines { input, path: path.to_string(), raw: Vec::new(), line: String::new(), number: 0 }
    }

    /// The next line without its line end, and its number.
    pub(crate) fn next_line(&mut self) -> Result<Option<(u64, &str)>, TraceError> {
        self.raw.clear();
        let mut bounded = (&mut self.input).take(MAX_LINE_BYTES as u64 + 1);
        let n = bounded.read_until(b'\n', &mut self.raw).map_err(|e| TraceError::io(&self.path, e))?;
        if n == 0 {
            return Ok(None);
        }
        self.number += 1;
        if n > MAX_LINE_BYTES {
            let why = format!("line {} is longer than {MAX_LINE_BYTES} bytes: not a text trace", self.number);
            return Err(TraceError::Malformed { path: self.path.clone(), why });
        }
        self.line.clear();
        self.line.push_str(&String::from_utf8_lossy(&self.raw));
        Ok(Some((self.number, self.line.trim_end_matches(['\n', '\r']))))
    }
}

/// Target names in order of first appearance.
#[derive(Default)]
pub(crate) struct Targets {
    pub(crate) names: Vec<String>,
    index: HashMap<String, u16>,
}

impl Targets {
    /// The index of `name`, added if new; an error past 65,536 targets.
    pub(crate) fn id(&mut self, name: &str) -> Result<u16, String> {
        if let Some(&i) = self.index.get(name) {
            return Ok(i);
        }
        if name.len() > crate::binary::MAX_NAME_BYTES {
            let max = crate::binary::MAX_NAME_BYTES;
            return Err(format!(
                "target name of {} bytes; expected at most {max} ({:.40}...)",
                name.len(),
                name
            ));
        }
        let i =
            u16::try_from(self.names.len()).map_err(|_| format!("more than 65,536 targets (at {name:?})"))?;
        self.names.push(name.to_string());
        self.index.insert(name.to_string(), i);
        Ok(i)
    }
}

/// Times relative to the first record's: foreign traces start at 0.
#[derive(Default)]
pub(crate) struct TimeOrigin(Option<u64>);

impl TimeOrigin {
    /// `t` (in ns) relative to the first time seen; a time before it is 0.
    pub(crate) fn rel(&mut self, t: u64) -> u64 {
        t.saturating_sub(*self.0.get_or_insert(t))
    }
}

/// Parses field `name` of a record, quoting it when it does not parse.
pub(crate) fn field<T: std::str::FromStr>(s: &str, name: &str) -> Result<T, String> {
    s.trim().parse().map_err(|_| format!("{name} {:?} is not a number in range", s.trim()))
}

/// Seconds with an optional fraction (`12.000974`) as nanoseconds.
pub(crate) fn seconds_ns(s: &str) -> Option<u64> {
    let (whole, frac) = s.split_once('.').unwrap_or((s, ""));
    if frac.len() > 9 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let whole: u64 = whole.parse().ok()?;
    let frac_ns: u64 =
        if frac.is_empty() { 0 } else { frac.parse::<u64>().ok()? * 10u64.pow(9 - frac.len() as u32) };
    whole.checked_mul(1_000_000_000)?.checked_add(frac_ns)
}

/// A length that must fit the record's 32 bits.
pub(crate) fn length(v: u64) -> Result<u32, String> {
    u32::try_from(v).map_err(|_| format!("length {v} is over 4 GiB"))
}

/// `text` cut to at most 60 characters for a message.
pub(crate) fn quote(text: &str) -> String {
    let cut: String = text.chars().take(60).collect();
    if cut.len() < text.len() {
        format!("{cut:?}...")
    } else {
        format!("{cut:?}")
    }
}

/// Issued ops waiting for their completion (blktrace's and blkparse's `C` events), given out in issue order:
/// the oldest once it is complete, or once more than [`Pending::WINDOW`] wait behind it (it then stays
/// without a completion time), or at the end of the input.
#[derive(Default)]
pub(crate) struct Pending {
    queue: std::collections::VecDeque<(TraceRecord, u64)>,
    first_seq: u64,
    open: HashMap<(u16, u64), u64>,
}

impl Pending {
    /// Ops held at most while the oldest waits for its completion.
    pub(crate) const WINDOW: usize = 4096;

    /// An op issued at `sector`.
    pub(crate) fn issue(&mut self, r: TraceRecord, sector: u64) {
        let seq = self.first_seq + self.queue.len() as u64;
        self.open.insert((r.target, sector), seq);
        self.queue.push_back((r, sector));
    }

    /// The completion of the op issued last at `sector` of `target`: its time and error (positive errno).
    pub(crate) fn complete(&mut self, target: u16, sector: u64, time_ns: u64, error: i32) {
        let Some(seq) = self.open.remove(&(target, sector)) else { return };
        let Some((r, _)) = seq.checked_sub(self.first_seq).and_then(|i| self.queue.get_mut(i as usize))
        else {
            return;
        };
        r.complete_ns = Some(time_ns);
        r.result = Some(if error != 0 { -error.abs() } else { r.len as i32 });
    }

    /// The oldest op if it may go (complete, window full, or `end` of input).
    pub(crate) fn pop(&mut self, end: bool) -> Option<TraceRecord> {
        let (front, _) = self.queue.front()?;
        if !(end || front.complete_ns.is_some() || self.queue.len() > Self::WINDOW) {
            return None;
        }
        let (r, sector) = self.queue.pop_front()?;
        if self.open.get(&(r.target, sector)) == Some(&self.first_seq) {
            self.open.remove(&(r.target, sector));
        }
        self.first_seq += 1;
        Some(r)
    }
}
