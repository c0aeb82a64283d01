//! The run: one thread and one connection per user, each running transactions back to back (no keying or
//! think time, as HammerDB runs by default) in the mix dealt by its [`Deck`], for a ramp and then the
//! measured window.
//!
//! Connections are made before the clock starts. A transaction counts in the window when it *completes*
//! inside it (as HammerDB's counters, read at the window's ends, count it); its response time runs from its
//! first statement to its commit or rollback, retries and lock waits included, into the user's HDR histogram
//! for its type. At each end of the window the driver reads the database's `sum(d_next_o_id)` (HammerDB's
//! own NOPM) and /proc/diskstats for the devices under the database. A raised stop flag ends the window
//! early (the result is then partial); a database error that retrying cannot cure ends the run with it.
//!
//! While it runs, the driver's own thread (never a user's) tells the caller's [`WorkloadObserver`] where the run is
//! about every [`LIVE_EVERY`]: the phase and, in the window, the transactions completed so far, from
//! counters the users add to as each transaction completes (one relaxed atomic add per transaction).

use super::rand::{Deck, TxType};
use super::txn::{Ran, Terminal};
use crate::database::{Conn, Database, Done};
use crate::workload::{Figure, Live, WorkloadObserver, LIVE_EVERY};
use crate::{DbError, Error};
use iolab_device::diskstats::{self, BlockDevice, Counters};
use iolab_stats::LatencyHistogram;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// What the run is asked.
#[derive(Clone, Debug)]
pub struct RunSpec {
    /// Users.
    pub users: u32,
    /// Warehouses in the database.
    pub warehouses: u64,
    /// Items in the database.
    pub items: u64,
    /// The seed.
    pub seed: u64,
    /// Ramp before the window.
    pub ramp: Duration,
    /// The window asked for.
    pub duration: Duration,
}

/// One transaction type's counts and response times in the window.
#[derive(Clone, Debug, Default)]
pub struct TxStats {
    /// Committed.
    pub committed: u64,
    /// Rolled back on purpose.
    pub rolled_back: u64,
    /// Retries (in the window's transactions).
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
}

/// What the run measured.
#[derive(Debug)]
pub struct Measured {
    /// Seconds in the window (shorter than asked when stopped).
    pub measured_s: f64,
    /// Per transaction type, in [`TxType::ALL`]'s order.
    pub tx: Vec<TxStats>,
    /// Districts deliveries skipped.
    pub skipped: u64,
    /// New orders counted by the database (growth of `sum(d_next_o_id)`), when both ends were read.
    pub new_orders_database: Option<u64>,
    /// Each device under the database and what it did in the window.
    pub devices: Vec<(BlockDevice, Counters)>,
    /// The window was cut short by the stop flag.
    pub partial: bool,
}

/// The headline figures of a tpcc run so far: NOPM and TPM over the window's `measured_s` seconds.
fn figures(completed: u64, new_orders: u64, measured_s: f64) -> Vec<Figure> {
    let rate = |n: u64| (measured_s > 0.0).then(|| n as f64 * 60.0 / measured_s);
    vec![
        Figure {
            shown: "NOPM",
            metric: "nopm",
            help: "new orders per minute over the measured window so far",
            value: rate(new_orders),
        },
        Figure {
            shown: "TPM",
            metric: "tpm",
            help: "transactions per minute over the measured window so far, every type, committed or rolled back",
            value: rate(completed),
        },
    ]
}

/// The counters the users add to as transactions complete in the window.
#[derive(Default)]
struct LiveCounts {
    completed: [AtomicU64; 5],
    new_orders: AtomicU64,
}

/// What one user gathered.
struct UserResult {
    tx: Vec<TxStats>,
    skipped: u64,
}

