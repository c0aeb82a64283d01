//! `--memory SIZE` (`iolab db`): hold a database engine's memory, the page cache of the files it reads and
//! writes included, under a limit with the kernel's memory controller, so a database larger than the limit
//! reads from its storage instead of from memory.
//!
//! [`MemoryLimit::create`] makes a cgroup `iolab-mem-<pid>` with the limit: in cgroup v2 (`memory.max`, when
//! the unified hierarchy has the `memory` controller) at the hierarchy's root, as `--throttle` does
//! ([`crate::throttle`]); in cgroup v1 (`memory.limit_in_bytes`) under the cgroup iolab is in, so any limit
//! above iolab still holds. Then either iolab itself joins it ([`MemoryLimit::join`]: the whole process, for
//! an engine that runs inside iolab, SQLite) or a child does (a server writes `0` to
//! [`MemoryLimit::procs_file`], opened by iolab, between its fork and its exec). The kernel charges a page
//! of the page cache to the cgroup of the process that brought it in, and reclaims the cgroup's pages when
//! it reaches the limit: so the engine must be in the cgroup *before* it builds or reads the database
//! (pages cached earlier stay charged where they were, and are not limited).
//!
//! The limit is a budget for pages (the page cache, and shared memory such as PostgreSQL's shared buffers):
//! the processes' own private memory is apart, and the private `track` moves the cgroup's limit with it,
//! so the kernel reclaims the database's pages and never kills the engine or iolab over their own memory.
//!
//! Dropping the [`MemoryLimit`] moves iolab back (if it joined) and removes the cgroup; [`cleanup_on_exit`]
//! does the same on a forced exit. The cgroup can only be removed once no process is left in it: stop the
//! server first.

mod track;

use std::io;
use std::path::{Path, PathBuf};

/// Why `--memory` could not be set up. Nothing is left behind.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MemoryError {
    /// Neither cgroup v2 `memory` nor cgroup v1 `memory` is mounted.
    #[error(
        "--memory: no cgroup memory controller found (neither 'memory' in cgroup.controllers of a cgroup v2 \
         hierarchy nor a cgroup v1 'memory' hierarchy)\n  likely cause: the controller is not mounted \
         (containers often hide it)\n  hint: mount it (mount -t cgroup -o memory none /sys/fs/cgroup/memory), \
         or drop --memory and build a database larger than memory instead"
    )]
    NoController,
    /// /proc/self/cgroup cannot be read, or has no line for the hierarchy.
    #[error("--memory: cannot tell which cgroup iolab is in ({0})")]
    OwnCgroup(String),
    /// Creating or joining the cgroup was refused, and iolab is not root.
    #[error(
        "--memory needs root: cannot {action}: {error}\n  likely cause: only root can create cgroups and set \
         memory limits\n  hint: run iolab as root, or drop --memory and build a database larger than memory"
    )]
    NeedsRoot {
        /// What iolab tried.
        action: String,
        /// What the kernel said.
        error: io::Error,
    },
    /// Creating or joining the cgroup failed otherwise.
    #[error("--memory: cannot {action}: {error}\n  hint: drop --memory to run without a memory limit")]
    Cgroup {
        /// What iolab tried.
        action: String,
        /// What the kernel said.
        error: io::Error,
    },
}

/// Which kernel interface limits memory here, and where its hierarchy is mounted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MemoryKind {
    /// cgroup v1 `memory` controller: `memory.limit_in_bytes`.
    V1 {
        /// Mount point of the memory hierarchy (usually /sys/fs/cgroup/memory).
        mount: PathBuf,
    },
    /// cgroup v2: `memory.max`.
    V2 {
        /// Mount point of the unified hierarchy.
        mount: PathBuf,
    },
}

impl MemoryKind {
    /// Short name for messages: `cgroup-v1 memory` or `cgroup-v2 memory.max`.
    pub fn name(&self) -> &'static str {
        match self {
            MemoryKind::V1 { .. } => "cgroup-v1 memory",
            MemoryKind::V2 { .. } => "cgroup-v2 memory.max",
        }
    }

    fn limit_file(&self) -> &'static str {
        match self {
            MemoryKind::V1 { .. } => "memory.limit_in_bytes",
            MemoryKind::V2 { .. } => "memory.max",
        }
    }

    fn usage_file(&self) -> &'static str {
        match self {
            MemoryKind::V1 { .. } => "memory.usage_in_bytes",
            MemoryKind::V2 { .. } => "memory.current",
        }
    }
}

