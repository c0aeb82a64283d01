//! Users and transactions (LoadGen-style), end to end on the emulated device with virtual time: each I/O takes
//! exactly 1 ms, 4 at once (capacity 4,000 IOPS), so transaction latency and the point where users overload the
//! storage are known in advance. Assertions are on the JSON `loadgen` section.

use crate::util::{assert_close, entries, iolab, num, run_json, tempdir, warning_kinds};

const SIM_1MS: [&str; 6] =
    ["--target", "sim:fixed,latency=1ms,servers=4", "--clock", "virtual", "--seed", "1"];

/// Two transaction types: "send" (log append, DB write, DB read: 3 I/Os) and "read" (one DB read).
const JOB: &str = r#"
ramp = "0s"
[users]
count = 100
rate = "360/h"
[[transaction]]
name = "send"
weight = 1
steps = [
  { rw = "write", bs = "4k" },
  { rw = "randwrite", bs = "32k" },
  { rw = "randread", bs = "32k" },
]
[[transaction]]
name = "read"
weight = 1
steps = [{ rw = "randread", bs = "32k" }]
"#;

fn job_file(text: &str) -> (tempfile::TempDir, String) {
    let dir = tempdir();
    let path = dir.path().join("job.toml");
    std::fs::write(&path, text).expect("write the job file");
    let p = path.to_str().expect("utf-8 path").to_string();
    (dir, p)
}

fn run(job: &str, extra: &[&str]) -> serde_json::Value {
    let (_dir, path) = job_file(job);
    let mut args = vec![path.as_str()];
    args.extend_from_slice(&SIM_1MS);
    args.extend_from_slice(extra);
    run_json(&args)
}

#[test]
fn loadgen_capacity_suffices_dispatched_equals_completed_and_latency_is_the_sum_of_steps() {
    // 100 users x 360/h = 10 transactions/s, about 20 I/Os per second: 0.5 % of the device.
    let v = run(JOB, &["--duration", "60s"]);
    let lg = &v["loadgen"];
    assert_eq!(lg["mode"], "rate");
    assert_close("offered per s", num(lg, "/offered_per_s"), 10.0, 1e-9);
    let (dispatched, completed) = (num(lg, "/dispatched"), num(lg, "/completed"));
    assert_close("dispatched (Poisson, 600 expected)", dispatched, 600.0, 0.12);
    // Only the transactions in progress at the end are dispatched and not completed.
    assert_eq!(dispatched - completed, num(lg, "/backlog_at_end"));
    assert!(num(lg, "/backlog_at_end") <= 2.0, "{lg:#}");
    assert_eq!(lg["overload"], false);
    assert!(!warning_kinds(&v).contains(&"transaction_overload".to_string()));
    // Latency from the intended start = 3 steps x 1 ms (send) and 1 ms (read); an occasional overlap of
    // arrivals can only add.
    let t = &lg["transactions"];
    assert_eq!(t[0]["name"], "send");
    assert_eq!(num(t, "/0/latency_ns/min"), 3_000_000.0);
    assert_eq!(num(t, "/0/latency_ns/p50"), 3_000_000.0);
    assert_eq!(num(t, "/1/latency_ns/min"), 1_000_000.0);
    assert_eq!(num(t, "/1/latency_ns/p50"), 1_000_000.0);
    assert_eq!(num(t, "/0/completed") + num(t, "/1/completed"), completed);
    // The I/Os are in the normal report too: 3 per send, 1 per read.
    let ios = 3.0 * num(t, "/0/completed") + num(t, "/1/completed");
    assert_close("I/Os", num(&v, "/total/all/ops"), ios, 0.01);
    assert_close("transactions per hour", num(lg, "/transactions_per_hour"), completed * 60.0, 1e-9);
}

#[test]
fn loadgen_overload_grows_the_backlog_and_warns() {
    // 100 users x 20/s = 2,000 transactions/s of 4 I/Os = 8,000 IOPS offered; the device does 4,000 IOPS, so
    // 1,000 transactions/s complete and the backlog grows by 1,000 a second.
    let job = JOB.replace("rate = \"360/h\"", "rate = \"20/s\"\narrival = \"fixed\"").replace(
        "{ rw = \"randread\", bs = \"32k\" },\n]",
        "{ rw = \"randread\", bs = \"32k\" },\n  { rw = \"randread\", bs = \"32k\" },\n]",
    );
    let job = job.replace("weight = 1\nsteps = [{", "weight = 0\nsteps = [{");
    let v = run(&job, &["--duration", "5s"]);
    let lg = &v["loadgen"];
    assert_eq!(num(lg, "/dispatched"), 10_000.0);
    assert_close("completed per s", num(lg, "/transactions_per_s"), 1_000.0, 0.02);
    let backlog: Vec<f64> =
        lg["backlog"].as_array().expect("backlog series").iter().map(|p| num(p, "/backlog")).collect();
    assert_eq!(backlog.len(), 5);
    assert!(backlog.windows(2).all(|w| w[1] > w[0] + 900.0), "backlog does not grow: {backlog:?}");
    assert_close("backlog at end", num(lg, "/backlog_at_end"), 5_000.0, 0.02);
    assert_eq!(num(lg, "/dispatched") - num(lg, "/completed"), num(lg, "/backlog_at_end"));
    assert_eq!(lg["overload"], true);
    assert_eq!(num(lg, "/overload_threshold"), 150.0);
    assert!(warning_kinds(&v).contains(&"transaction_overload".to_string()), "{:#}", v["warnings"]);
    // The wait is in the latency: the last transactions waited about 2.5 s.
    assert!(num(lg, "/latency_ns/max") > 2e9, "{lg:#}");
    // Never more in progress than the slots (users x outstanding).
    assert_eq!(num(lg, "/executing_max"), 100.0);
}

