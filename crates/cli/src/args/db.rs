//! `iolab db` arguments: workloads on a real database whose files live on the storage under test. The flags
//! `iolab run` also has (`--duration`, `--ramp`, `--seed`, `--throttle`) come from the same job-key
//! definitions ([`SomeKeys`]), so they are spelled and parsed the same.

use super::{KeySet, SomeKeys};

/// `iolab db` options.
#[derive(clap::Args, Debug, Clone)]
pub struct DbArgs {
    /// The workload.
    #[command(subcommand)]
    pub what: DbWhat,
}

/// The workloads of `iolab db`.
#[derive(clap::Subcommand, Debug, Clone)]
pub enum DbWhat {
    /// An OLTP workload derived from TPC-C (HammerDB's TPROC-C in kind): build N warehouses, run users
    /// without think time, report NOPM, TPM and per-transaction response times, check the TPC-C
    /// consistency conditions, and show what the block devices under the database did (docs/DB.md). Not
    /// TPC-C compliant; not comparable with published TPC results.
    Tpcc(Box<TpccArgs>),
    /// An analytics query set derived from TPC-H: generate and load the eight tables at --scale, then run
    /// the 22 queries one at a time (the power test's order), each timed with its answer's rows and what
    /// the block devices under the database read while it ran; the set's total and geometric mean
    /// (docs/DB.md). Starts cold: the database's files are dropped from the page cache before the first
    /// query. Not TPC-H compliant; not comparable with published TPC results.
    Tpch(Box<TpchArgs>),
    /// Snapshot replication: build a database (tpcc, or tpch with --scale), then copy it to --to the
    /// engine's own way (SQLite's online backup API, PostgreSQL's pg_basebackup), timed until durable,
    /// with the bytes copied and what the devices under the source and the destination did (docs/DB.md).
    Copy(Box<CopyArgs>),
    /// A key-value workload in the manner of YCSB's CoreWorkload: load --records records (a key and ten
    /// 100-byte fields each), then run one of YCSB's core workloads (a: read/update 50/50, b: read 95 %,
    /// c: read only, d: read the newest, e: short scans, f: read-modify-write) with --users users and no
    /// think time; reports operations per second and each operation's response times, with the devices
    /// under the database (docs/DB.md).
    Ycsb(Box<YcsbArgs>),
    /// Checks a database an earlier run kept (--keep) as it was left, after a crash test: opened without
    /// building anything (SQLite replays its WAL, PostgreSQL's server its crash recovery), then the
    /// engine's own integrity check (SQLite) and, for a tpcc database, TPC-C's consistency conditions.
    /// Nothing in the directory is removed. Exit 0 when every check passed, 1 when one failed.
    Check(CheckArgs),
}

/// `iolab db check` options.
#[derive(clap::Args, Debug, Clone)]
pub struct CheckArgs {
    /// The directory an earlier `iolab db ... --dir DIR --keep` left.
    #[arg(long, value_name = "DIR")]
    pub dir: String,
    /// Write what was checked as JSON to FILE; '-' for stdout.
    #[arg(long, value_name = "FILE")]
    pub json: Option<String>,
    /// Print nothing but errors.
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

/// `iolab db tpcc` options.
#[derive(clap::Args, Debug, Clone)]
pub struct TpccArgs {
    /// The database, the directory, the seed, the outputs, and the storage side.
    #[command(flatten)]
    pub common: DbCommonArgs,
    /// With --database postgres: use your own server (postgres://user:password@host/db, or key=value);
    /// iolab creates its tables in a schema of its own, iolab_tpcc, and drops it after. No --dir then, and
    /// no device view (the server's files are not iolab's to find). Shown without its password; a
    /// connection gives up after connect_timeout (10 s unless the URL sets it).
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,
    /// Warehouses to build (each: 10 districts, 30,000 customers and orders, stock for every item; about
    /// 80 MB in SQLite, 210 MB in PostgreSQL). Refused when the file system under --dir has not room for
    /// them. Default 1.
    #[arg(long, value_name = "N", default_value = "1")]
    pub warehouses: String,
    /// Users: one connection and one thread each, user i on home warehouse i mod N + 1, running
    /// transactions back to back (no keying or think time). Default 1 (HammerDB's default). A list or range
    /// (1,2,4,8 or 1..32:x2) is a sweep, as HammerDB's autopilot: the database is built once, then each user
    /// count gets its own ramp and window and consistency check, in the order given; the result
    /// (iolab.dbsweep/1) has NOPM against users and the knee, where more users gain less than 10% NOPM while
    /// new-order p99 grows more than 20%.
    #[arg(long, short = 'u', value_name = "N|LIST", default_value = "1")]
    pub users: String,
    /// --duration and --ramp: the measured window and the ramp before it.
    #[command(flatten)]
    pub window: SomeKeys<DbWindowKeys>,
    /// Items, and so stock rows per warehouse. Default 100000, the spec's; fewer build faster (the key
    /// distributions scale with it) but make the database smaller than TPC-C's.
    #[arg(long, value_name = "N", default_value = "100000")]
    pub items: String,
    /// Serve the live figures (NOPM and TPM of the window so far, transactions per minute and completed per
    /// transaction type, users, rows loaded by the build) at http://ADDR:PORT/metrics in the
    /// Prometheus/OpenMetrics text format while the build and the run go on.
    #[arg(long, value_name = "ADDR:PORT")]
    pub metrics: Option<String>,
}

/// `--duration` and `--ramp` of a database run: `iolab run`'s own flags (the same spellings, aliases and
/// parsers: `-d 5m`, `--runtime`), with a database run's defaults.
#[derive(Clone, Copy, Debug, Default)]
pub struct DbWindowKeys;

impl KeySet for DbWindowKeys {
    const KEYS: &'static [(&'static str, Option<&'static str>)] = &[
        (
            "duration",
            Some("The measured window (e.g. 60s, 5m). Default 60s (HammerDB's is 5m after a 2m ramp: use that for numbers to compare)."),
        ),
        ("ramp", Some("Ramp before the measured window: transactions run but are not counted. Default 5s.")),
    ];
}

