//! fio's iologs (`write_iolog`): a first line `fio version 2 iolog` or `fio version 3 iolog`, then one action a
//! line: `FILE ACTION [OFFSET LENGTH]` (v2) or `TIME_US FILE ACTION [OFFSET LENGTH]` (v3, microseconds since
//! the start). Actions `read`, `write`, `trim`, `sync` and `datasync` are ops; `add`, `open` and `close` are
//! passed over. v2's `wait N` holds the next op until N milliseconds after the job started, as fio 3.33 runs it
//! (iolog.c sleeps `(N - mtime_since_genesis()) * 1000` us when N is ahead, not at all when it is past); fio's
//! HOWTO says "wait N microseconds", which is not what fio does. docs/TRACES.md has the difference.

use super::{field, length, quote, NumberedLines, RecordSource, Targets};
use crate::{BadRecords, TraceError, TraceOp, TraceRecord};
use std::io::BufRead;

pub(crate) struct FioLog<R: BufRead> {
    lines: NumberedLines<R>,
    state: State,
    passed_over: u64,
}

struct State {
    version: u8,
    time_us: u64,
    targets: Targets,
}

/// The version a first line announces.
pub(crate) fn version(first_line: &str) -> Option<u8> {
    match first_line.trim() {
        "fio version 2 iolog" => Some(2),
        "fio version 3 iolog" => Some(3),
        _ => None,
    }
}

impl<R: BufRead> FioLog<R> {
    pub(crate) fn new(input: R, path: &str, version: u8) -> Self {
        FioLog {
            lines: NumberedLines::new(input, path),
            state: State { version, time_us: 0, targets: Targets::default() },
            passed_over: 0,
        }
    }
}

impl State {
    /// v2's `wait MS`: the clock moves to MS milliseconds since the start, never backwards.
    fn wait_until(&mut self, ms: &str) -> Result<(), String> {
        let ms: u64 = field(ms, "wait time (milliseconds since the start)")?;
        let us = ms.checked_mul(1000).ok_or(format!("wait time {ms} ms is past 2^64 us"))?;
        self.time_us = self.time_us.max(us);
        Ok(())
    }

    /// One line: `Ok(None)` for an action that is no op.
    fn parse(&mut self, line: &str) -> Result<Option<TraceRecord>, String> {
        let mut words: Vec<&str> = line.split_whitespace().collect();
        if self.version == 3 {
            let t: u64 = field(words.first().copied().unwrap_or(""), "time")?;
            self.time_us = t;
            words.remove(0);
        }
        let (file, action) = match words[..] {
            [file, action, ..] => (file, action),
            _ => {
                return Err(format!(
                    "expected {}FILE ACTION [OFFSET LENGTH]: {}",
                    if self.version == 3 { "TIME " } else { "" },
                    quote(line)
                ))
            }
        };
        let op = match action {
            "read" => TraceOp::Read,
            "write" => TraceOp::Write,
            "trim" => TraceOp::Discard,
            "sync" | "datasync" => TraceOp::Flush,
            "add" | "open" | "close" => return Ok(None),
            "wait" if self.version == 2 => {
                self.wait_until(words.get(2).copied().unwrap_or(""))?;
                return Ok(None);
            }
            other => {
                return Err(format!(
                    "action {other:?} is none of read, write, trim, sync, datasync, add, open, close, wait"
                ))
            }
        };
        let target = self.targets.id(file)?;
        let start =
            self.time_us.checked_mul(1000).ok_or(format!("time {} us is out of range", self.time_us))?;
        if op == TraceOp::Flush {
            return Ok(Some(TraceRecord::new(start, op, target, 0, 0)));
        }
        let [_, _, off, len] = words[..] else {
            return Err(format!("{action} takes OFFSET LENGTH: {}", quote(line)));
        };
        Ok(Some(TraceRecord::new(start, op, target, field(off, "offset")?, length(field(len, "length")?)?)))
    }
}

impl<R: BufRead> RecordSource for FioLog<R> {
    fn next_record(&mut self, bad: &mut BadRecords) -> Result<Option<TraceRecord>, TraceError> {
        loop {
            let Some((n, line)) = self.lines.next_line()? else { return Ok(None) };
            if n == 1 || line.trim().is_empty() {
                continue;
            }
            match self.state.parse(line) {
                Ok(Some(r)) => return Ok(Some(r)),
                Ok(None) => self.passed_over += 1,
                Err(why) => bad.push(n, why),
            }
        }
    }
    fn targets(&self) -> &[String] {
        &self.state.targets.names
    }
    fn passed_over(&self) -> u64 {
        self.passed_over
    }
}
