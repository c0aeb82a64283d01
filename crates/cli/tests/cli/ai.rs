//! `iolab ai train` end to end (issue 38, items 1-2): a tiny npz dataset generated in a scratch directory,
//! read by simulated accelerators, the document with its samples/s, MiB/s and AU, saved and listed, nothing
//! left behind; a DLIO workload file run with --param; options refused by name before anything is made.

use crate::util::{iolab, tempdir};
use serde_json::Value;
use std::path::Path;

/// Checks a training document against docs/schema/iolab.aitrain.v1.json.
fn check_schema(d: &Value) {
    let schema = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/schema/iolab.aitrain.v1.json"
    ))
    .unwrap();
    iolab_report::schema_check::check_document(d, &schema);
}

/// `iolab ai train ARGS` in `dir`, saving into `catalog`: (exit code, stdout, stderr).
fn train(dir: &Path, catalog: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let out = iolab()
        .current_dir(dir)
        .env("IOLAB_DB", catalog)
        .env_remove("IOLAB_SCRATCH_DIR")
        .args(["ai", "train"])
        .args(args)
        .output()
        .expect("spawn iolab");
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code(), text(&out.stdout), text(&out.stderr))
}

/// 8 npz files of one 64 KiB sample, batch 2, 1 ms of computation, 1 epoch.
const TINY: [&str; 12] = [
    "--param",
    "dataset.num_files_train=8",
    "--param",
    "dataset.record_length_bytes=65536",
    "--param",
    "reader.batch_size=2",
    "--param",
    "train.computation_time=0.001",
    "--param",
    "train.epochs=1",
    "--seed",
    "5",
];

#[test]
fn a_tiny_training_run_reports_au_and_samples_per_second_and_leaves_nothing() {
    let t = tempdir();
    let catalog = t.path().join("cat.db");
    let (code, stdout, stderr) = train(t.path(), &catalog, &[&TINY[..], &["--json", "-"]].concat());
    // PASS or FAIL is the storage's and the machine's; the document is what is checked.
    assert!(matches!(code, Some(0 | 1)), "{stderr}");
    let d: Value = serde_json::from_str(&stdout).expect("JSON");
    check_schema(&d);
    assert_eq!(d["schema"], "iolab.aitrain/1");
    assert_eq!(d["seed"], 5);
    assert_eq!(d["dataset"]["files"], 8);
    let tr = &d["training"];
    assert_eq!((tr["steps_per_epoch"].as_u64(), tr["samples"].as_u64()), (Some(4), Some(8)));
    assert_eq!(tr["bytes_read"], 8 * 65536);
    assert!(tr["samples_per_s"].as_f64().unwrap() > 0.0);
    assert!(tr["mib_per_s"].as_f64().unwrap() > 0.0);
    let au = tr["au_pct"].as_f64().expect("AU with 4 steps");
    assert!(au > 0.0 && au <= 100.0, "{au}");
    assert_eq!(tr["timeline"].as_array().unwrap().len(), 4);
    assert!(tr["first_wait_s"].as_f64().unwrap() <= tr["wait_s"].as_f64().unwrap());
    assert_eq!(d["verdict"]["min_au_pct"], 90.0, "tiny's minimum AU");
    assert_eq!(d["verdict"]["passed"], code == Some(0));
    assert_eq!(d["latency_ns"].as_object().map(|_| ()), Some(()));
    assert!(d["client"]["cpu_s"].as_f64().is_some());
    assert_eq!(crate::util::entries(t.path()), ["cat.db"], "the data directory is removed");
    let listed = iolab().env("IOLAB_DB", &catalog).args(["runs", "--kind", "ai-train"]).output().unwrap();
    assert!(
        String::from_utf8_lossy(&listed.stdout).contains("tiny"),
        "{}",
        String::from_utf8_lossy(&listed.stdout)
    );
}

