//! The sides of a comparison as the cli hands them over (documents of one comparable kind each), and why a
//! comparison cannot be made.

use crate::plugin::{Comparing, Document};

/// One side of a comparison.
#[derive(Clone, Debug)]
pub struct Side {
    /// What the user typed for it (a catalog ID, a tag query, a path), shown beside its letter.
    pub source: String,
    /// Its documents, all of one kind: one run, several runs of one configuration (its trials), one or more
    /// sweeps (whose points' runs are pooled as trials), ...
    pub docs: Vec<Box<dyn Document>>,
}

impl Side {
    /// What compare reads from its documents; the error says why they cannot be compared: another kind of
    /// document ([`CompareError::NotCompared`]) or several kinds ([`CompareError::MixedSide`]).
    pub(crate) fn rules(&self) -> Result<Option<&'static dyn Comparing>, CompareError> {
        let mut rules: Option<&'static dyn Comparing> = None;
        for d in &self.docs {
            let Some(r) = d.kind().compare() else {
                return Err(CompareError::NotCompared { source: self.source.clone(), what: d.kind().name() });
            };
            match rules {
                Some(first) if first.name() != r.name() => {
                    return Err(CompareError::MixedSide {
                        source: self.source.clone(),
                        what: [first.many(), r.many()],
                    })
                }
                _ => rules = Some(r),
            }
        }
        Ok(rules)
    }
}

/// Why a comparison could not be made. Each message quotes the side as the user gave it.
#[derive(Clone, Debug, PartialEq)]
pub enum CompareError {
    /// Fewer than two sides.
    TooFewSides(usize),
    /// A side without any document.
    EmptySide(String),
    /// A side holding a kind of document that is not compared (a find-max search).
    NotCompared {
        /// Source of the side.
        source: String,
        /// The kind in words.
        what: &'static str,
    },
    /// A side holding documents of several kinds.
    MixedSide {
        /// Source of the side.
        source: String,
        /// Two of its kinds, as a message names several of each.
        what: [&'static str; 2],
    },
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
    /// A kind that compares only with its own (a tpch query set, a database copy) on one side, another kind
    /// of document on another.
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
            Self::NotCompared { source, what } => write!(f, "'{source}' is a {what} document, which is not compared"),
            Self::MixedSide { source, what } => {
                write!(f, "'{source}' mixes {} and {}; a side is one kind of document", what[0], what[1])
            }
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
