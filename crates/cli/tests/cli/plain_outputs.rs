//! Issue 37, item 8: outputs that said less, or other, than what happened. `iolab runs` listed a 3-trial
//! sweep by its first trial (42,433 IOPS where its table's mean is 33,048.7); "1 users"; `mrc` said "55
//! points" and printed 24; Markdown counts without thousands separators; "r imax" unexplained; `report`
//! silent when it wrote a file.

use crate::util::{iolab, tempdir};
use std::path::Path;

/// `iolab ARGS` in `dir`, which must succeed: (stdout, stderr).
fn ok(dir: &Path, args: &[&str]) -> (String, String) {
    let out = iolab().current_dir(dir).args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
    (String::from_utf8_lossy(&out.stdout).into_owned(), stderr)
}

#[test]
fn runs_lists_a_sweep_with_trials_by_its_best_point_s_mean() {
    let dir = tempdir();
    let d = dir.path();
    let sweep =
        ["sweep", "--target", "sim:ssd", "--clock", "virtual", "--seed", "1", "-d", "1s", "--ramp", "0"];
    let more = ["--rw", "randrw", "--qd", "1,8", "--trials", "3", "--db", "c.db", "--json", "s.json", "-q"];
    ok(d, &[&sweep[..], &more].concat());
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("s.json")).unwrap()).unwrap();
    let best = s["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["summary"]["iops"]["mean"].as_f64().unwrap())
        .fold(0.0, f64::max);
    let first_trials: Vec<f64> = s["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["result"]["total"]["all"]["iops"].as_f64().unwrap())
        .collect();
    assert!(!first_trials.contains(&best), "the trials differ, so the mean is no trial's: {first_trials:?}");
    let (list, _) = ok(d, &["runs", "--db", "c.db", "--json"]);
    let rows: serde_json::Value = serde_json::from_str(&list).unwrap();
    assert_eq!(rows[0]["iops"].as_f64(), Some(best), "{rows:#}");
    let (text, _) = ok(d, &["runs", "--db", "c.db"]);
    let shown = iolab_report::format_rate(best, 1);
    assert!(text.contains(&shown) && text.contains("mean of 3 trials"), "expected {shown}:\n{text}");
}

#[test]
fn one_user_is_one_user() {
    let dir = tempdir();
    let job = "ramp = \"0s\"\n[users]\ncount = 1\nmode = \"stress\"\n[[transaction]]\nname = \"read\"\nsteps = [{ rw = \"randread\", bs = \"4k\" }]\n";
    std::fs::write(dir.path().join("job.toml"), job).unwrap();
    let sim = ["--target", "sim:fixed,latency=1ms,servers=4", "--clock", "virtual", "--seed", "1"];
    let (text, _) = ok(dir.path(), &[&["run", "job.toml", "-d", "2s", "--no-save"][..], &sim].concat());
    assert!(text.contains("1 user,"), "{text}");
    assert!(!text.contains("1 users"), "{text}");
    let out = iolab()
        .current_dir(dir.path())
        .args(["run", "job.toml", "-w", "2", "--dry-run"])
        .args(sim)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("2 workers for 1 user ("), "{stderr}");
}

#[test]
fn mrc_says_how_many_of_its_points_it_prints() {
    let dir = tempdir();
    let log = dir.path().join("ops.log");
    let records =
        "/dev/sdb read 0 8192\n/dev/sdb read 4096 4096\n/dev/sdb write 0 4096\n/dev/sdb read 12288 4096\n";
    std::fs::write(
        &log,
        format!("fio version 2 iolog\n/dev/sdb add\n/dev/sdb open\n{records}/dev/sdb close\n"),
    )
    .unwrap();
    let sizes: Vec<String> = (1..=30).map(|n| n.to_string()).collect();
    let args = ["mrc", log.to_str().unwrap(), "--objects", "request", "--exact", "--sizes", &sizes.join(",")];
    let (text, _) = ok(dir.path(), &args);
    let rows =
        text.lines().filter(|l| l.ends_with(|c: char| c.is_ascii_digit()) && l.contains("object")).count();
    assert!(text.contains("30 points"), "{text}");
    assert!(text.contains(&format!("({rows} of 30 points shown")), "{rows} rows printed:\n{text}");
    assert!(text.contains("\n1 object ") && !text.contains("\n1 objects"), "{text}");
}

#[test]
fn markdown_counts_have_thousands_separators_and_report_says_where_it_wrote() {
    let dir = tempdir();
    let d = dir.path();
    let run = ["run", "--target", "sim:fixed,latency=100us,servers=8", "--clock", "virtual", "--seed", "1"];
    ok(d, &[&run[..], &["-d", "1s", "--ramp", "0", "--json", "r.json", "-q", "--no-save"]].concat());
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("r.json")).unwrap()).unwrap();
    let ops = r["total"]["all"]["ops"].as_u64().unwrap();
    assert!(ops >= 1000, "{ops} ops");
    let (_, stderr) = ok(d, &["report", "r.json", "-o", "r.md"]);
    let md = std::fs::read_to_string(d.join("r.md")).unwrap();
    let bytes = iolab_report::format_count(md.len() as u64);
    assert_eq!(stderr.trim(), format!("iolab: report written to r.md ({bytes} bytes)"));
    assert!(
        md.contains(&format!("| {} |", iolab_report::format_count(ops))),
        "{ops} as the text shows it:\n{md}"
    );
    assert!(!md.contains(&format!("| {ops} |")), "{md}");
    let (_, stderr) = ok(d, &["report", "r.json", "-o", "q.md", "-q"]);
    assert_eq!(stderr, "", "-q: nothing but errors");
    let (stdout, stderr) = ok(d, &["report", "r.json", "--format", "md"]);
    assert!(stdout.contains("| ops |") && stderr.is_empty(), "to stdout, nothing said: {stderr}");
}

#[test]
fn the_group_table_says_what_imax_is() {
    let dir = tempdir();
    let args =
        ["run", "--profile", "oltp", "--target", "data=sim:ssd", "--target", "log=sim:fixed,latency=50us"];
    let more = ["--clock", "virtual", "--seed", "3", "-d", "2s", "--no-save"];
    let (text, _) = ok(dir.path(), &[&args[..], &more].concat());
    assert!(text.contains("r imax"), "{text}");
    assert!(text.contains("(r imax, w imax: the largest mean response time of one interval"), "{text}");
}
