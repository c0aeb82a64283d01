//! Command-line arguments (clap derive). Each option's doc comment is its one and only documentation: `--help`
//! and the README's option table come from here, and, for the flags of job keys, from the keys' definitions
//! in `iolab-spec` ([`iolab_spec::keys`], built into clap by [`keys`]). Values are kept as typed and parsed
//! by `iolab-spec`, by the same setter a job file's key goes through, so an error quotes the flag and the
//! text exactly as given.
//!
//! Every command's flags live here (the submodules hold the larger groups), so this module depends on no
//! command module: commands take their arguments from here, never from each other.

pub mod ai;
mod catalog;
mod compare;
pub mod db;
mod hints;
mod import;
mod keys;
mod loadgen;
mod profile;
mod report;
#[cfg(test)]
mod same_flags;
mod sweep;
mod trace;
mod verify;

pub use catalog::{CatalogFlags, DbFlag, ExportArgs, RmArgs, RunsArgs, ShowArgs};
pub use compare::CompareArgs;
pub use hints::fio_switch_value;
pub use import::{FioSections, ImportArgs, ImportWhat};
pub use keys::{KeyFlags, KeySet, MoreKeyFlags, SomeKeys};
pub use loadgen::LoadgenFlags;
pub use profile::{CheckKeys, ProfileFlags, ProfilesAction, ProfilesArgs};
pub use report::{OutputFormat, ReportArgs};
pub use sweep::{SteadyStateFlags, SweepArgs};
pub use trace::{CaptureKeys, MrcArgs, ReplayArgs, TraceArgs, TraceWhat};
pub use verify::VerifyArgs;

use clap::{Args, Parser, Subcommand};
use iolab_spec::{JobSpec, SpecError};

/// The version, and whether MPI (runs over several hosts, `--features mpi`) is compiled in.
const VERSION: &str = if iolab_multihost::COMPILED {
    concat!(env!("CARGO_PKG_VERSION"), " (MPI: compiled in)")
} else {
    concat!(env!("CARGO_PKG_VERSION"), " (MPI: not compiled in)")
};

/// iolab's command line as it is parsed, documented (`--help`, man pages) and completed: [`Cli`]'s, with
/// every flag's and command's `-h` help cut to its first sentence; `--help` (and the man pages) keep the
/// whole text.
pub fn command() -> clap::Command {
    use clap::CommandFactory;
    short_helps(Cli::command())
}

/// What `-h` says under its summary.
const MORE_HELP: &str =
    "(-h: each flag's first sentence; --help: the whole text, and fio's names of the flags)";

/// What `-h` says under the summary of a command with many flags, which shows the common ones.
const MORE_FLAGS: &str =
    "(-h: the common flags, each's first sentence; --help: every flag, the whole text, and fio's names of the flags)";

/// A command with more flags than this (`run`, `sweep`, `replay`) shows in `-h` only its own flags and the
/// job keys' flags of [`COMMON_KEYS`]: one screen, not 250 lines.
const MANY_FLAGS: usize = 40;

/// The job keys' flags `-h` shows in a command with [`MANY_FLAGS`], and the catalog's and the outputs'.
const COMMON_KEYS: &[&str] = &[
    "target",
    "size",
    "rw",
    "read-pct",
    "random-pct",
    "bs",
    "qd",
    "workers",
    "rate",
    "duration",
    "ramp",
    "seed",
    "engine",
    "buffered",
    "clock",
    "profile",
    "json",
    "csv",
    "quiet",
    "dry-run",
    "no-save",
    "tag",
    "help",
    "version",
];

/// Whether `-h` of a command with [`MANY_FLAGS`] leaves `a` out: a job key's flag, or one under a heading
/// (Cache, Integrity, Verdict, ...), not among [`COMMON_KEYS`].
fn rare(a: &clap::Arg) -> bool {
    let Some(long) = a.get_long() else { return false };
    let key_flag = iolab_spec::keys::KEYS.iter().any(|k| k.flag.as_ref().is_some_and(|f| f.long == long));
    (key_flag || a.get_help_heading().is_some()) && !COMMON_KEYS.contains(&long)
}

