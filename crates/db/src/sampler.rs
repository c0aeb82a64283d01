//! What the driver samples over the measured window besides its totals (docs/DB.md, "Over time, CPU and
//! memory"): each interval's new orders and operations (the users' counters) and what the device under the
//! database did in it (/proc/diskstats), as [`DbIntervals`]; and at the window's edges the CPU of iolab's
//! process (getrusage), of the engine's processes (/proc/PID/stat, their reaped children's included) and of
//! the whole machine (/proc/stat), as [`DbCpu`].

use iolab_device::diskstats::{self, BlockDevice, Counters};
use iolab_report::db_window::{DbCpu, DbInterval, DbIntervals};
use std::time::{Duration, Instant};

/// The window interval by interval, sampled as it runs.
pub(crate) struct IntervalSampler {
    interval: Duration,
    device: Option<String>,
    /// The last sample: when, the headline and operation counters, the device's counters.
    last: (Instant, u64, u64, Option<Counters>),
    opened: Instant,
    intervals: Vec<DbInterval>,
}

/// The device whose latency the intervals show: the one under the database's file system, else the first.
fn shown_device(devices: &[BlockDevice]) -> Option<String> {
    devices.iter().find(|d| d.role == "filesystem").or(devices.first()).map(|d| d.name.clone())
}

fn device_counters(device: Option<&str>) -> Option<Counters> {
    diskstats::read().remove(device?)
}

impl IntervalSampler {
    /// Opens at the window's opening (`counts`: the headline and operation counters then), with intervals
    /// of `interval_s` seconds over `devices`' device.
    pub(crate) fn open(interval_s: f64, devices: &[BlockDevice], counts: (u64, u64)) -> IntervalSampler {
        let device = shown_device(devices);
        let now = Instant::now();
        IntervalSampler {
            interval: Duration::from_secs_f64(interval_s),
            last: (now, counts.0, counts.1, device_counters(device.as_deref())),
            device,
            opened: now,
            intervals: Vec::new(),
        }
    }

    /// When the next interval ends.
    pub(crate) fn next_at(&self) -> Instant {
        self.last.0 + self.interval
    }

    /// Closes an interval at `at` (`counts`: the counters then).
    pub(crate) fn sample(&mut self, at: Instant, counts: (u64, u64)) {
        let (since, headline, completed, before) = self.last;
        let s = at.saturating_duration_since(since).as_secs_f64();
        let now = device_counters(self.device.as_deref());
        if s <= 0.0 {
            return;
        }
        let per_minute = |n: u64| n as f64 * 60.0 / s;
        let d = match (&now, &before) {
            (Some(n), Some(b)) => n.since(b),
            _ => Counters::default(),
        };
        let mean = |ms: u64, n: u64| (n > 0).then(|| ms as f64 / n as f64);
        self.intervals.push(DbInterval {
            start_s: since.saturating_duration_since(self.opened).as_secs_f64(),
            seconds: s,
            nopm: per_minute(counts.0.saturating_sub(headline)),
            tpm: per_minute(counts.1.saturating_sub(completed)),
            read_iops: d.reads as f64 / s,
            write_iops: d.writes as f64 / s,
            read_mean_ms: mean(d.read_ms, d.reads),
            write_mean_ms: mean(d.write_ms, d.writes),
            write_mib_s: (d.write_sectors * 512) as f64 / s / (1u64 << 20) as f64,
        });
        self.last = (at, counts.0, counts.1, now);
    }

    /// The intervals, asserted to tile the window from its opening.
    pub(crate) fn finish(self) -> DbIntervals {
        let mut end = 0.0;
        for i in &self.intervals {
            assert!((i.start_s - end).abs() < 1e-6, "intervals tile the window: {} after {end}", i.start_s);
            end = i.start_s + i.seconds;
        }
        DbIntervals {
            interval_s: self.interval.as_secs_f64(),
            device: self.device,
            intervals: self.intervals,
        }
    }
}

/// CPU seconds at one moment: iolab's process, the engine's processes (`None` when iolab knows none), and
/// the machine's busy and total clock ticks.
#[derive(Clone, Debug)]
pub(crate) struct CpuReading {
    at: Instant,
    iolab_s: f64,
    engine_s: Option<f64>,
    machine: Option<(u64, u64)>,
}

/// Clock ticks per second, as /proc counts CPU time.
fn ticks_per_s() -> f64 {
    // SAFETY: sysconf reads a constant of the system and touches no memory of ours.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 {
        t as f64
    } else {
        100.0
    }
}

/// The fields of /proc/PID/stat after the command name (which may hold spaces and parentheses): the
/// state (field 3) first.
fn stat_fields(pid: u32) -> Option<Vec<u64>> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &text[text.rfind(')')? + 1..];
    Some(rest.split_whitespace().skip(1).map(|f| f.parse::<i64>().unwrap_or(0).max(0) as u64).collect())
}

/// A process's CPU ticks, its reaped children's included (utime, stime, cutime, cstime: fields 14 to 17).
fn process_ticks(pid: u32) -> Option<u64> {
    Some(stat_fields(pid)?.get(10..14)?.iter().sum())
}

