use super::*;
use std::collections::{BTreeMap, HashMap};

/// A plain LRU cache of `size` objects, simulated: the reference the exact curve must equal.
fn naive_lru_miss_ratio(refs: &[u64], size: usize) -> f64 {
    let (mut by_time, mut time_of) = (BTreeMap::new(), HashMap::new());
    let mut misses = 0;
    for (t, &k) in refs.iter().enumerate() {
        match time_of.insert(k, t) {
            Some(old) => {
                by_time.remove(&old);
            }
            None => {
                misses += 1;
                if by_time.len() == size {
                    let (_, victim) = by_time.pop_first().unwrap();
                    time_of.remove(&victim);
                }
            }
        }
        by_time.insert(t, k);
    }
    misses as f64 / refs.len() as f64
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

fn exact_curve(refs: &[u64], sizes: &[u64]) -> Vec<Point> {
    let mut lru = LruDistances::new(Method::Exact);
    refs.iter().for_each(|&k| lru.access(k));
    let hist = lru.finish();
    sizes
        .iter()
        .zip(hist.miss_ratios(sizes))
        .map(|(&objects, miss_ratio)| Point { objects, miss_ratio })
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
    let sim = simulate(CachePolicy::Lru, &refs, 1.0, &sizes);
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

fn mae(a: &[Point], b: &[Point]) -> f64 {
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
        let est: Vec<Point> = sizes
            .iter()
            .zip(hist.miss_ratios(&sizes))
            .map(|(&objects, miss_ratio)| Point { objects, miss_ratio })
            .collect();
        let e = mae(&exact, &est);
        assert!(e <= 0.01, "{method:?}: mean absolute error {e}");
    }
}

#[test]
fn the_recommendation_is_the_smallest_size_near_the_best_hit_ratio() {
    let p = |objects, miss_ratio| Point { objects, miss_ratio };
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
