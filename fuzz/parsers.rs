//! Every text parser of `iolab-spec`, applied to one input: the body of the `cli_values` fuzz target and of
//! the proptests in `crates/spec/tests/no_panic.rs`, which include this file (`#[path]`), so the fuzzer and
//! CI exercise the same calls. Each call may return an error but must not panic; successful results are
//! used (formatted, displayed, parsed back) so that the code after parsing runs too, and every error is
//! rendered, as the CLI would print it.
//!
//! The keys come from the crate's own lists (`RUN_KEYS`, `WORKER_KEYS`, ...), so a key added there is
//! fuzzed without touching this file.

#![allow(dead_code)] // each includer uses part of this file

use iolab_spec::error::Place;
use iolab_spec::exchange::{ExchangeSpec, EXCHANGE_KEYS};
use iolab_spec::loadgen::{parse_user_rate, UsersSpec, USERS_KEYS};
use iolab_spec::units::{
    format_duration, format_size, parse_count, parse_duration_ns, parse_percent, parse_size,
};
use iolab_spec::verdict::{VerdictSpec, VERDICT_KEYS};
use iolab_spec::{
    BlockSizes, Dist, InjectSpec, JobSpec, Layer, TargetSpec, ThrottleSpec, RUN_KEYS, SPEC_KEYS, WORKER_KEYS,
};

/// Runs `text` through every value parser: the unit parsers, the structured values (targets, block-size
/// splits, distributions, throttle limits, user rates, fault injection), and every key of a job (run,
/// worker, access-spec, cache, `[exchange]`, `[verdict]`, `[users]`) as both a flag and a job-file key
/// would set it.
pub fn every_value_parser(text: &str) {
    if let Ok(n) = parse_size(text) {
        // The formatter picks the largest exact unit, so its text must parse back to the same size.
        assert_eq!(parse_size(&format_size(n)), Ok(n), "format_size({n}) does not parse back");
    }
    if let Ok(ns) = parse_duration_ns(text) {
        assert_eq!(
            parse_duration_ns(&format_duration(ns)),
            Ok(ns),
            "format_duration({ns}) does not parse back"
        );
    }
    let _ = parse_percent(text);
    let _ = parse_count(text);
    let _ = parse_user_rate(text);
    if let Ok(b) = BlockSizes::parse(text) {
        assert!(b.max() >= 1, "a parsed block-size split has a size of 0: {b:?}");
        // The canonical text drops the weight of a single size (it means nothing alone).
        let again = BlockSizes::parse(&b.to_text()).expect("to_text parses back");
        let sizes = |b: &BlockSizes| b.0.iter().map(|w| w.size_bytes).collect::<Vec<_>>();
        assert_eq!(sizes(&again), sizes(&b), "to_text does not parse back");
        assert!(b.0.len() == 1 || again == b, "to_text does not parse back: {b:?} vs {again:?}");
    }
    let _ = Dist::parse(text);
    let _ = ThrottleSpec::parse(text);
    let _ = InjectSpec::parse(text);
    if let Ok(t) = TargetSpec::parse(text) {
        let name = t.display_name();
        let _ = (t.base(), t.is_virtual());
        if t.is_virtual() {
            // The canonical name of an emulated target is what reports show and what users copy back.
            let again = TargetSpec::parse(&name);
            assert!(again.is_ok(), "the display name {name:?} of {text:?} does not parse: {again:?}");
        }
    }

    let place = Place::Flag("--fuzz".into());
    let key_place = Place::Key { file: "fuzz.toml".into(), table: "[worker.w]".into(), key: "k".into() };
    for place in [&place, &key_place] {
        for key in RUN_KEYS {
            let mut job = JobSpec::default();
            render(job.set_run(key, text, place));
        }
        for key in WORKER_KEYS.iter().chain(SPEC_KEYS) {
            let mut layer = Layer::default();
            render(layer.set(key, text, place));
        }
        for key in EXCHANGE_KEYS {
            let mut x = ExchangeSpec::default();
            if x.set(key, text, place).map_err(|e| e.to_string()).unwrap_or(false) {
                let _ = x.merged(&ExchangeSpec::default()).resolve();
            }
        }
        for key in VERDICT_KEYS {
            render(VerdictSpec::default().set(key, text, place));
        }
        for key in USERS_KEYS {
            render(UsersSpec::default().set(key, text, place));
        }
    }
    let mut job = JobSpec::default();
    render(job.set_named_target("db", text, &place));
}

/// Formats an error the way the CLI prints it (the `Display` impls build messages from the input).
fn render<T, E: std::fmt::Display>(r: Result<T, E>) {
    if let Err(e) = r {
        let _ = e.to_string();
    }
}

/// Parses a job file's text and, when it parses, runs what the CLI runs next on a job without touching
/// the system: the target-name check and the merge with an (empty) set of flags.
pub fn job_file(text: &str) {
    match JobSpec::from_toml(text, "fuzz.toml") {
        Ok(mut job) => {
            render(job.check_target_names(&[]));
            job.apply_overrides(&JobSpec::default());
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }
}
