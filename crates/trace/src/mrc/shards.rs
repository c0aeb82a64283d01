//! LRU stack distances for every reference (exact) or for a spatial sample of the objects (SHARDS,
//! Waldspurger et al., FAST 2015): an object is sampled when a hash of it falls below a threshold, so every
//! reference to a sampled object is seen and its distance among sampled objects, divided by the sampling
//! rate, estimates its distance among all. Fixed-rate keeps the threshold; fixed-size lowers it to keep at
//! most `s_max` objects, dropping the objects of the highest hash, and weights each later reference by the
//! new rate's inverse.

use super::histogram::DistanceHistogram;
use super::stack::StackDistance;
use std::collections::BinaryHeap;

/// The hash modulus: thresholds are in `0..=MODULUS`, the rate is threshold / modulus.
pub const MODULUS: u64 = 1 << 24;

/// The spatial hash of an object, in `0..MODULUS` (splitmix64's finaliser: sequential keys scatter).
#[inline]
pub fn spatial_hash(key: u64) -> u64 {
    let mut z = key.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (z ^ (z >> 31)) & (MODULUS - 1)
}

/// How the LRU distances are found.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Method {
    /// Every reference.
    Exact,
    /// SHARDS at a fixed sampling rate (0 < rate <= 1).
    FixedRate(f64),
    /// SHARDS keeping at most this many objects (exact while the trace has no more).
    FixedSize(usize),
}

/// Stack distances of a reference stream, into a histogram.
pub struct LruDistances {
    stack: StackDistance,
    hist: DistanceHistogram,
    threshold: u64,
    exact: bool,
    fixed_size: Option<(usize, BinaryHeap<(u64, u64)>)>,
    references: u64,
    sampled: u64,
}

impl LruDistances {
    /// Distances found by `method`.
    pub fn new(method: Method) -> LruDistances {
        let (threshold, fixed_size) = match method {
            Method::Exact => (MODULUS, None),
            Method::FixedRate(rate) => {
                (((rate.clamp(0.0, 1.0) * MODULUS as f64).round() as u64).max(1), None)
            }
            Method::FixedSize(s_max) => (MODULUS, Some((s_max.max(1), BinaryHeap::new()))),
        };
        let exact = threshold == MODULUS && fixed_size.is_none();
        LruDistances {
            stack: StackDistance::new(),
            hist: DistanceHistogram::default(),
            threshold,
            exact,
            fixed_size,
            references: 0,
            sampled: 0,
        }
    }

    /// The sampling rate now (1 when exact).
    pub fn rate(&self) -> f64 {
        self.threshold as f64 / MODULUS as f64
    }

    /// Whether every reference was seen.
    pub fn is_exact(&self) -> bool {
        self.threshold == MODULUS
    }

    /// The spatial threshold now: an object is sampled when its [`spatial_hash`] is below it.
    pub fn threshold(&self) -> u64 {
        self.threshold
    }

    /// References seen (sampled or not).
    pub fn references(&self) -> u64 {
        self.references
    }

    /// One reference to `key`.
    #[inline]
    pub fn access(&mut self, key: u64) {
        self.references += 1;
        if self.exact {
            match self.stack.access(key) {
                Some(d) => self.hist.add(d, 1.0),
                None => self.hist.add_cold(1.0),
            }
            return;
        }
        let h = spatial_hash(key);
        if h >= self.threshold {
            return;
        }
        self.sampled += 1;
        let rate = self.rate();
        match self.stack.access(key) {
            Some(d) => self.hist.add((d as f64 / rate) as u64, 1.0 / rate),
            None => {
                self.hist.add_cold(1.0 / rate);
                self.track(h, key);
            }
        }
    }

    /// A write installing `key`: it moves to the top of the stack (or enters it) without a distance counted.
    #[inline]
    pub fn install(&mut self, key: u64) {
        if self.exact {
            self.stack.access(key);
            return;
        }
        let h = spatial_hash(key);
        if h < self.threshold && self.stack.access(key).is_none() {
            self.track(h, key);
        }
    }

    /// Fixed-size: a newly sampled object; past `s_max`, the threshold drops to the highest hash held and the
    /// objects at or above it leave.
    fn track(&mut self, h: u64, key: u64) {
        let Some((s_max, heap)) = &mut self.fixed_size else { return };
        heap.push((h, key));
        if heap.len() <= *s_max {
            return;
        }
        let top = heap.peek().map_or(self.threshold, |&(h, _)| h);
        self.threshold = top;
        while heap.peek().is_some_and(|&(h, _)| h >= top) {
            let (_, k) = heap.pop().expect("peeked");
            self.stack.remove(k);
        }
    }

    /// The histogram, with SHARDS-adj's correction for fixed-rate sampling: the references the sample should
    /// have had and did not (or had too many) are counted at distance 0 (Waldspurger et al., section 4.2).
    pub fn finish(mut self) -> DistanceHistogram {
        if !self.exact && self.fixed_size.is_none() {
            let expected = self.references as f64;
            let got = self.hist.total();
            self.hist.adjust_first(expected - got);
        }
        self.hist
    }

    /// Objects tracked now (all distinct objects when exact; the sample's otherwise).
    pub fn objects(&self) -> u64 {
        self.stack.objects()
    }

    /// Sampled references.
    pub fn sampled(&self) -> u64 {
        if self.exact {
            self.references
        } else {
            self.sampled
        }
    }
}