/// `--seed` and `--throttle` of every database run: `iolab run`'s own flags, in a database run's words.
#[derive(Clone, Copy, Debug, Default)]
pub struct DbKeys;

impl KeySet for DbKeys {
    const KEYS: &'static [(&'static str, Option<&'static str>)] = &[
        (
            "seed",
            Some("Seed of every random choice: the loaded data (and tpch's refresh rows) and, in tpcc, each user's stream and the mix. Default: a fresh one, printed."),
        ),
        (
            "throttle",
            Some("Throttle the block devices under the database's directories with the kernel's cgroup I/O limits, as `iolab run --throttle` does (rbps=100M,wbps=..,riops=..,wiops=..): what-if slower storage. The limits go on when the workload starts, after the build (SQLite: iolab itself; a private PostgreSQL server: its processes, known as iolab's children). Root only; not with --url."),
        ),
    ];
}

/// What every `iolab db` workload can do to the storage under the database: hold its pages in memory under
/// a budget, record their I/O (and throttle its devices: `--throttle`, with `--seed` in [`DbKeys`]).
#[derive(clap::Args, Debug, Clone)]
pub struct DbStorageArgs {
    /// Hold the database's pages (the page cache of its files, and PostgreSQL's shared buffers) under SIZE
    /// with the kernel's memory controller (a cgroup, removed after): for SQLite iolab itself, for a private
    /// PostgreSQL server the server. The processes' private memory is apart (the limit moves with it), so
    /// the kernel reclaims pages and never kills the engine. A database larger than SIZE then reads from
    /// its device. Root only; at least 16M, and for PostgreSQL at least --shared-buffers plus 16M.
    /// Default: no limit.
    #[arg(long, value_name = "SIZE")]
    pub memory: Option<String>,
    /// Record the block I/O of the measured part (the run's window, the queries, the copy) on the devices
    /// under the database (and a copy's destination) into FILE, an iolab trace (read it with `iolab trace
    /// show`, replay it with `iolab replay`). Root only.
    #[arg(long, value_name = "FILE")]
    pub capture: Option<String>,
}

/// The flags every `iolab db` workload has: the engine, where its files go, the seed, the outputs, and
/// the storage side (one definition each, so tpcc, tpch and copy say the same).
#[derive(clap::Args, Debug, Clone)]
pub struct DbCommonArgs {
    /// The database: sqlite (embedded, nothing to install: one file in WAL mode, synchronous=FULL) or
    /// postgres (a private server iolab starts in --dir and removes after, as the unprivileged 'postgres'
    /// account when iolab is root; or, for tpcc and tpch, your own server with --url). Default sqlite.
    /// (`--engine` is `iolab run`'s I/O engine, io_uring or sync.)
    #[arg(long, value_name = "sqlite|postgres", default_value = "sqlite")]
    pub database: String,
    /// The directory for the database's files, on the storage under test. It must not exist (iolab creates
    /// it, marks it as its own and removes it after the run, also on Ctrl-C) or be one iolab made earlier;
    /// any other directory is refused. Default: iolab-db-PID in $IOLAB_SCRATCH_DIR or the current directory.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<String>,
    /// --seed and --throttle.
    #[command(flatten)]
    pub keys: SomeKeys<DbKeys>,
    /// A private PostgreSQL server's shared_buffers. Default 32M: small, so the database's reads and
    /// writes reach the operating system rather than staying in the server's cache.
    #[arg(long, value_name = "SIZE", default_value = "32M")]
    pub shared_buffers: String,
    /// Keep the database's directories after the run (the server stopped); a later run with the same
    /// --dir builds it again.
    #[arg(long)]
    pub keep: bool,
    /// Write the result as JSON to FILE; '-' for stdout. tpcc: iolab.db/1 (with several --users,
    /// iolab.dbsweep/1); tpch: iolab.dbtpch/1; copy: iolab.dbcopy/1.
    #[arg(long, value_name = "FILE")]
    pub json: Option<String>,
    /// Print nothing but errors.
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// The storage side: --memory, --throttle, --capture.
    #[command(flatten)]
    pub storage: DbStorageArgs,
    /// Results catalog: where the result is saved (as kind db or db-sweep for tpcc, db-tpch, db-copy), its
    /// tags and note.
    #[command(flatten)]
    pub catalog: super::CatalogFlags,
}

