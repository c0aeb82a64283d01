//! `--inject`: [`FaultEngine`] sits right above the target's engine and puts faults into its I/O on purpose.
//!
//! The stack is base <- faults <- links <- cache <- verify, so the FaultEngine sees exactly the I/O the target
//! gets, a block cache's write-backs included, and the verifier above sees what a faulty device would return.
//! It is only in the stack when `--inject` is given: the fault-free path costs nothing.
//!
//! What each kind does (docs/FAULTS.md has the user's view):
//!
//! - `bit-flip-write`: one bit of the op's buffer is flipped before the op is pushed (the worker restamps a
//!   write buffer before every write, so the flip never outlives the op).
//! - `bit-flip-read`: one bit of the returned data is flipped after the op completes; the medium is untouched.
//! - `lost-write`: the op is not pushed; it completes with its full length in the next `submit_and_reap`.
//! - `misdirected-write`: the op is pushed at another block-aligned offset of the worker's region of the same
//!   target, not overlapping the place it was meant for; the place it was meant for keeps its old data.
//! - `torn-write`: a shorter op (same buffer) is pushed, cut at a multiple of the target's write unit (512
//!   bytes, or its logical block size under O_DIRECT): inside a verification block when the unit is smaller
//!   than the block (the block then holds two generations), else at a block boundary (the blocks after the cut
//!   keep their old data, as a 4 KiB-native drive tears); the completion reports the full length.
//! - `eio`: the op is not pushed; it completes with -EIO.
//! - `latency-spike`: the op's completion is held for the spike on the engine's clock (virtual time included):
//!   the wrapper never sleeps, it passes its next due time down as the inner engine's deadline.
//! - `early-flush-ack` is not the target's fault but a write-back cache's: the cache layer asks
//!   [`EarlyFlushAck`] which flushes to acknowledge without writing its dirty lines back first; a worker with
//!   no other kind has no FaultEngine.
//!
//! Choices are deterministic for a seed: each worker has one xoshiro256** stream per `--inject` (seeded from the
//! run seed, the worker index and the spec's index), which decides whether an eligible op is hit and where
//! (which bit, where a misdirected write lands, where a write tears). Every eligible op advances every
//! eligible spec's stream, so adding an `--inject` never changes what the others choose.
//!
//! Counting (the point of the feature is to prove that verification finds all injected damage, with no false
//! positives): [`Faults`] counts injections per spec and keeps a ledger of damaged verification blocks, each
//! attributed to the injection that last damaged it; a later successful write that fully covers a block
//! repairs it. [`Faults::result`] turns that into live and detected counts. The ledger is behind a lock, taken
//! only when a corrupting kind is configured, and only on writes (a clean write skips it while nothing is
//! damaged); `bit-flip-read` records stay in the worker's engine and are merged once, when it is dropped.

use crate::tags::Tags;
use crate::{Completion, Engine, EngineError, Op, OpKind};
use iolab_rng::Rng;
use iolab_spec::{InjectKind, InjectSpec, InjectWhen};
use iolab_verify::{InjectCount, InjectResult};
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap, HashSet};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// The smallest write unit: a torn write is cut at a multiple of it, or of the target's larger unit.
const SECTOR: u64 = 512;

/// A damaged block: the injection that last damaged it, and its spec.
#[derive(Clone, Copy, Debug)]
struct Damage {
    id: u64,
    spec: u16,
}

/// Damaged verification blocks, by (target id, block offset), and the live `bit-flip-read`s.
#[derive(Default)]
struct Ledger {
    blocks: BTreeMap<(u16, u64), Damage>,
    next_id: u64,
    /// Live bit-flip-reads: (spec, target id, block offset) -> count.
    reads: HashMap<(u16, u16, u64), u64>,
    /// Every block an injection ever damaged (repaired or not): a mismatch anywhere else is unexplained.
    ever: HashSet<(u16, u64)>,
}

/// The run's fault injection, shared by all workers: what to inject and what was injected.
pub struct Faults {
    specs: Vec<InjectSpec>,
    seed: u64,
    block_bytes: u32,
    /// Injections per spec.
    injected: Vec<AtomicU64>,
    /// Present when a corrupting kind is configured.
    ledger: Option<Mutex<Ledger>>,
    /// Blocks in the ledger, read without the lock so a clean write skips it while nothing is damaged.
    damaged: AtomicUsize,
}