/// `cmd` and its subcommands, each flag's help and each command's about cut to their first sentence for
/// `-h`, the whole text kept as the long help for `--help`.
fn short_helps(cmd: clap::Command) -> clap::Command {
    let cmd = cmd.mut_args(|a| match (a.get_help().map(|h| h.to_string()), a.get_long_help()) {
        (Some(h), None) if first_sentence(&h).len() < h.len() => {
            a.help(first_sentence(&h).to_string()).long_help(h)
        }
        (Some(h), Some(_)) if first_sentence(&h).len() < h.len() => a.help(first_sentence(&h).to_string()),
        _ => a,
    });
    let about = cmd.get_about().map(|h| h.to_string());
    let cmd = match (about, cmd.get_long_about()) {
        (Some(h), None) if first_sentence(&h).len() < h.len() => {
            cmd.about(first_sentence(&h).to_string()).long_about(h)
        }
        _ => cmd,
    };
    let many = cmd.get_arguments().count() > MANY_FLAGS;
    let cmd = if many { cmd.mut_args(|a| if rare(&a) { a.hide_short_help(true) } else { a }) } else { cmd };
    let cmd = match cmd.get_after_help() {
        None => cmd.after_help(if many { MORE_FLAGS } else { MORE_HELP }).after_long_help(""),
        Some(_) => cmd,
    };
    cmd.mut_subcommands(short_helps)
}

/// The first sentence of `text`: up to the first '. ' or ': ' before a capital letter or a backquote (not
/// 'e.g. 60s'), without its period; all of it when it has one sentence.
fn first_sentence(text: &str) -> &str {
    let bytes = text.as_bytes();
    for (i, w) in bytes.windows(3).enumerate() {
        if w[0] == b'.' && w[1] == b' ' && (w[2].is_ascii_uppercase() || w[2] == b'`') {
            return &text[..i];
        }
    }
    text
}

/// iolab: a storage performance lab in one tool.
#[derive(Parser, Debug)]
#[command(name = "iolab", version = VERSION, about, long_about = None, propagate_version = true)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Subcommands.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run a workload: workers x targets x weighted access specs (Iometer's model), closed or open loop.
    Run(Box<RunArgs>),
    /// List the built-in application profiles, or show one as a job file to copy and edit.
    Profiles(ProfilesArgs),
    /// Run a job across values of one or more fields (--qd 1,2,4,8 --bs 4k..1m:x2 ...) and find the knee.
    Sweep(Box<SweepArgs>),
    /// List the saved runs, sweeps and searches of the results catalog, newest first (filter by tag, profile,
    /// target, date or kind).
    Runs(RunsArgs),
    /// Show a saved run, sweep or search as `iolab run` or `iolab sweep` printed it, with its tags and note.
    Show(ShowArgs),
    /// Export a saved entry: its document as JSON (exactly as --json wrote it), or CSV.
    Export(ExportArgs),
    /// Remove saved entries from the catalog.
    Rm(RmArgs),
    /// Compare runs or sweeps side by side: per metric the values, the difference and the percent change
    /// against the first (baseline), the better one marked, and Welch's t-test with 3 or more trials a side.
    Compare(CompareArgs),
    /// Make a report for people from runs and sweeps: one self-contained HTML page with charts, or Markdown.
    Report(ReportArgs),
    /// Check a target written earlier with --verify: every block against its last acknowledged write (with
    /// --journal FILE, also after a crash, kill -9 or reboot), or each block for self-consistency without one.
    Verify(VerifyArgs),
    /// Take what other tools wrote: `iolab import fio FILE` prints the iolab job file for a fio job file
    /// (`iolab run FILE.fio` runs one directly).
    Import(ImportArgs),
    /// Block I/O traces: show one, convert it (to iolab's binary trace or CSV), or capture a live device's I/O
    /// (docs/TRACES.md).
    Trace(TraceArgs),
    /// Miss-ratio curves of a trace: the miss ratio of a cache against its size (exact LRU, SHARDS sampling,
    /// ARC and S3-FIFO simulated), the knee, and the cache size to recommend.
    Mrc(Box<MrcArgs>),
    /// Replay a trace against any target: each I/O at its time in the trace (scaled with --speed, or as fast
    /// as --qd allows with --speed max); the result is a run result with a replay block (lag percentiles).
    Replay(Box<ReplayArgs>),
    /// Real databases in the loop: `iolab db tpcc` builds and runs a TPC-C-derived OLTP workload, `iolab db
    /// tpch` a TPC-H-derived query set, `iolab db copy` a snapshot copy, on SQLite or PostgreSQL whose files
    /// live on the storage under test (docs/DB.md).
    Db(db::DbArgs),
    /// AI training storage: `iolab ai train CONFIG` runs a DLIO workload (a YAML file, or a built-in:
    /// tiny, unet3d, resnet50, cosmoflow) with simulated accelerators and judges accelerator utilization;
    /// `iolab ai checkpoint CONFIG` writes and reads DLIO's sharded checkpoints (tiny, llama3-8b, -70b,
    /// -405b, -1t) (docs/AI.md).
    Ai(ai::AiArgs),
    /// Print the shell completion script for SHELL (bash, zsh, fish, elvish, powershell), generated from these
    /// very flags: `iolab completions bash > /etc/bash_completion.d/iolab`.
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page iolab(1), generated from these very flags; with --dir, write one page per command
    /// (iolab.1, iolab-run.1, ...) into DIR: `iolab man --dir /usr/local/share/man/man1`.
    Man {
        /// Write iolab.1 and a page per command into this directory instead of printing iolab.1.
        #[arg(long, value_name = "DIR")]
        dir: Option<String>,
    },
}

