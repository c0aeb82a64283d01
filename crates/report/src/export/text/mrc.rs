//! The printed miss-ratio curves (`iolab mrc`): the trace, a table of miss ratio by cache size with a column
//! per policy, each curve's knee, and the recommendation.

use std::fmt::Write as _;

use crate::format::{format_count, table};
use crate::mrc::{MrcCurve, MrcResult};

/// Rows shown at most; the JSON and CSV have every point.
const MAX_ROWS: usize = 24;

pub(crate) fn mrc(m: &MrcResult) -> String {
    let t = &m.trace;
    let object = match t.line_bytes {
        Some(b) => format!("{} lines", crate::format_bytes(b)),
        None => "requests as objects".into(),
    };
    let mut out = format!(
        "trace   {}  {}, {} records ({} bad), {} {} → {} references ({object}), {} distinct objects\n",
        t.path,
        t.format,
        format_count(t.records),
        format_count(t.bad_records),
        format_count(t.ops),
        t.counted_text(),
        format_count(t.references),
        format_count(t.objects),
    );
    if t.installing_writes > 0 {
        let _ = writeln!(out, "writes  {} installed lines, uncounted", format_count(t.installing_writes));
    }
    if let Some(a) = t.alignment_text() {
        let _ = writeln!(out, "lines   {a}");
    }
    for c in &m.curves {
        let _ = writeln!(out, "curve   {}: {}", c.policy, method_text(c));
    }
    out.push('\n');
    out.push_str(&miss_table(m));
    for c in &m.curves {
        if let Some(k) = &c.knee {
            let _ = writeln!(out, "knee    {}: {} (miss ratio {:.3})", c.policy, k.size_text(), k.miss_ratio);
        }
    }
    match m.recommendation_text() {
        Some(r) => {
            let _ = writeln!(out, "recommendation: {r}");
        }
        None => out.push_str("recommendation: none (no cache size serves any reference)\n"),
    }
    out
}

fn method_text(c: &MrcCurve) -> String {
    let rate = if c.sample_rate < 1.0 {
        format!(" at a sampling rate of {:.4}", c.sample_rate)
    } else {
        String::new()
    };
    format!("{}{rate}, {} points", c.method, c.points.len())
}

/// Sizes as rows: those of the simulated curves (fewer), else the first curve's, at most [`MAX_ROWS`].
fn miss_table(m: &MrcResult) -> String {
    let rows_from = m.curves.get(1).or(m.curves.first());
    let Some(rows_from) = rows_from else { return String::new() };
    let n = rows_from.points.len();
    let picked: Vec<usize> = if n <= MAX_ROWS {
        (0..n).collect()
    } else {
        (0..MAX_ROWS).map(|i| i * (n - 1) / (MAX_ROWS - 1)).collect()
    };
    let mut header = vec!["cache"];
    header.extend(m.curves.iter().map(|c| c.policy.as_str()));
    let rows: Vec<Vec<String>> = picked
        .iter()
        .map(|&i| {
            let p = rows_from.points[i];
            let mut row = vec![p.size_text()];
            for c in &m.curves {
                let at = c.points.iter().find(|q| q.size() == p.size());
                row.push(at.map_or("-".into(), |q| format!("{:.4}", q.miss_ratio)));
            }
            row
        })
        .collect();
    let mut out = if picked.len() < n {
        format!(
            "miss ratio by cache size ({} of {n} points shown; the JSON and CSV have all)\n",
            picked.len()
        )
    } else {
        String::from("miss ratio by cache size\n")
    };
    out.push_str(&table(&header, &rows));
    out
}
