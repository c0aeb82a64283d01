//! `iolab run` on working input: result shape, mixes, determinism, outputs, job files, real files.

use crate::util::{assert_close, entries, iolab, num, run_json, tempdir, warning_kinds, SIM};
use serde_json::Value;

const LAT_KEYS: [&str; 6] = ["min", "p50", "p90", "p99", "p999", "max"];

/// Asserts min <= p50 <= p90 <= p99 <= p999 <= max and min <= mean <= max for one latency block.
fn assert_percentiles_monotone(v: &Value, pointer: &str) {
    let vals: Vec<f64> = LAT_KEYS.iter().map(|k| num(v, &format!("{pointer}/{k}"))).collect();
    assert!(vals.windows(2).all(|w| w[0] <= w[1]), "{pointer} not monotone: {LAT_KEYS:?} = {vals:?}");
    let mean = num(v, &format!("{pointer}/mean"));
    assert!(vals[0] <= mean && mean <= vals[5], "{pointer}: mean {mean} outside [min, max] {vals:?}");
}

#[test]
fn run_mem_target_reports_consistent_totals() {
    let v = run_json(&["--target", "mem:64M", "--duration", "1s", "--ramp", "0"]);
    let (r, w, a) = (num(&v, "/total/read/ops"), num(&v, "/total/write/ops"), num(&v, "/total/all/ops"));
    assert!(a > 0.0, "no I/O done: {v:#}");
    assert_eq!(a, r + w, "all.ops != read.ops + write.ops");
    assert_eq!(num(&v, "/total/all/bytes"), num(&v, "/total/read/bytes") + num(&v, "/total/write/bytes"));
    assert_eq!(w, 0.0, "default pattern is randread");
    assert_percentiles_monotone(&v, "/total/all/lat_ns");
    assert_percentiles_monotone(&v, "/total/all/service_lat_ns");
    assert_eq!(v["env"]["engine"], "mem");
    assert_eq!(v["env"]["targets"][0]["kind"], "mem");
    assert_eq!(v["partial"], false);
    assert!(v["rate"].is_null(), "closed loop has no rate block");
    assert_close("measured_s", num(&v, "/measured_s"), 1.0, 0.05);
    assert_eq!(num(&v, "/ramp_s"), 0.0);
    assert_eq!(num(&v, "/errors/total"), 0.0);
}

#[test]
fn run_null_target_does_io_without_engine() {
    let v = run_json(&["--target", "null:1G", "--ios", "20000"]);
    assert_eq!(num(&v, "/total/all/ops"), 20000.0);
    assert_eq!(v["env"]["engine"], "null");
    assert_eq!(v["env"]["targets"][0]["kind"], "null");
    assert_percentiles_monotone(&v, "/total/all/lat_ns");
}

#[test]
fn run_randrw_read_pct_70_gives_70_percent_reads() {
    let v = run_json(&[
        "--target",
        "mem:64M",
        "--ios",
        "20000",
        "--rw",
        "randrw",
        "--read-pct",
        "70",
        "--seed",
        "1",
    ]);
    let (r, a) = (num(&v, "/total/read/ops"), num(&v, "/total/all/ops"));
    assert_eq!(a, 20000.0, "--ios 20000 stops after exactly 20000 measured I/Os");
    let share = r / a * 100.0;
    assert!((share - 70.0).abs() <= 2.0, "read share {share:.2}% is not 70% +-2 (seed {})", v["seed"]);
}

#[test]
fn run_weighted_bs_split_gives_mean_size_between_sizes() {
    let v = run_json(&["--target", "mem:64M", "--ios", "20000", "--bs", "4k/50:64k/50", "--seed", "1"]);
    let (bytes, ops) = (num(&v, "/total/all/bytes"), num(&v, "/total/all/ops"));
    assert_eq!(bytes % 4096.0, 0.0, "every I/O is 4k or 64k");
    // Half 4 KiB, half 64 KiB: mean 34 KiB. Binomial noise over 20000 ops is ~0.6%.
    assert_close("bytes per op", bytes / ops, 34816.0, 0.05);
}

