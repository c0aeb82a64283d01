//! What a kind declares for `iolab compare` ([`Comparing`]): what its documents compare with, how a side of
//! them is described, and the [`Metric`]s its trials offer, each with how a trial gives its value. The
//! arithmetic (values over trials, merged histograms, changes, Welch's test) is compare's, the same for every
//! kind (`crate::compare`).

use std::any::Any;
use std::collections::BTreeMap;

use iolab_stats::LatencyHistogram;
use serde::{Deserialize, Serialize};

use super::Document;

/// Which direction of a metric is better.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Better {
    /// More is better (IOPS, MB/s, transactions per hour).
    Higher,
    /// Less is better (latency, CPU per I/O).
    Lower,
    /// Neither (achieved depth: informative, not a goal).
    Neither,
}

/// How a metric's values are printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// Operations per second.
    Iops,
    /// 10^6 bytes per second.
    MbS,
    /// Nanoseconds.
    Ns,
    /// Outstanding I/Os.
    Depth,
    /// Transactions per hour.
    PerHour,
    /// Per minute (NOPM, TPM, a transaction type's rate).
    PerMinute,
    /// A share of the window, 0 to 1 (a device's busy time).
    Share,
}

/// One trial as a metric reads it: a document, or a part of one (a sweep point's run, the headline numbers a
/// point keeps of each of its trials), read as its own type with [`ComparedTrial::get`].
#[derive(Clone, Copy)]
pub struct ComparedTrial<'a>(&'a dyn Any);

impl<'a> ComparedTrial<'a> {
    /// A trial of `t`.
    pub fn of<T: Any>(t: &'a T) -> Self {
        ComparedTrial(t)
    }

    /// A trial of a whole document.
    pub fn document(doc: &'a dyn Document) -> Self {
        ComparedTrial(doc.as_any())
    }

    /// The trial as a `T`, if it is one.
    pub fn get<T: Any>(self) -> Option<&'a T> {
        self.0.downcast_ref()
    }
}

/// One unit of comparison a document holds: a document compared whole is one point without params; a sweep
/// has one per set of swept values, matched across sides by them.
pub struct ComparedPoint<'a> {
    /// The swept values (`qd=4`, `users=8`); `None` for a document compared whole.
    pub params: Option<BTreeMap<String, String>>,
    /// Its trials.
    pub trials: Vec<ComparedTrial<'a>>,
}

/// A response-time statistic, read from a histogram.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Quantile {
    /// The mean.
    Mean,
    /// The median.
    P50,
    /// The 95th percentile.
    P95,
    /// The 99th percentile.
    P99,
    /// The 99.9th percentile.
    P999,
    /// The largest.
    Max,
}

impl Quantile {
    /// The statistic of `h`, `None` for an empty one.
    pub fn of(self, h: &LatencyHistogram) -> Option<f64> {
        let s = h.summary()?;
        Some(match self {
            Quantile::Mean => s.mean,
            Quantile::P50 => s.p50 as f64,
            Quantile::P95 => s.p95 as f64,
            Quantile::P99 => s.p99 as f64,
            Quantile::P999 => s.p999 as f64,
            Quantile::Max => s.max as f64,
        })
    }
}

/// A trial's part of a merged histogram: its histograms and the operations they should count between them;
/// `None` when the trial has none (then the side's value is the mean of its trials).
pub type HistogramParts = Option<(Vec<LatencyHistogram>, u64)>;

