//! Exporter tests from a fixed [`RunResult`] (hyperfine `src/export/tests.rs` style): the text
//! summary line by line, JSON round trip, CSV shape, and the JSON Schema kept in sync with the model.

use std::collections::BTreeMap;

use iolab_stats::{LatSummary, TimePoint, Warning};

use crate::*;

fn lat(mean: f64, p50: u64, p99: u64, p999: u64, max: u64) -> LatSummary {
    LatSummary {
        min: p50 / 20,
        mean,
        stdev: mean / 3.0,
        p50,
        p90: (p50 + p99) / 2,
        p95: (p50 + p99) / 2 + 1,
        p99,
        p999,
        p9999: (p999 + max) / 2,
        max,
    }
}

fn summary(
    ops: u64,
    block_size_bytes: u64,
    measured_s: f64,
    l: LatSummary,
    service: LatSummary,
) -> OpSummary {
    let bytes = ops * block_size_bytes;
    OpSummary {
        ops,
        bytes,
        iops: ops as f64 / measured_s,
        mb_s: bytes as f64 / measured_s / 1e6,
        mib_s: bytes as f64 / measured_s / (1u64 << 20) as f64,
        lat_ns: Some(l),
        service_lat_ns: Some(service),
        short: 0,
        errors: 0,
    }
}

/// A closed-loop 70/30 random read/write run on one file, 4 workers x qd 32, 10 s measured.
pub(crate) fn sample() -> RunResult {
    let measured_s = 10.0;
    let read_lat = lat(1_820_000.0, 1_710_000, 4_200_000, 8_100_000, 21_300_000);
    let write_lat = lat(2_450_500.0, 2_300_000, 6_050_000, 9_990_000, 30_100_000);
    let all_lat = lat(2_009_300.0, 1_900_000, 5_000_000, 9_000_000, 30_100_000);
    let read = summary(700_123, 8192, measured_s, read_lat, read_lat);
    let write = summary(300_456, 8192, measured_s, write_lat, write_lat);
    let all = summary(1_000_579, 8192, measured_s, all_lat, all_lat);
    let workers = (0..4u32)
        .map(|index| WorkerResult {
            index,
            name: "randrw".to_string(),
            qd: 32,
            targets: vec!["/data/f".to_string()],
            rate_iops: None,
            total: OpSet {
                read: read.clone(),
                write: write.clone(),
                all: all.clone(),
                flush: None,
                trim: None,
            },
            achieved_depth: 31.85,
        })
        .collect();
    let timeseries = (0..10u64)
        .map(|i| TimePoint {
            t_s: i as f64,
            interval_s: 1.0,
            read_iops: 70_000.0 + i as f64,
            write_iops: 30_000.0,
            iops: 100_000.0 + i as f64,
            mb_s: 819.2,
            lat_mean_ns: Some(2_009_300.0),
            lat_p99_ns: Some(5_000_000),
            cache_hit_ratio: None,
            flush_iops: 0.0,
            trim_iops: 0.0,
        })
        .collect();
    RunResult {
        schema: SCHEMA.to_string(),
        iolab_version: "0.1.0".to_string(),
        run_id: "3f9a2c1e77d04b1a".to_string(),
        started_at: "2025-01-02T03:04:05Z".to_string(),
        started_unix_s: 1_735_787_045.0,
        partial: false,
        seed: 1234,
        config: serde_json::json!({ "jobs": [{ "name": "randrw", "qd": 32, "read_percent": 70 }] }).into(),
        env: Env {
            hostname: "bench1".to_string(),
            kernel: "6.8.0-45-generic".to_string(),
            cpu_model: "AMD EPYC 7443P".to_string(),
            cpu_count: 48,
            mem_total_bytes: 256 << 30,
            engine: "io_uring".to_string(),
            engine_features: vec!["fixed_buffers".to_string()],
            targets: vec![TargetEnv {
                name: "/data/f".to_string(),
                kind: "file".to_string(),
                size_bytes: 8 << 30,
                fs_type: Some("ext4".to_string()),
                device_model: None,
                direct: true,
                logical_block_size: 512,
                created: false,
                scratch: false,
                fill_s: None,
                layout: Some(crate::TargetLayout {
                    prealloc: Some("fallocate".to_string()),
                    extents_before: 3,
                    extents_after: 4,
                    split_ios: 1_234,
                }),
                huge_page_bytes: None,
                mount_options: None,
                write_cache: None,
            }],
            throttle: None,
        },
        ramp_s: 2.0,
        measured_s,
        in_flight_at_end: None,
        total: OpSet { read: read.clone(), write: write.clone(), all: all.clone(), flush: None, trim: None },
        workers,
        targets: vec![crate::TargetResult {
            name: "/data/f".to_string(),
            read: read.clone(),
            write: write.clone(),
            all: all.clone(),
        }],
        cpu: Cpu {
            user_s: 1.23,
            sys_s: 4.56,
            cpu_ns_per_io: Some(5_786.6),
            cores_used: 0.579,
            peak_rss_bytes: Some(85 << 20),
        },
        depth: Depth { requested: 128, achieved: 127.4 },
        rate: None,
        warnings: vec![
            Warning::HighVariability { metric: "iops".to_string(), cv: 0.153, ramp_s: None },
            Warning::ShortRun { measured_s: 4.0 },
        ],
        timeseries,
        errors: ErrorSummary {
            total: 0,
            read: ErrorDetail { count: 0, short: 0, by_errno: BTreeMap::new() },
            write: ErrorDetail { count: 0, short: 0, by_errno: BTreeMap::new() },
            flush: None,
            trim: None,
            retries: 0,
        },
        groups: vec![GroupResult {
            name: "worker".to_string(),
            workers: 1,
            targets: vec!["/data/f".to_string()],
            rate_iops: None,
            total: OpSet {
                read: read.clone(),
                write: write.clone(),
                all: all.clone(),
                flush: None,
                trim: None,
            },
            achieved_depth: 127.4,
            read_interval_mean_max_ns: Some(2_100_000.0),
            write_interval_mean_max_ns: Some(2_500_000.0),
        }],
        verdict: None,
        histograms: Some(crate::HistogramSet {
            encoding: crate::model::HISTOGRAM_ENCODING.to_string(),
            read: Some("SU9IMQ==".to_string()),
            write: None,
            groups: [(
                "worker".to_string(),
                crate::GroupHistograms { read: Some("SU9IMQ==".into()), write: None },
            )]
            .into_iter()
            .collect(),
        }),
        loadgen: None,
        steady_state: None,
        replay: None,
        cache: None,
        verify: None,
        inject: None,
        measured_by: None,
        hosts: Vec::new(),
        ranks: None,
    }
}

