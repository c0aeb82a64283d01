//! The notes of an imported fio group (`measured_by.notes`): what differs from an iolab run and what fio's
//! report does not have. They are written from the parsed jobs alone, so this module knows nothing of how
//! `build` assembles the document around them.

use super::parse::{FioDir, FioJob};

/// Directions with ops whose `pick`ed latency has no summary.
fn missing(jobs: &[&FioJob], pick: fn(&FioDir) -> bool) -> bool {
    jobs.iter().flat_map(|j| [&j.read, &j.write, &j.trim]).any(|d| d.ops > 0 && !pick(d))
}

/// Notes on the latency fields.
fn latency_notes(jobs: &[&FioJob], out: &mut Vec<String>) {
    out.push(
        "lat_ns is fio's `lat` (from when fio issued each I/O, not from its intended start) and service_lat_ns \
         fio's `clat`; submission latency (`slat`) is not kept"
            .to_string(),
    );
    if missing(jobs, |d| d.lat.summary.is_some()) {
        out.push(
            "fio ran without lat_percentiles=1: no response-time percentiles, so lat_ns is empty; compare \
             service_lat_ns (clat) instead, or rerun fio with --lat_percentiles=1"
                .to_string(),
        );
    }
    if missing(jobs, |d| d.clat.summary.is_some()) {
        out.push(
            "fio reported no complete clat percentiles (50/90/95/99/99.9/99.99): service_lat_ns is left empty \
             rather than invented"
                .to_string(),
        );
    }
    if jobs.iter().any(|j| j.read.ops > 0 && j.write.ops > 0) {
        out.push(
            "fio reports reads and writes apart: `all` has no latency summary where both were done (percentiles \
             are never averaged or merged)"
                .to_string(),
        );
    }
}

/// Notes on the flush row (fio's `sync` section), when the group issued syncs.
fn sync_notes(jobs: &[&FioJob], out: &mut Vec<String>) {
    if jobs.iter().all(|j| j.sync.ops == 0) {
        return;
    }
    out.push(
        "flush is fio's `sync` section (fsync/fdatasync calls): its count is the latency's N (fio 3.33 reports \
         total_ios 0 for syncs), its latency runs from each sync's issue (as iolab's flush latency does), and \
         its IOPS is the count over the job's runtime (fio reports no rate for syncs)"
            .to_string(),
    );
    out.push(
        "fio issues each sync as it goes for the next I/O, so a job that ends exactly at its size has no sync \
         after its last write (fdatasync=1 over 1m of 4k writes: 255 syncs for 256 writes) unless end_fsync=1; \
         iolab flushes after its last write too"
            .to_string(),
    );
    if jobs.iter().any(|j| j.sync.ops > 0 && j.sync.lat.summary.is_none()) {
        out.push(
            "fio reported no complete sync percentiles (50/90/95/99/99.9/99.99): the flush row's latency is \
             left empty rather than invented"
                .to_string(),
        );
    }
}

/// Notes on how the group's job entries map to workers and totals.
fn job_notes(groupid: u64, jobs: &[&FioJob], out: &mut Vec<String>) {
    match jobs {
        [one] => {
            let n = one.opts.get("numjobs").and_then(|v| v.trim().parse::<u32>().ok()).unwrap_or(1);
            if n > 1 {
                out.push(format!(
                    "the job entry '{}' stands for {n} jobs (group_reporting): one worker here; requested depth is \
                     iodepth × numjobs",
                    one.name
                ));
            }
        }
        many => out.push(format!(
            "group {groupid} has {} fio job entries (fio ran without group_reporting): the total has no latency \
             summaries because percentiles are never averaged; rerun fio with --group_reporting for group \
             percentiles",
            many.len()
        )),
    }
    if jobs.iter().any(|j| j.opts.contains_key("rate") || j.opts.contains_key("rate_iops")) {
        out.push(
            "fio ran rate-limited (rate/rate_iops): its latency leaves out the queueing delay behind the rate \
             (coordinated omission); iolab's open-loop response time includes it. No open-loop `rate` section"
                .to_string(),
        );
    }
}

/// Every note of group `groupid`, one of the report's `groups` reporting groups; `seeded` when a job named
/// its `randseed`.
pub(crate) fn notes(groups: usize, groupid: u64, jobs: &[&FioJob], seeded: bool) -> Vec<String> {
    let mut out = Vec::new();
    latency_notes(jobs, &mut out);
    sync_notes(jobs, &mut out);
    job_notes(groupid, jobs, &mut out);
    if !seeded {
        out.push("no randseed option: fio's seed is not in its report; seed 0 here".to_string());
    }
    out.push(
        "measured_s is the longest read/write/trim runtime of the group; CPU is usr_cpu/sys_cpu × job_runtime of each \
         job (fio's main thread not included)"
            .to_string(),
    );
    let phase = if groups > 1 {
        format!(" (group {groupid} of {groups} stonewalled groups: after the earlier groups' runtimes)")
    } else {
        String::new()
    };
    out.push(format!("started_at is estimated from fio's report time and elapsed seconds{phase}"));
    out.push(
        "host, kernel, CPU model, CPU count and memory are not in fio's report ('unknown', 0); no time series, \
         histograms or warnings"
            .to_string(),
    );
    out
}
