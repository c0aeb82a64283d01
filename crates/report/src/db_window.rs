//! What a DBA needs to believe a tpcc run, beside its totals (docs/DB.md, "Over time, CPU and memory"): the
//! measured window interval by interval ([`DbIntervals`]: NOPM, and the device's latency and bytes, so a
//! checkpoint stall shows), the CPU of the engine and of iolab over the window with whether the run was
//! CPU-bound ([`DbCpu`]), and the database's size against the memory that could hold it ([`MemoryFit`]).
//! Plain data and the sentences every rendering prints; the db crate measures them.

use serde::{Deserialize, Serialize};

use crate::format::{format_bytes, format_rate};

/// The measured window, interval by interval.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DbIntervals {
    /// Seconds per interval asked ([`interval_for`]); the last interval may be shorter.
    pub interval_s: f64,
    /// The device whose latency and bytes the intervals show: the one under the database's file system
    /// (/proc/diskstats, other processes' I/O on it included); absent without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    /// The intervals, in order, from the window's opening.
    pub intervals: Vec<DbInterval>,
}

/// One interval of the measured window.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DbInterval {
    /// Seconds from the window's opening to the interval's start.
    pub start_s: f64,
    /// Its length in seconds.
    pub seconds: f64,
    /// New orders committed per minute in it (counted by the users, as the run's NOPM).
    pub nopm: f64,
    /// Transactions completed per minute in it.
    pub tpm: f64,
    /// The device's reads per second.
    pub read_iops: f64,
    /// The device's writes per second.
    pub write_iops: f64,
    /// Mean time a read spent in the device, ms; absent without reads.
    pub read_mean_ms: Option<f64>,
    /// Mean time a write spent in the device, ms; absent without writes.
    pub write_mean_ms: Option<f64>,
    /// MiB (2^20 bytes) written to the device per second.
    pub write_mib_s: f64,
}

/// The interval for a window of `duration_s` seconds: 1 s up to 10 minutes (600 intervals at most), 10 s
/// beyond.
pub fn interval_for(duration_s: f64) -> f64 {
    if duration_s <= 600.0 {
        1.0
    } else {
        10.0
    }
}

/// An interval's NOPM is held against the window's: below this share of it, the interval is a stall.
pub const STALL_SHARE: f64 = 0.5;

impl DbIntervals {
    /// The interval with the lowest NOPM among those at least half an interval long (a short last one
    /// says little), if any.
    pub fn worst(&self) -> Option<&DbInterval> {
        self.intervals
            .iter()
            .filter(|i| i.seconds >= self.interval_s / 2.0)
            .min_by(|a, b| a.nopm.total_cmp(&b.nopm))
    }

    /// The intervals whose NOPM is under [`STALL_SHARE`] of `nopm` (the window's).
    pub fn stalls(&self, nopm: f64) -> usize {
        self.intervals
            .iter()
            .filter(|i| i.seconds >= self.interval_s / 2.0 && i.nopm < STALL_SHARE * nopm)
            .count()
    }

    /// One line: how many intervals, NOPM's range, and the worst interval with the device's latency and
    /// bytes in it; `nopm` is the window's.
    pub fn summary(&self, nopm: f64) -> String {
        let n = self.intervals.len();
        let Some(w) = self.worst() else { return format!("{n} intervals of {} s", self.interval_s) };
        let best = self.intervals.iter().map(|i| i.nopm).fold(0.0, f64::max);
        let stalls = self.stalls(nopm);
        let stalled = match stalls {
            0 => format!("no interval under {:.0} % of the window's NOPM", STALL_SHARE * 100.0),
            s => format!("{s} under {:.0} % of the window's NOPM (a stall)", STALL_SHARE * 100.0),
        };
        format!(
            "{n} intervals of {} s: NOPM {} to {}; {stalled}; worst {}: {}",
            self.interval_s,
            format_rate(w.nopm, 0),
            format_rate(best, 0),
            span(w),
            device_part(w, self.device.as_deref())
        )
    }
}

/// `12-13 s` (from the window's opening).
pub fn span(i: &DbInterval) -> String {
    format!("{:.0}-{:.0} s", i.start_s, i.start_s + i.seconds)
}

