//! `--metrics ADDR:PORT`: the live figures of a run, sweep or search for dashboards, served over HTTP at
//! `/metrics` in the OpenMetrics text format (Prometheus scrapes it). Each finished interval sets, per worker
//! group and for the whole run (`group="all"`): IOPS and bytes per second by op, response-time quantiles,
//! achieved depth (Little's law over the interval), offered rate in open loop, completed ops (a counter, for
//! `rate()`), the transaction backlog of users-and-transactions runs and the cache's read hit ratio. The
//! encoding is `prometheus-client`'s (label values escaped here), the server [`crate::http`]'s, on one thread
//! that lives as long as the process and whose CPU the run's figures leave out; a sweep keeps one endpoint
//! across its points.
//!
//! `iolab db` serves its own families instead ([`serve_db`], [`DbMetrics`]): NOPM and TPM of the window so
//! far, transactions per minute and completed (a counter) per transaction type, the users running, the
//! seconds measured, and the rows the build has loaded; a sweep over users keeps one endpoint across its
//! points, its counters going on from point to point.

use crate::exit::usage;
use anyhow::Result;
use iolab_run::RunShape;
use iolab_stats::{IntervalOp, IntervalStats};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::{Registry, Unit};
use std::sync::atomic::AtomicU64;
use std::sync::{Mutex, OnceLock};

static METRICS: OnceLock<Metrics> = OnceLock::new();

static DB_METRICS: OnceLock<DbMetrics> = OnceLock::new();

/// The quantiles of the response time each interval exports.
const QUANTILES: [(f64, &str); 4] = [(0.5, "0.5"), (0.9, "0.9"), (0.99, "0.99"), (0.999, "0.999")];

/// The content type of the OpenMetrics text format.
const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