/// `iolab run` options.
#[derive(Args, Debug, Default, Clone)]
pub struct RunArgs {
    /// Job file: iolab's TOML (top-level defaults, [worker.NAME] tables, [[spec]] access specs), or a fio job
    /// file or an Iometer configuration (.icf), recognised by their content and translated as `iolab import`
    /// does. Flags override it.
    pub job: Option<String>,

    /// Profile, Exchange sizing and verdict options.
    #[command(flatten)]
    pub profile: ProfileFlags,
    /// Users-and-transactions options.
    #[command(flatten)]
    pub loadgen: LoadgenFlags,
    /// Steady-state options (--steady-state, its window and limit).
    #[command(flatten)]
    pub steady: SteadyStateFlags,
    /// Results catalog options (--db, --no-save, --tag, --note).
    #[command(flatten)]
    pub catalog: CatalogFlags,

    /// fio's `--section`, for a fio job file.
    #[command(flatten)]
    pub fio: FioSections,

    /// The job-key flags from --target to --rate ([`keys::HELP_ORDER`]): collects every key flag typed.
    #[command(flatten)]
    pub keys: KeyFlags,
    /// Several hosts (mpirun): --rate (and each worker table's rate) is per rank, not a total split over the
    /// ranks (docs/MULTIHOST.md).
    #[arg(long, help_heading = "Several hosts")]
    pub rate_per_rank: bool,
    /// Several hosts (mpirun): every rank ends its measurement, complete, when the first rank's workers are
    /// done (IOR's stonewalling; with --ios or --bytes, the first rank to finish its count). No effect on one
    /// host.
    #[arg(long, help_heading = "Several hosts")]
    pub stonewall: bool,
    /// The job-key flags from --arrival to --clock.
    #[command(flatten)]
    pub more_keys: MoreKeyFlags<1>,

    /// The job-key flags from --allow-write-device to --trace.
    #[command(flatten)]
    pub last_keys: MoreKeyFlags<2>,

    /// Write the result as JSON (schema iolab.result/1) to FILE; '-' for stdout.
    #[arg(long, value_name = "FILE")]
    pub json: Option<String>,
    /// Write the time series as CSV to FILE; '-' for stdout.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<String>,
    /// Serve the live figures (per interval: IOPS, bytes/s, response-time quantiles, achieved depth, offered
    /// rate, backlog, cache hit ratio, per worker group and for the whole run) at http://ADDR:PORT/metrics in the
    /// Prometheus/OpenMetrics text format while the run, sweep or search goes on.
    #[arg(long, value_name = "ADDR:PORT")]
    pub metrics: Option<String>,
    /// Print nothing but errors (and what --json/--csv send to stdout).
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// Print the fully resolved job (plan, regions, engine) as JSON and exit; creates, changes and saves
    /// nothing.
    #[arg(long)]
    pub dry_run: bool,
}

