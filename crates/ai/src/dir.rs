//! The data directory: claimed and held by the caller's write gate ([`HeldDir`]: by descriptor, locked,
//! taken only when new or marked as iolab's), made and marked here, and removed through the held
//! descriptors on return, on error (drop) and at an exit that skips destructors ([`cleanup_on_exit`]).
//! As `iolab-db`'s database directory is.

use crate::AiError;
use iolab_device::HeldDir;
use std::path::Path;
use std::sync::{Arc, Mutex};

/// Directories to remove at an immediate exit.
static DIRS: Mutex<Vec<Arc<HeldDir>>> = Mutex::new(Vec::new());

fn dirs() -> std::sync::MutexGuard<'static, Vec<Arc<HeldDir>>> {
    DIRS.lock().unwrap_or_else(|p| p.into_inner())
}

/// A data directory iolab made.
pub struct DataDir {
    held: Option<Arc<HeldDir>>,
}

impl DataDir {
    /// Makes the claimed directory (new: created; iolab's: emptied) and registers it for removal.
    pub fn make(mut held: HeldDir) -> Result<DataDir, AiError> {
        held.make()
            .map_err(|e| AiError::io(format!("making the directory '{}'", held.path().display()), e))?;
        let held = Arc::new(held);
        dirs().push(Arc::clone(&held));
        Ok(DataDir { held: Some(held) })
    }

    /// Its absolute path.
    pub fn path(&self) -> &Path {
        self.held.as_ref().expect("held until removed").path()
    }

    /// Removes it now.
    pub fn remove(mut self) -> std::io::Result<()> {
        let held = self.held.take().expect("held until removed");
        dirs().retain(|d| !Arc::ptr_eq(d, &held));
        held.remove()
    }
}

impl Drop for DataDir {
    fn drop(&mut self) {
        if let Some(held) = self.held.take() {
            let _ = held.remove();
            dirs().retain(|d| !Arc::ptr_eq(d, &held));
        }
    }
}

/// Removes every data directory still registered (from a signal handler's exit path).
pub fn cleanup_on_exit() {
    for d in std::mem::take(&mut *dirs()) {
        let _ = d.remove();
    }
}
