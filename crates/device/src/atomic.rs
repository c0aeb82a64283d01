//! A file's or block device's atomic-write limits, as statx reports them (STATX_WRITE_ATOMIC, Linux 6.11):
//! what the `atomic` key checks before anything is written.

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// The smallest and largest atomic write (statx `stx_atomic_write_unit_min`, `_max`) of the file or device at
/// `path`; `None` where statx reports no atomic-write limits for it (a kernel or file system without them).
/// An error for a path statx cannot read (it does not exist, ...).
#[allow(unsafe_code)]
pub fn atomic_write_limits(path: &Path) -> io::Result<Option<(u32, u32)>> {
    let c = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a path with a NUL byte"))?;
    // SAFETY: an all-zero statx is a valid value of this plain C struct.
    let mut stx: libc::statx = unsafe { std::mem::zeroed() };
    // SAFETY: statx reads the NUL-terminated `c` and writes only into `stx`, which we own.
    if unsafe { libc::statx(libc::AT_FDCWD, c.as_ptr(), 0, libc::STATX_WRITE_ATOMIC, &mut stx) } != 0 {
        return Err(io::Error::last_os_error());
    }
    if stx.stx_mask & libc::STATX_WRITE_ATOMIC == 0 {
        return Ok(None);
    }
    Ok(Some((stx.stx_atomic_write_unit_min, stx.stx_atomic_write_unit_max)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_path_is_an_error_and_a_tmpfs_file_has_no_atomic_unit() {
        assert!(atomic_write_limits(Path::new("/nonexistent/iolab-atomic")).is_err());
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("f");
        std::fs::write(&f, [0u8; 4096]).unwrap();
        // Whatever the file system, a unit max of 0 or no limits at all means no atomic writes; never an error.
        let limits = atomic_write_limits(&f).unwrap();
        assert!(limits.is_none_or(|(min, max)| min <= max));
    }
}
