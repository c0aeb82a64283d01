//! Errors: a database's own ([`DbError`], which says whether running the transaction again may succeed) and
//! everything else that can stop a database workload ([`WorkloadError`]).

/// An error the database returned for a statement.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct DbError {
    /// Running the transaction again may succeed: SQLite's busy or locked, PostgreSQL's serialization
    /// failure (40001) or deadlock (40P01).
    pub retryable: bool,
    /// The database's message, with the statement when it helps.
    pub message: String,
}

impl DbError {
    /// An error that retrying will not cure.
    pub fn fatal(message: impl Into<String>) -> DbError {
        DbError { retryable: false, message: message.into() }
    }
}

/// Why a database workload stopped.
#[derive(Debug, thiserror::Error)]
pub enum WorkloadError {
    /// The database refused a statement.
    #[error(transparent)]
    Db(#[from] DbError),
    /// A file or process operation failed.
    #[error("{context}: {source}")]
    Io {
        /// What iolab was doing.
        context: String,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// The environment cannot run the engine (no binaries, no account to run a server as, a path the
    /// server cannot reach); the message says what to do.
    #[error("{0}")]
    Setup(String),
    /// The user asked to stop (Ctrl-C, SIGTERM, SIGHUP) before there was anything to report.
    #[error("interrupted")]
    Interrupted,
}

impl WorkloadError {
    /// An I/O error with what iolab was doing.
    pub fn io(context: impl Into<String>, source: std::io::Error) -> WorkloadError {
        WorkloadError::Io { context: context.into(), source }
    }

    /// True when the user's input or environment is at fault (exit code 2), not the database's answers.
    pub fn is_setup(&self) -> bool {
        matches!(self, WorkloadError::Setup(_) | WorkloadError::Io { .. })
    }
}
