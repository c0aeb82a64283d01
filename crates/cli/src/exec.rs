//! How the binary executes a job with [`iolab_run::execute`]: the live display ([`Shown`], the
//! [`iolab_run::Observer`] that draws the bars and prints the notices), the Ctrl-C stop flag, and the
//! library's errors mapped to exit codes. Every command that runs a job (run, sweep, find-max, steady-state,
//! verify) goes through here.

use crate::exit::usage;
use anyhow::Result;
use iolab_device::{FillProgress, WriteGate};
use iolab_run::{ExecOptions, Executed, Observer, RunShape};
use iolab_spec::JobSpec;
use iolab_stats::IntervalStats;
use std::sync::Arc;
use std::time::Duration;

/// How the CLI runs a job: `quiet` prints nothing but errors, `live` draws the bars (stderr is a terminal);
/// the stop flag is the process's Ctrl-C flag, whose handler stays silent when quiet or live. `gate` holds
/// the command's outputs and catalog, so the run refuses a target or journal on one of them.
pub fn exec_options<'a>(interval_ns: u64, quiet: bool, live: bool, gate: &WriteGate) -> ExecOptions<'a> {
    let stop = crate::signals::stop_flag(quiet || live);
    let mut opts = ExecOptions::new(interval_ns, stop, Box::new(Shown::new(quiet, live)));
    opts.gate = gate.clone();
    opts.sync = crate::ranks::sync();
    opts
}

/// Options for a dry run: nothing runs, so no signal handler is installed and nothing is shown.
pub fn dry_run_options<'a>(interval_ns: u64, gate: &WriteGate) -> ExecOptions<'a> {
    let mut opts = ExecOptions::new(interval_ns, Arc::default(), Box::new(iolab_run::Silent));
    opts.gate = gate.clone();
    opts.sync = crate::ranks::sync();
    opts
}

/// How [`execute`] shows a run: `quiet` prints nothing but errors, `live` draws the bars.
#[derive(Clone, Copy)]
pub struct ShowMode {
    /// Nothing but errors.
    pub quiet: bool,
    /// Live bars (stderr is a terminal).
    pub live: bool,
}

/// Checks (dry-runs, `dry_run`) or runs `job` with the CLI's display and stop flag, its paths claimed in
/// `gate`. An output of the run not written (`--trace`) is said and ends the command with exit code 3;
/// commands that keep the result use [`execute_with`] (every command that runs a job does).
pub fn execute(
    job: JobSpec,
    dry_run: bool,
    interval_ns: u64,
    shown: ShowMode,
    gate: &WriteGate,
) -> Result<Executed> {
    match execute_with(job, dry_run, interval_ns, shown, gate, None)? {
        (done, 0) => Ok(done),
        (_, n) => Err(crate::exit::outputs_not_written(n)),
    }
}

/// [`execute`], replaying a trace's ops in place of the generator when `replay` is given (`iolab replay`),
/// and with the number of the run's own outputs not written (`--trace`: a full disk, its directory gone),
/// each said on stderr: the result stands, and the caller ends with exit code 3 once it is saved.
pub fn execute_with(
    job: JobSpec,
    dry_run: bool,
    interval_ns: u64,
    shown: ShowMode,
    gate: &WriteGate,
    replay: Option<iolab_run::replay::ReplaySource>,
) -> Result<(Executed, usize)> {
    let mut opts = if dry_run {
        dry_run_options(interval_ns, gate)
    } else {
        exec_options(interval_ns, shown.quiet, shown.live, gate)
    };
    opts.replay = replay;
    execute_opts(job, dry_run, &mut opts)
}

/// [`iolab_run::execute`] with the library's errors mapped to exit codes, and the number of the run's own
/// outputs not written (`--trace`), each said on stderr: the result stands, and the caller ends with exit
/// code 3 once it is saved.
pub fn execute_opts(job: JobSpec, dry_run: bool, opts: &mut ExecOptions<'_>) -> Result<(Executed, usize)> {
    let exchange = job.exchange.clone();
    let done = iolab_run::execute(job, dry_run, opts)
        .map_err(|e| run_error(crate::profile::name_sizing_flags(exchange.as_ref(), e)))?;
    for e in &opts.unwritten {
        eprintln!("iolab: {e}; the run's result is kept (exit code 3)");
    }
    Ok((done, opts.unwritten.len()))
}

/// A run's error for `main`: the user's are marked as usage errors (exit code 2), iolab's own are not; the
/// text is the library's.
pub fn run_error(e: iolab_run::Error) -> anyhow::Error {
    if let iolab_run::Error::Ranks(_) = e {
        anyhow::Error::new(crate::ranks::Agreed).context(usage(e).to_string())
    } else if e.is_usage() {
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
    write_back_signal: Option<crate::write_back_signal::WriteBackGuard>,
}

impl Shown {
    /// A display for a run: nothing but errors when `quiet`; bars when `live`.
    pub fn new(quiet: bool, live: bool) -> Shown {
        Shown { quiet, live, bars: None, write_back_signal: None }
    }
}

impl Observer for Shown {
    fn notice(&mut self, line: &str) {
        if !self.quiet {
            crate::progress::notice(self.live, line);
        }
    }

    fn start(&mut self, shape: &RunShape) {
        if let Some(m) = crate::metrics::current() {
            m.start(shape);
        }
        self.bars = Some(crate::progress::RunBars::new(self.live, shape.clone()));
    }

    fn fill_hook(&mut self, verb: &str, name: &str, total_bytes: u64) -> Option<FillProgress> {
        match (&mut self.bars, self.quiet) {
            (Some(bars), false) => bars.fill_hook(verb, name, total_bytes),
            _ => None,
        }
    }

    fn cache_started(&mut self, cache: &Arc<iolab_cache::Cache>) {
        self.write_back_signal = Some(crate::write_back_signal::register(cache.clone()));
    }

    fn tick(&mut self, elapsed: Duration) {
        if let Some(bars) = &mut self.bars {
            bars.tick(elapsed);
        }
    }

    fn interval(&mut self, stats: &IntervalStats, interval_s: f64) {
        if let Some(m) = crate::metrics::current() {
            m.interval(stats, interval_s);
        }
        if let Some(bars) = &mut self.bars {
            bars.interval(stats, interval_s);
        }
    }

    fn group_interval(&mut self, group: usize, stats: &IntervalStats, interval_s: f64) {
        if let Some(m) = crate::metrics::current() {
            m.group_interval(group, stats, interval_s);
        }
    }

    fn stopping(&mut self) {
        if let Some(bars) = &mut self.bars {
            bars.stop();
        }
    }

    fn finish(&mut self) {
        self.bars = None;
        self.write_back_signal = None;
    }
}
