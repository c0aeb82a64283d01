//! Eviction policies over opaque keys: LRU, ARC and S3-FIFO (the paper's 2-bit and the 1-bit variant). Each decides which key to evict and
//! keeps only small per-key metadata; the cache maps keys to data slots.
//!
//! Every policy is built on the same compact core: nodes in parallel arrays (key `u64`, two `u32` list links,
//! one `u32` word holding a 28-bit value, the node's list and a frequency bit: 20 bytes a node) and an
//! open-addressed index of `u32` words (6 bytes a node). The value is the cache's data slot, so the policy's
//! index is the cache's only map from line to data. Ghost entries (ARC's B1/B2, S3-FIFO's ghost queue) are
//! nodes too and count in [`Policy::metadata_bytes`]: about 26 bytes per resident key for LRU, 52 for ARC
//! (up to 2c nodes) and 49 for S3-FIFO (c + 0.9c nodes).

use crate::index::{hash64, Index, MAX_ID};
use iolab_spec::CachePolicy;

/// Largest value a policy can store with a key (28 bits).
pub const MAX_VALUE: u32 = (1 << 28) - 1;

/// An eviction policy with a capacity in keys.
///
/// The key-only methods (`access`, `insert`, `remove`, `set_capacity`) are what a simulation needs; the cache
/// uses the `*_value` forms, which carry a 28-bit value (its data slot) with each resident key.
pub trait Policy: Send {
    /// Capacity in keys.
    fn capacity(&self) -> usize;
    /// Keys resident now.
    fn len(&self) -> usize;
    /// True when no key is resident.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// A lookup: true (and the policy records the access) when `key` is resident.
    fn access(&mut self, key: u64) -> bool {
        self.access_value(key).is_some()
    }
    /// Makes `key` (not resident) resident, evicting keys as needed; appends evicted keys to `evicted`.
    fn insert(&mut self, key: u64, evicted: &mut Vec<u64>) {
        self.insert_value(key, 0, &mut |k, _| evicted.push(k));
    }
    /// Drops `key` if resident (invalidation). Returns whether it was.
    fn remove(&mut self, key: u64) -> bool {
        self.remove_value(key).is_some()
    }
    /// Lowers or raises the capacity, appending keys evicted to fit.
    fn set_capacity(&mut self, capacity: usize, evicted: &mut Vec<u64>) {
        self.set_capacity_values(capacity, &mut |k, _| evicted.push(k));
    }
    /// Bytes of metadata the policy holds now (index, lists, ghosts), for the per-line figure.
    fn metadata_bytes(&self) -> usize;

    /// The capacity the policy was built for (the most [`Policy::set_capacity`] can raise it to).
    fn max_capacity(&self) -> usize;
    /// The value of a resident `key`, without recording an access.
    fn peek(&self, key: u64) -> Option<u32>;
    /// The value of a resident `key`, recording the access (a hit).
    fn access_value(&mut self, key: u64) -> Option<u32>;
    /// Makes `key` (not resident) resident with `value` (at most [`MAX_VALUE`]), calling `on_evict` with
    /// each key evicted to make room and its value. With capacity 0 the key itself is handed to `on_evict`.
    fn insert_value(&mut self, key: u64, value: u32, on_evict: &mut dyn FnMut(u64, u32));
    /// Drops a resident `key`, returning its value.
    fn remove_value(&mut self, key: u64) -> Option<u32>;
    /// Lowers or raises the capacity (at most [`Policy::max_capacity`]), calling `on_evict` for each key
    /// evicted to fit.
    fn set_capacity_values(&mut self, capacity: usize, on_evict: &mut dyn FnMut(u64, u32));
    /// Calls `f` with every resident key and its value, which `f` may change.
    fn for_each_value(&mut self, f: &mut dyn FnMut(u64, &mut u32));
    /// Number of node positions ([`Policy::node`] takes `0..node_slots()`).
    fn node_slots(&self) -> usize;
    /// The resident key and value at node position `i`, if that node holds a resident key (a cursor for
    /// scans that must not allocate).
    fn node(&self, i: usize) -> Option<(u64, u32)>;
}

/// A boxed policy of `kind` for `capacity` keys.
pub fn new_policy(kind: CachePolicy, capacity: usize) -> Box<dyn Policy> {
    match kind {
        CachePolicy::Lru => Box::new(Lru::new(capacity)),
        CachePolicy::Arc => Box::new(AdaptiveReplacement::new(capacity)),
        CachePolicy::S3Fifo => Box::new(S3Fifo::new(capacity)),
        CachePolicy::S3Fifo1Bit => Box::new(S3Fifo::one_bit(capacity)),
    }
}

const NIL: u32 = u32::MAX;
const TAG_SHIFT: u32 = 28;
const TAG_MASK: u32 = 0b111 << TAG_SHIFT;
const FREQ: u32 = 1 << 31;
const TAG_FREE: u32 = 7;

