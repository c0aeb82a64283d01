//! File targets' layouts ([`iolab_device::layout`]): each file target's extent map is taken once the targets
//! are prepared (created, filled; before the ramp), its boundaries go to the workers, which count the I/Os
//! that cross one (split I/Os), and it is taken again after the run, when the run's own writes may have
//! allocated more extents. Block devices, `mem:`, `null:` and `sim:` targets, and files on file systems
//! without FIEMAP, have none.

use crate::warnings::LayoutFacts;
use iolab_device::{Layout, OpenedTarget, TargetKind};
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

impl Before {
    /// The extent boundaries a worker counts split I/Os against: `None` without a layout of more than one
    /// extent.
    pub fn boundaries(&self) -> Option<Arc<[u64]>> {
        self.layout.as_ref().filter(|l| l.extents > 1).map(|l| l.boundaries.clone())
    }

    /// The target (`opened`, its descriptor `file`) mapped again after the run, with the workers' `split_ios`
    /// and `trims` on it; `None` for targets without a layout.
    pub fn after(
        &self,
        opened: &OpenedTarget,
        file: Option<&File>,
        (split_ios, trims): (u64, u64),
    ) -> Option<TargetLayouts> {
        let before = self.layout.as_ref()?;
        let after = layout_of(opened, file).unwrap_or_else(|| before.clone());
        let size = file.and_then(|f| f.metadata().ok()).map_or(after.mapped_bytes, |m| m.len());
        let mut layouts = target_layouts(&opened.probe.name, self.prealloc, (before, &after), split_ios);
        layouts.facts.holes_bytes = size.saturating_sub(layouts.facts.mapped_bytes);
        layouts.facts.trims = trims;
        Some(layouts)
    }
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
            extents_before: before.extents,
            extents_after: after.extents,
            ..LayoutFacts::default()
        },
    }
}