#[test]
fn run_same_seed_on_virtual_sim_is_identical() {
    let args = |seed: &'static str| {
        let mut a = SIM[..4].to_vec(); // the device and clock, without SIM's own seed
        a.extend(["--seed", seed, "--duration", "1s", "--ramp", "0", "--qd", "8"]);
        // Random arrivals, a read/write mix and a size split: every number below depends on the seed.
        a.extend(["--rate", "60k", "--arrival", "poisson", "--rw", "randrw", "--bs", "4k/50:8k/50"]);
        a
    };
    let (a, b, c) = (run_json(&args("7")), run_json(&args("7")), run_json(&args("8")));
    assert_eq!(a["seed"], 7);
    assert_eq!(a["total"], b["total"], "same seed, different totals");
    assert_eq!(a["timeseries"], b["timeseries"], "same seed, different time series");
    assert_eq!(a["workers"], b["workers"]);
    // The seed must matter, or the equality above proves nothing.
    assert_ne!(a["total"], c["total"], "seeds 7 and 8 gave identical totals");
}

#[test]
fn run_dry_run_prints_plan_and_creates_nothing() {
    let dir = tempdir();
    let f = dir.path().join("f");
    let f = f.to_str().expect("utf-8 path");
    let out = iolab()
        .current_dir(dir.path())
        .env("IOLAB_SCRATCH_DIR", dir.path())
        .args(["run", "--dry-run", "--target", f, "--size", "8M", "--rw", "randrw", "--qd", "4"])
        .output()
        .expect("spawn iolab");
    assert_eq!(out.status.code(), Some(0), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).expect("--dry-run prints JSON");
    let workers = v["plan"]["workers"].as_array().expect("plan.workers is an array");
    assert_eq!(workers.len(), 1);
    assert_eq!(workers[0]["qd"], 4);
    assert_eq!(v["targets"][0]["will_create"], true);
    assert!(!std::path::Path::new(f).exists(), "--dry-run created {f}");
    assert_eq!(entries(dir.path()), Vec::<String>::new(), "--dry-run left files behind");
}

#[test]
fn run_csv_file_has_header_and_one_row_per_interval() {
    let dir = tempdir();
    let csv = dir.path().join("ts.csv");
    let mut args = SIM.to_vec();
    args.extend(["--qd", "8", "--duration", "1s", "--ramp", "0", "--interval", "100ms"]);
    args.extend(["--csv", csv.to_str().expect("utf-8 path")]);
    let v = run_json(&args);
    let text = std::fs::read_to_string(&csv).expect("--csv wrote the file");
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some(iolab_report::export::TIMESERIES_CSV_HEADER));
    let rows: Vec<Vec<f64>> = lines
        .map(|l| {
            l.split(',').map(|c| c.parse().unwrap_or_else(|_| panic!("bad CSV cell in {l:?}"))).collect()
        })
        .collect();
    assert_eq!(rows.len(), 10, "1 s in 100 ms intervals:\n{text}");
    assert_eq!(v["timeseries"].as_array().expect("timeseries").len(), rows.len(), "CSV and JSON disagree");
    for (k, row) in rows.iter().enumerate() {
        assert_eq!(row.len(), 10, "row {k}: {row:?}");
        assert_close(&format!("row {k} t_s"), row[0] + 1.0, 1.0 + k as f64 * 0.1, 1e-9);
        assert_close(&format!("row {k} interval_s"), row[1], 0.1, 1e-9);
        assert_close(&format!("row {k} iops"), row[4], 80_000.0, 0.01);
    }
}

