//! `iolab import` arguments.

use super::catalog::CatalogFlags;

/// `iolab import` options.
#[derive(clap::Args, Debug, Clone)]
pub struct ImportArgs {
    /// What to import.
    #[command(subcommand)]
    pub what: ImportWhat,
}

/// `--section NAME`: the job sections of a fio job file to read, as fio's own `--section`; one definition for
/// `iolab run`, `iolab sweep` and `iolab import fio`.
#[derive(clap::Args, Debug, Default, Clone)]
pub struct FioSections {
    /// fio job files: read only the job section NAME (repeatable), as `fio --section=NAME` does: the other job
    /// sections are skipped unread, [global] is always read. A name the file has no job section of is refused,
    /// listing them. Default: every section.
    #[arg(long = "section", value_name = "NAME")]
    pub section: Vec<String>,
}

/// What `iolab import` reads.
#[derive(clap::Subcommand, Debug, Clone)]
pub enum ImportWhat {
    /// Translate a fio job file into the iolab job file that runs the same I/O (TOML, a comment naming the fio
    /// option behind each key). Options that do not change the I/O are listed on stderr as ignored; options
    /// iolab cannot express are refused, naming the option, its section and line (docs/FIO.md).
    Fio {
        /// The fio job file.
        #[arg(value_name = "FILE")]
        file: String,
        /// fio's `--section`.
        #[command(flatten)]
        sections: FioSections,
        /// Write the iolab job file to OUT instead of stdout.
        #[arg(long, short = 'o', value_name = "OUT")]
        output: Option<String>,
        /// Do not list the ignored options.
        #[arg(long, short = 'q')]
        quiet: bool,
    },
    /// Store a fio JSON result (`fio --output-format=json`, fio 3.x) in the catalog as runs measured by fio,
    /// one per fio reporting group, so `iolab compare` and `iolab report` put them beside iolab's runs (compare
    /// says where the two tools' definitions differ; docs/FIO.md).
    FioResult {
        /// The fio JSON result.
        #[arg(value_name = "FILE.json")]
        file: String,
        /// Print nothing but errors.
        #[arg(long, short = 'q')]
        quiet: bool,
        /// Results catalog options.
        #[command(flatten)]
        catalog: CatalogFlags,
    },
    /// Translate an Iometer saved configuration (.icf, Iometer 2006.07.27 to 1.1.0) into an iolab job file:
    /// workers, access specifications as weighted mixes, outstanding I/Os per target, disk regions, run and
    /// ramp time. Its disks become named targets, listed on stderr, that `--target NAME=PATH` maps (or one
    /// `--target` for all); cycling test types are said as the `iolab sweep` flags that run them
    /// (docs/IOMETER.md).
    Iometer {
        /// The Iometer configuration file.
        #[arg(value_name = "FILE")]
        file: String,
        /// Write the iolab job file to OUT instead of stdout.
        #[arg(long, short = 'o', value_name = "OUT")]
        output: Option<String>,
        /// Do not list the targets and warnings.
        #[arg(long, short = 'q')]
        quiet: bool,
    },
}
