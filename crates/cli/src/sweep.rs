//! `iolab sweep`: one job across values of one or more fields, with trials, the knee and `--max-p99`.
//! STUB: filled in by the sweeps work.

use crate::args::RunArgs;
use crate::run::Outcome;
use anyhow::Result;
use clap::Args;

/// `iolab sweep` options: every `iolab run` option, where the swept ones take lists.
#[derive(Args, Debug, Default)]
pub struct SweepArgs {
    /// The run options (job file, target, ...).
    #[command(flatten)]
    pub run: RunArgs,
}

/// Runs `iolab sweep`.
pub fn sweep(_args: &SweepArgs) -> Result<Outcome> {
    Ok(Outcome::Ok)
}
