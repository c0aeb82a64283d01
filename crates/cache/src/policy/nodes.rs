//! The node core every policy is built on: nodes in parallel arrays (key, two list links, a word holding the
//! value, the node's list and a frequency bit), an open-addressed index, and up to four doubly linked lists.

use super::MAX_VALUE;
use crate::index::{hash64, Index, MAX_ID};

pub(super) const NIL: u32 = u32::MAX;
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
pub(super) struct Core {
    max: usize,
    keys: Vec<u64>,
    prev: Vec<u32>,
    next: Vec<u32>,
    /// Value (28 bits) | list tag (3 bits) | frequency bit.
    vals: Vec<u32>,
    index: Index,
    free: u32,
    high_water: u32,
    lists: [List; 4],
}

impl Core {
    pub(super) fn new(max_nodes: usize) -> Core {
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
            high_water: 0,
            lists: [EMPTY_LIST; 4],
        }
    }

    pub(super) fn metadata_bytes(&self) -> usize {
        self.keys.len() * 8
            + self.prev.len() * 4
            + self.next.len() * 4
            + self.vals.len() * 4
            + self.index.bytes()
            + std::mem::size_of::<Core>()
    }

    #[inline]
    pub(super) fn find(&self, key: u64) -> Option<u32> {
        let keys = &self.keys;
        self.index.find(key, hash64(key), |id| keys[id as usize])
    }

    #[inline]
    pub(super) fn tag(&self, n: u32) -> u32 {
        (self.vals[n as usize] & TAG_MASK) >> TAG_SHIFT
    }

    #[inline]
    pub(super) fn key(&self, n: u32) -> u64 {
        self.keys[n as usize]
    }

    #[inline]
    pub(super) fn value(&self, n: u32) -> u32 {
        self.vals[n as usize] & MAX_VALUE
    }

    #[inline]
    pub(super) fn set_value(&mut self, n: u32, value: u32) {
        debug_assert!(value <= MAX_VALUE);
        let v = &mut self.vals[n as usize];
        *v = (*v & !MAX_VALUE) | (value & MAX_VALUE);
    }

    #[inline]
    pub(super) fn freq(&self, n: u32) -> bool {
        self.vals[n as usize] & FREQ != 0
    }

    #[inline]
    pub(super) fn set_freq(&mut self, n: u32, on: bool) {
        let v = &mut self.vals[n as usize];
        if on {
            *v |= FREQ;
        } else {
            *v &= !FREQ;
        }
    }

    /// A new node for `key` (not present), in no list yet (tag set to `list`, linked by `push_head`).
    pub(super) fn alloc(&mut self, key: u64, value: u32) -> u32 {
        let n = if self.free != NIL {
            let n = self.free;
            self.free = self.next[n as usize];
            n
        } else {
            assert!((self.high_water as usize) < self.max, "policy: out of nodes");
            // Within the reserved capacity: no allocation.
            self.keys.push(0);
            self.prev.push(NIL);
            self.next.push(NIL);
            self.vals.push(TAG_FREE << TAG_SHIFT);
            self.high_water += 1;
            self.high_water - 1
        };
        self.keys[n as usize] = key;
        self.vals[n as usize] = value & MAX_VALUE;
        self.index.insert(hash64(key), n);
        n
    }

    /// Drops node `n` (already unlinked) from the index and frees it.
    pub(super) fn release(&mut self, n: u32) {
        let keys = &self.keys;
        self.index.remove(hash64(keys[n as usize]), n, |id| hash64(keys[id as usize]));
        self.vals[n as usize] = TAG_FREE << TAG_SHIFT;
        self.next[n as usize] = self.free;
        self.free = n;
    }

    #[inline]
    pub(super) fn push_head(&mut self, l: u32, n: u32) {
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
    pub(super) fn unlink(&mut self, n: u32) {
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
    pub(super) fn move_to_head(&mut self, l: u32, n: u32) {
        if self.lists[l as usize].head == n && self.tag(n) == l {
            return;
        }
        self.unlink(n);
        self.push_head(l, n);
    }

    #[inline]
    pub(super) fn len(&self, l: u32) -> usize {
        self.lists[l as usize].len
    }

    #[inline]
    pub(super) fn tail(&self, l: u32) -> u32 {
        self.lists[l as usize].tail
    }

    /// Unlinks and frees the tail of `l`, returning its key and value.
    pub(super) fn drop_tail(&mut self, l: u32) -> (u64, u32) {
        let t = self.tail(l);
        debug_assert!(t != NIL);
        let kv = (self.keys[t as usize], self.value(t));
        self.unlink(t);
        self.release(t);
        kv
    }

    /// Moves the tail of `from` to the head of `to` (a resident list to a ghost list), returning its key
    /// and value.
    pub(super) fn demote_tail(&mut self, from: u32, to: u32) -> (u64, u32) {
        let t = self.tail(from);
        debug_assert!(t != NIL);
        let kv = (self.keys[t as usize], self.value(t));
        self.unlink(t);
        self.set_freq(t, false);
        self.push_head(to, t);
        kv
    }

    pub(super) fn for_each_value_in(
        &mut self,
        resident: impl Fn(u32) -> bool,
        f: &mut dyn FnMut(u64, &mut u32),
    ) {
        for n in 0..self.high_water {
            let tag = self.tag(n);
            if tag != TAG_FREE && resident(tag) {
                let mut v = self.value(n);
                f(self.keys[n as usize], &mut v);
                self.set_value(n, v);
            }
        }
    }

    /// Number of node positions (the most ever used).
    pub(super) fn node_slots(&self) -> usize {
        self.high_water as usize
    }

    pub(super) fn node_in(&self, i: usize, resident: impl Fn(u32) -> bool) -> Option<(u64, u32)> {
        if i >= self.high_water as usize {
            return None;
        }
        let tag = self.tag(i as u32);
        (tag != TAG_FREE && resident(tag)).then(|| (self.keys[i], self.value(i as u32)))
    }
}