/// Issue 15, item 9: the time series of a run whose window ends inside an interval (an I/O count, a steady
/// state) placed its last point at index x its own length (1.0 s instead of 4.0 s) and kept a tail of a few
/// milliseconds as a point of its own. Points now follow each other, one per second, the last one starting
/// where its interval does and holding any tail under half a second.
#[test]
fn run_ios_limited_time_series_has_one_point_per_second_in_order() {
    let mut args = SIM.to_vec();
    // 80,000 IOPS: 250,000 I/Os take 3.125 s (a tail of 0.125 s), 300,000 take 3.75 s (one of 0.75 s).
    for (ios, points, last_s) in [("250000", 3, 1.125), ("300000", 4, 0.75)] {
        args.truncate(SIM.len());
        args.extend(["--qd", "8", "--ios", ios]);
        let v = run_json(&args);
        let ts = v["timeseries"].as_array().expect("timeseries");
        assert_eq!(ts.len(), points, "--ios {ios}: {ts:?}");
        for (k, p) in ts.iter().enumerate() {
            assert_close(&format!("--ios {ios}: point {k} t_s"), num(p, "/t_s") + 1.0, 1.0 + k as f64, 1e-6);
        }
        let last = ts.last().expect("a point");
        assert_close(&format!("--ios {ios}: last interval_s"), num(last, "/interval_s"), last_s, 1e-3);
        assert_close(&format!("--ios {ios}: last iops"), num(last, "/iops"), 80_000.0, 0.01);
    }
}

#[test]
fn run_job_file_with_two_worker_tables_runs_both() {
    let dir = tempdir();
    let job = dir.path().join("two.toml");
    std::fs::write(
        &job,
        "ios = 4000\n\
         [worker.db]\ntarget = \"mem:32M\"\nrw = \"randrw\"\nbs = \"8k\"\nqd = 16\n\
         [worker.log]\ntarget = \"mem:16M\"\nrw = \"write\"\nbs = \"4k\"\nqd = 1\n",
    )
    .expect("write the job file");
    let v = run_json(&[job.to_str().expect("utf-8 path"), "--seed", "1"]);
    let workers = v["workers"].as_array().expect("workers is an array");
    assert_eq!(workers.len(), 2, "{workers:#?}");
    let by_name =
        |n: &str| workers.iter().find(|w| w["name"] == n).unwrap_or_else(|| panic!("no worker {n}"));
    let (db, log) = (by_name("db"), by_name("log"));
    assert_eq!(db["qd"], 16);
    assert_eq!(log["qd"], 1);
    assert_eq!(db["targets"][0], "mem:32M");
    assert_eq!(log["targets"][0], "mem:16M");
    assert!(num(db, "/read/ops") > 0.0 && num(db, "/write/ops") > 0.0, "db is randrw: {db:#}");
    assert_eq!(num(log, "/read/ops"), 0.0, "log only writes");
    assert_eq!(num(log, "/write/bytes"), num(log, "/write/ops") * 4096.0, "log writes 4k");
    assert_eq!(num(db, "/all/bytes"), num(db, "/all/ops") * 8192.0, "db does 8k I/O");
    assert_eq!(num(&v, "/total/all/ops"), num(db, "/all/ops") + num(log, "/all/ops"));
}

#[test]
fn run_workers_3_gives_3_workers_sharing_the_load() {
    let mut args = SIM.to_vec();
    args.extend(["--workers", "3", "--qd", "2", "--duration", "1s", "--ramp", "0"]);
    let v = run_json(&args);
    let workers = v["workers"].as_array().expect("workers is an array");
    assert_eq!(workers.len(), 3);
    let sum: f64 = workers.iter().map(|w| num(w, "/all/ops")).sum();
    assert_eq!(sum, num(&v, "/total/all/ops"), "worker ops do not add up to the total");
    for w in workers {
        assert!(num(w, "/all/ops") > 0.0, "idle worker: {w:#}");
        assert_eq!(w["qd"], 2);
    }
    assert_eq!(num(&v, "/depth/requested"), 6.0);
}

// --- Real files (kernel I/O). Skip, never fail, when the environment lacks O_DIRECT or io_uring. ---

