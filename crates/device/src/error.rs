//! Errors of the target stage.
//!
//! Every error names the path the user typed. Environment errors add a `  likely cause: …` and/or a
//! `  hint: …` line, so the CLI can print the error as is (the shape of ripgrep's and TigerBeetle's `io/linux.zig` errors).
//! Every refusal happens before anything is created or modified: a `TargetError` means the target is as it was.

use std::io;

/// Hint printed when O_DIRECT is not available.
pub const HINT_BUFFERED: &str = "use --buffered to go through the page cache (the report will say so)";

/// The advice when a file does not fit its file system; a caller that set the size for the user (Exchange
/// sizing) replaces it with the flags that made the size.
pub const HINT_SMALLER_SIZE: &str = "give a smaller --size or a path on another file system";

/// Hint printed when a block device cannot be opened for lack of permission.
pub const HINT_DISK_GROUP: &str = "run as root or add your user to the 'disk' group";

/// Why a target could not be probed or opened.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TargetError {
    /// A `@name` reference reached the target stage unresolved (the plan resolves them).
    #[error("target '@{name}' was not resolved to a declared target (a bug in iolab)")]
    Unresolved {
        /// The name.
        name: String,
    },
    /// The path does not exist and no `--size` was given to create it.
    #[error("'{path}' does not exist; give --size to create it")]
    NotFound {
        /// The path as typed.
        path: String,
    },
    /// The directory a new file would go in does not exist.
    #[error("cannot create '{path}': directory '{dir}' does not exist")]
    DirectoryMissing {
        /// The path as typed.
        path: String,
        /// Its parent directory.
        dir: String,
    },
    /// A new file would be made on a pseudo file system (cgroupfs, tracefs, sysfs, ...), where it is a kernel
    /// object ([`crate::pseudofs`]).
    #[error("cannot create '{path}': {why}")]
    PseudoFs {
        /// The path as typed.
        path: String,
        /// Why, naming the file system.
        why: String,
    },
    /// The parent of a new file is not a directory.
    #[error("cannot create '{path}': '{dir}' is not a directory")]
    ParentNotDirectory {
        /// The path as typed.
        path: String,
        /// Its parent.
        dir: String,
    },
    /// The target is a directory.
    #[error("'{path}' is a directory; give a file path inside it")]
    IsDirectory {
        /// The path as typed.
        path: String,
    },
    /// The target is a character device, FIFO or socket.
    #[error("'{path}' is a {file_type}; expected a regular file or a block device")]
    UnsupportedFileType {
        /// The path as typed.
        path: String,
        /// What it is, e.g. "character device".
        file_type: &'static str,
    },
    /// An existing file of length 0 and no `--size`.
    #[error(
        "'{path}' is empty (0 bytes): only a write job that gives --size fills a file (a read-only run does not)\n  hint: fill it first with a write job and its size (for example `--rw write --size 1G`), or give another path"
    )]
    Empty {
        /// The path as typed.
        path: String,
    },
    /// A read-only run would need to extend a file.
    #[error(
        "'{path}' is {}, smaller than --size {}; a read-only run does not extend files\n  hint: extend it first with a write job (`--rw write --size {}`), or give a --size of {} or less",
        format_bytes(*size_bytes),
        format_bytes(*wanted_bytes),
        iolab_spec::units::format_size(*wanted_bytes),
        iolab_spec::units::format_size(*size_bytes)
    )]
    TooSmall {
        /// The path as typed.
        path: String,
        /// Its current length.
        size_bytes: u64,
        /// The `--size` asked for.
        wanted_bytes: u64,
    },
    /// `--size` is unusable (for example 0).
    #[error("invalid --size {size_bytes} for '{path}': expected {expected}")]
    InvalidSize {
        /// The path or target name.
        path: String,
        /// The size given.
        size_bytes: u64,
        /// What was expected.
        expected: &'static str,
    },
    /// `--size` was given for a block device, whose size is fixed.
    #[error("--size cannot be used with block device '{path}': its size is fixed ({})", format_bytes(*size_bytes))]
    SizeOnBlockDevice {
        /// The path as typed.
        path: String,
        /// The device's size.
        size_bytes: u64,
    },
    /// A job writes to a block device without `--allow-write-device`.
    #[error(
        "refusing to write to block device '{path}': give --allow-write-device to allow writes (this destroys its data)"
    )]
    WriteDeviceNotAllowed {
        /// The path as typed.
        path: String,
    },
    /// A job would write to a device or file that is in use: it, or anything built on it, is mounted, used as
    /// swap, held open, locked or mapped by another process, or stacked on. Never overridden, not even by
    /// --destroy-data.
    #[error("refusing to write to '{path}': {usage}; what is in use is never written, not even with --destroy-data: unmount it (or swapoff it, or stop what holds it) first")]
    DeviceInUse {
        /// The path as typed.
        path: String,
        /// What uses it, e.g. "'/dev/sda1' is mounted at /boot".
        usage: String,
    },
    /// A job would write to a device, or a regular file, whose first bytes carry a filesystem, volume,
    /// partition-table or database signature (a disk image, iolab's own catalog).
    #[error("refusing to write to '{path}': it carries {} {signature} signature; give --destroy-data to overwrite it", article(signature))]
    DeviceSignature {
        /// The path as typed.
        path: String,
        /// What [`crate::signature::identify`] found.
        signature: String,
    },
    /// A job would write a file with several names in a world-writable directory: any user could have made
    /// that name, a hard link to a file elsewhere (the kernel's protected-hardlinks rule, enforced by iolab).
    #[error("refusing to write to '{path}': it has {links} names and sits in the world-writable directory '{dir}', where any user could have made it a hard link to a file elsewhere; give the path of a file iolab creates, or one outside such a directory")]
    SharedHardLink {
        /// The path as typed.
        path: String,
        /// Its number of names (st_nlink).
        links: u64,
        /// The world-writable directory.
        dir: String,
    },
    /// A job would write to an existing file that iolab did not make, or that changed since iolab last wrote
    /// it ([`crate::ownership`]).
    #[error(
        "refusing to write to '{path}': it is an existing file ({}, {holds}) {}, and a write job would overwrite its data; type --overwrite if it may be lost, or give a path that does not exist (created with --size)",
        format_bytes(*size_bytes),
        not_ours_why(*mark)
    )]
    NotIolabs {
        /// The path as typed.
        path: String,
        /// Its length.
        size_bytes: u64,
        /// What it appears to hold ("text", "zeros", "binary data").
        holds: &'static str,
        /// What its mark says.
        mark: crate::ownership::Mark,
    },
    /// Permission denied (EACCES or EPERM).
    #[error("cannot {action} '{path}': {source}\n  hint: {hint}")]
    PermissionDenied {
        /// The path as typed.
        path: String,
        /// What was attempted, e.g. "open for writing".
        action: &'static str,
        /// The OS error.
        source: io::Error,
        /// What to do.
        hint: &'static str,
    },
    /// The file system holding the target is mounted read-only and the job writes or creates.
    #[error(
        "cannot write to '{path}': the file system{} is read-only (EROFS)\n  hint: give a path on a writable file system, or run a read-only job",
        mount_point.as_deref().map(|m| format!(" mounted at {m}")).unwrap_or_default()
    )]
    ReadOnlyFs {
        /// The path as typed.
        path: String,
        /// Where the file system is mounted, when known.
        mount_point: Option<String>,
    },
    /// Not enough free space to create or extend a file (checked up front, or ENOSPC/EDQUOT while filling).
    #[error(
        "not enough space to fill '{path}' with {}{}\n  hint: {HINT_SMALLER_SIZE}",
        format_bytes(*needed_bytes),
        available_bytes.map(|a| format!(": {} available", format_bytes(a))).unwrap_or_else(|| ": no space left on device (ENOSPC)".into())
    )]
    NoSpace {
        /// The path as typed.
        path: String,
        /// Bytes that had to be written.
        needed_bytes: u64,
        /// Free bytes for an unprivileged user, when checked up front.
        available_bytes: Option<u64>,
    },
    /// O_DIRECT open failed with EINVAL. iolab never falls back to buffered I/O silently.
    #[error(
        "cannot open '{path}' with O_DIRECT: {source}\n  likely cause: the filesystem{} does not support direct I/O\n  hint: {HINT_BUFFERED}",
        fs_type.as_deref().map(|t| format!(" ({t})")).unwrap_or_default()
    )]
    DirectUnsupported {
        /// The path as typed.
        path: String,
        /// File system type from /proc/self/mountinfo, when known.
        fs_type: Option<String>,
        /// The OS error (EINVAL).
        source: io::Error,
    },
    /// A `mem:` target larger than the memory available.
    #[error(
        "cannot allocate a RAM disk of {}: only {} of memory is available ({})\n  hint: give a smaller mem:SIZE",
        format_bytes(*requested_bytes),
        format_bytes(*available_bytes),
        limit.describe()
    )]
    OutOfMemory {
        /// Bytes asked for.
        requested_bytes: u64,
        /// Bytes available.
        available_bytes: u64,
        /// The limit that bounds them.
        limit: crate::MemoryBound,
    },
    /// The path iolab chose for a scratch file is taken (by a file or a symlink created meanwhile): it is not
    /// reused, followed or overwritten.
    #[error("the scratch path '{path}' is taken by a file or symlink iolab did not create; it was not touched\n  hint: remove it, or set IOLAB_SCRATCH_DIR to another directory")]
    ScratchTaken {
        /// The path.
        path: String,
    },
    /// A stop was requested (Ctrl-C) while this file was being created or filled; what was created has been
    /// removed, and an extended file cut back to its old size.
    #[error("filling '{path}' was interrupted; what was created has been removed")]
    Interrupted {
        /// The path.
        path: String,
    },
    /// Any other I/O error.
    #[error("cannot {action} '{path}': {source}")]
    Io {
        /// The path as typed.
        path: String,
        /// What was attempted.
        action: &'static str,
        /// The OS error.
        source: io::Error,
    },
}

