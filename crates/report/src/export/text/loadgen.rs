//! The users-and-transactions block of a run's text summary (LoadGen-style counts, backlog and transaction
//! latency per type).

use std::fmt::Write as _;

use iolab_stats::LatSummary;

use crate::format::{format_count, format_duration_ns, format_rate, table};
use crate::model::RunResult;

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
pub(crate) fn block(r: &RunResult) -> String {
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
    let _ = writeln!(
        out,
        "users   {}, {} mode{offered}",
        crate::format::counted(lg.users as u64, "user"),
        lg.mode
    );
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
