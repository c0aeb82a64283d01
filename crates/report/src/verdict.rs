//! The pass/fail verdict of a run against thresholds, Jetstress-style, and the per-group table.
//!
//! Jetstress judges a storage design by four latencies and one rate: each database instance's read latency
//! (average <= 20 ms, maximum <= 50 ms), each log instance's write latency (average <= 10 ms, maximum
//! <= 50 ms), and the achieved transactional IOPS against the target (docs/SOURCES.md §2.6). Here a database
//! instance is a worker group whose name starts with `db` and a log instance one whose name starts with
//! `log`; the cli says which (this crate does not read job files).
//!
//! This module holds the verdict's data (a leaf of the run model); [`crate::judge`] fills it from a run and
//! the text exporter prints it.
//!
//! **"Maximum" is the largest per-interval mean**, not the slowest single I/O. Jetstress reads its latencies
//! from Perfmon counters (`Avg. Disk sec/Read` per instance), which are sampled averages: the "maximum" it
//! reports is the largest sampled average. A single-I/O maximum is one outlier among millions and would fail
//! nearly every real array at 50 ms; it is shown beside the checked value so nothing is hidden.
//!
//! **Achieved >= target** allows a tolerance (default 5 %): an open-loop run can never exceed its offered
//! rate, arrivals still in flight at the end of the window are not counted, and Poisson arrival counts
//! vary (about 2.9 % over 10 s at 120 IOPS). Overload shows up as latency long before 5 % of the rate is
//! lost, because arrivals queue.

use serde::{Deserialize, Serialize};

use crate::format::{format_duration_ns, format_rate};

/// Pass/fail of one run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// True when every check passed.
    pub pass: bool,
    /// One line per failed check (empty on pass).
    pub reasons: Vec<String>,
    /// Database IOPS achieved (reads + writes of the database groups; the whole run without such groups).
    pub achieved_iops: Option<f64>,
    /// Database IOPS asked for (`min_iops`, else the database groups' offered rate); `None`: no IOPS check.
    pub target_iops: Option<f64>,
    /// Tolerance of the IOPS check, percent.
    pub iops_tolerance_pct: f64,
    /// Every check, passed or not.
    pub checks: Vec<Check>,
    /// The Exchange sizing that set the target, if any.
    pub sizing: Option<Sizing>,
    /// Why the run cannot carry its verdict in full (shorter or smaller than its standard requires), one
    /// line each; empty when it can. A provisional verdict is printed as such in every output.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub provisional: Vec<String>,
}

impl Verdict {
    /// `PASS` or `FAIL`, with `(provisional)` when the run cannot carry it in full.
    pub fn word(&self) -> String {
        let word = if self.pass { "PASS" } else { "FAIL" };
        if self.provisional.is_empty() {
            word.to_string()
        } else {
            format!("{word} (provisional)")
        }
    }
}

/// The Exchange sizing of a run (`[exchange]` and the sizing flags, resolved), as its documents carry it:
/// the numbers and one `summary` line a person reads.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Sizing {
    /// The numbers.
    #[serde(flatten)]
    pub sizing: iolab_doc::ExchangeSizing,
    /// The sizing in one line.
    pub summary: String,
}

#[cfg(test)]
impl Sizing {
    /// A sizing of `mailboxes` 1 MiB mailboxes at 0.12 IOPS, said as `summary` (for tests).
    pub(crate) fn sample(mailboxes: u64, summary: &str) -> Sizing {
        let db_iops = mailboxes as f64 * 0.12;
        let sizing = iolab_doc::ExchangeSizing {
            version: 2010,
            mailboxes,
            mailbox_size_bytes: 1 << 20,
            iops_per_mailbox: 0.12,
            basis: "given".into(),
            db_size_bytes: mailboxes << 20,
            log_size_bytes: 64 << 20,
            db_iops,
            db_read_pct: 60.0,
            log_iops: db_iops / 10.0,
            bdm_iops: 0.0,
            bdm_window_ns: 0,
        };
        Sizing { sizing, summary: summary.into() }
    }
}

/// One check.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Check {
    /// `db_read_avg`, `db_read_max`, `log_write_avg`, `log_write_max` or `iops`.
    pub name: String,
    /// The worker group checked (`all` for the whole run).
    pub group: String,
    /// The limit: ns for latencies (measured must be <= limit), IOPS for `iops` (measured must be >= limit,
    /// which is the target less the tolerance).
    pub limit: f64,
    /// The measured value in the same unit; `None` when nothing was measured (which fails).
    pub measured: Option<f64>,
    /// `ns` or `iops`.
    pub unit: String,
    /// The slowest single I/O, ns, shown beside a `*_max` check (which uses the per-interval mean).
    pub single_io_max_ns: Option<f64>,
    /// The check passed.
    pub pass: bool,
}

/// What to check against: limits in ns, and the IOPS target.
#[derive(Clone, Debug, PartialEq)]
pub struct Thresholds {
    /// Database read average, ns.
    pub db_read_avg_ns: f64,
    /// Database read per-interval mean maximum, ns.
    pub db_read_max_ns: f64,
    /// Log write average, ns.
    pub log_write_avg_ns: f64,
    /// Log write per-interval mean maximum, ns.
    pub log_write_max_ns: f64,
    /// 99th percentile of the run's flushes, ns; `None`: not checked.
    pub flush_p99_ns: Option<f64>,
    /// Explicit IOPS target; `None` = the database groups' offered rate (no check in closed loop).
    pub min_iops: Option<f64>,
    /// Tolerance of the IOPS check, percent.
    pub iops_tolerance_pct: f64,
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds {
            db_read_avg_ns: 20e6,
            db_read_max_ns: 50e6,
            log_write_avg_ns: 10e6,
            log_write_max_ns: 50e6,
            flush_p99_ns: None,
            min_iops: None,
            iops_tolerance_pct: 5.0,
        }
    }
}

impl Check {
    /// The check as printed: its group and what it measures (`db read avg`, `log write max*`, `all IOPS`).
    pub fn label(&self) -> String {
        let c = self;
        let what = match c.name.as_str() {
            "db_read_avg" => "read avg",
            "db_read_max" => "read max*",
            "log_write_avg" => "write avg",
            "log_write_max" => "write max*",
            "flush_p99" => "flush p99",
            "iops" => "IOPS",
            other => other,
        };
        format!("{} {what}", c.group)
    }

    /// A value in the check's unit: IOPS as a rate, latencies as durations.
    pub fn value_text(&self, v: f64) -> String {
        if self.unit == "iops" {
            format_rate(v, 1)
        } else {
            format_duration_ns(v)
        }
    }

    /// Why a failed check failed, in one line.
    pub fn reason(&self) -> String {
        let c = self;
        match c.measured {
            None => format!("{}: nothing measured", c.label()),
            Some(m) if c.unit == "iops" => format!(
                "{}: achieved {} < {} (target less tolerance)",
                c.label(),
                c.value_text(m),
                c.value_text(c.limit)
            ),
            Some(m) => format!("{}: {} > limit {}", c.label(), c.value_text(m), c.value_text(c.limit)),
        }
    }
}
