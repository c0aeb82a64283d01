//! The policies' tests, side by side: several compare one policy with another.

use super::*;
use crate::index::hash64;

/// Misses of `seq` through `p` (insert on every miss).
fn misses(p: &mut dyn Policy, seq: &[u64]) -> usize {
    let mut ev = Vec::new();
    let mut m = 0;
    for &k in seq {
        if !p.access(k) {
            m += 1;
            p.insert(k, &mut ev);
        }
    }
    m
}

#[test]
fn lru_evicts_the_least_recently_used() {
    let mut p = Lru::new(3);
    let mut ev = Vec::new();
    for k in [1, 2, 3] {
        p.insert(k, &mut ev);
    }
    assert!(p.access(1));
    p.insert(4, &mut ev);
    assert_eq!(ev, vec![2]);
    p.insert(5, &mut ev);
    assert_eq!(ev, vec![2, 3]);
    assert!(p.access(1) && p.access(4) && p.access(5) && !p.access(2));
    assert!(p.remove(4) && !p.remove(4));
    assert_eq!(p.len(), 2);
    p.set_capacity(1, &mut ev);
    assert_eq!(ev, vec![2, 3, 1]);
    assert_eq!(p.len(), 1);
}

#[test]
fn lru_matches_a_reference_model_on_random_sequences() {
    let mut x = 7u64;
    for cap in [1usize, 2, 5, 16] {
        let mut p = Lru::new(cap);
        let mut model: Vec<u64> = Vec::new(); // most recent last
        let mut ev = Vec::new();
        for _ in 0..5000 {
            x = hash64(x);
            let k = x % 24;
            let hit = p.access(k);
            assert_eq!(hit, model.contains(&k));
            if hit {
                model.retain(|&m| m != k);
                model.push(k);
            } else {
                ev.clear();
                p.insert(k, &mut ev);
                let mut want = Vec::new();
                if model.len() == cap {
                    want.push(model.remove(0));
                }
                model.push(k);
                assert_eq!(ev, want);
            }
        }
    }
}

#[test]
fn values_follow_keys_and_node_cursor_sees_every_resident() {
    for kind in [CachePolicy::Lru, CachePolicy::Arc, CachePolicy::S3Fifo] {
        let mut p = new_policy(kind, 8);
        let mut resident = std::collections::HashMap::new();
        let mut x = 3u64;
        for i in 0..2000u32 {
            x = hash64(x);
            let k = x % 30;
            if let Some(v) = p.access_value(k) {
                assert_eq!(resident.get(&k), Some(&v), "{kind:?}");
            } else {
                let v = i & MAX_VALUE;
                p.insert_value(k, v, &mut |ek, ev| {
                    assert_eq!(resident.remove(&ek), Some(ev), "{kind:?}");
                });
                resident.insert(k, v);
            }
            assert_eq!(p.len(), resident.len());
            assert!(p.len() <= 8);
        }
        let seen: std::collections::HashMap<u64, u32> =
            (0..p.node_slots()).filter_map(|i| p.node(i)).collect();
        assert_eq!(seen, resident, "{kind:?}");
    }
}

#[test]
fn arc_keeps_a_hot_set_through_a_scan_that_empties_lru() {
    let cap = 100;
    let hot: Vec<u64> = (0..50).collect();
    let mut seq = Vec::new();
    for _ in 0..20 {
        seq.extend(&hot);
    }
    seq.extend(1000..1500u64); // one-pass scan
    let probe = hot.clone();
    let mut lru = Lru::new(cap);
    let mut arc = AdaptiveReplacement::new(cap);
    misses(&mut lru, &seq);
    misses(&mut arc, &seq);
    let lru_after = misses(&mut lru, &probe);
    let arc_after = misses(&mut arc, &probe);
    assert_eq!(lru_after, 50, "LRU loses the whole hot set to the scan");
    assert_eq!(arc_after, 0, "ARC keeps the hot set in T2");
}

