//! Golden test on a real block trace: the `lbn` column of the CloudPhysics sample that libCacheSim ships,
//! each value one object of unit size, through LRU must give exactly the miss ratios libCacheSim publishes
//! for it. ARC and S3-FIFO figures on the same trace are printed (sanity-checked, not asserted exactly).

use iolab_cache::policy::{AdaptiveReplacement, Lru, Policy, S3Fifo};

const TRACE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/traces/cloudphysics-sample.csv");

fn lbns() -> Option<Vec<u64>> {
    let text = match std::fs::read_to_string(TRACE) {
        Ok(t) => t,
        Err(e) => {
            iolab_testkit::skip(format_args!("trace golden test: cannot read {TRACE}: {e}"));
            return None;
        }
    };
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next()?.split(',').collect();
    let col = header.iter().position(|&h| h.trim() == "lbn").expect("an lbn column");
    Some(
        lines
            .filter(|l| !l.trim().is_empty())
            .map(|l| l.split(',').nth(col).unwrap().trim().parse().unwrap())
            .collect(),
    )
}

fn miss_ratio(p: &mut dyn Policy, seq: &[u64]) -> f64 {
    let mut evicted = Vec::new();
    let mut misses = 0u64;
    for &k in seq {
        if !p.access(k) {
            misses += 1;
            evicted.clear();
            p.insert(k, &mut evicted);
        }
    }
    misses as f64 / seq.len() as f64
}

#[test]
fn lru_on_the_cloudphysics_sample_gives_libcachesim_miss_ratios() {
    let Some(seq) = lbns() else { return };
    assert_eq!(seq.len(), 113_872, "requests in the sample");
    let golden =
        [(1usize, 0.976421), (2, 0.970607), (3, 0.965681), (4, 0.959024), (5, 0.956934), (20, 0.927015)];
    for (size, want) in golden {
        let got = miss_ratio(&mut Lru::new(size), &seq);
        println!("LRU   {size:>4} objects: miss ratio {got:.6} (libCacheSim {want:.6})");
        assert_eq!(format!("{got:.6}"), format!("{want:.6}"), "LRU at {size} objects");
    }
}

#[test]
fn arc_and_s3fifo_on_the_cloudphysics_sample() {
    let Some(seq) = lbns() else { return };
    for size in [5usize, 20, 100, 1000, 10_000] {
        let lru = miss_ratio(&mut Lru::new(size), &seq);
        let arc = miss_ratio(&mut AdaptiveReplacement::new(size), &seq);
        let s3 = miss_ratio(&mut S3Fifo::new(size), &seq);
        println!("{size:>6} objects: LRU {lru:.6}  ARC {arc:.6}  S3-FIFO {s3:.6}");
        for r in [lru, arc, s3] {
            assert!((0.0..=1.0).contains(&r));
        }
        if size == 20 {
            assert!(arc <= lru + 0.01, "ARC {arc} vs LRU {lru} at 20 objects");
        }
    }
}
