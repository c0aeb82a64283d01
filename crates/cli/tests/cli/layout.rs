//! File layout (issue 15, item 4; seed 003's IntelliWrite): on a real ext4 in a loop-mounted image, four
//! workers append to four files at once. With `--prealloc none` the files grow by those writes and ext4
//! interleaves their allocations: many extents after the run (and the fragmentation warning), and a following
//! read run with I/Os larger than their alignment crosses extent boundaries (split I/Os). With `--prealloc
//! fallocate` (the default) each file is reserved in one call first: one or two extents, no split I/Os.
//! Needs root, loop devices, `mkfs.ext4` and `mount`; otherwise the test prints `SKIP: reason`.

use crate::util::{is_root, run_json, tempdir, warning_kinds};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A 256 MiB ext4 (4 KiB blocks) in an image on a loop device, mounted read-write; unmounted and detached
/// on drop.
struct MountedExt4 {
    dev: String,
    mount_point: PathBuf,
    _dir: tempfile::TempDir,
    _serial: std::sync::MutexGuard<'static, ()>,
}

fn run(cmd: &str, args: &[&str]) -> Result<String, String> {
    let out = Command::new(cmd).args(args).output().map_err(|e| format!("{cmd}: {e}"))?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        return Err(format!("{cmd} {} failed: {}", args.join(" "), stderr.trim()));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

impl MountedExt4 {
    fn new() -> Result<MountedExt4, String> {
        if !is_root() {
            return Err("not root".into());
        }
        let dir = tempdir();
        let image = dir.path().join("ext4.img");
        std::fs::File::create(&image).and_then(|f| f.set_len(256 << 20)).map_err(|e| e.to_string())?;
        let img = image.to_str().unwrap();
        run("mkfs.ext4", &["-q", "-F", "-b", "4096", "-E", "lazy_itable_init=0,lazy_journal_init=0", img])
            .map_err(|e| format!("mkfs.ext4 unavailable or failed ({e})"))?;
        let serial = crate::util::loop_lock();
        let dev = run("losetup", &["--find", "--show", img])?;
        let mount_point = dir.path().join("mnt");
        std::fs::create_dir_all(&mount_point).map_err(|e| e.to_string())?;
        if let Err(e) = run("mount", &[&dev, mount_point.to_str().unwrap()]) {
            let _ = Command::new("losetup").args(["-d", &dev]).status();
            return Err(e);
        }
        Ok(MountedExt4 { dev, mount_point, _dir: dir, _serial: serial })
    }
}

impl Drop for MountedExt4 {
    fn drop(&mut self) {
        crate::util::unmount(&self.mount_point);
        let _ = Command::new("losetup").args(["-d", &self.dev]).status();
    }
}

const FILES: [&str; 4] = ["a", "b", "c", "d"];

/// Four workers, each appending 16 MiB in 4 KiB writes to its own file, all at once.
fn appending_writers(dir: &Path) -> PathBuf {
    let mut job =
        String::from("size = \"16M\"\nrw = \"write\"\nbs = \"4k\"\nqd = 1\nbytes = \"64M\"\nramp = \"0\"\n");
    for f in FILES {
        job.push_str(&format!("[worker.{f}]\ntarget = \"{}\"\n", dir.join(f).display()));
    }
    let path = dir.join("append.toml");
    std::fs::write(&path, job).unwrap();
    path
}

/// Each file's layout block, in job order.
fn layouts(v: &Value) -> Vec<Value> {
    v["env"]["targets"].as_array().unwrap().iter().map(|t| t["layout"].clone()).collect()
}

/// Random 64 KiB reads at 4 KiB alignment over one file: ext4's boundaries fall on 4 KiB blocks, so such
/// reads cross them.
fn read_run(file: &Path) -> Value {
    let f = file.to_str().unwrap();
    run_json(&[
        "--target",
        f,
        "--rw",
        "randread",
        "--bs",
        "64k",
        "--align",
        "4k",
        "--ios",
        "4000",
        "--no-save",
    ])
}

#[test]
fn prealloc_none_fragments_appending_writers_and_fallocate_does_not() {
    let fs = match MountedExt4::new() {
        Ok(fs) => fs,
        Err(why) => {
            iolab_testkit::skip(format_args!(
                "file layout: needs root, loop devices, mkfs.ext4 and mount ({why})"
            ));
            return;
        }
    };
    let dir = &fs.mount_point;
    let job = appending_writers(dir);
    let job = job.to_str().unwrap();
    let mut extents = Vec::new();
    let mut splits = Vec::new();
    for prealloc in ["none", "fallocate"] {
        for f in FILES {
            let _ = std::fs::remove_file(dir.join(f));
        }
        let v = run_json(&[job, "--prealloc", prealloc, "--no-save"]);
        let l = layouts(&v);
        for t in &l {
            assert_eq!(t["prealloc"], prealloc, "{t}");
        }
        let after: Vec<u64> = l.iter().map(|t| t["extents_after"].as_u64().unwrap()).collect();
        let before: Vec<u64> = l.iter().map(|t| t["extents_before"].as_u64().unwrap()).collect();
        let fragmented = warning_kinds(&v).iter().any(|k| k == "fragmented_target");
        let read = read_run(&dir.join("a"));
        let la = &layouts(&read)[0];
        assert_eq!(la["extents_before"].as_u64(), Some(after[0]), "the read run sees the file as left");
        println!("--prealloc {prealloc}: extents {before:?} -> {after:?}; reading 'a': {la}");
        extents.push((before, after, fragmented));
        splits.push(la["split_ios"].as_u64().unwrap());
    }
    let (none_before, none_after, none_warned) = &extents[0];
    let (_, falloc_after, falloc_warned) = &extents[1];
    assert_eq!(none_before, &[0; 4], "--prealloc none creates empty files");
    // How finely the allocator interleaves four appenders varies from run to run (one run left a file in 3
    // extents and the others in 10-12): the files together are fragmented, each at least somewhat.
    let total: u64 = none_after.iter().sum();
    assert!(
        total >= 24 && none_after.iter().all(|&n| n >= 2),
        "appending writers fragment the files: {none_after:?}"
    );
    assert!(*none_warned, "the fragmented files are warned about");
    assert!(falloc_after.iter().all(|&n| n <= 2), "one fallocate per file: {falloc_after:?}");
    assert!(!*falloc_warned);
    assert!(splits[0] > 0, "reads of the fragmented file are split: {splits:?}");
    assert!(splits[1] * 5 < splits[0], "far fewer split reads after fallocate: {splits:?}");
}

/// The loop device's reads, writes and flushes completed so far (/proc/diskstats fields 4, 8 and 20).
fn disk_counts(dev: &str) -> [u64; 3] {
    let name = dev.trim_start_matches("/dev/");
    let text = std::fs::read_to_string("/proc/diskstats").unwrap();
    let f: Vec<&str> = text
        .lines()
        .map(str::split_whitespace)
        .find_map(|mut l| {
            let v: Vec<&str> = l.by_ref().collect();
            (v.get(2) == Some(&name)).then_some(v)
        })
        .unwrap_or_else(|| panic!("{name} not in /proc/diskstats"));
    let n = |i: usize| f.get(i).and_then(|s| s.parse().ok()).unwrap_or(0);
    [n(3), n(7), n(19)]
}

/// What `cmd` made `dev` do (reads, writes and flushes completed, everything synced before and after), and
/// its standard output. A verdict's FAIL (exit 1) is an answer, not an error.
fn disk_work(dev: &str, run: impl FnOnce() -> std::io::Result<std::process::Output>) -> ([u64; 3], Vec<u8>) {
    let _ = Command::new("sync").status();
    let before = disk_counts(dev);
    let out = run().expect("spawn");
    assert!(out.status.code().is_some_and(|c| c <= 1), "{}", String::from_utf8_lossy(&out.stderr));
    let _ = Command::new("sync").status();
    let after = disk_counts(dev);
    ([0, 1, 2].map(|i| after[i] - before[i]), out.stdout)
}

/// Issue 36, item 1: the etcd profile measures the file etcd has. etcd reserves each WAL segment with
/// fallocate and never writes it ahead (`--prealloc reserve`), so a 2,300-byte write needs no read of its page:
/// the device reads nothing, as under fio's etcd check, and writes what fio writes. Before, iolab filled the
/// file, synced it and dropped it from the page cache: 5,632 device reads for 22 MiB.
#[test]
fn the_etcd_profile_lays_out_its_wal_as_etcd_does_and_the_device_sees_what_fio_s_check_does() {
    let fs = match MountedExt4::new() {
        Ok(fs) => fs,
        Err(why) => return iolab_testkit::skip(format_args!("needs a loop-mounted ext4: {why}")),
    };
    let wal = fs.mount_point.join("wal");
    let target = format!("wal={}", wal.display());
    let mut iolab = crate::util::iolab();
    iolab.args(["run", "--profile", "etcd", "--target", &target, "--no-save", "--json", "-", "-q"]);
    let ([reads, writes, flushes], json) = disk_work(&fs.dev, || iolab.output());
    let v: Value = serde_json::from_slice(&json).unwrap();
    assert_eq!(layouts(&v)[0]["prealloc"], "reserve", "{:#}", v["env"]["targets"]);
    assert!(reads <= 8, "a reserved WAL is written without reading its pages: {reads} device reads");
    // How many fdatasyncs share one journal commit depends on timing (fio's check gave 0.3 to 0.75 flushes per
    // fdatasync beside a build, 1.56 on an idle machine): that they reach the device is what is fixed.
    assert!(flushes > 0, "the fdatasyncs reach the device");
    let dir = fs.mount_point.join("fio");
    std::fs::create_dir(&dir).unwrap();
    let mut fio = Command::new("fio");
    fio.args(["--rw=write", "--ioengine=sync", "--fdatasync=1", "--size=22m", "--bs=2300", "--name=etcd"]);
    fio.arg(format!("--directory={}", dir.display()));
    if Command::new("fio").arg("--version").output().is_err() {
        return iolab_testkit::skip(format_args!("fio is not installed: the comparison with its etcd check"));
    }
    let ([fio_reads, fio_writes, _], _) = disk_work(&fs.dev, || fio.output());
    assert!(fio_reads <= 8, "fio's etcd check reads nothing either: {fio_reads}");
    assert!(
        writes.abs_diff(fio_writes) * 100 <= fio_writes,
        "device writes: iolab {writes}, fio {fio_writes}"
    );
}

/// `--trim-pct` on a file punches holes (fallocate PUNCH_HOLE): the run says so (how many trims, the holes
/// and extents the file has now), and a later run that finds the file fragmented says its holes are what
/// trims punch, not advice to recreate a file iolab laid out badly.
#[test]
fn trims_on_a_file_say_they_punched_holes_and_the_next_run_knows_why() {
    let dir = tempdir();
    let file = dir.path().join("trimmed.dat");
    let f = file.to_str().unwrap();
    let args = ["--target", f, "--size", "8M", "--rw", "randwrite", "--bs", "4k", "--trim-pct", "50"];
    let v = run_json(&[&args[..], &["--ios", "1000", "--ramp", "0", "--seed", "1", "--no-save"]].concat());
    if layouts(&v)[0].is_null() {
        return iolab_testkit::skip("the file system of the target dir has no FIEMAP");
    }
    let trimmed: Vec<&Value> =
        v["warnings"].as_array().unwrap().iter().filter(|w| w["kind"] == "trimmed_file").collect();
    assert_eq!(trimmed.len(), 1, "{:#}", v["warnings"]);
    let (trims, holes) = (trimmed[0]["trims"].as_u64().unwrap(), trimmed[0]["holes_bytes"].as_u64().unwrap());
    assert_eq!(trims, v["total"]["trim"]["ops"].as_u64().unwrap(), "{:#}", trimmed[0]);
    assert!(trims > 300 && holes > 0, "{:#}", trimmed[0]);
    let text = crate::util::iolab()
        .args(["run", "--target", f, "--rw", "randread", "--bs", "4k", "--ios", "200"])
        .args(["--no-save", "--ramp", "0"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout).into_owned() + &String::from_utf8_lossy(&text.stderr);
    assert!(text.contains("is fragmented") && text.contains("of holes (trims punch them"), "{text}");
    assert!(!text.contains("punched holes in"), "the read run trimmed nothing: {text}");
}
