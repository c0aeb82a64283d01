//! Miss-ratio curves of a trace (`iolab.mrc/1`, [`MrcResult`], `iolab mrc`): never saved in the catalog; on
//! the report's page their chart and the recommendation; not compared.

use serde_json::Value;

use crate::export::{csv, json::pretty, text};
use crate::html::{markdown, page};
use crate::mrc::{MrcResult, MRC_SCHEMA};
use crate::plugin::{parse_as, Document, Kind, Page, Part, ReportDoc, Stage, Warned};

/// The kind of miss-ratio curves.
pub struct MrcKind;

impl Kind for MrcKind {
    fn schema(&self) -> &'static str {
        MRC_SCHEMA
    }
    fn name(&self) -> &'static str {
        "mrc"
    }
    fn parse(&self, doc: Value) -> Result<Box<dyn Document>, String> {
        parse_as::<MrcResult>(self, doc)
    }
    fn html(&self) -> &'static [Part] {
        &[Part::Each(Stage::Searches, section)]
    }
    fn markdown(&self) -> &'static [Part] {
        &[Part::Each(Stage::Searches, as_text)]
    }
}

impl Document for MrcResult {
    fn kind(&self) -> &'static dyn Kind {
        &MrcKind
    }
    fn text(&self) -> String {
        text::mrc::mrc(self)
    }
    fn json(&self) -> String {
        pretty(self) + "\n"
    }
    fn csv(&self) -> Option<String> {
        Some(csv::mrc(self))
    }
    fn iolab_version(&self) -> String {
        self.iolab_version.clone()
    }
    /// None: curves computed from a trace carry no warnings.
    fn warnings(&self) -> Vec<Warned> {
        Vec::new()
    }
}

/// The curves' section: the chart and the recommendation.
fn section(p: &mut Page, d: &ReportDoc) {
    if let Some(m) = d.body.as_any().downcast_ref::<MrcResult>() {
        page::mrc_section(&mut p.out, d, m, &mut p.charts);
    }
}

/// The curves in Markdown: their table, as text.
fn as_text(p: &mut Page, d: &ReportDoc) {
    markdown::as_text(&mut p.out, "Miss-ratio curves", d);
}
