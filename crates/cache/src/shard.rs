//! One shard of the index: its policy, its slab of line data, its evicted dirty lines, and the write counts
//! that poison fills raced by a write.

use crate::counts::{ShardCounters, SharedCounts};
use crate::index::hash64;
use crate::line::{DIRTY, GENERATION, LINE_BITS, LINE_MASK, NO_SLOT, WRITING_BACK};
use crate::policy::Policy;
use crate::slab::Slab;
use crate::write_back::{EvictedDirty, WriteBack};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Mutex;

/// Where a cached line is: resident in the policy, or evicted and awaiting write-back (evicted entry).
#[derive(Clone, Copy, Debug)]
pub(crate) enum LinePlace {
    Resident,
    Evicted(u32),
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct LineRef {
    pub(crate) slot: u32,
    pub(crate) place: LinePlace,
}

/// One shard of the index: its policy, data, write-back list, and write counters for poisoning fills.
pub(crate) struct Shard {
    pub(crate) policy: Box<dyn Policy>,
    pub(crate) slab: Slab,
    pub(crate) evicted: EvictedDirty,
    /// Writes seen per bucket of lines (a fill or forwarded write whose lines' counts moved during its flight
    /// raced with another write).
    pub(crate) writes: Vec<u32>,
    /// Forwarded writes in flight per bucket (no fill or write-allocate while one is: the target may not
    /// have its data yet).
    pub(crate) inflight: Vec<u32>,
    pub(crate) bucket_mask: usize,
    /// Misses per line (hashed), for admission after n misses; empty when every line is admitted at once.
    pub(crate) admits: Vec<u8>,
    pub(crate) admit_mask: usize,
    pub(crate) admit_after: u32,
    /// Resident dirty lines not being written back.
    pub(crate) dirty_idle: usize,
    /// Cursor of the dirty-line scan.
    pub(crate) scan: usize,
    pub(crate) write_back: bool,
    pub(crate) counters: ShardCounters,
}

/// The eviction of `key` (data `slot`): a dirty line moves to the write-back list, a clean one is dropped.
fn note_eviction(
    slab: &mut Slab,
    evicted: &mut EvictedDirty,
    counters: &mut ShardCounters,
    dirty_idle: &mut usize,
    shared: &SharedCounts,
    key: u64,
    slot: u32,
) {
    counters.evictions += 1;
    let state = slab.state[slot as usize];
    if state & DIRTY != 0 {
        let entry = evicted.add(key, slot);
        if state & WRITING_BACK == 0 {
            *dirty_idle -= 1;
            shared.resident_dirty_idle.fetch_sub(1, Relaxed);
            evicted.enqueue(entry);
            shared.evicted_queued.fetch_add(1, Relaxed);
        }
    } else {
        slab.free_slot(slot);
    }
}

impl Shard {
    /// The line `key`, if cached, without telling the policy.
    #[inline]
    pub(crate) fn find(&self, key: u64) -> Option<LineRef> {
        self.resident_or_evicted(key, self.policy.peek(key))
    }

    /// The line `key`, if cached; a resident line's use is told to the policy.
    #[inline]
    pub(crate) fn access(&mut self, key: u64) -> Option<LineRef> {
        let resident = self.policy.access_value(key);
        self.resident_or_evicted(key, resident)
    }

    /// The line at `resident`'s slot, or else the line `key` among the evicted dirty lines.
    #[inline]
    fn resident_or_evicted(&self, key: u64, resident: Option<u32>) -> Option<LineRef> {
        if let Some(slot) = resident {
            return Some(LineRef { slot, place: LinePlace::Resident });
        }
        self.evicted.find(key).map(|entry| LineRef {
            slot: self.evicted.entries[entry as usize].slot,
            place: LinePlace::Evicted(entry),
        })
    }

    #[inline]
    pub(crate) fn bucket(&self, hash: u64) -> usize {
        (hash >> 40) as usize & self.bucket_mask
    }

    #[inline]
    fn admit_slot(&self, hash: u64) -> usize {
        (hash >> 20) as usize & self.admit_mask
    }

    pub(crate) fn missed(&mut self, hash: u64) {
        if !self.admits.is_empty() {
            let i = self.admit_slot(hash);
            self.admits[i] = self.admits[i].saturating_add(1);
        }
    }

