//! What `--throttle` ([`crate::throttle`]) and `--memory` ([`crate::memlimit`]) share of the kernel's
//! control groups: where the hierarchies are mounted, which cgroup this process is in, the registry of the
//! cgroups iolab made (each undone once: by its guard's drop, or by a forced exit's cleanup), removing a
//! cgroup whose tasks are still leaving it, and whether iolab is root.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

/// A cgroup iolab created, and where iolab goes back to when it moved into it.
#[derive(Debug)]
pub(crate) struct Created {
    /// The cgroup directory.
    pub dir: PathBuf,
    /// `cgroup.procs` of the cgroup the process was in before.
    pub back: PathBuf,
    /// iolab moved itself into it (so it moves back before the removal).
    pub joined: bool,
}

/// The cgroups of one kind iolab made and has not undone yet.
pub(crate) struct CgroupRegistry(Mutex<Vec<Created>>);

impl CgroupRegistry {
    /// An empty registry (for a `static`).
    pub const fn new() -> CgroupRegistry {
        CgroupRegistry(Mutex::new(Vec::new()))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Created>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Registers a cgroup made.
    pub fn add(&self, c: Created) {
        self.lock().push(c);
    }

    /// Notes that iolab moved into the cgroup `dir`.
    pub fn joined(&self, dir: &Path) {
        if let Some(c) = self.lock().iter_mut().find(|c| c.dir == dir) {
            c.joined = true;
        }
    }

    /// Whether `dir` is registered (not undone yet).
    #[cfg(test)]
    pub fn contains(&self, dir: &Path) -> bool {
        self.lock().iter().any(|c| c.dir == dir)
    }

    /// Undoes (and forgets) the cgroups `pick` selects: iolab moved back where it joined, each removed.
    /// Best effort: nothing to report to on the way out.
    pub fn undo_where(&self, pick: impl Fn(&Created) -> bool) {
        let taken: Vec<Created> = {
            let mut reg = self.lock();
            let (taken, kept) = std::mem::take(&mut *reg).into_iter().partition(|c| pick(c));
            *reg = kept;
            taken
        };
        for c in &taken {
            if c.joined {
                let _ = std::fs::write(&c.back, std::process::id().to_string());
            }
            remove_dir(&c.dir);
        }
    }
}

/// Mount points of cgroup2 hierarchies and of cgroup v1 hierarchies with the controller `v1_controller`
/// (`blkio`, `memory`), from the text of /proc/self/mounts.
pub(crate) fn mounts(mounts: &str, v1_controller: &str) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let (mut v2, mut v1) = (Vec::new(), Vec::new());
    for line in mounts.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 4 {
            continue;
        }
        let mount = PathBuf::from(f[1].replace("\\040", " "));
        match f[2] {
            "cgroup2" => v2.push(mount),
            "cgroup" if f[3].split(',').any(|o| o == v1_controller) => v1.push(mount),
            _ => {}
        }
    }
    (v2, v1)
}

/// The cgroup path (relative to the hierarchy's root) this process is in, from /proc/self/cgroup text: in
/// the unified hierarchy (`v1_controller` None) or in the v1 hierarchy of that controller.
pub(crate) fn own(proc_cgroup: &str, v1_controller: Option<&str>) -> Option<String> {
    proc_cgroup.lines().find_map(|line| {
        let mut f = line.splitn(3, ':');
        let (id, controllers, path) = (f.next()?, f.next()?, f.next()?);
        let ours = match v1_controller {
            None => id == "0" && controllers.is_empty(),
            Some(c) => controllers.split(',').any(|x| x == c),
        };
        ours.then(|| path.to_string())
    })
}

/// rmdir, retried for up to a second while the cgroup is still busy (tasks leaving it asynchronously).
/// Removes the cgroups named `prefix<pid>` under `parent` whose process is gone: what an iolab killed
/// with SIGKILL (or by the kernel's OOM killer) left behind. Only an empty cgroup can be removed (the
/// kernel refuses one with tasks), and only iolab's names are tried, so nothing of anyone else's goes.
pub(crate) fn sweep_stale(parent: &Path, prefix: &str) {
    let Ok(entries) = std::fs::read_dir(parent) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.strip_prefix(prefix)) else { continue };
        let Ok(pid) = pid.parse::<u32>() else { continue };
        if pid == std::process::id() || !Path::new("/proc").join(pid.to_string()).exists() {
            let _ = std::fs::remove_dir(entry.path());
        }
    }
}

pub(crate) fn remove_dir(dir: &Path) -> bool {
    for _ in 0..50 {
        match std::fs::remove_dir(dir) {
            Ok(()) => return true,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return true,
            Err(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
    false
}

/// The effective uid, from /proc/self/status (`Uid: real effective saved fs`).
pub(crate) fn effective_uid() -> Option<u32> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find_map(|l| l.strip_prefix("Uid:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Tests that move this process between cgroups hold this: the process's cgroups are one global state, and
/// a test that reads `/proc/self/cgroup` must not see another test's move.
#[cfg(test)]
pub(crate) static PROCESS_CGROUP_TESTS: Mutex<()> = Mutex::new(());
