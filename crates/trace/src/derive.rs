//! A trace turned into a job file (`iolab profiles derive TRACE`): workers whose I/O has the trace's shape,
//! and the shape's properties ([`Shape`]), which the fidelity check compares ([`crate::fidelity`]).
//!
//! One pass over the records, in bounded memory whatever the trace's length, gathers per target:
//!
//! - the **classes** of its ops: reads and writes, each sequential or random, and discards, each with its
//!   size mix (the most frequent sizes, at most [`MAX_SIZES`], the rest folded into the nearest kept size).
//!   An op is sequential when it starts where one of the last [`STREAM_ENDS`] ops of the same worker in the
//!   same direction on the same target ended (fio's count, tolerant of ops that completed out of order);
//! - the **footprint**: the span from the lowest offset reached to the highest end;
//! - **where** the random reads, the random writes and the discards went, each kind apart: a histogram over
//!   the offsets (its buckets doubled in width as the range grows, so it has at most [`BUCKETS`]), read as
//!   [`ZONES`] equal positional zones of the footprint;
//! - **durability**: flushes per write (`fdatasync = N`: a block trace cannot tell fsync from fdatasync);
//! - **load**: the ops' rate over the trace's span; their **burstiness**, the squared coefficient of
//!   variation (CV²) of the gaps between their starts (1 for Poisson arrivals, 0 for evenly spaced ones);
//!   and, when the trace has completion times, the mean number in flight (Little's law), which sizes the
//!   queue depth; with [`Loop::Closed`], that depth and no rate.
//!
//! Records are taken in the order of their start (then submission; ops submitted at one instant in offset
//! order; then file order) through a window of [`REORDER`] records, so a trace written as ops completed (an
//! iolab run's) reads as it was issued.
//!
//! The job: each trace target is a named target (`[targets]`) whose `footprint` is the trace's, its offsets
//! shifted to start at 0, so the workers address that span on a larger target and scale it down on a smaller
//! one (`--target NAME=PATH`; without, a scratch file of the footprint's size). Per target, one worker does the
//! random ops (an access spec per class, each with its own zones) and one worker each direction's sequential
//! ops: a sequential stream needs a worker of its own, or the other ops of its direction would come between
//! two of its ops and end its run. Each worker has its classes' share of the rate, at Poisson instants in
//! bursts of (CV² + 1) / 2 ops, which have the trace's CV². What the job cannot say (the order of ops, the
//! exact offsets, correlations between classes) is why the fidelity check compares a run of it with the trace
//! (docs/TRACES.md).

use crate::{TraceOp, TraceRecord};
use iolab_doc::job_text::quote;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::fmt::Write as _;

/// Most block sizes kept per class.
pub const MAX_SIZES: usize = 10;
/// Buckets of an offset histogram.
pub const BUCKETS: usize = 1024;
/// Positional zones of the footprint a zone map has.
pub const ZONES: usize = 10;
/// The longest duration a derived job asks for: a run of the trace's shape, not of its length.
pub const MAX_DURATION_S: u64 = 60;
/// Recent op ends kept per worker and direction: an op starting at one of them is sequential.
pub const STREAM_ENDS: usize = 32;
/// Records held to take them in the order of their start.
pub const REORDER: usize = 1 << 16;
/// Distinct sizes counted exactly per class; beyond, sizes are rounded to a power of two.
const MAX_DISTINCT_SIZES: usize = 4096;
/// Workers tracked per target for sequentiality; beyond, the rest share one stream.
const MAX_STREAMS: usize = 4096;
/// The largest `weight` of an access spec.
const MAX_WEIGHT: u64 = 1_000_000;
/// The most ops arriving at one instant a job asks for.
const MAX_BURST: u32 = 1024;

/// How the derived workers load the target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Loop {
    /// At the trace's rate (open loop), the queue depth sized from the trace.
    Open,
    /// At the trace's mean depth, as fast as the storage allows (closed loop).
    Closed,
}

/// The kind of one class of ops.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Class {
    ReadRandom,
    ReadSeq,
    WriteRandom,
    WriteSeq,
    Discard,
}

impl Class {
    const ALL: [Class; 5] =
        [Class::ReadRandom, Class::ReadSeq, Class::WriteRandom, Class::WriteSeq, Class::Discard];

