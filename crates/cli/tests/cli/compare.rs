//! `iolab compare`: results made by `iolab run --json FILE` on the emulated device with virtual time (exact and
//! instant), compared as files, comma-joined trials, catalog IDs and tag queries; the assertions read the
//! `iolab.compare/1` JSON.

use crate::util::{assert_close, iolab, tempdir};
use serde_json::Value;
use std::path::Path;

/// `iolab run` on `sim:fixed,latency=LAT,servers=8` (virtual clock) with `extra` flags, JSON to `dir/name`;
/// returns the path.
fn run_to(dir: &Path, name: &str, latency: &str, seed: u64, extra: &[&str]) -> String {
    let path = dir.join(name).to_string_lossy().into_owned();
    let target = format!("sim:fixed,latency={latency},servers=8");
    let seed = seed.to_string();
    // Whatever the run saves goes to a catalog of its own in `dir`, never the user's.
    let out = iolab()
        .env("IOLAB_DB", dir.join("runs.db"))
        .args(["run", "--target", &target, "--clock", "virtual", "--seed", &seed])
        .args(extra)
        .args(["--json", &path, "-q"])
        .output()
        .expect("spawn iolab");
    assert_eq!(out.status.code(), Some(0), "iolab run failed: {}", String::from_utf8_lossy(&out.stderr));
    path
}

/// Closed loop, 1 s measured after no ramp, qd 32.
const CLOSED: [&str; 4] = ["-d", "1s", "--ramp", "0"];
/// Open loop, Poisson arrivals at 20,000 IOPS (half the capacity of 8 servers at 200 µs), 20,000 I/Os.
const POISSON: [&str; 6] = ["--rate", "20k", "--arrival", "poisson", "--ios", "20000"];

/// `iolab compare ARGS --json -`: exit code 0 and the document.
fn compare_json(args: &[&str]) -> Value {
    let out = iolab().arg("compare").args(args).args(["--json", "-"]).output().expect("spawn iolab");
    assert_eq!(
        out.status.code(),
        Some(0),
        "iolab compare {} failed: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("compare --json - prints JSON");
    assert_eq!(v["schema"], "iolab.compare/1");
    v
}

/// The metric with this key in unit `unit`.
fn metric<'a>(v: &'a Value, unit: usize, key: &str) -> &'a Value {
    v["units"][unit]["metrics"]
        .as_array()
        .expect("metrics")
        .iter()
        .find(|m| m["key"] == key)
        .unwrap_or_else(|| panic!("no metric {key} in unit {unit}: {v:#}"))
}

/// `iolab compare ARGS` must exit 2 with stderr containing `want`.
fn compare_fails(args: &[&str], want: &str) {
    let out = iolab().arg("compare").args(args).output().expect("spawn iolab");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "compare {} should fail: {err}", args.join(" "));
    assert!(err.contains(want), "stderr of compare {} lacks {want:?}: {err}", args.join(" "));
}

