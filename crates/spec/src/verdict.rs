//! Pass/fail thresholds (`[verdict]` in a job file), Jetstress-style. STUB: filled in by the profiles work.

use crate::error::SpecError;
use serde::{Deserialize, Serialize};

/// The `[verdict]` table.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct VerdictSpec {}

impl VerdictSpec {
    /// Parses the `[verdict]` table.
    pub fn from_toml(_value: &toml::Value, _file: &str) -> Result<Self, SpecError> {
        Ok(VerdictSpec {})
    }
}