    fn name(self) -> &'static str {
        match self {
            Class::ReadRandom => "random reads",
            Class::ReadSeq => "sequential reads",
            Class::WriteRandom => "random writes",
            Class::WriteSeq => "sequential writes",
            Class::Discard => "discards",
        }
    }

    /// `rw` and `trim_pct` of the class's spec.
    fn keys(self) -> &'static str {
        match self {
            Class::ReadRandom => "rw = \"randread\"",
            Class::ReadSeq => "rw = \"read\"",
            Class::WriteRandom => "rw = \"randwrite\"",
            Class::WriteSeq => "rw = \"write\"",
            Class::Discard => "rw = \"randwrite\"\ntrim_pct = 100",
        }
    }

    fn random(self) -> bool {
        matches!(self, Class::ReadRandom | Class::WriteRandom | Class::Discard)
    }
}

/// The derived job's workers of one target: the random ops, and each sequential direction on its own.
const GROUPS: [(&str, &[Class]); 3] = [
    ("", &[Class::ReadRandom, Class::WriteRandom, Class::Discard]),
    ("_seq_reads", &[Class::ReadSeq]),
    ("_seq_writes", &[Class::WriteSeq]),
];

/// Offsets seen, in a histogram of [`BUCKETS`] buckets from `base`, whose width doubles as the range grows.
#[derive(Clone, Debug, Default)]
struct Spread {
    base: u64,
    width: u64,
    counts: Vec<u64>,
}

impl Spread {
    fn add(&mut self, offset: u64) {
        if self.counts.is_empty() {
            self.width = 1 << 20;
            self.base = offset - offset % self.width;
            self.counts = vec![0; BUCKETS];
        }
        while offset < self.base || (offset - self.base) / self.width >= BUCKETS as u64 {
            if offset >= self.base || !self.lower_to(offset) {
                self.widen();
            }
        }
        self.counts[((offset - self.base) / self.width) as usize] += 1;
    }

    /// Moves the base down to `offset`'s bucket when the counts still fit; whether it did.
    fn lower_to(&mut self, offset: u64) -> bool {
        let base = offset - offset % self.width;
        let shift = ((self.base - base) / self.width) as usize;
        let top = self.counts.iter().rposition(|&c| c > 0).unwrap_or(0);
        if top + shift >= BUCKETS {
            return false;
        }
        self.counts.rotate_right(shift);
        self.base = base;
        true
    }

    /// Doubles the buckets' width, the base aligned to it.
    fn widen(&mut self) {
        let width = self.width * 2;
        let base = self.base - self.base % width;
        let mut counts = vec![0; BUCKETS];
        for (j, &c) in self.counts.iter().enumerate() {
            counts[((self.base + j as u64 * self.width - base) / width) as usize] += c;
        }
        (self.base, self.width, self.counts) = (base, width, counts);
    }

    /// The shares of the offsets in [`ZONES`] equal zones of `lo..hi` (each bucket counted in the zone of
    /// its middle); all zero when there are none.
    fn zones(&self, lo: u64, hi: u64) -> [f64; ZONES] {
        let mut z = [0.0; ZONES];
        let total: u64 = self.counts.iter().sum();
        if total == 0 || hi <= lo {
            return z;
        }
        for (j, &c) in self.counts.iter().enumerate().filter(|(_, &c)| c > 0) {
            let mid = self.base + j as u64 * self.width + self.width / 2;
            let at = (mid.saturating_sub(lo) as f64 / (hi - lo) as f64 * ZONES as f64) as usize;
            z[at.min(ZONES - 1)] += c as f64 / total as f64;
        }
        z
    }
}

/// The sizes of one class and their counts.
#[derive(Clone, Debug, Default)]
struct Sizes {
    counts: HashMap<u32, u64>,
}

impl Sizes {
    fn add(&mut self, len: u32) {
        let full = self.counts.len() >= MAX_DISTINCT_SIZES && !self.counts.contains_key(&len);
        let len = if full { len.checked_next_power_of_two().unwrap_or(1 << 31) } else { len };
        *self.counts.entry(len).or_default() += 1;
    }

    fn merge(&mut self, other: &Sizes) {
        for (&s, &c) in &other.counts {
            *self.counts.entry(s).or_default() += c;
        }
    }

