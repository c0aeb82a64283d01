//! Built-in profiles (`iolab profiles`, `iolab run --profile NAME`), Exchange sizing flags, the pass/fail
//! verdict and `--find-max`.
//!
//! A profile is a plain job file from the repository's `profiles/` directory, embedded at build time
//! (build.rs) and read by the same parser as a user's job file, so `iolab profiles show NAME > job.toml`
//! gives a file that runs the same. After flags are merged, [`resolve`] applies Exchange sizing
//! (`[exchange]` + `--mailboxes` ...) to the job's `db*`, `log*` and `bdm*` worker tables and targets; after
//! the run, [`judge`] fills the Jetstress-style verdict. [`find_max`] repeats whole runs to find the largest
//! mailbox count (or rate) that still passes, as Jetstress's "maximum users" does.

use crate::args::RunArgs;
use crate::run::{usage, Outcome};
use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use iolab_report::verdict::{Thresholds, Verdict};
use iolab_report::RunResult;
use iolab_spec::error::suggest;
use iolab_spec::exchange::{ExchangeSizing, ExchangeSpec};
use iolab_spec::verdict::{self as vspec, VerdictSpec};
use iolab_spec::{JobSpec, Place};
use std::io::Write;

include!(concat!(env!("OUT_DIR"), "/profiles.rs"));

/// Profile, Exchange-sizing and verdict flags of `iolab run` (and `iolab sweep`).
#[derive(Args, Debug, Default, Clone)]
pub struct ProfileFlags {
    /// Run a built-in profile (list: `iolab profiles`; see one: `iolab profiles show NAME`). Flags override it,
    /// as they do a job file; `--target NAME=PATH` puts one of its named targets (@db, @log, ...) on your
    /// storage, a plain `--target` puts every worker on one target.
    #[arg(long, value_name = "NAME")]
    pub profile: Option<String>,

    /// Exchange sizing: number of mailboxes (1 to 10M). Sets the @db size (x --mailbox-size) and the database
    /// rate (x IOPS per mailbox, open loop); the log rate is a tenth of it. Only for jobs with [exchange]
    /// (the exchange-* profiles). The resolved sizing is printed with the verdict and in --dry-run.
    #[arg(long, value_name = "N", help_heading = "Exchange sizing")]
    pub mailboxes: Option<String>,
    /// Exchange sizing: size of one mailbox (e.g. 2G). The @db target is mailboxes x this (a scratch file of
    /// that size unless --target db=PATH); the profiles default to small mailboxes to keep scratch files modest.
    #[arg(long, value_name = "SIZE", help_heading = "Exchange sizing")]
    pub mailbox_size: Option<String>,
    /// Exchange sizing: database IOPS per mailbox (e.g. 0.18), as Jetstress asks. Wins over --messages-per-day.
    #[arg(long, value_name = "IOPS", help_heading = "Exchange sizing", conflicts_with = "messages_per_day")]
    pub iops_per_mailbox: Option<String>,
    /// Exchange sizing: messages sent and received per mailbox per day (default 100); IOPS per mailbox is then
    /// proportional to it, per version (2010: 0.0012 per message, Dell BP1026; 2007/2013/2016: Redmond's
    /// 0.32/0.07/0.044 at 100). See docs/PROFILES.md.
    #[arg(long, value_name = "N", help_heading = "Exchange sizing")]
    pub messages_per_day: Option<String>,
    /// Exchange sizing: version, 2007, 2010, 2013 or 2016 (default: the profile's). Sets IOPS per message and
    /// the database read share (2007: 50 %; later: 60 %).
    #[arg(long, value_name = "YEAR", help_heading = "Exchange sizing")]
    pub exchange_version: Option<String>,
    /// Exchange sizing: log target size. Default 5 % of the database, at least 64 MiB.
    #[arg(long, value_name = "SIZE", help_heading = "Exchange sizing")]
    pub log_size: Option<String>,

    /// Verdict: largest average read response time of each database group (db*; the whole run without
    /// one). Default 20ms (Jetstress). Giving any verdict flag adds a verdict to any job; FAIL exits with 1.
    #[arg(long, value_name = "DUR", help_heading = "Verdict")]
    pub max_db_read_avg: Option<String>,
    /// Verdict: largest per-interval (--interval) mean read response time of each database group. Default
    /// 50ms. The slowest single I/O is shown beside it, not checked (Jetstress's maximum is a sampled mean).
    #[arg(long, value_name = "DUR", help_heading = "Verdict")]
    pub max_db_read_max: Option<String>,
    /// Verdict: largest average write response time of each log group (log*). Default 10ms.
    #[arg(long, value_name = "DUR", help_heading = "Verdict")]
    pub max_log_write_avg: Option<String>,
    /// Verdict: largest per-interval mean write response time of each log group. Default 50ms.
    #[arg(long, value_name = "DUR", help_heading = "Verdict")]
    pub max_log_write_max: Option<String>,
    /// Verdict: database IOPS the run must achieve. Default: the database groups' offered rate (no check in
    /// closed loop without this flag).
    #[arg(long, value_name = "IOPS", help_heading = "Verdict")]
    pub min_iops: Option<String>,
    /// Verdict: how far below the IOPS target a run may fall and pass, percent. Default 5 (an open-loop run
    /// cannot exceed its offered rate; Poisson counts vary).
    #[arg(long, value_name = "PCT", help_heading = "Verdict")]
    pub iops_tolerance: Option<String>,

