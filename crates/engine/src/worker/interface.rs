//! What the cli hands a worker ([`WorkerSetup`], [`EngineChoice`]) and what it gets back ([`WorkerEvent`]s
//! while it runs, a [`WorkerOutput`] at the end): the worker's whole interface, in a module of its own that
//! imports none of the worker's parts, so they can all depend on it without a cycle.

use crate::base::sim::SimTarget;
use crate::layer::cache::WorkerCache;
use iolab_device::MemStore;
use iolab_plan::{Region, WorkerPlan};
use iolab_stats::{IntervalStats, LatencyHistogram, OpStats};
use std::fs::File;
use std::sync::atomic::AtomicBool;
use std::sync::mpsc::Sender;
use std::sync::{Arc, Barrier};
use std::time::Instant;

/// Which engine a worker runs.
#[derive(Clone, Debug)]
pub enum EngineChoice {
    /// io_uring on the worker's files.
    Uring,
    /// pread/pwrite on the worker's files.
    Sync,
    /// In-process RAM disk.
    Mem(Arc<MemStore>),
    /// In-process, no copy.
    Null,
    /// Emulated devices, one per worker target.
    Sim {
        /// The worker's targets' devices and data.
        targets: Vec<SimTarget>,
        /// This worker's client number on each device.
        client: usize,
        /// On virtual time, the worker's seat on the run's timeline (None: the real clock).
        seat: Option<Arc<crate::timeline::Seat>>,
    },
}

impl EngineChoice {
    /// Emulated devices of a worker alone on virtual time (client 0 of each, on a timeline of its own): how
    /// tests and single-worker tools run one.
    pub fn alone_on_virtual_time(targets: Vec<SimTarget>) -> EngineChoice {
        let devices = targets.iter().map(|t| t.device.clone()).collect();
        let seat = crate::timeline::Timeline::new(1, devices).seat(0);
        EngineChoice::Sim { targets, client: 0, seat: Some(seat) }
    }
}

/// Everything one worker needs, by role: what to do, what to do it with, and how it is controlled.
pub struct WorkerSetup {
    /// What to do: the worker's plan, where and for how long.
    pub task: WorkerTask,
    /// What to do it with: the engine and the layers in front of it.
    pub tools: WorkerTools,
    /// How it is controlled: released, stopped, and where its intervals go.
    pub control: WorkerControl,
}

/// What a worker does: its plan, its regions, the run's seed and time window, and (`iolab replay`) the ops
/// it issues instead of the plan's.
pub struct WorkerTask {
    /// The worker's plan.
    pub plan: WorkerPlan,
    /// Its region in each of its targets.
    pub regions: Vec<Region>,
    /// The run seed.
    pub seed: u64,
    /// Warm-up.
    pub ramp_ns: u64,
    /// Measured time (None: until the I/O or byte limit).
    pub duration_ns: Option<u64>,
    /// Time-series interval.
    pub interval_ns: u64,
    /// Per worker target (by its own target index): the file's extent boundaries, taken after the targets
    /// were prepared, when it has more than one extent (`iolab_device::layout`); `None` otherwise. Empty: no
    /// target has any, and nothing is counted.
    pub boundaries: Vec<Option<Arc<[u64]>>>,
    /// `iolab replay`: the ops to issue, in place of the plan's generator and arrivals (None: a normal run).
    pub replay: Option<Arc<ReplayOps>>,
    /// The flow group it is in (its plan's `flow`), shared with the group's other workers (None: in none).
    pub flow: Option<Arc<crate::flow::FlowGroup>>,
}

impl WorkerTask {
    /// Worker `index` of `plan`, bound to `regions`, with the plan's seed, ramp, duration and interval; no
    /// extent boundaries, no replay.
    pub fn of(plan: &iolab_plan::Plan, index: usize, regions: Vec<Region>) -> WorkerTask {
        WorkerTask {
            plan: plan.workers[index].clone(),
            regions,
            seed: plan.seed,
            ramp_ns: plan.ramp_ns,
            duration_ns: plan.duration_ns,
            interval_ns: plan.interval_ns,
            boundaries: Vec::new(),
            replay: None,
            flow: None,
        }
    }
}

