//! Pseudo file systems: where a new file or directory is a kernel object, not storage. Making a directory in
//! cgroupfs creates a cgroup, one in tracefs's `instances/` a trace buffer, one in configfs a driver's object;
//! a file made in sysfs or procfs is a kernel setting. iolab never creates anything on one of them: every
//! path it would make (a new target with `--size`, an output, a database's `--dir`) is checked here first,
//! by the file system type (`statfs`'s `f_type`) of the nearest ancestor that exists.

use std::path::Path;

/// The pseudo file systems, by `statfs` magic number (linux/magic.h) and name.
const PSEUDO: [(i64, &str); 22] = [
    (0x9fa0, "proc"),
    (0x6265_6572, "sysfs"),
    (0x0027_e0eb, "cgroup"),
    (0x6367_7270, "cgroup2"),
    (0x7472_6163, "tracefs"),
    (0x6462_6720, "debugfs"),
    (0x6265_6570, "configfs"),
    (0x7363_6673, "securityfs"),
    (0xcafe_4a11, "bpf"),
    (0x6165_676c, "pstore"),
    (0xde5e_81e4, "efivarfs"),
    (0xf97c_ff8c, "selinuxfs"),
    (0x4341_5d53, "smackfs"),
    (0x6573_5543, "fusectl"),
    (0x4249_4e4d, "binfmt_misc"),
    (0x1cd1, "devpts"),
    (0x1980_0202, "mqueue"),
    (0x6e73_6673, "nsfs"),
    (0x0187, "autofs"),
    (0x6759_6969, "rpc_pipefs"),
    (0x6e66_7364, "nfsd"),
    (0x5346_414f, "openpromfs"),
];

/// The pseudo file system `path` would be made on, by name (`cgroup2`, `tracefs`): the type of its nearest
/// existing ancestor (itself when it exists), or `None` on a real file system (or when nothing can be read).
pub fn pseudo_fs_of(path: &Path) -> Option<&'static str> {
    let absolute = std::path::absolute(path).ok()?;
    let existing = absolute.ancestors().find(|p| std::fs::symlink_metadata(p).is_ok())?;
    let kind = nix::sys::statfs::statfs(existing).ok()?.filesystem_type().0 as i64;
    PSEUDO.iter().find(|(magic, _)| *magic == kind).map(|(_, name)| *name)
}

/// Why nothing may be made at or under `path` (it is on a pseudo file system), in words for a refusal;
/// `None` when it may.
pub fn refuse_pseudo_fs(path: &Path) -> Option<String> {
    pseudo_fs_of(path).map(|fs| {
        format!(
            "'{}' is on a pseudo file system ({fs}), where a new file or directory is a kernel object, not storage; give a path on a real file system",
            path.display()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_and_sys_are_pseudo_and_a_temporary_directory_is_not() {
        assert_eq!(pseudo_fs_of(Path::new("/proc/iolab-no-such/x")), Some("proc"));
        assert_eq!(pseudo_fs_of(Path::new("/sys/iolab-no-such")), Some("sysfs"));
        let t = tempfile::tempdir().unwrap();
        assert_eq!(pseudo_fs_of(&t.path().join("new/deeper")), None);
        assert!(refuse_pseudo_fs(Path::new("/proc/x"))
            .unwrap()
            .contains("'/proc/x' is on a pseudo file system (proc)"));
    }
}
