//! The lock every part of the cache takes: a holder that panicked leaves the data as it was, and the next
//! caller goes on with it (every structure behind a lock here is consistent between statements).

use std::sync::{Mutex, MutexGuard};

#[inline]
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
