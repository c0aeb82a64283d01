//! Live progress: bars on a terminal only. Off a terminal stderr carries the existing one-line notices and
//! nothing decorative (no escape sequences, no carriage returns, no bars); with `-q` it carries nothing.
//! The terminal path runs under a pseudo-terminal made by `script(1)` (util-linux) and skips, printing
//! `skipped: <reason>`, where that is missing.

use crate::util::{iolab, tempdir, SIM};
use std::process::Command;

/// Asserts `stderr` has nothing a terminal would interpret and no bar.
pub(crate) fn assert_plain(what: &str, stderr: &str) {
    assert!(!stderr.contains('\x1b'), "{what}: escape sequence on stderr:\n{stderr:?}");
    assert!(!stderr.contains('\r'), "{what}: carriage return on stderr:\n{stderr:?}");
    for bar in ["fill [", "ramp [", "measure [", "sweep ["] {
        assert!(!stderr.contains(bar), "{what}: a '{bar}' bar on stderr:\n{stderr}");
    }
}

#[test]
fn progress_not_a_terminal_prints_only_the_existing_notices() {
    let dir = tempdir();
    let file = dir.path().join("f.dat");
    let file = file.to_str().expect("a UTF-8 temporary path");
    let out = iolab()
        .args(["run", "--target", file, "--size", "8M", "--duration", "1s", "--ramp", "200ms", "--buffered"])
        .args(["--json", "-"])
        .output()
        .expect("spawn iolab");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "stderr: {stderr}");
    assert_plain("iolab run", &stderr);
    assert!(stderr.contains("iolab: creating '"), "the fill notice is kept:\n{stderr}");
    for line in stderr.lines().filter(|l| !l.is_empty()) {
        assert!(line.starts_with("iolab: "), "only one-line notices, found {line:?} in:\n{stderr}");
    }
}

#[test]
fn progress_not_a_terminal_sweep_prints_nothing_decorative() {
    let out = iolab()
        .arg("sweep")
        .args(SIM)
        .args(["--qd", "1,2", "--duration", "1s", "--json", "-"])
        .output()
        .expect("spawn iolab");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "stderr: {stderr}");
    assert_plain("iolab sweep", &stderr);
    for line in stderr.lines().filter(|l| !l.is_empty()) {
        assert!(line.starts_with("iolab: "), "only one-line notices, found {line:?} in:\n{stderr}");
        assert!(
            !line.contains("point") && !line.contains("ETA"),
            "no sweep progress off a terminal:\n{stderr}"
        );
    }
}

#[test]
fn progress_quiet_prints_nothing_on_stderr() {
    let dir = tempdir();
    let file = dir.path().join("f.dat");
    let file = file.to_str().expect("a UTF-8 temporary path");
    let out = iolab()
        .args([
            "run",
            "--target",
            file,
            "--size",
            "8M",
            "--duration",
            "1s",
            "--ramp",
            "0",
            "--buffered",
            "-q",
        ])
        .output()
        .expect("spawn iolab");
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&out.stderr), "", "-q prints nothing on stderr");
}

/// Runs `iolab ARGS` under a pseudo-terminal; `None` (with a `skipped:` line) when `script` is missing.
pub(crate) fn on_a_terminal(args: &[&str]) -> Option<String> {
    let quote = |s: &str| format!("'{}'", s.replace('\'', r"'\''"));
    let mut line = quote(env!("CARGO_BIN_EXE_iolab"));
    for a in args {
        line.push(' ');
        line.push_str(&quote(a));
    }
    // -q: no "Script started" banner; -e: iolab's exit code; -f: flush as it comes; -c: the command.
    let out = match Command::new("script")
        .args(["-qefc", &line, "/dev/null"])
        .env("TERM", "xterm")
        .env("IOLAB_DB", crate::util::shared_catalog())
        .output()
    {
        Ok(out) => out,
        Err(e) => {
            iolab_testkit::skip(format_args!(
                "script(1) is not available ({e}); the terminal path is untested here"
            ));
            return None;
        }
    };
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(0), "iolab {} under script failed:\n{text}", args.join(" "));
    Some(text)
}

#[test]
fn progress_on_a_terminal_shows_fill_ramp_and_measure_bars_then_clears_them() {
    let dir = tempdir();
    let file = dir.path().join("f.dat");
    let file = file.to_str().expect("a UTF-8 temporary path");
    let args = ["run", "--target", file, "--size", "64M", "--duration", "2s", "--ramp", "1s", "--buffered"];
    let Some(text) = on_a_terminal(&args) else { return };
    for bar in ["fill [", "ramp [", "measure ["] {
        assert!(text.contains(bar), "no '{bar}' bar on the terminal:\n{text}");
    }
    assert!(text.contains("warm-up, not measured"), "{text}");
    assert!(text.contains(" left"), "the measure bar shows the time left:\n{text}");
    assert!(text.contains(" IOPS  ") && text.contains(" MB/s  ") && text.contains("p99 "), "{text}");
    // The bars are cleared (erase line) before the result is printed: after the last erase, no bar.
    let result = text.find("iolab 0.1").unwrap_or_else(|| panic!("no result text:\n{text}"));
    let last_erase =
        text[..result].rfind("\x1b[2K").unwrap_or_else(|| panic!("bars never erased:\n{text:?}"));
    let after = &text[last_erase..result];
    assert!(!after.contains(" ["), "a bar is left above the result:\n{after:?}");
}

#[test]
fn progress_on_a_terminal_sweep_shows_the_overall_bar() {
    let args = ["sweep", "--target", "sim:fixed,latency=100us,servers=8", "--seed", "1"];
    let Some(text) =
        on_a_terminal(&[&args[..], &["--qd", "1,2", "--duration", "1s", "--ramp", "0"]].concat())
    else {
        return;
    };
    assert!(text.contains("sweep ["), "no overall bar:\n{text}");
    assert!(text.contains("point 1/2: qd=1") && text.contains("point 2/2: qd=2"), "{text}");
    assert!(text.contains(" elapsed · ETA "), "{text}");
    assert!(text.contains("measure ["), "no per-run bar under the overall bar:\n{text}");
}
