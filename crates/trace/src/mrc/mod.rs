//! Miss-ratio curves: the miss ratio of a cache against its size, from a trace.
//!
//! A trace's reads (and writes, as [`Writes`] says) become *references* to objects: the cache lines of
//! `line` bytes each request touches (iolab's cache's view), or each request's start as one object
//! (libCacheSim's convention). [`MrcBuilder`] takes the records one by one and computes, in one pass, the LRU
//! curve at every size from stack distances ([`Method::Exact`], or SHARDS sampling), and keeps the
//! references that the policy simulations ([`simulate`]: iolab-cache's own LRU, ARC and S3-FIFO, at a set of
//! sizes) replay afterwards. [`knee`] and [`recommend`] read a curve.

mod fenwick;
mod hash;
mod histogram;
mod kept;
mod knee;
mod recent;
mod shards;
mod stack;

pub use histogram::DistanceHistogram;
pub use kept::{Alignment, References};
pub use knee::{knee, recommend, Recommendation, SHARE_OF_BEST};
pub use shards::{spatial_hash, LruDistances, Method, MAX_NEAR_DEPTH, MODULUS, NEAR_SAMPLED};
pub use stack::StackDistance;

use crate::{TraceOp, TraceRecord};
use iolab_cache::policy::new_policy;
use iolab_cache::CachePolicy;

/// What one object of the cache is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Objects {
    /// Cache lines of this many bytes; a request references every line it touches.
    Lines(u64),
    /// Each request's start offset (and target) is one object of unit size.
    Requests,
}

/// What a trace's writes do to the cache a curve models. Reads always make references and are counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Writes {
    /// Writes make references like reads and are counted: the miss ratio of reads and writes.
    Count,
    /// Writes use or install the lines they touch but are not counted: the miss ratio of reads in a cache
    /// that writes fill (iolab's write-through and write-back caches), what a replay with `--cache` measures.
    Install,
    /// Writes are passed over: the miss ratio of reads, as if the trace had no writes.
    Ignore,
}

impl Writes {
    /// The name the command line and the document use: `count`, `install`, `ignore`.
    pub fn name(self) -> &'static str {
        match self {
            Writes::Count => "count",
            Writes::Install => "install",
            Writes::Ignore => "ignore",
        }
    }
}

/// Which ops and objects make the references.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MrcOptions {
    /// The objects.
    pub objects: Objects,
    /// What writes do.
    pub writes: Writes,
}

/// Objects a policy simulation holds at most (iolab-cache's index limit, with ARC's ghosts).
pub const MAX_SIMULATED_OBJECTS: u64 = 32 << 20;

/// Bytes a tracked object may take, at most: its entry in the map from object to last reference (16 bytes
/// at the map's load factor, twice while the map doubles), its place in the stack's marks (four positions
/// a live object) and the renumbering's sort.
pub const BYTES_PER_OBJECT: u64 = 72;

/// Bytes a kept reference may take, at most: its key and bit, in a vector that doubles.
pub const BYTES_PER_KEPT_REFERENCE: u64 = 17;

/// One point of a curve.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CurvePoint {
    /// Cache size in objects.
    pub objects: u64,
    /// Misses per reference at that size.
    pub miss_ratio: f64,
}

/// References reserved (memory checked and allocated) ahead at a time, so that the check and the
/// allocation are not made per record: [`MrcBuilder::has_room_for`].
pub const RESERVE_AHEAD: u64 = 4096;

/// A line size's arithmetic: a shift and a mask where it is a power of two (4 KiB lines: no division per
/// reference), a division otherwise.
#[derive(Clone, Copy, Debug)]
struct LineMath {
    bytes: u64,
    shift: Option<u32>,
}

impl LineMath {
    fn new(bytes: u64) -> LineMath {
        let bytes = bytes.max(1);
        LineMath { bytes, shift: bytes.is_power_of_two().then(|| bytes.trailing_zeros()) }
    }

