//! The PASS/FAIL block of a run with a verdict, and the per-group table of a run with several groups.

use std::fmt::Write as _;

use crate::format::{format_duration_ns, format_rate, table};
use crate::model::{OpSummary, RunResult};

/// The PASS/FAIL block of the text report: a few lines a person can paste into a ticket.
pub(crate) fn verdict(r: &RunResult) -> String {
    let Some(v) = &r.verdict else { return String::new() };
    let mut out = String::new();
    let achieved = v.achieved_iops.map_or("-".to_string(), |a| format_rate(a, 1));
    let target = match v.target_iops {
        Some(t) => format!(" of target {} (tolerance {}%)", format_rate(t, 1), v.iops_tolerance_pct),
        None => String::new(),
    };
    // "DB IOPS" only where database groups were judged; a job without them (etcd's check) has no database.
    let db = v.checks.iter().any(|c| c.unit == "iops" && c.group != "all");
    let _ = writeln!(
        out,
        "verdict {}  · {} {achieved}{target} · measured {:.1} s",
        v.word(),
        if db { "DB IOPS" } else { "IOPS" },
        r.measured_s
    );
    for why in &v.provisional {
        let _ = writeln!(out, "  provisional: {why}");
    }
    if let Some(s) = v.sizing.as_ref().map(|s| s.summary.as_str()) {
        let _ = writeln!(out, "sizing  {s}");
    }
    let rows: Vec<Vec<String>> = v
        .checks
        .iter()
        .map(|c| {
            let op = if c.unit == "iops" { ">=" } else { "<=" };
            vec![
                format!("  {}", c.label()),
                format!("{op} {}", c.value_text(c.limit)),
                c.measured.map_or("-".to_string(), |m| c.value_text(m)),
                c.single_io_max_ns.map_or(String::new(), format_duration_ns),
                if c.pass { "pass".to_string() } else { "FAIL".to_string() },
            ]
        })
        .collect();
    out.push_str(&table(&["  check", "limit", "measured", "1-I/O max", "result"], &rows));
    if v.checks.iter().any(|c| c.name.ends_with("_max")) {
        let _ = writeln!(out, "  * max = largest per-interval mean (as Jetstress's Perfmon samples); 1-I/O max is the slowest single I/O");
    }
    for reason in &v.reasons {
        let _ = writeln!(out, "  reason: {reason}");
    }
    out
}

/// [`verdict`] after a blank line, or nothing without a verdict (for the run summary).
pub(crate) fn verdict_block(r: &RunResult) -> String {
    let text = verdict(r);
    if text.is_empty() {
        text
    } else {
        format!("\n{text}")
    }
}

/// [`groups`] after a blank line, or nothing with fewer than two groups (for the run summary).
pub(crate) fn groups_block(r: &RunResult) -> String {
    let text = groups(r);
    if text.is_empty() {
        text
    } else {
        format!("\n{text}")
    }
}

/// Per-group table (one row per `[worker.NAME]` table), printed when a run has more than one group: the
/// database and the log stream side by side. `imax` is the largest per-interval mean response time.
pub(crate) fn groups(r: &RunResult) -> String {
    if r.groups.len() < 2 {
        return String::new();
    }
    let cell = |s: &OpSummary, f: &dyn Fn(&iolab_stats::LatSummary) -> f64| {
        if s.ops == 0 {
            "-".to_string()
        } else {
            s.lat_ns.as_ref().map_or("-".to_string(), |l| format_duration_ns(f(l)))
        }
    };
    let imax = |v: Option<f64>| v.map_or("-".to_string(), format_duration_ns);
    let rows: Vec<Vec<String>> = r
        .groups
        .iter()
        .map(|g| {
            vec![
                g.name.clone(),
                g.workers.to_string(),
                g.rate_iops.map_or("closed".to_string(), |x| format_rate(x, 1)),
                format_rate(g.total.all.iops, 1),
                format_rate(g.total.all.mb_s, 1),
                format!(
                    "{:.0}%",
                    if g.total.all.ops > 0 {
                        100.0 * g.total.read.ops as f64 / g.total.all.ops as f64
                    } else {
                        0.0
                    }
                ),
                cell(&g.total.read, &|l| l.mean),
                cell(&g.total.read, &|l| l.p99 as f64),
                imax(g.read_interval_mean_max_ns),
                cell(&g.total.write, &|l| l.mean),
                cell(&g.total.write, &|l| l.p99 as f64),
                imax(g.write_interval_mean_max_ns),
            ]
        })
        .collect();
    let mut out = table(
        &[
            "group", "workers", "offered", "IOPS", "MB/s", "read", "r mean", "r p99", "r imax", "w mean",
            "w p99", "w imax",
        ],
        &rows,
    );
    out.push_str(IMAX_LEGEND);
    out
}

/// What the group table's `r imax` and `w imax` are (the verdict's max limits check them).
const IMAX_LEGEND: &str =
    "(r imax, w imax: the largest mean response time of one interval, of reads and of writes: what the verdict's max limits check)\n";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::evaluate;
    use crate::tests::{names, with_groups};
    use crate::verdict::Thresholds;

    #[test]
    fn verdict_block_and_group_table_render() {
        let mut r = with_groups(25e6, 30e6, 2e6, 1000.0);
        let (d, l) = names();
        r.verdict = Some(evaluate(&r, &Thresholds::default(), &d, &l));
        let text = verdict(&r);
        assert!(text.starts_with("verdict FAIL"), "{text}");
        assert!(text.contains("reason: db read avg: 25.0 ms > limit 20.0 ms"), "{text}");
        let g = groups(&r);
        assert_eq!(g.lines().count(), 4, "{g}");
        assert!(g.lines().last().unwrap().starts_with("(r imax, w imax: the largest mean"), "{g}");
        assert!(g.lines().nth(1).unwrap().starts_with("db "), "{g}");
    }
}
