//! `iolab compare` arguments.

use clap::Args;
use std::path::PathBuf;

/// `iolab compare` options.
#[derive(Args, Debug)]
pub struct CompareArgs {
    /// The sides, the first being the baseline every other side is compared with. Each is a catalog ID (or a
    /// unique start of one, as `iolab runs` lists them); `tag:KEY=VALUE[,KEY=VALUE...]` (every run carrying
    /// all those tags: the side's trials); a path to a result (iolab.result/1) or sweep (iolab.sweep/1) JSON
    /// file; or a comma-joined list of files or IDs (trials). Runs are compared with runs, sweeps with sweeps
    /// (per point, matched by the swept values).
    #[arg(required = true, num_args = 2.., value_name = "SIDE")]
    pub sides: Vec<String>,
    /// The catalog to look IDs and tags up in. Default: $IOLAB_DB, else $XDG_DATA_HOME/iolab/results.db,
    /// else ~/.local/share/iolab/results.db. Only read; compare never creates a catalog.
    #[arg(long, value_name = "PATH")]
    pub db: Option<PathBuf>,
    /// Only these metrics, comma-separated or repeated: iops, mb_s, mean, p50, p99, p999 (or p99.9), max,
    /// service_mean, cpu_per_io, depth, tx_per_hour, latency (all response-time statistics), tx (all
    /// transaction metrics); prefix with read., write., group.NAME., tx. or txn.NAME. to narrow (read.p99).
    /// Default: all.
    #[arg(long, value_name = "LIST")]
    pub metric: Vec<String>,
    /// Output format of the table: text or md (Markdown, for tickets). Default text.
    #[arg(long, value_enum, value_name = "FORMAT", default_value = "text")]
    pub format: super::OutputFormat,
    /// Also write the comparison as JSON (schema iolab.compare/1) to FILE; '-' for stdout (then the table
    /// is not printed).
    #[arg(long, value_name = "FILE")]
    pub json: Option<String>,
    /// Significance level of Welch's t-test, run per metric when both sides have at least 3 trials; a
    /// difference is significant when p < alpha. Default 0.05; between 0 and 1.
    #[arg(long, value_name = "ALPHA", allow_hyphen_values = true)]
    pub alpha: Option<String>,
}
