//! iolab-report: the report stage of the pipeline (stats → **report** → cli).
//!
//! Holds the result document model ([`RunResult`], schema [`SCHEMA`], described by
//! `docs/schema/iolab.result.v1.json`) and its exporters: a hyperfine-like text summary
//! ([`render_text`]), JSON ([`to_json`], [`from_json`]) and the time series as CSV
//! ([`timeseries_csv`]). It never depends on the engine, so every exporter is unit-tested from a
//! fixed result (`src/tests.rs`).

#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod cache;
pub mod compare;
mod export;
pub mod html;
pub mod loadgen;
mod model;
pub mod sweep;
mod text;
pub mod verdict;

#[cfg(test)]
mod tests;

pub use export::{from_json, timeseries_csv, to_json, TIMESERIES_CSV_HEADER};
pub use model::{
    encode as encode_histogram, errno_name, Cpu, Depth, Env, ErrorDetail, ErrorSummary, GroupHistograms,
    GroupResult, HistogramSet, OpSet, OpSummary, RateResult, RunResult, TargetEnv, WorkerResult, SCHEMA,
};
pub use text::{format_bytes, format_count, format_duration_ns, format_rate, render_text};