    /// Search for the largest mailbox count (jobs with [exchange]) or total open-loop rate (other jobs; start
    /// from --rate or the job's rate) whose verdict passes: double until FAIL, then bisect. Each step is a
    /// whole run on fresh targets; the steps are printed as a table, and --json writes the search
    /// (schema iolab.findmax/1) instead of a run result. Exit 1 when even the smallest value fails.
    #[arg(long, help_heading = "Verdict")]
    pub find_max: bool,
    /// --find-max: stop bisecting when the pass/fail interval is at most this share of the passing value.
    /// Default 2 (percent); mailbox counts never finer than 1.
    #[arg(long, value_name = "PCT", default_value = "2", help_heading = "Verdict")]
    pub find_max_resolution: String,
    /// --find-max: measured time of each step (default: the job's duration).
    #[arg(long, value_name = "DUR", help_heading = "Verdict")]
    pub find_max_duration: Option<String>,
}

/// `iolab profiles` options.
#[derive(Args, Debug, Default, Clone)]
pub struct ProfilesArgs {
    /// What to do (default: list the profiles, one line each).
    #[command(subcommand)]
    pub action: Option<ProfilesAction>,
}

/// `iolab profiles` actions.
#[derive(Subcommand, Debug, Clone)]
pub enum ProfilesAction {
    /// Print a profile as the job file it is (copy, edit, `iolab run job.toml`).
    Show {
        /// The profile's name (see `iolab profiles`).
        name: String,
    },
}

/// The text of a built-in profile, or a usage error with the closest name.
fn profile_text(name: &str) -> Result<&'static str> {
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

