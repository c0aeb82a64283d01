//! `iolab db tpcc` end to end (issue 28): on SQLite and on a private PostgreSQL server, 1 warehouse (10,000
//! items, so each build takes a few seconds), 2 users, a 2 s window; NOPM > 0, the four consistency
//! conditions passed, NOPM as the database counts it equal to iolab's count. On PostgreSQL, nothing may be
//! left behind afterwards: no server process, no socket, no data directory, also after a SIGTERM in the
//! middle of the run or of the build. The PostgreSQL tests need root (the server then runs as the
//! `postgres` account, as in CI) and the server programs; they say SKIP and pass otherwise.

use crate::util::{iolab, is_root, tempdir};
use serde_json::Value;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The flags of every run here.
const SMALL: [&str; 12] = [
    "--warehouses",
    "1",
    "--users",
    "2",
    "--items",
    "10000",
    "--ramp",
    "0s",
    "--duration",
    "2s",
    "--seed",
    "7",
];

/// Runs `iolab db tpcc ARGS SMALL --json -`, asserts exit 0, returns the document.
fn tpcc(args: &[&str]) -> Value {
    let out =
        iolab().args(["db", "tpcc"]).args(args).args(SMALL).args(["--json", "-"]).output().expect("spawn");
    assert_eq!(out.status.code(), Some(0), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("JSON")
}

/// What every good run shows.
fn assert_good(v: &Value, engine: &str) {
    assert_eq!(v["schema"], "iolab.db/1");
    assert_eq!(v["engine"]["name"], engine);
    assert!(v["run"]["nopm"].as_f64().unwrap() > 0.0, "NOPM: {}", v["run"]);
    assert!(v["run"]["tpm"].as_f64().unwrap() > v["run"]["nopm"].as_f64().unwrap());
    let checks = v["consistency"].as_array().unwrap();
    assert_eq!(checks.len(), 4);
    for c in checks {
        assert_eq!(c["passed"], true, "{c}");
    }
    // Every committed new order advanced a district's d_next_o_id, and nothing else did: the database's count
    // over the window is iolab's, but for the few transactions that committed between a window's edge and
    // the monitor's read of it (at most one in flight per user at each edge).
    let per_order = 60.0 / v["run"]["measured_s"].as_f64().unwrap();
    let apart = (v["run"]["nopm_database"].as_f64().unwrap() - v["run"]["nopm"].as_f64().unwrap()).abs();
    assert!(apart <= 4.0 * per_order + 1e-6, "{}", v["run"]);
    let names: Vec<&str> =
        v["run"]["transactions"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["new_order", "payment", "order_status", "delivery", "stock_level"]);
    assert!(v["disclaimer"].as_str().unwrap().contains("not TPC-C compliant"));
    assert_eq!(v["partial"], false);
}

#[test]
fn tpcc_on_sqlite_reports_nopm_and_passes_the_consistency_checks() {
    let dir = tempdir();
    let db = dir.path().join("db");
    let v = tpcc(&["--database", "sqlite", "--dir", db.to_str().unwrap()]);
    assert_good(&v, "sqlite");
    assert_eq!(v["engine"]["settings"][0]["value"], "wal");
    assert_eq!(v["build"]["rows"][0]["rows"], 10_000, "items");
    assert!(!db.exists(), "the database directory is removed after the run");
}

#[test]
fn a_db_dir_iolab_did_not_make_is_refused_and_left_alone() {
    let dir = tempdir();
    std::fs::write(dir.path().join("mine"), b"data").unwrap();
    let out = iolab().args(["db", "tpcc", "--dir", dir.path().to_str().unwrap()]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("a directory iolab did not make"));
    assert!(dir.path().join("mine").exists());
}

/// Why the PostgreSQL tests cannot run here, if they cannot.
pub(crate) fn postgres_missing() -> Option<String> {
    if !is_root() {
        return Some("not root (the tests run the server as the 'postgres' account, as CI does)".into());
    }
    let found = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .any(|e| e.path().join("bin/initdb").is_file())
        || Command::new("pg_config")
            .arg("--bindir")
            .output()
            .is_ok_and(|o| Path::new(String::from_utf8_lossy(&o.stdout).trim()).join("initdb").is_file());
    if !found {
        return Some("PostgreSQL's server programs are not installed (apt-get install postgresql)".into());
    }
    None
}

/// A directory in /tmp that the `postgres` account can pass through (the target dir's may not let it).
pub(crate) fn pg_tempdir() -> tempfile::TempDir {
    let d = tempfile::Builder::new().prefix("iolab-pg-").tempdir_in("/tmp").unwrap();
    std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    d
}

/// Processes whose command line mentions `dir` (a server started in it).
fn processes_in(dir: &Path) -> Vec<String> {
    let needle = dir.to_string_lossy().into_owned();
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().chars().all(|c| c.is_ascii_digit()))
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| c.contains(&needle) && c.contains("postgres"))
        .collect()
}

