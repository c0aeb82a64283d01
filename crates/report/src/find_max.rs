//! The find-max document (`iolab.findmax/1`, described by `docs/schema/iolab.findmax.v1.json`): what
//! `iolab run --find-max` searched, every step it ran with its verdict, and the largest passing value.
//!
//! Keys are serialised in alphabetical order at every level, the verdict included: the document was first
//! written through `serde_json::Value` (whose maps are sorted), and the format is kept byte for byte. The
//! fields below are declared in that order, and [`FindMaxStep::verdict`] is written through a `Value`.
//! Reading is lenient (every field has a default), so a document from another version still renders.

use serde::{Deserialize, Serialize, Serializer};

use crate::verdict::Verdict;

/// Schema identifier stored in [`FindMaxResult::schema`].
pub const FIND_MAX_SCHEMA: &str = "iolab.findmax/1";

/// A whole find-max search.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct FindMaxResult {
    /// Both sides of the boundary were run a second time and held: every run at `max` passed and every run
    /// at the smallest failing value failed. False when the search did not converge, or a repeat disagreed.
    pub confirmed: bool,
    /// The search was stopped early (Ctrl-C); `max` is the largest passing value so far.
    pub interrupted: bool,
    /// Version of iolab that produced the search.
    pub iolab_version: String,
    /// Why the search stopped before it converged (a step that could not be run, such as no room for a
    /// larger data set); `max` is then a lower bound. `None` when the search converged or was interrupted.
    pub limited_by: Option<String>,
    /// The largest value that passed every time it was run; `None` when none did.
    pub max: Option<f64>,
    /// How much the checks moved between runs of the same value (the boundary's repeats): the answer's noise.
    /// `None` when no value was run twice.
    pub noise: Option<FindMaxNoise>,
    /// The job or profile name (`config.plan.name` of the first step's run).
    pub profile: Option<String>,
    /// The search stops when the passing and failing values are this many percent apart.
    pub resolution_pct: f64,
    /// Always [`FIND_MAX_SCHEMA`].
    pub schema: String,
    /// The first value tried.
    pub start: f64,
    /// Start of the search, RFC 3339 UTC.
    pub started_at: String,
    /// Every step, in the order they ran.
    pub steps: Vec<FindMaxStep>,
    /// The targets' display names (of the first step's run); `None` when no step ran.
    pub targets: Option<Vec<String>>,
    /// What was searched: `mailboxes` (Exchange profiles) or `rate_iops` (the total open-loop rate).
    pub variable: String,
}

/// One step of the search: one whole run at one value, and its verdict.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct FindMaxStep {
    /// Database IOPS achieved (the verdict's).
    pub achieved_iops: Option<f64>,
    /// Seconds measured.
    pub measured_s: f64,
    /// The verdict passed.
    pub pass: bool,
    /// Why it failed (the verdict's reasons; empty on pass).
    pub reasons: Vec<String>,
    /// The value was run before: this step confirms the boundary.
    pub repeat: bool,
    /// The step's whole run in the catalog (`iolab show ID`, `iolab report ID`), when it was saved.
    pub run_id: Option<String>,
    /// Database IOPS asked for (the verdict's).
    pub target_iops: Option<f64>,
    /// The value tried (mailboxes, or total IOPS).
    pub value: f64,
    /// The whole verdict (keys in alphabetical order, see the module header).
    #[serde(serialize_with = "sorted_keys")]
    pub verdict: Verdict,
}

impl FindMaxStep {
    /// The step that tried `value`, measured `measured_s` seconds and was judged `verdict`: its pass, target,
    /// achieved IOPS and reasons are the verdict's.
    pub fn new(value: f64, measured_s: f64, verdict: Verdict) -> FindMaxStep {
        FindMaxStep {
            achieved_iops: verdict.achieved_iops,
            measured_s,
            pass: verdict.pass,
            reasons: verdict.reasons.clone(),
            repeat: false,
            run_id: None,
            target_iops: verdict.target_iops,
            value,
            verdict,
        }
    }
}

/// The largest change of one check between two runs of the same value.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct FindMaxNoise {
    /// The check (`log_write_avg`, ...) and its group, as `name (group)`.
    pub check: String,
    /// (largest - smallest) / mean of the check's measured values over the runs of one value, percent.
    pub spread_pct: f64,
    /// The value that was run more than once.
    pub value: f64,
}

impl FindMaxNoise {
    /// The largest spread of any check over the runs of any value run more than once; `None` when no value
    /// ran twice or nothing was measured twice.
    pub fn of(steps: &[FindMaxStep]) -> Option<FindMaxNoise> {
        let mut worst: Option<FindMaxNoise> = None;
        for (i, s) in steps.iter().enumerate() {
            if steps[..i].iter().any(|e| e.value == s.value) {
                continue; // each value once
            }
            let runs: Vec<&FindMaxStep> = steps.iter().filter(|e| e.value == s.value).collect();
            if runs.len() < 2 {
                continue;
            }
            for c in &s.verdict.checks {
                let measured: Vec<f64> = runs
                    .iter()
                    .filter_map(|r| r.verdict.checks.iter().find(|d| d.name == c.name && d.group == c.group))
                    .filter_map(|d| d.measured)
                    .collect();
                let Some(spread) = spread_pct(&measured) else { continue };
                if worst.as_ref().is_none_or(|w| spread > w.spread_pct) {
                    let check = format!("{} ({})", c.name, c.group);
                    worst = Some(FindMaxNoise { check, spread_pct: spread, value: s.value });
                }
            }
        }
        worst
    }
}

/// (largest - smallest) / mean, percent, of two or more positive values.
fn spread_pct(values: &[f64]) -> Option<f64> {
    if values.len() < 2 {
        return None;
    }
    let mean = values.iter().sum::<f64>() / values.len() as f64;
    let (lo, hi) = values.iter().fold((f64::MAX, f64::MIN), |(l, h), &v| (l.min(v), h.max(v)));
    (mean > 0.0).then(|| (hi - lo) / mean * 100.0)
}

impl FindMaxResult {
    /// A search over `variable` (`mailboxes` or `rate_iops`) from `start`, to `resolution_pct`, begun at
    /// `started_at`: no step yet, no max, not interrupted, profile and targets unknown. The search pushes a
    /// [`FindMaxStep`] per run and sets `max`, `interrupted`, `profile` and `targets` as it learns them.
    pub fn new(variable: &str, start: f64, resolution_pct: f64, started_at: String) -> FindMaxResult {
        FindMaxResult {
            confirmed: false,
            interrupted: false,
            iolab_version: env!("CARGO_PKG_VERSION").to_string(),
            limited_by: None,
            max: None,
            noise: None,
            profile: None,
            resolution_pct,
            schema: FIND_MAX_SCHEMA.to_string(),
            start,
            started_at,
            steps: Vec::new(),
            targets: None,
            variable: variable.to_string(),
        }
    }

    /// True when `variable` is a mailbox count (printed as an integer) rather than a rate.
    pub fn by_mailboxes(&self) -> bool {
        self.variable == "mailboxes"
    }
}

/// Serialises `v` through a `serde_json::Value`, whose maps keep keys in alphabetical order.
fn sorted_keys<S: Serializer>(v: &Verdict, s: S) -> Result<S::Ok, S::Error> {
    serde_json::to_value(v).map_err(serde::ser::Error::custom)?.serialize(s)
}

#[cfg(test)]
mod tests;
