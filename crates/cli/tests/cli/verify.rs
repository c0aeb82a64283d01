//! Data verification and fault injection end to end: no false alarm over a gibibyte of overlapping random
//! asynchronous writes (on `mem:` and on a real file), every corrupting fault found, EIO counted, the journal
//! surviving kill -9, and `iolab verify` on a target written earlier.

use crate::util::{iolab, num, tempdir, warning_kinds, LoopDev};
use serde_json::Value;

/// Runs `iolab run ARGS --json -` and returns the exit code and the result.
fn run_any(args: &[&str]) -> (i32, Value) {
    let out = iolab().arg("run").args(args).args(["--json", "-", "-q"]).output().expect("spawn iolab");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("iolab run {args:?}: not JSON ({e}); stderr: {}", String::from_utf8_lossy(&out.stderr))
    });
    (out.status.code().unwrap_or(-1), v)
}

/// Runs `iolab verify ARGS --json -`.
fn verify_any(args: &[&str]) -> (i32, Value) {
    let out = iolab().arg("verify").args(args).args(["--json", "-", "-q"]).output().expect("spawn iolab");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("iolab verify {args:?}: not JSON ({e}); stderr: {}", String::from_utf8_lossy(&out.stderr))
    });
    (out.status.code().unwrap_or(-1), v)
}

/// Two workers sharing one region, random 4K..64K reads and writes at depth 32 each: writes overlap each other
/// and reads overlap writes all the time. `--bytes 2G` at 50% writes puts 1 GiB of writes through.
const OVERLAPPING: [&str; 14] = [
    "--rw",
    "randrw",
    "--read-pct",
    "50",
    "--bs",
    "4k/50:16k/30:64k/20",
    "--align",
    "4k",
    "--qd",
    "32",
    "--workers",
    "2",
    "--bytes",
    "2G",
];

fn assert_clean(v: &Value, what: &str) {
    assert_eq!(num(v, "/verify/mismatches"), 0.0, "{what}: false alarm: {:#}", v["verify"]);
    assert!(num(v, "/verify/blocks_checked") > 10_000.0, "{what}: reads were checked: {:#}", v["verify"]);
    assert!(num(v, "/verify/readback_blocks") > 0.0, "{what}: the read-back pass ran: {:#}", v["verify"]);
    assert!(num(v, "/total/write/bytes") >= (1u64 << 30) as f64 * 0.95, "{what}: 1 GiB written");
    assert!(!warning_kinds(v).contains(&"data_mismatch".to_string()));
}

#[test]
fn verify_mem_target_gibibyte_of_overlapping_writes_has_no_false_alarm() {
    let mut args = vec!["--target", "mem:64M", "--seed", "7", "--verify"];
    args.extend_from_slice(&OVERLAPPING);
    let (code, v) = run_any(&args);
    assert_eq!(code, 0, "{:#}", v["verify"]);
    assert_clean(&v, "mem:64M");
    assert!(num(&v, "/verify/map_bytes_per_block") <= 16.0, "compact map: {:#}", v["verify"]);
}

#[test]
fn verify_real_file_gibibyte_of_overlapping_writes_has_no_false_alarm() {
    let dir = tempdir();
    let f = dir.path().join("t.dat");
    let f = f.to_str().expect("utf-8");
    let mut args = vec!["--target", f, "--size", "128M", "--seed", "8", "--verify"];
    args.extend_from_slice(&OVERLAPPING);
    let (code, v) = run_any(&args);
    assert_eq!(code, 0, "{:#}", v["verify"]);
    assert_clean(&v, "file");
}

/// Random 4K and 16K reads and writes at depth 32, verified, counting every mismatch: the traffic faults are
/// injected into.
const FAULTY: [&str; 9] =
    ["--rw", "randrw", "--bs", "4k/50:16k/50", "--qd", "32", "--verify", "--verify-fail", "continue"];

