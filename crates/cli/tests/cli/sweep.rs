//! `iolab sweep` end to end, on the emulated fixed-latency device with virtual time (capacity 80,000 IOPS:
//! 100 µs per I/O, 8 servers): IOPS per queue depth follows QD / latency up to the cap, the knee is at the
//! cap (qd 8), `--max-p99` picks the highest depth within the limit, trials give confidence intervals,
//! `--set` sweeps any job key, steady state is detected, and bad lists are usage errors that create nothing.

use crate::util::{assert_close, entries, iolab, num, tempdir, SIM};
use serde_json::Value;

/// Runs `iolab sweep SIM ARGS --json - -q`, asserts exit code 0 and the document's shape, returns it.
fn sweep_json(args: &[&str]) -> Value {
    let out =
        iolab().arg("sweep").args(SIM).args(args).args(["--json", "-", "-q"]).output().expect("spawn iolab");
    assert_eq!(
        out.status.code(),
        Some(0),
        "iolab sweep {} failed\nstderr: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout of `iolab sweep {}` is not JSON ({e}): {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stdout)
        )
    });
    assert_eq!(v["schema"], "iolab.sweep/1");
    let points = v["points"].as_array().expect("points is an array");
    assert_eq!(points.len() as f64, num(&v, "/points_planned"), "every planned point ran");
    for p in points {
        assert_eq!(p["result"]["schema"], "iolab.result/1", "each point carries a full run result");
        assert!(p["params"].is_object() && p["summary"]["iops"]["mean"].is_number(), "{p:#}");
    }
    v
}

#[test]
fn sweep_qd_follows_qd_over_latency_up_to_cap_with_knee_at_cap() {
    let v = sweep_json(&["--qd", "1..64:x2", "-d", "1s", "--ramp", "0", "--max-p99", "300us"]);
    let qds = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0];
    let points = v["points"].as_array().unwrap();
    assert_eq!(points.len(), qds.len());
    for (p, qd) in points.iter().zip(qds) {
        assert_eq!(p["params"]["qd"], format!("{qd}"));
        let expected = (qd / 100e-6_f64).min(80_000.0);
        assert_close(&format!("IOPS at qd {qd}"), num(p, "/result/total/all/iops"), expected, 0.01);
        // Beyond the cap the extra depth queues: p99 = qd / 8 × 100 µs.
        let p99 = 100_000.0 * (qd / 8.0).max(1.0);
        assert_close(&format!("p99 at qd {qd}"), num(p, "/result/total/all/lat_ns/p99"), p99, 0.01);
    }
    assert_eq!(v["load_axis"], "qd");
    assert_eq!(v["knee"]["axis"], "qd");
    assert_eq!(v["knee"]["lines"][0]["value"], "8", "the knee is where the cap is: {:#}", v["knee"]);
    assert_eq!(num(&v, "/knee/lines/0/point"), 3.0);
    // p99 at qd 16 is 200 µs, at qd 32 400 µs: the highest depth within 300 µs is 16.
    assert_eq!(v["max_p99"]["lines"][0]["value"], "16", "{:#}", v["max_p99"]);
    assert_eq!(num(&v, "/max_p99/limit_ns"), 300_000.0);
}

#[test]
fn sweep_prints_table_with_marks_and_writes_csv() {
    let dir = tempdir();
    let csv = dir.path().join("sweep.csv");
    let out = iolab()
        .arg("sweep")
        .args(SIM)
        .args(["--qd", "4,8,16", "--ios", "20000", "--max-p99", "150us", "--csv"])
        .arg(&csv)
        .output()
        .expect("spawn iolab");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    let row =
        |qd: &str| text.lines().find(|l| l.split_whitespace().next() == Some(qd)).unwrap_or("").to_string();
    assert!(row("8").contains("◀ knee") && row("8").contains("◀ max p99"), "{text}");
    assert!(!row("4").contains('◀') && !row("16").contains('◀'), "{text}");
    let csv = std::fs::read_to_string(&csv).expect("--csv wrote the file");
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 4, "a header and one row per point:\n{csv}");
    assert!(lines[0].starts_with("qd,index,trials,partial,iops,"), "{csv}");
    assert!(lines[2].starts_with("8,1,1,false,"), "{csv}");
}

