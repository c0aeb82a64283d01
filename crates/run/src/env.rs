//! Facts about the process for the result: its CPU time and peak memory; the machine's (hostname, kernel,
//! CPU) are `iolab_device::host`'s, which database documents share.

use nix::sys::resource::UsageWho;
use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};

pub use iolab_device::host::{cpu_count, cpu_model, hostname, kernel};

/// CPU (user, system) in nanoseconds that threads serving something beside the run (the `--metrics`
/// endpoint) have spent so far, as they last reported it: [`process_cpu_s`] leaves it out.
static LEFT_OUT_NS: [AtomicU64; 2] = [AtomicU64::new(0), AtomicU64::new(0)];

/// Whole-process CPU time (user, system) in seconds: every thread, including io_uring's io-wq and SQPOLL
/// workers, which are threads of this process (fio's per-job figures leave them out), less what threads that
/// called [`leave_out_this_thread_cpu`] spent (the `--metrics` endpoint's, which a scraper drives).
pub fn process_cpu_s() -> (f64, f64) {
    let (user, sys) = rusage_s(UsageWho::RUSAGE_SELF);
    let left_out = |i: usize| LEFT_OUT_NS[i].load(Ordering::Relaxed) as f64 * 1e-9;
    ((user - left_out(0)).max(0.0), (sys - left_out(1)).max(0.0))
}

/// Called by a thread that serves something beside the run, after each piece of work: adds the CPU it spent
/// since its last call to what [`process_cpu_s`] leaves out.
pub fn leave_out_this_thread_cpu() {
    thread_local!(static REPORTED_NS: Cell<(u64, u64)> = const { Cell::new((0, 0)) });
    let (user, sys) = rusage_s(UsageWho::RUSAGE_THREAD);
    let now = ((user * 1e9) as u64, (sys * 1e9) as u64);
    let before = REPORTED_NS.replace(now);
    LEFT_OUT_NS[0].fetch_add(now.0.saturating_sub(before.0), Ordering::Relaxed);
    LEFT_OUT_NS[1].fetch_add(now.1.saturating_sub(before.1), Ordering::Relaxed);
}

/// getrusage's user and system time in seconds; zero when it fails.
fn rusage_s(who: UsageWho) -> (f64, f64) {
    match nix::sys::resource::getrusage(who) {
        Ok(u) => {
            let tv = |t: nix::sys::time::TimeVal| t.tv_sec() as f64 + t.tv_usec() as f64 * 1e-6;
            (tv(u.user_time()), tv(u.system_time()))
        }
        Err(_) => (0.0, 0.0),
    }
}

/// The process's peak resident memory so far (getrusage's `ru_maxrss`, in KiB on Linux); None when unknown.
pub fn peak_rss_bytes() -> Option<u64> {
    let u = nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_SELF).ok()?;
    u64::try_from(u.max_rss()).ok().filter(|&k| k > 0).map(|k| k * 1024)
}

/// RFC 3339 UTC timestamp and Unix seconds for now (the catalog's date formatting, so the two agree).
pub fn now_rfc3339() -> (String, f64) {
    let d = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    (iolab_doc::time::format_rfc3339(d.as_secs() as f64), d.as_secs_f64())
}

#[cfg(test)]
mod tests {
    #[test]
    fn rfc3339_has_the_expected_shape() {
        let (s, t) = super::now_rfc3339();
        assert_eq!(s.len(), 20, "{s}");
        assert!(s.ends_with('Z') && t > 1.6e9);
    }

    /// A serving thread's CPU is left out of the process's figure (other tests' threads may run meanwhile,
    /// so what is compared is the raw and the reported figure over the same span).
    #[test]
    fn a_serving_threads_cpu_is_left_out_of_the_process_cpu() {
        use super::{process_cpu_s, rusage_s, UsageWho};
        let sum = |(u, s): (f64, f64)| u + s;
        let (raw0, reported0) = (sum(rusage_s(UsageWho::RUSAGE_SELF)), sum(process_cpu_s()));
        let burned = std::thread::spawn(move || {
            let start = std::time::Instant::now();
            let mut x = 1u64;
            while start.elapsed() < std::time::Duration::from_millis(200) {
                x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
            }
            super::leave_out_this_thread_cpu();
            sum(rusage_s(UsageWho::RUSAGE_THREAD))
        })
        .join()
        .unwrap();
        let (raw1, reported1) = (sum(rusage_s(UsageWho::RUSAGE_SELF)), sum(process_cpu_s()));
        let left_out = (raw1 - raw0) - (reported1 - reported0);
        assert!(burned > 0.05, "the thread burned {burned} s");
        assert!((left_out - burned).abs() < 0.02, "left out {left_out} s of the thread's {burned} s");
    }
}
