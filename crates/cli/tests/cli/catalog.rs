//! The results catalog end to end: runs, sweeps and searches are saved (with tags and a note) unless
//! `--no-save`; `iolab runs` finds them by tag and kind; `show` and `export` give the document back exactly;
//! `rm` removes; several processes write one catalog at once; bad input is exit 2 with nothing done. Each test
//! has its own catalog in its own temporary directory.

use crate::util::{iolab, tempdir, SIM};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;

/// `iolab` saving into `db` (through IOLAB_DB, as a user's environment would).
fn at(db: &Path) -> assert_cmd::Command {
    let mut c = iolab();
    c.env("IOLAB_DB", db);
    c
}

fn ok(out: Output, what: &str) -> Output {
    assert_eq!(
        out.status.code(),
        Some(0),
        "{what} failed\nstdout: {}\nstderr: {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// `iolab runs --json ARGS` on `db`.
fn runs(db: &Path, args: &[&str]) -> Vec<Value> {
    let out = ok(at(db).arg("runs").args(args).arg("--json").output().unwrap(), "iolab runs");
    match serde_json::from_slice(&out.stdout) {
        Ok(Value::Array(v)) => v,
        other => panic!("runs --json is not an array: {other:?}"),
    }
}

fn catalog_in(dir: &Path) -> PathBuf {
    dir.join("cat").join("results.db")
}

#[test]
fn run_with_tags_and_note_is_found_by_tag_and_round_trips_exactly() {
    let dir = tempdir();
    let db = catalog_in(dir.path());
    let run_json = dir.path().join("run.json");
    let out = at(&db)
        .arg("run")
        .args(SIM)
        .args([
            "-d",
            "2s",
            "--tag",
            "hba=qle2560",
            "--tag",
            "site=lab1",
            "--note",
            "after the firmware update",
        ])
        .args(["--json", run_json.to_str().unwrap()])
        .output()
        .unwrap();
    let out = ok(out, "iolab run");
    let doc: Value = serde_json::from_slice(&std::fs::read(&run_json).unwrap()).unwrap();
    let run_id = doc["run_id"].as_str().unwrap();
    assert!(
        stderr(&out).contains(&format!("iolab: saved as {run_id} in {}", db.display())),
        "the id is printed: {}",
        stderr(&out)
    );

    let found = runs(&db, &["--tag", "hba=qle2560"]);
    assert_eq!(found.len(), 1);
    let e = &found[0];
    assert_eq!(e["id"], run_id, "a run's catalog id is its run id");
    assert_eq!(e["kind"], "run");
    assert_eq!(e["tags"]["site"], "lab1");
    assert_eq!(e["note"], "after the firmware update");
    assert_eq!(e["iops"], doc["total"]["all"]["iops"]);
    assert_eq!(e["p99_ns"].as_f64(), doc["total"]["all"]["lat_ns"]["p99"].as_f64());
    assert_eq!(e["started_at"], doc["started_at"]);
    assert!(runs(&db, &["--tag", "hba=lpe32002"]).is_empty());
    assert!(runs(&db, &["--tag", "hba=qle2560", "--tag", "site=lab2"]).is_empty());
    let name = "randread 4k qd32";
    assert_eq!(e["profile"], name, "a run without a job, profile or --name is named by what it did");
    assert_eq!(runs(&db, &["--target", "sim:fixed", "--kind", "run", "--profile", name]).len(), 1);
    assert!(runs(&db, &["--kind", "sweep"]).is_empty());
    assert_eq!(runs(&db, &["--since", "2000-01-01", "--until", "2999-12-31T00:00:00Z"]).len(), 1);
    assert!(runs(&db, &["--until", "2000-01-01"]).is_empty());
    assert_eq!(runs(&db, &["--since", "1h"]).len(), 1, "--since takes a duration ago");
    assert_eq!(runs(&db, &["--since", "2d"]).len(), 1, "and days");
    assert!(runs(&db, &["--until", "1h"]).is_empty(), "--until takes a duration ago");

    // export --json -o FILE is byte for byte what run --json FILE wrote; to stdout, what --json - prints.
    let exported = dir.path().join("exported.json");
    ok(
        at(&db).args(["export", &run_id[..5], "--json", "-o", exported.to_str().unwrap()]).output().unwrap(),
        "export",
    );
    assert_eq!(std::fs::read(&exported).unwrap(), std::fs::read(&run_json).unwrap());
    // Without --json or --csv, -o's extension says which.
    let by_name = dir.path().join("by-name.json");
    ok(
        at(&db).args(["export", run_id, "-o", by_name.to_str().unwrap()]).output().unwrap(),
        "export -o x.json",
    );
    assert_eq!(std::fs::read(&by_name).unwrap(), std::fs::read(&run_json).unwrap());
    let by_name_csv = dir.path().join("by-name.csv");
    ok(
        at(&db).args(["export", run_id, "-o", by_name_csv.to_str().unwrap()]).output().unwrap(),
        "export -o x.csv",
    );
    assert!(std::fs::read_to_string(&by_name_csv).unwrap().starts_with("t_s,interval_s,"));
    let stdout = ok(at(&db).args(["export", run_id, "--json"]).output().unwrap(), "export").stdout;
    let run_stdout =
        ok(at(&db).arg("run").args(SIM).args(["-d", "2s", "--json", "-", "-q"]).output().unwrap(), "run");
    let v: Value = serde_json::from_slice(&run_stdout.stdout).unwrap();
    let second = v["run_id"].as_str().unwrap();
    let stdout2 = ok(at(&db).args(["export", second, "--json"]).output().unwrap(), "export").stdout;
    assert_eq!(stdout2, run_stdout.stdout, "export --json prints what run --json - printed");
    assert_eq!(serde_json::from_slice::<Value>(&stdout).unwrap(), doc);

    // The histograms are kept (inside the document), so percentiles can be recomputed later.
    assert!(doc["histograms"]["read"].as_str().is_some_and(|h| h.len() > 10));

    // CSV: the time series.
    let csv = ok(at(&db).args(["export", run_id, "--csv"]).output().unwrap(), "export --csv").stdout;
    let csv = String::from_utf8(csv).unwrap();
    assert!(csv.starts_with("t_s,interval_s,"), "{csv}");
    assert_eq!(csv.lines().count(), 1 + doc["timeseries"].as_array().unwrap().len());

    // show: the run's own text, then tags and note.
    let shown = ok(at(&db).args(["show", run_id]).output().unwrap(), "show").stdout;
    let shown = String::from_utf8(shown).unwrap();
    assert!(shown.contains(&format!("run {run_id}")) && shown.contains("IOPS"), "{shown}");
    assert!(
        shown.contains("hba=qle2560 site=lab1") && shown.contains("note    after the firmware update"),
        "{shown}"
    );

    // The list, newest first, as a table.
    let table = ok(at(&db).arg("runs").output().unwrap(), "runs").stdout;
    let table = String::from_utf8(table).unwrap();
    let lines: Vec<&str> = table.lines().collect();
    assert!(lines[0].starts_with("id ") && lines[0].contains("IOPS"), "{table}");
    assert!(lines[1].starts_with(second) && lines[2].starts_with(run_id), "{table}");

    // rm, then it is gone; an unknown id is exit 2.
    let out = ok(at(&db).args(["rm", run_id]).output().unwrap(), "rm");
    assert!(stderr(&out).contains(&format!("removed {run_id}")));
    assert_eq!(runs(&db, &[]).len(), 1);
    let out = at(&db).args(["show", run_id]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains(&format!("no entry '{run_id}'")), "{}", stderr(&out));
}

#[test]
fn no_save_and_dry_run_save_nothing() {
    let dir = tempdir();
    let db = catalog_in(dir.path());
    ok(
        at(&db).arg("run").args(SIM).args(["--ios", "1000", "--no-save", "-q"]).output().unwrap(),
        "run --no-save",
    );
    ok(at(&db).arg("run").args(SIM).args(["--ios", "1000", "--dry-run"]).output().unwrap(), "run --dry-run");
    ok(
        at(&db)
            .arg("sweep")
            .args(SIM)
            .args(["--ios", "1000", "--qd", "1,2", "--no-save", "-q"])
            .output()
            .unwrap(),
        "sweep",
    );
    assert!(!db.exists() && !db.parent().unwrap().exists(), "nothing created");
    // -q saves, silently.
    let out = ok(at(&db).arg("run").args(SIM).args(["--ios", "1000", "-q"]).output().unwrap(), "run -q");
    assert_eq!(stderr(&out), "");
    assert_eq!(runs(&db, &[]).len(), 1);
}

#[test]
fn sweep_is_saved_as_one_entry_and_exports_its_points() {
    let dir = tempdir();
    let db = catalog_in(dir.path());
    let out = at(&db)
        .arg("sweep")
        .args(SIM)
        .args(["--ios", "2000", "--qd", "1,4,16", "--tag", "kind=qd", "--json", "-"])
        .output()
        .unwrap();
    let out = ok(out, "sweep");
    assert!(stderr(&out).contains("iolab: saved as "), "{}", stderr(&out));
    let list = runs(&db, &[]);
    assert_eq!(list.len(), 1, "one entry for the whole sweep");
    assert_eq!(list[0]["kind"], "sweep");
    assert_eq!(list[0]["profile"], "randread 4k", "named without what it swept");
    let id = list[0]["id"].as_str().unwrap();
    assert_eq!(runs(&db, &["--kind", "sweep", "--tag", "kind=qd"]).len(), 1);
    let exported = ok(at(&db).args(["export", id, "--json"]).output().unwrap(), "export").stdout;
    assert_eq!(exported, out.stdout, "export --json prints what sweep --json - printed");
    let csv = ok(at(&db).args(["export", id, "--csv"]).output().unwrap(), "export --csv").stdout;
    let csv = String::from_utf8(csv).unwrap();
    assert!(csv.starts_with("qd,index,"), "{csv}");
    assert_eq!(csv.lines().count(), 4, "header and one row per point: {csv}");
    let shown = String::from_utf8(ok(at(&db).args(["show", id]).output().unwrap(), "show").stdout).unwrap();
    assert!(shown.contains("sweep of 3 points") && shown.contains("kind=qd"), "{shown}");
}

#[test]
fn find_max_search_is_saved_with_its_profile_and_targets() {
    let dir = tempdir();
    let db = catalog_in(dir.path());
    let out = at(&db)
        .args(["run", "--profile", "exchange-2010", "--target", "sim:fixed,latency=5ms,servers=4"])
        .args(["--clock", "virtual", "--seed", "1", "-d", "2s", "--ramp", "0s", "--iops-per-mailbox", "1"])
        .args(["--mailboxes", "1000", "--find-max", "--find-max-resolution", "20", "--json", "-", "-q"])
        .output()
        .unwrap();
    let out = ok(out, "find-max");
    let list = runs(&db, &["--kind", "find-max"]);
    assert_eq!(list.len(), 1);
    assert_eq!(list[0]["profile"], "exchange-2010");
    assert_eq!(list[0]["targets"][0], "sim:fixed,latency=5ms,servers=4,size=1G");
    let id = list[0]["id"].as_str().unwrap();
    let exported = ok(at(&db).args(["export", id, "--json"]).output().unwrap(), "export").stdout;
    assert_eq!(exported, out.stdout);
    let shown = String::from_utf8(ok(at(&db).args(["show", id]).output().unwrap(), "show").stdout).unwrap();
    assert!(shown.contains("max mailboxes that passes"), "{shown}");
    assert!(shown.contains("the boundary held when run again"), "{shown}");
    // Issue 25, item 6: each step's whole run is in the catalog, named by the search, and the search is a
    // report input (it was refused: "a --find-max search; report takes runs and sweeps").
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let steps = doc["steps"].as_array().unwrap();
    let step_ids: Vec<&str> = steps.iter().map(|s| s["run_id"].as_str().unwrap()).collect();
    assert_eq!(runs(&db, &["--kind", "run"]).len(), steps.len());
    assert!(shown.contains(step_ids[0]), "{shown}");
    let html = dir.path().join("search.html");
    ok(at(&db).args(["report", id, "-o"]).arg(&html).output().unwrap(), "report of a search");
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("Find-max search") && page.contains("<svg"), "{page}");
    let step_html = dir.path().join("step.html");
    ok(at(&db).args(["report", step_ids[0], "-o"]).arg(&step_html).output().unwrap(), "report of a step");
}

#[test]
fn parallel_processes_write_one_catalog_without_losing_or_corrupting() {
    let dir = tempdir();
    let db = catalog_in(dir.path());
    let children: Vec<std::process::Child> = (0..6)
        .map(|i| {
            let target = if i % 2 == 0 { "mem:16M" } else { "null:1G" };
            std::process::Command::new(assert_cmd::cargo::cargo_bin("iolab"))
                .args(["run", "--target", target, "-d", "1s", "--ramp", "0s", "-q", "--tag"])
                .arg(format!("proc={i}"))
                .arg("--db")
                .arg(&db)
                .env_remove("IOLAB_DB")
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("spawn iolab")
        })
        .collect();
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    }
    let list = runs(&db, &[]);
    assert_eq!(list.len(), 6);
    let mut procs: Vec<String> =
        list.iter().map(|e| e["tags"]["proc"].as_str().unwrap().to_string()).collect();
    procs.sort();
    assert_eq!(procs, ["0", "1", "2", "3", "4", "5"]);
    let catalog = iolab_catalog::Catalog::open(&db, iolab_report::kinds::index).unwrap();
    assert_eq!(catalog.integrity_check(), Ok(()));
}

