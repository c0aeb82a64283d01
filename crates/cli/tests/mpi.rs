//! Several hosts, one run: `iolab` under `mpirun` on this machine (2 and 4 ranks, one over TCP). Built and
//! run only with `--features mpi` (`cargo test -p iolab --features mpi --test mpi`); each test skips,
//! printing `skipped: <reason>`, when `mpirun` is not installed.
//!
//! Exactness is checked on emulated devices on virtual time: every rank runs its own timeline, so a rank's
//! part of the run is exactly what a single-host run with that rank's seed (`iolab_run::rank_seed`) gives,
//! and the merged histogram must be the bucket-by-bucket merge of those.

use iolab_stats::LatencyHistogram;
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_iolab");

/// `mpirun` on this machine as root and with more ranks than cores, as CI runs it; `None` without mpirun.
fn mpirun(np: u32, extra_mca: &[&str], args: &[&str]) -> Option<Output> {
    if Command::new("mpirun").arg("--version").output().is_err() {
        iolab_testkit::skip(format_args!("mpirun is not installed"));
        return None;
    }
    let mut c = Command::new("mpirun");
    c.args(["--allow-run-as-root", "--oversubscribe", "-np", &np.to_string()]);
    c.args(extra_mca).arg(BIN).args(args);
    c.env("IOLAB_MPI_TIMEOUT", "20");
    Some(c.output().expect("mpirun runs"))
}

fn json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("result written")).expect("JSON")
}

fn single(dir: &Path, seed: u64, args: &[&str]) -> Value {
    let out = dir.join(format!("single-{seed}.json"));
    let s = seed.to_string();
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["--seed", &s, "--json", out.to_str().unwrap(), "--no-save", "-q"]);
    let o = Command::new(BIN).args(&all).output().unwrap();
    assert!(o.status.code().is_some_and(|c| c <= 1), "{}", String::from_utf8_lossy(&o.stderr));
    json(&out)
}

fn histogram(v: &Value) -> LatencyHistogram {
    LatencyHistogram::from_base64(v.as_str().expect("a histogram")).expect("iolab-hdr/1")
}

/// Emulated SSDs (seeded random service times) on virtual time: exact and deterministic per rank.
const SIM: &[&str] = &["run", "--target", "sim:ssd", "--clock", "virtual", "--duration", "1s", "-w", "2"];

#[test]
fn two_ranks_merge_exactly_into_one_result_with_a_row_per_host() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("mpi.json");
    let mut args: Vec<&str> = SIM.to_vec();
    args.extend(["--seed", "7", "--json", out.to_str().unwrap(), "--no-save"]);
    let Some(o) = mpirun(2, &[], &args) else { return };
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // Only rank 0 prints: one text summary.
    assert_eq!(String::from_utf8_lossy(&o.stdout).matches("iolab 0.").count(), 1);
    let merged = json(&out);
    let ranks: Vec<Value> = (0..2).map(|r| single(dir.path(), iolab_run::rank_seed(7, r), SIM)).collect();
    let ops = |v: &Value| v["total"]["all"]["ops"].as_u64().unwrap();
    assert_eq!(ops(&merged), ops(&ranks[0]) + ops(&ranks[1]));
    let hosts = merged["hosts"].as_array().expect("hosts[]");
    assert_eq!(hosts.len(), 2);
    for (h, r) in hosts.iter().zip(&ranks) {
        assert_eq!(h["total"]["all"]["ops"], r["total"]["all"]["ops"]);
    }
    // The merged histogram is the bucket-by-bucket merge of the ranks' (never averaged percentiles).
    let mut expect = histogram(&ranks[0]["histograms"]["read"]);
    expect.merge(&histogram(&ranks[1]["histograms"]["read"]));
    assert_eq!(merged["histograms"]["read"].as_str().unwrap(), expect.to_base64());
    let s = expect.summary().expect("reads");
    assert_eq!(merged["total"]["read"]["lat_ns"]["p99"].as_u64().unwrap(), s.p99);
    assert_eq!(merged["workers"].as_array().unwrap().len(), 4, "workers numbered across ranks");
    assert_eq!(merged["ranks"]["size"], 2);
}

