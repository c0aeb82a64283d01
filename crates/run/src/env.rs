//! Facts about the machine for the result's `env` block: hostname, kernel, CPU, memory. Read from /proc; a
//! fact that cannot be read is reported as "unknown", never guessed.

fn read_trim(path: &str) -> Option<String> {
    std::fs::read_to_string(path).ok().map(|s| s.trim().to_string()).filter(|s| !s.is_empty())
}

/// Host name.
pub fn hostname() -> String {
    read_trim("/proc/sys/kernel/hostname").unwrap_or_else(|| "unknown".into())
}

/// Kernel release.
pub fn kernel() -> String {
    read_trim("/proc/sys/kernel/osrelease").map(|r| format!("Linux {r}")).unwrap_or_else(|| "unknown".into())
}

/// CPU model name.
pub fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into())
}

/// CPUs this process may run on.
pub fn cpu_count() -> u32 {
    std::thread::available_parallelism().map(|n| n.get() as u32).unwrap_or(1)
}

/// Whole-process CPU time (user, system) in seconds: every thread, including io_uring's io-wq and SQPOLL
/// workers, which are threads of this process (fio's per-job figures leave them out).
pub fn process_cpu_s() -> (f64, f64) {
    match nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_SELF) {
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
    (iolab_catalog::time::format_rfc3339(d.as_secs() as f64), d.as_secs_f64())
}

#[cfg(test)]
mod tests {
    #[test]
    fn rfc3339_has_the_expected_shape() {
        let (s, t) = super::now_rfc3339();
        assert_eq!(s.len(), 20, "{s}");
        assert!(s.ends_with('Z') && t > 1.6e9);
    }
}
