//! A comparison on the report's page (`iolab report tag:cfg=qd4 tag:cfg=qd32`): what `iolab compare` prints of
//! the same sides, from the same tables ([`crate::export::text::compare::unit_table`]): the sides with their
//! trials' runs, per unit each side's value (± its noise over trials), the difference, the percent change
//! and the test's verdict on it, the one-line summaries and the notes.

use std::fmt::Write as _;

use super::{escape_html as esc, ReportDoc};
use crate::compare::{side_letter, Comparison, MIN_TRIALS_FOR_TEST, TEST_NAME};
use crate::export::text::compare::{describe_params, headline, side_line, tail, unit_table};

/// What a unit's table is over: its point and trials per side, or the sides' trials.
fn unit_caption(u: &crate::compare::UnitComparison) -> Option<String> {
    let trials: Vec<String> = u.trials.iter().map(usize::to_string).collect();
    match &u.params {
        Some(p) => Some(format!("Point {} (trials {})", describe_params(p), trials.join("/"))),
        None if u.trials.iter().any(|&t| t > 1) => {
            Some(format!("Trials {} (values ± coefficient of variation over trials)", trials.join("/")))
        }
        None => None,
    }
}

/// The comparison's section: the sides (each with its runs), a table per unit (the best value in bold), the
/// summaries of each side against the baseline, and the notes.
pub(crate) fn section(out: &mut String, d: &ReportDoc, c: &Comparison) {
    let _ =
        writeln!(out, "<section class=\"compare\" id=\"compare\">\n<h2>Comparison: {}</h2>", esc(&d.label));
    let _ = writeln!(
        out,
        "<p class=\"meta\">As <code>iolab compare</code> computes it: changes vs baseline A; best value in bold; with ≥ {MIN_TRIALS_FOR_TEST} trials a side: {}, alpha {}.</p>",
        esc(TEST_NAME),
        c.alpha
    );
    out.push_str("<ul class=\"sides\">\n");
    for s in &c.sides {
        let ids = s.run_ids.iter().filter(|id| !id.is_empty()).cloned().collect::<Vec<_>>();
        let runs = if ids.len() > 1 { format!(": {}", ids.join(", ")) } else { String::new() };
        let _ = writeln!(out, "<li class=\"side\">{}{}</li>", esc(&side_line(s, c)), esc(&runs));
    }
    out.push_str("</ul>\n");
    for u in &c.units {
        if let Some(caption) = unit_caption(u) {
            let _ = writeln!(out, "<p class=\"meta\">{}</p>", esc(&caption));
        }
        let t = unit_table(c, u);
        out.push_str("<table><tr>");
        for (i, h) in t.header.iter().enumerate() {
            let _ = write!(out, "<th{}>{}</th>", if i > 0 { " class=\"n\"" } else { "" }, esc(h));
        }
        out.push_str("</tr>\n");
        for (r, row) in t.rows.iter().enumerate() {
            out.push_str("<tr>");
            for (col, cell) in row.iter().enumerate() {
                let class = if col > 0 { " class=\"n\"" } else { "" };
                if t.best_cells.contains(&(r, col)) {
                    let _ = write!(out, "<td{class}><strong>{}</strong></td>", esc(cell));
                } else {
                    let _ = write!(out, "<td{class}>{}</td>", esc(cell));
                }
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</table>\n");
        for i in 1..c.sides.len() {
            if let Some(h) = headline(u, i) {
                let _ = writeln!(out, "<p class=\"verdict\">{} vs A: {}</p>", side_letter(i), esc(&h));
            }
        }
    }
    let mut notes = String::new();
    tail(c, &mut notes, "");
    let notes: Vec<&str> = notes.lines().filter(|l| !l.is_empty()).collect();
    if !notes.is_empty() {
        out.push_str("<ul class=\"notes\">\n");
        for n in notes {
            let _ = writeln!(out, "<li>{}</li>", esc(n));
        }
        out.push_str("</ul>\n");
    }
    out.push_str("</section>\n");
}

/// The comparison in the Markdown report: under a heading, what `iolab compare --format md` prints.
pub(crate) fn section_md(out: &mut String, d: &ReportDoc, c: &Comparison) {
    let _ = writeln!(out, "### Comparison: {}\n", super::markdown::cell(&d.label));
    out.push_str(&crate::export::markdown::compare(c));
    out.push('\n');
}
