//! Precision, Little's law, queueing and RAID cost of the device models, on virtual time.

mod common;
use common::{run, spec};
use iolab_sim::bench::{closed_loop, ClosedLoad};
use iolab_sim::models::{Array, Fixed};
use iolab_sim::{Done, Model, Request};

/// At queue depth 1 with uniformly random offsets, the measured mean service time is the analytic one. Writes
/// are measured on the media (`wcache=none`): a disk or array caches writes faster than it can drain them, so
/// its cached writes soon wait for room and the idle-device figure no longer applies.
#[test]
fn qd1_mean_service_matches_expected_within_2_percent() {
    let cases = [
        ("sim:hdd,7k2", 4096, 0.0),
        ("sim:hdd,7k2,wcache=none", 8192, 1.0),
        ("sim:hdd,10k", 4096, 0.0),
        ("sim:hdd,10k", 8192, 0.0),
        ("sim:hdd,10k,wcache=none", 4096, 1.0),
        ("sim:hdd,15k", 4096, 0.0),
        ("sim:hdd,15k,wcache=none", 8192, 1.0),
        ("sim:ssd,sata", 4096, 0.0),
        ("sim:ssd,sata,wcache=none", 8192, 1.0),
        ("sim:ssd,nvme", 4096, 0.0),
        ("sim:ssd,nvme,wcache=none", 8192, 1.0),
        ("sim:ssd,nvme", 1 << 20, 0.0),
        ("sim:array", 4096, 0.0),
        ("sim:array", 8192, 0.0),
        ("sim:array,wcache=none", 8192, 1.0),
        ("sim:array,raid=10,wcache=none", 8192, 1.0),
        ("sim:array,raid=0,wcache=none", 4096, 1.0),
        ("sim:array,member=hdd:15k,size=200G,wcache=none", 8192, 1.0),
        ("sim:array,member=ssd:sata,wcache=none", 8192, 1.0),
        ("sim:array,raid=10,member=ssd,wcache=none", 4096, 1.0),
        // Writes into a cache the media drains faster than they arrive: transfer plus the cache's fixed cost.
        ("sim:ssd,sata", 8192, 1.0),
        ("sim:ssd,nvme", 8192, 1.0),
        ("sim:fixed,latency=250us,servers=4", 4096, 0.0),
    ];
    for (s, len, wf) in cases {
        let (r, expected) = run(s, 1, len, wf, 20_000, 7);
        let ratio = r.mean_latency_ns / expected;
        assert!(
            (ratio - 1.0).abs() < 0.02,
            "{s} len={len} write={wf}: measured {} vs expected {expected} ns",
            r.mean_latency_ns
        );
    }
}

/// Mean in flight = throughput x mean latency, at every depth.
#[test]
fn littles_law_holds_at_every_depth() {
    for s in [
        "sim:hdd,7k2",
        "sim:hdd,10k",
        "sim:hdd,15k",
        "sim:ssd,sata",
        "sim:ssd,nvme",
        "sim:array",
        "sim:array,raid=10",
    ] {
        for qd in [1, 4, 16, 64] {
            let (r, _) = run(s, qd, 8192, 0.3, 10_000, 3);
            assert!((r.littles_ratio() - 1.0).abs() < 0.02, "{s} qd={qd}: {r:?}");
            assert!((r.mean_in_flight - qd as f64).abs() / (qd as f64) < 0.02, "{s} qd={qd}: {r:?}");
        }
    }
}

/// Command reordering (SPTF) raises a disk's IOPS with depth; FIFO (queue_depth=1) does not.
#[test]
fn hdd_queueing_raises_iops_only_with_reordering() {
    let (q1, _) = run("sim:hdd,10k", 1, 4096, 0.0, 5_000, 1);
    let (q32, _) = run("sim:hdd,10k", 32, 4096, 0.0, 5_000, 1);
    assert!(q32.iops > 2.0 * q1.iops, "SPTF at qd 32: {} vs qd 1: {}", q32.iops, q1.iops);
    let (f32, _) = run("sim:hdd,10k,queue_depth=1", 32, 4096, 0.0, 5_000, 1);
    assert!((f32.iops / q1.iops - 1.0).abs() < 0.03, "FIFO at qd 32: {} vs qd 1: {}", f32.iops, q1.iops);
    // IOPS grow with depth (at qd 2 the drive never has a choice: one request waits when it picks).
    let mut last = 0.0;
    for qd in [1, 4, 8, 16, 32, 64] {
        let (r, _) = run("sim:hdd,15k", qd, 4096, 0.0, 4_000, 2);
        assert!(r.iops > last, "qd {qd}: {} <= {last}", r.iops);
        last = r.iops;
    }
}

