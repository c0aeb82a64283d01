//! What a job's I/O looks like, given its direction mix and random shares (`pattern`): the access keys
//! (block sizes, alignment, shares), queue depth, rate, offset distribution and data.

use super::pattern::{pct, Pattern};
use super::sizes::Sizes;
use super::{size_expected, Ctx, Job, TranslatedEngine};
use crate::fio::entry::{Origin, TranslatedKey};
use crate::fio::units::parse_size;
use crate::fio::{FioError, Note};
use iolab_spec::units::format_size;

/// Everything that may differ between reads and writes.
#[derive(Clone, Debug)]
struct DirSpec {
    sizes: Sizes,
    align: Option<(u64, Origin)>,
    random: f64,
}

/// The job's access keys, queue depth, rate, distribution and data.
pub fn access(cx: &Ctx, engine: &TranslatedEngine, p: &Pattern, job: &mut Job) -> Result<(), FioError> {
    job.worker.push(queue_depth(cx, engine)?);
    let dirs = [dir_spec(cx, p, 0)?, dir_spec(cx, p, 1)?];
    super::rate::rate(cx, p, [&dirs[0].sizes.0, &dirs[1].sizes.0], job)?;
    super::think::think(cx, job)?;
    distribution(cx, p, job)?;
    seq_skip(cx, p, job)?;
    random_run(cx, p, job)?;
    data(cx, job)?;
    let used = p.used();
    let same = dirs[0].sizes.0 == dirs[1].sizes.0
        && dirs[0].align.as_ref().map(|a| a.0) == dirs[1].align.as_ref().map(|a| a.0)
        && dirs[0].random == dirs[1].random;
    if !(used[0] && used[1]) || same {
        let d = if used[0] { &dirs[0] } else { &dirs[1] };
        job.worker.extend(spec_entries(cx, d, p, p.read_pct)?);
        random_map_note(cx, &dirs, used, job);
        return Ok(());
    }
    for (i, d) in dirs.iter().enumerate() {
        let share = if i == 0 { p.read_pct } else { 100.0 - p.read_pct };
        let mut spec = spec_entries(cx, d, p, if i == 0 { 100.0 } else { 0.0 })?;
        let w = TranslatedKey::new("weight", format!("{}", share.round() as u64), p.origins.clone())
            .map_err(|e| cx.refuse_missing("rwmixread", e))?;
        spec.push(w.with_note("reads and writes differ here (block sizes, alignment or random share), so each direction is an access spec of its own, weighted by fio's mix"));
        job.specs.push(spec);
    }
    random_map_note(cx, &dirs, used, job);
    Ok(())
}

/// What fio's default random map does to a random job with several block sizes, measured.
const RANDOM_MAP: &str = "fio's default random map (norandommap=0) shortens I/Os to fit the gaps it leaves, so \
    fio issues other sizes than these: for bssplit=4k/50:16k/30:64k/20 it issued 4k 57%, 16k 21%, 64k 4% and 18% \
    odd sizes, at 33% more IOPS; iolab issues the sizes as given. Add norandommap=1 to the fio job to compare \
    like with like";

/// Notes fio's random map on a random job with several block sizes that leaves `norandommap` at its default,
/// on the job's `bs` keys and in [`Job::notes`].
fn random_map_note(cx: &Ctx, dirs: &[DirSpec; 2], used: [bool; 2], job: &mut Job) {
    let several = (0..2).any(|d| used[d] && dirs[d].random > 0.0 && dirs[d].sizes.0.len() > 1);
    if !several || cx.get("norandommap").is_some() {
        return;
    }
    let line = dirs.iter().flat_map(|d| &d.sizes.1).find_map(|o| match o {
        Origin::Opt(s) => Some(s.line),
        Origin::Default(_) => None,
    });
    job.notes.push(Note {
        section: cx.section.name.clone(),
        line: line.unwrap_or(cx.section.line),
        text: RANDOM_MAP.to_string(),
    });
    for e in job.worker.iter_mut().chain(job.specs.iter_mut().flatten()).filter(|e| e.key == "bs") {
        e.note.get_or_insert_with(|| RANDOM_MAP.to_string());
    }
}

