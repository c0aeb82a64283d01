//! A catalog written by an earlier iolab keeps working: `fixtures/catalog-v5/catalog.db` was made by the
//! iolab of commit 5021d87 (schema version 5, when a `CHECK` constraint listed the kinds) with a run of each
//! kind (two runs, a sweep, a find-max search and its steps, a verify check, a tpcc run, a tpcc sweep over
//! users, a tpch query set, a copy), and the files beside it are what that iolab printed for it: `iolab runs`
//! (text and JSON), `iolab show` of each entry, comparisons, CSV exports and a report (HTML and Markdown).
//! This iolab opens a copy of it (migrating it), and must print the same bytes; then the catalog takes new
//! entries.

use crate::util::{iolab, tempdir};
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/cli/fixtures/catalog-v5").join(name)
}

fn expected(name: &str) -> String {
    std::fs::read_to_string(fixture(name)).unwrap_or_else(|e| panic!("read fixture {name}: {e}"))
}

/// `iolab ARGS --db catalog.db` in `dir`: its stdout, asserting exit 0.
fn stdout(dir: &Path, args: &[&str]) -> String {
    let out = iolab().current_dir(dir).args(args).args(["--db", "catalog.db"]).output().expect("spawn iolab");
    assert!(
        out.status.success(),
        "iolab {}: exit {:?}\n{}",
        args.join(" "),
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

/// Asserts `actual` is the fixture `name`, byte for byte; on a difference, writes `actual` beside the
/// test's temporary files so it can be diffed.
fn same(name: &str, actual: &str) {
    let want = expected(name);
    if actual != want {
        let got = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("old-catalog-{name}"));
        std::fs::write(&got, actual).expect("write the actual output");
        panic!("{name} differs from what iolab 5021d87 printed; this iolab's output is in {}", got.display());
    }
}

/// The ids in the fixture, by kind.
const RUN: &str = "83734017";
const MIXED_RUN: &str = "e3aecc7d";
const SWEEP: &str = "bdad9279";
const FIND_MAX: &str = "2a287b5f";
const VERIFY: &str = "2b084ce5";
const TPCC: &str = "6b934314";
const TPCC_SWEEP: &str = "c161b2e6";
const TPCH: &str = "061a9399";
const COPY: &str = "372d9f7b";
const STEPS: &str = "76f84300,6925ed48,b7786112";

fn copy_of_the_catalog() -> tempfile::TempDir {
    let dir = tempdir();
    std::fs::copy(fixture("catalog.db"), dir.path().join("catalog.db")).expect("copy the fixture catalog");
    dir
}

#[test]
fn old_catalog_lists_and_shows_every_entry_as_before() {
    let dir = copy_of_the_catalog();
    let d = dir.path();
    same("runs.txt", &stdout(d, &["runs"]));
    same("runs.json", &stdout(d, &["runs", "--json"]));
    for id in [RUN, MIXED_RUN, SWEEP, FIND_MAX, VERIFY, TPCC, TPCC_SWEEP, TPCH, COPY] {
        same(&format!("show-{id}.txt"), &stdout(d, &["show", id]));
    }
    for id in [RUN, SWEEP, FIND_MAX, TPCC_SWEEP] {
        same(&format!("export-{id}.csv"), &stdout(d, &["export", id, "--csv"]));
    }
}

#[test]
fn old_catalog_compares_and_reports_as_before() {
    let dir = copy_of_the_catalog();
    let d = dir.path();
    same("compare-runs.txt", &stdout(d, &["compare", RUN, MIXED_RUN]));
    same("compare-runs.md", &stdout(d, &["compare", RUN, MIXED_RUN, "--format", "md"]));
    let trials = format!("{RUN},{MIXED_RUN}");
    same("compare-trials.json", &stdout(d, &["compare", &trials, STEPS, "--json", "-"]));
    for id in [TPCC, TPCC_SWEEP, TPCH, COPY, SWEEP] {
        same(&format!("compare-{id}.txt"), &stdout(d, &["compare", id, id]));
        if id != TPCC_SWEEP {
            same(&format!("compare-{id}.json"), &stdout(d, &["compare", id, id, "--json", "-"]));
        }
    }
    let inputs = [RUN, SWEEP, FIND_MAX, TPCC, TPCC_SWEEP, TPCH, COPY, VERIFY];
    for (format, name) in [("html", "report.html"), ("md", "report.md")] {
        let mut args = vec!["report"];
        args.extend(inputs);
        args.extend(["--format", format, "--title", "catalog v5"]);
        same(name, &stdout(d, &args));
    }
}

#[test]
fn old_catalog_lists_each_kind_and_takes_new_entries() {
    let dir = copy_of_the_catalog();
    let d = dir.path();
    let ids = |args: &[&str]| -> Vec<String> {
        let rows: serde_json::Value = serde_json::from_str(&stdout(d, args)).expect("runs --json");
        rows.as_array().unwrap().iter().map(|r| r["id"].as_str().unwrap().to_string()).collect()
    };
    for (kind, id) in [("db-tpch", TPCH), ("dbcopy", COPY), ("verify", VERIFY), ("find-max", FIND_MAX)] {
        assert_eq!(ids(&["runs", "--kind", kind, "--json"]), [id], "--kind {kind}");
    }
    let before = ids(&["runs", "--json"]).len();
    let mut run = vec!["run"];
    run.extend(crate::util::SIM);
    run.extend(["-d", "1s", "--ramp", "0s", "-q", "--tag", "after=upgrade"]);
    stdout(d, &run);
    assert_eq!(ids(&["runs", "--json"]).len(), before + 1);
    assert_eq!(ids(&["runs", "--tag", "after=upgrade", "--json"]).len(), 1);
}

/// `iolab runs --kind`: its help and its refusal list every kind of entry, from the registry of document
/// kinds (the help once left out db-tpch and db-copy).
#[test]
fn runs_kind_help_and_refusal_list_every_kind() {
    let out = iolab().args(["runs", "--help"]).output().expect("spawn iolab");
    let help = String::from_utf8(out.stdout).unwrap();
    for kind in ["run", "verify", "sweep", "find-max", "db", "db-sweep", "db-tpch", "db-copy"] {
        assert!(help.contains(&format!("{kind} (")), "--kind's help names {kind}: {help}");
    }
    let out = iolab().args(["runs", "--kind", "dbtcph"]).output().expect("spawn iolab");
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("invalid value 'dbtcph' for '--kind'") && err.contains("db-tpch, db-copy"), "{err}");
}

/// Every document the earlier iolab wrote reads back as its kind and renders as JSON to the same bytes (the
/// field order too: a group's and a worker's op rows are one declaration now, flattened into them).
#[test]
fn old_catalog_documents_render_to_the_same_json() {
    let dir = copy_of_the_catalog();
    let catalog = iolab_catalog::Catalog::open(&dir.path().join("catalog.db"), iolab_report::kinds::index)
        .expect("open the fixture catalog");
    let entries = catalog.list(&iolab_catalog::Filter::default()).expect("list");
    assert_eq!(entries.len(), 14);
    for e in entries {
        let doc = iolab_report::kinds::parse(e.doc.clone()).unwrap_or_else(|err| panic!("{}: {err}", e.id));
        let json = iolab_report::JsonExporter.render(doc.as_ref());
        assert!(json == e.doc_text, "{} ({}) renders differently", e.id, e.kind);
    }
}