/// Finds the memory controller: cgroup v2 `memory` (listed in the unified hierarchy's `cgroup.controllers`)
/// is preferred, else a cgroup v1 `memory` hierarchy. No side effects.
pub fn detect() -> Option<MemoryKind> {
    let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap_or_default();
    let (v2, v1) = crate::cgroup::mounts(&mounts, "memory");
    for mount in v2 {
        let controllers = std::fs::read_to_string(mount.join("cgroup.controllers")).unwrap_or_default();
        if controllers.split_whitespace().any(|c| c == "memory") {
            return Some(MemoryKind::V2 { mount });
        }
    }
    v1.into_iter().find(|m| m.join("memory.limit_in_bytes").exists()).map(|mount| MemoryKind::V1 { mount })
}

/// Cgroups to undo on a forced exit; a [`MemoryLimit`] takes its own out when dropped.
static REGISTRY: crate::cgroup::CgroupRegistry = crate::cgroup::CgroupRegistry::new();

/// Undoes every memory limit still in place (moves iolab back, removes the cgroups). For the signal
/// handler's forced exit, after the servers in them were stopped.
pub fn cleanup_on_exit() {
    REGISTRY.undo_where(|_| true);
}

/// A memory limit in place: a cgroup whose limit leaves a budget for pages beside the private memory of
/// the processes in it, removed when this is dropped.
#[derive(Debug)]
pub struct MemoryLimit {
    kind: MemoryKind,
    dir: PathBuf,
    budget_bytes: u64,
    tracker: Option<track::Tracker>,
}

fn cgroup_error(action: String, error: io::Error) -> MemoryError {
    match error.raw_os_error() {
        Some(libc::EPERM | libc::EACCES | libc::EROFS) if crate::cgroup::effective_uid() != Some(0) => {
            MemoryError::NeedsRoot { action, error }
        }
        _ => MemoryError::Cgroup { action, error },
    }
}

impl MemoryLimit {
    /// Makes the cgroup with `budget_bytes` for pages (nobody in it yet), and starts moving its limit with
    /// the private memory charged to it.
    pub fn create(budget_bytes: u64) -> Result<MemoryLimit, MemoryError> {
        let kind = detect().ok_or(MemoryError::NoController)?;
        let text = std::fs::read_to_string("/proc/self/cgroup")
            .map_err(|e| MemoryError::OwnCgroup(format!("/proc/self/cgroup: {e}")))?;
        let v1 = matches!(kind, MemoryKind::V1 { .. });
        let own = crate::cgroup::own(&text, if v1 { Some("memory") } else { None }).ok_or_else(|| {
            MemoryError::OwnCgroup(format!("/proc/self/cgroup has no {} line", kind.name()))
        })?;
        let (mount, own_dir) = match &kind {
            MemoryKind::V1 { mount } | MemoryKind::V2 { mount } => {
                (mount.clone(), mount.join(own.trim_start_matches('/')))
            }
        };
        // v1: under iolab's own cgroup. v2: at the root (a v2 cgroup with processes in it cannot hand
        // controllers to children), with the controller enabled there.
        let parent = if v1 { own_dir.clone() } else { mount.clone() };
        if !v1 {
            let control = mount.join("cgroup.subtree_control");
            let enabled = std::fs::read_to_string(&control).unwrap_or_default();
            if !enabled.split_whitespace().any(|c| c == "memory") {
                std::fs::write(&control, "+memory").map_err(|e| {
                    cgroup_error(format!("enable the memory controller in '{}'", control.display()), e)
                })?;
            }
        }
        let mut limit = Self::create_in(kind, &parent, own_dir.join("cgroup.procs"), budget_bytes)?;
        limit.tracker = Some(track::Tracker::start(limit.dir.clone(), limit.kind.clone(), budget_bytes));
        Ok(limit)
    }