    /// The most frequent sizes (at most [`MAX_SIZES`]: the most frequent of each power-of-two class, then the
    /// most frequent of the rest; largest count first, then smaller size), each with
    /// its count plus those of the dropped sizes nearest to it (in the same power-of-two class where one is
    /// kept there, so the mix over those classes is the trace's).
    fn kept(&self) -> Vec<(u32, u64)> {
        let mut all: Vec<(u32, u64)> =
            self.counts.iter().map(|(&s, &c)| (s, c)).filter(|&(s, _)| s > 0).collect();
        all.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        // The most frequent size of each power-of-two class first, so each class keeps one.
        let class = |s: u32| s.checked_next_power_of_two().unwrap_or(0);
        let mut seen = std::collections::HashSet::new();
        let firsts: Vec<bool> = all.iter().map(|&(s, _)| seen.insert(class(s))).collect();
        let mut order: Vec<usize> = (0..all.len()).collect();
        order.sort_by_key(|&i| !firsts[i]);
        let all: Vec<(u32, u64)> = order.into_iter().map(|i| all[i]).collect();
        let (kept, dropped) = all.split_at(all.len().min(MAX_SIZES));
        let mut kept = kept.to_vec();
        for &(size, count) in dropped {
            let nearest = kept
                .iter_mut()
                .min_by_key(|(s, _)| (class(*s) != class(size), s.abs_diff(size)))
                .expect("kept is not empty");
            nearest.1 += count;
        }
        kept.sort_by_key(|&(s, _)| s);
        kept
    }
}

/// The gaps between the starts of ops, as count, sum and sum of squares (ns).
#[derive(Clone, Copy, Debug, Default)]
struct Gaps {
    last_ns: Option<u64>,
    n: u64,
    sum: f64,
    sum_sq: f64,
}

impl Gaps {
    fn add(&mut self, start_ns: u64) {
        if let Some(last) = self.last_ns {
            let g = start_ns.saturating_sub(last) as f64;
            self.n += 1;
            self.sum += g;
            self.sum_sq += g * g;
        }
        self.last_ns = Some(self.last_ns.map_or(start_ns, |l| l.max(start_ns)));
    }

    /// The squared coefficient of variation of the gaps; `None` with fewer than two gaps or no time between.
    fn cv2(&self) -> Option<f64> {
        let mean = self.sum / self.n as f64;
        (self.n >= 2 && mean > 0.0)
            .then(|| (self.sum_sq / self.n as f64 - mean * mean).max(0.0) / (mean * mean))
    }
}

/// What one target's ops were.
#[derive(Clone, Debug, Default)]
struct TargetShape {
    ops: HashMap<Class, u64>,
    sizes: HashMap<Class, Sizes>,
    spreads: HashMap<Class, Spread>,
    flushes: u64,
    lo: Option<u64>,
    hi: u64,
    /// Per worker and direction (reads, writes and discards apart, as fio counts): where its recent ops ended.
    streams: HashMap<(u16, TraceOp), Vec<u64>>,
    gaps: Gaps,
    /// Sum of the ops' times in flight, ns, and how many had a completion time.
    in_flight_ns: u128,
    timed: u64,
}

impl TargetShape {
    fn add(&mut self, r: &TraceRecord) {
        if r.op == TraceOp::Flush {
            self.flushes += 1;
            return;
        }
        if !matches!(r.op, TraceOp::Read | TraceOp::Write | TraceOp::Discard) {
            return;
        }
        let class = match (r.op, self.sequential(r)) {
            (TraceOp::Read, false) => Class::ReadRandom,
            (TraceOp::Read, true) => Class::ReadSeq,
            (TraceOp::Write, false) => Class::WriteRandom,
            (TraceOp::Write, true) => Class::WriteSeq,
            _ => Class::Discard,
        };
        *self.ops.entry(class).or_default() += 1;
        self.sizes.entry(class).or_default().add(r.len);
        self.lo = Some(self.lo.map_or(r.offset, |lo| lo.min(r.offset)));
        self.hi = self.hi.max(r.offset.saturating_add(r.len as u64));
        if class.random() {
            self.spreads.entry(class).or_default().add(r.offset);
        }
        self.gaps.add(r.start_ns);
        if let Some(done) = r.complete_ns {
            self.in_flight_ns += done.saturating_sub(r.start_ns) as u128;
            self.timed += 1;
        }
    }

