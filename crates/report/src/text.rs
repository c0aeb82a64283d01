//! Human-readable summary of a [`RunResult`], and the number formatters the cli reuses.
//!
//! Modelled on hyperfine's output: no decoration, aligned columns, each value in the unit that
//! gives 3 significant figures (ns, µs, ms, s), counts with thousands separators, throughput in
//! MB/s (10^6 bytes per second, as fio's "MB/s").

use std::fmt::Write as _;

use iolab_stats::LatSummary;

use crate::model::{OpSummary, RunResult, TargetEnv};

/// Width of the label column of the key/value lines (`target  `, `workers `, `cpu     `).
const LABEL_WIDTH: usize = 8;

/// A duration in the unit that gives 3 significant figures: `850 ns`, `85.3 ns`, `1.82 ms`,
/// `21.3 ms`, `182 µs`, `1.23 s`, `1234 s`. `-` for negative or non-finite values.
pub fn format_duration_ns(ns: f64) -> String {
    if !ns.is_finite() || ns < 0.0 {
        return "-".to_string();
    }
    const UNITS: [(&str, f64); 4] = [("ns", 1.0), ("µs", 1e3), ("ms", 1e6), ("s", 1e9)];
    for (i, &(unit, scale)) in UNITS.iter().enumerate() {
        let v = ns / scale;
        let text = three_significant(v);
        // Move to the next unit when rounding reached 1000 (999.7 ns -> "1.00 µs").
        let rounded: f64 = text.parse().unwrap_or(v);
        if rounded < 1000.0 || i == UNITS.len() - 1 {
            return format!("{text} {unit}");
        }
    }
    unreachable!("the last unit always returns")
}

/// `v` with 3 significant figures (no exponent; values >= 1000 keep all integer digits).
fn three_significant(v: f64) -> String {
    if v == 0.0 {
        "0".to_string()
    } else if v < 9.995 {
        format!("{v:.2}")
    } else if v < 99.95 {
        format!("{v:.1}")
    } else {
        format!("{v:.0}")
    }
}

/// A size in binary units with 3 significant figures: `512 B`, `4.00 KiB`, `8.00 GiB`.
pub fn format_bytes(n: u64) -> String {
    const UNITS: [&str; 7] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if n < 1024 {
        return format!("{n} B");
    }
    let mut v = n as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit < UNITS.len() - 1 {
        v /= 1024.0;
        unit += 1;
    }
    let text = three_significant(v);
    if text == "1024" && unit < UNITS.len() - 1 {
        return format!("1.00 {}", UNITS[unit + 1]);
    }
    format!("{text} {}", UNITS[unit])
}

/// An integer with thousands separators: `1,000,579`.
pub fn format_count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A non-negative rate with thousands separators and `decimals` decimals: `70,012.3`.
pub fn format_rate(v: f64, decimals: usize) -> String {
    if !v.is_finite() || v < 0.0 {
        return "-".to_string();
    }
    let text = format!("{v:.decimals$}");
    let (int, frac) = match text.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (text.as_str(), None),
    };
    let grouped = format_count(int.parse().unwrap_or(0));
    match frac {
        Some(f) => format!("{grouped}.{f}"),
        None => grouped,
    }
}

/// Renders the summary a storage engineer reads at a glance.
pub fn render_text(r: &RunResult) -> String {
    let mut out = String::new();
    header_lines(r, &mut out);
    out.push('\n');
    out.push_str(&op_table(r));
    if r.rate.is_some() {
        out.push('\n');
        out.push_str(&service_table(r));
    }
    out.push('\n');
    tail_lines(r, &mut out);
    if let Some(ss) = &r.steady_state {
        labelled(&mut out, "steady", &crate::sweep::steady_state_line(ss));
    }
    integrity_lines(r, &mut out);
    out.push_str(&crate::verdict::render_groups_block(r));
    out.push_str(&crate::loadgen::render_loadgen_block(r));
    out.push_str(&crate::verdict::render_verdict_block(r));
    if !r.warnings.is_empty() {
        out.push('\n');
    }
    for w in &r.warnings {
        let _ = writeln!(out, "warning: {}", w.message());
        if let Some(hint) = w.hint() {
            let _ = writeln!(out, "  hint: {hint}");
        }
    }
    out
}