#[test]
fn compare_halved_latency_gives_iops_plus_100_and_mean_minus_50() {
    let dir = tempdir();
    let a = run_to(dir.path(), "a.json", "200us", 1, &CLOSED);
    let b = run_to(dir.path(), "b.json", "100us", 1, &CLOSED);
    let v = compare_json(&[&a, &b]);
    assert_eq!(v["kind"], "runs");
    assert_eq!(v["sides"][0]["source"], a.as_str());
    let iops = metric(&v, 0, "iops");
    // 8 servers / 200 µs = 40,000 IOPS vs 8 / 100 µs = 80,000: +100 %.
    assert_close("IOPS change", iops["changes"][0]["pct"].as_f64().unwrap(), 100.0, 0.001);
    assert_eq!(iops["changes"][0]["phrase"], "IOPS +100%");
    assert_eq!(iops["changes"][0]["verdict"], "better");
    assert_eq!(iops["best"], serde_json::json!(["B"]));
    assert_eq!(iops["sides"][0]["source"], "single_run");
    assert!(iops["changes"][0]["test"].is_null(), "one run a side is not tested");
    let mean = metric(&v, 0, "mean");
    assert_close("mean latency change", mean["changes"][0]["pct"].as_f64().unwrap(), -50.0, 0.001);
    assert_eq!(mean["changes"][0]["phrase"], "mean latency -50%");
    assert_eq!(mean["better"], "lower");
    assert_eq!(mean["best"], serde_json::json!(["B"]));
    assert_eq!(metric(&v, 0, "p99")["changes"][0]["phrase"], "p99 -50%");

    // The text table and Markdown carry the same sentence; the baseline comes first.
    let out = iolab().args(["compare", &a, &b]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("B vs A: IOPS +100% (better)"), "{text}");
    let out = iolab().args(["compare", &b, &a, "--format", "md", "--metric", "iops"]).output().unwrap();
    let md = String::from_utf8_lossy(&out.stdout);
    assert!(md.contains("| IOPS |") && md.contains("-50% worse"), "{md}");
    assert!(md.contains("- B vs A: IOPS -50% (worse)"), "{md}");

    // --metric keeps what it names; --json FILE writes the document beside the table.
    let json_path = dir.path().join("cmp.json");
    let out = iolab()
        .args(["compare", &a, &b, "--metric", "iops,read.p99", "--json"])
        .arg(&json_path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let v: Value = serde_json::from_slice(&std::fs::read(&json_path).unwrap()).unwrap();
    let keys: Vec<&str> =
        v["units"][0]["metrics"].as_array().unwrap().iter().map(|m| m["key"].as_str().unwrap()).collect();
    assert_eq!(keys, vec!["iops"], "a read-only run has no separate read rows; read.p99 matches nothing");
}

#[test]
fn compare_poisson_trials_test_significance_with_welch() {
    let dir = tempdir();
    let side = |latency: &str, seeds: [u64; 3], tag: &str| -> String {
        seeds
            .iter()
            .map(|&s| run_to(dir.path(), &format!("{tag}{s}.json"), latency, s, &POISSON))
            .collect::<Vec<_>>()
            .join(",")
    };
    let slow = side("200us", [1, 2, 3], "slow");
    let fast = side("100us", [4, 5, 6], "fast");
    let fast_again = side("100us", [7, 8, 9], "again");

    // Clearly different: response time halves, and the test says so.
    let v = compare_json(&[&slow, &fast]);
    assert_eq!(v["units"][0]["trials"], serde_json::json!([3, 3]));
    assert!(v["test"].as_str().unwrap().starts_with("Welch's t-test"), "{}", v["test"]);
    let mean = metric(&v, 0, "mean");
    let t = &mean["changes"][0]["test"];
    assert_eq!(t["significant"], true, "{mean:#}");
    assert!(t["p"].as_f64().unwrap() < 0.001, "{t}");
    assert!(t["df"].as_f64().unwrap() > 1.0, "{t}");
    assert_eq!(mean["changes"][0]["verdict"], "better");
    // Percentiles of several trials come from the merged histograms.
    assert_eq!(metric(&v, 0, "p99")["sides"][0]["source"], "merged_histograms");
    assert_eq!(metric(&v, 0, "iops")["sides"][0]["source"], "mean_of_trials");
    assert_eq!(v["notes"], serde_json::json!([]), "nothing averaged that should have been merged");

    // Identical configuration, other seeds: nothing significant in throughput or mean latency.
    let v = compare_json(&[&fast, &fast_again, "--metric", "iops,mean"]);
    for key in ["iops", "mean"] {
        let t = &metric(&v, 0, key)["changes"][0]["test"];
        assert_eq!(t["significant"], false, "{key}: {t}");
        assert!(t["p"].as_f64().unwrap() > 0.05, "{key}: {t}");
    }
    // A stricter alpha is honoured and recorded.
    let v = compare_json(&[&slow, &fast, "--alpha", "0.01"]);
    assert_eq!(v["alpha"], 0.01);
}

#[test]
fn compare_sweeps_per_point_matched_by_params() {
    let dir = tempdir();
    let sweep = |latency: &str, qd: &str, name: &str| -> String {
        let path = dir.path().join(name).to_string_lossy().into_owned();
        let target = format!("sim:fixed,latency={latency},servers=8");
        let out = iolab()
            .env("IOLAB_DB", dir.path().join("runs.db"))
            .args(["sweep", "--target", &target, "--clock", "virtual", "--seed", "1", "--qd", qd])
            .args(["--ios", "5000", "--json", &path, "-q"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "sweep failed: {}", String::from_utf8_lossy(&out.stderr));
        path
    };
    let a = sweep("200us", "1,2,4", "a.json");
    let b = sweep("100us", "2,4,8", "b.json");
    let v = compare_json(&[&a, &b]);
    assert_eq!(v["kind"], "sweeps");
    let units = v["units"].as_array().unwrap();
    let qds: Vec<&str> = units.iter().map(|u| u["params"]["qd"].as_str().unwrap()).collect();
    assert_eq!(qds, vec!["2", "4"]);
    for i in 0..2 {
        // Below the 8 servers, IOPS = qd / latency: halving latency doubles IOPS at every matched point.
        assert_close(
            "IOPS change",
            metric(&v, i, "iops")["changes"][0]["pct"].as_f64().unwrap(),
            100.0,
            0.01,
        );
    }
    let unmatched: Vec<(String, Value)> = v["unmatched_points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["params"]["qd"].as_str().unwrap().to_string(), p["present_in"].clone()))
        .collect();
    assert_eq!(
        unmatched,
        vec![("1".to_string(), serde_json::json!(["A"])), ("8".to_string(), serde_json::json!(["B"]))]
    );
    // A run and a sweep are not comparable.
    let run = run_to(dir.path(), "run.json", "100us", 1, &CLOSED);
    compare_fails(&[&run, &a], &format!("cannot compare '{run}' (runs) with '{a}' (a sweep)"));
}

#[test]
fn compare_bad_inputs_exit_2_quoting_the_input() {
    let dir = tempdir();
    let a = run_to(dir.path(), "a.json", "100us", 1, &CLOSED);
    let db = dir.path().join("none.db").to_string_lossy().into_owned();
    compare_fails(&[&a, "missing.json", "--db", &db], "'missing.json' is neither a file nor a catalog id");
    compare_fails(&[&a, "abc123", "--db", &db], "'abc123' is not a file, and there is no catalog at");
    assert!(!Path::new(&db).exists(), "compare never creates a catalog");
    let not_json = dir.path().join("notes.txt");
    std::fs::write(&not_json, "hello").unwrap();
    let nj = not_json.to_string_lossy().into_owned();
    compare_fails(&[&a, &nj], &format!("'{nj}' is not an iolab result or sweep"));
    let other = dir.path().join("other.json");
    std::fs::write(&other, r#"{"schema": "iolab.findmax/1"}"#).unwrap();
    let other = other.to_string_lossy().into_owned();
    compare_fails(&[&a, &other], &format!("'{other}' is a 'iolab.findmax/1' document"));
    compare_fails(&[&a, &a, "--alpha", "2"], "invalid value '2' for '--alpha'");
    compare_fails(&[&a, &a, "--metric", "p98"], "invalid value 'p98' for '--metric'");
    compare_fails(&[&a], "2 values required");
}

#[test]
fn compare_catalog_ids_and_tag_queries() {
    let dir = tempdir();
    let db = dir.path().join("results.db");
    let save = |latency: &str, seed: u64, tags: &[(&str, &str)]| -> String {
        let path = run_to(dir.path(), &format!("{latency}-{seed}.json"), latency, seed, &POISSON);
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let catalog = iolab_catalog::Catalog::open(&db, iolab_report::kinds::index)
            .expect("open the temporary catalog");
        catalog
            .save(&iolab_catalog::NewEntry {
                kind: "run".into(),
                doc,
                tags: tags.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
                note: None,
            })
            .expect("save")
    };
    let mut emulex = Vec::new();
    let mut qlogic = Vec::new();
    for s in 1..=3 {
        emulex.push(save("200us", s, &[("hba", "lpe12000"), ("site", "lab1")]));
        qlogic.push(save("100us", s + 10, &[("hba", "qle2560"), ("site", "lab1")]));
    }
    let db_arg = db.to_string_lossy().into_owned();

    // By id (a unique prefix works as well).
    let prefix = &qlogic[0][..qlogic[0].len().min(6)];
    let v = compare_json(&[&emulex[0], prefix, "--db", &db_arg]);
    assert_eq!(metric(&v, 0, "mean")["changes"][0]["verdict"], "better");
    assert_eq!(v["sides"][1]["source"], prefix);

    // By tag query, through IOLAB_DB: every matching run is a trial, and the test runs.
    let out = iolab()
        .env("IOLAB_DB", &db)
        .args(["compare", "tag:hba=lpe12000", "tag:hba=qle2560,site=lab1", "--json", "-"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["units"][0]["trials"], serde_json::json!([3, 3]));
    assert_eq!(metric(&v, 0, "mean")["changes"][0]["test"]["significant"], true);
    assert_close(
        "mean latency change",
        metric(&v, 0, "mean")["changes"][0]["pct"].as_f64().unwrap(),
        -50.0,
        0.05,
    );

    // Comma-joined ids are trials too.
    let joined = emulex.join(",");
    let v = compare_json(&[&joined, "tag:hba=qle2560", "--db", &db_arg]);
    assert_eq!(v["units"][0]["trials"], serde_json::json!([3, 3]));

    // Runs saved by `iolab run --tag` are found the same way.
    for seed in ["21", "22", "23"] {
        let out = iolab()
            .args([
                "run",
                "--target",
                "sim:fixed,latency=50us,servers=8",
                "--clock",
                "virtual",
                "--seed",
                seed,
            ])
            .args(POISSON)
            .args(["-q", "--db", &db_arg, "--tag", "hba=cli"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let v = compare_json(&["tag:hba=qle2560", "tag:hba=cli", "--db", &db_arg, "--metric", "mean"]);
    assert_eq!(v["units"][0]["trials"], serde_json::json!([3, 3]));
    assert_close(
        "mean latency change",
        metric(&v, 0, "mean")["changes"][0]["pct"].as_f64().unwrap(),
        -50.0,
        0.05,
    );

    compare_fails(&["tag:hba=none", &emulex[0], "--db", &db_arg], "matches 'tag:hba=none'");
    compare_fails(&["tag:hba", &emulex[0], "--db", &db_arg], "invalid tag query 'tag:hba'");
    compare_fails(&["ffffffffff", &emulex[0], "--db", &db_arg], "no entry 'ffffffffff'");
}
