//! Built-in profiles (`iolab run --profile NAME`), Exchange sizing flags and the pass/fail verdict; the
//! `iolab profiles` command is [`crate::profiles_cmd`], the `--find-max` search [`crate::find_max`].
//!
//! A profile is a plain job file from the repository's `profiles/` directory, embedded at build time
//! (build.rs) and read by the same parser as a user's job file, so `iolab profiles show NAME > job.toml`
//! gives a file that runs the same. After flags are merged, [`resolve`] applies Exchange sizing
//! (`[exchange]` + `--mailboxes` ...) to the job's `db*`, `log*` and `bdm*` worker tables and targets; after
//! the run, [`judge`] fills the Jetstress-style verdict.

use crate::args::ProfileFlags;
use crate::exit::usage;
use anyhow::Result;
use iolab_report::verdict::{Thresholds, Verdict};
use iolab_report::RunResult;
use iolab_spec::error::suggest;
use iolab_spec::exchange::{ExchangeSizing, ExchangeSpec};
use iolab_spec::verdict::{self as vspec, VerdictSpec};
use iolab_spec::{JobSpec, Place};

include!(concat!(env!("OUT_DIR"), "/profiles.rs"));

/// The text of a built-in profile, or a usage error with the closest name.
pub fn profile_text(name: &str) -> Result<&'static str> {
    if let Some((_, text)) = PROFILES.iter().find(|(n, _)| *n == name) {
        return Ok(text);
    }
    let names: Vec<&str> = PROFILES.iter().map(|(n, _)| *n).collect();
    let hint = match suggest(name, &names) {
        Some(s) => format!("; did you mean '{s}'?"),
        None => "; `iolab profiles` lists them".to_string(),
    };
    Err(usage(format!("invalid value '{name}' for '--profile': expected a built-in profile name{hint}")))
}

/// The job a profile starts from, or `None` without `--profile`.
pub fn load(flags: &ProfileFlags) -> Result<Option<JobSpec>> {
    let Some(name) = &flags.profile else { return Ok(None) };
    let text = profile_text(name)?;
    JobSpec::from_toml(text, &format!("profiles/{name}.toml")).map(Some).map_err(usage)
}

/// The Exchange flags as a layer over the job's `[exchange]` table; `None` when no flag was given.
fn exchange_flags(flags: &ProfileFlags) -> Result<Option<ExchangeSpec>> {
    let pairs: [(&str, &str, &Option<String>); 6] = [
        ("mailboxes", "--mailboxes", &flags.mailboxes),
        ("mailbox_size", "--mailbox-size", &flags.mailbox_size),
        ("iops_per_mailbox", "--iops-per-mailbox", &flags.iops_per_mailbox),
        ("messages_per_day", "--messages-per-day", &flags.messages_per_day),
        ("version", "--exchange-version", &flags.exchange_version),
        ("log_size", "--log-size", &flags.log_size),
    ];
    let mut x = ExchangeSpec::default();
    let mut any = false;
    for (key, flag, value) in pairs {
        if let Some(v) = value {
            x.set(key, v, &Place::Flag(flag.into())).map_err(usage)?;
            any = true;
        }
    }
    Ok(any.then_some(x))
}

/// The verdict flags as a layer over the job's `[verdict]` table; `None` when no flag was given.
fn verdict_flags(flags: &ProfileFlags) -> Result<Option<VerdictSpec>> {
    let pairs: [(&str, &str, &Option<String>); 7] = [
        ("max_db_read_avg", "--max-db-read-avg", &flags.max_db_read_avg),
        ("max_db_read_max", "--max-db-read-max", &flags.max_db_read_max),
        ("max_log_write_avg", "--max-log-write-avg", &flags.max_log_write_avg),
        ("max_log_write_max", "--max-log-write-max", &flags.max_log_write_max),
        ("max_flush_p99", "--max-flush-p99", &flags.max_flush_p99),
        ("min_iops", "--min-iops", &flags.min_iops),
        ("iops_tolerance", "--iops-tolerance", &flags.iops_tolerance),
    ];
    let mut v = VerdictSpec::default();
    let mut any = false;
    for (key, flag, value) in pairs {
        if let Some(text) = value {
            v.set(key, text, &Place::Flag(flag.into())).map_err(usage)?;
            any = true;
        }
    }
    Ok(any.then_some(v))
}

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