#[test]
fn four_ranks_over_tcp_each_with_its_own_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("mpi.json");
    let target = format!("{}/f.{{rank}}.of.{{size}}", dir.path().display());
    let args = [
        "run",
        "--target",
        &target,
        "--size",
        "1M",
        "--duration",
        "1s",
        "--bs",
        "4k",
        "--rw",
        "randwrite",
        "--json",
        out.to_str().unwrap(),
        "--no-save",
    ];
    let Some(o) = mpirun(4, &["--mca", "btl", "tcp,self"], &args) else { return };
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for r in 0..4 {
        assert!(dir.path().join(format!("f.{r}.of.4")).exists(), "rank {r}'s file");
    }
    let merged = json(&out);
    let hosts = merged["hosts"].as_array().unwrap();
    assert_eq!(hosts.len(), 4);
    let sum: u64 = hosts.iter().map(|h| h["total"]["all"]["ops"].as_u64().unwrap()).sum();
    assert_eq!(merged["total"]["all"]["ops"].as_u64().unwrap(), sum);
    assert!(merged["ranks"]["start_skew_s"].as_f64().unwrap() < 0.5);
}

#[test]
fn a_rank_that_cannot_open_its_target_fails_the_run_on_every_rank_leaving_nothing() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("d0")).unwrap();
    // Rank 1's directory is not there.
    let target = format!("{}/d{{rank}}/f", dir.path().display());
    let args = ["run", "--target", &target, "--size", "1M", "--duration", "1s", "--no-save"];
    let t = Instant::now();
    let Some(o) = mpirun(2, &[], &args) else { return };
    assert!(t.elapsed() < Duration::from_secs(15), "failed in {:?}", t.elapsed());
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("rank 1 (host "), "{err}");
    assert!(err.contains("d1"), "{err}");
    assert!(!dir.path().join("d0/f").exists(), "rank 0 created nothing");
}

#[test]
fn open_loop_rates_are_totals_split_over_ranks() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("mpi.json");
    let args = [
        "run",
        "--target",
        "sim:fixed,latency=100us,servers=8",
        "--clock",
        "virtual",
        "--duration",
        "2s",
        "--rate",
        "1000",
        "--seed",
        "1",
        "--json",
        out.to_str().unwrap(),
        "--no-save",
    ];
    let Some(o) = mpirun(2, &[], &args) else { return };
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let merged = json(&out);
    assert_eq!(merged["rate"]["offered_iops"].as_f64().unwrap(), 1000.0);
    assert_eq!(merged["total"]["all"]["ops"].as_u64().unwrap(), 2000);
}

/// Whether process `pid` has a thread named `name` (a worker thread is `iolab-w0`: it exists once the ranks
/// passed their common start).
fn has_thread(pid: i32, name: &str) -> bool {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return false };
    tasks.flatten().any(|t| std::fs::read_to_string(t.path().join("comm")).is_ok_and(|c| c.trim() == name))
}

/// Sends `signal` to `pid`.
fn signal(pid: i32, signal: i32) {
    // SAFETY: kill(2) with a pid and a signal number; no memory is involved.
    unsafe { libc::kill(pid, signal) };
}