/// `verify` and `inject` lines: blocks checked and failed, by class, with the first failed block; faults injected
/// and, with verification, how many of the live ones were found.
fn integrity_lines(r: &RunResult, out: &mut String) {
    if let Some(v) = &r.verify {
        let mut line = format!(
            "{} blocks of {} checked ({} in the read-back), {} mismatches",
            format_count(v.blocks_checked),
            format_bytes(v.block_bytes as u64),
            format_count(v.readback_blocks),
            format_count(v.mismatches)
        );
        let c = &v.by_class;
        let classes: Vec<String> = [
            (c.corrupt_payload, "corrupt payload"),
            (c.torn_write, "torn write"),
            (c.lost_write, "lost write"),
            (c.misdirected_write, "misdirected write"),
        ]
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, k)| format!("{} {k}", format_count(*n)))
        .collect();
        if !classes.is_empty() {
            line.push_str(&format!(" ({})", classes.join(", ")));
        }
        if v.blocks_skipped_in_flight > 0 {
            line.push_str(&format!(
                "; {} skipped (read while being written)",
                format_count(v.blocks_skipped_in_flight)
            ));
        }
        if v.stopped {
            line.push_str("; stopped at the first mismatch");
        }
        labelled(out, "verify", &line);
        if let Some(m) = v.first_mismatches.first() {
            let found = m.found.as_ref().map_or("no iolab header".to_string(), |h| {
                format!("generation {} for offset {} of target {}", h.generation, h.offset, h.target)
            });
            labelled(
                out,
                "",
                &format!(
                    "first: '{}' offset {} {}: expected generation {}, found {found}",
                    m.target,
                    m.offset,
                    m.class.as_str(),
                    m.expected.generation
                ),
            );
        }
    }
    if let Some(inj) = &r.inject {
        let parts: Vec<String> = inj
            .faults
            .iter()
            .map(|f| match (f.live, f.detected) {
                (Some(l), Some(d)) => format!("{} {} (live {}, detected {})", f.spec, f.injected, l, d),
                _ => format!("{} {}", f.spec, f.injected),
            })
            .collect();
        labelled(out, "injected", &format!("{} (seed {})", parts.join(", "), inj.seed));
    }
}

fn labelled(out: &mut String, label: &str, rest: &str) {
    let _ = writeln!(out, "{label:<LABEL_WIDTH$}{rest}");
}

fn header_lines(r: &RunResult, out: &mut String) {
    let run_id: String = r.run_id.chars().take(8).collect();
    let mut first = format!(
        "iolab {} · run {run_id} · seed {} · measured {:.2} s",
        r.iolab_version, r.seed, r.measured_s
    );
    if r.ramp_s > 0.0 {
        let _ = write!(first, " after {:.2} s ramp", r.ramp_s);
    }
    if r.partial {
        first.push_str(" · partial (stopped early)");
    }
    let _ = writeln!(out, "{first}");

    for t in &r.env.targets {
        labelled(out, "target", &format!("{}  {}", t.name, target_description(t, &r.env.engine)));
    }

    let workers = &r.workers;
    let qd_text = match workers.first() {
        Some(w0) if workers.iter().all(|w| w.qd == w0.qd) => format!("{} × qd {}", workers.len(), w0.qd),
        Some(_) => {
            let qds: Vec<String> = workers.iter().map(|w| w.qd.to_string()).collect();
            format!("{} (qd {})", workers.len(), qds.join(", "))
        }
        None => "0".to_string(),
    };
    labelled(
        out,
        "workers",
        &format!("{qd_text} (requested depth {}, achieved {:.1})", r.depth.requested, r.depth.achieved),
    );
}

fn target_description(t: &TargetEnv, engine: &str) -> String {
    let mut parts = vec![t.kind.replace('_', " "), format_bytes(t.size_bytes)];
    if let Some(fs) = &t.fs_type {
        parts.push(fs.clone());
    }
    if let Some(model) = &t.device_model {
        parts.push(model.clone());
    }
    let in_process = matches!(t.kind.as_str(), "mem" | "null" | "sim");
    if in_process {
        parts.push("in-process".to_string());
    } else {
        parts.push(if t.direct { "O_DIRECT".to_string() } else { "buffered".to_string() });
        parts.push(engine.to_string());
    }
    if t.created {
        match t.fill_s {
            Some(s) => parts.push(format!("created, filled in {s:.2} s")),
            None => parts.push("created".to_string()),
        }
    }
    parts.join(", ")
}

/// Right-aligned table; the first column (labels) is left-aligned.
pub(crate) fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let columns = header.len();
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let mut line = |cells: &[String]| {
        let mut text = String::new();
        for (i, cell) in cells.iter().enumerate().take(columns) {
            let pad = widths[i].saturating_sub(cell.chars().count());
            if i == 0 {
                text.push_str(cell);
                text.push_str(&" ".repeat(pad));
            } else {
                text.push_str("  ");
                text.push_str(&" ".repeat(pad));
                text.push_str(cell);
            }
        }
        out.push_str(text.trim_end());
        out.push('\n');
    };
    let header: Vec<String> = header.iter().map(|h| h.to_string()).collect();
    line(&header);
    for row in rows {
        line(row);
    }
    out
}

/// The op kinds to print: read and write only when they had ops, `all` always.
fn op_rows(r: &RunResult) -> Vec<(&'static str, &OpSummary)> {
    let mut rows = Vec::new();
    if r.total.read.ops > 0 {
        rows.push(("read", &r.total.read));
    }
    if r.total.write.ops > 0 {
        rows.push(("write", &r.total.write));
    }
    rows.push(("all", &r.total.all));
    rows
}

fn lat_cell(lat: Option<&LatSummary>, pick: impl Fn(&LatSummary) -> f64) -> String {
    lat.map_or_else(|| "-".to_string(), |l| format_duration_ns(pick(l)))
}

