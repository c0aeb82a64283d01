//! The metrics of a comparison: the `--metric` filter, which keeps metrics by their keys and classes, and the
//! vocabulary the I/O and tpcc metrics are defined in (a scope, an op kind, a statistic: [`MetricDef`]),
//! turned into the [`Metric`]s the comparison reads. Another kind defines its metrics as [`Metric`]s of its
//! own (`crate::kinds`); the devices under a database have their builder here ([`device_metrics`]).

use super::input::CompareError;
use crate::plugin::{Better, ComparedTrial, HistogramParts, Merged, Metric, Quantile, Unit};

/// The class `--metric latency` keeps: every response-time statistic and the service time.
pub(crate) const LATENCY: &str = "@lat";
/// The class `--metric tx` keeps: everything about transactions.
pub(crate) const TRANSACTIONS: &str = "@tx";
/// The class `--metric device` keeps: the devices under a database.
pub(crate) const DEVICES: &str = "@device";

/// The op kind of a comparison's row: reads, writes, flushes or trims, or all (reads and writes together).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum MetricOp {
    All,
    Read,
    Write,
    /// Flushes (fsync, fdatasync): their own rows, as in the results.
    Flush,
    /// Trims.
    Trim,
}

impl MetricOp {
    pub(crate) fn prefix(self) -> &'static str {
        match self {
            MetricOp::All => "",
            MetricOp::Read => "read ",
            MetricOp::Write => "write ",
            MetricOp::Flush => "flush ",
            MetricOp::Trim => "trim ",
        }
    }
    pub(crate) fn key(self) -> &'static str {
        match self {
            MetricOp::All => "",
            MetricOp::Read => "read.",
            MetricOp::Write => "write.",
            MetricOp::Flush => "flush.",
            MetricOp::Trim => "trim.",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Stat {
    Iops,
    MbS,
    Mean,
    P50,
    P99,
    P999,
    Max,
    ServiceMean,
    CpuPerIo,
    Depth,
    TxPerHour,
    /// A database run's new orders per minute.
    Nopm,
    /// A database run's transactions per minute.
    Tpm,
    /// One transaction type's completions per minute.
    PerMinute,
    /// The 95th percentile (a database transaction's response time, as HammerDB and iolab db print it).
    P95,
    /// A device's share of the window with I/O in flight.
    Busy,
}

impl Stat {
    pub(crate) fn key(self) -> &'static str {
        match self {
            Stat::Iops => "iops",
            Stat::MbS => "mb_s",
            Stat::Mean => "mean",
            Stat::P50 => "p50",
            Stat::P99 => "p99",
            Stat::P999 => "p999",
            Stat::Max => "max",
            Stat::ServiceMean => "service_mean",
            Stat::CpuPerIo => "cpu_per_io",
            Stat::Depth => "depth",
            Stat::TxPerHour => "tx_per_hour",
            Stat::Nopm => "nopm",
            Stat::Tpm => "tpm",
            Stat::PerMinute => "per_minute",
            Stat::P95 => "p95",
            Stat::Busy => "busy",
        }
    }
    pub(crate) fn label(self) -> &'static str {
        match self {
            Stat::Iops => "IOPS",
            Stat::MbS => "MB/s",
            Stat::Mean => "mean latency",
            Stat::P50 => "p50",
            Stat::P99 => "p99",
            Stat::P999 => "p99.9",
            Stat::Max => "max latency",
            Stat::ServiceMean => "service time",
            Stat::CpuPerIo => "CPU per I/O",
            Stat::Depth => "achieved depth",
            Stat::TxPerHour => "tx/hour",
            Stat::Nopm => "NOPM",
            Stat::Tpm => "TPM",
            Stat::PerMinute => "per minute",
            Stat::P95 => "p95",
            Stat::Busy => "busy",
        }
    }
    /// The response-time statistic it is, if it is one.
    pub(crate) fn quantile(self) -> Option<Quantile> {
        Some(match self {
            Stat::Mean => Quantile::Mean,
            Stat::P50 => Quantile::P50,
            Stat::P95 => Quantile::P95,
            Stat::P99 => Quantile::P99,
            Stat::P999 => Quantile::P999,
            Stat::Max => Quantile::Max,
            _ => return None,
        })
    }
    pub(crate) fn better(self) -> Better {
        match self {
            Stat::Iops | Stat::MbS | Stat::TxPerHour | Stat::Nopm | Stat::Tpm | Stat::PerMinute => {
                Better::Higher
            }
            Stat::Depth | Stat::Busy => Better::Neither,
            _ => Better::Lower,
        }
    }
    pub(crate) fn unit(self) -> Unit {
        match self {
            Stat::Iops => Unit::Iops,
            Stat::MbS => Unit::MbS,
            Stat::Depth => Unit::Depth,
            Stat::TxPerHour => Unit::PerHour,
            Stat::Nopm | Stat::Tpm | Stat::PerMinute => Unit::PerMinute,
            Stat::Busy => Unit::Share,
            _ => Unit::Ns,
        }
    }
    /// The classes `--metric` keeps it for besides its key: `latency` keeps every response-time statistic and
    /// the service time.
    fn latency(self) -> bool {
        self.quantile().is_some() || self == Stat::ServiceMean
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum MetricScope {
    Total,
    Group(String),
    Tx,
    TxType(String),
    /// A database run as a whole (NOPM, TPM).
    Db,
    /// One transaction type of a database run.
    DbTx(String),
}

/// A metric of I/O runs or tpcc runs, in their vocabulary: a scope, an op kind, a statistic.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct MetricDef {
    pub(crate) scope: MetricScope,
    pub(crate) op: MetricOp,
    pub(crate) stat: Stat,
}