/// One corrupting fault at a time: each live injection is found, and nothing else is reported.
fn every_corrupting_fault_is_detected_on(target: &str, size: Option<&str>) {
    for kind in ["bit-flip-write", "bit-flip-read", "lost-write", "misdirected-write", "torn-write"] {
        let spec = format!("{kind}:0.002");
        let mut args = vec!["--target", target];
        if let Some(s) = size {
            args.extend(["--size", s]);
        }
        args.extend(["--seed", "11", "--bytes", "256M", "--inject", &spec]);
        args.extend_from_slice(&FAULTY);
        let (code, v) = run_any(&args);
        let f = &v["inject"]["faults"][0];
        let (injected, live, detected) = (
            num(&v, "/inject/faults/0/injected"),
            num(&v, "/inject/faults/0/live"),
            num(&v, "/inject/faults/0/detected"),
        );
        println!(
            "{target} {kind}: injected {injected}, live {live}, detected {detected}; {:#}",
            v["verify"]["by_class"]
        );
        assert!(injected >= 20.0, "{target} {kind}: enough injections to mean something: {f:#}");
        assert!(live >= 1.0, "{target} {kind}: some damage outlived later writes: {f:#}");
        assert_eq!(
            detected, live,
            "{target} {kind}: every live injection found: {f:#}; errors {:#}; verify {:#}",
            v["errors"], v["verify"]
        );
        assert_eq!(code, 1, "{target} {kind}: a data mismatch is exit code 1");
        assert!(warning_kinds(&v).contains(&"data_mismatch".to_string()));
        assert_eq!(
            v["inject"]["unexplained_mismatches"], 0,
            "{target} {kind}: mismatches outside damaged blocks: {:#}",
            v["inject"]
        );
    }
}

#[test]
fn every_corrupting_fault_is_detected_on_mem() {
    every_corrupting_fault_is_detected_on("mem:16M", None);
}

#[test]
fn every_corrupting_fault_is_detected_on_a_real_file() {
    let dir = tempdir();
    let f = dir.path().join("t.dat");
    every_corrupting_fault_is_detected_on(f.to_str().expect("utf-8"), Some("64M"));
}

/// On a device with 4 KiB logical blocks under O_DIRECT, a write cannot be cut at 512 bytes (the kernel
/// refuses it): a torn write is cut at a 4 KiB boundary, so the blocks after the cut keep their old data, and
/// verification finds them as lost writes. No injection may turn into an I/O error.
#[test]
fn torn_writes_on_a_4k_native_device_tear_at_4k_and_are_all_found() {
    let lo = match LoopDev::new(32, Some(4096)) {
        Ok(l) => l,
        Err(why) => {
            iolab_testkit::skip(format_args!(
                "torn writes on a 4 KiB device need root and loop devices ({why})"
            ));
            return;
        }
    };
    let mut args = vec!["--target", &lo.dev, "--allow-write-device", "--seed", "3", "--bytes", "64M"];
    args.extend(["--inject", "torn-write:0.01"]);
    args.extend_from_slice(&FAULTY);
    let (code, v) = run_any(&args);
    let f = &v["inject"]["faults"][0];
    assert_eq!(
        num(&v, "/errors/total"),
        0.0,
        "a cut the device refuses shows as an error: {:#}",
        v["errors"]
    );
    assert!(num(&v, "/inject/faults/0/injected") >= 5.0, "enough injections: {f:#}");
    let live = num(&v, "/inject/faults/0/live");
    assert!(live >= 1.0, "some damage outlived later writes: {f:#}");
    assert_eq!(num(&v, "/inject/faults/0/detected"), live, "every live injection found: {f:#}");
    assert!(num(&v, "/verify/by_class/lost_write") >= 1.0, "{:#}", v["verify"]["by_class"]);
    assert_eq!(
        num(&v, "/verify/by_class/torn_write"),
        0.0,
        "no block holds two generations: {:#}",
        v["verify"]
    );
    assert_eq!(v["inject"]["unexplained_mismatches"], 0, "{:#}", v["inject"]);
    assert_eq!(code, 1, "a data mismatch is exit code 1");
}

#[test]
fn lost_write_stops_the_run_by_default() {
    let (code, v) = run_any(&[
        "--target",
        "mem:4M",
        "--seed",
        "3",
        "--rw",
        "randrw",
        "--bs",
        "4k",
        "--qd",
        "8",
        "--duration",
        "20s",
        "--verify",
        "--inject",
        "lost-write:0.01",
    ]);
    assert_eq!(code, 1);
    assert_eq!(v["verify"]["stopped"], true, "{:#}", v["verify"]);
    assert_eq!(v["partial"], true, "stopped before its 20 s");
    assert!(num(&v, "/measured_s") < 15.0);
    let m = &v["verify"]["first_mismatches"][0];
    assert!(m["offset"].is_number() && m["hex"].as_str().is_some_and(|h| !h.is_empty()), "{m:#}");
}

