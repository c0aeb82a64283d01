//! What a DBA needs to believe a tpcc run (issue 37, item 5), end to end on short SQLite runs (1 warehouse of
//! 10,000 items, a 2 s window) and on a private PostgreSQL server where there is one: NOPM and the device's
//! latency interval by interval, the CPU of the engine and of iolab with whether the run was CPU-bound, the
//! database's size against memory, in JSON and in text; and `compare` of two runs whose settings differ
//! naming the settings in every output.

use crate::util::{iolab, tempdir};
use serde_json::Value;
use std::path::Path;

/// `iolab db tpcc --database DATABASE` in `dir` with `more` flags, its JSON to `json`; returns the text it
/// printed.
fn tpcc_to(dir: &Path, database: &str, more: &[&str], json: &Path) -> String {
    let db = dir.join(format!("db-{database}-{}", json.file_stem().unwrap().to_string_lossy()));
    let out = iolab()
        .args(["db", "tpcc", "--database", database, "--dir", db.to_str().unwrap()])
        .args(["--warehouses", "1", "--items", "10000", "--ramp", "0s", "--duration", "2s", "--seed", "7"])
        .args(more)
        .args(["--no-save", "--json", json.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// The document at `path`, checked against docs/schema/iolab.db.v1.json.
fn read(path: &Path) -> Value {
    let v: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    iolab_report::schema_check::check_document(&v, iolab_report::schema_check::DB_SCHEMA);
    v
}

/// The intervals tile the window, and their new orders are the run's.
fn assert_intervals(v: &Value) {
    let s = &v["run"]["intervals"];
    assert_eq!(s["interval_s"], 1.0, "{s}");
    let intervals = s["intervals"].as_array().unwrap();
    assert!((2..=3).contains(&intervals.len()), "a 2 s window in 1 s intervals: {s}");
    let seconds: f64 = intervals.iter().map(|i| i["seconds"].as_f64().unwrap()).sum();
    let measured = v["run"]["measured_s"].as_f64().unwrap();
    assert!((seconds - measured).abs() < 0.1, "{seconds} s of intervals in a {measured} s window");
    let orders: f64 =
        intervals.iter().map(|i| i["nopm"].as_f64().unwrap() * i["seconds"].as_f64().unwrap() / 60.0).sum();
    let committed = v["run"]["transactions"][0]["committed"].as_f64().unwrap();
    assert!(
        (orders - committed).abs() <= 0.05 * committed + 4.0,
        "{orders} new orders over the intervals, {committed} in all"
    );
    assert!(s["device"].is_string() || v["devices"].as_array().unwrap().is_empty(), "{s}");
}

#[test]
fn a_tpcc_run_shows_nopm_over_time_its_cpu_and_its_size_against_memory() {
    let dir = tempdir();
    let json = dir.path().join("a.json");
    let text = tpcc_to(dir.path(), "sqlite", &["--users", "2"], &json);
    let v = read(&json);
    assert_intervals(&v);
    let cpu = &v["run"]["cpu"];
    assert_eq!(cpu["engine"], "SQLite, inside iolab's process", "{cpu}");
    assert!(cpu["iolab_cores"].as_f64().unwrap() > 0.0 && cpu["engine_cores"].is_null(), "{cpu}");
    assert!(cpu["cores"].as_u64().unwrap() >= 1 && cpu["cpu_bound"].is_boolean(), "{cpu}");
    let fit = &v["memory_fit"];
    assert_eq!(fit["limited"], false, "{fit}");
    assert!(fit["database_bytes"].as_u64().unwrap() > 1 << 20, "{fit}");
    let says = fit["says"].as_str().unwrap();
    assert!(says.starts_with("database ") && says.contains("memory (held in memory"), "{says}");
    for line in ["over time  2 intervals of 1 s: NOPM", "CPU        ", "memory     database "] {
        assert!(text.contains(line), "missing {line} in\n{text}");
    }
    assert!(text.contains(cpu["says"].as_str().unwrap()), "{text}");
    let page = dir.path().join("a.html");
    let out = iolab().arg("report").arg(&json).arg("-o").arg(&page).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("data-chart=\"db-nopm-over-time\""), "NOPM over time on the page");
    assert!(html.contains(&says.replace('\'', "&#39;")), "the database against memory on the page");
    crate::report::assert_fits_1280_px(dir.path(), &page);
}

/// A sweep over users shows each point's window too: its text after the table, its page and its Markdown
/// in a table of the points (users, over time, CPU, memory), the page still 1280 px wide.
#[test]
fn a_sweep_over_users_shows_each_point_s_window() {
    let dir = tempdir();
    let json = dir.path().join("sweep.json");
    let text = tpcc_to(dir.path(), "sqlite", &["--users", "1,2"], &json);
    for users in ["\n1 user:\n  over time  ", "\n2 users:\n  over time  "] {
        assert!(text.contains(users), "missing {users:?} in\n{text}");
    }
    let page = dir.path().join("sweep.html");
    let out = iolab().arg("report").arg(&json).arg("-o").arg(&page).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(std::fs::read_to_string(&page).unwrap().contains("Each point's window: over time, CPU, memory"));
    let md = iolab().arg("report").arg(&json).args(["--format", "md"]).output().unwrap();
    assert!(String::from_utf8_lossy(&md.stdout).contains("| users | over time | CPU | memory |"));
    crate::report::assert_fits_1280_px(dir.path(), &page);
}

#[test]
fn a_tpcc_run_on_postgres_counts_the_server_s_cpu() {
    if let Some(why) = crate::db::postgres_missing() {
        return iolab_testkit::skip(why);
    }
    let t = crate::db::pg_tempdir();
    let json = t.path().join("pg.json");
    tpcc_to(t.path(), "postgres", &["--users", "2"], &json);
    let v = read(&json);
    assert_intervals(&v);
    let cpu = &v["run"]["cpu"];
    assert_eq!(cpu["engine"], "the PostgreSQL server's processes", "{cpu}");
    assert!(cpu["engine_cores"].as_f64().unwrap() > 0.0, "the server worked: {cpu}");
}

/// Runs whose settings differ (other users, and `--memory 16M` against none where a memory controller is)
/// are compared with a note naming them, in text, Markdown and JSON alike; the run under `--memory` holds
/// its database against the budget, not the machine's memory.
#[test]
fn compare_of_tpcc_runs_whose_settings_differ_names_them() {
    let dir = tempdir();
    let (a, b) = (dir.path().join("one.json"), dir.path().join("two.json"));
    let held = iolab_device::memlimit::detect().is_some();
    tpcc_to(dir.path(), "sqlite", &["--users", "1"], &a);
    let memory: &[&str] = if held { &["--memory", "16M"] } else { &[] };
    tpcc_to(dir.path(), "sqlite", &[&["--users", "2"][..], memory].concat(), &b);
    let note = match held {
        true => "settings differ between the sides: --users A 1, B 2; --memory A none, B 16 MiB for pages;",
        false => "settings differ between the sides: --users A 1, B 2;",
    };
    for format in [&["--format", "text"][..], &["--format", "md"], &["--json", "-"]] {
        let out = iolab().arg("compare").arg(&a).arg(&b).args(format).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        let stdout = String::from_utf8(out.stdout).unwrap();
        assert!(stdout.contains(note), "{format:?}: {stdout}");
    }
    if !held {
        return iolab_testkit::skip(format_args!("no cgroup memory controller: --memory not compared"));
    }
    let fit = &read(&b)["memory_fit"];
    assert_eq!(
        (fit["limited"].as_bool(), fit["memory_bytes"].as_u64()),
        (Some(true), Some(16 << 20)),
        "{fit}"
    );
    let says = fit["says"].as_str().unwrap();
    assert!(
        says.contains(
            "of the 16.0 MiB --memory budget for pages (larger than the budget: reads reach the device)"
        ),
        "{says}"
    );
}
