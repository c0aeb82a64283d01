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

/// Files under `dir`, relative, sorted.
#[allow(dead_code)]
fn files_under(dir: &Path) -> Vec<String> {
    let mut out: Vec<String> = walk(dir).into_iter().map(|p| p.strip_prefix(dir).unwrap().display().to_string()).collect();
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

#[allow(dead_code)]
fn unused() -> tempfile::TempDir {
    tempdir()
}
