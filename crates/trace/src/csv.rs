//! CSV export of a trace, one line per op, with a header line:
//!
//! ```text
//! start_ns,submit_ns,complete_ns,op,offset,len,result,worker,target
//! 0,1200,86400,read,4096,4096,4096,0,/dev/sdb
//! ```
//!
//! Times are nanoseconds since the trace's origin, an unknown value is an empty field, `op` is read, write,
//! flush, discard or other, and the target's name comes last, whole (it may hold commas: blktrace's `8,0`).
//! iolab reads this CSV back as a trace.

use crate::TraceRecord;
use std::fmt::Write as _;

/// The header line.
pub const HEADER: &str = "start_ns,submit_ns,complete_ns,op,offset,len,result,worker,target";

/// Appends `r` as one CSV line (with its newline) to `out`; `targets` are the trace's target names.
pub fn write_line(out: &mut String, r: &TraceRecord, targets: &[String]) {
    let opt = |v: Option<u64>| v.map(|v| v.to_string()).unwrap_or_default();
    let name = targets.get(r.target as usize).map(String::as_str).unwrap_or("");
    let _ = writeln!(
        out,
        "{},{},{},{},{},{},{},{},{}",
        r.start_ns,
        opt(r.submit_ns),
        opt(r.complete_ns),
        r.op.as_str(),
        r.offset,
        r.len,
        r.result.map(|v| v.to_string()).unwrap_or_default(),
        r.worker,
        name.replace(['\n', '\r'], " ")
    );
}
