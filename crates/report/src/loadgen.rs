//! Users and transactions (LoadGen-style) in the result: what was offered, what was dispatched and completed,
//! transaction latency from the intended start (per type and overall), and the backlog over time.
//!
//! LoadGen reports `Task Dispatched/sec` and `Task Completed/sec` and stops with "too much load" when
//! unfinished tasks (queued + executing) exceed 1.5 x users (SOURCES.md §3). iolab reports the same counts
//! and the backlog per interval, and flags `overload` (with a warning) instead of stopping, so the result shows
//! how far behind the storage fell.

use iolab_stats::LatSummary;
use serde::{Deserialize, Serialize};

/// Transactions dispatched and completed, their latency and the backlog.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LoadgenResult {
    /// Users in all.
    pub users: u32,
    /// `rate` (LoadGen's normal mode: scheduled arrivals) or `stress` (as fast as possible).
    pub mode: String,
    /// Transactions a user may have in progress at once (stress mode's bound; rate mode's slots).
    pub outstanding_per_user: u32,
    /// The per-user rate as typed (`500/8h`); rate mode only.
    pub rate: Option<String>,
    /// Arrival law in rate mode (`poisson` or `fixed`).
    pub arrival: Option<String>,
    /// Offered transactions per second, all users; rate mode only.
    pub offered_per_s: Option<f64>,
    /// Offered transactions per hour, all users; rate mode only.
    pub offered_per_hour: Option<f64>,
    /// Transactions dispatched in the window (rate mode: scheduled arrivals; stress mode: started).
    pub dispatched: u64,
    /// Transactions completed in the window.
    pub completed: u64,
    /// Completed transactions with a failed step.
    pub failed: u64,
    /// Completed per second of measured time.
    pub transactions_per_s: f64,
    /// Completed per hour of measured time.
    pub transactions_per_hour: f64,
    /// Transaction latency, intended start to the last step's completion; `None` without completions.
    pub latency_ns: Option<LatSummary>,
    /// Per transaction type.
    pub transactions: Vec<TransactionResult>,
    /// Dispatched and not completed when the run ended (queued + executing).
    pub backlog_at_end: u64,
    /// Largest backlog in the window.
    pub backlog_max: u64,
    /// Most transactions executing at once.
    pub executing_max: u64,
    /// Arrivals counted from the schedule because the pending ring (65,536 per worker) was full.
    pub beyond_ring: u64,
    /// LoadGen's overload limit: 1.5 x users.
    pub overload_threshold: f64,
    /// The backlog exceeded the limit at some point.
    pub overload: bool,
    /// Per interval: dispatched, completed and the backlog when it closed.
    pub backlog: Vec<BacklogPoint>,
}

/// One transaction type's results.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TransactionResult {
    /// Its name.
    pub name: String,
    /// Its relative share.
    pub weight: u32,
    /// Its I/Os per transaction.
    pub steps: u32,
    /// Dispatched in the window.
    pub dispatched: u64,
    /// Completed in the window.
    pub completed: u64,
    /// Completed per hour of measured time.
    pub transactions_per_hour: f64,
    /// Latency from intended start; `None` without completions.
    pub latency_ns: Option<LatSummary>,
}

/// One interval of the backlog series.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct BacklogPoint {
    /// End of the interval, seconds since the window began.
    pub t_s: f64,
    /// Dispatched in the interval.
    pub dispatched: u64,
    /// Completed in the interval.
    pub completed: u64,
    /// Dispatched and not completed when the interval closed.
    pub backlog: u64,
}
