//! Exact LRU stack distances in one pass (Mattson's stack algorithm counted over access times, as in
//! Olken's and Niu et al.'s methods): each object's last reference is a mark at its time, and the marks
//! after that time are the distinct objects referenced since: O(log n) per reference.

use super::fenwick::Marks;
use foldhash::HashMap;
use std::collections::hash_map::Entry;

/// First capacity (positions), grown by doubling.
const FIRST_CAPACITY: usize = 1 << 16;

/// The LRU stack of the objects referenced so far.
pub struct StackDistance {
    /// Object -> the time (position) of its last reference.
    last: HashMap<u64, u32>,
    marks: Marks,
    /// The next time (position) to hand out.
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
        StackDistance { last: HashMap::default(), marks: Marks::new(FIRST_CAPACITY, 0), now: 0 }
    }

    /// Makes room for `more` new objects, or says the memory could not be had.
    pub fn try_reserve(&mut self, more: usize) -> Result<(), std::collections::TryReserveError> {
        self.last.try_reserve(more)
    }

    /// Objects tracked.
    pub fn objects(&self) -> u64 {
        self.last.len() as u64
    }

    /// References `key`: its stack distance (distinct other objects referenced since its last reference; an
    /// LRU cache of more than that many objects holds it), or None on its first reference.
    #[inline]
    pub fn access(&mut self, key: u64) -> Option<u64> {
        if self.now >= self.marks.capacity() {
            self.renumber();
        }
        let now = self.now;
        self.now += 1;
        let distance = match self.last.entry(key) {
            Entry::Occupied(mut e) => {
                let t = *e.get() as usize;
                let after = self.marks.count_after(t);
                self.marks.unmark(t);
                e.insert(now as u32);
                Some(after as u64)
            }
            Entry::Vacant(e) => {
                e.insert(now as u32);
                None
            }
        };
        self.marks.mark(now);
        distance
    }

    /// Forgets `key` (it leaves the stack); true if it was tracked.
    pub fn remove(&mut self, key: u64) -> bool {
        match self.last.remove(&key) {
            Some(t) => {
                self.marks.unmark(t as usize);
                true
            }
            None => false,
        }
    }

    /// Out of positions: renumbers the tracked objects' last references 0..live in order, among at least
    /// four times as many positions (so renumbering costs O(1) amortised per reference).
    #[cold]
    fn renumber(&mut self) {
        let mut order: Vec<(u32, u64)> = self.last.iter().map(|(&k, &t)| (t, k)).collect();
        order.sort_unstable();
        for (i, (_, key)) in order.iter().enumerate() {
            self.last.insert(*key, i as u32);
        }
        let capacity = (4 * order.len()).max(self.marks.capacity()).max(FIRST_CAPACITY);
        assert!(capacity < u32::MAX as usize, "more than 2^30 distinct objects");
        self.marks = Marks::new(capacity, order.len());
        self.now = order.len();
    }
}
