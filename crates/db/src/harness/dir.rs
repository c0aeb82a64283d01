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
static DIRS: RemovalList = RemovalList::new();

/// The directories an immediate exit must remove. A removal holds the lock from its first unlink to its
/// last, so an exit that begins while the command is removing a directory waits for that removal instead
/// of finding the directory gone from the list and exiting with it half removed.
#[derive(Debug)]
pub(crate) struct RemovalList {
    dirs: Mutex<Vec<Arc<HeldDir>>>,
}

impl RemovalList {
    pub(crate) const fn new() -> RemovalList {
        RemovalList { dirs: Mutex::new(Vec::new()) }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Arc<HeldDir>>> {
        self.dirs.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn register(&self, held: &Arc<HeldDir>) {
        self.lock().push(Arc::clone(held));
    }

    /// Removes `held` and forgets it, under the lock.
    fn remove(&self, held: &Arc<HeldDir>) -> std::io::Result<()> {
        let mut dirs = self.lock();
        let removed = held.remove();
        dirs.retain(|d| !Arc::ptr_eq(d, held));
        removed
    }

    /// Removes every registered directory, each through its held descriptors, under the lock.
    fn remove_all(&self) {
        let mut dirs = self.lock();
        for d in std::mem::take(&mut *dirs) {
            let _ = d.remove();
        }
    }
}

/// A database directory iolab made.
#[derive(Debug)]
pub struct DbDir {
    held: Arc<HeldDir>,
    keep: bool,
    registry: &'static RemovalList,
}

impl DbDir {
    /// Makes the directory the gate claimed (new: created; iolab's: emptied), marks it, and registers it
    /// for removal at exit unless `keep`.
    pub fn make(held: HeldDir, keep: bool) -> Result<DbDir, WorkloadError> {
        DbDir::make_in(&DIRS, held, keep)
    }

    fn make_in(
        registry: &'static RemovalList,
        mut held: HeldDir,
        keep: bool,
    ) -> Result<DbDir, WorkloadError> {
        held.make()
            .map_err(|e| WorkloadError::io(format!("making the directory '{}'", held.path().display()), e))?;
        let held = Arc::new(held);
        if !keep {
            registry.register(&held);
        }
        Ok(DbDir { held, keep, registry })
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
        self.registry
            .remove(&self.held)
            .map_err(|e| format!("the directory '{}' was left in place: {e}", self.held.path().display()))
    }
}

impl Drop for DbDir {
    fn drop(&mut self) {
        if !self.keep {
            let _ = self.registry.remove(&self.held);
        }
    }
}

/// Removes every registered directory (call after the servers are stopped), waiting for a removal under way.
pub fn cleanup_on_exit() {
    DIRS.remove_all();
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
        let registry: &'static RemovalList = Box::leak(Box::new(RemovalList::new()));
        let d = DbDir::make_in(registry, claim(&parent.join("db")), false).unwrap();
        std::fs::rename(&parent, t.path().join("moved")).unwrap();
        std::os::unix::fs::symlink(&victim, &parent).unwrap();
        // What cleanup_on_exit does, on a registry of this test's own (other tests' use the global one).
        d.registry.remove_all();
        assert!(victim.join("db/precious").exists(), "the symlinked directory is untouched");
        assert!(!t.path().join("moved/db").exists());
        drop(d);
    }

    #[test]
    fn an_exit_during_a_removal_waits_for_it() {
        const FILES: usize = 20_000;
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("db");
        let registry: &'static RemovalList = Box::leak(Box::new(RemovalList::new()));
        let d = DbDir::make_in(registry, claim(&p), false).unwrap();
        for i in 0..FILES {
            std::fs::File::create(p.join(format!("f{i}"))).unwrap();
        }
        let removing = std::thread::spawn(move || d.remove());
        // The command's removal has begun (or ended) ...
        while std::fs::read_dir(&p).is_ok_and(|r| r.count() >= FILES) {
            std::thread::yield_now();
        }
        // ... when the exit comes: it must not return before the directory is gone.
        registry.remove_all();
        assert!(!p.exists(), "the exit returned with the directory half removed");
        removing.join().unwrap().unwrap();
    }
}
