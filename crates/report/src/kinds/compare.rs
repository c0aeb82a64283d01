//! A comparison (`iolab.compare/1`, [`Comparison`], `iolab compare`): printed as tables, or as Markdown for a
//! ticket; never saved in the catalog, not a report input, not compared again.

use serde_json::Value;

use crate::compare::{Comparison, COMPARE_SCHEMA};
use crate::export::{json::pretty, markdown, text};
use crate::plugin::{parse_as, Document, Kind, Warned};

/// The kind of comparisons.
pub struct CompareKind;

impl Kind for CompareKind {
    fn schema(&self) -> &'static str {
        COMPARE_SCHEMA
    }
    fn name(&self) -> &'static str {
        "compare"
    }
    fn parse(&self, doc: Value) -> Result<Box<dyn Document>, String> {
        parse_as::<Comparison>(self, doc)
    }
}

impl Document for Comparison {
    fn kind(&self) -> &'static dyn Kind {
        &CompareKind
    }
    fn text(&self) -> String {
        text::compare::compare(self)
    }
    fn json(&self) -> String {
        pretty(self) + "\n"
    }
    fn markdown(&self) -> Option<String> {
        Some(markdown::compare(self))
    }
    /// A comparison does not say which iolab made it.
    fn iolab_version(&self) -> String {
        String::new()
    }
    /// None: what a comparison has to say of its sides is in its notes and its tables.
    fn warnings(&self) -> Vec<Warned> {
        Vec::new()
    }
}
