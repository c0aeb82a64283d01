//! Issue 35 on the database side: a password in `--url` is never printed (class 8); every wait on a
//! server of the user's is bounded, and one signal ends it (class 9); a build that cannot fit is refused
//! before anything is made (class 10).

use std::net::TcpListener;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A server that accepts connections (the kernel does, into the backlog) and never answers.
fn silent_server() -> (TcpListener, u16) {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    let port = l.local_addr().unwrap().port();
    (l, port)
}

/// Waits for `child` at most `limit` (a hang guard, not a speed assertion); kills it and panics past it.
fn wait_bounded(mut child: Child, limit: Duration) -> Output {
    let deadline = Instant::now() + limit;
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("iolab did not exit within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

fn tpcc_on(url: &str) -> Child {
    Command::new(assert_cmd::cargo::cargo_bin("iolab"))
        .env("IOLAB_DB", crate::util::shared_catalog())
        .env_remove("IOLAB_SCRATCH_DIR")
        .args(["db", "tpcc", "--database", "postgres", "--url", url, "--duration", "1s", "--ramp", "0s"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn")
}

#[test]
fn a_password_in_url_is_never_printed_however_it_is_spelled() {
    // Port 1: nothing listens there, so each run fails connecting, and says why.
    for url in [
        "postgres://x:s3cretpw@127.0.0.1:1/db",
        "postgres://x@127.0.0.1:1/db?password=s3cretpw",
        "postgres://x:s3cret%40pw@127.0.0.1:1/db",
        "postgres://x:s3cret@pw@127.0.0.1:1/db",
        "host=127.0.0.1 port=1 user=x password='s3cret pw' dbname=db",
        "host=127.0.0.1 port=1 user=x password=s3cretpw dbname=db",
    ] {
        let out = wait_bounded(tpcc_on(url), Duration::from_secs(30));
        let text =
            format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert_ne!(out.status.code(), Some(0), "{url}: {text}");
        assert!(text.contains("--url") || text.contains("127.0.0.1"), "{url}: {text}");
        assert!(!text.contains("s3cret"), "{url}: the password is printed: {text}");
    }
}

#[test]
fn a_server_that_never_answers_is_given_up_after_connect_timeout() {
    let (_listener, port) = silent_server();
    let child = tpcc_on(&format!("postgres://u@127.0.0.1:{port}/db?connect_timeout=1"));
    let out = wait_bounded(child, Duration::from_secs(15));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("connect_timeout") && err.contains(&format!("127.0.0.1:{port}")), "{err}");
}

#[test]
fn sigterm_ends_a_connection_to_a_server_that_never_answers() {
    let (_listener, port) = silent_server();
    let child = tpcc_on(&format!("postgres://u@127.0.0.1:{port}/db"));
    std::thread::sleep(Duration::from_secs(1));
    // SAFETY: kill(2) with a pid we spawned and have not yet reaped, so it cannot name another process.
    assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) }, 0);
    let out = wait_bounded(child, Duration::from_secs(15));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("interrupted"), "{err}");
}

/// Free bytes for an unprivileged user under `path` (statvfs f_bavail).
fn free_bytes(path: &std::path::Path) -> u64 {
    let st = nix::sys::statvfs::statvfs(path).unwrap();
    st.blocks_available() as u64 * st.fragment_size() as u64
}

#[test]
fn a_build_larger_than_the_free_space_is_refused_before_anything_is_made() {
    let fs = match crate::db_storage::Ext4::new(64) {
        Ok(f) => f,
        Err(why) => return iolab_testkit::skip(why),
    };
    let root = fs.path("");
    let dir = fs.path("db");
    let d = dir.to_str().unwrap();
    let before = crate::util::entries(&root);
    let free = free_bytes(&root);
    for (args, flag) in [
        (vec!["tpcc", "--dir", d, "--warehouses", "20"], "--warehouses"),
        (vec!["tpch", "--dir", d, "--scale", "100"], "--scale"),
        (vec!["ycsb", "--dir", d, "--records", "10000000"], "--records"),
        (
            vec!["copy", "--dir", d, "--to", fs.path("to").to_str().unwrap(), "--warehouses", "2"],
            "--warehouses",
        ),
    ] {
        let out = crate::util::iolab().arg("db").args(&args).output().expect("spawn");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("needs about") && err.contains("free") && err.contains(flag), "{args:?}: {err}");
        assert_eq!(crate::util::entries(&root), before, "{args:?}: something was made");
        assert_eq!(free_bytes(&root), free, "{args:?}: the free space changed");
    }
}

/// Removes a tracefs instance the test made, if it is still there.
struct TestInstance(std::path::PathBuf);

impl Drop for TestInstance {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.0);
    }
}

#[test]
fn a_capture_sweeps_the_tracefs_instances_a_killed_iolab_left() {
    let instances = std::path::Path::new("/sys/kernel/tracing/instances");
    if !instances.is_dir() {
        return iolab_testkit::skip(format_args!("tracefs is not mounted at /sys/kernel/tracing"));
    }
    let dev = match crate::util::LoopDev::new(8, None) {
        Ok(d) => d,
        Err(why) => return iolab_testkit::skip(why),
    };
    // A pid whose process is gone: its instance is stale. Pid 1 lives and started before the instance was
    // made: it may be a capture's, and stays.
    let mut gone = std::process::Command::new("true").spawn().unwrap();
    let gone_pid = gone.id();
    gone.wait().unwrap();
    let stale = TestInstance(instances.join(format!("iolab-{gone_pid}")));
    let live = TestInstance(instances.join("iolab-1"));
    for i in [&stale, &live] {
        if let Err(e) = std::fs::create_dir(&i.0) {
            return iolab_testkit::skip(format_args!("cannot make a tracefs instance: {e}"));
        }
    }
    let t = crate::util::tempdir();
    let out = crate::util::iolab()
        .args(["trace", "capture", "--device", &dev.dev, "--duration", "1s", "-o"])
        .arg(t.path().join("cap.iolabtrace"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!stale.0.exists(), "{} was left", stale.0.display());
    assert!(live.0.exists(), "{} of a live process that may own it was removed", live.0.display());
}
