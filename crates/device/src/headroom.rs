//! How much memory a command may still allocate: the least of three limits, each of which ends a process
//! that goes past it (an allocation failure, or the OOM killer).
//!
//! - what the kernel has available without swapping (MemAvailable in /proc/meminfo);
//! - what the address-space limit leaves (RLIMIT_AS, `ulimit -v`, less the process's VmSize now);
//! - what the memory cgroup of the process leaves (cgroup v2: memory.max less memory.current; v1:
//!   memory.limit_in_bytes less memory.usage_in_bytes), the tightest of its cgroup and every ancestor.
//!
//! Every estimate of memory an input sizes (`iolab mrc`, a replay's records, a run's buffers, `mem:`
//! targets and cache) is checked against [`memory_headroom`], and a refusal names the limit that bound it.

use std::fs;
use std::path::{Path, PathBuf};

/// Which limit bounds the memory a command may use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemoryBound {
    /// What the kernel has available (MemAvailable).
    Available,
    /// The address-space limit (RLIMIT_AS).
    AddressSpace,
    /// The memory cgroup's limit.
    Cgroup,
}

impl MemoryBound {
    /// The limit in words, for a refusal ("MemAvailable", "RLIMIT_AS, the address-space limit ...").
    pub fn describe(self) -> &'static str {
        match self {
            MemoryBound::Available => "MemAvailable",
            MemoryBound::AddressSpace => {
                "RLIMIT_AS, the address-space limit (ulimit -v), less what the process maps already"
            }
            MemoryBound::Cgroup => {
                "the memory cgroup's limit (memory.max), less what the cgroup uses already"
            }
        }
    }
}

/// The memory a command may still allocate, and the limit that bounds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryHeadroom {
    /// Bytes; 0 when no limit is known (then nothing is checked).
    pub bytes: u64,
    /// The limit that gave `bytes`.
    pub limit: MemoryBound,
}

impl MemoryHeadroom {
    /// True when `need` bytes fit (or nothing is known).
    pub fn fits(&self, need: u64) -> bool {
        self.bytes == 0 || need <= self.bytes
    }
}

/// The memory this process may still allocate now: see the module documentation.
pub fn memory_headroom() -> MemoryHeadroom {
    least([
        (MemoryBound::Available, Some(crate::sys::mem_available_bytes()).filter(|&b| b > 0)),
        (MemoryBound::AddressSpace, address_space_left()),
        (MemoryBound::Cgroup, cgroup_left(Path::new("/proc/self/cgroup"), Path::new("/sys/fs/cgroup"))),
    ])
}

/// The least of the known limits; bytes 0 when none is known.
fn least(limits: [(MemoryBound, Option<u64>); 3]) -> MemoryHeadroom {
    limits
        .into_iter()
        .filter_map(|(limit, bytes)| bytes.map(|bytes| MemoryHeadroom { bytes, limit }))
        .min_by_key(|h| h.bytes)
        .unwrap_or(MemoryHeadroom { bytes: 0, limit: MemoryBound::Available })
}

/// RLIMIT_AS less the process's VmSize; None when unlimited or unknown.
fn address_space_left() -> Option<u64> {
    use nix::sys::resource::{getrlimit, Resource};
    let (soft, _) = getrlimit(Resource::RLIMIT_AS).ok()?;
    if soft == nix::sys::resource::RLIM_INFINITY {
        return None;
    }
    let status = fs::read_to_string("/proc/self/status").ok()?;
    let vm_kib: u64 =
        status.lines().find_map(|l| l.strip_prefix("VmSize:")?.split_whitespace().next()?.parse().ok())?;
    Some(soft.saturating_sub(vm_kib.saturating_mul(1024)))
}