#[test]
fn eio_is_counted_and_ends_the_run_only_when_asked() {
    let base = [
        "--target", "mem:4M", "--seed", "5", "--rw", "randrw", "--bs", "4k", "--qd", "8", "--ios", "20000",
        "--inject", "eio@100",
    ];
    let (code, v) = run_any(&base);
    assert_eq!(code, 1, "I/O errors are exit code 1");
    assert_eq!(v["partial"], false);
    let errors = num(&v, "/errors/total");
    assert!((150.0..=250.0).contains(&errors), "every 100th op fails: {errors}");
    assert_eq!(num(&v, "/inject/faults/0/injected"), errors);
    let mut stop = base.to_vec();
    stop.push("--stop-on-error");
    let (code, v) = run_any(&stop);
    assert_eq!(code, 1);
    assert_eq!(v["partial"], true, "--stop-on-error ends the run at the first error");
    assert!(num(&v, "/total/all/ops") < 2_000.0);
}

#[test]
fn latency_spikes_show_in_the_tail_on_virtual_time() {
    let (code, v) = run_any(&[
        "--target",
        "sim:fixed,latency=100us,servers=8",
        "--clock",
        "virtual",
        "--seed",
        "1",
        "--qd",
        "8",
        "--duration",
        "2s",
        "--ramp",
        "0",
        "--inject",
        "latency-spike:50ms@1000",
    ]);
    assert_eq!(code, 0);
    let max = num(&v, "/total/all/lat_ns/max");
    assert!((50e6..52e6).contains(&max), "a 50 ms spike on a 100 us device: max {max} ns");
    assert!(num(&v, "/total/all/lat_ns/p50") < 200e3, "the median is untouched");
}

/// The journal survives kill -9: the target checks clean against it afterwards, and a block overwritten behind
/// iolab's back is then found.
#[test]
fn journal_survives_kill_9_and_verify_finds_later_damage() {
    let dir = tempdir();
    let target = dir.path().join("t.dat");
    let journal = dir.path().join("t.journal");
    let (t, j) = (target.to_str().expect("utf-8"), journal.to_str().expect("utf-8"));
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("iolab"))
        // Sequential 64K writes wrap the 32M target many times in the first second, so every block is written.
        .args(["run", "--target", t, "--size", "32M", "--rw", "write", "--bs", "64k", "--qd", "16"])
        .args(["--duration", "60s", "--ramp", "0", "--journal", j, "-q", "--no-save"])
        .spawn()
        .expect("spawn iolab");
    std::thread::sleep(std::time::Duration::from_secs(7)); // past the first journal checkpoint (5 s)
    child.kill().expect("kill -9");
    child.wait().expect("reap");
    let (code, v) = verify_any(&[t, "--journal", j]);
    assert_eq!(code, 0, "{:#}", v["verify"]);
    assert_eq!(num(&v, "/verify/mismatches"), 0.0);
    assert_eq!(num(&v, "/verify/blocks_checked"), 8192.0, "every block, all written: {:#}", v["verify"]);
    // Overwrite one written block with an older copy of another: a lost or misdirected write to the checker.
    let data = std::fs::read(&target).expect("read target");
    let (a, b) = (4096 * 17, 4096 * 900);
    let mut damaged = data.clone();
    damaged.copy_within(b..b + 4096, a);
    std::fs::write(&target, &damaged).expect("damage one block");
    let (code, v) = verify_any(&[t, "--journal", j]);
    assert_eq!(code, 1, "damage is exit code 1");
    assert_eq!(num(&v, "/verify/mismatches"), 1.0, "{:#}", v["verify"]);
    assert_eq!(v["verify"]["first_mismatches"][0]["offset"], a as u64);
    assert_eq!(v["verify"]["first_mismatches"][0]["class"], "misdirected_write");
}

/// Starts `iolab run ARGS --journal JOURNAL` (60 s of it), waits until the durable-write log beside the journal
/// holds about `records` acknowledgments (at most 4 s: the journal's first checkpoint comes at 5 s), kills it
/// with SIGKILL, and checks that the journal on disk is still the empty one written before the first write
/// (sequence 0), so whatever a check then requires comes from the log.
fn run_until_logged_then_kill_9(args: &[&str], journal: &std::path::Path, records: u64) {
    let log = journal.with_extension("journal.durable");
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("iolab"))
        .arg("run")
        .args(args)
        .args(["--journal", journal.to_str().expect("utf-8")])
        .args(["--duration", "60s", "--ramp", "0", "-q", "--no-save"])
        .spawn()
        .expect("spawn iolab");
    let start = std::time::Instant::now();
    let want = durable_log_bytes(records);
    while start.elapsed() < std::time::Duration::from_secs(4) {
        if std::fs::metadata(&log).is_ok_and(|m| m.len() >= want) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.kill().expect("kill -9");
    child.wait().expect("reap");
    let j = std::fs::read(journal).expect("the journal");
    assert_eq!(u64::from_le_bytes(j[32..40].try_into().unwrap()), 0, "killed before the first checkpoint");
    let len = std::fs::metadata(&log).map(|m| m.len()).unwrap_or(0);
    assert!(len >= durable_log_bytes(records / 4), "the log holds acknowledgments: {len} bytes");
}

