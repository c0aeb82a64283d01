//! Flags of profiles, Exchange sizing, the verdict and `--find-max` (flattened into `iolab run`), and the
//! `iolab profiles` command's arguments.

use super::{KeySet, SomeKeys};
use clap::{Args, Subcommand};

/// Profile, Exchange-sizing and verdict flags of `iolab run` (and `iolab sweep`).
#[derive(Args, Debug, Default, Clone)]
pub struct ProfileFlags {
    /// Run a built-in profile (list: `iolab profiles`; see one: `iolab profiles show NAME`). Flags override it,
    /// as they do a job file; `--target NAME=PATH` puts one of its named targets (@db, @log, ...) on your
    /// storage, a plain `--target` puts every worker on one target.
    #[arg(
        long,
        value_name = "NAME",
        value_parser = super::hints::Candidates(super::hints::PROFILE_NAMES),
        hide_possible_values = true
    )]
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
    /// Verdict: largest 99th percentile of the run's flushes (fsync, fdatasync), as etcd's disk check judges
    /// it (10ms). Not checked unless given.
    #[arg(long, value_name = "DUR", help_heading = "Verdict")]
    pub max_flush_p99: Option<String>,
    /// Verdict: database IOPS the run must achieve. Default: the database groups' offered rate (no check in
    /// closed loop without this flag).
    #[arg(long, value_name = "IOPS", help_heading = "Verdict")]
    pub min_iops: Option<String>,
    /// Verdict: how far below the IOPS target a run may fall and pass, percent. Default 5 (an open-loop run
    /// cannot exceed its offered rate; Poisson counts vary).
    #[arg(long, value_name = "PCT", help_heading = "Verdict")]
    pub iops_tolerance: Option<String>,
    /// Verdict: the run length its standard requires; the verdict of a shorter run is printed as
    /// provisional, with the reason. Default 2h for Exchange jobs (Jetstress's performance test), none
    /// otherwise.
    #[arg(long, value_name = "DUR", help_heading = "Verdict")]
    pub standard_duration: Option<String>,

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
    /// What to do (default: list the profiles, one line each with its description and sources).
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
    /// Derive a job file from a block I/O trace (any format `iolab replay` reads): per target, workers with
    /// the trace's read/write, sequential/random and discard shares, sizes, hot zones, flushes per write and
    /// rate (or depth, --closed). `--check TARGET` says how faithful it is: the trace replayed and the job
    /// run on TARGET, compared (docs/TRACES.md).
    Derive {
        /// The trace.
        trace: String,
        /// Write the job file to FILE (default: stdout).
        #[arg(long, short = 'o', value_name = "FILE")]
        output: Option<String>,
        /// The job's name (default: the trace's file name).
        #[arg(long, value_name = "NAME")]
        name: Option<String>,
        /// Closed loop: the trace's mean depth, as fast as the storage allows, instead of its rate.
        #[arg(long)]
        closed: bool,
        /// The fidelity check: replay the trace on TARGET and run the derived job there for the trace's
        /// span, then print how far apart they are (IOPS, MB/s, reads and writes, latency percentiles), as
        /// `iolab compare` does. On an emulated TARGET (sim:, link:) both run on virtual time. The job then
        /// goes to -o FILE only. A trace of one device.
        #[arg(long, value_name = "TARGET")]
        check: Option<String>,
        /// --seed: of the check's two runs.
        #[command(flatten)]
        keys: SomeKeys<CheckKeys>,
    },
}

/// `--seed` of `iolab profiles derive --check`: `iolab run`'s own flag (`--seed 0xff`), in the check's words.
#[derive(Clone, Copy, Debug, Default)]
pub struct CheckKeys;

impl KeySet for CheckKeys {
    const KEYS: &'static [(&'static str, Option<&'static str>)] =
        &[("seed", Some("Seed of the check's two runs (with --check). Default 1."))];
}