#[test]
fn arc_adapts_p_toward_recency_on_b1_hits() {
    let mut arc = AdaptiveReplacement::new(4);
    let mut ev = Vec::new();
    // 1 and 2 in T2, 3 and 4 in T1; 5 demotes 3 to B1; asking for 3 again grows p (recency pays).
    misses(&mut arc, &[1, 2, 1, 2, 3, 4, 5]);
    assert_eq!(arc.target_t1(), 0);
    assert!(!arc.access(3));
    arc.insert(3, &mut ev);
    assert_eq!(arc.target_t1(), 1);
    // A B2 hit shrinks it back: 1 (LRU of T2) is demoted to B2 by the next misses.
    misses(&mut arc, &[6, 7]);
    assert!(!arc.access(1));
    arc.insert(1, &mut ev);
    assert_eq!(arc.target_t1(), 0);
}

/// The paper's variant: a working set hit three times (2-bit counts at 2, main's reinsertion lowering them
/// one a pass) survives a stream of one-hit wonders three times the cache.
#[test]
fn s3fifo_paper_keeps_a_hot_set_through_a_scan() {
    let cap = 100;
    let mut s3 = S3Fifo::new(cap);
    let hot: Vec<u64> = (0..60).collect();
    for _ in 0..3 {
        misses(&mut s3, &hot);
    }
    let mut ev = Vec::new();
    for k in 1000..1300u64 {
        if !s3.access(k) {
            s3.insert(k, &mut ev);
        }
    }
    assert!(misses(&mut s3, &hot[..50]) <= 10, "hot keys lost to a scan");
}

#[test]
fn s3fifo_demotes_one_hit_wonders_quickly() {
    let cap = 100;
    let mut s3 = S3Fifo::one_bit(cap);
    let mut ev = Vec::new();
    // A working set hit twice gets to the main FIFO.
    let hot: Vec<u64> = (0..60).collect();
    misses(&mut s3, &hot);
    misses(&mut s3, &hot);
    // One-hit wonders stream by.
    ev.clear();
    for k in 1000..1300u64 {
        if !s3.access(k) {
            s3.insert(k, &mut ev);
        }
    }
    // The wonders were evicted through the small FIFO, not the hot keys.
    let hot_evicted = ev.iter().filter(|&&k| k < 60).count();
    assert!(hot_evicted <= 10, "hot keys evicted: {hot_evicted}");
    assert_eq!(misses(&mut s3, &hot[..50]), 0);
    // LRU by contrast loses everything.
    let mut lru = Lru::new(cap);
    misses(&mut lru, &hot);
    misses(&mut lru, &hot);
    misses(&mut lru, &(1000..1300u64).collect::<Vec<_>>());
    assert_eq!(misses(&mut lru, &hot[..50]), 50);
}

#[test]
fn s3fifo_ghost_hit_goes_to_main() {
    let mut s3 = S3Fifo::new(10);
    let mut ev = Vec::new();
    misses(&mut s3, &(0..11).collect::<Vec<_>>()); // 0 evicted to ghost
    assert!(!s3.access(0));
    let before = s3.main_len();
    s3.insert(0, &mut ev);
    assert_eq!(s3.main_len(), before + 1);
}

#[test]
fn set_capacity_shrinks_and_grows_back_for_every_policy() {
    for kind in [CachePolicy::Lru, CachePolicy::Arc, CachePolicy::S3Fifo] {
        let mut p = new_policy(kind, 64);
        misses(p.as_mut(), &(0..200).collect::<Vec<_>>());
        assert_eq!(p.len(), 64);
        let mut ev = Vec::new();
        p.set_capacity(10, &mut ev);
        assert_eq!(p.len(), 10, "{kind:?}");
        assert_eq!(ev.len(), 54);
        p.set_capacity(0, &mut ev);
        assert_eq!(p.len(), 0);
        p.set_capacity(1000, &mut ev);
        assert_eq!(p.capacity(), 64);
        misses(p.as_mut(), &(500..900).collect::<Vec<_>>());
        assert_eq!(p.len(), 64, "{kind:?}");
    }
}
