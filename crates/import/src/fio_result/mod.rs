//! fio's JSON results (`fio --output-format=json`, fio 3.x) as iolab result documents, marked as measured by
//! fio ([`iolab_report::MeasuredBy`]), so `iolab compare` and `iolab report` can put old fio results beside
//! iolab runs.
//!
//! One [`RunResult`] per fio reporting group (`groupid`; stonewalled phases are separate groups), its workers
//! the group's job entries. Latency summaries are taken only where fio reported every percentile iolab keeps
//! (50, 90, 95, 99, 99.9, 99.99), and never averaged: a total over several job entries has none (rerun fio with
//! `group_reporting` for group percentiles). What differs from an iolab run and what fio's report does not
//! have is said in the document's `measured_by.notes`. The mapping is in docs/FIO.md, "fio results".

mod build;
mod notes;
mod parse;
#[cfg(test)]
mod tests;

use iolab_report::RunResult;
use serde_json::Value;

/// Why a file is not a fio 3.x JSON result. Every message names the file and says what was expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FioResultError {
    /// The text is not JSON.
    #[error("{file}: not JSON ({detail}); expected the output of fio --output-format=json")]
    NotJson {
        /// The file's name.
        file: String,
        /// The parser's message.
        detail: String,
    },
    /// JSON without a `fio version` key.
    #[error("{file}: no \"fio version\" key; expected the output of fio --output-format=json")]
    NoVersion {
        /// The file's name.
        file: String,
    },
    /// A fio version other than 3.x.
    #[error("{file}: written by {version}; expected fio 3.x (\"fio version\": \"fio-3.…\")")]
    NotFio3 {
        /// The file's name.
        file: String,
        /// The version it names.
        version: String,
    },
    /// No job entry.
    #[error("{file}: no jobs; expected a non-empty \"jobs\" array")]
    NoJobs {
        /// The file's name.
        file: String,
    },
    /// A job entry without its `read` or `write` section.
    #[error("{file}: job '{job}' has no \"read\" and \"write\" sections; expected fio 3.x per-job results")]
    NoDirections {
        /// The file's name.
        file: String,
        /// The job's name.
        job: String,
    },
}

/// The iolab result documents of a fio JSON result: one per reporting group, in the order fio reported
/// them. `source` names the file in errors and in `measured_by.source`.
pub fn to_results(text: &str, source: &str) -> Result<Vec<RunResult>, FioResultError> {
    // fio may print notes before the JSON (e.g. "note: both iodepth >= 1 and synchronous I/O engine").
    let start = text.find('{').unwrap_or(0);
    let root: Value = serde_json::from_str(&text[start..])
        .map_err(|e| FioResultError::NotJson { file: source.to_string(), detail: e.to_string() })?;
    let head = parse::header(&root, source)?;
    let entries = root.get("jobs").and_then(Value::as_array).filter(|j| !j.is_empty());
    let entries = entries.ok_or_else(|| FioResultError::NoJobs { file: source.to_string() })?;
    let jobs = entries
        .iter()
        .enumerate()
        .map(|(i, v)| parse::job(v, i, &head.global, source))
        .collect::<Result<Vec<_>, _>>()?;
    let mut groups: Vec<u64> = Vec::new();
    for j in &jobs {
        if !groups.contains(&j.groupid) {
            groups.push(j.groupid);
        }
    }
    // fio's `timestamp` is its report time and `elapsed` counts from its start; stonewalled groups run one
    // after another, so each starts when the earlier ones (ramp and runtime) are done.
    let mut start = head.report_unix_s - jobs.iter().map(|j| j.elapsed_s).fold(0.0, f64::max);
    let ctx = build::GroupContext { head: &head, source, groups: groups.len() };
    let mut runs = Vec::new();
    for g in groups {
        let members: Vec<&parse::FioJob> = jobs.iter().filter(|j| j.groupid == g).collect();
        let run = build::run(&ctx, g, &members, start);
        start += run.ramp_s + run.measured_s;
        runs.push(run);
    }
    Ok(runs)
}