#[derive(Clone, Copy, Debug)]
struct List {
    head: u32,
    tail: u32,
    len: usize,
}

const EMPTY_LIST: List = List { head: NIL, tail: NIL, len: 0 };

/// Nodes in parallel arrays, an index, and up to four doubly linked lists (head = most recent). The arrays
/// are reserved for `max` nodes at construction and filled as nodes are first used, so a large cache that
/// holds few lines takes memory for those lines (reserved address space is not memory until touched), and
/// nothing is allocated per operation.
#[derive(Debug)]
struct Core {
    max: usize,
    keys: Vec<u64>,
    prev: Vec<u32>,
    next: Vec<u32>,
    /// Value (28 bits) | list tag (3 bits) | frequency bit.
    vals: Vec<u32>,
    index: Index,
    free: u32,
    hwm: u32,
    lists: [List; 4],
}

impl Core {
    fn new(max_nodes: usize) -> Core {
        let max_nodes = max_nodes.max(1);
        assert!(max_nodes <= MAX_ID as usize, "policy for {max_nodes} nodes: at most {MAX_ID} per shard");
        Core {
            max: max_nodes,
            keys: Vec::with_capacity(max_nodes),
            prev: Vec::with_capacity(max_nodes),
            next: Vec::with_capacity(max_nodes),
            vals: Vec::with_capacity(max_nodes),
            index: Index::new(max_nodes),
            free: NIL,
            hwm: 0,
            lists: [EMPTY_LIST; 4],
        }
    }

    fn metadata_bytes(&self) -> usize {
        self.keys.len() * 8
            + self.prev.len() * 4
            + self.next.len() * 4
            + self.vals.len() * 4
            + self.index.bytes()
            + std::mem::size_of::<Core>()
    }

    #[inline]
    fn find(&self, key: u64) -> Option<u32> {
        let keys = &self.keys;
        self.index.find(key, hash64(key), |id| keys[id as usize])
    }

    #[inline]
    fn tag(&self, n: u32) -> u32 {
        (self.vals[n as usize] & TAG_MASK) >> TAG_SHIFT
    }

    #[inline]
    fn value(&self, n: u32) -> u32 {
        self.vals[n as usize] & MAX_VALUE
    }

    #[inline]
    fn set_value(&mut self, n: u32, value: u32) {
        debug_assert!(value <= MAX_VALUE);
        let v = &mut self.vals[n as usize];
        *v = (*v & !MAX_VALUE) | (value & MAX_VALUE);
    }

    #[inline]
    fn freq(&self, n: u32) -> bool {
        self.vals[n as usize] & FREQ != 0
    }

    #[inline]
    fn set_freq(&mut self, n: u32, on: bool) {
        let v = &mut self.vals[n as usize];
        if on {
            *v |= FREQ;
        } else {
            *v &= !FREQ;
        }
    }

    /// A new node for `key` (not present), in no list yet (tag set to `list`, linked by `push_head`).
    fn alloc(&mut self, key: u64, value: u32) -> u32 {
        let n = if self.free != NIL {
            let n = self.free;
            self.free = self.next[n as usize];
            n
        } else {
            assert!((self.hwm as usize) < self.max, "policy: out of nodes");
            // Within the reserved capacity: no allocation.
            self.keys.push(0);
            self.prev.push(NIL);
            self.next.push(NIL);
            self.vals.push(TAG_FREE << TAG_SHIFT);
            self.hwm += 1;
            self.hwm - 1
        };
        self.keys[n as usize] = key;
        self.vals[n as usize] = value & MAX_VALUE;
        self.index.insert(hash64(key), n);
        n
    }

    /// Drops node `n` (already unlinked) from the index and frees it.
    fn release(&mut self, n: u32) {
        let keys = &self.keys;
        self.index.remove(hash64(keys[n as usize]), n, |id| hash64(keys[id as usize]));
        self.vals[n as usize] = TAG_FREE << TAG_SHIFT;
        self.next[n as usize] = self.free;
        self.free = n;
    }

    #[inline]
    fn push_head(&mut self, l: u32, n: u32) {
        let v = &mut self.vals[n as usize];
        *v = (*v & !TAG_MASK) | (l << TAG_SHIFT);
        let list = &mut self.lists[l as usize];
        self.prev[n as usize] = NIL;
        self.next[n as usize] = list.head;
        if list.head != NIL {
            self.prev[list.head as usize] = n;
        } else {
            list.tail = n;
        }
        list.head = n;
        list.len += 1;
    }

    #[inline]
    fn unlink(&mut self, n: u32) {
        let l = self.tag(n) as usize;
        let (p, x) = (self.prev[n as usize], self.next[n as usize]);
        let list = &mut self.lists[l];
        if p != NIL {
            self.next[p as usize] = x;
        } else {
            list.head = x;
        }
        if x != NIL {
            self.prev[x as usize] = p;
        } else {
            list.tail = p;
        }
        list.len -= 1;
    }