/// Open loop, reads only, with errors: exercises the service table, rate and errors lines.
/// `iolab replay` of a trace with a flush and an op past the target, at 2x.
pub(crate) fn sample_replay() -> RunResult {
    let mut r = sample_open_loop();
    r.rate = None;
    r.replay = Some(crate::ReplayResult {
        trace: "run.iolabtrace".into(),
        records: 49_984,
        replayed: 49_982,
        skipped: [("beyond_target".to_string(), 1), ("not_read_or_write".to_string(), 1)].into(),
        speed: "2x".into(),
        lag_ns: Some(lat(1_200.0, 800, 4_000, 9_000, 30_000)),
        map: [("web/0".to_string(), "/dev/sdb".to_string())].into(),
        clock_tick_ns: 1_000_000,
        most_at_one_time: 12,
        spread: true,
    });
    r
}

pub(crate) fn sample_open_loop() -> RunResult {
    let mut r = sample();
    let service = lat(95_000.0, 90_000, 250_000, 400_000, 1_200_000);
    let response = lat(180_000.0, 120_000, 2_500_000, 4_000_000, 9_000_000);
    r.total.read = summary(49_982, 4096, 10.0, response, service);
    r.total.write = OpSummary::from_stats(&iolab_stats::OpStats::new(), 10.0);
    r.total.all = r.total.read.clone();
    r.total.all.errors = 3;
    r.total.read.errors = 3;
    r.in_flight_at_end =
        Some(iolab_stats::InFlightAtEnd { ops: 7, longest_ns: 3_100_000, drained_ns: 1_400_000 });
    r.rate = Some(RateResult {
        offered_iops: 5_000.0,
        arrival: "poisson".to_string(),
        achieved_iops: 4_998.2,
        backlog_at_end: 0,
        groups: Vec::new(),
        lag_ns: {
            let mut lag = iolab_stats::LatencyHistogram::new();
            for ns in [2_000, 3_000, 40_000] {
                lag.record(ns);
            }
            lag.summary()
        },
        pacing: Some(crate::PacingResult {
            margin_ns: 25_000,
            margin_cap_ns: 25_000,
            rule: "p99 of the latest 128 wake-ups' lateness + 2 us, at most 1/8 of the mean gap and 1 ms"
                .into(),
            wake_ups: 3,
            wake_late_ns: {
                let mut late = iolab_stats::LatencyHistogram::new();
                for ns in [50_000, 60_000, 900_000] {
                    late.record(ns);
                }
                late.summary()
            },
        }),
    });
    r.errors.total = 3;
    r.errors.read = ErrorDetail {
        count: 3,
        short: 1,
        by_errno: BTreeMap::from([("EIO".to_string(), 2), ("ETIMEDOUT".to_string(), 1)]),
    };
    r.warnings = vec![Warning::Errors { count: 3 }];
    r
}

