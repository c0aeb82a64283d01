//! Built-in profiles (`iolab profiles`, `iolab run --profile NAME`), Exchange sizing flags, the pass/fail
//! verdict and `--find-max`. STUB: filled in by the profiles work.

use crate::run::Outcome;
use anyhow::Result;
use clap::Args;
use iolab_report::RunResult;
use iolab_spec::JobSpec;

/// Profile, Exchange-sizing and verdict flags of `iolab run` (and `iolab sweep`).
#[derive(Args, Debug, Default, Clone)]
pub struct ProfileFlags {
    /// Run a built-in profile (see `iolab profiles`); flags override it, as they do a job file.
    #[arg(long, value_name = "NAME")]
    pub profile: Option<String>,
}

/// `iolab profiles` options.
#[derive(Args, Debug, Default, Clone)]
pub struct ProfilesArgs {}

/// Runs `iolab profiles`.
pub fn profiles_cmd(_args: &ProfilesArgs) -> Result<Outcome> {
    Ok(Outcome::Ok)
}

/// The job a profile starts from, or `None` without `--profile`.
pub fn load(_flags: &ProfileFlags) -> Result<Option<JobSpec>> {
    Ok(None)
}

/// Applies sizing (Exchange) to the job once flags are merged.
pub fn resolve(_job: &mut JobSpec, _flags: &ProfileFlags) -> Result<()> {
    Ok(())
}

/// Judges a finished run against the job's thresholds, filling `result.verdict`.
pub fn judge(_job: &JobSpec, _flags: &ProfileFlags, _result: &mut RunResult) {}