    #[inline]
    fn move_to_head(&mut self, l: u32, n: u32) {
        if self.lists[l as usize].head == n && self.tag(n) == l {
            return;
        }
        self.unlink(n);
        self.push_head(l, n);
    }

    #[inline]
    fn len(&self, l: u32) -> usize {
        self.lists[l as usize].len
    }

    #[inline]
    fn tail(&self, l: u32) -> u32 {
        self.lists[l as usize].tail
    }

    /// Unlinks and frees the tail of `l`, returning its key and value.
    fn drop_tail(&mut self, l: u32) -> (u64, u32) {
        let t = self.tail(l);
        debug_assert!(t != NIL);
        let kv = (self.keys[t as usize], self.value(t));
        self.unlink(t);
        self.release(t);
        kv
    }

    /// Moves the tail of `from` to the head of `to` (a resident list to a ghost list), returning its key
    /// and value.
    fn demote_tail(&mut self, from: u32, to: u32) -> (u64, u32) {
        let t = self.tail(from);
        debug_assert!(t != NIL);
        let kv = (self.keys[t as usize], self.value(t));
        self.unlink(t);
        self.set_freq(t, false);
        self.push_head(to, t);
        kv
    }

    fn for_each_value_in(&mut self, resident: impl Fn(u32) -> bool, f: &mut dyn FnMut(u64, &mut u32)) {
        for n in 0..self.hwm {
            let tag = self.tag(n);
            if tag != TAG_FREE && resident(tag) {
                let mut v = self.value(n);
                f(self.keys[n as usize], &mut v);
                self.set_value(n, v);
            }
        }
    }

    fn node_in(&self, i: usize, resident: impl Fn(u32) -> bool) -> Option<(u64, u32)> {
        if i >= self.hwm as usize {
            return None;
        }
        let tag = self.tag(i as u32);
        (tag != TAG_FREE && resident(tag)).then(|| (self.keys[i], self.value(i as u32)))
    }
}

// ------------------------------------------------------------------------------------------------------------
// LRU

/// Least recently used: one list, hits move to the head, the tail is evicted.
#[derive(Debug)]
pub struct Lru {
    core: Core,
    cap: usize,
    max: usize,
}

const LRU: u32 = 0;

impl Lru {
    /// An LRU of `capacity` keys.
    pub fn new(capacity: usize) -> Lru {
        Lru { core: Core::new(capacity), cap: capacity, max: capacity }
    }
}

impl Policy for Lru {
    fn capacity(&self) -> usize {
        self.cap
    }
    fn len(&self) -> usize {
        self.core.len(LRU)
    }
    fn metadata_bytes(&self) -> usize {
        self.core.metadata_bytes()
    }
    fn max_capacity(&self) -> usize {
        self.max
    }
    fn peek(&self, key: u64) -> Option<u32> {
        self.core.find(key).map(|n| self.core.value(n))
    }
    #[inline]
    fn access_value(&mut self, key: u64) -> Option<u32> {
        let n = self.core.find(key)?;
        self.core.move_to_head(LRU, n);
        Some(self.core.value(n))
    }
    fn insert_value(&mut self, key: u64, value: u32, on_evict: &mut dyn FnMut(u64, u32)) {
        debug_assert!(self.core.find(key).is_none(), "insert of a resident key");
        if self.cap == 0 {
            on_evict(key, value);
            return;
        }
        while self.len() >= self.cap {
            let (k, v) = self.core.drop_tail(LRU);
            on_evict(k, v);
        }
        let n = self.core.alloc(key, value);
        self.core.push_head(LRU, n);
    }
    fn remove_value(&mut self, key: u64) -> Option<u32> {
        let n = self.core.find(key)?;
        let v = self.core.value(n);
        self.core.unlink(n);
        self.core.release(n);
        Some(v)
    }
    fn set_capacity_values(&mut self, capacity: usize, on_evict: &mut dyn FnMut(u64, u32)) {
        self.cap = capacity.min(self.max);
        while self.len() > self.cap {
            let (k, v) = self.core.drop_tail(LRU);
            on_evict(k, v);
        }
    }
    fn for_each_value(&mut self, f: &mut dyn FnMut(u64, &mut u32)) {
        self.core.for_each_value_in(|_| true, f);
    }
    fn node_slots(&self) -> usize {
        self.core.hwm as usize
    }
    fn node(&self, i: usize) -> Option<(u64, u32)> {
        self.core.node_in(i, |_| true)
    }
}

// ------------------------------------------------------------------------------------------------------------
// ARC