fn lines(text: &str) -> Vec<&str> {
    text.lines().collect()
}

#[test]
fn render_text_closed_loop_is_aligned_summary() {
    let text = text(&sample());
    let l = lines(&text);
    assert_eq!(l[0], "iolab 0.1.0 · run 3f9a2c1e · seed 1234 · measured 10.00 s after 2.00 s ramp");
    assert_eq!(
        l[1],
        "target  /data/f  file, 8.00 GiB, ext4, O_DIRECT, io_uring, 3 extents before the run, 4 after, 1,234 split I/Os"
    );
    assert_eq!(l[2], "workers 4 × qd 32 (requested depth 128, achieved 127.4)");
    assert_eq!(l[3], "");
    assert_eq!(l[4], "             ops       IOPS   MB/s     mean      p50      p99    p99.9      max");
    assert_eq!(l[5], "read     700,123   70,012.3  573.5  1.82 ms  1.71 ms  4.20 ms  8.10 ms  21.3 ms");
    assert_eq!(l[6], "write    300,456   30,045.6  246.1  2.45 ms  2.30 ms  6.05 ms  9.99 ms  30.1 ms");
    assert_eq!(l[7], "all    1,000,579  100,057.9  819.7  2.01 ms  1.90 ms  5.00 ms  9.00 ms  30.1 ms");
    assert_eq!(l[8], "");
    assert_eq!(l[9], "cpu     user 1.23 s, sys 4.56 s (0.58 cores), 5.79 µs per I/O, peak memory 85.0 MiB");
    // Every table line has the same width: columns are aligned.
    let width = |s: &str| s.chars().count();
    assert!(l[4..8].iter().all(|line| width(line) == width(l[4])));
    assert!(!text.contains("service"), "no service table in closed loop");
    assert!(!text.contains("errors "), "no errors line without errors");
}

#[test]
fn render_text_warnings_have_hints() {
    let text = text(&sample());
    let l = lines(&text);
    let at = l.iter().position(|line| line.starts_with("warning: iops varied")).unwrap();
    assert_eq!(l[at], "warning: iops varied a lot between intervals (coefficient of variation 15.3%)");
    assert!(l[at + 1].starts_with("  hint: results are noisy"));
    assert_eq!(l[at + 2], "warning: only 4.00 s were measured");
    assert_eq!(l[at + 3], "  hint: run for at least 5 s (--duration) for stable numbers");
}

#[test]
fn render_text_zero_op_write_line_is_omitted() {
    let r = sample_open_loop();
    let text = text(&r);
    assert!(text.lines().any(|line| line.starts_with("read ")));
    assert!(text.lines().any(|line| line.starts_with("all ")));
    assert!(!text.lines().any(|line| line.starts_with("write")), "{text}");
}

#[test]
fn render_text_open_loop_shows_service_rate_and_errors() {
    let text = text(&sample_open_loop());
    let l = lines(&text);
    assert_eq!(l[4], "response     ops     IOPS  MB/s    mean     p50      p99    p99.9      max");
    assert_eq!(l[5], "read      49,982  4,998.2  20.5  180 µs  120 µs  2.50 ms  4.00 ms  9.00 ms");
    assert_eq!(l[8], "service     mean      p50     p99   p99.9      max");
    assert_eq!(l[9], "read     95.0 µs  90.0 µs  250 µs  400 µs  1.20 ms");
    assert!(
        l.contains(&"rate    offered 5,000 IOPS (poisson), achieved 4,998.2, backlog at end 0"),
        "{text}"
    );
    assert!(
        l.contains(&"errors  read 3 (EIO 2, ETIMEDOUT 1), write 0; short read 1, short write 0"),
        "{text}"
    );
    assert!(l.contains(&"warning: 3 I/O errors"));
    assert!(
        l.contains(&"at end  7 I/Os in flight, the last done 1.40 ms after the end (longest 3.10 ms); not in the figures"),
        "issue 35, class 13: what the window's end left out is said: {text}"
    );
}

