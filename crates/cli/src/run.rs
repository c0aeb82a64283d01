//! `iolab run`: flags -> job -> [`iolab_run::execute`] -> catalog -> output.
//!
//! The run itself (plan, probe, bind, open, workers, result, verdict) is `iolab-run`'s, run in a
//! [`Session`] (claims, catalog, outputs); here are the job built from the flags and the exit code.
//! Everything that can reject the user's input still runs before anything is created or written.

use crate::args::RunArgs;
use crate::exit::{usage, ExitStatus};
use crate::job::build_job;
use crate::output::{output, print, Outputs};
use crate::session::Session;
use anyhow::Result;

/// Runs `iolab run`: builds the job from the arguments, executes it, prints and writes the result.
pub fn run(args: &RunArgs) -> Result<ExitStatus> {
    let job = build_job(args)?;
    if !job.phases.is_empty() {
        return crate::points::run_phases(args, &job);
    }
    run_job(args, job, None)
}

/// Runs `iolab replay` once its flags are set from the trace: a run whose one worker issues `src`'s ops.
pub fn run_replay(args: &RunArgs, src: iolab_run::replay::ReplaySource) -> Result<ExitStatus> {
    let job = build_job(args)?;
    if args.steady.steady_state.is_some() {
        return Err(usage("iolab replay replays the trace once: '--steady-state' does not apply"));
    }
    run_job(args, job, Some(src))
}

/// Runs `job` (built from `args`), replaying `replay` when given, in a [`Session`].
fn run_job(
    args: &RunArgs,
    job: iolab_spec::JobSpec,
    replay: Option<iolab_run::replay::ReplaySource>,
) -> Result<ExitStatus> {
    let _scratch_guard = iolab_device::ScratchGuard;
    let steady = crate::job::steady_rule(&args.steady)?;
    if let (Some(_), Some(d)) = (&steady, args.keys.get("duration")) {
        return Err(usage(format!("'--duration {d}' and '--steady-state' both bound the run; a steady-state run lasts until steady or '--steady-state-limit'")));
    }
    let mut session = Session::of_run(args, replay.as_ref().map(|src| src.path.as_str()))?;
    if args.dry_run {
        // Keys sorted, as in every document iolab writes.
        let doc = serde_json::to_value(session.dry_run(job)?)?;
        print(&serde_json::to_string_pretty(&doc)?)?;
        return Ok(ExitStatus::Ok);
    }
    let result = match &steady {
        Some(rule) => {
            let (mut r, ss) = crate::steady::run_until_steady(job, rule, &mut session)?;
            r.steady_state = Some(ss);
            r
        }
        None => session.run(job, replay)?,
    };
    if result.partial && result.total.all.ops == 0 {
        session.skip_save("the run was interrupted before it measured any I/O (in its ramp)");
    }
    let json = iolab_report::JsonExporter.render(&*result);
    let written = |outputs: &Outputs| output(&result, args.quiet, outputs);
    session.conclude((crate::saving::entry(&*result)?, &json), written, ExitStatus::of(&result))
}
