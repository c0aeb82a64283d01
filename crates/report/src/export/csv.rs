//! CSV: a run's time series, a sweep's points, a find-max search's steps, a database sweep's user counts. A
//! comparison and a single database run have no CSV form.

use std::fmt::Write as _;

use super::{Exporter, Unsupported};
use crate::find_max::FindMaxResult;
use crate::model::RunResult;
use crate::mrc::MrcResult;
use crate::plugin::Document;
use crate::sweep::SweepResult;

/// The CSV exporter.
#[derive(Clone, Copy, Debug, Default)]
pub struct CsvExporter;

impl CsvExporter {
    /// The document as CSV, or [`Unsupported`] for a document without a CSV form.
    pub fn render(&self, doc: &dyn Document) -> Result<String, Unsupported> {
        doc.csv().ok_or(Unsupported { format: "csv", document: doc.kind().name() })
    }
}

impl Exporter for CsvExporter {
    type Error = Unsupported;

    fn export(&self, doc: &dyn Document) -> Result<String, Unsupported> {
        self.render(doc)
    }
}

/// Header of a database sweep's CSV: one row per user count; latencies in ns, device rates summed over
/// the devices under the database; `mark` is `knee` at the knee.
pub const DB_SWEEP_CSV_HEADER: &str = "users,nopm,tpm,new_order_p50_ns,new_order_p95_ns,new_order_p99_ns,retries,failed,consistent,device_read_iops,device_write_iops,device_flushes_per_s,partial,mark";

/// A database sweep as CSV: the header, then one line per point.
pub(crate) fn db_sweep(s: &crate::db_sweep::DbSweepResult) -> String {
    let mut out = String::from(DB_SWEEP_CSV_HEADER);
    out.push('\n');
    let knee = s.knee.as_ref().and_then(|k| k.point);
    for (i, p) in s.points.iter().enumerate() {
        let r = &p.result;
        let no = r.run.transactions.iter().find(|t| t.name == crate::db_sweep::KNEE_TRANSACTION);
        let lat = |f: fn(&iolab_stats::LatSummary) -> u64| {
            no.and_then(|t| t.latency_ns.as_ref()).map(|l| f(l).to_string()).unwrap_or_default()
        };
        let sum = |f: fn(&crate::db::DeviceView) -> f64| r.devices.iter().map(f).sum::<f64>();
        let _ = writeln!(
            out,
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            p.users,
            r.run.nopm,
            r.run.tpm,
            lat(|l| l.p50),
            lat(|l| l.p95),
            lat(|l| l.p99),
            r.run.transactions.iter().map(|t| t.retries).sum::<u64>(),
            r.run.transactions.iter().map(|t| t.failed).sum::<u64>(),
            r.consistent(),
            sum(|d| d.read_iops),
            sum(|d| d.write_iops),
            sum(|d| d.flushes_per_s),
            r.partial,
            if knee == Some(i) { "knee" } else { "" }
        );
    }
    out
}

/// Header of a run's CSV (its time series); the columns are the fields of `iolab_stats::TimePoint`.
pub const TIMESERIES_CSV_HEADER: &str =
    "t_s,interval_s,read_iops,write_iops,iops,mb_s,lat_mean_ns,lat_p99_ns,flush_iops,trim_iops";

/// A run as CSV: its time series, the header then one line per point.
pub(crate) fn run(r: &RunResult) -> String {
    let mut out = String::with_capacity(64 * (r.timeseries.len() + 1));
    out.push_str(TIMESERIES_CSV_HEADER);
    out.push('\n');
    // An interval in which no op succeeded has no latency: an empty cell.
    let opt = |v: Option<f64>| v.map(|x| format!("{x}")).unwrap_or_default();
    for p in &r.timeseries {
        let _ = writeln!(
            out,
            "{},{},{},{},{},{},{},{},{},{}",
            p.t_s,
            p.interval_s,
            p.read_iops,
            p.write_iops,
            p.iops,
            p.mb_s,
            opt(p.lat_mean_ns),
            opt(p.lat_p99_ns.map(|v| v as f64)),
            p.flush_iops,
            p.trim_iops
        );
    }
    out
}