/// Bytes of a durable-write log holding about `records` records (a 32-byte header, 14 bytes a record, batches
/// of several).
fn durable_log_bytes(records: u64) -> u64 {
    32 + 14 * records
}

/// Issue 27, item 6: after a crash, every write acknowledged durable before it must be there, although no
/// journal checkpoint recorded it. Every write is durable (`--sync dsync`) and every 50th is acknowledged
/// without reaching the file (`lost-write@50`); the run is killed after about a second, before the journal's
/// first checkpoint. `iolab verify --journal` finds the lost writes through the durable-write log beside the
/// journal; the journal alone (the log moved away) requires nothing and finds nothing.
#[test]
fn durable_writes_lost_before_the_first_checkpoint_are_found_after_kill_9() {
    let dir = tempdir();
    let (target, journal) = (dir.path().join("t.dat"), dir.path().join("t.journal"));
    let t = target.to_str().expect("utf-8");
    let args = ["--target", t, "--size", "16M", "--rw", "randwrite", "--qd", "4", "--sync", "dsync"];
    let faults = ["--inject", "lost-write@50", "--verify-fail", "continue"];
    run_until_logged_then_kill_9(&[&args[..], &faults[..]].concat(), &journal, 20_000);
    let j = journal.to_str().expect("utf-8");
    let (code, v) = verify_any(&[t, "--journal", j]);
    assert_eq!(code, 1, "lost durable writes are damage: {:#}", v["verify"]);
    let lost = num(&v, "/verify/by_class/lost_write");
    assert!(lost > 0.0 && lost == num(&v, "/verify/mismatches"), "only lost writes: {:#}", v["verify"]);
    assert_eq!(v["verify"]["first_mismatches"][0]["class"], "lost_write");
    let d = &v["verify"]["durable"];
    assert_eq!(d["log"], format!("{j}.durable"));
    assert_eq!(num(&v, "/verify/durable/mismatched_blocks"), num(&v, "/verify/mismatched_blocks"), "{d:#}");
    assert!(num(&v, "/verify/durable/records") >= 5_000.0, "{d:#}");
    // The journal alone: the check passes, and that is what it said before the log existed.
    std::fs::rename(format!("{j}.durable"), format!("{j}.moved")).expect("move the log away");
    let (code, v) = verify_any(&[t, "--journal", j]);
    assert_eq!((code, num(&v, "/verify/mismatches")), (0, 0.0), "{:#}", v["verify"]);
    assert!(v["verify"]["durable"].is_null());
}

/// Issue 27, item 6, end to end through the block cache: a write-back cache that acknowledges a flush before
/// writing its dirty lines back (`--inject early-flush-ack@1`, the bug on purpose) loses, when the process
/// is killed, writes the workload was told were durable (`--fdatasync 4`); `iolab verify --journal` finds them
/// as lost writes. The same run with the cache as it is (a flush waits for its target's write-backs) checks
/// clean: what the crash lost there was never acknowledged durable.
#[test]
fn a_write_back_cache_acknowledging_flushes_early_is_caught_after_kill_9() {
    for early in [false, true] {
        let dir = tempdir();
        let (target, journal) = (dir.path().join("t.dat"), dir.path().join("t.journal"));
        let t = target.to_str().expect("utf-8");
        let mut args = vec!["--target", t, "--size", "16M", "--rw", "randwrite", "--fdatasync", "4"];
        args.extend(["--cache", "32M", "--cache-mode", "write-back"]);
        if early {
            args.extend(["--inject", "early-flush-ack@1"]);
        }
        run_until_logged_then_kill_9(&args, &journal, 4_000);
        let (code, v) = verify_any(&[t, "--journal", journal.to_str().expect("utf-8")]);
        let raised = num(&v, "/verify/durable/blocks_raised");
        assert!(raised > 100.0, "early {early}: flushed writes were required: {:#}", v["verify"]);
        if early {
            assert_eq!(code, 1, "{:#}", v["verify"]);
            let lost = num(&v, "/verify/by_class/lost_write");
            assert!(lost > 0.0 && lost == num(&v, "/verify/mismatches"), "{:#}", v["verify"]);
            assert_eq!(num(&v, "/verify/durable/mismatched_blocks"), num(&v, "/verify/mismatched_blocks"));
        } else {
            assert_eq!((code, num(&v, "/verify/mismatches")), (0, 0.0), "no false alarm: {:#}", v["verify"]);
        }
    }
}