#[test]
fn render_text_one_target_line_per_target_and_partial_flag() {
    let mut r = sample();
    let mut second = r.env.targets[0].clone();
    second.name = "/dev/nvme0n1".to_string();
    second.kind = "block_device".to_string();
    second.fs_type = None;
    second.device_model = Some("Samsung PM9A3".to_string());
    second.size_bytes = 1_920_383_410_176;
    second.layout = None;
    second.huge_page_bytes = None;
    r.env.targets.push(second);
    r.partial = true;
    r.ramp_s = 0.0;
    let text = text(&r);
    let l = lines(&text);
    assert_eq!(l[0], "iolab 0.1.0 · run 3f9a2c1e · seed 1234 · measured 10.00 s · partial (stopped early)");
    assert_eq!(l[1], "target  /data/f  file, 8.00 GiB, ext4, O_DIRECT, io_uring, 3 extents before the run, 4 after, 1,234 split I/Os");
    assert_eq!(l[2], "target  /dev/nvme0n1  block device, 1.75 TiB, Samsung PM9A3, O_DIRECT, io_uring");
}

#[test]
fn json_round_trip_is_equal() {
    for r in [sample(), sample_open_loop()] {
        let json = json(&r);
        assert_eq!(RunResult::from_json(&json).unwrap(), r);
    }
}

#[test]
fn json_uses_snake_case_names_null_options_and_tagged_warnings() {
    let v: serde_json::Value = serde_json::from_str(&json(&sample())).unwrap();
    assert_eq!(v["schema"], "iolab.result/1");
    assert!(v["rate"].is_null());
    assert!(v["env"]["targets"][0]["device_model"].is_null());
    assert_eq!(v["total"]["read"]["lat_ns"]["p999"], 8_100_000);
    assert_eq!(v["warnings"][0]["kind"], "high_variability");
    assert_eq!(v["warnings"][1], serde_json::json!({ "kind": "short_run", "measured_s": 4.0 }));
}

#[test]
fn timeseries_csv_has_header_and_one_row_per_point() {
    let csv = csv(&sample());
    let l = lines(&csv);
    // Flushes and trims per second last (issue 27), 0 in a run without them.
    assert_eq!(
        l[0],
        "t_s,interval_s,read_iops,write_iops,iops,mb_s,lat_mean_ns,lat_p99_ns,flush_iops,trim_iops"
    );
    assert_eq!(l.len(), 1 + 10);
    assert_eq!(l[1], "0,1,70000,30000,100000,819.2,2009300,5000000,0,0");
    assert!(l[1..].iter().all(|row| row.split(',').count() == 10));
}

// ---------------------------------------------------------------------------------------------
// JSON Schema drift guard: every object key the model serialises is declared in the schema, and
// every declared property is serialised, at every level reachable from a sample.

use crate::schema_check::{check_against_schema, RESULT_SCHEMA as SCHEMA_TEXT};

#[test]
fn json_schema_top_level_properties_match_serialised_keys() {
    let schema: serde_json::Value = serde_json::from_str(SCHEMA_TEXT).unwrap();
    assert_eq!(schema["$schema"], "https://json-schema.org/draft/2020-12/schema");
    assert_eq!(schema["properties"]["schema"]["const"], SCHEMA);
    // Every key is declared; every declared key is serialised unless it is optional (not in "required"),
    // and the optional ones appear in some sample.
    let required: Vec<&str> =
        schema["required"].as_array().unwrap().iter().filter_map(|k| k.as_str()).collect();
    let mut seen: Vec<String> = Vec::new();
    for r in [
        sample(),
        sample_with_verdict(),
        sample_steady_state(),
        sample_loadgen(),
        sample_cache(),
        sample_verify(),
        sample_fio(),
        sample_hosts(),
        sample_replay(),
    ] {
        let value = serde_json::to_value(r).unwrap();
        let keys: Vec<&String> = value.as_object().unwrap().keys().collect();
        for k in &keys {
            assert!(schema["properties"].get(k.as_str()).is_some(), "{k} is not declared in the schema");
            seen.push(k.to_string());
        }
        for k in &required {
            assert!(keys.iter().any(|x| x == k), "required {k} is not serialised");
        }
    }
    for k in schema["properties"].as_object().unwrap().keys() {
        assert!(seen.contains(k), "{k} is declared but no sample serialises it");
    }
}

