//! Steady-state runs for real (`iolab run --steady-state`, a sweep's preconditioning): the rule and the
//! bounded job are [`iolab_run::steady`]; this module runs the job, feeding each finished interval to the
//! rule, with the live line saying "until steady".

use crate::exec::ShowMode;
use anyhow::Result;
use iolab_device::WriteGate;
use iolab_report::steady::{SteadyStateResult, SteadyStateRule};
use iolab_report::RunResult;
use iolab_run::steady::UntilSteady;
use iolab_run::Runner;
use iolab_spec::JobSpec;

/// Runs a steady-state request with [`iolab_run::execute`] and the CLI's display.
struct SteadyRunner<'g> {
    interval_ns: u64,
    shown: ShowMode,
    gate: &'g WriteGate,
    /// Outputs of the run (`--trace`) not written, each said.
    unwritten: usize,
}

impl Runner<UntilSteady<'_>> for SteadyRunner<'_> {
    type Error = anyhow::Error;

    fn run(&mut self, mut request: UntilSteady<'_>) -> Result<RunResult> {
        let job = std::mem::take(&mut request.job);
        let mut cb = |_k: u64, p: &iolab_stats::TimePoint| request.interval(p);
        let mut opts = iolab_run::ExecOptions {
            on_interval: Some(&mut cb),
            ..crate::exec::exec_options(self.interval_ns, self.shown.quiet, self.shown.live, self.gate)
        };
        let _note = crate::progress::MeasureNote::set("until steady");
        match crate::exec::execute_opts(job, false, &mut opts)? {
            (iolab_run::Executed::Done(r), n) => {
                self.unwritten += n;
                Ok(*r)
            }
            (iolab_run::Executed::DryRun(_), _) => {
                anyhow::bail!("a steady-state run cannot be a dry run (bug)")
            }
        }
    }
}

/// Runs `job` until steady by `rule` (or the rule's limit), its paths claimed in `gate`: the run's result,
/// what the rule found, and the run's own outputs not written (`--trace`, said on stderr).
pub fn run_until_steady(
    job: JobSpec,
    rule: &SteadyStateRule,
    interval_ns: u64,
    shown: ShowMode,
    gate: &WriteGate,
) -> Result<(Box<RunResult>, SteadyStateResult, usize)> {
    let mut runner = SteadyRunner { interval_ns, shown, gate, unwritten: 0 };
    let (result, found) = iolab_run::steady::run_until_steady(job, rule, interval_ns, &mut runner)?;
    Ok((Box::new(result), found, runner.unwritten))
}
