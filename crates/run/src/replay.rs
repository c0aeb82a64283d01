//! `iolab replay`: a trace's records, loaded by the caller, become the ops of the run's workers. A record
//! maps to a run target: through the caller's map when there is one (`--map DISK=TARGET`; a trace target
//! it leaves out is `unmapped`), else every trace target to the one target of a run that has one, else trace
//! target `k` to run target `k`. One that is not a read or write, is empty or longer than 64 MiB, maps to no
//! target or does not fit in its target's region is skipped and counted by reason, never wrapped. The ops
//! keep the trace's order by intended start and its times, from the first op's; with several workers they
//! are dealt round robin in that order, each keeping its time, so the workers' schedules together are the
//! trace's.

use iolab_engine::ReplayOps;
use iolab_plan::gen::{GenOp, OpKind};
use iolab_plan::{Region, WorkerPlan};
use iolab_report::ReplayResult;
use iolab_stats::LatencyHistogram;
use iolab_trace::{TraceOp, TraceRecord};
use std::collections::BTreeMap;
use std::sync::Arc;

/// Longest op replayed (the plan's largest block size).
pub const MAX_LEN: u32 = 64 << 20;

/// Memory a replay takes per record of its trace, at most: the record as loaded ([`ReplayRecord`], 24 bytes),
/// the op made of it (24) and the op as dealt to its worker (24), all held at once while the ops are dealt.
/// docs/TRACES.md gives the measured figure.
pub const BYTES_PER_RECORD: u64 = 3 * std::mem::size_of::<ReplayRecord>() as u64;

/// One record as a replay keeps it: what issuing it and the result need (24 bytes; a [`TraceRecord`] is 72).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReplayRecord {
    /// Intended start, ns on the trace's clock.
    pub start_ns: u64,
    /// Byte offset.
    pub offset: u64,
    /// Length in bytes.
    pub len: u32,
    /// The trace target (an index into the trace's names).
    pub target: u16,
    /// The op.
    pub op: TraceOp,
}

impl From<&TraceRecord> for ReplayRecord {
    fn from(r: &TraceRecord) -> ReplayRecord {
        ReplayRecord { start_ns: r.start_ns, offset: r.offset, len: r.len, target: r.target, op: r.op }
    }
}

/// What `iolab replay` hands [`crate::execute`]: the trace, read into memory before the run (shared, so a
/// sweep over a trace reads it once).
#[derive(Clone, Debug, Default)]
pub struct ReplaySource {
    /// The trace file as the user gave it.
    pub path: String,
    /// Its records, in file order.
    pub records: Arc<Vec<ReplayRecord>>,
    /// How much faster than the trace (`Some(1.0)`: its own timing); `None`: as fast as the depth allows.
    pub speed: Option<f64>,
    /// `--map`: per trace target (by index), the run target it maps to, `None` for one left out. `None`:
    /// by position (see the module header).
    pub targets: Option<Arc<[Option<u16>]>>,
    /// The trace's target (device) names, by index.
    pub devices: Arc<[String]>,
    /// `--spread`: records sharing a start time are spread evenly over the clock's tick.
    pub spread: bool,
}

impl ReplaySource {
    /// The speed as the result says it: `2x`, `max`.
    pub fn speed_label(&self) -> String {
        match self.speed {
            None => "max".into(),
            Some(s) => format!("{s}x"),
        }
    }

    /// The run target of trace target `t` for a run of `run_targets` targets, or why there is none.
    fn run_target(&self, t: u16, run_targets: usize) -> Result<usize, &'static str> {
        match &self.targets {
            Some(map) => match map.get(t as usize) {
                Some(Some(i)) => Ok(*i as usize),
                _ => Err("unmapped"),
            },
            None if run_targets == 1 => Ok(0),
            None => Ok(t as usize),
        }
    }
}

/// Why a record cannot be issued at all (whatever its target).
fn unfit(r: &ReplayRecord) -> Option<&'static str> {
    match r.op {
        TraceOp::Read | TraceOp::Write if r.len == 0 => Some("empty"),
        TraceOp::Read | TraceOp::Write if r.len > MAX_LEN => Some("too_large"),
        TraceOp::Read | TraceOp::Write => None,
        // Flushes and discards are replayed as flushes and trims (docs/DURABILITY.md); a discard moves no data,
        // so no buffer bounds its length.
        TraceOp::Flush => None,
        TraceOp::Discard if r.len == 0 => Some("empty"),
        TraceOp::Discard => None,
        TraceOp::Other => Some("not_read_or_write"),
    }
}

