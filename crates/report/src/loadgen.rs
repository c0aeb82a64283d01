//! Users and transactions (LoadGen-style) in the result. STUB: filled in by the LoadGen work.

use serde::{Deserialize, Serialize};

/// Transactions dispatched and completed, their latency and the backlog.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LoadgenResult {
    /// Transactions started.
    pub dispatched: u64,
    /// Transactions finished.
    pub completed: u64,
}
