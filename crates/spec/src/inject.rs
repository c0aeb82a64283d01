//! `inject`: faults put into a target's I/O on purpose (`--inject KIND[:PROBABILITY|@N]`), to prove that
//! verification catches what it must and to see how a workload behaves when the storage misbehaves.
//!
//! CONTRACT STUB: types fixed, parser to be written.

use serde::{Deserialize, Serialize};

/// What is injected.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum InjectKind {
    /// Flip one bit in the data a read returns (the medium is untouched).
    BitFlipRead,
    /// Flip one bit in the data a write stores.
    BitFlipWrite,
    /// Acknowledge a write without storing it.
    LostWrite,
    /// Store a write at another offset of the same target (and not where it was meant to go).
    MisdirectedWrite,
    /// Store only a prefix of a write, cut at a sector boundary, and acknowledge all of it.
    TornWrite,
    /// Fail the op with EIO.
    Eio,
    /// Delay the op's completion by this many nanoseconds.
    LatencySpike {
        /// The delay.
        ns: u64,
    },
}

/// How often.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum InjectWhen {
    /// Each eligible op with this probability (seeded).
    Probability(f64),
    /// Every N-th eligible op.
    Every(u64),
}

/// One `--inject`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InjectSpec {
    /// What.
    pub kind: InjectKind,
    /// How often.
    pub when: InjectWhen,
    /// As the user wrote it.
    pub text: String,
}

impl InjectSpec {
    /// Parses `KIND[:PROBABILITY|@N]`; errors say what was expected.
    pub fn parse(_text: &str) -> Result<InjectSpec, String> {
        Err("not yet".into())
    }
}