fn op_table(r: &RunResult) -> String {
    // In open loop the latency here is response time (it includes queueing delay); say so.
    let label = if r.rate.is_some() { "response" } else { "" };
    let header = [label, "ops", "IOPS", "MB/s", "mean", "p50", "p99", "p99.9", "max"];
    let rows: Vec<Vec<String>> = op_rows(r)
        .into_iter()
        .map(|(label, s)| {
            let lat = s.lat_ns.as_ref();
            let mut row =
                vec![label.to_string(), format_count(s.ops), format_rate(s.iops, 1), format_rate(s.mb_s, 1)];
            row.extend(lat_cells(lat));
            row
        })
        .collect();
    table(&header, &rows)
}

/// The mean, p50, p99, p99.9 and max cells of a latency summary, in table order.
fn lat_cells(lat: Option<&LatSummary>) -> [String; 5] {
    [
        lat_cell(lat, |l| l.mean),
        lat_cell(lat, |l| l.p50 as f64),
        lat_cell(lat, |l| l.p99 as f64),
        lat_cell(lat, |l| l.p999 as f64),
        lat_cell(lat, |l| l.max as f64),
    ]
}

/// Open loop: response time above includes queueing delay; service time is submission ->
/// completion, i.e. what the device took.
fn service_table(r: &RunResult) -> String {
    let header = ["service", "mean", "p50", "p99", "p99.9", "max"];
    let rows: Vec<Vec<String>> = op_rows(r)
        .into_iter()
        .map(|(label, s)| {
            let lat = s.service_lat_ns.as_ref();
            let mut row = vec![label.to_string()];
            row.extend(lat_cells(lat));
            row
        })
        .collect();
    table(&header, &rows)
}

fn tail_lines(r: &RunResult, out: &mut String) {
    if let Some(rate) = &r.rate {
        let offered = if rate.offered_iops.fract() == 0.0 {
            format_rate(rate.offered_iops, 0)
        } else {
            format_rate(rate.offered_iops, 1)
        };
        labelled(
            out,
            "rate",
            &format!(
                "offered {offered} IOPS ({}), achieved {}, backlog at end {}",
                rate.arrival,
                format_rate(rate.achieved_iops, 1),
                format_count(rate.backlog_at_end)
            ),
        );
    }
    let c = &r.cpu;
    labelled(
        out,
        "cpu",
        &format!(
            "user {:.2} s, sys {:.2} s ({:.2} cores), {} per I/O",
            c.user_s,
            c.sys_s,
            c.cores_used,
            format_duration_ns(c.cpu_ns_per_io)
        ),
    );
    let e = &r.errors;
    if e.total > 0 || e.read.short > 0 || e.write.short > 0 {
        let detail = |d: &crate::model::ErrorDetail| {
            if d.by_errno.is_empty() {
                format_count(d.count)
            } else {
                let names: Vec<String> =
                    d.by_errno.iter().map(|(name, n)| format!("{name} {}", format_count(*n))).collect();
                format!("{} ({})", format_count(d.count), names.join(", "))
            }
        };
        labelled(
            out,
            "errors",
            &format!(
                "read {}, write {}; short read {}, short write {}",
                detail(&e.read),
                detail(&e.write),
                format_count(e.read.short),
                format_count(e.write.short)
            ),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_duration_ns_picks_unit_for_three_significant_figures() {
        assert_eq!(format_duration_ns(850.0), "850 ns");
        assert_eq!(format_duration_ns(85.34), "85.3 ns");
        assert_eq!(format_duration_ns(5.0), "5.00 ns");
        assert_eq!(format_duration_ns(0.0), "0 ns");
        assert_eq!(format_duration_ns(999.7), "1.00 µs");
        assert_eq!(format_duration_ns(182_400.0), "182 µs");
        assert_eq!(format_duration_ns(1_820_000.0), "1.82 ms");
        assert_eq!(format_duration_ns(21_340_000.0), "21.3 ms");
        assert_eq!(format_duration_ns(1.234e9), "1.23 s");
        assert_eq!(format_duration_ns(1_234e9), "1234 s");
        assert_eq!(format_duration_ns(f64::NAN), "-");
    }

    #[test]
    fn format_bytes_uses_binary_units() {
        assert_eq!(format_bytes(0), "0 B");
        assert_eq!(format_bytes(1023), "1023 B");
        assert_eq!(format_bytes(4096), "4.00 KiB");
        assert_eq!(format_bytes(8 << 30), "8.00 GiB");
        assert_eq!(format_bytes(1_500_000_000), "1.40 GiB");
        assert_eq!(format_bytes((1 << 30) - 1), "1.00 GiB");
    }

    #[test]
    fn format_count_groups_thousands() {
        assert_eq!(format_count(0), "0");
        assert_eq!(format_count(999), "999");
        assert_eq!(format_count(1000), "1,000");
        assert_eq!(format_count(1_000_579), "1,000,579");
        assert_eq!(format_count(u64::MAX), "18,446,744,073,709,551,615");
    }

    #[test]
    fn format_rate_groups_and_rounds() {
        assert_eq!(format_rate(70_012.34, 1), "70,012.3");
        assert_eq!(format_rate(999.96, 1), "1,000.0");
        assert_eq!(format_rate(5000.0, 0), "5,000");
    }
}