#[test]
fn bad_tags_are_exit_2_quoting_them_and_run_nothing() {
    let dir = tempdir();
    let db = catalog_in(dir.path());
    for (tag, expect) in [
        ("hba", "invalid value 'hba' for '--tag': expected KEY=VALUE"),
        ("=lab1", "invalid value '=lab1' for '--tag'"),
    ] {
        for cmd in ["run", "sweep"] {
            let out =
                at(&db).current_dir(dir.path()).args([cmd, "--ios", "100", "--tag", tag]).output().unwrap();
            assert_eq!(out.status.code(), Some(2), "{cmd} --tag {tag}");
            assert!(stderr(&out).contains(expect), "{}", stderr(&out));
        }
    }
    let out = at(&db).current_dir(dir.path()).args(["run", "--tag", "a=1", "--tag", "a=2"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("key 'a' is given twice"), "{}", stderr(&out));
    assert_eq!(crate::util::entries(dir.path()), Vec::<String>::new(), "no scratch file, no catalog");
}

#[test]
fn unusable_catalog_is_exit_2_before_anything_runs_and_is_left_unchanged() {
    let dir = tempdir();
    let garbage = dir.path().join("garbage.db");
    let bytes: Vec<u8> = (0..5000u32).map(|i| (i * 7 + 3) as u8).collect();
    std::fs::write(&garbage, &bytes).unwrap();
    // The default scratch file would be made in the current directory; nothing must be.
    let out = iolab()
        .current_dir(dir.path())
        .args(["run", "--db", garbage.to_str().unwrap(), "--ios", "100"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains(&format!("'{}' is not an iolab catalog", garbage.display())), "{err}");
    assert!(err.contains("it was not changed") && err.contains("--db"), "{err}");
    assert_eq!(std::fs::read(&garbage).unwrap(), bytes);
    assert_eq!(crate::util::entries(dir.path()), ["garbage.db"]);
    for args in [vec!["runs"], vec!["show", "abc"], vec!["export", "abc", "--json"], vec!["rm", "abc"]] {
        let out = iolab().args(&args).arg("--db").arg(&garbage).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(stderr(&out).contains("is not an iolab catalog"), "{}", stderr(&out));
    }
    assert_eq!(std::fs::read(&garbage).unwrap(), bytes);
    assert_eq!(crate::util::entries(dir.path()), ["garbage.db"]);
}

#[test]
fn reading_commands_reject_bad_input_with_exit_2() {
    let dir = tempdir();
    let db = catalog_in(dir.path());
    // No catalog yet: runs lists nothing; the others say where they looked.
    let out = ok(at(&db).arg("runs").output().unwrap(), "runs");
    assert!(out.stdout.is_empty() && stderr(&out).contains("no catalog at"), "{}", stderr(&out));
    let out = at(&db).args(["show", "abc"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains(&format!("no catalog at '{}'", db.display())), "{}", stderr(&out));
    assert!(!db.exists(), "reading commands never create a catalog");

    ok(at(&db).arg("run").args(SIM).args(["--ios", "100", "-q"]).output().unwrap(), "run");
    let id = runs(&db, &[])[0]["id"].as_str().unwrap().to_string();
    let cases: [(&[&str], &str); 12] = [
        (&["runs", "--since", "yesterday"], "invalid value 'yesterday' for '--since'"),
        (&["runs", "--since", "30"], "or a duration ago (30m, 1h, 2d)"),
        (&["runs", "--until", "2025-02-30"], "invalid value '2025-02-30' for '--until'"),
        (&["runs", "--kind", "runz"], "invalid value 'runz' for '--kind'"),
        (&["runs", "--limit", "0"], "invalid value '0' for '--limit'"),
        (&["runs", "--tag", "site"], "invalid value 'site' for '--tag'"),
        (&["show", "ffffffffff"], "no entry 'ffffffffff'"),
        (&["show", "xyz"], "invalid id 'xyz'"),
        (&["export", "ffffffffff", "--csv"], "no entry 'ffffffffff'"),
        (&["export", &id], "--json"),
        (&["export", &id, "-o", "x.txt"], "cannot tell the format from '-o x.txt'"),
        (&["rm", &id, "ffffffffff"], "no entry 'ffffffffff'"),
    ];
    for (args, expect) in cases {
        let out = at(&db).args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(expect), "{args:?}: {}", stderr(&out));
    }
    assert_eq!(runs(&db, &[]).len(), 1, "rm with one unknown id removes none");
}

#[test]
fn ambiguous_prefix_lists_the_candidates() {
    let dir = tempdir();
    let db = catalog_in(dir.path());
    // The same seed and clock give different run ids (the id mixes in the start time and pid), so make
    // runs until two share a first hex digit: at most 17 by the pigeonhole principle.
    let mut ids: Vec<String>;
    let shared = loop {
        ok(at(&db).arg("run").args(SIM).args(["--ios", "100", "-q"]).output().unwrap(), "run");
        ids = runs(&db, &[]).iter().map(|e| e["id"].as_str().unwrap().to_string()).collect();
        if let Some(c) =
            ids.iter().map(|i| &i[..1]).find(|p| ids.iter().filter(|i| i.starts_with(*p)).count() > 1)
        {
            break c.to_string();
        }
        assert!(ids.len() <= 17);
    };
    let out = at(&db).args(["show", &shared]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains(&format!("id '{shared}' is ambiguous")), "{err}");
    for id in ids.iter().filter(|i| i.starts_with(&shared)) {
        assert!(err.contains(id.as_str()), "lists {id}: {err}");
    }
}

/// Issue 14, item 7: a catalog whose B-tree pages are damaged behind an intact header used to run the whole
/// workload and then fail to save (or save into the damaged file). It is now refused before anything runs.
#[test]
fn damaged_catalog_is_refused_before_the_run_and_left_unchanged() {
    let dir = tempdir();
    let db = catalog_in(dir.path());
    for seed in ["1", "2", "3"] {
        let mut args = vec!["run", "-q", "-d", "1s", "--ramp", "0s"];
        args.extend(SIM.iter().take(4));
        args.extend(["--seed", seed]);
        ok(at(&db).args(&args).output().unwrap(), "run");
    }
    let mut bytes = std::fs::read(&db).unwrap();
    let page = 4096;
    // The last B-tree page (table or index, by its type byte) loses its cell pointers and cells.
    let btree = (1..bytes.len() / page)
        .rev()
        .map(|i| i * page)
        .find(|&at| matches!(bytes[at], 0x02 | 0x05 | 0x0a | 0x0d))
        .expect("a B-tree page after the first");
    for b in &mut bytes[btree + 1..btree + page] {
        *b ^= 0xa5;
    }
    std::fs::write(&db, &bytes).unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let out = at(&db).current_dir(&work).args(["run", "--ios", "1000"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("is damaged") && err.contains("not changed"), "{err}");
    assert!(crate::util::entries(&work).is_empty(), "nothing was created: {:?}", crate::util::entries(&work));
    assert!(std::fs::read(&db).unwrap() == bytes, "the damaged catalog is left as it was");
}

/// Issue 14, item 14: notes, tags and job names were printed raw by `iolab runs` and `iolab show`, so an ESC
/// sequence in a note could clear or retitle the reader's terminal. Control characters are shown as escapes.
#[test]
fn runs_and_show_escape_control_characters_in_notes_tags_and_names() {
    let dir = tempdir();
    let db = catalog_in(dir.path());
    let evil = "x\u{1b}]0;pwned\u{7}\u{1b}[2Jy";
    let mut args = vec!["run", "-q", "-d", "1s", "--ramp", "0s", "--note", evil, "--tag"];
    let tag = format!("k={evil}");
    args.push(&tag);
    args.extend(SIM.iter());
    ok(at(&db).args(&args).output().unwrap(), "run");
    let list = runs(&db, &[]);
    let id = list[0]["id"].as_str().unwrap().to_string();
    for cmd in [vec!["runs"], vec!["show", id.as_str()]] {
        let out = ok(at(&db).args(&cmd).output().unwrap(), "runs/show");
        assert!(
            !out.stdout.contains(&0x1b) && !out.stdout.contains(&0x07),
            "{cmd:?} printed raw control bytes"
        );
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("\\x1b"), "{cmd:?} shows the escape visibly: {text}");
    }
    // JSON keeps the note exactly (escaped by JSON itself).
    assert_eq!(runs(&db, &[])[0]["note"], evil);
}

/// A tmpfs of `kib` KiB mounted at `dir/small` (unmounted when dropped); Err says why there is none.
struct SmallFs(PathBuf);

impl SmallFs {
    fn mount(dir: &Path, kib: u64) -> Result<SmallFs, String> {
        if !crate::util::is_root() {
            return Err("needs root for a tmpfs mount".into());
        }
        let small = dir.join("small");
        std::fs::create_dir(&small).map_err(|e| e.to_string())?;
        let status = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={kib}k"), "tmpfs", small.to_str().unwrap()])
            .status();
        match status {
            Ok(s) if s.success() => Ok(SmallFs(small)),
            _ => Err("cannot mount a tmpfs".into()),
        }
    }

    /// Writes a file until the file system is full.
    fn fill(&self) {
        use std::io::Write;
        let mut f = std::fs::File::create(self.0.join("fill")).unwrap();
        while f.write_all(&[0u8; 4096]).is_ok() {}
    }
}

impl Drop for SmallFs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}

/// Issue 24, item 12: when the catalog's file system fills while a run or sweep goes on, the result is printed
/// and `--json` written but not saved: exit 3 (work done, an output not written), naming the catalog, never 2
/// ("nothing was created or changed").
#[test]
fn a_catalog_that_fills_during_the_work_is_exit_3_naming_it() {
    let sweep = ["sweep", "--target", "null:1G", "--qd", "1,2", "-d", "1s", "--ramp", "0"];
    let run = ["run", "--target", "null:1G", "-d", "2s", "--ramp", "0"];
    for args in [&run[..], &sweep[..]] {
        let dir = tempdir();
        let fs = match SmallFs::mount(dir.path(), 512) {
            Ok(fs) => fs,
            Err(why) => return iolab_testkit::skip(why),
        };
        let db = fs.0.join("results.db");
        ok(at(&db).args(["run"]).args(SIM).args(["-q"]).output().unwrap(), "the first run");
        let json = dir.path().join("r.json");
        let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("iolab"))
            .env("IOLAB_DB", &db)
            .args(args)
            .args(["-q", "--json", json.to_str().unwrap()])
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(500));
        fs.fill();
        let out = child.wait_with_output().unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(3), "{args:?}: {err}");
        assert!(err.contains(&db.display().to_string()) && err.contains("catalog"), "{args:?}: {err}");
        let doc: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
        assert!(doc["schema"].is_string(), "{args:?}: --json was written");
    }
}

