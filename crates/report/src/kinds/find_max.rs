//! A `--find-max` search (`iolab.findmax/1`, [`FindMaxResult`]): kept in the catalog as `find_max` (typed
//! `find-max`), listed by the achieved IOPS of its largest passing step; on the report's page its steps'
//! chart and its table; not compared (its steps are runs, compared as runs).

use serde_json::Value;

use super::columns::IOPS;
use crate::export::{csv, json::pretty, text};
use crate::find_max::{FindMaxResult, FIND_MAX_SCHEMA};
use crate::html::{markdown, page};
use crate::plugin::catalog::{f64_at, push_unique, str_at};
use crate::plugin::{parse_as, Column, Document, EntryKind, Kind, Page, Part, ReportDoc, Stage, Warned};

/// The kind of find-max searches.
pub struct FindMaxKind;

impl Kind for FindMaxKind {
    fn schema(&self) -> &'static str {
        FIND_MAX_SCHEMA
    }
    fn name(&self) -> &'static str {
        "find-max"
    }
    fn parse(&self, doc: Value) -> Result<Box<dyn Document>, String> {
        parse_as::<FindMaxResult>(self, doc)
    }
    fn entries(&self) -> &'static [EntryKind] {
        &[EntryKind { stored: "find_max", typed: &["find-max", "findmax"], what: "--find-max searches" }]
    }
    /// Its profile and targets as the search names them; its headline the achieved IOPS of the largest
    /// passing step.
    fn columns(&self, doc: &Value, c: &mut iolab_doc::Columns) {
        c.profile = str_at(doc, "/profile");
        for t in doc.get("targets").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str) {
            push_unique(&mut c.targets, t);
        }
        let steps = doc.get("steps").and_then(Value::as_array);
        let passing = steps.into_iter().flatten().filter(|s| s["pass"].as_bool() == Some(true));
        let best = passing
            .max_by(|a, b| f64_at(a, "/value").unwrap_or(0.0).total_cmp(&f64_at(b, "/value").unwrap_or(0.0)));
        c.set_figure("iops", best.and_then(|s| f64_at(s, "/achieved_iops")));
    }
    fn listing(&self) -> &'static [&'static Column] {
        &[&IOPS]
    }
    fn html(&self) -> &'static [Part] {
        &[Part::Each(Stage::Searches, section)]
    }
    fn markdown(&self) -> &'static [Part] {
        &[Part::Each(Stage::Searches, as_text)]
    }
}

impl Document for FindMaxResult {
    fn kind(&self) -> &'static dyn Kind {
        &FindMaxKind
    }
    fn text(&self) -> String {
        text::find_max::find_max(self)
    }
    fn json(&self) -> String {
        pretty(self) + "\n"
    }
    fn csv(&self) -> Option<String> {
        Some(csv::find_max(self))
    }
    fn started_at(&self) -> String {
        self.started_at.clone()
    }
    fn iolab_version(&self) -> String {
        self.iolab_version.clone()
    }
    /// None of its own: its steps' failed checks and its noise are its answer, shown with it.
    fn warnings(&self) -> Vec<Warned> {
        Vec::new()
    }
}

/// A search's section: each step's worst latency check against its limit, and its table.
fn section(p: &mut Page, d: &ReportDoc) {
    if let Some(f) = d.body.as_any().downcast_ref::<FindMaxResult>() {
        page::find_max_section(&mut p.out, d, f, &mut p.charts);
    }
}

/// A search in Markdown: its table, as text.
fn as_text(p: &mut Page, d: &ReportDoc) {
    markdown::as_text(&mut p.out, "Find-max search", d);
}