impl TargetError {
    /// Maps an OS error from `action` on `path` to the most specific variant.
    /// `device` selects the hint for permission errors.
    pub(crate) fn from_io(path: &str, action: &'static str, source: io::Error, device: bool) -> TargetError {
        let path = path.to_string();
        match source.raw_os_error() {
            Some(libc::EACCES) | Some(libc::EPERM) => TargetError::PermissionDenied {
                path,
                action,
                source,
                hint: if device && running_as_root() {
                    "access is blocked by a container or security policy (device cgroup, SELinux, AppArmor); check those"
                } else if device {
                    HINT_DISK_GROUP
                } else {
                    "check the permissions of the file and its directory, or give another path"
                },
            },
            Some(libc::EROFS) => TargetError::ReadOnlyFs { path, mount_point: None },
            Some(libc::ENOENT) => TargetError::NotFound { path },
            _ => TargetError::Io { path, action, source },
        }
    }
}

/// The effective user is root (owner of /proc/self).
pub(crate) fn running_as_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

/// "a" or "an" before a signature description.
pub(crate) fn article(what: &str) -> &'static str {
    let an = what.starts_with(['a', 'e', 'i', 'o', 'u', 'x'])
        || what.starts_with("LVM")
        || what.starts_with("NTFS");
    if an {
        "an"
    } else {
        "a"
    }
}

