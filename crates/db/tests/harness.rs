//! The harness as a library, with a workload of the test's own on SQLite: it runs the steps in order and
//! tells the observer the points and windows; it removes what it made on success, on a workload's error and
//! on a stop, and keeps it with `keep`; a sweep stops at the point where the stop flag went up; its paths
//! are claimed in the caller's write gate before anything is made.

use iolab_db::harness::{DatabaseKind, Setup};
use iolab_db::workload::{Context, StorageSettings, UsersPoint, Workload, WorkloadObserver};
use iolab_db::{Harness, WorkloadError};
use iolab_device::WriteGate;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// What the workload and the observer saw, in order.
#[derive(Default)]
struct Log(Mutex<Vec<String>>);

impl Log {
    fn push(&self, s: impl Into<String>) {
        self.0.lock().unwrap().push(s.into());
    }
    fn lines(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }
}

impl WorkloadObserver for Log {
    fn notice(&self, _: &str) {}
    fn window(&self, open: bool) {
        self.push(if open { "window open" } else { "window closed" });
    }
    fn point(&self, index: usize, count: usize, users: u32) {
        self.push(format!("point {index}/{count} at {users}"));
    }
}

/// A workload of one table: each point inserts `users` rows in its window; it fails or raises the stop flag
/// where told.
struct Rows<'a> {
    users: Vec<u32>,
    fail_in_run: Option<usize>,
    stop_after: Option<(usize, &'a AtomicBool)>,
    log: &'a Log,
    dir: Option<PathBuf>,
}

impl Workload for Rows<'_> {
    type Document = (usize, Option<PathBuf>);

    fn name(&self) -> &'static str {
        "rows"
    }
    fn seed(&self) -> u64 {
        1
    }
    fn connections(&self) -> u32 {
        4
    }
    fn users(&self) -> Vec<u32> {
        self.users.clone()
    }
    fn build(&mut self, cx: &Context<'_>) -> Result<(), WorkloadError> {
        self.log.push("build");
        self.dir = cx.database.dir().map(Path::to_path_buf);
        cx.database.connect()?.batch("CREATE TABLE t (n INTEGER)")?;
        Ok(())
    }
    fn run(&mut self, cx: &Context<'_>, p: UsersPoint) -> Result<(), WorkloadError> {
        self.log.push(format!("run {}", p.index));
        if self.fail_in_run == Some(p.index) {
            return Err(WorkloadError::Setup("the test's failure".into()));
        }
        cx.observer.window(true);
        let mut conn = cx.database.connect()?;
        for n in 0..p.users {
            conn.execute("INSERT INTO t VALUES ($1)", &[i64::from(n).into()])?;
        }
        cx.observer.window(false);
        if let Some((at, stop)) = self.stop_after {
            if at == p.index {
                stop.store(true, Ordering::Relaxed);
            }
        }
        Ok(())
    }
    fn check(&mut self, _: &Context<'_>, p: UsersPoint) -> Result<(), WorkloadError> {
        self.log.push(format!("check {}", p.index));
        Ok(())
    }
    fn document(&mut self, cx: &Context<'_>, _: &StorageSettings) -> Result<Self::Document, WorkloadError> {
        self.log.push("document");
        let rows = cx.database.connect()?.query("SELECT count(*) FROM t", &[])?;
        Ok((rows.len(), self.dir.clone()))
    }
    fn cleanup(&mut self, _: &Context<'_>) -> Result<(), WorkloadError> {
        self.log.push("cleanup");
        Ok(())
    }
}

fn workload<'a>(log: &'a Log, users: &[u32]) -> Rows<'a> {
    Rows { users: users.to_vec(), fail_in_run: None, stop_after: None, log, dir: None }
}

fn setup(dir: &Path, keep: bool) -> Setup {
    let mut s = Setup::new(DatabaseKind::Sqlite);
    s.dir = Some(dir.display().to_string());
    s.keep = keep;
    s
}

