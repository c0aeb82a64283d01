//! Least recently used.

use super::nodes::Core;
use super::{resident_in_core, Policy};

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

    fn resident(&self) -> usize {
        self.core.len(LRU)
    }
}

impl Policy for Lru {
    resident_in_core!(|_: u32| true);
    fn metadata_bytes(&self) -> usize {
        self.core.metadata_bytes()
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
    fn set_capacity_values(&mut self, capacity: usize, on_evict: &mut dyn FnMut(u64, u32)) {
        self.cap = capacity.min(self.max);
        while self.len() > self.cap {
            let (k, v) = self.core.drop_tail(LRU);
            on_evict(k, v);
        }
    }
}
