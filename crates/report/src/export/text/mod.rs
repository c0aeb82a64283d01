//! Text for people: what each command prints. One module per document, and the pieces the run summary is
//! made of (verdict and groups, users and transactions, steady state).

pub(crate) mod compare;
mod db;
mod db_copy;
mod db_sweep;
mod db_tpch;
mod find_max;
mod loadgen;
mod mrc;
mod run;
mod sweep;
mod verdict;

use std::convert::Infallible;

use super::{Document, Exporter};
use crate::format::{format_duration_ns, format_rate};
use crate::steady::SteadyStateResult;

/// The text exporter.
#[derive(Clone, Copy, Debug, Default)]
pub struct TextExporter;

impl TextExporter {
    /// The document as text: every document has one, so this cannot fail ([`Exporter::export`] is the same).
    pub fn render(&self, doc: &Document<'_>) -> String {
        match doc {
            Document::Run(r) => run::run(r),
            Document::Sweep(s) => sweep::sweep(s),
            Document::Compare(c) => compare::compare(c),
            Document::FindMax(f) => find_max::find_max(f),
            Document::Mrc(m) => mrc::mrc(m),
            Document::Db(d) => db::db(d),
            Document::DbSweep(d) => db_sweep::db_sweep(d),
            Document::DbTpch(t) => db_tpch::tpch(t),
            Document::DbCopy(c) => db_copy::copy(c),
        }
    }
}

impl Exporter for TextExporter {
    type Error = Infallible;

    fn export(&self, doc: &Document<'_>) -> Result<String, Infallible> {
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
