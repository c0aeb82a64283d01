//! The direction mix and random shares of a job (`rw`, `rwmixread`/`rwmixwrite`, `percentage_random`): a
//! leaf that the layout, access, rate and durability parts of a job read.

use super::Ctx;
use crate::fio::entry::Origin;
use crate::fio::units::parse_size;
use crate::fio::{FioError, Src};

/// The direction mix and random shares of a job.
#[derive(Clone, Debug)]
pub struct Pattern {
    /// Share of reads, percent.
    pub read_pct: f64,
    /// Share of trims, percent: 100 for `rw=trim`/`randtrim` (their trims stand in for the writes: read_pct
    /// is 0, and the write direction's sizes and random share are the trims'), else 0.
    pub trim_pct: f64,
    /// Random share of reads and of writes, percent.
    pub random: [f64; 2],
    /// The options behind `read_pct`.
    pub origins: Vec<Origin>,
    /// The option behind the random shares, if not the pattern alone.
    pub random_src: Option<Src>,
    /// Bytes skipped after each sequential I/O (`rw=read:8k`; negative: backwards), and the option.
    pub skip: Option<(i64, Src)>,
    /// I/Os per random offset (`rw=randread:8`), and the option.
    pub run: Option<(u32, Src)>,
    /// `rw=trimwrite`, `randtrimwrite`: each trim is followed by a write of the same block (trim_pct is 50).
    pub pairs: bool,
}

impl Pattern {
    /// Which directions the job issues: [reads, writes].
    pub fn used(&self) -> [bool; 2] {
        [self.read_pct > 0.0, self.read_pct < 100.0]
    }
    /// True when some I/O the job issues is sequential.
    pub fn has_sequential(&self) -> bool {
        (0..2).any(|d| self.used()[d] && self.random[d] < 100.0)
    }
}

/// `rw` (with `rwmixread`/`rwmixwrite` and `percentage_random`).
pub fn pattern(cx: &Ctx) -> Result<Pattern, FioError> {
    let (rw, origin, src) = match cx.text("rw")? {
        Some((v, src)) => (v.trim().to_string(), Origin::Opt(src.clone()), Some(src)),
        None => ("read".into(), Origin::Default("rw not set: fio's default is read".into()), None),
    };
    let (base, skip) = match rw.split_once(':') {
        Some((b, s)) => (b.trim(), Some(s.trim())),
        None => (rw.as_str(), None),
    };
    let (skip, run) = match (skip, src) {
        (Some(s), Some(src)) if base.starts_with("rand") => (None, random_run(cx, s, src)?),
        (Some(s), Some(src)) => (seq_skip(cx, s, src)?, None),
        _ => (None, None),
    };
    let (read, random, trim) = match base {
        "read" => (100.0, 0.0, 0.0),
        "write" => (0.0, 0.0, 0.0),
        "randread" => (100.0, 100.0, 0.0),
        "randwrite" => (0.0, 100.0, 0.0),
        "rw" | "readwrite" => (50.0, 0.0, 0.0),
        "randrw" => (50.0, 100.0, 0.0),
        "trim" => (0.0, 0.0, 100.0),
        "randtrim" => (0.0, 100.0, 100.0),
        "trimwrite" => (0.0, 0.0, 50.0),
        "randtrimwrite" => (0.0, 100.0, 50.0),
        _ => {
            return Err(cx.bad(
                src.expect("the default is valid"),
                "read, write, randread, randwrite, rw, readwrite, randrw, trim, randtrim, trimwrite or randtrimwrite",
            ))
        }
    };
    let mut p = Pattern {
        read_pct: read,
        trim_pct: trim,
        random: [random; 2],
        origins: vec![origin],
        random_src: None,
        skip,
        run,
        pairs: trim == 50.0,
    };
    if read == 50.0 {
        mix(cx, &mut p)?;
    }
    // A trim job's percentage_random is its third (trim) part; a trimwrite job's trims and writes are pairs of
    // one block, drawn as its writes are.
    let cx = &Ctx { trims: trim == 100.0, ..*cx };
    if random == 100.0 {
        if let Some((r, w, src)) = cx.pair("percentage_random")? {
            for (d, part) in [r, w].into_iter().enumerate() {
                if let Some(t) = part {
                    p.random[d] = pct(cx, &t, src)?;
                }
            }
            p.random_src = Some(src.clone());
        }
    }
    Ok(p)
}

/// The `:N` of `rw=randBASE:N`: fio issues N I/Os per random offset (io_u.c `get_next_offset`), the rest
/// as `rw_sequencer` says; 0 and 1 change nothing.
fn random_run(cx: &Ctx, s: &str, src: &Src) -> Result<Option<(u32, Src)>, FioError> {
    let n = parse_size(s, cx.kb).ok_or_else(|| cx.bad(src, "BASE:N, e.g. randread:8"))?;
    let n =
        u32::try_from(n).ok().filter(|n| *n <= 1 << 20).ok_or_else(|| cx.bad(src, "N at most 1048576"))?;
    Ok((n > 1).then(|| (n, src.clone())))
}

/// The `:N` of `rw=BASE:N` after a sequential base: the bytes fio skips after each I/O (a leading `-` moves
/// backwards; io_u.c `get_next_seq_offset`).
fn seq_skip(cx: &Ctx, s: &str, src: &Src) -> Result<Option<(i64, Src)>, FioError> {
    let (sign, size) = s.strip_prefix('-').map_or((1, s), |r| (-1, r.trim()));
    let n = parse_size(size, cx.kb).ok_or_else(|| cx.bad(src, "BASE:SIZE, e.g. read:8k or read:-8k"))?;
    if n == 0 {
        return Ok(None);
    }
    let n = i64::try_from(n).map_err(|_| cx.bad(src, "a skip below 8E"))?;
    Ok(Some((sign * n, src.clone())))
}

/// A whole percentage from 0 to 100, as `rwmixread` and `percentage_random` (and `buffer_compress_percentage`)
/// take it.
pub(super) fn pct(cx: &Ctx, text: &str, src: &Src) -> Result<f64, FioError> {
    match text.trim().parse::<u32>() {
        Ok(n) if n <= 100 => Ok(n as f64),
        _ => Err(cx.bad(src, "a whole percentage from 0 to 100")),
    }
}

/// `rwmixread` / `rwmixwrite`: the later one wins, as in fio.
fn mix(cx: &Ctx, p: &mut Pattern) -> Result<(), FioError> {
    let r = cx.get("rwmixread").map(|s| (s, false));
    let w = cx.get("rwmixwrite").map(|s| (s, true));
    let Some((src, is_write)) = [r, w].into_iter().flatten().max_by_key(|(s, _)| s.line) else {
        return Ok(());
    };
    let v = pct(cx, src.text(), src)?;
    p.read_pct = if is_write { 100.0 - v } else { v };
    p.origins.push(Origin::Opt(src.clone()));
    Ok(())
}
