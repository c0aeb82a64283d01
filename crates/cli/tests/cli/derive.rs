//! Issue 28 item 4: `iolab profiles derive TRACE` writes a job file whose workers reproduce the trace's I/O,
//! and a run of that job looks like a replay of the trace on the same target (the fidelity check).
//!
//! The trace is recorded from a run of a known job (`--trace`), so the test knows what the derived job must
//! say: its shares, sizes, hot zone, flushes per write and rate.

use crate::util::{iolab, num, tempdir};
use serde_json::Value;
use std::path::Path;

/// Random 8K reads at 3,000 IOPS, 80 % of them in the first 20 % of the target; sequential writes of 4K and
/// 16K at 1,000 IOPS, an fdatasync after every 4th; on an emulated NVMe drive, on virtual time.
const KNOWN: &str = r#"
duration = "4s"
ramp = "0s"
clock = "virtual"
seed = 7
target = "sim:ssd,nvme"

[worker.reader]
rate = "3000"
arrival = "poisson"
qd = 32
rw = "randread"
bs = "8k"
dist = "zones:80/20:20/80"

[worker.writer]
rate = "1000"
qd = 8
fdatasync = 4
rw = "write"
bs = "4k/50:16k/50"
"#;

/// Records the known job's trace into `dir`; its path.
fn record(dir: &Path) -> std::path::PathBuf {
    let job = dir.join("known.toml");
    std::fs::write(&job, KNOWN).unwrap();
    let trace = dir.join("known.iolabtrace");
    let out = iolab()
        .args(["run", job.to_str().unwrap(), "--trace", trace.to_str().unwrap(), "--no-save", "-q"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    trace
}

/// `iolab profiles derive TRACE ARGS`: the job file's text.
fn derive(trace: &Path, args: &[&str]) -> String {
    let out = iolab().args(["profiles", "derive", trace.to_str().unwrap()]).args(args).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// The value of `key = ...` in the TOML `section` of `job` (the first after the section's header).
fn value_in<'a>(job: &'a str, section: &str, key: &str) -> &'a str {
    let start = job.find(section).unwrap_or_else(|| panic!("no {section} in:\n{job}"));
    let line = job[start..]
        .lines()
        .find(|l| l.starts_with(&format!("{key} = ")))
        .unwrap_or_else(|| panic!("no {key} after {section} in:\n{job}"));
    line[key.len() + 3..].split("  #").next().unwrap().trim().trim_matches('"')
}

#[test]
fn the_derived_job_says_what_the_trace_did() {
    let dir = tempdir();
    let trace = record(dir.path());
    let job = derive(&trace, &[]);
    iolab_spec::JobSpec::from_toml(&job, "derived").unwrap_or_else(|e| panic!("{e}\n{job}"));
    let weight = |section: &str| value_in(&job, section, "weight").parse::<f64>().unwrap();
    let reads = weight("# random reads\n");
    let writes = weight("# sequential writes\n");
    let read_share = reads / (reads + writes) * 100.0;
    assert!((read_share - 75.0).abs() < 2.0, "read share {read_share:.1} % (3,000 of 4,000 IOPS):\n{job}");
    assert_eq!(value_in(&job, "# random reads\n", "bs"), "8k", "{job}");
    let write_sizes = value_in(&job, "# sequential writes\n", "bs");
    assert!(write_sizes.starts_with("4k/") && write_sizes.contains(":16k/"), "{write_sizes}");
    // The random reads and the sequential writes are workers of their own, whose rates add up.
    let rate: f64 =
        ["[worker.", "_seq_writes]"].iter().map(|w| value_in(&job, w, "rate").parse::<f64>().unwrap()).sum();
    assert!((rate - 4000.0).abs() < 200.0, "rate {rate} (4,000 IOPS offered):\n{job}");
    let every: f64 = value_in(&job, "_seq_writes]", "fdatasync").parse().unwrap();
    assert_eq!(every, 4.0, "{job}");
    // The hot zone: the first 20 % of the target took 80 % of the random reads.
    let zones = value_in(&job, "# random reads\n", "dist");
    let (mut io, mut space) = (0.0, 0.0);
    for pair in zones.trim_start_matches("zones:").split(':') {
        let (i, s) = pair.split_once('/').unwrap();
        if space < 19.9 {
            io += i.parse::<f64>().unwrap();
            space += s.parse::<f64>().unwrap();
        }
    }
    assert!((space - 20.0).abs() < 2.5 && (io - 80.0).abs() < 4.0, "{io} % of I/O in {space} %: {zones}");
    // Closed loop: a depth, no rate.
    let closed = derive(&trace, &["--closed"]);
    assert!(closed.contains("\nqd = ") && !closed.contains("\nrate = "), "{closed}");
}

/// `iolab ARGS --json - -q --no-save`, exit 0; the result.
fn json(args: &[&str]) -> Value {
    let out = iolab().args(args).args(["--json", "-", "-q", "--no-save"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn a_run_of_the_derived_job_looks_like_a_replay_of_the_trace() {
    let dir = tempdir();
    let trace = record(dir.path());
    let job = dir.path().join("derived.toml");
    let out = iolab()
        .args(["profiles", "derive", trace.to_str().unwrap(), "-o", job.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let text = std::fs::read_to_string(&job).unwrap();
    let label = value_in(&text, "[worker.", "target").trim_start_matches('@').to_string();
    assert!(text.contains("\n[worker.") && text.contains("_seq_writes]"), "{text}");
    let on = format!("{label}=sim:ssd,nvme");
    let t = trace.to_str().unwrap();
    let replayed = json(&["replay", t, "--target", "sim:ssd,nvme", "--clock", "virtual", "--seed", "7"]);
    let run = json(&[
        "run",
        job.to_str().unwrap(),
        "--target",
        &on,
        "--clock",
        "virtual",
        "--duration",
        "4s",
        "--ramp",
        "0s",
        "--seed",
        "7",
    ]);
    let iops = |v: &Value| num(v, "/total/all/iops");
    let reads = |v: &Value| num(v, "/total/read/ops") / num(v, "/total/all/ops") * 100.0;
    let read_p50 = |v: &Value| num(v, "/total/read/lat_ns/p50");
    assert!((iops(&run) / iops(&replayed) - 1.0).abs() < 0.05, "IOPS {} vs {}", iops(&run), iops(&replayed));
    assert!((reads(&run) - reads(&replayed)).abs() < 2.0, "reads {} vs {} %", reads(&run), reads(&replayed));
    let (a, b) = (read_p50(&run), read_p50(&replayed));
    assert!((a / b - 1.0).abs() < 0.25, "read p50 {a} vs {b} ns");
    let flushes = |v: &Value| num(v, "/total/flush/ops");
    assert!(
        (flushes(&run) / flushes(&replayed) - 1.0).abs() < 0.1,
        "{} vs {}",
        flushes(&run),
        flushes(&replayed)
    );
}

#[test]
fn a_trace_that_is_not_there_is_refused_and_nothing_is_written() {
    let dir = tempdir();
    let out_file = dir.path().join("job.toml");
    let out = iolab()
        .args(["profiles", "derive", "/nonexistent/trace.csv", "-o", out_file.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/trace.csv"));
    assert!(!out_file.exists());
}

/// `--check TARGET` is the fidelity check in one command: the trace replayed (A) and the derived job run (B)
/// on the emulated drive, compared; the known job's IOPS come back within a few percent, and the job goes to
/// `-o` only. A trace of several devices is refused, with nothing written.
#[test]
fn check_replays_and_runs_on_the_target_and_compares() {
    let dir = tempdir();
    let trace = record(dir.path());
    let job = dir.path().join("checked.toml");
    let t = trace.to_str().unwrap();
    let out = iolab()
        .args(["profiles", "derive", t, "--check", "sim:ssd,nvme", "-o", job.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("fidelity on sim:ssd,nvme: each property of the trace, and of its run derived again, seed 1, virtual clock"), "{text}");
    assert!(text.contains("what the storage did: the trace replayed (A) and the job run (B)"), "{text}");
    let iops = text.lines().find(|l| l.starts_with("IOPS")).unwrap_or_else(|| panic!("{text}"));
    let numbers: Vec<f64> =
        iops.split_whitespace().filter_map(|w| w.replace(',', "").parse::<f64>().ok()).collect();
    let (a, b) = (numbers[0], numbers[1]);
    assert!((b / a - 1.0).abs() < 0.05, "{iops}");
    assert!(!text.contains("[worker."), "the job is not on stdout");
    assert!(std::fs::read_to_string(&job).unwrap().contains("[worker."));
    let two = dir.path().join("two.csv");
    std::fs::write(&two, "start_ns,submit_ns,complete_ns,op,offset,len,result,worker,target\n0,0,10,read,0,4096,4096,0,a\n5,5,20,read,0,4096,4096,0,b\n").unwrap();
    let other = dir.path().join("other.toml");
    let out = iolab()
        .args([
            "profiles",
            "derive",
            two.to_str().unwrap(),
            "--check",
            "sim:ssd",
            "-o",
            other.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("2 devices"));
    assert!(!other.exists(), "nothing written");
}

/// Issue 36 item 2: sequential reads, random reads hot at the start of the target and random writes hot at its
/// end, in 1 GiB of an emulated drive. The derived job keeps each property `--check` compares (a sequential
/// stream of its own, a zone map per kind of op, the footprint as its region, the bursts), so the check's run
/// derived again matches the trace on every row; before, the sequential share fell by half, one zone map
/// served reads and writes, and the region was the whole drive.
const SHAPED: &str = r#"
duration = "6s"
ramp = "0s"
clock = "virtual"
seed = 3
target = "sim:ssd,nvme"
length = "1g"

[worker.streamer]
rate = "600"
arrival = "poisson"
burst = 4
qd = 16
rw = "read"
bs = "64k"

[worker.reader]
rate = "400"
arrival = "poisson"
burst = 4
qd = 16
rw = "randread"
bs = "8k"
dist = "zones:80/20:20/80"

[worker.writer]
rate = "400"
arrival = "poisson"
burst = 4
qd = 16
rw = "randwrite"
bs = "4k/70:16k/30"
dist = "zones:10/70:90/30"
"#;

/// Records `job` into `dir/NAME.iolabtrace`; its path.
fn record_job(dir: &Path, name: &str, job: &str) -> std::path::PathBuf {
    let file = dir.join(format!("{name}.toml"));
    std::fs::write(&file, job).unwrap();
    let trace = dir.join(format!("{name}.iolabtrace"));
    let out = iolab()
        .args(["run", file.to_str().unwrap(), "--trace", trace.to_str().unwrap(), "--no-save", "-q"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    trace
}

#[test]
fn check_compares_every_property_the_job_claims_and_each_passes() {
    let dir = tempdir();
    let trace = record_job(dir.path(), "shaped", SHAPED);
    let job = dir.path().join("shaped-derived.toml");
    let out = iolab()
        .args(["profiles", "derive", trace.to_str().unwrap(), "--check", "sim:ssd,nvme"])
        .args(["-o", job.to_str().unwrap()])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}{}", String::from_utf8_lossy(&out.stderr));
    let properties = [
        "rate",
        "reads",
        "writes",
        "flushes",
        "trims",
        "sequential reads (of reads)",
        "sequential writes (of writes)",
        "read sizes",
        "write sizes",
        "random read zones",
        "random write zones",
        "footprint",
        "burstiness (ops per instant)",
    ];
    for p in properties {
        let row =
            text.lines().find(|l| l.starts_with(&format!("{p}  "))).unwrap_or_else(|| panic!("{p}: {text}"));
        assert!(row.ends_with("PASS"), "{row}\n{text}");
    }
    assert!(text.contains("fidelity: PASS"), "{text}");
    // What the job says: reads 600 of 1,400 IOPS sequential, the zones of each kind apart, the footprint.
    let seq = text.lines().find(|l| l.starts_with("sequential reads")).unwrap();
    let share: f64 = seq.split_whitespace().nth(4).unwrap().parse().unwrap();
    assert!((share - 60.0).abs() < 3.0, "{seq}");
    let derived = std::fs::read_to_string(&job).unwrap();
    let read_zones = value_in(&derived, "# random reads\n", "dist");
    let write_zones = value_in(&derived, "# random writes\n", "dist");
    assert_ne!(read_zones, write_zones, "{derived}");
    assert!(derived.contains("burst = 4"), "{derived}");
}

/// The footprint of the trace at `path`: lowest offset (down to 1 MiB) to highest end, up to 1 MiB.
fn footprint_of(path: &Path) -> u64 {
    let mut t = iolab_trace::open(path.to_str().unwrap()).unwrap();
    let (mut lo, mut hi) = (u64::MAX, 0);
    while let Some(r) = t.next_record().unwrap() {
        if r.len > 0 {
            lo = lo.min(r.offset);
            hi = hi.max(r.offset + r.len as u64);
        }
    }
    let lo = lo - lo % (1 << 20);
    (hi - lo).next_multiple_of(1 << 20)
}

/// Issue 37 item 6: the derived target is the trace's footprint (not the drive it was captured on), and the
/// job runs with `--size` or on a smaller file: the footprint scaled down, which the result says; the user's
/// file is not grown to the footprint.
#[test]
fn the_derived_target_is_the_footprint_and_runs_on_a_smaller_one() {
    let dir = tempdir();
    let trace = record_job(dir.path(), "shaped", SHAPED);
    let job = dir.path().join("derived.toml");
    let out = iolab()
        .args(["profiles", "derive", trace.to_str().unwrap(), "-o", job.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let text = std::fs::read_to_string(&job).unwrap();
    let label = value_in(&text, "[worker.", "target").trim_start_matches('@').to_string();
    let footprint = footprint_of(&trace);
    assert!(footprint <= 1 << 30 && footprint > 900 << 20, "{footprint}");
    let line = text.lines().find(|l| l.starts_with(&format!("{label} = {{ footprint = "))).unwrap();
    let declared = line.split('"').nth(1).unwrap();
    assert_eq!(iolab_spec::units::parse_size(declared), Ok(footprint), "{line}");
    let scaled =
        |v: &Value| v["warnings"].as_array().unwrap().iter().any(|w| w["kind"] == "footprint_scaled");
    let short = ["--duration", "1s", "--ramp", "0s", "--clock", "real", "--seed", "1"];
    let j = job.to_str().unwrap();
    let out = iolab()
        .args(["run", j, "--size", "16M"])
        .args(short)
        .args(["--json", "-", "-q", "--no-save"])
        .env("IOLAB_SCRATCH_DIR", dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        scaled(&serde_json::from_slice(&out.stdout).unwrap()),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let file = dir.path().join("small.img");
    std::fs::write(&file, vec![7u8; 8 << 20]).unwrap();
    let on = format!("{label}={}", file.display());
    let run = json(&[&["run", j, "--target", &on, "--overwrite"][..], &short[..]].concat());
    assert!(scaled(&run), "{run}");
    assert_eq!(std::fs::metadata(&file).unwrap().len(), 8 << 20, "the user's file is not grown");
}
