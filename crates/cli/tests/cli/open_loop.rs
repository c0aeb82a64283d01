//! Queueing truth on the emulated device (`sim:fixed,latency=100us,servers=8`, capacity 80 000 IOPS) with
//! virtual time: open-loop rates below and above capacity, and Little's law in closed loop.

use crate::util::{assert_close, num, run_json, warning_kinds, SIM};
use serde_json::Value;

const CAPACITY: f64 = 80_000.0;
const LATENCY_NS: f64 = 100_000.0;

/// One virtual second on the sim with the given extra flags.
fn sim(extra: &[&str]) -> Value {
    let mut args = SIM.to_vec();
    args.extend(["--duration", "1s", "--ramp", "0"]);
    args.extend_from_slice(extra);
    run_json(&args)
}

fn open(rate: &str) -> Value {
    sim(&["--qd", "8", "--rate", rate])
}

#[test]
fn open_loop_half_capacity_meets_rate_at_device_latency() {
    let v = open("40k");
    assert_close("achieved iops", num(&v, "/rate/achieved_iops"), 40_000.0, 0.01);
    assert_close("total iops", num(&v, "/total/all/iops"), 40_000.0, 0.01);
    assert_eq!(num(&v, "/rate/offered_iops"), 40_000.0);
    assert_eq!(v["rate"]["arrival"], "fixed");
    assert_close("response mean", num(&v, "/total/all/lat_ns/mean"), LATENCY_NS, 0.05);
    assert_close("service mean", num(&v, "/total/all/service_lat_ns/mean"), LATENCY_NS, 0.01);
    assert_eq!(num(&v, "/rate/backlog_at_end"), 0.0);
    assert!(!warning_kinds(&v).contains(&"rate_not_sustained".into()), "{:?}", warning_kinds(&v));
}

#[test]
fn open_loop_above_capacity_caps_iops_and_queues_response() {
    let v = open("100k");
    assert_close("achieved iops", num(&v, "/rate/achieved_iops"), CAPACITY, 0.01);
    assert_eq!(num(&v, "/rate/offered_iops"), 100_000.0);
    let service = num(&v, "/total/all/service_lat_ns/mean");
    assert_close("service mean (flat: the device is no slower)", service, LATENCY_NS, 0.01);
    let response = num(&v, "/total/all/lat_ns/mean");
    assert!(response > 10.0 * service, "response mean {response} ns is not > 10x service {service} ns");
    assert!(num(&v, "/rate/backlog_at_end") > 0.0, "{:#}", v["rate"]);
    assert!(warning_kinds(&v).contains(&"rate_not_sustained".into()), "{:?}", warning_kinds(&v));
}

#[test]
fn open_loop_response_p50_grows_with_offered_rate() {
    let p50: Vec<f64> =
        ["70k", "90k", "110k"].iter().map(|r| num(&open(r), "/total/all/lat_ns/p50")).collect();
    assert!(p50.windows(2).all(|w| w[0] < w[1]), "lat p50 at 70k, 90k, 110k is not increasing: {p50:?}");
}

#[test]
fn open_loop_poisson_arrivals_queue_in_bursts() {
    let v = sim(&["--qd", "8", "--rate", "40k", "--arrival", "poisson"]);
    assert_eq!(v["rate"]["arrival"], "poisson");
    let (p50, p99) = (num(&v, "/total/all/lat_ns/p50"), num(&v, "/total/all/lat_ns/p99"));
    assert!(p99 > p50, "poisson bursts should queue: lat p99 {p99} <= p50 {p50}");
    assert_close("service p99", num(&v, "/total/all/service_lat_ns/p99"), LATENCY_NS, 0.01);
    assert_close("achieved iops", num(&v, "/rate/achieved_iops"), 40_000.0, 0.02);
}

#[test]
fn open_loop_fixed_arrivals_do_not_queue_below_capacity() {
    // The counterpart of the poisson test: evenly spaced arrivals never wait.
    let v = open("40k");
    assert_close("lat p99", num(&v, "/total/all/lat_ns/p99"), LATENCY_NS, 0.01);
}

