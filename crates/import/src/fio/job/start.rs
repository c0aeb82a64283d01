//! `startdelay` as iolab's `start_delay`, and fio's flow control (`flow`, `flow_id`, `flow_sleep`) as
//! iolab's flow keys.

use super::{Ctx, Job};
use crate::fio::units::parse_time_ns;
use crate::fio::FioError;
use iolab_spec::units::format_duration;

/// fio's unit for a bare `startdelay`: seconds.
const S: u64 = 1_000_000_000;

/// fio's unit for `flow_sleep`: microseconds.
const US: u64 = 1_000;

/// `startdelay=4` or `startdelay=1-5` (each clone draws its own delay from the range, as fio's init.c
/// `rand_between` does) as `start_delay`.
pub fn start_delay(cx: &Ctx, job: &mut Job) -> Result<(), FioError> {
    let Some((v, src)) = cx.text("startdelay")? else { return Ok(()) };
    let time = |t: &str| {
        parse_time_ns(t, S)
            .ok_or_else(|| cx.bad(src, "a time such as '4' (seconds), '500ms', or a range '1-5'"))
    };
    let (lo, hi) = match v.split_once('-') {
        Some((a, b)) => (time(a)?, time(b)?),
        None => (time(v)?, time(v)?),
    };
    if lo > hi {
        return Err(cx.bad(src, "a range LOW-HIGH with LOW at most HIGH"));
    }
    if hi == 0 {
        return Ok(());
    }
    let text = if lo == hi {
        format_duration(lo)
    } else {
        format!("{}-{}", format_duration(lo), format_duration(hi))
    };
    let e = cx.entry("start_delay", text, src)?.with_note(
        "fio counts this job's runtime (and ramp_time) from its own start; iolab's duration and ramp count from \
         the run's start, so this worker issues for the duration less its delay, and none at all when the \
         delay is past the run's end",
    );
    job.worker.push(e);
    Ok(())
}

/// `flow=N` (with `flow_id`, `flow_sleep`) as `flow`, `flow_id`, `flow_sleep`; `flow=0` (fio's default) is
/// no flow control.
pub fn flow(cx: &Ctx, job: &mut Job) -> Result<(), FioError> {
    let weight = match cx.count("flow")? {
        Some((0, _)) | None => return Ok(()),
        Some((n, src)) if n > 1000 => {
            return Err(cx.bad(src, "a weight from 0 to 1000 (fio's FLOW_MAX_WEIGHT)"))
        }
        Some((n, src)) => (n, src),
    };
    let e = cx.entry("flow", weight.0.to_string(), weight.1)?;
    job.worker.push(e.with_note(
        "a worker ahead of its flow share waits for its I/Os in flight, then flow_sleep, before it looks again; \
         fio's job without flow_sleep spins and looks again at once (iolab: every 10us)",
    ));
    if let Some((id, src)) = cx.count("flow_id")? {
        if id > u32::MAX as u64 {
            return Err(cx.bad(src, "a whole number below 2^32"));
        }
        job.worker.push(cx.entry("flow_id", id.to_string(), src)?);
    }
    if let Some((ns, src)) = cx.time("flow_sleep", US)?.filter(|(ns, _)| *ns > 0) {
        job.worker.push(cx.entry("flow_sleep", format_duration(ns), src)?);
    }
    Ok(())
}
