//! Values shell completions offer for flags whose values iolab's own parsers check ([`iolab_spec`], so an
//! error quotes what the user typed): [`Candidates`] lists them to clap (completions) without checking
//! anything itself, so parsing and its messages stay iolab's.

use clap::builder::{PossibleValue, StringValueParser, TypedValueParser};
use std::ffi::OsStr;

/// A flag's usual values, for completions only: any text parses (as a plain `String` would).
#[derive(Clone, Copy)]
pub struct Candidates(pub fn() -> Vec<&'static str>);

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
        Some(Box::new((self.0)().into_iter().map(PossibleValue::new)))
    }
}

/// `--rw`.
pub fn rw() -> Vec<&'static str> {
    vec!["read", "write", "randread", "randwrite", "rw", "randrw"]
}

/// `--engine`.
pub fn engine() -> Vec<&'static str> {
    vec!["auto", "io_uring", "sync"]
}

/// `--cache-mode`.
pub fn cache_mode() -> Vec<&'static str> {
    vec!["write-through", "write-around", "write-back", "read-only"]
}

/// `--prealloc`.
pub fn prealloc() -> Vec<&'static str> {
    vec!["fallocate", "write", "none"]
}

include!(concat!(env!("OUT_DIR"), "/profile_names.rs"));

/// `--profile`: the built-in profiles' names.
pub fn profile() -> Vec<&'static str> {
    PROFILE_NAMES.to_vec()
}
