//! Built-in profiles (`iolab run --profile NAME`), Exchange sizing flags and the pass/fail verdict; the
//! `iolab profiles` command is [`crate::profiles_cmd`], the `--find-max` search [`crate::find_max`].
//!
//! A profile is a plain job file from the repository's `profiles/` directory, embedded at build time
//! (build.rs) and read by the same parser as a user's job file, so `iolab profiles show NAME > job.toml`
//! gives a file that runs the same. After flags are merged, [`resolve`] applies Exchange sizing
//! (`[exchange]` + `--mailboxes` ...) to the job's `db*`, `log*` and `bdm*` worker tables and targets
//! ([`iolab_run::verdict`], which also judges the run against the Jetstress-style verdict).

use crate::args::ProfileFlags;
use crate::exit::usage;
use anyhow::Result;
use iolab_run::verdict::apply_sizing;
use iolab_spec::error::suggest;
use iolab_spec::exchange::ExchangeSpec;
use iolab_spec::verdict::VerdictSpec;
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
    let pairs: [(&str, &str, &Option<String>); 8] = [
        ("max_db_read_avg", "--max-db-read-avg", &flags.max_db_read_avg),
        ("max_db_read_max", "--max-db-read-max", &flags.max_db_read_max),
        ("max_log_write_avg", "--max-log-write-avg", &flags.max_log_write_avg),
        ("max_log_write_max", "--max-log-write-max", &flags.max_log_write_max),
        ("max_flush_p99", "--max-flush-p99", &flags.max_flush_p99),
        ("min_iops", "--min-iops", &flags.min_iops),
        ("iops_tolerance", "--iops-tolerance", &flags.iops_tolerance),
        ("standard_duration", "--standard-duration", &flags.standard_duration),
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
