//! The closed loop every application workload runs (tpcc's five transactions, ycsb's operations): one
//! thread and one connection per user, each running operations back to back with no think time (as HammerDB
//! and YCSB run by default), for a ramp and then the measured window. A workload brings its [`Client`]s (what
//! each user runs next) and its [`Spec`] (the kinds of operation, its headline figures, a counter of the
//! database's own read at the window's edges); the loop, the counting and the window are here, once.
//!
//! Connections are made before the clock starts. An operation counts in the window when it *completes*
//! inside it (as HammerDB's counters, read at the window's ends, count it); its response time runs from its
//! first statement to its commit or rollback, retries and lock waits included, into the user's HDR histogram
//! for its kind. At each end of the window the driver reads the workload's counter (tpcc: the database's
//! `sum(d_next_o_id)`, HammerDB's own NOPM) and /proc/diskstats for the devices under the database; in the
//! window it samples each interval and the CPU at its edges (`crate::sampler`). A raised
//! stop flag ends the window early (the result is then partial); a database error that retrying cannot cure
//! ends the run with it.
//!
//! What was in flight when the window ended is not censored: each user notes the operation that started
//! inside the window and completed after its end (at most one each), and how long past the end it took;
//! with how late the window's edges were read, that is the run's [`WindowEnd`], which says the window did
//! not end on time (`late`, with a warning in the document) past [`LATE_AFTER_S`].
//!
//! While it runs, the driver's own thread (never a user's) tells the caller's [`WorkloadObserver`] where the
//! run is about every [`LIVE_EVERY`]: the phase and, in the window, the operations completed so far, from
//! counters the users add to as each operation completes (one relaxed atomic add per operation; no lock or
//! allocation per operation).

use crate::database::{Conn, Database, TxEnd};
use crate::sampler::{self, IntervalSampler};
use crate::workload::{Figure, Live, WorkloadObserver, LIVE_EVERY};
use crate::{DbError, WorkloadError};
use iolab_device::diskstats::{self, BlockDevice, Counters};
use iolab_report::db::{WindowEnd, LATE_AFTER_S};
use iolab_report::db_window::{interval_for, DbCpu, DbIntervals};
use iolab_stats::LatencyHistogram;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// What one operation did, as its client tells it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Performed {
    /// Its kind: an index into [`Spec::kinds`].
    pub kind: usize,
    /// Committed, rolled back on purpose, or given up.
    pub done: TxEnd,
    /// Retries it took (busy, serialization failure, deadlock).
    pub retries: u64,
    /// What the workload counts beside (tpcc: the districts a delivery skipped).
    pub extra: u64,
    /// It counts toward the workload's headline (tpcc: a committed new order).
    pub headline: bool,
}

/// One user's stream of operations: its own random stream, drawing and running the next operation.
pub trait Client: Send {
    /// Runs the next operation on `conn`.
    fn next(&mut self, conn: &mut dyn Conn) -> Result<Performed, DbError>;
}

/// What the run is asked, and how the workload names and counts what it does.
pub struct Spec {
    /// Ramp before the window.
    pub ramp: Duration,
    /// The window asked for.
    pub duration: Duration,
    /// The kinds of operation, in the workload's order (tpcc: its five transactions).
    pub kinds: &'static [&'static str],
    /// The headline figures so far, from the operations completed in the window (every kind), those that
    /// count toward the headline, and the window's seconds so far.
    pub figures: fn(u64, u64, f64) -> Vec<Figure>,
    /// A counter of the database's own, read at both edges of the window (tpcc: the next order ids).
    pub edge: Option<fn(&mut dyn Conn) -> Option<u64>>,
}

/// One kind of operation's counts and response times in the window.
#[derive(Clone, Debug, Default)]
pub struct TxStats {
    /// Committed.
    pub committed: u64,
    /// Rolled back on purpose.
    pub rolled_back: u64,
    /// Retries (in the window's operations).
    pub retries: u64,
    /// Given up.
    pub failed: u64,
    /// Response times of the completed ones.
    pub latency: LatencyHistogram,
}