#[test]
fn sweep_trials_give_mean_confidence_interval_and_spread() {
    // Poisson arrivals make each trial's latency depend on its seed; the device's capacity does not.
    let v = sweep_json(&["--rate", "70k", "--arrival", "poisson", "--ios", "20000", "--trials", "3"]);
    assert_eq!(num(&v, "/trials"), 3.0);
    assert_eq!(num(&v, "/base_seed"), 1.0, "the base seed is --seed");
    let p = &v["points"][0];
    let seeds: Vec<f64> = (0..3).map(|i| num(p, &format!("/trials/{i}/seed"))).collect();
    assert_eq!(seeds, [1.0, 2.0, 3.0], "trial t runs with seed BASE+t");
    assert_eq!(num(p, "/result/seed"), 1.0, "the point's full result is its first trial's");
    for metric in ["iops", "lat_mean_ns", "lat_p99_ns"] {
        let s = |k: &str| num(p, &format!("/summary/{metric}/{k}"));
        let vals: Vec<f64> = (0..3).map(|i| num(p, &format!("/trials/{i}/{metric}"))).collect();
        assert_close(&format!("{metric} mean"), s("mean"), vals.iter().sum::<f64>() / 3.0, 1e-9);
        assert!(s("ci95_low") <= s("mean") && s("mean") <= s("ci95_high"), "{metric}: {:#}", p["summary"]);
        assert!(s("min") <= s("mean") && s("mean") <= s("max"));
        assert!(s("cv") >= 0.0);
    }
    assert!(
        num(p, "/summary/lat_mean_ns/ci95_high") > num(p, "/summary/lat_mean_ns/ci95_low"),
        "seeds differ"
    );
    assert_eq!(num(p, "/summary/n"), 3.0);
}

#[test]
fn sweep_set_read_pct_sweeps_a_job_key_by_name() {
    let v = sweep_json(&["--set", "read_pct=0,100", "--ios", "5000"]);
    assert_eq!(v["axes"][0]["key"], "read_pct");
    let (w, r) = (&v["points"][0], &v["points"][1]);
    assert_eq!(w["params"]["read_pct"], "0");
    assert_eq!(num(w, "/result/total/write/ops"), 5000.0);
    assert_eq!(num(r, "/result/total/read/ops"), 5000.0);
    assert!(v["knee"].is_null(), "no load axis, no knee");
}

#[test]
fn sweep_cross_product_has_one_knee_per_line() {
    let v = sweep_json(&["--qd", "4,8,16", "--set", "rw=randread,randwrite", "--ios", "20000"]);
    let points = v["points"].as_array().unwrap();
    assert_eq!(points.len(), 6);
    // Non-load fields outermost, qd innermost.
    assert_eq!(points[0]["params"]["rw"], "randread");
    assert_eq!(points[1]["params"]["qd"], "8");
    assert_eq!(points[3]["params"]["rw"], "randwrite");
    let lines = v["knee"]["lines"].as_array().unwrap();
    assert_eq!(lines.len(), 2);
    for l in lines {
        assert_eq!(l["value"], "8", "{l:#}");
    }
    assert_eq!(lines[1]["params"]["rw"], "randwrite");
}

