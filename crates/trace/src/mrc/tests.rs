use super::shards::NEAR_SAMPLED;
use super::*;
use std::collections::{BTreeMap, HashMap};

/// A plain LRU cache of `size` objects, simulated: the reference the exact curve must equal.
fn naive_lru_miss_ratio(refs: &[u64], size: usize) -> f64 {
    let refs: Vec<(u64, bool)> = refs.iter().map(|&k| (k, true)).collect();
    naive_lru_read_miss_ratio(&refs, size)
}

/// A plain LRU cache of `size` objects where each reference is counted or only uses or installs its object
/// (a write in [`Writes::Install`]): misses of counted references per counted reference.
fn naive_lru_read_miss_ratio(refs: &[(u64, bool)], size: usize) -> f64 {
    let (mut by_time, mut time_of) = (BTreeMap::new(), HashMap::new());
    let (mut misses, mut counted) = (0, 0);
    for (t, &(k, is_counted)) in refs.iter().enumerate() {
        counted += u64::from(is_counted);
        match time_of.insert(k, t) {
            Some(old) => {
                by_time.remove(&old);
            }
            None => {
                misses += u64::from(is_counted);
                if by_time.len() == size {
                    let (_, victim) = by_time.pop_first().unwrap();
                    time_of.remove(&victim);
                }
            }
        }
        by_time.insert(t, k);
    }
    misses as f64 / counted as f64
}

/// A skewed random stream: xorshift, squared to favour small keys.
fn skewed(n: usize, universe: u64, seed: u64) -> Vec<u64> {
    let mut x = seed | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let u = (x >> 11) as f64 / (1u64 << 53) as f64;
            (u * u * universe as f64) as u64
        })
        .collect()
}

fn exact_curve(refs: &[u64], sizes: &[u64]) -> Vec<CurvePoint> {
    let mut lru = LruDistances::new(Method::Exact);
    refs.iter().for_each(|&k| lru.access(k));
    let hist = lru.finish();
    sizes
        .iter()
        .zip(hist.miss_ratios(sizes))
        .map(|(&objects, miss_ratio)| CurvePoint { objects, miss_ratio })
        .collect()
}

#[test]
fn the_exact_curve_equals_a_simulation_at_every_size() {
    // 300,000 references renumber the Fenwick tree's times several times.
    let refs = skewed(300_000, 50_000, 7);
    let sizes = [1, 2, 3, 10, 100, 999, 5_000, 20_000, 49_999, 60_000];
    for p in exact_curve(&refs, &sizes) {
        let naive = naive_lru_miss_ratio(&refs, p.objects as usize);
        assert!(
            (p.miss_ratio - naive).abs() < 1e-12,
            "size {}: exact {} naive {naive}",
            p.objects,
            p.miss_ratio
        );
    }
}

#[test]
fn iolab_caches_lru_policy_agrees_with_the_exact_curve() {
    let refs = skewed(50_000, 8_000, 11);
    let sizes = [1, 16, 500, 4_000];
    let sim = simulate(CachePolicy::Lru, &References::counted(refs.clone()), 1.0, &sizes);
    for (p, s) in exact_curve(&refs, &sizes).iter().zip(sim) {
        assert!(
            (p.miss_ratio - s.miss_ratio).abs() < 1e-12,
            "size {}: {} vs {}",
            p.objects,
            p.miss_ratio,
            s.miss_ratio
        );
    }
}

fn mae(a: &[CurvePoint], b: &[CurvePoint]) -> f64 {
    a.iter().zip(b).map(|(x, y)| (x.miss_ratio - y.miss_ratio).abs()).sum::<f64>() / a.len() as f64
}

#[test]
fn shards_is_within_a_hundredth_of_exact_on_a_large_random_stream() {
    // A hard case for spatial sampling: few very hot objects (the hottest draws 0.16 % of references).
    let refs = skewed(2_000_000, 400_000, 3);
    let sizes = default_sizes(400_000);
    let exact = exact_curve(&refs, &sizes);
    for method in [Method::FixedRate(0.1), Method::FixedSize(32_768)] {
        let mut lru = LruDistances::new(method);
        refs.iter().for_each(|&k| lru.access(k));
        let hist = lru.finish();
        let est: Vec<CurvePoint> = sizes
            .iter()
            .zip(hist.miss_ratios(&sizes))
            .map(|(&objects, miss_ratio)| CurvePoint { objects, miss_ratio })
            .collect();
        let e = mae(&exact, &est);
        assert!(e <= 0.01, "{method:?}: mean absolute error {e}");
    }
}