    pub(crate) fn admitted(&self, hash: u64) -> bool {
        self.admits.is_empty() || self.admits[self.admit_slot(hash)] as u32 >= self.admit_after
    }

    pub(crate) fn reset_admit(&mut self, hash: u64) {
        if !self.admits.is_empty() {
            let i = self.admit_slot(hash);
            self.admits[i] = 0;
        }
    }

    /// Whether a new line may be inserted now: the policy has capacity, and in write-back mode a dirty
    /// victim would find room in the write-back reserve (a conservative check: the victim may be clean).
    #[inline]
    pub(crate) fn room(&self) -> bool {
        let cap = self.policy.capacity();
        cap > 0 && (!self.write_back || self.policy.len() < cap || self.evicted.live < self.evicted.reserve)
    }

    /// Inserts `key` with `data` (one line) and slot state `state` (clean, or dirty for an absorbed write).
    pub(crate) fn insert(&mut self, key: u64, data: &[u8], state: u32, shared: &SharedCounts) -> bool {
        if !self.room() {
            return false;
        }
        let slot = self.slab.alloc(shared);
        self.slab.data_mut(slot).copy_from_slice(data);
        self.slab.state[slot as usize] = state;
        if state & DIRTY != 0 {
            shared.dirtied(key);
            self.dirty_idle += 1;
            shared.resident_dirty_idle.fetch_add(1, Relaxed);
        }
        let Shard { policy, slab, evicted, counters, dirty_idle, .. } = self;
        policy.insert_value(key, slot, &mut |k, v| {
            note_eviction(slab, evicted, counters, dirty_idle, shared, k, v)
        });
        true
    }

    /// Marks a line dirty (or re-dirtied: a new generation, so a write-back in flight does not clean it).
    pub(crate) fn make_dirty(&mut self, key: u64, line: LineRef, shared: &SharedCounts) {
        let state = self.slab.state[line.slot as usize];
        if state & DIRTY == 0 {
            shared.dirtied(key);
            debug_assert!(matches!(line.place, LinePlace::Resident) && state & WRITING_BACK == 0);
            self.dirty_idle += 1;
            shared.resident_dirty_idle.fetch_add(1, Relaxed);
        }
        self.slab.state[line.slot as usize] =
            DIRTY | (state & WRITING_BACK) | (state.wrapping_add(1) & GENERATION);
    }

    /// A dirty line not being written back that the target now holds entirely: clean (an evicted one is
    /// dropped).
    pub(crate) fn make_clean(&mut self, key: u64, line: LineRef, shared: &SharedCounts) {
        let state = self.slab.state[line.slot as usize];
        debug_assert!(state & DIRTY != 0 && state & WRITING_BACK == 0);
        shared.cleaned(key);
        match line.place {
            LinePlace::Resident => {
                self.dirty_idle -= 1;
                shared.resident_dirty_idle.fetch_sub(1, Relaxed);
                self.slab.state[line.slot as usize] = state & GENERATION;
            }
            LinePlace::Evicted(entry) => {
                if self.evicted.entries[entry as usize].queued {
                    shared.evicted_queued.fetch_sub(1, Relaxed);
                }
                let slot = self.evicted.remove(entry);
                self.slab.free_slot(slot);
            }
        }
    }

    /// Drops a clean line.
    pub(crate) fn invalidate(&mut self, key: u64, line: LineRef) {
        debug_assert!(self.slab.state[line.slot as usize] & DIRTY == 0);
        if let LinePlace::Resident = line.place {
            self.policy.remove_value(key);
            self.slab.free_slot(line.slot);
            self.counters.invalidations += 1;
        }
    }

    /// Hands out the write-back of an evicted dirty line of an accepted target.
    pub(crate) fn pop_evicted(
        &mut self,
        accept: &dyn Fn(u16) -> bool,
        buf: &mut [u8],
        shared: &SharedCounts,
        shift: u32,
    ) -> Option<WriteBack> {
        for _ in 0..self.evicted.queue.len() {
            let entry = self.evicted.queue.pop_front()?;
            let line = self.evicted.entries[entry as usize];
            let target = (line.key >> LINE_BITS) as u16;
            if !accept(target) {
                self.evicted.queue.push_back(entry);
                continue;
            }
            self.evicted.entries[entry as usize].queued = false;
            shared.evicted_queued.fetch_sub(1, Relaxed);
            return Some(self.start_write_back(line.key, line.slot, buf, shift));
        }
        None
    }

