//! The document-kind plug-in: what every kind of document iolab writes (a run, a sweep, a find-max search,
//! miss-ratio curves, a tpcc run and its sweep over users, a tpch query set, a copy, a comparison) declares,
//! once, in its own file under [`crate::kinds`], where [`crate::kinds::KINDS`] lists them.
//!
//! - [`Document`]: one document, whatever its kind: the kind it is and its renderings (text, JSON, CSV and
//!   Markdown where it has them), what the report's table of inputs says of it;
//! - [`Kind`]: what a kind declares: its schema, its name, how it is read from JSON, the catalog's kinds
//!   of entries that hold it and its columns there ([`catalog`]), its parts of `iolab report`'s page and of
//!   the Markdown report ([`report`]), and what `iolab compare` reads from it ([`compare`]).
//!
//! This module names no renderer and no consumer: the exporters ([`crate::export`]), the report
//! ([`crate::html`]) and compare ([`crate::compare`]) read documents through it, and the kinds implement it
//! with them, so every dependency points one way (docs/ARCHITECTURE.md, "Adding a document kind").

use std::any::Any;
use std::fmt::Debug;

use serde_json::Value;

pub mod catalog;
pub mod compare;
pub mod report;

pub use catalog::{Column, ColumnShown, EntryKind};
pub use compare::{
    Better, ComparedPoint, ComparedTrial, Comparing, HistogramParts, Merged, Metric, PartsFn, Peers,
    Quantile, Unit, ValueFn,
};
pub use report::{docs_of, Page, Part, ReportDoc, Stage};

/// One workload facet of a document, for the names the report gives its inputs in legends: a key (`job`,
/// `io`, `bs`, `qd`, `workers`, `rate`, `target`) and its text (`randread`, `4k`).
pub type Facet = (&'static str, String);

/// One document iolab writes, whatever its kind. The exporters render it ([`crate::TextExporter`],
/// [`crate::JsonExporter`], ...); the kind tells the rest.
pub trait Document: AnyDocument + Debug + Send + Sync {
    /// Its kind.
    fn kind(&self) -> &'static dyn Kind;

    /// As text: what the command that made it prints.
    fn text(&self) -> String;

    /// As JSON: what `--json` writes.
    fn json(&self) -> String;

    /// As CSV, where it has a CSV form (a run's time series, a sweep's points, ...).
    fn csv(&self) -> Option<String> {
        None
    }

    /// As Markdown for a ticket, where it has that form (a comparison).
    fn markdown(&self) -> Option<String> {
        None
    }

    /// When it started, RFC 3339 (the report's table of inputs); empty when it has no time (miss-ratio
    /// curves).
    fn started_at(&self) -> String {
        String::new()
    }

    /// The iolab version that wrote it.
    fn iolab_version(&self) -> String;

    /// Its workload's facets, for the names the report gives inputs in legends; none for a kind the report
    /// names by its label.
    fn facets(&self) -> Vec<Facet> {
        Vec::new()
    }

    /// Every warning it carries, each once, in its order: what its text says with `warning:`, and what the
    /// report's page and Markdown list under "Warnings" (the report writes them itself, for every input of
    /// every kind, so a kind cannot leave them out). No default: a kind says what its warnings are, or that
    /// it has none.
    fn warnings(&self) -> Vec<Warned>;
}

/// One warning of a document, as every rendering shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Warned {
    /// Where in the document it was found: empty for the whole document, else its points (`qd=4`,
    /// `users 4, 8`).
    pub at: String,
    /// The warning, in words.
    pub text: String,
    /// What to do about it; empty when the text says.
    pub hint: String,
}

impl Warned {
    /// A warning of the whole document, its text saying what to do.
    pub fn of(text: impl Into<String>) -> Warned {
        Warned { at: String::new(), text: text.into(), hint: String::new() }
    }

    /// A warning of the stats crate's kinds (a run's, a sweep point's), found at `at`.
    pub fn stats(at: String, w: &iolab_stats::Warning) -> Warned {
        Warned { at, text: w.message(), hint: w.hint().unwrap_or_default() }
    }
}

/// What every [`Document`] has by being a `Clone` type, given to it: itself as [`Any`], to be read as its
/// own type by its kind's parts ([`report::docs_of`], [`ComparedTrial::get`]), and a boxed copy.
pub trait AnyDocument: Any {
    /// Itself, as [`Any`].
    fn as_any(&self) -> &dyn Any;

    /// A boxed copy.
    fn clone_box(&self) -> Box<dyn Document>;
}

impl<T: Document + Clone> AnyDocument for T {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn clone_box(&self) -> Box<dyn Document> {
        Box::new(self.clone())
    }
}

impl Clone for Box<dyn Document> {
    fn clone(&self) -> Self {
        self.clone_box()
    }
}

/// What a kind of document declares, once (ripgrep's `Flag` is the model: one implementation per kind, all
/// of them in one list, [`crate::kinds::KINDS`]).
pub trait Kind: Sync {
    /// The schema its documents carry, with its version (`iolab.dbtpch/1`): a JSON document whose `schema`
    /// is this one is of this kind.
    fn schema(&self) -> &'static str;

    /// The kind in words, as the report's table of inputs and messages name it: `run`, `find-max`,
    /// `db tpch`.
    fn name(&self) -> &'static str;

    /// Reads a document of this kind from its JSON (already recognised by its schema); the error says what
    /// does not fit.
    fn parse(&self, doc: Value) -> Result<Box<dyn Document>, String>;

    /// The kinds of catalog entries that hold its documents: how the catalog stores each and how users type
    /// it. None for a kind that is never saved (a comparison, miss-ratio curves).
    fn entries(&self) -> &'static [EntryKind] {
        &[]
    }

    /// Fills the columns the catalog keeps beside a document of this kind (after the common ones,
    /// [`catalog::common_columns`]): its name, targets and headline figures. Reads the JSON, tolerating
    /// what is missing, so a document from an older or newer iolab lists with what it has.
    fn columns(&self, doc: &Value, columns: &mut iolab_doc::Columns) {
        let _ = (doc, columns);
    }

    /// The columns of `iolab runs` its headline figures are shown in.
    fn listing(&self) -> &'static [&'static Column] {
        &[]
    }

    /// Its parts of `iolab report`'s HTML page; none for a kind the report does not take.
    fn html(&self) -> &'static [Part] {
        &[]
    }

    /// Its parts of `iolab report`'s Markdown.
    fn markdown(&self) -> &'static [Part] {
        &[]
    }

    /// Why its documents have no CSV form, as `iolab export --csv` refuses one (`a database run: it has no
    /// CSV form (...)`); `None` for a kind that has one, or to say only that it has none.
    fn without_csv(&self) -> Option<&'static str> {
        None
    }

    /// What `iolab compare` reads from its documents; `None` for a kind that is not compared.
    fn compare(&self) -> Option<&'static dyn Comparing> {
        None
    }
}

impl Debug for dyn Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Kind({})", self.schema())
    }
}

impl PartialEq for dyn Kind {
    /// Kinds are one each: two are the same when their schemas are.
    fn eq(&self, other: &Self) -> bool {
        self.schema() == other.schema()
    }
}

/// Reads `doc` as a `T` (the parse of most kinds), boxed as a [`Document`]; the error names the schema.
pub fn parse_as<T: Document + Clone + serde::de::DeserializeOwned>(
    kind: &dyn Kind,
    doc: Value,
) -> Result<Box<dyn Document>, String> {
    serde_json::from_value::<T>(doc)
        .map(|d| Box::new(d) as Box<dyn Document>)
        .map_err(|e| format!("not a valid {} document: {e}", kind.schema()))
}
