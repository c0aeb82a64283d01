//! `iolab replay`: a trace's records, loaded by the caller, become the ops of the run's one worker. A record
//! maps to a worker target (every trace target to the one target of a run that has one; otherwise trace
//! target `k` to run target `k`); one that is not a read or write, is empty or longer than 64 MiB, maps to no
//! target or does not fit in its target's region is skipped and counted by reason, never wrapped. The ops
//! keep the trace's order by intended start and its times, from the first op's.

use iolab_engine::ReplayOps;
use iolab_plan::gen::GenOp;
use iolab_plan::{Region, WorkerPlan};
use iolab_report::ReplayResult;
use iolab_stats::LatencyHistogram;
use iolab_trace::{TraceOp, TraceRecord};
use std::collections::BTreeMap;

/// Longest op replayed (the plan's largest block size).
pub const MAX_LEN: u32 = 64 << 20;

/// What `iolab replay` hands [`crate::execute`]: the trace, read into memory before the run.
#[derive(Clone, Debug, Default)]
pub struct ReplaySource {
    /// The trace file as the user gave it.
    pub path: String,
    /// Its records, in file order.
    pub records: Vec<TraceRecord>,
    /// How much faster than the trace (`Some(1.0)`: its own timing); `None`: as fast as the depth allows.
    pub speed: Option<f64>,
}

impl ReplaySource {
    /// The speed as the result says it: `2x`, `max`.
    pub fn speed_label(&self) -> String {
        match self.speed {
            None => "max".into(),
            Some(s) => format!("{s}x"),
        }
    }
}

/// The worker's ops from `src` (see the module header), and the records skipped by reason.
pub(crate) fn map(
    src: &ReplaySource,
    w: &WorkerPlan,
    regions: &[Region],
) -> (ReplayOps, BTreeMap<String, u64>) {
    let mut skipped = BTreeMap::new();
    let mut skip = |why: &str| *skipped.entry(why.to_string()).or_insert(0) += 1;
    let mut ops: Vec<(u64, GenOp)> = Vec::with_capacity(src.records.len());
    for r in &src.records {
        let write = match r.op {
            TraceOp::Read => false,
            TraceOp::Write => true,
            _ => {
                skip("not_read_or_write");
                continue;
            }
        };
        if r.len == 0 {
            skip("empty");
            continue;
        }
        if r.len > MAX_LEN {
            skip("too_large");
            continue;
        }
        let target = if w.targets.len() == 1 { 0 } else { r.target as usize };
        let Some(region) = regions.get(target) else {
            skip("no_target");
            continue;
        };
        let end = r.offset.checked_add(r.len as u64);
        if r.offset < region.offset || end.is_none_or(|e| e > region.offset + region.length) {
            skip("beyond_target");
            continue;
        }
        ops.push((r.start_ns, GenOp { target: target as u16, write, offset: r.offset, len: r.len }));
    }
    ops.sort_by_key(|&(t, _)| t);
    let first = ops.first().map_or(0, |&(t, _)| t);
    for (t, _) in &mut ops {
        *t -= first;
    }
    (ReplayOps { ops, speed: src.speed }, skipped)
}

/// The result's `replay` block.
pub(crate) fn result(
    src: &ReplaySource,
    replayed: u64,
    skipped: BTreeMap<String, u64>,
    lag: &LatencyHistogram,
) -> ReplayResult {
    ReplayResult {
        trace: src.path.clone(),
        records: src.records.len() as u64,
        replayed,
        skipped,
        speed: src.speed_label(),
        lag_ns: src.speed.and_then(|_| lag.summary()),
    }
}
