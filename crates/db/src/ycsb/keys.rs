//! Which record an operation touches, as YCSB's CoreWorkload chooses it (`site.ycsb.generator`): records
//! are numbered from 0 in insertion order, and their keys are `user` followed by the FNV-1a 64-bit hash of
//! the number (YCSB's `insertorder=hashed`), so neighbouring numbers land far apart in the key's B-tree.
//!
//! - *zipfian* (YCSB's default, `requestdistribution=zipfian`): a few records are very popular (constant
//!   0.99), and which ones is scattered over the key space: a Zipfian number drawn over ten billion items
//!   is hashed onto the records (`ScrambledZipfianGenerator`), so the popular records are not the first
//!   ones loaded.
//! - *latest* (workload D): the most recently inserted records are the most popular: the newest minus a
//!   Zipfian number over the records inserted so far (`SkewedLatestGenerator`).
//! - *uniform*: every record alike.
//!
//! The Zipfian numbers are Gray et al.'s ("Quickly generating billion-record synthetic databases",
//! SIGMOD 1994), as YCSB's `ZipfianGenerator` draws them: zeta(n, θ) computed once (for ten billion items,
//! YCSB's precomputed constant), then one uniform draw and one `powf` per number.

use iolab_rng::Rng;

/// YCSB's Zipfian constant.
pub const ZIPFIAN_CONSTANT: f64 = 0.99;

/// The items a scrambled Zipfian number is drawn over before it is hashed onto the records (YCSB's
/// `ScrambledZipfianGenerator.ITEM_COUNT`).
const SCRAMBLED_ITEMS: u64 = 10_000_000_000;

/// zeta(10^10, 0.99), YCSB's `ScrambledZipfianGenerator.ZETAN` (too slow to sum at start-up).
const SCRAMBLED_ZETAN: f64 = 26.469_028_201_783_02;

/// The FNV-1a 64-bit hash of a number's eight little-endian bytes, made non-negative as a Java `long`
/// (YCSB's `Utils.fnvhash64`, which returns `Math.abs` of it).
pub fn fnv64(mut v: u64) -> u64 {
    let mut hash: u64 = 0xCBF2_9CE4_8422_2325;
    for _ in 0..8 {
        let octet = v & 0xff;
        v >>= 8;
        hash ^= octet;
        hash = hash.wrapping_mul(0x0000_0100_0000_01B3);
    }
    (hash as i64).wrapping_abs() as u64
}

/// Record `n`'s key: `user` and its hash, as YCSB writes it.
pub fn key(n: u64) -> String {
    format!("user{}", fnv64(n))
}

/// The sum of 1/i^θ for i in 1..=n.
fn zeta(n: u64, theta: f64) -> f64 {
    (1..=n).map(|i| 1.0 / (i as f64).powf(theta)).sum()
}

/// Zipfian numbers in `0..items`, 0 the most popular.
#[derive(Clone, Debug)]
pub struct Zipfian {
    items: u64,
    theta: f64,
    alpha: f64,
    zetan: f64,
    eta: f64,
    half_pow_theta: f64,
}

impl Zipfian {
    /// Over `items` items (at least 2) with zeta(items) given: YCSB's constructor with its constant.
    fn with_zetan(items: u64, zetan: f64) -> Zipfian {
        assert!(items >= 2, "a Zipfian distribution needs two items at least, got {items}");
        let theta = ZIPFIAN_CONSTANT;
        let zeta2 = zeta(2, theta);
        Zipfian {
            items,
            theta,
            alpha: 1.0 / (1.0 - theta),
            zetan,
            eta: (1.0 - (2.0 / items as f64).powf(1.0 - theta)) / (1.0 - zeta2 / zetan),
            half_pow_theta: 0.5f64.powf(theta),
        }
    }

    /// Over `items` items (at least 2), zeta summed once (O(items): for a workload's records, at start).
    pub fn new(items: u64) -> Zipfian {
        Zipfian::with_zetan(items, zeta(items, ZIPFIAN_CONSTANT))
    }

    /// The next number.
    pub fn next(&self, rng: &mut Rng) -> u64 {
        let u = rng.unit_f64();
        let uz = u * self.zetan;
        if uz < 1.0 {
            return 0;
        }
        if uz < 1.0 + self.half_pow_theta {
            return 1;
        }
        let v = (self.items as f64 * (self.eta * u - self.eta + 1.0).powf(self.alpha)) as u64;
        v.min(self.items - 1)
    }

    /// Its θ.
    pub fn theta(&self) -> f64 {
        self.theta
    }
}

