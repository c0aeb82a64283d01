//! The printed sweep: a table shaped like the seeds' per-QD and per-block-size figures, with the knee and the
//! `--max-p99` point marked.

use super::steady_state_line;
use crate::format::{format_duration_ns, format_rate};
use crate::sweep::{LineMark, SweepResult};

/// The printed sweep: a header line, one row per point (swept values, IOPS, MB/s, mean and p99 latency,
/// achieved depth; with trials the IOPS 95 % confidence half-width and CV), marks on the knee and the
/// `--max-p99` point, and a closing line per mark.
pub(crate) fn sweep(s: &SweepResult) -> String {
    // A job's phases run as the points of a sweep along a `phase` axis; they are said as phases.
    let phases = s.is_phases();
    let (what, unit) = if phases { ("", "phase") } else { ("sweep of ", "point") };
    let mut out = format!(
        "iolab {} · {what}{} {unit}{}{} · base seed {}{}\n",
        s.iolab_version,
        s.points_planned,
        if s.points_planned == 1 { "" } else { "s" },
        if s.trials > 1 { format!(" × {} trials", s.trials) } else { String::new() },
        s.base_seed,
        if s.partial {
            format!(" · PARTIAL: {} of {} points ran", s.points.len(), s.points_planned)
        } else {
            String::new()
        },
    );
    if let Some(pc) = &s.preconditioning {
        out.push_str(&format!("preconditioning: {}\n", steady_state_line(pc)));
    }
    out.push('\n');
    let trials = s.trials > 1;
    let mut header: Vec<String> = s.axes.iter().map(|a| a.key.clone()).collect();
    header.extend(["IOPS", "MB/s", "mean", "p99", "depth"].map(String::from));
    // Cache sweeps: the seeds' table columns (read latency, reads served from the cache).
    let cached = s.points.iter().any(|p| p.summary.cache_read_pct.is_some());
    if cached {
        header.extend(["read mean", "from cache"].map(String::from));
    }
    // Durable writes: each point's flush p99 (a commit's durable part; pg-test-fsync's phases).
    let flushed = s.points.iter().any(|p| p.summary.flush_p99_ns.is_some());
    if flushed {
        header.push("flush p99".into());
    }
    if trials {
        header.extend(["±95% IOPS", "CV"].map(String::from));
    }
    // A job with worker groups (database and log): each group's IOPS and mean latency beside the total.
    let groups = s.group_names();
    for g in &groups {
        header.extend([format!("{g} IOPS"), format!("{g} mean")]);
    }
    header.push(String::new());
    let mut rows: Vec<Vec<String>> = Vec::new();
    for p in &s.points {
        let m = &p.summary;
        let mut row: Vec<String> =
            s.axes.iter().map(|a| p.params.get(&a.key).cloned().unwrap_or_default()).collect();
        row.push(format_rate(m.iops.mean, 1));
        row.push(format_rate(m.mb_s.mean, 1));
        row.push(format_duration_ns(m.lat_mean_ns.as_ref().map(|m| m.mean)));
        row.push(format_duration_ns(m.lat_p99_ns.as_ref().map(|m| m.mean)));
        row.push(format!("{:.1}", m.achieved_depth.mean));
        if cached {
            row.push(m.read_lat_mean_ns.as_ref().map_or("-".into(), |x| format_duration_ns(x.mean)));
            row.push(m.cache_read_pct.as_ref().map_or("-".into(), |x| format!("{:.1}%", x.mean)));
        }
        if flushed {
            row.push(format_duration_ns(m.flush_p99_ns.as_ref().map(|m| m.mean)));
        }
        if trials {
            row.push(match (m.iops.ci95_low, m.iops.ci95_high) {
                (Some(lo), Some(hi)) => format_rate((hi - lo) / 2.0, 1),
                _ => "-".into(),
            });
            row.push(m.iops.cv.map_or("-".into(), |c| format!("{:.1}%", c * 100.0)));
        }
        for g in &groups {
            let found = p.result.groups.iter().find(|x| &x.name == g);
            row.push(found.map_or("-".into(), |x| format_rate(x.total.all.iops, 1)));
            row.push(format_duration_ns(found.and_then(|x| x.total.all.lat_ns.as_ref()).map(|l| l.mean)));
        }
        row.push(point_marks(s, p));
        rows.push(row);
    }
    out.push_str(&render_table(&header, &rows));
    out.push('\n');
    out.push_str(&knee_line(s, phases));
    if let Some(m) = &s.max_p99 {
        out.push_str(&format!(
            "max load with p99 ≤ {} ({}): {}\n",
            format_duration_ns(m.limit_ns as f64),
            m.axis,
            marks_text(&m.lines, "none (no load stays within it)")
        ));
        out.push_str(&outliers_text(s, m));
    }
    out.push_str(&point_warnings(s));
    out
}

