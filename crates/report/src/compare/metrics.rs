//! The metrics of a comparison: what each side's trials offer (totals, read and write, groups, transactions),
//! their keys and labels, the `--metric` filter, and one trial's value of one metric (or the statistic of the
//! trials' merged histogram).

use iolab_stats::LatencyHistogram;

use super::document::{Better, Unit};
use super::input::CompareError;
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
}

/// The stat names `--metric` accepts (besides full keys and `read.`/`write.` prefixed names), with aliases.
const STAT_NAMES: [(&str, &str); 20] = [
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
        }
    }
    pub(crate) fn is_latency(self) -> bool {
        matches!(self, Stat::Mean | Stat::P50 | Stat::P99 | Stat::P999 | Stat::Max)
    }
    pub(crate) fn better(self) -> Better {
        match self {
            Stat::Iops | Stat::MbS | Stat::TxPerHour => Better::Higher,
            Stat::Depth => Better::Neither,
            _ => Better::Lower,
        }
    }
    pub(crate) fn unit(self) -> Unit {
        match self {
            Stat::Iops => Unit::Iops,
            Stat::MbS => Unit::MbS,
            Stat::Depth => Unit::Depth,
            Stat::TxPerHour => Unit::PerHour,
            _ => Unit::Ns,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Scope {
    Total,
    Group(String),
    Tx,
    TxType(String),
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
            Scope::TxType(t) => format!("txn.{t}."),
        };
        format!("{scope}{}{}", self.kind.key(), self.stat.key())
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
        }
    }
    pub(crate) fn scope_name(&self) -> String {
        match &self.scope {
            Scope::Total => "total".to_string(),
            Scope::Group(g) => format!("group:{g}"),
            Scope::Tx => "transactions".to_string(),
            Scope::TxType(t) => format!("transaction:{t}"),
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
            "@tx" => matches!(def.scope, Scope::Tx | Scope::TxType(_)),
            n => key == n || key.ends_with(&format!(".{n}")),
        })
    }
}

/// One trial as far as metrics go: a full run, or the headline numbers a multi-trial sweep point keeps.
#[derive(Clone, Copy)]
pub(crate) enum Trial<'a> {
    Full(&'a RunResult),
    Headline(&'a TrialMetrics),
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

/// The merged response-time histogram of `trials` for a scope and kind; `None` when a trial is not a full
/// run, lacks its histograms, one does not decode, or the merged count disagrees with the op counts (then
/// the caller falls back to the mean of the trials).
pub(crate) fn merged_histogram(trials: &[Trial<'_>], scope: &Scope, kind: Kind) -> Option<LatencyHistogram> {
    let mut acc: Option<LatencyHistogram> = None;
    let mut ops = 0u64;
    for t in trials {
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
        Stat::P99 => s.p99 as f64,
        Stat::P999 => s.p999 as f64,
        Stat::Max => s.max as f64,
        _ => return None,
    })
}