impl TxStats {
    fn merge(&mut self, o: &TxStats) {
        self.committed += o.committed;
        self.rolled_back += o.rolled_back;
        self.retries += o.retries;
        self.failed += o.failed;
        self.latency.merge(&o.latency);
    }

    /// Completed: committed or rolled back on purpose.
    pub fn completed(&self) -> u64 {
        self.committed + self.rolled_back
    }
}

/// What the run measured.
#[derive(Debug)]
pub struct Measured {
    /// Seconds in the window (shorter than asked when stopped).
    pub measured_s: f64,
    /// Per kind, in [`Spec::kinds`]' order.
    pub ops: Vec<TxStats>,
    /// The sum of the operations' [`Performed::extra`].
    pub extra: u64,
    /// The growth of the database's own counter ([`Spec::edge`]) over the window, when both ends were read.
    pub edge_delta: Option<u64>,
    /// Each device under the database and what it did in the window.
    pub devices: Vec<(BlockDevice, Counters)>,
    /// The window was cut short by the stop flag.
    pub partial: bool,
    /// What was in flight when the window ended, and whether it ended on time.
    pub window_end: WindowEnd,
    /// The window interval by interval (`crate::sampler`); `None` when it never opened.
    pub intervals: Option<DbIntervals>,
    /// The CPU of the engine and of iolab over the window; `None` when it never opened.
    pub cpu: Option<DbCpu>,
}

/// The counters the users add to as operations complete in the window.
struct LiveCounts {
    completed: Vec<AtomicU64>,
    headline: AtomicU64,
}

/// What one user gathered.
struct UserResult {
    ops: Vec<TxStats>,
    extra: u64,
    /// The operation running when the window ended: how long past the end it completed.
    past_end: Option<Duration>,
}

/// Sleeps until `until` in small steps, returning early (false) when `stop` or `abort` is raised, and calls
/// `tick` every [`LIVE_EVERY`].
fn wait_until(until: Instant, stop: &AtomicBool, abort: &AtomicBool, tick: &mut dyn FnMut()) -> bool {
    let mut next_tick = Instant::now();
    while Instant::now() < until {
        if stop.load(Ordering::Relaxed) || abort.load(Ordering::Relaxed) {
            return false;
        }
        if Instant::now() >= next_tick {
            tick();
            next_tick = Instant::now() + LIVE_EVERY;
        }
        std::thread::sleep((until - Instant::now()).min(Duration::from_millis(20)));
    }
    true
}

/// One user's loop: operations until `done`, those completing inside `window` counted.
fn user(
    client: &mut dyn Client,
    conn: &mut dyn Conn,
    kinds: usize,
    (window_start, window_end): (Instant, Instant),
    done: &AtomicBool,
    live: &LiveCounts,
) -> Result<UserResult, DbError> {
    let mut r =
        UserResult { ops: (0..kinds).map(|_| TxStats::default()).collect(), extra: 0, past_end: None };
    while !done.load(Ordering::Relaxed) {
        let started = Instant::now();
        let op = client.next(conn);
        let ended = Instant::now();
        if started <= window_end && ended > window_end {
            r.past_end = Some(ended - window_end);
        }
        let op = op?;
        if ended < window_start || ended > window_end {
            continue;
        }
        assert!(op.kind < kinds, "a client ran kind {} of {kinds}", op.kind);
        let s = &mut r.ops[op.kind];
        s.retries += op.retries;
        r.extra += op.extra;
        match op.done {
            TxEnd::Committed => s.committed += 1,
            TxEnd::RolledBack => s.rolled_back += 1,
            TxEnd::GaveUp => {
                s.failed += 1;
                continue;
            }
        }
        live.completed[op.kind].fetch_add(1, Ordering::Relaxed);
        if op.headline {
            live.headline.fetch_add(1, Ordering::Relaxed);
        }
        s.latency.record((ended - started).as_nanos().min(u64::MAX as u128) as u64);
    }
    Ok(r)
}

