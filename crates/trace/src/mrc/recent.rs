//! Exact LRU stack distances below a depth `D`: the `D` most recently referenced objects, in a bounded
//! version of [`StackDistance`](super::StackDistance). A reference to one of them has its exact distance
//! (below `D`); any other (a first reference, or one at a distance of `D` or more) is only known to be far.
//! SHARDS at a fixed rate runs every reference through it, so the curve is exact at the small sizes where a
//! spatial sample holds too few objects.
//!
//! A far reference is the common case on a large working set (one object enters, the least recent leaves), so
//! it is made cheap: the object that leaves is neither looked up nor removed. The table from object to last
//! time ([`TimeTable`]) holds an entry for it still, dead because its time is before the oldest live
//! position, and a new object takes the first dead or empty slot of its probe. The marks are counted per
//! block ([`BlockMarks`]), so marking and unmarking are O(1). When the positions run out (every `7 D`
//! references at most, `3 D` for a deep stack) the live objects move to the front and the table is rebuilt
//! from them alone.

use super::hash::object_hash;

/// Positions per object of the depth: they run out, and the live objects are compacted, every
/// `(POSITIONS_PER_OBJECT - 1) D` references at most; fewer for a deep stack ([`MANY_POSITIONS`]).
const POSITIONS_PER_OBJECT: usize = 8;

/// Positions past which a stack has four per object only, so that its table (4 bytes a slot, two slots a
/// position) stays within 1 MiB, in L2, unless the depth needs more: compactions cost less than the misses
/// of a larger table (measured end to end and in `bench/mrc_speed.sh`).
const MANY_POSITIONS: usize = 1 << 17;

/// The deepest stack: its positions fit in a slot's time.
pub(crate) const MAX_DEPTH: usize = (EMPTY_TIME as usize) / 4;

/// The `D` most recent objects, each at the time (position) of its last reference.
pub(crate) struct RecentStack {
    depth: usize,
    /// Objects held (at most `depth`): the marked positions.
    live: usize,
    table: TimeTable,
    /// Position -> the object referenced there.
    keys: Vec<u64>,
    marks: BlockMarks,
    /// No live position before it.
    oldest: usize,
    now: usize,
}

impl RecentStack {
    /// The `depth` most recent objects (at least one, at most [`MAX_DEPTH`]).
    pub(crate) fn new(depth: usize) -> RecentStack {
        let depth = depth.max(1);
        assert!(depth <= MAX_DEPTH, "a recent stack of {depth} objects; at most {MAX_DEPTH}");
        let positions = (POSITIONS_PER_OBJECT * depth).min(MANY_POSITIONS).max(4 * depth).max(256);
        RecentStack {
            depth,
            live: 0,
            table: TimeTable::new(positions),
            keys: vec![0; positions],
            marks: BlockMarks::new(positions),
            oldest: 0,
            now: 0,
        }
    }

    /// References `key`, whose [`object_hash`] is `hash`: its stack distance when below the depth, None when
    /// it is farther or new.
    #[inline]
    pub(crate) fn access(&mut self, key: u64, hash: u64) -> Option<u64> {
        debug_assert_eq!(hash, object_hash(key));
        if self.now == self.keys.len() {
            self.compact();
        }
        let now = self.now;
        self.now += 1;
        let distance = match self.table.find(key, hash, &self.keys, self.oldest) {
            Probe::Live(slot, t) => {
                let after = self.marks.count_after(t);
                self.marks.unmark(t);
                self.table.set(slot, hash, now);
                Some(u64::from(after))
            }
            Probe::Free(slot) => {
                self.table.set(slot, hash, now);
                self.live += 1;
                None
            }
        };
        self.keys[now] = key;
        self.marks.mark(now);
        if self.live > self.depth {
            self.evict_oldest();
        }
        distance
    }

    /// Starts fetching the table slot where the object of `hash` is looked up: called a few references
    /// ahead of [`RecentStack::access`], it hides the cache miss (the table is larger than L1). A hint only.
    #[inline]
    pub(crate) fn prefetch(&self, hash: u64) {
        self.table.prefetch(hash);
    }

    /// The least recent object leaves: its mark goes, and its table entry is dead from now on.
    #[inline]
    fn evict_oldest(&mut self) {
        let t = self.marks.next_marked(self.oldest);
        self.marks.unmark(t);
        self.oldest = t + 1;
        self.live -= 1;
    }