impl Faults {
    /// Faults for a run; choices are deterministic for `seed`. `block_bytes` is the verification block (what
    /// "a damaged block" means when counting live and detected injections).
    pub fn new(specs: Vec<InjectSpec>, seed: u64, block_bytes: u32) -> Faults {
        assert!(block_bytes >= 512, "verification block of {block_bytes} bytes (bug)");
        assert!(specs.len() <= u16::MAX as usize, "too many --inject (bug: the spec bounds them)");
        let corrupting = specs.iter().any(|s| s.kind.corrupts());
        Faults {
            injected: specs.iter().map(|_| AtomicU64::new(0)).collect(),
            specs,
            seed,
            block_bytes,
            ledger: corrupting.then(|| Mutex::new(Ledger::default())),
            damaged: AtomicUsize::new(0),
        }
    }

    /// The `inject` block of the result; with `--verify`, `mismatch_blocks` (target id, block offset) are the
    /// blocks verification failed, to count live injections that were detected.
    ///
    /// Call it once the workers' engines are dropped (their `bit-flip-read` records are merged on drop).
    /// Without `mismatch_blocks`, `live` and `detected` are None; they are always None for `eio` and
    /// `latency-spike`, which damage no data.
    pub fn result(&self, mismatch_blocks: Option<&[(u16, u64)]>) -> InjectResult {
        let n = self.specs.len();
        let mut live = vec![0u64; n];
        let mut detected = vec![0u64; n];
        let mut unexplained = None;
        if let Some(mismatch) = mismatch_blocks {
            let mut explained: HashSet<(u16, u64)> = HashSet::new();
            if let Some(l) = self.ledger.as_ref().map(lock) {
                explained.extend(l.ever.iter().copied());
                explained.extend(l.reads.keys().map(|&(_, t, o)| (t, o)));
            }
            unexplained = Some(mismatch.iter().filter(|b| !explained.contains(b)).count() as u64);
        }
        if let (Some(mismatch), Some(ledger)) = (mismatch_blocks, &self.ledger) {
            let mismatch: HashSet<(u16, u64)> = mismatch.iter().copied().collect();
            let l = lock(ledger);
            let mut live_ids: HashSet<u64> = HashSet::new();
            let mut found_ids: HashSet<u64> = HashSet::new();
            for (block, d) in &l.blocks {
                if live_ids.insert(d.id) {
                    live[d.spec as usize] += 1;
                }
                if mismatch.contains(block) && found_ids.insert(d.id) {
                    detected[d.spec as usize] += 1;
                }
            }
            for (&(spec, target, block), &count) in &l.reads {
                live[spec as usize] += count;
                if mismatch.contains(&(target, block)) {
                    detected[spec as usize] += count;
                }
            }
        }
        let faults = self
            .specs
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let counted = mismatch_blocks.is_some() && s.kind.corrupts();
                InjectCount {
                    kind: s.kind.name().to_string(),
                    spec: s.text.clone(),
                    injected: self.injected[i].load(Ordering::Relaxed),
                    live: counted.then_some(live[i]),
                    detected: counted.then_some(detected[i]),
                }
            })
            .collect();
        InjectResult { seed: self.seed, faults, unexplained_mismatches: unexplained }
    }

    /// The run seed the choices derive from.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The verification block size the ledger counts in.
    pub fn block_bytes(&self) -> u32 {
        self.block_bytes
    }

    /// The `--inject` specs, in the order given.
    pub fn specs(&self) -> &[InjectSpec] {
        &self.specs
    }

    /// Blocks (target id, block offset) still damaged on the targets by a write-side injection, sorted; what a
    /// read-back of every written block should report. Excludes `bit-flip-read`, whose damage is in a read's
    /// buffer only.
    pub fn damaged_blocks(&self) -> Vec<(u16, u64)> {
        match &self.ledger {
            Some(l) => lock(l).blocks.keys().copied().collect(),
            None => Vec::new(),
        }
    }

    fn count(&self, spec: u16) {
        self.injected[spec as usize].fetch_add(1, Ordering::Relaxed);
    }

    /// A write's effect on the ledger: blocks fully covered by `clean` (what it stored) are repaired, then the
    /// blocks overlapping each `dirty` range are attributed to one new injection of `spec`.
    /// Notes blocks an injection changed that do not count as damage (see the misdirected write), so that a
    /// mismatch found there is not counted as unexplained.
    fn explain(&self, target: u16, ranges: &[(u64, u64)]) {
        let Some(ledger) = &self.ledger else { return };
        if ranges.is_empty() {
            return;
        }
        let b = self.block_bytes as u64;
        let mut l = lock(ledger);
        for &(lo, hi) in ranges {
            let mut at = lo / b * b;
            while at < hi {
                l.ever.insert((target, at));
                at += b;
            }
        }
    }

    fn record(&self, target: u16, clean: Option<(u64, u64)>, dirty: &[(u64, u64)], spec: u16) {
        let Some(ledger) = &self.ledger else { return };
        if dirty.is_empty() && self.damaged.load(Ordering::Relaxed) == 0 {
            return;
        }
        let b = self.block_bytes as u64;
        let mut l = lock(ledger);
        if let Some((lo, hi)) = clean {
            let first = lo.div_ceil(b) * b;
            let end = hi / b * b; // blocks starting before `end` end by `hi`
            if first < end {
                let covered: Vec<(u16, u64)> =
                    l.blocks.range((target, first)..(target, end)).map(|(k, _)| *k).collect();
                for k in covered {
                    l.blocks.remove(&k);
                }
            }
        }
        if !dirty.is_empty() {
            let id = l.next_id;
            l.next_id += 1;
            for &(lo, hi) in dirty {
                let mut at = lo / b * b;
                while at < hi {
                    l.blocks.insert((target, at), Damage { id, spec });
                    l.ever.insert((target, at));
                    at += b;
                }
            }
        }
        self.damaged.store(l.blocks.len(), Ordering::Relaxed);
    }
}

