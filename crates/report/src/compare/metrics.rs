//! The metrics of a comparison: what each side's trials offer (totals, read and write, groups, transactions;
//! for database runs NOPM and TPM, each transaction type's rate and response times, and the devices under the
//! database), their keys and labels, the `--metric` filter, and one trial's value of one metric (or the
//! statistic of the trials' merged histogram).

use iolab_stats::LatencyHistogram;

use super::document::{Better, Unit};
use super::input::CompareError;
use crate::db::{DbResult, DeviceView};
use crate::db_copy::CopyResult;
use crate::db_tpch::TpchResult;
use crate::model::{OpSummary, RunResult};
use crate::sweep::TrialMetrics;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Kind {
    All,
    Read,
    Write,
    /// Flushes (fsync, fdatasync): their own rows, as in the results.
    Flush,
    /// Trims.
    Trim,
}

impl Kind {
    fn prefix(self) -> &'static str {
        match self {
            Kind::All => "",
            Kind::Read => "read ",
            Kind::Write => "write ",
            Kind::Flush => "flush ",
            Kind::Trim => "trim ",
        }
    }
    fn key(self) -> &'static str {
        match self {
            Kind::All => "",
            Kind::Read => "read.",
            Kind::Write => "write.",
            Kind::Flush => "flush.",
            Kind::Trim => "trim.",
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
    /// A tpch query's time (the median of its runs), ns.
    Time,
    /// The sum of a tpch query set's times, ns.
    QueryTotal,
    /// The geometric mean of a tpch query set's times, ns.
    QueryGeomean,
    /// A database copy's time until durable, ns.
    CopyTime,
}

/// The stat names `--metric` accepts (besides full keys and `read.`/`write.` prefixed names), with aliases.
const STAT_NAMES: [(&str, &str); 30] = [
    ("iops", "iops"),
    ("mb_s", "mb_s"),
    ("mbs", "mb_s"),
    ("mb/s", "mb_s"),
    ("mean", "mean"),
    ("p50", "p50"),
    ("p99", "p99"),
    ("p999", "p999"),
    ("p99.9", "p999"),
    ("max", "max"),
    ("service_mean", "service_mean"),
    ("service", "service_mean"),
    ("cpu_per_io", "cpu_per_io"),
    ("cpu", "cpu_per_io"),
    ("depth", "depth"),
    ("tx_per_hour", "tx_per_hour"),
    ("tx/hour", "tx_per_hour"),
    ("latency", "@lat"),
    ("lat", "@lat"),
    ("tx", "@tx"),
    ("nopm", "nopm"),
    ("tpm", "tpm"),
    ("per_minute", "per_minute"),
    ("p95", "p95"),
    ("busy", "busy"),
    ("device", "@device"),
    ("time", "time"),
    ("query_total", "query_total"),
    ("query_geomean", "query_geomean"),
    ("copy_time", "copy_time"),
];

impl Stat {
    fn key(self) -> &'static str {
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
            Stat::Time => "time",
            Stat::QueryTotal => "query_total",
            Stat::QueryGeomean => "query_geomean",
            Stat::CopyTime => "copy_time",
        }
    }
    fn label(self) -> &'static str {
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
            Stat::Time => "time",
            Stat::QueryTotal => "total query time",
            Stat::QueryGeomean => "geometric mean of query times",
            Stat::CopyTime => "copy time",
        }
    }
    pub(crate) fn is_latency(self) -> bool {
        matches!(self, Stat::Mean | Stat::P50 | Stat::P95 | Stat::P99 | Stat::P999 | Stat::Max)
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
}