/// Runs `iolab run ARGS --json -` in `dir`; `None` (after printing `skipped: ...`) if the environment lacks a
/// feature the run needs.
fn run_file_json(dir: &std::path::Path, args: &[&str]) -> Option<Value> {
    let out = iolab()
        .current_dir(dir)
        .env("IOLAB_SCRATCH_DIR", dir)
        .arg("run")
        .args(args)
        .args(["--json", "-", "-q"])
        .output()
        .expect("spawn iolab");
    if out.status.code() != Some(0) {
        let err = String::from_utf8_lossy(&out.stderr);
        let missing = [
            ("O_DIRECT", "O_DIRECT is not supported here"),
            ("direct I/O", "direct I/O is not supported here"),
            ("io_uring", "io_uring is unavailable"),
            ("No space left", "not enough disk space"),
        ];
        if let Some((_, why)) = missing.iter().find(|(needle, _)| err.contains(needle)) {
            iolab_testkit::skip(format_args!("{why} ({})", err.trim()));
            return None;
        }
        panic!("iolab run {} failed: {err}", args.join(" "));
    }
    Some(serde_json::from_slice(&out.stdout).expect("stdout is JSON"))
}

#[test]
fn file_target_with_size_is_created_and_kept() {
    let dir = tempdir();
    let f = dir.path().join("f");
    let fs = f.to_str().expect("utf-8 path");
    let Some(v) =
        run_file_json(dir.path(), &["--target", fs, "--size", "8M", "--duration", "1s", "--ramp", "0"])
    else {
        return;
    };
    let t = &v["env"]["targets"][0];
    assert_eq!(t["kind"], "file");
    assert_eq!(t["created"], true);
    assert_eq!(t["scratch"], false);
    assert_eq!(num(t, "/size_bytes"), 8.0 * 1024.0 * 1024.0);
    assert!(t["fill_s"].as_f64().is_some_and(|s| s >= 0.0), "fill_s missing: {t:#}");
    assert!(num(&v, "/total/all/ops") > 0.0);
    let meta = std::fs::metadata(&f).expect("a user-named file is kept after the run");
    assert_eq!(meta.len(), 8 << 20);
}

#[test]
fn file_default_target_is_scratch_and_removed() {
    let dir = tempdir();
    let Some(v) = run_file_json(dir.path(), &["--duration", "1s", "--ramp", "0"]) else {
        return;
    };
    let t = &v["env"]["targets"][0];
    assert_eq!(t["scratch"], true, "{t:#}");
    assert_eq!(t["created"], true);
    assert!(t["name"].as_str().expect("name").contains("iolab-scratch-"), "{t:#}");
    let left: Vec<String> =
        entries(dir.path()).into_iter().filter(|n| n.starts_with("iolab-scratch-")).collect();
    assert!(left.is_empty(), "scratch files left behind: {left:?}");
}

#[test]
fn file_sync_engine_with_qd_4_warns_and_runs_at_depth_1() {
    let dir = tempdir();
    let f = dir.path().join("f");
    let fs = f.to_str().expect("utf-8 path");
    let base = ["--target", fs, "--size", "4M", "--engine", "sync", "--ios", "2000"];
    let Some(v) = run_file_json(dir.path(), &[&base[..], &["--qd", "4"]].concat()) else {
        return;
    };
    assert_eq!(v["env"]["engine"], "sync");
    let w = v["warnings"].as_array().expect("warnings").iter().find(|w| w["kind"] == "sync_engine_depth");
    let w = w.unwrap_or_else(|| panic!("no sync_engine_depth warning: {:?}", warning_kinds(&v)));
    assert_eq!(w["requested"], 4);
    assert_eq!(v["workers"][0]["qd"], 1, "the sync engine runs one I/O at a time");
    // At depth 1 there is nothing to warn about.
    let Some(v1) = run_file_json(dir.path(), &[&base[..], &["--qd", "1"]].concat()) else {
        return;
    };
    assert_eq!(v1["env"]["engine"], "sync");
    assert!(!warning_kinds(&v1).contains(&"sync_engine_depth".into()), "{:?}", warning_kinds(&v1));
}