/// Adaptive Replacement Cache (Megiddo and Modha, "ARC: A Self-Tuning, Low Overhead Replacement Cache",
/// FAST 2003): T1 (seen once recently) and T2 (seen at least twice) hold the resident keys, ghost lists B1 and
/// B2 remember keys evicted from each, and the target size `p` of T1 moves toward whichever ghost list gets
/// hits. A one-pass scan only churns T1, so a hot set in T2 survives it. (Named in full, not `Arc`, so it is
/// never mistaken for `std::sync::Arc`; the user-facing policy name stays `arc`.)
#[derive(Debug)]
pub struct AdaptiveReplacement {
    core: Core,
    cap: usize,
    max: usize,
    p: usize,
}

const T1: u32 = 0;
const T2: u32 = 1;
const B1: u32 = 2;
const B2: u32 = 3;

impl AdaptiveReplacement {
    /// An ARC of `capacity` keys (plus up to `capacity` ghost keys).
    pub fn new(capacity: usize) -> AdaptiveReplacement {
        AdaptiveReplacement { core: Core::new(2 * capacity + 1), cap: capacity, max: capacity, p: 0 }
    }

    /// The current target size of T1 (the adaptation parameter `p`).
    pub fn target_t1(&self) -> usize {
        self.p
    }

    fn resident(&self) -> usize {
        self.core.len(T1) + self.core.len(T2)
    }

    /// The paper's REPLACE: demotes the LRU of T1 or of T2 to its ghost list.
    fn replace(&mut self, in_b2: bool, on_evict: &mut dyn FnMut(u64, u32)) {
        let t1 = self.core.len(T1);
        let (k, v) = if t1 >= 1 && ((in_b2 && t1 == self.p) || t1 > self.p) || self.core.len(T2) == 0 {
            self.core.demote_tail(T1, B1)
        } else {
            self.core.demote_tail(T2, B2)
        };
        on_evict(k, v);
    }

    fn trim_ghosts(&mut self) {
        while self.core.len(T1) + self.core.len(B1) > self.cap && self.core.len(B1) > 0 {
            self.core.drop_tail(B1);
        }
        while self.resident() + self.core.len(B1) + self.core.len(B2) > 2 * self.cap {
            let l = if self.core.len(B2) > 0 { B2 } else { B1 };
            if self.core.len(l) == 0 {
                break;
            }
            self.core.drop_tail(l);
        }
    }
}

impl Policy for AdaptiveReplacement {
    fn capacity(&self) -> usize {
        self.cap
    }
    fn len(&self) -> usize {
        self.resident()
    }
    fn metadata_bytes(&self) -> usize {
        self.core.metadata_bytes()
    }
    fn max_capacity(&self) -> usize {
        self.max
    }
    fn peek(&self, key: u64) -> Option<u32> {
        let n = self.core.find(key)?;
        (self.core.tag(n) <= T2).then(|| self.core.value(n))
    }
    #[inline]
    fn access_value(&mut self, key: u64) -> Option<u32> {
        let n = self.core.find(key)?;
        if self.core.tag(n) > T2 {
            return None;
        }
        self.core.move_to_head(T2, n);
        Some(self.core.value(n))
    }
    fn insert_value(&mut self, key: u64, value: u32, on_evict: &mut dyn FnMut(u64, u32)) {
        let c = self.cap;
        if c == 0 {
            on_evict(key, value);
            return;
        }
        match self.core.find(key) {
            Some(n) if self.core.tag(n) == B1 => {
                let delta = (self.core.len(B2) / self.core.len(B1)).max(1);
                self.p = (self.p + delta).min(c);
                if self.resident() >= c {
                    self.replace(false, on_evict);
                }
                self.core.unlink(n);
                self.core.set_value(n, value);
                self.core.push_head(T2, n);
            }
            Some(n) if self.core.tag(n) == B2 => {
                let delta = (self.core.len(B1) / self.core.len(B2)).max(1);
                self.p = self.p.saturating_sub(delta);
                if self.resident() >= c {
                    self.replace(true, on_evict);
                }
                self.core.unlink(n);
                self.core.set_value(n, value);
                self.core.push_head(T2, n);
            }
            Some(n) => {
                debug_assert!(false, "insert of a resident key");
                self.core.set_value(n, value);
                self.core.move_to_head(T2, n);
            }
            None => {
                let (t1, b1) = (self.core.len(T1), self.core.len(B1));
                if t1 + b1 >= c {
                    if t1 < c {
                        self.core.drop_tail(B1);
                        if self.resident() >= c {
                            self.replace(false, on_evict);
                        }
                    } else {
                        let (k, v) = self.core.drop_tail(T1);
                        on_evict(k, v);
                    }
                } else {
                    let total = self.resident() + b1 + self.core.len(B2);
                    if total >= c {
                        if total >= 2 * c && self.core.len(B2) > 0 {
                            self.core.drop_tail(B2);
                        }
                        if self.resident() >= c {
                            self.replace(false, on_evict);
                        }
                    }
                }
                let n = self.core.alloc(key, value);
                self.core.push_head(T1, n);
            }
        }
    }
    fn remove_value(&mut self, key: u64) -> Option<u32> {
        let n = self.core.find(key)?;
        if self.core.tag(n) > T2 {
            return None;
        }
        let v = self.core.value(n);
        self.core.unlink(n);
        self.core.release(n);
        Some(v)
    }
    fn set_capacity_values(&mut self, capacity: usize, on_evict: &mut dyn FnMut(u64, u32)) {
        self.cap = capacity.min(self.max);
        while self.resident() > self.cap {
            self.replace(false, on_evict);
        }
        self.p = self.p.min(self.cap);
        self.trim_ghosts();
    }
    fn for_each_value(&mut self, f: &mut dyn FnMut(u64, &mut u32)) {
        self.core.for_each_value_in(|t| t <= T2, f);
    }
    fn node_slots(&self) -> usize {
        self.core.hwm as usize
    }
    fn node(&self, i: usize) -> Option<(u64, u32)> {
        self.core.node_in(i, |t| t <= T2)
    }
}

