//! `iolab replay TRACE`: the trace read into memory (bad records said), the workload flags set from it (one
//! worker, block size the longest op, reads and/or writes, as many I/Os as records), then run as `iolab run`
//! runs a job, with the records in place of the generator (`iolab_run::replay`).

use crate::args::ReplayArgs;
use crate::exit::{usage, ExitStatus};
use anyhow::Result;
use iolab_run::replay::{ReplaySource, MAX_LEN};
use iolab_trace::TraceOp;

/// Runs `iolab replay`.
pub fn replay(args: &ReplayArgs) -> Result<ExitStatus> {
    let speed = parse_speed(args.speed.as_deref().unwrap_or("1x"))?;
    if args.run.job.is_some() {
        return Err(usage(
            "iolab replay takes its I/O from the trace: give the targets with --target, not a job file",
        ));
    }
    let mut t = crate::trace_file::open(&args.trace_file)?;
    let mut records = Vec::new();
    while let Some(r) = t.next_record().map_err(usage)? {
        records.push(r);
    }
    crate::trace_file::report_bad(&t, &args.trace_file);
    let rw = |op| records.iter().filter(move |r| r.op == op && r.len <= MAX_LEN);
    let (reads, writes) = (rw(TraceOp::Read).count(), rw(TraceOp::Write).count());
    if reads + writes == 0 {
        return Err(usage(format!("{}: the trace has no reads or writes to replay", args.trace_file)));
    }
    let longest = rw(TraceOp::Read).chain(rw(TraceOp::Write)).map(|r| r.len).max().unwrap_or(4096);
    let mut run = args.run.clone();
    run.bs = Some(longest.max(1).div_ceil(4096).saturating_mul(4096).to_string());
    run.rw = Some(
        match (reads, writes) {
            (_, 0) => "randread",
            (0, _) => "randwrite",
            _ => "randrw",
        }
        .to_string(),
    );
    run.read_pct = None;
    run.workers = Some("1".into());
    run.qd = run.qd.or(Some("64".into()));
    if run.duration.is_none() && run.ios.is_none() {
        run.ios = Some(records.len().to_string());
    }
    let src = ReplaySource { path: args.trace_file.clone(), records, speed };
    crate::run::run_replay(&run, src)
}

/// `2x`, `0.5x`, `1000x` (the `x` may be left out) or `max`.
fn parse_speed(text: &str) -> Result<Option<f64>> {
    if text == "max" {
        return Ok(None);
    }
    match text.trim_end_matches('x').parse::<f64>() {
        Ok(s) if s.is_finite() && s > 0.0 => Ok(Some(s)),
        _ => Err(usage(format!(
            "invalid value '{text}' for '--speed': expected a factor such as 1x, 2x, 1000x or 0.5x, or 'max'"
        ))),
    }
}
