//! fio's SPRandom preconditioning (sprandom.c, `dist = "sprandom:OP:REGIONS"`): one pass of random writes over
//! the device's physical capacity (its size plus the over-provisioning `OP`) that leaves each of `REGIONS`
//! equal regions of the write stream with the share of invalid blocks a steady-state random-write workload
//! leaves (Desnoyers' model: validity × share of space is constant). Each block of the region is written once,
//! in a seeded random order; after each write, with the region's invalid share as probability, its block is
//! put aside and written again early in the next region (which invalidates the first copy), as fio's
//! `sprandom_get_next_offset` does with its two-phase buffer. fio draws the order with its LFSR and the
//! probabilities with its own generator; iolab with a seeded Feistel permutation and its `Rng`: the same
//! sequence of regions, shares and rewrites, other blocks.

use iolab_rng::{splitmix64, Rng};
use iolab_spec::units::sprandom_pass_bytes;
use std::collections::VecDeque;

/// fio's precision of a share (PCT_PRECISION): shares are in ten-thousandths.
const PCT_PRECISION: u64 = 10_000;

/// fio's `linspace`: `num` values from `start` to `end`, both included.
fn linspace(start: f64, end: f64, num: usize) -> Vec<f64> {
    if num == 1 {
        return vec![start];
    }
    let step = (end - start) / (num as f64 - 1.0);
    (0..num).map(|i| start + i as f64 * step).collect()
}

/// fio's `linear_interp`: y at `x` on the polyline (xs, ys), the end values outside it.
fn interp(x: f64, xs: &[f64], ys: &[f64]) -> f64 {
    let n = xs.len();
    if n == 1 || x <= xs[0] {
        return ys[0];
    }
    if x >= xs[n - 1] {
        return ys[n - 1];
    }
    for (i, w) in xs.windows(2).enumerate() {
        if x >= w[0] && x <= w[1] {
            if (w[1] - w[0]).abs() < 1e-9 {
                return ys[i];
            }
            return ys[i] + (ys[i + 1] - ys[i]) * ((x - w[0]) / (w[1] - w[0]));
        }
    }
    0.0
}

/// The invalid share of each region, in ten-thousandths, as fio's `compute_validity_dist` and
/// `sprandom_setup` make it: validities spaced evenly from 1 down to the garbage collector's (1 - 1/WA, with
/// WA = 0.5/OP + 0.7), each taking space in proportion to 1/validity, resampled at equal space and reversed
/// (the first region the least valid).
pub fn invalid_shares(regions: usize, op: f64) -> Vec<u32> {
    let waf = 0.5 / op + 0.7;
    let gc = 1.0 - 1.0 / waf;
    let validity = linspace(1.0, gc, regions);
    let mut acc = 0.0;
    let xs: Vec<f64> = validity
        .iter()
        .map(|v| {
            acc += 1.0 / v;
            acc
        })
        .collect();
    let resampled = linspace(xs[0], xs[regions - 1], regions);
    let mut ys: Vec<f64> = resampled.iter().map(|x| interp(*x, &xs, &validity)).collect();
    ys.reverse();
    ys.iter().map(|v| ((1.0 - v) * PCT_PRECISION as f64).round() as u32).collect()
}

/// A seeded bijection on `0..n`: a 4-round Feistel network on the smallest even number of bits that holds n,
/// walked until it lands below n (each index once, in an order that looks random; fio uses an LFSR).
#[derive(Clone, Debug)]
struct Permutation {
    n: u64,
    half: u32,
    keys: [u64; 4],
}

impl Permutation {
    fn new(n: u64, seed: u64) -> Permutation {
        let bits = 64 - n.saturating_sub(1).leading_zeros();
        let mut s = seed;
        let keys = [splitmix64(&mut s), splitmix64(&mut s), splitmix64(&mut s), splitmix64(&mut s)];
        Permutation { n, half: bits.div_ceil(2).max(1), keys }
    }

    fn round_trip(&self, x: u64) -> u64 {
        let mask = (1u64 << self.half) - 1;
        let (mut l, mut r) = (x >> self.half, x & mask);
        for k in self.keys {
            let mut h = r ^ k;
            (l, r) = (r, l ^ (splitmix64(&mut h) & mask));
        }
        (l << self.half) | r
    }

    /// The `i`-th index of the order (`i < n`).
    fn at(&self, i: u64) -> u64 {
        let mut x = self.round_trip(i);
        while x >= self.n {
            x = self.round_trip(x);
        }
        x
    }
}

/// The state of one SPRandom pass over `blocks` blocks (see the module's text).
#[derive(Clone, Debug)]
pub struct SpRandom {
    order: Permutation,
    /// Blocks written for the first time so far (the next index into `order`).
    fresh: u64,
    invalid: Vec<u32>,
    region_writes: u64,
    writes_left: u64,
    region: usize,
    phase: usize,
    put_aside: [u64; 2],
    /// Blocks to write again: the first `due` of them in this region, the rest in the next.
    again: VecDeque<u64>,
    due: usize,
    rng: Rng,
    seed: u64,
}