    /// Whether `r` starts where one of the recent ops of its worker and direction ended; notes its end.
    fn sequential(&mut self, r: &TraceRecord) -> bool {
        let worker = if self.streams.len() < MAX_STREAMS { r.worker } else { u16::MAX };
        let ends = self.streams.entry((worker, r.op)).or_default();
        let hit = ends.iter().position(|&e| e == r.offset);
        if let Some(i) = hit {
            ends.remove(i);
        } else if ends.len() >= STREAM_ENDS {
            ends.remove(0);
        }
        ends.push(r.offset.saturating_add(r.len as u64));
        hit.is_some()
    }

    fn count(&self, classes: &[Class]) -> u64 {
        classes.iter().map(|c| self.ops.get(c).copied().unwrap_or(0)).sum()
    }

    fn total(&self) -> u64 {
        self.count(&Class::ALL)
    }

    fn sizes_of(&self, classes: &[Class]) -> Sizes {
        let mut all = Sizes::default();
        for s in classes.iter().filter_map(|c| self.sizes.get(c)) {
            all.merge(s);
        }
        all
    }

    /// The footprint: (lowest offset rounded down to 1 MiB, length rounded up to 1 MiB).
    fn footprint(&self) -> (u64, u64) {
        let lo = self.lo.unwrap_or(0);
        let lo = lo - lo % (1 << 20);
        (lo, self.hi.saturating_sub(lo).max(1).next_multiple_of(1 << 20))
    }

    fn zones(&self, class: Class) -> [f64; ZONES] {
        let (lo, len) = self.footprint();
        self.spreads.get(&class).map_or([0.0; ZONES], |s| s.zones(lo, lo + len))
    }
}

/// A record waiting in the reorder window: ordered by start, then submission, then arrival.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Pending {
    key: (u64, u64, u64, u64),
    record: TraceRecordOrd,
}

/// A [`TraceRecord`] that orders as equal to any other (the key orders).
#[derive(Debug)]
struct TraceRecordOrd(TraceRecord);

impl PartialEq for TraceRecordOrd {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}
impl Eq for TraceRecordOrd {}
impl PartialOrd for TraceRecordOrd {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for TraceRecordOrd {
    fn cmp(&self, _: &Self) -> std::cmp::Ordering {
        std::cmp::Ordering::Equal
    }
}

/// A trace's shape, gathered record by record ([`Deriver::add`]) and written as a job file
/// ([`Deriver::job_toml`]) or read as properties ([`Deriver::shape`]) once [`Deriver::finish`]ed.
#[derive(Debug, Default)]
pub struct Deriver {
    targets: Vec<TargetShape>,
    window: BinaryHeap<Reverse<Pending>>,
    first_ns: Option<u64>,
    last_ns: u64,
    records: u64,
}

impl Deriver {
    /// Nothing seen yet.
    pub fn new() -> Deriver {
        Deriver::default()
    }

    /// Takes one record into the shape.
    pub fn add(&mut self, r: &TraceRecord) {
        // Ops submitted together are listed as they completed: taken in offset order, as they were issued.
        let key = match r.submit_ns {
            Some(submit) => (r.start_ns, submit, r.offset, self.records),
            None => (r.start_ns, r.start_ns, 0, self.records),
        };
        self.window.push(Reverse(Pending { key, record: TraceRecordOrd(*r) }));
        self.records += 1;
        if self.window.len() > REORDER {
            self.take_next();
        }
    }

    /// Takes every record still in the reorder window: call once all are added.
    pub fn finish(&mut self) {
        while self.take_next() {}
    }

    fn take_next(&mut self) -> bool {
        let Some(Reverse(p)) = self.window.pop() else { return false };
        let r = p.record.0;
        let t = r.target as usize;
        if self.targets.len() <= t {
            self.targets.resize_with(t + 1, TargetShape::default);
        }
        self.targets[t].add(&r);
        self.first_ns = Some(self.first_ns.map_or(r.start_ns, |f| f.min(r.start_ns)));
        self.last_ns = self.last_ns.max(r.start_ns);
        true
    }

