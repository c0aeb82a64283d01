//! Command-line arguments (clap derive). Each option's doc comment is its one and only documentation: `--help`
//! and the README's option table come from here. Values are kept as typed and parsed by `iolab-spec`
//! ([`iolab_spec::Layer::set`], [`iolab_spec::JobSpec::set_run`]), the same parsers the job file uses, so
//! an error quotes the flag and the text exactly as given.
//!
//! Every command's flags live here (the submodules hold the larger groups), so this module depends on no
//! command module: commands take their arguments from here, never from each other.

mod catalog;
mod compare;
pub mod db;
mod hints;
mod import;
mod loadgen;
mod profile;
mod report;
mod sweep;
mod trace;
mod verify;

pub use catalog::{CatalogFlags, DbFlag, ExportArgs, RmArgs, RunsArgs, ShowArgs};
pub use compare::CompareArgs;
pub use import::{ImportArgs, ImportWhat};
pub use loadgen::LoadgenFlags;
pub use profile::{ProfileFlags, ProfilesAction, ProfilesArgs};
pub use report::{ReportArgs, ReportFormat};
pub use sweep::{SteadyStateFlags, SweepArgs};
pub use trace::{MrcArgs, ReplayArgs, TraceArgs, TraceWhat};
pub use verify::VerifyArgs;

use clap::{Args, Parser, Subcommand};
use iolab_spec::{JobSpec, Place, SpecError};

