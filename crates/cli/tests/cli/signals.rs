//! SIGTERM, Ctrl-C (SIGINT) and SIGHUP (a closed terminal or SSH session) during a real run on the default
//! scratch file: the first signal stops the workers issuing, in-flight I/O drains, the partial result is
//! printed and saved (`"partial": true`), the exit code is 130 (README, "Exit codes": an interrupted run is
//! told apart from a complete one) and the scratch file is removed. A signal during the ramp reports the ramp
//! as it happened; one during the fill stops the fill and ends the run with 130 before it starts. A second
//! signal exits at once with 130, and still removes the scratch file.
//!
//! The scratch file goes to a per-test directory through `$IOLAB_SCRATCH_DIR`, so the tests can see it
//! appear (named `iolab-scratch-PID.dat`, crates/cli/src/run.rs) and check that it is gone.

use crate::util::{entries, shared_catalog, tempdir};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The signal tests take this lock, one at a time: each times a signal against a real run, and a
/// neighbour's multi-GiB fill on the same disk would stretch another's 64 MiB fill past its wait.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Starts `iolab run ARGS` on a scratch file of `size` in `dir`, with its output going to files in `dir`.
fn spawn(dir: &Path, size: &str, args: &[&str]) -> Child {
    let out = std::fs::File::create(dir.join("stdout")).expect("create stdout file");
    let err = std::fs::File::create(dir.join("stderr")).expect("create stderr file");
    Command::new(assert_cmd::cargo::cargo_bin("iolab"))
        .env("IOLAB_DB", shared_catalog())
        .env("IOLAB_SCRATCH_DIR", dir.join("scratch"))
        .args(["run", "--size", size, "--seed", "1"])
        .args(args)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .spawn()
        .expect("spawn iolab")
}

/// Waits (at most a minute) until the scratch file at `path` has its full `size`.
fn wait_filled(path: &Path, size: u64) {
    wait_for("the scratch file to be filled", Duration::from_secs(60), || {
        std::fs::metadata(path).is_ok_and(|m| m.len() == size)
    });
}

fn scratch_file(dir: &Path, pid: u32) -> PathBuf {
    dir.join("scratch").join(format!("iolab-scratch-{pid}.dat"))
}

