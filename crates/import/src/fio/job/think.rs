//! `thinktime` (with `thinktime_blocks`) as iolab's closed-loop `think` and `burst`.

use super::{Ctx, Job};
use crate::fio::entry::{Origin, TranslatedKey};
use crate::fio::FioError;
use iolab_spec::units::format_duration;

/// fio's default unit for `thinktime` and `thinktime_spin`: microseconds.
const US: u64 = 1_000;

/// Sets the worker's `think` and `burst` from fio's think-time options; call after `rate`.
///
/// fio stalls the job `thinktime` after every `thinktime_blocks` completed I/Os (thinktime_blocks_type=complete,
/// the default): iolab's worker issues `burst` I/Os, waits for all of them, then idles `think`.
pub fn think(cx: &Ctx, job: &mut Job) -> Result<(), FioError> {
    let think = cx.time("thinktime", US)?.filter(|(ns, _)| *ns > 0);
    let blocks = cx.count("thinktime_blocks")?;
    if let Some((0, src)) = blocks {
        return Err(cx.bad(src, "a whole number of I/Os from 1 (fio's default is 1)"));
    }
    let kind = match cx.text("thinktime_blocks_type")? {
        Some((v, src)) => match v.trim() {
            "complete" => None,
            "issue" => Some(src),
            _ => return Err(cx.bad(src, "complete or issue")),
        },
        None => None,
    };
    if let Some((ns, src)) = cx.time("thinktime_spin", US)? {
        if ns > 0 {
            return Err(cx.refuse(
                src,
                "iolab's think time is idle; it does not spin the CPU for part of it (set thinktime_spin=0)",
            ));
        }
    }
    if let Some((ns, src)) = cx.time("thinktime_iotime", 1_000_000_000)? {
        if ns > 0 {
            return Err(cx.refuse(
                src,
                "iolab's think time comes after a number of I/Os (thinktime_blocks), not after a time of I/O",
            ));
        }
    }
    let ignore = cx.flag("rate_ignore_thinktime")?;
    let Some((ns, src)) = think else { return Ok(()) };
    if let Some(src) = kind {
        return Err(cx.refuse(
            src,
            "iolab idles after a burst of I/Os has completed (thinktime_blocks_type=complete); it does not count \
             issued I/Os",
        ));
    }
    let rated = job.worker.iter().any(|e| e.key == "rate");
    if rated {
        if let Some((true, s)) = ignore {
            return Err(cx.refuse(
                s,
                "iolab's think time is for closed loop only; with a rate (open loop) it has no think time to \
                 ignore (drop rate or thinktime)",
            ));
        }
        return Err(cx.refuse(
            src,
            "iolab's think time is for closed loop only, and this job also has a rate (rate or rate_iops), which \
             iolab runs open loop; drop one of them",
        ));
    }
    let e = cx.entry("think", format_duration(ns), src)?.with_note(
        "iolab's worker issues a burst of 'burst' I/Os (at most qd at a time), waits until all of them \
         complete, then idles 'think' before the next burst; thinktime is in microseconds unless a unit is given",
    );
    job.worker.push(e);
    let burst = match blocks {
        Some((n, s)) => cx.entry("burst", n.to_string(), s)?,
        None => TranslatedKey::new(
            "burst",
            "1".into(),
            vec![Origin::Default("thinktime_blocks not set: fio's default is 1".into())],
        )
        .map_err(|e| cx.refuse_missing("thinktime_blocks", e))?,
    };
    job.worker.push(burst);
    Ok(())
}
