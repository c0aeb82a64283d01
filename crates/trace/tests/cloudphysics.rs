//! The CloudPhysics sample trace (113,872 requests of one virtual disk): libCacheSim's published LRU miss
//! ratios, the exact curve against a plain simulation, and SHARDS against exact. The sample lives outside
//! the repository (IOLAB_TRACE_SAMPLE, or /work/shared/traces/cloudphysics-sample.csv); without it these
//! tests say so and pass.

use iolab_trace::mrc::{default_sizes, CurvePoint, Method, MrcBuilder, MrcOptions, Objects, Writes};
use iolab_trace::{open, Format, TraceRecord};
use std::collections::{BTreeMap, HashMap};

fn sample() -> Option<Vec<TraceRecord>> {
    let path =
        std::env::var("IOLAB_TRACE_SAMPLE").unwrap_or("/work/shared/traces/cloudphysics-sample.csv".into());
    if !std::path::Path::new(&path).exists() {
        iolab_testkit::skip(format_args!(
            "the CloudPhysics sample trace is missing at {path} (set IOLAB_TRACE_SAMPLE)"
        ));
        return None;
    }
    let mut t = open(&path).unwrap();
    assert_eq!(t.format(), Format::CloudPhysics);
    let mut out = Vec::new();
    while let Some(r) = t.next_record().unwrap() {
        out.push(r);
    }
    assert_eq!((out.len(), t.bad.count), (113_872, 0));
    Some(out)
}

fn curve(records: &[TraceRecord], options: MrcOptions, method: Method, sizes: &[u64]) -> Vec<CurvePoint> {
    let mut b = MrcBuilder::new(options, method, false);
    records.iter().for_each(|r| b.add(r));
    b.finish().lru_curve(sizes)
}

const REQUESTS: MrcOptions = MrcOptions { objects: Objects::Requests, writes: Writes::Count };
const LINES: MrcOptions = MrcOptions { objects: Objects::Lines(4096), writes: Writes::Count };

#[test]
fn libcachesims_published_lru_miss_ratios() {
    let Some(records) = sample() else { return };
    let got = curve(&records, REQUESTS, Method::Exact, &[1, 2, 3, 4, 5, 20]);
    let want = [0.976421, 0.970607, 0.965681, 0.959024, 0.956934, 0.927015];
    for (p, w) in got.iter().zip(want) {
        assert!((p.miss_ratio - w).abs() < 5e-7, "size {}: {} vs libCacheSim's {w}", p.objects, p.miss_ratio);
    }
}

/// The 4 KiB lines the sample's requests touch, in order.
fn line_refs(records: &[TraceRecord]) -> Vec<u64> {
    records.iter().flat_map(|r| (r.offset / 4096)..=((r.offset + r.len.max(1) as u64 - 1) / 4096)).collect()
}

fn naive_lru(refs: &[u64], size: usize) -> f64 {
    let (mut by_time, mut time_of) = (BTreeMap::new(), HashMap::new());
    let mut misses = 0;
    for (t, &k) in refs.iter().enumerate() {
        if let Some(old) = time_of.insert(k, t) {
            by_time.remove(&old);
        } else {
            misses += 1;
            if by_time.len() == size {
                let (_, victim) = by_time.pop_first().unwrap();
                time_of.remove(&victim);
            }
        }
        by_time.insert(t, k);
    }
    misses as f64 / refs.len() as f64
}

#[test]
fn the_exact_curve_equals_a_simulation_on_the_sample() {
    let Some(records) = sample() else { return };
    let refs = line_refs(&records);
    let sizes = [1, 10, 100, 1_000, 5_000, 20_000, 50_000, 100_000];
    for p in curve(&records, LINES, Method::Exact, &sizes) {
        let naive = naive_lru(&refs, p.objects as usize);
        assert!((p.miss_ratio - naive).abs() < 1e-12, "{} lines: {} vs {naive}", p.objects, p.miss_ratio);
    }
}

#[test]
fn shards_is_within_a_hundredth_of_exact_on_the_sample() {
    let Some(records) = sample() else { return };
    let sizes = default_sizes(200_000);
    let exact = curve(&records, LINES, Method::Exact, &sizes);
    for method in [Method::FixedRate(0.1), Method::FixedSize(8_192)] {
        let est = curve(&records, LINES, method, &sizes);
        let mae = exact.iter().zip(&est).map(|(a, b)| (a.miss_ratio - b.miss_ratio).abs()).sum::<f64>()
            / sizes.len() as f64;
        eprintln!("{method:?}: mean absolute error {mae:.4}");
        assert!(mae <= 0.01, "{method:?}: mean absolute error {mae}");
    }
}

/// Sizes spread evenly on a log scale from 100 to 30,000 objects (33).
fn small_sizes() -> Vec<u64> {
    (0..=32).map(|i| (100.0 * 300f64.powf(i as f64 / 32.0)).round() as u64).collect()
}

#[test]
fn shards_at_a_fixed_rate_is_close_to_exact_at_small_sizes_on_the_sample() {
    // Requests as objects: the sample's 113,872 requests touch few enough objects that a sample at 0.1 holds
    // about 10 of them in a cache of 100, where the sample's distances alone were off by 0.028.
    let Some(records) = sample() else { return };
    let sizes = small_sizes();
    let exact = curve(&records, REQUESTS, Method::Exact, &sizes);
    for rate in [0.1, 0.01] {
        let est = curve(&records, REQUESTS, Method::FixedRate(rate), &sizes);
        let mae = exact.iter().zip(&est).map(|(a, b)| (a.miss_ratio - b.miss_ratio).abs()).sum::<f64>()
            / sizes.len() as f64;
        let at_100 = est[0].miss_ratio - exact[0].miss_ratio;
        eprintln!("rate {rate}: mean absolute error {mae:.4} over 100..30,000 objects, {at_100:+.4} at 100");
        assert!(mae <= 0.005, "rate {rate}: mean absolute error {mae} over 100..30,000 objects");
        assert!(at_100.abs() < 1e-9, "rate {rate}: off by {at_100} at 100 objects");
    }
}
