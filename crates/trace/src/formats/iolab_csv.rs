//! iolab's own CSV export ([`crate::csv`]) read back.

use super::{field, quote, NumberedLines, RecordSource, Targets};
use crate::csv::HEADER;
use crate::{BadRecords, TraceError, TraceOp, TraceRecord};
use std::io::BufRead;

pub(crate) struct IolabCsv<R: BufRead> {
    lines: NumberedLines<R>,
    targets: Targets,
}

impl<R: BufRead> IolabCsv<R> {
    pub(crate) fn new(input: R, path: &str) -> Self {
        IolabCsv { lines: NumberedLines::new(input, path), targets: Targets::default() }
    }
}

/// Whether the first line is the export's header.
pub(crate) fn looks_like(first_line: &str) -> bool {
    first_line.trim() == HEADER
}

fn optional<T: std::str::FromStr>(s: &str, name: &str) -> Result<Option<T>, String> {
    if s.is_empty() {
        Ok(None)
    } else {
        field(s, name).map(Some)
    }
}

fn parse(line: &str, targets: &mut Targets) -> Result<TraceRecord, String> {
    let f: Vec<&str> = line.splitn(9, ',').collect();
    if f.len() != 9 {
        return Err(format!("{} fields, expected 9 ({HEADER}): {}", f.len(), quote(line)));
    }
    let op = TraceOp::from_name(f[3])
        .ok_or(format!("op {:?} is none of read, write, flush, discard, other", f[3]))?;
    Ok(TraceRecord {
        start_ns: field(f[0], "start_ns")?,
        submit_ns: optional(f[1], "submit_ns")?,
        complete_ns: optional(f[2], "complete_ns")?,
        op,
        offset: field(f[4], "offset")?,
        len: field(f[5], "len")?,
        result: optional(f[6], "result")?,
        worker: field(f[7], "worker")?,
        target: targets.id(f[8])?,
    })
}

impl<R: BufRead> RecordSource for IolabCsv<R> {
    fn next_record(&mut self, bad: &mut BadRecords) -> Result<Option<TraceRecord>, TraceError> {
        while let Some((n, line)) = self.lines.next_line()? {
            if n == 1 || line.trim().is_empty() {
                continue;
            }
            match parse(line, &mut self.targets) {
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
        0
    }
}
