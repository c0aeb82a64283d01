//! Issue 14, items 2, 4 and 6: every path a command writes passes one write gate. Outputs never land on a
//! block device (directly or through a symlink), on a target, on the catalog or on each other; the run is
//! refused before anything is created (exit 2). Outputs are written atomically: on a full disk the old file
//! stays whole, the run is still saved, each output not written is named, and the exit code is 3.

use crate::util::{entries, iolab, is_root, tempdir, LoopDev};
use std::path::Path;

const SIM: [&str; 8] =
    ["--target", "sim:fixed,latency=100us,servers=8", "--clock", "virtual", "-d", "1s", "--seed", "1"];

/// `iolab ARGS` with the catalog at `db`: exit code and stderr.
fn iolab_with_db(db: &Path, args: &[&str]) -> (Option<i32>, String) {
    let out = iolab().env("IOLAB_DB", db).args(args).output().expect("spawn iolab");
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// The id of the newest run in the catalog at `db`.
fn newest_id(db: &Path) -> String {
    let out = iolab().env("IOLAB_DB", db).args(["runs", "--json"]).output().expect("spawn iolab");
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).expect("runs --json");
    rows[0]["id"].as_str().expect("an id").to_string()
}

#[test]
fn outputs_on_one_file_or_both_on_stdout_are_refused_and_nothing_is_created() {
    let dir = tempdir();
    let db = dir.path().join("fresh.db");
    let x = dir.path().join("x");
    let x = x.to_str().unwrap();
    let (code, stderr) = iolab_with_db(&db, &[&["run"][..], &SIM, &["--json", x, "--csv", x]].concat());
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("--json") && stderr.contains("--csv") && stderr.contains("same file"),
        "{stderr}"
    );
    let (code, stderr) = iolab_with_db(&db, &[&["run"][..], &SIM, &["--json", "-", "--csv", "-"]].concat());
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("standard output"), "{stderr}");
    let (code, stderr) =
        iolab_with_db(&db, &[&["sweep"][..], &SIM, &["--qd", "1,2", "--json", x, "--csv", x]].concat());
    assert_eq!(code, Some(2), "{stderr}");
    assert_eq!(entries(dir.path()), Vec::<String>::new(), "nothing is created, not even the catalog");
}

