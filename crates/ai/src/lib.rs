//! iolab-ai: AI training storage workloads (`iolab ai train`, docs/AI.md). A DLIO workload file or a
//! built-in MLPerf-Storage-compatible workload ([`config`]) becomes a dataset in its formats' real on-disk
//! shape ([`mod@format`], [`dataset`]), read by simulated accelerators as DLIO's loader reads it ([`train`]),
//! and judged by accelerator utilization ([`au`]) in an `iolab.aitrain/1` document ([`document`]).
//!
//! As `iolab-db`'s workloads are built: a library call that prints nothing, installs no signal handler and
//! undoes what it made ([`run`]: the data directory the caller claimed in its write gate is made, filled,
//! and removed on every path; [`cleanup_on_exit`] for an exit that skips destructors), telling the caller
//! through an observer.

pub mod au;
pub mod checkpoint;
pub mod config;
pub mod dataset;
mod dir;
pub mod document;
pub mod emulated;
mod fill;
pub mod fleet;
pub mod format;
pub mod tfrecord;
pub mod train;
mod usage;

pub use config::{load, ConfigError, LoadedWorkload, TrainConfig};
pub use dir::cleanup_on_exit;
pub use document::Notices;

use iolab_device::HeldDir;
use iolab_report::ai::AiTrainResult;
use std::sync::atomic::AtomicBool;

/// Why a training run did not produce its document.
#[derive(Debug, thiserror::Error)]
pub enum AiError {
    /// The workload cannot run as asked (the user's input: exit 2).
    #[error("{0}")]
    Config(String),
    /// A file operation failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The error.
        source: std::io::Error,
    },
    /// Stopped before there was anything to report.
    #[error("interrupted before there was anything to report (what iolab made was removed)")]
    Interrupted,
}

impl AiError {
    /// An I/O error while doing `what`.
    pub fn io(what: String, source: std::io::Error) -> AiError {
        AiError::Io { what, source }
    }

    /// Whether it is the user's input or environment (exit 2).
    pub fn is_usage(&self) -> bool {
        matches!(self, AiError::Config(_))
    }
}

/// Generates the dataset of `loaded` in `held` (made now, removed before returning), trains on it with
/// `seed`, and returns the document. `stop` ends training early (a partial document) or, before training,
/// the whole run ([`AiError::Interrupted`]).
pub fn run(
    loaded: &LoadedWorkload,
    held: HeldDir,
    seed: u64,
    stop: &AtomicBool,
    notices: &dyn Notices,
) -> Result<AiTrainResult, AiError> {
    let c = &loaded.config;
    check(c)?;
    let dir = dir::DataDir::make(held)?;
    let path = dir.path().to_path_buf();
    let result = document::generate_and_train(loaded, &path, seed, stop, notices);
    let removed = dir.remove();
    let doc = result?;
    removed.map_err(|e| AiError::io("removing the data directory".into(), e))?;
    Ok(doc)
}

/// Trains `loaded` on the emulated device `target` (as typed: `shown`) on virtual time, or with `find_max`
/// searches for the most accelerators it feeds ([`fleet::find_max`]); nothing is written anywhere.
pub fn run_emulated(
    loaded: &LoadedWorkload,
    target: (&iolab_spec::TargetSpec, &str),
    seed: u64,
    find_max: bool,
    notices: &dyn Notices,
) -> Result<AiTrainResult, AiError> {
    check(&loaded.config)?;
    if find_max {
        return fleet::find_max(loaded, target, seed, notices);
    }
    document::emulate(loaded, target, seed)
}

/// What makes a workload impossible before anything is made.
pub fn check(c: &TrainConfig) -> Result<(), AiError> {
    let samples = c.num_files * c.samples_per_file;
    if train::steps_per_epoch(c) == 0 {
        return Err(AiError::Config(format!(
            "the dataset's {samples} samples give no step: each of {} accelerator(s) needs reader.batch_size={} samples a step; give more (--param dataset.num_files_train=N) or fewer accelerators",
            c.accelerators, c.batch_size
        )));
    }
    Ok(())
}