#[test]
fn one_step_per_accelerator_says_why_au_has_no_value() {
    let t = tempdir();
    let (_, stdout, stderr) = train(
        t.path(),
        &t.path().join("c.db"),
        &[&TINY[..], &["--num-accelerators", "4", "--no-save"]].concat(),
    );
    assert!(stdout.contains("AU - (see warnings)"), "{stdout}{stderr}");
    assert!(stdout.contains("warning: AU has no value: 1 step per epoch per accelerator"), "{stdout}");
    assert!(stdout.contains("verdict: none"), "{stdout}");
}

#[test]
fn a_dlio_workload_file_runs_with_params_on_its_data_dir() {
    let t = tempdir();
    let yaml = concat!(env!("CARGO_MANIFEST_DIR"), "/../ai/tests/fixtures/dlio/dlio_unet3d_h100.yaml");
    let data = t.path().join("data");
    let (code, stdout, stderr) = train(
        t.path(),
        &t.path().join("c.db"),
        &[
            &[yaml, "--data-dir", data.to_str().unwrap(), "--param", "workflow.checkpoint=False"][..],
            &TINY[..],
            &["--param", "dataset.record_length_bytes_stdev=0", "--no-save"],
        ]
        .concat(),
    );
    assert!(matches!(code, Some(0 | 1)), "{stderr}");
    assert!(stdout.starts_with("ai train unet3d ("), "{stdout}");
    assert!(stdout.contains("ignored: framework: pytorch"), "{stdout}");
    assert!(!data.exists(), "the data directory is removed");
}

#[test]
fn options_iolab_cannot_honour_are_refused_by_name_before_anything_is_made() {
    let t = tempdir();
    let yaml = concat!(env!("CARGO_MANIFEST_DIR"), "/../ai/tests/fixtures/dlio/dlio_dlrm.yaml");
    let (code, _, stderr) = train(t.path(), &t.path().join("c.db"), &[yaml]);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("dataset.format: 'indexed_binary' (line "), "{stderr}");
    let (code, _, stderr) = train(t.path(), &t.path().join("c.db"), &["--param", "reader.batch_size=64"]);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("give no step"), "{stderr}");
    let (code, _, stderr) = train(t.path(), &t.path().join("c.db"), &["--num-accelerators", "0"]);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("'--num-accelerators'"), "{stderr}");
    assert_eq!(crate::util::entries(t.path()), Vec::<String>::new(), "nothing made");
}

#[test]
fn a_tfrecord_dataset_is_read_as_record_streams_in_transfers() {
    let t = tempdir();
    let args = [
        &TINY[..],
        &["--param", "dataset.format=tfrecord", "--param", "dataset.num_samples_per_file=4"],
        &["--param", "reader.transfer_size=65536", "--num-accelerators", "2", "--json", "-", "-q"],
    ]
    .concat();
    let (code, stdout, stderr) = train(t.path(), &t.path().join("c.db"), &args);
    assert!(matches!(code, Some(0 | 1)), "{stderr}");
    let d: Value = serde_json::from_str(&stdout).expect("JSON");
    check_schema(&d);
    assert_eq!(d["config"]["format"], "tfrecord");
    assert_eq!(d["config"]["transfer_size_bytes"], 65536);
    let tr = &d["training"];
    // 32 samples, 2 accelerators, batch 2: 8 steps each; every sample read as its whole record.
    assert_eq!(tr["samples"], 32);
    let record = tr["bytes_read"].as_u64().unwrap() / 32;
    assert_eq!(tr["bytes_read"].as_u64().unwrap() % 32, 0);
    assert!(record > 65536 && record < 65536 + 64, "a record: the sample, its Example and framing: {record}");
    assert_eq!(d["dataset"]["bytes"].as_u64().unwrap(), 8 * 4 * record);
    let (_, text, _) =
        train(t.path(), &t.path().join("c.db"), &[&args[..args.len() - 3], &["--no-save"]].concat());
    assert!(text.contains("as record streams (TensorFlow's reader), in reads of 64.0 KiB"), "{text}");
    assert!(text.contains("read latency (each read)"), "{text}");
}