// ------------------------------------------------------------------------------------------------------------
// S3-FIFO

/// S3-FIFO (Yang et al., "FIFO queues are all you need for cache eviction", SOSP 2023). New keys enter a
/// small FIFO (10% of the capacity); a key leaving it moves to the main FIFO if it was hit enough meanwhile,
/// else it is evicted and remembered in a ghost FIFO (as many keys as the main FIFO holds); a key inserted
/// while in the ghost FIFO goes straight to main. One-hit wonders thus leave quickly through the small FIFO.
///
/// Two variants. [`S3Fifo::new`] is the paper's, as libCacheSim implements it: a 2-bit frequency per key
/// (hits counted up to 3), two hits move a key from the small FIFO to the main one, the main FIFO reinserts a
/// key with frequency `f > 0` at `min(f, 3) - 1` and evicts one at 0, the main FIFO is evicted from when it is
/// over its share (or the small one is empty), and before the first eviction keys go to main once the small
/// FIFO is full. [`S3Fifo::one_bit`] is the 1-bit variant its author recommends for block I/O: one hit moves a
/// key to main, whose reinsertion clears the bit like a clock.
#[derive(Debug)]
pub struct S3Fifo {
    core: Core,
    cap: usize,
    max: usize,
    small_cap: usize,
    main_cap: usize,
    /// The 1-bit variant (the frequency is the core's bit); else the paper's (2-bit counts in `freq`).
    one_bit: bool,
    /// The paper's frequency per node (0..=3).
    freq: Vec<u8>,
    /// A key has been evicted (the paper's variant inserts into main while the small FIFO is full before).
    evicted: bool,
}

const SMALL: u32 = 0;
const MAIN: u32 = 1;
const GHOST: u32 = 2;

fn s3_split(cap: usize) -> (usize, usize) {
    if cap == 0 {
        return (0, 0);
    }
    let small = (cap / 10).max(1);
    (small, cap - small)
}

impl S3Fifo {
    /// The paper's S3-FIFO of `capacity` keys (plus a ghost FIFO the size of the main FIFO).
    pub fn new(capacity: usize) -> S3Fifo {
        S3Fifo::build(capacity, false)
    }

    /// The 1-bit S3-FIFO of `capacity` keys.
    pub fn one_bit(capacity: usize) -> S3Fifo {
        S3Fifo::build(capacity, true)
    }

    fn build(capacity: usize, one_bit: bool) -> S3Fifo {
        let (small_cap, main_cap) = s3_split(capacity);
        let nodes = capacity + main_cap + 1;
        let freq = if one_bit { Vec::new() } else { Vec::with_capacity(nodes) };
        S3Fifo {
            core: Core::new(nodes),
            cap: capacity,
            max: capacity,
            small_cap,
            main_cap,
            one_bit,
            freq,
            evicted: false,
        }
    }

    /// The paper's frequency of node `n`.
    fn count(&self, n: u32) -> u8 {
        self.freq.get(n as usize).copied().unwrap_or(0)
    }

    /// Sets the paper's frequency of node `n` (the array grows with the nodes, as the core's do).
    fn set_count(&mut self, n: u32, f: u8) {
        let i = n as usize;
        if i >= self.freq.len() {
            self.freq.resize(i + 1, 0);
        }
        self.freq[i] = f;
    }

    /// The paper's eviction: from main when it is over its share or the small FIFO is empty, else from the
    /// small FIFO.
    fn evict_paper(&mut self, on_evict: &mut dyn FnMut(u64, u32)) {
        self.evicted = true;
        if self.core.len(MAIN) > self.main_cap || self.core.len(SMALL) == 0 {
            self.evict_main_paper(on_evict);
        } else {
            self.evict_small_paper(on_evict);
        }
    }