/// Whether a metric (by key) is a time that the comparison also shows as a ratio of the baseline's
/// (`total query time 0.52x`): the tpch query times, their total and geometric mean, the copy's time. Half
/// the time reads better as 0.5x than as -50%.
pub(crate) fn shows_ratio(key: &str) -> bool {
    let stat = key.rsplit('.').next().unwrap_or(key);
    [Stat::Time, Stat::QueryTotal, Stat::QueryGeomean, Stat::CopyTime].iter().any(|s| s.key() == stat)
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Scope {
    Total,
    Group(String),
    Tx,
    TxType(String),
    /// A database run as a whole (NOPM, TPM).
    Db,
    /// One transaction type of a database run.
    DbTx(String),
    /// One tpch query, by number.
    Query(u32),
    /// A block device under a database: a role (`filesystem`, `disk`) that every run has exactly one device
    /// of, else a device name every run has.
    Device(String),
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct MetricDef {
    pub(crate) scope: Scope,
    pub(crate) kind: Kind,
    pub(crate) stat: Stat,
}

impl MetricDef {
    pub(crate) fn key(&self) -> String {
        let scope = match &self.scope {
            Scope::Total => String::new(),
            Scope::Group(g) => format!("group.{g}."),
            Scope::Tx => "tx.".to_string(),
            Scope::TxType(t) | Scope::DbTx(t) => format!("txn.{t}."),
            Scope::Db => String::new(),
            Scope::Query(n) => format!("q{n}."),
            Scope::Device(d) => format!("device.{d}."),
        };
        format!("{scope}{}{}", self.kind.key(), self.stat.key())
    }
    /// Which direction is better. A device's rates and busy share are the workload's doing as much as the
    /// device's (more new orders write more), so neither is judged; its time per request is.
    pub(crate) fn better(&self) -> Better {
        match (&self.scope, self.stat) {
            (Scope::Device(_), Stat::Iops | Stat::MbS) => Better::Neither,
            (_, stat) => stat.better(),
        }
    }
    pub(crate) fn label(&self) -> String {
        let stat = format!("{}{}", self.kind.prefix(), self.stat.label());
        match &self.scope {
            Scope::Total => stat,
            Scope::Group(g) => format!("{g}: {stat}"),
            Scope::Tx if self.stat == Stat::TxPerHour => stat,
            Scope::Tx => format!("tx {stat}"),
            Scope::TxType(t) if self.stat == Stat::TxPerHour => format!("{t}: {stat}"),
            Scope::TxType(t) => format!("{t}: tx {stat}"),
            Scope::Db => stat,
            Scope::DbTx(t) => format!("{t}: {stat}"),
            Scope::Query(n) => format!("Q{n} {stat}"),
            Scope::Device(d) if self.stat == Stat::Mean => {
                format!("device {d}: {}time per request", self.kind.prefix())
            }
            Scope::Device(d) => format!("device {d}: {stat}"),
        }
    }
    pub(crate) fn scope_name(&self) -> String {
        match &self.scope {
            Scope::Total => "total".to_string(),
            Scope::Group(g) => format!("group:{g}"),
            Scope::Tx => "transactions".to_string(),
            Scope::TxType(t) | Scope::DbTx(t) => format!("transaction:{t}"),
            Scope::Db => "database".to_string(),
            Scope::Query(n) => format!("query:{n}"),
            Scope::Device(d) => format!("device:{d}"),
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

    /// Parses a comma-separated list; an unknown name is an error quoting it and listing the known ones.
    pub fn parse(text: &str) -> Result<Self, CompareError> {
        let mut names = Vec::new();
        for raw in text.split(',') {
            let token = raw.trim().to_ascii_lowercase();
            if token.is_empty() {
                continue;
            }
            // The last dotted part (or the whole token for `p99.9`, `mb/s`) must be a known stat name.
            let (prefix, last) = match STAT_NAMES.iter().find(|(n, _)| *n == token) {
                Some(_) => ("", token.as_str()),
                None => match token.rsplit_once('.') {
                    Some((p, l)) => (p, l),
                    None => ("", token.as_str()),
                },
            };
            let Some(&(_, canonical)) = STAT_NAMES.iter().find(|(n, _)| *n == last) else {
                let known: Vec<&str> = STAT_NAMES.iter().map(|(n, _)| *n).collect();
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

    pub(crate) fn keeps(&self, def: &MetricDef) -> bool {
        if self.names.is_empty() {
            return true;
        }
        let key = def.key();
        self.names.iter().any(|n| match n.as_str() {
            "@lat" => def.stat.is_latency() || def.stat == Stat::ServiceMean,
            "@tx" => matches!(def.scope, Scope::Tx | Scope::TxType(_) | Scope::DbTx(_)),
            "@device" => matches!(def.scope, Scope::Device(_)),
            n => key == n || key.ends_with(&format!(".{n}")),
        })
    }
}

/// One trial as far as metrics go: a full run, or the headline numbers a multi-trial sweep point keeps.
#[derive(Clone, Copy)]
pub(crate) enum Trial<'a> {
    Full(&'a RunResult),
    Headline(&'a TrialMetrics),
    /// A database run.
    Db(&'a DbResult),
    /// A tpch query set.
    Tpch(&'a TpchResult),
    /// A database copy.
    Copy(&'a CopyResult),
}

/// The device a device scope names among `devices`: the one device of that role, else the one of that name.
fn device<'a>(devices: &'a [DeviceView], key: &str) -> Option<&'a DeviceView> {
    let mut of_role = devices.iter().filter(|d| d.role == key);
    match (of_role.next(), of_role.next()) {
        (Some(d), None) => Some(d),
        _ => devices.iter().find(|d| d.name == key),
    }
}

/// A device's value of one metric, its bytes over `seconds` (the window the view covers).
fn device_value(def: &MetricDef, d: &DeviceView, seconds: f64) -> Option<f64> {
    let per_s = |bytes: u64| (seconds > 0.0).then(|| bytes as f64 / seconds / 1e6);
    let ns = |ms: Option<f64>| ms.map(|m| m * 1e6);
    match (def.kind, def.stat) {
        (Kind::Read, Stat::Iops) => Some(d.read_iops),
        (Kind::Read, Stat::MbS) => per_s(d.read_bytes),
        (Kind::Read, Stat::Mean) => ns(d.read_mean_ms),
        (Kind::Write, Stat::Iops) => Some(d.write_iops),
        (Kind::Write, Stat::MbS) => per_s(d.write_bytes),
        (Kind::Write, Stat::Mean) => ns(d.write_mean_ms),
        (Kind::Flush, Stat::Iops) => Some(d.flushes_per_s),
        (Kind::Flush, Stat::Mean) => ns(d.flush_mean_ms),
        (Kind::All, Stat::Busy) => Some(d.busy),
        _ => None,
    }
}

/// The prefixes of a copy's device keys: the source's devices and the destination's compare apart.
const COPY_SOURCE: &str = "source.";
const COPY_DESTINATION: &str = "destination.";

/// A database run's value of one metric.
fn db_value(def: &MetricDef, r: &DbResult) -> Option<f64> {
    match &def.scope {
        Scope::Db => match def.stat {
            Stat::Nopm => Some(r.run.nopm),
            Stat::Tpm => Some(r.run.tpm),
            _ => None,
        },
        Scope::DbTx(t) => {
            let t = r.run.transactions.iter().find(|x| &x.name == t)?;
            let lat = t.latency_ns.as_ref();
            match def.stat {
                Stat::PerMinute => Some(t.per_minute),
                Stat::Mean => Some(lat?.mean),
                Stat::P50 => Some(lat?.p50 as f64),
                Stat::P95 => Some(lat?.p95 as f64),
                Stat::P99 => Some(lat?.p99 as f64),
                Stat::Max => Some(lat?.max as f64),
                _ => None,
            }
        }
        Scope::Device(key) => device_value(def, device(&r.devices, key)?, r.run.measured_s),
        _ => None,
    }
}

/// A tpch query set's value of one metric: a query's time, the set's total and geometric mean, the devices
/// over the set.
fn tpch_value(def: &MetricDef, r: &TpchResult) -> Option<f64> {
    match (&def.scope, def.stat) {
        (Scope::Db, Stat::QueryTotal) => Some(r.power.total_s * 1e9),
        (Scope::Db, Stat::QueryGeomean) => Some(r.power.geomean_s * 1e9),
        (Scope::Query(n), Stat::Time) => r.queries.iter().find(|q| q.number == *n).map(|q| q.seconds * 1e9),
        (Scope::Device(key), _) => device_value(def, device(&r.devices, key)?, r.power.measured_s),
        _ => None,
    }
}

/// A copy's value of one metric: its time and rate, the source's and the destination's devices.
fn copy_value(def: &MetricDef, r: &CopyResult) -> Option<f64> {
    match (&def.scope, def.stat) {
        (Scope::Db, Stat::CopyTime) => Some(r.copy.seconds * 1e9),
        (Scope::Db, Stat::MbS) => Some(r.copy.mb_per_s),
        (Scope::Device(key), _) => {
            let (devices, key) = match key.strip_prefix(COPY_SOURCE) {
                Some(k) => (&r.source_devices, k),
                None => (&r.destination_devices, key.strip_prefix(COPY_DESTINATION)?),
            };
            device_value(def, device(devices, key)?, r.copy.seconds)
        }
        _ => None,
    }
}

pub(crate) fn op_summary<'a>(r: &'a RunResult, scope: &Scope, kind: Kind) -> Option<&'a OpSummary> {
    let set = match scope {
        Scope::Total => (&r.total.read, &r.total.write, &r.total.all, &r.total.flush, &r.total.trim),
        Scope::Group(g) => {
            let g = r.groups.iter().find(|x| &x.name == g)?;
            (&g.read, &g.write, &g.all, &g.flush, &g.trim)
        }
        _ => return None,
    };
    match kind {
        Kind::Read => Some(set.0),
        Kind::Write => Some(set.1),
        Kind::All => Some(set.2),
        Kind::Flush => set.3.as_ref(),
        Kind::Trim => set.4.as_ref(),
    }
}

pub(crate) fn extract(def: &MetricDef, trial: Trial<'_>) -> Option<f64> {
    let v = match trial {
        Trial::Db(r) => db_value(def, r)?,
        Trial::Tpch(r) => tpch_value(def, r)?,
        Trial::Copy(r) => copy_value(def, r)?,
        Trial::Headline(t) => {
            if def.scope != Scope::Total || def.kind != Kind::All {
                return None;
            }
            match def.stat {
                Stat::Iops => t.iops,
                Stat::MbS => t.mb_s,
                Stat::Mean => t.lat_mean_ns?,
                Stat::P99 => t.lat_p99_ns?,
                Stat::Depth => t.achieved_depth,
                _ => return None,
            }
        }
        Trial::Full(r) => match &def.scope {
            Scope::Total | Scope::Group(_) => {
                let s = op_summary(r, &def.scope, def.kind)?;
                let lat = s.lat_ns.as_ref();
                match def.stat {
                    Stat::Iops => s.iops,
                    Stat::MbS => s.mb_s,
                    Stat::Mean => lat?.mean,
                    Stat::P50 => lat?.p50 as f64,
                    Stat::P99 => lat?.p99 as f64,
                    Stat::P999 => lat?.p999 as f64,
                    Stat::Max => lat?.max as f64,
                    Stat::ServiceMean => s.service_lat_ns.as_ref()?.mean,
                    Stat::CpuPerIo if def.scope == Scope::Total => r.cpu.cpu_ns_per_io?,
                    Stat::Depth => match &def.scope {
                        Scope::Group(g) => r.groups.iter().find(|x| &x.name == g)?.achieved_depth,
                        _ => r.depth.achieved,
                    },
                    _ => return None,
                }
            }
            Scope::Db | Scope::DbTx(_) | Scope::Query(_) | Scope::Device(_) => return None,
            Scope::Tx | Scope::TxType(_) => {
                let lg = r.loadgen.as_ref()?;
                let (per_hour, lat) = match &def.scope {
                    Scope::TxType(t) => {
                        let t = lg.transactions.iter().find(|x| &x.name == t)?;
                        (t.transactions_per_hour, t.latency_ns.as_ref())
                    }
                    _ => (lg.transactions_per_hour, lg.latency_ns.as_ref()),
                };
                match def.stat {
                    Stat::TxPerHour => per_hour,
                    Stat::Mean => lat?.mean,
                    Stat::P50 => lat?.p50 as f64,
                    Stat::P99 => lat?.p99 as f64,
                    Stat::P999 => lat?.p999 as f64,
                    Stat::Max => lat?.max as f64,
                    _ => return None,
                }
            }
        },
    };
    v.is_finite().then_some(v)
}

/// Every metric the trials can provide, in display order (totals, read, write, service, CPU, depth, groups,
/// transactions). Read and write rows appear only when some trial had ops of that kind; group rows only
/// when some trial has more than one group (a single group repeats the totals).
pub(crate) fn metric_defs(all_trials: &[Vec<Trial<'_>>]) -> Vec<MetricDef> {
    let dbs = docs_of(all_trials, |t| if let Trial::Db(r) = t { Some(*r) } else { None });
    if !dbs.is_empty() {
        return db_metric_defs(&dbs);
    }
    let tpch = docs_of(all_trials, |t| if let Trial::Tpch(r) = t { Some(*r) } else { None });
    if !tpch.is_empty() {
        return tpch_metric_defs(&tpch);
    }
    let copies = docs_of(all_trials, |t| if let Trial::Copy(r) = t { Some(*r) } else { None });
    if !copies.is_empty() {
        return copy_metric_defs(&copies);
    }
    let fulls =
        || all_trials.iter().flatten().filter_map(|t| if let Trial::Full(r) = t { Some(*r) } else { None });
    let has_kind =
        |scope: &Scope, kind: Kind| fulls().any(|r| op_summary(r, scope, kind).is_some_and(|s| s.ops > 0));
    let op_block = |scope: Scope, defs: &mut Vec<MetricDef>| {
        let mut kinds = vec![Kind::All];
        kinds.extend([Kind::Read, Kind::Write].into_iter().filter(|&k| has_kind(&scope, k)));
        // Pure reads or pure writes: the kind's rows would repeat the "all" rows; keep them only for mixes.
        if kinds.len() == 2 {
            kinds.truncate(1);
        }
        for kind in kinds {
            for stat in [Stat::Iops, Stat::MbS, Stat::Mean, Stat::P50, Stat::P99, Stat::P999, Stat::Max] {
                defs.push(MetricDef { scope: scope.clone(), kind, stat });
            }
        }
        // Flushes and trims: their own rows when a side issued any (a flush moves no bytes: no MB/s).
        for kind in [Kind::Flush, Kind::Trim].into_iter().filter(|&k| has_kind(&scope, k)) {
            for stat in [Stat::Iops, Stat::Mean, Stat::P50, Stat::P99, Stat::P999, Stat::Max] {
                defs.push(MetricDef { scope: scope.clone(), kind, stat });
            }
        }
        defs.push(MetricDef { scope: scope.clone(), kind: Kind::All, stat: Stat::ServiceMean });
        if scope == Scope::Total {
            defs.push(MetricDef { scope: scope.clone(), kind: Kind::All, stat: Stat::CpuPerIo });
        }
        defs.push(MetricDef { scope, kind: Kind::All, stat: Stat::Depth });
    };
    let mut defs = Vec::new();
    op_block(Scope::Total, &mut defs);
    let mut groups: Vec<String> = Vec::new();
    for r in fulls() {
        for g in &r.groups {
            if !groups.contains(&g.name) {
                groups.push(g.name.clone());
            }
        }
    }
    if fulls().any(|r| r.groups.len() > 1) {
        for g in groups {
            op_block(Scope::Group(g), &mut defs);
        }
    }
    if fulls().any(|r| r.loadgen.is_some()) {
        let lat = [Stat::TxPerHour, Stat::Mean, Stat::P50, Stat::P99, Stat::P999, Stat::Max];
        for stat in lat {
            defs.push(MetricDef { scope: Scope::Tx, kind: Kind::All, stat });
        }
        let mut types: Vec<String> = Vec::new();
        for r in fulls() {
            for t in r.loadgen.iter().flat_map(|l| &l.transactions) {
                if !types.contains(&t.name) {
                    types.push(t.name.clone());
                }
            }
        }
        if types.len() > 1 {
            for t in types {
                for stat in [Stat::TxPerHour, Stat::Mean, Stat::P99] {
                    defs.push(MetricDef { scope: Scope::TxType(t.clone()), kind: Kind::All, stat });
                }
            }
        }
    }
    defs
}

/// The documents of one kind among every side's trials.
fn docs_of<'a, T>(all_trials: &[Vec<Trial<'a>>], pick: impl Fn(&Trial<'a>) -> Option<&'a T>) -> Vec<&'a T> {
    all_trials.iter().flatten().filter_map(pick).collect()
}

/// The metrics of database runs: NOPM and TPM; per transaction type its rate and response times; per device
/// that every run has (by role, else by name, [`device_keys`]) reads, writes and flushes, their time per
/// request, and the busy share.
fn db_metric_defs(dbs: &[&DbResult]) -> Vec<MetricDef> {
    let def = |scope: Scope, kind: Kind, stat: Stat| MetricDef { scope, kind, stat };
    let mut defs = vec![def(Scope::Db, Kind::All, Stat::Nopm), def(Scope::Db, Kind::All, Stat::Tpm)];
    let mut types: Vec<&str> = Vec::new();
    for t in dbs.iter().flat_map(|r| &r.run.transactions) {
        if !types.contains(&t.name.as_str()) {
            types.push(&t.name);
        }
    }
    for t in types {
        for stat in [Stat::PerMinute, Stat::Mean, Stat::P50, Stat::P95, Stat::P99, Stat::Max] {
            defs.push(def(Scope::DbTx(t.to_string()), Kind::All, stat));
        }
    }
    let devices: Vec<&[DeviceView]> = dbs.iter().map(|r| r.devices.as_slice()).collect();
    for key in device_keys(&devices) {
        device_defs(key, &mut defs);
    }
    defs
}

/// Per device: reads and writes (rate, MB/s, time per request), flushes (rate, time), the busy share.
fn device_defs(key: String, defs: &mut Vec<MetricDef>) {
    let def = |scope: Scope, kind: Kind, stat: Stat| MetricDef { scope, kind, stat };
    let scope = Scope::Device(key);
    for kind in [Kind::Read, Kind::Write] {
        for stat in [Stat::Iops, Stat::MbS, Stat::Mean] {
            defs.push(def(scope.clone(), kind, stat));
        }
    }
    defs.push(def(scope.clone(), Kind::Flush, Stat::Iops));
    defs.push(def(scope.clone(), Kind::Flush, Stat::Mean));
    defs.push(def(scope, Kind::All, Stat::Busy));
}

/// The metrics of tpch query sets: the total and the geometric mean of the query times, each query's time
/// (in the first set's order; a query not every side ran drops out where the values are gathered), and the
/// devices over the set.
fn tpch_metric_defs(sets: &[&TpchResult]) -> Vec<MetricDef> {
    let def = |scope: Scope, stat: Stat| MetricDef { scope, kind: Kind::All, stat };
    let mut defs = vec![def(Scope::Db, Stat::QueryTotal), def(Scope::Db, Stat::QueryGeomean)];
    let mut numbers: Vec<u32> = Vec::new();
    for q in sets.iter().flat_map(|r| &r.queries) {
        if !numbers.contains(&q.number) {
            numbers.push(q.number);
        }
    }
    defs.extend(numbers.into_iter().map(|n| def(Scope::Query(n), Stat::Time)));
    let devices: Vec<&[DeviceView]> = sets.iter().map(|r| r.devices.as_slice()).collect();
    for key in device_keys(&devices) {
        device_defs(key, &mut defs);
    }
    defs
}

/// The metrics of database copies: the time and the rate, then the source's devices and the
/// destination's, each matched by role as a tpcc run's are.
fn copy_metric_defs(copies: &[&CopyResult]) -> Vec<MetricDef> {
    let def = |stat: Stat| MetricDef { scope: Scope::Db, kind: Kind::All, stat };
    let mut defs = vec![def(Stat::CopyTime), def(Stat::MbS)];
    let sources: Vec<&[DeviceView]> = copies.iter().map(|r| r.source_devices.as_slice()).collect();
    for key in device_keys(&sources) {
        device_defs(format!("{COPY_SOURCE}{key}"), &mut defs);
    }
    let destinations: Vec<&[DeviceView]> = copies.iter().map(|r| r.destination_devices.as_slice()).collect();
    for key in device_keys(&destinations) {
        device_defs(format!("{COPY_DESTINATION}{key}"), &mut defs);
    }
    defs
}

/// The devices to compare across database runs (each run's device list): each role (`filesystem`,
/// `disk`, `member`) that every run has exactly one device of, so that a Gen 5 drive and a Gen 6 one under
/// the same file system compare although their names differ; then the devices of other roles that every
/// run has by name.
pub(crate) fn device_keys(runs: &[&[DeviceView]]) -> Vec<String> {
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

/// The merged response-time histogram of `trials` for a scope and kind; `None` when a trial is not a full
/// run, lacks its histograms, one does not decode, or the merged count disagrees with the op counts (then
/// the caller falls back to the mean of the trials).
pub(crate) fn merged_histogram(trials: &[Trial<'_>], scope: &Scope, kind: Kind) -> Option<LatencyHistogram> {
    let mut acc: Option<LatencyHistogram> = None;
    let mut ops = 0u64;
    for t in trials {
        if let (Trial::Db(r), Scope::DbTx(name)) = (t, scope) {
            let x = r.run.transactions.iter().find(|x| &x.name == name)?;
            ops = ops.saturating_add(x.committed + x.rolled_back);
            let h = LatencyHistogram::from_base64(&x.histogram).ok()?;
            match &mut acc {
                None => acc = Some(h),
                Some(a) => a.merge(&h),
            }
            continue;
        }
        let Trial::Full(r) = t else { return None };
        let hs = r.histograms.as_ref()?;
        let (read, write) = match scope {
            Scope::Total => (hs.read.as_ref(), hs.write.as_ref()),
            Scope::Group(g) => match hs.groups.get(g) {
                Some(gh) => (gh.read.as_ref(), gh.write.as_ref()),
                None => (None, None),
            },
            _ => return None,
        };
        ops = ops.saturating_add(op_summary(r, scope, kind).map_or(0, |s| s.ops));
        let parts = match kind {
            Kind::Read => [read, None],
            Kind::Write => [write, None],
            Kind::All => [read, write],
            // No merged histograms of flushes or trims are kept: the trials' mean stands.
            Kind::Flush | Kind::Trim => return None,
        };
        for p in parts.into_iter().flatten() {
            let h = LatencyHistogram::from_base64(p).ok()?;
            match &mut acc {
                None => acc = Some(h),
                Some(a) => a.merge(&h),
            }
        }
    }
    acc.filter(|h| h.count() == ops && ops > 0)
}

pub(crate) fn histogram_stat(h: &LatencyHistogram, stat: Stat) -> Option<f64> {
    let s = h.summary()?;
    Some(match stat {
        Stat::Mean => s.mean,
        Stat::P50 => s.p50 as f64,
        Stat::P95 => s.p95 as f64,
        Stat::P99 => s.p99 as f64,
        Stat::P999 => s.p999 as f64,
        Stat::Max => s.max as f64,
        _ => return None,
    })
}
