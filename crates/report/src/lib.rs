//! iolab-report: the report stage of the pipeline (stats → **report** → cli).
//!
//! Two halves that never import each other the wrong way:
//!
//! - **documents**, plain serde data: a run ([`RunResult`], schema [`SCHEMA`], with its parts [`cache`],
//!   [`loadgen`], [`verdict`] and [`steady`]), a [`sweep`], a comparison ([`compare`]) and a [`find_max`] search,
//!   miss-ratio curves ([`mrc`]), database runs ([`db`]: OLTP; [`db_sweep`]: OLTP at several user counts;
//!   [`db_tpch`]: analytics; [`db_copy`]: snapshot copies),
//!   plus the pure logic that fills them (the knee, [`judge`], [`compare::compare`]);
//! - **renderings**: the [`export`] module, one [`Exporter`] per format (text, JSON, CSV, Markdown) over a
//!   [`Document`], and [`html`] for the HTML and Markdown reports of `iolab report`;
//! - **kinds**: what each kind of document declares once ([`plugin`]: its schema, names, how it is read,
//!   its catalog entries and columns, its parts of a report, what compare reads from it), one file per kind
//!   in [`kinds`], whose list [`kinds::KINDS`] everything that depends on the kind of a document asks.
//!
//! Every document has a JSON Schema in `docs/schema/` kept in sync by the tests. The crate never depends on
//! the engine, so every exporter is unit-tested from fixed documents (`src/tests.rs`).

#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod ai;
pub mod cache;
pub mod compare;
pub mod config;
pub mod db;
pub mod db_copy;
mod db_rows;
pub mod db_sweep;
pub mod db_tpch;
pub mod db_window;
pub mod durability;
pub mod export;
pub mod find_max;
mod format;
mod hosts;
pub mod html;
pub mod judge;
pub mod kinds;
pub mod loadgen;
mod model;
pub mod mrc;
pub mod plugin;
pub mod steady;
pub mod sweep;
pub mod verdict;

#[cfg(any(test, feature = "schema-check"))]
#[doc(hidden)]
pub mod schema_check;
#[cfg(test)]
mod tests;

pub use export::{CsvExporter, Exporter, JsonExporter, MarkdownExporter, TextExporter, Unsupported};
pub use format::{counted, escape_control, format_bytes, format_count, format_duration_ns, format_rate};
pub use model::{
    encode as encode_histogram, errno_name, Cpu, Depth, Env, ErrorDetail, ErrorSummary, GroupHistograms,
    GroupRate, GroupResult, HistogramSet, HostResult, MeasuredBy, OpSet, OpSummary, PacingResult,
    RanksResult, RateResult, ReplayResult, RunResult, TargetEnv, TargetLayout, TargetResult, WorkerResult,
    SCHEMA,
};
pub use plugin::{Document, Kind, Warned};