#[test]
fn littles_law_closed_loop_depth_equals_iops_times_latency() {
    for qd in [1u32, 2, 4, 8] {
        let v = sim(&["--qd", &qd.to_string()]);
        let iops = num(&v, "/total/all/iops");
        let mean_s = num(&v, "/total/all/lat_ns/mean") / 1e9;
        assert_close(&format!("qd {qd}: iops x mean latency"), iops * mean_s, f64::from(qd), 0.02);
        assert_close(&format!("qd {qd}: depth.achieved"), num(&v, "/depth/achieved"), f64::from(qd), 0.02);
        assert_eq!(num(&v, "/depth/requested"), f64::from(qd));
        assert_close(&format!("qd {qd}: iops"), iops, f64::from(qd) * 10_000.0, 0.01);
    }
}

#[test]
fn littles_law_depth_above_servers_caps_iops_and_doubles_latency() {
    let v = sim(&["--qd", "16"]);
    assert_close("iops at qd 16", num(&v, "/total/all/iops"), CAPACITY, 0.01);
    // 16 outstanding on 8 servers: each I/O waits one service time in the device's queue.
    assert_close("response mean at qd 16", num(&v, "/total/all/lat_ns/mean"), 2.0 * LATENCY_NS, 0.02);
    assert_close("depth.achieved", num(&v, "/depth/achieved"), 16.0, 0.02);
}

/// Think time (fio's thinktime, Iometer's transfer delay and burst): bursts of `--burst` I/Os, each drained,
/// then `--think` idle. On a 1 ms device: a burst of 4 at qd 4 takes 1 ms, so a cycle is 1 + 9 = 10 ms and
/// 400 IOPS; at qd 1 the burst takes 4 ms, a cycle 13 ms, 4/13 ms = 307.7 IOPS. Latency stays the device's.
#[test]
fn think_time_paces_bursts_exactly() {
    let run = |qd: &str| {
        run_json(&[
            "--target",
            "sim:fixed,latency=1ms,servers=8",
            "--clock",
            "virtual",
            "--seed",
            "1",
            "-d",
            "13s",
            "--ramp",
            "0",
            "--qd",
            qd,
            "--think",
            "9ms",
            "--burst",
            "4",
        ])
    };
    let v = run("4");
    assert_close("iops at qd 4", num(&v, "/total/all/iops"), 400.0, 0.01);
    assert_eq!(num(&v, "/total/all/lat_ns/p99"), 1_000_000.0);
    let v = run("1");
    assert_close("iops at qd 1", num(&v, "/total/all/iops"), 4.0 / 0.013, 0.01);
    assert_eq!(v["config"]["plan"]["workers"][0]["think"]["burst"], 4);
}