/// An Exchange-style run with a db and a log group and a failed verdict.
fn sample_with_verdict() -> RunResult {
    let mut r = sample();
    let mut db = r.groups[0].clone();
    db.name = "db".to_string();
    db.rate_iops = Some(120.0);
    let mut log = r.groups[0].clone();
    log.name = "log".to_string();
    log.rate_iops = Some(12.0);
    r.groups = vec![db, log];
    let mut v = crate::judge::evaluate(
        &r,
        &crate::verdict::Thresholds::default(),
        &["db".to_string()],
        &["log".to_string()],
    );
    v.sizing = Some(crate::verdict::Sizing::sample(1000, "Exchange 2010: ..."));
    r.verdict = Some(v);
    r
}

#[test]
fn json_schema_nested_properties_match_serialised_keys() {
    let schema: serde_json::Value = serde_json::from_str(SCHEMA_TEXT).unwrap();
    for r in [
        sample(),
        sample_open_loop(),
        sample_with_verdict(),
        sample_loadgen(),
        sample_cache(),
        sample_verify(),
        sample_fio(),
        sample_hosts(),
        sample_replay(),
    ] {
        let value = serde_json::to_value(&r).unwrap();
        check_against_schema(&value, &schema, &schema, "$");
    }
    // Every warning kind is declared.
    let every_kind = [
        Warning::LowDepth { requested: 1.0, achieved: 0.5, engine: Some("sync".into()) },
        Warning::HighVariability { metric: "iops".into(), cv: 0.2, ramp_s: Some(1.0) },
        Warning::BufferedIo { set_by: None },
        Warning::PageCacheLikely { target: "f".into(), target_bytes: 1, mem_total_bytes: 2, set_by: None },
        Warning::FirstIntervalSlow { first_iops: 1.0, median_iops: 3.0, ramp_s: Some(1.0) },
        Warning::RateNotSustained { offered_iops: 2.0, achieved_iops: 1.0, backlog_at_end: 1 },
        Warning::DispatchLag { lag_p99_ns: 90_000, response_p99_ns: 100_000, group: None },
        Warning::Errors { count: 1 },
        Warning::InjectedErrors { count: 1 },
        Warning::ShortIo { count: 1 },
        Warning::SyncEngineDepth { requested: 4 },
        Warning::EngineFallback { reason: "r".into() },
        Warning::FileHasHoles { target: "f".into() },
        Warning::LoopPageCache { target: "/dev/loop0".into(), backing_file: "/x.img".into() },
        Warning::FragmentedTarget {
            target: "f".into(),
            extents: 30,
            mean_extent_bytes: 2 << 20,
            split_ios: 5,
            holes_bytes: 0,
            trimmed: false,
        },
        Warning::TrimmedFile {
            target: "f".into(),
            trims: 3,
            extents_before: 1,
            extents_after: 7,
            holes_bytes: 1 << 20,
        },
        Warning::ShortRun { measured_s: 1.0 },
        Warning::HistogramSaturated { count: 1 },
        Warning::TmpfsTarget { target: "f".into() },
        Warning::TransactionOverload { users: 10, backlog_max: 16, backlog_at_end: 12 },
        Warning::VirtualDeviceCopies { target: "sim:hdd,10k".into(), workers: 2 },
        Warning::EmulatedDataDropped { target: "sim:ssd,nvme".into(), kept_bytes: 1 << 30 },
        Warning::CacheShrunk { times: 2, capacity_bytes: 1 << 30 },
        Warning::CacheDirtyAtExit { lines: 3 },
        Warning::WriteCacheNeverFilled {
            target: "sim:hdd,15k".into(),
            cache: "device".into(),
            size_bytes: 64 << 20,
            written_bytes: 36 << 20,
            peak_dirty_bytes: 32 << 20,
            fill_s: Some(2.0),
            fill_bytes: Some(72 << 20),
        },
        Warning::SharedDevice {
            device: "vda".into(),
            device_read_bytes: 0,
            device_write_bytes: 40 << 20,
            own_read_bytes: 16 << 20,
            own_write_bytes: 0,
        },
        Warning::DataMismatch { blocks: 2, reads: 3, classes: "2 lost_write, 1 torn_write".into() },
        Warning::ReadbackIncomplete { blocks: 4 },
        Warning::WindowEndedLate { ops: 4, drained_ns: 8_000_000_000, longest_ns: 8_100_000_000 },
    ];
    let warnings = serde_json::to_value(every_kind).unwrap();
    let branches = schema["$defs"]["Warning"]["oneOf"].as_array().unwrap();
    assert_eq!(branches.len(), warnings.as_array().unwrap().len(), "one schema branch per warning kind");
    check_against_schema(&warnings, &schema["properties"]["warnings"], &schema, "$.warnings");
}