    /// Out of positions: the live objects move to `0..live`, in order, and the table is rebuilt with them
    /// alone (the dead entries go).
    #[cold]
    fn compact(&mut self) {
        self.table.clear();
        let mut t = self.oldest;
        for live in 0..self.live {
            t = self.marks.next_marked(t);
            let key = self.keys[t];
            self.keys[live] = key;
            self.table.insert_new(object_hash(key), live);
            t += 1;
        }
        self.marks.reset(self.live);
        self.oldest = 0;
        self.now = self.live;
    }
}

/// Bits of a slot's time; the rest are the tag.
const TIME_BITS: u32 = 19;
const TIME_MASK: u32 = (1 << TIME_BITS) - 1;
/// An empty slot: no live or dead entry has this time (positions are fewer).
const EMPTY: u32 = u32::MAX;
const EMPTY_TIME: u32 = EMPTY & TIME_MASK;

/// Object -> the time of its last reference, over a [`RecentStack`]'s positions: open addressing with linear
/// probing over 4-byte slots, each a time and a tag of the object's hash (the object itself is the stack's
/// `keys[time]`, read only when the tag matches). Entries are never removed: one whose time is before the
/// oldest live position is dead, and its slot is taken again. The slots are twice the positions, and an
/// entry is added at most once a position, so the table is at most half full.
struct TimeTable {
    slots: Vec<u32>,
    /// The slot of a hash is its top bits.
    shift: u32,
}

/// Where a probe for an object ended.
enum Probe {
    /// At its live entry: the slot and the time.
    Live(usize, usize),
    /// It is not live: the slot to take (the first dead one of the probe, or the empty one it ended at).
    Free(usize),
}

impl TimeTable {
    /// A table for `positions` positions.
    fn new(positions: usize) -> TimeTable {
        let n = (2 * positions).next_power_of_two();
        TimeTable { slots: vec![EMPTY; n], shift: 64 - n.trailing_zeros() }
    }

    /// Bits 24 to 36 of the hash, above the time: neither the spatial hash's (0 to 23) nor the slot's (the
    /// top ones).
    #[inline]
    fn tag(hash: u64) -> u32 {
        ((hash >> 24) as u32) << TIME_BITS
    }

    /// Finds `key` (whose hash is `hash`) among the live entries (times `oldest..`, objects in `keys`).
    #[inline]
    fn find(&self, key: u64, hash: u64, keys: &[u64], oldest: usize) -> Probe {
        let (mask, tag) = (self.slots.len() - 1, Self::tag(hash));
        let mut i = (hash >> self.shift) as usize;
        let mut free = None;
        loop {
            let s = self.slots[i];
            if s == EMPTY {
                return Probe::Free(free.unwrap_or(i));
            }
            let t = (s & TIME_MASK) as usize;
            if t < oldest {
                free = free.or(Some(i));
            } else if s & !TIME_MASK == tag && keys[t] == key {
                return Probe::Live(i, t);
            }
            i = (i + 1) & mask;
        }
    }

    #[inline]
    fn prefetch(&self, hash: u64) {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            let slot: *const u32 = &self.slots[(hash >> self.shift) as usize];
            // SAFETY: a prefetch is a hint that reads nothing and cannot fault, and SSE is part of x86-64.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(slot.cast()) };
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = hash;
    }

    /// Slot `slot` holds the object of `hash` at `time`.
    #[inline]
    fn set(&mut self, slot: usize, hash: u64, time: usize) {
        debug_assert!(time < EMPTY_TIME as usize);
        self.slots[slot] = Self::tag(hash) | time as u32;
    }

    /// Adds an object known to have no entry (the table holds no dead ones).
    fn insert_new(&mut self, hash: u64, time: usize) {
        let mask = self.slots.len() - 1;
        let mut i = (hash >> self.shift) as usize;
        while self.slots[i] != EMPTY {
            i = (i + 1) & mask;
        }
        self.set(i, hash, time);
    }

    fn clear(&mut self) {
        self.slots.fill(EMPTY);
    }
}

/// Words of a block of [`BlockMarks`].
const BLOCK_WORDS: usize = 8;

/// Marks over positions as a bitmap with a count of marks per block of `64 * BLOCK_WORDS` positions: mark and
/// unmark are O(1); the count after a position reads the rest of its block's words and the counts of the
/// blocks after it (positions are few: a recent stack's).
struct BlockMarks {
    words: Vec<u64>,
    blocks: Vec<u32>,
}