/// Applies sizing (Exchange) and the verdict flags to the job once flags are merged.
pub fn resolve(job: &mut JobSpec, flags: &ProfileFlags) -> Result<()> {
    if let Some(v) = verdict_flags(flags)? {
        job.verdict = Some(job.verdict.clone().unwrap_or_default().merged(&v));
    }
    let xflags = exchange_flags(flags)?;
    match (&job.exchange, xflags) {
        (None, Some(_)) => {
            return Err(usage(
                "Exchange sizing flags (--mailboxes, --mailbox-size, --iops-per-mailbox, --messages-per-day, --exchange-version, --log-size) need a job with an [exchange] table, e.g. --profile exchange-2010",
            ))
        }
        (Some(x), Some(f)) => job.exchange = Some(x.merged(&f)),
        _ => {}
    }
    if let Some(x) = &job.exchange {
        let sizing = x.resolve().map_err(usage)?;
        apply_sizing(job, &sizing);
    }
    Ok(())
}

/// An error that says "give a smaller --size" for a job whose sizes came from Exchange sizing, with the
/// flags that made them named instead; any other error as it was.
pub fn name_sizing_flags(job_exchange: Option<&ExchangeSpec>, e: iolab_run::Error) -> iolab_run::Error {
    let hint = iolab_device::error::HINT_SMALLER_SIZE;
    match (job_exchange.and_then(|x| x.resolve().ok()), e) {
        (Some(s), iolab_run::Error::Usage(m)) if m.contains(hint) => {
            iolab_run::Error::Usage(m.replace(hint, &sizing_hint(&s)))
        }
        (_, e) => e,
    }
}

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

/// The resolved Exchange sizing as JSON (its fields and a `summary` line), for the verdict and --dry-run.
pub fn sizing_json(job: &JobSpec) -> Option<serde_json::Value> {
    let s = job.exchange.as_ref()?.resolve().ok()?;
    let mut v = serde_json::to_value(&s).ok()?;
    v["summary"] = serde_json::Value::String(s.summary());
    Some(v)
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

/// The verdict of a finished run, or `None` when the job asks for none (no `[verdict]`, no `[exchange]`, no
/// verdict flag).
pub fn verdict_of(job: &JobSpec, result: &RunResult) -> Option<Verdict> {
    if job.verdict.is_none() && job.exchange.is_none() {
        return None;
    }
    let t = thresholds(&job.verdict.clone().unwrap_or_default());
    let names = |role: &str| -> Vec<String> {
        result.groups.iter().filter(|g| has_role(&g.name, role)).map(|g| g.name.clone()).collect()
    };
    let mut v = iolab_report::judge::evaluate(result, &t, &names("db"), &names("log"));
    v.sizing = sizing_json(job);
    Some(v)
}

/// Judges a finished run against the job's thresholds, filling `result.verdict`.
pub fn judge(job: &JobSpec, _flags: &ProfileFlags, result: &mut RunResult) {
    result.verdict = verdict_of(job, result);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_profile_parses_and_has_a_description() {
        assert!(PROFILES.len() >= 23, "{} profiles", PROFILES.len());
        for (name, text) in PROFILES {
            let job = JobSpec::from_toml(text, name).unwrap_or_else(|e| panic!("{name}: {e}"));
            let meta = job.profile.unwrap_or_else(|| panic!("{name}: no [profile] table"));
            assert!(meta.description.is_some() && !meta.sources.is_empty(), "{name}");
            assert!(text.starts_with('#'), "{name}: opens with comment lines");
        }
    }

    #[test]
    fn role_names_match_prefix_and_separator() {
        assert!(has_role("db", "db") && has_role("db2", "db") && has_role("db-a", "db"));
        assert!(!has_role("dbx", "db") && !has_role("logger", "log") && !has_role("xdb", "db"));
    }

    #[test]
    fn sizing_sets_rates_per_worker_and_sizes_per_target() {
        let mut job = JobSpec::from_toml(
            "[targets]\ndb1 = { size = \"1G\" }\ndb2 = { size = \"1G\" }\nlog = { size = \"1G\" }\n[exchange]\nmailboxes = 1000\nmailbox_size = \"200M\"\niops_per_mailbox = 1\n[worker.db1]\ncount = 2\ntarget = \"@db1\"\n[worker.db2]\ncount = 2\ntarget = \"@db2\"\n[worker.log]\ntarget = \"@log\"\nrw = \"write\"\n",
            "j",
        )
        .unwrap();
        resolve(&mut job, &ProfileFlags::default()).unwrap();
        assert_eq!(job.worker_tables[0].layer.rate, Some(250.0));
        assert_eq!(job.worker_tables[2].layer.rate, Some(100.0));
        assert_eq!(job.worker_tables[0].layer.read_pct, Some(60.0));
        assert_eq!(job.targets["db1"].size, Some(500 * (200 << 20)));
        let flags = ProfileFlags { mailboxes: Some("2000".into()), ..Default::default() };
        resolve(&mut job, &flags).unwrap();
        assert_eq!(job.worker_tables[1].layer.rate, Some(500.0));
    }
}
