//! Issue 18: `iolab trace show|convert|capture` and `iolab mrc`. The CloudPhysics sample trace lives outside
//! the repository (IOLAB_TRACE_SAMPLE, or /work/shared/traces/cloudphysics-sample.csv): the tests that need it
//! say `skipped:` and pass when it is missing.

use crate::util::{iolab, tempdir, LoopDev};
use serde_json::Value;

fn sample() -> Option<String> {
    let beside = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/traces/cloudphysics-sample.csv");
    let default = if std::path::Path::new(beside).exists() {
        beside.to_string()
    } else {
        "/work/shared/traces/cloudphysics-sample.csv".to_string()
    };
    let path = std::env::var("IOLAB_TRACE_SAMPLE").unwrap_or(default);
    if std::path::Path::new(&path).exists() {
        Some(path)
    } else {
        iolab_testkit::skip(format_args!(
            "the CloudPhysics sample trace is missing at {path} (set IOLAB_TRACE_SAMPLE)"
        ));
        None
    }
}

const FIO_LOG: &str = "fio version 2 iolog\n/dev/sdb add\n/dev/sdb open\n/dev/sdb read 0 8192\n/dev/sdb read 4096 4096\n/dev/sdb write 0 4096\n/dev/sdb read 12288 4096\n/dev/sdb read 1 2 3 4\n/dev/sdb read 0 8192\n/dev/sdb close\n";

#[test]
fn show_lists_records_totals_and_bad_lines() {
    let dir = tempdir();
    let log = dir.path().join("ops.log");
    std::fs::write(&log, FIO_LOG).unwrap();
    let out = iolab().args(["trace", "show", log.to_str().unwrap(), "--limit", "2"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("fio iolog v2") && text.contains("bad     1 records"), "{text}");
    assert!(text.contains("8: read takes OFFSET LENGTH"), "{text}");
    assert_eq!(text.lines().filter(|l| l.contains(",read,")).count(), 2, "{text}");
}

#[test]
fn convert_to_binary_and_back_to_csv_keeps_every_record() {
    let dir = tempdir();
    let log = dir.path().join("ops.log");
    std::fs::write(&log, FIO_LOG).unwrap();
    let bin = dir.path().join("ops.iolabtrace");
    let out = iolab()
        .args(["trace", "convert", log.to_str().unwrap(), "-o", bin.to_str().unwrap()])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("1 bad records") && stderr.contains("line 8"), "{stderr}");
    assert_eq!(&std::fs::read(&bin).unwrap()[..8], b"iolabtrc");
    let out = iolab().args(["trace", "convert", bin.to_str().unwrap(), "-o", "-"]).output().unwrap();
    let csv = String::from_utf8(out.stdout).unwrap();
    assert_eq!(csv.lines().count(), 6, "{csv}");
    assert!(csv.contains("0,,,write,0,4096,,0,/dev/sdb"), "{csv}");
}

