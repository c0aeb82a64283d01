//! The real binary with seeded random values for its value flags (`iolab run --dry-run` and `iolab sweep
//! --dry-run`, so nothing runs long and nothing is created): every case exits 0 or 2, never 101 (a panic),
//! prints no panic message, and leaves its working and scratch directories empty. The value parsers
//! themselves are fuzzed far harder in crates/spec/tests/no_panic.rs; this covers the CLI's own glue
//! (clap, the flag-to-key mapping, list and range flags, the checks after parsing).

use crate::util::{entries, iolab, tempdir};

/// Values: valid ones, and the classic troublemakers: empty, negative, zero, huge, unicode, wrong unit.
const VALUES: &[&str] = &[
    "1",
    "4k",
    "4K/60:8K/40",
    "1G",
    "70",
    "100%",
    "10k",
    "30s",
    "250us",
    "0",
    "-1",
    "-0",
    "",
    " ",
    "18446744073709551616",
    "99999999999999999999T",
    "1e308",
    "NaN",
    "inf",
    "4kb",
    "4ｋ",
    "µs",
    "🚀",
    "\u{7f}\t",
    "1..64:x2",
    "1..64:x0",
    "64..1",
    "1,2,3",
    "1,,2",
    "sim:fixed,latency=100us",
    "mem:1G",
    "link:fc8g:mem:64M",
    "link:fc8g:link:fc8g:mem:64M",
    "@db",
    "zipf:1.2",
    "zones:80/20:20/80",
    "pareto:1",
    "rbps=1M",
    "compress:50",
    "poisson",
    "randrw",
    "write-back",
    "iops:5",
    "qd=1,2",
];

/// Value flags of `iolab run`.
const RUN_FLAGS: &[&str] = &[
    "--target",
    "--size",
    "--offset",
    "--length",
    "--rw",
    "--read-pct",
    "--random-pct",
    "--bs",
    "--align",
    "--dist",
    "--qd",
    "--workers",
    "--rate",
    "--arrival",
    "--data",
    "--duration",
    "--ramp",
    "--ios",
    "--bytes",
    "--seed",
    "--engine",
    "--clock",
    "--interval",
    "--cache",
    "--cache-dev",
    "--cache-line",
    "--cache-mode",
    "--cache-policy",
    "--cache-admit",
    "--cache-seq-cutoff",
    "--cache-max-mem",
    "--cache-dirty-max",
    "--throttle",
];

/// Value flags of `iolab sweep` (its list and range flags, on top of the run flags).
const SWEEP_FLAGS: &[&str] = &["--qd", "--bs", "--set", "--trials", "--max-p99", "--knee-iops-gain", "--rw"];

/// xorshift64*: a fixed seed gives the same cases every run (the seed is in every failure message).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33) as usize % n
    }
}

/// Runs `iolab ARGS` in an empty directory; asserts exit 0 or 2, no panic, nothing created.
fn check(args: &[String], case: &str) {
    let dir = tempdir();
    let scratch = dir.path().join("scratch");
    std::fs::create_dir(&scratch).unwrap();
    let out = iolab()
        .current_dir(dir.path())
        .env("IOLAB_SCRATCH_DIR", &scratch)
        .args(args)
        .timeout(std::time::Duration::from_secs(30))
        .output()
        .expect("spawn iolab");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let code = out.status.code();
    assert!(!stderr.contains("panicked"), "{case}: iolab {args:?} panicked:\n{stderr}");
    assert!(matches!(code, Some(0) | Some(2)), "{case}: iolab {args:?} exited with {code:?}:\n{stderr}");
    if code == Some(2) {
        assert!(
            stderr.starts_with("error"),
            "{case}: iolab {args:?}: exit 2 without an error line:\n{stderr}"
        );
    }
    assert_eq!(entries(&scratch), Vec::<String>::new(), "{case}: iolab {args:?} left scratch files");
    assert_eq!(entries(dir.path()), vec!["scratch".to_string()], "{case}: iolab {args:?} created files");
}

fn random_cases(command: &str, flags: &[&str], seed: u64, count: usize) {
    let mut rng = Rng(seed);
    for i in 0..count {
        let mut args: Vec<String> = vec![command.into(), "--dry-run".into(), "-q".into()];
        for _ in 0..1 + rng.below(3) {
            args.push(flags[rng.below(flags.len())].into());
            args.push(VALUES[rng.below(VALUES.len())].into());
        }
        check(&args, &format!("seed {seed}, case {i}"));
    }
}

#[test]
fn run_with_random_flag_values_exits_0_or_2_and_never_panics() {
    random_cases("run", RUN_FLAGS, 0x10_1ab, 24);
}

#[test]
fn sweep_with_random_list_values_exits_0_or_2_and_never_panics() {
    random_cases("sweep", SWEEP_FLAGS, 0x5eed, 12);
}

#[test]
fn every_value_on_its_own_flag_exits_0_or_2_and_never_panics() {
    // Each troublemaker once on the flag most likely to reach deep: targets, sizes and block sizes.
    for (i, v) in VALUES.iter().enumerate() {
        let flag = ["--target", "--bs", "--size", "--duration"][i % 4];
        check(&["run".into(), "--dry-run".into(), "-q".into(), flag.into(), (*v).into()], "table");
    }
}