    fn evict_small_paper(&mut self, on_evict: &mut dyn FnMut(u64, u32)) {
        loop {
            let t = self.core.tail(SMALL);
            if t == NIL {
                return self.evict_main_paper(on_evict);
            }
            self.core.unlink(t);
            if self.count(t) >= 2 {
                self.set_count(t, 0);
                self.core.push_head(MAIN, t);
            } else {
                on_evict(self.core.keys[t as usize], self.core.value(t));
                self.set_count(t, 0);
                return self.remember_ghost(t);
            }
        }
    }

    fn evict_main_paper(&mut self, on_evict: &mut dyn FnMut(u64, u32)) {
        loop {
            let t = self.core.tail(MAIN);
            if t == NIL {
                return self.evict_small_paper(on_evict);
            }
            let f = self.count(t);
            if f >= 1 {
                self.set_count(t, f.min(3) - 1);
                self.core.unlink(t);
                self.core.push_head(MAIN, t);
            } else {
                let (k, v) = self.core.drop_tail(MAIN);
                return on_evict(k, v);
            }
        }
    }

    /// Keys in the small FIFO now.
    pub fn small_len(&self) -> usize {
        self.core.len(SMALL)
    }

    /// Keys in the main FIFO now.
    pub fn main_len(&self) -> usize {
        self.core.len(MAIN)
    }

    fn resident(&self) -> usize {
        self.core.len(SMALL) + self.core.len(MAIN)
    }

    /// Remembers node `n` (unlinked, just evicted from the small FIFO) in the ghost FIFO.
    fn remember_ghost(&mut self, n: u32) {
        let ghost_cap = self.main_cap;
        if ghost_cap == 0 {
            self.core.release(n);
            return;
        }
        while self.core.len(GHOST) >= ghost_cap {
            self.core.drop_tail(GHOST);
        }
        self.core.set_freq(n, false);
        self.core.push_head(GHOST, n);
    }

    /// Evicts exactly one resident key.
    fn evict(&mut self, on_evict: &mut dyn FnMut(u64, u32)) {
        if !self.one_bit {
            return self.evict_paper(on_evict);
        }
        if self.core.len(SMALL) >= self.small_cap || self.core.len(MAIN) == 0 {
            self.evict_small(on_evict);
        } else {
            self.evict_main(on_evict);
        }
    }

    fn evict_small(&mut self, on_evict: &mut dyn FnMut(u64, u32)) {
        loop {
            let t = self.core.tail(SMALL);
            if t == NIL {
                self.evict_main(on_evict);
                return;
            }
            self.core.unlink(t);
            if self.core.freq(t) {
                self.core.set_freq(t, false);
                self.core.push_head(MAIN, t);
                if self.core.len(MAIN) > self.main_cap {
                    self.evict_main(on_evict);
                    return;
                }
            } else {
                on_evict(self.core.keys[t as usize], self.core.value(t));
                self.remember_ghost(t);
                return;
            }
        }
    }

    fn evict_main(&mut self, on_evict: &mut dyn FnMut(u64, u32)) {
        loop {
            let t = self.core.tail(MAIN);
            if t == NIL {
                self.evict_small(on_evict);
                return;
            }
            if self.core.freq(t) {
                self.core.set_freq(t, false);
                self.core.unlink(t);
                self.core.push_head(MAIN, t);
            } else {
                let (k, v) = self.core.drop_tail(MAIN);
                on_evict(k, v);
                return;
            }
        }
    }
}

