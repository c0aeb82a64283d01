//! Unit tests of the cache as a whole (the policies have their own, in their files).

use crate::*;

fn config(mode: CacheMode, policy: CachePolicy, lines: u64) -> CacheConfig {
    CacheConfig {
        capacity_bytes: lines * 4096,
        line_bytes: 4096,
        mode,
        policy,
        admit_after: 1,
        dirty_max_pct: 50.0,
        targets: 1,
        keep_data: true,
    }
}

#[test]
fn cache_is_send_and_sync() {
    fn check<T: Send + Sync>() {}
    check::<Cache>();
}

#[test]
fn bad_configs_are_refused() {
    let mut c = config(CacheMode::WriteThrough, CachePolicy::Lru, 4);
    c.line_bytes = 1000;
    assert!(Cache::new(c.clone()).is_err());
    c.line_bytes = 4096;
    c.capacity_bytes = 100;
    assert!(Cache::new(c.clone()).is_err());
    c.capacity_bytes = 1 << 20;
    c.dirty_max_pct = 101.0;
    assert!(Cache::new(c).is_err());
}

#[test]
fn read_miss_fill_then_hit() {
    let cache = Cache::new(config(CacheMode::WriteThrough, CachePolicy::Lru, 8)).unwrap();
    let mut buf = vec![0u8; 8192];
    let ReadOutcome::Forward(t) = cache.read(0, 4096, &mut buf, false) else { panic!("cold hit") };
    buf.fill(7);
    cache.finish(t, &mut buf, true);
    let mut again = vec![0u8; 4096];
    assert_eq!(cache.read(0, 8192, &mut again, false), ReadOutcome::Hit);
    assert!(again.iter().all(|&b| b == 7));
    let s = cache.stats();
    assert_eq!((s.hits, s.misses, s.fills, s.reads_from_cache, s.reads_from_target), (1, 2, 2, 1, 1));
}

#[test]
fn a_write_over_lines_that_share_a_bucket_is_not_its_own_race() {
    // 512 lines: 64 write-count buckets, so 64 lines of one write share some.
    let cache = Cache::new(config(CacheMode::WriteThrough, CachePolicy::Lru, 512)).unwrap();
    let mut data = vec![5u8; 64 * 4096];
    let WriteOutcome::Forward(t) = cache.write(0, 0, &data, false) else { panic!("write-through forwards") };
    assert_eq!(cache.finish(t, &mut data, true), 64);
    let s = cache.stats();
    assert_eq!((s.fills, s.invalidations), (64, 0));
    assert_eq!(cache.read(0, 0, &mut data, false), ReadOutcome::Hit);
}

#[test]
fn lines_used_after_a_read_missed_and_by_writes_keep_lru_order() {
    let cache = Cache::new(config(CacheMode::WriteThrough, CachePolicy::Lru, 4)).unwrap();
    let mut buf = vec![0u8; 4096];
    let read = |line: u64, lines: usize| {
        let mut b = vec![0u8; lines * 4096];
        if let ReadOutcome::Forward(t) = cache.read(0, line * 4096, &mut b, false) {
            cache.finish(t, &mut b, true);
        }
    };
    [1, 2, 3].into_iter().for_each(|l| read(l, 1));
    // Lines 0 and 1: 0 misses at issue, so 1 is only looked at then; at completion 0 is filled and 1 is
    // used, in line order. Oldest first: 2, 3, 0, 1.
    read(0, 2);
    // A write uses line 3: 2, 0, 1, 3.
    let WriteOutcome::Forward(t) = cache.write(0, 3 * 4096, &buf, false) else { panic!() };
    cache.finish(t, &mut buf, true);
    // Two new lines evict the two oldest, 2 and 0.
    read(5, 1);
    read(6, 1);
    for line in [1, 3, 5, 6] {
        assert_eq!(cache.read(0, line * 4096, &mut buf, false), ReadOutcome::Hit, "line {line}");
    }
    for line in [0, 2] {
        assert_ne!(cache.read(0, line * 4096, &mut buf, false), ReadOutcome::Hit, "line {line}");
    }
}

#[test]
fn partial_lines_are_never_filled() {
    let cache = Cache::new(config(CacheMode::WriteThrough, CachePolicy::Lru, 8)).unwrap();
    let mut buf = vec![0u8; 1024];
    let ReadOutcome::Forward(t) = cache.read(0, 512, &mut buf, false) else { panic!() };
    cache.finish(t, &mut buf, true);
    assert!(matches!(cache.read(0, 512, &mut buf, false), ReadOutcome::Forward(_)));
    assert_eq!(cache.stats().fills, 0);
}

