//! One run target through the run, one struct per stage (not parallel vectors indexed alike):
//! [`PreparedTarget`] once probed and bound (how to open it, what probing found, the size and alignment the
//! plan was bound to), then [`RunTarget`] once open (also the opened target, its file shared with the workers
//! and its layout before the ramp).

use crate::layout::{Before, TargetLayouts};
use iolab_device::{OpenRequest, OpenedTarget, Probe};
use iolab_engine::WorkerOutput;
use iolab_plan::{Plan, TargetGeometry};
use std::fs::File;
use std::sync::Arc;

/// A run target probed and bound; nothing created yet.
pub(crate) struct PreparedTarget {
    /// How to open it.
    pub request: OpenRequest,
    /// What probing found (no side effects).
    pub probe: Probe,
    /// The size and alignment unit the plan was bound to.
    pub geometry: TargetGeometry,
}

/// A run target once open (created and filled where needed).
pub(crate) struct RunTarget {
    /// The target as prepared.
    pub prepared: PreparedTarget,
    /// The opened target (its file moved to `file`).
    pub opened: OpenedTarget,
    /// Path targets: the file, shared with the workers.
    pub file: Option<Arc<File>>,
    /// Its layout before the ramp, for file targets.
    pub before: Before,
}

impl RunTarget {
    /// `prepared` opened as `opened`: its file taken out to share, its layout taken.
    pub fn new(prepared: PreparedTarget, mut opened: OpenedTarget, plan: &Plan) -> RunTarget {
        let file = opened.file.take().map(Arc::new);
        let before = Before::take(plan, &opened, file.as_deref());
        RunTarget { prepared, opened, file, before }
    }

    /// What probing found before the run.
    pub fn probe(&self) -> &Probe {
        &self.prepared.probe
    }
}

/// The boundaries of a worker's targets (`worker_targets`: run target indices) that have more than one
/// extent; empty when none has, so the worker counts nothing.
pub(crate) fn boundaries(targets: &[RunTarget], worker_targets: &[usize]) -> Vec<Option<Arc<[u64]>>> {
    let b: Vec<Option<Arc<[u64]>>> = worker_targets.iter().map(|&i| targets[i].before.boundaries()).collect();
    if b.iter().any(Option::is_some) {
        b
    } else {
        Vec::new()
    }
}

/// Maps the file targets again and adds up the workers' split I/Os and trims, per run target (a worker with
/// several targets counts its trims on each: what may have punched its holes).
pub(crate) fn layouts_after(
    plan: &Plan,
    targets: &[RunTarget],
    outputs: &[WorkerOutput],
) -> Vec<Option<TargetLayouts>> {
    let mut split = vec![0u64; plan.targets.len()];
    let mut trims = vec![0u64; plan.targets.len()];
    for (o, w) in outputs.iter().zip(&plan.workers) {
        for (&count, &i) in o.split_ios.iter().zip(&w.targets) {
            split[i] += count;
        }
        for &i in &w.targets {
            trims[i] += o.trim.ops;
        }
    }
    let counts = split.into_iter().zip(trims);
    targets
        .iter()
        .zip(counts)
        .map(|(t, counts)| t.before.after(&t.opened, t.file.as_deref(), counts))
        .collect()
}