/// Fleet sizing without the hardware (issue 38, items 3 and 5): `--find-max` over accelerators on an
/// emulated device, on virtual time. One server of 10 ms a read feeds three accelerators that compute 35 ms
/// a step on one sample each (85.7 reads/s of its 100), not four; the search doubles, halves the gap and
/// confirms with the next seed. Nothing is written; the output says the figures are the model's.
#[test]
fn find_max_on_an_emulated_device_says_how_many_accelerators_it_feeds() {
    let t = tempdir();
    let target = "sim:fixed,latency=10ms,servers=1,size=1G";
    let args = [
        "--param",
        "dataset.num_files_train=400",
        "--param",
        "dataset.record_length_bytes=4096",
        "--param",
        "reader.batch_size=1",
        "--param",
        "reader.read_threads=1",
        "--param",
        "reader.prefetch_size=2",
        "--param",
        "train.computation_time=0.035",
        "--param",
        "train.epochs=1",
        "--seed",
        "5",
        "--data-dir",
        target,
        "--find-max",
    ];
    let (code, stdout, stderr) =
        train(t.path(), &t.path().join("c.db"), &[&args[..], &["--json", "-"]].concat());
    assert_eq!(code, Some(0), "{stderr}");
    let d: Value = serde_json::from_str(&stdout).expect("JSON");
    check_schema(&d);
    assert_eq!(d["emulated"], target);
    assert_eq!(d["find_max"]["accelerators"], 3);
    assert_eq!(d["find_max"]["confirmed"], true);
    assert_eq!(d["config"]["accelerators"], 3);
    let tried: Vec<u64> = d["find_max"]["tried"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["accelerators"].as_u64().unwrap())
        .collect();
    assert_eq!(tried, [1, 2, 4, 3, 3, 4]);
    assert_eq!(crate::util::entries(t.path()), ["c.db"], "nothing but the catalog");
    let (_, text, _) = train(t.path(), &t.path().join("c.db"), &[&args[..], &["--no-save"]].concat());
    assert!(
        text.contains("storage: emulated sim:fixed,latency=10ms,servers=1,size=1G on virtual time"),
        "{text}"
    );
    assert!(
        text.contains("find-max: 3 accelerator(s) at AU >= 90 %, confirmed with the next seed"),
        "{text}"
    );
    // On real storage the search is refused before anything is made.
    let (code, _, stderr) = train(t.path(), &t.path().join("c.db"), &["--find-max"]);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("--find-max runs on an emulated device"), "{stderr}");
}

/// `iolab compare` takes AI training runs (issue 38: "compare and report like every run"): AU, samples/s,
/// MB/s, the read p99 and the client's CPU per accelerator, side by side. Two emulated devices, one three
/// times slower a read: AU and samples/s drop, the p99 triples.
#[test]
fn compare_sets_two_training_runs_side_by_side() {
    let t = tempdir();
    let mut files = Vec::new();
    for (name, latency) in [("fast.json", "1ms"), ("slow.json", "3ms")] {
        let target = format!("sim:fixed,latency={latency},servers=1,size=1G");
        let path = t.path().join(name);
        let args = [
            "--seed",
            "1",
            "--data-dir",
            &target,
            "--param",
            "dataset.num_files_train=64",
            "--no-save",
            "-q",
        ];
        let (code, _, stderr) = train(
            t.path(),
            &t.path().join("c.db"),
            &[&args[..], &["--json", path.to_str().unwrap()]].concat(),
        );
        assert!(matches!(code, Some(0 | 1)), "{stderr}");
        files.push(path);
    }
    let out = iolab().arg("compare").args(&files).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}{}", String::from_utf8_lossy(&out.stderr));
    for metric in ["AU", "samples/s", "MB/s", "read p99", "client CPU per accelerator"] {
        assert!(text.lines().any(|l| l.starts_with(metric)), "{metric} in:\n{text}");
    }
    let p99 = text.lines().find(|l| l.starts_with("read p99")).unwrap();
    assert!(p99.contains("2.00 ms") && p99.contains("6.00 ms") && p99.contains("+200%"), "{p99}");
}