/// A sequential stream on an HDD runs at the media rate (plus per-command overhead), not at random IOPS.
#[test]
fn hdd_sequential_streams_at_media_rate() {
    let p = match spec("sim:hdd,10k") {
        iolab_spec::SimSpec::Hdd(p) => p,
        _ => unreachable!(),
    };
    let mut m = iolab_sim::models::Hdd::new(&p, 1, 4);
    let mut done = Vec::new();
    let mut t = 0;
    let len = 1 << 20;
    for i in 0..100u64 {
        m.submit(t, Request::read(i, i * len as u64, len));
        t = m.next_event_ns().unwrap();
        m.advance(t, &mut done);
    }
    // The first request pays seek and rotation; the other 99 only overhead + transfer.
    let per = (len as f64 / (p.media_mb_s * 1e6) * 1e9) + p.overhead_ns as f64;
    let tail = (t - done[0].at_ns) as f64 / 99.0;
    assert!((tail / per - 1.0).abs() < 1e-3, "{tail} vs {per}");
}

fn array(s: &str) -> Array {
    match spec(s) {
        iolab_spec::SimSpec::Array(p) => Array::new(&p, 9, 64),
        _ => unreachable!(),
    }
}

fn member_cost(s: &str, write: bool, len: u32, n: u64) -> f64 {
    let mut a = array(s);
    let region = match spec(s) {
        iolab_spec::SimSpec::Array(p) => p.size_bytes,
        _ => unreachable!(),
    };
    let r = closed_loop(
        &mut a,
        &ClosedLoad { qd: 8, len, write_fraction: write as u8 as f64, region, warmup: 0, ios: n, seed: 4 },
    );
    assert!(r.ios > 0);
    a.member_requests() as f64 / (n + 8) as f64
}

/// RAID 5 small random writes cost 4 member I/Os (read data and parity, write both); RAID 10 writes cost 2,
/// reads 1; a full-row RAID 5 write costs one per member and no reads.
#[test]
fn raid_io_cost() {
    let near = |a: f64, b: f64| (a - b).abs() < 0.05;
    let c = member_cost("sim:array", true, 4096, 2000);
    assert!(near(c, 4.0), "RAID 5 small write: {c}");
    let c = member_cost("sim:array", false, 8192, 2000);
    assert!(near(c, 1.0), "RAID 5 read: {c}");
    let c = member_cost("sim:array,raid=10", true, 8192, 2000);
    assert!(near(c, 2.0), "RAID 10 write: {c}");
    let c = member_cost("sim:array,raid=10", false, 8192, 2000);
    assert!(near(c, 1.0), "RAID 10 read: {c}");
    let c = member_cost("sim:array,raid=0", true, 8192, 2000);
    assert!(near(c, 1.0), "RAID 0 write: {c}");
    // 7 data units of 64K = one full row of the default array, aligned: 8 writes, no reads.
    let c = member_cost("sim:array", true, 7 * 65536, 500);
    assert!(near(c, 8.0), "RAID 5 full-row write: {c}");
}

/// RAID 5 parity rotates (left-symmetric), so small writes spread over all members.
#[test]
fn raid5_spreads_parity_over_all_members() {
    let mut a = array("sim:array,member=ssd:sata");
    for i in 0..64u64 {
        // Unit 0 of rows 0..63: the data disk is parity + 1.
        a.submit(0, Request::write(i, i * 7 * 65536, 4096));
    }
    for m in 0..8 {
        assert_eq!(a.member_in_flight(m), 16, "member {m}");
    }
}

