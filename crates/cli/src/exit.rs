//! How a command ends: the marker of the user's errors (exit code 2) and the status of a finished run
//! (exit code 0 or 1). Every command module takes these from here, and this module takes nothing from them.

use iolab_report::RunResult;

/// Marks an error as the user's (exit code 2): bad input, configuration, environment.
#[derive(Debug)]
pub struct UsageError;
impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("usage")
    }
}
impl std::error::Error for UsageError {}

/// The user's error `e` (exit code 2), its text as the message.
pub fn usage<E: std::fmt::Display>(e: E) -> anyhow::Error {
    anyhow::Error::new(UsageError).context(e.to_string())
}

/// Marks the error of a command whose work is done (and saved, unless the catalog said otherwise) but one or
/// more of whose outputs were not written (a full disk): exit code [`OUTPUTS_NOT_WRITTEN`].
#[derive(Debug)]
pub struct OutputsNotWritten;
impl std::fmt::Display for OutputsNotWritten {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("outputs not written")
    }
}
impl std::error::Error for OutputsNotWritten {}

/// The error for `count` outputs not written (each already said on stderr).
pub fn outputs_not_written(count: usize) -> anyhow::Error {
    let what = if count == 1 { "1 output was".to_string() } else { format!("{count} outputs were") };
    anyhow::Error::new(OutputsNotWritten).context(format!("{what} not written (said above)"))
}

/// The exit code of a command that did its work but could not write all its outputs.
pub const OUTPUTS_NOT_WRITTEN: i32 = 3;

/// The exit code of a command the user interrupted (Ctrl-C, SIGTERM, SIGHUP), the shell's convention for
/// SIGINT: the result is partial (it is still printed, written and saved, marked `partial`).
pub const INTERRUPTED: i32 = 130;

/// How a finished command ended, for the exit code.
pub enum ExitStatus {
    /// Finished; no I/O errors.
    Ok,
    /// Finished, but I/O errors occurred.
    IoErrors,
    /// Finished, but the verdict is FAIL (thresholds not met).
    Fail,
}

impl ExitStatus {
    /// The status a run's result deserves: bad data or I/O errors first, then a failed verdict.
    pub fn of(result: &RunResult) -> ExitStatus {
        if result.errors.total > 0 || result.verify.as_ref().is_some_and(|v| v.mismatches > 0) {
            ExitStatus::IoErrors
        } else if result.verdict.as_ref().is_some_and(|v| !v.pass) {
            ExitStatus::Fail
        } else {
            ExitStatus::Ok
        }
    }

    /// The process exit code: 0 ok, 1 I/O errors or a failed verdict.
    pub fn code(&self) -> i32 {
        match self {
            ExitStatus::Ok => 0,
            ExitStatus::IoErrors | ExitStatus::Fail => 1,
        }
    }
}
