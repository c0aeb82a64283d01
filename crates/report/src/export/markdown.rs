//! Markdown for a ticket: a comparison's sides as a list, one table per unit (the best value in bold) and the
//! seeds' one-line summaries. Runs, sweeps and searches have no Markdown form here (`iolab report --format md`
//! makes a Markdown report of runs and sweeps: [`crate::html`]).

use std::fmt::Write as _;

use super::text::compare::{describe_params, headline, side_line, tail, unit_table};
use super::{Exporter, Unsupported};
use crate::compare::{side_letter, Comparison, MIN_TRIALS_FOR_TEST, TEST_NAME};
use crate::plugin::Document;

/// The Markdown exporter.
#[derive(Clone, Copy, Debug, Default)]
pub struct MarkdownExporter;

impl MarkdownExporter {
    /// The document as Markdown, or [`Unsupported`] for a document without a Markdown form.
    pub fn render(&self, doc: &dyn Document) -> Result<String, Unsupported> {
        doc.markdown().ok_or(Unsupported { format: "markdown", document: doc.kind().name() })
    }
}

impl Exporter for MarkdownExporter {
    type Error = Unsupported;

    fn export(&self, doc: &dyn Document) -> Result<String, Unsupported> {
        self.render(doc)
    }
}

fn md_escape(s: &str) -> String {
    s.replace('|', "\\|").replace('*', "\\*")
}

/// The comparison as Markdown for a ticket: the sides as a list, one table per unit (the best value in
/// bold), and the seeds' one-line summaries as a list.
pub(crate) fn compare(c: &Comparison) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "**iolab compare**: changes vs baseline A; best value in bold; with ≥ {MIN_TRIALS_FOR_TEST} trials a side: {TEST_NAME}, alpha {}.\n",
        c.alpha
    );
    for s in &c.sides {
        let _ = writeln!(out, "- {}", md_escape(&side_line(s, c)));
    }
    for u in &c.units {
        out.push('\n');
        if let Some(p) = &u.params {
            let trials: Vec<String> = u.trials.iter().map(usize::to_string).collect();
            let _ =
                writeln!(out, "**Point {}** (trials {})\n", md_escape(&describe_params(p)), trials.join("/"));
        } else if u.trials.iter().any(|&t| t > 1) {
            let trials: Vec<String> = u.trials.iter().map(usize::to_string).collect();
            let _ = writeln!(
                out,
                "Trials {} (values ± coefficient of variation over trials)\n",
                trials.join("/")
            );
        }
        let mut t = unit_table(c, u);
        for row in &mut t.rows {
            for cell in row.iter_mut() {
                *cell = md_escape(cell);
            }
        }
        for &(r, col) in &t.best_cells {
            t.rows[r][col] = format!("**{}**", t.rows[r][col]);
        }
        let _ = writeln!(out, "| {} |", t.header.join(" | "));
        let align: Vec<&str> = (0..t.header.len()).map(|i| if i == 0 { ":--" } else { "--:" }).collect();
        let _ = writeln!(out, "| {} |", align.join(" | "));
        for row in &t.rows {
            let _ = writeln!(out, "| {} |", row.join(" | "));
        }
        let lines: Vec<String> = (1..c.sides.len())
            .filter_map(|i| headline(u, i).map(|h| format!("{} vs A: {h}", side_letter(i))))
            .collect();
        if !lines.is_empty() {
            out.push('\n');
            for l in lines {
                let _ = writeln!(out, "- {}", md_escape(&l));
            }
        }
    }
    tail(c, &mut out, "- ");
    out
}
