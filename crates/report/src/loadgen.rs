//! Users and transactions (LoadGen-style) in the result: what was offered, what was dispatched and completed,
//! transaction latency from the intended start (per type and overall), and the backlog over time.
//!
//! LoadGen reports `Task Dispatched/sec` and `Task Completed/sec` and stops with "too much load" when
//! unfinished tasks (queued + executing) exceed 1.5 x users (SOURCES.md §3). iolab reports the same counts
//! and the backlog per interval, and flags `overload` (with a warning) instead of stopping, so the result shows
//! how far behind the storage fell.

use std::fmt::Write as _;

use iolab_stats::LatSummary;
use serde::{Deserialize, Serialize};

use crate::text::{format_count, format_duration_ns, format_rate, table};

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

fn lat_row(label: String, l: Option<&LatSummary>) -> Vec<String> {
    let cell = |f: &dyn Fn(&LatSummary) -> f64| l.map_or("-".to_string(), |l| format_duration_ns(f(l)));
    vec![
        label,
        cell(&|l| l.mean),
        cell(&|l| l.p50 as f64),
        cell(&|l| l.p95 as f64),
        cell(&|l| l.p99 as f64),
        cell(&|l| l.max as f64),
    ]
}

/// The text block: users and mode, counts, rates, transaction latency per type, backlog. Empty without a
/// `loadgen` section. Starts with a blank line.
pub fn render_loadgen_block(r: &crate::RunResult) -> String {
    let Some(lg) = &r.loadgen else {
        return String::new();
    };
    let mut out = String::from("\n");
    let offered = match (lg.offered_per_hour, lg.offered_per_s) {
        (Some(h), Some(s)) => format!(
            ", {} per user ({}): {} transactions/h offered ({}/s)",
            lg.rate.as_deref().unwrap_or("?"),
            lg.arrival.as_deref().unwrap_or("poisson"),
            format_rate(h, 0),
            format_rate(s, 2)
        ),
        _ => format!(", up to {} outstanding per user", lg.outstanding_per_user),
    };
    let _ = writeln!(out, "users   {} users, {} mode{offered}", format_count(lg.users as u64), lg.mode);
    let _ = writeln!(
        out,
        "tasks   dispatched {}, completed {}{}, {} transactions/h ({}/s)",
        format_count(lg.dispatched),
        format_count(lg.completed),
        if lg.failed > 0 {
            format!(" ({} with a failed step)", format_count(lg.failed))
        } else {
            String::new()
        },
        format_rate(lg.transactions_per_hour, 0),
        format_rate(lg.transactions_per_s, 2)
    );
    let _ = writeln!(
        out,
        "backlog at end {}, max {} (overload limit {:.0} = 1.5 x users){}",
        format_count(lg.backlog_at_end),
        format_count(lg.backlog_max),
        lg.overload_threshold,
        if lg.overload { ": OVERLOADED, the storage did not keep up" } else { "" }
    );
    out.push('\n');
    let header = ["transaction", "done", "per hour", "mean", "p50", "p95", "p99", "max"];
    let mut rows: Vec<Vec<String>> = Vec::new();
    for t in &lg.transactions {
        let mut row = lat_row(t.name.clone(), t.latency_ns.as_ref());
        row.insert(1, format_count(t.completed));
        row.insert(2, format_rate(t.transactions_per_hour, 0));
        rows.push(row);
    }
    if lg.transactions.len() > 1 {
        let mut row = lat_row("all".into(), lg.latency_ns.as_ref());
        row.insert(1, format_count(lg.completed));
        row.insert(2, format_rate(lg.transactions_per_hour, 0));
        rows.push(row);
    }
    out.push_str(&table(&header, &rows));
    out
}
