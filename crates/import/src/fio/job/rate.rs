//! `rate` and `rate_iops` as iolab's open-loop `rate` (IOPS per worker), `rate_process` as its `arrival`.

use super::pattern::Pattern;
use super::{Ctx, Job};
use crate::fio::entry::{Origin, TranslatedKey};
use crate::fio::units::parse_size;
use crate::fio::{FioError, Src};

/// Sets the worker's `rate` (and `arrival`) from fio's per-direction caps. `sizes` are each direction's block sizes.
pub fn rate(cx: &Ctx, p: &Pattern, sizes: [&Vec<(u64, u64)>; 2], job: &mut Job) -> Result<(), FioError> {
    let bw = cx.pair("rate")?;
    let iops = cx.pair("rate_iops")?;
    let (r, w, src, per_io) = match (bw, iops) {
        (Some(_), Some((_, _, s))) => {
            return Err(cx.refuse(s, "fio caps both bandwidth and IOPS here; iolab has one open-loop rate"))
        }
        (Some((r, w, s)), None) => (r, w, s, true),
        (None, Some((r, w, s))) => (r, w, s, false),
        (None, None) => return Ok(()),
    };
    let mut caps = [None, None];
    for (d, part) in [r, w].into_iter().enumerate() {
        let Some(t) = part else { continue };
        let n =
            parse_size(&t, cx.kb).ok_or_else(|| cx.bad(src, "a number such as '500', '10k' or '100m'"))?;
        caps[d] = if n == 0 {
            None
        } else {
            Some(if per_io { n as f64 / one_size(cx, src, sizes[d])? } else { n as f64 })
        };
    }
    let Some(total) = total(cx, p, src, caps)? else { return Ok(()) };
    let mut e = cx.entry("rate", fmt_rate(total), src)?;
    if per_io {
        e = e.with_note(
            "fio's rate is bytes per second; iolab's is I/Os per second (the rate over the block size)",
        );
    }
    job.worker.push(e);
    arrival(cx, job)
}

fn one_size(cx: &Ctx, src: &Src, sizes: &[(u64, u64)]) -> Result<f64, FioError> {
    match sizes {
        [(s, _)] => Ok(*s as f64),
        _ => Err(cx.refuse(src, "a bandwidth cap with several block sizes lets the I/O rate vary; iolab's rate is I/Os per second (use rate_iops)")),
    }
}

/// The total rate of a worker: the cap of the one direction used, or both caps when they are in fio's mix.
fn total(cx: &Ctx, p: &Pattern, src: &Src, caps: [Option<f64>; 2]) -> Result<Option<f64>, FioError> {
    let used = p.used();
    if !(used[0] && used[1]) {
        return Ok(if used[0] { caps[0] } else { caps[1] });
    }
    let single = !src.text().contains(',');
    match caps {
        [None, None] => Ok(None),
        [Some(r), Some(w)] if !single && ((r / (r + w)) * 100.0 - p.read_pct).abs() < 1e-6 => Ok(Some(r + w)),
        _ => Err(cx.refuse(
            src,
            format!(
                "fio caps reads and writes separately; iolab has one rate for the mix, so give both as READ,WRITE \
                 in the mix's ratio ({}:{})",
                p.read_pct,
                100.0 - p.read_pct
            ),
        )),
    }
}

fn fmt_rate(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{}", v as u64)
    } else {
        format!("{v}")
    }
}

fn arrival(cx: &Ctx, job: &mut Job) -> Result<(), FioError> {
    let (text, origin) = match cx.text("rate_process")? {
        Some((v, src)) => match v.trim() {
            "linear" => ("fixed", Origin::Opt(src.clone())),
            "poisson" => ("poisson", Origin::Opt(src.clone())),
            _ => return Err(cx.bad(src, "linear or poisson")),
        },
        None => {
            ("fixed", Origin::Default("rate_process not set: fio's default is linear (evenly spaced)".into()))
        }
    };
    let e = TranslatedKey::new("arrival", text.into(), vec![origin])
        .map_err(|e| cx.refuse_missing("rate_process", e))?;
    job.worker.push(e.with_note("open loop: iolab measures each I/O's latency from its scheduled start, so waiting for a free slot counts"));
    Ok(())
}
