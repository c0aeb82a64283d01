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

/// Marks over time positions as a bitmap, with a Fenwick tree over the count of each 64-position word: a
/// count after a position reads one word and a tree 64 times smaller than the positions (it stays in cache),
/// where a Fenwick tree over positions would miss the cache at most of its ~log2(n) steps.
pub(crate) struct Marks {
    words: Vec<u64>,
    blocks: Fenwick,
    marked: u32,
}

impl Marks {
    /// `capacity` positions (0-based), `0..marked` marked.
    pub(crate) fn new(capacity: usize, marked: usize) -> Marks {
        let n_words = capacity.div_ceil(64);
        let mut words = vec![0u64; n_words];
        for (w, word) in words.iter_mut().enumerate() {
            let lo = w * 64;
            if marked >= lo + 64 {
                *word = u64::MAX;
            } else if marked > lo {
                *word = (1u64 << (marked - lo)) - 1;
            }
        }
        let mut blocks = Fenwick::new(n_words);
        for (w, word) in words.iter().enumerate() {
            if *word != 0 {
                blocks.add(w + 1, word.count_ones());
            }
        }
        Marks { words, blocks, marked: marked as u32 }
    }

    /// Positions it holds.
    pub(crate) fn capacity(&self) -> usize {
        self.words.len() * 64
    }

    /// Marks position `i`.
    #[inline]
    pub(crate) fn mark(&mut self, i: usize) {
        self.words[i >> 6] |= 1 << (i & 63);
        self.blocks.add((i >> 6) + 1, 1);
        self.marked += 1;
    }

    /// Unmarks position `i` (marked).
    #[inline]
    pub(crate) fn unmark(&mut self, i: usize) {
        self.words[i >> 6] &= !(1 << (i & 63));
        self.blocks.add((i >> 6) + 1, u32::MAX);
        self.marked -= 1;
    }

    /// Marked positions after `i`.
    #[inline]
    pub(crate) fn count_after(&self, i: usize) -> u32 {
        let (w, b) = (i >> 6, i & 63);
        let above = if b == 63 { 0 } else { self.words[w] & (u64::MAX << (b + 1)) };
        above.count_ones() + (self.marked - self.blocks.prefix(w + 1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_count_what_a_plain_scan_counts() {
        let mut m = Marks::new(300, 70);
        let mut plain: Vec<bool> = (0..320).map(|i| i < 70).collect();
        for (i, on) in [(5, false), (64, false), (127, true), (128, true), (299, true), (0, false)] {
            if on {
                m.mark(i)
            } else {
                m.unmark(i)
            }
            plain[i] = on;
        }
        for i in 0..300 {
            let want = plain[i + 1..].iter().filter(|&&b| b).count() as u32;
            assert_eq!(m.count_after(i), want, "after {i}");
        }
    }
}
