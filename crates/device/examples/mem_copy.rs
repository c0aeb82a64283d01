//! The bare loop `mem:` is measured against (docs/BENCHMARKS.md, "mem: at the memory's speed"): random 4 KiB
//! copies out of a 1 GiB buffer, with and without transparent huge pages, as a plain copy and as the
//! RAM disk's own word-by-word copy (`MemStore::read`).
//!
//! `cargo run --release -p iolab-device --example mem_copy [SECONDS]`

use iolab_device::MemStore;
use std::time::{Duration, Instant};

const SIZE: usize = 1 << 30;
const BS: usize = 4096;

/// SplitMix64: the random 4 KiB-aligned offsets.
fn next(s: &mut u64) -> u64 {
    *s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *s;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// This thread's CPU seconds so far.
fn thread_cpu_s() -> f64 {
    use nix::sys::resource::{getrusage, UsageWho};
    let u = getrusage(UsageWho::RUSAGE_THREAD).expect("getrusage");
    let tv = |t: nix::sys::time::TimeVal| t.tv_sec() as f64 + t.tv_usec() as f64 * 1e-6;
    tv(u.user_time()) + tv(u.system_time())
}

/// Copies per CPU second of `copy(offset, buf)` at random 4 KiB-aligned offsets for `secs` (per CPU second,
/// not per wall second, so a busy machine's preemption does not count against the loop: iolab's `cpu` line is
/// per CPU second too).
fn rate(secs: f64, mut copy: impl FnMut(usize, &mut [u8])) -> f64 {
    let mut buf = vec![0u8; BS];
    let mut seed = 1u64;
    let (start, cpu0, mut n) = (Instant::now(), thread_cpu_s(), 0u64);
    let until = Duration::from_secs_f64(secs);
    loop {
        for _ in 0..1024 {
            let off = (next(&mut seed) as usize % (SIZE / BS)) * BS;
            copy(off, &mut buf);
        }
        n += 1024;
        std::hint::black_box(&buf);
        if start.elapsed() >= until {
            return n as f64 / (thread_cpu_s() - cpu0).max(1e-9);
        }
    }
}

/// `len` bytes of ones from a 2 MiB boundary, on huge pages when `huge` (the kernel permitting): the buffer
/// and where that boundary is in it.
fn huge_or_not(len: usize, huge: bool) -> (Vec<u8>, usize) {
    let mut v: Vec<u8> = Vec::with_capacity(len + (2 << 20));
    let addr = (v.as_ptr() as usize).next_multiple_of(2 << 20);
    if huge {
        // SAFETY: the range lies inside `v`'s untouched allocation; MADV_HUGEPAGE is advice and changes no
        // contents.
        unsafe { libc::madvise(addr as *mut libc::c_void, len / (2 << 20) * (2 << 20), libc::MADV_HUGEPAGE) };
    }
    v.resize(len + (2 << 20), 1);
    let start = addr - v.as_ptr() as usize;
    (v, start)
}

fn main() {
    let secs: f64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(3.0);
    for huge in [false, true] {
        let (plain, start) = huge_or_not(SIZE, huge);
        let r = rate(secs, |off, buf| buf.copy_from_slice(&plain[start + off..start + off + BS]));
        println!("plain copy, huge pages {:<5}      {:>12.0} copies per CPU second", huge, r);
    }
    for huge in [false, true] {
        let store = MemStore::with_huge_pages(SIZE as u64, huge, None, None).expect("1 GiB RAM disk");
        let r = rate(secs, |off, buf| store.read(off as u64, buf));
        println!(
            "MemStore::read, huge pages {:<5} {:>12.0} copies per CPU second  ({})",
            huge,
            r,
            store.backing()
        );
        // As iolab's worker at queue depth 32: each copy lands in the next of 32 slot buffers, not in one
        // buffer that stays in the L1 cache.
        let mut slots = vec![0u8; 32 * BS];
        let mut k = 0;
        let r = rate(secs, |off, _| {
            k = (k + 1) % 32;
            store.read(off as u64, &mut slots[k * BS..(k + 1) * BS])
        });
        println!("  into 32 rotating buffers            {:>12.0} copies per CPU second", r);
    }
}