#[test]
fn the_recommendation_is_the_smallest_size_near_the_best_hit_ratio() {
    let p = |objects, miss_ratio| CurvePoint { objects, miss_ratio };
    let curve = [p(1, 0.9), p(2, 0.5), p(4, 0.22), p(8, 0.21), p(16, 0.2)];
    let r = recommend(&curve).unwrap();
    assert_eq!(r.point.objects, 4);
    assert!((r.best_hit_ratio - 0.8).abs() < 1e-12);
    assert_eq!(knee(&curve).unwrap().objects, 4);
    assert!(recommend(&[p(1, 1.0), p(2, 1.0)]).is_none());
}

#[test]
fn default_sizes_rise_and_pass_the_working_set() {
    let s = default_sizes(1000);
    assert!(s.windows(2).all(|w| w[0] < w[1]));
    assert!(*s.last().unwrap() >= 1000 && s[0] == 1);
    assert_eq!(thin_sizes(&s, 5).len(), 5);
}

/// Records of 1 to 4 lines of 4 KiB, a third of them writes, over a skewed set of lines.
fn mixed_records(n: usize, universe: u64, seed: u64) -> Vec<TraceRecord> {
    let lines = skewed(n, universe, seed);
    lines
        .iter()
        .enumerate()
        .map(|(i, &l)| {
            let op = if l % 3 == 0 { TraceOp::Write } else { TraceOp::Read };
            TraceRecord::new(i as u64, op, 0, l * 4096, 4096 * (1 + (i as u32 * 7) % 4))
        })
        .collect()
}

/// The references of `records` in `Writes::Install`: every line a record touches, counted for reads.
fn flagged(records: &[TraceRecord]) -> Vec<(u64, bool)> {
    let per_line = |r: &TraceRecord| {
        let read = r.op == TraceOp::Read;
        (r.offset / 4096..(r.offset + r.len as u64).div_ceil(4096)).map(move |l| (l, read))
    };
    records.iter().flat_map(per_line).collect()
}

#[test]
fn with_writes_installing_the_curve_counts_reads_in_a_cache_writes_fill() {
    let records = mixed_records(60_000, 6_000, 5);
    let options = MrcOptions { objects: Objects::Lines(4096), writes: Writes::Install };
    let mut b = MrcBuilder::new(options, Method::Exact, true);
    records.iter().for_each(|r| b.add(r));
    assert_eq!(b.ops() + b.installs(), records.len() as u64);
    let built = b.finish();
    let sizes = [1, 7, 100, 1_000, 3_000, 6_000, 7_000];
    let refs = flagged(&records);
    let sim = simulate(CachePolicy::Lru, built.kept.as_ref().unwrap(), 1.0, &sizes);
    for (p, s) in built.lru_curve(&sizes).iter().zip(sim) {
        let naive = naive_lru_read_miss_ratio(&refs, p.objects as usize);
        assert!(
            (p.miss_ratio - naive).abs() < 1e-12,
            "size {}: exact {} naive {naive}",
            p.objects,
            p.miss_ratio
        );
        assert!(
            (s.miss_ratio - naive).abs() < 1e-12,
            "size {}: lru policy {} naive {naive}",
            p.objects,
            s.miss_ratio
        );
    }
    // Counting writes, or passing them over, is another curve.
    let count = MrcOptions { writes: Writes::Count, ..options };
    let mut b = MrcBuilder::new(count, Method::Exact, false);
    records.iter().for_each(|r| b.add(r));
    assert_ne!(b.finish().lru_curve(&[1_000]), built.lru_curve(&[1_000]));
}

#[test]
fn shards_with_writes_installing_is_within_a_hundredth_of_exact() {
    let records = mixed_records(1_000_000, 200_000, 9);
    let options = MrcOptions { objects: Objects::Lines(4096), writes: Writes::Install };
    let curve = |method| {
        let mut b = MrcBuilder::new(options, method, false);
        records.iter().for_each(|r| b.add(r));
        b.finish().lru_curve(&default_sizes(200_000))
    };
    let exact = curve(Method::Exact);
    for method in [Method::FixedRate(0.1), Method::FixedSize(32_768)] {
        let e = mae(&exact, &curve(method));
        assert!(e <= 0.01, "{method:?}: mean absolute error {e}");
    }
}

/// A Zipf stream: `n` references over `universe` objects, the object of rank `k` drawn with probability
/// proportional to `1 / k^s`, the ranks scattered over the keys.
fn zipf(n: usize, universe: usize, s: f64, seed: u64) -> Vec<u64> {
    let mut cdf = Vec::with_capacity(universe);
    let mut sum = 0.0;
    for k in 1..=universe {
        sum += (k as f64).powf(-s);
        cdf.push(sum);
    }
    let mut x = seed | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let u = (x >> 11) as f64 / (1u64 << 53) as f64 * sum;
            (cdf.partition_point(|&c| c < u) as u64).wrapping_mul(0x2545_f491_4f6c_dd1d)
        })
        .collect()
}