/// Formats a byte count for messages: "1 GiB", "1.5 GiB", "512 MiB", "1000 bytes".
pub fn format_bytes(n: u64) -> String {
    for (unit, shift) in [("TiB", 40), ("GiB", 30), ("MiB", 20), ("KiB", 10)] {
        let scale = 1u64 << shift;
        if n >= scale {
            if n % scale == 0 {
                return format!("{} {unit}", n / scale);
            }
            return format!("{:.1} {unit}", n as f64 / scale as f64);
        }
    }
    format!("{n} bytes")
}

/// Why a file is not iolab's to write, in words, for [`TargetError::NotIolabs`].
fn not_ours_why(mark: crate::ownership::Mark) -> &'static str {
    use crate::ownership::Mark;
    match mark {
        Mark::Changed => "that changed since iolab last wrote it (its size, time stamps or inode changed after iolab's mark was set: other data copied over it, or a run that was killed before it could seal the file)",
        Mark::Unsupported => "that iolab did not make (its file system keeps no extended attributes, so iolab cannot mark the files it makes there)",
        Mark::Ours | Mark::Unmarked => "that iolab did not make",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_bytes_exact_and_fractional() {
        assert_eq!(format_bytes(1 << 30), "1 GiB");
        assert_eq!(format_bytes(3 << 29), "1.5 GiB");
        assert_eq!(format_bytes(100), "100 bytes");
    }

    #[test]
    fn too_small_message_names_sizes() {
        let e = TargetError::TooSmall { path: "/x".into(), size_bytes: 1 << 30, wanted_bytes: 8 << 30 };
        assert_eq!(
            e.to_string(),
            "'/x' is 1 GiB, smaller than --size 8 GiB; a read-only run does not extend files\n  \
             hint: extend it first with a write job (`--rw write --size 8G`), or give a --size of 1G or less"
        );
    }

    #[test]
    fn empty_message_advises_a_write_job_not_size_on_a_read() {
        let e = TargetError::Empty { path: "/x".into() };
        assert_eq!(
            e.to_string(),
            "'/x' is empty (0 bytes): only a write job that gives --size fills a file (a read-only run does \
             not)\n  hint: fill it first with a write job and its size (for example `--rw write --size 1G`), \
             or give another path"
        );
    }

    #[test]
    fn signature_message_uses_article() {
        let e =
            TargetError::DeviceSignature { path: "/dev/loop0".into(), signature: "ext4 filesystem".into() };
        assert_eq!(
            e.to_string(),
            "refusing to write to '/dev/loop0': it carries an ext4 filesystem signature; give --destroy-data to overwrite it"
        );
    }
}
