//! What a run shows while it goes on, behind a small trait the caller implements: one-line notices (engine
//! fallback, a file being created, the throttle in place), a progress callback while a target is filled, the
//! ramp and measure phases, each finished interval, and the user's request to stop. The library decides
//! *when* something happens; the [`Observer`] decides whether and how to show it (the CLI draws live bars on
//! a terminal and prints notices on stderr unless `-q`). [`Silent`] shows nothing.
//!
//! An observer is also where a run hands out what must live exactly as long as its workers, such as the
//! block cache a `kill -USR1` writes back: the CLI's signal handling is process-wide, not the library's.

use iolab_cache::Cache;
use iolab_device::FillProgress;
use iolab_plan::Plan;
use iolab_spec::ClockKind;
use iolab_stats::IntervalStats;
use std::sync::Arc;
use std::time::Duration;

/// What bounds a run, as the plan says: what a progress display needs to know in advance.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunShape {
    /// Ramp (warm-up), seconds.
    pub ramp_s: f64,
    /// Measured duration, seconds; for a steady-state run, its limit.
    pub duration_s: Option<f64>,
    /// `--ios`: total ops.
    pub ios: Option<u64>,
    /// `--bytes`: total bytes.
    pub bytes: Option<u64>,
    /// Virtual clock: wall time says nothing; progress follows the intervals.
    pub virtual_time: bool,
    /// The worker groups, in the order [`Observer::group_interval`] numbers them.
    pub groups: Vec<GroupShape>,
}

/// One worker group of a run, as a live display or a metrics endpoint labels it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GroupShape {
    /// The group's name (a worker table's name, or `worker`).
    pub name: String,
    /// Its workers.
    pub workers: u32,
    /// The targets its workers use, by display name, in order of first use.
    pub targets: Vec<String>,
    /// Its offered rate in open loop (the sum of its workers' rates); `None` in closed loop.
    pub offered_iops: Option<f64>,
}

impl RunShape {
    /// The shape of `plan`'s run.
    pub fn of(plan: &Plan) -> RunShape {
        RunShape {
            ramp_s: plan.ramp_ns as f64 / 1e9,
            duration_s: plan.duration_ns.map(|d| d as f64 / 1e9),
            ios: plan.ios,
            bytes: plan.bytes,
            virtual_time: plan.clock == ClockKind::Virtual,
            groups: group_shapes(plan),
        }
    }
}

/// The worker groups of `plan`, in order of first appearance (as [`crate::collect`] numbers them).
fn group_shapes(plan: &Plan) -> Vec<GroupShape> {
    let mut groups: Vec<GroupShape> = Vec::new();
    for w in &plan.workers {
        let i = match groups.iter().position(|g| g.name == w.group) {
            Some(i) => i,
            None => {
                groups.push(GroupShape { name: w.group.clone(), ..GroupShape::default() });
                groups.len() - 1
            }
        };
        let g = &mut groups[i];
        g.workers += 1;
        for &t in &w.targets {
            let name = &plan.targets[t].name;
            if !g.targets.contains(name) {
                g.targets.push(name.clone());
            }
        }
        if let Some(r) = w.rate_iops {
            *g.offered_iops.get_or_insert(0.0) += r;
        }
    }
    groups
}

/// Shows a run as it goes on. Called on the thread that called [`crate::execute`], never from a worker.
/// Between [`Observer::start`] and [`Observer::finish`] the run's targets are being opened or its workers
/// run; `finish` is called on every way out, errors included.
pub trait Observer {
    /// A one-line notice for the user (`iolab: ...`), e.g. "io_uring unavailable; using the sync engine".
    fn notice(&mut self, line: &str);
    /// The run passed every check and is about to create and open its targets; `shape` bounds it.
    fn start(&mut self, shape: &RunShape);
    /// A target is being filled (`verb` is "creating" or "extending"): a progress callback for the fill, or
    /// `None` to fill without one.
    fn fill_hook(&mut self, verb: &str, name: &str, total_bytes: u64) -> Option<FillProgress>;
    /// The run's block cache, live until [`Observer::finish`] (to write it back on the user's demand).
    fn cache_started(&mut self, cache: &Arc<Cache>);
    /// Called often (every 100 ms at least) while the workers run; `elapsed` is since they started.
    fn tick(&mut self, elapsed: Duration);
    /// A finished interval of the whole run (all workers merged), `interval_s` long.
    fn interval(&mut self, stats: &IntervalStats, interval_s: f64);
    /// A finished interval of one worker group (its workers merged; `group` indexes [`RunShape::groups`]).
    fn group_interval(&mut self, group: usize, stats: &IntervalStats, interval_s: f64);
    /// The stop flag is up: the workers drain what is in flight. Called repeatedly until the run ends.
    fn stopping(&mut self);
    /// The workers are done (or the run failed before they started): clear whatever `start` began.
    fn finish(&mut self);
}

/// An observer that shows nothing: for dry runs, tests and callers that print only the result.
#[derive(Clone, Copy, Debug, Default)]
pub struct Silent;

impl Observer for Silent {
    fn notice(&mut self, _line: &str) {}
    fn start(&mut self, _shape: &RunShape) {}
    fn fill_hook(&mut self, _verb: &str, _name: &str, _total_bytes: u64) -> Option<FillProgress> {
        None
    }
    fn cache_started(&mut self, _cache: &Arc<Cache>) {}
    fn tick(&mut self, _elapsed: Duration) {}
    fn interval(&mut self, _stats: &IntervalStats, _interval_s: f64) {}
    fn group_interval(&mut self, _group: usize, _stats: &IntervalStats, _interval_s: f64) {}
    fn stopping(&mut self) {}
    fn finish(&mut self) {}
}

/// An observer between [`Observer::start`] and [`Observer::finish`]: `finish` runs when this drops, so every
/// way out of a run (an error while opening, a worker that failed) clears what `start` began.
pub(crate) struct Started<'o> {
    observer: &'o mut (dyn Observer + 'o),
}

impl<'o> Started<'o> {
    /// Calls `observer.start(shape)`.
    pub(crate) fn new(observer: &'o mut (dyn Observer + 'o), shape: &RunShape) -> Started<'o> {
        observer.start(shape);
        Started { observer }
    }
}

impl<'o> std::ops::Deref for Started<'o> {
    type Target = dyn Observer + 'o;
    fn deref(&self) -> &Self::Target {
        self.observer
    }
}

impl std::ops::DerefMut for Started<'_> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        self.observer
    }
}

impl Drop for Started<'_> {
    fn drop(&mut self) {
        self.observer.finish();
    }
}
