//! `iolab db` and the storage beneath it (issue 28), on a loop device with an ext4 file system of the test's
//! own, so nothing else does I/O there: the device view of a tpcc run is /proc/diskstats' deltas of that
//! device over the measured window; `--memory` makes a warm database read from it; `iolab db copy` copies as
//! many bytes as the database has and reads them from the source's device; `--capture` records the loop
//! device's I/O into a trace `iolab trace show` reads; `iolab db tpch` runs its 22 queries there. Root only
//! (loop devices, mounts, cgroups, tracefs): each test says SKIP and passes otherwise.

use crate::util::{iolab, unmount, LoopDev};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// An ext4 file system on a loop device of the test's own, mounted in a temporary directory; unmounted and
/// detached when dropped.
pub(crate) struct Ext4 {
    mount: tempfile::TempDir,
    lo: LoopDev,
}

impl Ext4 {
    /// Err says why there is none (not root, no loop devices, no mkfs.ext4).
    pub(crate) fn new(mib: u64) -> Result<Ext4, String> {
        let lo = LoopDev::new(mib, None)?;
        // Inode tables and the journal initialised now, not by a kernel thread writing during the test.
        let mkfs = Command::new("mkfs.ext4")
            .args(["-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", &lo.dev])
            .output()
            .map_err(|e| format!("mkfs.ext4: {e}"))?;
        if !mkfs.status.success() {
            return Err(format!("mkfs.ext4 failed: {}", String::from_utf8_lossy(&mkfs.stderr).trim()));
        }
        let mount =
            tempfile::Builder::new().prefix("iolab-ext4-").tempdir_in("/tmp").map_err(|e| e.to_string())?;
        let m = Command::new("mount").arg(&lo.dev).arg(mount.path()).output().map_err(|e| e.to_string())?;
        if !m.status.success() {
            return Err(format!("mount failed: {}", String::from_utf8_lossy(&m.stderr).trim()));
        }
        // The PostgreSQL account must pass through it.
        let _ = std::fs::set_permissions(mount.path(), std::os::unix::fs::PermissionsExt::from_mode(0o755));
        Ok(Ext4 { mount, lo })
    }

    pub(crate) fn path(&self, name: &str) -> PathBuf {
        self.mount.path().join(name)
    }

    /// The device's kernel name (`loop3`).
    pub(crate) fn name(&self) -> &str {
        self.lo.dev.trim_start_matches("/dev/")
    }
}

impl Drop for Ext4 {
    fn drop(&mut self) {
        unmount(self.mount.path());
    }
}

/// Runs `iolab db ARGS --json -`, asserts exit 0, returns the document.
fn db(args: &[&str]) -> Value {
    let out = iolab().arg("db").args(args).args(["--json", "-"]).output().expect("spawn iolab");
    assert_eq!(out.status.code(), Some(0), "iolab db {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("JSON")
}

/// The device view's entry for `name`.
fn device<'a>(devices: &'a Value, name: &str) -> &'a Value {
    devices
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["name"] == name)
        .unwrap_or_else(|| panic!("no {name} in {devices}"))
}

/// A tpcc run small enough for a few seconds: 1 warehouse of 10,000 items (about 40 MB in SQLite), 1 user.
const TPCC: [&str; 12] =
    ["tpcc", "--items", "10000", "--users", "1", "--ramp", "0s", "--duration", "1s", "--seed", "5", "-q"];

/// The counters the device view is made of, in /proc/diskstats' order: reads, sectors read, writes,
/// sectors written, discards, sectors discarded, flushes.
fn counters(text: &str, name: &str) -> [u64; 7] {
    let line = text.lines().find(|l| l.split_whitespace().nth(2) == Some(name)).expect("the device's line");
    let f: Vec<u64> = line.split_whitespace().skip(3).map(|v| v.parse().unwrap_or(0)).collect();
    [f[0], f[2], f[4], f[6], f[11], f[13], f[15]]
}

