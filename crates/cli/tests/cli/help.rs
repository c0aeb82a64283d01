//! Issue 37, item 7: help and man pages users can navigate. `iolab man --dir` named pages it never wrote
//! (`iolab-db-tpcc(1)`); fio's names that work were in no help; fio's flags got clap's guess at a similar
//! name (`--direct=1`: "a similar argument exists: '--inject'"); `--ioengine=libaio` was refused where a job
//! file's `ioengine=libaio` ran on io_uring; `-h` printed all 272 lines of `--help`.

use crate::util::{iolab, tempdir};
use std::collections::BTreeSet;

const SIM: &str = "sim:fixed,latency=100us,servers=8,size=1G";

fn stdout(args: &[&str]) -> String {
    let out = iolab().args(args).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `iolab run ARGS --dry-run` on the emulated device: (exit code, the resolved job, stderr).
fn dry_run(args: &[&str]) -> (Option<i32>, serde_json::Value, String) {
    let out = iolab()
        .args(["run", "--target", SIM, "--clock", "virtual", "--dry-run"])
        .args(args)
        .output()
        .unwrap();
    let v = serde_json::from_slice(&out.stdout).unwrap_or(serde_json::Value::Null);
    (out.status.code(), v, String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn man_pages_are_written_for_every_command_and_every_reference_resolves() {
    let dir = tempdir();
    let out = iolab().args(["man", "--dir", dir.path().to_str().unwrap()]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let written: BTreeSet<String> = crate::util::entries(dir.path()).into_iter().collect();
    for page in ["iolab-db-tpcc.1", "iolab-trace-capture.1", "iolab-profiles-derive.1", "iolab-import-fio.1"]
    {
        assert!(written.contains(page), "{page} not written: {written:?}");
    }
    let mut named = BTreeSet::new();
    for page in &written {
        let text = std::fs::read_to_string(dir.path().join(page)).unwrap().replace("\\-", "-");
        let mut rest = text.as_str();
        while let Some(at) = rest.find("iolab") {
            let word: String =
                rest[at..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '-').collect();
            if rest[at + word.len()..].starts_with("(1)") {
                named.insert((page.clone(), format!("{word}.1")));
            }
            rest = &rest[at + word.len().max(1)..];
        }
    }
    assert!(named.len() > 25, "the pages name {} others: {named:?}", named.len());
    let missing: Vec<_> = named.iter().filter(|(_, p)| !written.contains(p)).collect();
    assert!(missing.is_empty(), "pages named and not written (page, named): {missing:?}");
    assert!(!written.iter().any(|p| p.contains("-help")), "`iolab help X` is `iolab X --help`: {written:?}");
}

#[test]
fn fio_s_names_that_work_are_in_the_long_help() {
    let help = stdout(&["run", "--help"]);
    for fio in
        ["--iodepth", "--numjobs", "--runtime", "--blocksize", "--rwmixread", "--filename", "--ioengine"]
    {
        assert!(help.contains(fio), "run --help does not name fio's {fio}");
    }
    assert!(help.contains("[also: --iodepth (fio)]"), "{help}");
}

#[test]
fn fio_s_direct_and_buffered_get_iolab_s_answer() {
    let (code, v, stderr) = dry_run(&["--direct=1"]);
    assert_eq!((code, &v["plan"]["direct"]), (Some(0), &serde_json::json!(true)), "{stderr}");
    let (code, v, stderr) = dry_run(&["--direct=0"]);
    assert_eq!(
        (code, &v["plan"]["direct"]),
        (Some(0), &serde_json::json!(false)),
        "--direct=0 is --buffered: {stderr}"
    );
    let (code, _, stderr) = dry_run(&["--direct=2"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("'2'") && stderr.contains("--direct"), "{stderr}");
    for (typed, says) in
        [("--buffered=1", "iolab's is --buffered, with no value"), ("--buffered=0", "leave it out")]
    {
        let (code, _, stderr) = dry_run(&[typed]);
        assert_eq!(code, Some(2), "{typed}: {stderr}");
        assert!(stderr.contains(says) && !stderr.contains("similar"), "{typed}: {stderr}");
    }
}

#[test]
fn fio_s_flags_that_change_nothing_are_taken_with_a_note() {
    for (flag, note) in
        [("--time_based", "time-based already"), ("--group_reporting", "all workers together")]
    {
        let (code, _, stderr) = dry_run(&[flag]);
        assert_eq!(code, Some(0), "{flag}: {stderr}");
        assert!(stderr.contains(note), "{flag}: {stderr}");
    }
    let (code, v, stderr) = dry_run(&["--name", "oltp-nightly"]);
    assert_eq!((code, v["plan"]["name"].as_str()), (Some(0), Some("oltp-nightly")), "{stderr}");
}

#[test]
fn libaio_maps_to_io_uring_with_the_same_note_from_a_flag_and_from_a_job_file() {
    let note = "ioengine libaio is fio's: iolab has no libaio engine and runs the job on io_uring";
    let (code, v, stderr) = dry_run(&["--ioengine=libaio"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(v["plan"]["engine"], "io_uring", "{v:#}");
    assert!(stderr.contains(note), "{stderr}");
    let dir = tempdir();
    let job = dir.path().join("j.fio");
    std::fs::write(&job, "[j]\nioengine=libaio\nrw=randread\nbs=4k\niodepth=8\nruntime=1\n").unwrap();
    let out = iolab()
        .args(["run", job.to_str().unwrap(), "--target", SIM, "--clock", "virtual", "--dry-run"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains(note), "the job file's libaio: {stderr}");
}

#[test]
fn short_help_is_a_summary_and_long_help_the_whole_text() {
    let short = stdout(&["run", "-h"]);
    let long = stdout(&["run", "--help"]);
    assert!(short.lines().count() < 70, "run -h has {} lines:\n{short}", short.lines().count());
    assert!(long.lines().count() > 3 * short.lines().count(), "run --help is the whole text");
    assert!(short.contains("--target") && short.contains("--qd") && !short.contains("--cache-policy"));
    assert!(short.contains("--help: every flag"), "-h says where the rest is: {short}");
    assert!(long.contains("--cache-policy"));
    for cmd in [&["sweep"][..], &["replay"], &["db", "tpcc"], &["mrc"]] {
        let short = stdout(&[cmd, &["-h"]].concat());
        assert!(short.lines().count() < 90, "{cmd:?} -h has {} lines", short.lines().count());
    }
}

#[test]
fn db_tpcc_s_help_and_usage_say_what_it_takes() {
    let help = stdout(&["db", "tpcc", "--help"]);
    let usage = help.lines().find(|l| l.starts_with("Usage:")).unwrap();
    assert!(!usage.contains("--dir"), "--dir is not required: {usage}");
    assert!(!help.contains("--dry-run"), "db tpcc has no --dry-run, so its help names none: {help}");
    let out = iolab().args(["db", "tpcc", "--dry-run"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn runs_kind_help_lists_every_kind_the_catalog_keeps() {
    let help = stdout(&["runs", "--help"]).split_whitespace().collect::<Vec<_>>().join(" ");
    for kind in ["run", "sweep", "find-max", "db-sweep", "db-tpch", "db-copy", "db-ycsb", "verify"] {
        assert!(help.contains(&format!("{kind} (")), "runs --help lacks kind {kind}: {help}");
    }
}