fn sampled_curve(refs: &[u64], method: Method, sizes: &[u64]) -> Vec<CurvePoint> {
    let mut lru = LruDistances::new(method);
    refs.iter().for_each(|&k| lru.access(k));
    let hist = lru.finish();
    sizes
        .iter()
        .zip(hist.miss_ratios(sizes))
        .map(|(&objects, miss_ratio)| CurvePoint { objects, miss_ratio })
        .collect()
}

#[test]
fn shards_at_a_fixed_rate_is_exact_at_small_sizes_and_close_beyond() {
    // 40,000 objects: a sample of 4,000 at rate 0.1, 400 at 0.01; a small cache holds few sampled objects
    // (10 at 100 objects and rate 0.1), too few for the sample's distances alone.
    let refs = zipf(400_000, 40_000, 0.9, 21);
    let sizes: Vec<u64> = (0..=24).map(|i| (10.0 * 3_000f64.powf(i as f64 / 24.0)).round() as u64).collect();
    let exact = exact_curve(&refs, &sizes);
    for rate in [0.1, 0.01] {
        let est = sampled_curve(&refs, Method::FixedRate(rate), &sizes);
        let depth = (NEAR_SAMPLED / rate) as u64;
        for (e, s) in exact.iter().zip(&est).filter(|(e, _)| e.objects <= depth) {
            let diff = s.miss_ratio - e.miss_ratio;
            assert!(
                diff.abs() < 1e-9,
                "rate {rate}, {} objects (within the exact depth): off by {diff}",
                e.objects
            );
        }
        let e = mae(&exact, &est);
        eprintln!("rate {rate}: mean absolute error {e:.4} over 10..30,000 objects");
        assert!(e <= 0.004, "rate {rate}: mean absolute error {e} over 10..30,000 objects");
    }
}

/// A stream with both parts of a fixed-rate curve in it: hits within the exact depth (a Zipf set) and far
/// references (a uniform draw over many objects), interleaved.
fn near_and_far(n: usize, seed: u64) -> Vec<u64> {
    let hot = zipf(n, 30_000, 0.8, seed);
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    hot.into_iter()
        .map(|k| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            if x % 3 == 0 {
                (1 << 40) + x % 2_000_000
            } else {
                k
            }
        })
        .collect()
}

#[test]
fn fixed_rate_curves_are_pinned_to_the_bit() {
    // The exact small-size part and the rescaled sample beyond it, as computed when pinned: a change to the
    // near stack or to the sampling that moves any reference's distance changes some of these bits.
    let refs = near_and_far(600_000, 5);
    let sizes = [1, 3, 10, 30, 100, 300, 999, 1_000, 1_001, 3_000, 9_999, 10_000, 10_001, 30_000, 100_000];
    let pinned: [(f64, u64, [u64; 15]); 2] = [
        (
            0.1,
            57_460,
            [
                4607175663400576352,
                4607160471257833355,
                4607111261925904952,
                4606990505407896386,
                4606702380115735969,
                4606293963677528482,
                4605685647463860768,
                4605685046983910452,
                4605657356867871478,
                4604916720699624712,
                4603860774500353484,
                4603859881270803839,
                4603859881270803839,
                4602623566464439854,
                4600603974452694934,
            ],
        ),
        (
            0.01,
            5_003,
            [
                4607175663400576352,
                4607160471257833355,
                4607111261925904950,
                4606990505407896382,
                4606702380115735959,
                4606293963677528463,
                4605685647463860737,
                4605685046983910421,
                4605684431491961347,
                4604938680429665023,
                4603854273687389176,
                4603854138579400355,
                4603770694523728444,
                4602707963626020160,
                4600832064544242438,
            ],
        ),
    ];
    let got: Vec<(f64, u64, Vec<u64>)> = pinned
        .iter()
        .map(|&(rate, _, _)| {
            let mut lru = LruDistances::new(Method::FixedRate(rate));
            refs.iter().for_each(|&k| lru.access(k));
            let sampled = lru.sampled();
            (rate, sampled, lru.finish().miss_ratios(&sizes).iter().map(|r| r.to_bits()).collect())
        })
        .collect();
    for ((rate, sampled, want), got) in pinned.iter().zip(&got) {
        assert_eq!((*sampled, &want[..]), (got.1, &got.2[..]), "rate {rate}");
    }
}
