//! LoadGen-style users and transactions (`[users]` and `[[transaction]]` in a job file). STUB: filled in by the
//! LoadGen work.

use crate::error::SpecError;
use serde::{Deserialize, Serialize};

/// The `[users]` table and the `[[transaction]]` tables.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LoadgenSpec {}

impl LoadgenSpec {
    /// Parses `[users]` and `[[transaction]]` from the job file's top-level table (either may be missing).
    pub fn from_job_table(_table: &toml::Table, _file: &str) -> Result<Self, SpecError> {
        Ok(LoadgenSpec {})
    }
}
