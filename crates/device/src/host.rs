//! Facts about the machine and the storage under a directory, for the `env` block that run results and
//! database documents share: hostname, kernel, CPU, and a directory's file system, mount options, device and
//! write cache. Read from /proc and /sys; a fact that cannot be read is "unknown" or absent, never guessed.

use crate::sys;
use std::path::Path;

fn read_trim(path: &str) -> Option<String> {
    std::fs::read_to_string(path).ok().map(|s| s.trim().to_string()).filter(|s| !s.is_empty())
}

/// Host name.
pub fn hostname() -> String {
    read_trim("/proc/sys/kernel/hostname").unwrap_or_else(|| "unknown".into())
}

/// Kernel release.
pub fn kernel() -> String {
    read_trim("/proc/sys/kernel/osrelease").map(|r| format!("Linux {r}")).unwrap_or_else(|| "unknown".into())
}

/// CPU model name.
pub fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into())
}

/// CPUs this process may run on.
pub fn cpu_count() -> u32 {
    std::thread::available_parallelism().map(|n| n.get() as u32).unwrap_or(1)
}

/// The storage under a directory: its file system as mounted, and the block device under it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DirStorage {
    /// The file system type (`ext4`), from /proc/self/mountinfo.
    pub fs_type: Option<String>,
    /// The mount's options then the file system's own (`rw,relatime,errors=remount-ro`), each once; options
    /// naming a path (overlayfs' `lowerdir=`) left out.
    pub mount_options: Option<String>,
    /// The device's kernel name and model (`vda`, `nvme0n1 (Samsung SSD 980)`); none for a file system on no
    /// block device (tmpfs, overlay, NFS).
    pub device: Option<String>,
    /// The device's logical block size.
    pub logical_block_size: Option<u32>,
    /// The device's write cache as the kernel drives it (sysfs `queue/write_cache`: `write back` or
    /// `write through`).
    pub write_cache: Option<String>,
}

/// What [`DirStorage`] says of the directory `dir`.
pub fn storage_of(dir: &Path) -> DirStorage {
    use std::os::unix::fs::MetadataExt;
    let canonical = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let mount = sys::mount_of(&canonical);
    let info =
        std::fs::metadata(&canonical).ok().and_then(|m| sys::block_info_for_fs(m.dev(), mount.as_ref()));
    let write_cache = info.as_ref().and_then(|i| {
        let queue = if i.sys_dir.join("partition").exists() {
            i.sys_dir.parent()?.join("queue")
        } else {
            i.sys_dir.join("queue")
        };
        read_trim(queue.join("write_cache").to_str()?)
    });
    DirStorage {
        fs_type: mount.as_ref().map(|m| m.fs_type.clone()),
        mount_options: mount.as_ref().map(|m| mount_options(&m.options, &m.super_options)),
        device: info.as_ref().map(|i| match &i.model {
            Some(model) => format!("{} ({model})", i.name),
            None => i.name.clone(),
        }),
        logical_block_size: info.as_ref().and_then(|i| i.logical_block_size),
        write_cache,
    }
}

/// The mount's options, then the file system's not already among them, without those naming a path.
fn mount_options(options: &str, super_options: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    for o in options.split(',').chain(super_options.split(',')) {
        if !o.is_empty() && !o.contains('/') && !out.contains(&o) {
            out.push(o);
        }
    }
    out.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mount_options_are_listed_once_without_paths() {
        assert_eq!(mount_options("rw,relatime", "rw,errors=remount-ro"), "rw,relatime,errors=remount-ro");
        assert_eq!(mount_options("rw", "rw,lowerdir=/a:/b,upperdir=/c,xino=off"), "rw,xino=off");
    }

    #[test]
    fn the_storage_of_a_directory_names_its_file_system_and_options() {
        let dir = std::env::temp_dir();
        let s = storage_of(&dir);
        assert!(s.fs_type.is_some(), "{s:?}");
        assert!(s.mount_options.as_deref().is_some_and(|o| o.starts_with("r")), "{s:?}");
    }
}