/// Reads `sum(d_next_o_id)`.
fn next_order_ids(conn: &mut dyn Conn) -> Option<u64> {
    let rows = conn.query("SELECT CAST(sum(d_next_o_id) AS bigint) AS next_ids FROM district", &[]).ok()?;
    rows.first("the next order ids").and_then(|r| r.int("next_ids")).ok().map(|v| v as u64)
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

/// One user's loop.
fn user(
    index: u32,
    conn: &mut dyn Conn,
    spec: &RunSpec,
    dialect: &crate::Dialect,
    (window_start, window_end): (Instant, Instant),
    done: &AtomicBool,
    live: &LiveCounts,
) -> Result<UserResult, DbError> {
    let mut term = Terminal::new(index, spec.warehouses, spec.items, spec.seed, dialect);
    let mut deck = Deck::new();
    let mut tx: Vec<TxStats> = TxType::ALL.iter().map(|_| TxStats::default()).collect();
    let mut skipped = 0;
    while !done.load(Ordering::Relaxed) {
        let kind = deck.draw(term.rng());
        let mut retries = 0;
        let started = Instant::now();
        let ran: Ran = term.perform(kind, conn, &mut retries)?;
        let ended = Instant::now();
        if ended < window_start || ended > window_end {
            continue;
        }
        let s = &mut tx[kind.index()];
        s.retries += retries;
        skipped += ran.skipped;
        match ran.done {
            Done::Committed => s.committed += 1,
            Done::RolledBack => s.rolled_back += 1,
            Done::GaveUp => {
                s.failed += 1;
                continue;
            }
        }
        live.completed[kind.index()].fetch_add(1, Ordering::Relaxed);
        if kind == TxType::NewOrder && ran.done == Done::Committed {
            live.new_orders.fetch_add(1, Ordering::Relaxed);
        }
        s.latency.record((ended - started).as_nanos().min(u64::MAX as u128) as u64);
    }
    Ok(UserResult { tx, skipped })
}

/// The measured window's two edges: the next order ids and the devices' counters read at each, when
/// each was, and whether the window was cut short.
struct Edges {
    ends: (Option<u64>, Option<u64>),
    counters: (std::collections::BTreeMap<String, Counters>, std::collections::BTreeMap<String, Counters>),
    actual: (Instant, Instant),
    partial: bool,
}

/// Opens the window now, waits for its end (`until`) or a stop, and closes it.
fn measure(
    until: Instant,
    monitor: &mut dyn Conn,
    stop: &AtomicBool,
    abort: &AtomicBool,
    tell: &dyn Fn(Option<Instant>),
    observer: &dyn WorkloadObserver,
) -> Edges {
    observer.window(true);
    let ends0 = next_order_ids(monitor);
    let counters0 = diskstats::read();
    let started = Instant::now();
    let completed = wait_until(until, stop, abort, &mut || tell(Some(started)));
    let ends1 = next_order_ids(monitor);
    let counters1 = diskstats::read();
    let ended = Instant::now().min(until);
    observer.window(false);
    tell(Some(started));
    Edges {
        ends: (ends0, ends1),
        counters: (counters0, counters1),
        actual: (started, ended),
        partial: !completed,
    }
}

/// The users' transactions merged per type, and the transactions they skipped.
fn merge(results: &[UserResult]) -> (Vec<TxStats>, u64) {
    let mut tx: Vec<TxStats> = TxType::ALL.iter().map(|_| TxStats::default()).collect();
    let mut skipped = 0;
    for r in results {
        for (a, b) in tx.iter_mut().zip(&r.tx) {
            a.merge(b);
        }
        skipped += r.skipped;
    }
    (tx, skipped)
}

/// What the run measured: the users' transactions merged, and the window's edges read into rates and
/// device deltas.
fn measured(results: &[UserResult], edges: Edges, devices: Vec<BlockDevice>) -> Measured {
    let (tx, skipped) = merge(results);
    let Edges { ends, counters, actual, partial } = edges;
    let measured_s = actual.1.saturating_duration_since(actual.0).as_secs_f64();
    let devices = devices
        .into_iter()
        .filter_map(|d| {
            let (a, b) = (counters.0.get(&d.name)?, counters.1.get(&d.name)?);
            let delta = b.since(a);
            Some((d, delta))
        })
        .collect();
    Measured {
        measured_s,
        tx,
        skipped,
        new_orders_database: match ends {
            (Some(a), Some(b)) => Some(b.saturating_sub(a)),
            _ => None,
        },
        devices,
        partial,
    }
}

/// Runs the users for the ramp and the window; `device_dir` is where the database's files are (for the
/// device view), `stop` the caller's stop flag, `observer` told where the run is (from this thread) and of the
/// window's edges.
pub fn run(
    engine: &dyn Database,
    spec: &RunSpec,
    device_dir: Option<&Path>,
    stop: &AtomicBool,
    observer: &dyn WorkloadObserver,
) -> Result<Measured, Error> {
    let mut conns: Vec<Box<dyn Conn>> = Vec::with_capacity(spec.users as usize);
    for _ in 0..spec.users {
        conns.push(engine.connect()?);
    }
    let mut monitor = engine.connect()?;
    let devices = device_dir.map(diskstats::devices_under).unwrap_or_default();
    let dialect = engine.dialect();
    let done = AtomicBool::new(false);
    let abort = AtomicBool::new(false);
    let first_error: Mutex<Option<DbError>> = Mutex::new(None);
    let live = LiveCounts::default();
    let start = Instant::now();
    let window = (start + spec.ramp, start + spec.ramp + spec.duration);
    let tell = |window_started: Option<Instant>| {
        let now = Instant::now();
        let mut now_live = Live {
            users: spec.users,
            elapsed_s: now.saturating_duration_since(start).as_secs_f64(),
            ramp_s: spec.ramp.as_secs_f64(),
            duration_s: spec.duration.as_secs_f64(),
            measured_s: window_started
                .map_or(0.0, |w| now.min(window.1).saturating_duration_since(w).as_secs_f64()),
            completed: TxType::ALL
                .iter()
                .map(|t| (t.name(), live.completed[t.index()].load(Ordering::Relaxed)))
                .collect(),
            figures: Vec::new(),
        };
        let total = now_live.completed_total();
        now_live.figures = figures(total, live.new_orders.load(Ordering::Relaxed), now_live.measured_s);
        observer.live(&now_live);
    };
    let mut results: Vec<UserResult> = Vec::new();
    let mut edges = Edges {
        ends: (None, None),
        counters: Default::default(),
        actual: (window.0, window.0),
        partial: true,
    };
    std::thread::scope(|scope| {
        let handles: Vec<_> = conns
            .iter_mut()
            .enumerate()
            .map(|(i, conn)| {
                let (done, abort, first_error, dialect, live) =
                    (&done, &abort, &first_error, &dialect, &live);
                std::thread::Builder::new()
                    .name(format!("iolab-db-user-{i}"))
                    .spawn_scoped(scope, move || {
                        let r = user(i as u32, conn.as_mut(), spec, dialect, window, done, live);
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
            edges = measure(window.1, monitor.as_mut(), stop, &abort, &tell, observer);
        }
        done.store(true, Ordering::Relaxed);
        results = handles.into_iter().filter_map(|h| h.join().ok().flatten()).collect();
    });
    if let Some(e) = first_error.into_inner().unwrap_or_else(|p| p.into_inner()) {
        return Err(Error::Db(e));
    }
    Ok(measured(&results, edges, devices))
}
