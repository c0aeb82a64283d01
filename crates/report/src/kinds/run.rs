//! A run (`iolab.result/1`, [`RunResult`]): kept in the catalog as `run`, and as `verify` for an `iolab
//! verify` check ([`VERIFY`]), apart from the runs that measure performance; listed by its IOPS, MB/s and
//! p99; on the report's page side by side with the other runs, then in a section of its own; compared as
//! one run or as trials of one configuration (`compare::io`).

use serde_json::Value;

use super::columns::{run_columns, IOPS, MB_S, P99};
use crate::export::{csv, json::pretty, text};
use crate::html::{markdown, names, page};
use crate::plugin::catalog::str_at;
use crate::plugin::{
    docs_of, parse_as, Column, Warned, Comparing, Document, EntryKind, Facet, Kind, Page, Part, ReportDoc, Stage,
};
use crate::{RunResult, SCHEMA};

/// The kind of runs.
pub struct RunKind;

/// A run as the catalog keeps it.
pub const RUN_ENTRY: EntryKind = EntryKind { stored: "run", typed: &["run"], what: "runs" };

/// An `iolab verify` check as the catalog keeps it: a run's document, kept apart from the runs that measure
/// performance.
pub const VERIFY: EntryKind = EntryKind { stored: "verify", typed: &["verify"], what: "`iolab verify` checks" };

impl Kind for RunKind {
    fn schema(&self) -> &'static str {
        SCHEMA
    }
    fn name(&self) -> &'static str {
        "run"
    }
    fn parse(&self, doc: Value) -> Result<Box<dyn Document>, String> {
        parse_as::<RunResult>(self, doc)
    }
    fn entries(&self) -> &'static [EntryKind] {
        &[RUN_ENTRY, VERIFY]
    }
    fn columns(&self, doc: &Value, c: &mut iolab_doc::Columns) {
        c.run_id = str_at(doc, "/run_id");
        run_columns(doc, &[], c);
    }
    fn listing(&self) -> &'static [&'static Column] {
        &[&IOPS, &MB_S, &P99]
    }
    fn html(&self) -> &'static [Part] {
        &[Part::Group(Stage::Overview, side_by_side), Part::Group(Stage::Runs, sections)]
    }
    fn markdown(&self) -> &'static [Part] {
        &[Part::Group(Stage::Overview, summary), Part::Group(Stage::Details, details)]
    }
    fn compare(&self) -> Option<&'static dyn Comparing> {
        Some(&crate::compare::io::RUNS)
    }
}

impl Document for RunResult {
    fn kind(&self) -> &'static dyn Kind {
        &RunKind
    }
    fn text(&self) -> String {
        text::run::run(self)
    }
    /// Pretty JSON, without a newline at the end (as `iolab run --json` has always written it).
    fn json(&self) -> String {
        pretty(self)
    }
    fn csv(&self) -> Option<String> {
        Some(csv::run(self))
    }
    fn started_at(&self) -> String {
        self.started_at.clone()
    }
    fn iolab_version(&self) -> String {
        self.iolab_version.clone()
    }
    fn facets(&self) -> Vec<Facet> {
        names::facets(self)
    }
    fn warnings(&self) -> Vec<Warned> {
        self.warnings.iter().map(|w| Warned::stats(String::new(), w)).collect()
    }
}

/// Several runs side by side (bars, overlaid percentile curves, a table), when there are several.
fn side_by_side(p: &mut Page, docs: &[&ReportDoc]) {
    let runs = docs_of::<RunResult>(docs);
    if runs.len() >= 2 {
        page::comparison_section(&mut p.out, &runs, &mut p.charts);
    }
}

/// Each run's section: cards, verdict, charts and tables.
fn sections(p: &mut Page, docs: &[&ReportDoc]) {
    for (i, (d, r)) in docs_of::<RunResult>(docs).into_iter().enumerate() {
        page::run_section(&mut p.out, i, d, r, &mut p.charts);
    }
}

/// The runs' summary in Markdown: a row each, percentiles, each against the first.
fn summary(p: &mut Page, docs: &[&ReportDoc]) {
    markdown::runs_summary(&mut p.out, &docs_of::<RunResult>(docs));
}

/// Each run's details in Markdown.
fn details(p: &mut Page, docs: &[&ReportDoc]) {
    for (d, r) in docs_of::<RunResult>(docs) {
        markdown::run_details(&mut p.out, d, r);
    }
}
