//! A trace turned into a job file (`iolab profiles derive TRACE`): workers whose I/O has the trace's shape.
//!
//! One pass over the records, in bounded memory whatever the trace's length, gathers per target:
//!
//! - the **classes** of its ops: reads and writes, each sequential or random (an op is sequential when it
//!   starts where the previous op of the same worker in the same direction on the same target ended, as fio
//!   counts it), and
//!   discards; each class becomes an access spec weighted by its share of the ops, with its own size mix
//!   (the most frequent sizes, at most [`MAX_SIZES`], the rest folded into the nearest kept size);
//! - **where** the random ops went: a histogram over the target's offsets (its buckets doubled in width as the
//!   largest offset grows, so it has at most [`BUCKETS`]), written as positional hot zones (`dist =
//!   "zones:IO/SPACE:..."`, the zones of fio's `zoned` distribution) when the accesses are skewed, uniform
//!   otherwise;
//! - **durability**: flushes per write (`fdatasync = N`: a block trace cannot tell fsync from fdatasync);
//! - **load**: the ops' rate over the trace's span (open loop, Poisson arrivals), and, when the trace has
//!   completion times, the mean number in flight (Little's law), which sizes the queue depth; with
//!   [`Loop::Closed`], that depth and no rate.
//!
//! The job names each trace target as a named target (`[targets]`) sized to the largest offset reached, so
//! `--target NAME=PATH` puts it on storage and, without, it runs on a scratch file. What the job cannot say
//! (the order of ops, bursts, the exact offsets, correlations between classes) is why a fidelity check
//! compares a run of it with a replay of the trace (docs/TRACES.md).

use crate::{TraceOp, TraceRecord};
use iolab_doc::job_text::quote;
use std::collections::HashMap;
use std::fmt::Write as _;

/// Most block sizes kept per class.
pub const MAX_SIZES: usize = 6;
/// Buckets of the offset histogram.
pub const BUCKETS: usize = 1024;
/// The longest duration a derived job asks for: a run of the trace's shape, not of its length.
pub const MAX_DURATION_S: u64 = 60;
/// Zones written at most.
const MAX_ZONES: usize = 10;
/// Distinct sizes counted exactly per class; beyond, sizes are rounded to a power of two.
const MAX_DISTINCT_SIZES: usize = 4096;
/// Workers tracked per target for sequentiality; beyond, the rest share one stream.
const MAX_STREAMS: usize = 4096;

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
}

/// Offsets seen, in a histogram whose buckets double in width as the largest offset grows.
#[derive(Clone, Debug)]
struct Spread {
    bucket_bytes: u64,
    counts: Vec<u64>,
}

impl Spread {
    fn new() -> Spread {
        Spread { bucket_bytes: 1 << 20, counts: vec![0; BUCKETS] }
    }

    fn add(&mut self, offset: u64) {
        while offset / self.bucket_bytes >= BUCKETS as u64 {
            for i in 0..BUCKETS / 2 {
                self.counts[i] = self.counts[2 * i] + self.counts[2 * i + 1];
            }
            self.counts[BUCKETS / 2..].fill(0);
            self.bucket_bytes *= 2;
        }
        self.counts[(offset / self.bucket_bytes) as usize] += 1;
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

    /// The most frequent sizes (at most [`MAX_SIZES`], largest count first, then smaller size), each with
    /// its count plus those of the dropped sizes nearest to it.
    fn kept(&self) -> Vec<(u32, u64)> {
        let mut all: Vec<(u32, u64)> =
            self.counts.iter().map(|(&s, &c)| (s, c)).filter(|&(s, _)| s > 0).collect();
        all.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        let (kept, dropped) = all.split_at(all.len().min(MAX_SIZES));
        let mut kept = kept.to_vec();
        for &(size, count) in dropped {
            let nearest = kept.iter_mut().min_by_key(|(s, _)| s.abs_diff(size)).expect("kept is not empty");
            nearest.1 += count;
        }
        kept.sort_by_key(|&(s, _)| s);
        kept
    }
}

/// What one target's ops were.
#[derive(Clone, Debug)]
struct TargetShape {
    ops: HashMap<Class, u64>,
    sizes: HashMap<Class, Sizes>,
    flushes: u64,
    end_bytes: u64,
    random: Spread,
    /// Per worker and direction (reads, writes and discards apart, as fio counts): where its previous op ended.
    streams: HashMap<(u16, TraceOp), u64>,
    /// Sum of the ops' times in flight, ns, and how many had a completion time.
    in_flight_ns: u128,
    timed: u64,
}

impl TargetShape {
    fn new() -> TargetShape {
        TargetShape {
            ops: HashMap::new(),
            sizes: HashMap::new(),
            flushes: 0,
            end_bytes: 0,
            random: Spread::new(),
            streams: HashMap::new(),
            in_flight_ns: 0,
            timed: 0,
        }
    }

