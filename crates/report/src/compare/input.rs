//! The sides of a comparison as the cli hands them over (runs or sweeps), and why a comparison cannot be made.

use crate::db::DbResult;
use crate::db_copy::CopyResult;
use crate::db_sweep::DbSweepResult;
use crate::db_tpch::TpchResult;
use crate::model::RunResult;
use crate::sweep::SweepResult;

/// The documents of one side.
#[derive(Clone, Debug)]
pub enum SideDocs {
    /// One run, or several runs of one configuration (its trials).
    Runs(Vec<RunResult>),
    /// One sweep, or several sweeps whose points' runs are pooled as trials.
    Sweeps(Vec<SweepResult>),
    /// One database run (`iolab db`), or several of one configuration (its trials).
    Db(Vec<DbResult>),
    /// One database sweep over users, or several whose points are pooled as trials.
    DbSweeps(Vec<DbSweepResult>),
    /// One analytics query set (`iolab db tpch`), or several of one configuration (its trials).
    Tpch(Vec<TpchResult>),
    /// One snapshot copy (`iolab db copy`), or several (its trials).
    Copy(Vec<CopyResult>),
}

impl SideDocs {
    /// What the side holds, as messages name it: `runs`, `a sweep`, `database runs`, `a database sweep`.
    pub fn what(&self) -> &'static str {
        match self {
            SideDocs::Runs(_) => "runs",
            SideDocs::Sweeps(_) => "a sweep",
            SideDocs::Db(_) => "database runs",
            SideDocs::DbSweeps(_) => "a database sweep",
            SideDocs::Tpch(_) => "tpch query sets",
            SideDocs::Copy(_) => "database copies",
        }
    }

    /// What the side holds and what it compares with, as the refusal of a mismatch says it: its kind of
    /// document, and the `iolab runs --kind` that lists its peers. `None` for the kinds compared by the
    /// older rules (runs, sweeps, tpcc runs and sweeps: [`CompareError::DbWithIo`],
    /// [`CompareError::MixedKinds`]).
    pub(crate) fn only_with_its_own(&self) -> Option<(&'static str, &'static str)> {
        match self {
            SideDocs::Tpch(_) => Some(("a tpch query set, iolab db tpch", "db-tpch")),
            SideDocs::Copy(_) => Some(("a database copy, iolab db copy", "db-copy")),
            _ => None,
        }
    }

    /// The kind of document, as a refusal names the other side: `an I/O run`, `a tpcc run`, ...
    pub(crate) fn kind_words(&self) -> &'static str {
        match self {
            SideDocs::Runs(_) => "an I/O run",
            SideDocs::Sweeps(_) => "an I/O sweep",
            SideDocs::Db(_) => "a tpcc run, iolab db tpcc",
            SideDocs::DbSweeps(_) => "a tpcc sweep over users",
            SideDocs::Tpch(_) => "a tpch query set, iolab db tpch",
            SideDocs::Copy(_) => "a database copy, iolab db copy",
        }
    }

    /// A database run or sweep (`iolab db`), as against the I/O runs and sweeps.
    pub fn is_db(&self) -> bool {
        matches!(self, SideDocs::Db(_) | SideDocs::DbSweeps(_) | SideDocs::Tpch(_) | SideDocs::Copy(_))
    }

    /// A sweep (points compared one by one), of I/O or of a database.
    pub fn is_sweep(&self) -> bool {
        matches!(self, SideDocs::Sweeps(_) | SideDocs::DbSweeps(_))
    }
}

/// One side of a comparison.
#[derive(Clone, Debug)]
pub struct Side {
    /// What the user typed for it (a catalog ID, a tag query, a path), shown beside its letter.
    pub source: String,
    /// Its documents.
    pub docs: SideDocs,
}

/// Why a comparison could not be made. Each message quotes the side as the user gave it.
#[derive(Clone, Debug, PartialEq)]
pub enum CompareError {
    /// Fewer than two sides.
    TooFewSides(usize),
    /// A side without any document.
    EmptySide(String),
    /// Runs on one side, sweeps on another (the first source is the baseline's).
    MixedKinds {
        /// Source of a run side.
        runs: String,
        /// Source of a sweep side.
        sweeps: String,
    },
    /// A database run or sweep (`iolab db`) on one side, an I/O run or sweep on another.
    DbWithIo {
        /// Source of the database side.
        db: String,
        /// Source of the I/O side.
        io: String,
    },
    /// A tpch query set or a database copy on one side, another kind of document on another: each compares
    /// only with its own kind.
    OtherWorkload {
        /// Source of the side whose kind compares only with its own.
        source: String,
        /// What it is (`a tpch query set, iolab db tpch`).
        what: &'static str,
        /// The `iolab runs --kind` that lists its peers.
        kind: &'static str,
        /// Source of the other side.
        other: String,
        /// What that is.
        other_what: &'static str,
    },
    /// `alpha` outside (0, 1).
    BadAlpha(f64),
    /// Sweeps with no point (params) in common.
    NoCommonPoint,
    /// `--metric` left nothing to compare, or named an unknown metric.
    Metric(String),
}

impl std::fmt::Display for CompareError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::TooFewSides(n) => write!(f, "compare needs at least two sides, got {n}"),
            Self::EmptySide(s) => write!(f, "'{s}' holds no run to compare"),
            Self::MixedKinds { runs, sweeps } => write!(
                f,
                "cannot compare '{runs}' (runs) with '{sweeps}' (a sweep): compare runs with runs, sweeps with sweeps"
            ),
            Self::DbWithIo { db, io } => write!(
                f,
                "cannot compare '{db}' (a database run, iolab db) with '{io}' (an I/O run): NOPM and transaction response times have no counterpart in IOPS and I/O latency; compare database runs with database runs (iolab runs --kind db lists them)"
            ),
            Self::OtherWorkload { source, what, kind, other, other_what } => write!(
                f,
                "cannot compare '{source}' ({what}) with '{other}' ({other_what}): their numbers measure different things; compare {kind} entries with {kind} entries (iolab runs --kind {kind} lists them)"
            ),
            Self::BadAlpha(a) => write!(f, "invalid value '{a}' for '--alpha': expected a number between 0 and 1"),
            Self::NoCommonPoint => {
                write!(f, "the sweeps have no point in common (no swept values match on every side)")
            }
            Self::Metric(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for CompareError {}