/// With `--verify`: the run has written the block at `at` (so verification judges it); without, every block.
fn faults_verifier_written(wf: &WorkerFaults, target: u16, at: u64) -> bool {
    wf.verifier.as_ref().is_none_or(|v| v.written(target, at))
}

/// Books the damage a write did to `dirty` (after repairing `clean`): with `--verify`, only in blocks where the
/// damaged write was the only one in flight on a clean block (so verification knows exactly what the block must
/// hold); the rest are explained, not counted as live damage, since overlapping writes may legitimately leave
/// older data there.
fn book(wf: &WorkerFaults, block: u64, t: u16, clean: Option<(u64, u64)>, dirty: &[(u64, u64)], spec: u16) {
    let (judged, unjudged) =
        split(dirty, block, |at| wf.verifier.as_ref().is_none_or(|v| v.judges_write(t, at)));
    wf.faults.record(t, clean, &judged, spec);
    wf.faults.explain(t, &unjudged);
}

/// Splits byte ranges at block boundaries into those whose block `judged` (given the block's offset) accepts
/// and the rest.
#[allow(clippy::type_complexity)]
fn split(
    ranges: &[(u64, u64)],
    block: u64,
    judged: impl Fn(u64) -> bool,
) -> (Vec<(u64, u64)>, Vec<(u64, u64)>) {
    let (mut yes, mut no) = (Vec::new(), Vec::new());
    for &(lo, hi) in ranges {
        let mut at = lo;
        while at < hi {
            let end = ((at / block + 1) * block).min(hi);
            if judged(at / block * block) {
                yes.push((at, end));
            } else {
                no.push((at, end));
            }
            at = end;
        }
    }
    (yes, no)
}

fn lock(l: &Mutex<Ledger>) -> MutexGuard<'_, Ledger> {
    l.lock().unwrap_or_else(|p| p.into_inner())
}

/// What a worker needs to inject faults.
#[derive(Clone)]
pub struct WorkerFaults {
    /// The run's faults.
    pub faults: Arc<Faults>,
    /// The run's id of each of the worker's targets.
    pub ids: Vec<u16>,
    /// The worker's region (offset, length) in each of its targets (a misdirected write lands inside it).
    pub regions: Vec<(u64, u64)>,
    /// The worker's index (its own random stream).
    pub worker: u32,
    /// The smallest write each of the worker's targets accepts (512, or the logical block size under
    /// O_DIRECT): a torn write is cut at a multiple of it, so the shortened op is one the target takes.
    pub units: Vec<u32>,
    /// With `--verify`: a bit is flipped in a read only where the verifier knows exactly what the block holds,
    /// so every flip is one verification can judge (elsewhere, e.g. a block still racy from overlapping writes,
    /// a flipped bit could not be told from what the storage may legitimately return).
    pub verifier: Option<Arc<iolab_verify::Verifier>>,
}

impl WorkerFaults {
    /// The worker's stream for spec `i`: seeded from the run seed, the spec's index and the worker's.
    fn stream(&self, i: usize) -> Stream {
        let f = &self.faults;
        Stream {
            kind: f.specs[i].kind,
            when: f.specs[i].when,
            rng: Rng::for_worker(
                f.seed ^ crate::salts::INJECT ^ (i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15),
                self.worker,
            ),
            eligible: 0,
        }
    }

    /// True when a spec hits the target's reads or writes, so the worker needs a [`FaultEngine`]
    /// (`early-flush-ack` alone does not: it is the block cache's).
    pub fn hits_target_io(&self) -> bool {
        self.faults.specs.iter().any(|s| s.kind.applies_to() != (false, false))
    }

