//! Eviction policies over opaque keys: LRU, ARC and S3-FIFO (the paper's 2-bit and the 1-bit variant). Each decides which key to evict and
//! keeps only small per-key metadata; the cache maps keys to data slots.
//!
//! Every policy is built on the same compact core: nodes in parallel arrays (key `u64`, two `u32` list links,
//! one `u32` word holding a 28-bit value, the node's list and a frequency bit: 20 bytes a node) and an
//! open-addressed index of `u32` words (6 bytes a node). The value is the cache's data slot, so the policy's
//! index is the cache's only map from line to data. Ghost entries (ARC's B1/B2, S3-FIFO's ghost queue) are
//! nodes too and count in [`Policy::metadata_bytes`]: about 26 bytes per resident key for LRU, 52 for ARC
//! (up to 2c nodes) and 49 for S3-FIFO (c + 0.9c nodes).
//!
//! One file per policy, as foyer keeps its eviction policies: `lru.rs` ([`Lru`]), `arc.rs`
//! ([`AdaptiveReplacement`]) and `s3fifo.rs` ([`S3Fifo`]); the node core they share is `nodes.rs`, and the
//! methods they answer alike from it are written once (`resident_in_core!`).

mod arc;
mod lru;
mod nodes;
mod s3fifo;
#[cfg(test)]
mod tests;

pub use arc::AdaptiveReplacement;
pub use lru::Lru;
pub use s3fifo::S3Fifo;

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

/// The [`Policy`] methods that every policy answers alike from its node core, written once and used inside
/// each policy's `impl Policy`: the capacity (`cap`, `max`), the resident keys (`resident()`, and the nodes
/// whose list `$resident` accepts: the other lists hold ghosts), lookups without an access, removal, and the
/// node cursor. What a policy decides (an access, an insertion, a capacity change) each writes itself.
macro_rules! resident_in_core {
    ($resident:expr) => {
        fn capacity(&self) -> usize {
            self.cap
        }
        fn len(&self) -> usize {
            self.resident()
        }
        fn max_capacity(&self) -> usize {
            self.max
        }
        fn peek(&self, key: u64) -> Option<u32> {
            let n = self.core.find(key)?;
            ($resident)(self.core.tag(n)).then(|| self.core.value(n))
        }
        fn remove_value(&mut self, key: u64) -> Option<u32> {
            let n = self.core.find(key)?;
            if !($resident)(self.core.tag(n)) {
                return None;
            }
            let v = self.core.value(n);
            self.core.unlink(n);
            self.core.release(n);
            Some(v)
        }
        fn for_each_value(&mut self, f: &mut dyn FnMut(u64, &mut u32)) {
            self.core.for_each_value_in($resident, f);
        }
        fn node_slots(&self) -> usize {
            self.core.node_slots()
        }
        fn node(&self, i: usize) -> Option<(u64, u32)> {
            self.core.node_in(i, $resident)
        }
    };
}
use resident_in_core;
