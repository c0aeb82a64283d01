//! Results-catalog flags of the commands that save (`--db`, `--no-save`, `--tag`, `--note`) and the
//! arguments of the commands that read the catalog: `iolab runs`, `show`, `export`, `rm`.

use clap::{ArgGroup, Args};
use std::path::PathBuf;

/// Catalog options of `iolab run`, `iolab sweep` and `--find-max`.
#[derive(Args, Debug, Default, Clone)]
pub struct CatalogFlags {
    /// Results catalog (SQLite file) to save in. Default: $IOLAB_DB, else $XDG_DATA_HOME/iolab/results.db,
    /// else ~/.local/share/iolab/results.db (the directory is created). `iolab runs` lists what it holds.
    #[arg(long, value_name = "PATH", help_heading = "Catalog")]
    pub db: Option<PathBuf>,
    /// Do not save the result in the catalog.
    #[arg(long, help_heading = "Catalog")]
    pub no_save: bool,
    /// Tag the saved entry, KEY=VALUE (e.g. --tag hba=qle2560 --tag site=lab1); repeatable, each key once.
    /// `iolab runs --tag KEY=VALUE` finds it.
    #[arg(long, value_name = "KEY=VALUE", help_heading = "Catalog")]
    pub tag: Vec<String>,
    /// A note saved with the entry (shown by `iolab runs` and `iolab show`).
    #[arg(long, value_name = "TEXT", help_heading = "Catalog")]
    pub note: Option<String>,
}

/// `--db` of the commands that read the catalog.
#[derive(Args, Debug, Default, Clone)]
pub struct DbFlag {
    /// Results catalog (SQLite file). Default: $IOLAB_DB, else $XDG_DATA_HOME/iolab/results.db, else
    /// ~/.local/share/iolab/results.db.
    #[arg(long, value_name = "PATH")]
    pub db: Option<PathBuf>,
}

/// `iolab runs` options.
#[derive(Args, Debug, Default, Clone)]
pub struct RunsArgs {
    /// Catalog location.
    #[command(flatten)]
    pub db: DbFlag,
    /// Only entries with this tag, KEY=VALUE; repeatable (all must match).
    #[arg(long, value_name = "KEY=VALUE")]
    pub tag: Vec<String>,
    /// Only entries of this job or profile name (exactly, as the NAME column shows it).
    #[arg(long, value_name = "NAME")]
    pub profile: Option<String>,
    /// Only entries with a target whose name contains this text (case-sensitive), e.g. 'nvme0' or 'mem:'
    /// (`--filename`, fio's name, as for `iolab run`).
    #[arg(long, value_name = "TEXT", alias = "filename")]
    pub target: Option<String>,
    /// Only entries saved at or after this time: RFC 3339 (2025-03-01T14:30:00Z, or with an offset), a
    /// day, 2025-03-01 (midnight UTC), or a duration ago: 30m, 1h, 2d.
    #[arg(long, value_name = "DATE|AGO")]
    pub since: Option<String>,
    /// Only entries saved before this time: RFC 3339, a day (2025-03-01 includes that whole day, UTC), or a
    /// duration ago (1h).
    #[arg(long, value_name = "DATE|AGO")]
    pub until: Option<String>,
    /// Only entries of this kind (the help lists the kinds the catalog keeps, [`kind_help`]).
    #[arg(long, value_name = "KIND", help = kind_help())]
    pub kind: Option<String>,
    /// At most this many entries (the newest). Default: all.
    #[arg(long, value_name = "N")]
    pub limit: Option<String>,
    /// Write the list as JSON (an array of entries without their documents; `iolab export ID --json` gives a
    /// document) to FILE, or to stdout without one ('-').
    #[arg(long, value_name = "FILE", num_args = 0..=1, default_missing_value = "-")]
    pub json: Option<String>,
}

/// `iolab runs --kind`'s help: every kind of catalog entry, as users type it and what it holds, from the
/// registry of document kinds.
pub fn kind_help() -> String {
    let kinds: Vec<String> =
        iolab_report::kinds::entry_kinds().map(|(_, e)| format!("{} ({})", e.printed(), e.what)).collect();
    let (last, rest) = kinds.split_last().map_or((String::new(), &[][..]), |(l, r)| (l.clone(), r));
    format!("Only entries of this kind: {} or {last}", rest.join(", "))
}

/// `iolab show` options.
#[derive(Args, Debug, Default, Clone)]
pub struct ShowArgs {
    /// Entry id, or a unique start of one (as `iolab runs` lists them).
    #[arg(value_name = "ID")]
    pub id: String,
    /// Catalog location.
    #[command(flatten)]
    pub db: DbFlag,
}

/// `iolab export` options.
#[derive(Args, Debug, Default, Clone)]
#[command(group(ArgGroup::new("format").args(["json", "csv"])))]
pub struct ExportArgs {
    /// Entry id, or a unique start of one.
    #[arg(value_name = "ID")]
    pub id: String,
    /// The stored document, exactly as `--json` wrote it (its schema is its kind's: iolab.result/1,
    /// iolab.sweep/1, iolab.db/1, ...).
    /// Without --json or --csv, `-o FILE.json` or `-o FILE.csv` says which. To FILE when given (as `-o`),
    /// else stdout.
    #[arg(long, value_name = "FILE", num_args = 0..=1, default_missing_value = "-")]
    pub json: Option<String>,
    /// CSV: a run's time series (one row per interval), a sweep's points (one row per point), a search's
    /// steps (one row per step) or a database sweep's user counts (one row per point). To FILE when given
    /// (as `-o`), else stdout.
    #[arg(long, value_name = "FILE", num_args = 0..=1, default_missing_value = "-")]
    pub csv: Option<String>,
    /// Write to FILE instead of stdout.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<String>,
    /// Catalog location.
    #[command(flatten)]
    pub db: DbFlag,
}

/// `iolab rm` options.
#[derive(Args, Debug, Default, Clone)]
pub struct RmArgs {
    /// Entry ids (or unique starts of them). All are checked before any is removed.
    #[arg(value_name = "ID", required = true)]
    pub ids: Vec<String>,
    /// Catalog location.
    #[command(flatten)]
    pub db: DbFlag,
}