    /// The worker's `early-flush-ack` (the first one given), for its block cache.
    pub fn early_flush_ack(&self) -> Option<EarlyFlushAck> {
        let i = self.faults.specs.iter().position(|s| s.kind == InjectKind::EarlyFlushAck)?;
        Some(EarlyFlushAck { faults: self.faults.clone(), spec: i as u16, stream: self.stream(i) })
    }
}

/// `early-flush-ack` as a worker's write-back cache applies it ([`crate::cache::CacheEngine`]): which of its
/// eligible flushes (of a target with dirty lines) are acknowledged without writing them back. Counted as
/// injected when it fires.
pub struct EarlyFlushAck {
    faults: Arc<Faults>,
    spec: u16,
    stream: Stream,
}

impl EarlyFlushAck {
    /// An eligible flush: true when this one is acknowledged early (and counted).
    pub fn fires(&mut self) -> bool {
        let hit = self.stream.fires();
        if hit {
            self.faults.count(self.spec);
        }
        hit
    }
}

/// One `--inject` as a worker applies it.
struct Stream {
    kind: InjectKind,
    when: InjectWhen,
    rng: Rng,
    /// Eligible ops seen (for `@N`).
    eligible: u64,
}

impl Stream {
    fn fires(&mut self) -> bool {
        match self.when {
            InjectWhen::Probability(p) => p >= 1.0 || self.rng.unit_f64() < p,
            InjectWhen::Every(n) => {
                self.eligible += 1;
                self.eligible % n.max(1) == 0
            }
        }
    }
}

/// The data fault applied to one op (at most one per op).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fault {
    None,
    FlipRead { spec: u16, byte: u32, bit: u8 },
    FlipWrite { spec: u16, byte: u32, bit: u8 },
    Lost { spec: u16 },
    Misdirected { spec: u16, to: u64 },
    Torn { spec: u16, cut: u32 },
    Eio,
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    /// The caller's op.
    op: Op,
    fault: Fault,
    delay_ns: u64,
    result: i32,
    /// bit-flip-read: the flip was applied to the returned data.
    flipped: bool,
    /// bit-flip-read: a write of this worker overlapping the flipped block was in flight meanwhile.
    tainted: bool,
}

/// An engine that injects faults into the I/O of the engine underneath.
pub struct FaultEngine<E: Engine> {
    inner: E,
    wf: WorkerFaults,
    block: u64,
    streams: Vec<Stream>,
    /// In-flight ops by tag (the user_data the inner engine sees).
    entries: Tags<Entry>,
    /// Completions held until they are due: (due, sequence, tag).
    held: BinaryHeap<Reverse<(u64, u64, u32)>>,
    seq: u64,
    /// Ops pushed to the inner engine and not yet completed there.
    in_inner: usize,
    reaped: Vec<Completion>,
    /// Tags of bit-flip-reads in flight (checked against every write pushed meanwhile).
    flip_reads: Vec<u32>,
    /// Live bit-flip-reads of this worker: (spec, target id, block) -> count; merged into [`Faults`] on drop.
    reads: HashMap<(u16, u16, u64), u64>,
}

impl<E: Engine> FaultEngine<E> {
    /// Wraps `inner`, which has room for `slots` ops.
    pub fn new(inner: E, wf: WorkerFaults, slots: u32) -> FaultEngine<E> {
        let n = slots as usize;
        let f = &wf.faults;
        let streams = (0..f.specs.len()).map(|i| wf.stream(i)).collect();
        FaultEngine {
            inner,
            block: f.block_bytes as u64,
            wf,
            streams,
            entries: Tags::new(slots),
            held: BinaryHeap::with_capacity(n),
            seq: 0,
            in_inner: 0,
            reaped: Vec::with_capacity(n),
            flip_reads: Vec::new(),
            reads: HashMap::new(),
        }
    }

    fn target_id(&self, op: &Op) -> u16 {
        self.wf.ids.get(op.target as usize).copied().unwrap_or(op.target)
    }

