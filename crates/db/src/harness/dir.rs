//! The database's directory: claimed and held by the write gate ([`iolab_device::HeldDir`]: by descriptor,
//! locked against a second run, taken only when new or marked as iolab's), made (or emptied) and marked
//! before anything goes in, and removed when the command ends, through the descriptors held since the claim:
//! on return and on error (by [`DbDir`]'s drop), and on an exit that skips destructors (a second Ctrl-C:
//! [`cleanup_on_exit`], which uses the same held descriptors, never the path). `--keep` leaves it, its
//! server stopped.

use crate::WorkloadError;
use iolab_device::HeldDir;
use std::path::Path;
use std::sync::{Arc, Mutex};

/// Directories to remove at an immediate exit.
static DIRS: Mutex<Vec<Arc<HeldDir>>> = Mutex::new(Vec::new());

fn dirs() -> std::sync::MutexGuard<'static, Vec<Arc<HeldDir>>> {
    DIRS.lock().unwrap_or_else(|p| p.into_inner())
}

/// A database directory iolab made.
#[derive(Debug)]
pub struct DbDir {
    held: Arc<HeldDir>,
    keep: bool,
}

impl DbDir {
    /// Makes the directory the gate claimed (new: created; iolab's: emptied), marks it, and registers it
    /// for removal at exit unless `keep`.
    pub fn make(mut held: HeldDir, keep: bool) -> Result<DbDir, WorkloadError> {
        held.make()
            .map_err(|e| WorkloadError::io(format!("making the directory '{}'", held.path().display()), e))?;
        let held = Arc::new(held);
        if !keep {
            dirs().push(Arc::clone(&held));
        }
        Ok(DbDir { held, keep })
    }

    /// Its absolute path (for the programs that take one: the server, the capture).
    pub fn path(&self) -> &Path {
        self.held.path()
    }
}

impl DbDir {
    /// Removes the directory now (unless `--keep`), saying in words why it was left when it cannot be
    /// removed (a mount point or another account's file inside it).
    pub fn remove(mut self) -> Result<(), String> {
        if self.keep {
            return Ok(());
        }
        self.keep = true;
        dirs().retain(|d| !Arc::ptr_eq(d, &self.held));
        self.held
            .remove()
            .map_err(|e| format!("the directory '{}' was left in place: {e}", self.held.path().display()))
    }
}

impl Drop for DbDir {
    fn drop(&mut self) {
        if !self.keep {
            let _ = self.held.remove();
            dirs().retain(|d| !Arc::ptr_eq(d, &self.held));
        }
    }
}

/// Removes every registered directory (call after the servers are stopped).
pub fn cleanup_on_exit() {
    remove_all(std::mem::take(&mut *dirs()));
}

/// Removes `held`, each through its held descriptors.
fn remove_all(held: Vec<Arc<HeldDir>>) {
    for d in held {
        let _ = d.remove();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_device::{DirState, WriteGate};

    fn claim(p: &Path) -> HeldDir {
        WriteGate::new().database_dir("--dir", &p.display().to_string(), &[]).unwrap()
    }

    #[test]
    fn a_db_dir_is_marked_emptied_when_ours_and_removed_on_drop() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("db");
        let d = DbDir::make(claim(&p), false).unwrap();
        std::fs::write(p.join("old"), b"x").unwrap();
        drop(d);
        assert!(!p.exists());
        let kept = DbDir::make(claim(&p), true).unwrap();
        std::fs::write(p.join("old"), b"x").unwrap();
        drop(kept);
        assert!(p.join("old").exists(), "--keep keeps it");
        let held = claim(&p);
        assert_eq!(held.state(), DirState::Ours);
        let again = DbDir::make(held, false).unwrap();
        assert!(!p.join("old").exists(), "an earlier directory of iolab's is emptied");
        drop(again);
        assert!(!p.exists());
    }

    #[test]
    fn cleanup_at_exit_removes_through_the_held_directory_not_the_path() {
        let t = tempfile::tempdir().unwrap();
        let parent = t.path().join("parent");
        std::fs::create_dir(&parent).unwrap();
        let victim = t.path().join("victim");
        std::fs::create_dir_all(victim.join("db")).unwrap();
        std::fs::write(victim.join("db/precious"), b"not iolab's").unwrap();
        let d = DbDir::make(claim(&parent.join("db")), false).unwrap();
        std::fs::rename(&parent, t.path().join("moved")).unwrap();
        std::os::unix::fs::symlink(&victim, &parent).unwrap();
        // What cleanup_on_exit does, limited to this test's directory (other tests' may be registered).
        let mine: Vec<Arc<HeldDir>> = dirs().iter().filter(|x| Arc::ptr_eq(x, &d.held)).cloned().collect();
        remove_all(mine);
        assert!(victim.join("db/precious").exists(), "the symlinked directory is untouched");
        assert!(!t.path().join("moved/db").exists());
        drop(d);
    }
}
