//! Issue 28, item 6: database runs everywhere else. Two SQLite runs of `iolab db tpcc` (1 warehouse, 2,000
//! items, a 1 s window: about 3 s each in a debug build) are saved in a catalog of their own, listed by
//! `iolab runs` with their NOPM, shown as `iolab db` printed them, exported byte for byte, compared with each
//! other (and refused against an I/O run), and reported as HTML (checked in headless Chromium where it is
//! installed) and Markdown. A sweep over users builds once and runs each count, served on `--metrics` while
//! it goes on and drawn on a terminal (under `script(1)` where it is installed) as the build, ramp and
//! measure bars with NOPM beside them.

use crate::metrics::{free_port, sample, scrape};
use crate::util::{iolab, tempdir, SIM};
use serde_json::Value;
use std::path::Path;
use std::time::{Duration, Instant};

/// The flags of every run here: small and short.
const SMALL: [&str; 10] =
    ["--items", "2000", "--ramp", "0s", "--duration", "1s", "--seed", "7", "--warehouses", "1"];

/// Runs `iolab ARGS` in `dir`: (exit code, stdout, stderr).
fn run_in(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = iolab().current_dir(dir).args(args).output().expect("spawn iolab");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn ok(dir: &Path, args: &[&str]) -> String {
    let (code, stdout, stderr) = run_in(dir, args);
    assert_eq!(code, 0, "iolab {} failed: {stderr}", args.join(" "));
    stdout
}

/// The id `iolab: saved as ID in ...` names on stderr.
fn saved_id(stderr: &str) -> String {
    let line =
        stderr.lines().find(|l| l.starts_with("iolab: saved as ")).unwrap_or_else(|| panic!("{stderr}"));
    line["iolab: saved as ".len()..].split(' ').next().unwrap().to_string()
}

#[test]
fn db_runs_are_saved_listed_shown_exported_compared_and_reported() {
    let dir = tempdir();
    let d = dir.path();
    let mut ids = Vec::new();
    for (gen, users) in [("5", "1"), ("6", "2")] {
        let json = format!("gen{gen}.json");
        let tag = format!("gen={gen}");
        let mut args: Vec<&str> = vec!["db", "tpcc", "--dir", "db", "--users", users, "--db", "cat.db"];
        args.extend(SMALL);
        args.extend(["--tag", &tag, "--note", "gen story", "--json", &json]);
        let (code, _, stderr) = run_in(d, &args);
        assert_eq!(code, 0, "{stderr}");
        crate::progress::assert_plain("iolab db tpcc off a terminal", &stderr);
        ids.push(saved_id(&stderr));
    }
    // Listed, with NOPM as the headline.
    let list: Value =
        serde_json::from_str(&ok(d, &["runs", "--db", "cat.db", "--kind", "db", "--json"])).unwrap();
    let list = list.as_array().unwrap();
    assert_eq!(list.len(), 2);
    for e in list {
        assert_eq!(e["kind"], "db");
        assert_eq!(e["profile"], "tpcc sqlite");
        assert!(e["nopm"].as_f64().unwrap() > 0.0, "{e}");
        assert_eq!(e["note"], "gen story");
    }
    let table = ok(d, &["runs", "--db", "cat.db"]);
    assert!(table.lines().next().unwrap().contains("NOPM"), "{table}");
    // Shown as `iolab db` printed it; exported byte for byte.
    let show = ok(d, &["show", &ids[0], "--db", "cat.db"]);
    assert!(show.contains("NOPM ") && show.contains("consistency condition 4"), "{show}");
    assert!(show.contains(&format!("catalog {} · db ·", ids[0])), "{show}");
    let exported = ok(d, &["export", &ids[0], "--json", "--db", "cat.db"]);
    assert_eq!(exported, std::fs::read_to_string(d.join("gen5.json")).unwrap());
    let (code, _, stderr) = run_in(d, &["export", &ids[0], "--csv", "--db", "cat.db"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("is a database run") && stderr.contains("--json"), "{stderr}");

    // Compared: by tag, as the seed's Gen 5 and Gen 6.
    let c: Value =
        serde_json::from_str(&ok(d, &["compare", "tag:gen=5", "tag:gen=6", "--db", "cat.db", "--json", "-"]))
            .unwrap();
    assert_eq!(c["kind"], "db");
    let metrics = c["units"][0]["metrics"].as_array().unwrap();
    let keys: Vec<&str> = metrics.iter().map(|m| m["key"].as_str().unwrap()).collect();
    for want in ["nopm", "tpm", "txn.new_order.per_minute", "txn.new_order.p95", "txn.payment.p99"] {
        assert!(keys.contains(&want), "{want} in {keys:?}");
    }
    let gen5: Value = serde_json::from_str(&std::fs::read_to_string(d.join("gen5.json")).unwrap()).unwrap();
    if gen5["devices"].as_array().is_some_and(|a| !a.is_empty()) {
        assert!(keys.iter().any(|k| k.starts_with("device.")), "the device view compared: {keys:?}");
    }
    let nopm = &metrics[0];
    assert_eq!(nopm["label"], "NOPM");
    assert!(nopm["changes"][0]["phrase"].as_str().unwrap().starts_with("NOPM "), "{nopm}");
    let text = ok(d, &["compare", &ids[0], "gen6.json", "--db", "cat.db"]);
    assert!(text.contains("B vs A: NOPM ") && text.contains("not TPC-C compliant"), "{text}");
    // An I/O run is refused, naming both.
    ok(
        d,
        &[&["run"][..], &SIM, &["-d", "1s", "--ramp", "0", "--json", "io.json", "-q", "--no-save"]].concat(),
    );
    let (code, _, stderr) = run_in(d, &["compare", "gen5.json", "io.json"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("'gen5.json' (a database run, iolab db)")
            && stderr.contains("'io.json' (an I/O run)")
    );

    // Reported: both runs, from the catalog.
    ok(d, &["report", &ids[0], &ids[1], "--db", "cat.db", "-o", "db.html"]);
    let html = std::fs::read_to_string(d.join("db.html")).unwrap();
    for want in [
        "Database runs side by side",
        "Database run: ",
        ">NOPM<",
        "not TPC-C compliant",
        "W_YTD = sum(D_YTD)",
    ] {
        assert!(html.contains(want), "{want} in the report");
    }
    let md = ok(d, &["report", "gen5.json", "gen6.json", "--format", "md"]);
    assert!(
        md.contains("### Database runs side by side") && md.contains("| transaction | committed |"),
        "{md}"
    );
    let charts = html.matches("<figure class=\"chart").count();
    // 3 bars and the overlaid percentiles, then per run its transaction bars and curves, its NOPM over time
    // and, with a device view, its devices and, where a read or write mean has two intervals or more (a
    // line, not a lone marker), their latency over time.
    let per_run = |name: &str| {
        let v: Value = serde_json::from_str(&std::fs::read_to_string(d.join(name)).unwrap()).unwrap();
        let devices = v["devices"].as_array().is_some_and(|a| !a.is_empty());
        let intervals = v["run"]["intervals"]["intervals"].as_array().cloned().unwrap_or_default();
        let line = |k: &str| intervals.iter().filter(|i| i[k].is_number()).count() >= 2;
        let latency =
            v["run"]["intervals"]["device"].is_string() && (line("read_mean_ms") || line("write_mean_ms"));
        3 + usize::from(devices) + usize::from(latency)
    };
    assert_eq!(charts, 4 + per_run("gen5.json") + per_run("gen6.json"), "charts in the report");
    match crate::report::chromium() {
        Some(bin) => crate::report::check_in_browser(&bin, d, &d.join("db.html"), charts),
        None => iolab_testkit::skip(format_args!(
            "chromium not installed; the db report is not checked in a browser"
        )),
    }
}

#[test]
fn db_sweep_over_users_builds_once_serves_metrics_and_draws_bars() {
    let dir = tempdir();
    let d = dir.path();
    let port = free_port();
    let addr = format!("127.0.0.1:{port}");
    let db = d.join("db");
    let json = d.join("sweep.json");
    let cat = d.join("cat.db");
    let args: Vec<&str> = [&["db", "tpcc", "--users", "1,2", "--metrics", &addr][..], &SMALL].concat();
    let mut args = args;
    let (db_s, json_s, cat_s) = (db.to_str().unwrap(), json.to_str().unwrap(), cat.to_str().unwrap());
    args.extend(["--dir", db_s, "--json", json_s, "--db", cat_s]);
    // Scrape while it runs: the first window's NOPM and a transaction counter.
    let scraper = std::thread::spawn(move || {
        let deadline = Instant::now() + Duration::from_secs(60);
        while Instant::now() < deadline {
            if let Some((_, body)) = scrape(port) {
                let nopm = sample(&body, "iolab_db_nopm{workload=\"tpcc\",engine=\"sqlite\"}");
                if nopm.is_some_and(|v| v > 0.0) {
                    return Some(body);
                }
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        None
    });
    match crate::progress::on_a_terminal(&args) {
        Some(text) => {
            for bar in ["build [", "measure [", "sweep ["] {
                assert!(text.contains(bar), "no '{bar}' bar on the terminal:\n{text}");
            }
            assert!(text.contains("NOPM ") && text.contains("  TPM "), "live NOPM and TPM:\n{text}");
        }
        None => {
            let (code, _, stderr) = run_in(d, &args);
            assert_eq!(code, 0, "{stderr}");
        }
    }
    let body = scraper.join().unwrap().expect("a scrape during the sweep saw NOPM");
    assert!(
        body.contains(
            "iolab_db_transactions_total{workload=\"tpcc\",engine=\"sqlite\",transaction=\"new_order\"}"
        ),
        "{body}"
    );
    assert!(sample(&body, "iolab_db_build_rows_total").is_some_and(|r| r > 100_000.0), "{body}");
    assert!(body.trim_end().ends_with("# EOF"), "{body}");

    let s: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(s["schema"], "iolab.dbsweep/1");
    assert_eq!(s["users"], serde_json::json!([1, 2]));
    let points = s["points"].as_array().unwrap();
    assert_eq!(points.iter().map(|p| p["users"].as_u64().unwrap()).collect::<Vec<_>>(), [1, 2]);
    for p in points {
        assert!(p["result"]["run"]["nopm"].as_f64().unwrap() > 0.0);
        assert!(p["result"]["consistency"].as_array().unwrap().iter().all(|c| c["passed"] == true));
        assert_eq!(p["result"]["config"]["users"], p["users"]);
    }
    // Built once: every point carries the one build.
    assert_eq!(points[0]["result"]["build"], points[1]["result"]["build"]);
    assert_eq!(s["knee"]["transaction"], "new_order");
    assert!(!db.exists(), "the database directory is removed");
    // Saved as a db sweep; shown with a row per user count; reported with NOPM against users.
    let list: Value = serde_json::from_str(&ok(d, &["runs", "--db", cat_s, "--json"])).unwrap();
    assert_eq!(list[0]["kind"], "db-sweep", "{list}");
    let id = list[0]["id"].as_str().unwrap().to_string();
    let show = ok(d, &["show", &id, "--db", cat_s]);
    assert!(show.contains("sweep over users 1, 2") && show.contains("knee (users;"), "{show}");
    let csv = ok(d, &["export", &id, "--csv", "--db", cat_s]);
    assert_eq!(csv.lines().count(), 3, "{csv}");
    ok(d, &["report", json_s, "-o", "sweep.html"]);
    let html = std::fs::read_to_string(d.join("sweep.html")).unwrap();
    assert!(
        html.contains("data-chart=\"db-sweep-nopm\"") && html.contains("data-chart=\"db-sweep-latency\"")
    );
}

#[test]
fn db_users_list_is_checked_before_anything_is_made() {
    let dir = tempdir();
    let d = dir.path();
    let (code, _, stderr) = run_in(d, &["db", "tpcc", "--dir", "db", "--users", "1,0", "--db", "cat.db"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("invalid value '0' for '--users'"), "{stderr}");
    let (code, _, stderr) = run_in(d, &["db", "tpcc", "--dir", "db", "--tag", "nokey", "--db", "cat.db"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("'nokey' for '--tag'"), "{stderr}");
    assert!(!d.join("db").exists() && !d.join("cat.db").exists(), "nothing made");
}

/// A private PostgreSQL server carries a sweep over users from start to end: sized for the most users,
/// consistent at every point, and gone afterwards. Root only (the server runs as `postgres`), as CI runs it.
#[test]
fn db_sweep_over_users_on_a_private_postgres_leaves_nothing_behind() {
    if let Some(why) = crate::db::postgres_missing() {
        return iolab_testkit::skip(why);
    }
    let t = crate::db::pg_tempdir();
    let db = t.path().join("db");
    let mut args = vec!["db", "tpcc", "--database", "postgres", "--users", "1,4", "--no-save", "--json", "-"];
    args.extend(SMALL);
    args.extend(["--dir", db.to_str().unwrap()]);
    let out = iolab().args(&args).output().expect("spawn");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let s: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(s["schema"], "iolab.dbsweep/1");
    let points = s["points"].as_array().unwrap();
    assert_eq!(points.len(), 2);
    for p in points {
        assert_eq!(p["result"]["engine"]["name"], "postgres");
        assert!(p["result"]["run"]["nopm"].as_f64().unwrap() > 0.0);
        assert!(p["result"]["consistency"].as_array().unwrap().iter().all(|c| c["passed"] == true));
    }
    crate::db::assert_nothing_left(t.path(), &db);
}

/// `iolab db tpch` and `iolab db copy` everywhere else: two small query sets (SQLite, SF 0.01, three
/// queries) and two copies (1 warehouse of 2,000 items) saved as kinds db-tpch and db-copy, listed with
/// their headlines, shown, exported, compared (each with its own kind; a tpch set against a copy is refused)
/// and reported as HTML (in headless Chromium where it is installed) and Markdown.
#[test]
fn tpch_and_copy_runs_are_saved_listed_shown_compared_and_reported() {
    let dir = tempdir();
    let d = dir.path();
    let mut tpch_ids = Vec::new();
    let mut copy_ids = Vec::new();
    for gen in ["5", "6"] {
        let (json, tag) = (format!("tpch{gen}.json"), format!("gen={gen}"));
        let args = ["db", "tpch", "--dir", "db", "--scale", "0.01", "--queries", "14,6,1", "--seed", "7"];
        let more = ["--db", "cat.db", "--tag", &tag, "--note", "tpch story", "--json", &json];
        let (code, _, stderr) = run_in(d, &[&args[..], &more].concat());
        assert_eq!(code, 0, "{stderr}");
        tpch_ids.push(saved_id(&stderr));
        let (json, tag) = (format!("copy{gen}.json"), format!("copy={gen}"));
        let args = ["db", "copy", "--dir", "db", "--to", "copy", "--items", "2000", "--seed", "7"];
        let more = ["--db", "cat.db", "--tag", &tag, "--json", &json];
        let (code, _, stderr) = run_in(d, &[&args[..], &more].concat());
        assert_eq!(code, 0, "{stderr}");
        copy_ids.push(saved_id(&stderr));
    }
    // Listed with their headlines: the query times, the copy's MB/s.
    let list = |kind: &str| -> Vec<Value> {
        let v: Value =
            serde_json::from_str(&ok(d, &["runs", "--db", "cat.db", "--kind", kind, "--json"])).unwrap();
        v.as_array().unwrap().clone()
    };
    let tpch = list("db-tpch");
    assert_eq!(tpch.len(), 2);
    for e in &tpch {
        assert_eq!((e["kind"].as_str(), e["profile"].as_str()), (Some("db-tpch"), Some("tpch sqlite")));
        assert!(e["query_total_s"].as_f64().unwrap() > 0.0 && e["query_geomean_s"].as_f64().unwrap() > 0.0);
        assert_eq!(e["note"], "tpch story");
    }
    let copies = list("db-copy");
    assert_eq!(copies.len(), 2);
    assert!(copies.iter().all(|e| e["mb_s"].as_f64().unwrap() > 0.0 && e["profile"] == "copy sqlite"));
    let table = ok(d, &["runs", "--db", "cat.db"]);
    assert!(table.lines().next().unwrap().contains("queries (total / geomean)"), "{table}");
    // Shown as printed, exported byte for byte.
    let show = ok(d, &["show", &tpch_ids[0], "--db", "cat.db"]);
    assert!(
        show.contains("geometric mean") && show.contains(&format!("catalog {} · db-tpch ·", tpch_ids[0]))
    );
    let show = ok(d, &["show", &copy_ids[0], "--db", "cat.db"]);
    assert!(show.contains("sqlite-backup") && show.contains("MB/s"), "{show}");
    let exported = ok(d, &["export", &copy_ids[1], "--json", "--db", "cat.db"]);
    assert_eq!(exported, std::fs::read_to_string(d.join("copy6.json")).unwrap());
    // Compared: each query, the total as a ratio; copies by time and rate.
    let c: Value = serde_json::from_str(&ok(
        d,
        &["compare", "tag:gen=5", "tpch6.json", "--db", "cat.db", "--json", "-"],
    ))
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(c["kind"], "db_tpch");
    let keys: Vec<&str> =
        c["units"][0]["metrics"].as_array().unwrap().iter().map(|m| m["key"].as_str().unwrap()).collect();
    assert_eq!(&keys[..5], ["query_total", "query_geomean", "q14.time", "q6.time", "q1.time"]);
    let text = ok(d, &["compare", &tpch_ids[0], &tpch_ids[1], "--db", "cat.db"]);
    assert!(text.contains("B vs A: total query time ") && text.contains("x ("), "{text}");
    let text = ok(d, &["compare", "copy5.json", "copy6.json"]);
    assert!(text.contains("copy time") && text.contains("B vs A: MB/s "), "{text}");
    let (code, _, stderr) = run_in(d, &["compare", "tpch5.json", "tag:copy=5", "--db", "cat.db"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("'tpch5.json' (a tpch query set, iolab db tpch)"), "{stderr}");
    assert!(stderr.contains("'tag:copy=5' (a database copy, iolab db copy)"), "{stderr}");
    // Reported: a query set and a copy, from the catalog.
    ok(d, &["report", &tpch_ids[0], &copy_ids[0], "--db", "cat.db", "-o", "db.html"]);
    let html = std::fs::read_to_string(d.join("db.html")).unwrap();
    for want in ["Analytics queries (tpch): ", ">total query time<", "not TPC-H compliant", "Database copy: "]
    {
        assert!(html.contains(want), "{want} in the report");
    }
    let md = ok(d, &["report", "tpch5.json", "copy5.json", "--format", "md"]);
    assert!(md.contains("| Q14 | promotion effect |") && md.contains("### Database copy: "), "{md}");
    let charts = html.matches("<figure class=\"chart").count();
    assert!(charts >= 1, "the query times are drawn");
    match crate::report::chromium() {
        Some(bin) => crate::report::check_in_browser(&bin, d, &d.join("db.html"), charts),
        None => iolab_testkit::skip(format_args!(
            "chromium not installed; the tpch and copy report is not checked in a browser"
        )),
    }
}
