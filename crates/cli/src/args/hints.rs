//! Values shell completions offer for flags whose values iolab's own parsers check ([`iolab_spec`], so an
//! error quotes what the user typed): [`Candidates`] lists them to clap (completions) without checking
//! anything itself, so parsing and its messages stay iolab's.

use clap::builder::{PossibleValue, StringValueParser, TypedValueParser};
use std::ffi::OsStr;

/// A flag's usual values, for completions only: any text parses (as a plain `String` would).
#[derive(Clone, Copy)]
pub struct Candidates(pub &'static [&'static str]);

impl TypedValueParser for Candidates {
    type Value = String;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<String, clap::Error> {
        StringValueParser::new().parse_ref(cmd, arg, value)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(self.0.iter().copied().map(PossibleValue::new)))
    }
}

// The job keys' values come with their definitions (`iolab_spec::keys`); the profiles' names are made by
// build.rs.
include!(concat!(env!("OUT_DIR"), "/profile_names.rs"));

/// fio's flags that are no alias of an iolab flag (those are the keys' own, [`iolab_spec::keys::Flag`]'s
/// `aliases`, and `--help` names them): what iolab makes of each, so a fio user typing one gets iolab's
/// answer, never clap's guess at a similar name (`--direct` was answered with `--inject`).
pub struct FioFlag {
    /// fio's name, without dashes.
    pub long: &'static str,
    /// The values it takes (`None`: a switch).
    pub values: Option<&'static [&'static str]>,
    /// What iolab does with it.
    pub means: FioMeans,
}

/// What a [`FioFlag`] does in iolab.
pub enum FioMeans {
    /// Its value is the text of this job key (fio's `--direct=1` is `direct` = 1: O_DIRECT).
    Key(&'static str),
    /// It asks for what iolab does anyway: accepted, changing nothing, with this note on stderr.
    Same(&'static str),
}

/// fio's flags iolab takes (hidden from `--help`, which names their iolab equivalents).
pub const FIO_FLAGS: &[FioFlag] = &[
    FioFlag { long: "direct", values: Some(&["0", "1"]), means: FioMeans::Key("direct") },
    FioFlag {
        long: "time_based",
        values: None,
        means: FioMeans::Same(
            "--time_based is fio's: an iolab run is time-based already (it lasts -d/--duration; --ios or --bytes end it by count)",
        ),
    },
    FioFlag {
        long: "group_reporting",
        values: None,
        means: FioMeans::Same(
            "--group_reporting is fio's: iolab reports all workers together already (and each [worker.NAME] group apart)",
        ),
    },
];

/// iolab's answer to fio's spelling of an iolab switch with a value (`--buffered=1`), which clap refuses with
/// no word of what to type instead: `None` for any other error.
pub fn fio_switch_value(e: &clap::Error) -> Option<String> {
    use clap::error::{ContextKind, ContextValue};
    let ContextValue::String(arg) = e.get(ContextKind::InvalidArg)? else { return None };
    let value = match e.get(ContextKind::InvalidValue) {
        Some(ContextValue::String(v)) => v.clone(),
        _ => return None,
    };
    let long = arg.split([' ', '=']).next()?;
    (long == "--buffered").then(|| {
        match value.trim() {
            "0" => "error: '--buffered=0' is fio's spelling of iolab's default (O_DIRECT, fio's --direct=1): leave it out\n".to_string(),
            _ => format!("error: '--buffered={value}' is fio's spelling; iolab's is --buffered, with no value (the page cache, fio's --direct=0)\n"),
        }
    })
}
