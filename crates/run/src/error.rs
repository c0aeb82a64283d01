//! What can go wrong in a run, and whose fault it is: the user's (bad input, configuration, environment:
//! exit code 2, and nothing was created or changed when it comes before the targets are opened) or iolab's
//! own (a worker that could not start, a journal that could not be made durable, a bug).
//!
//! The text is the whole message as the CLI prints it after `error: `; the variants carry no `source`, so a
//! caller that walks the error chain (anyhow's `{:#}`) prints each message once.

use iolab_device::ThrottleError;

/// Why a run could not be executed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The user's: bad input, configuration or environment (the job, a target, a flag's value).
    #[error("{0}")]
    Usage(String),
    /// `--throttle` could not be set up (the user's: environment or input). The message names the flag already.
    #[error("{0}")]
    Throttle(ThrottleError),
    /// A run over several hosts: a rank's error at a point every rank agrees on, returned alike by every
    /// rank (the message names the rank, its host and its error).
    #[error("{0}")]
    Ranks(String),
    /// iolab's own: a worker that could not start or panicked, a journal that could not be made durable.
    #[error("{0}")]
    Internal(String),
}

impl Error {
    /// The user's error (exit code 2 in the CLI), from anything that says what is wrong.
    pub fn usage(e: impl std::fmt::Display) -> Error {
        Error::Usage(e.to_string())
    }

    /// iolab's own error.
    pub fn internal(e: impl std::fmt::Display) -> Error {
        Error::Internal(e.to_string())
    }

    /// True when the error is the user's (input, configuration, environment) rather than iolab's own.
    pub fn is_usage(&self) -> bool {
        !matches!(self, Error::Internal(_))
    }

    /// The same error with `context` in front of its message (`context: message`), of the same kind.
    pub fn context(self, context: impl std::fmt::Display) -> Error {
        match self {
            Error::Internal(m) => Error::Internal(format!("{context}: {m}")),
            other => Error::Usage(format!("{context}: {other}")),
        }
    }
}

/// A result of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_context_keeps_the_kind_and_prefixes_the_message() {
        let e = Error::usage("'x' does not exist").context("opening target 'x'");
        assert!(e.is_usage());
        assert_eq!(e.to_string(), "opening target 'x': 'x' does not exist");
        let e = Error::internal("no threads").context("starting a worker thread");
        assert!(!e.is_usage());
        assert_eq!(e.to_string(), "starting a worker thread: no threads");
    }

    #[test]
    fn error_throttle_is_the_users_and_says_throttle() {
        let e = Error::Throttle(ThrottleError::NoLimit);
        assert!(e.is_usage());
        assert_eq!(e.to_string(), "--throttle: no limit given (rbps, wbps, riops or wiops)");
    }
}