/// Runs `extra` on 2 ranks, each on an emulated device of 1 ms per I/O, one at a time (1,000 IOPS), with
/// rank 1 stopped (SIGSTOP) for 3 s from just after the common start, so rank 1 is clearly the slow one
/// whatever the machine's load; the merged result.
fn with_rank_1_stalled(extra: &[&str]) -> Option<Value> {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("stalled.json");
    let out = out.to_str().unwrap();
    let target = ["run", "--target", "sim:fixed,latency=1ms,servers=1,size=64M", "--qd", "1", "--ramp", "0"];
    let child = Command::new("mpirun")
        .args(["--allow-run-as-root", "--oversubscribe", "-np", "2", BIN])
        .args(target)
        .args(extra)
        .args(["--json", out, "--no-save"])
        .env("IOLAB_MPI_TIMEOUT", "20")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn();
    let Ok(child) = child else {
        iolab_testkit::skip(format_args!("mpirun is not installed"));
        return None;
    };
    let t = Instant::now();
    let mut pid = None;
    while t.elapsed() < Duration::from_secs(15) {
        pid = pid.or_else(|| rank_pid(out, 1));
        if pid.is_some_and(|p| has_thread(p, "iolab-w0")) {
            break;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    let pid = pid.expect("rank 1 found");
    signal(pid, libc::SIGSTOP);
    std::thread::sleep(Duration::from_secs(3));
    signal(pid, libc::SIGCONT);
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    Some(json(Path::new(out)))
}

/// Each rank's `done_s`, in rank order.
fn done_s(merged: &Value) -> Vec<f64> {
    merged["hosts"].as_array().unwrap().iter().map(|h| h["done_s"].as_f64().unwrap()).collect()
}

#[test]
fn stonewall_ends_the_slow_rank_when_the_fast_one_has_done_its_count() {
    // Rank 0 needs 1 s for its 1,000 I/Os; rank 1 is stopped for 3 s. Without stonewalling rank 1 would do
    // its 1,000 too.
    let Some(merged) = with_rank_1_stalled(&["--ios", "1000", "--stonewall"]) else { return };
    assert_eq!(merged["ranks"]["stonewall"], true);
    let hosts = merged["hosts"].as_array().unwrap();
    let ops: Vec<u64> = hosts.iter().map(|h| h["total"]["all"]["ops"].as_u64().unwrap()).collect();
    assert_eq!(ops[0], 1000, "the fast rank did all its I/Os: {ops:?}");
    assert!(ops[1] < 500, "the slow rank stopped early: {ops:?}");
    assert_eq!(merged["total"]["all"]["ops"].as_u64().unwrap(), ops[0] + ops[1], "fewer than 2 x 1,000");
    let (first, last) =
        (merged["ranks"]["first_done_s"].as_f64().unwrap(), merged["ranks"]["last_done_s"].as_f64().unwrap());
    assert!(first >= 0.95, "1,000 I/Os of 1 ms take a second: first done {first}");
    assert_eq!(vec![first, last], done_s(&merged), "rank 0 done first, rank 1 last");
    assert!(last > 2.9 && last < first + 6.0, "rank 1 ended once resumed: first {first}, last {last}");
}

#[test]
fn rank_0_decides_when_the_run_is_steady_and_every_rank_ends_then() {
    // Rank 0 is steady after its 2 s window (a wide 50 %: the machine may be loaded); rank 1 is stopped for
    // 3 s. Were rank 1 to decide for itself, it would need 2 s of steady intervals after it resumed.
    let steady = ["--interval", "500ms", "--steady-state", "iops:50%", "--steady-state-window", "2s"];
    let Some(merged) = with_rank_1_stalled(&[&steady[..], &["--steady-state-limit", "20s"]].concat()) else {
        return;
    };
    assert_eq!(merged["steady_state"]["reached"], true, "{}", merged["steady_state"]);
    let done = done_s(&merged);
    // Rank 1 ends once it has resumed and rank 0 is steady, whichever comes last, within one poll or so.
    let word = done[0].max(3.0);
    assert!(done[1] > 2.9 && done[1] < word + 0.8, "rank 1 ended on rank 0's word: {done:?}");
}

/// The pid of the rank `rank` process whose command line contains `marker`.
fn rank_pid(marker: &str, rank: u32) -> Option<i32> {
    let want = format!("OMPI_COMM_WORLD_RANK={rank}");
    std::fs::read_dir("/proc").ok()?.flatten().find_map(|e| {
        let pid: i32 = e.file_name().to_str()?.parse().ok()?;
        let cmd = std::fs::read(e.path().join("cmdline")).ok()?;
        let env = std::fs::read(e.path().join("environ")).ok()?;
        let has = |hay: &[u8], needle: &str| {
            hay.split(|&b| b == 0).any(|w| String::from_utf8_lossy(w).contains(needle))
        };
        (has(&cmd, marker) && has(&env, &want) && !has(&cmd, "mpirun")).then_some(pid)
    })
}

#[test]
fn a_stalled_rank_ends_the_run_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("stall.json");
    let marker = marker.to_str().unwrap().to_string();
    let args =
        ["run", "--target", "null:1G", "--duration", "2s", "--ramp", "0", "--no-save", "--json", &marker];
    let t = Instant::now();
    let child = Command::new("mpirun")
        .args(["--allow-run-as-root", "--oversubscribe", "-np", "2", BIN])
        .args(args)
        .env("IOLAB_MPI_TIMEOUT", "3")
        .stderr(std::process::Stdio::piped())
        .spawn();
    let Ok(child) = child else {
        iolab_testkit::skip(format_args!("mpirun is not installed"));
        return;
    };
    // Rank 1 stops (SIGSTOP) during its run: rank 0 finishes and waits for it in vain.
    let mut pid = None;
    while pid.is_none() && t.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(100));
        pid = rank_pid(&marker, 1);
    }
    let pid = pid.expect("rank 1 found");
    std::thread::sleep(Duration::from_millis(500));
    signal(pid, libc::SIGSTOP);
    let o = child.wait_with_output().unwrap();
    // The process may already be gone.
    signal(pid, libc::SIGKILL);
    assert!(t.elapsed() < Duration::from_secs(30), "ended in {:?}", t.elapsed());
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("rank 1 (host ") && err.contains("did not arrive"), "{err}");
}