fn spec_entries(cx: &Ctx, d: &DirSpec, p: &Pattern, read_pct: f64) -> Result<Vec<TranslatedKey>, FioError> {
    let header = || cx.refuse_missing("bs", "");
    let mut out = vec![TranslatedKey::new("bs", sizes_text(&d.sizes.0), d.sizes.1.clone()).map_err(|e| {
        let src = d.sizes.1.iter().find_map(|o| match o {
            Origin::Opt(s) => Some(s.clone()),
            Origin::Default(_) => None,
        });
        src.map_or_else(header, |s| cx.bad(&s, e))
    })?];
    let mut rp =
        TranslatedKey::new("read_pct", fmt_pct(read_pct), p.origins.clone()).map_err(|_| header())?;
    if p.read_pct > 0.0 && p.read_pct < 100.0 && p.random[0].min(p.random[1]) < 100.0 {
        rp = rp.with_note(
            "iolab's sequential mix has one cursor for reads and writes; fio keeps one per direction",
        );
    }
    out.push(rp);
    if p.trim_pct > 0.0 {
        let e = TranslatedKey::new("trim_pct", fmt_pct(p.trim_pct), p.origins[..1].to_vec())
            .map_err(|_| header())?;
        out.push(e.with_note(if p.pairs { TRIMWRITE_NOTE } else { TRIM_NOTE }));
    }
    if p.pairs {
        let e = TranslatedKey::new("trim_then_write", "true".into(), p.origins[..1].to_vec())
            .map_err(|_| header())?;
        out.push(e);
    }
    let mut ro = p.origins[..1].to_vec();
    ro.extend(p.random_src.iter().map(|s| Origin::Opt(s.clone())));
    out.push(TranslatedKey::new("random_pct", fmt_pct(d.random), ro).map_err(|_| header())?);
    if let Some((a, o)) = &d.align {
        out.push(TranslatedKey::new("align", format_size(*a), vec![o.clone()]).map_err(|_| header())?);
    }
    Ok(out)
}

/// What a fio user should know of iolab's trims.
const TRIM_NOTE: &str = "every op is a trim (a discard of bs bytes): on a block device BLKDISCARD with the \
    sync engine, as fio issues it, or the block layer's discard with io_uring; on a regular file iolab punches a \
    hole, where fio 3.33 fails the trim with ENOTTY";

/// What a fio user should know of iolab's trim-then-write pairs.
const TRIMWRITE_NOTE: &str = "half the ops are trims, each followed by a write of the same block (bs: the \
    write part), as fio's trimwrite issues them; with qd above 1 the pair may be in flight together, in fio \
    as in iolab";

fn fmt_pct(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{}", v as u64)
    } else {
        format!("{v}")
    }
}

/// `rw=BASE:SIZE`: the skip after each sequential I/O (`seq_skip`).
fn seq_skip(cx: &Ctx, p: &Pattern, job: &mut Job) -> Result<(), FioError> {
    let Some((n, src)) = &p.skip else { return Ok(()) };
    let text =
        format!("{}{}", if *n < 0 { "-" } else { "" }, iolab_spec::units::format_size(n.unsigned_abs()));
    let mut e = cx.entry("seq_skip", text, src)?;
    if p.used() == [true, true] {
        e = e.with_note("fio keeps a sequential cursor per direction, each with this skip; iolab's reads and writes share one");
    }
    job.worker.push(e);
    Ok(())
}

/// `rw=randBASE:N` (with `rw_sequencer`): N I/Os per random offset (`random_run`).
fn random_run(cx: &Ctx, p: &Pattern, job: &mut Job) -> Result<(), FioError> {
    let sequencer = match cx.text("rw_sequencer")? {
        None => None,
        Some((v, src)) => match v.trim() {
            "sequential" => None,
            "identical" => Some(src),
            _ => return Err(cx.bad(src, "sequential or identical")),
        },
    };
    let Some((n, src)) = &p.run else { return Ok(()) };
    let text = if sequencer.is_some() { format!("{n}:identical") } else { n.to_string() };
    let mut e = cx.entry("random_run", text, src)?;
    if let Some(s) = sequencer {
        e.origins.push(Origin::Opt(s.clone()));
    }
    if p.used() == [true, true] {
        e = e.with_note("fio keeps the last position per direction; iolab's reads and writes follow one");
    }
    job.worker.push(e);
    Ok(())
}

fn queue_depth(cx: &Ctx, engine: &TranslatedEngine) -> Result<TranslatedKey, FioError> {
    if engine.kind == "sync" {
        let mut origins = vec![engine.origin()];
        origins.extend(cx.get("iodepth").map(|s| Origin::Opt(s.clone())));
        let e = TranslatedKey::new("qd", "1".into(), origins).map_err(|e| cx.refuse_missing("iodepth", e))?;
        return Ok(e.with_note("fio's sync engines issue one I/O at a time, whatever iodepth says"));
    }
    match cx.count("iodepth")? {
        Some((n, src)) => cx.entry("qd", n.to_string(), src),
        None => TranslatedKey::new(
            "qd",
            "1".into(),
            vec![Origin::Default("iodepth not set: fio's default is 1".into())],
        )
        .map_err(|e| cx.refuse_missing("iodepth", e)),
    }
}

