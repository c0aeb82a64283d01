//! [`IntegritySpec`]: data verification and fault injection as a job asks for them (`verify`, `verify_fail`,
//! `journal`, `inject`, `stop_on_error`).

use super::values::VerifyFail;
use serde::{Deserialize, Serialize};

/// Data verification and fault injection.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct IntegritySpec {
    /// Stamp a header into every written block and check every block read (`verify`).
    pub verify: Option<bool>,
    /// Stop or continue at a mismatch (`verify_fail`).
    pub verify_fail: Option<VerifyFail>,
    /// Keep acknowledged write generations in this file (`journal`); implies `verify`.
    pub journal: Option<String>,
    /// Faults to inject (`inject`, repeatable).
    pub inject: Vec<crate::inject::InjectSpec>,
    /// End the run at the first I/O error (`stop_on_error`); by default errors are counted and the run goes on.
    pub stop_on_error: Option<bool>,
    /// Who named `journal`: only a path typed on the command line may replace a file. Never read from a file
    /// and never serialised.
    #[serde(skip)]
    pub journal_named_by: crate::NamedBy,
}

impl IntegritySpec {
    /// Verification is on (`verify` or a journal).
    pub fn verifying(&self) -> bool {
        self.verify.unwrap_or(false) || self.journal.is_some()
    }
    /// Command-line values replace the job file's; `inject` given on the command line replaces the file's list.
    pub fn apply_overrides(&mut self, cli: &IntegritySpec) {
        if cli.verify.is_some() {
            self.verify = cli.verify;
        }
        if cli.verify_fail.is_some() {
            self.verify_fail = cli.verify_fail;
        }
        if cli.journal.is_some() {
            self.journal = cli.journal.clone();
            self.journal_named_by = crate::NamedBy::CommandLine;
        }
        if !cli.inject.is_empty() {
            self.inject = cli.inject.clone();
        }
        if cli.stop_on_error.is_some() {
            self.stop_on_error = cli.stop_on_error;
        }
    }
}
