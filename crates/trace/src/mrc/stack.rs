//! Exact LRU stack distances in one pass (Mattson's stack algorithm with a Fenwick tree over access times,
//! as in Olken's and Niu et al.'s counting methods): O(log n) per reference.

use super::fenwick::Fenwick;
use foldhash::HashMap;
use std::collections::hash_map::Entry;

/// First capacity of the tree (positions), grown by doubling.
const FIRST_CAPACITY: usize = 1 << 16;

/// The LRU stack of the objects referenced so far.
pub struct StackDistance {
    /// Object -> the time (tree position) of its last reference.
    last: HashMap<u64, u32>,
    tree: Fenwick,
    /// Positions marked (= objects tracked).
    live: u32,
    /// The next time (position) to hand out; positions start at 1.
    now: usize,
}

impl Default for StackDistance {
    fn default() -> Self {
        Self::new()
    }
}

impl StackDistance {
    /// An empty stack.
    pub fn new() -> StackDistance {
        StackDistance { last: HashMap::default(), tree: Fenwick::new(FIRST_CAPACITY), live: 0, now: 1 }
    }

    /// Objects tracked.
    pub fn objects(&self) -> u64 {
        self.live as u64
    }

    /// References `key`: its stack distance (distinct other objects referenced since its last reference; an
    /// LRU cache of more than that many objects holds it), or None on its first reference.
    #[inline]
    pub fn access(&mut self, key: u64) -> Option<u64> {
        if self.now > self.tree.capacity() {
            self.renumber();
        }
        let now = self.now as u32;
        self.now += 1;
        let distance = match self.last.entry(key) {
            Entry::Occupied(mut e) => {
                let t = *e.get() as usize;
                let after = self.live - self.tree.prefix(t);
                self.tree.add(t, u32::MAX);
                e.insert(now);
                Some(after as u64)
            }
            Entry::Vacant(e) => {
                e.insert(now);
                self.live += 1;
                None
            }
        };
        self.tree.add(now as usize, 1);
        distance
    }

    /// Forgets `key` (it leaves the stack); true if it was tracked.
    pub fn remove(&mut self, key: u64) -> bool {
        match self.last.remove(&key) {
            Some(t) => {
                self.tree.add(t as usize, u32::MAX);
                self.live -= 1;
                true
            }
            None => false,
        }
    }

    /// Out of positions: renumbers the tracked objects' last references 1..=live in order, in a tree of
    /// at least twice that (so renumbering costs O(1) amortised per reference).
    #[cold]
    fn renumber(&mut self) {
        let mut order: Vec<(u32, u64)> = self.last.iter().map(|(&k, &t)| (t, k)).collect();
        order.sort_unstable();
        for (i, (_, key)) in order.iter().enumerate() {
            self.last.insert(*key, i as u32 + 1);
        }
        let capacity = (2 * order.len()).max(self.tree.capacity()).max(FIRST_CAPACITY);
        assert!(capacity < u32::MAX as usize, "more than 2^31 distinct objects");
        self.tree = Fenwick::with_marked(capacity, order.len());
        self.now = order.len() + 1;
    }
}