/// Header of a sweep's CSV after the swept fields' columns.
pub const SWEEP_CSV_METRICS: &str = "index,trials,partial,iops,iops_ci95_low,iops_ci95_high,iops_cv,mb_s,\
lat_mean_ns,lat_p99_ns,lat_p99_ns_ci95_low,lat_p99_ns_ci95_high,requested_depth,achieved_depth,knee,max_p99,\
read_lat_mean_ns,cache_read_pct";

/// The sweep as CSV: one row per point, the swept fields (outermost first, as typed) then the metrics
/// (means over trials; confidence bounds and CV empty with one trial).
pub(crate) fn sweep(s: &SweepResult) -> String {
    let mut out = String::new();
    let keys: Vec<&str> = s.axes.iter().map(|a| a.key.as_str()).collect();
    for k in &keys {
        out.push_str(k);
        out.push(',');
    }
    out.push_str(SWEEP_CSV_METRICS);
    out.push('\n');
    let opt = |v: Option<f64>| v.map(|x| format!("{x}")).unwrap_or_default();
    for p in &s.points {
        for k in &keys {
            out.push_str(&csv_field(p.params.get(*k).map(String::as_str).unwrap_or("")));
            out.push(',');
        }
        let m = &p.summary;
        let row = [
            p.index.to_string(),
            m.n.to_string(),
            p.result.partial.to_string(),
            format!("{}", m.iops.mean),
            opt(m.iops.ci95_low),
            opt(m.iops.ci95_high),
            opt(m.iops.cv),
            format!("{}", m.mb_s.mean),
            opt(m.lat_mean_ns.as_ref().map(|x| x.mean)),
            opt(m.lat_p99_ns.as_ref().map(|x| x.mean)),
            opt(m.lat_p99_ns.as_ref().and_then(|x| x.ci95_low)),
            opt(m.lat_p99_ns.as_ref().and_then(|x| x.ci95_high)),
            p.result.depth.requested.to_string(),
            format!("{}", m.achieved_depth.mean),
            s.is_knee(p.index).to_string(),
            s.is_max_p99(p.index).to_string(),
            opt(m.read_lat_mean_ns.as_ref().map(|x| x.mean)),
            opt(m.cache_read_pct.as_ref().map(|x| x.mean)),
        ];
        out.push_str(&row.join(","));
        out.push('\n');
    }
    out
}

fn csv_field(v: &str) -> String {
    if v.contains([',', '"', '\n']) {
        format!("\"{}\"", v.replace('"', "\"\""))
    } else {
        v.to_string()
    }
}

/// Header of a find-max search's CSV.
pub const FIND_MAX_CSV_HEADER: &str = "step,value,pass,target_iops,achieved_iops,measured_s";

/// A find-max search as CSV: one line per step (value, pass, target and achieved IOPS, measured seconds).
pub(crate) fn find_max(f: &FindMaxResult) -> String {
    let mut out = format!("{FIND_MAX_CSV_HEADER}\n");
    let num = |v: Option<f64>| v.map_or(String::new(), |x| x.to_string());
    for (i, s) in f.steps.iter().enumerate() {
        let _ = writeln!(
            out,
            "{},{},{},{},{},{}",
            i + 1,
            s.value,
            s.pass,
            num(s.target_iops),
            num(s.achieved_iops),
            s.measured_s
        );
    }
    out
}

/// The header of an MRC's CSV: one row per point of every curve.
pub const MRC_CSV_HEADER: &str = "policy,method,sample_rate,cache_bytes,cache_objects,miss_ratio";

/// An MRC document's points, one row each, curve after curve.
pub(crate) fn mrc(m: &MrcResult) -> String {
    let mut out = format!("{MRC_CSV_HEADER}\n");
    let opt = |v: Option<u64>| v.map(|v| v.to_string()).unwrap_or_default();
    for c in &m.curves {
        for p in &c.points {
            let _ = writeln!(
                out,
                "{},{},{},{},{},{}",
                c.policy,
                c.method,
                c.sample_rate,
                opt(p.cache_bytes),
                opt(p.cache_objects),
                p.miss_ratio
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_quotes_values_with_commas() {
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("4k/60:8k/40"), "4k/60:8k/40");
    }
}