/// `--inject early-flush-ack` is a write-back cache's fault: without one it is refused, not silently idle.
#[test]
fn verify_early_flush_ack_without_a_write_back_cache_is_refused() {
    let out = iolab()
        .args(["run", "--target", "mem:1M", "--rw", "randwrite", "--fdatasync", "1", "--ios", "10"])
        .args(["--inject", "early-flush-ack", "--no-save", "-q"])
        .output()
        .expect("spawn iolab");
    assert_eq!(out.status.code(), Some(2));
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(e.contains("'early-flush-ack'") && e.contains("--cache-mode write-back"), "{e}");
}

#[test]
fn verify_without_journal_checks_self_consistency() {
    let dir = tempdir();
    let target = dir.path().join("t.dat");
    let t = target.to_str().expect("utf-8");
    let (code, _) = run_any(&[
        "--target", t, "--size", "16M", "--rw", "write", "--bs", "64k", "--bytes", "16M", "--verify",
    ]);
    assert_eq!(code, 0);
    let (code, v) = verify_any(&[t]);
    assert_eq!(code, 0, "{:#}", v["verify"]);
    assert_eq!(num(&v, "/verify/blocks_checked"), 4096.0, "every 4K block of 16M");
    let mut data = std::fs::read(&target).expect("read");
    data[4096 * 100 + 2000] ^= 0x10;
    std::fs::write(&target, &data).expect("flip a bit");
    let (code, v) = verify_any(&[t]);
    assert_eq!(code, 1);
    assert_eq!(v["verify"]["first_mismatches"][0]["class"], "corrupt_payload", "{:#}", v["verify"]);
    assert_eq!(v["verify"]["first_mismatches"][0]["offset"], 4096 * 100);
}

/// Issue 14, item 16: `iolab verify` checks were saved as runs and listed among them. They are saved as
/// their own kind: `runs --kind verify` lists them, `runs --kind run` does not.
#[test]
fn verify_checks_are_saved_apart_from_runs() {
    let dir = tempdir();
    let db = dir.path().join("results.db");
    let target = dir.path().join("t.dat");
    let t = target.to_str().expect("utf-8");
    let out = iolab()
        .env("IOLAB_DB", &db)
        .args(["run", "--target", t, "--size", "4M", "--rw", "write", "--bytes", "4M", "--verify", "-q"])
        .output()
        .expect("spawn iolab");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let out = iolab().env("IOLAB_DB", &db).args(["verify", t, "-q"]).output().expect("spawn iolab");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let kinds = |kind: &str| -> Vec<String> {
        let out = iolab().env("IOLAB_DB", &db).args(["runs", "--json", "--kind", kind]).output().unwrap();
        let rows: Value = serde_json::from_slice(&out.stdout).expect("runs --json");
        rows.as_array().unwrap().iter().map(|r| r["kind"].as_str().unwrap().to_string()).collect()
    };
    assert_eq!(kinds("run"), ["run"]);
    assert_eq!(kinds("verify"), ["verify"]);
}

/// Issue 15, item 9: the `--inject` line printed `injectedeio@1000 227` (no space), counted the ramp's
/// injections beside the window's errors without saying so, and the hint blamed a failing device for errors
/// the user injected.
#[test]
fn injected_errors_are_said_as_injected() {
    let out = iolab()
        .args(["run", "--target", "sim:fixed,latency=100us,servers=8", "--clock", "virtual", "--seed", "1"])
        .args(["--rw", "randrw", "--inject", "eio@1000", "-d", "2s", "--ramp", "1s", "--no-save"])
        .output()
        .expect("spawn iolab");
    let text = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "I/O errors: {stderr}");
    let line = text.lines().find(|l| l.starts_with("injected")).expect("an injected line");
    assert!(line.starts_with("injected eio@1000: ") && line.contains("ramp included"), "{line}");
    assert!(text.contains("with EIO injected by --inject"), "{text}");
    assert!(!text.contains("may be failing"), "{text}");
    let (code, v) = run_any(&[
        "--target",
        "sim:fixed,latency=100us,servers=8",
        "--clock",
        "virtual",
        "--seed",
        "1",
        "--rw",
        "randrw",
        "--inject",
        "eio@1000",
        "-d",
        "2s",
        "--ramp",
        "1s",
    ]);
    assert_eq!(code, 1);
    assert!(warning_kinds(&v).contains(&"injected_errors".to_string()));
    assert!(!warning_kinds(&v).contains(&"errors".to_string()));
}