impl Policy for S3Fifo {
    fn capacity(&self) -> usize {
        self.cap
    }
    fn len(&self) -> usize {
        self.resident()
    }
    fn metadata_bytes(&self) -> usize {
        self.core.metadata_bytes() + self.freq.capacity()
    }
    fn max_capacity(&self) -> usize {
        self.max
    }
    fn peek(&self, key: u64) -> Option<u32> {
        let n = self.core.find(key)?;
        (self.core.tag(n) <= MAIN).then(|| self.core.value(n))
    }
    #[inline]
    fn access_value(&mut self, key: u64) -> Option<u32> {
        let n = self.core.find(key)?;
        if self.core.tag(n) > MAIN {
            return None;
        }
        if self.one_bit {
            self.core.set_freq(n, true);
        } else {
            let f = self.count(n);
            self.set_count(n, (f + 1).min(3));
        }
        Some(self.core.value(n))
    }
    fn insert_value(&mut self, key: u64, value: u32, on_evict: &mut dyn FnMut(u64, u32)) {
        if self.cap == 0 {
            on_evict(key, value);
            return;
        }
        while self.resident() >= self.cap {
            self.evict(on_evict);
        }
        match self.core.find(key) {
            Some(n) => {
                debug_assert_eq!(self.core.tag(n), GHOST, "insert of a resident key");
                self.core.unlink(n);
                self.core.set_value(n, value);
                self.core.set_freq(n, false);
                if !self.one_bit {
                    self.set_count(n, 0);
                }
                self.core.push_head(MAIN, n);
            }
            None => {
                let n = self.core.alloc(key, value);
                // The paper's: before the first eviction, once the small FIFO is full, new keys go to main.
                let to_main = !self.one_bit && !self.evicted && self.core.len(SMALL) >= self.small_cap;
                if !self.one_bit {
                    self.set_count(n, 0);
                }
                self.core.push_head(if to_main { MAIN } else { SMALL }, n);
            }
        }
    }
    fn remove_value(&mut self, key: u64) -> Option<u32> {
        let n = self.core.find(key)?;
        if self.core.tag(n) > MAIN {
            return None;
        }
        let v = self.core.value(n);
        self.core.unlink(n);
        self.core.release(n);
        Some(v)
    }
    fn set_capacity_values(&mut self, capacity: usize, on_evict: &mut dyn FnMut(u64, u32)) {
        self.cap = capacity.min(self.max);
        (self.small_cap, self.main_cap) = s3_split(self.cap);
        while self.resident() > self.cap {
            self.evict(on_evict);
        }
        while self.core.len(GHOST) > self.main_cap {
            self.core.drop_tail(GHOST);
        }
    }
    fn for_each_value(&mut self, f: &mut dyn FnMut(u64, &mut u32)) {
        self.core.for_each_value_in(|t| t <= MAIN, f);
    }
    fn node_slots(&self) -> usize {
        self.core.hwm as usize
    }
    fn node(&self, i: usize) -> Option<(u64, u32)> {
        self.core.node_in(i, |t| t <= MAIN)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Misses of `seq` through `p` (insert on every miss).
    fn misses(p: &mut dyn Policy, seq: &[u64]) -> usize {
        let mut ev = Vec::new();
        let mut m = 0;
        for &k in seq {
            if !p.access(k) {
                m += 1;
                p.insert(k, &mut ev);
            }
        }
        m
    }

    #[test]
    fn lru_evicts_the_least_recently_used() {
        let mut p = Lru::new(3);
        let mut ev = Vec::new();
        for k in [1, 2, 3] {
            p.insert(k, &mut ev);
        }
        assert!(p.access(1));
        p.insert(4, &mut ev);
        assert_eq!(ev, vec![2]);
        p.insert(5, &mut ev);
        assert_eq!(ev, vec![2, 3]);
        assert!(p.access(1) && p.access(4) && p.access(5) && !p.access(2));
        assert!(p.remove(4) && !p.remove(4));
        assert_eq!(p.len(), 2);
        p.set_capacity(1, &mut ev);
        assert_eq!(ev, vec![2, 3, 1]);
        assert_eq!(p.len(), 1);
    }

    #[test]
    fn lru_matches_a_reference_model_on_random_sequences() {
        let mut x = 7u64;
        for cap in [1usize, 2, 5, 16] {
            let mut p = Lru::new(cap);
            let mut model: Vec<u64> = Vec::new(); // most recent last
            let mut ev = Vec::new();
            for _ in 0..5000 {
                x = hash64(x);
                let k = x % 24;
                let hit = p.access(k);
                assert_eq!(hit, model.contains(&k));
                if hit {
                    model.retain(|&m| m != k);
                    model.push(k);
                } else {
                    ev.clear();
                    p.insert(k, &mut ev);
                    let mut want = Vec::new();
                    if model.len() == cap {
                        want.push(model.remove(0));
                    }
                    model.push(k);
                    assert_eq!(ev, want);
                }
            }
        }
    }

    #[test]
    fn values_follow_keys_and_node_cursor_sees_every_resident() {
        for kind in [CachePolicy::Lru, CachePolicy::Arc, CachePolicy::S3Fifo] {
            let mut p = new_policy(kind, 8);
            let mut resident = std::collections::HashMap::new();
            let mut x = 3u64;
            for i in 0..2000u32 {
                x = hash64(x);
                let k = x % 30;
                if let Some(v) = p.access_value(k) {
                    assert_eq!(resident.get(&k), Some(&v), "{kind:?}");
                } else {
                    let v = i & MAX_VALUE;
                    p.insert_value(k, v, &mut |ek, ev| {
                        assert_eq!(resident.remove(&ek), Some(ev), "{kind:?}");
                    });
                    resident.insert(k, v);
                }
                assert_eq!(p.len(), resident.len());
                assert!(p.len() <= 8);
            }
            let seen: std::collections::HashMap<u64, u32> =
                (0..p.node_slots()).filter_map(|i| p.node(i)).collect();
            assert_eq!(seen, resident, "{kind:?}");
        }
    }

    #[test]
    fn arc_keeps_a_hot_set_through_a_scan_that_flushes_lru() {
        let cap = 100;
        let hot: Vec<u64> = (0..50).collect();
        let mut seq = Vec::new();
        for _ in 0..20 {
            seq.extend(&hot);
        }
        seq.extend(1000..1500u64); // one-pass scan
        let probe = hot.clone();
        let mut lru = Lru::new(cap);
        let mut arc = AdaptiveReplacement::new(cap);
        misses(&mut lru, &seq);
        misses(&mut arc, &seq);
        let lru_after = misses(&mut lru, &probe);
        let arc_after = misses(&mut arc, &probe);
        assert_eq!(lru_after, 50, "LRU loses the whole hot set to the scan");
        assert_eq!(arc_after, 0, "ARC keeps the hot set in T2");
    }

    #[test]
    fn arc_adapts_p_toward_recency_on_b1_hits() {
        let mut arc = AdaptiveReplacement::new(4);
        let mut ev = Vec::new();
        // 1 and 2 in T2, 3 and 4 in T1; 5 demotes 3 to B1; asking for 3 again grows p (recency pays).
        misses(&mut arc, &[1, 2, 1, 2, 3, 4, 5]);
        assert_eq!(arc.target_t1(), 0);
        assert!(!arc.access(3));
        arc.insert(3, &mut ev);
        assert_eq!(arc.target_t1(), 1);
        // A B2 hit shrinks it back: 1 (LRU of T2) is demoted to B2 by the next misses.
        misses(&mut arc, &[6, 7]);
        assert!(!arc.access(1));
        arc.insert(1, &mut ev);
        assert_eq!(arc.target_t1(), 0);
    }

    /// The paper's variant: a working set hit three times (2-bit counts at 2, main's reinsertion lowering them
    /// one a pass) survives a stream of one-hit wonders three times the cache.
    #[test]
    fn s3fifo_paper_keeps_a_hot_set_through_a_scan() {
        let cap = 100;
        let mut s3 = S3Fifo::new(cap);
        let hot: Vec<u64> = (0..60).collect();
        for _ in 0..3 {
            misses(&mut s3, &hot);
        }
        let mut ev = Vec::new();
        for k in 1000..1300u64 {
            if !s3.access(k) {
                s3.insert(k, &mut ev);
            }
        }
        assert!(misses(&mut s3, &hot[..50]) <= 10, "hot keys lost to a scan");
    }

    #[test]
    fn s3fifo_demotes_one_hit_wonders_quickly() {
        let cap = 100;
        let mut s3 = S3Fifo::one_bit(cap);
        let mut ev = Vec::new();
        // A working set hit twice gets to the main FIFO.
        let hot: Vec<u64> = (0..60).collect();
        misses(&mut s3, &hot);
        misses(&mut s3, &hot);
        // One-hit wonders stream by.
        ev.clear();
        for k in 1000..1300u64 {
            if !s3.access(k) {
                s3.insert(k, &mut ev);
            }
        }
        // The wonders were evicted through the small FIFO, not the hot keys.
        let hot_evicted = ev.iter().filter(|&&k| k < 60).count();
        assert!(hot_evicted <= 10, "hot keys evicted: {hot_evicted}");
        assert_eq!(misses(&mut s3, &hot[..50]), 0);
        // LRU by contrast loses everything.
        let mut lru = Lru::new(cap);
        misses(&mut lru, &hot);
        misses(&mut lru, &hot);
        misses(&mut lru, &(1000..1300u64).collect::<Vec<_>>());
        assert_eq!(misses(&mut lru, &hot[..50]), 50);
    }

    #[test]
    fn s3fifo_ghost_hit_goes_to_main() {
        let mut s3 = S3Fifo::new(10);
        let mut ev = Vec::new();
        misses(&mut s3, &(0..11).collect::<Vec<_>>()); // 0 evicted to ghost
        assert!(!s3.access(0));
        let before = s3.main_len();
        s3.insert(0, &mut ev);
        assert_eq!(s3.main_len(), before + 1);
    }

    #[test]
    fn set_capacity_shrinks_and_grows_back_for_every_policy() {
        for kind in [CachePolicy::Lru, CachePolicy::Arc, CachePolicy::S3Fifo] {
            let mut p = new_policy(kind, 64);
            misses(p.as_mut(), &(0..200).collect::<Vec<_>>());
            assert_eq!(p.len(), 64);
            let mut ev = Vec::new();
            p.set_capacity(10, &mut ev);
            assert_eq!(p.len(), 10, "{kind:?}");
            assert_eq!(ev.len(), 54);
            p.set_capacity(0, &mut ev);
            assert_eq!(p.len(), 0);
            p.set_capacity(1000, &mut ev);
            assert_eq!(p.capacity(), 64);
            misses(p.as_mut(), &(500..900).collect::<Vec<_>>());
            assert_eq!(p.len(), 64, "{kind:?}");
        }
    }
}