    /// [`MemoryLimit::create`] under `parent`, iolab going back to `back` (a `cgroup.procs`).
    fn create_in(
        kind: MemoryKind,
        parent: &Path,
        back: PathBuf,
        budget_bytes: u64,
    ) -> Result<MemoryLimit, MemoryError> {
        crate::cgroup::sweep_stale(parent, "iolab-mem-");
        let dir = parent.join(format!("iolab-mem-{}", std::process::id()));
        std::fs::create_dir(&dir)
            .map_err(|e| cgroup_error(format!("create the cgroup '{}'", dir.display()), e))?;
        REGISTRY.add(crate::cgroup::Created { dir: dir.clone(), back, joined: false });
        let limit = MemoryLimit { kind, dir, budget_bytes, tracker: None };
        // From here on an error drops `limit`, which removes the cgroup.
        let file = limit.kind.limit_file();
        let first = track::limit_for(budget_bytes, 0);
        std::fs::write(limit.dir.join(file), first.to_string())
            .map_err(|e| cgroup_error(format!("write {first} to {}", limit.dir.join(file).display()), e))?;
        Ok(limit)
    }

    /// Moves the whole iolab process (every thread; threads started later inherit it) into the cgroup,
    /// for an engine that runs inside iolab.
    pub fn join(&self) -> Result<(), MemoryError> {
        let procs = self.procs_file();
        std::fs::write(&procs, std::process::id().to_string())
            .map_err(|e| cgroup_error(format!("move iolab into the cgroup '{}'", self.dir.display()), e))?;
        REGISTRY.joined(&self.dir);
        Ok(())
    }

    /// The cgroup's `cgroup.procs`: a process that writes `0` there (through a descriptor iolab opened:
    /// the kernel checks the opener's rights) joins the cgroup.
    pub fn procs_file(&self) -> PathBuf {
        self.dir.join("cgroup.procs")
    }

    /// The budget for pages, in bytes (`--memory`).
    pub fn budget_bytes(&self) -> u64 {
        self.budget_bytes
    }

    /// The most pages (the cgroup's usage less its private memory) and the most private memory it held at
    /// one of the tracker's reads; `None` before any read.
    pub fn peaks(&self) -> Option<(u64, u64)> {
        use std::sync::atomic::Ordering::Relaxed;
        let seen = &self.tracker.as_ref()?.seen;
        let (pages, private) = (seen.pages_peak.load(Relaxed), seen.private_peak.load(Relaxed));
        (pages > 0 || private > 0).then_some((pages, private))
    }

    /// The cgroup directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The controller, in words.
    pub fn kind_name(&self) -> &'static str {
        self.kind.name()
    }

    /// One line for messages: `cgroup-v1 memory /sys/fs/cgroup/memory/iolab-mem-42: 256 MiB for pages`.
    pub fn describe(&self) -> String {
        format!(
            "{} {}: {} for pages",
            self.kind.name(),
            self.dir.display(),
            crate::format_bytes(self.budget_bytes)
        )
    }
}

