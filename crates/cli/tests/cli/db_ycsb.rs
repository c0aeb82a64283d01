//! `iolab db ycsb` end to end (issue 34's proof that a workload is one folder, one document file and one
//! subcommand): every core workload on SQLite runs its mix and leaves nothing behind; its document matches
//! its schema; it is saved as a `db-ycsb` entry, listed, compared with another YCSB run (and refused beside
//! a tpcc run) and reported; on a private PostgreSQL it leaves no server; a bad workload letter is refused
//! before anything is made.

use crate::util::{iolab, tempdir};
use serde_json::Value;
use std::path::Path;

/// `iolab db ycsb ARGS` on a small table, in `dir`, saving into `catalog`: (exit code, stdout, stderr).
fn ycsb(dir: &Path, catalog: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let out = iolab()
        .current_dir(dir)
        .env("IOLAB_DB", catalog)
        .args(["db", "ycsb", "--records", "2000", "--ramp", "0s", "-d", "1s", "--seed", "3"])
        .args(args)
        .output()
        .expect("spawn iolab");
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code(), text(&out.stdout), text(&out.stderr))
}

/// The document of a run that must succeed.
fn doc(dir: &Path, catalog: &Path, args: &[&str]) -> Value {
    let (code, stdout, stderr) = ycsb(dir, catalog, &[args, &["--json", "-"]].concat());
    assert_eq!(code, Some(0), "{stderr}");
    serde_json::from_str(&stdout).expect("JSON")
}

#[test]
fn every_core_workload_runs_its_mix_on_sqlite_and_leaves_nothing() {
    let t = tempdir();
    let catalog = t.path().join("cat.db");
    let schema = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/schema/iolab.dbycsb.v1.json"
    ))
    .expect("the schema file");
    for (w, ops) in [
        ("a", &["read", "update"][..]),
        ("b", &["read", "update"]),
        ("c", &["read"]),
        ("d", &["read", "insert"]),
        ("e", &["insert", "scan"]),
        ("f", &["read", "read_modify_write"]),
    ] {
        let v = doc(t.path(), &catalog, &["--workload", w, "--users", "2", "--no-save"]);
        assert_eq!(
            (v["schema"].as_str(), v["config"]["workload"].as_str()),
            (Some("iolab.dbycsb/1"), Some(w))
        );
        let names: Vec<&str> =
            v["run"]["operations"].as_array().unwrap().iter().map(|o| o["name"].as_str().unwrap()).collect();
        assert_eq!(names, ops, "workload {w}");
        assert!(v["run"]["ops_per_s"].as_f64().unwrap() > 0.0, "{}", v["run"]);
        let counted: u64 =
            v["run"]["operations"].as_array().unwrap().iter().map(|o| o["committed"].as_u64().unwrap()).sum();
        let rate = counted as f64 / v["run"]["measured_s"].as_f64().unwrap();
        assert!(
            (rate - v["run"]["ops_per_s"].as_f64().unwrap()).abs() < 1e-6 * rate.max(1.0),
            "{}",
            v["run"]
        );
        assert_eq!(v["config"]["distribution"], if w == "d" { "latest" } else { "zipfian" });
        iolab_report::schema_check::check_document(&v, &schema);
        let left: Vec<_> = std::fs::read_dir(t.path()).unwrap().flatten().map(|e| e.file_name()).collect();
        assert!(left.is_empty(), "workload {w} left {left:?}");
    }
}

#[test]
fn ycsb_runs_are_saved_listed_compared_and_reported() {
    let t = tempdir();
    let catalog = t.path().join("cat.db");
    let run = |w: &str| {
        let (code, _, stderr) =
            ycsb(t.path(), &catalog, &["--workload", w, "-q", "--tag", &format!("w={w}")]);
        assert_eq!(code, Some(0), "{stderr}");
    };
    run("a");
    run("c");
    let list =
        iolab().env("IOLAB_DB", &catalog).args(["runs", "--kind", "db-ycsb", "--json"]).output().unwrap();
    let rows: Value = serde_json::from_slice(&list.stdout).expect("runs --json");
    let ids: Vec<&str> = rows.as_array().unwrap().iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), 2, "{rows}");
    let text = iolab().env("IOLAB_DB", &catalog).args(["runs", "--kind", "db-ycsb"]).output().unwrap();
    assert!(String::from_utf8_lossy(&text.stdout).contains("ops/s"), "the listing shows ops/s");
    let cmp = iolab().env("IOLAB_DB", &catalog).arg("compare").args(&ids).output().unwrap();
    let cmp_text = String::from_utf8_lossy(&cmp.stdout);
    assert_eq!(cmp.status.code(), Some(0), "{}", String::from_utf8_lossy(&cmp.stderr));
    assert!(cmp_text.contains("ops/s") && cmp_text.contains("read p99"), "{cmp_text}");
    let html = t.path().join("r.html");
    let rep =
        iolab().env("IOLAB_DB", &catalog).arg("report").args(&ids).arg("-o").arg(&html).output().unwrap();
    assert_eq!(rep.status.code(), Some(0), "{}", String::from_utf8_lossy(&rep.stderr));
    let page = std::fs::read_to_string(&html).unwrap();
    assert_eq!(page.matches("<h2>YCSB run:").count(), 2, "a section each");
    // A tpcc run is another workload: compare refuses it beside a YCSB run, naming both.
    let tpcc = iolab()
        .current_dir(t.path())
        .env("IOLAB_DB", &catalog)
        .args(["db", "tpcc", "--items", "1000", "--ramp", "0s", "-d", "1s", "--seed", "1", "-q"])
        .output()
        .unwrap();
    assert_eq!(tpcc.status.code(), Some(0), "{}", String::from_utf8_lossy(&tpcc.stderr));
    let all = iolab().env("IOLAB_DB", &catalog).args(["runs", "--kind", "db", "--json"]).output().unwrap();
    let tpcc_id =
        serde_json::from_slice::<Value>(&all.stdout).unwrap()[0]["id"].as_str().unwrap().to_string();
    let mixed = iolab().env("IOLAB_DB", &catalog).args(["compare", ids[0], &tpcc_id]).output().unwrap();
    assert_eq!(mixed.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&mixed.stderr).contains("YCSB"),
        "{}",
        String::from_utf8_lossy(&mixed.stderr)
    );
}

