//! The pass/fail verdict of a run against thresholds (Jetstress-style). STUB: filled in by the profiles work.

use serde::{Deserialize, Serialize};

/// Pass/fail of one run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// True when every check passed.
    pub pass: bool,
    /// One line per failed check (empty on pass).
    pub reasons: Vec<String>,
}