/// Waits until `done` holds, or panics after `limit` naming `what`.
fn wait_for(what: &str, limit: Duration, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < limit, "timed out after {limit:?} waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits for the process to exit (at most `limit`) and returns its exit code; kills it on timeout.
fn wait_exit(child: &mut Child, limit: Duration) -> Option<i32> {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("wait for iolab") {
            return status.code();
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("iolab did not exit within {limit:?} of the signal");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn signal(child: &Child, sig: libc::c_int) {
    // SAFETY: kill(2) with a pid we spawned and have not yet reaped, so it cannot name another process.
    let rc = unsafe { libc::kill(child.id() as libc::pid_t, sig) };
    assert_eq!(rc, 0, "kill({}, {sig}) failed", child.id());
}

fn read(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).unwrap_or_default()
}

/// One signal in the measured phase: drain, partial result printed and saved, exit 130, scratch removed.
fn first_signal_stops_drains_and_keeps_the_partial_result(sig: libc::c_int) {
    let _one = one_at_a_time();
    let dir = tempdir();
    std::fs::create_dir(dir.path().join("scratch")).unwrap();
    let json = dir.path().join("result.json");
    let mut child = spawn(
        dir.path(),
        "64M",
        &["--rw", "randrw", "--qd", "16", "-d", "60s", "--ramp", "0", "--json", json.to_str().unwrap()],
    );
    let scratch = scratch_file(dir.path(), child.id());
    // The file is registered and created first, then filled to its size; the run starts after the fill.
    wait_filled(&scratch, 64 << 20);
    std::thread::sleep(Duration::from_millis(1500));
    assert!(
        child.try_wait().unwrap().is_none(),
        "iolab ended before the signal: {}",
        read(dir.path(), "stderr")
    );
    let sent = Instant::now();
    signal(&child, sig);
    let code = wait_exit(&mut child, Duration::from_secs(20));
    let stderr = read(dir.path(), "stderr");
    assert_eq!(code, Some(130), "exit code after one signal {sig}; stderr: {stderr}");
    assert!(sent.elapsed() < Duration::from_secs(10), "stopping took {:?}", sent.elapsed());
    assert!(stderr.contains("stopping"), "no stop notice on stderr: {stderr}");
    let v: serde_json::Value = serde_json::from_str(&read(dir.path(), "result.json"))
        .unwrap_or_else(|e| panic!("--json file is not JSON ({e}); stderr: {stderr}"));
    assert_eq!(v["partial"], true, "{v:#}");
    let ops = v.pointer("/total/all/ops").and_then(serde_json::Value::as_u64).unwrap_or(0);
    assert!(ops > 0, "a partial result still counts what completed: {v:#}");
    let measured = v.pointer("/measured_s").and_then(serde_json::Value::as_f64);
    if let Some(m) = measured {
        assert!(m < 30.0, "the run was cut short, yet measured_s is {m}");
    }
    // The text summary is printed too (stdout is not a terminal: no live line, just the result).
    assert!(read(dir.path(), "stdout").contains("IOPS"), "stdout: {}", read(dir.path(), "stdout"));
    assert!(!scratch.exists(), "scratch file {} left behind", scratch.display());
    assert_eq!(entries(&dir.path().join("scratch")), Vec::<String>::new());
}

#[test]
fn sigterm_during_a_run_drains_saves_a_partial_result_and_removes_the_scratch_file() {
    first_signal_stops_drains_and_keeps_the_partial_result(libc::SIGTERM);
}

#[test]
fn sigint_during_a_run_drains_saves_a_partial_result_and_removes_the_scratch_file() {
    first_signal_stops_drains_and_keeps_the_partial_result(libc::SIGINT);
}

/// Issue 14, item 8: SIGHUP (a closed terminal or SSH session) killed iolab with the default action, leaving
/// the scratch file and saving nothing. It is now a stop request like SIGTERM.
#[test]
fn sighup_during_a_run_drains_saves_a_partial_result_and_removes_the_scratch_file() {
    first_signal_stops_drains_and_keeps_the_partial_result(libc::SIGHUP);
}

/// Issue 14, item 10: a run stopped during its ramp reported the planned ramp (`ramp_s: 30` after 1 s).
#[test]
fn signal_during_the_ramp_reports_the_ramp_as_it_happened() {
    let _one = one_at_a_time();
    let dir = tempdir();
    std::fs::create_dir(dir.path().join("scratch")).unwrap();
    let json = dir.path().join("result.json");
    let mut child = spawn(
        dir.path(),
        "64M",
        &["--rw", "randread", "-d", "60s", "--ramp", "30s", "--json", json.to_str().unwrap()],
    );
    let scratch = scratch_file(dir.path(), child.id());
    wait_filled(&scratch, 64 << 20);
    std::thread::sleep(Duration::from_millis(1500));
    signal(&child, libc::SIGINT);
    let code = wait_exit(&mut child, Duration::from_secs(20));
    let stderr = read(dir.path(), "stderr");
    assert_eq!(code, Some(130), "stderr: {stderr}");
    let v: serde_json::Value = serde_json::from_str(&read(dir.path(), "result.json"))
        .unwrap_or_else(|e| panic!("--json file is not JSON ({e}); stderr: {stderr}"));
    assert_eq!(v["partial"], true, "{v:#}");
    let ramp = v["ramp_s"].as_f64().expect("ramp_s");
    assert!(ramp > 0.5 && ramp < 15.0, "stopped about 1.5 s into a 30 s ramp, yet ramp_s is {ramp}");
    assert_eq!(v["measured_s"].as_f64(), Some(0.0), "nothing was measured: {v:#}");
}

/// Issue 37, item 8: Ctrl-C during the ramp saved an empty partial run in the catalog. A run that measured
/// no I/O is not saved, and stderr says why.
#[test]
fn signal_during_the_ramp_saves_nothing_and_says_why() {
    let _one = one_at_a_time();
    let dir = tempdir();
    std::fs::create_dir(dir.path().join("scratch")).unwrap();
    let catalog = dir.path().join("c.db");
    let mut child = spawn(
        dir.path(),
        "64M",
        &["--rw", "randread", "-d", "60s", "--ramp", "30s", "--db", catalog.to_str().unwrap()],
    );
    let scratch = scratch_file(dir.path(), child.id());
    wait_filled(&scratch, 64 << 20);
    std::thread::sleep(Duration::from_millis(1500));
    signal(&child, libc::SIGINT);
    let code = wait_exit(&mut child, Duration::from_secs(20));
    let stderr = read(dir.path(), "stderr");
    assert_eq!(code, Some(130), "stderr: {stderr}");
    assert!(
        stderr.contains("not saved in the catalog: the run was interrupted before it measured any I/O"),
        "{stderr}"
    );
    let out =
        crate::util::iolab().args(["runs", "--json", "--db", catalog.to_str().unwrap()]).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "[]", "{}", String::from_utf8_lossy(&out.stderr));
}

/// Issue 14, item 9: Ctrl-C during the fill exited 2, the code of a usage error, and only after the whole fill.
/// It is an interruption: the fill stops between chunks, the file is removed, and the exit code is 130.
#[test]
fn signal_during_the_fill_exits_130_and_removes_the_scratch_file() {
    let _one = one_at_a_time();
    let dir = tempdir();
    std::fs::create_dir(dir.path().join("scratch")).unwrap();
    let mut child = spawn(dir.path(), "8G", &["--rw", "randread", "-d", "60s", "--ramp", "0", "-q"]);
    let scratch = scratch_file(dir.path(), child.id());
    wait_for("the scratch file to appear", Duration::from_secs(30), || {
        std::fs::metadata(&scratch).is_ok_and(|m| m.len() > 0)
    });
    let sent = Instant::now();
    signal(&child, libc::SIGINT);
    let code = wait_exit(&mut child, Duration::from_secs(30));
    assert!(sent.elapsed() < Duration::from_secs(10), "an 8 GiB fill was not stopped: {:?}", sent.elapsed());
    let stderr = read(dir.path(), "stderr");
    assert_eq!(code, Some(130), "stderr: {stderr}");
    assert!(stderr.contains("interrupted"), "stderr: {stderr}");
    assert!(!scratch.exists(), "scratch file {} left behind", scratch.display());
}

/// A second signal exits at once (130) and still removes the scratch file. Both are sent back to back in
/// the measured phase, so the second arrives while the first is still draining the run.
fn second_signal_exits_at_once(first: libc::c_int, second: libc::c_int) {
    let _one = one_at_a_time();
    let dir = tempdir();
    std::fs::create_dir(dir.path().join("scratch")).unwrap();
    let mut child =
        spawn(dir.path(), "64M", &["--rw", "randrw", "--qd", "16", "-d", "60s", "--ramp", "0", "-q"]);
    let scratch = scratch_file(dir.path(), child.id());
    wait_filled(&scratch, 64 << 20);
    std::thread::sleep(Duration::from_millis(1500));
    assert!(child.try_wait().unwrap().is_none(), "iolab ended early: {}", read(dir.path(), "stderr"));
    let sent = Instant::now();
    signal(&child, first);
    signal(&child, second);
    let code = wait_exit(&mut child, Duration::from_secs(10));
    assert!(sent.elapsed() < Duration::from_secs(5), "the second signal took {:?}", sent.elapsed());
    let stderr = read(dir.path(), "stderr");
    assert_eq!(code, Some(130), "exit code after a second signal; stderr: {stderr}");
    assert!(!scratch.exists(), "scratch file {} left behind", scratch.display());
    assert_eq!(entries(&dir.path().join("scratch")), Vec::<String>::new());
}

#[test]
fn second_sigint_exits_at_once_with_130_and_removes_the_scratch_file() {
    second_signal_exits_at_once(libc::SIGINT, libc::SIGINT);
}

#[test]
fn sigterm_then_sigint_exits_at_once_with_130_and_removes_the_scratch_file() {
    second_signal_exits_at_once(libc::SIGTERM, libc::SIGINT);
}

/// Issue 14, item 8: after a `kill -9` the scratch file stays. The next run says where such files are (those
/// named for iolab processes that no longer run), and leaves them for the user to remove.
#[test]
fn next_run_names_scratch_files_left_by_a_killed_iolab() {
    let _one = one_at_a_time();
    let dir = tempdir();
    std::fs::create_dir(dir.path().join("scratch")).unwrap();
    let mut child = spawn(dir.path(), "64M", &["--rw", "randread", "-d", "60s", "--ramp", "0", "-q"]);
    let left = scratch_file(dir.path(), child.id());
    wait_filled(&left, 64 << 20);
    signal(&child, libc::SIGKILL);
    let _ = child.wait();
    assert!(left.exists(), "SIGKILL cannot clean up");
    let mut next = spawn(dir.path(), "16M", &["--rw", "randread", "--ios", "100", "--ramp", "0"]);
    let code = wait_exit(&mut next, Duration::from_secs(60));
    let stderr = read(dir.path(), "stderr");
    assert_eq!(code, Some(0), "stderr: {stderr}");
    assert!(stderr.contains("no longer run") && stderr.contains(&left.display().to_string()), "{stderr}");
    assert!(left.exists(), "only named, never removed");
}

/// A CSV trace of `n` 4 KiB reads (iolab's own CSV), written to `path`.
fn big_trace(path: &Path, n: u64) {
    use std::io::Write;
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    writeln!(f, "start_ns,submit_ns,complete_ns,op,offset,len,result,worker,target").unwrap();
    for i in 0..n {
        let off = (i * 7919 % 262_144) * 4096;
        writeln!(f, "{},{},{},read,{off},4096,4096,0,disk", i * 1000, i * 1000 + 10, i * 1000 + 90).unwrap();
    }
}

/// Starts `iolab ARGS` with stdout and stderr to files in `dir`.
fn spawn_cmd(dir: &Path, args: &[&str]) -> Child {
    let out = std::fs::File::create(dir.join("stdout")).unwrap();
    let err = std::fs::File::create(dir.join("stderr")).unwrap();
    Command::new(assert_cmd::cargo::cargo_bin("iolab"))
        .env("IOLAB_DB", shared_catalog())
        .args(args)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .spawn()
        .expect("spawn iolab")
}

/// Issue 24, item 11: SIGTERM during `trace convert` of a large trace killed it by the signal and left the
/// output's hidden temporary file (254 MB in one try). Now, whether the signal comes while it reads or while
/// it writes (as soon as the temporary file is seen), it exits 130 and leaves only what was there.
#[test]
fn sigterm_during_trace_convert_exits_130_and_leaves_no_temporary_file() {
    let _one = one_at_a_time();
    let dir = tempdir();
    let input = dir.path().join("in.csv");
    big_trace(&input, 1_500_000);
    let work = dir.path().join("out");
    std::fs::create_dir(&work).unwrap();
    let output = work.join("t.bin");
    let args = ["trace", "convert", input.to_str().unwrap(), "-o", output.to_str().unwrap()];
    for when in ["while reading", "while writing"] {
        let mut child = spawn_cmd(dir.path(), &args);
        if when == "while reading" {
            std::thread::sleep(Duration::from_millis(300));
        } else {
            wait_for("the output's temporary file", Duration::from_secs(60), || !entries(&work).is_empty());
        }
        signal(&child, libc::SIGTERM);
        let code = wait_exit(&mut child, Duration::from_secs(10));
        assert_eq!(code, Some(130), "{when}: {}", read(dir.path(), "stderr"));
        assert!(entries(&work).is_empty(), "{when}: left {:?}", entries(&work));
    }
}

/// Issue 24, item 11: `iolab mrc` and `iolab replay` (reading its trace) end on the first signal with 130.
#[test]
fn sigterm_during_mrc_and_a_replays_reading_exits_130() {
    let _one = one_at_a_time();
    let dir = tempdir();
    let input = dir.path().join("in.csv");
    big_trace(&input, 1_500_000);
    let json = dir.path().join("m.json");
    let i = input.to_str().unwrap();
    for args in [
        vec!["mrc", i, "--json", json.to_str().unwrap()],
        vec!["replay", i, "--target", "disk=mem:2G", "--no-save", "-q"],
    ] {
        let mut child = spawn_cmd(dir.path(), &args);
        std::thread::sleep(Duration::from_millis(300));
        signal(&child, libc::SIGTERM);
        let code = wait_exit(&mut child, Duration::from_secs(10));
        assert_eq!(code, Some(130), "{args:?}: {}", read(dir.path(), "stderr"));
        assert!(!json.exists(), "{args:?}: an output was written");
    }
}

/// tracefs with block events: its root, and whether this test mounted it (then [`Tracefs`]'s drop unmounts
/// it, leaving the machine's mounts as they were).
struct Tracefs(PathBuf, bool);

impl Tracefs {
    /// Err says why there is none.
    fn get() -> Result<Tracefs, String> {
        if !crate::util::is_root() {
            return Err("needs root".into());
        }
        let root = PathBuf::from("/sys/kernel/tracing");
        let ready = |r: &Path| r.join("events/block/block_rq_issue").is_dir() && r.join("instances").is_dir();
        if ready(&root) {
            return Ok(Tracefs(root, false));
        }
        let mounted = Command::new("mount")
            .args(["-t", "tracefs", "nodev", "/sys/kernel/tracing"])
            .status()
            .is_ok_and(|s| s.success());
        match (mounted, ready(&root)) {
            (true, true) => Ok(Tracefs(root, true)),
            (true, false) => {
                drop(Tracefs(root, true));
                Err("tracefs has no block events".into())
            }
            _ => Err("tracefs is not mounted and cannot be".into()),
        }
    }
}

impl Drop for Tracefs {
    fn drop(&mut self) {
        if self.1 {
            let _ = Command::new("umount").arg(&self.0).status();
        }
    }
}

/// A random-read load on `dev` for `secs` seconds.
fn load(dir: &Path, dev: &str, secs: u32) -> Child {
    let d = format!("{secs}s");
    let args =
        ["run", "--target", dev, "--rw", "randread", "-d", d.as_str(), "--ramp", "0", "--no-save", "-q"];
    Command::new(assert_cmd::cargo::cargo_bin("iolab"))
        .args(args)
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(dir.join("load.stderr")).unwrap())
        .spawn()
        .unwrap()
}

