//! Helpers: build the command, run it for its JSON, read numbers out of the result, compare with tolerance.

use assert_cmd::Command;
use serde_json::Value;
use std::path::Path;

/// The emulated device of every timing-shaped test: each I/O takes exactly 100 µs, 8 at once, FIFO beyond,
/// so capacity is 80 000 IOPS. Virtual time makes the run exact and instant.
pub const SIM: [&str; 6] =
    ["--target", "sim:fixed,latency=100us,servers=8", "--clock", "virtual", "--seed", "1"];

/// The results catalog every test's runs are saved in (never the user's own): one file under the target
/// dir, shared by the tests of one `cargo test` (so the parallel tests also exercise concurrent writers),
/// removed when the first test of the next one starts.
pub fn shared_catalog() -> std::path::PathBuf {
    static FRESH: std::sync::Once = std::sync::Once::new();
    let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join("iolab-cli-tests.db");
    FRESH.call_once(|| {
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
        }
    });
    path
}

/// `iolab` with a clean environment for the variables it reads, saving into [`shared_catalog`].
pub fn iolab() -> Command {
    let mut c = Command::cargo_bin("iolab").expect("the iolab binary is built by cargo test");
    c.env_remove("IOLAB_SCRATCH_DIR");
    c.env("IOLAB_DB", shared_catalog());
    c
}

/// A fresh directory on the target dir's filesystem (more likely than /tmp to be a real disk that allows
/// O_DIRECT); removed when dropped.
pub fn tempdir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("iolab-cli-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .expect("create a temporary directory")
}

/// `iolab run ARGS` for a short write (1 s, 4 KiB, QD 4), not saved: (exit code, stderr).
pub fn write_run(args: &[&str]) -> (Option<i32>, String) {
    let out = iolab()
        .args(["run", "-d", "1s", "--ramp", "0", "--bs", "4k", "--qd", "4", "-q", "--no-save"])
        .args(args)
        .output()
        .expect("spawn iolab");
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// Runs `iolab run ARGS --json -` (quiet), asserts exit code 0 and returns the parsed result.
pub fn run_json(args: &[&str]) -> Value {
    let mut c = iolab();
    run_json_with(&mut c, args)
}

/// As [`run_json`], with a command the caller has already configured (cwd, environment).
pub fn run_json_with(c: &mut Command, args: &[&str]) -> Value {
    let out = c.arg("run").args(args).args(["--json", "-", "-q"]).output().expect("spawn iolab");
    assert_eq!(
        out.status.code(),
        Some(0),
        "iolab run {} failed\nstderr: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout of `iolab run {}` is not JSON ({e}): {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stdout)
        )
    });
    assert_eq!(v["schema"], "iolab.result/1");
    v
}

/// The number at a JSON pointer, e.g. `num(&v, "/total/all/iops")`.
pub fn num(v: &Value, pointer: &str) -> f64 {
    v.pointer(pointer)
        .and_then(Value::as_f64)
        .unwrap_or_else(|| panic!("no number at {pointer} (seed {}) in {v:#}", v["seed"]))
}

/// The `kind` of every warning in the result.
pub fn warning_kinds(v: &Value) -> Vec<String> {
    v["warnings"]
        .as_array()
        .expect("warnings is an array")
        .iter()
        .map(|w| w["kind"].as_str().expect("warning kind is a string").to_string())
        .collect()
}

/// Asserts `actual` is within `frac` (relative) of `expected`.
#[track_caller]
pub fn assert_close(what: &str, actual: f64, expected: f64, frac: f64) {
    let err = (actual - expected).abs() / expected.abs();
    assert!(
        err <= frac,
        "{what}: {actual} is not within {:.2}% of {expected} (off by {:.3}%)",
        frac * 100.0,
        err * 100.0
    );
}

/// Names of the entries of a directory, sorted.
pub fn entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .expect("read the temporary directory")
        .map(|e| e.expect("directory entry").file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// True when the tests run as root (loop devices, mounts, throttling).
pub fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines().find(|l| l.starts_with("Uid:")).map(|l| l.split_whitespace().nth(1) == Some("0"))
        })
        .unwrap_or(false)
}

/// A loop device over a zeroed file in a temporary directory, detached when dropped. `sector`: its logical
/// block size (`losetup -b`, with direct I/O to the backing file so the size holds), else 512.
pub struct LoopDev {
    /// The device path, e.g. /dev/loop3.
    pub dev: String,
    _dir: tempfile::TempDir,
    /// One loop device test at a time: `losetup` opens devices while it looks for a free one, and iolab
    /// refuses a device another process holds open.
    _serial: std::sync::MutexGuard<'static, ()>,
}

/// Held by each [`LoopDev`] for its life, and by every other test helper that attaches loop devices
/// ([`loop_lock`]).
static LOOP_TESTS: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// One test with loop devices at a time: `losetup --find` opens, and while it attaches claims, devices
/// another test may be running iolab on (which then sees the device busy). A helper that attaches loop
/// devices holds this for as long as it keeps them; never take it twice in one test.
pub fn loop_lock() -> std::sync::MutexGuard<'static, ()> {
    LOOP_TESTS.lock().unwrap_or_else(|p| p.into_inner())
}

impl LoopDev {
    /// Err names why there is none (not root, no loop devices): the caller skips, saying so.
    pub fn new(mib: u64, sector: Option<u32>) -> Result<LoopDev, String> {
        if !is_root() {
            return Err("not root".into());
        }
        let serial = loop_lock();
        let dir = tempdir();
        let file = dir.path().join("backing");
        std::fs::write(&file, vec![0u8; (mib << 20) as usize]).map_err(|e| e.to_string())?;
        let mut c = std::process::Command::new("losetup");
        c.args(["--find", "--show"]);
        if let Some(b) = sector {
            c.args(["-b", &b.to_string(), "--direct-io=on"]);
        }
        let out = c.arg(&file).output().map_err(|e| format!("losetup: {e}"))?;
        if !out.status.success() {
            return Err(format!("losetup failed: {}", String::from_utf8_lossy(&out.stderr).trim()));
        }
        Ok(LoopDev {
            dev: String::from_utf8_lossy(&out.stdout).trim().to_string(),
            _dir: dir,
            _serial: serial,
        })
    }
}

impl Drop for LoopDev {
    fn drop(&mut self) {
        let _ = std::process::Command::new("losetup").args(["-d", &self.dev]).status();
    }
}

/// Unmounts `mount_point`, a test's own: tries again for a second while it is busy (a process of the test may
/// still be closing a file there), then detaches it lazily, so no test leaves a mount behind.
pub fn unmount(mount_point: &std::path::Path) {
    for _ in 0..10 {
        match std::process::Command::new("umount").arg(mount_point).status() {
            Ok(s) if s.success() => return,
            _ => std::thread::sleep(std::time::Duration::from_millis(100)),
        }
    }
    let _ = std::process::Command::new("umount").arg("-l").arg(mount_point).status();
}