    /// Decides the faults of `op`: at most one data fault (the first spec, in the order given, that fires)
    /// and the sum of the latency spikes that fire. Counts what is applied at push (all but bit-flip-read,
    /// counted when its flip is applied to returned data).
    fn decide(&mut self, op: &Op) -> (Fault, u64) {
        let mut fault = Fault::None;
        let mut delay = 0u64;
        // Ops for other files of the engine (a real cache device, `--cache-dev PATH`) are not the target's I/O.
        // Faults are of data: a flush or a trim carries none.
        if op.target as usize >= self.wf.ids.len() || !matches!(op.kind, OpKind::Read | OpKind::Write) {
            return (fault, delay);
        }
        let region = self.wf.regions.get(op.target as usize).copied();
        let unit = self.wf.units.get(op.target as usize).map_or(SECTOR, |&u| (u as u64).max(SECTOR));
        let b = self.block;
        for (i, s) in self.streams.iter_mut().enumerate() {
            let spec = i as u16;
            let (reads, writes) = s.kind.applies_to();
            if !(if op.kind == OpKind::Write { writes } else { reads }) || op.len == 0 {
                continue;
            }
            // Kinds that need room: ineligible ops do not count towards `@N`.
            let choice = match s.kind {
                InjectKind::MisdirectedWrite => match region.and_then(|r| landing_choices(op, r, b)) {
                    Some(c) => Some(c),
                    None => continue,
                },
                InjectKind::TornWrite => match tear_choices(op, b, unit) {
                    Some(c) => Some(c),
                    None => continue,
                },
                _ => None,
            };
            if !s.fires() {
                continue;
            }
            // Parameters are drawn whenever the spec fires, applied or not, so each stream stays independent.
            let f = match s.kind {
                InjectKind::LatencySpike { ns } => {
                    delay = delay.saturating_add(ns);
                    self.wf.faults.count(spec);
                    continue;
                }
                InjectKind::BitFlipRead => Fault::FlipRead {
                    spec,
                    byte: s.rng.below(op.len as u64) as u32,
                    bit: s.rng.below(8) as u8,
                },
                InjectKind::BitFlipWrite => {
                    let byte = s.rng.below(op.len as u64) as u32;
                    let bit = s.rng.below(8) as u8;
                    if fault == Fault::None {
                        self.inner.buffer_mut(op.buf)[byte as usize] ^= 1 << bit;
                    }
                    Fault::FlipWrite { spec, byte, bit }
                }
                InjectKind::LostWrite => Fault::Lost { spec },
                InjectKind::MisdirectedWrite => {
                    let c = choice.expect("landing choices");
                    Fault::Misdirected { spec, to: c.pick(&mut s.rng) }
                }
                InjectKind::TornWrite => {
                    let c = choice.expect("tear choices");
                    let at = off_boundary(c.pick(&mut s.rng), op.offset + unit, b, unit);
                    Fault::Torn { spec, cut: (at - op.offset) as u32 }
                }
                InjectKind::Eio => Fault::Eio,
                // Applies to no read or write of the target (`applies_to`): the block cache's.
                InjectKind::EarlyFlushAck => continue,
            };
            if fault == Fault::None {
                fault = f;
                if !matches!(f, Fault::FlipRead { .. }) {
                    self.wf.faults.count(spec);
                }
            }
        }
        (fault, delay)
    }

    fn hold(&mut self, due: u64, tag: u32) {
        self.seq += 1;
        self.held.push(Reverse((due, self.seq, tag)));
    }

    /// Returns held completions due by `now` to `out`; returns the next due time.
    fn release(&mut self, now: u64, out: &mut Vec<Completion>) -> Option<u64> {
        while let Some(&Reverse((t, _, tag))) = self.held.peek() {
            if t > now {
                return Some(t);
            }
            self.held.pop();
            self.complete(tag, out);
        }
        None
    }

    fn complete(&mut self, tag: u32, out: &mut Vec<Completion>) {
        let e = self.entries.remove(tag);
        if let Fault::FlipRead { spec, byte, .. } = e.fault {
            self.flip_reads.retain(|&t| t != tag);
            if e.flipped && !e.tainted {
                let block = (e.op.offset + byte as u64) / self.block * self.block;
                *self.reads.entry((spec, self.target_id(&e.op), block)).or_insert(0) += 1;
            }
        }
        out.push(Completion {
            user_data: e.op.user_data,
            result: e.result,
            cached: false,
            done_ns: 0,
            start_ns: 0,
        });
    }

