//! `iolab ai checkpoint` end to end (issue 38, item 4): the built-in tiny checkpoint written and read back
//! by 8 ranks, the document (against its schema) with its per-rank times and the slowest rank's GiB/s, saved
//! and listed, nothing left behind; MLPerf Storage's llama3 YAML scaled down with --param; the free-space
//! refusal and the options refused by name, before anything is made.

use crate::util::{entries, iolab, tempdir};
use serde_json::Value;
use std::path::Path;

/// `iolab ai checkpoint ARGS` in `dir`, saving into `catalog`: (exit code, stdout, stderr).
fn checkpoint(dir: &Path, catalog: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let out = iolab()
        .current_dir(dir)
        .env("IOLAB_DB", catalog)
        .env_remove("IOLAB_SCRATCH_DIR")
        .args(["ai", "checkpoint"])
        .args(args)
        .output()
        .expect("spawn iolab");
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code(), text(&out.stdout), text(&out.stderr))
}

fn fixture(name: &str) -> String {
    format!("{}/../ai/tests/fixtures/dlio/{name}.yaml", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn the_tiny_checkpoint_is_written_read_back_reported_per_rank_and_leaves_nothing() {
    let t = tempdir();
    let catalog = t.path().join("cat.db");
    let (code, stdout, stderr) = checkpoint(t.path(), &catalog, &["--json", "-"]);
    assert_eq!(code, Some(0), "{stderr}");
    let d: Value = serde_json::from_str(&stdout).expect("JSON");
    let schema = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/schema/iolab.aicheckpoint.v1.json"
    ))
    .unwrap();
    iolab_report::schema_check::check_document(&d, &schema);
    assert_eq!(d["schema"], "iolab.aicheckpoint/1");
    let c = &d["config"];
    assert_eq!(
        (c["tensor"].as_u64(), c["pipeline"].as_u64(), c["data"].as_u64()),
        (Some(2), Some(2), Some(2))
    );
    assert_eq!(c["parameters"], 1_246_336);
    // DLIO's formulas (crates/ai/src/checkpoint/shards.rs): 8 optimizer shards of 1,877,184 bytes, the model
    // from data-parallel rank 0 (ZeRO 1) in a file a layer: 2,494,976 bytes.
    assert_eq!(d["checkpoint"]["bytes"], 17_512_448);
    assert_eq!(d["checkpoint"]["model_bytes"], 2_494_976);
    assert_eq!(d["checkpoint"]["files"], 22);
    assert_eq!(d["page_cache"]["method"], "dropped");
    // Out of the page cache on a disk's file system; where pages cannot be dropped (tmpfs), the document says so.
    let cached = d["page_cache"]["cached_bytes_before_reads"].as_u64().unwrap();
    let warned = d["warnings"].to_string().contains("were still in the page cache after they were dropped");
    assert!(cached == 0 || warned, "{cached} bytes cached, unsaid: {}", d["warnings"]);
    for phase in ["write", "read"] {
        let p = &d[phase];
        assert_eq!(p["checkpoints"], 2, "{phase}");
        let (min, mean, max) = (
            p["gib_per_s_min"].as_f64().unwrap(),
            p["gib_per_s_mean"].as_f64().unwrap(),
            p["gib_per_s_max"].as_f64().unwrap(),
        );
        assert!(0.0 < min && min <= mean && mean <= max, "{phase}: {p}");
    }
    let ranks = d["ranks"].as_array().unwrap();
    assert_eq!(ranks.len(), 8);
    let slowest =
        ranks.iter().map(|r| r["write"]["gib_per_s"].as_f64().unwrap()).fold(f64::INFINITY, f64::min);
    assert_eq!(
        slowest,
        d["write"]["gib_per_s_min"].as_f64().unwrap(),
        "the run's figure is the slowest rank's"
    );
    assert_eq!(ranks[4]["files"], 1, "a data-parallel rank 1 writes its optimizer shard only");
    assert_eq!(ranks[4]["read"]["seconds"].as_array().unwrap().len(), 2);
    assert!(d["client"]["peak_rss_bytes"].as_u64().unwrap() > 0);
    assert_eq!(entries(t.path()), ["cat.db"], "the checkpoints' directory is removed");
    let listed =
        iolab().env("IOLAB_DB", &catalog).args(["runs", "--kind", "ai-checkpoint"]).output().unwrap();
    let listed = String::from_utf8_lossy(&listed.stdout);
    assert!(listed.contains("tiny") && listed.contains("ckpt write GiB/s"), "{listed}");
}