/// The device view of a tpcc run is the kernel's own count: a thread reads /proc/diskstats every half
/// millisecond during the run; the window's counts must lie between the deltas of the samples just inside
/// its edges and those just outside them, for every counter at once (so they are the deltas of the loop
/// device over the window, to within the sampling's half millisecond). The device is named and is the file
/// system's, and the window did real work: writes and flushes (commits), and no reads of a warm database.
#[test]
fn tpcc_device_view_is_the_loop_devices_diskstats_over_the_window() {
    let fs = match Ext4::new(128) {
        Ok(f) => f,
        Err(why) => return iolab_testkit::skip(why),
    };
    let name = fs.name().to_string();
    let done = Arc::new(AtomicBool::new(false));
    let sampler = {
        let (done, name) = (done.clone(), name.clone());
        std::thread::spawn(move || {
            let mut samples = Vec::new();
            while !done.load(Ordering::Relaxed) {
                samples.push(counters(&std::fs::read_to_string("/proc/diskstats").unwrap(), &name));
                std::thread::sleep(Duration::from_micros(500));
            }
            samples
        })
    };
    let dir = fs.path("db");
    let v = db(&[&TPCC[..], &["--dir", dir.to_str().unwrap()]].concat());
    done.store(true, Ordering::Relaxed);
    let samples = sampler.join().unwrap();
    let d = device(&v["devices"], &name);
    assert_eq!(d["role"], "filesystem");
    let view = [
        d["reads"].as_u64().unwrap(),
        d["read_bytes"].as_u64().unwrap() / 512,
        d["writes"].as_u64().unwrap(),
        d["write_bytes"].as_u64().unwrap() / 512,
        d["discards"].as_u64().unwrap(),
        d["discard_bytes"].as_u64().unwrap() / 512,
        d["flushes"].as_u64().unwrap(),
    ];
    assert!(view[2] > 0 && view[6] > 0, "commits write and flush: {d}");
    let delta = |a: &[u64; 7], b: &[u64; 7]| -> [u64; 7] { std::array::from_fn(|i| b[i] - a[i]) };
    let le = |a: &[u64; 7], b: &[u64; 7]| a.iter().zip(b).all(|(x, y)| x <= y);
    let n = samples.len();
    assert!(n > 100, "{n} samples");
    // The window starts between samples k and k + 1 and ends between m and m + 1 when the samples just
    // inside it counted no more than the view and those just outside no less. The counters only grow, so
    // for each k the m with samples[m] <= samples[k + 1] + view are a prefix: its last is the one to try.
    let plus = |a: &[u64; 7], b: &[u64; 7]| -> [u64; 7] { std::array::from_fn(|i| a[i] + b[i]) };
    let bracketed = (0..n - 2).any(|k| {
        let (low, high) = (plus(&samples[k + 1], &view), plus(&samples[k], &view));
        let m = samples.partition_point(|s| le(s, &low)).saturating_sub(1);
        m > k && m + 1 < n && le(&delta(&samples[k + 1], &samples[m]), &view) && le(&high, &samples[m + 1])
    });
    let whole = delta(&samples[0], &samples[n - 1]);
    assert!(bracketed, "the view {view:?} is no window of the device's counters (the whole run: {whole:?})");
}

/// A warm database (just built, so in the page cache) is read from memory: a query set that starts warm
/// reads nothing from the device. Under `--memory 16M` (the database is about 38 MB) the same run reads it
/// from the device, and the cgroup is gone afterwards. (tpch at SF 0.03 rather than tpcc: a third of the
/// time, and Q1 and Q6 scan LINEITEM, most of the database.)
#[test]
fn memory_makes_a_warm_database_read_from_the_device() {
    let fs = match Ext4::new(128) {
        Ok(f) => f,
        Err(why) => return iolab_testkit::skip(why),
    };
    if iolab_device::memlimit::detect().is_none() {
        return iolab_testkit::skip(format_args!("no cgroup memory controller"));
    }
    let dir = fs.path("db");
    let args =
        ["tpch", "--dir", dir.to_str().unwrap(), "--scale", "0.03", "--warm", "--queries", "1,6", "-q"];
    let warm = db(&args);
    let held = db(&[&args[..], &["--memory", "16M"]].concat());
    let reads = |v: &Value| device(&v["devices"], fs.name())["read_bytes"].as_u64().unwrap();
    let size = held["engine"]["size_bytes"].as_u64().unwrap();
    assert!(size > 32 << 20, "the database ({size} bytes) is larger than the limit");
    assert!(reads(&warm) < 1 << 20, "warm: {} bytes read", reads(&warm));
    assert!(reads(&held) > 4 << 20, "under --memory: {} bytes read", reads(&held));
    let setting = held["engine"]["settings"].as_array().unwrap().iter().find(|s| s["name"] == "memory_limit");
    assert!(
        setting.is_some_and(|s| s["value"].as_str().unwrap().starts_with("16 MiB for pages")),
        "{}",
        held["engine"]
    );
    let warned =
        warm["warnings"].as_array().unwrap().iter().any(|w| w.as_str().unwrap().contains("--memory"));
    assert!(reads(&warm) > 0 || warned, "a run that read nothing suggests --memory: {}", warm["warnings"]);
    let left: Vec<String> = walk_cgroups(Path::new("/sys/fs/cgroup"));
    assert!(left.is_empty(), "cgroups left: {left:?}");
}