    fn add(&mut self, r: &TraceRecord) {
        if r.op == TraceOp::Flush {
            self.flushes += 1;
            return;
        }
        let worker = if self.streams.len() < MAX_STREAMS { r.worker } else { u16::MAX };
        let previous_end = self.streams.insert((worker, r.op), r.offset.saturating_add(r.len as u64));
        let sequential = previous_end == Some(r.offset);
        let class = match (r.op, sequential) {
            (TraceOp::Read, false) => Class::ReadRandom,
            (TraceOp::Read, true) => Class::ReadSeq,
            (TraceOp::Write, false) => Class::WriteRandom,
            (TraceOp::Write, true) => Class::WriteSeq,
            (TraceOp::Discard, _) => Class::Discard,
            _ => return,
        };
        *self.ops.entry(class).or_default() += 1;
        self.sizes.entry(class).or_default().add(r.len);
        self.end_bytes = self.end_bytes.max(r.offset.saturating_add(r.len as u64));
        if !sequential {
            self.random.add(r.offset);
        }
        if let Some(done) = r.complete_ns {
            self.in_flight_ns += done.saturating_sub(r.start_ns) as u128;
            self.timed += 1;
        }
    }

    fn total(&self) -> u64 {
        self.ops.values().sum()
    }

    fn writes(&self) -> u64 {
        self.ops.get(&Class::WriteRandom).copied().unwrap_or(0)
            + self.ops.get(&Class::WriteSeq).copied().unwrap_or(0)
    }
}

/// A trace's shape, gathered record by record ([`Deriver::add`]) and written as a job file
/// ([`Deriver::job_toml`]).
#[derive(Clone, Debug)]
pub struct Deriver {
    targets: Vec<TargetShape>,
    first_ns: Option<u64>,
    last_ns: u64,
    records: u64,
}

impl Default for Deriver {
    fn default() -> Self {
        Deriver::new()
    }
}

impl Deriver {
    /// Nothing seen yet.
    pub fn new() -> Deriver {
        Deriver { targets: Vec::new(), first_ns: None, last_ns: 0, records: 0 }
    }

    /// Takes one record into the shape.
    pub fn add(&mut self, r: &TraceRecord) {
        let t = r.target as usize;
        if self.targets.len() <= t {
            self.targets.resize_with(t + 1, TargetShape::new);
        }
        self.targets[t].add(r);
        self.first_ns = Some(self.first_ns.map_or(r.start_ns, |f| f.min(r.start_ns)));
        self.last_ns = self.last_ns.max(r.start_ns);
        self.records += 1;
    }

    /// The trace's span, seconds (first to last start); `None` with fewer than two distinct times.
    pub fn span_s(&self) -> Option<f64> {
        let span = self.last_ns.saturating_sub(self.first_ns?);
        (span > 0).then_some(span as f64 / 1e9)
    }

    /// The job file of the shape: `name` its name, `source` what it was derived from (said in its comments),
    /// `names` the trace's target names, `load` how its workers load the storage.
    pub fn job_toml(&self, name: &str, source: &str, names: &[String], load: Loop) -> Result<String, String> {
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
            let size = t.end_bytes.max(1).next_multiple_of(1 << 20);
            let _ = writeln!(out, "{label} = {{ size = \"{}\" }}", size_text(size));
        }
        for ((_, t), label) in targets.iter().zip(&labels) {
            out.push('\n');
            out.push_str(&worker_table(label, t, span_s, load));
        }
        Ok(out)
    }
}