#[test]
fn mrc_of_a_small_trace_as_json() {
    let dir = tempdir();
    let log = dir.path().join("ops.log");
    std::fs::write(&log, FIO_LOG).unwrap();
    let out = iolab()
        .args([
            "mrc",
            log.to_str().unwrap(),
            "--reads-only",
            "--sizes",
            "4k,8k,16k",
            "--policy",
            "lru,arc,s3-fifo",
        ])
        .args(["--json", "-"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["schema"], "iolab.mrc/1");
    // Reads: lines 0,1 | 1 | 3 | 0,1 -> references 0 1 1 3 0 1: 1 and 2 lines hit only the second 1; 4 lines
    // hit every reuse.
    assert_eq!(v["trace"]["references"], 6);
    let lru = &v["curves"][0];
    assert_eq!((lru["policy"].as_str(), lru["method"].as_str()), (Some("lru"), Some("exact")));
    let miss: Vec<f64> =
        lru["points"].as_array().unwrap().iter().map(|p| p["miss_ratio"].as_f64().unwrap()).collect();
    assert_eq!(miss, [5.0 / 6.0, 5.0 / 6.0, 3.0 / 6.0]);
    assert_eq!(v["curves"].as_array().unwrap().len(), 3);
}

#[test]
fn mrc_refuses_bad_flags_quoting_them() {
    let dir = tempdir();
    let log = dir.path().join("ops.log");
    std::fs::write(&log, FIO_LOG).unwrap();
    let log = log.to_str().unwrap();
    for (flags, quoted) in [
        (vec!["--sample", "2"], "--sample '2'"),
        (vec!["--sizes", "1k"], "'1k' is less than one 4096-byte line"),
        (vec!["--policy", "lfu"], "'lfu' is none of lru, arc, s3-fifo"),
        (vec!["--objects", "block"], "--objects 'block'"),
        (vec!["--line", "4KB"], "--line '4KB'"),
        (vec!["--writes", "allocate"], "--writes 'allocate': expected 'count', 'install' or 'ignore'"),
    ] {
        let out = iolab().arg("mrc").arg(log).args(&flags).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{flags:?}: {stderr}");
        assert!(stderr.contains(quoted), "{flags:?}: {stderr}");
    }
    let not_a_trace = dir.path().join("notes.txt");
    std::fs::write(&not_a_trace, "dear diary\n").unwrap();
    let out = iolab().args(["mrc", not_a_trace.to_str().unwrap()]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr.contains("not a trace iolab reads") && stderr.contains("\"dear diary\""), "{stderr}");
}

#[test]
fn mrc_of_the_sample_matches_libcachesim_and_recommends_a_size() {
    let Some(path) = sample() else { return };
    let out = iolab()
        .args(["mrc", &path, "--objects", "request", "--exact", "--sizes", "1,2,3,4,5,20", "--json", "-"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let got: Vec<f64> = v["curves"][0]["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["miss_ratio"].as_f64().unwrap())
        .collect();
    for (g, want) in got.iter().zip([0.976421, 0.970607, 0.965681, 0.959024, 0.956934, 0.927015]) {
        assert!((g - want).abs() < 5e-7, "{g} vs libCacheSim's {want}");
    }
    let out = iolab().args(["mrc", &path, "--reads-only"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("cache would serve") && text.contains("of reads"), "{text}");
}

#[test]
fn capture_records_a_loop_device_or_is_refused_clearly() {
    let dir = tempdir();
    let out_file = dir.path().join("cap.iolabtrace");
    let dev = match LoopDev::new(8, None) {
        Ok(d) => d,
        Err(why) => {
            // Not root: a plain file is no block device, which is said before anything else.
            iolab_testkit::skip(format_args!("no loop device ({why}); checking the refusal of a file"));
            let f = dir.path().join("f");
            std::fs::write(&f, b"x").unwrap();
            let out = iolab()
                .args(["trace", "capture", "--device", f.to_str().unwrap(), "--duration", "1s", "-o"])
                .arg(&out_file)
                .output()
                .unwrap();
            assert_eq!(out.status.code(), Some(2));
            assert!(String::from_utf8_lossy(&out.stderr).contains("is not a block device"));
            return;
        }
    };
    let writer = {
        let dev = dev.dev.clone();
        std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(800));
            let _ = std::process::Command::new("dd")
                .args([&format!("of={dev}"), "if=/dev/zero", "bs=4k", "count=16", "oflag=direct"])
                .output();
        })
    };
    // tracefs is mounted in a private mount namespace of the test's own (unshare -m), so nothing changes
    // for the rest of the machine; where that is refused, iolab's own refusal is what is checked.
    let script = format!(
        "mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null; exec {} trace capture --device {} --duration 2s -o {}",
        env!("CARGO_BIN_EXE_iolab"),
        dev.dev,
        out_file.display()
    );
    let out = std::process::Command::new("unshare").args(["-m", "sh", "-c", &script]).output();
    writer.join().unwrap();
    let Ok(out) = out else {
        iolab_testkit::skip(format_args!("no unshare to mount tracefs privately"));
        return;
    };
    let stderr = String::from_utf8_lossy(&out.stderr);
    if out.status.code() != Some(0) && !out_file.exists() {
        assert!(
            stderr.contains("block tracing is unavailable") || stderr.contains("unshare"),
            "neither a capture nor a clear refusal: {stderr}"
        );
        iolab_testkit::skip(format_args!("{stderr}"));
        return;
    }
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let show = iolab().args(["trace", "show"]).arg(&out_file).output().unwrap();
    let text = String::from_utf8_lossy(&show.stdout);
    assert!(text.contains("write"), "the 16 writes were not captured:\n{text}");
}

/// Issue 36, item 9: as root on a host where tracefs is not mounted, `trace capture` mounts it (as
/// trace-cmd does) and unmounts it when done. Tried in a private mount namespace (unshare -m) with tracefs
/// and debugfs unmounted there, so nothing changes for the rest of the machine.
#[test]
fn capture_mounts_tracefs_where_it_is_not_and_unmounts_it_after() {
    let dir = tempdir();
    let out_file = dir.path().join("cap.iolabtrace");
    let dev = match LoopDev::new(8, None) {
        Ok(d) => d,
        Err(why) => return iolab_testkit::skip(why),
    };
    let script = format!(
        "umount /sys/kernel/tracing 2>/dev/null; umount /sys/kernel/debug 2>/dev/null; \
         if grep -q tracefs /proc/self/mountinfo; then echo 'still mounted'; exit 3; fi; \
         {} trace capture --device {} --duration 1s -o {} || exit $?; \
         if grep -q tracefs /proc/self/mountinfo; then echo 'left mounted'; exit 4; fi",
        env!("CARGO_BIN_EXE_iolab"),
        dev.dev,
        out_file.display()
    );
    let Ok(out) = std::process::Command::new("unshare").args(["-m", "sh", "-c", &script]).output() else {
        return iolab_testkit::skip(format_args!("no unshare to unmount tracefs privately"));
    };
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    if out.status.code() == Some(3) || stderr.contains("unshare:") {
        return iolab_testkit::skip(format_args!(
            "tracefs cannot be unmounted privately here: {stdout}{stderr}"
        ));
    }
    if stderr.contains("mounting it at /sys/kernel/tracing failed") {
        return iolab_testkit::skip(format_args!("tracefs cannot be mounted here: {stderr}"));
    }
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    assert!(out_file.exists(), "no trace written: {stderr}");
}

/// Reads every record of an iolab trace, with its target names.
fn read_trace(path: &std::path::Path) -> (Vec<String>, Vec<iolab_trace::TraceRecord>) {
    let mut t = iolab_trace::open(path.to_str().unwrap()).unwrap();
    let mut records = Vec::new();
    while let Some(r) = t.next_record().unwrap() {
        records.push(r);
    }
    (t.targets().to_vec(), records)
}

#[test]
fn run_with_trace_records_every_op_and_the_window_is_identifiable() {
    let dir = tempdir();
    let trace = dir.path().join("run.iolabtrace");
    // Two workers on virtual time, 70 % reads: 4 ops in flight each, 100 µs per op on 2 servers.
    let r = crate::util::run_json(&[
        "--target",
        "sim:fixed,latency=100us,servers=2,size=16M",
        "--clock",
        "virtual",
        "--workers",
        "2",
        "--qd",
        "4",
        "--rw",
        "randrw",
        "--read-pct",
        "70",
        "--bs",
        "4K",
        "--ramp",
        "50ms",
        "--duration",
        "200ms",
        "--trace",
        trace.to_str().unwrap(),
    ]);
    let (targets, records) = read_trace(&trace);
    assert_eq!(targets, ["sim:fixed,latency=100us,servers=2,size=16M"]);
    let ops = |k: &str| r["total"][k]["ops"].as_u64().unwrap();
    // The result's ops are the records completed in [ramp, ramp + duration) from each worker's start.
    let (ramp, end) = (50_000_000, 250_000_000);
    let in_window: Vec<_> =
        records.iter().filter(|x| (ramp..end).contains(&x.complete_ns.unwrap())).collect();
    let count = |op| in_window.iter().filter(|x| x.op == op).count() as u64;
    assert_eq!(count(iolab_trace::TraceOp::Read), ops("read"));
    assert_eq!(count(iolab_trace::TraceOp::Write), ops("write"));
    // The ramp's ops are there too, and the few drained after the end.
    assert!(records.len() as u64 > ops("read") + ops("write"));
    for x in &records {
        let (s, sub, c) = (x.start_ns, x.submit_ns.unwrap(), x.complete_ns.unwrap());
        assert!(s <= sub && sub + 100_000 <= c, "{x:?}");
        assert_eq!((x.len, x.result, x.target), (4096, Some(4096), 0), "{x:?}");
        assert!(x.offset % 4096 == 0 && x.offset < 16 << 20 && x.worker < 2, "{x:?}");
    }
    // The CSV shows the same records.
    let out = iolab().args(["trace", "show", trace.to_str().unwrap(), "--limit", "1"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("clock virtual") && text.contains(&format!("records {}", fmt_count(records.len()))),
        "{text}"
    );
}

/// 12345 as "12,345".
fn fmt_count(n: usize) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[test]
fn a_trace_not_written_keeps_the_result_and_exits_3() {
    // A file size limit (RLIMIT_FSIZE, SIGXFSZ ignored so a write past it fails with EFBIG) lets the 11 KiB
    // result and the catalog be written but not the 4.8 MB trace: deterministic, and no root needed.
    let dir = tempdir();
    let (trace, json, db) =
        (dir.path().join("t.iolabtrace"), dir.path().join("r.json"), dir.path().join("r.db"));
    let out = std::process::Command::new("sh")
        .args(["-c", "trap '' XFSZ; ulimit -f 1024; exec \"$@\"", "sh"])
        .arg(assert_cmd::cargo::cargo_bin("iolab"))
        .args(["run", "--target", "sim:fixed,latency=10us,servers=4,size=64M", "--clock", "virtual"])
        .args(["--qd", "8", "--ios", "100000", "-q", "--trace", trace.to_str().unwrap()])
        .args(["--json", json.to_str().unwrap(), "--db", db.to_str().unwrap()])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("writing the trace") && stderr.contains("the run's result is kept"), "{stderr}");
    let r: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(r["total"]["all"]["ops"], 100_000);
    // Nothing half-written at the trace's path or beside it; the run is in the catalog.
    assert_eq!(crate::util::entries(dir.path()).iter().filter(|e| e.contains("iolabtrace")).count(), 0);
    let runs = iolab().args(["runs", "--db", db.to_str().unwrap()]).output().unwrap();
    assert!(
        String::from_utf8_lossy(&runs.stdout).contains("sim:fixed"),
        "{}",
        String::from_utf8_lossy(&runs.stdout)
    );
}

#[test]
fn a_sweep_with_trace_writes_one_file_per_point() {
    let dir = tempdir();
    let trace = dir.path().join("sweep.iolabtrace");
    let out = iolab()
        .arg("sweep")
        .args(crate::util::SIM)
        .args(["--qd", "1,2", "--ios", "100", "--no-save", "-q", "--trace", trace.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!trace.exists(), "the sweep wrote the path itself");
    for (point, qd) in [("p01", 1), ("p02", 2)] {
        let (_, records) = read_trace(&dir.path().join(format!("sweep.{point}.iolabtrace")));
        assert!(records.len() >= 100, "{point}: {}", records.len());
        // qd 1: each op submitted after the previous completed; qd 2 overlaps them.
        let overlapping = records.windows(2).any(|w| w[1].submit_ns < w[0].complete_ns);
        assert_eq!(overlapping, qd > 1, "{point}");
    }
}

#[test]
fn find_max_steps_each_record_their_own_trace() {
    let dir = tempdir();
    let (json, trace) = (dir.path().join("fm.json"), dir.path().join("fm.iolabtrace"));
    let out = iolab()
        .args(["run", "--profile", "exchange-2010", "--target", "sim:fixed,latency=5ms,servers=4"])
        .args(["--clock", "virtual", "--seed", "1", "-d", "2s", "--ramp", "0s", "--iops-per-mailbox", "1"])
        .args(["--mailboxes", "1000", "--find-max", "--find-max-resolution", "20", "--no-save", "-q"])
        .arg("--json")
        .arg(&json)
        .arg("--trace")
        .arg(&trace)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let steps = doc["steps"].as_array().unwrap().len();
    assert!(steps >= 2, "{doc}");
    let mut want: Vec<String> = (1..=steps).map(|s| format!("fm.s{s:02}.iolabtrace")).collect();
    want.insert(0, "fm.json".into());
    assert_eq!(crate::util::entries(dir.path()), want);
    for s in 1..=steps {
        let (_, records) = read_trace(&dir.path().join(format!("fm.s{s:02}.iolabtrace")));
        assert!(!records.is_empty(), "step {s}");
    }
}

/// Issue 24, item 8: `iolab mrc --exact` on 200 records of 4 GiB each allocated until it aborted. What each
/// record will make the curve hold is estimated before it is added and refused past MemAvailable (here a
/// fake one of 256 MiB), naming both; a trace that fits still gives its curve.
#[test]
fn mrc_memory_is_checked_before_each_record_is_added() {
    use iolab_trace::{TraceHeader, TraceOp, TraceRecord, TraceWriter};
    let dir = tempdir();
    let meminfo = dir.path().join("meminfo");
    std::fs::write(&meminfo, "MemTotal: 1048576 kB\nMemAvailable: 262144 kB\n").unwrap();
    let write = |name: &str, records: u64, len: u32| {
        let path = dir.path().join(name);
        let header = TraceHeader { targets: vec!["d".into()], ..TraceHeader::default() };
        let mut w = TraceWriter::new(std::fs::File::create(&path).unwrap(), &header).unwrap();
        for i in 0..records {
            w.write(&TraceRecord::new(i, TraceOp::Read, 0, i * (4 << 30), len)).unwrap();
        }
        w.finish().unwrap();
        path
    };
    let huge = write("huge.trace", 200, u32::MAX);
    for method in [&["--exact"][..], &[], &["--sample", "0.5"]] {
        let out = iolab()
            .env("IOLAB_MEMINFO", &meminfo)
            .arg("mrc")
            .arg(&huge)
            .args(method)
            .args(["--policy", "lru,arc"])
            .timeout(std::time::Duration::from_secs(60))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{method:?}: {err}");
        assert!(err.contains("huge.trace") && err.contains("needs up to"), "{err}");
        assert!(err.contains("only 0.25 GiB is available (MemAvailable)"), "{err}");
    }
    let small = write("small.trace", 200, 64 << 10);
    let out = iolab()
        .env("IOLAB_MEMINFO", &meminfo)
        .args(["mrc", small.to_str().unwrap(), "--exact", "--json", "-"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["trace"]["objects"], 200 * 16);
}

/// Issue 25, item 13: `s3-fifo` is the paper's (2-bit frequencies), as libCacheSim implements it: on the
/// sample at 256 MiB libCacheSim gives a miss ratio of 0.6889-0.6905; the 1-bit variant, iolab's `s3-fifo`
/// before, gave 0.7115 and is still there by name.
#[test]
fn s3_fifo_is_the_papers_and_matches_libcachesim_on_the_sample() {
    let Some(trace) = sample() else { return };
    let out = iolab()
        .args([
            "mrc",
            &trace,
            "--exact",
            "--sizes",
            "256M",
            "--policy",
            "s3-fifo,s3-fifo-1bit",
            "--json",
            "-",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let ratio = |policy: &str| {
        let c = v["curves"].as_array().unwrap().iter().find(|c| c["policy"] == policy).unwrap();
        c["points"][0]["miss_ratio"].as_f64().unwrap()
    };
    let paper = ratio("s3-fifo");
    assert!((0.6885..=0.6910).contains(&paper), "s3-fifo at 256 MiB: {paper}");
    assert!((ratio("s3-fifo-1bit") - 0.7115).abs() < 0.0005, "the 1-bit variant as before");
}