    /// Handles the inner engine's completions at `now`: applies read flips, books the writes' damage and
    /// repairs, and returns each completion now or holds it for its spike.
    fn take_reaped(&mut self, now: u64, out: &mut Vec<Completion>) {
        let mut reaped = std::mem::take(&mut self.reaped);
        for c in reaped.drain(..) {
            self.in_inner -= 1;
            let tag = c.user_data as u32;
            let mut e = *self.entries.get(tag);
            let (op, len) = (e.op, e.op.len as u64);
            let t = self.target_id(&op);
            let faults = &self.wf.faults;
            e.result = c.result;
            match e.fault {
                Fault::FlipRead { spec, byte, bit }
                    if c.result > byte as i32
                        && self.wf.verifier.as_ref().is_none_or(|v| {
                            v.exact(t, (op.offset + byte as u64) / self.block * self.block)
                        }) =>
                {
                    self.inner.buffer_mut(op.buf)[byte as usize] ^= 1 << bit;
                    e.flipped = true;
                    faults.count(spec);
                }
                Fault::FlipWrite { byte, bit, .. } if c.result < 0 => {
                    // Nothing stored: undo the flip, since the worker resubmits the same buffer on EAGAIN.
                    self.inner.buffer_mut(op.buf)[byte as usize] ^= 1 << bit;
                }
                Fault::FlipWrite { spec, byte, .. } if c.result == op.len as i32 => {
                    let at = op.offset + byte as u64;
                    book(&self.wf, self.block, t, Some((op.offset, op.offset + len)), &[(at, at + 1)], spec);
                }
                Fault::Misdirected { spec, to } if c.result == op.len as i32 => {
                    // The intended place keeps its old data: damage where verification knows exactly what the
                    // block must hold (see `book`). Where it landed counts as damage only in blocks this run
                    // has written: verification judges (and reads back) those, while a block the run never
                    // wrote is not its to judge (`iolab verify` reads every block). Both are one injection; a
                    // mismatch in a block not counted is still explained, never a false alarm.
                    let v = self.wf.verifier.as_ref();
                    let (mut dirty, mut unjudged) =
                        split(&[(op.offset, op.offset + len)], self.block, |at| {
                            v.is_none_or(|v| v.judges_write(t, at))
                        });
                    let (landed, off) =
                        split(&[(to, to + len)], self.block, |at| faults_verifier_written(&self.wf, t, at));
                    dirty.extend(landed);
                    unjudged.extend(off);
                    faults.record(t, Some((to, to + len)), &dirty, spec);
                    faults.explain(t, &unjudged);
                }
                Fault::Torn { spec, cut } if c.result == cut as i32 => {
                    let tear = (op.offset + cut as u64) / self.block * self.block;
                    let clean = Some((op.offset, op.offset + cut as u64));
                    book(&self.wf, self.block, t, clean, &[(tear, op.offset + len)], spec);
                    e.result = op.len as i32; // acknowledged in full
                }
                Fault::Misdirected { to, .. } if c.result > 0 => {
                    faults.record(t, Some((to, to + c.result as u64)), &[], 0);
                }
                Fault::None | Fault::FlipWrite { .. } | Fault::Torn { .. }
                    if op.kind == OpKind::Write && c.result > 0 =>
                {
                    faults.record(t, Some((op.offset, op.offset + c.result as u64)), &[], 0);
                }
                _ => {}
            }
            *self.entries.get_mut(tag) = e;
            if e.delay_ns == 0 {
                self.complete(tag, out);
            } else {
                self.hold(now.saturating_add(e.delay_ns), tag);
            }
        }
        self.reaped = reaped;
    }

    /// bit-flip-read bookkeeping at push: the verifier cannot check a read that overlapped a write in flight,
    /// so such a flip is not counted as live.
    fn track_overlap(&mut self, tag: u32, op: &Op, fault: Fault) {
        let b = self.block;
        let overlaps = |w: &Op, r: &Op, byte: u32| {
            let blk = (r.offset + byte as u64) / b * b;
            w.kind == OpKind::Write
                && w.target == r.target
                && w.offset < blk + b
                && blk < w.offset + w.len as u64
        };
        if op.kind == OpKind::Write {
            for &r in &self.flip_reads {
                let re = self.entries.get_mut(r);
                if let Fault::FlipRead { byte, .. } = re.fault {
                    if overlaps(op, &re.op, byte) {
                        re.tainted = true;
                    }
                }
            }
        } else if let Fault::FlipRead { byte, .. } = fault {
            let tainted = self.entries.values().any(|w| overlaps(&w.op, op, byte));
            self.entries.get_mut(tag).tainted = tainted;
            self.flip_reads.push(tag);
        }
    }
}

/// Block-aligned offsets in `[lo, hi]` (step `b`), skipping the run `[skip_lo, skip_hi]` (empty when
/// skip_lo > skip_hi): the choices of a misdirected write's landing place or of a torn write's cut.
#[derive(Clone, Copy, Debug)]
struct Choices {
    lo: u64,
    step: u64,
    count: u64,
    skip_lo: u64,
    skip_count: u64,
}

impl Choices {
    fn pick(&self, rng: &mut Rng) -> u64 {
        let k = rng.below(self.count);
        let at = self.lo + k * self.step;
        if self.skip_count > 0 && at >= self.skip_lo {
            at + self.skip_count * self.step
        } else {
            at
        }
    }
}

