//! Profile metadata (`[profile]` in a job file): purpose, sources and expected behaviour of a built-in or user
//! profile. STUB: filled in by the profiles work.

use crate::error::SpecError;
use serde::{Deserialize, Serialize};

/// The `[profile]` table.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ProfileMeta {}

impl ProfileMeta {
    /// Parses the `[profile]` table.
    pub fn from_toml(_value: &toml::Value, _file: &str) -> Result<Self, SpecError> {
        Ok(ProfileMeta {})
    }
}