/// A `--steady-state` run that reached steady state.
fn sample_steady_state() -> RunResult {
    let mut r = sample();
    let rule = crate::steady::SteadyStateRule {
        metric: "iops".into(),
        max_dev_pct: 5.0,
        window_s: 3.0,
        limit_s: 600.0,
    };
    let mut t = crate::steady::SteadyStateTracker::new(rule, 1.0);
    for v in [50_000.0, 80_000.0, 81_000.0, 80_500.0] {
        t.push(v, Some(100_000.0));
    }
    r.steady_state = Some(t.result());
    r
}

#[test]
fn json_schema_steady_state_matches_serialised_keys() {
    let schema: serde_json::Value = serde_json::from_str(SCHEMA_TEXT).unwrap();
    let value = serde_json::to_value(sample_steady_state()).unwrap();
    assert_eq!(value["steady_state"]["reached"], true);
    check_against_schema(&value, &schema, &schema, "$");
}

/// A users-and-transactions run (rate mode, two transaction types, overloaded).
/// A run with a block cache (and its hit ratio over time) on a throttled device.
fn sample_cache() -> RunResult {
    use crate::cache::{CacheLatency, CacheResult, CacheShrink};
    let mut r = sample();
    let lat = r.total.read.lat_ns;
    for p in &mut r.timeseries {
        p.cache_hit_ratio = Some(0.25);
    }
    // A RAM disk behind the cache, on huge pages.
    r.env.targets[0].kind = "mem".into();
    r.env.targets[0].layout = None;
    r.env.targets[0].huge_page_bytes = Some(1 << 30);
    r.env.throttle = Some(iolab_doc::Throttled {
        kind: "cgroup-v1 blkio".into(),
        cgroup: "/sys/fs/cgroup/blkio/iolab-1".into(),
        devices: Vec::new(),
    });
    r.cache = Some(CacheResult {
        mode: "write-back".into(),
        policy: "s3-fifo".into(),
        line_bytes: 4096,
        device: "sim:ssd,sata".into(),
        configured_bytes: 1 << 30,
        hit_ratio: 0.25,
        window_reads_from_cache: 25,
        window_reads_from_target: 75,
        dirty_after_exit: 0,
        counters: iolab_doc::CacheStats {
            hits: 30,
            misses: 90,
            capacity_bytes: 1 << 30,
            ..Default::default()
        },
        latency: CacheLatency { from_cache: lat, from_target: lat, ..Default::default() },
        shrinks: vec![CacheShrink { t_s: 3.0, mem_available_bytes: 1 << 28, capacity_bytes: 3 << 28 }],
    });
    r
}

/// A run over two hosts (MPI ranks): a row per rank beside the merged totals.
pub(crate) fn sample_hosts() -> RunResult {
    let mut r = sample();
    let row = |rank: u32, host: &str| crate::HostResult {
        rank,
        host: host.into(),
        workers: 1,
        total: r.total.clone(),
        cpu: r.cpu.clone(),
        start_offset_s: 0.000_02 * rank as f64,
        done_s: 10.0 + rank as f64 * 0.01,
        warnings: Vec::new(),
        kernel: "Linux 6.8.0".into(),
        cpu_model: format!("AMD EPYC 7443P (node {rank})"),
    };
    let hosts = vec![row(0, "node1"), row(1, "node2")];
    r.hosts = hosts;
    r.ranks = Some(crate::RanksResult {
        size: 2,
        start_skew_s: 0.000_02,
        first_done_s: 10.0,
        last_done_s: 10.01,
        stonewall: false,
    });
    r
}

