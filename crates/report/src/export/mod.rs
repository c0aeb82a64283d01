//! Exporters: one per format, each rendering any [`Document`] it supports (hyperfine's `Exporter` trait is
//! the model). The documents are plain data (`crate::model`, `crate::sweep`, `crate::compare`,
//! `crate::find_max`); everything that turns them into text lives under this module.
//!
//! | format                | run            | sweep           | compare | find-max | mrc              | db (tpcc, tpch, copy) | db sweep        |
//! |-----------------------|----------------|-----------------|---------|----------|------------------|-----------------------|-----------------|
//! | [`TextExporter`]      | summary        | table           | tables  | table    | table            | summary               | table           |
//! | [`JsonExporter`]      | document       | document        | document| document | document         | document              | document        |
//! | [`CsvExporter`]       | time series    | one row a point | -       | steps    | one row a point  | -                     | one row a point |
//! | [`MarkdownExporter`]  | -              | -               | tables  | -        | -                | -                     | -               |
//!
//! Every exporter also has an inherent `render`, so callers need not import the trait. Text and JSON render
//! every document: their `render` returns the `String` (`TextExporter.render(&Document::Run(&r))`) and their
//! trait error is [`Infallible`](std::convert::Infallible). CSV and Markdown return [`Unsupported`] for the
//! documents they have no form of.

mod csv;
mod json;
mod markdown;
mod text;

use crate::compare::Comparison;
use crate::db::DbResult;
use crate::db_copy::CopyResult;
use crate::db_sweep::DbSweepResult;
use crate::db_tpch::TpchResult;
use crate::find_max::FindMaxResult;
use crate::model::RunResult;
use crate::mrc::MrcResult;
use crate::sweep::SweepResult;

pub use csv::{CsvExporter, FIND_MAX_CSV_HEADER, MRC_CSV_HEADER, SWEEP_CSV_METRICS, TIMESERIES_CSV_HEADER};
pub use json::JsonExporter;
pub use markdown::MarkdownExporter;
pub use text::{steady_state_line, TextExporter};

/// One document iolab writes.
#[derive(Clone, Copy, Debug)]
pub enum Document<'a> {
    /// A run (`iolab.result/1`).
    Run(&'a RunResult),
    /// A sweep (`iolab.sweep/1`).
    Sweep(&'a SweepResult),
    /// A comparison (`iolab.compare/1`).
    Compare(&'a Comparison),
    /// A find-max search (`iolab.findmax/1`).
    FindMax(&'a FindMaxResult),
    /// Miss-ratio curves of a trace (`iolab.mrc/1`).
    Mrc(&'a MrcResult),
    /// A database run (`iolab.db/1`).
    Db(&'a DbResult),
    /// A database run at several user counts (`iolab.dbsweep/1`).
    DbSweep(&'a DbSweepResult),
    /// A database analytics run (`iolab.dbtpch/1`).
    DbTpch(&'a TpchResult),
    /// A database snapshot copy (`iolab.dbcopy/1`).
    DbCopy(&'a CopyResult),
}

impl Document<'_> {
    /// The document's kind as users name it: `run`, `sweep`, `compare` or `find-max`.
    pub fn kind(&self) -> &'static str {
        match self {
            Document::Run(_) => "run",
            Document::Sweep(_) => "sweep",
            Document::Compare(_) => "compare",
            Document::FindMax(_) => "find-max",
            Document::Mrc(_) => "mrc",
            Document::Db(_) => "db",
            Document::DbSweep(_) => "db sweep",
            Document::DbTpch(_) => "db-tpch",
            Document::DbCopy(_) => "db-copy",
        }
    }
}

impl<'a> From<&'a RunResult> for Document<'a> {
    fn from(r: &'a RunResult) -> Self {
        Document::Run(r)
    }
}

impl<'a> From<&'a SweepResult> for Document<'a> {
    fn from(s: &'a SweepResult) -> Self {
        Document::Sweep(s)
    }
}

impl<'a> From<&'a Comparison> for Document<'a> {
    fn from(c: &'a Comparison) -> Self {
        Document::Compare(c)
    }
}

impl<'a> From<&'a FindMaxResult> for Document<'a> {
    fn from(f: &'a FindMaxResult) -> Self {
        Document::FindMax(f)
    }
}

/// Renders documents in one format.
pub trait Exporter {
    /// Why a document cannot be rendered: [`Unsupported`], or `Infallible` for a format that renders all.
    type Error: std::error::Error;

    /// The document in this exporter's format.
    fn export(&self, doc: &Document<'_>) -> Result<String, Self::Error>;
}

/// A format that has no rendering of a kind of document (a comparison as CSV).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Unsupported {
    /// The format: `csv` or `markdown`.
    pub format: &'static str,
    /// The document's kind ([`Document::kind`]).
    pub document: &'static str,
}

impl std::fmt::Display for Unsupported {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "a {} document has no {} form", self.document, self.format)
    }
}

impl std::error::Error for Unsupported {}
