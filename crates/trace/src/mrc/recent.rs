//! Exact LRU stack distances below a depth `D`: the `D` most recently referenced objects, in a bounded
//! version of [`StackDistance`](super::StackDistance). A reference to one of them has its exact distance
//! (below `D`); any other (a first reference, or one at a distance of `D` or more) is only known to be far.
//! SHARDS at a fixed rate runs every reference through it, so the curve is exact at the small sizes where a
//! spatial sample holds too few objects.

use super::fenwick::Marks;
use foldhash::HashMap;
use std::collections::hash_map::Entry;

/// The `D` most recent objects, each at the time (position) of its last reference.
pub(crate) struct RecentStack {
    depth: usize,
    at: HashMap<u64, u32>,
    /// Position -> the object referenced there.
    keys: Vec<u64>,
    marks: Marks,
    /// No live position before it.
    oldest: usize,
    now: usize,
}

impl RecentStack {
    /// The `depth` most recent objects (at least one).
    pub(crate) fn new(depth: usize) -> RecentStack {
        let depth = depth.max(1);
        let capacity = (8 * depth).max(256);
        RecentStack {
            depth,
            at: HashMap::with_capacity_and_hasher(depth + 1, Default::default()),
            keys: vec![0; capacity],
            marks: Marks::new(capacity, 0),
            oldest: 0,
            now: 0,
        }
    }

    /// References `key`: its stack distance when below the depth, None when it is farther or new.
    #[inline]
    pub(crate) fn access(&mut self, key: u64) -> Option<u64> {
        if self.now == self.keys.len() {
            self.compact();
        }
        let now = self.now;
        self.now += 1;
        self.keys[now] = key;
        let distance = match self.at.entry(key) {
            Entry::Occupied(mut e) => {
                let t = *e.get() as usize;
                let after = self.marks.count_after(t);
                self.marks.unmark(t);
                e.insert(now as u32);
                Some(u64::from(after))
            }
            Entry::Vacant(e) => {
                e.insert(now as u32);
                None
            }
        };
        self.marks.mark(now);
        if distance.is_none() && self.at.len() > self.depth {
            self.evict_oldest();
        }
        distance
    }

    /// The least recent object leaves.
    fn evict_oldest(&mut self) {
        let t = self.marks.next_marked(self.oldest);
        self.marks.unmark(t);
        self.at.remove(&self.keys[t]);
        self.oldest = t + 1;
    }

    /// Out of positions: the live ones move to `0..live`, in order.
    #[cold]
    fn compact(&mut self) {
        let mut live = 0;
        let mut t = self.oldest;
        while live < self.at.len() {
            t = self.marks.next_marked(t);
            let key = self.keys[t];
            self.keys[live] = key;
            self.at.insert(key, live as u32);
            live += 1;
            t += 1;
        }
        self.marks = Marks::new(self.keys.len(), live);
        self.oldest = 0;
        self.now = live;
    }
}

#[cfg(test)]
mod tests {
    use super::super::StackDistance;
    use super::*;

    #[test]
    fn distances_below_the_depth_are_exact_and_the_rest_far() {
        let mut x = 88172645463325252u64;
        let mut exact = StackDistance::new();
        let mut recent = RecentStack::new(50);
        for _ in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let u = (x >> 11) as f64 / (1u64 << 53) as f64;
            let key = (u * u * 400.0) as u64;
            let want = exact.access(key).filter(|&d| d < 50);
            assert_eq!(recent.access(key), want);
        }
    }
}