/// The processes' own memory is apart from `--memory`'s budget: eight SQLite users (SQLite runs inside
/// iolab: some 40 MB of private memory) under `--memory 16M` finish, where a fixed limit had the kernel kill
/// iolab (exit 137, no word, its cgroup left). The cgroup such a killed iolab left is swept by the next run.
#[test]
fn memory_limit_never_kills_the_engine_over_its_own_memory() {
    if !nix::unistd::geteuid().is_root() {
        return iolab_testkit::skip(format_args!("not root"));
    }
    let Some(iolab_device::memlimit::MemoryKind::V1 { mount }) = iolab_device::memlimit::detect() else {
        return iolab_testkit::skip(format_args!("no cgroup v1 memory controller"));
    };
    let own = std::fs::read_to_string("/proc/self/cgroup").unwrap();
    let own = own.lines().find_map(|l| l.split_once(":memory:").map(|(_, p)| p.to_string())).unwrap();
    let stale = mount.join(own.trim_start_matches('/')).join("iolab-mem-4000000000");
    std::fs::create_dir(&stale).unwrap();
    let t = crate::util::tempdir();
    let dir = t.path().join("db");
    let v = db(&[
        "tpcc",
        "--dir",
        dir.to_str().unwrap(),
        "--items",
        "10000",
        "--users",
        "8",
        "--ramp",
        "1s",
        "--duration",
        "3s",
        "--memory",
        "16M",
        "--seed",
        "5",
        "-q",
    ]);
    assert!(v["run"]["nopm"].as_f64().unwrap() > 0.0, "{}", v["run"]);
    let memory =
        v["engine"]["settings"].as_array().unwrap().iter().find(|s| s["name"] == "memory_limit").unwrap();
    let value = memory["value"].as_str().unwrap();
    assert!(value.starts_with("16 MiB for pages") && value.contains("private memory apart"), "{value}");
    assert!(!stale.exists(), "the killed iolab's cgroup is swept");
    assert!(walk_cgroups(Path::new("/sys/fs/cgroup")).is_empty(), "no cgroup left");
}

/// `--throttle` holds the engine once the workload starts (the build is not held): SQLite (inside iolab)
/// and a private PostgreSQL server (its processes moved into the cgroup) are both held to what 20 write
/// IOPS allow. Every new order is a commit,
/// and a commit waits for its log write; with 2 users one log write can carry at most 2 commits, so NOPM is
/// at most 20 x 60 x 2 = 2,400 (unthrottled, both engines make 5,000 to 8,000 here). The setting says so,
/// and the blkio cgroup is gone afterwards. Needs root and loop devices; PostgreSQL's half its programs.
#[test]
fn throttle_holds_the_engine_s_io_on_both_engines() {
    if iolab_device::throttle::detect().is_none() {
        return iolab_testkit::skip(format_args!("no cgroup I/O controller"));
    }
    let fs = match Ext4::new(256) {
        Ok(f) => f,
        Err(why) => return iolab_testkit::skip(why),
    };
    let postgres = Path::new("/usr/lib/postgresql")
        .read_dir()
        .into_iter()
        .flatten()
        .flatten()
        .any(|e| e.path().join("bin/postgres").is_file());
    let engines: &[&str] = if postgres { &["sqlite", "postgres"] } else { &["sqlite"] };
    if !postgres {
        iolab_testkit::skip(format_args!("(postgres half): no PostgreSQL programs"));
    }
    for engine in engines {
        let dir = fs.path("db");
        let d = dir.to_str().unwrap();
        let base = ["tpcc", "--database", engine, "--dir", d, "--items", "10000", "--users", "2"];
        let times = ["--ramp", "1s", "--duration", "3s", "--seed", "9", "-q"];
        let held = db(&[&base[..], &times, &["--throttle", "wiops=20"]].concat());
        let nopm = held["run"]["nopm"].as_f64().unwrap();
        assert!(nopm > 0.0 && nopm <= 2400.0, "{engine}: NOPM {nopm} under wiops=20");
        let settings = held["engine"]["settings"].as_array().unwrap();
        let throttle = settings.iter().find(|s| s["name"] == "throttle").expect("the throttle setting");
        assert!(throttle["value"].as_str().unwrap().contains(&format!("/dev/{}", fs.name())), "{throttle}");
    }
    let mut left = Vec::new();
    for e in std::fs::read_dir("/sys/fs/cgroup/blkio").into_iter().flatten().flatten() {
        let n = e.file_name().to_string_lossy().into_owned();
        // iolab-PID (--throttle) and iolab-acct-PID (the database's own I/O).
        let pid = n.strip_prefix("iolab-").and_then(|rest| rest.rsplit('-').next());
        if pid.is_some_and(|pid| !Path::new("/proc").join(pid).exists()) {
            left.push(n);
        }
    }
    assert!(left.is_empty(), "blkio cgroups left: {left:?}");
}

