//! Runs another tool measured (fio results imported with `iolab import fio-result`, marked by
//! [`crate::MeasuredBy`]): which sides hold them, and where the tools' definitions differ, as notes of the
//! comparison (printed by every rendering, stored in the JSON).

use super::document::side_letter;
use super::input::{Side, SideDocs};
use crate::model::RunResult;

/// Where fio's definitions differ from iolab's: the notes a comparison with a fio-measured side carries (also
/// in docs/FIO.md, "fio results").
pub const FIO_DEFINITION_NOTES: [&str; 4] = [
    "latency: iolab's response time runs from each I/O's intended start; fio's `lat` runs from when fio issued \
     the I/O, so in open loop (fio rate/rate_iops) fio leaves out the queueing delay (coordinated omission) \
     and its latency can look better than iolab's for the same load",
    "service latency: iolab's service time (submission -> completion) is close to fio's `clat`; a fio run has \
     response-time percentiles only when fio ran with lat_percentiles=1",
    "CPU: iolab counts the whole process (all workers and threads); fio's usr_cpu/sys_cpu are per job and leave \
     out fio's own main thread",
    "percentiles: fio's come from its own histogram bins (about 1-3% resolution), iolab's from HDR histograms \
     (0.1%); differences of a few percent in a percentile are not meaningful",
];

/// The runs of a side (a sweep's points' runs).
fn side_runs(s: &Side) -> Vec<&RunResult> {
    match &s.docs {
        SideDocs::Runs(r) => r.iter().collect(),
        SideDocs::Sweeps(w) => w.iter().flat_map(|w| w.points.iter().map(|p| &p.result)).collect(),
        SideDocs::Db(_) | SideDocs::DbSweeps(_) | SideDocs::Tpch(_) | SideDocs::Copy(_) => Vec::new(),
    }
}

/// Notes for the sides measured by another tool: one per such side (which tool and version), then, once, where
/// the definitions differ. Empty when iolab measured every run.
pub(crate) fn foreign_notes(sides: &[Side]) -> Vec<String> {
    let mut notes = Vec::new();
    for (i, s) in sides.iter().enumerate() {
        let runs = side_runs(s);
        let mut tools: Vec<String> = Vec::new();
        for m in runs.iter().filter_map(|r| r.measured_by.as_ref()) {
            let t = format!("{} ({})", m.tool, m.version);
            if !tools.contains(&t) {
                tools.push(t);
            }
        }
        if tools.is_empty() {
            continue;
        }
        let all = runs.iter().all(|r| r.measured_by.is_some());
        notes.push(format!(
            "side {} ('{}'): {} measured by {}, not by iolab",
            side_letter(i),
            s.source,
            if all { "runs" } else { "some runs" },
            tools.join(", ")
        ));
    }
    if !notes.is_empty() {
        notes.extend(FIO_DEFINITION_NOTES.iter().map(|n| n.to_string()));
    }
    notes
}