#[test]
fn every_ranks_verification_counts_in_the_result() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("mpi.json");
    let job = [
        "run",
        "--target",
        "sim:fixed,latency=50us,servers=4,size=64M",
        "--clock",
        "virtual",
        "--duration",
        "1s",
        "--rw",
        "randrw",
        "--verify",
        "--verify-fail",
        "continue",
        "--inject",
        "bit-flip-read:0.01",
    ];
    let mut args: Vec<&str> = job.to_vec();
    args.extend(["--seed", "3", "--json", out.to_str().unwrap(), "--no-save"]);
    let Some(o) = mpirun(2, &[], &args) else { return };
    assert_eq!(o.status.code(), Some(1), "mismatches: exit code 1; {}", String::from_utf8_lossy(&o.stderr));
    let merged = json(&out);
    let ranks: Vec<Value> = (0..2).map(|r| single(dir.path(), iolab_run::rank_seed(3, r), &job)).collect();
    let count = |v: &Value, k: &str| v["verify"][k].as_u64().unwrap();
    for k in ["mismatches", "blocks_checked"] {
        assert!(count(&ranks[1], k) > 0, "{k}");
        assert_eq!(count(&merged, k), count(&ranks[0], k) + count(&ranks[1], k), "{k}");
    }
}

#[test]
fn the_time_series_is_the_merge_of_every_ranks_intervals() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("mpi.json");
    let job = [
        "run",
        "--target",
        "sim:ssd",
        "--clock",
        "virtual",
        "--duration",
        "1s",
        "--interval",
        "250ms",
        "--qd",
        "4",
    ];
    let mut args: Vec<&str> = job.to_vec();
    args.extend(["--seed", "11", "--json", out.to_str().unwrap(), "--no-save"]);
    let Some(o) = mpirun(2, &[], &args) else { return };
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let merged = json(&out);
    let ranks: Vec<Value> = (0..2).map(|r| single(dir.path(), iolab_run::rank_seed(11, r), &job)).collect();
    let points = |v: &Value| v["timeseries"].as_array().expect("timeseries").clone();
    let (m, a, b) = (points(&merged), points(&ranks[0]), points(&ranks[1]));
    assert_eq!(m.len(), 4, "{m:?}");
    assert_eq!((a.len(), b.len()), (4, 4));
    let f = |p: &Value, k: &str| p[k].as_f64().unwrap();
    for i in 0..4 {
        // Virtual time: each rank's intervals are exactly its single-host run's; the merge adds them.
        assert!((f(&m[i], "iops") - f(&a[i], "iops") - f(&b[i], "iops")).abs() < 1e-6, "point {i}");
        let ops = |p: &Value| f(p, "iops") * f(p, "interval_s");
        let mean = (f(&a[i], "lat_mean_ns") * ops(&a[i]) + f(&b[i], "lat_mean_ns") * ops(&b[i])) / ops(&m[i]);
        assert!((f(&m[i], "lat_mean_ns") - mean).abs() < 1e-6 * mean, "point {i}: mean of all ops");
        // The p99 of the merged histogram lies between the ranks' own (never an average of them).
        let p99 = |p: &Value| p["lat_p99_ns"].as_u64().unwrap();
        let (lo, hi) = (p99(&a[i]).min(p99(&b[i])), p99(&a[i]).max(p99(&b[i])));
        assert!(p99(&m[i]) >= lo && p99(&m[i]) <= hi, "point {i}: {} not in {lo}..{hi}", p99(&m[i]));
    }
    // The group's largest per-interval mean read response time is over the merged intervals (reads only).
    let max = m.iter().map(|p| f(p, "lat_mean_ns")).fold(0.0, f64::max);
    let group = merged["groups"][0]["read_interval_mean_max_ns"].as_f64().expect("a group maximum");
    assert!((group - max).abs() < 1e-6 * max, "group maximum {group}, merged points' {max}");
}