    /// The line holding byte `x`.
    #[inline]
    fn line(self, x: u64) -> u64 {
        match self.shift {
            Some(s) => x >> s,
            None => x / self.bytes,
        }
    }

    /// `x`'s offset within its line.
    #[inline]
    fn within(self, x: u64) -> u64 {
        match self.shift {
            Some(_) => x & (self.bytes - 1),
            None => x % self.bytes,
        }
    }
}

/// The object of line `line` of `r`'s target.
#[inline]
fn line_key(r: &TraceRecord, line: u64) -> u64 {
    ((r.target as u64) << 48) ^ line
}

/// The object of `r` when requests are the objects.
#[inline]
fn request_key(r: &TraceRecord) -> u64 {
    r.offset ^ ((r.target as u64) << 56)
}

/// Takes a trace's records and builds the LRU distances and the references kept for simulations.
pub struct MrcBuilder {
    options: MrcOptions,
    line: LineMath,
    /// References that may still be added without another memory check and reservation.
    room: u64,
    method: Method,
    lru: LruDistances,
    kept: Option<References>,
    ops: u64,
    installs: u64,
    alignment: Alignment,
    passed_over: [u64; 5],
}

impl MrcBuilder {
    /// A builder for `options`, finding LRU distances by `method`; `keep` keeps the references for
    /// [`simulate`] (8 bytes each, of the sampled objects only when sampling).
    pub fn new(options: MrcOptions, method: Method, keep: bool) -> MrcBuilder {
        let line = LineMath::new(match options.objects {
            Objects::Lines(bytes) => bytes,
            Objects::Requests => 1,
        });
        MrcBuilder {
            options,
            line,
            room: 0,
            method,
            lru: LruDistances::new(method),
            kept: keep.then(References::default),
            ops: 0,
            installs: 0,
            alignment: Alignment::default(),
            passed_over: [0; 5],
        }
    }

    /// Takes one record: its references, or it is passed over (not a read or write, or a write when reads
    /// only).
    #[inline]
    pub fn add(&mut self, r: &TraceRecord) {
        let counted = match (r.op, self.options.writes) {
            (TraceOp::Read, _) | (TraceOp::Write, Writes::Count) => true,
            (TraceOp::Write, Writes::Install) => false,
            _ => {
                self.passed_over[r.op as usize] += 1;
                return;
            }
        };
        self.ops += u64::from(counted);
        self.installs += u64::from(!counted);
        match self.options.objects {
            Objects::Lines(_) => {
                let end = r.offset.saturating_add((r.len as u64).max(1));
                let (first, last) = (self.line.line(r.offset), self.line.line(end - 1));
                if counted {
                    let (head, tail) = (self.line.within(r.offset), self.line.within(end));
                    self.alignment.add(head, tail, self.line.bytes);
                }
                self.room = self.room.saturating_sub(last - first + 1);
                for l in first..=last {
                    self.reference(line_key(r, l), counted);
                }
            }
            Objects::Requests => {
                self.room = self.room.saturating_sub(1);
                self.reference(request_key(r), counted)
            }
        }
    }

    /// Starts fetching what adding `r` will look up first (the object of its first reference): called some
    /// records ahead of [`MrcBuilder::add`] (8 or so), it hides cache misses. A hint only: it changes nothing.
    #[inline]
    pub fn prefetch(&self, r: &TraceRecord) {
        self.lru.prefetch(match self.options.objects {
            Objects::Lines(_) => line_key(r, self.line.line(r.offset)),
            Objects::Requests => request_key(r),
        });
    }

    /// Whether `r` fits in what was reserved already ([`RESERVE_AHEAD`]): when it does not, check
    /// [`MrcBuilder::memory_after`] and call [`MrcBuilder::try_reserve_for`] before adding it.
    #[inline]
    pub fn has_room_for(&self, r: &TraceRecord) -> bool {
        self.references_of(r) <= self.room
    }

