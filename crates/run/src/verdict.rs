//! The Jetstress-style verdict of a run, judged where the run is assembled (so a library caller's result
//! has one too), and Exchange sizing: how `[exchange]` sets the job's sizes and rates before the run.
//!
//! The checks themselves are [`iolab_report::judge`]'s; here are the job's side of them: which worker groups
//! play which role, the thresholds (defaults where `[verdict]` and the flags are silent), and the sizing.

use iolab_report::verdict::{Sizing, Thresholds, Verdict};
use iolab_report::RunResult;
use iolab_spec::exchange::{ExchangeSizing, ExchangeSpec};
use iolab_spec::verdict::{self as vspec, VerdictSpec};
use iolab_spec::JobSpec;

/// The role a worker-table or target name plays in Exchange sizing and the verdict: `db`, `db1`, `db-2` are
/// databases; `log`, `log1` logs; `bdm`, `bdm1` maintenance streams.
pub fn has_role(name: &str, role: &str) -> bool {
    match name.strip_prefix(role) {
        Some("") => true,
        Some(rest) => rest.starts_with(|c: char| c.is_ascii_digit() || c == '-' || c == '_'),
        None => false,
    }
}

/// Applies Exchange sizing to targets and worker tables. Rates are per worker (a `[worker.NAME]` rate is each
/// worker's), so a role's rate is split evenly over all its workers; sizes are split over its targets.
pub fn apply_sizing(job: &mut JobSpec, s: &ExchangeSizing) {
    const MIB: u64 = 1 << 20;
    for (role, total) in [("db", s.db_size_bytes), ("log", s.log_size_bytes)] {
        let n = job.targets.keys().filter(|k| has_role(k, role)).count() as u64;
        for (_, t) in job.targets.iter_mut().filter(|(k, _)| has_role(k, role)) {
            t.size = Some((total / n.max(1)).next_multiple_of(MIB));
        }
    }
    for (role, iops) in [("db", s.db_iops), ("log", s.log_iops), ("bdm", s.bdm_iops)] {
        let workers: u32 =
            job.worker_tables.iter().filter(|w| has_role(&w.name, role)).map(|w| w.count).sum();
        for w in job.worker_tables.iter_mut().filter(|w| has_role(&w.name, role)) {
            w.layer.rate = Some(iops / workers.max(1) as f64);
            if role == "db" {
                w.layer.read_pct = Some(s.db_read_pct);
                for spec in &mut w.specs {
                    spec.read_pct = None;
                    spec.rw = None;
                }
            }
        }
    }
}

/// The job's resolved Exchange sizing as its documents carry it, or `None` without `[exchange]`.
pub fn sizing(job: &JobSpec) -> Option<Sizing> {
    let sizing = job.exchange.as_ref()?.resolve().ok()?;
    Some(Sizing { summary: iolab_spec::exchange::summary(&sizing), sizing })
}

/// The verdict thresholds of a job (defaults where `[verdict]` and the flags are silent).
fn thresholds(v: &VerdictSpec) -> Thresholds {
    let ns = |x: Option<u64>, d: u64| x.unwrap_or(d) as f64;
    Thresholds {
        db_read_avg_ns: ns(v.max_db_read_avg_ns, vspec::DEFAULT_DB_READ_AVG_NS),
        db_read_max_ns: ns(v.max_db_read_max_ns, vspec::DEFAULT_DB_READ_MAX_NS),
        log_write_avg_ns: ns(v.max_log_write_avg_ns, vspec::DEFAULT_LOG_WRITE_AVG_NS),
        log_write_max_ns: ns(v.max_log_write_max_ns, vspec::DEFAULT_LOG_WRITE_MAX_NS),
        flush_p99_ns: v.max_flush_p99_ns.map(|n| n as f64),
        min_iops: v.min_iops,
        iops_tolerance_pct: v.iops_tolerance_pct.unwrap_or(vspec::DEFAULT_IOPS_TOLERANCE_PCT),
    }
}

/// What a run is judged by: the job's `[verdict]` and `[exchange]` as the caller gave them (over several
/// hosts, before each rank took its share of the rates).
#[derive(Clone, Debug, Default)]
pub struct Judging {
    verdict: Option<VerdictSpec>,
    exchange: Option<ExchangeSpec>,
    sizing: Option<Sizing>,
}

