//! Exchange sizing (`[exchange]` in a job file): mailboxes, mailbox size and per-mailbox IOPS (or messages per
//! day and version) resolved into database and log target sizes and open-loop rates. STUB: filled in by the
//! profiles work.

use crate::error::SpecError;
use serde::{Deserialize, Serialize};

/// The `[exchange]` table.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ExchangeSpec {}

impl ExchangeSpec {
    /// Parses the `[exchange]` table.
    pub fn from_toml(_value: &toml::Value, _file: &str) -> Result<Self, SpecError> {
        Ok(ExchangeSpec {})
    }
}
