//! Issue 18: `iolab replay`. Timing on virtual time is exact (latencies and lag in closed form), on the real
//! clock the lag is bounded, and a recorded run replayed issues the same ops.

use crate::util::{iolab, tempdir};
use iolab_trace::{TraceHeader, TraceOp, TraceRecord, TraceWriter};
use serde_json::Value;
use std::path::Path;

/// Writes a binary trace of `records` on one target named `disk0`.
fn write_trace(path: &Path, records: &[TraceRecord]) {
    write_trace_on(path, &["disk0"], records);
}

/// Writes a binary trace of `records` on targets named `names`.
fn write_trace_on(path: &Path, names: &[&str], records: &[TraceRecord]) {
    let header =
        TraceHeader { targets: names.iter().map(|n| n.to_string()).collect(), ..TraceHeader::default() };
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

/// Every record of the trace at `p`.
fn read_trace(p: &Path) -> Vec<TraceRecord> {
    let mut t = iolab_trace::open(p.to_str().unwrap()).unwrap();
    let mut v = Vec::new();
    while let Some(x) = t.next_record().unwrap() {
        v.push(x);
    }
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
    assert_eq!((rp["records"].as_u64(), rp["replayed"].as_u64()), (Some(106), Some(105)), "{rp}");
    // Issue 27: the flush is replayed as a flush (it was skipped as "not_read_or_write").
    assert_eq!(rp["skipped"], serde_json::json!({"beyond_target": 1}));
    assert_eq!(r["total"]["flush"]["ops"], 1, "{}", r["total"]);
    assert_eq!(rp["speed"], "1x");
    // The clock's tick is the largest step dividing every time (the flush at 101.5 ms: 500 µs); the burst of
    // three shares one time.
    assert_eq!((rp["clock_tick_ns"].as_u64(), rp["most_at_one_time"].as_u64()), (Some(500_000), Some(3)));
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
    // Twice as fast: the same latencies, over half the time (the last op, the flush, at 101.5 ms / 2 + 100 µs).
    let fast = replay_json(&trace, &[&target[..], &["--speed", "2x"]].concat());
    assert_eq!(fast["replay"]["speed"], "2x");
    assert_eq!(fast["total"]["read"]["lat_ns"]["max"], 300_000);
    assert!((fast["measured_s"].as_f64().unwrap() - 0.05085).abs() < 1e-9, "{}", fast["measured_s"]);
    // As fast as one slot allows: closed loop, 105 ops of 100 µs back to back (the write-through device's flush
    // costs its latency too), no lag reported.
    let max = replay_json(&trace, &[&target[..], &["--speed", "max", "--qd", "1"]].concat());
    assert!(max["replay"]["lag_ns"].is_null());
    assert_eq!(max["total"]["all"]["lat_ns"]["max"], 100_000);
    assert!((max["measured_s"].as_f64().unwrap() - 0.0105).abs() < 1e-9, "{}", max["measured_s"]);
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
        let mut v: Vec<_> = read_trace(p).iter().map(|x| (x.op, x.offset, x.len)).collect();
        v.sort();
        v
    };
    let (a, b) = (ops(&first), ops(&second));
    assert!(a.len() > 1000, "{}", a.len());
    assert_eq!(r["replay"]["replayed"].as_u64(), Some(a.len() as u64));
    assert_eq!(a, b, "the replay issued other ops than the run");
}