#[test]
fn think_time_is_refused_where_it_means_nothing() {
    for (args, needle) in [
        (vec!["--think", "1ms", "--rate", "100"], "closed loop"),
        (vec!["--burst", "4"], "give 'think'"),
        (vec!["--think", "0"], "above 0"),
    ] {
        let out = crate::util::iolab()
            .arg("run")
            .args(SIM)
            .args(&args)
            .args(["-d", "1s", "--no-save"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(needle), "{args:?}: {stderr}");
    }
}

/// Issue 15, item 8: `--rate 100MB/s` was refused; fio users set rates in bytes per second. A bandwidth is
/// turned into IOPS at the worker's mean I/O size (here 4K and 64K half each: 34,816 bytes), total or per
/// worker table, on the command line or as a job key.
#[test]
fn a_bandwidth_rate_is_offered_at_the_mean_io_size() {
    let mean = (4096.0 + 65536.0) / 2.0;
    let v = sim(&["--rate", "40MB/s", "--bs", "4k/50:64k/50", "--workers", "2"]);
    assert_close("offered", num(&v, "/rate/offered_iops"), 40e6 / mean, 1e-9);
    assert_close("achieved MB/s", num(&v, "/total/all/mb_s"), 40.0, 0.03);
    let v = sim(&["--rate", "8MiB/s", "--bs", "4k"]);
    assert_close("offered MiB/s", num(&v, "/rate/offered_iops"), 2048.0, 1e-9);
    let dir = crate::util::tempdir();
    let job = dir.path().join("bw.toml");
    std::fs::write(&job, "bs = \"4k\"\n[worker.a]\nrate = \"4096kB/s\"\n[worker.b]\nrate = \"500\"\n")
        .unwrap();
    let v = sim(&[job.to_str().unwrap()]);
    assert_close("per-table bandwidth + IOPS", num(&v, "/rate/offered_iops"), 1000.0 + 500.0, 1e-9);
    let out =
        crate::util::iolab().arg("run").args(SIM).args(["--rate", "40MBps/s", "--no-save"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("'100MB/s'"));
}

/// Issue 15, item 7: `--profile oltp` printed "offered 40 IOPS (poisson), achieved 1,234,586.5": the offer of
/// one open-loop group beside the completions of the whole run. Offered and achieved now cover the open-loop
/// workers, and each group has its line, closed-loop groups marked.
#[test]
fn open_loop_figures_cover_the_open_loop_workers_and_each_group() {
    let dir = crate::util::tempdir();
    let job = dir.path().join("mixed.toml");
    std::fs::write(&job, "[worker.paced]\nrate = \"2000\"\ncount = 2\n[worker.flat]\nqd = 8\n").unwrap();
    let v = sim(&[job.to_str().unwrap()]);
    // A worker table's rate is each of its workers': 2 x 2,000.
    assert_close("offered", num(&v, "/rate/offered_iops"), 4000.0, 1e-9);
    assert_close("achieved (paced only)", num(&v, "/rate/achieved_iops"), 4000.0, 0.01);
    let groups = v["rate"]["groups"].as_array().unwrap();
    assert_eq!(groups.len(), 2);
    let group = |name: &str| groups.iter().find(|g| g["group"] == name).unwrap_or_else(|| panic!("{name}"));
    assert_eq!(group("paced")["workers"], 2);
    assert!(group("flat")["offered_iops"].is_null(), "the closed-loop group has no offer");
    assert!(group("flat")["achieved_iops"].as_f64().unwrap() > 50_000.0);
    let out = crate::util::iolab()
        .arg("run")
        .arg(&job)
        .args(SIM)
        .args(["--duration", "1s", "--ramp", "0", "--no-save"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("open-loop workers: offered 4,000 IOPS")
            && text.contains("flat (1 worker): closed loop"),
        "{text}"
    );
}

/// Issue 36, item 4: on the real clock an open-loop worker sleeps until a margin before each arrival and
/// spins the rest; the margin it chose from its measured wake-ups, its cap and those wake-ups are in the
/// result and the text. No figure of time is asserted (the machine may be loaded): only the structure and
/// the bounds the rule guarantees. On virtual time a worker wakes at its arrival: no pacing at all.
#[test]
fn open_loop_on_the_real_clock_reports_the_margin_it_chose() {
    let args = ["--target", "mem:1M", "--rate", "100", "--duration", "500ms", "--ramp", "200ms", "--no-save"];
    let v = run_json(&args);
    let p = &v["rate"]["pacing"];
    let (margin, cap) = (num(&v, "/rate/pacing/margin_ns"), num(&v, "/rate/pacing/margin_cap_ns"));
    assert_eq!(cap, 50_000.0, "half a percent of a core over 100 arrivals a second: {p}");
    assert!(margin > 0.0 && margin <= cap, "{p}");
    assert!(p["rule"].as_str().is_some_and(|r| r.contains("largest lateness")), "{p}");
    let wake_ups = num(&v, "/rate/pacing/wake_ups");
    assert!(wake_ups > 0.0, "a worker at 100 IOPS sleeps between arrivals: {p}");
    assert!(p["wake_late_ns"]["p99"].is_u64(), "{p}");
    let out = crate::util::iolab().arg("run").args(args).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().find(|l| l.starts_with("pacing ")).unwrap_or_else(|| panic!("{text}"));
    assert!(
        line.contains("margin") && line.contains("cap 50.0 µs") && line.contains("wake-ups late"),
        "{line}"
    );
    let virtual_time = open("40k");
    assert!(virtual_time["rate"].get("pacing").is_none(), "{:#}", virtual_time["rate"]);
    assert_eq!(num(&virtual_time, "/rate/lag_ns/max"), 0.0, "virtual time: each op at its arrival");
}
