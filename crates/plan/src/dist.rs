//! Offset distributions over a worker's region: uniform, zipf, pareto, hot zones, and fio's fixed sequence of
//! blocks (not drawn: [`SlotSampler::nth`] gives the block of the k-th I/O).
//!
//! The region is cut into `slots` aligned positions. A distribution picks a slot index; for zipf and pareto
//! the popular indices are then scattered over the region by an affine bijection (a*k+b mod n), so hot
//! blocks are not all at the start of the device (fio scrambles with a hash for the same reason). Zones are
//! positional by definition ("80% of I/O to the first 20% of the space") and are not scattered.

use iolab_rng::Rng;
use iolab_spec::{Dist, Zone};

/// A sampler of slot indices in `0..n`.
#[derive(Clone, Debug)]
pub enum SlotSampler {
    /// Every slot equally likely.
    Uniform {
        /// Number of slots.
        n: u64,
    },
    /// Zipf by rejection-inversion, then scattered.
    Zipf(Zipf, Scatter),
    /// fio's pareto: index = (n-1) * u^pow, then scattered.
    Pareto {
        /// Number of slots.
        n: u64,
        /// ln(h)/ln(1-h).
        pow: f64,
        /// Scatter of popular slots.
        scatter: Scatter,
    },
    /// Zones: cumulative I/O share (scaled to 2^32) and slot range per zone.
    Zones {
        /// (cumulative share, first slot, slot count) per zone with I/O.
        zones: Vec<(u64, u64, u64)>,
    },
    /// fio's `sequence:` distribution: the k-th I/O's block is given, not drawn ([`SlotSampler::nth`]).
    Sequence {
        /// The blocks of one cycle.
        blocks: Vec<u64>,
        /// Each cycle a group of `blocks.len()` further on.
        advance: bool,
        /// How many groups fit in the `n` slots (1 without `advance`).
        groups: u64,
        /// Number of slots.
        n: u64,
    },
}

impl SlotSampler {
    /// A sampler for `dist` over `n` slots (n >= 1).
    pub fn new(dist: &Dist, n: u64) -> SlotSampler {
        debug_assert!(n >= 1);
        match dist {
            Dist::Uniform => SlotSampler::Uniform { n },
            Dist::Zipf { theta } => SlotSampler::Zipf(Zipf::new(n, *theta), Scatter::new(n)),
            Dist::Pareto { h } => {
                SlotSampler::Pareto { n, pow: h.ln() / (1.0 - h).ln(), scatter: Scatter::new(n) }
            }
            Dist::Zones { zones } => SlotSampler::Zones { zones: zone_table(zones, n) },
            // SPRandom's writes come from its own generator (crates/plan/src/sprandom.rs); other I/O is uniform.
            Dist::Sprandom { .. } => SlotSampler::Uniform { n },
            Dist::Sequence { blocks, advance } => {
                let len = blocks.len().max(1) as u64;
                let top = blocks.iter().copied().max().unwrap_or(0);
                let groups = if *advance && top < n { (n - 1 - top) / len + 1 } else { 1 };
                SlotSampler::Sequence { blocks: blocks.clone(), advance: *advance, groups, n }
            }
        }
    }

    /// The slot of the `k`-th I/O (0-based, counted per direction) for a sequence, as fio's
    /// `__get_next_rand_offset_sequence`: `blocks[k % len]`, plus `(k / len) * len` with `advance`, the groups
    /// starting over at the first once past the last that fits (fio ends the job there). `None` for a
    /// distribution that draws.
    #[inline]
    pub fn nth(&self, k: u64) -> Option<u64> {
        let SlotSampler::Sequence { blocks, advance, groups, n } = self else { return None };
        let len = (blocks.len() as u64).max(1);
        let b = *blocks.get((k % len) as usize)?;
        let group = if *advance { (k / len) % groups } else { 0 };
        Some((group * len + b).min(n - 1))
    }

    /// The next slot index in `0..n`.
    #[inline]
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        match self {
            SlotSampler::Uniform { n } => rng.below(*n),
            SlotSampler::Zipf(z, s) => s.map(z.sample(rng) - 1),
            SlotSampler::Pareto { n, pow, scatter } => {
                let k = ((*n - 1) as f64 * rng.unit_f64().powf(*pow)) as u64;
                scatter.map(k.min(n - 1))
            }
            SlotSampler::Zones { zones } => {
                let r = rng.next_u64() >> 32;
                let z = zones.iter().find(|z| r < z.0).unwrap_or(&zones[zones.len() - 1]);
                z.1 + rng.below(z.2)
            }
            // Not drawn: the generator asks for the k-th block (`nth`); this is the first.
            SlotSampler::Sequence { .. } => self.nth(0).unwrap_or(0),
        }
    }
}

fn zone_table(zones: &[Zone], n: u64) -> Vec<(u64, u64, u64)> {
    let mut out = Vec::new();
    let mut cum_io = 0.0;
    let mut cum_space = 0.0;
    for z in zones {
        let first = ((cum_space / 100.0) * n as f64).round() as u64;
        cum_space += z.space_pct;
        let end = (((cum_space / 100.0) * n as f64).round() as u64).min(n);
        cum_io += z.io_pct;
        if z.io_pct > 0.0 {
            let first = first.min(n - 1);
            out.push((
                ((cum_io / 100.0) * (1u64 << 32) as f64) as u64,
                first,
                end.saturating_sub(first).max(1),
            ));
        }
    }
    if let Some(last) = out.last_mut() {
        last.0 = 1 << 32;
    }
    out
}

