//! The SNIA/MSR Cambridge CSV: `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime` (usually without
//! a header line). Timestamps are Windows file times (100 ns ticks), response times 100 ns ticks, offsets and
//! sizes bytes; a target is `HOSTNAME/DISK`.

use super::{field, length, quote, NumberedLines, RecordSource, Targets, TimeOrigin};
use crate::{BadRecords, TraceError, TraceOp, TraceRecord};
use std::io::BufRead;

/// The header line some copies carry.
pub(crate) const HEADER: &str = "Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime";

pub(crate) struct Msr<R: BufRead> {
    lines: NumberedLines<R>,
    origin: TimeOrigin,
    targets: Targets,
}

impl<R: BufRead> Msr<R> {
    pub(crate) fn new(input: R, path: &str) -> Self {
        Msr {
            lines: NumberedLines::new(input, path),
            origin: TimeOrigin::default(),
            targets: Targets::default(),
        }
    }
}

/// Whether a line looks like a record of this format (seven fields, Read or Write fourth).
pub(crate) fn looks_like(line: &str) -> bool {
    let f: Vec<&str> = line.split(',').collect();
    line.trim().eq_ignore_ascii_case(HEADER)
        || (f.len() == 7 && ["read", "write"].contains(&f[3].trim().to_ascii_lowercase().as_str()))
}

fn parse(line: &str, origin: &mut TimeOrigin, targets: &mut Targets) -> Result<TraceRecord, String> {
    let f: Vec<&str> = line.split(',').collect();
    if f.len() != 7 {
        return Err(format!("{} fields, expected 7 ({HEADER}): {}", f.len(), quote(line)));
    }
    let ticks: u64 = field(f[0], "Timestamp")?;
    let disk: u32 = field(f[2], "DiskNumber")?;
    let op = match f[3].trim().to_ascii_lowercase().as_str() {
        "read" => TraceOp::Read,
        "write" => TraceOp::Write,
        _ => return Err(format!("Type {:?} is neither Read nor Write", f[3].trim())),
    };
    let offset: u64 = field(f[4], "Offset")?;
    let size: u64 = field(f[5], "Size")?;
    let response: u64 = field(f[6], "ResponseTime")?;
    let start = origin.rel(ticks.checked_mul(100).ok_or(format!("Timestamp {ticks} is out of range"))?);
    let target = targets.id(&format!("{}/{disk}", f[1].trim()))?;
    let mut r = TraceRecord::new(start, op, target, offset, length(size)?);
    r.complete_ns = response.checked_mul(100).and_then(|d| start.checked_add(d));
    Ok(r)
}

impl<R: BufRead> RecordSource for Msr<R> {
    fn next_record(&mut self, bad: &mut BadRecords) -> Result<Option<TraceRecord>, TraceError> {
        while let Some((n, line)) = self.lines.next_line()? {
            if line.trim().is_empty() || (n == 1 && line.trim().eq_ignore_ascii_case(HEADER)) {
                continue;
            }
            match parse(line, &mut self.origin, &mut self.targets) {
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