impl MetricDef {
    pub(crate) fn key(&self) -> String {
        let scope = match &self.scope {
            MetricScope::Total => String::new(),
            MetricScope::Group(g) => format!("group.{g}."),
            MetricScope::Tx => "tx.".to_string(),
            MetricScope::TxType(t) | MetricScope::DbTx(t) => format!("txn.{t}."),
            MetricScope::Db => String::new(),
        };
        format!("{scope}{}{}", self.op.key(), self.stat.key())
    }
    pub(crate) fn label(&self) -> String {
        let stat = format!("{}{}", self.op.prefix(), self.stat.label());
        match &self.scope {
            MetricScope::Total => stat,
            MetricScope::Group(g) => format!("{g}: {stat}"),
            MetricScope::Tx if self.stat == Stat::TxPerHour => stat,
            MetricScope::Tx => format!("tx {stat}"),
            MetricScope::TxType(t) if self.stat == Stat::TxPerHour => format!("{t}: {stat}"),
            MetricScope::TxType(t) => format!("{t}: tx {stat}"),
            MetricScope::Db => stat,
            MetricScope::DbTx(t) => format!("{t}: {stat}"),
        }
    }
    pub(crate) fn scope_name(&self) -> String {
        match &self.scope {
            MetricScope::Total => "total".to_string(),
            MetricScope::Group(g) => format!("group:{g}"),
            MetricScope::Tx => "transactions".to_string(),
            MetricScope::TxType(t) | MetricScope::DbTx(t) => format!("transaction:{t}"),
            MetricScope::Db => "database".to_string(),
        }
    }
    fn classes(&self) -> &'static [&'static str] {
        let tx = matches!(self.scope, MetricScope::Tx | MetricScope::TxType(_) | MetricScope::DbTx(_));
        match (self.stat.latency(), tx) {
            (true, true) => &[LATENCY, TRANSACTIONS],
            (true, false) => &[LATENCY],
            (false, true) => &[TRANSACTIONS],
            (false, false) => &[],
        }
    }

    /// The metric, its value read by `value` from each trial; a response-time statistic of the totals, a
    /// group or a database transaction is read from the trials' merged histogram, whose parts `parts`
    /// gives (reads and writes are merged, flushes and trims have no merged histograms kept).
    pub(crate) fn metric(
        self,
        value: fn(&MetricDef, ComparedTrial<'_>) -> Option<f64>,
        parts: fn(&MetricScope, MetricOp, ComparedTrial<'_>) -> HistogramParts,
    ) -> Metric {
        let merges = matches!(self.scope, MetricScope::Total | MetricScope::Group(_) | MetricScope::DbTx(_))
            && !matches!(self.op, MetricOp::Flush | MetricOp::Trim);
        let merged = self.stat.quantile().filter(|_| merges).map(|quantile| {
            let (scope, kind) = (self.scope.clone(), self.op);
            Merged {
                histogram: format!("{}|{}", self.scope_name(), self.op.key()),
                quantile,
                parts: Box::new(move |t| parts(&scope, kind, t)),
            }
        });
        let (key, label, scope) = (self.key(), self.label(), self.scope_name());
        let (unit, better, classes) = (self.stat.unit(), self.stat.better(), self.classes());
        Metric {
            key,
            label,
            scope,
            unit,
            better,
            classes,
            ratio: false,
            value: Box::new(move |t| value(&self, t).filter(|v| v.is_finite())),
            merged,
        }
    }
}

/// Which metrics to keep (`--metric iops,p99`). A name selects every metric whose key is that name or ends
/// with `.NAME`: `p99` keeps p99 of all, reads, writes, groups and transactions; `read.p99` only reads' p99;
/// `group.db.read.p99` one metric. `latency` (or `lat`) keeps every response-time statistic and `tx`
/// everything about transactions.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct MetricFilter {
    names: Vec<String>,
}

