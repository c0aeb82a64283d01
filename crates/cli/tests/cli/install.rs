//! Issue 15, item 11: getting iolab onto a machine. Shell completions and man pages are generated from the
//! clap definitions, so they name every flag that exists (here: flags added late, like --metrics).

use crate::util::{iolab, tempdir};

#[test]
fn completions_and_man_pages_come_from_the_flags() {
    for shell in ["bash", "zsh", "fish"] {
        let out = iolab().args(["completions", shell]).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{shell}");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("metrics") && text.contains("import"), "{shell}: {text:.300}");
    }
    let out = iolab().arg("man").output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains(".TH iolab 1"));
    let dir = tempdir();
    let out = iolab().args(["man", "--dir", dir.path().to_str().unwrap()]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let run = std::fs::read_to_string(dir.path().join("iolab-run.1")).unwrap();
    assert!(run.contains(".TH iolab-run 1") && run.contains("metrics"), "{run:.300}");
    assert!(dir.path().join("iolab.1").exists());
    let out = iolab().args(["completions", "tcsh"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "an unknown shell is a usage error");
}

/// Issue 25, item 16.7: completions offer the values of --rw, --profile, --engine, --cache-mode and
/// --prealloc; parsing stays iolab's (an unknown value is its own message, not clap's list).
#[test]
fn completions_offer_values_that_iolab_still_parses_itself() {
    for shell in ["bash", "zsh", "fish"] {
        let out = iolab().args(["completions", shell]).output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        for value in ["randread", "exchange-2010", "io_uring", "write-back", "fallocate"] {
            assert!(text.contains(value), "{shell} completions lack '{value}'");
        }
    }
    let out = iolab().args(["run", "--rw", "randred", "--target", "mem:1M"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("invalid value 'randred' for '--rw': expected one of read, write"), "{stderr}");
    let out = iolab().args(["run", "--engine", "uring", "--target", "mem:1M", "--dry-run"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "an alias clap does not list still parses");
}

/// Issue 25, item 16.7: `--inject`'s help says what @N means.
#[test]
fn inject_help_says_at_n_is_every_nth_io() {
    let out = iolab().args(["run", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&out.stdout).split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(help.contains("eio@1000 fails every 1000th"), "{help}");
}