    /// Hands out the write-back of a resident dirty line of an accepted target.
    pub(crate) fn scan_dirty(
        &mut self,
        accept: &dyn Fn(u16) -> bool,
        buf: &mut [u8],
        shared: &SharedCounts,
        shift: u32,
    ) -> Option<WriteBack> {
        let n = self.policy.node_slots();
        for step in 0..n {
            let i = (self.scan + step) % n;
            let Some((key, slot)) = self.policy.node(i) else { continue };
            let state = self.slab.state[slot as usize];
            if state & (DIRTY | WRITING_BACK) == DIRTY && accept((key >> LINE_BITS) as u16) {
                self.scan = i + 1;
                self.dirty_idle -= 1;
                shared.resident_dirty_idle.fetch_sub(1, Relaxed);
                return Some(self.start_write_back(key, slot, buf, shift));
            }
        }
        None
    }

    /// A write-back counts as a write to the line's bucket when it starts and when it ends: a forwarded
    /// write whose flight overlapped it cannot tell whether the target kept its bytes or the write-back's.
    fn start_write_back(&mut self, key: u64, slot: u32, buf: &mut [u8], shift: u32) -> WriteBack {
        let bucket = self.bucket(hash64(key));
        self.writes[bucket] = self.writes[bucket].wrapping_add(1);
        let state = self.slab.state[slot as usize];
        debug_assert!(state & (DIRTY | WRITING_BACK) == DIRTY);
        self.slab.state[slot as usize] = state | WRITING_BACK;
        let line_bytes = self.slab.line_bytes;
        buf[..line_bytes].copy_from_slice(self.slab.data(slot));
        WriteBack {
            id: state & GENERATION,
            target: (key >> LINE_BITS) as u16,
            offset: (key & LINE_MASK) << shift,
            len: line_bytes as u32,
        }
    }

    /// Sets the policy's capacity (dirty lines evicted go to the write-back list, past its reserve if need
    /// be), then compacts the data into the lowest slots and frees the chunks above them.
    pub(crate) fn set_capacity(&mut self, lines: usize, shared: &SharedCounts) {
        let Shard { policy, slab, evicted, counters, dirty_idle, .. } = self;
        policy.set_capacity_values(lines, &mut |k, v| {
            note_eviction(slab, evicted, counters, dirty_idle, shared, k, v)
        });
        let used_n = policy.len() + evicted.live;
        let high_water = slab.high_water as usize;
        let mut used = vec![false; high_water];
        policy.for_each_value(&mut |_, v| used[*v as usize] = true);
        for entry in evicted.entries.iter().filter(|entry| entry.slot != NO_SLOT) {
            used[entry.slot as usize] = true;
        }
        let mut holes: Vec<u32> = (0..used_n as u32).filter(|&i| !used[i as usize]).collect();
        policy.for_each_value(&mut |_, v| {
            if *v as usize >= used_n {
                let to = holes.pop().expect("a hole below the used count");
                slab.move_slot(*v, to);
                *v = to;
            }
        });
        for entry in evicted.entries.iter_mut().filter(|entry| entry.slot != NO_SLOT) {
            if entry.slot as usize >= used_n {
                let to = holes.pop().expect("a hole below the used count");
                slab.move_slot(entry.slot, to);
                entry.slot = to;
            }
        }
        debug_assert!(holes.is_empty());
        slab.truncate(used_n as u32, shared);
    }

    pub(crate) fn metadata_bytes(&self) -> usize {
        self.policy.metadata_bytes()
            + self.slab.metadata_bytes()
            + self.evicted.metadata_bytes()
            + self.writes.capacity() * 4
            + self.inflight.capacity() * 4
            + self.admits.capacity()
            + std::mem::size_of::<Shard>()
    }
}

/// A shard on its own cache lines (no false sharing between shard locks).
#[repr(align(128))]
pub(crate) struct PaddedShard(pub(crate) Mutex<Shard>);