/// A point's marks at the end of its row: the knee, the max load within the p99 limit, partial.
fn point_marks(s: &SweepResult, p: &crate::sweep::SweepPoint) -> String {
    let mut marks = Vec::new();
    if s.is_knee(p.index) {
        marks.push("◀ knee".to_string());
    }
    if s.is_max_p99(p.index) {
        let limit = s.max_p99.as_ref().map_or(0, |m| m.limit_ns);
        marks.push(format!("◀ max p99 ≤ {}", format_duration_ns(limit as f64)));
    }
    if p.result.partial {
        marks.push("(partial)".into());
    }
    marks.join("  ")
}

/// The knee's closing line: where it is, or why there is none.
fn knee_line(s: &SweepResult, phases: bool) -> String {
    match &s.knee {
        Some(k) => format!(
            "knee ({}; first point after which IOPS gains < {}% while p99 grows > {}%): {}\n",
            k.axis,
            k.iops_gain_pct,
            k.lat_growth_pct,
            marks_text(&k.lines, "not reached within the sweep")
        ),
        None if !s.points.is_empty() && !phases => {
            "knee: not computed (no load axis swept: qd, workers or rate)\n".to_string()
        }
        None => String::new(),
    }
}

/// Lighter loads whose p99 was over the limit although the answer's was within it: the answer's noise.
fn outliers_text(s: &SweepResult, m: &crate::sweep::MaxP99Report) -> String {
    let mut said = Vec::new();
    for mark in &m.lines {
        let mut pts: Vec<_> = s.points.iter().filter(|p| p.line == mark.line).collect();
        pts.sort_by(|a, b| a.load.unwrap_or(0.0).total_cmp(&b.load.unwrap_or(0.0)));
        let p99: Vec<f64> =
            pts.iter().map(|p| p.summary.lat_p99_ns.as_ref().map_or(f64::INFINITY, |x| x.mean)).collect();
        let answer = mark.point.and_then(|i| pts.iter().position(|p| p.index == i));
        for i in crate::sweep::p99_outliers(&p99, m.limit_ns as f64, answer) {
            said.push(format!("{}={}", m.axis, pts[i].params.get(&m.axis).cloned().unwrap_or_default()));
        }
    }
    if said.is_empty() {
        return String::new();
    }
    let advice = if s.trials > 1 { "" } else { "; --trials 3 gives each point a confidence interval" };
    format!("  p99 was over the limit at lighter load ({}): noisy data{advice}\n", said.join(", "))
}

/// Each point's warnings, one line each, so a noisy point is seen where its figures are.
fn point_warnings(s: &SweepResult) -> String {
    let mut out = String::new();
    let mut noisy = false;
    for p in s.points.iter().filter(|p| !p.result.warnings.is_empty()) {
        let at: Vec<String> = s
            .axes
            .iter()
            .map(|a| format!("{}={}", a.key, p.params.get(&a.key).cloned().unwrap_or_default()))
            .collect();
        for w in &p.result.warnings {
            noisy |= matches!(w, iolab_stats::Warning::HighVariability { .. });
            out.push_str(&format!("warning: {}: {}\n", at.join(" "), w.message()));
        }
    }
    if noisy && s.trials <= 1 && s.load_axis.is_some() {
        out.push_str("hint: points varied a lot within their run: the knee and the max-load answer may move from one sweep to the next; --trials 3 (or a longer --duration) gives intervals\n");
    }
    out
}

fn marks_text(lines: &[LineMark], none: &str) -> String {
    let parts: Vec<String> = lines
        .iter()
        .map(|l| {
            let at = l.value.clone().unwrap_or_else(|| none.to_string());
            if l.params.is_empty() {
                at
            } else {
                let ctx: Vec<String> = l.params.iter().map(|(k, v)| format!("{k}={v}")).collect();
                format!("{} at {}", at, ctx.join(" "))
            }
        })
        .collect();
    parts.join("; ")
}

/// Right-aligned columns, two spaces apart; the last column (marks) is left-aligned.
fn render_table(header: &[String], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (w, c) in widths.iter_mut().zip(row) {
            *w = (*w).max(c.chars().count());
        }
    }
    let last = header.len().saturating_sub(1);
    let mut out = String::new();
    for row in std::iter::once(header).chain(rows.iter().map(Vec::as_slice)) {
        let mut line = String::new();
        for (i, c) in row.iter().enumerate() {
            let pad = widths[i].saturating_sub(c.chars().count());
            if i > 0 {
                line.push_str("  ");
            }
            if i == last {
                line.push_str(c);
            } else {
                line.push_str(&" ".repeat(pad));
                line.push_str(c);
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}