#[test]
fn ycsb_on_a_private_postgres_leaves_nothing_behind() {
    if let Some(why) = crate::db::postgres_missing() {
        return iolab_testkit::skip(why);
    }
    let t = crate::db::pg_tempdir();
    let db = t.path().join("db");
    let v = doc(
        t.path(),
        &t.path().join("x"),
        &["--database", "postgres", "--dir", db.to_str().unwrap(), "--workload", "f", "--no-save"],
    );
    assert_eq!(v["engine"]["name"], "postgres");
    assert!(v["run"]["ops_per_s"].as_f64().unwrap() > 0.0);
    crate::db::assert_nothing_left(t.path(), &db);
}

#[test]
fn a_bad_workload_is_refused_before_anything_is_made() {
    let t = tempdir();
    for (args, says) in [
        (&["--workload", "g"][..], "invalid value 'g' for '--workload'"),
        (&["--users", "0"], "invalid value '0' for '--users'"),
        (&["--database", "mysql"], "invalid value 'mysql' for '--database'"),
    ] {
        let (code, _, stderr) = ycsb(t.path(), &t.path().join("cat.db"), args);
        assert_eq!(code, Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
        assert_eq!(std::fs::read_dir(t.path()).unwrap().count(), 0, "{args:?} made something");
    }
}

/// Issue 37: a database document carries the environment a run result has (machine, and the file system,
/// mount options, device and write cache under the database's directory), in its JSON, its text and its HTML
/// report.
#[test]
fn a_ycsb_document_carries_the_environment_in_json_text_and_html() {
    let t = tempdir();
    let catalog = t.path().join("cat.db");
    let v = doc(t.path(), &catalog, &["--workload", "c", "--users", "1", "--tag", "env=1"]);
    let env = &v["env"];
    assert!(env["kernel"].as_str().is_some_and(|k| k.starts_with("Linux")), "{env}");
    assert!(
        env["cpu_count"].as_u64().is_some_and(|n| n >= 1) && env["mem_total_bytes"].as_u64() > Some(0),
        "{env}"
    );
    let target = &env["targets"][0];
    assert_eq!(target["kind"], "directory", "{env}");
    assert!(target["fs_type"].is_string(), "the file system under the database: {env}");
    let options = target["mount_options"].as_str().expect("mount options").to_string();
    let schema = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/schema/iolab.dbycsb.v1.json"
    ))
    .expect("the schema file");
    iolab_report::schema_check::check_document(&v, &schema);
    let (code, text, stderr) = ycsb(t.path(), &catalog, &["--workload", "c", "--users", "1", "--no-save"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(text.contains("\nmachine ") && text.contains(&format!("({options})")), "{text}");
    let list =
        iolab().env("IOLAB_DB", &catalog).args(["runs", "--kind", "db-ycsb", "--json"]).output().unwrap();
    let rows: Value = serde_json::from_slice(&list.stdout).expect("runs --json");
    let id = rows[0]["id"].as_str().expect("the saved run").to_string();
    let html = t.path().join("r.html");
    let rep = iolab().env("IOLAB_DB", &catalog).args(["report", &id, "-o"]).arg(&html).output().unwrap();
    assert_eq!(rep.status.code(), Some(0), "{}", String::from_utf8_lossy(&rep.stderr));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("<h3>Environment</h3>") && page.contains(&options), "no environment in the report");
    assert!(page.contains(env["kernel"].as_str().unwrap()), "the kernel in the report");
}
