//! The printed database sweep (`iolab db tpcc --users 1,2,4,8`): what ran and how it was built, then one row
//! per user count (NOPM, TPM, new-order response times, retries, the consistency conditions, what the
//! devices did), the knee marked as `iolab sweep` marks it, and the peak.

use std::fmt::Write as _;

use crate::db_sweep::{DbSweepResult, KNEE_TRANSACTION};
use crate::format::{format_bytes, format_count, format_duration_ns, format_rate, table};

pub(crate) fn db_sweep(s: &DbSweepResult) -> String {
    let first = s.points.first().map(|p| &p.result);
    let users: Vec<String> = s.users.iter().map(u32::to_string).collect();
    let mut out = format!(
        "iolab {} · db {} · sweep over users {} · seed {}{}\n",
        s.iolab_version,
        s.workload,
        users.join(", "),
        s.seed,
        if s.partial { " (interrupted: partial)" } else { "" },
    );
    let _ = writeln!(out, "note    {}", s.disclaimer);
    if let Some(r) = first {
        let e = &r.engine;
        let place = match (&e.dir, &e.url) {
            (_, Some(url)) => format!("the server at {url}"),
            (Some(dir), None) => dir.clone(),
            (None, None) => "-".into(),
        };
        let size = e.size_bytes.map(|b| format!(", {}", format_bytes(b))).unwrap_or_default();
        let _ = writeln!(out, "engine  {} in {place}{size}", e.version);
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
    let knee = s.knee.as_ref().and_then(|k| k.point);
    let peak = s.peak().map(|p| p.users);
    let rows: Vec<Vec<String>> = s
        .points
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let r = &p.result;
            let no = r.run.transactions.iter().find(|t| t.name == KNEE_TRANSACTION);
            let lat = |f: fn(&iolab_stats::LatSummary) -> u64| {
                no.and_then(|t| t.latency_ns.as_ref()).map_or("-".into(), |l| format_duration_ns(f(l) as f64))
            };
            let sum = |f: fn(&crate::db::DeviceView) -> f64| r.devices.iter().map(f).sum::<f64>();
            let mut mark = Vec::new();
            if knee == Some(i) {
                mark.push("◀ knee");
            }
            if peak == Some(p.users) && s.points.len() > 1 {
                mark.push("peak");
            }
            if r.partial {
                mark.push("partial");
            }
            vec![
                p.users.to_string(),
                format_rate(r.run.nopm, 0),
                format_rate(r.run.tpm, 0),
                lat(|l| l.p50),
                lat(|l| l.p95),
                lat(|l| l.p99),
                format_count(r.run.transactions.iter().map(|t| t.retries).sum()),
                format_count(r.run.transactions.iter().map(|t| t.failed).sum()),
                if r.consistent() { "passed".into() } else { "FAILED".into() },
                if r.devices.is_empty() { "-".into() } else { format_rate(sum(|d| d.write_iops), 0) },
                if r.devices.is_empty() { "-".into() } else { format_rate(sum(|d| d.flushes_per_s), 0) },
                mark.join(", "),
            ]
        })
        .collect();
    out.push_str(&table(
        &[
            "users",
            "NOPM",
            "TPM",
            "new_order p50",
            "p95",
            "p99",
            "retries",
            "failed",
            "consistency",
            "dev write/s",
            "flush/s",
            "",
        ],
        &rows,
    ));
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
        let _ = writeln!(out, "peak    NOPM {} at {} users", format_rate(p.result.run.nopm, 0), p.users);
    }
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
