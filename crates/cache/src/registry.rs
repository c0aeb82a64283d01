//! The in-flight table: one record per forwarded op, from its issue until its ticket comes back.

use crate::lock::lock;
use std::sync::{Mutex, OnceLock};

/// An in-flight forwarded op.
#[derive(Debug, Default)]
pub(crate) struct InFlightOp {
    pub(crate) target: u16,
    pub(crate) offset: u64,
    pub(crate) len: usize,
    pub(crate) write: bool,
    pub(crate) bypass: bool,
    /// Write-allocate at finish (write-through, and write-back writes that were forwarded).
    pub(crate) alloc: bool,
    /// A read's first missed line, as an index into its lines: the cached lines from there on were only
    /// looked at when it was issued, and are used (the policy told) when it completes, in line order.
    pub(crate) first_miss: usize,
    /// Each line's bucket write count at issue (for a write, the count expected at completion if no other
    /// write touched the bucket: see [`Cache::own_counts`]).
    pub(crate) snaps: Vec<u32>,
    /// A write's (shard, bucket) of each line, with the line's index: scratch for [`Cache::own_counts`].
    pub(crate) tags: Vec<(u64, u32)>,
    /// A write over several lines: how many of its lines after each one share its bucket.
    pub(crate) own_later: Vec<u32>,
    /// A read's copy of the lines that were dirty at issue, to overlay if they are gone at finish.
    pub(crate) saved: Vec<u8>,
    pub(crate) saved_mask: Vec<u64>,
    pub(crate) any_saved: bool,
}

/// A block of in-flight records.
type Segment = Box<[Mutex<InFlightOp>]>;

const SEGMENT_LEN: usize = 256;
const MAX_SEGMENTS: usize = 4096;
const STRIPES: usize = 8;

/// The in-flight table: records in segments allocated as more ops are in flight at once (grow-once), ids
/// recycled through striped free lists.
pub(crate) struct Registry {
    segments: Box<[OnceLock<Segment>]>,
    pub(crate) free: [Mutex<Vec<u32>>; STRIPES],
    grown: Mutex<usize>,
}

impl Registry {
    pub(crate) fn new() -> Registry {
        Registry {
            segments: (0..MAX_SEGMENTS).map(|_| OnceLock::new()).collect(),
            free: std::array::from_fn(|_| Mutex::new(Vec::new())),
            grown: Mutex::new(0),
        }
    }

    pub(crate) fn alloc(&self, hint: usize) -> u32 {
        for k in 0..STRIPES {
            if let Some(id) = lock(&self.free[(hint + k) % STRIPES]).pop() {
                return id;
            }
        }
        let mut grown = lock(&self.grown);
        let seg = *grown;
        assert!(
            seg < MAX_SEGMENTS,
            "more than {} ops in flight through the cache",
            SEGMENT_LEN * MAX_SEGMENTS
        );
        self.segments[seg]
            .get_or_init(|| (0..SEGMENT_LEN).map(|_| Mutex::new(InFlightOp::default())).collect());
        *grown += 1;
        drop(grown);
        let base = seg * SEGMENT_LEN;
        for id in base + 1..base + SEGMENT_LEN {
            lock(&self.free[id % STRIPES]).push(id as u32);
        }
        base as u32
    }

    pub(crate) fn get(&self, id: u32) -> &Mutex<InFlightOp> {
        let id = id as usize;
        &self.segments[id / SEGMENT_LEN].get().expect("a ticket from this cache")[id % SEGMENT_LEN]
    }

    pub(crate) fn release(&self, id: u32) {
        lock(&self.free[id as usize % STRIPES]).push(id);
    }

    pub(crate) fn bytes(&self) -> usize {
        let segments = *lock(&self.grown);
        let mut b = self.segments.len() * std::mem::size_of::<OnceLock<Segment>>()
            + segments * SEGMENT_LEN * (std::mem::size_of::<Mutex<InFlightOp>>() + 4);
        for s in self.segments.iter().take(segments).filter_map(|s| s.get()) {
            for r in s.iter() {
                let r = lock(r);
                b += r.snaps.capacity() * 4 + r.saved.capacity() + r.saved_mask.capacity() * 8;
            }
        }
        b
    }
}