#[test]
fn trace_paths_take_the_rank_and_one_file_for_several_ranks_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let per_rank = format!("{}/ops.{{rank}}.trc", dir.path().display());
    let run = ["run", "--target", "null:1G", "--duration", "1s", "--ramp", "0", "--no-save", "--trace"];
    let mut args: Vec<&str> = run.to_vec();
    args.push(&per_rank);
    let Some(o) = mpirun(2, &[], &args) else { return };
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for r in 0..2 {
        let len = std::fs::metadata(dir.path().join(format!("ops.{r}.trc"))).map_or(0, |m| m.len());
        assert!(len > 48 * 100, "rank {r}'s own trace holds its ops ({len} bytes)");
    }
    let one = format!("{}/one.trc", dir.path().display());
    let json_out = format!("{}/one.json", dir.path().display());
    let mut args: Vec<&str> = run.to_vec();
    args.extend([one.as_str(), "--json", &json_out]);
    let t = Instant::now();
    let Some(o) = mpirun(2, &[], &args) else { return };
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains(&format!("--trace '{one}'")) && err.contains("add {rank}"), "{err}");
    assert_eq!(err.matches("add {rank}").count(), 1, "said once, by rank 0: {err}");
    assert!(!Path::new(&one).exists() && !Path::new(&json_out).exists(), "nothing written");
    assert!(t.elapsed() < Duration::from_secs(15));
}

/// Every rank's part of a sweep point and of a profile run is in the merged result: `iolab sweep` and
/// `--profile` run over ranks as `iolab run` does (issue 17: "and `iolab sweep`, `--profile`").
#[test]
fn a_sweep_and_a_profile_run_over_ranks_with_every_point_merged() {
    let dir = tempfile::tempdir().unwrap();
    let sweep = dir.path().join("sweep.json");
    let args = ["sweep", "--target", "sim:ssd", "--clock", "virtual", "--duration", "1s", "--qd", "1,4"];
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["--seed", "7", "--json", sweep.to_str().unwrap(), "--no-save", "-q"]);
    let Some(o) = mpirun(2, &[], &all) else { return };
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v = json(&sweep);
    let points = v["points"].as_array().expect("points");
    assert_eq!(points.len(), 2);
    for p in points {
        let r = &p["result"];
        let hosts = r["hosts"].as_array().expect("hosts[] in every point");
        assert_eq!(hosts.len(), 2, "{}", p["params"]);
        let sum: f64 = hosts.iter().map(|h| h["total"]["all"]["ops"].as_f64().unwrap()).sum();
        assert_eq!(r["total"]["all"]["ops"].as_f64().unwrap(), sum, "{}", p["params"]);
    }

    let run = dir.path().join("profile.json");
    let args = ["run", "--profile", "iometer-database", "--target", "sim:ssd", "--clock", "virtual"];
    let mut all: Vec<&str> = args.to_vec();
    all.extend([
        "--duration",
        "1s",
        "--ramp",
        "0s",
        "--seed",
        "7",
        "--json",
        run.to_str().unwrap(),
        "--no-save",
        "-q",
    ]);
    let Some(o) = mpirun(2, &[], &all) else { return };
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v = json(&run);
    assert_eq!(v["hosts"].as_array().map(Vec::len), Some(2));
    // 4 workers on each rank.
    assert_eq!(v["workers"].as_array().map(Vec::len), Some(8), "{}", v["workers"]);
}

/// `iolab replay` is for one host: under 2 ranks it is refused, said once, before anything is created.
#[test]
fn a_replay_under_several_ranks_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.csv");
    std::fs::write(&trace, "version,time,op,size,lbn\n1,0,28,4096,0\n1,1,2a,4096,8\n").unwrap();
    let target = dir.path().join("never.dat");
    let args = ["replay", trace.to_str().unwrap(), "--target", target.to_str().unwrap(), "--size", "1M"];
    let Some(o) = mpirun(2, &[], &args) else { return };
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{stderr}");
    assert_eq!(stderr.matches("a replay is one trace from one host").count(), 1, "{stderr}");
    assert!(!target.exists());
}