/// The same seed gives the same completions; another seed gives other ones.
#[test]
fn deterministic_for_a_seed() {
    for s in ["sim:hdd,7k2", "sim:ssd,sata", "sim:array", "sim:array,raid=10,member=ssd"] {
        let trace = |seed: u64| -> Vec<Done> {
            let sp = spec(s);
            let mut m = iolab_sim::build(&sp, seed, 16);
            let mut out = Vec::new();
            let mut rng = iolab_rng::SplitMix64::new(5);
            let mut t = 0;
            for i in 0..2000u64 {
                let offset = rng.below(1 << 20) * 4096;
                m.submit(
                    t,
                    if i % 3 == 0 { Request::write(i, offset, 4096) } else { Request::read(i, offset, 4096) },
                );
                // Room for the next one (a write cache's drain is an event that completes nothing).
                while m.in_flight() >= 16 {
                    t = m.next_event_ns().unwrap();
                    m.advance(t, &mut out);
                }
            }
            while let Some(t) = m.next_event_ns() {
                m.advance(t, &mut out);
            }
            out
        };
        assert_eq!(trace(1), trace(1), "{s}");
        assert_ne!(trace(1), trace(2), "{s}");
    }
}

/// sim:fixed keeps the engine's rule: completion = max(now, earliest free server) + latency, FIFO.
#[test]
fn fixed_keeps_the_deadline_rule() {
    let mut m = Fixed::new(100, 2, 8);
    let r = |tag| Request::read(tag, 0, 512);
    m.submit(0, r(0));
    m.submit(0, r(1));
    m.submit(10, r(2));
    let mut out = Vec::new();
    m.advance(99, &mut out);
    assert!(out.is_empty());
    m.advance(100, &mut out);
    assert_eq!(out, vec![Done { tag: 0, at_ns: 100 }, Done { tag: 1, at_ns: 100 }]);
    assert_eq!(m.next_event_ns(), Some(200));
    m.submit(150, r(3));
    m.advance(1000, &mut out);
    assert_eq!(&out[2..], &[Done { tag: 2, at_ns: 200 }, Done { tag: 3, at_ns: 250 }]);
    assert_eq!(m.expected_service_ns(false, 4096), 100.0);
}

/// The precision table for docs/BENCHMARKS.md: IOPS at queue depths 1 to 64 per preset, on virtual time,
/// against the analytic figure where one exists (qd 1 for every model; min(qd, servers or channels) / mean
/// service for sim:fixed and sim:ssd). Run with `cargo test -p iolab-sim --release -- --nocapture precision_table`.
#[test]
fn precision_table() {
    let presets: [(&str, u32, f64, Option<u32>); 9] = [
        ("sim:fixed,latency=100us,servers=4", 4096, 0.0, Some(4)),
        ("sim:hdd,7k2", 4096, 0.0, None),
        ("sim:hdd,10k", 4096, 0.0, None),
        ("sim:hdd,15k", 4096, 0.0, None),
        ("sim:ssd,sata", 4096, 0.0, Some(4)),
        ("sim:ssd,nvme", 4096, 0.0, Some(9)),
        ("sim:array", 8192, 0.0, None),
        ("sim:array,wcache=none", 8192, 1.0, None),
        ("sim:array,raid=10,wcache=none", 8192, 1.0, None),
    ];
    println!();
    println!(
        "| target | I/O | qd | IOPS measured | IOPS expected | error | mean latency | Little's law L/(X*W) |"
    );
    println!("|---|---|---:|---:|---:|---:|---:|---:|");
    for (s, len, wf, servers) in presets {
        for qd in [1usize, 2, 4, 8, 16, 32, 64] {
            let (r, e) = run(s, qd, len, wf, 20_000, 11);
            let expected = match (qd, servers) {
                (1, _) => Some(1e9 / e),
                (_, Some(n)) => Some(qd.min(n as usize) as f64 * 1e9 / e),
                _ => None,
            };
            let (exp_s, err_s) = match expected {
                Some(x) => (format!("{x:.0}"), format!("{:+.2}%", (r.iops / x - 1.0) * 100.0)),
                None => ("-".into(), "-".into()),
            };
            if let Some(x) = expected {
                assert!((r.iops / x - 1.0).abs() < 0.02, "{s} qd {qd}: {} vs {x}", r.iops);
            }
            println!(
                "| `{s}` | {} {} | {qd} | {:.0} | {exp_s} | {err_s} | {:.3} ms | {:.4} |",
                iolab_spec::units::format_size(len as u64),
                if wf > 0.5 { "random write" } else { "random read" },
                r.iops,
                r.mean_latency_ns / 1e6,
                r.littles_ratio()
            );
        }
    }
}
