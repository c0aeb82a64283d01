//! Reports for people: one self-contained HTML page ([`render_html`]) or Markdown for tickets
//! ([`render_markdown`]) from one or more run results and sweeps (`iolab report`).
//!
//! The page holds the seeds' figures drawn from the documents' own data: summary cards; per run the latency
//! percentile curve (from the merged HDR histograms) and the per-interval time series; for sweeps IOPS (or
//! MB/s along block size) and latency against each swept field, with the knee marked, several sweeps
//! overlaid (QLogic vs Emulex); for several runs side-by-side bars; and the configuration, environment,
//! warnings, verdict and LoadGen tables; per database run (`iolab db`) NOPM and TPM, each transaction's
//! response times (a table, bars and percentile curves), the consistency conditions and the devices under the
//! database, several side by side, a sweep over users as NOPM against users with the knee, a tpch query
//! set's query times (a table and bars, total and geometric mean) and a copy's time, rate and devices. It has inline
//! CSS and SVG only: no script, font or URL, so it
//! opens offline, mails as one file and prints (charts use line styles and markers as well as colours).
//!
//! Both renderings read the same figure data (the `figures` module), so the Markdown tables carry the numbers the
//! charts draw. Everything from a document (names, tags, notes, paths, config values) is escaped. See
//! docs/REPORTS.md.

pub(crate) mod charts;
mod db_figures;
mod db_page;
mod figures;
mod markdown;
mod names;
mod page;
mod parts;

use serde_json::Value;

use crate::db::{DbResult, DB_SCHEMA};
use crate::db_copy::{CopyResult, DB_COPY_SCHEMA};
use crate::db_sweep::{DbSweepResult, DB_SWEEP_SCHEMA};
use crate::db_tpch::{TpchResult, DB_TPCH_SCHEMA};
use crate::find_max::{FindMaxResult, FIND_MAX_SCHEMA};
use crate::mrc::{MrcResult, MRC_SCHEMA};
use crate::sweep::{SweepResult, SWEEP_SCHEMA};
use crate::{RunResult, SCHEMA};

pub use markdown::render_markdown;
pub use page::render_html;

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
    pub body: DocBody,
}

/// A result or sweep document.
#[derive(Clone, Debug)]
pub enum DocBody {
    /// One run (`iolab.result/1`).
    Run(Box<RunResult>),
    /// A sweep (`iolab.sweep/1`).
    Sweep(Box<SweepResult>),
    /// Miss-ratio curves of a trace (`iolab.mrc/1`).
    Mrc(Box<MrcResult>),
    /// A `--find-max` search (`iolab.findmax/1`).
    FindMax(Box<FindMaxResult>),
    /// A database run (`iolab.db/1`).
    Db(Box<DbResult>),
    /// A database run at several user counts (`iolab.dbsweep/1`).
    DbSweep(Box<DbSweepResult>),
    /// An analytics query set (`iolab.dbtpch/1`).
    DbTpch(Box<TpchResult>),
    /// A database copy (`iolab.dbcopy/1`).
    DbCopy(Box<CopyResult>),
}

impl DocBody {
    /// The kind shown in the inputs table and the time it started (none for curves).
    pub(crate) fn kind_and_start(&self) -> (&'static str, String) {
        match self {
            DocBody::Run(r) => ("run", r.started_at.clone()),
            DocBody::Sweep(s) => ("sweep", s.started_at.clone()),
            DocBody::Mrc(_) => ("mrc", String::new()),
            DocBody::FindMax(f) => ("find-max", f.started_at.clone()),
            DocBody::Db(d) => ("db", db_start(&d.header)),
            DocBody::DbSweep(s) => ("db sweep", db_start(&s.header)),
            DocBody::DbTpch(t) => ("db tpch", db_start(&t.header)),
            DocBody::DbCopy(c) => ("db copy", db_start(&c.header)),
        }
    }