/// The profiles calibrated against a real database stay calibrated (docs/PROFILES.md, "Checked against real
/// databases"): a tpcc captured on SQLite with a fifth of the database in memory gives the device both
/// reads and writes (about half reads on a quiet machine: the calibration of `seed-demartek-oltp`'s data
/// read share, 50, lives in bench/calibrate/capture.sh, because the share moves with the machine's speed:
/// 62 % was seen beside a build); `snapshot-copy` makes its copy durable; and the capture, derived into a
/// profile, runs. Needs root, loop devices, a memory controller and tracefs.
#[test]
fn a_captured_tpcc_reads_and_writes_and_derives_into_a_job_that_runs() {
    let fs = match Ext4::new(256) {
        Ok(f) => f,
        Err(why) => return iolab_testkit::skip(why),
    };
    if iolab_device::memlimit::detect().is_none() {
        return iolab_testkit::skip(format_args!("no cgroup memory controller"));
    }
    if std::fs::metadata("/sys/kernel/tracing/events/block").is_err()
        && std::fs::metadata("/sys/kernel/debug/tracing/events/block").is_err()
    {
        return iolab_testkit::skip(format_args!("no tracefs block events"));
    }
    let work = crate::util::tempdir();
    let trace = work.path().join("tpcc.iolabtrace");
    let dir = fs.path("db");
    // The calibration's configuration (2 warehouses, 4 users, 32 MiB of pages: 21 % of the database),
    // shorter: 49 % reads over 30 s there, 54-55 % over 8 s.
    db(&[
        "tpcc",
        "--dir",
        dir.to_str().unwrap(),
        "--warehouses",
        "2",
        "--users",
        "4",
        "--ramp",
        "2s",
        "--duration",
        "8s",
        "--memory",
        "32M",
        "--seed",
        "7",
        "--capture",
        trace.to_str().unwrap(),
        "-q",
    ]);
    let out = iolab().args(["trace", "show", trace.to_str().unwrap()]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let ops = |op: &str| -> f64 {
        let line = text.lines().find(|l| l.trim_start().starts_with(&format!("{op} ")));
        line.map_or(0.0, |l| l.split_whitespace().nth(1).unwrap().replace(',', "").parse().unwrap())
    };
    let (reads, writes) = (ops("read"), ops("write"));
    assert!(reads + writes > 1000.0, "too little I/O to measure: {text}");
    let captured = 100.0 * reads / (reads + writes);
    // Behaviour, not calibration: the pages held under --memory make the device read as well as write.
    assert!((20.0..=85.0).contains(&captured), "tpcc gave the device {captured:.1} % reads: {text}");
    // The capture as a profile: `profiles derive` writes a job that runs (on an emulated drive, on
    // virtual time, in place of the loop device).
    let job = work.path().join("tpcc.toml");
    let derive = iolab()
        .args(["profiles", "derive", trace.to_str().unwrap(), "-o", job.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(derive.status.success(), "{}", String::from_utf8_lossy(&derive.stderr));
    let target = format!("{}=sim:ssd,size=8G", fs.name());
    let run = iolab()
        .args(["run", job.to_str().unwrap(), "--target", &target, "--clock", "virtual"])
        .args(["--duration", "2s", "--ramp", "0s", "--no-save", "--json", "-", "-q"])
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let result: Value = serde_json::from_slice(&run.stdout).unwrap();
    assert!(result["total"]["all"]["ops"].as_u64().unwrap_or(0) > 0, "{}", result["total"]);
    let copy = iolab().args(["profiles", "show", "snapshot-copy"]).output().unwrap();
    let copy = String::from_utf8_lossy(&copy.stdout);
    assert!(copy[copy.find("[worker.write]").unwrap()..].contains("fsync = "), "{copy}");
}

/// Memory cgroups iolab made (`iolab-mem-*`) and left behind (their process is gone) under `root`, four
/// levels down.
fn walk_cgroups(root: &Path) -> Vec<String> {
    left_cgroups(root, "iolab-mem-")
}

/// Cgroups iolab made (named `PREFIX<pid>`) and left behind (their process is gone) under `root`, four
/// levels down.
pub(crate) fn left_cgroups(root: &Path, prefix: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![(root.to_path_buf(), 0)];
    while let Some((dir, depth)) = stack.pop() {
        for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                let n = e.file_name().to_string_lossy().into_owned();
                if let Some(pid) = n.strip_prefix(prefix) {
                    // Left behind: its iolab is gone (another test's iolab may be running now).
                    if !Path::new("/proc").join(pid).exists() {
                        out.push(e.path().display().to_string());
                    }
                } else if depth < 4 {
                    stack.push((e.path(), depth + 1));
                }
            }
        }
    }
    out
}

/// SQLite's backup API copies the whole database: as many bytes as the database file has after its
/// checkpoint, read from the source's device (the source was dropped from the page cache first) and written
/// to the destination's, durable (flushed) before the clock stops; both directories are removed after.
#[test]
fn copy_copies_the_database_s_bytes_and_reads_them_from_the_device() {
    let fs = match Ext4::new(128) {
        Ok(f) => f,
        Err(why) => return iolab_testkit::skip(why),
    };
    let (dir, to) = (fs.path("db"), fs.path("copy"));
    let v = db(&[
        "copy",
        "--dir",
        dir.to_str().unwrap(),
        "--to",
        to.to_str().unwrap(),
        "--items",
        "10000",
        "--seed",
        "3",
        "-q",
    ]);
    assert_eq!(v["schema"], "iolab.dbcopy/1");
    assert_eq!(v["copy"]["method"], "sqlite-backup");
    let size = v["source"]["size_bytes"].as_u64().unwrap();
    assert!(size > 10 << 20, "{}", v["source"]);
    assert_eq!(v["copy"]["bytes"].as_u64().unwrap(), size, "the copy is the database, byte for byte in size");
    assert_eq!(v["copy"]["files"], 1);
    let d = device(&v["source_devices"], fs.name());
    assert!(d["read_bytes"].as_u64().unwrap() >= size * 9 / 10, "read from the device: {d}");
    assert!(d["write_bytes"].as_u64().unwrap() >= size, "written to it (the same device): {d}");
    assert!(d["flushes"].as_u64().unwrap() > 0, "made durable: {d}");
    assert_eq!(v["destination_devices"], v["source_devices"], "one device under both");
    // The copy's own I/O (issue 37, item 1): SQLite's backup runs in iolab, so iolab's account holds it:
    // every read of the source is its own; its writes go through the page cache, and under cgroup v1 what
    // the kernel's flusher writes back for it before its fsync is not counted (the "not seen" line).
    if iolab_device::throttle::detect().is_some() {
        let io = &v["database_io"];
        assert_eq!(io["whose"], "iolab's process (SQLite runs in it)", "{io}");
        let own =
            io["disks"].as_array().unwrap().iter().find(|x| x["name"] == fs.name()).expect("the loop device");
        assert!(own["read_bytes"].as_u64().unwrap() >= size * 9 / 10, "the copy read the source: {own}");
        let written = own["write_bytes"].as_u64().unwrap();
        assert!(written > 0 && written <= d["write_bytes"].as_u64().unwrap(), "and wrote the copy: {own}");
        assert_eq!(own["device_write_bytes"], d["write_bytes"]);
    }
    assert!(!dir.exists() && !to.exists(), "both directories removed");
}

/// `--capture` records the measured window's block I/O of the loop device into a trace that `iolab trace
/// show` reads: its one target is the loop device, with reads (the queries start cold).
#[test]
fn capture_of_a_tpch_run_is_a_trace_of_the_loop_device() {
    let fs = match Ext4::new(96) {
        Ok(f) => f,
        Err(why) => return iolab_testkit::skip(why),
    };
    if let Err(e) = std::fs::metadata("/sys/kernel/tracing/events/block")
        .or_else(|_| std::fs::metadata("/sys/kernel/debug/tracing/events/block"))
    {
        return iolab_testkit::skip(format_args!("no tracefs block events ({e})"));
    }
    let work = crate::util::tempdir();
    let trace = work.path().join("tpch.iolabtrace");
    let dir = fs.path("db");
    let v = db(&[
        "tpch",
        "--dir",
        dir.to_str().unwrap(),
        "--scale",
        "0.01",
        "--seed",
        "2",
        "--capture",
        trace.to_str().unwrap(),
        "-q",
    ]);
    assert_eq!(v["schema"], "iolab.dbtpch/1");
    assert_eq!(v["queries"].as_array().unwrap().len(), 22);
    assert_eq!(v["config"]["start"], "cold");
    let window_reads = device(&v["devices"], fs.name())["reads"].as_u64().unwrap();
    assert!(window_reads > 0, "a cold start reads: {}", v["devices"]);
    let out = iolab().args(["trace", "show", trace.to_str().unwrap()]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains(&format!("targets /dev/{}", fs.name())), "{text}");
    let line = text.lines().find(|l| l.trim_start().starts_with("read ")).unwrap_or_else(|| panic!("{text}"));
    let ops: u64 = line.split_whitespace().nth(1).unwrap().replace(',', "").parse().unwrap();
    assert!(ops > 0, "{line}");
}

/// The query set on a loop device: 22 queries, Q1's four groups, the power line's sums.
#[test]
fn tpch_on_sqlite_reports_every_query_and_the_power_line() {
    let fs = match Ext4::new(96) {
        Ok(f) => f,
        Err(why) => return iolab_testkit::skip(why),
    };
    let dir = fs.path("db");
    let v = db(&[
        "tpch",
        "--dir",
        dir.to_str().unwrap(),
        "--queries",
        "1,6,14",
        "--runs",
        "2",
        "--seed",
        "4",
        "-q",
    ]);
    let q: Vec<&Value> = v["queries"].as_array().unwrap().iter().collect();
    assert_eq!(q.iter().map(|q| q["number"].as_u64().unwrap()).collect::<Vec<_>>(), [1, 6, 14]);
    assert_eq!(q[0]["rows"], 4);
    assert_eq!(q[1]["rows"], 1);
    assert!(q.iter().all(|q| q["runs_s"].as_array().unwrap().len() == 2));
    let total: f64 = q.iter().map(|q| q["seconds"].as_f64().unwrap()).sum();
    assert!((v["power"]["total_s"].as_f64().unwrap() - total).abs() < 1e-9);
}

/// PostgreSQL's base backup of a private server (a tpch build) held under `--memory`: `pg_basebackup` over the socket
/// copies the data directory (most of its bytes: not the server's pid file or its WAL beyond the backup's),
/// the server ran in the memory cgroup (its peak is reported) and nothing is left: no server, no cgroup,
/// neither directory. Needs root and PostgreSQL's server programs.
#[test]
fn copy_of_a_private_postgres_uses_pg_basebackup_under_a_memory_limit() {
    let found = Path::new("/usr/lib/postgresql")
        .read_dir()
        .into_iter()
        .flatten()
        .flatten()
        .any(|e| e.path().join("bin/pg_basebackup").is_file());
    if !found {
        return iolab_testkit::skip(format_args!("no PostgreSQL programs"));
    }
    let fs = match Ext4::new(256) {
        Ok(f) => f,
        Err(why) => return iolab_testkit::skip(why),
    };
    let (dir, to) = (fs.path("db"), fs.path("copy"));
    let v = db(&[
        "copy",
        "--database",
        "postgres",
        "--dir",
        dir.to_str().unwrap(),
        "--to",
        to.to_str().unwrap(),
        "--scale",
        "0.01",
        "--memory",
        "128M",
        "--seed",
        "3",
        "-q",
    ]);
    assert_eq!(v["copy"]["method"], "pg_basebackup");
    let (size, bytes) = (v["source"]["size_bytes"].as_u64().unwrap(), v["copy"]["bytes"].as_u64().unwrap());
    assert!(bytes > size / 2 && bytes <= size + (64 << 20), "copied {bytes} of {size}");
    assert!(v["copy"]["files"].as_u64().unwrap() > 100, "a data directory: {}", v["copy"]);
    let d = device(&v["source_devices"], fs.name());
    assert!(d["read_bytes"].as_u64().unwrap() > 0 && d["write_bytes"].as_u64().unwrap() >= bytes, "{d}");
    let memory =
        v["engine"]["settings"].as_array().unwrap().iter().find(|s| s["name"] == "memory_limit").unwrap();
    assert!(
        !memory["value"].as_str().unwrap().contains("peak 0 B")
            && !memory["value"].as_str().unwrap().contains("peak ?"),
        "the server was in the cgroup: {memory}"
    );
    assert!(walk_cgroups(Path::new("/sys/fs/cgroup")).is_empty(), "no cgroup left");
    assert!(!dir.exists() && !to.exists(), "both directories removed");
}

/// Refusals come before anything is made, with exit 2 and the flag named: a `--memory` too small for the
/// engine, `--memory` or `--capture` with a server of the user's own, a query TPC-H does not have, a scale
/// below the spec's rule, a copy's destination that is not iolab's.
#[test]
fn db_flags_are_refused_before_anything_is_made() {
    let t = crate::util::tempdir();
    let dir = t.path().join("db");
    let d = dir.to_str().unwrap();
    let other = t.path().join("mine");
    std::fs::create_dir(&other).unwrap();
    std::fs::write(other.join("data"), b"x").unwrap();
    let cases: [(&[&str], &str); 8] = [
        (&["tpcc", "--dir", d, "--throttle", "fast"], "invalid value 'fast' for '--throttle'"),
        (&["tpcc", "--database", "postgres", "--url", "postgres://x@h/db", "--throttle", "rbps=1M"], "--url"),
        (&["tpcc", "--dir", d, "--memory", "1M"], "at least 16 MiB"),
        (&["tpch", "--database", "postgres", "--dir", d, "--memory", "40M"], "at least 48 MiB"),
        (&["tpch", "--database", "postgres", "--url", "postgres://x@h/db", "--memory", "1G"], "--url"),
        (&["tpch", "--dir", d, "--queries", "1,23"], "'--queries'"),
        (&["tpch", "--dir", d, "--scale", "0.001"], "'--scale'"),
        (&["copy", "--dir", d, "--to", other.to_str().unwrap()], "--to"),
    ];
    for (args, want) in cases {
        let out = iolab().arg("db").args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
        assert!(!dir.exists(), "{args:?} made the database directory");
    }
    assert!(other.join("data").exists(), "a directory iolab did not make is left alone");
}

/// `--capture` in a sweep over users records every point's window, not only the first: one trace per user
/// count (FILE with `.users-N` before its extension), each a trace of the loop device with writes (tpcc
/// commits write), and the sweep document names each point's trace.
#[test]
fn capture_in_a_sweep_over_users_records_one_trace_per_point() {
    let fs = match Ext4::new(96) {
        Ok(f) => f,
        Err(why) => return iolab_testkit::skip(why),
    };
    if std::fs::metadata("/sys/kernel/tracing/events/block")
        .or_else(|_| std::fs::metadata("/sys/kernel/debug/tracing/events/block"))
        .is_err()
    {
        return iolab_testkit::skip(format_args!("no tracefs block events"));
    }
    let work = crate::util::tempdir();
    let trace = work.path().join("tpcc.iolabtrace");
    let dir = fs.path("db");
    let args = ["tpcc", "--dir", dir.to_str().unwrap(), "--users", "1,2", "--items", "2000", "--seed", "2"];
    let more = ["--ramp", "0s", "--duration", "1s", "--capture", trace.to_str().unwrap(), "-q"];
    let v = db(&[&args[..], &more].concat());
    assert_eq!(v["schema"], "iolab.dbsweep/1");
    assert!(!trace.exists(), "no trace under the plain name in a sweep");
    for (i, users) in [1, 2].into_iter().enumerate() {
        let file = work.path().join(format!("tpcc.users-{users}.iolabtrace"));
        assert_eq!(v["points"][i]["capture"].as_str(), file.to_str(), "the point names its trace");
        let out = iolab().args(["trace", "show", file.to_str().unwrap()]).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains(&format!("targets /dev/{}", fs.name())), "{text}");
        let line =
            text.lines().find(|l| l.trim_start().starts_with("write ")).unwrap_or_else(|| panic!("{text}"));
        let ops: u64 = line.split_whitespace().nth(1).unwrap().replace(',', "").parse().unwrap();
        assert!(ops > 0, "point {users}: {line}");
    }
}