impl SpRandom {
    /// A pass over `blocks` blocks of `bs` bytes with over-provisioning `op` and `regions` regions, drawing
    /// from `seed`.
    pub fn new(blocks: u64, bs: u64, op: f64, regions: u32, seed: u64) -> SpRandom {
        let regions = regions.max(1) as usize;
        let physical = sprandom_pass_bytes(op, blocks * bs, bs);
        let region_writes = physical / regions as u64 / bs.max(1);
        SpRandom {
            order: Permutation::new(blocks.max(1), seed),
            fresh: 0,
            invalid: invalid_shares(regions, op),
            region_writes,
            writes_left: region_writes,
            region: 0,
            phase: 0,
            put_aside: [0, 0],
            again: VecDeque::new(),
            due: 0,
            rng: Rng::new(seed ^ 0x5350_5241_4e44),
            seed,
        }
    }

    /// The next block to write. Once the pass is over (every region written, or every block written once), the
    /// next pass starts, with the next seed (fio ends the job there; its byte limit is the pass's size).
    pub fn next_block(&mut self) -> u64 {
        if let Some(b) = self.rewrite() {
            return b;
        }
        if self.writes_left == 0 {
            if self.region >= self.invalid.len() {
                return self.restart();
            }
            self.put_aside[self.phase] = 0;
            self.region += 1;
            self.phase ^= 1;
            self.writes_left = self.region_writes.saturating_sub(self.put_aside[self.phase]);
            self.due = self.again.len();
        }
        if self.fresh >= self.order.n {
            return self.restart();
        }
        let b = self.order.at(self.fresh);
        self.fresh += 1;
        self.writes_left = self.writes_left.saturating_sub(1);
        self.maybe_put_aside(b);
        b
    }

    /// A block put aside in the region before, when one is due (fio pops its committed buffer first).
    fn rewrite(&mut self) -> Option<u64> {
        if self.due == 0 {
            return None;
        }
        let b = self.again.pop_front()?;
        self.due -= 1;
        self.maybe_put_aside(b);
        Some(b)
    }

    /// fio's `sprandom_add_with_probability`: with the region's invalid share, `b` is written again in the
    /// next region. Past the last region (fio reads past its table there) the last region's share.
    fn maybe_put_aside(&mut self, b: u64) {
        let share = self.invalid[self.region.min(self.invalid.len() - 1)];
        if self.rng.below(PCT_PRECISION + 1) <= u64::from(share) {
            self.again.push_back(b);
            self.put_aside[self.phase ^ 1] += 1;
        }
    }

    /// The next pass, from the next seed.
    fn restart(&mut self) -> u64 {
        self.seed = self.seed.wrapping_add(1);
        self.order = Permutation::new(self.order.n, self.seed);
        (self.fresh, self.region, self.phase, self.put_aside) = (0, 0, 0, [0, 0]);
        (self.writes_left, self.due) = (self.region_writes, 0);
        self.again.clear();
        self.next_block()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_permutation_visits_every_index_once() {
        for n in [1u64, 2, 3, 7, 100, 1000, 4097] {
            let p = Permutation::new(n, 9);
            let mut seen = vec![false; n as usize];
            for i in 0..n {
                let x = p.at(i) as usize;
                assert!(!seen[x], "n {n}: {x} twice");
                seen[x] = true;
            }
        }
    }

    /// fio's model for 0.15 over-provisioning: WA = 0.5/0.15 + 0.7 = 4.033, the GC block 75.2% valid; the
    /// first region (the oldest) the most invalid, the last none.
    #[test]
    fn invalid_shares_follow_fios_model() {
        let s = invalid_shares(100, 0.15);
        assert_eq!(s.len(), 100);
        assert_eq!(s[99], 0, "the newest region is all valid");
        let gc: f64 = 1.0 - 1.0 / (0.5 / 0.15 + 0.7);
        assert_eq!(s[0], ((1.0f64 - gc) * 1e4).round() as u32, "the oldest is the GC block's validity");
        assert!(s.windows(2).all(|w| w[0] >= w[1]), "{s:?}");
        assert_eq!(invalid_shares(1, 0.15), [0]);
        assert_eq!(sprandom_pass_bytes(0.15, 1 << 30, 4096), 1_234_800_640);
    }

    /// The write stream of 10000 blocks in 10 regions (1150 writes each, the physical size over 10): each
    /// region's blocks put aside are written first in the next (after its first new write), in the share the
    /// model gives the region, and the pass writes every block.
    #[test]
    fn each_region_is_left_with_its_invalid_share() {
        let mut g = SpRandom::new(10_000, 4096, 0.15, 10, 3);
        assert_eq!(g.region_writes, 1150);
        let writes: Vec<u64> = (0..11_500).map(|_| g.next_block()).collect();
        assert!(writes.iter().all(|b| *b < 10_000));
        let mut seen = vec![false; 10_000];
        writes.iter().for_each(|b| seen[*b as usize] = true);
        assert!(seen.iter().filter(|s| **s).count() > 9_900, "the pass writes (nearly) every block");
        let shares = invalid_shares(10, 0.15);
        for r in 0..9 {
            let this: std::collections::HashSet<u64> =
                writes[r * 1150..(r + 1) * 1150].iter().copied().collect();
            let next = &writes[(r + 1) * 1150..(r + 2) * 1150];
            let again = next[1..].iter().take_while(|b| this.contains(b)).count();
            let want = shares[r] as f64 / 1e4;
            assert!((again as f64 / 1150.0 - want).abs() < 0.05, "region {r}: {again} again, share {want}");
        }
    }
}