/// Issue 24, item 12: a command refused up front because the catalog's file system is full creates nothing,
/// not even the catalog's `-wal` and `-shm` files.
#[test]
fn a_command_refused_on_a_full_catalog_file_system_creates_nothing() {
    let commands: [&[&str]; 2] = [
        &["sweep", "--target", "null:1G", "--qd", "1,2", "-d", "1s"],
        &["run", "--target", "null:1G", "-d", "1s"],
    ];
    for args in commands {
        let dir = tempdir();
        let fs = match SmallFs::mount(dir.path(), 512) {
            Ok(fs) => fs,
            Err(why) => return iolab_testkit::skip(why),
        };
        let db = fs.0.join("results.db");
        ok(at(&db).args(["run"]).args(SIM).args(["-q"]).output().unwrap(), "the first run");
        fs.fill();
        let before = crate::util::entries(&fs.0);
        let out = at(&db).args(args).args(["-q"]).output().unwrap();
        let after = crate::util::entries(&fs.0);
        let err = stderr(&out);
        if out.status.code() == Some(2) {
            assert!(err.contains(&db.display().to_string()), "{args:?}: {err}");
            assert_eq!(after, before, "{args:?}: a refused command created files");
        } else {
            // Some file systems still take the small save: then it must have worked as a whole.
            assert_eq!(out.status.code(), Some(0), "{args:?}: {err}");
        }
    }
}