#[test]
fn mlperf_storage_s_llama3_8b_file_runs_scaled_down_with_params() {
    let t = tempdir();
    let data = t.path().join("ckpt");
    let params = [
        "model.num_layers=1",
        "model.transformer.hidden_size=64",
        "model.transformer.ffn_hidden_size=128",
        "model.transformer.vocab_size=256",
        "model.transformer.num_attention_heads=4",
        "model.transformer.num_kv_heads=2",
        "checkpoint.num_checkpoints_write=1",
        "checkpoint.num_checkpoints_read=1",
        "checkpoint.time_between_checkpoints=0",
    ];
    let mut args: Vec<&str> = vec![];
    for p in &params {
        args.extend(["--param", p]);
    }
    let yaml = fixture("mlc_llama3_8b");
    args.extend([
        yaml.as_str(),
        "--num-accelerators",
        "2",
        "--data-dir",
        data.to_str().unwrap(),
        "--no-save",
    ]);
    let (code, stdout, stderr) = checkpoint(t.path(), &t.path().join("c.db"), &args);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.starts_with("ai checkpoint llama_8b ("), "{stdout}");
    assert!(stdout.contains("parallelism: TP 1 x PP 1 x DP 2, ZeRO stage 3, 2 ranks"), "{stdout}");
    // ZeRO 3 on 2 ranks: each writes half of every tensor and a half of the optimizer: 985,216 bytes.
    assert!(stdout.contains("checkpoint: 962 KiB"), "{stdout}");
    assert!(stdout.contains("ignored: framework: pytorch"), "{stdout}");
    assert!(stdout.contains("MLPerf-Storage-compatible"), "{stdout}");
    assert!(!data.exists(), "the data directory is removed");
}

#[test]
fn checkpoints_that_do_not_fit_are_refused_with_their_sizes_before_anything_is_made() {
    let t = tempdir();
    // llama3-1t on MLPerf Storage's 1,024 ranks: 10 checkpoints of 15 TiB.
    let (code, _, stderr) = checkpoint(t.path(), &t.path().join("c.db"), &["llama3-1t"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("10 checkpoint(s) of 15.1 TiB (1024 ranks) need 150.7 TiB"), "{stderr}");
    assert!(stderr.contains("free; write fewer (--param checkpoint.num_checkpoints_write=1"), "{stderr}");
    assert_eq!(entries(t.path()), Vec::<String>::new(), "nothing made");
}

#[test]
fn what_iolab_cannot_do_is_refused_by_name_before_anything_is_made() {
    let t = tempdir();
    let cat = t.path().join("c.db");
    let (code, _, stderr) = checkpoint(t.path(), &cat, &[&fixture("dlio_llama_1t")]);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("workflow.train: 'True' (line 23 of dlio_llama_1t.yaml)"), "{stderr}");
    let (code, _, stderr) = checkpoint(t.path(), &cat, &["--num-accelerators", "3"]);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("'--num-accelerators': expected a multiple of TP x PP = 2 x 2 = 4"), "{stderr}");
    let (code, _, stderr) = checkpoint(t.path(), &cat, &["llama3-9b"]);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("invalid value 'llama3-9b' for 'CONFIG'"), "{stderr}");
    assert_eq!(entries(t.path()), Vec::<String>::new(), "nothing made");
}

/// Ctrl-C between two checkpoints (DLIO's computation between them, 2 s here): the one written is reported,
/// marked partial, with no reads; the directory is removed; exit 130.
#[test]
fn ctrl_c_between_checkpoints_reports_the_written_one_as_partial_and_removes_the_directory() {
    let t = tempdir();
    let json = t.path().join("out.json");
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("iolab"))
        .current_dir(t.path())
        .env("IOLAB_DB", t.path().join("c.db"))
        .env_remove("IOLAB_SCRATCH_DIR")
        .args(["ai", "checkpoint", "-q", "--no-save", "--json", json.to_str().unwrap()])
        .args(["--param", "checkpoint.time_between_checkpoints=2"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn iolab");
    // The first checkpoint is written by about 2.1 s; the second waits until 4.1 s.
    std::thread::sleep(std::time::Duration::from_millis(3000));
    // SAFETY: kill sends a signal to the child this test spawned; it reads no memory.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    let d: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(d["partial"], true);
    assert_eq!(d["write"]["checkpoints"], 1);
    assert_eq!(d["read"], Value::Null);
    assert_eq!(entries(t.path()), ["out.json"], "the checkpoints' directory is removed");
}
