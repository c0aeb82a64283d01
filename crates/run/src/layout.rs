//! File targets' layouts ([`iolab_device::layout`]): each file target's extent map is taken once the targets
//! are prepared (created, filled; before the ramp), its boundaries go to the workers, which count the I/Os
//! that cross one (split I/Os), and it is taken again after the run, when the run's own writes may have
//! allocated more extents. Block devices, `mem:`, `null:` and `sim:` targets, and files on file systems
//! without FIEMAP, have none.

use crate::target::RunTarget;
use crate::warnings::LayoutFacts;
use iolab_device::{Layout, OpenedTarget, TargetKind};
use iolab_engine::WorkerOutput;
use iolab_plan::Plan;
use iolab_report::TargetLayout;
use std::fs::File;
use std::sync::Arc;

/// A run target's layout taken before the ramp.
pub(crate) struct Before {
    /// Its layout before the ramp; `None` for targets without one.
    layout: Option<Layout>,
    /// How iolab laid it out, when it created or extended it.
    prealloc: Option<&'static str>,
}

/// One file target's layout before and after the run, and the I/Os split by the first.
pub(crate) struct TargetLayouts {
    /// For the result (`env.targets[i].layout`).
    pub report: TargetLayout,
    /// For the warnings.
    pub facts: LayoutFacts,
}

impl Before {
    /// Maps a target once opened (its descriptor now `file`), when it is a file.
    pub fn take(plan: &Plan, opened: &OpenedTarget, file: Option<&File>) -> Before {
        let extended = opened.created || opened.probe.will_extend_to.is_some();
        Before { layout: layout_of(opened, file), prealloc: extended.then_some(plan.prealloc.as_str()) }
    }
}

/// The boundaries of a worker's targets (`worker_targets`: run target indices) that have more than one
/// extent; empty when none has, so the worker counts nothing.
pub(crate) fn boundaries(targets: &[RunTarget], worker_targets: &[usize]) -> Vec<Option<Arc<[u64]>>> {
    let b: Vec<Option<Arc<[u64]>>> = worker_targets
        .iter()
        .map(|&i| targets[i].before.layout.as_ref().filter(|l| l.extents > 1).map(|l| l.boundaries.clone()))
        .collect();
    if b.iter().any(Option::is_some) {
        b
    } else {
        Vec::new()
    }
}

/// Maps the file targets again and adds up the workers' split I/Os, per run target.
pub(crate) fn finish(
    plan: &Plan,
    targets: &[RunTarget],
    outputs: &[WorkerOutput],
) -> Vec<Option<TargetLayouts>> {
    let mut split = vec![0u64; plan.targets.len()];
    for (o, w) in outputs.iter().zip(&plan.workers) {
        for (&count, &i) in o.split_ios.iter().zip(&w.targets) {
            split[i] += count;
        }
    }
    let mut out = Vec::new();
    for (t, split) in targets.iter().zip(split) {
        out.push(t.before.layout.as_ref().map(|before| {
            let after = layout_of(&t.opened, t.file.as_deref()).unwrap_or_else(|| before.clone());
            target_layouts(&t.opened.probe.name, t.before.prealloc, (before, &after), split)
        }));
    }
    out
}

/// A file target's layout, `None` for other targets or when its file system has no FIEMAP.
fn layout_of(t: &OpenedTarget, file: Option<&File>) -> Option<Layout> {
    (t.probe.kind == TargetKind::File).then_some(file).flatten().and_then(iolab_device::layout::file_layout)
}

fn target_layouts(
    name: &str,
    prealloc: Option<&'static str>,
    (before, after): (&Layout, &Layout),
    split_ios: u64,
) -> TargetLayouts {
    // The warning judges the more fragmented state: before the run (what its I/Os met) or after it (what
    // the next run meets).
    let worst = if after.extents >= before.extents { after } else { before };
    TargetLayouts {
        report: TargetLayout {
            prealloc: prealloc.map(str::to_string),
            extents_before: before.extents,
            extents_after: after.extents,
            split_ios,
        },
        facts: LayoutFacts {
            name: name.to_string(),
            extents: worst.extents,
            mapped_bytes: worst.mapped_bytes,
            split_ios,
        },
    }
}