/// An affine bijection on `0..n`: k -> (a*k + b) mod n with gcd(a, n) = 1.
#[derive(Clone, Copy, Debug)]
pub struct Scatter {
    n: u64,
    a: u64,
    b: u64,
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

impl Scatter {
    /// A fixed scatter for `n` slots (independent of the seed, so the hot set of a target is the same in every run).
    pub fn new(n: u64) -> Scatter {
        if n <= 2 {
            return Scatter { n, a: 1, b: 0 };
        }
        let mut a = 0x9E37_79B9_7F4A_7C15 % n;
        while a < 2 || gcd(a, n) != 1 {
            a = (a + 1) % n;
        }
        Scatter { n, a, b: n / 3 }
    }

    /// The image of `k`.
    #[inline]
    pub fn map(&self, k: u64) -> u64 {
        ((k as u128 * self.a as u128 + self.b as u128) % self.n as u128) as u64
    }
}

/// Zipf over `1..=n` with exponent `s`, by rejection-inversion (Hörmann and Derflinger, 1996, as in Apache
/// Commons RNG): O(1) per sample, no table, exact for any s > 0.
#[derive(Clone, Debug)]
pub struct Zipf {
    n: f64,
    s: f64,
    h_x1: f64,
    h_n: f64,
    cut: f64,
}

impl Zipf {
    /// Zipf over `1..=n` (n >= 1) with exponent `s` > 0.
    pub fn new(n: u64, s: f64) -> Zipf {
        let mut z = Zipf { n: n as f64, s, h_x1: 0.0, h_n: 0.0, cut: 0.0 };
        z.h_x1 = z.big_h(1.5) - 1.0;
        z.h_n = z.big_h(n as f64 + 0.5);
        z.cut = 2.0 - z.big_h_inv(z.big_h(2.5) - z.h(2.0));
        z
    }

    fn h(&self, x: f64) -> f64 {
        (-self.s * x.ln()).exp()
    }

    fn big_h(&self, x: f64) -> f64 {
        let lx = x.ln();
        helper2((1.0 - self.s) * lx) * lx
    }

    fn big_h_inv(&self, x: f64) -> f64 {
        let t = (x * (1.0 - self.s)).max(-1.0);
        (helper1(t) * x).exp()
    }

    /// A sample in `1..=n`.
    #[inline]
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        loop {
            let u = self.h_n + rng.unit_f64() * (self.h_x1 - self.h_n);
            let x = self.big_h_inv(u);
            let k = (x + 0.5).floor().clamp(1.0, self.n);
            if k - x <= self.cut || u >= self.big_h(k + 0.5) - self.h(k) {
                return k as u64;
            }
        }
    }
}

/// log1p(x)/x, continuous at 0.
fn helper1(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.ln_1p() / x
    } else {
        1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x))
    }
}

/// expm1(x)/x, continuous at 0.
fn helper2(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.exp_m1() / x
    } else {
        1.0 + x * 0.5 * (1.0 + x * (1.0 / 3.0) * (1.0 + 0.25 * x))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scatter_is_a_bijection() {
        for n in [1u64, 2, 3, 10, 97, 1000, 4096] {
            let s = Scatter::new(n);
            let mut seen = vec![false; n as usize];
            for k in 0..n {
                let m = s.map(k) as usize;
                assert!(!seen[m]);
                seen[m] = true;
            }
        }
    }

    #[test]
    fn zipf_rank_frequencies_follow_the_power_law() {
        let z = Zipf::new(1000, 1.0);
        let mut r = Rng::new(9);
        let mut counts = vec![0u64; 1001];
        let draws = 400_000;
        for _ in 0..draws {
            counts[z.sample(&mut r) as usize] += 1;
        }
        // P(k) = k^-1 / H_1000 with H_1000 = 7.4855
        let p1 = counts[1] as f64 / draws as f64;
        assert!((p1 - 1.0 / 7.4855).abs() < 0.005, "p1 = {p1}");
        let ratio = counts[1] as f64 / counts[2] as f64;
        assert!((ratio - 2.0).abs() < 0.1, "ratio = {ratio}");
    }

    #[test]
    fn zipf_touches_most_of_a_large_space() {
        // fio#1991: a flawed zipf generator touched 15.5M of 537M offsets. With theta 0.8 over 1M slots and 4M draws,
        // the expected distinct count is well above 30% of the space.
        let n = 1 << 20;
        let s = SlotSampler::new(&Dist::Zipf { theta: 0.8 }, n);
        let mut r = Rng::new(11);
        let mut seen = vec![false; n as usize];
        for _ in 0..4 * n {
            seen[s.sample(&mut r) as usize] = true;
        }
        let distinct = seen.iter().filter(|&&b| b).count();
        assert!(distinct as f64 > 0.3 * n as f64, "distinct {distinct}");
    }

    #[test]
    fn pareto_02_sends_80_percent_to_20_percent() {
        let n = 10_000u64;
        let pow = 0.2f64.ln() / 0.8f64.ln();
        let mut r = Rng::new(5);
        let mut low = 0;
        let draws = 200_000;
        for _ in 0..draws {
            let k = ((n - 1) as f64 * r.unit_f64().powf(pow)) as u64;
            if k < n / 5 {
                low += 1;
            }
        }
        let share = low as f64 / draws as f64;
        assert!((share - 0.8).abs() < 0.01, "share {share}");
    }

    #[test]
    fn zones_split_io_as_asked() {
        let d = Dist::parse("zones:80/20:20/80").unwrap();
        let s = SlotSampler::new(&d, 1000);
        let mut r = Rng::new(1);
        let mut hot = 0;
        for _ in 0..100_000 {
            if s.sample(&mut r) < 200 {
                hot += 1;
            }
        }
        assert!((hot as f64 / 100_000.0 - 0.8).abs() < 0.01, "hot {hot}");
    }
}
