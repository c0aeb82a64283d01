//! What this process costs (getrusage) and what the host has (/proc/meminfo), for the client's figures and
//! the page-cache warnings.

/// CPU seconds (user and system) of this process so far, and its peak resident memory in bytes.
pub fn cpu_and_peak_rss() -> (f64, u64) {
    // SAFETY: getrusage writes one `rusage` into the zeroed value we pass, which outlives the call.
    let ru = unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut ru);
        ru
    };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (secs(ru.ru_utime) + secs(ru.ru_stime), ru.ru_maxrss.max(0) as u64 * 1024)
}

/// The host's memory (MemTotal), bytes.
pub fn host_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}
