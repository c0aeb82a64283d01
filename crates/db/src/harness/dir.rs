//! The database's directory: made by iolab (or an earlier iolab's, which the write gate let through),
//! marked as iolab's before anything goes in ([`iolab_device::ownership::mark_dir`]), and removed when the
//! command ends: on return and on error (by [`DbDir`]'s drop), and on an exit that skips destructors (a
//! second Ctrl-C: [`cleanup_on_exit`]). `--keep` leaves it, its server stopped.

use crate::WorkloadError;
use iolab_device::DirState;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Directories to remove at an immediate exit.
static DIRS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn dirs() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    DIRS.lock().unwrap_or_else(|p| p.into_inner())
}

/// A database directory iolab made.
#[derive(Debug)]
pub struct DbDir {
    path: PathBuf,
    keep: bool,
}

impl DbDir {
    /// Makes the directory `path` as the gate found it (`New`: created; `Ours`: emptied and made again),
    /// marks it, and registers it for removal at exit unless `keep`.
    pub fn make(path: &Path, state: DirState, keep: bool) -> Result<DbDir, WorkloadError> {
        let path = std::path::absolute(path)
            .map_err(|e| WorkloadError::io(format!("resolving '{}'", path.display()), e))?;
        if !keep {
            dirs().push(path.clone());
        }
        let dir = DbDir { path, keep };
        if state == DirState::Ours {
            std::fs::remove_dir_all(&dir.path).map_err(|e| {
                WorkloadError::io(format!("emptying iolab's earlier directory '{}'", dir.path.display()), e)
            })?;
        }
        std::fs::create_dir(&dir.path)
            .map_err(|e| WorkloadError::io(format!("creating '{}'", dir.path.display()), e))?;
        iolab_device::ownership::mark_dir(&dir.path)
            .map_err(|e| WorkloadError::io(format!("marking '{}' as iolab's", dir.path.display()), e))?;
        Ok(dir)
    }

    /// Its absolute path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for DbDir {
    fn drop(&mut self) {
        if !self.keep {
            let _ = std::fs::remove_dir_all(&self.path);
            dirs().retain(|p| p != &self.path);
        }
    }
}

/// Removes every registered directory (call after the servers are stopped).
pub fn cleanup_on_exit() {
    for p in std::mem::take(&mut *dirs()) {
        let _ = std::fs::remove_dir_all(&p);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_db_dir_is_marked_emptied_when_ours_and_removed_on_drop() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("db");
        let d = DbDir::make(&p, DirState::New, false).unwrap();
        assert!(iolab_device::ownership::dir_is_ours(&p));
        std::fs::write(p.join("old"), b"x").unwrap();
        drop(d);
        assert!(!p.exists());
        let kept = DbDir::make(&p, DirState::New, true).unwrap();
        std::fs::write(p.join("old"), b"x").unwrap();
        drop(kept);
        assert!(p.join("old").exists(), "--keep keeps it");
        let again = DbDir::make(&p, DirState::Ours, false).unwrap();
        assert!(!p.join("old").exists(), "an earlier directory of iolab's is emptied");
        drop(again);
        assert!(!p.exists());
    }
}