#[test]
fn text_of_a_run_over_several_hosts_has_a_row_per_rank_and_the_skew() {
    let t = text(&sample_hosts());
    assert!(t.contains("node1") && t.contains("node2"), "{t}");
    assert!(t.contains("ranks   2: start skew"), "{t}");
    assert!(!text(&sample()).contains("start skew"));
}

/// Issue 25, item 1 (b): an open-loop run shows iolab's own lag apart, in text and HTML.
#[test]
fn an_open_loop_run_shows_its_lag_in_text() {
    let r = sample_open_loop();
    let t = text(&r);
    let lag = t.lines().find(|l| l.starts_with("lag ")).expect("a lag line");
    assert!(lag.contains("p50 3.00 µs") && lag.contains("p99 40.0 µs"), "{lag}");
    let pacing = t.lines().find(|l| l.starts_with("pacing ")).expect("a pacing line");
    assert!(pacing.contains("margin 25.0 µs") && pacing.contains("cap 25.0 µs"), "{pacing}");
    assert!(pacing.contains("3 wake-ups") && pacing.contains("p99 900 µs"), "{pacing}");
    let virtual_time = RateResult { pacing: None, ..r.rate.clone().expect("open loop") };
    let t = text(&RunResult { rate: Some(virtual_time), ..r.clone() });
    assert!(!t.contains("\npacing "), "virtual time: no pacing line");
    assert!(!text(&RunResult { rate: None, ..r }).contains("\nlag "), "closed loop: no lag");
}

/// A run measured by fio (imported with `iolab import fio-result`).
pub(crate) fn sample_fio() -> RunResult {
    let mut r = sample();
    r.measured_by = Some(crate::MeasuredBy {
        tool: "fio".into(),
        version: "fio-3.33".into(),
        source: "old.json".into(),
        notes: vec!["no randseed: seed 0".into()],
    });
    r
}

#[test]
fn text_of_a_fio_run_says_who_measured_it_and_its_notes() {
    let t = text(&sample_fio());
    assert!(t.contains("measured by fio (fio-3.33) from old.json"), "{t}");
    assert!(t.contains("fio note: no randseed: seed 0"), "{t}");
    assert!(!text(&sample()).contains("measured by"));
}

/// A verified run with injected faults and one mismatch of each kind of header view.
fn sample_verify() -> RunResult {
    use iolab_doc::{ByClass, HeaderView, InjectCount, InjectResult, Mismatch, MismatchClass, VerifyResult};
    let mut r = sample();
    let h = HeaderView {
        target: 0,
        offset: 8192,
        generation: 7,
        run_id: "00000000deadbeef".into(),
        timestamp_ns: 1_000,
        checksum: "1234abcd".into(),
    };
    let miss = |found: Option<HeaderView>| Mismatch {
        target: "f".into(),
        offset: 8192,
        class: MismatchClass::LostWrite,
        expected: h.clone(),
        found,
        sector_generations: vec![6; 8],
        hex: "00000000  49 4f 4c 41".into(),
    };
    r.verify = Some(VerifyResult {
        block_bytes: 4096,
        blocks_checked: 100,
        blocks_skipped_in_flight: 2,
        blocks_never_written: 3,
        readback_blocks: 50,
        readback_unread_blocks: 1,
        mismatches: 2,
        mismatched_blocks: 1,
        by_class: ByClass { lost_write: 2, ..Default::default() },
        first_mismatches: vec![miss(Some(h.clone())), miss(None)],
        map_bytes_per_block: 8.0,
        journal: Some("j".into()),
        durable: Some(iolab_doc::DurableLogResult {
            log: "j.durable".into(),
            records: 40,
            blocks_raised: 12,
            torn_tail_bytes: 14,
            mismatched_blocks: 1,
            ..Default::default()
        }),
        stopped: false,
    });
    r.inject = Some(InjectResult {
        seed: 1,
        faults: vec![InjectCount {
            kind: "lost-write".into(),
            spec: "lost-write:0.01".into(),
            injected: 3,
            live: Some(2),
            detected: Some(2),
        }],
        unexplained_mismatches: Some(0),
    });
    r
}

