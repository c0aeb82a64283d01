//! Trace files as the trace commands (`iolab trace`, `iolab mrc`) open them: errors as the user's (exit 2),
//! and bad records said on stderr with their line or record numbers.

use crate::exit::usage;
use anyhow::Result;
use iolab_report::format_count;
use iolab_trace::Trace;

/// Opens a trace; what cannot be opened or recognised is the user's error.
pub fn open(file: &str) -> Result<Trace> {
    iolab_trace::open(file).map_err(usage)
}

/// Says on stderr how many bad records `t` had, the first few with their line or record numbers.
pub fn report_bad(t: &Trace, file: &str) {
    if t.bad.count == 0 {
        return;
    }
    let unit = if matches!(t.format(), iolab_trace::Format::Iolab | iolab_trace::Format::Blktrace(_)) {
        "record"
    } else {
        "line"
    };
    eprintln!("iolab: {file}: {} bad records, passed over:", format_count(t.bad.count));
    for b in t.bad.first.iter().take(10) {
        eprintln!("  {unit} {}: {}", b.line_or_record, b.reason);
    }
    if t.bad.count > 10 {
        eprintln!("  ... (`iolab trace show {file}` lists up to {})", iolab_trace::BadRecords::KEPT);
    }
}