#[test]
fn two_workers_issue_every_record_once_at_its_scheduled_time() {
    let dir = tempdir();
    let (trace, rec) = (dir.path().join("hand.iolabtrace"), dir.path().join("replayed.iolabtrace"));
    let records = hand_made();
    write_trace(&trace, &records);
    let target = ["--target", "sim:fixed,latency=100us,servers=1,size=16M", "--clock", "virtual"];
    let r =
        replay_json(&trace, &[&target[..], &["--workers", "2", "--trace", rec.to_str().unwrap()]].concat());
    let rp = &r["replay"];
    assert_eq!((rp["records"].as_u64(), rp["replayed"].as_u64()), (Some(106), Some(105)), "{rp}");
    assert_eq!(rp["lag_ns"]["max"], 0, "{rp}");
    assert_eq!(r["workers"].as_array().unwrap().len(), 2);
    // Recorded as issued: each replayable record once, submitted at its scheduled start (its trace time,
    // from the first op's: the trace starts at 0), the ops dealt over both workers in turn.
    let mut issued: Vec<(u64, u64, u64)> =
        read_trace(&rec).iter().map(|x| (x.start_ns, x.offset, x.len as u64)).collect();
    let mut wanted: Vec<(u64, u64, u64)> = records
        .iter()
        .filter(|x| matches!(x.op, TraceOp::Read | TraceOp::Write | TraceOp::Flush) && x.offset < 16 << 20)
        .map(|x| (x.start_ns, x.offset, x.len as u64))
        .collect();
    issued.sort();
    wanted.sort();
    assert_eq!(issued, wanted);
    let recs = read_trace(&rec);
    assert!(recs.iter().all(|x| x.submit_ns == Some(x.start_ns)), "an op was submitted late");
    let on = |w: u16| recs.iter().filter(|x| x.worker == w).count();
    assert_eq!((on(0), on(1)), (53, 52), "105 ops dealt in turn");
    // One device with one server shared by both workers: the burst of three still queues, 100/200/300 µs.
    assert_eq!(r["total"]["read"]["lat_ns"]["max"], 300_000);
    // One slot per worker: of the burst of three (dealt to workers 0, 1, 0), the third waits 100 µs for
    // worker 0's slot; on one worker the second and third wait 100 and 200 µs. The lags of both workers are
    // merged from their histograms: every op counted once, the largest kept.
    let lag = |workers: &str| {
        let r = replay_json(&trace, &[&target[..], &["--workers", workers, "--qd", "1"]].concat());
        let l = &r["replay"]["lag_ns"];
        (l["p50"].as_u64(), l["max"].as_u64())
    };
    // (p50: no lag, which the histogram bins as 1 ns.)
    assert_eq!(lag("2"), (Some(1), Some(100_000)));
    assert_eq!(lag("1"), (Some(1), Some(200_000)));
    // At max speed each worker keeps its own --qd: 105 ops of 100 µs on 2 servers, 53 and 52 back to back.
    let two_servers = "sim:fixed,latency=100us,servers=2,size=16M";
    let max = replay_json(
        &trace,
        &["--target", two_servers, "--clock", "virtual", "--workers", "2", "--speed", "max", "--qd", "1"],
    );
    assert_eq!(max["replay"]["replayed"], 105);
    assert!((max["measured_s"].as_f64().unwrap() - 0.0053).abs() < 1e-9, "{}", max["measured_s"]);
}

/// A trace of three devices `web/0`..`web/2`, ten 4 KiB reads on each, 1 ms apart.
fn three_devices(path: &Path) {
    let records: Vec<TraceRecord> = (0..30u64)
        .map(|i| TraceRecord::new(i * 1_000_000, TraceOp::Read, (i % 3) as u16, (i / 3) * 4096, 4096))
        .collect();
    write_trace_on(path, &["web/0", "web/1", "web/2"], &records);
}

