//! Scratch files: files iolab chose and created itself (a default run), removed when the process ends.
//!
//! A process-wide registry holds each one's directory (by descriptor, from the registration on) and name. [`remove_scratch_files`] is called by [`ScratchGuard`]'s
//! `Drop` at a normal exit and by the CLI's signal-handling thread on Ctrl-C. A path is registered *before*
//! the file is created, so an interrupt during the (possibly long) fill still removes it; the creator checks
//! whether its path is still registered while filling and stops when the cleanup has already run.

use nix::fcntl::AtFlags;
use nix::sys::stat::fstatat;
use nix::unistd::{unlinkat, UnlinkatFlags};
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

/// One scratch file: its directory, held by descriptor from the registration on, its name there, and, once
/// it was created, its identity. The removal is an `unlinkat` in the held directory, and only of a regular
/// file that is still the one iolab created: a directory swapped for a symlink, or another file put at the
/// name, is never what iolab removes.
#[derive(Debug)]
struct Entry {
    /// The absolute path at the registration: what callers match on and messages show.
    path: PathBuf,
    dir: Arc<File>,
    name: OsString,
    /// Device and inode of the file once created; `None` while it is being created.
    identity: Option<(u64, u64)>,
}

impl Entry {
    /// Removes the file from the held directory when it is still a regular file and still the one created.
    fn remove(&self) {
        let Ok(st) = fstatat(&*self.dir, self.name.as_os_str(), AtFlags::AT_SYMLINK_NOFOLLOW) else { return };
        let regular = st.st_mode & libc::S_IFMT == libc::S_IFREG;
        let same = self.identity.is_none_or(|id| id == (st.st_dev, st.st_ino));
        if regular && same {
            let _ = unlinkat(&*self.dir, self.name.as_os_str(), UnlinkatFlags::NoRemoveDir);
        }
    }
}

static SCRATCH: Mutex<Vec<Entry>> = Mutex::new(Vec::new());

fn registry() -> MutexGuard<'static, Vec<Entry>> {
    // A panic while holding the lock leaves a valid Vec; keep using it so cleanup still happens.
    SCRATCH.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Remembers `path` (absolute) for removal by [`remove_scratch_files`]: its directory is opened and held
/// now, so the removal goes to the directory the path named at this moment. Fails when the directory
/// cannot be opened (then nothing can be created in it either).
pub fn register_scratch(path: &Path) -> std::io::Result<()> {
    let name = path.file_name().ok_or_else(|| {
        std::io::Error::new(std::io::ErrorKind::InvalidInput, format!("'{}' names no file", path.display()))
    })?;
    let parent = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let dir = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY | libc::O_CLOEXEC)
        .open(parent)?;
    register_in(&Arc::new(dir), name, path.to_path_buf());
    Ok(())
}

/// Remembers `name` in the held directory `dir` (shown and matched as `path`).
pub(crate) fn register_in(dir: &Arc<File>, name: &OsStr, path: PathBuf) {
    let mut entries = registry();
    if !entries.iter().any(|e| e.path == path) {
        entries.push(Entry { path, dir: Arc::clone(dir), name: name.to_os_string(), identity: None });
    }
}

/// Creates the registered scratch file `path` (0644, O_EXCL|O_NOFOLLOW) in its held directory and records
/// its identity ([`created`]).
pub(crate) fn create(path: &Path) -> std::io::Result<File> {
    use nix::fcntl::{openat, OFlag};
    let (dir, name) =
        registry().iter().find(|e| e.path == path).map(|e| (Arc::clone(&e.dir), e.name.clone())).ok_or_else(
            || std::io::Error::other(format!("'{}' is not a registered scratch file", path.display())),
        )?;
    let flags = OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    let file =
        File::from(openat(&*dir, name.as_os_str(), flags, nix::sys::stat::Mode::from_bits_truncate(0o644))?);
    created(path, &file);
    Ok(file)
}

/// Records that the scratch file at `path` is now `file`: only that file is removed at the end, not
/// another one put at its name.
pub(crate) fn created(path: &Path, file: &File) {
    if let (Some(entry), Ok(meta)) = (registry().iter_mut().find(|e| e.path == path), file.metadata()) {
        entry.identity = Some((meta.dev(), meta.ino()));
    }
}

/// True while `path` is registered and not yet removed.
pub(crate) fn is_registered(path: &Path) -> bool {
    registry().iter().any(|e| e.path == path)
}

/// True while `path` (absolute, as registered) is a scratch file of this process not yet removed: a sweep's
/// later points reuse the scratch files of its first.
pub fn is_scratch(path: &Path) -> bool {
    is_registered(path)
}

/// Removes the scratch file `path` now (as [`remove_scratch_files`] would) and forgets it.
pub(crate) fn remove(path: &Path) {
    let mut entries = registry();
    if let Some(i) = entries.iter().position(|e| e.path == path) {
        entries.swap_remove(i).remove();
    }
}

/// Forgets `path` without removing it (used when creation failed and the caller cleaned up itself).
pub(crate) fn unregister_scratch(path: &Path) {
    registry().retain(|e| e.path != path);
}

/// Scratch files in `dir` left by iolab processes that no longer run (a `kill -9`, a crash, a power loss):
/// files named `iolab-scratch-PID...dat` whose PID has no /proc entry. Only listed, never removed: the name
/// alone does not prove whose a file is.
pub fn stale_scratch_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut stale: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let Some(rest) = name.strip_prefix("iolab-scratch-").filter(|_| name.ends_with(".dat")) else {
                return false;
            };
            let pid: String = rest.chars().take_while(char::is_ascii_digit).collect();
            !pid.is_empty() && !Path::new("/proc").join(&pid).exists()
        })
        .map(|e| e.path())
        .collect();
    stale.sort();
    stale
}

/// Removes every registered scratch file and forgets it. Idempotent; a file that is already gone is fine
/// and other errors are ignored (this runs at exit, when nobody can act on them). Safe to call from any thread.
pub fn remove_scratch_files() {
    let entries = std::mem::take(&mut *registry());
    for entry in entries {
        entry.remove();
    }
}

/// Removes the registered scratch files when dropped. Keep one alive in `main` for the whole run.
#[derive(Debug, Default)]
pub struct ScratchGuard;

impl Drop for ScratchGuard {
    fn drop(&mut self) {
        remove_scratch_files()
    }
}