/// `iolab db tpch` options.
#[derive(clap::Args, Debug, Clone)]
pub struct TpchArgs {
    /// The database, the directory, the seed, the outputs, and the storage side.
    #[command(flatten)]
    pub common: DbCommonArgs,
    /// With --database postgres: your own server; iolab's tables go in a schema of its own, dropped after.
    /// No cold start and no device view then.
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,
    /// The scale factor, 0.01 to 100: SF × 6 million lines (SF 0.1: 127 MiB in SQLite, 344 MiB in
    /// PostgreSQL's directory). Default 0.01 (13 MiB in SQLite: a smoke test; use a scale larger than the
    /// machine's memory, or --memory, to measure storage).
    #[arg(long, value_name = "SF", default_value = "0.01")]
    pub scale: String,
    /// Times the query set runs back to back; each query's time is the median of its runs. Default 1 (the
    /// first, cold run: what the storage decides).
    #[arg(long, value_name = "N", default_value = "1")]
    pub runs: String,
    /// The queries to run, in this order (e.g. 1,6,14). Default: all 22 in the power test's order (14, 2,
    /// 9, 20, 6, 17, 18, 8, 21, 13, 3, 22, 16, 4, 11, 15, 1, 10, 19, 5, 7, 12).
    #[arg(long, value_name = "LIST")]
    pub queries: Option<String>,
    /// Start warm: leave the database's files in the page cache as the build left them (default: write
    /// them back and drop them, so the first query reads the device).
    #[arg(long)]
    pub warm: bool,
    /// Run the refresh functions: RF1 (SF × 1,500 new orders with their lines) before the power test's
    /// queries and RF2 (as many of the oldest orders deleted) after them, each one transaction, and a
    /// refresh stream beside the throughput test's query streams (default: none, as HammerDB's TPROC-H).
    #[arg(long)]
    pub refresh: bool,
    /// After the power test, a throughput test of S query streams at once, each on its own connection in
    /// the spec's Appendix A order for its stream. Default 0 (none); at most 64.
    #[arg(long, value_name = "S", default_value = "0")]
    pub streams: String,
}

/// `iolab db copy` options.
#[derive(clap::Args, Debug, Clone)]
pub struct CopyArgs {
    /// The database, the source's directory (--dir), the seed, the outputs, and the storage side.
    #[command(flatten)]
    pub common: DbCommonArgs,
    /// Where the copy goes: a directory that must not exist (iolab creates it, marks it as its own and
    /// removes it after, unless --keep), on the storage the copy is written to.
    #[arg(long, value_name = "DIR")]
    pub to: String,
    /// Build a tpcc database of N warehouses to copy (about 75 MB each in SQLite with the spec's items).
    /// Default 1.
    #[arg(long, value_name = "N", default_value = "1")]
    pub warehouses: String,
    /// Items of the tpcc database. Default 100000.
    #[arg(long, value_name = "N", default_value = "100000")]
    pub items: String,
    /// Build a tpch database at this scale factor to copy, instead of a tpcc one.
    #[arg(long, value_name = "SF", conflicts_with = "warehouses")]
    pub scale: Option<String>,
    /// Copy warm: leave the source in the page cache as the build left it (default: write it back and
    /// drop it, so the copy reads the source's device).
    #[arg(long)]
    pub warm: bool,
}

/// `iolab db ycsb` options.
#[derive(clap::Args, Debug, Clone)]
pub struct YcsbArgs {
    /// The database, the directory, the seed, the outputs, and the storage side.
    #[command(flatten)]
    pub common: DbCommonArgs,
    /// With --database postgres: your own server; iolab's table goes in a schema of its own, dropped after.
    /// No device view then.
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,
    /// YCSB's core workload: a (read 50 %, update 50 %), b (read 95 %, update 5 %), c (read 100 %), d (read
    /// 95 % of the newest records, insert 5 %), e (scan 95 %, insert 5 %) or f (read 50 %,
    /// read-modify-write 50 %). Default a.
    #[arg(long, value_name = "a-f", default_value = "a")]
    pub workload: String,
    /// Records to load (YCSB's recordcount), each about 1 KiB of data. Default 100000 (about 470 MB in
    /// SQLite, whose rows spill into overflow pages, 250 MB in PostgreSQL):
    /// load more than memory holds, or use --memory, to measure storage.
    #[arg(long, value_name = "N", default_value = "100000")]
    pub records: String,
    /// Users (YCSB's threadcount): one connection and one thread each, no think time. Default 1.
    #[arg(long, short = 'u', value_name = "N", default_value = "1")]
    pub users: String,
    /// --duration and --ramp: the measured window and the ramp before it.
    #[command(flatten)]
    pub window: SomeKeys<DbWindowKeys>,
}
