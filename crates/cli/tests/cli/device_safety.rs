//! Device safety on real loop devices carrying a real ext4 filesystem (`mkfs.ext4`): a write workload is
//! refused without `--destroy-data` (exit 2, naming the device and the flag); a mounted device is refused
//! even with `--destroy-data`; a read-only run works. The image's bytes are compared before and after each
//! case. Needs root, loop devices, `mkfs.ext4` and `mount`; otherwise each test prints `SKIP: reason`.

use crate::util::{iolab, is_root, tempdir};
use std::path::{Path, PathBuf};
use std::process::Command;

/// A loop device over a 64 MiB image formatted with mkfs.ext4, detached (and unmounted) on drop.
struct Ext4Loop {
    dev: String,
    image: PathBuf,
    mount_point: Option<PathBuf>,
    dir: tempfile::TempDir,
    _serial: std::sync::MutexGuard<'static, ()>,
}

fn run(cmd: &str, args: &[&str]) -> Result<String, String> {
    let out = Command::new(cmd).args(args).output().map_err(|e| format!("{cmd}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{cmd} {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

impl Ext4Loop {
    fn new() -> Result<Ext4Loop, String> {
        if !is_root() {
            return Err("not root".into());
        }
        let dir = tempdir();
        let image = dir.path().join("ext4.img");
        std::fs::write(&image, vec![0u8; 64 << 20]).map_err(|e| e.to_string())?;
        // No lazy initialisation: nothing may write to the image in the background once it is mounted.
        run(
            "mkfs.ext4",
            &["-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", image.to_str().unwrap()],
        )
        .map_err(|e| format!("mkfs.ext4 unavailable or failed ({e})"))?;
        let serial = crate::util::loop_lock();
        let dev = run("losetup", &["--find", "--show", image.to_str().unwrap()])?;
        Ok(Ext4Loop { dev, image, mount_point: None, dir, _serial: serial })
    }

    /// Mounts the filesystem read-only without replaying the journal, so the mount itself writes nothing.
    fn mount(&mut self) -> Result<(), String> {
        let mp = self.dir.path().join("mnt");
        std::fs::create_dir_all(&mp).map_err(|e| e.to_string())?;
        run("mount", &["-o", "ro,noload", &self.dev, mp.to_str().unwrap()])?;
        self.mount_point = Some(mp);
        Ok(())
    }

    fn image_bytes(&self) -> Vec<u8> {
        std::fs::read(&self.image).expect("read the loop image")
    }
}

impl Drop for Ext4Loop {
    fn drop(&mut self) {
        if let Some(mp) = self.mount_point.take() {
            crate::util::unmount(&mp);
        }
        let _ = Command::new("losetup").args(["-d", &self.dev]).status();
    }
}

fn setup(test: &str) -> Option<Ext4Loop> {
    match Ext4Loop::new() {
        Ok(l) => Some(l),
        Err(why) => {
            iolab_testkit::skip(format_args!("{test}: needs root, loop devices and mkfs.ext4 ({why})"));
            None
        }
    }
}

/// `iolab run --target DEV ARGS` (short, quiet, not saved): exit code and stderr.
fn iolab_on(dev: &str, args: &[&str]) -> (Option<i32>, String) {
    let out = iolab()
        .args([
            "run",
            "--target",
            dev,
            "-d",
            "1s",
            "--ramp",
            "0",
            "--bs",
            "4k",
            "--qd",
            "4",
            "-q",
            "--no-save",
        ])
        .args(args)
        .output()
        .expect("spawn iolab");
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
}

fn assert_unchanged(before: &[u8], lo: &Ext4Loop, what: &str) {
    let after = lo.image_bytes();
    let first_diff = before.iter().zip(&after).position(|(a, b)| a != b);
    assert!(before == after.as_slice(), "{what}: the image changed (first differing byte at {first_diff:?})");
}

#[test]
fn ext4_loop_device_write_is_refused_without_destroy_data_and_left_unchanged() {
    let Some(lo) = setup("ext4 refused without --destroy-data") else { return };
    let before = lo.image_bytes();
    let (code, stderr) = iolab_on(&lo.dev, &["--rw", "randwrite", "--allow-write-device"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains(&lo.dev), "the message names the device: {stderr}");
    assert!(stderr.contains("--destroy-data"), "the message names the flag: {stderr}");
    assert!(stderr.contains("ext4"), "the message says what was found: {stderr}");
    assert_unchanged(&before, &lo, "refused write");
    // Without --allow-write-device the refusal names that flag instead.
    let (code, stderr) = iolab_on(&lo.dev, &["--rw", "write"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains(&lo.dev) && stderr.contains("--allow-write-device"), "{stderr}");
    assert_unchanged(&before, &lo, "refused write without --allow-write-device");
}

#[test]
fn mounted_loop_device_is_never_written_not_even_with_destroy_data() {
    let Some(mut lo) = setup("mounted device refused") else { return };
    if let Err(why) = lo.mount() {
        iolab_testkit::skip(format_args!("mounted device refused: cannot mount ({why})"));
        return;
    }
    let before = lo.image_bytes();
    for rw in ["randwrite", "randrw", "write"] {
        let (code, stderr) = iolab_on(&lo.dev, &["--rw", rw, "--allow-write-device", "--destroy-data"]);
        assert_eq!(code, Some(2), "--rw {rw} on a mounted device: {stderr}");
        assert!(stderr.contains(&lo.dev), "the message names the device: {stderr}");
        assert!(stderr.contains("mounted"), "the message says it is mounted: {stderr}");
        assert_unchanged(&before, &lo, &format!("--rw {rw} --destroy-data on a mounted device"));
    }
    // A read-only run on the mounted device is fine.
    let (code, stderr) = iolab_on(&lo.dev, &["--rw", "randread"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_unchanged(&before, &lo, "read-only run on the mounted device");
}

#[test]
fn read_only_run_on_an_ext4_loop_device_works_and_changes_nothing() {
    let Some(lo) = setup("read-only run on ext4") else { return };
    let before = lo.image_bytes();
    let out = iolab()
        .args(["run", "--target", &lo.dev, "--rw", "randread", "--bs", "4k", "--qd", "8", "-d", "1s"])
        .args(["--ramp", "0", "--seed", "1", "--json", "-", "-q", "--no-save"])
        .output()
        .expect("spawn iolab");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON result");
    assert!(v.pointer("/total/all/ops").and_then(serde_json::Value::as_u64).unwrap_or(0) > 0, "{v:#}");
    assert_unchanged(&before, &lo, "read-only run");
    // The image is a plain file beside the test; nothing else was created there.
    let names: Vec<String> = crate::util::entries(image_dir(&lo.image));
    assert_eq!(names, vec!["ext4.img".to_string()]);
}

fn image_dir(image: &Path) -> &Path {
    image.parent().expect("the image has a directory")
}

/// Issue 14, item 5: an existing file or symlink at the scratch file's predictable name
/// (`iolab-scratch-PID.dat`) was reused: the symlink was followed, and the file behind it extended,
/// overwritten and left behind. Symlinks to a victim file are planted at the names of the next PIDs; the run
/// must choose another name and leave the victim and the symlinks as they were.
#[test]
fn scratch_file_never_reuses_or_follows_a_taken_name() {
    let dir = tempdir();
    let victim = dir.path().join("victim.dat");
    std::fs::write(&victim, b"precious data, not iolab's").unwrap();
    let scratch = dir.path().join("scratch");
    std::fs::create_dir(&scratch).unwrap();
    let last: u32 = std::fs::read_to_string("/proc/sys/kernel/ns_last_pid")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0);
    if last == 0 {
        iolab_testkit::skip(format_args!(
            "cannot read /proc/sys/kernel/ns_last_pid to predict the next PIDs"
        ));
        return;
    }
    let planted: Vec<u32> = (last + 1..last + 400).collect();
    for pid in &planted {
        std::os::unix::fs::symlink(&victim, scratch.join(format!("iolab-scratch-{pid}.dat"))).unwrap();
    }
    let child = Command::new(assert_cmd::cargo::cargo_bin("iolab"))
        .env("IOLAB_DB", crate::util::shared_catalog())
        .env("IOLAB_SCRATCH_DIR", &scratch)
        .args([
            "run",
            "--size",
            "16M",
            "--rw",
            "randwrite",
            "--ios",
            "200",
            "--ramp",
            "0",
            "--json",
            "-",
            "-q",
        ])
        .output()
        .expect("spawn iolab");
    assert_eq!(child.status.code(), Some(0), "stderr: {}", String::from_utf8_lossy(&child.stderr));
    let v: serde_json::Value = serde_json::from_slice(&child.stdout).expect("JSON");
    let used = v["env"]["targets"][0]["name"].as_str().unwrap_or_default().to_string();
    let victim_now = std::fs::read(&victim).unwrap();
    assert!(
        victim_now == b"precious data, not iolab's",
        "the victim was written through ({} bytes)",
        victim_now.len()
    );
    let left: Vec<String> = std::fs::read_dir(&scratch)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left.len(), planted.len(), "the planted symlinks stay, the scratch file is gone: {left:?}");
    let hit = planted.iter().any(|pid| used.ends_with(&format!("iolab-scratch-{pid}.1.dat")));
    if !hit {
        eprintln!("note: iolab's PID was outside the planted range; it used {used}");
    }
}

/// Issue 14, item 1: the backing file of a loop device whose ext4 is mounted was written straight through
/// (exit 0, the filesystem destroyed). A file that backs a loop device is the device in use: refused,
/// mounted or not, even with --destroy-data.
#[test]
fn backing_file_of_a_loop_device_is_never_written() {
    let Some(mut lo) = setup("loop backing file refused") else { return };
    let image = lo.image.to_str().unwrap().to_string();
    let before = lo.image_bytes();
    let (code, stderr) = iolab_on(&image, &["--rw", "randwrite", "--destroy-data"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains(&format!("backs the loop device {}", lo.dev)), "{stderr}");
    assert_unchanged(&before, &lo, "attached loop's backing file");
    if let Err(why) = lo.mount() {
        iolab_testkit::skip(format_args!("the mounted case: {why}"));
        return;
    }
    let (code, stderr) = iolab_on(&image, &["--rw", "randwrite", "--destroy-data"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("is mounted at"), "says what uses it: {stderr}");
    assert_unchanged(&before, &lo, "mounted loop's backing file");
    // Reading it is fine.
    let (code, stderr) = iolab_on(&image, &["--rw", "randread", "--buffered"]);
    assert_eq!(code, Some(0), "{stderr}");
}

/// Issue 14, item 3: `--target` naming the catalog with a write workload random-wrote over every saved run.
/// A regular file whose first bytes carry a filesystem, volume or database signature (a disk image, iolab's
/// own catalog or journal) is treated like a device that carries one: refused without --destroy-data.
#[test]
fn files_with_a_signature_the_catalog_among_them_need_destroy_data() {
    let dir = tempdir();
    let db = dir.path().join("results.db");
    let out = iolab()
        .env("IOLAB_DB", &db)
        .args([
            "run",
            "--target",
            "sim:fixed,latency=100us,servers=8",
            "--clock",
            "virtual",
            "-d",
            "1s",
            "-q",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let image = dir.path().join("disk.img");
    let mut xfs = vec![0u8; 8 << 20];
    xfs[..4].copy_from_slice(b"XFSB");
    std::fs::write(&image, &xfs).unwrap();
    for (path, what) in [(&db, "SQLite database"), (&image, "xfs filesystem")] {
        let before = std::fs::read(path).unwrap();
        let (code, stderr) = iolab_on(path.to_str().unwrap(), &["--rw", "randwrite", "--buffered"]);
        assert_eq!(code, Some(2), "{stderr}");
        assert!(stderr.contains(what) && stderr.contains("--destroy-data"), "{stderr}");
        assert!(std::fs::read(path).unwrap() == before, "{} was changed", path.display());
    }
    // Consent: with --destroy-data the image may be overwritten.
    let (code, stderr) =
        iolab_on(image.to_str().unwrap(), &["--rw", "randwrite", "--buffered", "--destroy-data"]);
    assert_eq!(code, Some(0), "{stderr}");
}
