//! MRC accuracy at small sizes: the mean absolute error of SHARDS against the exact LRU curve on the
//! CloudPhysics sample trace, over 33 sizes spread evenly on a log scale from 100 to 30,000 objects, and the
//! error at 100 (docs/TRACES.md has the figures).
//!
//! `cargo run --release -p iolab-trace --example mrc_accuracy -- [TRACE]` (default: IOLAB_TRACE_SAMPLE, or
//! /work/shared/traces/cloudphysics-sample.csv)

use iolab_trace::mrc::{Method, MrcBuilder, MrcOptions, Objects, Writes};
use iolab_trace::{open, TraceRecord};

fn records(path: &str) -> Vec<TraceRecord> {
    let mut t = open(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut out = Vec::new();
    while let Some(r) = t.next_record().expect("a record") {
        out.push(r);
    }
    out
}

fn curve(records: &[TraceRecord], options: MrcOptions, method: Method, sizes: &[u64]) -> Vec<f64> {
    let mut b = MrcBuilder::new(options, method, false);
    records.iter().for_each(|r| b.add(r));
    b.finish().lru_curve(sizes).iter().map(|p| p.miss_ratio).collect()
}

fn main() {
    let default =
        std::env::var("IOLAB_TRACE_SAMPLE").unwrap_or("/work/shared/traces/cloudphysics-sample.csv".into());
    let path = std::env::args().nth(1).unwrap_or(default);
    let records = records(&path);
    let sizes: Vec<u64> = (0..=32).map(|i| (100.0 * 300f64.powf(i as f64 / 32.0)).round() as u64).collect();
    let requests = MrcOptions { objects: Objects::Requests, writes: Writes::Count };
    let lines = MrcOptions { objects: Objects::Lines(4096), writes: Writes::Count };
    for (name, options) in [("requests", requests), ("4 KiB lines", lines)] {
        let exact = curve(&records, options, Method::Exact, &sizes);
        for method in [Method::FixedRate(0.1), Method::FixedRate(0.01), Method::FixedSize(8192)] {
            let est = curve(&records, options, method, &sizes);
            let mae = exact.iter().zip(&est).map(|(a, b)| (a - b).abs()).sum::<f64>() / sizes.len() as f64;
            println!(
                "{name:<12} {:<22}: mean absolute error {mae:.4} over 100..30,000 objects, at 100 {:+.4}",
                format!("{method:?}"),
                est[0] - exact[0]
            );
        }
    }
}
