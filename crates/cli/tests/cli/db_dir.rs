//! `iolab db --dir` (issue 35): the directories iolab makes and removes, and what may lie under them. A
//! directory is iolab's only by a mark no other account can make (a `trusted.` extended attribute for
//! root, a record in the user's own state directory otherwise); it is held by a descriptor from its claim
//! and removed relative to it, never through a symlink or across a mount point; one with anything in use
//! beneath it, or locked by another run, is never emptied; no path of the command may lie inside it; and
//! none may be made on a pseudo file system.

use crate::util::{iolab, tempdir};
use std::path::{Path, PathBuf};

/// The flags of a run that is refused before it starts (a real run is never reached).
const QUICK: [&str; 8] = ["--warehouses", "1", "--items", "10000", "--duration", "1s", "--ramp", "0s"];

/// Runs `iolab db tpcc ARGS QUICK`; its exit code and stderr.
fn tpcc(args: &[&str]) -> (Option<i32>, String) {
    let out = iolab().args(["db", "tpcc"]).args(args).args(QUICK).output().expect("spawn");
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// A mount point of a cgroup file system (v1 or v2), if one is mounted.
fn cgroup_mount() -> Option<PathBuf> {
    let text = std::fs::read_to_string("/proc/self/mounts").ok()?;
    text.lines().find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        matches!(f.get(2).copied(), Some("cgroup" | "cgroup2")).then(|| PathBuf::from(f[1]))
    })
}

#[test]
fn a_dir_on_a_pseudo_file_system_is_refused_and_nothing_is_made() {
    let Some(root) = cgroup_mount() else {
        iolab_testkit::skip(format_args!("no cgroup file system is mounted"));
        return;
    };
    let dir = root.join(format!("iolab-dir-test-{}", std::process::id()));
    let (code, stderr) = tpcc(&["--dir", dir.to_str().unwrap()]);
    let made = dir.exists();
    if made {
        let _ = std::fs::remove_dir(&dir);
    }
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("pseudo file system (cgroup"), "{stderr}");
    assert!(!made, "a cgroup was made at {}", dir.display());
}

#[test]
fn a_new_target_or_an_output_on_a_pseudo_file_system_is_refused_and_nothing_is_made() {
    let Some(root) = cgroup_mount() else {
        iolab_testkit::skip(format_args!("no cgroup file system is mounted"));
        return;
    };
    let t = tempdir();
    let made = root.join(format!("iolab-target-test-{}.dat", std::process::id()));
    let out = iolab()
        .args(["run", "--target", made.to_str().unwrap(), "--size", "1M", "-q", "--no-save"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("pseudo file system (cgroup"), "{stderr}");
    assert!(!made.exists());
    let json = root.join(format!("iolab-output-test-{}.json", std::process::id()));
    let target = t.path().join("t.dat");
    let out = iolab()
        .args(["run", "--target", target.to_str().unwrap(), "--size", "1M", "-q", "--no-save"])
        .args(["--json", json.to_str().unwrap()])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--json") && stderr.contains("pseudo file system (cgroup"), "{stderr}");
    assert!(!json.exists() && !target.exists(), "nothing made");
}

/// Files under `dir`, relative, sorted.
fn files_under(dir: &Path) -> Vec<String> {
    let mut out: Vec<String> =
        walk(dir).into_iter().map(|p| p.strip_prefix(dir).unwrap().display().to_string()).collect();
    out.sort();
    out
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            out.extend(walk(&p));
        }
        out.push(p);
    }
    out
}

/// The flags of a short real run (a small build, a 1 s window).
const SHORT: [&str; 11] = [
    "--database",
    "sqlite",
    "--warehouses",
    "1",
    "--users",
    "1",
    "--items",
    "10000",
    "--ramp",
    "0s",
    "--no-save",
];

