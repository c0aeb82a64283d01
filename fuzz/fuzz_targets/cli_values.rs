//! Fuzz target: bytes -> UTF-8 text -> every value parser a flag or job-file key goes through (sizes,
//! counts, durations, percentages, targets including `sim:`, `link:` and `mem:`, cache settings, throttle
//! limits, block-size splits, distributions, Exchange, verdict and LoadGen keys). Run with
//! `cargo +nightly fuzz run cli_values` (see docs/TESTING.md).
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../parsers.rs"]
mod parsers;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        parsers::every_value_parser(text);
    }
});
