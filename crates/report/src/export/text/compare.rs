//! The printed comparison: per unit a table with each side's value, the difference and percent change
//! against the baseline, the test when it ran, and the seeds' one-line summary. The table and the summary
//! lines are shared with the Markdown exporter.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::compare::{
    format_pct, side_letter, ChangeVerdict, Comparison, MetricComparison, SideInfo, SideValue, Unit,
    UnitComparison, WelchTest, MIN_TRIALS_FOR_TEST, TEST_NAME,
};
use crate::format::{format_duration_ns, format_rate, table};

fn format_value(unit: Unit, v: f64) -> String {
    match unit {
        Unit::Iops => format_rate(v, 1),
        Unit::MbS => format_rate(v, 1),
        Unit::Ns => format_duration_ns(v),
        Unit::Depth => format_rate(v, 2),
        Unit::PerHour => format_rate(v, 0),
        Unit::PerMinute => format_rate(v, 0),
        Unit::Share => format!("{:.1}%", v * 100.0),
    }
}

fn format_diff(unit: Unit, d: f64) -> String {
    if !d.is_finite() {
        return "-".to_string();
    }
    let sign = if d > 0.0 {
        "+"
    } else if d < 0.0 {
        "-"
    } else {
        ""
    };
    format!("{sign}{}", format_value(unit, d.abs()))
}

/// The value cell: the value, `±CV%` with several trials.
fn value_cell(m: &MetricComparison, v: &SideValue) -> String {
    let mut s = format_value(m.unit, v.value);
    if let Some(sd) = v.sd {
        if v.mean != 0.0 {
            let _ = write!(s, " ±{:.1}%", 100.0 * sd / v.mean.abs());
        }
    }
    s
}

fn verdict_word(v: ChangeVerdict) -> &'static str {
    match v {
        ChangeVerdict::Better => "better",
        ChangeVerdict::Worse => "worse",
        ChangeVerdict::Same | ChangeVerdict::Neutral => "",
    }
}

fn test_cell(t: &Option<WelchTest>) -> String {
    match t {
        None => "-".to_string(),
        Some(t) => {
            format!("{} {}", p_equals(t.p), if t.significant { "significant" } else { "not significant" })
        }
    }
}

/// A p-value with 3 significant figures, `<0.001` below.
fn format_p(p: f64) -> String {
    if !p.is_finite() {
        "-".to_string()
    } else if p < 0.001 {
        "<0.001".to_string()
    } else {
        format!("{p:.3}")
    }
}

/// `p=0.042`, or `p<0.001`.
fn p_equals(p: f64) -> String {
    let f = format_p(p);
    if f.starts_with('<') {
        format!("p{f}")
    } else {
        format!("p={f}")
    }
}

pub(crate) fn describe_params(p: &BTreeMap<String, String>) -> String {
    p.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" ")
}

/// A side's line: its letter, source and what it holds (`1 run, ID`, `3 runs as trials`, `2 sweeps`).
pub(crate) fn side_line(s: &SideInfo, c: &Comparison) -> String {
    // Sweeps are compared point by point: their units have params.
    let sweeps = c.units.iter().any(|u| u.params.is_some());
    let what = match (sweeps, s.documents) {
        (true, 1) => "1 sweep".to_string(),
        (true, n) => format!("{n} sweeps"),
        (_, 1) => match s.run_ids.first().filter(|id| !id.is_empty()) {
            Some(id) => format!("1 run, {id}"),
            None => "1 run".to_string(),
        },
        (_, n) => format!("{n} runs as trials"),
    };
    format!("{}  {} ({what}){}", s.label, s.source, if s.label == "A" { " · baseline" } else { "" })
}

/// A unit's table, before marking the best values (text and Markdown mark them differently).
pub(crate) struct Rendered {
    pub(crate) header: Vec<String>,
    pub(crate) rows: Vec<Vec<String>>,
    pub(crate) best_cells: Vec<(usize, usize)>,
}

pub(crate) fn unit_table(c: &Comparison, u: &UnitComparison) -> Rendered {
    let n = c.sides.len();
    let tested = u.metrics.iter().any(|m| m.changes.iter().any(|ch| ch.test.is_some()));
    let mut header = vec!["metric".to_string()];
    header.extend(c.sides.iter().map(|s| s.label.clone()));
    for s in c.sides.iter().skip(1) {
        header.push(format!("{}-A", s.label));
        header.push(format!("{} vs A", s.label));
        if tested {
            header.push(format!("{} Welch", s.label));
        }
    }
    let mut rows = Vec::new();
    let mut best_cells = Vec::new();
    for (r, m) in u.metrics.iter().enumerate() {
        let mut row = vec![m.label.clone()];
        for (i, v) in m.sides.iter().enumerate() {
            if m.best.contains(&side_letter(i)) {
                best_cells.push((r, 1 + i));
            }
            row.push(value_cell(m, v));
        }
        for (i, ch) in m.changes.iter().enumerate() {
            row.push(format_diff(m.unit, ch.diff));
            let mut pct = ch.pct.map_or("n/a".to_string(), format_pct);
            if let Some(r) = crate::compare::ratio_of(m.ratio, m.sides[0].value, m.sides[i + 1].value) {
                pct = format!("{r} {pct}");
            }
            let word = verdict_word(ch.verdict);
            row.push(if word.is_empty() { pct } else { format!("{pct} {word}") });
            if tested {
                row.push(test_cell(&ch.test));
            }
        }
        debug_assert_eq!(row.len(), header.len(), "{n} sides");
        rows.push(row);
    }
    Rendered { header, rows, best_cells }
}