/// Runs `iolab profiles`.
pub fn profiles_cmd(args: &ProfilesArgs) -> Result<Outcome> {
    let mut out = std::io::stdout().lock();
    match &args.action {
        Some(ProfilesAction::Show { name }) => {
            out.write_all(profile_text(name)?.as_bytes())?;
        }
        None => {
            let width = PROFILES.iter().map(|(n, _)| n.len()).max().unwrap_or(0);
            for (name, text) in PROFILES {
                let desc = JobSpec::from_toml(text, &format!("profiles/{name}.toml"))
                    .ok()
                    .and_then(|j| j.profile)
                    .and_then(|p| p.description)
                    .unwrap_or_else(|| "(no [profile] description)".into());
                writeln!(out, "{name:<width$}  {desc}")?;
            }
        }
    }
    out.flush()?;
    Ok(Outcome::Ok)
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
    let pairs: [(&str, &str, &Option<String>); 6] = [
        ("max_db_read_avg", "--max-db-read-avg", &flags.max_db_read_avg),
        ("max_db_read_max", "--max-db-read-max", &flags.max_db_read_max),
        ("max_log_write_avg", "--max-log-write-avg", &flags.max_log_write_avg),
        ("max_log_write_max", "--max-log-write-max", &flags.max_log_write_max),
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
fn apply_sizing(job: &mut JobSpec, s: &ExchangeSizing) {
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
        min_iops: v.min_iops,
        iops_tolerance_pct: v.iops_tolerance_pct.unwrap_or(vspec::DEFAULT_IOPS_TOLERANCE_PCT),
    }
}

/// The verdict of a finished run, or `None` when the job asks for none (no `[verdict]`, no `[exchange]`, no
/// verdict flag).
fn verdict_of(job: &JobSpec, result: &RunResult) -> Option<Verdict> {
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

/// What one --find-max step produced.
struct Step {
    value: f64,
    verdict: Verdict,
    measured_s: f64,
}

/// Scales every open-loop rate of the job by `factor` (forced, top-level and worker-table rates).
fn scale_rates(job: &mut JobSpec, factor: f64) {
    for r in [&mut job.forced.rate, &mut job.defaults.rate].into_iter().flatten() {
        *r *= factor;
    }
    for w in &mut job.worker_tables {
        if let Some(r) = w.layer.rate.as_mut() {
            *r *= factor;
        }
    }
}

/// The job's total offered rate, IOPS, as the plan would split it; `None` in closed loop.
fn total_rate(job: &JobSpec) -> Option<f64> {
    if let Some(r) = job.forced.rate {
        return Some(r);
    }
    let own: f64 = job.worker_tables.iter().filter_map(|w| w.layer.rate.map(|r| r * w.count as f64)).sum();
    let shared = job.defaults.rate.unwrap_or(0.0);
    let total = own + shared;
    (total > 0.0).then_some(total)
}

/// `iolab run --find-max`: the largest mailbox count (or total rate) whose verdict passes.
pub fn find_max(args: &RunArgs) -> Result<Outcome> {
    if args.dry_run {
        return Err(usage("--find-max runs many jobs; --dry-run shows one (drop --find-max to see it)"));
    }
    let resolution_pct = iolab_spec::units::parse_percent(&args.profile.find_max_resolution)
        .ok()
        .filter(|p| *p > 0.0)
        .ok_or_else(|| {
            usage(format!(
                "invalid value '{}' for '--find-max-resolution': expected a percentage above 0 and at most 100, e.g. '2'",
                args.profile.find_max_resolution
            ))
        })?;
    let mut base = crate::run::build_job(args)?;
    if base.verdict.is_none() {
        base.verdict = Some(VerdictSpec::default());
    }
    if let Some(d) = &args.profile.find_max_duration {
        let place = Place::Flag("--find-max-duration".into());
        base.set_run("duration", d, &place).map_err(usage)?;
        base.ios = None;
        base.bytes = None;
    }
    let by_mailboxes = base.exchange.is_some();
    let start = match &base.exchange {
        Some(x) => x.mailboxes.unwrap_or(1) as f64,
        None => total_rate(&base).ok_or_else(|| {
            usage("--find-max without [exchange] searches the open-loop rate; give a starting --rate (e.g. --rate 1k)")
        })?,
    };
    let base_rate = if by_mailboxes { 1.0 } else { start };
    let interval_ns = crate::run::parse_interval(&args.interval)?;
    // The catalog opens before the first step runs: a bad one is an exit-2 error with nothing done.
    let saver = crate::catalog_cmd::Saver::open(&args.catalog, args.quiet, false)?;
    let (started_at, _) = crate::env::now_rfc3339();
    let mut ran: Option<crate::catalog_cmd::RunFacts> = None;
    let quiet = args.quiet;
    let live = !quiet && std::io::IsTerminal::is_terminal(&std::io::stderr());
    let overall = crate::progress::OverallBar::search(live);
    let variable = if by_mailboxes { "mailboxes" } else { "rate_iops" };
    let mut steps: Vec<Step> = Vec::new();
    let mut interrupted = false;
    let (mut lo, mut hi): (Option<f64>, Option<f64>) = (None, None);
    let mut value = start;
    const MAX_STEPS: usize = 60;
    for _ in 0..MAX_STEPS {
        let mut job = base.clone();
        if let Some(x) = job.exchange.as_mut() {
            x.mailboxes = Some(value as u64);
            let sizing = x.resolve().map_err(usage)?;
            apply_sizing(&mut job, &sizing);
        } else {
            scale_rates(&mut job, value / base_rate);
        }
        let step_text = format!("{variable} {}", fmt_value(value, by_mailboxes));
        if live {
            overall.begin(&step_text, true);
        } else if !quiet {
            eprint!("iolab: find-max step {}: {step_text} ... ", steps.len() + 1);
        }
        let result = {
            let _scratch = iolab_device::ScratchGuard;
            let mut opts =
                crate::run::ExecOptions { interval_ns, quiet: true, live, on_interval: None, check: None };
            match crate::run::execute(job.clone(), false, &mut opts)? {
                crate::run::Executed::Done(r) => r,
                crate::run::Executed::DryRun(_) => unreachable!("dry_run is false"),
            }
        };
        overall.end();
        let step_line =
            |end: &str| format!("iolab: find-max step {}: {step_text} ... {end}", steps.len() + 1);
        if crate::signals::stop_requested() || result.partial {
            interrupted = true;
            if live {
                overall.println(&step_line("interrupted"));
            } else if !quiet {
                eprintln!("interrupted");
            }
            break;
        }
        let verdict = verdict_of(&job, &result).unwrap_or_default();
        ran.get_or_insert_with(|| crate::catalog_cmd::RunFacts::of(&result));
        let pass_fail = if verdict.pass { "PASS" } else { "FAIL" };
        if live {
            overall.println(&step_line(pass_fail));
        } else if !quiet {
            eprintln!("{pass_fail}");
        }
        let pass = verdict.pass;
        steps.push(Step { value, verdict, measured_s: result.measured_s });
        if pass {
            lo = Some(value);
        } else {
            hi = Some(value);
        }
        let min_step = if by_mailboxes { 1.0 } else { 1e-3 };
        let next = match (lo, hi) {
            (Some(l), None) => l * 2.0,
            (None, Some(h)) => {
                if h <= min_step {
                    break;
                }
                (h / 2.0).max(min_step)
            }
            (Some(l), Some(h)) => {
                if h - l <= (l * resolution_pct / 100.0).max(min_step) {
                    break;
                }
                (l + h) / 2.0
            }
            (None, None) => break,
        };
        value = if by_mailboxes { next.round().max(1.0) } else { next };
        if by_mailboxes && (Some(value) == lo || Some(value) == hi) {
            break;
        }
        if by_mailboxes && value > 1e7 {
            break;
        }
    }
    drop(overall);
    // Report.
    let rows: Vec<Vec<String>> = steps
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let check = |name: &str| {
                s.verdict
                    .checks
                    .iter()
                    .filter(|c| c.name == name)
                    .filter_map(|c| c.measured)
                    .reduce(f64::max)
                    .map_or("-".to_string(), iolab_report::format_duration_ns)
            };
            vec![
                (i + 1).to_string(),
                fmt_value(s.value, by_mailboxes),
                s.verdict.target_iops.map_or("-".into(), |t| iolab_report::format_rate(t, 1)),
                s.verdict.achieved_iops.map_or("-".into(), |t| iolab_report::format_rate(t, 1)),
                check("db_read_avg"),
                check("db_read_max"),
                check("log_write_avg"),
                check("log_write_max"),
                if s.verdict.pass { "PASS".into() } else { "FAIL".into() },
            ]
        })
        .collect();
    let max = lo;
    let doc = serde_json::json!({
        "schema": "iolab.findmax/1",
        "iolab_version": env!("CARGO_PKG_VERSION"),
        "started_at": started_at,
        "profile": ran.as_ref().map(|r| &r.profile),
        "targets": ran.as_ref().map(|r| &r.targets),
        "variable": variable,
        "start": start,
        "resolution_pct": resolution_pct,
        "interrupted": interrupted,
        "max": max,
        "steps": steps.iter().map(|s| serde_json::json!({
            "value": s.value,
            "pass": s.verdict.pass,
            "target_iops": s.verdict.target_iops,
            "achieved_iops": s.verdict.achieved_iops,
            "measured_s": s.measured_s,
            "reasons": s.verdict.reasons,
            "verdict": s.verdict,
        })).collect::<Vec<_>>(),
    });
    let text = serde_json::to_string_pretty(&doc)? + "\n";
    let saved = crate::catalog_cmd::save(saver.as_ref(), iolab_catalog::EntryKind::FindMax, &text);
    let json_to_stdout = args.json.as_deref() == Some("-");
    if !quiet && !json_to_stdout {
        let mut out = String::new();
        out.push_str(&text_table(
            &[
                "step",
                variable,
                "target IOPS",
                "achieved",
                "db read avg",
                "db read max*",
                "log write avg",
                "log write max*",
                "verdict",
            ],
            &rows,
        ));
        let res = if by_mailboxes { "mailboxes" } else { "IOPS" };
        match max {
            Some(m) => out.push_str(&format!(
                "max {variable} that passes: {} (FAIL at {}; resolution {resolution_pct}% or 1 {res})\n",
                fmt_value(m, by_mailboxes),
                hi.map_or("-".to_string(), |h| fmt_value(h, by_mailboxes)),
            )),
            None => out.push_str(&format!(
                "no {variable} value passed (smallest tried: {})\n",
                fmt_value(value, by_mailboxes)
            )),
        }
        if interrupted {
            out.push_str("search interrupted; the max is the largest passing value so far\n");
        }
        crate::run::write_out("-", &out)?;
    }
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&doc)?;
        crate::run::write_out(path, &(text + "\n")).with_context(|| format!("writing --json '{path}'"))?;
    }
    saved?;
    Ok(if max.is_some() { Outcome::Ok } else { Outcome::Fail })
}

fn fmt_value(v: f64, integer: bool) -> String {
    if integer {
        iolab_report::format_count(v as u64)
    } else {
        iolab_report::format_rate(v, 1)
    }
}

/// A right-aligned table with a left-aligned first column.
fn text_table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for r in rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |cells: Vec<String>| {
        let parts: Vec<String> =
            cells
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    if i == 0 {
                        format!("{c:<w$}", w = widths[0])
                    } else {
                        format!("{c:>w$}", w = widths[i])
                    }
                })
                .collect();
        parts.join("  ").trim_end().to_string() + "\n"
    };
    let mut out = line(header.iter().map(|h| h.to_string()).collect());
    for r in rows {
        out.push_str(&line(r.clone()));
    }
    out
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