/// How an operation picks an existing record.
#[derive(Clone, Debug)]
pub enum Chooser {
    /// YCSB's scrambled Zipfian: a Zipfian number over ten billion items, hashed onto the records.
    Zipfian(Zipfian),
    /// The newest records most popular: the newest minus a Zipfian number over `records` (YCSB draws over
    /// the records inserted so far; over the loaded ones is within a few per mille while inserts are 5 %).
    Latest(Zipfian),
    /// Every record alike.
    Uniform,
}

impl Chooser {
    /// The chooser of `distribution` (`zipfian`, `latest` or `uniform`) over `records` loaded records.
    pub fn new(distribution: Distribution, records: u64) -> Chooser {
        match distribution {
            Distribution::Zipfian => Chooser::Zipfian(Zipfian::with_zetan(SCRAMBLED_ITEMS, SCRAMBLED_ZETAN)),
            Distribution::Latest => Chooser::Latest(Zipfian::new(records.max(2))),
            Distribution::Uniform => Chooser::Uniform,
        }
    }

    /// A record number below `count` (the records there are now, loaded and inserted).
    pub fn next(&self, rng: &mut Rng, count: u64) -> u64 {
        debug_assert!(count > 0);
        match self {
            Chooser::Zipfian(z) => fnv64(z.next(rng)) % count,
            Chooser::Latest(z) => count - 1 - z.next(rng) % count,
            Chooser::Uniform => rng.below(count),
        }
    }
}

/// Which records an operation favours (YCSB's `requestdistribution`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Distribution {
    /// A few records very popular, scattered over the key space.
    Zipfian,
    /// The newest records most popular.
    Latest,
    /// Every record alike.
    Uniform,
}

impl Distribution {
    /// Its name as the document says it.
    pub fn name(self) -> &'static str {
        match self {
            Distribution::Zipfian => "zipfian",
            Distribution::Latest => "latest",
            Distribution::Uniform => "uniform",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv64_is_ycsbs_and_keys_are_user_and_the_hash() {
        // As YCSB's Utils.fnvhash64 gives them (computed apart, with Java's long arithmetic).
        assert_eq!(fnv64(0), 6_284_781_860_667_377_211);
        assert_eq!(fnv64(1), 8_517_097_267_634_966_620);
        assert_eq!(fnv64(12_345), 1_792_800_413_050_876_852);
        assert_eq!(key(0), "user6284781860667377211");
    }

    #[test]
    fn the_scrambled_constant_is_zeta_of_ten_billion() {
        // Summing 10^10 terms takes minutes; the tail from 10^7 on is ∫ x^-0.99 dx within 1e-6 here.
        let head = zeta(10_000_000, ZIPFIAN_CONSTANT);
        let tail = |x: f64| x.powf(1.0 - ZIPFIAN_CONSTANT) / (1.0 - ZIPFIAN_CONSTANT);
        let estimate = head + tail(1e10 + 0.5) - tail(1e7 + 0.5);
        assert!((estimate - SCRAMBLED_ZETAN).abs() < 1e-4, "{estimate}");
    }

    #[test]
    fn zipfian_numbers_favour_the_first_items_as_the_law_says() {
        let z = Zipfian::new(1000);
        let mut rng = Rng::new(7);
        let mut counts = vec![0u32; 1000];
        let n = 200_000;
        for _ in 0..n {
            counts[z.next(&mut rng) as usize] += 1;
        }
        // P(0) = 1 / zeta(1000, 0.99), P(1) = P(0) / 2^0.99.
        let p0 = 1.0 / zeta(1000, 0.99);
        let share = |i: usize| counts[i] as f64 / n as f64;
        assert!((share(0) - p0).abs() < 0.01, "{} vs {p0}", share(0));
        assert!((share(1) - p0 / 2f64.powf(0.99)).abs() < 0.01);
        assert!(counts[0] > counts[10] && counts[10] > counts[500]);
    }

    #[test]
    fn choosers_stay_below_the_count_and_latest_favours_the_newest() {
        let mut rng = Rng::new(3);
        for c in [Distribution::Zipfian, Distribution::Latest, Distribution::Uniform] {
            let chooser = Chooser::new(c, 100);
            for count in [1, 2, 100, 150] {
                for _ in 0..1000 {
                    assert!(chooser.next(&mut rng, count) < count);
                }
            }
        }
        let latest = Chooser::new(Distribution::Latest, 1000);
        let newest = (0..10_000).filter(|_| latest.next(&mut rng, 1000) >= 990).count();
        assert!(newest > 3000, "{newest} of 10,000 among the 10 newest");
    }
}
