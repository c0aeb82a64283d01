//! Reports for people: one self-contained HTML page ([`render_html`]) or Markdown for tickets
//! ([`render_markdown`]) from one or more run results and sweeps (`iolab report`).
//!
//! The page holds the seeds' figures drawn from the documents' own data: summary cards; per run the latency
//! percentile curve (from the merged HDR histograms) and the per-interval time series; for sweeps IOPS (or
//! MB/s along block size) and latency against each swept field, with the knee marked, several sweeps
//! overlaid (QLogic vs Emulex); for several runs side-by-side bars; and the configuration, environment,
//! warnings, verdict and LoadGen tables; per database run (`iolab db`) NOPM and TPM, each transaction's
//! response times (a table, bars and percentile curves), the consistency conditions and the devices under the
//! database, several side by side, a sweep over users as NOPM against users with the knee, a tpch query
//! set's query times (a table and bars, total and geometric mean) and a copy's time, rate and devices. It has inline
//! CSS and SVG only: no script, font or URL, so it
//! opens offline, mails as one file and prints (charts use line styles and markers as well as colours).
//!
//! Both renderings read the same figure data (the `figures` module), so the Markdown tables carry the numbers the
//! charts draw. Everything from a document (names, tags, notes, paths, config values) is escaped. See
//! docs/REPORTS.md.
//!
//! The page is laid out by stage ([`crate::plugin::Stage`]): each kind of document declares its parts and
//! where they go (`crate::kinds`), and the sections here are the pieces its parts are made of.

pub(crate) mod ai_page;
pub(crate) mod charts;
pub(crate) mod compared;
pub(crate) mod db_figures;
pub(crate) mod db_page;
pub(crate) mod figures;
pub(crate) mod markdown;
pub(crate) mod names;
pub(crate) mod page;
pub(crate) mod parts;

use crate::plugin::{Kind, Page, Part};

pub use crate::plugin::ReportDoc;
pub use markdown::render_markdown;
pub use page::render_html;

/// Writes the parts of every kind among `docs` (`parts` picks a kind's: HTML or Markdown), stage by stage
/// ([`crate::plugin::Stage`]): in a stage, each kind's [`Part::Group`] with its inputs (the kinds in the
/// order they first appear), then the [`Part::Each`]es in input order.
pub(crate) fn lay_out(page: &mut Page, docs: &[ReportDoc], parts: fn(&dyn Kind) -> &'static [Part]) {
    let mut kinds: Vec<&'static dyn Kind> = Vec::new();
    for d in docs {
        if !kinds.iter().any(|k| *k == d.body.kind()) {
            kinds.push(d.body.kind());
        }
    }
    let mut stages: Vec<_> = kinds.iter().flat_map(|k| parts(*k)).map(Part::stage).collect();
    stages.sort();
    stages.dedup();
    for stage in stages {
        for kind in &kinds {
            let of_kind: Vec<&ReportDoc> = docs.iter().filter(|d| d.body.kind() == *kind).collect();
            for part in parts(*kind).iter().filter(|p| p.stage() == stage) {
                if let Part::Group(_, write) = part {
                    write(page, &of_kind);
                }
            }
        }
        for d in docs {
            for part in parts(d.body.kind()).iter().filter(|p| p.stage() == stage) {
                if let Part::Each(_, write) = part {
                    write(page, d);
                }
            }
        }
    }
}

/// The kind of each input and when it started, for the tables of inputs.
pub(crate) fn kind_and_start(d: &ReportDoc) -> (&'static str, String) {
    (d.body.kind().name(), d.body.started_at())
}

/// Escapes text for HTML element content and attribute values.
pub fn escape_html(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests;
