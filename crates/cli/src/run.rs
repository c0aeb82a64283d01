//! `iolab run`: flags -> job -> [`iolab_run::execute`] -> verdict -> catalog -> output.
//!
//! The run itself (plan, probe, bind, open, workers, result) is `iolab-run`'s; here are the job built from the
//! flags, the live display ([`Shown`], the [`iolab_run::Observer`] that draws the bars and prints the
//! notices), the signal-driven stop flag, and the exit code. Everything that can reject the user's input
//! still runs before anything is created or written.

use crate::args::RunArgs;
use crate::exit::{usage, ExitStatus};
use crate::job::{build_job, parse_interval};
use crate::output::{output, write_out};
use anyhow::Result;
use iolab_device::FillProgress;
use iolab_run::{ExecOptions, Executed, Observer, RunShape};
use iolab_spec::JobSpec;
use iolab_stats::IntervalStats;
use std::io::IsTerminal;
use std::sync::Arc;
use std::time::Duration;

/// Runs `iolab run`: builds the job from the arguments, executes it, prints and writes the result.
pub fn run(args: &RunArgs) -> Result<ExitStatus> {
    let job = build_job(args)?;
    let judged = job.clone();
    let interval_ns = parse_interval(&args.interval)?;
    let _scratch_guard = iolab_device::ScratchGuard;
    let live = !args.quiet && std::io::stderr().is_terminal();
    let steady = crate::job::steady_rule(&args.steady)?;
    if let (Some(_), Some(d)) = (&steady, &args.duration) {
        return Err(usage(format!("'--duration {d}' and '--steady-state' both bound the run; a steady-state run lasts until steady or '--steady-state-limit'")));
    }
    // The catalog opens before anything is created or run: a bad one is an exit-2 error with nothing done.
    let saver = crate::saving::Saver::open(&args.catalog, args.quiet, args.dry_run)?;
    let result = match (&steady, args.dry_run) {
        (Some(rule), false) => {
            let (mut r, ss) = crate::steady::run_until_steady(job, rule, interval_ns, args.quiet, live)?;
            r.steady_state = Some(ss);
            r
        }
        _ => match execute(job, args.dry_run, interval_ns, args.quiet, live)? {
            Executed::DryRun(mut doc) => {
                if let Some(sizing) = crate::profile::sizing_json(&judged) {
                    doc["exchange"] = sizing;
                }
                write_out("-", &serde_json::to_string_pretty(&doc)?)?;
                return Ok(ExitStatus::Ok);
            }
            Executed::Done(r) => r,
        },
    };
    let mut result = result;
    crate::profile::judge(&judged, &args.profile, &mut result);
    let saved = crate::saving::save(
        saver.as_ref(),
        iolab_catalog::EntryKind::Run,
        &iolab_report::JsonExporter.render(&iolab_report::Document::Run(&result)),
    );
    output(&result, args.quiet, args.json.as_deref(), args.csv.as_deref())?;
    saved?;
    Ok(ExitStatus::of(&result))
}

/// How the CLI runs a job: `quiet` prints nothing but errors, `live` draws the bars (stderr is a terminal);
/// the stop flag is the process's Ctrl-C flag, whose handler stays silent when quiet or live.
pub fn exec_options<'a>(interval_ns: u64, quiet: bool, live: bool) -> ExecOptions<'a> {
    let stop = crate::signals::stop_flag(quiet || live);
    ExecOptions::new(interval_ns, stop, Box::new(Shown::new(quiet, live)))
}

/// Options for a dry run: nothing runs, so no signal handler is installed and nothing is shown.
pub fn dry_run_options<'a>(interval_ns: u64) -> ExecOptions<'a> {
    ExecOptions::new(interval_ns, Arc::default(), Box::new(iolab_run::Silent))
}

/// Runs (or with `dry_run`, checks) `job` with the CLI's display and stop flag.
pub fn execute(job: JobSpec, dry_run: bool, interval_ns: u64, quiet: bool, live: bool) -> Result<Executed> {
    let mut opts =
        if dry_run { dry_run_options(interval_ns) } else { exec_options(interval_ns, quiet, live) };
    iolab_run::execute(job, dry_run, &mut opts).map_err(run_error)
}

/// A run's error for `main`: the user's are marked as usage errors (exit code 2), iolab's own are not; the
/// text is the library's.
pub fn run_error(e: iolab_run::Error) -> anyhow::Error {
    if e.is_usage() {
        usage(e)
    } else {
        anyhow::anyhow!(e.to_string())
    }
}

/// The CLI's [`Observer`]: notices on stderr (above the bars when live) unless quiet, the live bars of
/// [`crate::progress::RunBars`] while the run goes on, and the run's cache registered for `kill -USR1`.
pub struct Shown {
    quiet: bool,
    live: bool,
    bars: Option<crate::progress::RunBars>,
    flush: Option<crate::flush_signal::FlushGuard>,
}

impl Shown {
    /// A display for a run: nothing but errors when `quiet`; bars when `live`.
    pub fn new(quiet: bool, live: bool) -> Shown {
        Shown { quiet, live, bars: None, flush: None }
    }
}

impl Observer for Shown {
    fn notice(&mut self, line: &str) {
        if !self.quiet {
            crate::progress::notice(self.live, line);
        }
    }

    fn start(&mut self, shape: &RunShape) {
        self.bars = Some(crate::progress::RunBars::new(self.live, shape.clone()));
    }

    fn fill_hook(&mut self, verb: &str, name: &str, total_bytes: u64) -> Option<FillProgress> {
        match (&mut self.bars, self.quiet) {
            (Some(bars), false) => bars.fill_hook(verb, name, total_bytes),
            _ => None,
        }
    }

    fn cache_started(&mut self, cache: &Arc<iolab_cache::Cache>) {
        self.flush = Some(crate::flush_signal::register(cache.clone()));
    }

    fn tick(&mut self, elapsed: Duration) {
        if let Some(bars) = &mut self.bars {
            bars.tick(elapsed);
        }
    }

    fn interval(&mut self, stats: &IntervalStats, interval_s: f64) {
        if let Some(bars) = &mut self.bars {
            bars.interval(stats, interval_s);
        }
    }

    fn stopping(&mut self) {
        if let Some(bars) = &mut self.bars {
            bars.stop();
        }
    }

    fn finish(&mut self) {
        self.bars = None;
        self.flush = None;
    }
}
