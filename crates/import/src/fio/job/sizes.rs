//! Block sizes of one direction: `bs`, `bsrange` and `bssplit`, as iolab weighted splits.

use super::{size_expected, Ctx};
use crate::fio::entry::Origin;
use crate::fio::units::parse_size;
use crate::fio::{FioError, Src};
use std::collections::BTreeMap;

/// Largest number of sizes in an iolab split.
const MAX_SIZES: usize = 64;

/// Block sizes (size, weight) of one direction, and their origins.
pub type Sizes = (Vec<(u64, u64)>, Vec<Origin>);

/// The block sizes (size, weight) of direction `d` (0 reads, 1 writes) and their origins. `bssplit` wins
/// over `bs` and `bsrange`; of those two the later one wins; fio's default is 4k.
pub fn block_sizes(cx: &Ctx, d: usize) -> Result<Sizes, FioError> {
    if let Some((r, w, src)) = cx.pair("bssplit")? {
        if let Some(t) = [r, w][d].clone() {
            return Ok((split(cx, &t, src)?, vec![Origin::Opt(src.clone())]));
        }
    }
    let bs = cx.get("bs");
    let br = cx.get("bsrange");
    let latest = [bs, br].into_iter().flatten().max_by_key(|s| s.line).cloned();
    let default = || (vec![(4096, 1)], vec![Origin::Default("bs not set: fio's default is 4k".into())]);
    let Some(src) = latest else { return Ok(default()) };
    let Some((r, w, _)) = cx.pair(crate::fio::options::canonical(&src.key))? else { return Ok(default()) };
    let Some(t) = [r, w][d].clone() else { return Ok(default()) };
    let sizes = if crate::fio::options::canonical(&src.key) == "bs" {
        vec![(size(cx, &t, &src)?, 1)]
    } else {
        range(cx, &t, &src)?
    };
    Ok((sizes, vec![Origin::Opt(src)]))
}

fn size(cx: &Ctx, t: &str, src: &Src) -> Result<u64, FioError> {
    parse_size(t, cx.kb).filter(|n| *n > 0).ok_or_else(|| cx.bad(src, size_expected()))
}

/// `bsrange=MIN-MAX`: fio draws MIN + MAX * u (u uniform in [0, 1)), rounds down to a multiple of MIN and caps
/// at MAX, so each multiple of MIN below MAX gets an equal share and MAX gets the rest.
fn range(cx: &Ctx, t: &str, src: &Src) -> Result<Vec<(u64, u64)>, FioError> {
    let (a, b) = t.split_once(['-', ':']).ok_or_else(|| cx.bad(src, "a range such as '4k-64k'"))?;
    let (mut lo, mut hi) = (size(cx, a, src)?, size(cx, b, src)?);
    if lo > hi {
        std::mem::swap(&mut lo, &mut hi);
    }
    if lo == hi {
        return Ok(vec![(lo, 1)]);
    }
    if hi / lo + 1 > MAX_SIZES as u64 {
        return Err(cx.refuse(
            src,
            format!(
                "fio issues every multiple of {lo} up to {hi}; iolab's split holds at most {MAX_SIZES} sizes"
            ),
        ));
    }
    let mut w: BTreeMap<u64, u64> = BTreeMap::new();
    // The draws are [lo, lo + hi); each bucket's ends are at most hi + 2 lo, so that sum bounds them all.
    let fits = hi.checked_add(lo).and_then(|x| x.checked_add(lo));
    let end = fits.map(|_| lo + hi).ok_or_else(|| cx.bad(src, super::too_large(hi, "+ 2 x", lo)))?;
    let mut k = 1;
    while k * lo < end {
        let (b_lo, b_hi) = (k * lo, (k + 1) * lo);
        let width = b_hi.min(end).saturating_sub(b_lo.max(lo));
        *w.entry((k * lo).min(hi)).or_default() += width;
        k += 1;
    }
    Ok(w.into_iter().filter(|(_, n)| *n > 0).collect())
}

/// `bssplit=SIZE/PCT:SIZE/PCT...`; sizes without a percentage share what is left equally.
fn split(cx: &Ctx, t: &str, src: &Src) -> Result<Vec<(u64, u64)>, FioError> {
    let expected = "SIZE/PERCENT entries separated by ':' (e.g. 4k/60:8k/40), percentages adding up to 100";
    let mut given: Vec<(u64, Option<f64>)> = Vec::new();
    for part in t.split(':').map(str::trim).filter(|p| !p.is_empty()) {
        let (s, p) = match part.split_once('/') {
            Some((s, p)) if p.trim().is_empty() => (s, None),
            Some((s, p)) => (s, Some(p.trim().parse::<f64>().map_err(|_| cx.bad(src, expected))?)),
            None => (part, None),
        };
        given.push((size(cx, s, src)?, p));
    }
    let named: f64 = given.iter().filter_map(|g| g.1).sum();
    let blanks = given.iter().filter(|g| g.1.is_none()).count();
    if given.is_empty() || named > 100.0 + 1e-9 || (blanks == 0 && (named - 100.0).abs() > 1e-9) {
        return Err(cx.bad(src, expected));
    }
    if given.len() > MAX_SIZES {
        return Err(
            cx.refuse(src, format!("more than {MAX_SIZES} sizes; iolab's split holds at most {MAX_SIZES}"))
        );
    }
    let rest = if blanks > 0 { (100.0 - named) / blanks as f64 } else { 0.0 };
    let mut w: BTreeMap<u64, u64> = BTreeMap::new();
    for (s, p) in given {
        // Hundredths of a percent, so fractional shares stay exact enough.
        *w.entry(s).or_default() += (p.unwrap_or(rest) * 100.0).round() as u64;
    }
    if w.values().all(|v| *v == 0) {
        return Err(cx.bad(src, expected));
    }
    Ok(w.into_iter().collect())
}
