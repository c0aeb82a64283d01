//! `iolab run`: flags -> job -> [`iolab_run::execute`] -> verdict -> catalog -> output.
//!
//! The run itself (plan, probe, bind, open, workers, result) is `iolab-run`'s, executed through
//! [`crate::exec`]; here are the job built from the flags, the verdict, the catalog and the exit code.
//! Everything that can reject the user's input still runs before anything is created or written.

use crate::args::RunArgs;
use crate::exec::ShowMode;
use crate::exit::{usage, ExitStatus};
use crate::job::{build_job, parse_interval};
use crate::output::{output, print, Outputs};
use anyhow::Result;
use iolab_device::WriteGate;
use iolab_run::Executed;
use std::io::IsTerminal;

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

/// Runs `job` (built from `args`), replaying `replay` when given.
fn run_job(
    args: &RunArgs,
    job: iolab_spec::JobSpec,
    replay: Option<iolab_run::replay::ReplaySource>,
) -> Result<ExitStatus> {
    let judged = job.clone();
    let interval_ns = parse_interval(&args.interval)?;
    let _scratch_guard = iolab_device::ScratchGuard;
    let live = !args.quiet && std::io::stderr().is_terminal();
    let steady = crate::job::steady_rule(&args.steady)?;
    if let (Some(_), Some(d)) = (&steady, args.keys.get("duration")) {
        return Err(usage(format!("'--duration {d}' and '--steady-state' both bound the run; a steady-state run lasts until steady or '--steady-state-limit'")));
    }
    // Outputs and the catalog are claimed before anything is created or run: a path refused, or a bad
    // catalog, is an exit-2 error with nothing done. The run adds its targets and journal to the gate.
    let mut gate = WriteGate::new();
    if let Some(src) = &replay {
        gate.claim("the trace to replay", &src.path, iolab_device::Access::Reads).map_err(usage)?;
    }
    crate::output::claim_job_file(&mut gate, args.job.as_deref())?;
    let outputs = Outputs::claim(&mut gate, args.json.as_deref(), args.csv.as_deref())?;
    let saver = crate::saving::Saver::open(&args.catalog, args.quiet, args.dry_run, &mut gate)?;
    if !args.dry_run {
        crate::metrics::serve(args.metrics.as_deref())?;
    }
    let shown = ShowMode { quiet: args.quiet, live };
    let (result, unwritten) = match (&steady, args.dry_run) {
        (Some(rule), false) => {
            let (mut r, ss, n) = crate::steady::run_until_steady(job, rule, interval_ns, shown, &gate)?;
            r.steady_state = Some(ss);
            (r, n)
        }
        _ => match crate::exec::execute_with(job, args.dry_run, interval_ns, shown, &gate, replay)? {
            (Executed::DryRun(mut doc), _) => {
                if let Some(sizing) = crate::profile::sizing_json(&judged) {
                    doc["exchange"] = sizing;
                }
                print(&serde_json::to_string_pretty(&doc)?)?;
                return Ok(ExitStatus::Ok);
            }
            (Executed::Done(r), n) => (r, n),
        },
    };
    let mut result = result;
    crate::profile::judge(&judged, &args.profile, &mut result);
    let saved = crate::saving::save(
        saver.as_ref(),
        iolab_catalog::EntryKind::Run,
        &iolab_report::JsonExporter.render(&iolab_report::Document::Run(&result)),
    );
    let written = output(&result, args.quiet, &outputs);
    saved?;
    written?;
    if unwritten > 0 {
        return Err(crate::exit::outputs_not_written(unwritten));
    }
    Ok(ExitStatus::of(&result))
}