/// Nothing of a private server in `parent`/db: no process, no socket, no directory.
pub(crate) fn assert_nothing_left(parent: &Path, db: &Path) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !processes_in(db).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(processes_in(db), Vec::<String>::new(), "server processes left");
    assert!(!db.exists(), "{} left", db.display());
    let left: Vec<PathBuf> = std::fs::read_dir(parent).unwrap().flatten().map(|e| e.path()).collect();
    assert!(left.is_empty(), "left in {}: {left:?}", parent.display());
}

#[test]
fn tpcc_on_a_private_postgres_passes_and_leaves_nothing_behind() {
    if let Some(why) = postgres_missing() {
        return iolab_testkit::skip(why);
    }
    let t = pg_tempdir();
    let db = t.path().join("db");
    let v = tpcc(&["--database", "postgres", "--dir", db.to_str().unwrap()]);
    assert_good(&v, "postgres");
    assert!(v["engine"]["server_user"].as_str().unwrap().starts_with("postgres (uid"), "{}", v["engine"]);
    assert!(v["engine"]["version"].as_str().unwrap().starts_with("PostgreSQL "));
    assert_nothing_left(t.path(), &db);
}

/// Starts `iolab db tpcc --database postgres` in the background, its stderr to a file, saving into the
/// tests' catalog (never the user's).
fn spawn_postgres(t: &Path, db: &Path, duration: &str) -> Child {
    let err = std::fs::File::create(t.join("stderr")).unwrap();
    let mut args: Vec<&str> = SMALL.to_vec();
    args[9] = duration;
    Command::new(assert_cmd::cargo::cargo_bin("iolab"))
        .env("IOLAB_DB", crate::util::shared_catalog())
        .args(["db", "tpcc", "--database", "postgres", "--dir", db.to_str().unwrap(), "--json"])
        .arg(t.join("out.json"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(err)
        .spawn()
        .unwrap()
}

fn wait_for_stderr(t: &Path, text: &str, child: &mut Child) {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let err = std::fs::read_to_string(t.join("stderr")).unwrap_or_default();
        if err.contains(text) {
            return;
        }
        if let Ok(Some(s)) = child.try_wait() {
            panic!("iolab exited ({s}) before '{text}': {err}");
        }
        assert!(Instant::now() < deadline, "no '{text}' in: {err}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn sigterm_and_wait(child: &mut Child) -> Option<i32> {
    // SAFETY: kill(2) with a pid we spawned and have not yet reaped, so it cannot name another process.
    assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) }, 0);
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return s.code();
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("iolab did not exit within 60 s of SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn sigterm_during_a_postgres_run_keeps_the_partial_result_and_leaves_nothing_behind() {
    if let Some(why) = postgres_missing() {
        return iolab_testkit::skip(why);
    }
    let t = pg_tempdir();
    let work = tempdir();
    let db = t.path().join("db");
    let mut child = spawn_postgres(work.path(), &db, "60s");
    wait_for_stderr(work.path(), "running 2 users", &mut child);
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(sigterm_and_wait(&mut child), Some(130));
    let v: Value =
        serde_json::from_str(&std::fs::read_to_string(work.path().join("out.json")).unwrap()).unwrap();
    assert_eq!(v["partial"], true);
    assert!(v["run"]["measured_s"].as_f64().unwrap() < 30.0);
    for c in v["consistency"].as_array().unwrap() {
        assert_eq!(c["passed"], true, "{c}");
    }
    assert_nothing_left(t.path(), &db);
}

/// The postmaster iolab `iolab` started: its child whose command is `postgres` (it leads the server's
/// process group).
fn postmaster_of(iolab: u32) -> Option<i32> {
    std::fs::read_dir("/proc").ok()?.flatten().find_map(|e| {
        let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
        let (head, tail) = stat.rsplit_once(')')?;
        let ppid: u32 = tail.split_whitespace().nth(1)?.parse().ok()?;
        (ppid == iolab && head.ends_with("(postgres")).then(|| e.file_name().to_str()?.parse().ok())?
    })
}

#[test]
fn one_sigterm_ends_a_run_whose_server_stopped_answering() {
    if let Some(why) = postgres_missing() {
        return iolab_testkit::skip(why);
    }
    let t = pg_tempdir();
    let work = tempdir();
    let db = t.path().join("db");
    let mut child = spawn_postgres(work.path(), &db, "60s");
    wait_for_stderr(work.path(), "running 2 users", &mut child);
    std::thread::sleep(Duration::from_millis(1000));
    let postmaster = postmaster_of(child.id()).expect("the postmaster is iolab's child");
    // The whole server stops answering: its queries and the window's edge reads block.
    // SAFETY: kill(2) on the process group the postmaster (iolab's live child) leads.
    assert_eq!(unsafe { libc::kill(-postmaster, libc::SIGSTOP) }, 0);
    std::thread::sleep(Duration::from_millis(500));
    let code = sigterm_and_wait(&mut child);
    if Path::new(&format!("/proc/{postmaster}")).exists() {
        // SAFETY: as above: what is left of the server's group is continued, so it does not linger stopped.
        unsafe { libc::kill(-postmaster, libc::SIGCONT) };
    }
    assert_eq!(code, Some(130), "{}", std::fs::read_to_string(work.path().join("stderr")).unwrap());
    let err = std::fs::read_to_string(work.path().join("stderr")).unwrap();
    assert!(err.contains("did not stop within"), "{err}");
    assert_nothing_left(t.path(), &db);
}

#[test]
fn sigterm_during_a_postgres_build_exits_130_and_leaves_nothing_behind() {
    if let Some(why) = postgres_missing() {
        return iolab_testkit::skip(format_args!(
            "sigterm_during_a_postgres_build_exits_130_and_leaves_nothing_behind: {why}"
        ));
    }
    let t = pg_tempdir();
    let work = tempdir();
    let db = t.path().join("db");
    let mut child = spawn_postgres(work.path(), &db, "60s");
    wait_for_stderr(work.path(), "building 1 warehouse", &mut child);
    assert_eq!(sigterm_and_wait(&mut child), Some(130));
    assert!(!work.path().join("out.json").exists(), "no result from an interrupted build");
    assert_nothing_left(t.path(), &db);
}

/// `iolab db tpch --refresh --streams 2` at the smallest scale: the text shows the power test's refresh
/// pair, both query streams (their times and a column each), the refresh stream's pairs and the derived
/// figures under their disclaimer; the document has the same.
#[test]
fn tpch_with_refresh_and_two_streams_reports_every_stream_and_the_derived_figures() {
    let t = tempdir();
    let json = t.path().join("tpch.json");
    let out = iolab()
        .args(["db", "tpch", "--scale", "0.01", "--refresh", "--streams", "2", "--warm", "--seed", "3"])
        .args(["--json", json.to_str().unwrap()])
        .output()
        .expect("spawn");
    assert_eq!(out.status.code(), Some(0), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    for want in [
        "refresh RF1 (pair 1)",
        "refresh RF2 (pair 1)",
        "throughput test: 2 query streams at once and a refresh stream",
        "stream 1:",
        "stream 2:",
        "refresh RF1 (pair 3)",
        "Power@Size",
        "Throughput@Size",
        "QphH@Size",
        "derived from TPC-H, not comparable with published TPC results",
    ] {
        assert!(text.contains(want), "{want:?} in\n{text}");
    }
    let v: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let streams = v["throughput"]["query_streams"].as_array().unwrap();
    assert_eq!(streams.len(), 2);
    assert!(streams.iter().all(|s| s["queries"].as_array().unwrap().len() == 22));
    assert_eq!(v["throughput"]["refresh"].as_array().unwrap().len(), 4, "RF1 and RF2 of pairs 2 and 3");
    assert!(v["derived"]["qphh_at_size"].as_f64().unwrap() > 0.0);
}

/// Issue 36, item 9: a database kept with `--keep` is checked again as it was left (`iolab db check`):
/// SQLite's integrity check and the four TPC-C conditions pass (exit 0); a year-to-date total changed behind
/// the database's back fails condition 1 (exit 1), and nothing in the directory is removed; a directory
/// with no kept database, or one iolab did not make, is refused (exit 2).
#[test]
fn db_check_checks_a_kept_sqlite_database_and_fails_a_broken_one() {
    let t = tempdir();
    let db = t.path().join("kept");
    let dir = db.to_str().unwrap();
    let out =
        iolab().args(["db", "tpcc", "--dir", dir, "--keep", "--no-save", "-q"]).args(SMALL).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let check = |args: &[&str]| iolab().args(["db", "check", "--dir"]).args(args).output().unwrap();
    let out = check(&[dir, "--json", "-", "-q"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (v["engine"].as_str(), v["workload"].as_str(), v["passed"].as_bool()),
        (Some("sqlite"), Some("tpcc"), Some(true))
    );
    let conditions: Vec<u64> =
        v["checks"].as_array().unwrap().iter().map(|c| c["condition"].as_u64().unwrap()).collect();
    assert_eq!(conditions, [0, 1, 2, 3, 4]);
    let conn = rusqlite::Connection::open(db.join("tpcc.sqlite")).unwrap();
    conn.execute("UPDATE warehouse SET w_ytd = w_ytd + 1 WHERE w_id = 1", []).unwrap();
    drop(conn);
    let out = check(&[dir]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("1 FAIL (1 violations): W_YTD") && text.contains("consistency FAIL"), "{text}");
    assert!(db.join("tpcc.sqlite").is_file(), "the kept database is left in place");
    let missing = t.path().join("never-made");
    let out = check(&[missing.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("there is no kept database to check"));
    let foreign = t.path().join("not-iolabs");
    std::fs::create_dir(&foreign).unwrap();
    std::fs::write(foreign.join("tpcc.sqlite"), b"someone's").unwrap();
    let out = check(&[foreign.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(std::fs::read(foreign.join("tpcc.sqlite")).unwrap(), b"someone's");
}

/// The crash test `db check` is for: iolab killed with SIGKILL in the middle of a PostgreSQL run kept with
/// `--keep` (its server gets SIGQUIT: an immediate shutdown, no checkpoint); `db check` starts the server on
/// the data as left, says that it recovered, and the four conditions pass.
#[test]
fn db_check_after_a_kill_9_recovers_the_postgres_database_and_passes() {
    if let Some(why) = postgres_missing() {
        return iolab_testkit::skip(why);
    }
    let t = pg_tempdir();
    let db = t.path().join("db");
    let err = std::fs::File::create(t.path().join("stderr")).unwrap();
    let mut args: Vec<&str> = SMALL.to_vec();
    args[9] = "60s";
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("iolab"))
        .env("IOLAB_DB", crate::util::shared_catalog())
        .args(["db", "tpcc", "--database", "postgres", "--keep", "--no-save", "--dir", db.to_str().unwrap()])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(err)
        .spawn()
        .unwrap();
    wait_for_stderr(t.path(), "running 2 users", &mut child);
    std::thread::sleep(Duration::from_secs(2));
    child.kill().unwrap();
    child.wait().unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while !processes_in(&db).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let out =
        iolab().args(["db", "check", "--dir", db.to_str().unwrap(), "--json", "-", "-q"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((v["engine"].as_str(), v["passed"].as_bool()), (Some("postgres"), Some(true)), "{v}");
    assert!(v["recovered"].as_str().is_some_and(|r| r.contains("crash recovery")), "{v}");
    assert_eq!(v["checks"].as_array().unwrap().len(), 4);
    assert!(processes_in(&db).is_empty(), "the check stopped its server");
}
