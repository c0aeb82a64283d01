//! A tpcc run (`iolab.db/1`, [`DbResult`], `iolab db tpcc`): kept in the catalog as `db`, listed by its NOPM
//! and new-order p99; on the report's page side by side with the other tpcc runs, then in a section of its
//! own; compared with tpcc runs only (`compare::db`).

use serde_json::Value;

use super::columns::{db_columns, NOPM, P99};
use crate::db::{DbHeader, DbResult, DB_SCHEMA};
use crate::export::{json::pretty, text};
use crate::html::{db_page, markdown};
use crate::plugin::{
    docs_of, parse_as, Column, Facet, Warned, Comparing, Document, EntryKind, Kind, Page, Part, ReportDoc, Stage,
};

/// The kind of tpcc runs.
pub struct TpccKind;

impl Kind for TpccKind {
    fn schema(&self) -> &'static str {
        DB_SCHEMA
    }
    fn name(&self) -> &'static str {
        "db"
    }
    fn parse(&self, doc: Value) -> Result<Box<dyn Document>, String> {
        parse_as::<DbResult>(self, doc)
    }
    fn entries(&self) -> &'static [EntryKind] {
        &[EntryKind { stored: "db", typed: &["db"], what: "`iolab db tpcc` runs" }]
    }
    fn columns(&self, doc: &Value, c: &mut iolab_doc::Columns) {
        db_columns(doc, c);
    }
    fn listing(&self) -> &'static [&'static Column] {
        &[&NOPM, &P99]
    }
    fn html(&self) -> &'static [Part] {
        &[Part::Group(Stage::Databases, sections)]
    }
    fn markdown(&self) -> &'static [Part] {
        &[Part::Group(Stage::Databases, sections_md)]
    }
    fn without_csv(&self) -> Option<&'static str> {
        Some(super::columns::DATABASE_RUN_WITHOUT_CSV)
    }
    fn compare(&self) -> Option<&'static dyn Comparing> {
        Some(&crate::compare::db::TPCC)
    }
}

/// When a database document started, RFC 3339 (its header has whole Unix seconds).
pub(crate) fn started_at(h: &DbHeader) -> String {
    iolab_doc::time::format_rfc3339(h.start_unix_s as f64)
}

impl Document for DbResult {
    fn kind(&self) -> &'static dyn Kind {
        &TpccKind
    }
    fn text(&self) -> String {
        text::db::db(self)
    }
    fn json(&self) -> String {
        pretty(self) + "\n"
    }
    fn started_at(&self) -> String {
        started_at(&self.header)
    }
    fn iolab_version(&self) -> String {
        self.header.iolab_version.clone()
    }
    /// Its workload, engine, users, warehouses and settings: the side-by-side charts name runs by them.
    fn facets(&self) -> Vec<Facet> {
        crate::html::names::db_facets(self)
    }
    fn warnings(&self) -> Vec<Warned> {
        self.warnings.iter().map(Warned::of).collect()
    }
}

/// The tpcc runs' sections: side by side when several, then one each.
fn sections(p: &mut Page, docs: &[&ReportDoc]) {
    db_page::db_sections(&mut p.out, &docs_of::<DbResult>(docs), &mut p.charts);
}

/// The tpcc runs in Markdown.
fn sections_md(p: &mut Page, docs: &[&ReportDoc]) {
    markdown::db_runs(&mut p.out, &docs_of::<DbResult>(docs));
}
