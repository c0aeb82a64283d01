//! Jobs with `[[phase]]` tables (fio's stonewall, Iometer's spec lists): the phases run in order, each its own
//! run with its own result, as the points of a sweep along a `phase` axis: one table, one `iolab.sweep/1`
//! document, one catalog entry.

use crate::util::{iolab, tempdir};
use serde_json::Value;

const JOB: &str = r#"
ramp = "0s"
clock = "virtual"
seed = 7
target = "sim:fixed,latency=100us,servers=8,size=1G"

[[phase]]
name = "fill"
bytes = "64M"
[phase.worker.writer]
rw = "write"
bs = "1M"
qd = 4

[[phase]]
name = "oltp"
duration = "2s"
[phase.worker.db]
count = 2
rw = "randrw"
read_pct = 70
bs = "8k"
qd = 8
"#;

#[test]
fn phases_run_in_order_each_with_its_own_result() {
    let dir = tempdir();
    let job = dir.path().join("phases.toml");
    std::fs::write(&job, JOB).unwrap();
    let db = dir.path().join("results.db");
    let out = iolab()
        .env("IOLAB_DB", &db)
        .args(["run", job.to_str().unwrap(), "--json", "-", "-q"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["schema"], "iolab.sweep/1");
    assert_eq!(v["axes"][0]["key"], "phase");
    let points = v["points"].as_array().unwrap();
    assert_eq!(points.len(), 2);
    let (fill, oltp) = (&points[0], &points[1]);
    assert_eq!(fill["params"]["phase"], "fill");
    assert_eq!(fill["result"]["workers"].as_array().unwrap().len(), 1);
    assert_eq!(fill["result"]["total"]["write"]["bytes"], 64u64 << 20, "the fill phase ends at its bytes");
    assert_eq!(fill["result"]["total"]["read"]["ops"], 0);
    assert_eq!(oltp["params"]["phase"], "oltp");
    assert_eq!(oltp["result"]["workers"].as_array().unwrap().len(), 2);
    assert!((oltp["result"]["measured_s"].as_f64().unwrap() - 2.0).abs() < 0.01);
    let reads = oltp["result"]["total"]["read"]["ops"].as_f64().unwrap()
        / oltp["result"]["total"]["all"]["ops"].as_f64().unwrap();
    assert!((reads - 0.7).abs() < 0.02, "{reads}");
    assert_eq!(oltp["result"]["config"]["plan"]["name"], format!("{} [oltp]", job.display()));
    // One catalog entry, a sweep.
    let rows: Value = serde_json::from_slice(
        &iolab().env("IOLAB_DB", &db).args(["runs", "--json"]).output().unwrap().stdout,
    )
    .unwrap();
    assert_eq!(rows.as_array().unwrap().len(), 1);
    assert_eq!(rows[0]["kind"], "sweep");
    // The text names phases, not a sweep's points.
    let out = iolab().args(["run", job.to_str().unwrap(), "--no-save", "-d", "1s"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("2 phases") && text.contains("fill") && !text.contains("knee"), "{text}");
}

#[test]
fn phases_are_refused_where_they_cannot_run() {
    let dir = tempdir();
    let job = dir.path().join("phases.toml");
    std::fs::write(&job, JOB).unwrap();
    let j = job.to_str().unwrap();
    let out = iolab().args(["sweep", j, "--qd", "1,2", "--no-save"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("[[phase]]"), "{stderr}");
    let both = dir.path().join("both.toml");
    std::fs::write(&both, format!("{JOB}\n[worker.extra]\nrw = \"read\"\n")).unwrap();
    let out = iolab().args(["run", both.to_str().unwrap(), "--no-save"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("[phase.worker.NAME]"), "{stderr}");
}

/// A fio file of `jobs` job sections, `stonewall` in `[global]`: one phase per job.
fn stonewalled(jobs: usize, dir: &std::path::Path) -> String {
    let mut text = format!("[global]\nstonewall\nrw=randread\nsize=1M\nfilename={}/x\n", dir.display());
    text.extend((0..jobs).map(|i| format!("[j{i}]\n")));
    text
}

/// `iolab ARGS` under a 500 MB address-space limit (`ulimit -v`): an input that makes memory grow with the
/// square of its size aborts there.
fn under_500mb(args: &str) -> std::process::Output {
    let bin = assert_cmd::cargo::cargo_bin("iolab");
    let script = format!("ulimit -v 500000 && exec {} {args}", bin.display());
    std::process::Command::new("bash")
        .args(["-c", &script])
        .env("IOLAB_DB", crate::util::shared_catalog())
        .output()
        .unwrap()
}

#[test]
fn the_most_phases_a_job_holds_are_planned_in_linear_memory() {
    let dir = tempdir();
    let fio = dir.path().join("walls.fio");
    std::fs::write(&fio, stonewalled(iolab_spec::MAX_PHASES, dir.path())).unwrap();
    let out = under_500mb(&format!("run {} --dry-run", fio.display()));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["points"].as_array().unwrap().len(), iolab_spec::MAX_PHASES);
}

#[test]
fn more_phases_or_workers_than_a_job_holds_are_refused_before_they_are_built() {
    let dir = tempdir();
    for (jobs, says) in [(1001, "1001 phases"), (2000, "at most 1024 job sections")] {
        let fio = dir.path().join("walls.fio");
        std::fs::write(&fio, stonewalled(jobs, dir.path())).unwrap();
        let out = under_500mb(&format!("run {} --dry-run", fio.display()));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains(says) && stderr.contains("walls.fio"), "{stderr}");
    }
    let toml = dir.path().join("phases.toml");
    std::fs::write(&toml, "[[phase]]\n[phase.worker.w]\n".repeat(5000)).unwrap();
    let out = under_500mb(&format!("run {} --dry-run", toml.display()));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("5000 [[phase]] tables") && stderr.contains("at most 1000 phases"), "{stderr}");
    assert_eq!(crate::util::entries(dir.path()), ["phases.toml", "walls.fio"]);
}
