//! LRU stack distances for every reference (exact) or for a spatial sample of the objects (SHARDS,
//! Waldspurger et al., FAST 2015): an object is sampled when a hash of it falls below a threshold, so every
//! reference to a sampled object is seen and its distance among sampled objects, divided by the sampling
//! rate, estimates its distance among all. Fixed-rate keeps the threshold; fixed-size lowers it to keep at
//! most `s_max` objects, dropping the objects of the highest hash, and weights each later reference by the
//! new rate's inverse.
//!
//! At a fixed rate, the distances below a depth `D` come from every reference, exactly ([`RecentStack`]):
//! below `D` a sample holds too few objects for its distances to say much (at rate 0.1, a cache of 100
//! objects is 10 sampled ones, and whether the hottest objects happen to be sampled moves the curve). The
//! sample gives the distances of the references that are farther, rescaled so that they add up to the
//! number of such references, which is known exactly. (SHARDS-adj, which adds the sample's shortfall at
//! distance 0, or at `D`, left the curve 0.02 off at small sizes on the CloudPhysics sample; the scaling
//! spreads it over every farther distance in proportion, which measured closer on the streams tried.)

use super::hash::object_hash;
use super::histogram::DistanceHistogram;
use super::recent::{RecentStack, MAX_DEPTH};
use super::stack::StackDistance;
use std::collections::BinaryHeap;

/// The hash modulus: thresholds are in `0..=MODULUS`, the rate is threshold / modulus.
pub const MODULUS: u64 = 1 << 24;

/// The spatial hash of an object, in `0..MODULUS`: the low bits of its 64-bit hash (splitmix64's
/// finaliser: sequential keys scatter).
#[inline]
pub fn spatial_hash(key: u64) -> u64 {
    object_hash(key) & (MODULUS - 1)
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

/// Sampled objects a fixed-rate sample holds within the exact depth: `D = NEAR_SAMPLED / rate`, at most
/// [`MAX_NEAR_DEPTH`].
pub const NEAR_SAMPLED: f64 = 100.0;

/// The exact depth at most (objects): past it the exact stack leaves the L2 cache and costs more than the
/// rest of the analysis together.
pub const MAX_NEAR_DEPTH: u64 = 32_768;
const _: () = assert!(MAX_NEAR_DEPTH as usize <= MAX_DEPTH);

/// Stack distances of a reference stream, into a histogram.
pub struct LruDistances {
    stack: StackDistance,
    hist: DistanceHistogram,
    threshold: u64,
    exact: bool,
    fixed_size: Option<(usize, BinaryHeap<(u64, u64)>)>,
    near: Option<Near>,
    references: u64,
    sampled: u64,
}

/// Fixed rate: exact distances below a depth, the sample's beyond.
struct Near {
    recent: RecentStack,
    depth: u64,
    /// The sampled references at the depth or farther (or first), weighted by the rate's inverse.
    far: DistanceHistogram,
    /// All the references at the depth or farther (or first).
    far_references: u64,
}

impl Near {
    /// Exact below a depth of [`NEAR_SAMPLED`] sampled objects at `rate` (at most [`MAX_NEAR_DEPTH`]).
    fn new(rate: f64) -> Near {
        let depth = ((NEAR_SAMPLED / rate).round() as u64).min(MAX_NEAR_DEPTH);
        Near {
            recent: RecentStack::new(depth as usize),
            depth,
            far: DistanceHistogram::default(),
            far_references: 0,
        }
    }

    /// The sample's histogram and the near one together: the sample's counts scaled to the references
    /// known to be far (all misses when the sample had none).
    fn join(self, near: &mut DistanceHistogram) {
        let estimated = self.far.total();
        if estimated > 0.0 {
            near.absorb(&self.far, self.far_references as f64 / estimated);
        } else {
            near.add_cold(self.far_references as f64);
        }
    }
}

impl LruDistances {
    /// Makes room for `more` new objects, or says the memory could not be had (so that an allocation that
    /// fails is an error, not an abort).
    pub fn try_reserve(&mut self, more: usize) -> Result<(), std::collections::TryReserveError> {
        self.stack.try_reserve(more)
    }

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
        let near = (!exact && fixed_size.is_none()).then(|| Near::new(threshold as f64 / MODULUS as f64));
        LruDistances {
            stack: StackDistance::new(),
            hist: DistanceHistogram::default(),
            threshold,
            exact,
            fixed_size,
            near,
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
        let hash = object_hash(key);
        let h = hash & (MODULUS - 1);
        let (mut hist, mut depth) = (&mut self.hist, 0);
        if let Some(near) = &mut self.near {
            if let Some(d) = near.recent.access(key, hash) {
                hist.add(d, 1.0);
                self.stack_if_sampled(key, h);
                return;
            }
            near.far_references += 1;
            (hist, depth) = (&mut near.far, near.depth);
        }
        if h >= self.threshold {
            return;
        }
        self.sampled += 1;
        let rate = self.threshold as f64 / MODULUS as f64;
        match self.stack.access(key) {
            Some(d) => hist.add(((d as f64 / rate) as u64).max(depth), 1.0 / rate),
            None => {
                hist.add_cold(1.0 / rate);
                self.track(h, key);
            }
        }
    }

    /// Starts fetching what [`LruDistances::access`] of `key` will look up first (at a fixed rate, the near
    /// stack's table slot): called a few references ahead, it hides the cache miss. A hint only.
    #[inline]
    pub fn prefetch(&self, key: u64) {
        if let Some(near) = &self.near {
            near.recent.prefetch(object_hash(key));
        }
    }

    /// A reference whose distance the near stack gave (`h`: its spatial hash): the sample's stack still
    /// moves when it is sampled.
    #[inline]
    fn stack_if_sampled(&mut self, key: u64, h: u64) {
        if h < self.threshold {
            self.sampled += 1;
            self.stack.access(key);
        }
    }

    /// A write installing `key`: it moves to the top of the stack (or enters it) without a distance counted.
    #[inline]
    pub fn install(&mut self, key: u64) {
        if self.exact {
            self.stack.access(key);
            return;
        }
        let hash = object_hash(key);
        if let Some(near) = &mut self.near {
            near.recent.access(key, hash);
        }
        let h = hash & (MODULUS - 1);
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

    /// The histogram; at a fixed rate, the exact distances below the depth and the sample's beyond, scaled to
    /// the references known to be that far.
    pub fn finish(mut self) -> DistanceHistogram {
        if let Some(near) = self.near.take() {
            near.join(&mut self.hist);
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
