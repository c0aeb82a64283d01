//! iolab-testkit: what the tests of every crate share, and nothing a release build compiles (it is only
//! ever a dev-dependency).
//!
//! A test that needs something this machine lacks (root, a loop device, PostgreSQL's server programs,
//! Chromium, fio, a kernel feature) passes without checking anything. `cargo test` hides what a passing
//! test prints, so a skip written with `println!` is never seen and a machine without the part looks
//! tested. [`skip`] writes past the test harness's capture, straight to the process's standard error, in
//! one line that starts with `SKIP` and names the test (the harness names each test's thread after it), so
//! it shows in the `cargo test` output, and `.ci/run` lists every skip again at the end.

#![deny(missing_docs)]

use std::fmt::Display;
use std::io::Write;

/// Says on the terminal that the calling test skipped, and why (`SKIP db::tpcc_on_postgres: not root`).
/// Call it as the test's last expression: `return iolab_testkit::skip("needs root");`.
pub fn skip(why: impl Display) {
    let _ = writeln!(std::io::stderr().lock(), "{}", line(std::thread::current().name(), &why));
}

/// The line [`skip`] writes for the test on thread `name`.
fn line(name: Option<&str>, why: &dyn Display) -> String {
    match name.filter(|n| *n != "main") {
        Some(test) => format!("SKIP {test}: {why}"),
        None => format!("SKIP: {why}"),
    }
}

/// Set in the process [`in_own_process`] starts, so the test there runs its body.
const ALONE: &str = "IOLAB_TEST_IN_OWN_PROCESS";

/// For a test that changes its whole process (it joins a memory cgroup, whose limit would then hold every
/// test running beside it in the same test binary, and whose OOM kill would end them all): runs the test
/// named `test` (its path in the crate, `memlimit::tests::name`) again, alone, in a process of its own, and
/// returns false here once that passed (its `SKIP` lines passed on); returns true in that process, where the
/// test goes on with its body. `if !iolab_testkit::in_own_process("m::tests::t") { return; }`.
pub fn in_own_process(test: &str) -> bool {
    if std::env::var_os(ALONE).is_some() {
        return true;
    }
    let exe = std::env::current_exe().expect("the test binary's path");
    let out = std::process::Command::new(exe)
        .args(["--exact", test, "--test-threads=1", "--nocapture"])
        .env(ALONE, "1")
        .output()
        .expect("start the test binary again");
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    for skipped in stderr.lines().filter(|l| l.starts_with("SKIP")) {
        let _ = writeln!(std::io::stderr().lock(), "{skipped}");
    }
    let ran = stdout.contains("test result: ok. 1 passed");
    assert!(out.status.success() && ran, "{test}, run in a process of its own:\n{stdout}\n{stderr}");
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_names_the_test_from_its_thread() {
        assert_eq!(line(Some("db::tpcc"), &"not root"), "SKIP db::tpcc: not root");
        assert_eq!(line(None, &"no fio"), "SKIP: no fio");
        assert_eq!(line(Some("main"), &"no fio"), "SKIP: no fio");
        let name = std::thread::current().name().map(str::to_string);
        assert_eq!(name.as_deref(), Some("tests::the_line_names_the_test_from_its_thread"));
    }
}