impl BlockMarks {
    /// `capacity` positions, none marked.
    fn new(capacity: usize) -> BlockMarks {
        let blocks = capacity.div_ceil(64 * BLOCK_WORDS);
        BlockMarks { words: vec![0; blocks * BLOCK_WORDS], blocks: vec![0; blocks] }
    }

    /// Positions `0..marked` marked, the others not.
    fn reset(&mut self, marked: usize) {
        let (full, rest) = (marked / 64, marked % 64);
        self.words[..full].fill(u64::MAX);
        self.words[full..].fill(0);
        if rest > 0 {
            self.words[full] = (1 << rest) - 1;
        }
        let per_block = 64 * BLOCK_WORDS;
        for (b, count) in self.blocks.iter_mut().enumerate() {
            *count = marked.saturating_sub(b * per_block).min(per_block) as u32;
        }
    }

    #[inline]
    fn mark(&mut self, i: usize) {
        self.words[i >> 6] |= 1 << (i & 63);
        self.blocks[i / (64 * BLOCK_WORDS)] += 1;
    }

    /// Unmarks position `i` (marked).
    #[inline]
    fn unmark(&mut self, i: usize) {
        self.words[i >> 6] &= !(1 << (i & 63));
        self.blocks[i / (64 * BLOCK_WORDS)] -= 1;
    }

    /// The first marked position at or after `i` (one is).
    #[inline]
    fn next_marked(&self, i: usize) -> usize {
        let mut w = i >> 6;
        let mut word = self.words[w] & (u64::MAX << (i & 63));
        while word == 0 {
            w += 1;
            word = self.words[w];
        }
        (w << 6) + word.trailing_zeros() as usize
    }

    /// Marked positions after `i`.
    #[inline]
    fn count_after(&self, i: usize) -> u32 {
        let (w, b) = (i >> 6, i / (64 * BLOCK_WORDS));
        let above = (self.words[w] >> (i & 63) >> 1).count_ones();
        let in_block: u32 = self.words[w + 1..(b + 1) * BLOCK_WORDS].iter().map(|x| x.count_ones()).sum();
        above + in_block + self.blocks[b + 1..].iter().sum::<u32>()
    }
}

#[cfg(test)]
mod tests {
    use super::super::StackDistance;
    use super::*;

    /// `n` keys of a xorshift stream, squared (small keys hot) over `universe`.
    fn skewed(n: usize, universe: f64) -> impl Iterator<Item = u64> {
        let mut x = 88172645463325252u64;
        (0..n).map(move |_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let u = (x >> 11) as f64 / (1u64 << 53) as f64;
            (u * u * universe) as u64
        })
    }

    fn check_against_exact(depth: usize, keys: impl Iterator<Item = u64>) {
        let mut exact = StackDistance::new();
        let mut recent = RecentStack::new(depth);
        for (i, key) in keys.enumerate() {
            let want = exact.access(key).filter(|&d| d < depth as u64);
            assert_eq!(recent.access(key, object_hash(key)), want, "reference {i} to {key}");
        }
    }

    #[test]
    fn distances_below_the_depth_are_exact_and_the_rest_far() {
        check_against_exact(50, skewed(200_000, 400.0));
        // Mostly far references: the table fills with dead entries between compactions.
        check_against_exact(1_000, skewed(300_000, 40_000.0));
    }

    #[test]
    fn an_object_stays_while_fewer_than_the_depth_pass_however_long_ago() {
        // Object 7 is referenced once, then the 99 others over and over, for many compactions: it is still
        // the 100th most recent.
        let others = (0..1_000_000u64).map(|i| 1_000 + i % 99);
        let keys = std::iter::once(7).chain(others).chain(std::iter::once(7));
        check_against_exact(100, keys);
    }

    #[test]
    fn block_marks_count_what_a_plain_scan_counts() {
        let mut m = BlockMarks::new(2_000);
        m.reset(70);
        let mut plain: Vec<bool> = (0..2_048).map(|i| i < 70).collect();
        for (i, on) in
            [(5, false), (64, false), (127, true), (511, true), (512, true), (1999, true), (0, false)]
        {
            if on {
                m.mark(i)
            } else {
                m.unmark(i)
            }
            plain[i] = on;
        }
        for i in 0..2_000 {
            let want = plain[i + 1..].iter().filter(|&&b| b).count() as u32;
            assert_eq!(m.count_after(i), want, "after {i}");
        }
    }
}
