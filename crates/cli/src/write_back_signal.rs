//! Write-back on demand: `kill -USR1 <pid>` asks the running job's block cache to write back every dirty line
//! now ([`iolab_cache::Cache::request_write_back`]); the workers' cache engines hand the lines out at their next
//! turn, while the run goes on. Each request is counted in the result (`cache.flush_requests`, the document's
//! name for them).
//!
//! The handler has its own signal_hook iterator thread (Ctrl-C and SIGTERM live in `signals`). It is
//! installed by the first run with a cache, before its workers start, and stays for the life of the process;
//! [`register`] makes a run's cache the one a signal reaches, until the returned guard drops. A SIGUSR1 with
//! no run in progress is ignored (once installed, it no longer terminates the process).

use iolab_cache::Cache;
use std::sync::{Arc, Mutex, MutexGuard, Once};

/// The cache of the run in progress, if any.
static CURRENT: Mutex<Option<Arc<Cache>>> = Mutex::new(None);
static INSTALL: Once = Once::new();

fn current() -> MutexGuard<'static, Option<Arc<Cache>>> {
    CURRENT.lock().unwrap_or_else(|p| p.into_inner())
}

/// Clears the registration when dropped (the run is over).
#[must_use = "the cache stays registered only while the guard lives"]
pub struct WriteBackGuard(());

impl Drop for WriteBackGuard {
    fn drop(&mut self) {
        *current() = None;
    }
}

/// Makes `cache` the one SIGUSR1 writes back, installing the handler on first use.
pub fn register(cache: Arc<Cache>) -> WriteBackGuard {
    INSTALL.call_once(install);
    *current() = Some(cache);
    WriteBackGuard(())
}

fn install() {
    let Ok(mut signals) = signal_hook::iterator::Signals::new([signal_hook::consts::SIGUSR1]) else {
        return;
    };
    std::thread::Builder::new()
        .name("iolab-write-back-signal".into())
        .spawn(move || {
            for _ in signals.forever() {
                if let Some(cache) = current().as_ref() {
                    cache.request_write_back();
                }
            }
        })
        .ok();
}