    /// The trace's span, seconds (first to last start); `None` with fewer than two distinct times.
    pub fn span_s(&self) -> Option<f64> {
        let span = self.last_ns.saturating_sub(self.first_ns?);
        (span > 0).then_some(span as f64 / 1e9)
    }

    /// The properties of target `target`'s ops ([`Shape`]); `None` when it has no reads, writes or discards.
    pub fn shape(&self, target: usize) -> Option<Shape> {
        debug_assert!(self.window.is_empty(), "finish() before reading the shape");
        let t = self.targets.get(target).filter(|t| t.total() > 0)?;
        let reads = [Class::ReadRandom, Class::ReadSeq];
        let writes = [Class::WriteRandom, Class::WriteSeq];
        Some(Shape {
            reads: t.count(&reads),
            writes: t.count(&writes),
            flushes: t.flushes,
            trims: t.count(&[Class::Discard]),
            seq_reads: t.count(&[Class::ReadSeq]),
            seq_writes: t.count(&[Class::WriteSeq]),
            footprint_bytes: t.footprint().1,
            read_zones: t.zones(Class::ReadRandom),
            write_zones: t.zones(Class::WriteRandom),
            read_sizes: t.sizes_of(&reads).counts.into_iter().collect(),
            write_sizes: t.sizes_of(&writes).counts.into_iter().collect(),
            span_s: self.span_s(),
            gaps_cv2: t.gaps.cv2(),
        })
    }

    /// The job file of the shape: `name` its name, `source` what it was derived from (said in its comments),
    /// `names` the trace's target names, `load` how its workers load the storage.
    pub fn job_toml(&self, name: &str, source: &str, names: &[String], load: Loop) -> Result<String, String> {
        debug_assert!(self.window.is_empty(), "finish() before writing the job");
        let targets: Vec<(usize, &TargetShape)> =
            self.targets.iter().enumerate().filter(|(_, t)| t.total() > 0).collect();
        if targets.is_empty() {
            return Err(format!("'{source}' has no reads, writes or discards to derive a job from"));
        }
        let span_s = self.span_s();
        if load == Loop::Open && span_s.is_none() {
            return Err(format!(
                "'{source}' has no span of time (every record starts at one instant), so it has no rate; derive a closed-loop job (--closed)"
            ));
        }
        let labels = target_labels(names, &targets);
        let mut out = header(name, source, self.records, span_s);
        out.push_str("\n[targets]\n");
        for ((_, t), label) in targets.iter().zip(&labels) {
            let (lo, len) = t.footprint();
            let _ = writeln!(
                out,
                "{label} = {{ footprint = \"{}\" }}  # the span the trace addressed: {} to {}",
                size_text(len),
                size_text(lo),
                size_text(lo + len)
            );
        }
        for ((_, t), label) in targets.iter().zip(&labels) {
            out.push('\n');
            out.push_str(&target_workers(label, t, span_s, load));
        }
        Ok(out)
    }
}

/// The properties of one target's ops that a derived job claims to keep, as [`crate::fidelity`] compares them.
#[derive(Clone, Debug, PartialEq)]
pub struct Shape {
    /// Reads.
    pub reads: u64,
    /// Writes.
    pub writes: u64,
    /// Flushes.
    pub flushes: u64,
    /// Discards (trims).
    pub trims: u64,
    /// Reads that were sequential.
    pub seq_reads: u64,
    /// Writes that were sequential.
    pub seq_writes: u64,
    /// The span addressed, lowest offset (rounded down to 1 MiB) to highest end, rounded up to 1 MiB.
    pub footprint_bytes: u64,
    /// The random reads' shares in [`ZONES`] equal zones of the footprint.
    pub read_zones: [f64; ZONES],
    /// The random writes' shares in the zones.
    pub write_zones: [f64; ZONES],
    /// Read sizes and their counts.
    pub read_sizes: Vec<(u32, u64)>,
    /// Write sizes and their counts.
    pub write_sizes: Vec<(u32, u64)>,
    /// The trace's span, seconds.
    pub span_s: Option<f64>,
    /// The squared coefficient of variation of the gaps between the ops' starts.
    pub gaps_cv2: Option<f64>,
}

/// The ops arriving at one instant that give Poisson instants a gaps' CV² of `cv2` (`2n - 1 = cv2`).
pub fn burst_of(cv2: f64) -> u32 {
    ((cv2 + 1.0) / 2.0).round().clamp(1.0, MAX_BURST as f64) as u32
}

/// The job's opening comments and run keys.
fn header(name: &str, source: &str, records: u64, span_s: Option<f64>) -> String {
    let span = span_s.map_or("no span of time".to_string(), |s| format!("{s:.3} s"));
    let mut out = String::new();
    let _ = writeln!(out, "# Derived by `iolab profiles derive` from {source} ({records} records, {span}).");
    out.push_str(
        "# Kept: the read/write/flush/trim mix, each direction's sequential share (a worker per sequential\n\
         # stream), each class's sizes, where the random reads and writes went (zones of the footprint, each\n\
         # apart), the footprint, the rate and the burstiness of the arrivals. Not kept: the order of the ops and\n\
         # their exact offsets. `iolab profiles derive TRACE --check TARGET` compares each property of a run of\n\
         # this job with the trace's (docs/TRACES.md, \"From a trace to a profile\").\n",
    );
    let _ = writeln!(out, "name = {}", quote(name));
    match span_s {
        Some(s) if s > MAX_DURATION_S as f64 => {
            let _ = writeln!(
                out,
                "duration = \"{MAX_DURATION_S}s\"  # the trace spans {s:.0} s; the shape needs no more"
            );
        }
        Some(s) => {
            let _ = writeln!(out, "duration = \"{}s\"", (s.ceil() as u64).max(1));
        }
        None => {}
    }
    out
}

/// Each target's name in the job: the trace's name made a valid target name, unique.
fn target_labels(names: &[String], targets: &[(usize, &TargetShape)]) -> Vec<String> {
    let mut labels: Vec<String> = Vec::new();
    for &(i, _) in targets {
        let raw = names.get(i).map_or(String::new(), |n| n.rsplit('/').next().unwrap_or(n).to_string());
        let mut label: String = raw
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '_' })
            .collect();
        if !label.starts_with(|c: char| c.is_ascii_lowercase()) {
            label = format!("t{i}_{label}");
        }
        label.truncate(32);
        let base = label.trim_end_matches('_').to_string();
        let mut label = base.clone();
        let mut n = 2;
        while labels.contains(&label) {
            label = format!("{base}_{n}");
            n += 1;
        }
        labels.push(label);
    }
    labels
}

