//! `iolab profiles derive TRACE --check TARGET`: the derived job's fidelity. The trace is replayed on TARGET
//! and the derived job runs on TARGET for the trace's span, both with one seed, and `iolab compare`'s
//! arithmetic prints how far apart they are (IOPS, MB/s, the read/write split, latency percentiles). On an
//! emulated TARGET (`sim:`, `link:`) both run on virtual time: deterministic, and no wall time.

use crate::args::{Cli, Command, RunArgs};
use crate::exit::{usage, ExitStatus};
use crate::session::Session;
use anyhow::Result;
use clap::Parser;
use iolab_report::compare::{self, CompareOptions, Side};
use iolab_report::{RunResult, TextExporter};
use iolab_spec::JobSpec;

/// What the check needs: the trace, the derived job, where both run, the seed, and the trace's span.
pub struct DeriveCheck<'a> {
    /// The trace file.
    pub trace: &'a str,
    /// The derived job file's text.
    pub job: &'a str,
    /// `--check`'s TARGET.
    pub target: &'a str,
    /// The seed of both runs.
    pub seed: u64,
    /// The trace's span, seconds (the derived job runs as long).
    pub span_s: f64,
}

/// Runs the check and prints the comparison: A the replay, B the derived job.
pub fn check(c: &DeriveCheck<'_>) -> Result<ExitStatus> {
    let virtual_clock = c.target.starts_with("sim:") || c.target.starts_with("link:");
    let clock = if virtual_clock { "virtual" } else { "real" };
    let seed = c.seed.to_string();
    let common = ["--clock", clock, "--seed", seed.as_str(), "--no-save", "-q"];
    let replayed = replay(c, &common)?;
    let derived = run_derived(c, &common)?;
    let sides = [
        Side { source: format!("replay of {}", c.trace), docs: vec![replayed] },
        Side { source: "the derived job".into(), docs: vec![derived] },
    ];
    let comparison = compare::compare(&sides, &CompareOptions::default()).map_err(usage)?;
    println!(
        "iolab: the derived job's fidelity on {}: the trace replayed (A) and the job run (B), seed {seed}, {clock} clock",
        c.target
    );
    crate::output::print(&TextExporter.render(&comparison))?;
    println!("(B's 'better' and 'worse' are its distance from the replay: a faithful job changes nothing)");
    Ok(ExitStatus::Ok)
}

/// `iolab run` flags from `words`, parsed as the command line would be.
fn run_args(words: &[&str]) -> Result<RunArgs> {
    let argv = ["iolab", "run"].into_iter().chain(words.iter().copied());
    match Cli::try_parse_from(argv).map_err(|e| usage(e.to_string()))?.command {
        Command::Run(r) => Ok(*r),
        _ => Err(anyhow::anyhow!("the check's run flags did not parse as a run (bug)")),
    }
}

/// The trace replayed at its own times on the target, as `iolab replay TRACE --target TARGET` does.
fn replay(c: &DeriveCheck<'_>, common: &[&str]) -> Result<Box<RunResult>> {
    let mut words = vec!["--target", c.target];
    words.extend_from_slice(common);
    let mut run = run_args(&words)?;
    let loaded = crate::replaying::load(c.trace, &[], false, &run)?;
    loaded.set_workload(&mut run)?;
    let job = crate::job::build_job(&run)?;
    let mut session = Session::of_run(&run, Some(c.trace))?;
    session.run(job, Some(loaded.at(Some(1.0))))
}

/// The derived job on the target (each of its targets there), for the trace's span.
fn run_derived(c: &DeriveCheck<'_>, common: &[&str]) -> Result<Box<RunResult>> {
    let job = JobSpec::from_toml(c.job, "the derived job").map_err(usage)?;
    let targets: Vec<String> = job.targets.keys().map(|name| format!("{name}={}", c.target)).collect();
    let duration = format!("{:.3}s", c.span_s.max(0.001));
    let mut words: Vec<&str> = vec!["--duration", &duration, "--ramp", "0s"];
    for t in &targets {
        words.extend(["--target", t.as_str()]);
    }
    words.extend_from_slice(common);
    let run = run_args(&words)?;
    let cli = run.to_overrides().map_err(usage)?;
    let mut job = job;
    let given: Vec<String> = cli.targets.keys().cloned().collect();
    job.check_target_names(&given).map_err(usage)?;
    job.apply_overrides(&cli);
    let mut session = Session::of_run(&run, None)?;
    session.run(job, None)
}
