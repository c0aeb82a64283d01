//! The CloudPhysics/vscsi CSV: `version,time,op,size,lbn` (an optional header line of those names). `time` is
//! taken as whole seconds (as in the CloudPhysics sample libCacheSim ships), `op` is the SCSI opcode in hex,
//! `size` bytes, `lbn` the starting 512-byte sector.

use super::{field, length, quote, NumberedLines, RecordSource, TimeOrigin};
use crate::{BadRecords, TraceError, TraceOp, TraceRecord};
use std::io::BufRead;

/// The header line.
pub(crate) const HEADER: &str = "version,time,op,size,lbn";

pub(crate) struct CloudPhysics<R: BufRead> {
    lines: NumberedLines<R>,
    origin: TimeOrigin,
    targets: Vec<String>,
}

impl<R: BufRead> CloudPhysics<R> {
    pub(crate) fn new(input: R, path: &str) -> Self {
        CloudPhysics {
            lines: NumberedLines::new(input, path),
            origin: TimeOrigin::default(),
            targets: vec![path.to_string()],
        }
    }
}

/// The kind of a SCSI opcode: READ(6/10/12/16), WRITE(6/10/12/16), SYNCHRONIZE CACHE(10/16), UNMAP.
pub(crate) fn scsi_op(code: u8) -> TraceOp {
    match code {
        0x08 | 0x28 | 0xa8 | 0x88 => TraceOp::Read,
        0x0a | 0x2a | 0xaa | 0x8a => TraceOp::Write,
        0x35 | 0x91 => TraceOp::Flush,
        0x42 => TraceOp::Discard,
        _ => TraceOp::Other,
    }
}

/// Whether a line looks like a record of this format (five fields, a hex opcode in the third).
pub(crate) fn looks_like(line: &str) -> bool {
    let f: Vec<&str> = line.split(',').collect();
    line.trim().eq_ignore_ascii_case(HEADER)
        || (f.len() == 5 && u8::from_str_radix(f[2].trim(), 16).is_ok() && f[4].trim().parse::<u64>().is_ok())
}

fn parse(line: &str, origin: &mut TimeOrigin) -> Result<TraceRecord, String> {
    let f: Vec<&str> = line.split(',').collect();
    if f.len() != 5 {
        return Err(format!("{} fields, expected 5 (version,time,op,size,lbn): {}", f.len(), quote(line)));
    }
    let _version: u32 = field(f[0], "version")?;
    let secs: u64 = field(f[1], "time")?;
    let code = u8::from_str_radix(f[2].trim(), 16)
        .map_err(|_| format!("op {:?} is not a hex SCSI opcode", f[2].trim()))?;
    let size: u64 = field(f[3], "size")?;
    let lbn: u64 = field(f[4], "lbn")?;
    let offset = lbn.checked_mul(512).ok_or(format!("lbn {lbn} is past 2^64 bytes"))?;
    let start = origin.rel(secs.checked_mul(1_000_000_000).ok_or(format!("time {secs} is out of range"))?);
    Ok(TraceRecord::new(start, scsi_op(code), 0, offset, length(size)?))
}

impl<R: BufRead> RecordSource for CloudPhysics<R> {
    fn next_record(&mut self, bad: &mut BadRecords) -> Result<Option<TraceRecord>, TraceError> {
        while let Some((n, line)) = self.lines.next_line()? {
            if line.trim().is_empty() || (n == 1 && line.trim().eq_ignore_ascii_case(HEADER)) {
                continue;
            }
            match parse(line, &mut self.origin) {
                Ok(r) => return Ok(Some(r)),
                Err(why) => bad.push(n, why),
            }
        }
        Ok(None)
    }
    fn targets(&self) -> &[String] {
        &self.targets
    }
    fn passed_over(&self) -> u64 {
        0
    }
}