fn dir_spec(cx: &Ctx, p: &Pattern, d: usize) -> Result<DirSpec, FioError> {
    let sizes = super::sizes::block_sizes(cx, d)?;
    let align = match cx.pair("blockalign")? {
        Some((r, w, src)) if [r.clone(), w.clone()][d].is_some() => {
            let t = [r, w][d].clone().unwrap_or_default();
            let n = parse_size(&t, cx.kb).filter(|n| *n > 0).ok_or_else(|| cx.bad(src, size_expected()))?;
            Some((n, Origin::Opt(src.clone())))
        }
        _ if sizes.0.len() > 1 => {
            let min = sizes.0.iter().map(|s| s.0).min().unwrap_or(4096);
            Some((
                min,
                Origin::Default("blockalign not set: fio aligns I/O to the smallest block size".into()),
            ))
        }
        _ => None,
    };
    Ok(DirSpec { sizes, align, random: p.random[d] })
}

/// iolab's text for a block-size split: "4K", or "4K/60:8K/40" with weights reduced by their common divisor.
pub fn sizes_text(sizes: &[(u64, u64)]) -> String {
    if sizes.len() == 1 {
        return format_size(sizes[0].0);
    }
    let g = sizes.iter().fold(0, |g, s| gcd(g, s.1)).max(1);
    sizes.iter().map(|(s, w)| format!("{}/{}", format_size(*s), w / g)).collect::<Vec<_>>().join(":")
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

fn distribution(cx: &Ctx, p: &Pattern, job: &mut Job) -> Result<(), FioError> {
    let Some((v, src)) = cx.text("random_distribution")? else { return Ok(()) };
    let v = v.trim();
    if let Some(blocks) = v.strip_prefix("sequence:") {
        return super::offsets::sequence(cx, p, blocks, src, job);
    }
    if v.contains(',') {
        return Err(cx.refuse(src, "per-direction distributions; iolab has one per worker"));
    }
    let (kind, rest) = v.split_once(':').unwrap_or((v, ""));
    let args: Vec<&str> = rest.split(':').filter(|s| !s.is_empty()).collect();
    let text = match kind {
        "random" => return Ok(()),
        "zipf" | "pareto" if args.len() == 1 => format!("{kind}:{}", args[0]),
        "zipf" | "pareto" if args.len() == 2 => {
            return Err(cx.refuse(
                src,
                "a second value moves the distribution's centre; iolab's zipf and pareto have none",
            ))
        }
        "zoned" if !args.is_empty() => format!("zones:{}", fill_zones(&args)),
        "normal" | "gauss" => return Err(cx.refuse(src, "iolab has no normal (Gaussian) distribution")),
        "zoned_abs" => {
            return Err(cx.refuse(src, "iolab's zones are shares of the region, not absolute sizes"))
        }
        _ => return Err(cx.bad(
            src,
            "random, zipf:THETA, pareto:H, zoned:IO/SPACE:..., sequence:B,B,... (normal and zoned_abs are refused)",
        )),
    };
    if p.random.iter().all(|r| *r == 0.0) {
        return Ok(());
    }
    job.worker.push(cx.entry("dist", text, src)?);
    Ok(())
}

/// fio's zones with a share left out (`20/`, `/10`): the rest of 100%, split evenly among those left out, as
/// fio's zone_split_ddir fills them. Anything that does not parse is left for iolab's parser to quote.
fn fill_zones(args: &[&str]) -> String {
    let parts: Vec<(&str, &str)> = args.iter().map(|a| a.split_once('/').unwrap_or((a, ""))).collect();
    let fill = |texts: Vec<&str>| -> Vec<String> {
        let given: Option<Vec<f64>> =
            texts.iter().filter(|t| !t.trim().is_empty()).map(|t| t.trim().parse().ok()).collect();
        let missing = texts.iter().filter(|t| t.trim().is_empty()).count();
        let rest = given.map(|g| (100.0 - g.iter().sum::<f64>()) / missing.max(1) as f64);
        texts
            .iter()
            .map(|t| match (t.trim(), rest) {
                ("", Some(r)) if r >= 0.0 => fmt_pct(r),
                (t, _) => t.to_string(),
            })
            .collect()
    };
    let io = fill(parts.iter().map(|p| p.0).collect());
    let space = fill(parts.iter().map(|p| p.1).collect());
    io.iter().zip(&space).map(|(i, s)| format!("{i}/{s}")).collect::<Vec<_>>().join(":")
}

fn data(cx: &Ctx, job: &mut Job) -> Result<(), FioError> {
    if let Some((v, src)) = cx.text("buffer_compress_percentage")? {
        let n = pct(cx, v, src)?;
        if n > 0.0 {
            job.worker.push(cx.entry("data", format!("compress:{n}"), src)?);
            return Ok(());
        }
    }
    if let Some((true, src)) = cx.flag("zero_buffers")? {
        job.worker.push(cx.entry("data", "zero".into(), src)?);
    }
    Ok(())
}