/// What the device did in an interval: `NOPM 1,020, loop3 write 12.30 ms mean, 45.1 MiB/s written`.
fn device_part(i: &DbInterval, device: Option<&str>) -> String {
    let ms = |m: Option<f64>| m.map_or("-".to_string(), |m| format!("{m:.2} ms"));
    match device {
        Some(d) => format!(
            "NOPM {}, {d} read {} / write {} mean, {:.1} MiB/s written",
            format_rate(i.nopm, 0),
            ms(i.read_mean_ms),
            ms(i.write_mean_ms),
            i.write_mib_s
        ),
        None => format!("NOPM {} (no device under the database)", format_rate(i.nopm, 0)),
    }
}

/// The CPU of the engine and of iolab over the measured window, and whether the run was CPU-bound.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DbCpu {
    /// The machine's online cores.
    pub cores: u32,
    /// Cores the whole machine kept busy (/proc/stat: not idle, not waiting for I/O), every process's.
    pub machine_busy_cores: Option<f64>,
    /// Cores iolab's process used (getrusage: its users' threads; SQLite's work too, which runs in them).
    pub iolab_cores: f64,
    /// Whose the engine's CPU is: `the PostgreSQL server's processes`, `SQLite, inside iolab's process`.
    pub engine: String,
    /// Cores the engine's processes used (/proc/PID/stat, with their exited children's); absent where it
    /// runs inside iolab (SQLite: in `iolab_cores`) or where iolab knows none of its processes (`--url`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine_cores: Option<f64>,
    /// Whether the run was CPU-bound (see [`DbCpu::assess`]).
    pub cpu_bound: bool,
    /// The line every rendering prints.
    pub says: String,
}

/// A share of the cores above which they count as busy.
pub const BUSY_SHARE: f64 = 0.9;

impl DbCpu {
    /// The CPU line of a run of `users` users on `cores` cores: CPU-bound when the machine's cores were at
    /// least [`BUSY_SHARE`] busy, or when the engine and iolab kept that share of the cores the users can
    /// use at once (one each, at most all) busy; otherwise the users waited on the storage or on locks.
    pub fn assess(
        cores: u32,
        users: u32,
        machine_busy_cores: Option<f64>,
        iolab_cores: f64,
        (engine, engine_cores): (&str, Option<f64>),
    ) -> DbCpu {
        let ours = iolab_cores + engine_cores.unwrap_or(0.0);
        let usable = users.min(cores).max(1) as f64;
        let machine_full = machine_busy_cores.is_some_and(|b| b >= BUSY_SHARE * cores as f64);
        let users_full = ours >= BUSY_SHARE * usable;
        let used = match engine_cores {
            Some(e) => format!("{engine} {e:.2} cores, iolab {iolab_cores:.2}"),
            None if engine.contains("iolab") => {
                format!("iolab {iolab_cores:.2} cores (SQLite runs inside it)")
            }
            None => format!("iolab {iolab_cores:.2} cores ({engine}: not measured)"),
        };
        let machine = machine_busy_cores.map_or(format!("{cores} cores"), |b| {
            let others = (b - ours).max(0.0);
            format!(
                "the machine's {cores} cores {:.0} % busy (other processes {others:.2} cores)",
                100.0 * b / cores as f64
            )
        });
        let says = if machine_full {
            format!("CPU-bound: {machine}; {used}: the cores set the pace, not the storage")
        } else if users_full {
            format!(
                "CPU-bound at {users} user{}: {used}, {:.0} % of the {usable:.0} cores the users can keep busy; {machine}",
                if users == 1 { "" } else { "s" },
                100.0 * ours / usable
            )
        } else {
            format!("not CPU-bound: {used}; {machine}: the users waited on the storage or on locks")
        };
        DbCpu {
            cores,
            machine_busy_cores,
            iolab_cores,
            engine: engine.to_string(),
            engine_cores,
            cpu_bound: machine_full || users_full,
            says,
        }
    }
}

/// The database's size against the memory that could hold it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MemoryFit {
    /// Bytes in the database's directory at the end of the run.
    pub database_bytes: u64,
    /// The memory held against it: `--memory`'s budget for pages, else the machine's.
    pub memory_bytes: u64,
    /// The memory is `--memory`'s budget, not the machine's.
    pub limited: bool,
    /// The line every rendering prints.
    pub says: String,
}

/// Below this share of the memory, the database is held in memory once read.
pub const HELD_SHARE: f64 = 0.5;