fn sample_loadgen() -> RunResult {
    use crate::loadgen::{BacklogPoint, LoadgenResult, TransactionResult};
    let mut r = sample();
    let lat = r.total.all.lat_ns;
    r.loadgen = Some(LoadgenResult {
        users: 10,
        mode: "rate".into(),
        outstanding_per_user: 1,
        rate: Some("500/8h".into()),
        arrival: Some("poisson".into()),
        offered_per_s: Some(10.0 * 62.5 / 3600.0),
        offered_per_hour: Some(625.0),
        dispatched: 120,
        completed: 100,
        failed: 0,
        transactions_per_s: 0.1736,
        transactions_per_hour: 625.0,
        latency_ns: lat,
        transactions: vec![
            TransactionResult {
                name: "send_mail".into(),
                weight: 1,
                steps: 4,
                dispatched: 60,
                completed: 50,
                transactions_per_hour: 312.5,
                latency_ns: lat,
            },
            TransactionResult {
                name: "idle".into(),
                weight: 1,
                steps: 1,
                dispatched: 0,
                completed: 0,
                transactions_per_hour: 0.0,
                latency_ns: None,
            },
        ],
        backlog_at_end: 20,
        backlog_max: 20,
        executing_max: 10,
        beyond_ring: 0,
        overload_threshold: 15.0,
        overload: true,
        backlog: vec![BacklogPoint { t_s: 1.0, dispatched: 120, completed: 100, backlog: 20 }],
    });
    r.warnings.push(Warning::TransactionOverload { users: 10, backlog_max: 20, backlog_at_end: 20 });
    r
}

#[test]
fn loadgen_block_shows_counts_backlog_and_latency_per_transaction() {
    let text = text(&sample_loadgen());
    assert!(
        text.contains("users   10 users, rate mode, 500/8h per user (poisson): 625 transactions/h offered"),
        "{text}"
    );
    assert!(text.contains("tasks   dispatched 120, completed 100, 625 transactions/h"), "{text}");
    assert!(
        text.contains("backlog at end 20, max 20 (overload limit 15 = 1.5 x users): OVERLOADED"),
        "{text}"
    );
    assert!(text.contains("send_mail"), "{text}");
    assert!(text.lines().any(|l| l.starts_with("idle") && l.contains('-')), "{text}");
    let back = RunResult::from_json(&crate::tests::json(&sample_loadgen())).unwrap();
    assert_eq!(back.loadgen, sample_loadgen().loadgen);
}

/// A run with a `db` group (offered 1,000 IOPS) and a `log` group (100 IOPS), for the verdict tests.
pub(crate) fn with_groups(db_read_mean: f64, db_imax: f64, log_write_mean: f64, db_iops: f64) -> RunResult {
    let mut r = sample();
    let mut db = r.groups[0].clone();
    db.name = "db".into();
    db.rate_iops = Some(1000.0);
    db.total.read.lat_ns.as_mut().unwrap().mean = db_read_mean;
    db.read_interval_mean_max_ns = Some(db_imax);
    db.total.all.iops = db_iops;
    let mut log = r.groups[0].clone();
    log.name = "log".into();
    log.rate_iops = Some(100.0);
    log.total.write.lat_ns.as_mut().unwrap().mean = log_write_mean;
    log.write_interval_mean_max_ns = Some(log_write_mean * 2.0);
    r.groups = vec![db, log];
    r
}

/// The database and log group names of [`with_groups`].
pub(crate) fn names() -> (Vec<String>, Vec<String>) {
    (vec!["db".into()], vec!["log".into()])
}

/// A document as text (the text exporter renders every document).
pub(crate) fn text(doc: &dyn Document) -> String {
    TextExporter.render(doc)
}

/// A document as JSON (the JSON exporter renders every document).
pub(crate) fn json(doc: &dyn Document) -> String {
    JsonExporter.render(doc)
}

/// A document as CSV; panics for a document without a CSV form.
pub(crate) fn csv(doc: &dyn Document) -> String {
    CsvExporter.export(doc).expect("the document has a CSV form")
}

/// A document as Markdown; panics for a document without a Markdown form.
pub(crate) fn markdown(doc: &dyn Document) -> String {
    MarkdownExporter.export(doc).expect("the document has a Markdown form")
}
