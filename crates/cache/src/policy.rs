//! Eviction policies over opaque keys: LRU, ARC and S3-FIFO (1-bit). Each decides which key to evict and
//! keeps only small per-key metadata; the cache maps keys to data slots.

/// An eviction policy with a capacity in keys.
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
    fn access(&mut self, key: u64) -> bool;
    /// Makes `key` (not resident) resident, evicting keys as needed; appends evicted keys to `evicted`.
    fn insert(&mut self, key: u64, evicted: &mut Vec<u64>);
    /// Drops `key` if resident (invalidation). Returns whether it was.
    fn remove(&mut self, key: u64) -> bool;
    /// Lowers or raises the capacity, appending keys evicted to fit.
    fn set_capacity(&mut self, capacity: usize, evicted: &mut Vec<u64>);
    /// Bytes of metadata the policy holds now (index, lists, ghosts), for the per-line figure.
    fn metadata_bytes(&self) -> usize;
}
