//! Issue 16, fio job files: `iolab import fio FILE` prints the iolab job file, and `iolab run FILE` takes a
//! fio job file directly (recognised by its content, not its name), with the command-line overrides on top.

use crate::util::{iolab, tempdir, SIM};
use serde_json::Value;

const OLTP: &str = "\
; an OLTP-like fio job
[global]
ioengine=libaio
direct=1
time_based
runtime=30
group_reporting
size=64m

[oltp]
rw=randrw
rwmixread=60
bs=8k
iodepth=8
numjobs=4
";

#[test]
fn import_fio_prints_a_job_file_that_iolab_runs() {
    let dir = tempdir();
    let fio = dir.path().join("oltp.fio");
    std::fs::write(&fio, OLTP).unwrap();
    let out = iolab().args(["import", "fio", fio.to_str().unwrap()]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("ignored fio option 'group_reporting'") && stderr.contains("line 7"), "{stderr}");
    let toml = String::from_utf8(out.stdout).unwrap();
    assert!(toml.contains("# fio: rwmixread=60 (section [oltp], line 12)"), "{toml}");
    // Written with -o (atomically, through the write gate), it runs as an iolab job file.
    let job = dir.path().join("oltp.toml");
    let out = iolab()
        .args(["import", "fio", fio.to_str().unwrap(), "-q", "-o", job.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.stderr.is_empty(), "-q lists nothing");
    assert_eq!(std::fs::read_to_string(&job).unwrap(), toml);
    // -o over the fio file itself is refused.
    let out =
        iolab().args(["import", "fio", fio.to_str().unwrap(), "-o", fio.to_str().unwrap()]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(std::fs::read_to_string(&fio).unwrap(), OLTP);
}

/// numjobs=4 and rwmixread=60 run 4 workers at 60% reads; the fio file is recognised by its content (no
/// `.fio` name), and --target, --clock, --duration and --seed override it as they override a TOML job.
#[test]
fn run_takes_a_fio_job_file_with_overrides() {
    let dir = tempdir();
    let job = dir.path().join("oltp.job");
    std::fs::write(&job, OLTP).unwrap();
    let out = iolab()
        .args(["run", job.to_str().unwrap()])
        .args(SIM)
        .args(["-d", "2s", "--buffered", "--json", "-", "-q", "--no-save"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["workers"].as_array().unwrap().len(), 4);
    let reads = v["total"]["read"]["ops"].as_f64().unwrap() / v["total"]["all"]["ops"].as_f64().unwrap();
    assert!((reads - 0.60).abs() < 0.02, "read share {reads}");
    assert_eq!(v["config"]["plan"]["workers"][0]["qd"], 8);
}

#[test]
fn a_fio_engine_iolab_does_not_have_is_refused_with_its_line() {
    let dir = tempdir();
    let job = dir.path().join("rbd.fio");
    std::fs::write(&job, "[global]\nsize=1g\n\n[ceph]\nioengine=rbd\nrw=randread\n").unwrap();
    for args in
        [vec!["run", job.to_str().unwrap(), "--no-save"], vec!["import", "fio", job.to_str().unwrap()]]
    {
        let out = iolab().args(&args).current_dir(dir.path()).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains("rbd") && stderr.contains("line 5") && stderr.contains("[ceph]"), "{stderr}");
    }
    assert_eq!(crate::util::entries(dir.path()), ["rbd.fio"], "nothing is created");
}

/// An Iometer configuration kept in the import crate's tests: two workers, three targets, Iometer 1.1.0.
fn icf() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../import/src/iometer/testdata/two_workers_1_1_0.icf")
}

/// Issue 16, Iometer: `iolab import iometer` lists the disks to map, and `iolab run FILE.icf` runs the
/// configuration with one `--target` for all its disks or one per disk name.
#[test]
fn run_takes_an_iometer_configuration_and_maps_its_disks() {
    let icf = icf();
    let out = iolab().args(["import", "iometer", icf.to_str().unwrap()]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("--target PHYSICALDRIVE_1=PATH") && stderr.contains("--target E_LOGS=PATH"),
        "{stderr}"
    );
    let run = |targets: &[&str]| -> Value {
        let out = iolab()
            .arg("run")
            .arg(&icf)
            .args(targets)
            .args(["--clock", "virtual", "-d", "1s", "--ramp", "0", "--json", "-", "-q", "--no-save"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{targets:?}: {}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let v = run(&["--target", "sim:ssd,size=4G"]);
    assert_eq!(v["workers"].as_array().unwrap().len(), 2);
    assert_eq!(v["config"]["plan"]["workers"][0]["qd"], 32, "16 outstanding on each of 2 targets");
    let v = run(&[
        "--target",
        "PHYSICALDRIVE_1=sim:ssd,size=4G",
        "--target",
        "PHYSICALDRIVE_2=sim:hdd,size=4G",
        "--target",
        "E_LOGS=sim:ssd,size=2G",
    ]);
    let targets: Vec<&str> = v["config"]["plan"]["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(targets.len(), 3, "{targets:?}");
}

/// Issue 25, item 16.4: `iolab run FILE.icf` announces only the disks the command line leaves unmapped.
#[test]
fn run_of_an_iometer_configuration_announces_only_unmapped_disks() {
    let stderr_of = |targets: &[&str]| -> String {
        let out = iolab()
            .arg("run")
            .arg(icf())
            .args(targets)
            .args(["--clock", "virtual", "-d", "1s", "--ramp", "0", "--no-save"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{targets:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let some = stderr_of(&[
        "--target",
        "PHYSICALDRIVE_1=sim:ssd,size=4G",
        "--target",
        "PHYSICALDRIVE_2=sim:hdd,size=4G",
        "--target",
        "E_LOGS=sim:ssd,size=2G",
    ]);
    assert!(!some.contains("map it with"), "every disk is mapped: {some}");
    let all = stderr_of(&["--target", "sim:ssd,size=4G"]);
    assert!(!all.contains("map it with"), "a plain --target maps them all: {all}");
}

#[test]
fn a_malformed_iometer_configuration_names_its_line() {
    let dir = tempdir();
    let mut text = std::fs::read_to_string(icf()).unwrap();
    // Weights of one access specification that no longer sum to 100.
    text = text.replacen("8192,90,70,100,0,1,8192,0", "8192,80,70,100,0,1,8192,0", 1);
    let bad = dir.path().join("bad.icf");
    std::fs::write(&bad, &text).unwrap();
    let out = iolab().args(["run", bad.to_str().unwrap(), "--no-save"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("line") && stderr.contains("100"), "{stderr}");
}

/// Issue 16, fio results: a real fio 3.33 report (two stonewalled groups, kept in the import crate's test
/// data) is stored as two runs measured by fio, tagged, and `iolab compare` says where the tools differ.
#[test]
fn fio_results_are_stored_as_runs_measured_by_fio_and_compared_with_notes() {
    let dir = tempdir();
    let db = dir.path().join("results.db");
    let report =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../import/testdata/fio-3.33-two-groups.json");
    let out = iolab()
        .env("IOLAB_DB", &db)
        .args(["import", "fio-result", report.to_str().unwrap(), "--tag", "site=lab1"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("measured by fio (fio-3.33)"));
    let rows: Value = serde_json::from_slice(
        &iolab()
            .env("IOLAB_DB", &db)
            .args(["runs", "--json", "--tag", "measured_by=fio"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let ids: Vec<&str> = rows.as_array().unwrap().iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), 2, "one run per fio reporting group: {rows}");
    // Beside an iolab run: compare names the definitions that differ.
    let out = iolab().env("IOLAB_DB", &db).args(["run"]).args(SIM).args(["-d", "1s", "-q"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let rows: Value = serde_json::from_slice(
        &iolab().env("IOLAB_DB", &db).args(["runs", "--json"]).output().unwrap().stdout,
    )
    .unwrap();
    let newest = rows[0]["id"].as_str().unwrap().to_string();
    let out = iolab().env("IOLAB_DB", &db).args(["compare", ids[0], &newest]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("fio") && text.contains("intended start"), "{text}");
}

/// fio's stonewall: the jobs after it wait for the ones before; `iolab run` runs them as phases, in order,
/// each with its own result.
#[test]
fn a_stonewalled_fio_job_file_runs_as_phases() {
    let dir = tempdir();
    let job = dir.path().join("two.fio");
    std::fs::write(
        &job,
        "[global]\nsize=256m\nbs=64k\niodepth=4\n\n[seqwrite]\nrw=write\n\n[randread]\nstonewall\nrw=randread\nbs=4k\ntime_based\nruntime=1\n",
    )
    .unwrap();
    let out = iolab()
        .args(["run", job.to_str().unwrap()])
        .args(SIM)
        .args(["--json", "-", "-q", "--no-save"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let points = v["points"].as_array().unwrap();
    assert_eq!(points.len(), 2, "{v:#}");
    assert_eq!(points[0]["params"]["phase"], "seqwrite");
    assert_eq!(points[0]["result"]["total"]["write"]["bytes"], 256u64 << 20, "fio writes size once");
    assert_eq!(points[1]["params"]["phase"], "randread");
    assert_eq!(points[1]["result"]["total"]["write"]["ops"], 0);
}

/// Issue 25, item 12: fio's own JESD219 example (a device, no size) runs its one pass over the target given
/// on the command line, whose size iolab knows; without a target it is refused, naming `size`.
#[test]
fn import_jesd219_does_one_pass_over_the_target_given() {
    let dir = tempdir();
    let fio = dir.path().join("jesd219.fio");
    let text = "[JESD219]\nioengine=libaio\ndirect=1\nrw=randrw\nnorandommap\nrandrepeat=0\nrwmixread=40\n\
                rwmixwrite=60\niodepth=256\nnumjobs=4\n\
                bssplit=512/4:1024/1:1536/1:2048/1:2560/1:3072/1:3584/1:4k/67:8k/10:16k/7:32k/3:64k/3\n\
                blockalign=4k\nrandom_distribution=zoned:50/5:30/15:20/80\nfilename=/dev/nvme0n1\ngroup_reporting\n";
    std::fs::write(&fio, text).unwrap();
    let out = iolab().args(["import", "fio", fio.to_str().unwrap()]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("'size'") && stderr.contains("--target"), "{stderr}");
    let out = iolab()
        .args(["run", fio.to_str().unwrap(), "--target", "mem:16M", "--buffered", "--json", "-", "-q"])
        .arg("--no-save")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let bytes = v["total"]["all"]["bytes"].as_f64().unwrap();
    assert!((bytes - 4.0 * 16.0 * 1048576.0).abs() < 65536.0 * 4.0 * 4.0, "one pass per job: {bytes}");
}

/// Issue 25, item 12: the random-map note is said on stderr with the ignored options.
#[test]
fn import_says_the_random_map_note() {
    let dir = tempdir();
    let fio = dir.path().join("split.fio");
    std::fs::write(&fio, "[j]\nrw=randread\nbssplit=4k/50:16k/30:64k/20\nsize=64m\nfilename=/data/f\n")
        .unwrap();
    let out = iolab().args(["import", "fio", fio.to_str().unwrap()]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("note ([j], line 3)") && stderr.contains("norandommap=1"), "{stderr}");
}

/// Issue 36, item 7: fio's `size` on an existing device is the region its I/O goes to, not a size to create: a
/// fio job with `size=8m` run against a 16 MiB loop device writes its one pass within the first 8 MiB and
/// leaves the rest as it was (zeros). Root only (loop devices); skips saying so.
#[test]
fn fio_size_on_a_device_is_the_region_its_io_goes_to() {
    let lo = match crate::util::LoopDev::new(16, None) {
        Ok(l) => l,
        Err(why) => return iolab_testkit::skip(why),
    };
    let dir = tempdir();
    let fio = dir.path().join("region.fio");
    std::fs::write(&fio, "[w]\nrw=randwrite\nbs=64k\nsize=8m\ndirect=1\nnorandommap=1\n").unwrap();
    let out = iolab()
        .args(["run", fio.to_str().unwrap(), "--target", &lo.dev, "--allow-write-device"])
        .args(["--no-save", "--json", "-", "-q"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["total"]["all"]["bytes"].as_u64(), Some(8 << 20), "one pass over size: {}", v["total"]);
    let data = std::fs::read(&lo.dev).unwrap();
    assert_eq!(data.len(), 16 << 20);
    assert!(data[..8 << 20].iter().any(|b| *b != 0), "the first 8 MiB were written");
    assert!(data[8 << 20..].iter().all(|b| *b == 0), "nothing was written past size=8m");
}

/// Issue 36, item 7: `size` larger than the target given is clamped to the target, as fio does on an existing
/// device, and a note says so (stderr and the translation's `# note:`).
#[test]
fn fio_size_past_the_target_is_clamped_with_a_note() {
    let dir = tempdir();
    let fio = dir.path().join("big.fio");
    std::fs::write(&fio, "[r]\nrw=read\nbs=1m\nsize=100g\n").unwrap();
    let out = iolab()
        .args(["run", fio.to_str().unwrap(), "--target", "mem:16M", "--no-save", "--json", "-"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("note ([r], line 4)") && stderr.contains("size=100g runs past the end"),
        "{stderr}"
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        v["total"]["all"]["bytes"].as_u64(),
        Some(16 << 20),
        "one pass over the target: {}",
        v["total"]
    );
}

/// `iolab run FILE` with [`SIM`] (virtual time, seed 1): the JSON result; exit 0 asserted.
fn run_fio_on_sim(name: &str, text: &str) -> Value {
    let dir = tempdir();
    let fio = dir.path().join(name);
    std::fs::write(&fio, text).unwrap();
    let out = iolab()
        .args(["run", fio.to_str().unwrap()])
        .args(SIM)
        .args(["--json", "-", "-q", "--no-save"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The ops of each group of a result, by group name.
fn group_ops(v: &Value) -> std::collections::BTreeMap<String, f64> {
    v["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| (g["name"].as_str().unwrap().to_string(), g["all"]["ops"].as_f64().unwrap()))
        .collect()
}

/// Issue 36, item 8: fio's `startdelay`: on virtual time, at qd 1 on a 100 us device, a job delayed 1 s of a
/// 2 s run issues half the I/Os of the one that starts at once, and its first I/O comes 1 s in.
#[test]
fn a_fio_startdelay_starts_the_job_later_on_virtual_time() {
    let v = run_fio_on_sim(
        "delay.fio",
        "[global]\nrw=randread\nbs=4k\niodepth=1\nsize=64m\ntime_based\nruntime=2\n[early]\n[late]\nstartdelay=1\n",
    );
    let ops = group_ops(&v);
    assert!((ops["early"] - 20_000.0).abs() <= 2.0, "{ops:?}");
    assert!((ops["late"] - 10_000.0).abs() <= 2.0, "{ops:?}");
}

/// Issue 36, item 8: fio's flow control: jobs of weights 1 and 3 in one flow group issue I/Os 1 to 3, where
/// alone each would issue as many (both at qd 4 on a 100 us device with room for both): the job of weight 1
/// is held back to a third of the other's 40,000.
#[test]
fn fio_flow_weights_keep_the_ratio_of_the_jobs_ios() {
    let v = run_fio_on_sim(
        "flow.fio",
        "[global]\nioengine=libaio\nrw=randread\nbs=4k\niodepth=4\nsize=64m\ntime_based\nruntime=1\n[one]\nflow=1\n[three]\nflow=3\n",
    );
    let ops = group_ops(&v);
    let share = ops["one"] / (ops["one"] + ops["three"]);
    assert!((share - 0.25).abs() < 0.01, "{ops:?}");
    assert!(ops["three"] > 39_000.0, "the job with the larger share runs at its full depth: {ops:?}");
}

/// Issue 36, item 8: fio's latency-target mode searches the queue depth as it runs. On virtual time, on a
/// device of 4 servers at 100 us, a job of iodepth=32 with latency_target=150 (us) settles at depth 4: its
/// I/Os take 100 us, where at depth 32 they queue for 800 us, at the same 40,000 IOPS the device has.
#[test]
fn a_fio_latency_target_finds_the_depth_that_meets_it_on_virtual_time() {
    let text = "[global]\nioengine=libaio\nrw=randread\nbs=4k\niodepth=32\nsize=64m\ntime_based\nruntime=2\n\
                latency_target=150\nlatency_window=10000\nlatency_percentile=100\n[j]\n";
    let dir = tempdir();
    let fio = dir.path().join("latency.fio");
    std::fs::write(&fio, text).unwrap();
    let out = iolab()
        .args(["run", fio.to_str().unwrap(), "--target", "sim:fixed,latency=100us,servers=4"])
        .args(["--clock", "virtual", "--seed", "1", "--json", "-", "-q", "--no-save"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let (ops, mean) =
        (v["total"]["all"]["ops"].as_f64().unwrap(), v["total"]["all"]["lat_ns"]["mean"].as_f64().unwrap());
    assert!(mean < 110_000.0, "the I/Os meet the target: mean {mean} ns");
    assert!(ops > 60_000.0, "most of the device's 80,000 I/Os in 2 s: {ops}");
    let depth = v["depth"]["achieved"].as_f64().unwrap();
    assert!((3.0..5.0).contains(&depth), "{}", v["depth"]);
}

/// Issue 36, item 8: fio's `create_on_open=1` lays nothing out before the job: the file the job creates holds
/// only what the job wrote (16 random 4k writes of a 1 MiB file: 64 KiB allocated), where iolab's default lays
/// out the whole size first.
#[test]
fn a_fio_create_on_open_file_holds_only_what_the_job_wrote() {
    use std::os::unix::fs::MetadataExt;
    let dir = tempdir();
    let allocated = |create_on_open: u8| {
        let file = dir.path().join(format!("f{create_on_open}"));
        let fio = dir.path().join("coo.fio");
        let text = format!(
            "[w]\nrw=randwrite\nbs=4k\nsize=1m\nio_size=64k\nnorandommap\ncreate_on_open={create_on_open}\nfilename={}\n",
            file.display()
        );
        std::fs::write(&fio, text).unwrap();
        let out = iolab().args(["run", fio.to_str().unwrap(), "--no-save", "-q"]).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        std::fs::metadata(&file).unwrap().blocks() * 512
    };
    assert!(allocated(1) <= 64 << 10, "only the writes allocate: {}", allocated(1));
    assert_eq!(allocated(0), 1 << 20, "laid out before the run");
}

/// Runs the fio job `text` on `mem:16M` with `--trace`: each completed op's kind and offset in 4k blocks, in
/// completion order (issue order at qd 1).
fn traced_ops(text: &str) -> Vec<(iolab_trace::TraceOp, u64)> {
    let dir = tempdir();
    let fio = dir.path().join("traced.fio");
    let trace = dir.path().join("traced.iolabtrace");
    std::fs::write(&fio, text).unwrap();
    let out = iolab()
        .args(["run", fio.to_str().unwrap(), "--target", "mem:16M", "--trace", trace.to_str().unwrap()])
        .args(["--no-save", "-q"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let mut r = iolab_trace::TraceReader::new(std::fs::File::open(&trace).unwrap(), "trace").unwrap();
    let mut bad = iolab_trace::BadRecords::default();
    let mut ops = Vec::new();
    while let Some(rec) = r.next_record(&mut bad).unwrap() {
        ops.push((rec.op, rec.offset / 4096));
    }
    ops
}

/// Issue 36, item 8: fio's `rw=randread:4` issues 4 I/Os per random offset, the 3 after it sequential
/// (`rw_sequencer=sequential`, fio's default); with `rw_sequencer=identical` at the same offset. Read from the
/// run's trace (qd 1: in issue order).
#[test]
fn a_fio_random_run_follows_each_random_offset() {
    let offsets = |sequencer: &str| {
        let text = format!("[r]\nrw=randread:4\nrw_sequencer={sequencer}\nbs=4k\nsize=16m\nnumber_ios=16\n");
        traced_ops(&text).into_iter().map(|(_, o)| o).collect::<Vec<u64>>()
    };
    let seq = offsets("sequential");
    assert_eq!(seq.len(), 16, "{seq:?}");
    assert_eq!(&seq[..3], &[0, 1, 2], "fio's first run follows the region's start: {seq:?}");
    for run in seq[3..15].chunks(4) {
        assert_eq!(run, &[run[0], run[0] + 1, run[0] + 2, run[0] + 3], "{seq:?}");
    }
    let same = offsets("identical");
    for run in same[3..15].chunks(4) {
        assert!(run.iter().all(|o| *o == run[0]), "{same:?}");
    }
}

/// Issue 36, item 8: fio's `rw=randtrimwrite` trims a random block and then writes that same block: in the
/// run's trace (qd 1) every trim is followed by a write of its block.
#[test]
fn a_fio_randtrimwrite_writes_each_block_it_trimmed() {
    use iolab_trace::TraceOp;
    let ops = traced_ops("[tw]\nrw=randtrimwrite\nbs=4k\nsize=16m\nnumber_ios=32\n");
    assert_eq!(ops.len(), 32, "{ops:?}");
    for pair in ops.chunks(2) {
        assert!(matches!(pair, [(TraceOp::Discard, a), (TraceOp::Write, b)] if a == b), "{ops:?}");
    }
    assert!(ops.iter().step_by(2).any(|(_, o)| *o > 16), "random blocks: {ops:?}");
}

/// Issue 36, item 8: `iolab run TEMPLATE.icf --target T` runs an Iometer configuration whose workers have no
/// targets (a template) on T, saying so; without a target it is refused, exit 2, naming the way out.
#[test]
fn an_iometer_template_runs_on_the_target_given() {
    let dir = tempdir();
    let text = std::fs::read_to_string(icf()).unwrap();
    let mut template = String::new();
    let mut skipping = false;
    for line in text.lines() {
        skipping = (skipping || line.starts_with("'Target assignments"))
            && !line.starts_with("'End target assignments");
        if !skipping && !line.starts_with("'End target assignments") {
            template.push_str(line);
            template.push('\n');
        }
    }
    let file = dir.path().join("template.icf");
    std::fs::write(&file, &template).unwrap();
    let out = iolab().args(["run", file.to_str().unwrap(), "--no-save", "-q"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("one --target PATH"), "{stderr}");
    let out = iolab()
        .args([
            "run",
            file.to_str().unwrap(),
            "--target",
            "sim:ssd,size=4G",
            "--clock",
            "virtual",
            "-d",
            "1s",
        ])
        .args(["--ramp", "0", "--json", "-", "--no-save"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("no target (a template)"), "{stderr}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["workers"].as_array().unwrap().len(), 2, "both workers run");
    assert!(v["total"]["all"]["ops"].as_f64().unwrap() > 0.0);
}

/// fio's example job file `name` (crates/import/tests/data/fio-examples).
fn fio_example(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../import/tests/data/fio-examples").join(name)
}

/// Issue 36, item 8: fio's `zonemode=strided` (zonesize 8k, zoneskip 16k) reads 8k, skips 16k, ...: in the
/// run's trace, two 4k reads in each zone, the zones 24k apart.
#[test]
fn a_fio_strided_zone_job_reads_its_zones() {
    let ops = traced_ops("[z]\nrw=read\nbs=4k\nzonemode=strided\nzonesize=8k\nzoneskip=16k\nnumber_ios=12\n");
    let blocks: Vec<u64> = ops.iter().map(|(_, o)| *o).collect();
    assert_eq!(blocks, [0, 1, 6, 7, 12, 13, 18, 19, 24, 25, 30, 31]);
}

/// Issue 36, item 8: fio's `random_distribution=sequence:2,0,1` with `random_sequence_stride=1`: in the run's
/// trace the blocks 2, 0, 1, then 5, 3, 4, as fio's HOWTO and sequence-distribution.fio say.
#[test]
fn a_fio_sequence_distribution_issues_its_blocks() {
    let text = "[s]\nrw=randread\nbs=4k\nsize=48k\nio_size=24k\nrandom_distribution=sequence:2,0,1\n\
                random_sequence_stride=1\n";
    let blocks: Vec<u64> = traced_ops(text).iter().map(|(_, o)| *o).collect();
    assert_eq!(blocks, [2, 0, 1, 5, 3, 4]);
}

/// Issue 36, item 8: fio's examples disk-zone-profile.fio (strided zones of 256m every 2.25g, on a 1 GiB target:
/// the first zone, four times) and sequence-distribution.fio run with `--target mem:1G`; the dry run's plan says
/// the band walk; sprandom.fio (with its `${FIO_BS}`) writes its pass.
#[test]
fn fio_examples_with_zones_and_sequences_run() {
    let zones = fio_example("disk-zone-profile.fio");
    let out =
        iolab().args(["run", zones.to_str().unwrap(), "--target", "mem:1G", "--dry-run"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let plan: Value = serde_json::from_slice(&out.stdout).unwrap();
    let band = &plan["plan"]["workers"][0]["band"];
    assert_eq!(
        band,
        &serde_json::json!({ "size": 256u64 << 20, "skip": 2u64 << 30, "bytes": 256u64 << 20 }),
        "{plan}"
    );
    for name in ["disk-zone-profile.fio", "sequence-distribution.fio"] {
        let out = iolab()
            .args([
                "run",
                fio_example(name).to_str().unwrap(),
                "--target",
                "mem:1G",
                "--no-save",
                "--json",
                "-",
            ])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{name}: {}", String::from_utf8_lossy(&out.stderr));
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        // A file with stonewalls (sequence-distribution's two jobs) runs as phases: one result per point.
        let totals: Vec<&Value> = match v["points"].as_array() {
            Some(points) => points.iter().map(|p| &p["result"]["total"]["all"]).collect(),
            None => vec![&v["total"]["all"]],
        };
        let ops: Vec<u64> = totals.iter().map(|t| t["ops"].as_u64().unwrap_or(0)).collect();
        if name == "disk-zone-profile.fio" {
            assert_eq!(totals[0]["bytes"].as_u64(), Some(1 << 30), "one pass of the target's size: {v}");
        } else {
            assert_eq!(ops, [6, 6], "io_size=24k of 4k reads in each job: {v}");
        }
    }
    // sprandom.fio with its ${FIO_BS}: one pass of 64 MiB plus 15%, in 4k blocks, all random writes.
    let out = iolab()
        .env("FIO_BS", "4096")
        .args(["run", fio_example("sprandom.fio").to_str().unwrap(), "--target", "mem:64M"])
        .args(["--no-save", "--json", "-", "-q"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["total"]["write"]["bytes"].as_u64(), Some(77_172_736), "{}", v["total"]);
    assert_eq!(v["total"]["read"]["ops"].as_u64(), Some(0));
}

/// The 4 KiB blocks of `file`, and how many of them are distinct.
fn blocks(file: &std::path::Path) -> (Vec<Vec<u8>>, usize) {
    let data = std::fs::read(file).unwrap();
    let blocks: Vec<Vec<u8>> = data.chunks(4096).map(<[u8]>::to_vec).collect();
    let mut distinct = blocks.clone();
    distinct.sort();
    distinct.dedup();
    let n = distinct.len();
    (blocks, n)
}

/// Issue 36, item 8: fio's `dedupe_percentage=50` writes half of its blocks as copies of earlier ones
/// (`repeat`: of the last unique write): one sequential pass of 1,024 blocks leaves about 512 distinct ones.
#[test]
fn a_fio_dedupe_job_writes_the_share_of_copies_asked() {
    let dir = tempdir();
    let written = |opts: &str| {
        let file = dir.path().join("f");
        let fio = dir.path().join("dd.fio");
        let text = format!("[w]\nrw=write\nbs=4k\nsize=4m\n{opts}\nfilename={}\n", file.display());
        std::fs::write(&fio, text).unwrap();
        let out = iolab().args(["run", fio.to_str().unwrap(), "--no-save", "-q"]).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        let (_, distinct) = blocks(&file);
        std::fs::remove_file(&file).unwrap();
        distinct
    };
    assert_eq!(written("dedupe_percentage=0"), 1024);
    let half = written("dedupe_percentage=50");
    assert!((440..=584).contains(&half), "{half} distinct blocks of 1024");
}

/// Issue 36, item 8: with `dedupe_mode=working_set` and `dedupe_global=1` two jobs share one working set, so
/// job b's copies include job a's blocks (as fio's dedupe-global example says); without `dedupe_global` none.
#[test]
fn fio_global_dedupe_shares_blocks_between_jobs() {
    let dir = tempdir();
    let shared = |global: u8| {
        let (a, b) = (dir.path().join(format!("a{global}")), dir.path().join(format!("b{global}")));
        let fio = dir.path().join("dg.fio");
        let text = format!(
            "[global]\nrw=write\nbs=4k\nsize=4m\ndedupe_percentage=50\ndedupe_mode=working_set\n\
             dedupe_working_set_percentage=50\ndedupe_global={global}\n[a]\nfilename={}\n[b]\nfilename={}\n",
            a.display(),
            b.display()
        );
        std::fs::write(&fio, text).unwrap();
        let out = iolab().args(["run", fio.to_str().unwrap(), "--no-save", "-q"]).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        let ((a, _), (b, _)) = (blocks(&a), blocks(&b));
        let a: std::collections::HashSet<Vec<u8>> = a.into_iter().collect();
        b.iter().filter(|x| a.contains(*x)).count()
    };
    let with = shared(1);
    assert!(with > 150, "{with} of b's 1024 blocks are a's");
    assert_eq!(shared(0), 0);
}

/// Issue 36, item 8: `dedupe` with `--verify` is refused before anything runs, naming both: a verified block
/// carries its own header, so it cannot be a copy.
#[test]
fn dedupe_with_verify_is_refused_by_name() {
    let dir = tempdir();
    let job = dir.path().join("dd.toml");
    std::fs::write(&job, "target = \"mem:16M\"\nrw = \"write\"\nbytes = \"1M\"\ndedupe = \"50\"\n").unwrap();
    let out = iolab().args(["run", job.to_str().unwrap(), "--verify", "--no-save", "-q"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("'dedupe'") && stderr.contains("--verify"), "{stderr}");
}

/// Issue 36, item 8: fio's own dedupe-global and atomic-verify examples, refused before, run on `mem:`.
#[test]
fn fio_dedupe_global_and_atomic_verify_examples_run() {
    let examples = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../import/tests/data/fio-examples");
    for (name, target) in [("dedupe-global.fio", "mem:1G"), ("atomic-verify.fio", "mem:16M")] {
        let fio = examples.join(name);
        let out = iolab()
            .args(["run", fio.to_str().unwrap(), "--target", target, "--no-save", "--json", "-", "-q"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{name}: {}", String::from_utf8_lossy(&out.stderr));
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert!(v["total"]["write"]["ops"].as_f64().unwrap() > 0.0, "{name} wrote");
    }
}

/// Issue 36, item 8: atomic writes to a file are checked against its atomic-write limits (statx) before
/// anything is written: where the file system takes none (ext4 or tmpfs on a device without atomic writes),
/// the run is refused naming the target and the file is left as it was.
#[test]
fn fio_atomic_writes_are_checked_before_anything_is_written() {
    let dir = tempdir();
    let file = dir.path().join("f");
    std::fs::write(&file, vec![7u8; 1 << 20]).unwrap();
    let fio = dir.path().join("at.fio");
    let text = format!(
        "[w]\nrw=randwrite\nbs=4k\nsize=1m\nio_size=64k\ndirect=1\nioengine=io_uring\natomic=1\nfilename={}\n",
        file.display()
    );
    std::fs::write(&fio, text).unwrap();
    let out =
        iolab().args(["run", fio.to_str().unwrap(), "--overwrite", "--no-save", "-q"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    match out.status.code() {
        Some(0) => {} // this file system takes 4 KiB atomic writes
        Some(2) => {
            assert!(stderr.contains("atomic") && stderr.contains(&*file.to_string_lossy()), "{stderr}");
            assert!(std::fs::read(&file).unwrap().iter().all(|&b| b == 7), "nothing was written");
        }
        c => panic!("exit {c:?}: {stderr}"),
    }
}

/// Issue 36, item 8: fio's `verify_backlog=4` reads back every 4 blocks written, once their writes completed,
/// before it writes on: in the run's trace (qd 1), 4 writes, then reads of those 4 blocks, and so on, the last
/// read-back included; the reads are not counted against `number_ios`.
#[test]
fn a_fio_verify_backlog_reads_back_every_n_writes() {
    use iolab_trace::TraceOp;
    let text =
        "[v]\nrw=randwrite\nbs=4k\nsize=16m\nnumber_ios=16\nnorandommap\nverify=crc32c\nverify_backlog=4\n";
    let ops = traced_ops(text);
    assert_eq!(ops.len(), 32, "{ops:?}");
    for group in ops.chunks(8) {
        let (w, r) = group.split_at(4);
        assert!(w.iter().all(|(k, _)| *k == TraceOp::Write), "{ops:?}");
        assert!(r.iter().all(|(k, _)| *k == TraceOp::Read), "{ops:?}");
        let blocks = |ops: &[(TraceOp, u64)]| ops.iter().map(|(_, o)| *o).collect::<Vec<u64>>();
        assert_eq!(blocks(w), blocks(r), "{ops:?}");
    }
}

/// Issue 36, item 8: `verify_backlog` without verification is refused, naming both.
#[test]
fn verify_backlog_without_verify_is_refused() {
    let dir = tempdir();
    let job = dir.path().join("vb.toml");
    std::fs::write(&job, "target = \"mem:16M\"\nrw = \"write\"\nbytes = \"1M\"\nverify_backlog = \"8\"\n")
        .unwrap();
    let out = iolab().args(["run", job.to_str().unwrap(), "--no-save", "-q"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("'verify_backlog'") && stderr.contains("--verify"), "{stderr}");
}

/// Issue 36, item 8: on a file system that takes atomic writes (XFS on Linux 6.18 said 4 KiB to 1 MiB), fio's
/// `atomic=1` jobs run through io_uring and pvsync2 without an error (io_uring's atomic writes go out from
/// plain buffers: the kernel refuses RWF_ATOMIC on registered ones), and a write past the largest atomic unit
/// is refused before anything is written, naming the limits. Skips, saying why, without root, a loop device
/// or mkfs.xfs, or where XFS reports no atomic writes.
#[test]
fn fio_atomic_writes_run_where_the_file_system_takes_them() {
    use crate::util::{unmount, LoopDev};
    let skip = |why: String| eprintln!("skipped: {why}");
    let lo = match LoopDev::new(320, None) {
        Ok(lo) => lo,
        Err(why) => return skip(why),
    };
    match std::process::Command::new("mkfs.xfs").args(["-q", "-f", &lo.dev]).output() {
        Ok(o) if o.status.success() => {}
        Ok(o) => return skip(format!("mkfs.xfs: {}", String::from_utf8_lossy(&o.stderr).trim())),
        Err(e) => return skip(format!("mkfs.xfs: {e}")),
    }
    let mount = tempfile::Builder::new().prefix("iolab-xfs-").tempdir_in("/tmp").unwrap();
    let m = std::process::Command::new("mount").arg(&lo.dev).arg(mount.path()).output().unwrap();
    if !m.status.success() {
        return skip(format!("mount: {}", String::from_utf8_lossy(&m.stderr).trim()));
    }
    let file = mount.path().join("f");
    std::fs::write(&file, vec![0u8; 16 << 20]).unwrap();
    let run = |engine: &str, bs: u64| {
        let fio = mount.path().join("at.fio");
        let text = format!(
            "[w]\nrw=randwrite\nbs={bs}\nsize=16m\nio_size=2m\ndirect=1\nioengine={engine}\niodepth=8\natomic=1\n\
             filename={}\n",
            file.display()
        );
        std::fs::write(&fio, text).unwrap();
        iolab()
            .args(["run", fio.to_str().unwrap(), "--overwrite", "--no-save", "--json", "-", "-q"])
            .output()
            .unwrap()
    };
    match iolab_device::atomic::atomic_write_limits(&file) {
        Ok(Some((min, max))) if max >= 4096 && min <= 4096 => {
            for engine in ["io_uring", "pvsync2"] {
                let out = run(engine, 4096);
                assert_eq!(out.status.code(), Some(0), "{engine}: {}", String::from_utf8_lossy(&out.stderr));
                let v: Value = serde_json::from_slice(&out.stdout).unwrap();
                assert_eq!(v["errors"]["total"], 0, "{engine}: {}", v["errors"]);
                assert_eq!(v["total"]["write"]["ops"], 512, "{engine}");
            }
            let out = run("io_uring", u64::from(max) * 2);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{stderr}");
            assert!(stderr.contains(&format!("from {min} to {max} bytes")), "{stderr}");
        }
        limits => skip(format!("XFS here reports atomic-write limits {limits:?}")),
    }
    unmount(mount.path());
}

/// Issue 36, item 8: fio's `--section NAME` runs only the job sections named. xnvme-compare.fio's header runs it
/// as `fio examples/xnvme-compare.fio --section=default --ioengine=io_uring --filename=/dev/nvme0n1`: its
/// `[override]` section, which reads `${FIO_RW}` and the like, is skipped unread, so the file runs; a name the
/// file has no section of is refused (exit 2) quoting it and listing the sections, and `--section` with a job
/// file that is not fio's is refused too.
#[test]
fn fio_section_runs_only_the_sections_named() {
    let fio = fio_example("xnvme-compare.fio");
    let fio = fio.to_str().unwrap();
    let out = iolab()
        .env_remove("FIO_RW")
        .args(["run", fio, "--section", "default", "--engine", "io_uring", "--target", "mem:64M"])
        .args(["-d", "200ms", "--ramp", "0s", "--no-save", "--json", "-", "-q"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["total"]["read"]["ops"].as_u64().unwrap() > 0, "{}", v["total"]);
    assert_eq!(v["total"]["write"]["ops"].as_u64(), Some(0), "{}", v["total"]);
    let groups: Vec<&str> =
        v["groups"].as_array().unwrap().iter().filter_map(|g| g["name"].as_str()).collect();
    assert!(!groups.contains(&"override"), "only [default] runs: {groups:?}");
    // Without it, [override]'s unset ${FIO_RW} is refused, as fio refuses it.
    let out = iolab().env_remove("FIO_RW").args(["import", "fio", fio]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("FIO_RW"));
    // A name of no section: exit 2, nothing printed but the error.
    let out = iolab().args(["import", "fio", fio, "--section", "defualt"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(out.stdout.is_empty());
    assert!(
        stderr.contains("invalid value 'defualt' for '--section'")
            && stderr.contains("[default], [override]"),
        "{stderr}"
    );
    let dir = tempdir();
    let toml = dir.path().join("j.toml");
    std::fs::write(&toml, "target = \"mem:16M\"\nduration = \"100ms\"\n").unwrap();
    let out = iolab().args(["run", toml.to_str().unwrap(), "--section", "a", "--no-save"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--section 'a' picks job sections of a fio job file") && stderr.contains("j.toml")
    );
}

/// Issue 36, item 8: fio's `offset_increment` gives each clone its own region start. fio 3.33 on a 1 MiB file
/// with this job (fio's cross-stripe-verify.fio, scaled down; `write_iolog`) wrote, clone by clone, at 120k,
/// 248k, 376k, 504k / 376k, 504k, 632k, 760k / 632k, 760k, 888k, 632k (past the end's last whole 16k plus skip,
/// back to the clone's own start), each write read back at once (`verify_backlog=1`): the same here, from the
/// run's trace on `mem:1M`. cross-stripe-verify.fio itself runs on the drive its header assumes (30 × 124
/// GiB: a sparse file in docs/FIO.md's measurement).
#[test]
fn fio_offset_increment_starts_each_clone_further_on() {
    let dir = tempdir();
    let fio = dir.path().join("oi.fio");
    let trace = dir.path().join("oi.iolabtrace");
    std::fs::write(
        &fio,
        "[global]\nbs=16k\ndirect=1\nrw=write:112k\nverify=crc32c\nverify_backlog=1\noffset_increment=256k\n\
         io_size=32k\noffset=120k\nloops=2\n[write-verify]\nnumjobs=3\n",
    )
    .unwrap();
    let out = iolab()
        .args(["run", fio.to_str().unwrap(), "--target", "mem:1M", "--trace", trace.to_str().unwrap()])
        .args(["--no-save", "-q", "--json", "-"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["verify"]["mismatches"].as_u64(), Some(0), "{}", v["verify"]);
    let mut r = iolab_trace::TraceReader::new(std::fs::File::open(&trace).unwrap(), "trace").unwrap();
    let mut bad = iolab_trace::BadRecords::default();
    let mut by_worker: std::collections::BTreeMap<u16, Vec<(iolab_trace::TraceOp, u64)>> = Default::default();
    while let Some(rec) = r.next_record(&mut bad).unwrap() {
        by_worker.entry(rec.worker).or_default().push((rec.op, rec.offset >> 10));
    }
    let mut writes: Vec<Vec<u64>> = by_worker
        .values()
        .map(|ops| ops.iter().filter(|(op, _)| *op == iolab_trace::TraceOp::Write).map(|(_, o)| *o).collect())
        .collect();
    writes.sort();
    assert_eq!(writes, [[120, 248, 376, 504], [376, 504, 632, 760], [632, 760, 888, 632]]);
    for ops in by_worker.values() {
        let pairs: Vec<bool> =
            ops.chunks(2).map(|p| p[0].1 == p[1].1 && p[1].0 == iolab_trace::TraceOp::Read).collect();
        assert!(pairs.iter().all(|b| *b), "each write read back next: {ops:?}");
    }
}