/// The measured window's two edges: the database's counter and the devices' counters read at each, when
/// each was, and whether the window was cut short.
struct Edges {
    ends: (Option<u64>, Option<u64>),
    counters: (BTreeMap<String, Counters>, BTreeMap<String, Counters>),
    actual: (Instant, Instant),
    partial: bool,
    /// How long past its end the window was closed (its closing edge read).
    closed_late: Duration,
    /// The window interval by interval.
    intervals: Option<DbIntervals>,
    /// The CPU over the window.
    cpu: Option<DbCpu>,
}

/// What the window is sampled with besides its edges: the users' counters, the devices, the database (its
/// processes' CPU) and the users' count.
struct Sampling<'a> {
    live: &'a LiveCounts,
    devices: &'a [BlockDevice],
    database: &'a dyn Database,
    users: u32,
    interval_s: f64,
}

impl Sampling<'_> {
    /// The headline and operation counters now.
    fn counts(&self) -> (u64, u64) {
        let completed = self.live.completed.iter().map(|n| n.load(Ordering::Relaxed)).sum();
        (self.live.headline.load(Ordering::Relaxed), completed)
    }

    /// The CPU now: iolab's, the engine's processes', the machine's.
    fn cpu(&self) -> sampler::CpuReading {
        sampler::cpu_now(&self.database.server_processes())
    }
}

/// Opens the window now, waits for its end (`until`) or a stop, sampling each interval, and closes it.
fn measure(
    until: Instant,
    edge: &mut dyn FnMut() -> Option<u64>,
    (stop, abort): (&AtomicBool, &AtomicBool),
    tell: &dyn Fn(Option<Instant>),
    (observer, sampling): (&dyn WorkloadObserver, &Sampling<'_>),
) -> Edges {
    observer.window(true);
    let ends0 = edge();
    let counters0 = diskstats::read();
    let cpu0 = sampling.cpu();
    let mut intervals = IntervalSampler::open(sampling.interval_s, sampling.devices, sampling.counts());
    let started = Instant::now();
    let completed = loop {
        let next = intervals.next_at().min(until);
        let on = wait_until(next, stop, abort, &mut || tell(Some(started)));
        intervals.sample(Instant::now().min(until), sampling.counts());
        if !on || next >= until {
            break on;
        }
    };
    let ends1 = edge();
    let counters1 = diskstats::read();
    let cpu1 = sampling.cpu();
    let closed = Instant::now();
    let ended = closed.min(until);
    observer.window(false);
    let whose =
        sampler::engine_whose(sampling.database.name(), !sampling.database.server_processes().is_empty());
    tell(Some(started));
    Edges {
        ends: (ends0, ends1),
        counters: (counters0, counters1),
        actual: (started, ended),
        partial: !completed,
        closed_late: if completed { closed.saturating_duration_since(until) } else { Duration::ZERO },
        intervals: Some(intervals.finish()),
        cpu: sampler::cpu_between(&cpu0, &cpu1, sampling.users, whose),
    }
}

/// What the run measured: the users' operations merged per kind, and the window's edges read into rates
/// and device deltas.
fn measured(kinds: usize, results: &[UserResult], edges: Edges, devices: Vec<BlockDevice>) -> Measured {
    let mut ops: Vec<TxStats> = (0..kinds).map(|_| TxStats::default()).collect();
    for r in results {
        for (a, b) in ops.iter_mut().zip(&r.ops) {
            a.merge(b);
        }
    }
    let Edges { ends, counters, actual, partial, closed_late, intervals, cpu } = edges;
    let devices = devices
        .into_iter()
        .filter_map(|d| {
            let delta = counters.1.get(&d.name)?.since(counters.0.get(&d.name)?);
            Some((d, delta))
        })
        .collect();
    Measured {
        measured_s: actual.1.saturating_duration_since(actual.0).as_secs_f64(),
        ops,
        extra: results.iter().map(|r| r.extra).sum(),
        edge_delta: match ends {
            (Some(a), Some(b)) => Some(b.saturating_sub(a)),
            _ => None,
        },
        devices,
        partial,
        window_end: window_end(results, closed_late),
        intervals,
        cpu,
    }
}

/// What was in flight at the window's end, from each user's note, and how late the window was closed.
fn window_end(results: &[UserResult], closed_late: Duration) -> WindowEnd {
    let past: Vec<f64> = results.iter().filter_map(|r| r.past_end).map(|d| d.as_secs_f64()).collect();
    let longest = past.iter().copied().fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.max(x))));
    let closed_late_s = closed_late.as_secs_f64();
    WindowEnd {
        in_flight: past.len() as u64,
        longest_past_end_s: longest,
        closed_late_s,
        late: longest.is_some_and(|l| l > LATE_AFTER_S) || closed_late_s > LATE_AFTER_S,
    }
}