/// What a worker does its I/O with: its engine, its files, and the layers stacked in front (links, the
/// cache, verification, faults, the trace recorder).
pub struct WorkerTools {
    /// Its engine.
    pub engine: EngineChoice,
    /// Its files (path targets), in target order.
    pub files: Vec<Arc<File>>,
    /// The link in front of each of its targets (`link:`), if any.
    pub links: Vec<Option<crate::layer::link::SharedLink>>,
    /// The run's block cache, when there is one.
    pub cache: Option<WorkerCache>,
    /// `--verify`: headers on writes, checks on reads, read-back after the run.
    pub verify: Option<crate::layer::verify::WorkerVerify>,
    /// `--inject`: faults put into the target's I/O.
    pub faults: Option<crate::layer::fault::WorkerFaults>,
    /// `--trace`: where the worker records every completed op (None: nothing is recorded).
    pub trace: Option<WorkerTrace>,
}

impl WorkerTools {
    /// `engine` alone: no files, links, cache, verification, faults or trace.
    pub fn on(engine: EngineChoice) -> WorkerTools {
        WorkerTools {
            engine,
            files: Vec::new(),
            links: Vec::new(),
            cache: None,
            verify: None,
            faults: None,
            trace: None,
        }
    }
}

#[derive(Clone)]
/// How a worker is controlled: the clock's epoch, the barrier that releases all workers together, the flags
/// that end its run, and where its intervals go.
pub struct WorkerControl {
    /// The run's clock epoch.
    pub epoch: Instant,
    /// All workers start together.
    pub barrier: Arc<Barrier>,
    /// Set to stop issuing (Ctrl-C, or another worker failed).
    pub stop: Arc<AtomicBool>,
    /// Raised by the cli to end the measurement now as if its time were up (steady state reached, a search
    /// step decided): the result is complete, not partial.
    pub finish: Arc<AtomicBool>,
    /// Raise `stop` at the first failed I/O (`--stop-on-error`).
    pub stop_on_error: bool,
    /// Where intervals go.
    pub events: Sender<WorkerEvent>,
}

impl WorkerControl {
    /// A worker alone: its own barrier, flags nobody else raises, its events to `events`.
    pub fn alone(events: Sender<WorkerEvent>) -> WorkerControl {
        WorkerControl {
            epoch: Instant::now(),
            barrier: Arc::new(Barrier::new(1)),
            stop: Arc::new(AtomicBool::new(false)),
            finish: Arc::new(AtomicBool::new(false)),
            stop_on_error: false,
            events,
        }
    }
}

/// `iolab replay`: a worker's ops, loaded before the run (no file I/O while it goes on), each at its time.
#[derive(Debug, Default)]
pub struct ReplayOps {
    /// (time from the first op, ns, on the trace's clock; the op on the worker's targets), by time.
    pub ops: Vec<(u64, iolab_plan::gen::GenOp)>,
    /// How much faster than the trace: op `i` is scheduled at the worker's start + time / speed (open loop,
    /// from the trace clock, never by sleeping the gaps). `None`: as fast as the queue depth allows (closed
    /// loop).
    pub speed: Option<f64>,
    /// The replay's start on the run's clock, shared by all its workers: set by the first worker released
    /// from the start barrier, so every worker schedules from one instant (their own starts differ by the
    /// barrier's wake-up, on the real clock).
    pub start: Arc<std::sync::OnceLock<u64>>,
}

/// `--trace`: a worker's sender to the run's trace writer thread, and the run's index of each of its targets
/// (the trace header names the run's targets).
#[derive(Clone)]
pub struct WorkerTrace {
    /// The writer's sender (batches from its pool).
    pub sender: iolab_trace::TraceSender,
    /// The run's target index of each of the worker's targets, in the worker's order.
    pub targets: Vec<u16>,
}

