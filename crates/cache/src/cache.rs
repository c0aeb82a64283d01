//! The cache's interface and the cache itself: the configuration, what a read or write is told to do, the
//! counters, and [`Cache`], which deals lines out to [`Shard`](crate::shard::Shard)s and keeps the in-flight
//! [`Registry`].

use crate::counts::{dirty_bucket, DeviceCounters, ShardCounters, SharedCounts};
use crate::index::{self, hash64};
use crate::line::{key_of, DIRTY, GENERATION, LINE_BITS, LINE_MASK, WRITING_BACK};
use crate::lock::lock;
use crate::policy;
use crate::registry::{InFlightOp, Registry};
use crate::shard::{LinePlace, PaddedShard, Shard};
use crate::slab::Slab;
use crate::write_back::{EvictedDirty, WriteBack};
use iolab_doc::CacheStats;
use iolab_spec::{CacheMode, CachePolicy};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::{Mutex, MutexGuard};

/// A resolved cache configuration (sizes in bytes).
#[derive(Clone, Debug, PartialEq)]
pub struct CacheConfig {
    /// Capacity of the data store.
    pub capacity_bytes: u64,
    /// Bytes per line (a power of two, at least 512).
    pub line_bytes: u32,
    /// What happens to writes.
    pub mode: CacheMode,
    /// Which line to evict.
    pub policy: CachePolicy,
    /// A line is admitted on its n-th miss (1 = at once).
    pub admit_after: u32,
    /// Percent of lines that may be dirty before [`Cache::next_write_back`] starts returning lines (write-back).
    pub dirty_max_pct: f64,
    /// Number of targets whose lines share the cache (line keys are `(target, line)`).
    pub targets: u16,
    /// Keep each line's data (false: metadata only, for emulated targets whose data nobody reads back: every
    /// line then shares one scratch line per shard, so hits and fills cost their copies but no memory).
    pub keep_data: bool,
}

/// Invalid configurations.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum CacheError {
    /// The configuration cannot work.
    #[error("{0}")]
    Config(String),
}

/// A forwarded op's claim, handed back to [`Cache::finish`] when the target completes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ForwardTicket {
    /// Internal index of the in-flight record.
    pub id: u32,
}

/// What to do with a read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadOutcome {
    /// Every line was cached; the data is in the buffer. Complete the op now (or after the cache device's time).
    Hit,
    /// Read the target into the same buffer, then call [`Cache::finish`].
    Forward(ForwardTicket),
}

/// What to do with a write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteOutcome {
    /// Write-back: the data is in the cache (dirty). Complete the op now.
    Absorbed,
    /// Write the data to the target, then call [`Cache::finish`].
    Forward(ForwardTicket),
}

/// One I/O to a real cache device, for the counters ([`Cache::note_device_io`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceIo {
    /// A read was issued.
    Read,
    /// A write was issued.
    Write,
    /// A fill or update write was dropped for lack of a free buffer.
    WriteDropped,
}

/// The part of a line an op touches.
#[derive(Clone, Copy, Debug)]
struct Span {
    /// Byte range within the line.
    lo: usize,
    hi: usize,
    /// Where that range starts in the op's buffer.
    pos: usize,
    /// The op covers the whole line.
    full: bool,
}

impl Span {
    #[inline]
    fn buf(&self) -> std::ops::Range<usize> {
        self.pos..self.pos + (self.hi - self.lo)
    }
}

/// The cache shared by all workers of a run.
pub struct Cache {
    config: CacheConfig,
    line_shift: u32,
    shards: Box<[PaddedShard]>,
    shard_mask: usize,
    max_lines: u64,
    capacity_lines: AtomicU64,
    in_flight: Registry,
    shared: SharedCounts,
    write_back_requested: AtomicBool,
    write_back_requests: AtomicU64,
    device: DeviceCounters,
    dirty_at_end: AtomicU64,
    write_back_cursor: AtomicUsize,
}

impl std::fmt::Debug for Cache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cache")
            .field("config", &self.config)
            .field("shards", &self.shards.len())
            .field("capacity_lines", &self.capacity_lines.load(Relaxed))
            .field("dirty", &self.shared.dirty.load(Relaxed))
            .finish_non_exhaustive()
    }
}