#[test]
fn loadgen_stress_mode_keeps_users_x_outstanding_in_flight() {
    // 50 users x 2 outstanding = 100 transactions in progress at once, 1 read + 1 write each: the device's
    // 4,000 IOPS give 2,000 transactions/s, and by Little's law each takes 100 / 2,000 s = 50 ms.
    let job = JOB
        .replace("weight = 1\nsteps = [{", "weight = 0\nsteps = [{")
        .replace("  { rw = \"write\", bs = \"4k\" },\n", "");
    let v = run(&job, &["--users", "50", "--stress", "--outstanding", "2", "--duration", "10s"]);
    let lg = &v["loadgen"];
    assert_eq!(lg["mode"], "stress");
    assert_eq!(num(lg, "/executing_max"), 100.0);
    assert!(num(lg, "/backlog_max") <= 100.0, "{lg:#}");
    assert!(num(lg, "/backlog_at_end") <= 100.0, "{lg:#}");
    assert_eq!(num(lg, "/dispatched") - num(lg, "/completed"), num(lg, "/backlog_at_end"));
    assert_close("transactions per s", num(lg, "/transactions_per_s"), 2_000.0, 0.01);
    assert_close("mean latency", num(lg, "/latency_ns/mean"), 50e6, 0.02);
    assert_eq!(lg["overload"], false);
    assert!(lg["offered_per_s"].is_null());
}

/// Bad `[users]`/`[[transaction]]` input: exit code 2, the key or flag and the text named, nothing created.
#[test]
fn loadgen_bad_input_exits_2_naming_key_and_value() {
    let table: Vec<(String, Vec<&str>, Vec<&str>)> = vec![
        (JOB.replace("count = 100", "count = 0"), vec![], vec!["invalid value '0' for 'count' in [users]"]),
        (JOB.replace("360/h", "fast"), vec![], vec!["invalid value 'fast' for 'rate' in [users]", "500/8h"]),
        (JOB.replace("count = 100", "count = 100\nmode = \"turbo\""), vec![], vec!["'turbo' for 'mode'"]),
        (
            JOB.replace("count = 100", "cuont = 100"),
            vec![],
            vec!["unknown key 'cuont'; did you mean 'count'?"],
        ),
        (
            JOB.replace("rw = \"write\"", "rw = \"wrte\""),
            vec![],
            vec!["'wrte' for 'rw' in [[transaction]] 'send', step 1"],
        ),
        (JOB.replace("bs = \"4k\"", "bss = \"4k\""), vec![], vec!["unknown key 'bss'; did you mean 'bs'?"]),
        (JOB.replace("bs = \"4k\"", "bs = \"4kb\""), vec![], vec!["'4kb' for 'bs'"]),
        (JOB.replace("rate = \"360/h\"", ""), vec![], vec!["needs 'rate'"]),
        (JOB.to_string(), vec!["--users", "abc"], vec!["invalid value 'abc' for '--users'"]),
        (JOB.to_string(), vec!["--user-rate", "3"], vec!["invalid value '3' for '--user-rate'"]),
        (JOB.to_string(), vec!["--outstanding", "65"], vec!["invalid value '65' for '--outstanding'"]),
    ];
    for (job, extra, needles) in table {
        let (_jd, path) = job_file(&job);
        let dir = tempdir();
        let out = iolab()
            .current_dir(dir.path())
            .env("IOLAB_SCRATCH_DIR", dir.path())
            .arg("run")
            .arg(&path)
            .args(SIM_1MS)
            .args(&extra)
            .output()
            .expect("spawn iolab");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{extra:?} / {job}: stderr {err}");
        assert!(err.starts_with("error:"), "{err}");
        for n in needles {
            assert!(err.contains(n), "stderr does not mention {n:?}: {err}");
        }
        assert!(entries(dir.path()).is_empty());
    }
    // A users flag without transactions.
    let out = iolab().args(["run", "--users", "10"]).args(SIM_1MS).output().expect("spawn iolab");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("'--users': needs a job file or profile with [[transaction]]"), "{err}");
}
