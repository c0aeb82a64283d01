//! Fuzz target: bytes -> UTF-8 text -> the job-file parser (`JobSpec::from_toml`) and what the CLI does
//! with a parsed job before touching the system. Run with `cargo +nightly fuzz run job_file` (see
//! docs/TESTING.md); seed the corpus with the built-in profiles: `cp ../profiles/*.toml corpus/job_file/`.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../parsers.rs"]
mod parsers;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        parsers::job_file(text);
    }
});
