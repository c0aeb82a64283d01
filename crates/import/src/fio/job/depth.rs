//! fio's latency-target mode (`latency_target`, `latency_window`, `latency_percentile`, `latency_run`) as
//! iolab's queue-depth search: the keys of the same names.

use super::{Ctx, Job};
use crate::fio::FioError;
use iolab_spec::units::format_duration;

/// fio's unit for a bare `latency_target` and `latency_window`: microseconds.
const US: u64 = 1_000;

/// Sets the worker's depth-search keys; call after `rate` (the search is for closed loop).
pub fn latency_target(cx: &Ctx, job: &mut Job) -> Result<(), FioError> {
    let run = cx.flag("latency_run")?;
    let Some((target, src)) = cx.time("latency_target", US)?.filter(|(ns, _)| *ns > 0) else {
        return Ok(());
    };
    if job.worker.iter().any(|e| e.key == "rate") {
        return Err(cx.refuse(
            src,
            "fio searches the queue depth of a closed loop, and this job also has a rate (rate or rate_iops), \
             which iolab runs open loop; drop one of them",
        ));
    }
    let mut e = cx.entry("latency_target", format_duration(target), src)?;
    if !run.is_some_and(|(on, _)| on) {
        e = e.with_note(
            "fio stops the job once the depth it finds stays the same, after one more window at it, and reports \
             that window; iolab goes on searching for the whole duration (fio's latency_run=1) and reports all \
             of it: compare the achieved depth, or run iolab again at that depth",
        );
    }
    job.worker.push(e);
    if let Some((ns, src)) = cx.time("latency_window", US)? {
        job.worker.push(cx.entry("latency_window", format_duration(ns), src)?);
    }
    if let Some((v, src)) = cx.text("latency_percentile")? {
        job.worker.push(cx.entry("latency_percentile", v.trim().to_string(), src)?);
    }
    Ok(())
}