/// Where a misdirected write of `op` may land: a `b`-aligned offset inside the worker's region `(offset,
/// length)` whose whole range stays in the region and does not overlap the op's own range. None when the region
/// has no such place.
fn landing_choices(op: &Op, (r_off, r_len): (u64, u64), b: u64) -> Option<Choices> {
    let len = op.len as u64;
    let lo = r_off.div_ceil(b) * b;
    let hi = (r_off + r_len).checked_sub(len)? / b * b;
    if hi < lo {
        return None;
    }
    let n = (hi - lo) / b + 1;
    // Landing at d overlaps the op when op.offset - len < d < op.offset + len.
    let ex_lo = ((op.offset + 1).saturating_sub(len)).div_ceil(b) * b;
    let ex_lo = ex_lo.max(lo);
    let ex_hi = ((op.offset + len - 1) / b * b).min(hi);
    let n_ex = if ex_lo <= ex_hi { (ex_hi - ex_lo) / b + 1 } else { 0 };
    let count = n - n_ex;
    (count > 0).then_some(Choices { lo, step: b, count, skip_lo: ex_lo, skip_count: n_ex })
}

/// Where a torn write of `op` may be cut (as absolute offsets): multiples of the write unit `u` strictly inside
/// the op. When `u` is smaller than the verification block `b`, only cuts that are not `b` boundaries, so one
/// block ends up with two generations; when `u >= b` every cut is a block boundary (the blocks after it keep
/// their old data). None when there is none (an op of one unit, or one not made of whole units).
fn tear_choices(op: &Op, b: u64, u: u64) -> Option<Choices> {
    let len = op.len as u64;
    if op.offset % u != 0 || len % u != 0 || len < 2 * u {
        return None;
    }
    let (first, last) = (op.offset + u, op.offset + len - u);
    let n = (last - first) / u + 1;
    if u >= b {
        return Some(Choices { lo: first, step: u, count: n, skip_lo: 0, skip_count: 0 });
    }
    // Block boundaries among the cuts, every b / u: with u < b there are gaps between them.
    let boundaries = last / b - (first - 1) / b;
    if boundaries >= n {
        return None;
    }
    if boundaries == 0 {
        return Some(Choices { lo: first, step: u, count: n, skip_lo: 0, skip_count: 0 });
    }
    if boundaries == 1 {
        let skip = first.div_ceil(b) * b;
        return Some(Choices { lo: first, step: u, count: n - 1, skip_lo: skip, skip_count: 1 });
    }
    // Several boundaries: choose a block part first (uniform over the valid cuts would need a walk; a cut in a
    // uniformly chosen unit that is then moved off a boundary is close enough and O(1)).
    Some(Choices { lo: first, step: u, count: n, skip_lo: u64::MAX, skip_count: 0 })
}

/// A cut from `c` moved off a block boundary (one unit back, or forward at the op's first unit) when the unit
/// `u` is smaller than the block `b`; with `u >= b` every cut is a block boundary and stays.
fn off_boundary(cut: u64, first: u64, b: u64, u: u64) -> u64 {
    if u >= b || cut % b != 0 {
        cut
    } else if cut > first {
        cut - u
    } else {
        cut + u
    }
}

super::holding_by_release!(FaultEngine);

/// How long an op that never reaches the target (an injected EIO or lost write) takes to complete: a device
/// answers an error in tens of microseconds, not in none, and on virtual time a run whose every op failed at
/// once would never move its clock, so a timed run would never end.
const UNSERVED_OP_NS: u64 = 10_000;

impl<E: Engine> Engine for FaultEngine<E> {
    super::delegate_to_inner!();
    fn features(&self) -> Vec<String> {
        let mut f = self.inner.features();
        f.push("fault_injection".into());
        f
    }
    unsafe fn push(&mut self, op: Op) {
        let (fault, delay_ns) = self.decide(&op);
        let tag =
            self.entries.insert(Entry { op, fault, delay_ns, result: 0, flipped: false, tainted: false });
        self.track_overlap(tag, &op, fault);
        let now = self.inner.now_ns();
        let tagged = Op { user_data: tag as u64, ..op };
        match fault {
            Fault::Eio => {
                self.entries.get_mut(tag).result = -libc::EIO;
                self.hold(now.saturating_add(delay_ns.max(UNSERVED_OP_NS)), tag);
                return;
            }
            Fault::Lost { spec } => {
                let t = self.target_id(&op);
                book(&self.wf, self.block, t, None, &[(op.offset, op.offset + op.len as u64)], spec);
                self.entries.get_mut(tag).result = op.len as i32;
                self.hold(now.saturating_add(delay_ns.max(UNSERVED_OP_NS)), tag);
                return;
            }
            // SAFETY: the worker's op from `push`, moved to another offset on its own buffer: the caller's
            // promise for the buffer holds until the completion.
            Fault::Misdirected { to, .. } => unsafe { self.inner.push(Op { offset: to, ..tagged }) },
            // SAFETY: the worker's op from `push`, a prefix of its own buffer: the promise holds.
            Fault::Torn { cut, .. } => unsafe { self.inner.push(Op { len: cut, ..tagged }) },
            // SAFETY: the worker's op from `push`, unchanged: the promise holds.
            _ => unsafe { self.inner.push(tagged) },
        }
        self.in_inner += 1;
    }
    super::reap_by_holding!();
    fn submit(&mut self) -> Result<(), EngineError> {
        self.inner.submit()
    }
    fn finish(&mut self) -> Result<(), EngineError> {
        self.inner.finish()
    }
}

