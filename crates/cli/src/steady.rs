//! Steady-state runs for real (`iolab run --steady-state`, a sweep's preconditioning): the rule and the
//! bounded job are [`iolab_run::steady`]; this module runs the job, feeding each finished interval to the
//! rule, with the live line saying "until steady".

use crate::session::Session;
use anyhow::Result;
use iolab_report::steady::{SteadyStateResult, SteadyStateRule};
use iolab_report::RunResult;
use iolab_run::steady::UntilSteady;
use iolab_run::Runner;
use iolab_spec::JobSpec;

/// Runs a steady-state request in the session, with the CLI's display.
struct SteadyRunner<'s> {
    session: &'s mut Session,
}

impl Runner<UntilSteady<'_>> for SteadyRunner<'_> {
    type Error = anyhow::Error;

    fn run(&mut self, mut request: UntilSteady<'_>) -> Result<RunResult> {
        let job = std::mem::take(&mut request.job);
        let mut cb = |_k: u64, p: &iolab_stats::TimePoint| request.interval(p);
        let opts = iolab_run::ExecOptions {
            on_interval: Some(&mut cb),
            ..self.session.options(self.session.shown())
        };
        let _note = crate::progress::MeasureNote::set("until steady");
        Ok(*self.session.run_with(job, opts)?)
    }
}

/// Runs `job` until steady by `rule` (or the rule's limit) in `session`: the run's result and what the rule
/// found.
pub fn run_until_steady(
    job: JobSpec,
    rule: &SteadyStateRule,
    session: &mut Session,
) -> Result<(Box<RunResult>, SteadyStateResult)> {
    let mut runner = SteadyRunner { session };
    let (result, found) = iolab_run::steady::run_until_steady(job, rule, &mut runner)?;
    Ok((Box::new(result), found))
}