#[test]
fn map_sends_each_named_device_to_its_target_and_skips_the_rest() {
    let dir = tempdir();
    let trace = dir.path().join("three.iolabtrace");
    three_devices(&trace);
    // By name and by index, two mappings in one flag: the targets' own commas stay theirs.
    let (slow, fast) = ("sim:fixed,latency=200us,size=1M", "sim:fixed,latency=50us,size=1M");
    let map = format!("web/0={slow},2={fast}");
    let out = iolab()
        .arg("replay")
        .arg(&trace)
        .args(["--map", &map, "--clock", "virtual", "--json", "-", "--no-save"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--map leaves out 'web/1' (10 records)"), "{stderr}");
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["replay"]["replayed"], 20);
    assert_eq!(r["replay"]["skipped"], serde_json::json!({"unmapped": 10}));
    // The result says which device went where, by the targets' names.
    let names: Vec<&str> =
        r["targets"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(r["replay"]["map"], serde_json::json!({"web/0": names[0], "web/2": names[1]}));
    let targets = r["targets"].as_array().unwrap();
    let lat = |i: usize| (targets[i]["read"]["ops"].as_u64(), targets[i]["read"]["lat_ns"]["max"].as_u64());
    assert_eq!((lat(0), lat(1)), ((Some(10), Some(200_000)), (Some(10), Some(50_000))), "{targets:?}");
}

#[test]
fn a_bad_map_or_workload_flag_is_quoted_and_creates_nothing() {
    let dir = tempdir();
    let trace = dir.path().join("three.iolabtrace");
    three_devices(&trace);
    let file = dir.path().join("never.dat");
    let file = format!("{}", file.display());
    let cases: [(Vec<String>, &str); 6] = [
        (vec!["--target".into(), file.clone(), "--bs".into(), "8K".into()], "'--bs 8K': a replay takes its workload from the trace"),
        (vec!["--map".into(), format!("web/7={file}")], "the trace has no device 'web/7'; its devices (name, or index) are 'web/0' (0), 'web/1' (1), 'web/2' (2)"),
        (vec!["--map".into(), "web/0".into()], "invalid value 'web/0' for '--map': expected DISK=TARGET"),
        (vec!["--map".into(), format!("0={file}"), "--map".into(), format!("web/0={file}")], "trace device 'web/0' is mapped twice"),
        (vec!["--map".into(), format!("0={file}"), "--target".into(), file.clone()], "both give the targets"),
        (vec!["--target".into(), file.clone(), "--workers".into(), "31".into()], "'--workers 31': the trace"),
    ];
    for (args, wanted) in cases {
        let out = iolab()
            .arg("replay")
            .arg(&trace)
            .args(&args)
            .args(["--size", "1M", "--no-save"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(wanted), "{args:?}: {stderr}");
        assert!(!Path::new(&file).exists(), "{args:?} created the target");
    }
}

#[test]
fn a_sweep_over_a_trace_replays_it_at_each_cache_size() {
    let dir = tempdir();
    let (trace, db) = (dir.path().join("loop.iolabtrace"), dir.path().join("results.db"));
    // Reads looping over 256 KiB (64 lines): a 256 KiB cache serves all but the first pass, 128 KiB none
    // (LRU under a loop), none at all without a cache.
    let records: Vec<TraceRecord> =
        (0..640u64).map(|i| TraceRecord::new(i * 10_000, TraceOp::Read, 0, (i % 64) * 4096, 4096)).collect();
    write_trace(&trace, &records);
    let sweep = || {
        let out = iolab()
            .arg("sweep")
            .args(["--replay", trace.to_str().unwrap(), "--target", "sim:fixed,latency=100us,size=16M"])
            .args(["--clock", "virtual", "--seed", "5", "--speed", "max", "--qd", "1"])
            .args(["--cache", "0,128K,256K", "--cache-policy", "lru", "--json", "-", "-q"])
            .args(["--db", db.to_str().unwrap()])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice::<Value>(&out.stdout).unwrap()
    };
    let doc = sweep();
    let points = doc["points"].as_array().unwrap();
    assert_eq!(points.len(), 3);
    let hits_misses: Vec<(u64, u64)> = points
        .iter()
        .map(|p| {
            let rp = &p["result"]["replay"];
            assert_eq!((rp["replayed"].as_u64(), rp["speed"].as_str()), (Some(640), Some("max")), "{rp}");
            let c = &p["result"]["cache"];
            (c["hits"].as_u64().unwrap_or(0), c["misses"].as_u64().unwrap_or(640))
        })
        .collect();
    assert_eq!(hits_misses, vec![(0, 640), (0, 640), (576, 64)]);
    // Closed loop at depth 1 on a 100 µs device: a miss costs 100 µs, so 64 ms without hits.
    let measured: Vec<f64> = points.iter().map(|p| p["result"]["measured_s"].as_f64().unwrap()).collect();
    assert!((measured[0] - 0.064).abs() < 1e-9 && (measured[1] - 0.064).abs() < 1e-9, "{measured:?}");
    assert!(measured[2] < 0.008, "{measured:?}");
    // Deterministic for the seed, and saved as one sweep in the catalog.
    assert_eq!(sweep()["points"][2]["result"]["total"], points[2]["result"]["total"]);
    let runs = iolab().args(["runs", "--db", db.to_str().unwrap()]).output().unwrap();
    let listed = String::from_utf8_lossy(&runs.stdout);
    assert_eq!(listed.matches("sweep").count(), 2, "{listed}");
}

#[test]
fn a_sweep_over_a_trace_sweeps_the_speed_and_refuses_the_trace_s_workload() {
    let dir = tempdir();
    let trace = dir.path().join("hand.iolabtrace");
    write_trace(&trace, &hand_made());
    let sweep = |args: &[&str]| {
        iolab()
            .arg("sweep")
            .args([
                "--target",
                "sim:fixed,latency=100us,servers=1,size=16M",
                "--clock",
                "virtual",
                "--no-save",
            ])
            .args(args)
            .output()
            .unwrap()
    };
    let t = trace.to_str().unwrap();
    let out = sweep(&["--replay", t, "--speed", "1x,2x", "--json", "-", "-q"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let measured: Vec<f64> = doc["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["result"]["measured_s"].as_f64().unwrap())
        .collect();
    // The last op (the flush) at 101.5 ms (1x) or 50.75 ms (2x), plus its 100 µs.
    assert!((measured[0] - 0.1016).abs() < 1e-9 && (measured[1] - 0.05085).abs() < 1e-9, "{measured:?}");
    assert_eq!(doc["points"][1]["params"]["speed"], "2x");
    for (args, wanted) in [
        (vec!["--replay", t, "--bs", "4K,8K"], "'--bs' sweeps 'bs', which '--replay"),
        (vec!["--replay", t, "--set", "read_pct=0,100"], "'--set read_pct' sweeps 'read_pct'"),
        (vec!["--replay", t, "--speed", "1x,fast"], "invalid value 'fast' for '--speed'"),
        (vec!["--speed", "1x,2x"], "'--speed' applies to a replay: give the trace with '--replay TRACE'"),
    ] {
        let out = sweep(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(wanted), "{args:?}: {stderr}");
    }
}

#[test]
fn spread_issues_records_sharing_a_tick_evenly_over_it() {
    // A trace in whole seconds: four reads at 0 s and four at 1 s. Issued together they queue on one 100 µs
    // server (100 to 400 µs); spread, each is issued a quarter second after the last and waits for nothing.
    let dir = tempdir();
    let trace = dir.path().join("seconds.iolabtrace");
    let records: Vec<TraceRecord> = (0..8u64)
        .map(|i| TraceRecord::new(i / 4 * 1_000_000_000, TraceOp::Read, 0, i * 4096, 4096))
        .collect();
    write_trace(&trace, &records);
    let target = ["--target", "sim:fixed,latency=100us,servers=1,size=1M", "--clock", "virtual"];
    let together = replay_json(&trace, &target);
    let rp = &together["replay"];
    assert_eq!(
        (rp["clock_tick_ns"].as_u64(), rp["most_at_one_time"].as_u64()),
        (Some(1_000_000_000), Some(4))
    );
    assert_eq!(rp["spread"], false);
    assert_eq!(together["total"]["read"]["lat_ns"]["max"], 400_000);
    let spread = replay_json(&trace, &[&target[..], &["--spread"]].concat());
    assert_eq!(spread["replay"]["spread"], true);
    assert_eq!(spread["replay"]["lag_ns"]["max"], 0);
    assert_eq!(spread["total"]["read"]["lat_ns"]["max"], 100_000);
    // The last op at 1 s + 3/4 s, plus its 100 µs.
    assert!((spread["measured_s"].as_f64().unwrap() - 1.7501).abs() < 1e-9, "{}", spread["measured_s"]);
}

/// Issue 24, item 8: nothing checked memory before a trace was loaded (10^7 records took 1.41 GB and aborted
/// under a 1.2 GB limit). The load's memory (records x bytes per record, from the file's size for an iolab
/// trace, as it grows for the others) is checked against MemAvailable first and refused with both figures.
#[test]
fn a_trace_bigger_than_memory_is_refused_before_it_is_loaded() {
    let dir = tempdir();
    let trace = dir.path().join("big.iolabtrace");
    let records: Vec<TraceRecord> = (0..200_000u64)
        .map(|i| TraceRecord::new(i * 1000, TraceOp::Read, 0, (i % 256) * 4096, 4096))
        .collect();
    write_trace(&trace, &records);
    let csv = dir.path().join("big.csv");
    let lines: String = (0..200_000u64).map(|i| format!("1,{},28,4096,{}\n", i, (i % 256) * 8)).collect();
    std::fs::write(&csv, format!("version,time,op,size,lbn\n{lines}")).unwrap();
    let meminfo = dir.path().join("meminfo");
    std::fs::write(&meminfo, "MemTotal: 65536 kB\nMemAvailable: 8192 kB\n").unwrap();
    for t in [&trace, &csv] {
        let out = iolab()
            .env("IOLAB_MEMINFO", &meminfo)
            .arg("replay")
            .arg(t)
            .args(["--target", "sim:fixed,latency=100us,size=1M", "--clock", "virtual", "--no-save"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(
            err.contains("needs") && err.contains("bytes a record") && err.contains("8.0 MiB is available"),
            "{err}"
        );
    }
    let v = replay_json(
        &trace,
        &["--target", "sim:fixed,latency=100us,size=1M", "--clock", "virtual", "--speed", "max"],
    );
    assert_eq!(v["replay"]["replayed"], 200_000);
}

/// Issue 27: a trace's discards are replayed as trims, and they make the replay a writing one: on a file iolab
/// did not make, the write gate asks for --overwrite as it does for a trace's writes.
#[test]
fn a_trace_s_discards_are_replayed_as_trims() {
    let dir = tempdir();
    let trace = dir.path().join("discards.iolabtrace");
    let mut v: Vec<TraceRecord> =
        (0..10u64).map(|i| TraceRecord::new(i * 1_000_000, TraceOp::Read, 0, i * 4096, 4096)).collect();
    v.push(TraceRecord::new(20_000_000, TraceOp::Discard, 0, 1 << 20, 1 << 20));
    write_trace(&trace, &v);
    let target = ["--target", "sim:fixed,latency=100us,servers=1,size=16M", "--clock", "virtual"];
    let r = replay_json(&trace, &target);
    assert_eq!(r["total"]["trim"]["ops"], 1, "{}", r["total"]);
    assert_eq!(r["total"]["trim"]["bytes"], 1 << 20);
    assert_eq!(r["replay"]["replayed"], 11);
    let file = dir.path().join("theirs.dat");
    std::fs::write(&file, vec![7u8; 16 << 20]).unwrap();
    let out = iolab()
        .arg("replay")
        .arg(&trace)
        .arg("--target")
        .arg(&file)
        .args(["-q", "--no-save"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("--overwrite"), "{err}");
}