#[test]
fn a_write_during_a_fill_poisons_it() {
    for mode in [CacheMode::WriteThrough, CacheMode::WriteAround, CacheMode::ReadOnly, CacheMode::WriteBack] {
        let cache = Cache::new(config(mode, CachePolicy::Lru, 8)).unwrap();
        let mut buf = vec![1u8; 4096];
        let ReadOutcome::Forward(r) = cache.read(0, 0, &mut buf, false) else { panic!() };
        // A partial write to the line, forwarded in every mode (write-back cannot absorb it).
        let w = match cache.write(0, 0, &[2u8; 512], false) {
            WriteOutcome::Forward(w) => w,
            WriteOutcome::Absorbed => panic!("{mode:?}: absorbed a partial write to a missing line"),
        };
        cache.finish(r, &mut buf, true); // the target read saw the old data
        cache.finish(w, &mut [2u8; 512], true);
        assert_eq!(cache.stats().fills, 0, "{mode:?}");
        let mut back = vec![0u8; 4096];
        assert!(matches!(cache.read(0, 0, &mut back, false), ReadOutcome::Forward(_)), "{mode:?}");
    }
}

#[test]
fn write_back_absorbs_writes_back_and_cleans() {
    let cache = Cache::new(config(CacheMode::WriteBack, CachePolicy::Lru, 8)).unwrap();
    assert_eq!(cache.write(0, 0, &[5u8; 4096], false), WriteOutcome::Absorbed);
    assert_eq!(cache.dirty_lines(), 1);
    // Partial write to a cached line: absorbed; partial to a missing line: forwarded.
    assert_eq!(cache.write(0, 512, &[6u8; 512], false), WriteOutcome::Absorbed);
    assert!(matches!(cache.write(0, 8192, &[6u8; 512], false), WriteOutcome::Forward(_)));
    let mut buf = vec![0u8; 4096];
    assert_eq!(cache.next_write_back(false, &mut buf), None, "below the dirty limit");
    let f = cache.next_write_back(true, &mut buf).expect("a dirty line");
    assert_eq!((f.target, f.offset, f.len), (0, 0, 4096));
    assert_eq!(&buf[..512], &[5u8; 512]);
    assert_eq!(&buf[512..1024], &[6u8; 512]);
    assert_eq!(cache.next_write_back(true, &mut buf), None, "the line is being written back");
    // Re-dirtied during its write-back: stays dirty.
    assert_eq!(cache.write(0, 0, &[7u8; 512], false), WriteOutcome::Absorbed);
    cache.finish_write_back(f, true);
    assert_eq!(cache.dirty_lines(), 1);
    let f = cache.next_write_back(true, &mut buf).expect("again");
    cache.finish_write_back(f, false);
    assert_eq!(cache.dirty_lines(), 1, "a failed write-back keeps the line dirty");
    let f = cache.next_write_back(true, &mut buf).expect("again");
    assert_eq!(&buf[..512], &[7u8; 512]);
    cache.finish_write_back(f, true);
    assert_eq!(cache.dirty_lines(), 0);
    assert_eq!(cache.stats().writebacks, 2);
}

#[test]
fn request_write_back_hands_out_every_dirty_line() {
    let cache = Cache::new(config(CacheMode::WriteBack, CachePolicy::Arc, 16)).unwrap();
    for i in 0..4u64 {
        assert_eq!(cache.write(0, i * 4096, &[1u8; 4096], false), WriteOutcome::Absorbed);
    }
    let mut buf = vec![0u8; 4096];
    assert!(cache.next_write_back(false, &mut buf).is_none());
    cache.request_write_back();
    let mut n = 0;
    while let Some(f) = cache.next_write_back(false, &mut buf) {
        cache.finish_write_back(f, true);
        n += 1;
    }
    assert_eq!(n, 4);
    assert_eq!(cache.dirty_lines(), 0);
}

#[test]
fn evicted_dirty_lines_stay_readable_until_written_back() {
    let cache = Cache::new(config(CacheMode::WriteBack, CachePolicy::Lru, 2)).unwrap();
    for i in 0..3u64 {
        assert_eq!(cache.write(0, i * 4096, &[i as u8 + 1; 4096], false), WriteOutcome::Absorbed);
    }
    // Line 0 was evicted while dirty: still readable, and handed out first.
    let mut r = vec![0u8; 4096];
    assert_eq!(cache.read(0, 0, &mut r, false), ReadOutcome::Hit);
    assert!(r.iter().all(|&b| b == 1));
    let mut buf = vec![0u8; 4096];
    let f = cache.next_write_back(false, &mut buf).expect("the evicted line");
    assert_eq!(f.offset, 0);
    cache.finish_write_back(f, true);
    assert!(matches!(cache.read(0, 0, &mut r, false), ReadOutcome::Forward(_)));
    assert_eq!(cache.dirty_lines(), 2);
}

#[test]
fn write_back_reserve_full_forwards_writes() {
    let cache = Cache::new(config(CacheMode::WriteBack, CachePolicy::Lru, 2)).unwrap();
    // Reserve is 2 lines: 2 resident + 2 evicted dirty, then writes to new lines are forwarded.
    let mut absorbed = 0;
    for i in 0..6u64 {
        if cache.write(0, i * 4096, &[1u8; 4096], false) == WriteOutcome::Absorbed {
            absorbed += 1;
        }
    }
    assert_eq!(absorbed, 4);
    assert_eq!(cache.dirty_lines(), 4);
}