#[test]
fn file_buffered_warns_buffered_io() {
    let dir = tempdir();
    let f = dir.path().join("f");
    let fs = f.to_str().expect("utf-8 path");
    let Some(v) = run_file_json(dir.path(), &["--target", fs, "--size", "4M", "--buffered", "--ios", "2000"])
    else {
        return;
    };
    assert!(warning_kinds(&v).contains(&"buffered_io".into()), "{:?}", warning_kinds(&v));
    assert_eq!(v["env"]["targets"][0]["direct"], false);
}

#[test]
fn file_direct_run_has_no_buffered_warning() {
    let dir = tempdir();
    let f = dir.path().join("f");
    let fs = f.to_str().expect("utf-8 path");
    let Some(v) = run_file_json(dir.path(), &["--target", fs, "--size", "4M", "--ios", "2000"]) else {
        return;
    };
    assert!(!warning_kinds(&v).contains(&"buffered_io".into()), "{:?}", warning_kinds(&v));
    assert_eq!(v["env"]["targets"][0]["direct"], true);
}

#[test]
fn run_exit_code_is_0_on_success() {
    // The text report path (no --json) exits 0 too, and prints something.
    let out = iolab().args(["run", "--target", "null:1M", "--ios", "100"]).output().expect("spawn iolab");
    assert_eq!(out.status.code(), Some(0), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    assert!(!out.stdout.is_empty(), "no text report on stdout");
}

const NAMED_JOB: &str = "ios = 2000\n[targets]\ndb = { size = \"8M\" }\nlog = { size = \"4M\" }\n\
     [worker.db]\ncount = 2\ntarget = \"@db\"\nrw = \"randrw\"\nbs = \"8k\"\nqd = 4\n\
     [worker.log]\ntarget = \"@log\"\nrw = \"write\"\nbs = \"4k\"\nqd = 1\n";

#[test]
fn run_named_targets_from_the_command_line_and_groups_in_the_result() {
    let dir = tempdir();
    let job = dir.path().join("named.toml");
    std::fs::write(&job, NAMED_JOB).expect("write the job file");
    let v = run_json(&[
        job.to_str().expect("utf-8 path"),
        "--target",
        "db=mem:32M",
        "--target",
        "log=mem:16M",
        "--seed",
        "1",
    ]);
    let groups = v["groups"].as_array().expect("groups is an array");
    assert_eq!(groups.len(), 2, "{groups:#?}");
    let (db, log) = (&groups[0], &groups[1]);
    assert_eq!(db["name"], "db");
    assert_eq!(db["workers"], 2);
    assert_eq!(db["targets"][0], "mem:32M");
    assert_eq!(log["name"], "log");
    assert_eq!(log["targets"][0], "mem:16M");
    assert_eq!(num(log, "/read/ops"), 0.0);
    assert_eq!(num(db, "/all/ops") + num(log, "/all/ops"), num(&v, "/total/all/ops"));
    // Group histograms are merged from the workers', so the group's max is the largest worker max.
    let worker_max = v["workers"]
        .as_array()
        .expect("workers")
        .iter()
        .filter(|w| w["name"].as_str().is_some_and(|n| n.starts_with("db")))
        .map(|w| num(w, "/all/lat_ns/max"))
        .fold(0.0, f64::max);
    assert_eq!(num(db, "/all/lat_ns/max"), worker_max);
}

#[test]
fn run_named_targets_without_paths_become_scratch_files_and_are_removed() {
    let dir = tempdir();
    let job = dir.path().join("named.toml");
    std::fs::write(&job, NAMED_JOB).expect("write the job file");
    let Some(v) = run_file_json(dir.path(), &[job.to_str().expect("utf-8 path")]) else {
        return;
    };
    let targets = v["env"]["targets"].as_array().expect("targets");
    assert_eq!(targets.len(), 2);
    for (t, role, size) in [(&targets[0], "-db.dat", 8.0), (&targets[1], "-log.dat", 4.0)] {
        assert_eq!(t["scratch"], true, "{t:#}");
        assert!(t["name"].as_str().expect("name").ends_with(role), "{t:#}");
        assert_eq!(num(t, "/size_bytes"), size * 1024.0 * 1024.0);
    }
    let left: Vec<String> =
        entries(dir.path()).into_iter().filter(|n| n.starts_with("iolab-scratch-")).collect();
    assert!(left.is_empty(), "scratch files left behind: {left:?}");
}

#[test]
fn run_unknown_named_target_is_usage_error_with_suggestion() {
    let dir = tempdir();
    let job = dir.path().join("named.toml");
    std::fs::write(&job, NAMED_JOB).expect("write the job file");
    let out = iolab()
        .current_dir(dir.path())
        .args(["run", job.to_str().expect("utf-8 path"), "--target", "dbb=mem:1G"])
        .output()
        .expect("spawn iolab");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("'--target'") && err.contains("did you mean 'db'"), "{err}");
    let made: Vec<String> = entries(dir.path()).into_iter().filter(|n| n != "named.toml").collect();
    assert!(made.is_empty(), "created {made:?}");
}