/// Sent from workers to the cli thread while running.
#[derive(Debug)]
pub enum WorkerEvent {
    /// One finished interval of one worker.
    Interval {
        /// Worker index.
        worker: u32,
        /// Its counts and latencies.
        stats: IntervalStats,
    },
}

/// What one worker measured.
#[derive(Debug)]
pub struct WorkerOutput {
    /// Worker index.
    pub index: u32,
    /// Engine name.
    pub engine: &'static str,
    /// Engine features in effect.
    pub features: Vec<String>,
    /// Reads in the window.
    pub read: OpStats,
    /// Writes in the window.
    pub write: OpStats,
    /// Flushes (fsync, fdatasync) in the window: the worker's `fsync`/`fdatasync` every N writes.
    pub flush: OpStats,
    /// Trims (discards) in the window.
    pub trim: OpStats,
    /// Length of the measurement window.
    pub window_ns: u64,
    /// How long the ramp lasted: the planned ramp, or less when the worker stopped issuing before it ended.
    pub ramp_ns: u64,
    /// Open loop: arrivals due before the end that were never issued.
    pub backlog_at_end: u64,
    /// The I/Os in flight when the window closed, counted as they completed after it.
    pub in_flight_at_end: iolab_stats::InFlightAtEnd,
    /// EAGAIN/EINTR resubmissions.
    pub retries: u64,
    /// Stopped by a stop request before its end.
    pub stopped_early: bool,
    /// Users and transactions, when the worker ran them.
    pub txn: Option<TxnStats>,
    /// Runs with a block cache: read response times by where the data came from.
    pub read_sources: Option<Box<ReadSources>>,
    /// Per target of a worker with several (by its own target index): reads and writes. `None` for a worker
    /// with one target (its `read` and `write` are that target's) or a transactions driver.
    pub per_target: Option<Vec<(OpStats, OpStats)>>,
    /// Per worker target (by its own target index): ops recorded in the window that crossed an extent boundary
    /// (split I/Os). Empty when none of the worker's targets had boundaries ([`WorkerTask::boundaries`]).
    pub split_ios: Vec<u64>,
    /// `--trace`: batches whose send waited for the trace writer thread (it was behind).
    pub trace_waits: u64,
    /// Each op's lag, actual submit - intended start, in the window: an open-loop worker's (its arrivals) or a
    /// timed replay's (its schedule; empty at `max`); `None` in closed loop.
    pub lag: Option<Box<LatencyHistogram>>,
    /// An open-loop worker on the real clock: how it waited for its arrivals (its margin, and the wake-ups
    /// it was chosen from); `None` in closed loop and on virtual time.
    pub pacing: Option<super::pace::Pacing>,
}

/// Counts split I/Os per target against the boundaries of [`WorkerTask::boundaries`]: a branch per op, and
/// a binary search only for a target with more than one extent; no allocation or lock.
#[derive(Debug)]
pub(crate) struct SplitCounter<'a> {
    boundaries: &'a [Option<Arc<[u64]>>],
    counts: Vec<u64>,
}

