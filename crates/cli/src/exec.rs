//! How the binary shows a job [`iolab_run::execute`] runs: the live display ([`Shown`], the
//! [`iolab_run::Observer`] that draws the bars and prints the notices), and the library's errors mapped to
//! exit codes. Every command that runs a job (run, sweep, find-max, steady-state, verify) runs it in a
//! [`crate::session::Session`], which uses these.

use crate::exit::usage;
use iolab_device::FillProgress;
use iolab_run::{Observer, RunShape};
use iolab_stats::IntervalStats;
use std::sync::Arc;
use std::time::Duration;

/// How a run is shown: `quiet` prints nothing but errors, `live` draws the bars.
#[derive(Clone, Copy)]
pub struct ShowMode {
    /// Nothing but errors.
    pub quiet: bool,
    /// Live bars (stderr is a terminal).
    pub live: bool,
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
