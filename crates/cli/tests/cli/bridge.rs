//! Issue 18's bridge: `iolab mrc --writes install` predicts the read-line miss ratio that a replay with an
//! LRU `--cache` measures with the storage in the loop. One op at a time (`--speed max --qd 1`) the cache sees
//! the trace's order; below 1,024 lines the cache has one shard, so its LRU is exact and the two agree to
//! the last miss; above, the index is sharded by line (an LRU per shard) and they agree closely.

use crate::util::{iolab, num, tempdir};
use iolab_trace::{TraceHeader, TraceOp, TraceRecord, TraceWriter};
use serde_json::Value;
use std::path::Path;

const LINE: u64 = 4096;

/// 12,000 line-aligned ops over 4,096 lines, skewed to the low ones: reads of one line, writes of 1 to 4
/// lines (a third of the ops). Fixed seed.
fn records() -> Vec<TraceRecord> {
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    (0..12_000u64)
        .map(|i| {
            let u = (next() >> 11) as f64 / (1u64 << 53) as f64;
            let line = (u * u * 4096.0) as u64;
            let r = next();
            let (op, lines) =
                if r % 3 == 0 { (TraceOp::Write, 1 + (r >> 8) % 4) } else { (TraceOp::Read, 1) };
            TraceRecord::new(i * 1000, op, 0, line * LINE, (lines * LINE) as u32)
        })
        .collect()
}

fn write_trace(path: &Path) {
    let header = TraceHeader { targets: vec!["disk0".into()], ..TraceHeader::default() };
    let mut w = TraceWriter::new(std::fs::File::create(path).unwrap(), &header).unwrap();
    records().iter().for_each(|r| w.write(r).unwrap());
    w.finish().unwrap();
}

fn json_of(args: &[&str]) -> Value {
    let out = iolab().args(args).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "iolab {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The curve's LRU miss ratio at `size` from `iolab mrc`.
fn predicted(trace: &str, size: &str, writes: &str) -> f64 {
    let v = json_of(&[
        "mrc", trace, "--writes", writes, "--exact", "--sizes", size, "--policy", "lru", "--json", "-",
    ]);
    assert_eq!(v["trace"]["writes"], writes);
    num(&v, "/curves/0/points/0/miss_ratio")
}

/// Read lines missed per read line looked up, replaying with an LRU cache of `size` (virtual time).
fn measured(trace: &str, size: &str) -> f64 {
    let v = json_of(&[
        "replay",
        trace,
        "--target",
        "sim:fixed,latency=100us,size=64M",
        "--clock",
        "virtual",
        "--speed",
        "max",
        "--qd",
        "1",
        "--cache",
        size,
        "--cache-policy",
        "lru",
        "--json",
        "-",
        "-q",
        "--no-save",
    ]);
    assert_eq!(num(&v, "/replay/replayed"), 12_000.0);
    let (hits, misses) = (num(&v, "/cache/hits"), num(&v, "/cache/misses"));
    misses / (hits + misses)
}

#[test]
fn a_replayed_lru_cache_misses_what_the_curve_with_writes_installing_predicts() {
    let dir = tempdir();
    let trace = dir.path().join("t.iolt");
    write_trace(&trace);
    let trace = trace.to_str().unwrap();

    // 512 lines: one shard, exact LRU. Every read-line miss agrees.
    let (curve, cache) = (predicted(trace, "2M", "install"), measured(trace, "2M"));
    assert!((curve - cache).abs() < 1e-9, "2 MiB: curve {curve}, replayed cache {cache}");
    // Counting writes, or passing them over, predicts something else: the mode is what makes them agree.
    for other in ["count", "ignore"] {
        let wrong = predicted(trace, "2M", other);
        assert!((wrong - cache).abs() > 1e-3, "2 MiB: --writes {other} gives {wrong}, cache {cache}");
    }
    // 3,072 lines: sharded by line, an LRU per shard, close to one LRU.
    let (curve, cache) = (predicted(trace, "12M", "install"), measured(trace, "12M"));
    assert!((curve - cache).abs() < 0.01, "12 MiB: curve {curve}, replayed cache {cache}");
}
