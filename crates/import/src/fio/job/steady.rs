//! fio's `steadystate` (`ss`): the job ends early once a metric is steady. iolab's job files have no such stop;
//! the translation runs the whole runtime and says which `--steady-state` flags stop the same way.

use super::{Ctx, Job};
use crate::fio::{FioError, Note};
use iolab_spec::units::format_duration;

/// The note for a job with `steadystate` set; its other options are read only for the note.
pub fn steady_note(cx: &Ctx, job: &mut Job) -> Result<(), FioError> {
    let Some((v, src)) = cx.text("steadystate")? else { return Ok(()) };
    let (metric, limit) = v.trim().split_once(':').ok_or_else(|| {
        cx.bad(
            src,
            "METRIC:LIMIT with METRIC iops, iops_slope, bw, bw_slope, lat or lat_slope, e.g. 'iops:10%'",
        )
    })?;
    let window = match cx.time("steadystate_duration", 1_000_000_000)? {
        Some((ns, _)) => format_duration(ns),
        None => "30s".into(),
    };
    let flag = match metric.trim() {
        "iops" | "bw" => Some("iops"),
        "lat" => Some("lat"),
        "iops_slope" | "bw_slope" | "lat_slope" => None,
        _ => return Err(cx.bad(src, "a metric iops, iops_slope, bw, bw_slope, lat or lat_slope")),
    };
    // --steady-state-limit replaces --duration (default 10m): the runtime stays the longest the job runs.
    let cap = match cx.time("runtime", 1_000_000_000)?.filter(|(ns, _)| *ns > 0) {
        Some((ns, _)) => format!(" --steady-state-limit {}", format_duration(ns)),
        None => String::new(),
    };
    let how = match (flag, limit.trim().ends_with('%')) {
        (Some(f), true) => format!("`--steady-state {f}:{} --steady-state-window {window}{cap}` stops the same way", limit.trim()),
        _ => format!("iolab's --steady-state checks each interval against the window's mean in percent, not a slope or an absolute spread; the closest is `--steady-state iops:PCT --steady-state-window {window}{cap}`"),
    };
    job.notes.push(Note {
        section: src.section.clone(),
        line: src.line,
        text: format!("fio ends this job once {} is steady ({}); a job file cannot say that to iolab, which runs the whole runtime: {how}", metric.trim(), v.trim()),
    });
    Ok(())
}
