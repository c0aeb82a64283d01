//! The sides of a comparison as the cli hands them over (runs or sweeps), and why a comparison cannot be made.

use crate::model::RunResult;
use crate::sweep::SweepResult;

/// The documents of one side.
#[derive(Clone, Debug)]
pub enum SideDocs {
    /// One run, or several runs of one configuration (its trials).
    Runs(Vec<RunResult>),
    /// One sweep, or several sweeps whose points' runs are pooled as trials.
    Sweeps(Vec<SweepResult>),
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
            Self::BadAlpha(a) => write!(f, "invalid value '{a}' for '--alpha': expected a number between 0 and 1"),
            Self::NoCommonPoint => {
                write!(f, "the sweeps have no point in common (no swept values match on every side)")
            }
            Self::Metric(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for CompareError {}