/// One target's workers: its summary line, then a `[worker.NAME]` table per group with ops.
fn target_workers(label: &str, t: &TargetShape, span_s: Option<f64>, load: Loop) -> String {
    let total = t.total();
    let mut out = String::new();
    let share = |c: Class| t.count(&[c]) as f64 / total as f64 * 100.0;
    let _ = write!(out, "# {label}: {total} ops");
    for c in Class::ALL.into_iter().filter(|&c| t.ops.contains_key(&c)) {
        let _ = write!(out, ", {} {:.1}%", c.name(), share(c));
    }
    let _ = writeln!(out, "; {} flushes", t.flushes);
    let mut first = true;
    for (suffix, classes) in GROUPS.iter().filter(|(_, classes)| t.count(classes) > 0) {
        if !first {
            out.push('\n');
        }
        first = false;
        out.push_str(&worker_table(label, suffix, classes, t, span_s, load));
    }
    out
}

/// The `[worker.LABEL{suffix}]` table of `classes` and their access specs.
fn worker_table(
    label: &str,
    suffix: &str,
    classes: &[Class],
    t: &TargetShape,
    span_s: Option<f64>,
    load: Loop,
) -> String {
    let mut out = String::new();
    let ops = t.count(classes);
    let depth = (t.timed > 0).then_some(()).and(span_s).map(|s| t.in_flight_ns as f64 / 1e9 / s);
    let _ = writeln!(out, "[worker.{label}{suffix}]");
    let _ = writeln!(out, "target = \"@{label}\"");
    match (load, span_s) {
        (Loop::Open, Some(s)) => {
            let burst = t.gaps.cv2().map_or(1, burst_of);
            let qd = depth.map_or(32, |d| (d * 4.0).ceil().clamp(8.0, 1024.0) as u32).max(2 * burst);
            let arrival = match t.gaps.cv2() {
                Some(cv2) if cv2 < 0.5 => "fixed",
                _ => "poisson",
            };
            let _ =
                writeln!(out, "rate = \"{}\"\narrival = \"{arrival}\"\nqd = {qd}", fmt_num(ops as f64 / s));
            if burst > 1 {
                let cv2 = t.gaps.cv2().unwrap_or(1.0);
                let _ =
                    writeln!(out, "burst = {burst}  # the trace's gaps between ops have a CV² of {cv2:.2}");
            }
            if let Some(d) = depth {
                let _ =
                    writeln!(out, "# the trace had {d:.2} ops in flight on average; qd bounds the backlog");
            }
        }
        _ => {
            let share = ops as f64 / t.total() as f64;
            let qd = depth.map_or(1, |d| (d * share).round().clamp(1.0, 1024.0) as u32);
            let _ = writeln!(out, "qd = {qd}");
        }
    }
    let writes = t.count(&[Class::WriteRandom, Class::WriteSeq]);
    let writer =
        classes.iter().any(|c| matches!(c, Class::WriteRandom | Class::WriteSeq) && t.ops.contains_key(c));
    if t.flushes > 0 && writer {
        let every = (writes as f64 / t.flushes as f64).round().clamp(1.0, 1e6) as u64;
        let _ = writeln!(out, "fdatasync = {every}  # the trace: {writes} writes, {} flushes", t.flushes);
    }
    for &c in classes.iter().filter(|c| t.ops.contains_key(c)) {
        let _ = writeln!(out, "\n[[worker.{label}{suffix}.spec]]  # {}", c.name());
        let _ = writeln!(out, "{}", c.keys());
        let _ = writeln!(out, "bs = \"{}\"", bs_text(&t.sizes[&c]));
        let _ = writeln!(out, "weight = {}", weight(t.ops[&c], ops));
        if let Some(d) = c.random().then(|| zones_text(&t.zones(c))).flatten() {
            let _ = writeln!(out, "dist = \"{d}\"");
        }
    }
    out
}

