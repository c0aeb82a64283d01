//! `iolab report` arguments.

use clap::{Args, ValueEnum};
use std::path::PathBuf;

/// What `--format` takes, in every command that has it (`iolab compare`: text or md; `iolab report`: html or
/// md; `iolab trace convert`: iolab or csv): one parser, so the same word means the same format everywhere;
/// a command refuses the formats it has no form of, naming those it has.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// Plain text tables, as the terminal shows them.
    Text,
    /// Markdown tables, for pasting into a ticket.
    #[value(alias = "markdown")]
    Md,
    /// One self-contained HTML page: inline CSS and SVG charts, no script, font or URL.
    Html,
    /// Comma-separated values (a trace's records).
    Csv,
    /// iolab's binary trace format.
    Iolab,
}

/// `iolab report` options.
#[derive(Args, Debug)]
pub struct ReportArgs {
    /// Runs and sweeps to report: catalog ids (or unique prefixes), tag queries (`tag:site=lab1,hba=qle2560`:
    /// every run and sweep with those tags, oldest first), or result/sweep JSON files (from
    /// `iolab run --json`, `iolab sweep --json`). Several runs are compared side by side; sweeps get their
    /// IOPS/MB/s and latency charts along each swept field (several sweeps are overlaid); miss-ratio curves
    /// (`iolab mrc --json`) get their chart with the recommendation.
    #[arg(required = true, value_name = "ID_OR_FILE")]
    pub inputs: Vec<String>,
    /// Write the report here. Default: standard output.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<String>,
    /// html or md. Default: md when --output ends in .md, else html.
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub format: Option<OutputFormat>,
    /// The results catalog to read ids from. Default: $IOLAB_DB, else $XDG_DATA_HOME/iolab/results.db, else
    /// ~/.local/share/iolab/results.db.
    #[arg(long, value_name = "PATH")]
    pub db: Option<PathBuf>,
    /// Title of the report. Default: "iolab report" and the inputs' names.
    #[arg(long, value_name = "TEXT")]
    pub title: Option<String>,
    /// Print nothing but errors (not where the report was written).
    #[arg(long, short = 'q')]
    pub quiet: bool,
}
