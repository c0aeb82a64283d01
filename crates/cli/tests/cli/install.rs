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