/// The job's opening comments and run keys.
fn header(name: &str, source: &str, records: u64, span_s: Option<f64>) -> String {
    let span = span_s.map_or("no span of time".to_string(), |s| format!("{s:.3} s"));
    let mut out = String::new();
    let _ = writeln!(out, "# Derived by `iolab profiles derive` from {source} ({records} records, {span}).");
    out.push_str(
        "# Each worker has its target's read/write, sequential/random and discard shares as weighted access specs,\n\
         # their sizes, where the random ops went (zones), the flushes per write and the rate or depth.\n\
         # Not kept: the order of the ops, bursts, exact offsets. Check the fidelity: replay the trace and run this\n\
         # job on one target and compare them (docs/TRACES.md, \"From a trace to a profile\").\n",
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

/// One target's `[worker.NAME]` table and its access specs.
fn worker_table(label: &str, t: &TargetShape, span_s: Option<f64>, load: Loop) -> String {
    let total = t.total();
    let mut out = String::new();
    let share = |c: Class| t.ops.get(&c).copied().unwrap_or(0) as f64 / total as f64 * 100.0;
    let _ = write!(out, "# {label}: {total} ops");
    for c in Class::ALL.into_iter().filter(|&c| t.ops.contains_key(&c)) {
        let _ = write!(out, ", {} {:.1}%", c.name(), share(c));
    }
    let _ = writeln!(out, "; {} flushes", t.flushes);
    let depth =
        (t.timed > 0 && span_s.is_some()).then(|| t.in_flight_ns as f64 / 1e9 / span_s.unwrap_or(1.0));
    let _ = writeln!(out, "[worker.{label}]");
    let _ = writeln!(out, "target = \"@{label}\"");
    match (load, span_s) {
        (Loop::Open, Some(s)) => {
            let rate = total as f64 / s;
            let qd = depth.map_or(32, |d| (d * 4.0).ceil().clamp(8.0, 1024.0) as u32);
            let _ = writeln!(out, "rate = \"{}\"\narrival = \"poisson\"\nqd = {qd}", fmt_num(rate));
            if let Some(d) = depth {
                let _ =
                    writeln!(out, "# the trace had {d:.2} ops in flight on average; qd bounds the backlog");
            }
        }
        _ => {
            let qd = depth.map_or(1, |d| d.round().clamp(1.0, 1024.0) as u32);
            let _ = writeln!(out, "qd = {qd}");
        }
    }
    let writes = t.writes();
    if t.flushes > 0 && writes > 0 {
        let every = (writes as f64 / t.flushes as f64).round().clamp(1.0, 1e6) as u64;
        let _ = writeln!(out, "fdatasync = {every}  # {} writes, {} flushes", writes, t.flushes);
    }
    let dist = zones(&t.random);
    for c in Class::ALL.into_iter().filter(|&c| t.ops.contains_key(&c)) {
        let _ = writeln!(out, "\n[[worker.{label}.spec]]  # {}", c.name());
        let _ = writeln!(out, "{}", c.keys());
        let _ = writeln!(out, "bs = \"{}\"", bs_text(&t.sizes[&c]));
        let _ = writeln!(out, "weight = {}", t.ops[&c]);
        if matches!(c, Class::ReadRandom | Class::WriteRandom | Class::Discard) {
            if let Some(d) = &dist {
                let _ = writeln!(out, "dist = \"{d}\"");
            }
        }
    }
    out
}

/// The random ops' spread as positional zones over the target, or `None` when it is close to uniform.
fn zones(spread: &Spread) -> Option<String> {
    let used = spread.counts.iter().rposition(|&c| c > 0)? + 1;
    let total: u64 = spread.counts.iter().sum();
    let zones = used.min(MAX_ZONES);
    let per_zone = used.div_ceil(zones);
    let io: Vec<u64> = spread.counts[..used].chunks(per_zone).map(|c| c.iter().sum()).collect();
    let space: Vec<usize> = spread.counts[..used].chunks(per_zone).map(<[u64]>::len).collect();
    let uniform = io.iter().zip(&space).all(|(&i, &s)| {
        let expected = total as f64 * s as f64 / used as f64;
        (i as f64 - expected).abs() <= 0.25 * expected
    });
    if uniform {
        return None;
    }
    Some(format!("zones:{}", percent_pairs(&io, &space)))
}

/// `IO/SPACE` pairs in percent with one decimal, each list summing to exactly 100 (the largest absorbs the
/// rounding).
fn percent_pairs(io: &[u64], space: &[usize]) -> String {
    let tenths = |parts: Vec<f64>| -> Vec<i64> {
        let sum: f64 = parts.iter().sum();
        let mut t: Vec<i64> = parts.iter().map(|p| (p / sum * 1000.0).round() as i64).collect();
        let largest = (0..t.len()).max_by_key(|&i| t[i]).unwrap_or(0);
        t[largest] += 1000 - t.iter().sum::<i64>();
        t
    };
    let io = tenths(io.iter().map(|&x| x as f64).collect());
    let space = tenths(space.iter().map(|&x| x as f64).collect());
    let pct = |t: i64| format!("{}.{}", t / 10, t % 10);
    io.iter().zip(&space).map(|(&i, &s)| format!("{}/{}", pct(i), pct(s))).collect::<Vec<_>>().join(":")
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
fn size_text(bytes: u64) -> String {
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
mod tests {
    use super::*;

    fn rec(start_ns: u64, op: TraceOp, offset: u64, len: u32) -> TraceRecord {
        TraceRecord::new(start_ns, op, 0, offset, len)
    }

    #[test]
    fn sequential_ops_follow_the_previous_end_of_their_worker() {
        let mut d = Deriver::new();
        for i in 0..10 {
            d.add(&rec(i * 1000, TraceOp::Write, i * 4096, 4096));
        }
        d.add(&rec(20_000, TraceOp::Read, 1 << 30, 8192));
        let t = &d.targets[0];
        assert_eq!(t.ops[&Class::WriteSeq], 9);
        assert_eq!(t.ops[&Class::WriteRandom], 1, "the first write starts nothing");
        assert_eq!(t.ops[&Class::ReadRandom], 1);
    }

    #[test]
    fn sizes_beyond_the_kept_fold_into_the_nearest() {
        let mut s = Sizes::default();
        for (size, n) in
            [(4096, 50), (8192, 30), (65536, 10), (4608, 1), (1 << 20, 5), (512, 2), (12288, 2), (8000, 1)]
        {
            for _ in 0..n {
                s.add(size);
            }
        }
        let kept = s.kept();
        assert_eq!(kept.len(), MAX_SIZES);
        assert_eq!(kept.iter().map(|k| k.1).sum::<u64>(), 101);
        assert!(kept.contains(&(4096, 51)) && kept.contains(&(8192, 31)), "{kept:?}");
    }

    #[test]
    fn skewed_offsets_become_zones_summing_to_100() {
        let mut spread = Spread::new();
        for i in 0..10_000u64 {
            // 80 % of the ops in the first tenth of a 10 GiB range.
            let offset =
                if i % 10 < 8 { (i * 4096) % (1 << 30) } else { (1 << 30) + (i * 65536) % (9 << 30) };
            spread.add(offset);
        }
        let z = zones(&spread).expect("skewed");
        let pairs: Vec<(f64, f64)> = z
            .trim_start_matches("zones:")
            .split(':')
            .map(|p| {
                let (a, b) = p.split_once('/').unwrap();
                (a.parse().unwrap(), b.parse().unwrap())
            })
            .collect();
        assert!((pairs.iter().map(|p| p.0).sum::<f64>() - 100.0).abs() < 1e-9, "{z}");
        assert!((pairs.iter().map(|p| p.1).sum::<f64>() - 100.0).abs() < 1e-9, "{z}");
        assert!(pairs[0].0 >= 79.0 && pairs[0].1 <= 11.0, "{z}");
    }

    #[test]
    fn uniform_offsets_are_uniform() {
        let mut spread = Spread::new();
        for i in 0..100_000u64 {
            spread.add((i * 7919 * 4096) % (10 << 30));
        }
        assert_eq!(zones(&spread), None);
    }

    #[test]
    fn a_trace_without_time_has_no_rate() {
        let mut d = Deriver::new();
        d.add(&rec(0, TraceOp::Read, 0, 4096));
        let e = d.job_toml("j", "t.csv", &["sda".into()], Loop::Open).unwrap_err();
        assert!(e.contains("--closed"), "{e}");
        assert!(d.job_toml("j", "t.csv", &["sda".into()], Loop::Closed).is_ok());
    }

    #[test]
    fn flushes_per_write_become_fdatasync() {
        let mut d = Deriver::new();
        for i in 0..100u64 {
            d.add(&rec(i * 1_000_000, TraceOp::Write, i * 4096, 4096));
            if i % 4 == 3 {
                d.add(&rec(i * 1_000_000 + 1, TraceOp::Flush, 0, 0));
            }
        }
        let job = d.job_toml("j", "t", &["/dev/sdb".into()], Loop::Open).unwrap();
        assert!(job.contains("fdatasync = 4"), "{job}");
        assert!(job.contains("[worker.sdb]") && job.contains("sdb = { size = \"1m\" }"), "{job}");
    }
}