/// Runs `clients` (one user each) on `database` for the ramp and the window; the devices under
/// `database.dir()` are read at the window's edges, `stop` is the caller's stop flag, and `observer` is
/// told where the run is (from this thread) and of the window's edges.
pub fn run<C: Client>(
    database: &dyn Database,
    spec: &Spec,
    mut clients: Vec<C>,
    stop: &AtomicBool,
    observer: &dyn WorkloadObserver,
) -> Result<Measured, WorkloadError> {
    let mut conns: Vec<Box<dyn Conn>> = Vec::with_capacity(clients.len());
    for _ in &clients {
        conns.push(database.connect()?);
    }
    let mut monitor = database.connect()?;
    let devices = database.dir().map(diskstats::devices_under).unwrap_or_default();
    let kinds = spec.kinds.len();
    let (done, abort) = (AtomicBool::new(false), AtomicBool::new(false));
    let first_error: Mutex<Option<DbError>> = Mutex::new(None);
    let live = LiveCounts {
        completed: (0..kinds).map(|_| AtomicU64::new(0)).collect(),
        headline: AtomicU64::new(0),
    };
    let start = Instant::now();
    let window = (start + spec.ramp, start + spec.ramp + spec.duration);
    let users = clients.len() as u32;
    let tell = |window_started: Option<Instant>| {
        observer.live(&live_now(spec, users, &live, start, window, window_started));
    };
    let mut edge = || spec.edge.and_then(|f| f(monitor.as_mut()));
    let mut results: Vec<UserResult> = Vec::new();
    let mut edges = Edges {
        ends: (None, None),
        counters: Default::default(),
        actual: (window.0, window.0),
        partial: true,
        closed_late: Duration::ZERO,
        intervals: None,
        cpu: None,
    };
    std::thread::scope(|scope| {
        let handles: Vec<_> = clients
            .iter_mut()
            .zip(conns.iter_mut())
            .enumerate()
            .map(|(i, (client, conn))| {
                let (done, abort, first_error, live) = (&done, &abort, &first_error, &live);
                std::thread::Builder::new()
                    .name(format!("iolab-db-user-{i}"))
                    .spawn_scoped(scope, move || {
                        let r = user(client, conn.as_mut(), kinds, window, done, live);
                        if let Err(e) = &r {
                            first_error.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(e.clone());
                            abort.store(true, Ordering::Relaxed);
                        }
                        r.ok()
                    })
                    .expect("spawn a user thread")
            })
            .collect();
        if wait_until(window.0, stop, &abort, &mut || tell(None)) {
            let sampling = Sampling {
                live: &live,
                devices: &devices,
                database,
                users,
                interval_s: interval_for(spec.duration.as_secs_f64()),
            };
            edges = measure(window.1, &mut edge, (stop, &abort), &tell, (observer, &sampling));
        }
        done.store(true, Ordering::Relaxed);
        results = handles.into_iter().filter_map(|h| h.join().ok().flatten()).collect();
    });
    if let Some(e) = first_error.into_inner().unwrap_or_else(|p| p.into_inner()) {
        return Err(WorkloadError::Db(e));
    }
    Ok(measured(kinds, &results, edges, devices))
}

