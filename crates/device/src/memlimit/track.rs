//! Keeping `--memory` about the database's pages. A memory cgroup charges both the page cache and the
//! processes' private (anonymous) memory to one limit: a fixed limit that the engine's or iolab's own
//! memory grows into makes the kernel's OOM killer kill them (SQLite runs inside iolab, so iolab is what
//! dies, with no word and its cgroup left behind). So the limit is not fixed: a thread reads the cgroup's
//! `memory.stat` every [`PERIOD`] and sets the limit to the budget for pages plus the private memory charged
//! plus [`SLACK_BYTES`]. Between two reads the private memory can grow by the slack and by whatever pages
//! the kernel can reclaim (the budget) before anything is killed; the pages stay held under the budget
//! and the slack.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use super::MemoryKind;

/// Room above the pages' budget and the private memory last read, for what is allocated before the next
/// read. Small, since pages may use it too: private memory that grows faster makes the kernel reclaim pages
/// (the budget is the rest of the room), and is killed only if it outgrows the budget too within a period.
pub(super) const SLACK_BYTES: u64 = 4 << 20;

/// How often the private memory is read and the limit moved.
pub(super) const PERIOD: Duration = Duration::from_millis(25);

/// The cgroup's private (anonymous) memory from the text of its `memory.stat`: v1 `total_rss`, v2 `anon`.
/// Shared memory (PostgreSQL's shared buffers) is not private: it is counted with the pages.
pub(super) fn private_bytes(stat: &str, kind: &MemoryKind) -> Option<u64> {
    let key = match kind {
        MemoryKind::V1 { .. } => "total_rss",
        MemoryKind::V2 { .. } => "anon",
    };
    stat.lines().find_map(|line| match line.split_once(' ') {
        Some((k, v)) if k == key => v.trim().parse().ok(),
        _ => None,
    })
}

/// The limit that leaves `budget` bytes for pages beside `private` bytes of the processes' own memory.
pub(super) fn limit_for(budget: u64, private: u64) -> u64 {
    budget.saturating_add(private).saturating_add(SLACK_BYTES)
}

/// What the tracker saw, for the result: the most private memory and the most pages (usage less private)
/// the cgroup held at one read.
#[derive(Debug, Default)]
pub(super) struct Seen {
    pub private_peak: AtomicU64,
    pub pages_peak: AtomicU64,
}

/// The thread that moves the limit; stopped and joined when dropped.
#[derive(Debug)]
pub(super) struct Tracker {
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
    pub seen: Arc<Seen>,
}

impl Tracker {
    /// Starts tracking the cgroup `dir` with `budget` bytes for pages.
    pub fn start(dir: PathBuf, kind: MemoryKind, budget: u64) -> Tracker {
        let stop = Arc::new(AtomicBool::new(false));
        let seen = Arc::new(Seen::default());
        let (s, seen2) = (stop.clone(), seen.clone());
        let handle = std::thread::Builder::new()
            .name("iolab-memlimit".into())
            .spawn(move || {
                let mut set = limit_for(budget, 0);
                while !s.load(Ordering::Relaxed) {
                    if let Some(next) = tick(&dir, &kind, budget, &seen2) {
                        // A lower limit below the usage makes the kernel reclaim now; where it cannot (EBUSY)
                        // the old limit stays and the next read tries again.
                        if next != set
                            && std::fs::write(dir.join(kind.limit_file()), next.to_string()).is_ok()
                        {
                            set = next;
                        }
                    }
                    std::thread::sleep(PERIOD);
                }
            })
            .ok();
        Tracker { stop, handle, seen }
    }
}

/// One read: the limit the cgroup should have now, with the peaks noted; `None` when it cannot be read.
fn tick(dir: &std::path::Path, kind: &MemoryKind, budget: u64, seen: &Seen) -> Option<u64> {
    let stat = std::fs::read_to_string(dir.join("memory.stat")).ok()?;
    let private = private_bytes(&stat, kind)?;
    seen.private_peak.fetch_max(private, Ordering::Relaxed);
    let usage: Option<u64> =
        std::fs::read_to_string(dir.join(kind.usage_file())).ok().and_then(|t| t.trim().parse().ok());
    if let Some(usage) = usage {
        seen.pages_peak.fetch_max(usage.saturating_sub(private), Ordering::Relaxed);
    }
    // Whole MiB, so a few pages' change does not rewrite the limit.
    Some(limit_for(budget, private).next_multiple_of(1 << 20))
}

impl Drop for Tracker {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_memory_is_read_from_memory_stat_of_either_version() {
        let v1 = MemoryKind::V1 { mount: "/m".into() };
        let v2 = MemoryKind::V2 { mount: "/m".into() };
        let stat1 = "cache 4096\nrss 8192\nshmem 0\ntotal_cache 4096\ntotal_rss 12288\n";
        assert_eq!(
            private_bytes(stat1, &v1),
            Some(12288),
            "the hierarchy's total, not the cgroup's own line"
        );
        let stat2 = "anon 65536\nfile 1048576\nshmem 0\n";
        assert_eq!(private_bytes(stat2, &v2), Some(65536));
        assert_eq!(private_bytes(stat2, &v1), None);
        assert_eq!(private_bytes("total_rss x\n", &v1), None);
    }

    #[test]
    fn the_limit_leaves_the_budget_for_pages_whatever_the_private_memory() {
        for private in [0u64, 1 << 20, 500 << 20] {
            assert_eq!(limit_for(64 << 20, private) - private - SLACK_BYTES, 64 << 20);
        }
        assert_eq!(limit_for(u64::MAX, 1), u64::MAX);
    }
}
