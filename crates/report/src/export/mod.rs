//! Exporters: one per format, each rendering any [`Document`] it supports (hyperfine's `Exporter` trait is
//! the model). The documents are plain data (`crate::model`, `crate::sweep`, `crate::compare`,
//! `crate::find_max`, ...); what turns them into text lives under this module, one function per document and
//! format, and each kind (`crate::kinds`) says which is its own: an exporter asks the document. What the
//! kinds of today have:
//!
//! | format                | run            | sweep           | compare | find-max | mrc              | db (tpcc, tpch, copy) | db sweep        |
//! |-----------------------|----------------|-----------------|---------|----------|------------------|-----------------------|-----------------|
//! | [`TextExporter`]      | summary        | table           | tables  | table    | table            | summary               | table           |
//! | [`JsonExporter`]      | document       | document        | document| document | document         | document              | document        |
//! | [`CsvExporter`]       | time series    | one row a point | -       | steps    | one row a point  | -                     | one row a point |
//! | [`MarkdownExporter`]  | -              | -               | tables  | -        | -                | -                     | -               |
//!
//! Every exporter also has an inherent `render`, so callers need not import the trait. Text and JSON render
//! every document: their `render` returns the `String` (`TextExporter.render(&r)`) and their trait error is
//! [`Infallible`](std::convert::Infallible). CSV and Markdown return [`Unsupported`] for the documents they
//! have no form of.

pub(crate) mod csv;
pub(crate) mod json;
pub(crate) mod markdown;
pub(crate) mod text;

use crate::plugin::Document;

pub use csv::{CsvExporter, FIND_MAX_CSV_HEADER, MRC_CSV_HEADER, SWEEP_CSV_METRICS, TIMESERIES_CSV_HEADER};
pub use json::JsonExporter;
pub use markdown::MarkdownExporter;
pub use text::{steady_state_line, TextExporter};

/// Renders documents in one format.
pub trait Exporter {
    /// Why a document cannot be rendered: [`Unsupported`], or `Infallible` for a format that renders all.
    type Error: std::error::Error;

    /// The document in this exporter's format.
    fn export(&self, doc: &dyn Document) -> Result<String, Self::Error>;
}

/// A format that has no rendering of a kind of document (a comparison as CSV).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Unsupported {
    /// The format: `csv` or `markdown`.
    pub format: &'static str,
    /// The document's kind in words ([`crate::Kind::name`]).
    pub document: &'static str,
}

impl std::fmt::Display for Unsupported {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "a {} document has no {} form", self.document, self.format)
    }
}

impl std::error::Error for Unsupported {}
