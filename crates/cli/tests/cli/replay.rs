//! Issue 18: `iolab replay`. Timing on virtual time is exact (latencies and lag in closed form), on the real
//! clock the lag is bounded, and a recorded run replayed issues the same ops.

use crate::util::{iolab, tempdir};
use iolab_trace::{TraceHeader, TraceOp, TraceRecord, TraceWriter};
use serde_json::Value;
use std::path::Path;

/// Writes a binary trace of `records` on one target named `disk0`.
fn write_trace(path: &Path, records: &[TraceRecord]) {
    let header = TraceHeader { targets: vec!["disk0".into()], ..TraceHeader::default() };
    let mut w = TraceWriter::new(std::fs::File::create(path).unwrap(), &header).unwrap();
    for r in records {
        w.write(r).unwrap();
    }
    w.finish().unwrap();
}

/// `iolab replay TRACE ARGS --json - -q`, asserting exit 0; the result.
fn replay_json(trace: &Path, args: &[&str]) -> Value {
    let out = iolab()
        .arg("replay")
        .arg(trace)
        .args(args)
        .args(["--json", "-", "-q", "--no-save"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// 100 reads 1 ms apart, then a burst of 3 at 100 ms, one write of 8 KiB, a flush and one op past 16 MiB.
fn hand_made() -> Vec<TraceRecord> {
    let mut v: Vec<TraceRecord> =
        (0..100u64).map(|i| TraceRecord::new(i * 1_000_000, TraceOp::Read, 0, i * 4096, 4096)).collect();
    for k in 0..3 {
        v.push(TraceRecord::new(100_000_000, TraceOp::Read, 0, k * 8192, 4096));
    }
    v.push(TraceRecord::new(101_000_000, TraceOp::Write, 0, 1 << 20, 8192));
    v.push(TraceRecord::new(101_500_000, TraceOp::Flush, 0, 0, 0));
    v.push(TraceRecord::new(102_000_000, TraceOp::Read, 0, 16 << 20, 4096));
    v
}

#[test]
fn virtual_time_replay_is_exact() {
    let dir = tempdir();
    let trace = dir.path().join("hand.iolabtrace");
    write_trace(&trace, &hand_made());
    let target = ["--target", "sim:fixed,latency=100us,servers=1,size=16M", "--clock", "virtual"];
    let r = replay_json(&trace, &target);
    let rp = &r["replay"];
    assert_eq!((rp["records"].as_u64(), rp["replayed"].as_u64()), (Some(106), Some(104)), "{rp}");
    assert_eq!(rp["skipped"], serde_json::json!({"beyond_target": 1, "not_read_or_write": 1}));
    assert_eq!(rp["speed"], "1x");
    // Scheduled from the trace clock: every op is submitted at its time (lag 0); alone on the device it takes
    // 100 µs, the burst of three queues behind one server: 100, 200, 300 µs.
    assert_eq!(rp["lag_ns"]["max"], 0);
    let read = &r["total"]["read"];
    assert_eq!(read["ops"], 103);
    assert_eq!(
        (read["lat_ns"]["min"].as_u64(), read["lat_ns"]["max"].as_u64()),
        (Some(100_000), Some(300_000))
    );
    let mean = read["lat_ns"]["mean"].as_f64().unwrap();
    assert!((mean - (101.0 * 100_000.0 + 500_000.0) / 103.0).abs() < 1.0, "{mean}");
    assert_eq!(
        (r["total"]["write"]["ops"].as_u64(), r["total"]["write"]["bytes"].as_u64()),
        (Some(1), Some(8192))
    );
    // Twice as fast: the same latencies, over half the time (the last op at 101 ms / 2 + 100 µs).
    let fast = replay_json(&trace, &[&target[..], &["--speed", "2x"]].concat());
    assert_eq!(fast["replay"]["speed"], "2x");
    assert_eq!(fast["total"]["read"]["lat_ns"]["max"], 300_000);
    assert!((fast["measured_s"].as_f64().unwrap() - 0.0506).abs() < 1e-9, "{}", fast["measured_s"]);
    // As fast as one slot allows: closed loop, 104 ops of 100 µs back to back, no lag reported.
    let max = replay_json(&trace, &[&target[..], &["--speed", "max", "--qd", "1"]].concat());
    assert!(max["replay"]["lag_ns"].is_null());
    assert_eq!(max["total"]["all"]["lat_ns"]["max"], 100_000);
    assert!((max["measured_s"].as_f64().unwrap() - 0.0104).abs() < 1e-9, "{}", max["measured_s"]);
}

#[test]
fn real_clock_replay_has_bounded_lag() {
    let dir = tempdir();
    let trace = dir.path().join("steady.iolabtrace");
    // 400 reads at 2,000 per second (200 ms).
    let records: Vec<TraceRecord> = (0..400u64)
        .map(|i| TraceRecord::new(i * 500_000, TraceOp::Read, 0, (i % 256) * 4096, 4096))
        .collect();
    write_trace(&trace, &records);
    let r = replay_json(&trace, &["--target", "mem:16M"]);
    assert_eq!(r["replay"]["replayed"], 400);
    assert_eq!(r["total"]["read"]["ops"], 400);
    // Generous: a debug build sharing two cores with the rest of the test suite is descheduled now and then
    // (alone, p99 is tens of microseconds).
    let p99 = r["replay"]["lag_ns"]["p99"].as_u64().unwrap();
    assert!(p99 < 25_000_000, "p99 replay lag {p99} ns");
    // Scheduled from the trace clock, the replay lasts the trace's 200 ms, not 200 ms plus the lags.
    let s = r["measured_s"].as_f64().unwrap();
    assert!((0.19..0.3).contains(&s), "{s}");
}

#[test]
fn a_recorded_run_replayed_issues_the_same_ops() {
    let dir = tempdir();
    let (first, second) = (dir.path().join("run.iolabtrace"), dir.path().join("replayed.iolabtrace"));
    let target = "sim:fixed,latency=50us,servers=4,size=32M";
    crate::util::run_json(&[
        "--target",
        target,
        "--clock",
        "virtual",
        "--qd",
        "8",
        "--rw",
        "randrw",
        "--bs",
        "4K/2:16K/1",
        "--duration",
        "100ms",
        "--trace",
        first.to_str().unwrap(),
    ]);
    let r =
        replay_json(&first, &["--target", target, "--clock", "virtual", "--trace", second.to_str().unwrap()]);
    let ops = |p: &Path| {
        let mut t = iolab_trace::open(p.to_str().unwrap()).unwrap();
        let mut v = Vec::new();
        while let Some(x) = t.next_record().unwrap() {
            v.push((x.op, x.offset, x.len));
        }
        v.sort();
        v
    };
    let (a, b) = (ops(&first), ops(&second));
    assert!(a.len() > 1000, "{}", a.len());
    assert_eq!(r["replay"]["replayed"].as_u64(), Some(a.len() as u64));
    assert_eq!(a, b, "the replay issued other ops than the run");
}
