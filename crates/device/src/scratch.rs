//! Scratch files: files iolab chose and created itself (a default run), removed when the process ends.
//!
//! A process-wide registry holds their paths. [`remove_scratch_files`] is called by [`ScratchGuard`]'s
//! `Drop` at a normal exit and by the CLI's signal-handling thread on Ctrl-C. A path is registered *before*
//! the file is created, so an interrupt during the (possibly long) fill still removes it; the creator checks
//! whether its path is still registered while filling and stops when the cleanup has already run.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

static SCRATCH: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn registry() -> MutexGuard<'static, Vec<PathBuf>> {
    // A panic while holding the lock leaves a valid Vec; keep using it so cleanup still happens.
    SCRATCH.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Remembers `path` for removal by [`remove_scratch_files`].
pub fn register_scratch(path: &Path) {
    let mut paths = registry();
    if !paths.iter().any(|p| p == path) {
        paths.push(path.to_path_buf());
    }
}

/// True while `path` is registered and not yet removed.
pub(crate) fn is_registered(path: &Path) -> bool {
    registry().iter().any(|p| p == path)
}

/// True while `path` (absolute, as registered) is a scratch file of this process not yet removed: a sweep's
/// later points reuse the scratch files of its first.
pub fn is_scratch(path: &Path) -> bool {
    is_registered(path)
}

/// Forgets `path` without removing it (used when creation failed and the caller cleaned up itself).
pub(crate) fn unregister_scratch(path: &Path) {
    registry().retain(|p| p != path);
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
    let paths = std::mem::take(&mut *registry());
    for path in paths {
        let _ = std::fs::remove_file(&path);
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
