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
