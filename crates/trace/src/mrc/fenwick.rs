//! A Fenwick (binary indexed) tree of 0/1 marks over access times: which times are some object's most recent
//! reference. The marks after a time `t` are the distinct objects referenced since `t`: the stack distance.

/// Marks at positions `1..=capacity`, with O(log n) mark, unmark and prefix count.
pub(crate) struct Fenwick {
    tree: Vec<u32>,
}

impl Fenwick {
    /// A tree of `capacity` unmarked positions.
    pub(crate) fn new(capacity: usize) -> Fenwick {
        Fenwick { tree: vec![0; capacity + 1] }
    }

    /// A tree of `capacity` positions with `1..=marked` marked, built in O(n).
    pub(crate) fn with_marked(capacity: usize, marked: usize) -> Fenwick {
        let mut tree = vec![0u32; capacity + 1];
        for slot in &mut tree[1..=marked] {
            *slot = 1;
        }
        for i in 1..=capacity {
            let parent = i + (i & i.wrapping_neg());
            if parent <= capacity {
                tree[parent] += tree[i];
            }
        }
        Fenwick { tree }
    }

    /// Positions it holds.
    pub(crate) fn capacity(&self) -> usize {
        self.tree.len() - 1
    }

    /// Adds `delta` (+1 mark, -1 unmark, as a wrapping u32) at position `i` (1-based).
    #[inline]
    pub(crate) fn add(&mut self, mut i: usize, delta: u32) {
        let n = self.tree.len();
        while i < n {
            self.tree[i] = self.tree[i].wrapping_add(delta);
            i += i & i.wrapping_neg();
        }
    }

    /// Marks at positions `1..=i`.
    #[inline]
    pub(crate) fn prefix(&self, mut i: usize) -> u32 {
        let mut sum = 0u32;
        while i > 0 {
            sum = sum.wrapping_add(self.tree[i]);
            i &= i - 1;
        }
        sum
    }
}
