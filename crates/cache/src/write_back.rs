//! Write-backs: the one handed to the caller ([`WriteBack`]), and the dirty lines a shard's policy evicted,
//! kept readable until theirs completes ([`EvictedDirty`]).

use crate::index::{hash64, Index};
use crate::line::NO_SLOT;
use std::collections::VecDeque;

/// A dirty line to write back: write `len` bytes of the write-back buffer at `offset` of `target`, then call
/// [`Cache::finish_write_back`](crate::Cache::finish_write_back).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WriteBack {
    /// The line's dirty generation when the write-back started (a write to the line meanwhile makes it
    /// stale, and [`Cache::finish_write_back`](crate::Cache::finish_write_back) then leaves the line dirty).
    pub id: u32,
    /// Target index.
    pub target: u16,
    /// Byte offset.
    pub offset: u64,
    /// Bytes (one line).
    pub len: u32,
}

/// An evicted dirty line awaiting write-back (its data stays in `slot` and stays readable).
#[derive(Clone, Copy, Debug)]
pub(crate) struct EvictedLine {
    pub(crate) key: u64,
    pub(crate) slot: u32,
    pub(crate) queued: bool,
}

/// Dirty lines evicted by the policy, until their write-back completes: a bounded reserve (the soft limit
/// `reserve`; a shrink may exceed it), an index by key, and a FIFO of entries waiting to be handed out.
#[derive(Debug)]
pub(crate) struct EvictedDirty {
    pub(crate) entries: Vec<EvictedLine>,
    pub(crate) free: Vec<u32>,
    pub(crate) index: Index,
    pub(crate) queue: VecDeque<u32>,
    pub(crate) live: usize,
    pub(crate) reserve: usize,
}

impl EvictedDirty {
    pub(crate) fn new(reserve: usize) -> EvictedDirty {
        EvictedDirty {
            entries: Vec::with_capacity(reserve),
            free: Vec::with_capacity(reserve),
            index: Index::new(reserve.max(4)),
            queue: VecDeque::with_capacity(reserve),
            live: 0,
            reserve,
        }
    }

    #[inline]
    pub(crate) fn find(&self, key: u64) -> Option<u32> {
        if self.live == 0 {
            return None;
        }
        let entries = &self.entries;
        self.index.find(key, hash64(key), |entry| entries[entry as usize].key)
    }

    pub(crate) fn add(&mut self, key: u64, slot: u32) -> u32 {
        if self.live + 1 > self.index.max_ids() {
            let entries = &self.entries;
            let live = entries
                .iter()
                .enumerate()
                .filter(|(_, entry)| entry.slot != NO_SLOT)
                .map(|(i, entry)| (i as u32, hash64(entry.key)))
                .collect::<Vec<_>>();
            self.index.rebuild((self.live + 1) * 2, live.into_iter());
        }
        let entry = match self.free.pop() {
            Some(entry) => entry,
            None => {
                self.entries.push(EvictedLine { key: 0, slot: NO_SLOT, queued: false });
                (self.entries.len() - 1) as u32
            }
        };
        self.entries[entry as usize] = EvictedLine { key, slot, queued: false };
        self.index.insert(hash64(key), entry);
        self.live += 1;
        entry
    }

    /// Drops entry `entry` (and its place in the queue), returning its slot.
    pub(crate) fn remove(&mut self, entry: u32) -> u32 {
        let removed = self.entries[entry as usize];
        let entries = &self.entries;
        self.index.remove(hash64(removed.key), entry, |i| hash64(entries[i as usize].key));
        if removed.queued {
            self.queue.retain(|&q| q != entry);
        }
        self.entries[entry as usize] = EvictedLine { key: 0, slot: NO_SLOT, queued: false };
        self.free.push(entry);
        self.live -= 1;
        removed.slot
    }

    pub(crate) fn enqueue(&mut self, entry: u32) {
        debug_assert!(!self.entries[entry as usize].queued);
        self.entries[entry as usize].queued = true;
        self.queue.push_back(entry);
    }

    pub(crate) fn metadata_bytes(&self) -> usize {
        self.entries.capacity() * std::mem::size_of::<EvictedLine>()
            + self.free.capacity() * 4
            + self.index.bytes()
            + self.queue.capacity() * 4
    }
}
