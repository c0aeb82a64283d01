//! The printed database sweep (`iolab db tpcc --users 1,2,4,8`): what ran and how it was built, then one row
//! per user count (NOPM, TPM, new-order response times, retries, the consistency conditions, what the
//! devices did), the knee marked as `iolab sweep` marks it, and the peak.

use std::fmt::Write as _;

use super::db::header_lines;
use crate::db_sweep::DbSweepResult;
use crate::format::{format_count, format_rate, table};

pub(crate) fn db_sweep(s: &DbSweepResult) -> String {
    let first = s.points.first().map(|p| &p.result);
    let users: Vec<String> = s.users.iter().map(u32::to_string).collect();
    let mut out = header_lines(&s.header, &[format!("sweep over users {}", users.join(", "))], s.partial);
    if let Some(r) = first {
        let e = &r.engine;
        let _ = writeln!(out, "engine  {} in {}", e.version, crate::db_rows::engine_place(e));
        let rows: u64 = r.build.rows.iter().map(|t| t.rows).sum();
        let _ = writeln!(
            out,
            "build   {} warehouse{}, {} items: {} rows in {:.2} s, once for every point",
            r.config.warehouses,
            if r.config.warehouses == 1 { "" } else { "s" },
            format_count(r.config.items as u64),
            format_count(rows),
            r.build.seconds,
        );
        let _ = writeln!(
            out,
            "points  each {:.0} s ramp, {:.0} s measured, no think time",
            r.config.ramp_s, r.config.duration_s
        );
    }
    out.push('\n');
    let mut header = crate::db_rows::SWEEP_COLUMNS;
    header[11] = "";
    out.push_str(&table(&header, &crate::db_rows::sweep_rows(s, "◀ knee")));
    out.push('\n');
    match &s.knee {
        Some(k) => {
            let at = k.users.map_or("beyond the sweep".to_string(), |u| u.to_string());
            let _ = writeln!(
                out,
                "knee (users; first point after which NOPM gains < {:.0}% while {} p99 grows > {:.0}%): {at}",
                k.nopm_gain_pct, k.transaction, k.p99_growth_pct
            );
        }
        None => {
            let _ = writeln!(out, "knee: not computed (fewer than two points)");
        }
    }
    if let Some(p) = s.peak() {
        let at = crate::format::counted(p.users as u64, "user");
        let _ = writeln!(out, "peak    NOPM {} at {at}", format_rate(p.result.run.nopm, 0));
    }
    point_windows(&mut out, s);
    let mut warnings: Vec<String> = Vec::new();
    for p in &s.points {
        for w in &p.result.warnings {
            if !warnings.contains(w) {
                warnings.push(w.clone());
            }
        }
    }
    for w in warnings {
        let _ = writeln!(out, "warning: {w}");
    }
    out
}

/// Each point's window over time, its CPU and the database against memory, as a single run prints them.
fn point_windows(out: &mut String, s: &DbSweepResult) {
    for p in &s.points {
        let facts = crate::db_rows::window_facts(&p.result);
        if facts.is_empty() {
            continue;
        }
        let _ = writeln!(out, "\n{}:", crate::format::counted(p.users as u64, "user"));
        for (k, v) in facts {
            let _ = writeln!(out, "  {k:<11}{v}");
        }
    }
}
