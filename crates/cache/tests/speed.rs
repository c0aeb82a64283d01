//! The hit path's cost and the metadata per line. Run `cargo test --release -p iolab-cache -- --nocapture`
//! for real numbers (debug builds are many times slower and only check that the code runs).

use iolab_cache::{Cache, CacheConfig, CacheMode, CachePolicy, ReadOutcome};
use std::time::Instant;

fn cache(policy: CachePolicy, mode: CacheMode, capacity_bytes: u64) -> Cache {
    Cache::new(CacheConfig {
        capacity_bytes,
        line_bytes: 4096,
        mode,
        policy,
        admit_after: 1,
        dirty_max_pct: 50.0,
        targets: 1,
        keep_data: true,
    })
    .unwrap()
}

/// ns per 4 KiB read hit over `lines` cached lines, and ns per plain 4 KiB copy from as much RAM.
fn hit_ns(policy: CachePolicy, lines: u64, count: u64) -> (f64, f64) {
    let c = cache(policy, CacheMode::WriteThrough, (lines * 2).max(1024) * 4096);
    let mut buf = vec![0u8; 4096];
    for i in 0..lines {
        buf.fill(i as u8);
        match c.read(0, i * 4096, &mut buf, false) {
            ReadOutcome::Forward(t) => {
                c.finish(t, &mut buf, true);
            }
            ReadOutcome::Hit => {}
        }
    }
    let mut x = 88172645463325252u64;
    let start = Instant::now();
    for _ in 0..count {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let line = x % lines;
        let r = c.read(0, line * 4096, &mut buf, false);
        debug_assert_eq!(r, ReadOutcome::Hit);
        std::hint::black_box(&buf);
    }
    let hit = start.elapsed().as_nanos() as f64 / count as f64;
    assert_eq!(c.stats().reads_from_cache, count);
    // The same copies from a plain RAM store of the same size (what a RAM target costs).
    let store = vec![1u8; (lines * 4096) as usize];
    let start = Instant::now();
    for _ in 0..count {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let off = ((x % lines) * 4096) as usize;
        buf.copy_from_slice(&store[off..off + 4096]);
        std::hint::black_box(&buf);
    }
    let copy = start.elapsed().as_nanos() as f64 / count as f64;
    (hit, copy)
}

#[test]
fn hit_path_cost_is_printed() {
    let count = if cfg!(debug_assertions) { 20_000 } else { 2_000_000 };
    for policy in [CachePolicy::Lru, CachePolicy::Arc, CachePolicy::S3Fifo, CachePolicy::S3Fifo1Bit] {
        for lines in [1024u64, 65_536] {
            let (hit, copy) = hit_ns(policy, lines, count);
            println!(
                "{:<8} {:>4} MiB hot: {hit:>6.0} ns per 4 KiB hit, plain 4 KiB copy {copy:>5.0} ns, added {:>5.0} ns",
                policy.as_str(),
                (lines * 4096) >> 20,
                hit - copy
            );
        }
    }
}

#[test]
fn metadata_per_line_is_at_most_64_bytes_at_1_gib() {
    for mode in [CacheMode::WriteThrough, CacheMode::WriteBack] {
        for policy in [CachePolicy::Lru, CachePolicy::Arc, CachePolicy::S3Fifo, CachePolicy::S3Fifo1Bit] {
            // Full, and then some (ARC keeps ghosts of what it evicted): the policy's arrays fill as lines
            // are cached, so an empty cache would say little.
            let c = cache(policy, mode, 1 << 30);
            let mut buf = vec![0u8; 4096];
            for line in 0..(2u64 << 18) {
                if let ReadOutcome::Forward(t) = c.read(0, line * 4096, &mut buf, false) {
                    c.finish(t, &mut buf, true);
                }
            }
            let per_line = c.metadata_bytes_per_line();
            println!(
                "{:<8} {:<13} 1 GiB full, 4 KiB lines: {per_line:.1} metadata bytes per line",
                policy.as_str(),
                mode.as_str()
            );
            assert!(per_line <= 64.0, "{policy:?} {mode:?}: {per_line}");
            assert_eq!(c.stats().metadata_bytes_per_line, per_line);
        }
    }
}

#[test]
fn threads_share_the_cache() {
    let c = std::sync::Arc::new(cache(CachePolicy::S3Fifo, CacheMode::WriteBack, 64 << 20));
    let threads: Vec<_> = (0..4u64)
        .map(|t| {
            let c = c.clone();
            std::thread::spawn(move || {
                // Each thread owns its own range of lines: what it reads back is what it wrote last.
                let mut buf = vec![0u8; 4096];
                for i in 0..20_000u64 {
                    let line = t * 100_000 + (i * 7919) % 5000;
                    if i % 3 == 0 {
                        let data = vec![(line % 251) as u8; 4096];
                        if let iolab_cache::WriteOutcome::Forward(tk) = c.write(0, line * 4096, &data, false)
                        {
                            c.finish(tk, &mut data.clone(), true);
                        }
                    } else if let ReadOutcome::Forward(tk) = c.read(0, line * 4096, &mut buf, false) {
                        buf.fill((line % 251) as u8); // the "target" holds the same pattern
                        c.finish(tk, &mut buf, true);
                    } else {
                        assert!(buf.iter().all(|&b| b == (line % 251) as u8));
                    }
                    let mut fb = vec![0u8; 4096];
                    if let Some(f) = c.next_write_back(false, &mut fb) {
                        c.finish_write_back(f, true);
                    }
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let mut fb = vec![0u8; 4096];
    while let Some(f) = c.next_write_back(true, &mut fb) {
        c.finish_write_back(f, true);
    }
    assert_eq!(c.dirty_lines(), 0);
}