/// The version, and whether MPI (runs over several hosts, `--features mpi`) is compiled in.
const VERSION: &str = if iolab_multihost::COMPILED {
    concat!(env!("CARGO_PKG_VERSION"), " (MPI: compiled in)")
} else {
    concat!(env!("CARGO_PKG_VERSION"), " (MPI: not compiled in)")
};

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
    /// Real databases in the loop: `iolab db tpcc` builds and runs a TPC-C-derived OLTP workload on SQLite or
    /// PostgreSQL whose files live on the storage under test (docs/DB.md).
    Db(db::DbArgs),
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

    /// Target: a file path, a block device, mem:SIZE (in-process RAM disk), null:SIZE (no I/O: iolab's own
    /// overhead) or sim:fixed,latency=DUR,servers=N,size=SIZE (emulated device). Repeatable. Default: a 1 GiB
    /// scratch file in the current directory (or $IOLAB_SCRATCH_DIR), removed afterwards. NAME=TARGET sets
    /// a target the job or profile declares in [targets] (e.g. --target db=/data/db.edb --target log=/logs/l);
    /// a plain TARGET replaces every worker's targets.
    #[arg(long, short = 't', value_name = "TARGET", alias = "filename")]
    pub target: Vec<String>,
    /// Size of a file to create if missing (filled with data before any read). A read-only run never creates a
    /// file without it.
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true)]
    pub size: Option<String>,
    /// How a file iolab creates (or extends to --size) is laid out: fallocate (reserve it in one call, then
    /// write data over it; the default), write (write data, the file system allocating as the writes come), or
    /// none (an empty file the run's own writes grow and allocate, as appending writers do: the fragmenting
    /// case; reads of what the run has not written yet are short). fio's fallocate= option. The result shows
    /// each file's extents before and after the run and the I/Os that crossed an extent boundary.
    #[arg(long, value_name = "fallocate|write|none", value_parser = hints::Candidates(hints::prealloc), hide_possible_values = true)]
    pub prealloc: Option<String>,
    /// Start of each worker's region in its targets. Default 0.
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true)]
    pub offset: Option<String>,
    /// Length of each worker's region. Default: to the end of the target.
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true)]
    pub length: Option<String>,

    /// Pattern: read, write, randread, randwrite, rw, randrw (sets read and random %; --read-pct and
    /// --random-pct win). Default randread.
    #[arg(long, value_name = "PATTERN", value_parser = hints::Candidates(hints::rw), hide_possible_values = true)]
    pub rw: Option<String>,
    /// Share of reads, 0-100. Default 100.
    #[arg(long, value_name = "PCT", allow_hyphen_values = true, alias = "rwmixread")]
    pub read_pct: Option<String>,
    /// Share of random offsets (the rest sequential), 0-100. Default 100.
    #[arg(long, value_name = "PCT", allow_hyphen_values = true)]
    pub random_pct: Option<String>,
    /// Share of ops that are trims (discards of the range), 0-100; reads and writes share the rest. A trim
    /// destroys data as a write does. Default 0.
    #[arg(long, value_name = "PCT", allow_hyphen_values = true)]
    pub trim_pct: Option<String>,
    /// Flush (fsync) after every N writes: the worker lets its I/Os in flight complete, then flushes each
    /// target it wrote. 0: never (default). As fio's --fsync.
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub fsync: Option<String>,
    /// As --fsync, with fdatasync (the data, and only the metadata needed to read it back).
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub fdatasync: Option<String>,
    /// Synchronous writes: 'dsync' (each write durable when it completes, as O_DSYNC), 'sync' (as O_SYNC)
    /// or 'none' (default).
    #[arg(long, value_name = "none|dsync|sync")]
    pub sync: Option<String>,
    /// Block size: '4k', or a weighted split '4k/60:8k/20:64k/20'. Default 4k; at most 64M.
    #[arg(long, value_name = "SIZE[/W:...]", allow_hyphen_values = true, alias = "blocksize")]
    pub bs: Option<String>,
    /// Alignment of random offsets. Default: each I/O's own size.
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true)]
    pub align: Option<String>,
    /// Spread of random offsets: uniform, zipf:THETA, pareto:H, zones:IO%/SPACE%:... Default uniform.
    #[arg(long, value_name = "DIST")]
    pub dist: Option<String>,

    /// Outstanding I/Os per worker, 1-4096. Default 32. Check "achieved depth" in the result: a depth the
    /// target never reaches is not a depth you tested.
    #[arg(long, value_name = "N", visible_alias = "io-depth", alias = "iodepth", allow_hyphen_values = true)]
    pub qd: Option<String>,
    /// Worker threads. Default 1.
    #[arg(long, short = 'w', value_name = "N", allow_hyphen_values = true, alias = "numjobs")]
    pub workers: Option<String>,
    /// Open loop: total I/O rate in IOPS (e.g. 5000, 10k) or as a bandwidth (e.g. 100MB/s, 10^6 bytes; 100MiB/s,
    /// 2^20), split over the workers; a bandwidth becomes IOPS at each worker's mean I/O size. Latency is then
    /// measured from each I/O's scheduled start. Default: closed loop (as fast as the queue depth allows).
    #[arg(long, value_name = "RATE", allow_hyphen_values = true, aliases = ["rate_iops", "rate-iops"])]
    pub rate: Option<String>,
    /// Several hosts (mpirun): --rate (and each worker table's rate) is per rank, not a total split over the
    /// ranks (docs/MULTIHOST.md).
    #[arg(long)]
    pub rate_per_rank: bool,
    /// Several hosts (mpirun): every rank ends its measurement, complete, when the first rank's workers are
    /// done (IOR's stonewalling; with --ios or --bytes, the first rank to finish its count). No effect on one
    /// host.
    #[arg(long)]
    pub stonewall: bool,
    /// Open-loop inter-arrival times: fixed or poisson. Default fixed.
    #[arg(long, value_name = "LAW")]
    pub arrival: Option<String>,
    /// Think time (closed loop): after each burst of --burst I/Os, wait for them to complete, then idle this
    /// long before the next (fio's thinktime, Iometer's transfer delay), e.g. '10ms'.
    #[arg(long, value_name = "DURATION")]
    pub think: Option<String>,
    /// I/Os per burst between think times (fio's thinktime_blocks, Iometer's burst length). Default 1.
    #[arg(long, value_name = "N")]
    pub burst: Option<String>,
    /// Written data: random (incompressible, default), zero, or compress:PCT.
    #[arg(long, value_name = "DATA")]
    pub data: Option<String>,

    /// Measured time, after the ramp (e.g. 60s, 5m). Default 10s.
    #[arg(long, short = 'd', value_name = "DUR", allow_hyphen_values = true, alias = "runtime")]
    pub duration: Option<String>,
    /// Warm-up before measuring, excluded from every statistic. Default 1s for timed runs, 0 otherwise.
    #[arg(long, value_name = "DUR", allow_hyphen_values = true, aliases = ["ramp_time", "ramp-time"])]
    pub ramp: Option<String>,
    /// Stop after this many measured I/Os in all, instead of a duration.
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub ios: Option<String>,
    /// Stop after this many measured bytes in all, instead of a duration.
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true)]
    pub bytes: Option<String>,
    /// Seed of every random choice (offsets, sizes, mixes, arrivals). Default: fresh, printed in the result.
    #[arg(long, value_name = "N", allow_hyphen_values = true, alias = "randseed")]
    pub seed: Option<String>,

    /// Engine for files and devices: auto (io_uring if the kernel allows, else sync with a notice),
    /// io_uring, or sync (pread/pwrite, depth 1 per worker).
    #[arg(
        long,
        value_name = "ENGINE",
        alias = "ioengine",
        value_parser = hints::Candidates(hints::engine),
        hide_possible_values = true
    )]
    pub engine: Option<String>,
    /// Use the page cache instead of O_DIRECT. Results then include cache hits; the report warns.
    #[arg(long)]
    pub buffered: bool,
    /// Clock: real, or virtual (emulated sim: targets only; deterministic, takes no wall time).
    #[arg(long, value_name = "CLOCK")]
    pub clock: Option<String>,
    /// Time-series interval. Default 1s.
    #[arg(long, value_name = "DUR", default_value = "1s", allow_hyphen_values = true)]
    pub interval: String,

    /// Allow writes to a block device (its data is overwritten).
    #[arg(long)]
    pub allow_write_device: bool,
    /// Also allow writes to a device or file that carries a filesystem, volume, partition-table or database
    /// signature (never to one in use: mounted, swap, held open, locked or mapped).
    #[arg(long)]
    pub destroy_data: bool,
    /// Allow a write job to write an existing file that iolab did not make (its data is overwritten).
    #[arg(long)]
    pub overwrite: bool,

    /// Put a block cache in front of the targets: a size ('8G') or a percentage of their total size ('25%').
    #[arg(long, value_name = "SIZE|PCT%", help_heading = "Cache")]
    pub cache: Option<String>,
    /// Where the cache store lives: mem:SIZE (RAM, the default), an emulated device (sim:ssd) that times hits,
    /// or (real targets only) a file or block device that carries the cache's reads and writes for real; a
    /// missing file is created as a scratch file of the cache's size and removed at exit. See docs/CACHE.md.
    #[arg(long, value_name = "TARGET", help_heading = "Cache")]
    pub cache_dev: Option<String>,
    /// Cache line size. Default 4K.
    #[arg(long, value_name = "SIZE", help_heading = "Cache")]
    pub cache_line: Option<String>,
    /// write-through (default), write-around, write-back or read-only.
    #[arg(
        long,
        value_name = "MODE",
        help_heading = "Cache",
        value_parser = hints::Candidates(hints::cache_mode),
        hide_possible_values = true
    )]
    pub cache_mode: Option<String>,
    /// Eviction policy: lru (default), arc, s3-fifo (the paper's, 2-bit frequencies) or s3-fifo-1bit.
    #[arg(long, value_name = "POLICY", help_heading = "Cache")]
    pub cache_policy: Option<String>,
    /// Admit a line on its N-th miss. Default 1.
    #[arg(long, value_name = "N", help_heading = "Cache")]
    pub cache_admit: Option<String>,
    /// Bypass the cache for sequential streams longer than SIZE. Default 0 (never).
    #[arg(long, value_name = "SIZE", help_heading = "Cache")]
    pub cache_seq_cutoff: Option<String>,
    /// Cap on the RAM the cache may use.
    #[arg(long, value_name = "SIZE", help_heading = "Cache")]
    pub cache_max_mem: Option<String>,
    /// Shrink the cache when the machine's available memory runs low (reported).
    #[arg(long, help_heading = "Cache")]
    pub cache_shrink: bool,
    /// Write-back: start writing dirty lines back above this share of lines. Default 50%.
    #[arg(long, value_name = "PCT%", help_heading = "Cache")]
    pub cache_dirty_max: Option<String>,
    /// Throttle block-device targets with the kernel's cgroup I/O limits (root): rbps=100M,wbps=..,riops=..,wiops=..
    #[arg(long, value_name = "LIMITS")]
    pub throttle: Option<String>,

    /// Stamp a header (offset, generation, checksum) into every written block, check every block read, and read
    /// back what was written after the run; mismatches are reported with their class (docs/VERIFY.md).
    #[arg(long, help_heading = "Integrity")]
    pub verify: bool,
    /// At a mismatch: stop (default) or continue.
    #[arg(long, value_name = "stop|continue", help_heading = "Integrity")]
    pub verify_fail: Option<String>,
    /// Keep acknowledged write generations in FILE, so `iolab verify TARGET --journal FILE` can check the target
    /// after a crash or reboot. Implies --verify.
    #[arg(long, value_name = "FILE", help_heading = "Integrity")]
    pub journal: Option<String>,
    /// Inject a fault: KIND[:PROBABILITY|@N], repeatable. KIND alone hits each eligible I/O with probability
    /// 0.001; KIND:P with probability P (0.001 or 0.1%); KIND@N every N-th eligible I/O (eio@1000 fails
    /// every 1000th). Kinds: bit-flip-read, bit-flip-write, lost-write, misdirected-write, torn-write, eio,
    /// latency-spike:DURATION (docs/FAULTS.md).
    #[arg(long, value_name = "KIND[:P|@N]", help_heading = "Integrity")]
    pub inject: Vec<String>,
    /// End the run at the first I/O error (by default errors are counted and the run goes on).
    #[arg(long, help_heading = "Integrity")]
    pub stop_on_error: bool,

    /// Record every I/O of the run, the ramp's too (intended start, submit and completion times, op, target,
    /// offset, length, result), into FILE in iolab's binary trace format; `iolab trace show FILE` reads it and
    /// `iolab replay FILE` issues it again.
    #[arg(long, value_name = "FILE")]
    pub trace: Option<String>,
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
    /// Print the fully resolved job (plan, regions, engine) as JSON and exit; creates and changes nothing.
    #[arg(long)]
    pub dry_run: bool,
}