/// Every worker's ops from `src` (see the module header; the workers all have the run's targets in one
/// order, as `iolab replay` plans them), and the records skipped by reason.
pub(crate) fn map(
    src: &ReplaySource,
    workers: &[WorkerPlan],
    regions: &[Vec<Region>],
) -> (Vec<ReplayOps>, BTreeMap<String, u64>) {
    let mut skipped = BTreeMap::new();
    let mut ops: Vec<(u64, GenOp)> = Vec::with_capacity(src.records.len());
    let (w, regions) = (&workers[0], &regions[0]);
    for r in src.records.iter() {
        match op_of(src, r, w, regions) {
            Ok(op) => ops.push((r.start_ns, op)),
            Err(why) => *skipped.entry(why.to_string()).or_insert(0) += 1,
        }
    }
    ops.sort_by_key(|&(t, _)| t);
    if src.spread {
        spread(&mut ops, clock_tick(&src.records));
    }
    let first = ops.first().map_or(0, |&(t, _)| t);
    let n = workers.len().max(1);
    // One start for all the workers' schedules (see `ReplayOps::start`).
    let start = Arc::default();
    if n == 1 {
        // One worker: its schedule is the list itself, moved, never copied.
        for o in &mut ops {
            o.0 -= first;
        }
        return (vec![ReplayOps { ops, speed: src.speed, start }], skipped);
    }
    let mut dealt: Vec<ReplayOps> = (0..n)
        .map(|_| ReplayOps {
            ops: Vec::with_capacity(ops.len() / n + 1),
            speed: src.speed,
            start: Arc::clone(&start),
        })
        .collect();
    for (i, (t, op)) in ops.into_iter().enumerate() {
        dealt[i % n].ops.push((t - first, op));
    }
    (dealt, skipped)
}

/// `--spread`: each run of `k` ops sharing a time `t` (sorted by time) gets the times `t + i x tick / k`,
/// `i` from 0, so they are issued evenly over the tick instead of at once.
fn spread(ops: &mut [(u64, GenOp)], tick: u64) {
    for group in ops.chunk_by_mut(|a, b| a.0 == b.0) {
        let k = group.len() as u64;
        for (i, (t, _)) in group.iter_mut().enumerate() {
            *t += (i as u64 * tick) / k;
        }
    }
}

/// Record `r` as an op of worker `w` (whose regions are `regions`), or why it is skipped.
fn op_of(
    src: &ReplaySource,
    r: &ReplayRecord,
    w: &WorkerPlan,
    regions: &[Region],
) -> Result<GenOp, &'static str> {
    if let Some(why) = unfit(r) {
        return Err(why);
    }
    let run_target = src.run_target(r.target, w.targets.len())?;
    let target = w.targets.iter().position(|&t| t == run_target).ok_or("no_target")?;
    let region = regions.get(target).ok_or("no_target")?;
    if r.op == TraceOp::Flush {
        return Ok(GenOp { target: target as u16, kind: OpKind::Flush, offset: 0, len: 0 });
    }
    let end = r.offset.checked_add(r.len as u64);
    if r.offset < region.offset || end.is_none_or(|e| e > region.offset + region.length) {
        return Err("beyond_target");
    }
    let kind = match r.op {
        TraceOp::Write => OpKind::Write,
        TraceOp::Discard => OpKind::Trim,
        _ => OpKind::Read,
    };
    Ok(GenOp { target: target as u16, kind, offset: r.offset, len: r.len })
}

/// The result's `replay` block: the workers' ops together, their lags merged from their histograms, and
/// the `--map` by name (`run_targets`: the run's target names).
pub(crate) fn result(
    src: &ReplaySource,
    (replayed, skipped): (u64, BTreeMap<String, u64>),
    lag: &LatencyHistogram,
    run_targets: &[String],
) -> ReplayResult {
    let by_name = |(d, t): (usize, &Option<u16>)| {
        let device = src.devices.get(d)?.clone();
        Some((device, run_targets.get((*t)? as usize)?.clone()))
    };
    let map = src.targets.iter().flat_map(|m| m.iter().enumerate().filter_map(by_name)).collect();
    ReplayResult {
        trace: src.path.clone(),
        records: src.records.len() as u64,
        replayed,
        skipped,
        speed: src.speed_label(),
        lag_ns: src.speed.and_then(|_| lag.summary()),
        map,
        clock_tick_ns: clock_tick(&src.records),
        most_at_one_time: most_at_one_time(&src.records),
        spread: src.spread,
    }
}

/// The largest step dividing every record's start time, from the first's (0 when all start together).
fn clock_tick(records: &[ReplayRecord]) -> u64 {
    let first = records.iter().map(|r| r.start_ns).min().unwrap_or(0);
    records.iter().fold(0, |g, r| gcd(g, r.start_ns - first))
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// The most records sharing one start time.
fn most_at_one_time(records: &[ReplayRecord]) -> u64 {
    let mut starts: Vec<u64> = records.iter().map(|r| r.start_ns).collect();
    starts.sort_unstable();
    starts.chunk_by(|a, b| a == b).map(|c| c.len() as u64).max().unwrap_or(0)
}