type FloatGauge = Gauge<f64, AtomicU64>;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct GroupLabels {
    group: String,
    targets: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OpLabels {
    group: String,
    targets: String,
    op: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct QuantileLabels {
    group: String,
    targets: String,
    op: String,
    quantile: String,
}

/// The process's metrics: the families each interval sets, and the labels of the running job's groups.
pub struct Metrics {
    iops: Family<OpLabels, FloatGauge>,
    bytes_per_second: Family<OpLabels, FloatGauge>,
    latency: Family<QuantileLabels, FloatGauge>,
    ops: Family<OpLabels, Counter>,
    depth: Family<GroupLabels, FloatGauge>,
    offered: Family<GroupLabels, FloatGauge>,
    backlog: Family<GroupLabels, FloatGauge>,
    io_backlog: Family<GroupLabels, FloatGauge>,
    hit_ratio: Family<GroupLabels, FloatGauge>,
    groups: Mutex<Vec<(GroupLabels, Option<f64>)>>,
}

/// Starts serving at `addr` (once per process) when `--metrics` was given; an address that cannot be
/// listened on is the user's error, before anything runs.
pub fn serve(addr: Option<&str>) -> Result<()> {
    let Some(addr) = addr else { return Ok(()) };
    if METRICS.get().is_some() {
        return Ok(());
    }
    let listener = bind(addr)?;
    let mut registry = Registry::with_prefix("iolab");
    let metrics = Metrics::register(&mut registry);
    let _ = METRICS.set(metrics);
    start(listener, registry)
}

/// Listens at `addr`; one that cannot be listened on is the user's error, quoting it.
fn bind(addr: &str) -> Result<std::net::TcpListener> {
    crate::http::bind(addr).map_err(|e| {
        usage(format!("invalid value '{addr}' for '--metrics': cannot listen there ({e}); expected ADDR:PORT, e.g. '127.0.0.1:9464'"))
    })
}

/// Serves `registry` on `listener` from a thread of its own.
fn start(listener: std::net::TcpListener, registry: Registry) -> Result<()> {
    start_shared(listener, std::sync::Arc::new(Mutex::new(registry)))
}

/// Serves `registry`, which the run may still add families to (a database workload's figures, registered
/// as it first tells them), on `listener` from a thread of its own.
fn start_shared(listener: std::net::TcpListener, registry: std::sync::Arc<Mutex<Registry>>) -> Result<()> {
    std::thread::Builder::new()
        .name("iolab-metrics".into())
        .spawn(move || {
            let answer = || encode(&registry.lock().unwrap_or_else(|p| p.into_inner()));
            crate::http::serve(listener, "/metrics", answer, iolab_run::env::leave_out_this_thread_cpu)
        })
        .map_err(|e| anyhow::anyhow!("cannot start the metrics thread: {e}"))?;
    Ok(())
}

/// The metrics, when `--metrics` serves them.
pub fn current() -> Option<&'static Metrics> {
    METRICS.get()
}

/// Starts serving a database run's figures at `addr` (once per process) when `iolab db --metrics` was given,
/// labelled with the workload and engine; an address that cannot be listened on is the user's error, before
/// anything is built.
pub fn serve_db(addr: Option<&str>, workload: &str, engine: &str) -> Result<()> {
    let Some(addr) = addr else { return Ok(()) };
    if DB_METRICS.get().is_some() {
        return Ok(());
    }
    let listener = bind(addr)?;
    let mut registry = Registry::with_prefix("iolab_db");
    let labels = DbLabels { workload: escape(workload), engine: escape(engine) };
    let metrics = DbMetrics::register(&mut registry, labels);
    let shared = std::sync::Arc::new(Mutex::new(registry));
    let _ = DB_METRICS.set(DbMetrics { registry: Some(shared.clone()), ..metrics });
    start_shared(listener, shared)
}

/// A database run's metrics, when `iolab db --metrics` serves them.
pub fn current_db() -> Option<&'static DbMetrics> {
    DB_METRICS.get()
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct DbLabels {
    workload: String,
    engine: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct TxLabels {
    workload: String,
    engine: String,
    transaction: String,
}

/// The families of a database run, and what the counters last saw (a new point's window starts from 0).
pub struct DbMetrics {
    labels: DbLabels,
    /// The registry served, for the figures registered as the workload first tells them.
    registry: Option<std::sync::Arc<Mutex<Registry>>>,
    /// The workload's figures (tpcc's `nopm`, `tpm`), by metric name.
    figures: Mutex<std::collections::BTreeMap<&'static str, Family<DbLabels, FloatGauge>>>,
    users: Family<DbLabels, Gauge>,
    measured: Family<DbLabels, FloatGauge>,
    rows: Family<DbLabels, Counter>,
    per_minute: Family<TxLabels, FloatGauge>,
    completed: Family<TxLabels, Counter>,
    /// Per kind of operation, the completed count last told (a counter only grows by the difference).
    last: Mutex<std::collections::BTreeMap<&'static str, u64>>,
}

impl DbMetrics {
    fn register(registry: &mut Registry, labels: DbLabels) -> DbMetrics {
        let m = DbMetrics {
            labels,
            registry: None,
            figures: Mutex::new(std::collections::BTreeMap::new()),
            users: Family::default(),
            measured: Family::default(),
            rows: Family::default(),
            per_minute: Family::default(),
            completed: Family::default(),
            last: Mutex::new(std::collections::BTreeMap::new()),
        };
        registry.register("users", "users (connections) running transactions", m.users.clone());
        registry.register_with_unit(
            "measured",
            "seconds of the current measured window so far (0 in the ramp)",
            Unit::Seconds,
            m.measured.clone(),
        );
        registry.register("build_rows", "rows the build has loaded", m.rows.clone());
        registry.register(
            "transactions_per_minute",
            "transactions of each type completed per minute over the measured window so far",
            m.per_minute.clone(),
        );
        registry.register(
            "transactions",
            "transactions of each type completed in measured windows (committed or rolled back)",
            m.completed.clone(),
        );
        m
    }

    /// The build loaded `rows` more rows.
    pub fn loaded(&self, rows: u64) {
        self.rows.get_or_create(&self.labels).inc_by(rows);
    }

    /// A point (or the run) at `users` users starts: the window's counts start again from 0.
    pub fn point(&self, users: u32) {
        self.users.get_or_create(&self.labels).set(i64::from(users));
        self.last.lock().unwrap_or_else(|p| p.into_inner()).clear();
        self.measured.get_or_create(&self.labels).set(0.0);
    }

    /// The gauge of figure `f`, registered the first time it is told.
    fn figure(&self, f: &iolab_db::workload::Figure) -> Family<DbLabels, FloatGauge> {
        let mut figures = self.figures.lock().unwrap_or_else(|p| p.into_inner());
        figures
            .entry(f.metric)
            .or_insert_with(|| {
                let family = Family::default();
                if let Some(r) = &self.registry {
                    r.lock().unwrap_or_else(|p| p.into_inner()).register(f.metric, f.help, family.clone());
                }
                family
            })
            .clone()
    }

    /// Where the run is: its figures (tpcc's NOPM and TPM) and each kind of operation completed.
    pub fn running(&self, live: &iolab_db::Live) {
        self.measured.get_or_create(&self.labels).set(live.measured_s);
        for f in &live.figures {
            if let Some(v) = f.value {
                self.figure(f).get_or_create(&self.labels).set(v);
            }
        }
        let mut last = self.last.lock().unwrap_or_else(|p| p.into_inner());
        for &(name, n) in &live.completed {
            let labels = TxLabels {
                workload: self.labels.workload.clone(),
                engine: self.labels.engine.clone(),
                transaction: name.into(),
            };
            let seen = last.entry(name).or_default();
            self.completed.get_or_create(&labels).inc_by(n.saturating_sub(*seen));
            *seen = (*seen).max(n);
            if live.measured_s > 0.0 {
                self.per_minute.get_or_create(&labels).set(n as f64 * 60.0 / live.measured_s);
            }
        }
    }
}

/// A scrape's answer: the registry in the OpenMetrics text format.
fn encode(registry: &Registry) -> crate::http::Answer {
    let mut text = String::new();
    match prometheus_client::encoding::text::encode(&mut text, registry) {
        Ok(()) => crate::http::Answer { status: "200 OK", content_type: CONTENT_TYPE, body: text },
        Err(e) => crate::http::Answer {
            status: "500 Internal Server Error",
            content_type: "text/plain; charset=utf-8",
            body: format!("encoding failed: {e}\n"),
        },
    }
}

/// A label value as OpenMetrics writes it: backslash, double quote and newline escaped
/// (`prometheus-client` writes values as given), so no worker or target name can end the value early.
fn escape(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

impl Metrics {
    fn register(registry: &mut Registry) -> Metrics {
        let m = Metrics {
            iops: Family::default(),
            bytes_per_second: Family::default(),
            latency: Family::default(),
            ops: Family::default(),
            depth: Family::default(),
            offered: Family::default(),
            backlog: Family::default(),
            io_backlog: Family::default(),
            hit_ratio: Family::default(),
            groups: Mutex::new(Vec::new()),
        };
        registry.register("iops", "I/Os completed per second in the last interval", m.iops.clone());
        registry.register(
            "throughput_bytes_per_second",
            "bytes per second in the last interval",
            m.bytes_per_second.clone(),
        );
        registry.register_with_unit(
            "response_time",
            "response time (from each I/O's intended start to its completion) in the last interval, by quantile",
            Unit::Seconds,
            m.latency.clone(),
        );
        registry.register("ops", "I/Os completed in the measured window so far", m.ops.clone());
        registry.register(
            "achieved_depth",
            "mean I/Os in flight in the last interval (Little's law)",
            m.depth.clone(),
        );
        registry.register("offered_iops", "the rate offered in open loop", m.offered.clone());
        registry.register(
            "transaction_backlog",
            "transactions dispatched and not completed",
            m.backlog.clone(),
        );
        registry.register(
            "backlog",
            "open loop: I/Os whose arrival was due and that were not issued yet (waiting for a free slot)",
            m.io_backlog.clone(),
        );
        registry.register(
            "cache_read_hit_ratio",
            "reads served by the block cache in the last interval",
            m.hit_ratio.clone(),
        );
        m
    }

    /// A run starts: its groups become the label sets of what follows.
    pub fn start(&self, shape: &RunShape) {
        let groups = shape
            .groups
            .iter()
            .map(|g| {
                let labels = GroupLabels { group: escape(&g.name), targets: escape(&g.targets.join(",")) };
                (labels, g.offered_iops)
            })
            .collect();
        *self.groups.lock().unwrap_or_else(|p| p.into_inner()) = groups;
    }

    /// A finished interval of the whole run.
    pub fn interval(&self, stats: &IntervalStats, interval_s: f64) {
        let offered = {
            let groups = self.groups.lock().unwrap_or_else(|p| p.into_inner());
            let rates: Vec<f64> = groups.iter().filter_map(|(_, r)| *r).collect();
            (!rates.is_empty()).then(|| rates.iter().sum())
        };
        let labels = GroupLabels { group: "all".into(), targets: String::new() };
        self.set(&labels, offered, stats, interval_s);
    }

    /// A finished interval of group `g`.
    pub fn group_interval(&self, g: usize, stats: &IntervalStats, interval_s: f64) {
        let found = self.groups.lock().unwrap_or_else(|p| p.into_inner()).get(g).cloned();
        if let Some((labels, offered)) = found {
            self.set(&labels, offered, stats, interval_s);
        }
    }

    fn set(&self, labels: &GroupLabels, offered: Option<f64>, stats: &IntervalStats, interval_s: f64) {
        let mut all = stats.read.clone();
        all.merge(&stats.write);
        for (op, s) in [("read", &stats.read), ("write", &stats.write), ("all", &all)] {
            self.set_op(labels, op, s, interval_s);
        }
        // No op succeeded: no mean, so no depth (absent, not a stale or made-up value).
        match all.lat.mean() {
            Some(mean) => {
                self.depth.get_or_create(labels).set(all.ops as f64 / interval_s * mean / 1e9);
            }
            None => {
                self.depth.remove(labels);
            }
        }
        if let Some(rate) = offered {
            self.offered.get_or_create(labels).set(rate);
        }
        self.backlog.get_or_create(labels).set(stats.txn.backlog as f64);
        if offered.is_some() {
            self.io_backlog.get_or_create(labels).set(stats.backlog as f64);
        }
        if stats.cached && stats.read.ops > 0 {
            self.hit_ratio.get_or_create(labels).set(stats.cache_hits as f64 / stats.read.ops as f64);
        }
    }

    fn set_op(&self, g: &GroupLabels, op: &str, s: &IntervalOp, interval_s: f64) {
        let labels = OpLabels { group: g.group.clone(), targets: g.targets.clone(), op: op.into() };
        self.iops.get_or_create(&labels).set(s.ops as f64 / interval_s);
        self.bytes_per_second.get_or_create(&labels).set(s.bytes as f64 / interval_s);
        self.ops.get_or_create(&labels).inc_by(s.ops);
        for (q, name) in QUANTILES {
            let l = QuantileLabels {
                group: g.group.clone(),
                targets: g.targets.clone(),
                op: op.into(),
                quantile: name.into(),
            };
            // An interval without a successful op has no quantile: the series is absent until one does.
            match s.lat.quantile(q) {
                Some(v) => {
                    self.latency.get_or_create(&l).set(v as f64 / 1e9);
                }
                None => {
                    self.latency.remove(&l);
                }
            }
        }
    }
}
