//! Stack distances counted in buckets, and the miss ratio at any cache size read from them.

/// Most buckets kept: past it, neighbours merge and the bucket width doubles (the memory stays bounded; the
/// curve is exact while distances fit, interpolated within a bucket after).
const MAX_BUCKETS: usize = 1 << 20;

/// Weighted counts of references by stack distance (in objects), and of first references.
#[derive(Clone, Debug)]
pub struct DistanceHistogram {
    width: u64,
    counts: Vec<f64>,
    cold: f64,
    total: f64,
}

impl Default for DistanceHistogram {
    fn default() -> Self {
        DistanceHistogram { width: 1, counts: Vec::new(), cold: 0.0, total: 0.0 }
    }
}

impl DistanceHistogram {
    /// Counts a reference at `distance` with `weight`.
    #[inline]
    pub fn add(&mut self, distance: u64, weight: f64) {
        let mut b = distance / self.width;
        while b >= MAX_BUCKETS as u64 {
            self.merge();
            b = distance / self.width;
        }
        let b = b as usize;
        if b >= self.counts.len() {
            self.counts.resize((b + 1).next_power_of_two().min(MAX_BUCKETS), 0.0);
        }
        self.counts[b] += weight;
        self.total += weight;
    }

    /// Counts a first reference (a miss at every size) with `weight`.
    #[inline]
    pub fn add_cold(&mut self, weight: f64) {
        self.cold += weight;
        self.total += weight;
    }

    /// Adds `other`'s counts, each times `factor` (its buckets at this histogram's width or wider).
    pub fn absorb(&mut self, other: &DistanceHistogram, factor: f64) {
        while self.width < other.width {
            self.merge();
        }
        for (i, &c) in other.counts.iter().enumerate() {
            if c != 0.0 {
                self.add(i as u64 * other.width, c * factor);
            }
        }
        self.add_cold(other.cold * factor);
    }

    fn merge(&mut self) {
        let half: Vec<f64> = self.counts.chunks(2).map(|c| c.iter().sum()).collect();
        self.counts = half;
        self.width *= 2;
    }

    /// References counted (weighted).
    pub fn total(&self) -> f64 {
        self.total
    }

    /// First references counted (weighted).
    pub fn cold(&self) -> f64 {
        self.cold
    }

    /// One past the largest distance counted: an LRU cache of this many objects misses only first references.
    pub fn span(&self) -> u64 {
        let last = self.counts.iter().rposition(|&c| c != 0.0).map_or(0, |i| i + 1);
        last as u64 * self.width
    }

    /// The miss ratio of an LRU cache of each of `sizes` objects (hits: references at a distance below the
    /// size), in the order given.
    pub fn miss_ratios(&self, sizes: &[u64]) -> Vec<f64> {
        let mut prefix = Vec::with_capacity(self.counts.len() + 1);
        prefix.push(0.0);
        let mut sum = 0.0;
        for c in &self.counts {
            sum += c;
            prefix.push(sum);
        }
        sizes
            .iter()
            .map(|&size| {
                let b = (size / self.width) as usize;
                let hits = if b >= self.counts.len() {
                    sum
                } else {
                    prefix[b] + self.counts[b] * (size % self.width) as f64 / self.width as f64
                };
                if self.total > 0.0 {
                    (1.0 - hits / self.total).clamp(0.0, 1.0)
                } else {
                    0.0
                }
            })
            .collect()
    }
}
