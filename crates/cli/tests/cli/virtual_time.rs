//! Issue 24, item 9: virtual time takes no wall time. A run whose events are far apart in virtual time jumps
//! from one to the next: its wall time follows its events, never its virtual length. The bounds are generous
//! (a debug build on a loaded machine) and far below what stepping through the virtual time took.

use crate::util::{iolab, num, tempdir};
use iolab_trace::{TraceHeader, TraceOp, TraceRecord, TraceWriter};
use serde_json::Value;
use std::time::{Duration, Instant};

/// A hang guard, not a speed test: slept through, the trace would take three years and the run a month;
/// the old code took an hour and minutes. A loaded 2-core machine takes about 20 s in a debug build.
const WALL_LIMIT: Duration = Duration::from_secs(300);

/// `iolab ARGS --json - -q --no-save`, killed after [`WALL_LIMIT`]; the result and the wall time it took.
fn timed(args: &[&str]) -> (Value, Duration) {
    let started = Instant::now();
    let out =
        iolab().args(args).args(["--json", "-", "-q", "--no-save"]).timeout(WALL_LIMIT).output().unwrap();
    let took = started.elapsed();
    assert_eq!(out.status.code(), Some(0), "after {took:?}: {}", String::from_utf8_lossy(&out.stderr));
    (serde_json::from_slice(&out.stdout).unwrap(), took)
}

#[test]
fn a_trace_with_years_between_records_replays_at_once() {
    let dir = tempdir();
    let trace = dir.path().join("sparse.iolabtrace");
    let three_years: u64 = 3 * 365 * 86_400 * 1_000_000_000;
    let header = TraceHeader { targets: vec!["disk0".into()], ..TraceHeader::default() };
    let mut w = TraceWriter::new(std::fs::File::create(&trace).unwrap(), &header).unwrap();
    w.write(&TraceRecord::new(0, TraceOp::Read, 0, 0, 4096)).unwrap();
    w.write(&TraceRecord::new(three_years, TraceOp::Read, 0, 4096, 4096)).unwrap();
    w.finish().unwrap();
    let t = trace.to_str().unwrap();
    let (r, took) =
        timed(&["replay", t, "--target", "sim:fixed,latency=100us,size=1M", "--clock", "virtual"]);
    assert!(took < WALL_LIMIT, "{took:?}");
    assert_eq!(num(&r, "/total/read/ops"), 2.0);
    assert_eq!(num(&r, "/total/read/lat_ns/max"), 100_000.0);
    assert_eq!(num(&r, "/replay/lag_ns/max"), 0.0, "each op issued at its scheduled time");
    let measured = num(&r, "/measured_s");
    assert!((measured - (three_years as f64 / 1e9 + 1e-4)).abs() < 1e-3, "{measured}");
    assert!(r["timeseries"].as_array().is_some_and(|s| s.len() <= 4096), "the series stays bounded");
}

#[test]
fn a_month_of_virtual_time_at_one_op_a_second_takes_seconds() {
    let args =
        ["run", "--target", "sim:fixed,latency=100us", "--clock", "virtual", "-d", "720h", "--rate", "1"];
    let (r, took) = timed(&[&args[..], &["--seed", "1", "--ramp", "0s"]].concat());
    assert!(took < WALL_LIMIT, "{took:?}");
    let hours = 720.0 * 3600.0;
    assert_eq!(num(&r, "/measured_s"), hours);
    let ops = num(&r, "/total/all/ops");
    assert!((ops - hours).abs() <= 1.0, "{ops} ops at 1/s over {hours} s");
    assert_eq!(num(&r, "/total/all/lat_ns/mean"), 100_000.0);
    assert!(r["timeseries"].as_array().is_some_and(|s| !s.is_empty() && s.len() <= 4096));
}

/// Issue 24: on virtual time a run in which every op fails at once (an injected EIO on every I/O) never moved
/// its clock, so a timed run never ended. An op that never reaches the target takes 10 us.
#[test]
fn a_timed_virtual_run_in_which_every_op_fails_still_ends() {
    let out = crate::util::iolab()
        .args(["run", "--target", "sim:fixed,latency=100us,servers=8", "--clock", "virtual", "-d", "1s"])
        .args(["--ramp", "0", "--inject", "eio@1", "--no-save", "--json", "-", "-q"])
        .timeout(WALL_LIMIT)
        .output()
        .expect("spawn iolab");
    assert_eq!(out.status.code(), Some(1), "I/O errors: {}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(v["total"]["all"]["ops"].as_u64(), Some(0), "no op succeeded");
    assert!(v["errors"]["total"].as_u64().unwrap_or(0) > 0);
}