    /// The iolab version that wrote it.
    pub(crate) fn iolab_version(&self) -> String {
        match self {
            DocBody::Run(r) => r.iolab_version.clone(),
            DocBody::Sweep(s) => s.iolab_version.clone(),
            DocBody::Mrc(m) => m.iolab_version.clone(),
            DocBody::FindMax(f) => f.iolab_version.clone(),
            DocBody::Db(d) => d.header.iolab_version.clone(),
            DocBody::DbSweep(s) => s.header.iolab_version.clone(),
            DocBody::DbTpch(t) => t.header.iolab_version.clone(),
            DocBody::DbCopy(c) => c.header.iolab_version.clone(),
        }
    }
}

/// A database document's start, RFC 3339.
fn db_start(h: &crate::db::DbHeader) -> String {
    iolab_doc::time::format_rfc3339(h.start_unix_s as f64)
}

impl DocBody {
    /// Parses a JSON document, recognised by its `schema` field. The error says what was found.
    pub fn from_json(text: &str) -> Result<DocBody, String> {
        let v: Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
        DocBody::from_value(v)
    }

    /// Reads a parsed JSON document (as the catalog returns it), recognised by its `schema` field.
    pub fn from_value(v: Value) -> Result<DocBody, String> {
        let schema = v.get("schema").and_then(Value::as_str).map(str::to_string);
        match schema.as_deref() {
            Some(SCHEMA) => serde_json::from_value::<RunResult>(v)
                .map(|r| DocBody::Run(Box::new(r)))
                .map_err(|e| format!("not a valid {SCHEMA} document: {e}")),
            Some(SWEEP_SCHEMA) => serde_json::from_value::<SweepResult>(v)
                .map(|s| DocBody::Sweep(Box::new(s)))
                .map_err(|e| format!("not a valid {SWEEP_SCHEMA} document: {e}")),
            Some(MRC_SCHEMA) => serde_json::from_value::<MrcResult>(v)
                .map(|m| DocBody::Mrc(Box::new(m)))
                .map_err(|e| format!("not a valid {MRC_SCHEMA} document: {e}")),
            Some(FIND_MAX_SCHEMA) => serde_json::from_value::<FindMaxResult>(v)
                .map(|f| DocBody::FindMax(Box::new(f)))
                .map_err(|e| format!("not a valid {FIND_MAX_SCHEMA} document: {e}")),
            Some(DB_SCHEMA) => serde_json::from_value::<DbResult>(v)
                .map(|d| DocBody::Db(Box::new(d)))
                .map_err(|e| format!("not a valid {DB_SCHEMA} document: {e}")),
            Some(DB_SWEEP_SCHEMA) => serde_json::from_value::<DbSweepResult>(v)
                .map(|s| DocBody::DbSweep(Box::new(s)))
                .map_err(|e| format!("not a valid {DB_SWEEP_SCHEMA} document: {e}")),
            Some(DB_TPCH_SCHEMA) => serde_json::from_value::<TpchResult>(v)
                .map(|t| DocBody::DbTpch(Box::new(t)))
                .map_err(|e| format!("not a valid {DB_TPCH_SCHEMA} document: {e}")),
            Some(DB_COPY_SCHEMA) => serde_json::from_value::<CopyResult>(v)
                .map(|c| DocBody::DbCopy(Box::new(c)))
                .map_err(|e| format!("not a valid {DB_COPY_SCHEMA} document: {e}")),
            Some(other) => Err(format!(
                "schema '{other}' cannot be reported; expected {SCHEMA} (a run), {SWEEP_SCHEMA} (a sweep), {MRC_SCHEMA} (miss-ratio curves), {FIND_MAX_SCHEMA} (a --find-max search), {DB_SCHEMA}, {DB_SWEEP_SCHEMA}, {DB_TPCH_SCHEMA} or {DB_COPY_SCHEMA} (iolab db)"
            )),
            None => Err(format!(
                "no \"schema\" field; expected an {SCHEMA} (iolab run --json) or {SWEEP_SCHEMA} (iolab sweep --json) document"
            )),
        }
    }
}

/// Escapes text for HTML element content and attribute values.
pub fn escape_html(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests;