#[test]
fn sweep_bad_lists_exit_2_quoting_flag_and_text_and_create_nothing() {
    let cases: [(&[&str], &str); 11] = [
        (&["--qd", "1,,4"], "invalid value '1,,4' for '--qd'"),
        (&["--qd", "64..1:x2"], "runs backwards"),
        (&["--bs", "4k..64k"], "invalid value '4k..64k' for '--bs'"),
        (&["--qd", "1..5000:+1"], "more than 1000"),
        (&["--qd", "1,2", "--bs", "512..64m:+512"], "more than 1000"),
        (&["--qd", "1,5000"], "'5000' for '--qd'"),
        (&["--set", "red_pct=0,100"], "did you mean 'read_pct'"),
        (&["--set", "read_pct=0,101"], "invalid value '101' for '--set read_pct'"),
        (
            &["--set", "read_pct=0,50", "--read-pct", "10"],
            "'--set read_pct' sweeps 'read_pct', which its own flag",
        ),
        // Every key alike, those added after `--set` was (trims, flushes) as the first ones.
        (
            &["--set", "trim_pct=0,5", "--trim-pct", "1"],
            "'--set trim_pct' sweeps 'trim_pct', which its own flag",
        ),
        (&["--trials", "0"], "invalid value '0' for '--trials'"),
    ];
    let dir = tempdir();
    for (args, expected) in cases {
        // No --target: a run would create its scratch file in the working directory.
        let out =
            iolab().current_dir(dir.path()).arg("sweep").args(args).args(["--ios", "100"]).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(expected), "{args:?}: expected '{expected}' in: {stderr}");
        assert!(entries(dir.path()).is_empty(), "{args:?} left {:?}", entries(dir.path()));
    }
}

#[test]
fn run_steady_state_is_reached_on_a_steady_target_and_reported() {
    let out = iolab()
        .arg("run")
        .args(SIM)
        .args(["--ramp", "0", "--steady-state", "iops:2%", "--steady-state-window", "3s"])
        .args(["--steady-state-limit", "1m", "--json", "-", "-q"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["steady_state"]["reached"], true, "{:#}", v["steady_state"]);
    assert_eq!(num(&v, "/steady_state/after_s"), 3.0, "the first full 3 s window is steady");
    assert_eq!(v["steady_state"]["window"].as_array().unwrap().len(), 3);
    assert!(num(&v, "/steady_state/window_max_dev_pct") <= 2.0);
    assert_eq!(v["partial"], false, "reaching steady state ends the run complete");
    assert!(num(&v, "/measured_s") < 4.0, "the run ended when steady, well before the 1m limit");
}

#[test]
fn sweep_preconditions_once_before_the_first_point() {
    let v = sweep_json(&[
        "--qd",
        "4,8",
        "--ios",
        "5000",
        "--steady-state",
        "iops:2%",
        "--steady-state-window",
        "2s",
    ]);
    let pc = &v["preconditioning"];
    assert_eq!(pc["reached"], true, "{pc:#}");
    assert_eq!(pc["params"]["qd"], "4", "preconditioning runs the first point's job");
    assert!(v["points"][0]["result"]["steady_state"].is_null(), "points themselves run normally");
}

#[test]
fn sweep_steady_state_with_duration_on_run_is_a_usage_error() {
    let out = iolab().arg("run").args(SIM).args(["-d", "5s", "--steady-state", "iops:5%"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("'--duration 5s'"));
}

/// Issue 15, item 9: MB/s lost its thousands separators in the sweep table and in `iolab runs` (`10485.8`
/// beside `10,000.0` IOPS). 1 MiB I/Os at 100 µs: 9,999 I/Os (and 10,484.7 MB/s) in the window at qd 1, about 8 times that at qd 8.
#[test]
fn mb_s_columns_group_thousands_like_iops() {
    let dir = crate::util::tempdir();
    let db = dir.path().join("results.db");
    let out = crate::util::iolab()
        .env("IOLAB_DB", &db)
        .arg("sweep")
        .args(crate::util::SIM)
        .args(["--bs", "1m", "--qd", "1,8", "-d", "1s", "--ramp", "0"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("10,484.7") && text.contains("83,877.7"), "{text}");
    let out = crate::util::iolab().env("IOLAB_DB", &db).arg("runs").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("83,877.7"), "{text}");
}
