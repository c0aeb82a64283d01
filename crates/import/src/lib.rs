//! iolab-import: job files of other tools, translated into iolab job files.
//!
//! [`fio`] reads a fio job file's text and writes the iolab job file (TOML) that runs the same I/O, with a
//! comment naming the fio option behind every key. Options that do not change the I/O are listed as
//! ignored; options that would change it but that iolab cannot express are refused with an error naming
//! the option, its section and its line. [`iometer`] does the same for Iometer saved configurations (`.icf`).
//! The translations are pure: text in, text out, no I/O.
//!
//! [`fio_result`] reads fio's JSON results (`--output-format=json`) and returns iolab result documents, one
//! per fio reporting group, marked as measured by fio; also pure.
#![deny(missing_docs)]
#![forbid(unsafe_code)]
// FioError carries the user's text and where it is, by design; it is built once per failed translation.
#![allow(clippy::result_large_err)]

pub mod fio;
pub mod fio_result;
pub mod iometer;
mod names;

pub use fio::{
    looks_like_fio, translate, translate_given, translate_with, FioError, FioVars, Given, Ignored, Note,
    Translation,
};
pub use fio_result::{to_results, FioResultError};

pub(crate) use iolab_doc::job_text::quote;