impl<'a> SplitCounter<'a> {
    /// A counter for `boundaries`, or `None` when no target has any (then nothing is counted at all).
    pub(crate) fn new(boundaries: &'a [Option<Arc<[u64]>>]) -> Option<SplitCounter<'a>> {
        boundaries
            .iter()
            .any(Option::is_some)
            .then(|| SplitCounter { boundaries, counts: vec![0; boundaries.len()] })
    }

    /// Counts `op` when it crosses a boundary of its target.
    #[inline]
    pub(crate) fn count(&mut self, op: &iolab_plan::gen::GenOp) {
        let t = op.target as usize;
        if let Some(Some(b)) = self.boundaries.get(t) {
            if iolab_device::layout::crosses(b, op.offset, op.len) {
                self.counts[t] += 1;
            }
        }
    }

    /// The counts, per worker target; empty without a counter.
    pub(crate) fn into_counts(counter: Option<SplitCounter<'_>>) -> Vec<u64> {
        counter.map_or_else(Vec::new, |c| c.counts)
    }
}

/// Response times of reads served from the block cache and from the target, recorded in the window.
#[derive(Debug, Default)]
pub struct ReadSources {
    /// Reads served from the cache.
    pub from_cache: LatencyHistogram,
    /// Reads that went to the target.
    pub from_target: LatencyHistogram,
    /// Reads served from the cache: their service time, from the moment the cache began serving them (a
    /// hit in RAM: its copy began; a hit timed by a cache device: its hand-over) to their completion.
    pub hit_service: LatencyHistogram,
    /// Reads served from the cache: their dispatch delay, from their intended start until the cache began
    /// serving them (iolab's own turn-around: the worker reaping, recording and refilling). With
    /// `hit_service`, it adds up to the hit's response time in `from_cache`.
    pub hit_dispatch: LatencyHistogram,
}

/// What one worker measured about its transactions (the I/Os themselves are in [`WorkerOutput`]'s
/// `read`/`write`).
#[derive(Debug)]
pub struct TxnStats {
    /// Transactions dispatched in the window (rate mode: scheduled arrivals in [ramp end, end), including any
    /// beyond the pending ring; stress mode: started), plus those carried in from the ramp (dispatched then,
    /// not completed by the window's start), so dispatched - completed = `backlog_at_end`.
    pub dispatched: u64,
    /// Transactions completed in the window.
    pub completed: u64,
    /// Completed transactions of which some step failed.
    pub failed: u64,
    /// Per transaction type (plan order): dispatched in the window.
    pub dispatched_by_type: Vec<u64>,
    /// Per transaction type: latency (intended start -> last step's completion) of those completed in the window.
    pub latency_by_type: Vec<LatencyHistogram>,
    /// All types together.
    pub latency: LatencyHistogram,
    /// Dispatched and not completed when the run ended (pending + in progress + beyond the ring).
    pub backlog_at_end: u64,
    /// Largest backlog seen in the window.
    pub backlog_max: u64,
    /// Most transactions in progress at once.
    pub executing_max: u64,
    /// Arrivals that found the pending ring full (counted from the schedule, not held).
    pub beyond_ring: u64,
}

impl TxnStats {
    /// Zero counts and empty histograms for `types` transaction types.
    pub(crate) fn new(types: usize) -> TxnStats {
        TxnStats {
            dispatched: 0,
            completed: 0,
            failed: 0,
            dispatched_by_type: vec![0; types],
            latency_by_type: (0..types).map(|_| LatencyHistogram::new()).collect(),
            latency: LatencyHistogram::new(),
            backlog_at_end: 0,
            backlog_max: 0,
            executing_max: 0,
            beyond_ring: 0,
        }
    }

    /// Counts one transaction of type `txn` dispatched.
    #[inline]
    pub(crate) fn dispatch(&mut self, txn: u16) {
        self.dispatched += 1;
        self.dispatched_by_type[txn as usize] += 1;
    }
}

#[cfg(test)]
impl WorkerSetup {
    /// For the crate's unit tests: worker 0 of `plan`, bound to `regions`, on `engine`, with the plan's seed,
    /// ramp and duration, intervals of `interval_ns`, alone at its barrier; its events come out of the
    /// receiver.
    pub(crate) fn for_test(
        plan: &iolab_plan::Plan,
        regions: Vec<Region>,
        engine: EngineChoice,
        interval_ns: u64,
    ) -> (WorkerSetup, std::sync::mpsc::Receiver<WorkerEvent>) {
        let (tx, rx) = std::sync::mpsc::channel();
        let setup = WorkerSetup {
            task: WorkerTask { interval_ns, ..WorkerTask::of(plan, 0, regions) },
            tools: WorkerTools::on(engine),
            control: WorkerControl::alone(tx),
        };
        (setup, rx)
    }
}
