//! Text for people: what each command prints. One module per document, and the pieces the run summary is
//! made of (verdict and groups, users and transactions, steady state).

pub(crate) mod compare;
pub(crate) mod db;
pub(crate) mod db_copy;
pub(crate) mod db_sweep;
pub(crate) mod db_tpch;
pub(crate) mod find_max;
mod loadgen;
pub(crate) mod mrc;
pub(crate) mod run;
pub(crate) mod sweep;
mod verdict;

use std::convert::Infallible;

use super::Exporter;
use crate::format::{format_duration_ns, format_rate};
use crate::plugin::Document;
use crate::steady::SteadyStateResult;

/// The text exporter.
#[derive(Clone, Copy, Debug, Default)]
pub struct TextExporter;

impl TextExporter {
    /// The document as text: every document has one, so this cannot fail ([`Exporter::export`] is the same).
    pub fn render(&self, doc: &dyn Document) -> String {
        doc.text()
    }
}

impl Exporter for TextExporter {
    type Error = Infallible;

    fn export(&self, doc: &dyn Document) -> Result<String, Infallible> {
        Ok(self.render(doc))
    }
}

/// One line describing a steady-state outcome.
pub fn steady_state_line(r: &SteadyStateResult) -> String {
    let what = if r.rule.metric == "lat" { "mean latency" } else { "IOPS" };
    let values: Vec<String> = r
        .window
        .iter()
        .map(|v| if r.rule.metric == "lat" { format_duration_ns(*v) } else { format_rate(*v, 0) })
        .collect();
    format!(
        "{} after {:.0} s ({what} within {}% of the {:.0} s window's mean; max deviation {:.2}%; limit {:.0} s); window: {}",
        if r.reached { "steady state reached" } else { "steady state NOT reached" },
        r.after_s,
        r.rule.max_dev_pct,
        r.rule.window_s,
        r.window_max_dev_pct,
        r.rule.limit_s,
        values.join(" ")
    )
}