impl MetricFilter {
    /// Every metric.
    pub fn all() -> Self {
        Self { names: Vec::new() }
    }

    /// Parses a comma-separated list, each name one of `known` (a name and what it stands for: the last
    /// part of metric keys, or a class; the kinds' [`crate::plugin::Comparing::metric_names`], which
    /// `crate::kinds::metric_names` gathers); an unknown name is an error quoting it and listing the known
    /// ones.
    pub fn parse(text: &str, known: &[(&'static str, &'static str)]) -> Result<Self, CompareError> {
        let mut names = Vec::new();
        for raw in text.split(',') {
            let token = raw.trim().to_ascii_lowercase();
            if token.is_empty() {
                continue;
            }
            // The last dotted part (or the whole token for `p99.9`, `mb/s`) must be a known stat name.
            let (prefix, last) = match known.iter().find(|(n, _)| *n == token) {
                Some(_) => ("", token.as_str()),
                None => match token.rsplit_once('.') {
                    Some((p, l)) => (p, l),
                    None => ("", token.as_str()),
                },
            };
            let Some(&(_, canonical)) = known.iter().find(|(n, _)| *n == last) else {
                let known: Vec<&str> = known.iter().map(|(n, _)| *n).collect();
                return Err(CompareError::Metric(format!(
                    "invalid value '{raw}' for '--metric': unknown metric '{last}'; expected a comma-separated list of {}, optionally prefixed with read., write., group.NAME., tx. or txn.NAME.",
                    known.join(", ")
                )));
            };
            names.push(if prefix.is_empty() {
                canonical.to_string()
            } else {
                format!("{prefix}.{canonical}")
            });
        }
        Ok(Self { names })
    }

    pub(crate) fn keeps(&self, m: &Metric) -> bool {
        if self.names.is_empty() {
            return true;
        }
        self.names.iter().any(|n| match n.strip_prefix('@') {
            Some(_) => m.classes.contains(&n.as_str()),
            None => m.key == *n || m.key.ends_with(&format!(".{n}")),
        })
    }
}

/// The devices under a database (`crate::db::DeviceView`s) a comparison matches across documents: each role
/// (`filesystem`, `disk`, `member`) that every document has exactly one device of, so that a Gen 5 drive
/// and a Gen 6 one under the same file system compare although their names differ; then the devices of
/// other roles that every document has by name.
pub(crate) fn device_keys(runs: &[&[crate::db::DeviceView]]) -> Vec<String> {
    let mut keys: Vec<String> = Vec::new();
    let Some(first) = runs.first() else { return keys };
    for d in first.iter() {
        let unique_role = runs.iter().all(|r| r.iter().filter(|x| x.role == d.role).count() == 1);
        let key = if unique_role {
            d.role.clone()
        } else if runs.iter().all(|r| r.iter().any(|x| x.name == d.name)) {
            d.name.clone()
        } else {
            continue;
        };
        if !keys.contains(&key) {
            keys.push(key);
        }
    }
    keys
}

