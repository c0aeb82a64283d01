//! The runner trait: what sweeps and searches ask of whoever runs a job.
//!
//! A sweep, a find-max search and a steady-state run decide *what* to run next and fold the results; they do
//! not run anything themselves. They hand a request (a sweep trial, a search step, a run to watch until
//! steady) to a [`Runner`], which turns it into a job, runs it and returns its [`RunResult`]. The binary's
//! runner executes real jobs and draws progress; tests use a mock that returns made-up results, so the
//! state machines are checked without a device or a clock (hyperfine's `Executor` and `MockExecutor`).

use iolab_report::RunResult;

/// Runs the requests of a sweep or a search: one whole run per request.
pub trait Runner<Req> {
    /// Why a run could not be made or did not finish (the binary's runner uses `anyhow::Error`).
    type Error;

    /// Runs `request` to its end (or until the user stops it, then the result is `partial`) and returns its
    /// result.
    fn run(&mut self, request: Req) -> Result<RunResult, Self::Error>;

    /// The user asked to stop (Ctrl-C): the sweep or search ends, partial, before its next run. The default
    /// never stops.
    fn stop_requested(&self) -> bool {
        false
    }
}

/// A run that ended early: interrupted (its result is `partial`) or followed by a request to stop. A sweep
/// or search ends after such a run.
pub fn ended_early<Req, R: Runner<Req> + ?Sized>(runner: &R, result: &RunResult) -> bool {
    result.partial || runner.stop_requested()
}

/// Test helpers: a real run's result to hand out from mock runners.
#[cfg(test)]
pub(crate) mod mock {
    use iolab_report::RunResult;

    /// A finished run's result (virtual time, one worker), read from `testdata/result.json`.
    pub(crate) fn result() -> RunResult {
        serde_json::from_str(include_str!("testdata/result.json")).expect("testdata/result.json parses")
    }
}
