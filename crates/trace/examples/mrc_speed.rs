//! MRC speed: references per second of exact LRU (stack distances) and SHARDS (fixed rate, fixed size) on one
//! core, over a synthetic stream of skewed references (bench/mrc_speed.sh runs it; docs/BENCHMARKS.md has
//! the figures).
//!
//! `cargo run --release -p iolab-trace --example mrc_speed -- [REFERENCES] [OBJECTS]`

use iolab_trace::mrc::{LruDistances, Method};
use std::time::Instant;

/// `n` references over `objects` objects, skewed (a squared uniform: small keys hot), lines of a 4 KiB cache.
fn stream(n: usize, objects: u64) -> Vec<u64> {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let u = (x >> 11) as f64 / (1u64 << 53) as f64;
            (u * u * objects as f64) as u64
        })
        .collect()
}

/// CPU time of this thread, in seconds (the machine may be shared: wall time then overstates the cost).
fn thread_cpu_s() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid timespec for the call to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9
}

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(20_000_000);
    let objects: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(1_000_000);
    let refs = stream(n, objects);
    println!("{n} references over {objects} objects (skewed), one core");
    for (name, method) in [
        ("exact LRU", Method::Exact),
        ("SHARDS fixed rate 0.01", Method::FixedRate(0.01)),
        ("SHARDS fixed rate 0.001", Method::FixedRate(0.001)),
        ("SHARDS fixed size 8192", Method::FixedSize(8192)),
    ] {
        let (start, cpu) = (Instant::now(), thread_cpu_s());
        let mut lru = LruDistances::new(method);
        for &k in &refs {
            lru.access(k);
        }
        let hist = lru.finish();
        let (secs, cpu) = (start.elapsed().as_secs_f64(), thread_cpu_s() - cpu);
        let mr = hist.miss_ratios(&[objects / 10])[0];
        println!(
            "{name:<24} {:>6.1} M references/s of CPU time, {:>6.1} M/s of wall time ({cpu:.2} s CPU, {secs:.2} s wall; miss ratio at {} objects {mr:.4})",
            n as f64 / cpu / 1e6,
            n as f64 / secs / 1e6,
            objects / 10
        );
    }
}