    /// One reference to `key`: counted (a read, or a write that counts), or a write installing it.
    #[inline]
    fn reference(&mut self, key: u64, counted: bool) {
        if counted {
            self.lru.access(key);
        } else {
            self.lru.install(key);
        }
        if let Some(kept) = &mut self.kept {
            if self.lru.is_exact() || spatial_hash(key) < self.lru.threshold() {
                kept.push(key, counted);
            }
        }
    }

    /// The references `r` makes: the lines it touches, one for a request, none when it is passed over.
    pub fn references_of(&self, r: &TraceRecord) -> u64 {
        match (r.op, self.options.writes, self.options.objects) {
            (TraceOp::Read, _, Objects::Lines(_))
            | (TraceOp::Write, Writes::Count | Writes::Install, Objects::Lines(_)) => {
                let end = r.offset.saturating_add((r.len as u64).max(1));
                self.line.line(end - 1) - self.line.line(r.offset) + 1
            }
            (TraceOp::Read, _, Objects::Requests)
            | (TraceOp::Write, Writes::Count | Writes::Install, Objects::Requests) => 1,
            _ => 0,
        }
    }

    /// The memory the builder will hold at most once `r` is added and [`RESERVE_AHEAD`] more references
    /// after it, as if each were to a new object (and kept): what to check before adding it.
    pub fn memory_after(&self, r: &TraceRecord) -> u64 {
        let refs = self.references_of(r).saturating_add(RESERVE_AHEAD);
        let kept = self.kept.as_ref().map_or(0, |k| k.len() as u64 + refs);
        (self.lru.objects() + refs)
            .saturating_mul(BYTES_PER_OBJECT)
            .saturating_add(kept * BYTES_PER_KEPT_REFERENCE)
    }

    /// Makes room for what adding `r` may take (each of its references a new object, and kept), or says the
    /// memory could not be had: checked before [`MrcBuilder::add`], an allocation that fails is an error, not an
    /// abort.
    /// Reserves for `r` and [`RESERVE_AHEAD`] references after it.
    pub fn try_reserve_for(&mut self, r: &TraceRecord) -> Result<(), std::collections::TryReserveError> {
        let refs = self.references_of(r).saturating_add(RESERVE_AHEAD);
        let more = usize::try_from(refs).unwrap_or(usize::MAX);
        self.lru.try_reserve(more)?;
        if let Some(kept) = &mut self.kept {
            kept.try_reserve(more)?;
        }
        self.room = refs;
        Ok(())
    }

    /// Objects tracked now (every distinct object when exact; the sample's otherwise).
    pub fn objects(&self) -> u64 {
        self.lru.objects()
    }

    /// Ops that made counted references.
    pub fn ops(&self) -> u64 {
        self.ops
    }

    /// Writes that installed lines without being counted ([`Writes::Install`]).
    pub fn installs(&self) -> u64 {
        self.installs
    }

    /// How the counted requests sit on cache lines.
    pub fn alignment(&self) -> &Alignment {
        &self.alignment
    }

    /// Records passed over, by [`TraceOp`] code.
    pub fn passed_over(&self) -> [u64; 5] {
        self.passed_over
    }

    /// The LRU analysis and the kept references (those of objects still sampled at the end, with the rate
    /// they were sampled at).
    pub fn finish(self) -> MrcAnalysis {
        let threshold = self.lru.threshold();
        let rate = self.lru.rate();
        let exact = self.lru.is_exact();
        let kept = self.kept.map(|mut k| {
            if !exact {
                k.retain(|key| spatial_hash(key) < threshold);
            }
            k
        });
        MrcAnalysis {
            method: self.method,
            references: self.lru.references(),
            sampled_references: self.lru.sampled(),
            sampled_objects: self.lru.objects(),
            rate,
            exact,
            histogram: self.lru.finish(),
            kept,
        }
    }
}