/// Runs a short `iolab db tpcc --dir DIR --keep`: DIR is then a database iolab made and kept.
fn kept_database(dir: &Path) {
    let out = iolab()
        .args(["db", "tpcc", "--dir", dir.to_str().unwrap(), "--keep", "--duration", "1s"])
        .args(SHORT)
        .output()
        .expect("spawn");
    assert_eq!(out.status.code(), Some(0), "stderr: {}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn a_planted_old_mark_file_does_not_make_iolab_empty_a_directory() {
    let t = tempdir();
    let d = t.path().join("mnt");
    std::fs::create_dir(&d).unwrap();
    std::fs::write(d.join(".iolab-dir"), b"planted by another user").unwrap();
    std::fs::write(d.join("their-data"), b"precious").unwrap();
    let (code, stderr) = tpcc(&["--dir", d.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("an older iolab's mark") && stderr.contains("rm -r"), "{stderr}");
    assert_eq!(files_under(&d), [".iolab-dir", "their-data"]);
}

#[test]
fn a_kept_database_held_open_by_another_process_is_refused_and_nothing_is_deleted() {
    let t = tempdir();
    let d = t.path().join("db");
    kept_database(&d);
    let before = files_under(&d);
    let file =
        before.iter().find(|f| f.ends_with(".sqlite") || f.ends_with(".db")).expect("the database file");
    let mut holder = std::process::Command::new("sleep")
        .arg("30")
        .stdin(std::fs::File::open(d.join(file)).unwrap())
        .spawn()
        .unwrap();
    let (code, stderr) = tpcc(&["--dir", d.to_str().unwrap()]);
    let _ = holder.kill();
    let _ = holder.wait();
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains(&format!("process {} (sleep) holds", holder.id())), "{stderr}");
    assert_eq!(files_under(&d), before, "nothing deleted");
}

#[test]
fn a_second_run_on_one_dir_is_refused_and_the_first_runs_on() {
    let t = tempdir();
    let d = t.path().join("db");
    let first = std::process::Command::new(assert_cmd::cargo::cargo_bin("iolab"))
        .args(["db", "tpcc", "--dir", d.to_str().unwrap(), "--duration", "3s"])
        .args(SHORT)
        .args(["--json", t.path().join("first.json").to_str().unwrap()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while files_under(&d).len() < 2 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let during = files_under(&d);
    let (code, stderr) = tpcc(&["--dir", d.to_str().unwrap()]);
    let out = first.wait_with_output().unwrap();
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("another iolab run is using"), "{stderr}");
    assert!(during.len() >= 2, "the first run made its files: {during:?}");
    assert_eq!(out.status.code(), Some(0), "the first run: {}", String::from_utf8_lossy(&out.stderr));
    assert!(!d.exists(), "the first run removed its directory");
}

#[test]
fn a_catalog_or_output_inside_the_dir_is_refused_before_anything_is_made() {
    let t = tempdir();
    let d = t.path().join("db");
    kept_database(&d);
    let before = files_under(&d);
    for (flag, name) in [("--db", "catalog.db"), ("--json", "out.json")] {
        let inner = d.join(name);
        let out = iolab()
            .args(["db", "tpcc", "--dir", d.to_str().unwrap(), flag, inner.to_str().unwrap()])
            .args(QUICK)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{flag}: {stderr}");
        assert!(stderr.contains("lies inside --dir"), "{flag}: {stderr}");
        assert_eq!(files_under(&d), before, "{flag}: the directory is untouched");
    }
}

/// `iolab db tpcc --dir DIR SHORT ARGS` as the account `uid` (through setpriv), its state directory under
/// `state`; its exit code and stderr.
fn tpcc_as(uid: u32, state: &Path, dir: &Path, args: &[&str]) -> (Option<i32>, String) {
    let out = std::process::Command::new("setpriv")
        .args([format!("--reuid={uid}"), format!("--regid={uid}"), "--clear-groups".into()])
        .arg("env")
        .arg("HOME=/nonexistent")
        .arg(format!("XDG_STATE_HOME={}", state.display()))
        .arg(assert_cmd::cargo::cargo_bin("iolab"))
        .args(["db", "tpcc", "--dir", dir.to_str().unwrap(), "--duration", "1s"])
        .args(SHORT)
        .args(args)
        .current_dir("/")
        .output()
        .expect("spawn setpriv");
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn an_unprivileged_user_s_directory_is_its_own_by_a_record_no_other_account_can_write() {
    let have_setpriv = std::process::Command::new("setpriv").arg("--version").output().is_ok();
    if !crate::util::is_root() || !have_setpriv {
        iolab_testkit::skip(format_args!("needs root and setpriv(1) to run iolab as two other accounts"));
        return;
    }
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let t = tempfile::Builder::new().prefix("iolab-users-").tempdir_in("/tmp").unwrap();
    std::fs::set_permissions(t.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let (user, other) = (65534, 65533);
    let d = t.path().join("db");
    let state = t.path().join("state-user");
    let (code, stderr) = tpcc_as(user, &state, &d, &["--keep"]);
    assert_eq!(code, Some(0), "{stderr}");
    let records = state.join("iolab/dirs");
    let m = std::fs::metadata(&records).expect("the user's record");
    assert_eq!((m.uid(), m.mode() & 0o777), (user, 0o600));
    let kept = files_under(&d);
    // Another account, with records of its own, cannot take it.
    let (code, stderr) = tpcc_as(other, &t.path().join("state-other"), &d, &[]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("a directory iolab did not make"), "{stderr}");
    assert_eq!(files_under(&d), kept);
    // The user who made it empties it, runs, removes it and forgets it.
    let (code, stderr) = tpcc_as(user, &state, &d, &[]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(!d.exists());
    assert_eq!(std::fs::read_to_string(&records).unwrap(), "", "the record is forgotten");
}

#[test]
fn a_directory_kept_by_a_private_postgres_is_emptied_by_a_later_run() {
    if let Some(why) = crate::db::postgres_missing() {
        iolab_testkit::skip(format_args!("{why}"));
        return;
    }
    let t = crate::db::pg_tempdir();
    let d = t.path().join("db");
    let run = |engine: &str, keep: bool| {
        let mut c = iolab();
        c.args(["db", "tpcc", "--dir", d.to_str().unwrap(), "--duration", "1s"]);
        // SHORT without its --database sqlite.
        c.args(["--database", engine]).args(&SHORT[2..]);
        if keep {
            c.arg("--keep");
        }
        let out = c.output().expect("spawn");
        assert_eq!(out.status.code(), Some(0), "{engine}: {}", String::from_utf8_lossy(&out.stderr));
    };
    run("postgres", true);
    assert!(d.join("pgdata").is_dir(), "kept, its files the server account's");
    // The files are the server account's, not iolab's user's: still iolab's to empty.
    run("sqlite", false);
    assert!(!d.exists());
}