impl Judging {
    /// What `job` asks to be judged by.
    pub fn of(job: &JobSpec) -> Judging {
        Judging { verdict: job.verdict.clone(), exchange: job.exchange.clone(), sizing: sizing(job) }
    }

    /// The verdict of a finished run, or `None` when the job asks for none (no `[verdict]`, no `[exchange]`,
    /// no verdict flag).
    pub fn verdict(&self, result: &RunResult) -> Option<Verdict> {
        if self.verdict.is_none() && self.exchange.is_none() {
            return None;
        }
        let t = thresholds(&self.verdict.clone().unwrap_or_default());
        let names = |role: &str| -> Vec<String> {
            result.groups.iter().filter(|g| has_role(&g.name, role)).map(|g| g.name.clone()).collect()
        };
        let mut v = iolab_report::judge::evaluate(result, &t, &names("db"), &names("log"));
        v.sizing = self.sizing.clone();
        v.provisional = self.provisional(result);
        Some(v)
    }

    /// Why `result` cannot carry its verdict in full: shorter than its standard requires (Jetstress's 2 h
    /// for an Exchange job, `standard_duration` for any), or, for Exchange, mailboxes smaller than real ones
    /// (a small database is served by caches a real one is not).
    fn provisional(&self, result: &RunResult) -> Vec<String> {
        let mut why = Vec::new();
        let exchange = self.exchange.is_some();
        let standard = self.verdict.as_ref().and_then(|v| v.standard_duration_ns);
        let (standard, name) = match standard {
            Some(ns) => (Some(ns), "its standard (standard_duration)"),
            None if exchange => (Some(vspec::EXCHANGE_STANDARD_DURATION_NS), "Jetstress's performance test"),
            None => (None, ""),
        };
        if let Some(ns) = standard.filter(|&ns| result.measured_s * 1e9 < ns as f64) {
            why.push(format!(
                "measured {} where {name} runs {}: a longer run meets what a short one does not (log growth, \
                 background maintenance, the cache filling); run with -d {} for a verdict of record",
                iolab_spec::units::format_duration((result.measured_s * 1e9) as u64),
                iolab_spec::units::format_duration(ns),
                iolab_spec::units::format_duration(ns),
            ));
        }
        if let Some(s) = self.sizing.as_ref().filter(|s| s.sizing.mailbox_size_bytes < REAL_MAILBOX_BYTES) {
            why.push(format!(
                "mailboxes of {} each (real ones hold 200 MB-2 GB): a database of {} is served by caches a real \
                 one is not; give --mailbox-size",
                iolab_device::format_bytes(s.sizing.mailbox_size_bytes),
                iolab_device::format_bytes(s.sizing.db_size_bytes),
            ));
        }
        why
    }

    /// An error that says "give a smaller --size" for a job whose sizes came from Exchange sizing, with the
    /// flags that made them named instead; any other error as it was.
    pub fn name_sizing_flags(&self, e: crate::Error) -> crate::Error {
        let hint = iolab_device::error::HINT_SMALLER_SIZE;
        match (self.exchange.as_ref().and_then(|x| x.resolve().ok()), e) {
            (Some(s), crate::Error::Usage(m)) if m.contains(hint) => {
                crate::Error::Usage(m.replace(hint, &sizing_hint(&s)))
            }
            (_, e) => e,
        }
    }
}

/// The smallest mailbox an Exchange verdict of record sizes: real mailboxes hold 200 MB to 2 GB
/// (docs/SOURCES.md §2); the profiles' 1 MiB default is scaled down so that a plain run fits a laptop.
const REAL_MAILBOX_BYTES: u64 = 200 << 20;

fn sizing_hint(s: &ExchangeSizing) -> String {
    use iolab_device::format_bytes;
    format!(
        "Exchange sizing made the sizes: database {} = --mailboxes {} x --mailbox-size {}, log {} \
         (--log-size, else 5 % of the database); give fewer --mailboxes, a smaller --mailbox-size or \
         --log-size, or paths on another file system (--target db=PATH --target log=PATH)",
        format_bytes(s.db_size_bytes),
        s.mailboxes,
        iolab_spec::units::format_size(s.mailbox_size_bytes),
        format_bytes(s.log_size_bytes),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn role_names_match_prefix_and_separator() {
        assert!(has_role("db", "db") && has_role("db2", "db") && has_role("db-a", "db"));
        assert!(!has_role("dbx", "db") && !has_role("logger", "log") && !has_role("xdb", "db"));
    }
}