/// What the memory cgroups of the process (read from `proc_cgroup`, under the hierarchy at `root`) leave: the
/// least over its cgroup and every ancestor; None when none has a limit.
fn cgroup_left(proc_cgroup: &Path, root: &Path) -> Option<u64> {
    let text = fs::read_to_string(proc_cgroup).ok()?;
    let mut least: Option<u64> = None;
    for line in text.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        let (dir, max, current) = match controllers {
            // cgroup v2 is mounted at the root, or at `unified` beside v1's hierarchies (a hybrid system).
            "" if !root.join("cgroup.controllers").exists() => {
                (root.join("unified"), "memory.max", "memory.current")
            }
            "" => (root.to_path_buf(), "memory.max", "memory.current"),
            c if c.split(',').any(|c| c == "memory") => {
                (root.join("memory"), "memory.limit_in_bytes", "memory.usage_in_bytes")
            }
            _ => continue,
        };
        for d in ancestors(&dir, path) {
            if let Some(left) = left_in(&d, max, current) {
                least = Some(least.map_or(left, |l| l.min(left)));
            }
        }
    }
    least
}

/// `root/path` and each of its parents down to `root`.
fn ancestors(root: &Path, path: &str) -> Vec<PathBuf> {
    let mut dirs = vec![root.to_path_buf()];
    let mut d = root.to_path_buf();
    for part in path.split('/').filter(|p| !p.is_empty() && *p != "." && *p != "..") {
        d.push(part);
        dirs.push(d.clone());
    }
    dirs
}

/// `max` less `current` in the cgroup directory `dir`; None when unlimited ("max", or v1's near-2^63) or
/// unreadable.
fn left_in(dir: &Path, max: &str, current: &str) -> Option<u64> {
    let read = |name: &str| fs::read_to_string(dir.join(name)).ok()?.trim().parse::<u64>().ok();
    let limit = read(max).filter(|&l| l < 1 << 62)?;
    Some(limit.saturating_sub(read(current).unwrap_or(0)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_least_known_limit_bounds_and_is_named() {
        let h = least([
            (MemoryBound::Available, Some(8 << 30)),
            (MemoryBound::AddressSpace, Some(1 << 30)),
            (MemoryBound::Cgroup, None),
        ]);
        assert_eq!(h, MemoryHeadroom { bytes: 1 << 30, limit: MemoryBound::AddressSpace });
        assert!(h.fits(1 << 30) && !h.fits((1 << 30) + 1));
        let none = least([
            (MemoryBound::Available, None),
            (MemoryBound::AddressSpace, None),
            (MemoryBound::Cgroup, None),
        ]);
        assert!(none.fits(u64::MAX), "nothing known, nothing checked");
    }

    #[test]
    fn a_cgroup_limit_is_the_tightest_of_the_cgroup_and_its_ancestors() {
        let d = tempfile::tempdir().unwrap();
        let proc_cgroup = d.path().join("cgroup");
        fs::write(&proc_cgroup, "0::/a/b\n").unwrap();
        let root = d.path().join("fs");
        fs::create_dir_all(root.join("a/b")).unwrap();
        fs::write(root.join("cgroup.controllers"), "memory\n").unwrap();
        fs::write(root.join("a/memory.max"), "1073741824\n").unwrap();
        fs::write(root.join("a/memory.current"), "268435456\n").unwrap();
        fs::write(root.join("a/b/memory.max"), "max\n").unwrap();
        fs::write(root.join("a/b/memory.current"), "1000\n").unwrap();
        assert_eq!(cgroup_left(&proc_cgroup, &root), Some(768 << 20));
        fs::write(&proc_cgroup, "5:cpu:/x\n4:memory:/a\n").unwrap();
        fs::create_dir_all(root.join("memory/a")).unwrap();
        fs::write(root.join("memory/a/memory.limit_in_bytes"), "9223372036854771712\n").unwrap();
        assert_eq!(cgroup_left(&proc_cgroup, &root), None, "v1 unlimited");
        fs::write(root.join("memory/a/memory.limit_in_bytes"), "2048\n").unwrap();
        fs::write(root.join("memory/a/memory.usage_in_bytes"), "1024\n").unwrap();
        assert_eq!(cgroup_left(&proc_cgroup, &root), Some(1024));
    }
}