/// Issue 24, item 11: SIGTERM during `trace capture` killed it by the signal, leaving its tracefs instance
/// tracing the device; `--duration 2s` under load ran past 12 s. Now the signal ends the capture, what it
/// recorded is written (atomically) and readable, the instance is gone and the exit is 130; and a 1 s
/// capture under load ends within 2.5 s.
#[test]
fn trace_capture_ends_on_sigterm_or_its_deadline_and_removes_its_instance() {
    let tracefs = match Tracefs::get() {
        Ok(t) => t,
        Err(why) => return iolab_testkit::skip(why),
    };
    let root = tracefs.0.clone();
    let lo = match crate::util::LoopDev::new(64, None) {
        Ok(l) => l,
        Err(why) => return iolab_testkit::skip(why),
    };
    let _one = one_at_a_time();
    let dir = tempdir();
    let out = dir.path().join("cap.bin");
    let o = out.to_str().unwrap();
    let mut busy = load(dir.path(), &lo.dev, 20);
    std::thread::sleep(Duration::from_millis(500));
    // The deadline holds however busy the device is.
    let started = Instant::now();
    let mut child =
        spawn_cmd(dir.path(), &["trace", "capture", "--device", &lo.dev, "--duration", "1s", "-o", o]);
    let code = wait_exit(&mut child, Duration::from_secs(15));
    let took = started.elapsed();
    let instance = root.join(format!("instances/iolab-{}", child.id()));
    assert_eq!(code, Some(0), "{}", read(dir.path(), "stderr"));
    // The device stays busy for 20 s: a capture that waited for it to go idle would take that long.
    assert!(took < Duration::from_secs(10), "a 1 s capture took {took:?}");
    assert!(!instance.exists(), "{} was left", instance.display());
    // A signal ends a long capture: what was recorded is written, the instance removed; a second one right
    // after exits at once, and still removes the instance (and writes nothing, or all).
    for signals in [&[libc::SIGTERM][..], &[libc::SIGINT, libc::SIGINT], &[libc::SIGHUP, libc::SIGTERM]] {
        let _ = std::fs::remove_file(&out);
        let args = ["trace", "capture", "--device", &lo.dev, "--duration", "60s", "-o", o];
        let mut child = spawn_cmd(dir.path(), &args);
        std::thread::sleep(Duration::from_millis(1500));
        for &sig in signals {
            signal(&child, sig);
        }
        let code = wait_exit(&mut child, Duration::from_secs(5));
        let instance = root.join(format!("instances/iolab-{}", child.id()));
        assert_eq!(code, Some(130), "{signals:?}: {}", read(dir.path(), "stderr"));
        assert!(!instance.exists(), "{} was left after {signals:?}", instance.display());
        assert_eq!(entries(dir.path()).iter().filter(|e| e.starts_with('.')).count(), 0, "a temporary file");
        if signals.len() == 2 && !out.exists() {
            continue;
        }
        let show = crate::util::iolab().args(["trace", "show", o, "--limit", "0"]).output().unwrap();
        let text = String::from_utf8_lossy(&show.stdout);
        assert!(show.status.success() && text.contains("records"), "{signals:?}: readable: {text}");
        assert!(!text.contains("records 0 "), "{signals:?}: the load's I/O was recorded: {text}");
    }
    let _ = busy.kill();
    let _ = busy.wait();
}
