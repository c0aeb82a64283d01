//! Reading a curve: its knee, and the cache size to recommend.
//!
//! The **recommendation** is the smallest size on the curve whose hit ratio reaches [`SHARE_OF_BEST`] of the
//! best any size on it reaches (a cache larger than the working set still misses every first reference, so
//! "best" is below 1). The **knee** is where the curve bends most: the point farthest below the straight line
//! from its first to its last point, with size on a log scale (curves span decades; on a linear scale every
//! knee would sit at the start).

use super::CurvePoint;

/// The share of the best hit ratio that the recommended size reaches.
pub const SHARE_OF_BEST: f64 = 0.95;

/// The recommended size and what it serves.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Recommendation {
    /// The point recommended.
    pub point: CurvePoint,
    /// The best hit ratio on the curve (at its largest size).
    pub best_hit_ratio: f64,
}

/// The smallest point of `points` (in size order) reaching [`SHARE_OF_BEST`] of the best hit ratio.
pub fn recommend(points: &[CurvePoint]) -> Option<Recommendation> {
    let best = points.iter().map(|p| 1.0 - p.miss_ratio).fold(f64::NAN, f64::max);
    if best.is_nan() || best <= 0.0 {
        return None;
    }
    let point = *points.iter().find(|p| 1.0 - p.miss_ratio >= SHARE_OF_BEST * best)?;
    Some(Recommendation { point, best_hit_ratio: best })
}

/// The point of `points` (in size order) farthest below the chord from the first to the last, sizes on a
/// log scale; None for fewer than three points or a curve with no bend below its chord.
pub fn knee(points: &[CurvePoint]) -> Option<CurvePoint> {
    let (first, last) = (points.first()?, points.last()?);
    if points.len() < 3 || last.objects <= first.objects {
        return None;
    }
    let x = |p: &CurvePoint| (p.objects.max(1) as f64).ln();
    let (x0, x1) = (x(first), x(last));
    let chord =
        |p: &CurvePoint| first.miss_ratio + (last.miss_ratio - first.miss_ratio) * (x(p) - x0) / (x1 - x0);
    let (best, gap) = points
        .iter()
        .map(|p| (p, chord(p) - p.miss_ratio))
        .fold((first, 0.0), |acc, (p, g)| if g > acc.1 { (p, g) } else { acc });
    (gap > 0.0).then_some(*best)
}
