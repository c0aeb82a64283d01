//! Machine-readable exporters: JSON (the `iolab.result/1` document) and the time series as CSV.

use std::fmt::Write as _;

use crate::model::RunResult;

/// Pretty-printed JSON of the whole result.
pub fn to_json(r: &RunResult) -> String {
    match serde_json::to_string_pretty(r) {
        Ok(s) => s,
        // Only non-string map keys or a failing Serialize impl can fail; RunResult has neither.
        Err(e) => unreachable!("RunResult serialisation failed: {e}"),
    }
}

/// Parses a result written by [`to_json`].
pub fn from_json(s: &str) -> Result<RunResult, serde_json::Error> {
    serde_json::from_str(s)
}

/// Header of [`timeseries_csv`]; the columns are the fields of `iolab_stats::TimePoint`.
pub const TIMESERIES_CSV_HEADER: &str =
    "t_s,interval_s,read_iops,write_iops,iops,mb_s,lat_mean_ns,lat_p99_ns";

/// The time series as CSV: the header, then one line per point.
pub fn timeseries_csv(r: &RunResult) -> String {
    let mut out = String::with_capacity(64 * (r.timeseries.len() + 1));
    out.push_str(TIMESERIES_CSV_HEADER);
    out.push('\n');
    for p in &r.timeseries {
        let _ = writeln!(
            out,
            "{},{},{},{},{},{},{},{}",
            p.t_s, p.interval_s, p.read_iops, p.write_iops, p.iops, p.mb_s, p.lat_mean_ns, p.lat_p99_ns
        );
    }
    out
}