/// Where the run is now, for the observer.
fn live_now(
    spec: &Spec,
    users: u32,
    live: &LiveCounts,
    start: Instant,
    window: (Instant, Instant),
    window_started: Option<Instant>,
) -> Live {
    let now = Instant::now();
    let measured_s =
        window_started.map_or(0.0, |w| now.min(window.1).saturating_duration_since(w).as_secs_f64());
    let completed: Vec<(&'static str, u64)> =
        spec.kinds.iter().zip(&live.completed).map(|(k, n)| (*k, n.load(Ordering::Relaxed))).collect();
    let total = completed.iter().map(|(_, n)| n).sum();
    Live {
        users,
        elapsed_s: now.saturating_duration_since(start).as_secs_f64(),
        ramp_s: spec.ramp.as_secs_f64(),
        duration_s: spec.duration.as_secs_f64(),
        measured_s,
        completed,
        figures: (spec.figures)(total, live.headline.load(Ordering::Relaxed), measured_s),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::database::sqlite::Sqlite;

    /// Each operation sleeps `each`: a transaction that a stalled storage holds.
    struct Sleepy {
        each: Duration,
    }

    impl Client for Sleepy {
        fn next(&mut self, _conn: &mut dyn Conn) -> Result<Performed, DbError> {
            std::thread::sleep(self.each);
            Ok(Performed { kind: 0, done: TxEnd::Committed, retries: 0, extra: 0, headline: true })
        }
    }

    struct Quiet;

    impl WorkloadObserver for Quiet {
        fn notice(&self, _text: &str) {}
    }

    fn run_sleepy(users: usize, each: Duration, window: Duration) -> Measured {
        let t = tempfile::tempdir().unwrap();
        let db = Sqlite::new(t.path());
        let spec = Spec {
            ramp: Duration::ZERO,
            duration: window,
            kinds: &["op"],
            figures: |_, _, _| Vec::new(),
            edge: None,
        };
        let clients = (0..users).map(|_| Sleepy { each }).collect();
        run(&db, &spec, clients, &AtomicBool::new(false), &Quiet).unwrap()
    }

    /// An operation that outlasts the window by more than LATE_AFTER_S is counted, timed and marked late,
    /// not dropped in silence.
    #[test]
    fn an_operation_that_outlasts_the_window_is_reported_late() {
        let m = run_sleepy(2, Duration::from_millis(1500), Duration::from_millis(200));
        assert_eq!(m.ops[0].completed(), 0, "nothing completed inside the window");
        let end = &m.window_end;
        assert_eq!(end.in_flight, 2, "{end:?}");
        assert!(end.longest_past_end_s.unwrap() >= 1.2, "{end:?}");
        assert!(end.late, "{end:?}");
        assert!(end.warning().unwrap().contains("2 operations were in flight"), "{:?}", end.warning());
    }

    /// Short operations straddle the end too (one per user at most), and the window ends on time.
    #[test]
    fn short_operations_in_flight_at_the_end_are_counted_and_on_time() {
        let m = run_sleepy(1, Duration::from_millis(120), Duration::from_millis(300));
        let end = &m.window_end;
        assert!(m.ops[0].completed() >= 1);
        assert!(end.in_flight <= 1 && !end.late && end.warning().is_none(), "{end:?}");
        assert!(end.longest_past_end_s.unwrap_or(0.0) < 0.2, "{end:?}");
    }
}