/// Fewer lines than this: one shard, so the policy is exact.
const SINGLE_SHARD_BELOW: u64 = 1024;
const MAX_SHARDS: u64 = 64;

impl Cache {
    /// A cache for `config`. Memory for lines is taken as lines are filled, in chunks, not up front.
    ///
    /// Fails when the line size is not a power of two of at least 512 bytes, the capacity holds less than one
    /// line (or too many lines for the index), `targets` is 0 or `dirty_max_pct` is not within 0-100.
    pub fn new(config: CacheConfig) -> Result<Cache, CacheError> {
        let line_bytes = config.line_bytes as u64;
        if line_bytes < 512 || !line_bytes.is_power_of_two() {
            return Err(CacheError::Config(format!(
                "cache line {line_bytes} bytes: must be a power of two of at least 512"
            )));
        }
        if config.capacity_bytes < line_bytes {
            return Err(CacheError::Config(format!(
                "cache of {} bytes: must hold at least one {line_bytes}-byte line",
                config.capacity_bytes
            )));
        }
        if config.targets == 0 {
            return Err(CacheError::Config("cache for 0 targets".into()));
        }
        if !(0.0..=100.0).contains(&config.dirty_max_pct) {
            return Err(CacheError::Config(format!(
                "dirty limit {}%: must be within 0-100",
                config.dirty_max_pct
            )));
        }
        let lines = config.capacity_bytes / line_bytes;
        let nshards = if lines < SINGLE_SHARD_BELOW {
            1
        } else {
            let want = lines / 512;
            (1u64 << (63 - want.leading_zeros())).min(MAX_SHARDS)
        };
        let per_shard_max = lines.div_ceil(nshards);
        if per_shard_max * 2 + 1 > index::MAX_ID as u64 || per_shard_max * 2 > policy::MAX_VALUE as u64 {
            return Err(CacheError::Config(format!("cache of {lines} lines: too many lines for the index")));
        }
        let write_back = config.mode == CacheMode::WriteBack;
        let admit_after = config.admit_after.max(1);
        let shards = (0..nshards)
            .map(|i| {
                let cap = (lines / nshards + u64::from(i < lines % nshards)) as usize;
                let reserve = if write_back { (cap / 16).max(2) } else { 0 };
                let buckets = (cap / 2).max(64).next_power_of_two();
                let admits = if admit_after > 1 { cap.max(64).next_power_of_two() } else { 0 };
                PaddedShard(Mutex::new(Shard {
                    policy: policy::new_policy(config.policy, cap),
                    slab: Slab::new(line_bytes as usize, cap + reserve, config.keep_data),
                    evicted: EvictedDirty::new(reserve),
                    writes: vec![0; buckets],
                    inflight: vec![0; buckets],
                    bucket_mask: buckets - 1,
                    admits: vec![0; admits],
                    admit_mask: admits.saturating_sub(1),
                    admit_after,
                    dirty_idle: 0,
                    scan: 0,
                    write_back,
                    counters: ShardCounters::default(),
                }))
            })
            .collect();
        Ok(Cache {
            line_shift: line_bytes.trailing_zeros(),
            shards,
            shard_mask: nshards as usize - 1,
            max_lines: lines,
            capacity_lines: AtomicU64::new(lines),
            in_flight: Registry::new(),
            shared: SharedCounts::default(),
            write_back_requested: AtomicBool::new(false),
            write_back_requests: AtomicU64::new(0),
            device: DeviceCounters::default(),
            dirty_at_end: AtomicU64::new(u64::MAX),
            write_back_cursor: AtomicUsize::new(0),
            config,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &CacheConfig {
        &self.config
    }

    /// Number of index shards (1 below 1024 lines, so the policy is exact; up to 64).
    pub fn shards(&self) -> usize {
        self.shards.len()
    }

    /// The shard of a line: lines are dealt out round-robin (line number plus target, modulo the shard
    /// count), so a contiguous data set spreads exactly evenly and a cache sized to 100 % of it holds all of
    /// it (hashing would overfill some shards and evict while others had room).
    #[inline]
    fn shard(&self, key: u64) -> MutexGuard<'_, Shard> {
        lock(&self.shards[self.shard_of(key)].0)
    }

    #[inline]
    fn shard_of(&self, key: u64) -> usize {
        let spread = (key & LINE_MASK).wrapping_add(key >> LINE_BITS);
        spread as usize & self.shard_mask
    }

    #[inline]
    fn line_range(&self, offset: u64, len: usize) -> std::ops::Range<u64> {
        if len == 0 {
            return 0..0;
        }
        (offset >> self.line_shift)..((offset + len as u64 - 1) >> self.line_shift) + 1
    }

    #[inline]
    fn span(&self, offset: u64, len: usize, line: u64) -> Span {
        let line_bytes = self.config.line_bytes as u64;
        let ls = line << self.line_shift;
        let start = offset.max(ls);
        let end = (offset + len as u64).min(ls + line_bytes);
        Span {
            lo: (start - ls) as usize,
            hi: (end - ls) as usize,
            pos: (start - offset) as usize,
            full: start == ls && end == ls + line_bytes,
        }
    }

    /// A record of the in-flight table for an op to forward, locked: its id (the ticket) and the record.
    #[inline]
    fn claim(&self, target: u16, offset: u64) -> (u32, MutexGuard<'_, InFlightOp>) {
        let id = self.in_flight.alloc((offset >> 16) as usize ^ target as usize);
        (id, lock(self.in_flight.get(id)))
    }

    /// Whether [`Cache::read`] (`write` false) or [`Cache::write`] (`write` true, not bypassing) of `len` bytes
    /// at `offset` of `target` would be served by the cache now: every line a read touches is cached; every
    /// line a write-back write touches is cached, or wholly written with room for it. Looks only (no policy
    /// use, no counter): the engine asks it to push such ops first. Another thread may change the answer
    /// before the op is pushed.
    pub fn would_serve(&self, target: u16, offset: u64, len: u32, write: bool) -> bool {
        if write && self.config.mode != CacheMode::WriteBack {
            return false;
        }
        let len = len as usize;
        self.line_range(offset, len).all(|line| {
            let key = key_of(target, line);
            let shard = self.shard(key);
            shard.find(key).is_some() || (write && self.span(offset, len, line).full && shard.room())
        })
    }

    /// A read of `buf.len()` bytes at `offset` of `target`. `bypass`: the op is part of a sequential stream
    /// past the cutoff: it is served from the cache only if every line is there, and never fills.
    pub fn read(&self, target: u16, offset: u64, buf: &mut [u8], bypass: bool) -> ReadOutcome {
        let len = buf.len();
        let lines = self.line_range(offset, len);
        let mut miss_at = None;
        for line in lines.clone() {
            let key = key_of(target, line);
            let mut shard = self.shard(key);
            let found = if bypass { shard.find(key) } else { shard.access(key) };
            let Some(cached) = found else {
                miss_at = Some(line);
                break;
            };
            let span = self.span(offset, len, line);
            buf[span.buf()].copy_from_slice(&shard.slab.data(cached.slot)[span.lo..span.hi]);
            shard.counters.hits += 1;
            if line + 1 == lines.end {
                shard.counters.reads_from_cache += 1;
                shard.counters.bypassed += u64::from(bypass);
            }
        }
        let Some(miss_at) = miss_at else { return ReadOutcome::Hit };

        let (id, mut guard) = self.claim(target, offset);
        let op = &mut *guard;
        *op = InFlightOp {
            target,
            offset,
            len,
            write: false,
            bypass,
            alloc: false,
            first_miss: (miss_at - lines.start) as usize,
            any_saved: false,
            // The scratch vectors keep their allocations from the record's last op.
            ..std::mem::take(op)
        };
        op.snaps.clear();
        let nlines = (lines.end - lines.start) as usize;
        for (i, line) in lines.clone().enumerate() {
            let key = key_of(target, line);
            let hash = hash64(key);
            let mut shard = self.shard(key);
            let bucket = shard.bucket(hash);
            op.snaps.push(shard.writes[bucket]);
            if i == 0 {
                shard.counters.reads_from_target += 1;
                shard.counters.bypassed += u64::from(bypass);
            }
            let counted = line >= miss_at;
            match shard.find(key) {
                Some(cached) => {
                    shard.counters.hits += u64::from(counted);
                    if shard.slab.state[cached.slot as usize] & DIRTY != 0 {
                        if !op.any_saved {
                            op.any_saved = true;
                            op.saved.resize(len, 0);
                            op.saved_mask.clear();
                            op.saved_mask.resize(nlines.div_ceil(64), 0);
                        }
                        let span = self.span(offset, len, line);
                        op.saved[span.buf()].copy_from_slice(&shard.slab.data(cached.slot)[span.lo..span.hi]);
                        op.saved_mask[i / 64] |= 1 << (i % 64);
                    }
                }
                None => {
                    shard.counters.misses += u64::from(counted);
                    if !bypass {
                        shard.missed(hash);
                    }
                }
            }
        }
        ReadOutcome::Forward(ForwardTicket { id })
    }

    /// A write of `data` at `offset` of `target`. `bypass` as for [`Cache::read`]: forwarded, never allocates.
    pub fn write(&self, target: u16, offset: u64, data: &[u8], bypass: bool) -> WriteOutcome {
        let mode = self.config.mode;
        if mode == CacheMode::WriteBack && !bypass && self.absorb(target, offset, data) {
            return WriteOutcome::Absorbed;
        }
        let len = data.len();
        let (id, mut guard) = self.claim(target, offset);
        let op = &mut *guard;
        *op = InFlightOp {
            target,
            offset,
            len,
            write: true,
            bypass,
            alloc: matches!(mode, CacheMode::WriteThrough | CacheMode::WriteBack) && !bypass,
            first_miss: 0,
            any_saved: false,
            // The scratch vectors keep their allocations from the record's last op.
            ..std::mem::take(op)
        };
        op.snaps.clear();
        op.tags.clear();
        for (i, line) in self.line_range(offset, len).enumerate() {
            let key = key_of(target, line);
            let hash = hash64(key);
            let mut shard = self.shard(key);
            let bucket = shard.bucket(hash);
            shard.writes[bucket] = shard.writes[bucket].wrapping_add(1);
            shard.inflight[bucket] += 1;
            op.snaps.push(shard.writes[bucket]);
            op.tags.push(((self.shard_of(key) as u64) << 32 | bucket as u64, i as u32));
            if i == 0 {
                shard.counters.writes_to_target += 1;
                shard.counters.bypassed += u64::from(bypass);
            }
            let Some(cached) = shard.find(key) else { continue };
            match mode {
                CacheMode::ReadOnly => shard.invalidate(key, cached),
                // Write-back: the cached line takes the data now and is dirty, so that any write-back of it
                // from now on carries this write's bytes (a write-back started earlier gets a stale
                // generation and goes again).
                CacheMode::WriteBack => {
                    let span = self.span(offset, len, line);
                    shard.slab.data_mut(cached.slot)[span.lo..span.hi].copy_from_slice(&data[span.buf()]);
                    shard.make_dirty(key, cached, &self.shared);
                }
                CacheMode::WriteThrough | CacheMode::WriteAround => {}
            }
        }
        Self::own_counts(op);
        WriteOutcome::Forward(ForwardTicket { id })
    }

    /// A write over several lines counts itself once per line, and lines can share a bucket. So that the op
    /// is not its own race: for each line with `c` others of the op in its bucket, `e` of them before it,
    /// the count expected when it completes is its snapshot plus `c` (the op's later counts at issue and
    /// earlier ones at completion), and `c - e` of the op's lines are still in flight in the bucket then.
    fn own_counts(op: &mut InFlightOp) {
        op.own_later.clear();
        if op.tags.len() < 2 {
            return;
        }
        op.own_later.resize(op.tags.len(), 0);
        op.tags.sort_unstable();
        for group in op.tags.chunk_by(|x, y| x.0 == y.0) {
            let c = group.len() as u32 - 1;
            for (e, &(_, i)) in group.iter().enumerate() {
                op.snaps[i as usize] = op.snaps[i as usize].wrapping_add(c);
                op.own_later[i as usize] = c - e as u32;
            }
        }
    }

    /// Write-back: takes the write into the cache when every line it touches is cached or wholly written.
    fn absorb(&self, target: u16, offset: u64, data: &[u8]) -> bool {
        let len = data.len();
        let lines = self.line_range(offset, len);
        for line in lines.clone() {
            let key = key_of(target, line);
            let mut shard = self.shard(key);
            if shard.find(key).is_some() {
                continue;
            }
            let full = self.span(offset, len, line).full;
            if !(full && shard.room()) {
                // No room for a line it writes whole: the cache is full of dirty lines, its write-back
                // reserve too, and the target behind it sets the pace.
                shard.counters.writes_forwarded_full += u64::from(full);
                return false;
            }
        }
        let mut all = true;
        for line in lines.clone() {
            let key = key_of(target, line);
            let hash = hash64(key);
            let mut shard = self.shard(key);
            let bucket = shard.bucket(hash);
            shard.writes[bucket] = shard.writes[bucket].wrapping_add(1);
            let span = self.span(offset, len, line);
            match shard.access(key) {
                Some(cached) => {
                    shard.slab.data_mut(cached.slot)[span.lo..span.hi].copy_from_slice(&data[span.buf()]);
                    shard.make_dirty(key, cached, &self.shared);
                }
                None => all &= span.full && shard.insert(key, &data[span.buf()], DIRTY | 1, &self.shared),
            }
            if all && line + 1 == lines.end {
                shard.counters.writes_absorbed += 1;
                shard.counters.absorbed_bytes += len as u64;
            }
        }
        // A line was evicted between the two passes: the write goes to the target too (the lines taken are
        // dirty with the same data, and the forwarded write's completion reconciles them).
        all
    }

    /// A trim (discard) of `len` bytes at `offset` of `target`, on its way to the target: the clean lines it
    /// covers whole are dropped, so no read is served what the target no longer holds. A dirty line stays:
    /// it holds acknowledged writes, and a discard only allows the device to forget (what a discarded range
    /// reads back is not defined), so writing it back later is allowed. Ops in flight on those lines see a
    /// newer write count and do not fill them.
    pub fn discard(&self, target: u16, offset: u64, len: u32) {
        for line in self.line_range(offset, len as usize) {
            if !self.span(offset, len as usize, line).full {
                continue;
            }
            let key = key_of(target, line);
            let hash = hash64(key);
            let mut shard = self.shard(key);
            let bucket = shard.bucket(hash);
            shard.writes[bucket] = shard.writes[bucket].wrapping_add(1);
            if let Some(cached) = shard.find(key) {
                if shard.slab.state[cached.slot as usize] & (DIRTY | WRITING_BACK) == 0 {
                    shard.invalidate(key, cached);
                }
            }
        }
    }

    /// A forwarded op completed. `buf` is the op's buffer (a read's data, to fill from and to overlay newer
    /// cached lines onto; a write's data, to update cached lines with). `ok`: the target transferred it all.
    ///
    /// Returns how many lines took data from `buf` (filled from a read, allocated or updated by a write), so
    /// an engine with a real cache device knows whether to write them there.
    pub fn finish(&self, ticket: ForwardTicket, buf: &mut [u8], ok: bool) -> u32 {
        let mut stored = 0u32;
        let mut guard = lock(self.in_flight.get(ticket.id));
        let op = &mut *guard;
        assert_eq!(buf.len(), op.len, "Cache::finish: the buffer is not the op's");
        let (target, offset, len) = (op.target, op.offset, op.len);
        let lines = self.line_range(offset, len);
        if op.write || ok {
            for (i, line) in lines.enumerate() {
                let key = key_of(target, line);
                let hash = hash64(key);
                let mut shard = self.shard(key);
                let bucket = shard.bucket(hash);
                let changed = shard.writes[bucket] != op.snaps[i];
                let span = self.span(offset, len, line);
                if op.write {
                    shard.writes[bucket] = shard.writes[bucket].wrapping_add(1);
                    shard.inflight[bucket] -= 1;
                    let alone = shard.inflight[bucket] == op.own_later.get(i).copied().unwrap_or(0);
                    stored += u32::from(self.finish_write_line(
                        &mut shard,
                        op,
                        key,
                        span,
                        &buf[span.buf()],
                        changed,
                        alone,
                        ok,
                    ));
                } else {
                    let used = !op.bypass && i >= op.first_miss;
                    match if used { shard.access(key) } else { shard.find(key) } {
                        Some(cached) => {
                            buf[span.buf()].copy_from_slice(&shard.slab.data(cached.slot)[span.lo..span.hi])
                        }
                        None => {
                            if op.any_saved && op.saved_mask[i / 64] & (1 << (i % 64)) != 0 {
                                buf[span.buf()].copy_from_slice(&op.saved[span.buf()]);
                            }
                            if !op.bypass && span.full {
                                let racing = changed || shard.inflight[bucket] != 0;
                                if !racing
                                    && shard.admitted(hash)
                                    && shard.insert(key, &buf[span.buf()], 0, &self.shared)
                                {
                                    shard.counters.fills += 1;
                                    stored += 1;
                                    shard.reset_admit(hash);
                                } else {
                                    shard.counters.fills_skipped += 1;
                                }
                            }
                        }
                    }
                }
            }
        }
        drop(guard);
        self.in_flight.release(ticket.id);
        stored
    }

    /// A forwarded write's completion on one line. `changed`: another write touched the line's bucket during
    /// this one's flight; `alone`: no other forwarded write to the bucket is in flight. Returns true when the
    /// line took the write's data now (allocated, or updated in write-through and write-around).
    #[allow(clippy::too_many_arguments)]
    fn finish_write_line(
        &self,
        shard: &mut Shard,
        op: &InFlightOp,
        key: u64,
        span: Span,
        data: &[u8],
        changed: bool,
        alone: bool,
        ok: bool,
    ) -> bool {
        // A write that would allocate a missing line uses a cached one (the policy is told), as a read does.
        let found = if ok && op.alloc { shard.access(key) } else { shard.find(key) };
        let Some(cached) = found else {
            // Write-allocate a whole line, unless another write raced with this one (the target may hold
            // either's data) or is still in flight.
            if ok && op.alloc && span.full && !changed && alone && shard.insert(key, data, 0, &self.shared) {
                shard.counters.fills += 1;
                return true;
            }
            return false;
        };
        let state = shard.slab.state[cached.slot as usize];
        match self.config.mode {
            CacheMode::ReadOnly => shard.invalidate(key, cached),
            CacheMode::WriteBack => {
                // The line took the data at issue (or a racing write's since). It becomes clean when the target
                // now holds all of it: a whole-line write, no write-back in flight, no racing write.
                if state & DIRTY != 0 {
                    if ok && span.full && state & WRITING_BACK == 0 && !changed {
                        shard.make_clean(key, cached, &self.shared);
                    } else if state & WRITING_BACK != 0 {
                        // The write-back in flight may land before or after this write: it must not clean
                        // the line.
                        shard.make_dirty(key, cached, &self.shared);
                    }
                } else if changed {
                    shard.invalidate(key, cached);
                }
            }
            CacheMode::WriteThrough | CacheMode::WriteAround => {
                // A clean line must equal the target: update it, unless the write failed or raced with
                // another write to the line (which one the target kept is unknown: drop the line).
                debug_assert!(state & DIRTY == 0);
                if ok && !changed {
                    shard.slab.data_mut(cached.slot)[span.lo..span.hi].copy_from_slice(data);
                    return true;
                } else {
                    shard.invalidate(key, cached);
                }
            }
        }
        false
    }

    /// The next dirty line to write back, its data copied into `buf` (at least one line long), or None. Lines
    /// come when the dirty share is above `dirty_max_pct`, when dirty lines were evicted, after
    /// [`Cache::request_write_back`], and for every dirty line when `all` (the end of a run).
    pub fn next_write_back(&self, all: bool, buf: &mut [u8]) -> Option<WriteBack> {
        self.next_write_back_for(all, buf, &|_| true)
    }

    /// [`Cache::next_write_back`] restricted to the targets `accept` takes (a worker that can only write to its own
    /// targets). Lines of other targets wait for a caller that accepts them.
    pub fn next_write_back_for(
        &self,
        all: bool,
        buf: &mut [u8],
        accept: &dyn Fn(u16) -> bool,
    ) -> Option<WriteBack> {
        if all {
            let _ = self.dirty_at_end.compare_exchange(
                u64::MAX,
                self.shared.dirty.load(Relaxed),
                Relaxed,
                Relaxed,
            );
        }
        self.next_writeback(all, buf, accept)
    }

    /// The next dirty line of `target` to write back, whatever the dirty share: what a flush of that target
    /// (fsync) waits for, line by line, until [`Cache::dirty_lines_of`] says none is left.
    pub fn next_write_back_of(&self, target: u16, buf: &mut [u8]) -> Option<WriteBack> {
        self.next_writeback(true, buf, &|t| t == target)
    }

    /// Dirty lines of `target` (and of the targets that share its count: ids equal modulo 32), those being
    /// written back included. A flush of `target` is done when this is 0.
    pub fn dirty_lines_of(&self, target: u16) -> u64 {
        self.shared.dirty_of[dirty_bucket(key_of(target, 0))].load(Relaxed)
    }

    fn next_writeback(&self, all: bool, buf: &mut [u8], accept: &dyn Fn(u16) -> bool) -> Option<WriteBack> {
        assert!(buf.len() >= self.config.line_bytes as usize, "write-back buffer shorter than a line");
        let n = self.shards.len();
        let start = self.write_back_cursor.fetch_add(1, Relaxed) % n;
        if self.shared.evicted_queued.load(Relaxed) > 0 {
            for k in 0..n {
                let mut shard = lock(&self.shards[(start + k) % n].0);
                if !shard.evicted.queue.is_empty() {
                    if let Some(f) = shard.pop_evicted(accept, buf, &self.shared, self.line_shift) {
                        return Some(f);
                    }
                }
            }
        }
        let requested = self.write_back_requested.load(Relaxed);
        let limit = self.config.dirty_max_pct / 100.0 * self.capacity_lines.load(Relaxed) as f64;
        let over = self.shared.dirty.load(Relaxed) as f64 > limit;
        if !(all || requested || over) {
            return None;
        }
        if self.shared.resident_dirty_idle.load(Relaxed) == 0 {
            if requested && self.shared.evicted_queued.load(Relaxed) == 0 {
                self.write_back_requested.store(false, Relaxed);
            }
            return None;
        }
        for k in 0..n {
            let mut shard = lock(&self.shards[(start + k) % n].0);
            if shard.dirty_idle > 0 {
                if let Some(f) = shard.scan_dirty(accept, buf, &self.shared, self.line_shift) {
                    return Some(f);
                }
            }
        }
        None
    }

    /// A write-back completed; `ok` false keeps the line dirty.
    pub fn finish_write_back(&self, write_back: WriteBack, ok: bool) {
        let key = key_of(write_back.target, write_back.offset >> self.line_shift);
        let mut shard = self.shard(key);
        let Some(cached) = shard.find(key) else {
            debug_assert!(false, "finish_write_back of a line that is not cached: {write_back:?}");
            return;
        };
        let state = shard.slab.state[cached.slot as usize];
        if state & WRITING_BACK == 0 {
            debug_assert!(false, "finish_write_back of a line not being written back: {write_back:?}");
            return;
        }
        let gen = state & GENERATION;
        let bucket = shard.bucket(hash64(key));
        shard.writes[bucket] = shard.writes[bucket].wrapping_add(1);
        shard.counters.writebacks += u64::from(ok);
        if ok && gen == write_back.id {
            self.shared.cleaned(key);
            shard.slab.state[cached.slot as usize] = gen;
            if let LinePlace::Evicted(e) = cached.place {
                let slot = shard.evicted.remove(e);
                shard.slab.free_slot(slot);
            }
        } else {
            shard.slab.state[cached.slot as usize] = DIRTY | gen;
            match cached.place {
                LinePlace::Resident => {
                    shard.dirty_idle += 1;
                    self.shared.resident_dirty_idle.fetch_add(1, Relaxed);
                }
                LinePlace::Evicted(e) => {
                    shard.evicted.enqueue(e);
                    self.shared.evicted_queued.fetch_add(1, Relaxed);
                }
            }
        }
    }

    /// Asks for every dirty line to be written back (write-back on demand).
    pub fn request_write_back(&self) {
        self.write_back_requests.fetch_add(1, Relaxed);
        self.write_back_requested.store(true, Relaxed);
    }

    /// Counts one I/O issued to (or dropped before) a real cache device; reported in [`CacheStats`].
    pub fn note_device_io(&self, io: DeviceIo) {
        let c = match io {
            DeviceIo::Read => &self.device.reads,
            DeviceIo::Write => &self.device.writes,
            DeviceIo::WriteDropped => &self.device.dropped,
        };
        c.fetch_add(1, Relaxed);
    }

    /// Dirty lines now (including lines being written back).
    pub fn dirty_lines(&self) -> u64 {
        self.shared.dirty.load(Relaxed)
    }

    /// Changes the capacity (memory pressure: shrink; or grow back up to the configured capacity), evicting
    /// as needed and freeing the memory of whole chunks no longer used. Returns the new capacity in bytes.
    ///
    /// Dirty lines evicted by a shrink are not dropped: they join the write-back queue (past its usual
    /// reserve if need be) and their data stays until [`Cache::finish_write_back`] reports them written.
    pub fn set_capacity(&self, bytes: u64) -> u64 {
        let lines = (bytes >> self.line_shift).min(self.max_lines);
        let n = self.shards.len() as u64;
        for (i, shard) in self.shards.iter().enumerate() {
            let cap = lines / n + u64::from((i as u64) < lines % n);
            lock(&shard.0).set_capacity(cap as usize, &self.shared);
        }
        self.capacity_lines.store(lines, Relaxed);
        lines << self.line_shift
    }

    /// Bytes of RAM the cache holds now (data chunks and metadata).
    pub fn memory_bytes(&self) -> u64 {
        self.shared.data_bytes.load(Relaxed) + self.metadata_bytes() as u64 + self.in_flight.bytes() as u64
    }

    fn metadata_bytes(&self) -> usize {
        self.shards.iter().map(|s| lock(&s.0).metadata_bytes()).sum::<usize>()
            + self.shards.len() * std::mem::size_of::<PaddedShard>()
    }

    /// Metadata (index, policy with its ghosts, per-slot state, write-back list, write counters) per line of
    /// the configured capacity, in bytes, measured from the structures' allocated sizes.
    pub fn metadata_bytes_per_line(&self) -> f64 {
        self.metadata_bytes() as f64 / self.max_lines as f64
    }

    /// The counters so far.
    ///
    /// `dirty_at_end` is the dirty count at the first `next_write_back(all = true)` (the exit write-back), or the dirty
    /// count now if there was none yet.
    pub fn stats(&self) -> CacheStats {
        let mut total = ShardCounters::default();
        let mut lines = 0u64;
        for padded in self.shards.iter() {
            let shard = lock(&padded.0);
            total.add(&shard.counters);
            lines += (shard.policy.len() + shard.evicted.live) as u64;
        }
        let end = self.dirty_at_end.load(Relaxed);
        CacheStats {
            hits: total.hits,
            misses: total.misses,
            reads_from_cache: total.reads_from_cache,
            reads_from_target: total.reads_from_target,
            writes_absorbed: total.writes_absorbed,
            writes_to_target: total.writes_to_target,
            fills: total.fills,
            fills_skipped: total.fills_skipped,
            writebacks: total.writebacks,
            evictions: total.evictions,
            bypassed: total.bypassed,
            invalidations: total.invalidations,
            absorbed_bytes: total.absorbed_bytes,
            writes_forwarded_full: total.writes_forwarded_full,
            peak_dirty_lines: self.shared.peak_dirty.load(Relaxed),
            dirty_at_end: if end == u64::MAX { self.dirty_lines() } else { end },
            capacity_bytes: self.capacity_lines.load(Relaxed) << self.line_shift,
            lines,
            metadata_bytes_per_line: self.metadata_bytes_per_line(),
            memory_bytes: self.memory_bytes(),
            write_back_requests: self.write_back_requests.load(Relaxed),
            device_reads: self.device.reads.load(Relaxed),
            device_writes: self.device.writes.load(Relaxed),
            device_writes_dropped: self.device.dropped.load(Relaxed),
        }
    }
}
