//! The op kinds of a result as every rendering lists them ([`op_rows`]), and what it says of durability: whether its writes were synchronous and which flush its workers issued,
//! read from the plan in `config` (`plan.workers[].durability`, left out of the plan when a worker asked for
//! nothing), so every rendering labels the rows alike.

use crate::config::PlanDurability;
use crate::{OpSummary, RunResult};

/// The workers' durability settings, as the plan wrote them.
fn durabilities(r: &RunResult) -> Vec<PlanDurability> {
    r.config.plan().workers.into_iter().filter_map(|w| w.durability).collect()
}

/// How the writes reached stable media: `dsync` or `sync` when any worker's writes were synchronous.
pub fn write_sync(r: &RunResult) -> Option<&'static str> {
    let mut found = None;
    for d in durabilities(r) {
        match d.write_sync.as_deref() {
            Some("sync") => return Some("sync"),
            Some("dsync") => found = Some("dsync"),
            _ => {}
        }
    }
    found
}

/// The write row's label: `write`, or `write (dsync)` / `write (sync)` for synchronous writes.
pub fn write_label(r: &RunResult) -> &'static str {
    match write_sync(r) {
        Some("sync") => "write (sync)",
        Some(_) => "write (dsync)",
        None => "write",
    }
}

/// The flush row's label: `fdatasync` when every flushing worker issued fdatasync, `fsync` when all issued
/// fsync, `flush` when they differ.
pub fn flush_label(r: &RunResult) -> &'static str {
    let kinds: Vec<bool> =
        durabilities(r).into_iter().filter(|d| d.flush_every > 0).map(|d| d.flush_data_only).collect();
    match (kinds.iter().all(|k| *k), kinds.iter().any(|k| *k)) {
        _ if kinds.is_empty() => "flush",
        (true, _) => "fdatasync",
        (false, false) => "fsync",
        (false, true) => "flush",
    }
}

/// The op kinds to show: read and write only when they had ops (the write row says when the writes were
/// synchronous: `write (dsync)`), `all` always, then flushes and trims when there were any (they are not in
/// `all`, as fio keeps its `sync` and `trim` apart). One list for the text, HTML and Markdown.
pub fn op_rows(r: &RunResult) -> Vec<(&'static str, &OpSummary)> {
    let mut rows = Vec::new();
    if r.total.read.ops > 0 {
        rows.push(("read", &r.total.read));
    }
    if r.total.write.ops > 0 {
        rows.push((write_label(r), &r.total.write));
    }
    rows.push(("all", &r.total.all));
    if let Some(f) = &r.total.flush {
        rows.push((flush_label(r), f));
    }
    if let Some(t) = &r.total.trim {
        rows.push(("trim", t));
    }
    rows
}
