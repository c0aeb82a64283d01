//! A comparison (`iolab.compare/1`, [`Comparison`], `iolab compare`): printed as tables, or as Markdown for a
//! ticket; never saved in the catalog, not a report input, not compared again.
//!
//! `iolab report` with several selectors that each select several runs (`report tag:cfg=qd4 tag:cfg=qd32`)
//! shows what `iolab compare` shows of them: a [`ReportedComparison`], the same [`Comparison`] (one
//! computation, [`crate::compare::compare`]) with the warnings of every side's documents, laid out on the
//! page by [`ReportedKind`] (a kind of the report's own, not one a file is read as).

use serde_json::Value;

use crate::compare::{compare, side_letter, CompareError, CompareOptions, Comparison, Side, COMPARE_SCHEMA};
use crate::export::{json::pretty, markdown, text};
use crate::html::compared;
use crate::plugin::{parse_as, Document, Kind, Page, Part, ReportDoc, Stage, Warned};

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

/// A comparison as a report input: what `iolab compare` computes of the sides, and every warning their
/// documents carry (the report's warnings table keeps them; the comparison itself has none).
#[derive(Clone, Debug, PartialEq)]
pub struct ReportedComparison {
    /// The comparison, as `iolab compare` makes it with its defaults.
    pub comparison: Comparison,
    /// The sides' documents' warnings, each found at its side and trial (`side B, trial 2 of 3`).
    pub warnings: Vec<Warned>,
    /// When the first document of the baseline started, and the iolab that wrote it (for the inputs' table
    /// and the page's footer).
    pub first: (String, String),
}

impl ReportedComparison {
    /// Compares `sides` as `iolab compare` does with its defaults (alpha 0.05, every metric), keeping the
    /// warnings of their documents; why not when they cannot be compared.
    pub fn of(sides: &[Side]) -> Result<ReportedComparison, CompareError> {
        let comparison = compare(sides, &CompareOptions::default())?;
        let mut warnings = Vec::new();
        for (i, side) in sides.iter().enumerate() {
            let n = side.docs.len();
            for (t, d) in side.docs.iter().enumerate() {
                let at = format!("side {}, trial {} of {n}", side_letter(i), t + 1);
                warnings.extend(d.warnings().into_iter().map(|w| Warned {
                    at: if w.at.is_empty() { at.clone() } else { format!("{at}, {}", w.at) },
                    ..w
                }));
            }
        }
        let first = sides.first().and_then(|s| s.docs.first());
        let first = first.map_or_else(Default::default, |d| (d.started_at(), d.iolab_version()));
        Ok(ReportedComparison { comparison, warnings, first })
    }
}

/// The kind of a report's comparisons: not in [`super::KINDS`] (no file is read as one), its parts those
/// of the page's overview.
pub struct ReportedKind;

impl Kind for ReportedKind {
    fn schema(&self) -> &'static str {
        COMPARE_SCHEMA
    }
    fn name(&self) -> &'static str {
        "compare"
    }
    fn parse(&self, doc: Value) -> Result<Box<dyn Document>, String> {
        CompareKind.parse(doc)
    }
    fn html(&self) -> &'static [Part] {
        &[Part::Each(Stage::Overview, section)]
    }
    fn markdown(&self) -> &'static [Part] {
        &[Part::Each(Stage::Overview, section_md)]
    }
}

impl Document for ReportedComparison {
    fn kind(&self) -> &'static dyn Kind {
        &ReportedKind
    }
    fn text(&self) -> String {
        text::compare::compare(&self.comparison)
    }
    fn json(&self) -> String {
        pretty(&self.comparison) + "\n"
    }
    fn markdown(&self) -> Option<String> {
        Some(markdown::compare(&self.comparison))
    }
    fn started_at(&self) -> String {
        self.first.0.clone()
    }
    fn iolab_version(&self) -> String {
        self.first.1.clone()
    }
    fn warnings(&self) -> Vec<Warned> {
        self.warnings.clone()
    }
}

fn section(p: &mut Page, d: &ReportDoc) {
    if let Some(r) = d.body.as_any().downcast_ref::<ReportedComparison>() {
        compared::section(&mut p.out, d, &r.comparison);
    }
}

fn section_md(p: &mut Page, d: &ReportDoc) {
    if let Some(r) = d.body.as_any().downcast_ref::<ReportedComparison>() {
        compared::section_md(&mut p.out, d, &r.comparison);
    }
}