/// What [`MrcBuilder::finish`] returns.
pub struct MrcAnalysis {
    /// The method asked for.
    pub method: Method,
    /// All references.
    pub references: u64,
    /// References of sampled objects.
    pub sampled_references: u64,
    /// Sampled objects tracked at the end (all distinct objects when exact).
    pub sampled_objects: u64,
    /// The sampling rate at the end (1 when exact).
    pub rate: f64,
    /// Whether every reference was analysed.
    pub exact: bool,
    /// LRU stack distances.
    pub histogram: DistanceHistogram,
    /// References kept for simulations.
    pub kept: Option<References>,
}

impl MrcAnalysis {
    /// Distinct objects (estimated when sampled).
    pub fn objects(&self) -> u64 {
        (self.sampled_objects as f64 / self.rate).round() as u64
    }

    /// The method that ran, as the document names it: `exact` (every reference, also when a fixed-size
    /// sample never had to drop an object), `shards-fixed-rate` or `shards-fixed-size`.
    pub fn method_name(&self) -> &'static str {
        match self.method {
            _ if self.exact => "exact",
            Method::FixedRate(_) => "shards-fixed-rate",
            _ => "shards-fixed-size",
        }
    }

    /// The LRU curve at `sizes` (objects).
    pub fn lru_curve(&self, sizes: &[u64]) -> Vec<CurvePoint> {
        let ratios = self.histogram.miss_ratios(sizes);
        sizes.iter().zip(ratios).map(|(&objects, miss_ratio)| CurvePoint { objects, miss_ratio }).collect()
    }
}

/// Cache sizes for a curve: four a doubling from 1 object to past `objects` (the working set).
pub fn default_sizes(objects: u64) -> Vec<u64> {
    let mut sizes = Vec::new();
    let top = objects.max(1) * 2;
    let mut octave = 1u64;
    while octave <= top {
        // 2^(k/4): four steps a doubling.
        for step in [1.0, 1.189_207, std::f64::consts::SQRT_2, 1.681_793] {
            let s = (octave as f64 * step).round() as u64;
            if sizes.last() != Some(&s) && s <= top {
                sizes.push(s);
            }
        }
        octave *= 2;
    }
    sizes
}

/// Sizes for simulations: at most `n` of `sizes`, spread evenly, the largest kept, none past
/// [`MAX_SIMULATED_OBJECTS`].
pub fn thin_sizes(sizes: &[u64], n: usize) -> Vec<u64> {
    let sizes: Vec<u64> = sizes.iter().copied().filter(|&s| s <= MAX_SIMULATED_OBJECTS).collect();
    if sizes.len() <= n || n < 2 {
        return sizes;
    }
    (0..n).map(|i| sizes[i * (sizes.len() - 1) / (n - 1)]).collect()
}

/// The miss ratio of iolab-cache's `policy` replaying `references` at each of `sizes` (objects): misses of
/// counted references per counted reference; an installing write uses or installs its line uncounted. The
/// references of a sample at `rate` < 1 are replayed in a cache of `size × rate` objects, a miniature
/// simulation (Waldspurger et al., USENIX ATC 2017).
pub fn simulate(policy: CachePolicy, references: &References, rate: f64, sizes: &[u64]) -> Vec<CurvePoint> {
    let mut evicted = Vec::new();
    let counted = references.counted_len();
    sizes
        .iter()
        .map(|&objects| {
            let capacity = ((objects as f64 * rate).round() as u64).clamp(1, MAX_SIMULATED_OBJECTS) as usize;
            let mut cache = new_policy(policy, capacity);
            let mut misses = 0u64;
            for (key, is_counted) in references.iter() {
                if !cache.access(key) {
                    misses += u64::from(is_counted);
                    cache.insert(key, &mut evicted);
                    evicted.clear();
                }
            }
            let miss_ratio = if counted == 0 { 0.0 } else { misses as f64 / counted as f64 };
            CurvePoint { objects, miss_ratio }
        })
        .collect()
}

#[cfg(test)]
mod tests;