#[test]
fn shrink_and_grow_free_and_take_memory() {
    let cache = Cache::new(config(CacheMode::WriteBack, CachePolicy::S3Fifo, 4096)).unwrap();
    assert!(cache.shards() > 1);
    for i in 0..4096u64 {
        let mut buf = vec![i as u8; 4096];
        match cache.read(0, i * 4096, &mut buf, false) {
            ReadOutcome::Forward(t) => {
                cache.finish(t, &mut buf, true);
            }
            ReadOutcome::Hit => {}
        }
    }
    for i in 0..64u64 {
        cache.write(0, i * 4096, &[9u8; 4096], false);
    }
    let dirty = cache.dirty_lines();
    let full = cache.memory_bytes();
    assert_eq!(cache.set_capacity(1 << 20), 1 << 20);
    let small = cache.memory_bytes();
    assert!(small < full / 4, "{small} vs {full}");
    assert_eq!(cache.dirty_lines(), dirty, "dirty lines are not dropped");
    // Every dirty line still reads back its data.
    for i in 0..64u64 {
        let mut r = vec![0u8; 4096];
        assert_eq!(cache.read(0, i * 4096, &mut r, false), ReadOutcome::Hit);
        assert!(r.iter().all(|&b| b == 9));
    }
    let mut buf = vec![0u8; 4096];
    while let Some(f) = cache.next_write_back(true, &mut buf) {
        assert!(buf.iter().all(|&b| b == 9));
        cache.finish_write_back(f, true);
    }
    assert_eq!(cache.set_capacity(u64::MAX), 4096 * 4096);
    for i in 0..4096u64 {
        let mut buf = vec![0u8; 4096];
        if let ReadOutcome::Forward(t) = cache.read(0, i * 4096, &mut buf, false) {
            cache.finish(t, &mut buf, true);
        }
    }
    assert!(cache.memory_bytes() > small * 4);
    // Sharded: each shard holds its share, and hashing spreads lines a little unevenly.
    assert!(cache.stats().lines > 3900, "{}", cache.stats().lines);
}

#[test]
fn admission_after_n_misses() {
    let mut c = config(CacheMode::WriteThrough, CachePolicy::Lru, 8);
    c.admit_after = 2;
    let cache = Cache::new(c).unwrap();
    let mut buf = vec![0u8; 4096];
    for expect_fills in [0, 1] {
        let ReadOutcome::Forward(t) = cache.read(0, 0, &mut buf, false) else { panic!() };
        cache.finish(t, &mut buf, true);
        assert_eq!(cache.stats().fills, expect_fills);
    }
    assert_eq!(cache.read(0, 0, &mut buf, false), ReadOutcome::Hit);
}

#[test]
fn bypass_never_fills_but_hits_cached_lines() {
    let cache = Cache::new(config(CacheMode::WriteThrough, CachePolicy::Lru, 8)).unwrap();
    let mut buf = vec![3u8; 4096];
    let ReadOutcome::Forward(t) = cache.read(0, 0, &mut buf, true) else { panic!() };
    cache.finish(t, &mut buf, true);
    assert_eq!(cache.stats().fills, 0);
    let ReadOutcome::Forward(t) = cache.read(0, 0, &mut buf, false) else { panic!() };
    cache.finish(t, &mut buf, true);
    assert_eq!(cache.read(0, 0, &mut buf, true), ReadOutcome::Hit);
    assert_eq!(cache.stats().bypassed, 2);
}

/// Issue 36, items 3 and 5: a write-back cache counts the bytes it absorbed, its most dirty lines at once and
/// the writes of whole lines it had no room for (full of dirty lines, its write-back reserve too: the target
/// sets the pace from then); `would_serve` answers as the read or write would, without using a line.
#[test]
fn write_back_counts_absorbed_bytes_the_dirty_peak_and_writes_forwarded_full() {
    let cache = Cache::new(config(CacheMode::WriteBack, CachePolicy::Lru, 16)).unwrap();
    let data = vec![3u8; 4096];
    let mut absorbed = 0u64;
    for line in 0..64u64 {
        let (predicted, before) = (cache.would_serve(0, line * 4096, 4096, true), absorbed);
        match cache.write(0, line * 4096, &data, false) {
            WriteOutcome::Absorbed => absorbed += 1,
            WriteOutcome::Forward(t) => {
                cache.finish(t, &mut data.clone(), true);
            }
        }
        assert_eq!(predicted, absorbed > before, "line {line}: the write as predicted");
    }
    let s = cache.stats();
    assert!(absorbed > 16, "16 lines, and the write-back reserve: {absorbed}");
    let want = (absorbed * 4096, absorbed, 64 - absorbed);
    assert_eq!((s.absorbed_bytes, s.peak_dirty_lines, s.writes_forwarded_full), want);
    assert!(cache.would_serve(0, 5 * 4096, 4096, false) && cache.would_serve(0, 0, 4096, false), "cached");
    assert!(!cache.would_serve(0, 40 * 4096, 4096, false), "never cached");
    assert!(cache.would_serve(0, 5 * 4096, 512, true), "a partial write to a cached line is absorbed");
    assert_eq!(cache.stats().hits, 0, "asking uses nothing");
}
