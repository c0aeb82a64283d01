//! iolab-run: one run of a job, from plan to result, and the sweeps and searches made of runs.
//!
//! The binary parses flags and prints; this crate does the work between: it probes and binds the targets,
//! opens them, builds the engine layers (emulated devices, links, the cache, verification, faults), starts
//! the workers, collects their intervals, merges their outputs into a `RunResult` and derives the warnings.
//! Sweeps and find-max searches are pure state machines over a small runner trait, so they are
//! tested with a mock runner (hyperfine's `Executor`/`MockExecutor`).
//!
//! One run, in order ([`execute`]): `prepare` (scratch targets, plan, engine, probe, bind and every check:
//! everything that can reject the input runs before anything is created), then `execute` (open and fill,
//! throttle, `layers`, `integrity`, worker threads), `collect` (intervals while the workers run),
//! `assemble` (worker outputs into the result) with `warnings` (derived from plain numbers) and `env`
//! (facts about the machine). What the user sees meanwhile goes through an [`Observer`].

#![deny(missing_docs)]

mod assemble;
mod atomic;
mod collect;
pub mod env;
mod error;
mod execute;
pub mod find_max;
pub mod integrity;
pub mod layers;
mod layout;
pub mod loadgen;
mod multi;
mod observe;
mod prepare;
mod record;
pub mod replay;
pub mod runner;
pub mod steady;
pub mod sweep;
mod target;
pub mod verdict;
pub mod warnings;
mod wire;

pub use error::{Error, Result};
pub use execute::execute;
pub use integrity::CheckMode;
pub use multi::{rank_seed, RunSync};
pub use observe::{GroupShape, Observer, RunShape, Silent};
pub use prepare::DryRun;
pub use runner::Runner;

use iolab_report::RunResult;
use iolab_stats::TimePoint;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// A callback on each finished interval (index, all workers merged); `true` ends the measurement, complete.
pub type IntervalHook<'a> = &'a mut dyn FnMut(u64, &TimePoint) -> bool;

/// How [`execute`] runs: everything that is not part of the job itself.
pub struct ExecOptions<'a> {
    /// Called with each finished interval of the whole run (all workers merged) and its index; returning
    /// `true` ends the measurement there, complete (not partial): steady-state detection, search steps.
    pub on_interval: Option<IntervalHook<'a>>,
    /// `iolab verify`: check the targets against a journal or for self-consistency (the job only reads).
    pub check: Option<CheckMode>,
    /// Raised (by the caller's signal handling) to end the run early: the workers drain what is in flight
    /// and the result is marked `partial`. Raised before the targets are open, the run does not start.
    pub stop: Arc<AtomicBool>,
    /// What the user sees while the run goes on.
    pub observer: Box<dyn Observer + 'a>,
    /// The paths the caller writes besides the run (outputs, the catalog): the run adds its targets, journal
    /// and cache device to a copy, and refuses one that names a file already claimed (`--journal F --target
    /// F`, `--json` on a target) before anything is created.
    pub gate: iolab_device::WriteGate,
    /// A run over several hosts: the ranks' collectives (the binary's MPI glue). `None` runs on this host
    /// alone, as always.
    pub sync: Option<Arc<dyn RunSync>>,
    /// `iolab replay`: the trace's ops replace the generator of the run's workers.
    pub replay: Option<replay::ReplaySource>,
}

impl<'a> ExecOptions<'a> {
    /// Options for a plain run: no interval callback, no check.
    pub fn new(stop: Arc<AtomicBool>, observer: Box<dyn Observer + 'a>) -> ExecOptions<'a> {
        ExecOptions {
            on_interval: None,
            check: None,
            stop,
            observer,
            gate: Default::default(),
            sync: None,
            replay: None,
        }
    }
}

/// What [`execute`] produced.
pub enum Executed {
    /// `--dry-run`: the resolved job, nothing created or changed.
    DryRun(Box<DryRun>),
    /// A finished (or interrupted, `partial`) run.
    Done {
        /// The run's result.
        result: Box<RunResult>,
        /// Outputs of the run itself (`--trace`) that could not be written, each an error's text. The run
        /// was measured and its result stands; the caller says these and ends with its "outputs not
        /// written" status.
        unwritten: Vec<String>,
    },
}