impl Drop for MemoryLimit {
    fn drop(&mut self) {
        // The tracker first: it writes into the cgroup. Nothing left to do when cleanup_on_exit has undone
        // it already.
        drop(self.tracker.take());
        REGISTRY.undo_where(|c| c.dir == self.dir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_limit_on_a_fake_v1_hierarchy_is_written_joined_and_removed() {
        let tmp = tempfile::tempdir().unwrap();
        let mount = tmp.path().join("memory");
        let own = mount.join("a/b");
        std::fs::create_dir_all(&own).unwrap();
        let kind = MemoryKind::V1 { mount: mount.clone() };
        let limit = MemoryLimit::create_in(kind, &own, own.join("cgroup.procs"), 64 << 20).unwrap();
        let dir = own.join(format!("iolab-mem-{}", std::process::id()));
        assert_eq!(limit.dir(), dir);
        let first = (64u64 << 20) + track::SLACK_BYTES;
        assert_eq!(std::fs::read_to_string(dir.join("memory.limit_in_bytes")).unwrap(), first.to_string());
        assert_eq!(limit.peaks(), None, "not tracked");
        limit.join().unwrap();
        assert_eq!(std::fs::read_to_string(limit.procs_file()).unwrap(), std::process::id().to_string());
        assert!(limit.describe().ends_with(": 64 MiB for pages"), "{}", limit.describe());
        // A real cgroup's files go with it; the fake's must be removed by hand.
        for f in ["memory.limit_in_bytes", "cgroup.procs"] {
            std::fs::remove_file(dir.join(f)).unwrap();
        }
        drop(limit);
        assert!(!dir.exists());
        assert_eq!(
            std::fs::read_to_string(own.join("cgroup.procs")).unwrap(),
            std::process::id().to_string(),
            "iolab went back where it was"
        );
        assert!(!REGISTRY.contains(&dir));
    }

    #[test]
    fn memory_mounts_are_found_by_controller() {
        let mounts = "cgroup /sys/fs/cgroup/memory cgroup rw,relatime,memory 0 0\n\
                      cgroup /sys/fs/cgroup/blkio cgroup rw,relatime,blkio 0 0\n";
        let (v2, v1) = crate::cgroup::mounts(mounts, "memory");
        assert!(v2.is_empty());
        assert_eq!(v1, vec![PathBuf::from("/sys/fs/cgroup/memory")]);
        let own = crate::cgroup::own("4:memory:/x/y\n0::/\n", Some("memory"));
        assert_eq!(own.as_deref(), Some("/x/y"));
    }

    #[test]
    fn memory_limit_on_the_real_hierarchy_holds_iolab_and_goes_away() {
        // The test's process joins the cgroup: alone, so the tests beside it are not held by its limit (a
        // burst of their page cache before the limit moved got the whole test binary OOM-killed on CI).
        if !iolab_testkit::in_own_process(
            "memlimit::tests::memory_limit_on_the_real_hierarchy_holds_iolab_and_goes_away",
        ) {
            return;
        }
        if crate::cgroup::effective_uid() != Some(0) {
            return iolab_testkit::skip(format_args!("not root"));
        }
        if detect().is_none() {
            return iolab_testkit::skip(format_args!("no memory controller"));
        }
        let _moves = crate::cgroup::PROCESS_CGROUP_TESTS.lock().unwrap_or_else(|p| p.into_inner());
        let before = std::fs::read_to_string("/proc/self/cgroup").unwrap();
        let limit = MemoryLimit::create(16 << 20).unwrap();
        let dir = limit.dir().to_path_buf();
        let file = limit.kind.limit_file();
        let first = (16u64 << 20) + track::SLACK_BYTES;
        assert_eq!(std::fs::read_to_string(dir.join(file)).unwrap().trim(), first.to_string());
        limit.join().unwrap();
        assert!(std::fs::read_to_string("/proc/self/cgroup").unwrap().contains("iolab-mem-"));
        // Private memory well past the budget and the slack, grown as a program grows it: with a fixed
        // limit the OOM killer kills this test's process here.
        let mut held: Vec<Vec<u8>> = Vec::new();
        for _ in 0..96 {
            held.push(vec![1u8; 1 << 20]);
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        std::thread::sleep(track::PERIOD * 3);
        let (_, private) = limit.peaks().expect("tracked");
        assert!(private >= 64 << 20, "private peak {private}");
        let now: u64 = std::fs::read_to_string(dir.join(file)).unwrap().trim().parse().unwrap();
        assert!(now >= (16 << 20) + private, "the limit {now} moved with the private memory {private}");
        drop(held);
        drop(limit);
        assert!(!dir.exists(), "{} left", dir.display());
        assert_eq!(std::fs::read_to_string("/proc/self/cgroup").unwrap(), before);
    }

    #[test]
    fn a_cgroup_left_by_a_killed_iolab_is_swept_and_others_are_kept() {
        let tmp = tempfile::tempdir().unwrap();
        let parent = tmp.path();
        // No process has pid 4,000,000,000 (pid_max is at most 2^22).
        for name in ["iolab-mem-4000000000", "iolab-mem-1", "someone-else-4000000000", "iolab-mem-x"] {
            std::fs::create_dir(parent.join(name)).unwrap();
        }
        let kind = MemoryKind::V1 { mount: parent.to_path_buf() };
        let limit = MemoryLimit::create_in(kind, parent, parent.join("cgroup.procs"), 64 << 20).unwrap();
        assert!(!parent.join("iolab-mem-4000000000").exists(), "a dead iolab's cgroup is removed");
        for kept in ["iolab-mem-1", "someone-else-4000000000", "iolab-mem-x"] {
            assert!(parent.join(kept).exists(), "{kept}: a live pid's or a stranger's is kept");
        }
        std::fs::remove_file(limit.dir().join("memory.limit_in_bytes")).unwrap();
    }
}
