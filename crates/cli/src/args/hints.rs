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
