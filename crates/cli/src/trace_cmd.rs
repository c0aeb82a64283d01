//! `iolab trace show|convert|capture`: a trace's summary and first records, a trace in iolab's binary format
//! or as CSV, and a live device's I/O recorded. Reading, writing and capturing are `iolab-trace`'s; here are
//! the flags, the write gate and the messages.

use crate::args::{CaptureKeys, OutputFormat, SomeKeys, TraceArgs, TraceWhat};
use crate::exit::{outputs_not_written, usage, ExitStatus};
use crate::output::{print, write_all};
use anyhow::Result;
use clap::ValueEnum;
use iolab_device::{Access, WriteGate};
use iolab_report::{format_bytes, format_count, format_duration_ns};
use iolab_trace::{Trace, TraceError, TraceOp, TraceRecord, TraceWriter};
use std::fmt::Write as _;

/// Runs `iolab trace`.
pub fn trace(args: &TraceArgs) -> Result<ExitStatus> {
    match &args.what {
        TraceWhat::Show { file, limit } => show(file, limit),
        TraceWhat::Convert { input, output, format } => convert(input, output, *format),
        TraceWhat::Capture { device, keys, output } => capture(device, keys, output),
    }
}

/// The next record; a read error midway is the environment's (exit 2 with the file named).
fn next(t: &mut Trace) -> Result<Option<TraceRecord>> {
    t.next_record().map_err(|e: TraceError| usage(e))
}

#[derive(Default)]
struct Totals {
    ops: [u64; 5],
    bytes: [u64; 5],
    first_ns: Option<u64>,
    last_ns: u64,
}

fn show(file: &str, limit: &str) -> Result<ExitStatus> {
    let limit: usize = limit
        .trim()
        .parse()
        .map_err(|_| usage(format!("--limit '{limit}': expected a count of records, e.g. 20")))?;
    let mut t = crate::trace_file::open(file)?;
    let mut listed = String::new();
    let mut totals = Totals::default();
    let mut n = 0usize;
    while let Some(r) = next(&mut t)? {
        if n < limit {
            iolab_trace::csv::write_line(&mut listed, &r, t.targets());
        }
        n += 1;
        totals.ops[r.op as usize] += 1;
        totals.bytes[r.op as usize] += r.len as u64;
        totals.first_ns.get_or_insert(r.start_ns);
        totals.last_ns = totals.last_ns.max(r.start_ns);
    }
    print(&show_text(&t, file, &totals, &listed))?;
    Ok(ExitStatus::Ok)
}

fn show_text(t: &Trace, file: &str, totals: &Totals, listed: &str) -> String {
    let header = t.header();
    let mut out = format!("trace   {file}  {}", t.format().name());
    if t.format() == iolab_trace::Format::Iolab {
        let _ = write!(out, ", clock {}", header.clock.as_str());
    }
    let span = totals.last_ns - totals.first_ns.unwrap_or(0);
    let all: u64 = totals.ops.iter().sum();
    let _ = writeln!(out, "\nrecords {} over {}", format_count(all), format_duration_ns(span as f64));
    let _ = writeln!(out, "targets {}", header.targets.join(", "));
    for op in TraceOp::ALL.iter().filter(|op| totals.ops[**op as usize] > 0) {
        let i = *op as usize;
        let _ = writeln!(
            out,
            "  {:<8}{:>14} ops {:>12}",
            op.as_str(),
            format_count(totals.ops[i]),
            format_bytes(totals.bytes[i])
        );
    }
    if t.passed_over() > 0 {
        let _ = writeln!(
            out,
            "passed over {} entries that are not ops (file actions, events other than issues)",
            format_count(t.passed_over())
        );
    }
    let _ = writeln!(out, "bad     {} records", format_count(t.bad.count));
    for b in &t.bad.first {
        let _ = writeln!(out, "  {b}");
    }
    if !listed.is_empty() {
        let _ = write!(out, "\n{}\n{listed}", iolab_trace::csv::HEADER);
    }
    out
}

fn convert(input: &str, output: &str, format: Option<OutputFormat>) -> Result<ExitStatus> {
    let csv = match format {
        Some(OutputFormat::Csv) => true,
        Some(OutputFormat::Iolab) => false,
        Some(other) => {
            let name = other.to_possible_value().map_or(String::new(), |v| v.get_name().to_string());
            return Err(usage(format!("invalid value '{name}' for '--format': expected csv or iolab")));
        }
        None => output == "-" || output.ends_with(".csv"),
    };
    if !csv && output == "-" {
        return Err(usage("-o -: a binary trace is not written to stdout; give a file, or --format csv"));
    }
    let mut gate = WriteGate::new();
    gate.claim("the trace to convert", input, Access::Reads).map_err(usage)?;
    let out = gate.output("-o", output).map_err(usage)?;
    let mut t = crate::trace_file::open(input)?;
    if csv {
        let text = to_csv(&mut t)?;
        crate::trace_file::report_bad(&t, input);
        write_all(vec![(&out, Ok(text))])?;
    } else {
        let bytes = to_binary(&mut t)?;
        crate::trace_file::report_bad(&t, input);
        write_bytes(&out, &bytes)?;
    }
    Ok(ExitStatus::Ok)
}

/// Writes a binary output through the gate (atomically), as `write_all` does text.
fn write_bytes(out: &iolab_device::Output, bytes: &[u8]) -> Result<()> {
    out.write(bytes).map_err(|e| {
        eprintln!("iolab: {e}");
        outputs_not_written(1)
    })
}

fn to_csv(t: &mut Trace) -> Result<String> {
    let mut text = format!("{}\n", iolab_trace::csv::HEADER);
    while let Some(r) = next(t)? {
        iolab_trace::csv::write_line(&mut text, &r, t.targets());
    }
    Ok(text)
}

/// The binary trace. A foreign trace's target names are known only at its end, so records are read first.
fn to_binary(t: &mut Trace) -> Result<Vec<u8>> {
    let mut records = Vec::new();
    while let Some(r) = next(t)? {
        records.push(r);
    }
    let mut w = TraceWriter::new(Vec::with_capacity(records.len() * 48 + 4096), &t.header())?;
    for r in &records {
        w.write(r)?;
    }
    Ok(w.finish()?.0)
}

fn capture(device: &str, keys: &SomeKeys<CaptureKeys>, output: &str) -> Result<ExitStatus> {
    let duration_ns =
        keys.to_job().map_err(usage)?.duration_ns.ok_or_else(|| {
            usage("iolab trace capture needs --duration DUR (how long to record, e.g. 30s)")
        })?;
    let mut gate = WriteGate::new();
    let out = gate.output("-o", output).map_err(usage)?;
    // The first signal ends the capture early and what was recorded is written (atomically); a second exits
    // at once, removing the tracefs instance and the output's temporary file.
    let stop = crate::signals::stop_flag(true);
    let mut trace = Vec::new();
    let duration = std::time::Duration::from_nanos(duration_ns);
    let n = iolab_trace::capture::capture(device, duration, &stop, &mut trace).map_err(usage)?;
    let early =
        if crate::signals::interrupted() { " (interrupted: what was recorded until then)" } else { "" };
    eprintln!("iolab: captured {} ops of {device}{early}", format_count(n));
    write_bytes(&out, &trace)?;
    Ok(ExitStatus::Ok)
}