#[test]
fn a_journal_or_output_on_the_target_is_refused_and_the_target_unchanged() {
    let dir = tempdir();
    let db = dir.path().join("fresh.db");
    let target = dir.path().join("t.dat");
    let bytes: Vec<u8> = (0..(4u32 << 20)).map(|i| (i % 251) as u8).collect();
    std::fs::write(&target, &bytes).unwrap();
    let t = target.to_str().unwrap();
    let base = ["run", "--target", t, "-d", "1s", "--ramp", "0", "--buffered"];
    for extra in [
        &["--rw", "randwrite", "--journal", t][..],
        &["--rw", "randread", "--json", t][..],
        &["--rw", "randread", "--csv", t][..],
    ] {
        let (code, stderr) = iolab_with_db(&db, &[&base[..], extra].concat());
        assert_eq!(code, Some(2), "{extra:?}: {stderr}");
        assert!(stderr.contains("same file") && stderr.contains("--target"), "{extra:?}: {stderr}");
        assert!(std::fs::read(&target).unwrap() == bytes, "{extra:?}: the target changed");
    }
    // The sweep checks every point against its outputs too.
    let (code, stderr) =
        iolab_with_db(&db, &["sweep", "--target", t, "-d", "1s", "--qd", "1,2", "--buffered", "--json", t]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(std::fs::read(&target).unwrap() == bytes, "sweep: the target changed");
    assert_eq!(entries(dir.path()), vec!["t.dat".to_string()], "nothing is created, not even the catalog");
}

#[test]
fn an_output_never_replaces_the_catalog_a_disk_image_or_a_report_input() {
    let dir = tempdir();
    let db = dir.path().join("results.db");
    let (code, stderr) = iolab_with_db(&db, &[&["run"][..], &SIM, &["-q"]].concat());
    assert_eq!(code, Some(0), "{stderr}");
    let catalog = std::fs::read(&db).unwrap();
    let id = newest_id(&db);
    let id = id.as_str();
    let d = db.to_str().unwrap();
    let (code, stderr) = iolab_with_db(&db, &[&["run"][..], &SIM, &["--json", d]].concat());
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("SQLite database"), "{stderr}");
    let (code, stderr) = iolab_with_db(&db, &["export", id, "--json", "-o", d]);
    assert!(code == Some(2) && stderr.contains("SQLite database"), "{code:?} {stderr}");
    let mut ext4 = vec![0u8; 4096];
    ext4[1080..1082].copy_from_slice(&[0x53, 0xEF]);
    let image = dir.path().join("disk.img");
    std::fs::write(&image, &ext4).unwrap();
    let (code, stderr) = iolab_with_db(&db, &["report", id, "-o", image.to_str().unwrap()]);
    assert!(code == Some(2) && stderr.contains("filesystem signature"), "{code:?} {stderr}");
    assert!(std::fs::read(&image).unwrap() == ext4, "the image changed");
    // A report's input file is never its output.
    let input = dir.path().join("run.json");
    let (code, stderr) = iolab_with_db(&db, &["export", id, "--json", "-o", input.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{stderr}");
    let doc = std::fs::read(&input).unwrap();
    let i = input.to_str().unwrap();
    let (code, stderr) = iolab_with_db(&db, &["report", i, "-o", i]);
    assert!(code == Some(2) && stderr.contains("same file"), "{code:?} {stderr}");
    assert!(std::fs::read(&input).unwrap() == doc, "the report input changed");
    assert!(std::fs::read(&db).unwrap() == catalog, "the catalog changed");
}

/// Outputs over a block device, directly or through a symlink (a typo for --target), were written over it.
#[test]
fn outputs_over_a_block_device_are_refused_and_the_device_unchanged() {
    let lo = match LoopDev::new(4, None) {
        Ok(l) => l,
        Err(why) => {
            iolab_testkit::skip(format_args!("needs a loop device ({why})"));
            return;
        }
    };
    let before = std::fs::read(&lo.dev).unwrap();
    let dir = tempdir();
    let db = dir.path().join("results.db");
    let (code, stderr) = iolab_with_db(&db, &[&["run"][..], &SIM, &["-q"]].concat());
    assert_eq!(code, Some(0), "{stderr}");
    let id = newest_id(&db);
    let id = id.as_str();
    let link = dir.path().join("typo");
    std::os::unix::fs::symlink(&lo.dev, &link).unwrap();
    for to in [lo.dev.as_str(), link.to_str().unwrap()] {
        for args in [
            [&["run"][..], &SIM, &["--json", to]].concat(),
            vec!["export", id, "--csv", "-o", to],
            vec!["report", id, "-o", to],
        ] {
            let (code, stderr) = iolab_with_db(&db, &args);
            assert_eq!(code, Some(2), "{args:?}: {stderr}");
            assert!(stderr.contains("is a block device"), "{args:?}: {stderr}");
        }
    }
    assert!(std::fs::read(&lo.dev).unwrap() == before, "the device changed");
}

/// On a full file system `--json` left a truncated file and `--csv` was silently never written. Now the old
/// file stays whole, no temporary file is left, the run is saved, both outputs are named, and the exit is 3.
#[test]
fn outputs_on_a_full_disk_leave_old_files_whole_and_exit_3() {
    if !is_root() {
        iolab_testkit::skip(format_args!("needs root for a tmpfs mount"));
        return;
    }
    let dir = tempdir();
    let small = dir.path().join("small");
    std::fs::create_dir(&small).unwrap();
    let mounted = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=16k", "tmpfs", small.to_str().unwrap()])
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        iolab_testkit::skip(format_args!("cannot mount a tmpfs"));
        return;
    }
    let json = small.join("r.json");
    std::fs::write(&json, "{\"old\": true}").unwrap();
    // Fill what is left.
    let _ = std::fs::write(small.join("fill"), vec![0u8; 64 << 10]);
    let db = dir.path().join("results.db");
    let csv = small.join("r.csv");
    let (code, stderr) = iolab_with_db(
        &db,
        &[&["run"][..], &SIM, &["-q", "--json", json.to_str().unwrap(), "--csv", csv.to_str().unwrap()]]
            .concat(),
    );
    let old = std::fs::read_to_string(&json);
    let left = entries(&small);
    let _ = std::process::Command::new("umount").arg(&small).status();
    assert_eq!(code, Some(3), "{stderr}");
    assert!(
        stderr.contains("--json") && stderr.contains("--csv") && stderr.contains("disk full"),
        "{stderr}"
    );
    assert_eq!(old.unwrap(), "{\"old\": true}");
    assert_eq!(left, vec!["fill".to_string(), "r.json".to_string()], "a temporary file was left");
    let (code, listed) = {
        let out = iolab().env("IOLAB_DB", &db).args(["runs", "--json"]).output().unwrap();
        (out.status.code(), String::from_utf8_lossy(&out.stdout).into_owned())
    };
    assert_eq!(code, Some(0));
    assert!(listed.contains("\"id\""), "the run was saved all the same: {listed}");
}