/// A class's count of ops as a spec's `weight` among `ops` in all: the count, scaled to at most [`MAX_WEIGHT`].
fn weight(count: u64, ops: u64) -> u64 {
    if ops <= MAX_WEIGHT {
        return count;
    }
    ((count as f64 * MAX_WEIGHT as f64 / ops as f64).round() as u64).max(1)
}

/// A zone map as a `dist`, or `None` when every zone is within 25 % of an even share.
fn zones_text(zones: &[f64; ZONES]) -> Option<String> {
    let even = 1.0 / ZONES as f64;
    if zones.iter().all(|&z| (z - even).abs() <= 0.25 * even) {
        return None;
    }
    // Thousandths of a percent, summing to exactly 100 (the largest absorbs the rounding).
    let mut io: Vec<i64> = zones.iter().map(|z| (z * 100_000.0).round() as i64).collect();
    let largest = (0..ZONES).max_by_key(|&i| io[i]).unwrap_or(0);
    io[largest] += 100_000 - io.iter().sum::<i64>();
    let space = 100_000 / ZONES as i64;
    let pct = |t: i64| format!("{}.{:03}", t / 1000, t % 1000);
    let pairs: Vec<String> = io.iter().map(|&i| format!("{}/{}", pct(i), pct(space))).collect();
    Some(format!("zones:{}", pairs.join(":")))
}

/// A class's sizes as a `bs` value: `8k` or `4k/60:8k/40` (weights in ops).
fn bs_text(sizes: &Sizes) -> String {
    let kept = sizes.kept();
    if kept.len() == 1 {
        return size_text(kept[0].0 as u64);
    }
    kept.iter().map(|&(s, c)| format!("{}/{c}", size_text(s as u64))).collect::<Vec<_>>().join(":")
}

/// A byte count as iolab reads it: the largest exact binary unit.
pub fn size_text(bytes: u64) -> String {
    for (unit, shift) in [("g", 30), ("m", 20), ("k", 10)] {
        if bytes >= 1 << shift && bytes % (1 << shift) == 0 {
            return format!("{}{unit}", bytes >> shift);
        }
    }
    bytes.to_string()
}

/// A rate with enough digits to keep it.
fn fmt_num(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.3}")
    }
}

#[cfg(test)]
mod tests;