fn run(
    s: Setup,
    w: Rows<'_>,
    stop: &AtomicBool,
    log: &Log,
) -> Result<(usize, Option<PathBuf>), WorkloadError> {
    let harness = Harness::claim(s, &w, &mut WriteGate::new())?;
    harness.run(w, log, stop).map(|ran| ran.document)
}

#[test]
fn the_steps_run_in_order_and_the_directory_goes_after() {
    let t = tempfile::tempdir().unwrap();
    let (log, stop) = (Log::default(), AtomicBool::new(false));
    let dir = t.path().join("db");
    let (_, seen) = run(setup(&dir, false), workload(&log, &[3]), &stop, &log).unwrap();
    assert_eq!(seen.as_deref(), Some(std::path::absolute(&dir).unwrap().as_path()));
    let expected = [
        "build",
        "point 0/1 at 3",
        "run 0",
        "window open",
        "window closed",
        "check 0",
        "document",
        "cleanup",
    ];
    assert_eq!(log.lines(), expected);
    assert!(!dir.exists(), "the database's directory is removed after the run");
}

#[test]
fn keep_leaves_the_directory_and_its_database() {
    let t = tempfile::tempdir().unwrap();
    let (log, stop) = (Log::default(), AtomicBool::new(false));
    let dir = t.path().join("db");
    run(setup(&dir, true), workload(&log, &[1]), &stop, &log).unwrap();
    assert!(dir.join(iolab_db::database::sqlite::FILE_NAME).is_file());
    // iolab's own directory, made again by the next run.
    let log = Log::default();
    run(setup(&dir, false), workload(&log, &[1]), &stop, &log).unwrap();
    assert!(!dir.exists());
}

#[test]
fn a_workload_s_error_still_cleans_up_and_removes_everything() {
    let t = tempfile::tempdir().unwrap();
    let (log, stop) = (Log::default(), AtomicBool::new(false));
    let dir = t.path().join("db");
    let mut w = workload(&log, &[1, 2]);
    w.fail_in_run = Some(1);
    let e = run(setup(&dir, false), w, &stop, &log).unwrap_err();
    assert_eq!(e.to_string(), "the test's failure");
    assert_eq!(log.lines().last().map(String::as_str), Some("cleanup"));
    assert!(!log.lines().contains(&"document".to_string()));
    assert!(!dir.exists());
}

#[test]
fn a_stop_ends_a_sweep_after_its_point_and_a_stop_before_any_is_interrupted() {
    let t = tempfile::tempdir().unwrap();
    let (log, stop) = (Log::default(), AtomicBool::new(false));
    let mut w = workload(&log, &[1, 2, 4]);
    w.stop_after = Some((1, &stop));
    run(setup(&t.path().join("a"), false), w, &stop, &log).unwrap();
    let points: Vec<String> = log.lines().into_iter().filter(|l| l.starts_with("point")).collect();
    assert_eq!(points, ["point 0/3 at 1", "point 1/3 at 2"], "no point after the stop");
    let log = Log::default();
    let stopped = AtomicBool::new(true);
    let e = run(setup(&t.path().join("b"), false), workload(&log, &[1]), &stopped, &log).unwrap_err();
    assert!(matches!(e, WorkloadError::Interrupted), "{e}");
    assert_eq!(log.lines(), ["build", "cleanup"]);
    assert!(!t.path().join("b").exists());
}

#[test]
fn paths_are_claimed_before_anything_is_made() {
    let t = tempfile::tempdir().unwrap();
    let log = Log::default();
    let dir = t.path().join("db");
    let mut gate = WriteGate::new();
    // A directory that is not iolab's is refused, and left alone.
    std::fs::create_dir(t.path().join("theirs")).unwrap();
    std::fs::write(t.path().join("theirs/keep"), b"x").unwrap();
    let e =
        Harness::claim(setup(&t.path().join("theirs"), false), &workload(&log, &[1]), &mut gate).unwrap_err();
    assert!(matches!(e, WorkloadError::Setup(_)), "{e}");
    assert!(t.path().join("theirs/keep").exists());
    assert!(!dir.exists(), "nothing made");
    assert!(log.lines().is_empty());
}