/// Where a trial's devices are: the device list, and the seconds its counts cover (the measured window).
pub(crate) type DeviceSource = fn(ComparedTrial<'_>) -> Option<(&[crate::db::DeviceView], f64)>;

/// The device a device key names among `devices`: the one device of that role, else the one of that name.
fn device<'a>(devices: &'a [crate::db::DeviceView], key: &str) -> Option<&'a crate::db::DeviceView> {
    let mut of_role = devices.iter().filter(|d| d.role == key);
    match (of_role.next(), of_role.next()) {
        (Some(d), None) => Some(d),
        _ => devices.iter().find(|d| d.name == key),
    }
}

/// A device's value of one (op kind, statistic), its bytes over `seconds` (the window the view covers).
fn device_value(kind: MetricOp, stat: Stat, d: &crate::db::DeviceView, seconds: f64) -> Option<f64> {
    let per_s = |bytes: u64| (seconds > 0.0).then(|| bytes as f64 / seconds / 1e6);
    let ns = |ms: Option<f64>| ms.map(|m| m * 1e6);
    match (kind, stat) {
        (MetricOp::Read, Stat::Iops) => Some(d.read_iops),
        (MetricOp::Read, Stat::MbS) => per_s(d.read_bytes),
        (MetricOp::Read, Stat::Mean) => ns(d.read_mean_ms),
        (MetricOp::Write, Stat::Iops) => Some(d.write_iops),
        (MetricOp::Write, Stat::MbS) => per_s(d.write_bytes),
        (MetricOp::Write, Stat::Mean) => ns(d.write_mean_ms),
        (MetricOp::Flush, Stat::Iops) => Some(d.flushes_per_s),
        (MetricOp::Flush, Stat::Mean) => ns(d.flush_mean_ms),
        (MetricOp::All, Stat::Busy) => Some(d.busy),
        _ => None,
    }
}

/// The metrics of one device (`name` its key in the metric keys, `device` the key it is found by in the
/// trials' devices from `source`): reads and writes (rate, MB/s, time per request), flushes (rate, time),
/// the busy share. A device's rates and busy share are the workload's doing as much as the device's (more
/// new orders write more), so neither is judged; its time per request is.
pub(crate) fn device_metrics(name: &str, device_key: &str, source: DeviceSource) -> Vec<Metric> {
    let mut pairs: Vec<(MetricOp, Stat)> = Vec::new();
    for kind in [MetricOp::Read, MetricOp::Write] {
        pairs.extend([Stat::Iops, Stat::MbS, Stat::Mean].map(|s| (kind, s)));
    }
    pairs.extend([(MetricOp::Flush, Stat::Iops), (MetricOp::Flush, Stat::Mean), (MetricOp::All, Stat::Busy)]);
    pairs
        .into_iter()
        .map(|(kind, stat)| {
            let label = match stat {
                Stat::Mean => format!("device {name}: {}time per request", kind.prefix()),
                _ => format!("device {name}: {}{}", kind.prefix(), stat.label()),
            };
            let better = if matches!(stat, Stat::Iops | Stat::MbS) { Better::Neither } else { stat.better() };
            let key = device_key.to_string();
            Metric {
                key: format!("device.{name}.{}{}", kind.key(), stat.key()),
                label,
                scope: format!("device:{name}"),
                unit: stat.unit(),
                better,
                classes: if stat.latency() { &[DEVICES, LATENCY] } else { &[DEVICES] },
                ratio: false,
                value: Box::new(move |t| {
                    let (devices, seconds) = source(t)?;
                    device_value(kind, stat, device(devices, &key)?, seconds).filter(|v| v.is_finite())
                }),
                merged: None,
            }
        })
        .collect()
}