/// Issue 15, item 9: `--engine sync --qd 32` printed "requested depth 1": the depth asked for was replaced by
/// the one the sync engine runs. The result keeps what was asked (32) beside what ran (qd 1 per worker), and
/// the warning says why.
#[test]
fn sync_engine_keeps_the_requested_depth() {
    let dir = tempdir();
    let f = dir.path().join("f.dat");
    let v = run_json(&[
        "--target",
        f.to_str().unwrap(),
        "--size",
        "4M",
        "--engine",
        "sync",
        "--qd",
        "32",
        "--buffered",
        "-d",
        "1s",
        "--ramp",
        "0",
    ]);
    assert_eq!(v["depth"]["requested"], 32);
    assert_eq!(v["workers"][0]["qd"], 1);
    assert!(warning_kinds(&v).contains(&"sync_engine_depth".to_string()));
}

/// Issue 15, item 6: several targets per worker worked, but results existed only per worker and group;
/// Iometer users read results per disk. Two emulated disks of 100 µs and 200 µs behind the same workers:
/// `targets[]` has each one's figures (exact on virtual time: each disk has a server for every I/O the two
/// workers can have in flight), and the text prints a row per target.
#[test]
fn results_per_target() {
    let dir = tempdir();
    let job = dir.path().join("two.toml");
    std::fs::write(
        &job,
        "[worker.w]\ncount = 2\nqd = 8\ntarget = [\"sim:fixed,latency=100us,servers=16,size=1G\", \"sim:fixed,latency=200us,servers=16,size=2G\"]\n",
    )
    .unwrap();
    let j = job.to_str().unwrap();
    let v = run_json(&[j, "--clock", "virtual", "--seed", "1", "-d", "1s", "--ramp", "0"]);
    let targets = v["targets"].as_array().unwrap();
    assert_eq!(targets.len(), 2);
    assert_eq!(num(&targets[0], "/all/lat_ns/mean"), 100_000.0);
    assert_eq!(num(&targets[1], "/all/lat_ns/mean"), 200_000.0);
    let sum = num(&targets[0], "/all/ops") + num(&targets[1], "/all/ops");
    assert_eq!(sum, num(&v, "/total/all/ops"), "the targets' ops add up to the total");
    let out = iolab()
        .args(["run", j, "--clock", "virtual", "--seed", "1", "-d", "1s", "--ramp", "0", "--no-save"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.lines().any(|l| l.starts_with("target ") && l.contains("ops") && l.contains("p99")),
        "{text}"
    );
    assert!(text.lines().any(|l| l.starts_with("sim:fixed,latency=200us") && l.contains("200 µs")), "{text}");
}

/// Issue 25, item 11: fio users type fio's names; where the meaning is the same iolab takes them.
#[test]
fn fio_long_option_names_are_accepted_where_they_mean_the_same() {
    let fio = crate::util::run_json(&[
        "--filename",
        "sim:fixed,latency=100us,servers=8",
        "--clock",
        "virtual",
        "--iodepth",
        "4",
        "--numjobs",
        "2",
        "--runtime",
        "1s",
        "--ramp_time",
        "0",
        "--blocksize",
        "8k",
        "--rw=randrw",
        "--rwmixread",
        "70",
        "--randseed",
        "7",
    ]);
    let ours = crate::util::run_json(&[
        "--target",
        "sim:fixed,latency=100us,servers=8",
        "--clock",
        "virtual",
        "--qd",
        "4",
        "--workers",
        "2",
        "-d",
        "1s",
        "--ramp",
        "0",
        "--bs",
        "8k",
        "--rw",
        "randrw",
        "--read-pct",
        "70",
        "--seed",
        "7",
    ]);
    assert_eq!(fio["config"], ours["config"], "the same plan under fio's names");
    assert_eq!(fio["total"]["all"]["ops"], ours["total"]["all"]["ops"]);
}

/// Issue 24, item 14: a run in which no I/O succeeded (every op fails with an injected EIO, on `mem:` and
/// on an emulated device) has no per-I/O CPU, no interval latency and no percentile: null in JSON, "-" in
/// text, Markdown and HTML, never a number made from zero samples.
#[test]
fn run_with_no_successful_io_reports_no_figure_from_nothing() {
    let dir = tempdir();
    for target in ["mem:16M", "sim:fixed,latency=100us,servers=8"] {
        let json = dir.path().join("r.json");
        let out = iolab()
            .args(["run", "--target", target, "-d", "2s", "--ramp", "0", "--inject", "eio@1", "--no-save"])
            .args(["--json", json.to_str().unwrap(), "--csv", dir.path().join("r.csv").to_str().unwrap()])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(1), "{target}: I/O errors exit 1\n{text}");
        let v: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
        assert_eq!(v["total"]["all"]["ops"], 0, "{target}: no op succeeded");
        assert!(v["cpu"]["cpu_ns_per_io"].is_null(), "{target}: {}", v["cpu"]);
        for p in v["timeseries"].as_array().unwrap() {
            assert!(p["lat_mean_ns"].is_null() && p["lat_p99_ns"].is_null(), "{target}: {p}");
        }
        let cpu_line = text.lines().find(|l| l.starts_with("cpu")).expect("a cpu line");
        assert!(cpu_line.contains(" - per I/O"), "{target}: {cpu_line}");
        let csv = std::fs::read_to_string(dir.path().join("r.csv")).unwrap();
        let row = csv.lines().nth(1).expect("a CSV row");
        let cells: Vec<&str> = row.split(',').collect();
        assert!(
            cells[6].is_empty() && cells[7].is_empty(),
            "{target}: interval latencies are empty cells: {row}"
        );
        for (format, name) in [("md", "r.md"), ("html", "r.html")] {
            let page = dir.path().join(name);
            iolab()
                .args(["report", json.to_str().unwrap(), "--format", format, "-o", page.to_str().unwrap()])
                .assert()
                .success();
            let page = std::fs::read_to_string(&page).unwrap();
            for bad in ["0 ns", "0.0 ns", "ms per I/O", "NaN", "inf"] {
                assert!(!page.contains(bad), "{target}: the {format} report shows {bad:?}");
            }
        }
    }
}