impl<E: Engine> Drop for FaultEngine<E> {
    /// Merges this worker's live bit-flip-reads into the run's ledger, once, after everything it did (a
    /// verifier's read-back included, which runs after `finish`).
    fn drop(&mut self) {
        if self.reads.is_empty() {
            return;
        }
        if let Some(l) = &self.wf.faults.ledger {
            let mut l = lock(l);
            for (k, n) in self.reads.drain() {
                *l.reads.entry(k).or_insert(0) += n;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::WriteSync;

    fn op(offset: u64, len: u32) -> Op {
        Op { user_data: 0, kind: OpKind::Write, sync: WriteSync::None, target: 0, offset, len, buf: 0 }
    }

    #[test]
    fn landing_never_overlaps_and_stays_in_region() {
        let mut rng = Rng::new(7);
        for (o, len, region) in
            [(8192u64, 8192u32, (0u64, 65536u64)), (0, 4096, (0, 8192)), (4096, 4096, (0, 12288))]
        {
            let c = landing_choices(&op(o, len), region, 4096).expect("room");
            for _ in 0..1000 {
                let d = c.pick(&mut rng);
                assert_eq!(d % 4096, 0);
                assert!(d >= region.0 && d + len as u64 <= region.0 + region.1, "{d} outside {region:?}");
                assert!(d + len as u64 <= o || d >= o + len as u64, "{d} overlaps {o}+{len}");
            }
        }
        assert!(landing_choices(&op(0, 8192), (0, 8192), 4096).is_none(), "no room");
        assert!(landing_choices(&op(0, 8192), (0, 12288), 4096).is_none(), "only overlapping places");
        assert_eq!(landing_choices(&op(0, 4096), (0, 16384), 4096).map(|c| c.count), Some(3));
    }

    #[test]
    fn tear_is_on_a_sector_but_not_on_a_block_boundary() {
        let mut rng = Rng::new(9);
        for (o, len, b) in [(0u64, 16384u32, 4096u64), (4096, 8192, 4096), (512, 1024, 4096), (0, 4096, 4096)]
        {
            let c = tear_choices(&op(o, len), b, SECTOR).expect("a cut");
            for _ in 0..1000 {
                let at = off_boundary(c.pick(&mut rng), o + SECTOR, b, SECTOR);
                assert_eq!(at % SECTOR, 0);
                assert_ne!(at % b, 0, "cut {at} on a block boundary");
                assert!(at > o && at < o + len as u64, "cut {at} outside {o}+{len}");
            }
        }
        assert!(tear_choices(&op(0, 512), 4096, SECTOR).is_none(), "one sector");
        assert!(tear_choices(&op(3584, 1024), 4096, SECTOR).is_none(), "the only cut is a block boundary");
    }

    #[test]
    fn tear_with_a_unit_as_large_as_the_block_is_on_a_block_boundary() {
        let mut rng = Rng::new(9);
        // A 4 KiB-native device (unit 4096) under 4 KiB verification blocks, and 512-byte blocks on 512 units.
        for (o, len, b, u) in
            [(0u64, 16384u32, 4096u64, 4096u64), (8192, 8192, 4096, 4096), (0, 8192, 512, 512)]
        {
            let c = tear_choices(&op(o, len), b, u).expect("a cut");
            let mut seen = std::collections::BTreeSet::new();
            for _ in 0..1000 {
                let at = off_boundary(c.pick(&mut rng), o + u, b, u);
                assert_eq!(at % u, 0, "cut {at} is a whole number of units");
                assert!(at > o && at < o + len as u64, "cut {at} outside {o}+{len}");
                seen.insert(at);
            }
            assert_eq!(seen.len() as u64, len as u64 / u - 1, "every inner unit boundary is a possible cut");
        }
        assert!(tear_choices(&op(0, 4096), 4096, 4096).is_none(), "one unit: nothing to cut");
        assert!(tear_choices(&op(512, 8192), 4096, 4096).is_none(), "not aligned to the unit");
        // A 16 KiB unit on an 8 KiB op: the device cannot take a shorter write.
        assert!(tear_choices(&op(0, 8192), 4096, 16384).is_none(), "op smaller than two units");
    }
}
