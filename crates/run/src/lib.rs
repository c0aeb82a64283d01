//! iolab-run: one run of a job, from plan to result, and the sweeps and searches made of runs.
//!
//! The binary parses flags and prints; this crate does the work between: it probes and binds the targets,
//! opens them, builds the engine layers (emulated devices, links, the cache, verification, faults), starts
//! the workers, collects their intervals, merges their outputs into a `RunResult` and derives the warnings.
//! Sweeps and find-max searches are pure state machines over a small runner trait, so they are
//! tested with a mock runner (hyperfine's `Executor`/`MockExecutor`).

#![deny(missing_docs)]

pub mod findmax;
pub mod runner;
pub mod steady;
pub mod sweep;

pub use runner::Runner;
