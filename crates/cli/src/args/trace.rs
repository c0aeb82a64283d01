//! `iolab trace` and `iolab mrc` arguments.

use super::{KeySet, SomeKeys};

/// `iolab trace` options.
#[derive(clap::Args, Debug, Clone)]
pub struct TraceArgs {
    /// What to do with a trace.
    #[command(subcommand)]
    pub what: TraceWhat,
}

/// What `iolab trace` does.
#[derive(clap::Subcommand, Debug, Clone)]
pub enum TraceWhat {
    /// Show a trace: its format (recognised by content: iolab's binary trace or its CSV, CloudPhysics CSV, MSR
    /// Cambridge CSV, fio iolog v2/v3, blktrace binary, blkparse text), targets, first records, totals per op,
    /// and its bad records with their line or record numbers (docs/TRACES.md).
    Show {
        /// The trace file.
        #[arg(value_name = "FILE")]
        file: String,
        /// Records to list. Default 20; 0 lists none.
        #[arg(long, value_name = "N", default_value = "20")]
        limit: String,
    },
    /// Convert a trace (any format iolab reads) to iolab's binary trace or to CSV, one line per op.
    Convert {
        /// The trace file.
        #[arg(value_name = "IN")]
        input: String,
        /// Where to write it ('-' = stdout, CSV only).
        #[arg(long, short = 'o', value_name = "OUT")]
        output: String,
        /// Output format: iolab (binary) or csv. Default: csv when OUT ends in .csv or is '-', else iolab.
        #[arg(long, value_enum, value_name = "FORMAT")]
        format: Option<super::OutputFormat>,
    },
    /// Record a live block device's I/O for a while through the kernel's block trace events (tracefs;
    /// Linux, root), into an iolab binary trace.
    Capture {
        /// The block device, e.g. /dev/sdb.
        #[arg(long, value_name = "DEV")]
        device: String,
        /// --duration: how long to record.
        #[command(flatten)]
        keys: SomeKeys<CaptureKeys>,
        /// The trace file to write.
        #[arg(long, short = 'o', value_name = "FILE")]
        output: String,
    },
}

/// `--duration` of `iolab trace capture`: `iolab run`'s own flag (`-d 30s`), in a capture's words.
#[derive(Clone, Copy, Debug, Default)]
pub struct CaptureKeys;

impl KeySet for CaptureKeys {
    const KEYS: &'static [(&'static str, Option<&'static str>)] =
        &[("duration", Some("How long to record, e.g. 30s (required)."))];
}

/// `iolab mrc` options.
#[derive(clap::Args, Debug, Clone)]
pub struct MrcArgs {
    /// The trace file (any format `iolab trace show` reads).
    #[arg(value_name = "TRACE")]
    pub trace: String,
    /// Cache line size: each read or write references every line it touches, as iolab's cache sees it.
    /// Default 4k.
    #[arg(long, value_name = "SIZE", conflicts_with = "objects")]
    pub line: Option<String>,
    /// 'request': each request's start offset is one object of unit size (libCacheSim's convention, to check
    /// results against theirs); sizes are then counts of objects. Default: cache lines (--line).
    #[arg(long, value_name = "request")]
    pub objects: Option<String>,
    /// What writes do: 'count' (references counted like reads: the miss ratio of reads and writes),
    /// 'install' (a write uses or installs the lines it touches without being counted: the miss ratio of
    /// reads in a cache that writes fill, as iolab's write-through and write-back caches; compare with a
    /// replay with --cache), 'ignore' (passed over). Default: count.
    #[arg(long, value_name = "count|install|ignore")]
    pub writes: Option<String>,
    /// Only reads make references: the same as --writes ignore.
    #[arg(long, conflicts_with = "writes")]
    pub reads_only: bool,
    /// Exact LRU curve: the stack distance of every reference. Default: exact while the trace touches at
    /// most 2,097,152 distinct objects, SHARDS fixed-size sampling beyond.
    #[arg(long, conflicts_with_all = ["sample", "sample_size"])]
    pub exact: bool,
    /// SHARDS at a fixed sampling rate (0 < RATE <= 1, e.g. 0.01): objects sampled by a hash of their
    /// address; keep RATE x distinct objects above ~10,000 for an error below 0.01.
    #[arg(long, value_name = "RATE", conflicts_with = "sample_size")]
    pub sample: Option<String>,
    /// SHARDS keeping at most N sampled objects (e.g. 64k): memory bounded whatever the trace.
    #[arg(long, value_name = "N")]
    pub sample_size: Option<String>,
    /// Cache sizes to report, comma-separated: bytes with lines (1G,4G,16G), counts with --objects request
    /// (100,1k,10k). Default: four a doubling, from one object to twice the working set.
    #[arg(long, value_name = "LIST")]
    pub sizes: Option<String>,
    /// Policies, comma-separated: lru (from stack distances, always shown), arc, s3-fifo, s3-fifo-1bit (iolab's cache
    /// policies replayed at up to 16 of the sizes; on a SHARDS sample, in a cache scaled by the rate).
    #[arg(long, value_name = "LIST", default_value = "lru")]
    pub policy: String,
    /// Write the curves as JSON (iolab.mrc/1, docs/schema/iolab.mrc.v1.json) to FILE ('-' = stdout).
    #[arg(long, value_name = "FILE")]
    pub json: Option<String>,
    /// Write the curves' points as CSV to FILE ('-' = stdout).
    #[arg(long, value_name = "FILE")]
    pub csv: Option<String>,
    /// Print nothing but errors.
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

/// `iolab replay` options: the trace, its speed, and every `iolab run` flag for the targets, the cache, the
/// clock and the outputs (the workload flags are set from the trace).
#[derive(clap::Args, Debug, Clone)]
pub struct ReplayArgs {
    /// The trace file (any format `iolab trace show` reads).
    #[arg(value_name = "TRACE")]
    pub trace_file: String,
    /// '1x' (the default) issues each op at its time in the trace, scheduled from the trace clock (never by
    /// sleeping the gaps); '2x', '1000x', '0.5x' scale the times; 'max' issues as fast as --qd allows.
    #[arg(long, value_name = "Nx|max")]
    pub speed: Option<String>,
    /// Maps a trace device to a target: DISK is the device's name in the trace (as 'iolab trace show'
    /// lists it: MSR's 'HOSTNAME/DISK', blktrace's device) or its index (0, 1, ...), TARGET any target
    /// ('0=/dev/sdb', 'web/1=sim:ssd,size=8G'). Repeatable, or several in one, separated by commas (a comma
    /// starts a mapping only before a device's name or index and '='). Devices
    /// left out are not replayed (their records skipped as 'unmapped'); without --map the targets come from
    /// --target by position. Not with --target.
    #[arg(long, value_name = "DISK=TARGET")]
    pub map: Vec<String>,
    /// Records that share a start time are spread evenly over the trace clock's tick (the largest step
    /// dividing every start time, e.g. 1 s for a trace in whole seconds) instead of issued together: for a
    /// trace whose clock is coarser than its I/O. Default: each at its time as given.
    #[arg(long)]
    pub spread: bool,
    /// The run's flags: --target (one target takes every trace target; several map trace target k to
    /// --target k), --workers (default 1: records dealt round robin, each at its own time), --qd (default
    /// 64, per worker), --clock, --cache, --json, ...
    #[command(flatten)]
    pub run: super::RunArgs,
}