/// How a trial gives its part of a merged histogram.
pub type PartsFn = Box<dyn Fn(ComparedTrial<'_>) -> HistogramParts>;

/// How a trial gives a metric's value.
pub type ValueFn = Box<dyn Fn(ComparedTrial<'_>) -> Option<f64>>;

/// How a response-time statistic of several trials is read from their merged histogram (percentiles are
/// never averaged).
pub struct Merged {
    /// Which histogram: the metrics naming the same one share the merge (a side's mean, p50, p99 and max of
    /// reads are read from one merge).
    pub histogram: String,
    /// The statistic read from it.
    pub quantile: Quantile,
    /// A trial's histograms.
    pub parts: PartsFn,
}

/// One metric the trials of a kind offer a comparison.
pub struct Metric {
    /// Its key (`read.p99`, `txn.new_order.p99`), unique in a unit: the JSON stores it, and `--metric` keeps
    /// the metrics whose key is a name or ends with `.NAME`.
    pub key: String,
    /// Its label as printed (`read p99`, `new_order: p99`).
    pub label: String,
    /// Its scope as the JSON stores it (`total`, `group:db`, `transaction:new_order`, `device:disk`).
    pub scope: String,
    /// How its values are printed.
    pub unit: Unit,
    /// Which direction is better.
    pub better: Better,
    /// The classes `--metric` also keeps it for (`@lat` for `--metric latency`, `@tx`, `@device`).
    pub classes: &'static [&'static str],
    /// Whether each side's value is also shown as a ratio of the baseline's (`0.52x`): the times, where half
    /// reads better as 0.5x than as -50%.
    pub ratio: bool,
    /// A trial's value, `None` when it has none (the metric is left out unless every side has a value).
    pub value: ValueFn,
    /// For a response-time statistic: how to read it from the trials' merged histogram.
    pub merged: Option<Merged>,
}

impl Metric {
    /// A metric of no class, shown without a ratio and never read from merged histograms: `key`, `label` and
    /// `scope` as [`Metric`]'s fields say, `value` a trial's value (left out when not finite).
    pub fn new(
        key: impl Into<String>,
        label: impl Into<String>,
        scope: impl Into<String>,
        (unit, better): (Unit, Better),
        value: impl Fn(ComparedTrial<'_>) -> Option<f64> + 'static,
    ) -> Metric {
        Metric {
            key: key.into(),
            label: label.into(),
            scope: scope.into(),
            unit,
            better,
            classes: &[],
            ratio: false,
            value: Box::new(move |t| value(t).filter(|v| v.is_finite())),
            merged: None,
        }
    }

    /// The same metric, each side's value also shown as a ratio of the baseline's.
    pub fn with_ratio(self) -> Metric {
        Metric { ratio: true, ..self }
    }
}

impl std::fmt::Debug for Metric {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Metric({})", self.key)
    }
}

/// What a kind compares with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Peers {
    /// I/O documents (runs, sweeps): never a database's, whose numbers have no counterpart in IOPS.
    Io,
    /// Database documents of the tpcc workload (runs, sweeps over users): never an I/O run.
    Database,
    /// Documents of its own kind only.
    OwnKind,
}

/// What `iolab compare` reads from a kind's documents.
pub trait Comparing: Sync {
    /// The comparison's `kind` when its sides are of this kind, as its JSON stores it: `runs`, `db_tpch`.
    fn name(&self) -> &'static str;

    /// One of its documents as a refusal names a side: `an I/O run`, `a tpch query set, iolab db tpch`.
    fn one(&self) -> &'static str;

    /// Several of them, as a message about one input names them: `I/O runs`, `tpch query sets`.
    fn many(&self) -> &'static str;

    /// What it compares with.
    fn peers(&self) -> Peers;

    /// Whether its documents are compared point by point (sweeps), never with documents compared whole.
    fn by_point(&self) -> bool {
        false
    }

    /// The names `--metric` takes for its metrics, each with what it stands for: the last part of their keys
    /// (`p99`; `mbs` stands for `mb_s`) or a class (`latency` stands for `@lat`).
    fn metric_names(&self) -> &'static [(&'static str, &'static str)];

    /// The points of one of its documents (one without params for a document compared whole).
    fn points<'a>(&self, doc: &'a dyn Document) -> Vec<ComparedPoint<'a>>;

    /// What the side `letter` (given as `source`) holding `docs` says of itself: the run ids of its
    /// documents (where they have them) and their seeds. Its notes (a partial run, trials of different
    /// configurations) go to `notes`.
    fn side(
        &self,
        docs: &[&dyn Document],
        letter: &str,
        source: &str,
        notes: &mut Vec<String>,
    ) -> (Vec<String>, Vec<u64>);

    /// Notes on the whole comparison, from every side (its source and documents): what the workload is
    /// derived from, the engines and devices, where another tool measured.
    fn notes(&self, sides: &[(&str, Vec<&dyn Document>)]) -> Vec<String> {
        let _ = sides;
        Vec::new()
    }

    /// Every metric the trials of one unit offer (one list of trials per side), in display order.
    fn metrics(&self, trials: &[Vec<ComparedTrial<'_>>]) -> Vec<Metric>;
}