impl RunArgs {
    /// The command-line part of the job: run keys and a forced layer ([`KeyFlags::to_job`]).
    pub fn to_overrides(&self) -> Result<JobSpec, SpecError> {
        self.keys.to_job()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> RunArgs {
        let mut v = vec!["iolab", "run"];
        v.extend_from_slice(args);
        match Cli::try_parse_from(v).unwrap().command {
            Command::Run(r) => *r,
            _ => unreachable!(),
        }
    }

    #[test]
    fn bs_flag_error_quotes_flag_and_text() {
        let e = parse(&["--bs", "4q"]).to_overrides().unwrap_err();
        assert!(e.to_string().starts_with("invalid value '4q' for '--bs': expected"), "{e}");
    }

    #[test]
    fn read_pct_above_100_is_error() {
        let e = parse(&["--read-pct", "101"]).to_overrides().unwrap_err();
        assert!(e.to_string().contains("'--read-pct'"), "{e}");
    }

    #[test]
    fn unknown_flag_suggests_the_real_one() {
        let e = Cli::try_parse_from(["iolab", "run", "--io-dept", "3"]).unwrap_err().to_string();
        assert!(e.contains("--io-depth") || e.contains("--qd"), "{e}");
    }

    #[test]
    fn flags_become_forced_layer_and_run_keys() {
        let j = parse(&["--qd", "8", "--duration", "5s", "--target", "mem:1G", "--buffered"])
            .to_overrides()
            .unwrap();
        assert_eq!(j.forced.qd, Some(8));
        assert_eq!(j.duration_ns, Some(5_000_000_000));
        assert_eq!(j.direct, Some(false));
    }

    #[test]
    fn flags_apply_in_the_order_typed() {
        let e = parse(&["--bs", "4q", "--qd", "0"]).to_overrides().unwrap_err().to_string();
        assert!(e.contains("'--bs'"), "{e}");
        let e = parse(&["--qd", "0", "--bs", "4q"]).to_overrides().unwrap_err().to_string();
        assert!(e.contains("'--qd'"), "{e}");
        let e = parse(&["--rwmixread", "101"]).to_overrides().unwrap_err().to_string();
        assert!(
            e.starts_with("invalid value '101' for '--read-pct'"),
            "an alias is reported as its flag: {e}"
        );
    }

    #[test]
    fn switches_and_repeatable_flags_become_their_keys() {
        let j = parse(&[
            "--inject",
            "eio@10",
            "--verify",
            "--inject",
            "lost-write@5",
            "--cache-shrink",
            "--stop-on-error",
            "--overwrite",
            "--target",
            "db=/data/db.edb",
            "-t",
            "mem:1G",
        ])
        .to_overrides()
        .unwrap();
        let kinds: Vec<_> = j.integrity.inject.iter().map(|i| i.kind).collect();
        assert_eq!(
            kinds,
            [iolab_spec::InjectKind::Eio, iolab_spec::InjectKind::LostWrite],
            "in the order typed"
        );
        assert_eq!(
            (j.integrity.verify, j.cache.shrink, j.integrity.stop_on_error),
            (Some(true), Some(true), Some(true))
        );
        let consent = iolab_spec::Consent { overwrite: true, ..Default::default() };
        assert_eq!(j.consent, consent);
        assert!(j.targets["db"].spec.is_some(), "NAME=TARGET sets a named target");
        assert_eq!(j.forced.target.as_ref().map(Vec::len), Some(1), "a plain target replaces the workers'");
        let none = parse(&[]).to_overrides().unwrap();
        assert_eq!(none, JobSpec::default(), "no flag, no setting (and no consent)");
    }

    #[test]
    fn first_sentence_ends_at_a_period_before_a_capital() {
        assert_eq!(first_sentence("Worker threads. Default 1"), "Worker threads");
        assert_eq!(first_sentence("The window (e.g. 60s, 5m). Default 60s"), "The window (e.g. 60s, 5m)");
        assert_eq!(first_sentence("One sentence, e.g. this"), "One sentence, e.g. this");
    }

    /// clap's own checks of every command, subcommand and flag (names unique, values valid), which otherwise
    /// run only when a command is parsed: a flag defined twice through two flattened structs made `iolab db
    /// tpcc` panic on every use.
    #[test]
    fn every_command_s_flags_pass_clap_s_checks() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