/// `roots` and every process descended from them (by parent, field 4): PostgreSQL's backends each start a
/// session of their own, so the server's process group holds only its postmaster.
fn with_descendants(roots: &[u32]) -> Vec<u32> {
    let parents: Vec<(u32, u32)> = std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| Some((pid, *stat_fields(pid)?.first()? as u32)))
        .collect();
    let mut out = roots.to_vec();
    let mut i = 0;
    while i < out.len() {
        let parent = out[i];
        for (pid, ppid) in &parents {
            if *ppid == parent && !out.contains(pid) {
                out.push(*pid);
            }
        }
        i += 1;
    }
    out
}

/// The machine's busy ticks (neither idle nor waiting for I/O) and all ticks, from /proc/stat's `cpu` line.
fn machine_ticks() -> Option<(u64, u64)> {
    let text = std::fs::read_to_string("/proc/stat").ok()?;
    let line = text.lines().find(|l| l.starts_with("cpu "))?;
    let v: Vec<u64> = line.split_whitespace().skip(1).take(8).filter_map(|f| f.parse().ok()).collect();
    let total: u64 = v.iter().sum();
    let idle = v.get(3)? + v.get(4).copied().unwrap_or(0);
    Some((total - idle, total))
}

/// This process's CPU seconds (user and system, every thread).
fn own_cpu_s() -> f64 {
    // SAFETY: getrusage writes one `rusage` into the zeroed value we pass, which outlives the call.
    let ru = unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut ru);
        ru
    };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    secs(ru.ru_utime) + secs(ru.ru_stime)
}

/// The CPU now; `engine` the engine's processes (none: it runs in iolab, or iolab knows none of them).
pub(crate) fn cpu_now(engine: &[u32]) -> CpuReading {
    let engine_s = (!engine.is_empty()).then(|| {
        with_descendants(engine).iter().filter_map(|p| process_ticks(*p)).sum::<u64>() as f64 / ticks_per_s()
    });
    CpuReading { at: Instant::now(), iolab_s: own_cpu_s(), engine_s, machine: machine_ticks() }
}

/// Whose the engine's CPU is, for a database named `name` whose processes iolab knows (`known`).
pub(crate) fn engine_whose(name: &str, known: bool) -> &'static str {
    match (name, known) {
        ("sqlite", _) => "SQLite, inside iolab's process",
        (_, true) => "the PostgreSQL server's processes",
        (_, false) => "the server's processes (a server of your own, --url)",
    }
}

/// The CPU over the window between two readings, assessed for `users` users.
pub(crate) fn cpu_between(a: &CpuReading, b: &CpuReading, users: u32, whose: &str) -> Option<DbCpu> {
    let s = b.at.saturating_duration_since(a.at).as_secs_f64();
    if s <= 0.0 {
        return None;
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
    let machine = match (a.machine, b.machine) {
        (Some((b0, t0)), Some((b1, t1))) if t1 > t0 => {
            Some(b1.saturating_sub(b0) as f64 / (t1 - t0) as f64 * cores as f64)
        }
        _ => None,
    };
    let engine = match (a.engine_s, b.engine_s) {
        (Some(x), Some(y)) => Some((y - x).max(0.0) / s),
        _ => None,
    };
    Some(DbCpu::assess(cores, users, machine, (b.iolab_s - a.iolab_s).max(0.0) / s, (whose, engine)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_and_the_machine_have_cpu_ticks() {
        assert!(process_ticks(std::process::id()).is_some());
        let mut child = std::process::Command::new("sleep").arg("5").spawn().unwrap();
        let family = with_descendants(&[std::process::id()]);
        let _ = (child.kill(), child.wait());
        assert!(family.contains(&child.id()) && family[0] == std::process::id(), "{family:?}");
        let (busy, total) = machine_ticks().unwrap();
        assert!(busy <= total && total > 0);
        let a = cpu_now(&[std::process::id()]);
        let spin = Instant::now();
        while spin.elapsed() < Duration::from_millis(200) {
            std::hint::black_box(0u64);
        }
        let c =
            cpu_between(&a, &cpu_now(&[std::process::id()]), 1, "SQLite, inside iolab's process").unwrap();
        assert!(c.iolab_cores > 0.3, "{c:?}");
        assert!(c.says.contains("iolab"), "{}", c.says);
    }

    #[test]
    fn intervals_tile_the_window() {
        let mut s = IntervalSampler::open(1.0, &[], (0, 0));
        let t0 = s.last.0;
        s.sample(t0 + Duration::from_millis(500), (10, 20));
        s.sample(t0 + Duration::from_millis(1500), (40, 90));
        let d = s.finish();
        assert_eq!(d.intervals.len(), 2);
        assert_eq!(d.intervals[0].nopm, 1200.0);
        assert_eq!(d.intervals[1].nopm, 1800.0);
        assert_eq!(d.intervals[1].start_s, 0.5);
        assert_eq!((d.device, d.intervals[1].read_mean_ms), (None, None));
    }
}
