//! `iolab verify` arguments.

use super::catalog::CatalogFlags;
use super::{KeySet, SomeKeys};

/// `--qd` and `--bs` of `iolab verify`: `iolab run`'s own flags (its aliases and parsers), in a check's
/// words.
#[derive(Clone, Copy, Debug, Default)]
pub struct VerifyKeys;

impl KeySet for VerifyKeys {
    const KEYS: &'static [(&'static str, Option<&'static str>)] = &[
        ("qd", Some("Reads in flight. Default 16.")),
        (
            "bs",
            Some("Read size (a multiple of the verification block). Default: up to 1M, the largest power of two dividing the target's size."),
        ),
    ];
}

/// `iolab verify` options.
#[derive(clap::Args, Debug, Default, Clone)]
pub struct VerifyArgs {
    /// The target written earlier with --verify: a file, a block device (read only; nothing is written).
    pub target: String,
    /// The journal the writing run kept (--journal): checks each block against its last acknowledged write.
    #[arg(long, value_name = "FILE")]
    pub journal: Option<String>,
    /// Without a journal: the verification block the target was written with. Default 4K.
    #[arg(long, value_name = "SIZE")]
    pub block: Option<String>,
    /// --qd and --bs.
    #[command(flatten)]
    pub keys: SomeKeys<VerifyKeys>,
    /// Write the result as JSON to FILE; '-' for stdout.
    #[arg(long, value_name = "FILE")]
    pub json: Option<String>,
    /// Print nothing but errors.
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// Results catalog options.
    #[command(flatten)]
    pub catalog: CatalogFlags,
}
