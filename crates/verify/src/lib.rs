//! iolab-verify: data integrity verification (`--verify`, `--journal`, `iolab verify`).
//!
//! CONTRACT STUB: the public API the engine and the cli use. Bodies to be written.

#![deny(missing_docs)]

pub mod result;

pub use result::{ByClass, HeaderView, InjectCount, InjectResult, Mismatch, MismatchClass, VerifyResult};

use std::path::{Path, PathBuf};

/// Default verification block.
pub const DEFAULT_BLOCK: u32 = 4096;

/// What to do at a mismatch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FailMode {
    /// Stop the run at the first mismatch.
    #[default]
    Stop,
    /// Count and go on.
    Continue,
}

/// One target under verification; its id is its index in [`VerifyConfig::targets`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TargetInfo {
    /// The target's name as in reports.
    pub name: String,
    /// Its size in bytes.
    pub size_bytes: u64,
}

/// How a run verifies.
#[derive(Clone, Debug)]
pub struct VerifyConfig {
    /// Verification block size (a power of two, 512 to 1 MiB).
    pub block_bytes: u32,
    /// The run's id (in every header).
    pub run_id: u64,
    /// The run's targets, by id.
    pub targets: Vec<TargetInfo>,
    /// Stop or continue at a mismatch.
    pub fail: FailMode,
    /// Keep acknowledged generations here (`--journal`).
    pub journal: Option<PathBuf>,
}

/// Verification failures that are not mismatches (a journal that cannot be written or read).
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    /// The journal file could not be used.
    #[error("journal '{path}': {reason}")]
    Journal {
        /// The file.
        path: String,
        /// What went wrong.
        reason: String,
    },
    /// Bad settings.
    #[error("{0}")]
    Config(String),
}

/// The run's verification state, shared by all workers.
pub struct Verifier {
    _private: (),
}

impl Verifier {
    /// A verifier for a run that writes (and reads) with headers.
    pub fn new(_cfg: VerifyConfig) -> Result<Verifier, VerifyError> {
        unimplemented!()
    }
    /// A verifier for `iolab verify TARGET --journal FILE`: expected generations come from the journal.
    pub fn from_journal(_path: &Path, _targets: Vec<TargetInfo>) -> Result<Verifier, VerifyError> {
        unimplemented!()
    }
    /// A verifier for `iolab verify TARGET` without a journal: each block written by iolab is checked for
    /// self-consistency (checksum, offset, one generation across its sectors).
    pub fn self_check(_block_bytes: u32, _targets: Vec<TargetInfo>) -> Verifier {
        unimplemented!()
    }
    /// The verification block for a job: the largest power of two (<= 4 KiB, >= 512) dividing every block
    /// size and the alignment; an error names the block size that cannot carry headers.
    pub fn choose_block(_block_sizes: &[u32], _align: u64) -> Result<u32, String> {
        unimplemented!()
    }
    /// Verification block size.
    pub fn block_bytes(&self) -> u32 {
        unimplemented!()
    }
    /// True once a mismatch was found and the fail mode is [`FailMode::Stop`].
    pub fn stop_requested(&self) -> bool {
        unimplemented!()
    }
    /// Target id and block offset of every failed block found so far (at most 1 Mi entries).
    pub fn mismatch_blocks(&self) -> Vec<(u16, u64)> {
        unimplemented!()
    }
    /// Makes the journal durable (after the last write was acknowledged).
    pub fn sync_journal(&self) -> Result<(), VerifyError> {
        unimplemented!()
    }
    /// The `verify` block of the result.
    pub fn result(&self) -> VerifyResult {
        unimplemented!()
    }
}