/// The seeds' sentence for one side against the baseline: the headline metrics of the unit (IOPS, MB/s,
/// mean latency, p99, transactions per hour, transaction latency, when kept), each `label +N% (better)`.
pub(crate) fn headline(u: &UnitComparison, side: usize) -> Option<String> {
    const KEYS: [&str; 13] = [
        "iops",
        "mb_s",
        "mean",
        "p99",
        "tx.tx_per_hour",
        "tx.mean",
        "tx.p99",
        "nopm",
        "tpm",
        "txn.new_order.p99",
        "query_total",
        "query_geomean",
        "copy_time",
    ];
    let parts: Vec<String> = KEYS
        .iter()
        .filter_map(|k| u.metrics.iter().find(|m| m.key == *k))
        .filter_map(|m| m.changes.get(side - 1))
        .map(|ch| {
            let word = verdict_word(ch.verdict);
            let mut s = ch.phrase.clone();
            match &ch.test {
                // A difference the test cannot tell from noise is not called better or worse.
                Some(t) if !t.significant => {
                    let _ = write!(s, " (not significant, Welch {})", p_equals(t.p));
                }
                Some(t) if !word.is_empty() => {
                    let _ = write!(s, " ({word}, significant, Welch {})", p_equals(t.p));
                }
                Some(t) => {
                    let _ = write!(s, " (significant, Welch {})", p_equals(t.p));
                }
                None if !word.is_empty() => {
                    let _ = write!(s, " ({word})");
                }
                None => {}
            }
            s
        })
        .collect();
    (!parts.is_empty()).then(|| parts.join(", "))
}

/// The comparison as a text table: the sides, then per unit (one for runs, one per point for sweeps) a table
/// with each side's value (`*` marks the best), each side's difference and percent change against the
/// baseline with `better`/`worse`, the test when it ran, and the seeds' one-line summary.
pub(crate) fn compare(c: &Comparison) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "iolab compare · changes vs baseline A · * best · with ≥ {MIN_TRIALS_FOR_TEST} trials a side: {TEST_NAME}, alpha {}",
        c.alpha
    );
    for s in &c.sides {
        let _ = writeln!(out, "{}", side_line(s, c));
    }
    for u in &c.units {
        out.push('\n');
        if let Some(p) = &u.params {
            let trials: Vec<String> = u.trials.iter().map(usize::to_string).collect();
            let _ = writeln!(out, "point {} (trials {})", describe_params(p), trials.join("/"));
        } else if u.trials.iter().any(|&t| t > 1) {
            let trials: Vec<String> = u.trials.iter().map(usize::to_string).collect();
            let _ =
                writeln!(out, "trials {} (values ± coefficient of variation over trials)", trials.join("/"));
        }
        let mut t = unit_table(c, u);
        for &(r, col) in &t.best_cells {
            t.rows[r][col].push_str(" *");
        }
        // Keep the numbers aligned: unmarked value cells get the mark's width.
        for row in &mut t.rows {
            for cell in row.iter_mut().take(c.sides.len() + 1).skip(1) {
                if !cell.ends_with(" *") {
                    cell.push_str("  ");
                }
            }
        }
        let header: Vec<&str> = t.header.iter().map(String::as_str).collect();
        out.push_str(&table(&header, &t.rows));
        for i in 1..c.sides.len() {
            if let Some(h) = headline(u, i) {
                let _ = writeln!(out, "{} vs A: {h}", side_letter(i));
            }
        }
    }
    tail(c, &mut out, "");
    out
}

pub(crate) fn tail(c: &Comparison, out: &mut String, bullet: &str) {
    if !c.unmatched_points.is_empty() {
        out.push('\n');
        for p in &c.unmatched_points {
            let _ = writeln!(
                out,
                "{bullet}point {} only in {}: not compared",
                describe_params(&p.params),
                p.present_in.join(", ")
            );
        }
    }
    if !c.notes.is_empty() {
        out.push('\n');
        for n in &c.notes {
            let _ = writeln!(out, "{bullet}note: {n}");
        }
    }
}
