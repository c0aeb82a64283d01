//! `iolab db` arguments: workloads on a real database whose files live on the storage under test.

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
}

/// `iolab db tpcc` options.
#[derive(clap::Args, Debug, Clone)]
pub struct TpccArgs {
    /// The database engine: sqlite (embedded, nothing to install: one file in WAL mode, synchronous=FULL)
    /// or postgres (a private server iolab starts in --dir and removes after, as the unprivileged
    /// 'postgres' account when iolab is root; or your own server with --url). Default sqlite.
    #[arg(long, value_name = "sqlite|postgres", default_value = "sqlite")]
    pub engine: String,
    /// The directory for the database's files, on the storage under test. It must not exist (iolab creates
    /// it, marks it as its own and removes it after the run, also on Ctrl-C) or be one iolab made earlier;
    /// any other directory is refused. Default: iolab-db-PID in $IOLAB_SCRATCH_DIR or the current directory.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<String>,
    /// With --engine postgres: use your own server (postgres://user:password@host/db, or key=value); iolab
    /// creates its tables in a schema of its own, iolab_tpcc, and drops it after. No --dir then, and no
    /// device view (the server's files are not iolab's to find).
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,
    /// Warehouses to build (each: 10 districts, 30,000 customers and orders, stock for every item; about
    /// 100 MB). Default 1.
    #[arg(long, short = 'w', value_name = "N", default_value = "1")]
    pub warehouses: String,
    /// Users: one connection and one thread each, user i on home warehouse i mod N + 1, running
    /// transactions back to back (no keying or think time). Default 1 (HammerDB's default). A list or range
    /// (1,2,4,8 or 1..32:x2) is a sweep, as HammerDB's autopilot: the database is built once, then each user
    /// count gets its own ramp and window and consistency check, in the order given; the result
    /// (iolab.dbsweep/1) has NOPM against users and the knee, where more users gain less than 10% NOPM while
    /// new-order p99 grows more than 20%.
    #[arg(long, short = 'u', value_name = "N|LIST", default_value = "1")]
    pub users: String,
    /// Ramp before the measured window: transactions run but are not counted. Default 5s.
    #[arg(long, value_name = "DURATION", default_value = "5s")]
    pub ramp: String,
    /// The measured window. Default 60s (HammerDB's is 5m after a 2m ramp: use that for numbers to compare).
    #[arg(long, value_name = "DURATION", default_value = "60s")]
    pub duration: String,
    /// Items, and so stock rows per warehouse. Default 100000, the spec's; fewer build faster (the key
    /// distributions scale with it) but make the database smaller than TPC-C's.
    #[arg(long, value_name = "N", default_value = "100000")]
    pub items: String,
    /// Seed of every random choice (the loaded data, each user's stream, the mix). Default: a fresh one,
    /// printed.
    #[arg(long, value_name = "N")]
    pub seed: Option<String>,
    /// A private PostgreSQL server's shared_buffers. Default 32M: small, so the database's reads and
    /// writes reach the operating system rather than staying in the server's cache.
    #[arg(long, value_name = "SIZE", default_value = "32M")]
    pub shared_buffers: String,
    /// Keep the database's directory after the run (the server stopped); a later run with the same --dir
    /// builds it again.
    #[arg(long)]
    pub keep: bool,
    /// Write the result (iolab.db/1; with several --users, iolab.dbsweep/1) as JSON to FILE; '-' for stdout.
    #[arg(long, value_name = "FILE")]
    pub json: Option<String>,
    /// Serve the live figures (NOPM and TPM of the window so far, transactions per minute and completed per
    /// transaction type, users, rows loaded by the build) at http://ADDR:PORT/metrics in the
    /// Prometheus/OpenMetrics text format while the build and the run go on.
    #[arg(long, value_name = "ADDR:PORT")]
    pub metrics: Option<String>,
    /// Results catalog: where the run is saved (as kind db, or db-sweep), its tags and note.
    #[command(flatten)]
    pub catalog: super::CatalogFlags,
    /// Print nothing but errors.
    #[arg(long, short = 'q')]
    pub quiet: bool,
}
