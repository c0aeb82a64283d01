//! What a kind declares for `iolab report`: its parts of the HTML page and of the Markdown report, each at a
//! [`Stage`] of the page. The page is laid out stage by stage (`crate::html`); a kind's part gets the report's
//! inputs of its kind.

use super::Document;

/// One input of a report: a document and how to name it.
#[derive(Clone, Debug)]
pub struct ReportDoc {
    /// Short name used in legends and headings (a catalog id with its tags, or a file name).
    pub label: String,
    /// Where it came from (a file path or `catalog ID`).
    pub source: String,
    /// Catalog tags (`key=value`), if any.
    pub tags: Vec<(String, String)>,
    /// Catalog note, if any.
    pub note: Option<String>,
    /// The document.
    pub body: Box<dyn Document>,
}

/// Where a part goes, top to bottom: the stages in this order, and in one stage the [`Part::Group`]s (in the
/// order their kinds first appear among the inputs) before the [`Part::Each`]es (in input order).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Stage {
    /// What sums up several I/O runs: the runs side by side.
    Overview,
    /// The sweeps' figures and tables.
    Sweeps,
    /// One section per I/O run.
    Runs,
    /// The database runs: side by side, then one section each.
    Databases,
    /// One section per database document of the other kinds (a sweep over users, a query set, a copy).
    DatabaseEach,
    /// What comes after those in the Markdown report (the sweeps over users).
    DatabaseSweeps,
    /// Searches and curves (find-max searches, miss-ratio curves), each in input order.
    Searches,
    /// The details that close the Markdown report (each run's tables).
    Details,
}

/// The page (or Markdown) being written, and how many charts it has so far (each chart's number is its
/// place on the page).
#[derive(Debug, Default)]
pub struct Page {
    /// The text so far.
    pub out: String,
    /// Charts drawn so far.
    pub charts: usize,
}

/// A part of the page a kind writes.
#[derive(Clone, Copy, Debug)]
pub enum Part {
    /// Written once, with every input of the kind, in input order; skipped when the report has none.
    Group(Stage, fn(&mut Page, &[&ReportDoc])),
    /// Written for each input of the kind.
    Each(Stage, fn(&mut Page, &ReportDoc)),
}

impl Part {
    /// Its stage.
    pub fn stage(&self) -> Stage {
        match self {
            Part::Group(s, _) | Part::Each(s, _) => *s,
        }
    }
}

/// The inputs whose documents are `T`s, each with its document as a `T`.
pub fn docs_of<'a, T: 'static>(docs: &[&'a ReportDoc]) -> Vec<(&'a ReportDoc, &'a T)> {
    docs.iter().filter_map(|d| d.body.as_any().downcast_ref::<T>().map(|t| (*d, t))).collect()
}
