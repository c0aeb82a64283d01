//! Golden results: fixed-seed runs on virtual time, recorded before the issue-13 refactor, must give the same
//! numbers byte for byte (the same JSON, less the fields that say when and where a run happened). A refactor
//! that changes a figure fails here; a change of behaviour that is meant re-records the files with
//! `IOLAB_BLESS=1 cargo test -p iolab --test cli golden` and says why in its commit.

use crate::util::iolab;
use serde_json::Value;
use std::path::PathBuf;

/// Fields that differ from run to run by design: when and where it ran, the run id, CPU time, fill time.
const VOLATILE: &[&str] = &[
    "run_id",
    "started_at",
    "started_unix_s",
    "iolab_version",
    "cpu",
    "hostname",
    "kernel",
    "cpu_model",
    "cpu_count",
    "mem_total_bytes",
    "fill_s",
    "engine_features",
    "elapsed_s",
    "wall_s",
    // Verification data depends on the run id by design (no two runs write the same bytes).
    "checksum",
    "hex",
];

fn scrub(v: &mut Value) {
    match v {
        Value::Object(map) => {
            for k in VOLATILE {
                map.remove(*k);
            }
            map.values_mut().for_each(scrub);
        }
        Value::Array(a) => a.iter_mut().for_each(scrub),
        _ => {}
    }
}

fn golden_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/cli/golden").join(format!("{name}.json"))
}

/// Runs `iolab ARGS --json - -q`, scrubs it and compares it with `golden/NAME.json`.
fn check(name: &str, args: &[&str], expect_code: i32) {
    let out = iolab().args(args).args(["--json", "-", "-q"]).output().expect("spawn iolab");
    assert_eq!(
        out.status.code(),
        Some(expect_code),
        "iolab {}\nstderr: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    let mut v: Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    scrub(&mut v);
    let text = serde_json::to_string_pretty(&v).unwrap() + "\n";
    let path = golden_path(name);
    if std::env::var_os("IOLAB_BLESS").is_some() {
        std::fs::write(&path, &text).expect("write golden file");
        return;
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (record it with IOLAB_BLESS=1)", path.display()));
    if want != text {
        let diff: Vec<String> = want
            .lines()
            .zip(text.lines())
            .enumerate()
            .filter(|(_, (a, b))| a != b)
            .take(12)
            .map(|(i, (a, b))| format!("line {}: want {a}\n          got  {b}", i + 1))
            .collect();
        panic!("{name}: the result changed (iolab {})\n{}", args.join(" "), diff.join("\n"));
    }
}

const VIRT: [&str; 4] = ["--clock", "virtual", "--seed", "7"];

#[test]
fn golden_closed_loop_mix_on_fixed_latency() {
    let mut a = vec!["run", "--target", "sim:fixed,latency=100us,servers=8"];
    a.extend(VIRT);
    a.extend(["-d", "3s", "--ramp", "1s", "--rw", "randrw", "--read-pct", "70", "--bs", "4k/60:64k/40"]);
    a.extend(["--qd", "8", "--workers", "2"]);
    check("closed_loop_mix", &a, 0);
}

#[test]
fn golden_open_loop_poisson_on_ssd() {
    let mut a = vec!["run", "--target", "sim:ssd,sata"];
    a.extend(VIRT);
    a.extend(["-d", "2s", "--ramp", "0s", "--rw", "randread", "--rate", "20000", "--arrival", "poisson"]);
    check("open_loop_poisson", &a, 0);
}

#[test]
fn golden_array_with_write_back_cache() {
    let mut a = vec!["run", "--target", "sim:array,size=256M"];
    a.extend(VIRT);
    a.extend(["-d", "2s", "--ramp", "1s", "--rw", "randrw", "--read-pct", "60", "--qd", "16"]);
    a.extend(["--cache", "25%", "--cache-mode", "write-back", "--cache-dev", "sim:ssd,sata"]);
    check("array_write_back_cache", &a, 0);
}

#[test]
fn golden_hdd_sequential_with_link() {
    let mut a = vec!["run", "--target", "link:fc4g:sim:hdd,15k"];
    a.extend(VIRT);
    a.extend(["-d", "2s", "--ramp", "0s", "--rw", "read", "--bs", "256k", "--qd", "4"]);
    check("hdd_sequential_link", &a, 0);
}

#[test]
fn golden_oltp_profile_groups() {
    let mut a = vec!["run", "--profile", "oltp", "--target", "sim:fixed,latency=1ms,servers=16"];
    a.extend(VIRT);
    a.extend(["-d", "2s", "--ramp", "0s"]);
    check("oltp_profile", &a, 0);
}

#[test]
fn golden_exchange_verdict() {
    let mut a = vec!["run", "--profile", "exchange-2010", "--target", "sim:fixed,latency=5ms,servers=4"];
    a.extend(VIRT);
    a.extend(["-d", "2s", "--ramp", "0s", "--mailboxes", "500"]);
    check("exchange_verdict", &a, 0);
}

#[test]
fn golden_exchange_find_max() {
    let mut a = vec!["run", "--profile", "exchange-2010", "--target", "sim:fixed,latency=5ms,servers=4"];
    a.extend(VIRT);
    a.extend(["-d", "2s", "--ramp", "0s", "--iops-per-mailbox", "1", "--mailboxes", "1000"]);
    a.extend(["--find-max", "--find-max-resolution", "20"]);
    check("exchange_find_max", &a, 0);
}

#[test]
fn golden_loadgen_rate_mode() {
    let mut a =
        vec!["run", "--profile", "seed-condusiv-loadgen", "--target", "sim:fixed,latency=1ms,servers=8"];
    a.extend(VIRT);
    a.extend(["-d", "3s", "--ramp", "0s", "--users", "40"]);
    check("loadgen_rate", &a, 0);
}

#[test]
fn golden_sweep_qd_with_trials() {
    let mut a = vec!["sweep", "--target", "sim:fixed,latency=200us,servers=4"];
    a.extend(VIRT);
    a.extend(["-d", "1s", "--ramp", "0s", "--rw", "randread", "--qd", "1,4,16", "--trials", "3"]);
    check("sweep_qd_trials", &a, 0);
}

#[test]
fn golden_sweep_cache_sizes() {
    let mut a = vec!["sweep", "--target", "sim:array,size=64M"];
    a.extend(VIRT);
    a.extend(["-d", "1s", "--ramp", "1s", "--rw", "randread", "--qd", "8", "--cache", "0,25%,50%"]);
    a.extend(["--cache-dev", "sim:ssd,sata"]);
    check("sweep_cache", &a, 0);
}

#[test]
fn golden_verify_with_injected_faults() {
    let mut a = vec!["run", "--target", "sim:fixed,latency=50us,servers=4,size=64M"];
    a.extend(VIRT);
    a.extend(["-d", "1s", "--ramp", "0s", "--rw", "randrw", "--qd", "4", "--verify"]);
    a.extend(["--verify-fail", "continue", "--inject", "bit-flip-read@500"]);
    check("verify_inject", &a, 1);
}