impl RunArgs {
    /// The command-line part of the job: run keys and a forced layer.
    pub fn to_overrides(&self) -> Result<JobSpec, SpecError> {
        let mut job = JobSpec::default();
        let layer_flags: [(&str, &str, &Option<String>); 20] = [
            ("size", "--size", &self.size),
            ("offset", "--offset", &self.offset),
            ("length", "--length", &self.length),
            ("rw", "--rw", &self.rw),
            ("read_pct", "--read-pct", &self.read_pct),
            ("random_pct", "--random-pct", &self.random_pct),
            ("trim_pct", "--trim-pct", &self.trim_pct),
            ("fsync", "--fsync", &self.fsync),
            ("fdatasync", "--fdatasync", &self.fdatasync),
            ("sync", "--sync", &self.sync),
            ("bs", "--bs", &self.bs),
            ("align", "--align", &self.align),
            ("dist", "--dist", &self.dist),
            ("qd", "--qd", &self.qd),
            ("rate", "--rate", &self.rate),
            ("arrival", "--arrival", &self.arrival),
            ("think", "--think", &self.think),
            ("burst", "--burst", &self.burst),
            ("data", "--data", &self.data),
            ("workers", "--workers", &None),
        ];
        for (key, flag, value) in layer_flags {
            if let Some(v) = value {
                job.forced.set(key, v, &Place::Flag(flag.into()))?;
            }
        }
        for t in &self.target {
            let place = Place::Flag("--target".into());
            match t.split_once('=') {
                // `--target db=/data/db.edb` names a target of the job's [targets]; `sim:fixed,latency=..` and
                // paths with '=' after a '/' or ':' are whole targets.
                Some((name, spec)) if iolab_spec::target::is_target_name(name) => {
                    job.set_named_target(name, spec, &place)?
                }
                _ => {
                    job.forced.set("target", t, &place)?;
                }
            }
        }
        let run_flags: [(&str, &str, &Option<String>); 22] = [
            ("prealloc", "--prealloc", &self.prealloc),
            ("verify_fail", "--verify-fail", &self.verify_fail),
            ("journal", "--journal", &self.journal),
            ("workers", "--workers", &self.workers),
            ("duration", "--duration", &self.duration),
            ("ramp", "--ramp", &self.ramp),
            ("ios", "--ios", &self.ios),
            ("bytes", "--bytes", &self.bytes),
            ("seed", "--seed", &self.seed),
            ("engine", "--engine", &self.engine),
            ("clock", "--clock", &self.clock),
            ("cache", "--cache", &self.cache),
            ("cache_dev", "--cache-dev", &self.cache_dev),
            ("cache_line", "--cache-line", &self.cache_line),
            ("cache_mode", "--cache-mode", &self.cache_mode),
            ("cache_policy", "--cache-policy", &self.cache_policy),
            ("cache_admit", "--cache-admit", &self.cache_admit),
            ("cache_seq_cutoff", "--cache-seq-cutoff", &self.cache_seq_cutoff),
            ("cache_max_mem", "--cache-max-mem", &self.cache_max_mem),
            ("cache_dirty_max", "--cache-dirty-max", &self.cache_dirty_max),
            ("throttle", "--throttle", &self.throttle),
            ("trace", "--trace", &self.trace),
        ];
        for (key, flag, value) in run_flags {
            if let Some(v) = value {
                job.set_run(key, v, &Place::Flag(flag.into()))?;
            }
        }
        if self.buffered {
            job.direct = Some(false);
        }
        job.consent = iolab_spec::Consent {
            allow_write_device: self.allow_write_device,
            destroy_data: self.destroy_data,
            overwrite: self.overwrite,
        };
        if self.cache_shrink {
            job.cache.shrink = Some(true);
        }
        if self.verify {
            job.integrity.verify = Some(true);
        }
        if self.stop_on_error {
            job.integrity.stop_on_error = Some(true);
        }
        for text in &self.inject {
            job.set_run("inject", text, &Place::Flag("--inject".into()))?;
        }
        Ok(job)
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
}