impl MemoryFit {
    /// The database (`database_bytes`) against `memory_bytes` (`limited`: `--memory`'s budget).
    pub fn of(database_bytes: u64, memory_bytes: u64, limited: bool) -> Option<MemoryFit> {
        if memory_bytes == 0 {
            return None;
        }
        let share = database_bytes as f64 / memory_bytes as f64;
        let memory = match limited {
            true => format!("the {} --memory budget for pages", format_bytes(memory_bytes)),
            false => format!("{} memory", format_bytes(memory_bytes)),
        };
        let of = if limited { "the budget" } else { "memory" };
        let held = if share <= HELD_SHARE {
            "held in memory: once read, reads come from the page cache and the engine's cache, not the device"
                .to_string()
        } else if share <= 1.0 {
            format!("about {of}'s size: part of it is read from the device")
        } else {
            format!("larger than {of}: reads reach the device")
        };
        let says =
            format!("database {} = {} of {memory} ({held})", format_bytes(database_bytes), percent(share));
        Some(MemoryFit { database_bytes, memory_bytes, limited, says })
    }
}

/// A share as a percentage, with a decimal below 10 %.
fn percent(share: f64) -> String {
    if share * 100.0 < 10.0 {
        format!("{:.1} %", share * 100.0)
    } else {
        format!("{:.0} %", share * 100.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn interval(start_s: f64, nopm: f64, write_ms: f64) -> DbInterval {
        DbInterval {
            start_s,
            seconds: 1.0,
            nopm,
            tpm: nopm * 2.2,
            read_iops: 0.0,
            write_iops: 100.0,
            read_mean_ms: None,
            write_mean_ms: Some(write_ms),
            write_mib_s: 4.0,
        }
    }

    /// A checkpoint stall: one interval's NOPM falls while the device's writes slow; the line names it.
    #[test]
    fn the_worst_interval_is_named_with_the_device_s_latency() {
        let s = DbIntervals {
            interval_s: 1.0,
            device: Some("loop3".into()),
            intervals: vec![
                interval(0.0, 1200.0, 0.5),
                interval(1.0, 300.0, 45.0),
                interval(2.0, 1100.0, 0.6),
            ],
        };
        assert_eq!(s.worst().unwrap().start_s, 1.0);
        let line = s.summary(866.0);
        assert!(line.contains("1 under 50 % of the window's NOPM (a stall)"), "{line}");
        assert!(line.contains("worst 1-2 s: NOPM 300, loop3 read - / write 45.00 ms mean"), "{line}");
    }

    #[test]
    fn cpu_bound_when_the_cores_or_the_users_threads_are_busy() {
        let busy = DbCpu::assess(4, 16, Some(3.9), 0.8, ("the PostgreSQL server's processes", Some(3.0)));
        let says = &busy.says;
        assert!(busy.cpu_bound && says.starts_with("CPU-bound: the machine's 4 cores"), "{says}");
        assert!(
            says.contains(
                "(other processes 0.10 cores); the PostgreSQL server's processes 3.00 cores, iolab 0.80"
            ),
            "{says}"
        );
        let one = DbCpu::assess(8, 1, Some(1.2), 0.97, ("SQLite, inside iolab's process", None));
        assert!(one.cpu_bound && one.says.starts_with("CPU-bound at 1 user"), "{}", one.says);
        let idle = DbCpu::assess(8, 8, Some(1.0), 0.5, ("the PostgreSQL server's processes", Some(0.4)));
        assert!(!idle.cpu_bound && idle.says.contains("waited on the storage"), "{}", idle.says);
    }

    #[test]
    fn the_database_against_memory_says_whether_it_is_held() {
        let m = MemoryFit::of(84 << 20, 24 << 30, false).unwrap();
        assert_eq!(
            m.says,
            "database 84.0 MiB = 0.3 % of 24.0 GiB memory (held in memory: once read, reads come from the page cache and the engine's cache, not the device)"
        );
        let m = MemoryFit::of(84 << 20, 32 << 20, true).unwrap();
        assert!(
            m.says.contains("= 262 % of the 32.0 MiB --memory budget") && m.says.contains("reads reach"),
            "{}",
            m.says
        );
        assert_eq!(MemoryFit::of(1, 0, false), None);
    }
}