/// Issue 24, item 14, in a sweep: a point where no op succeeded has no latency (null in JSON, `-` in the text
/// and an empty CSV cell), and does not pass `--max-p99`.
#[test]
fn sweep_with_no_successful_io_reports_no_latency_from_nothing() {
    let dir = tempdir();
    let (json, csv) = (dir.path().join("s.json"), dir.path().join("s.csv"));
    let out = iolab()
        .args(["sweep", "--qd", "1,2", "--inject", "eio@1", "--no-save", "--max-p99", "1ms"])
        .args(["--target", "mem:16M", "-d", "1s", "--ramp", "0"])
        .args(["--json", json.to_str().unwrap(), "--csv", csv.to_str().unwrap()])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(matches!(out.status.code(), Some(0 | 1)), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    for p in v["points"].as_array().unwrap() {
        assert!(p["summary"]["lat_mean_ns"].is_null() && p["summary"]["lat_p99_ns"].is_null(), "{p}");
        for t in p["trials"].as_array().into_iter().flatten() {
            assert!(t["lat_mean_ns"].is_null() && t["lat_p99_ns"].is_null(), "{t}");
        }
    }
    assert!(!text.contains(" 0 ns"), "the text shows a latency from nothing: {text}");
    let row = std::fs::read_to_string(&csv).unwrap();
    assert!(row.lines().nth(1).is_some_and(|l| l.contains(",,")), "empty latency cells: {row}");
    let limit = &v["max_p99"]["lines"][0]["point"];
    assert!(limit.is_null(), "no point without a latency passes --max-p99: {}", v["max_p99"]);
}

/// Issue 25, item 16.6: a loop device that reads its backing file through the page cache (loop/dio = 0) is
/// warned about, though the run used O_DIRECT on the loop device itself.
#[test]
fn a_read_of_a_loop_device_over_a_page_cached_file_warns_of_the_backing_file_s_cache() {
    let lo = match crate::util::LoopDev::new(16, None) {
        Ok(l) => l,
        Err(why) => {
            iolab_testkit::skip(format_args!("needs root and loop devices ({why})"));
            return;
        }
    };
    let dio = format!("/sys/block/{}/loop/dio", lo.dev.trim_start_matches("/dev/"));
    if std::fs::read_to_string(&dio).map(|s| s.trim() == "1").unwrap_or(true) {
        iolab_testkit::skip(format_args!("{} was attached with direct I/O or has no {dio}", lo.dev));
        return;
    }
    let v = run_json(&["--target", &lo.dev, "--rw", "randread", "--ios", "2000", "--seed", "1"]);
    assert!(warning_kinds(&v).contains(&"loop_page_cache".to_string()), "{:#}", v["warnings"]);
}

/// Issue 35, class 13: an I/O stalled at the end of the window (here one held 8 s by `latency-spike`, as a
/// frozen file system holds it) is in no figure of the window; the result says how many I/Os were in flight
/// at the end and how long the last took, in JSON and text, and warns that the window ended late. Before,
/// the run said nothing (max 0.1 ms, measured 1.00 s) while its last I/O took 8 s.
#[test]
fn a_stall_at_the_end_of_the_window_is_reported_not_censored() {
    let args = [
        "--target", "sim:ssd", "--clock", "virtual", "-d", "1s", "--ramp", "0", "--seed", "3", "--rw",
        "randread",
    ];
    let stall = ["--qd", "1", "--inject", "latency-spike:8s@2000"];
    let v = run_json(&[&args[..], &stall].concat());
    let end = &v["in_flight_at_end"];
    assert_eq!(end["ops"], 1, "{v:#}");
    assert!(num(&v, "/in_flight_at_end/longest_ns") >= 8e9, "{end}");
    assert!(num(&v, "/in_flight_at_end/drained_ns") > 5e9, "{end}");
    assert!(num(&v, "/total/all/lat_ns/max") < 1e8, "the stalled I/O is not in the window's figures");
    assert!(warning_kinds(&v).contains(&"window_ended_late".to_string()), "{:#}", v["warnings"]);
    // An ordinary end: the queue's I/Os in flight are counted, nothing is late.
    let v = run_json(&[&args[..], &["--qd", "8"]].concat());
    assert!((1.0..=8.0).contains(&num(&v, "/in_flight_at_end/ops")), "{:#}", v["in_flight_at_end"]);
    assert!(!warning_kinds(&v).contains(&"window_ended_late".to_string()), "{:#}", v["warnings"]);
    let out = iolab().args(["run", "--no-save"]).args(args).args(stall).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("at end  1 I/O in flight"), "{text}");
    assert!(text.contains("warning: the window did not end on time"), "{text}");
}
