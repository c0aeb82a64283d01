//! `iolab profiles derive TRACE --check TARGET`: the derived job's fidelity. The trace is replayed on TARGET
//! and the derived job runs on TARGET for the trace's span, both with one seed; on an emulated TARGET (`sim:`,
//! `link:`) both run on virtual time: deterministic, and no wall time. Two tables follow:
//!
//! - **the properties the job claims to keep** ([`iolab_trace::fidelity`]): the job's run is recorded, derived
//!   again, and each property of the trace is compared with the run's, with its tolerance and PASS or FAIL;
//!   any FAIL ends the command with exit code 1;
//! - **what the storage did**: `iolab compare`'s arithmetic on the replay (A) and the run (B): IOPS, MB/s,
//!   the read/write split, latency percentiles.

use crate::args::{Cli, Command, RunArgs};
use crate::exit::{usage, ExitStatus};
use crate::session::Session;
use anyhow::Result;
use clap::Parser;
use iolab_report::compare::{self, CompareOptions, Side};
use iolab_report::{RunResult, TextExporter};
use iolab_spec::JobSpec;
use iolab_trace::derive::{Deriver, Shape};
use iolab_trace::fidelity::{self, PropertyCheck};

/// What the check needs: the trace and its shape, the derived job, where both run, the seed, and the span.
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
    /// The trace's shape, as derived.
    pub shape: &'a Shape,
}

/// Runs the check and prints the two tables; exit code 1 when a property is out of its tolerance.
pub fn check(c: &DeriveCheck<'_>) -> Result<ExitStatus> {
    let virtual_clock = c.target.starts_with("sim:") || c.target.starts_with("link:");
    let clock = if virtual_clock { "virtual" } else { "real" };
    let seed = c.seed.to_string();
    let common = ["--clock", clock, "--seed", seed.as_str(), "--no-save", "-q"];
    let recorded = Recording::new();
    let derived = run_derived(c, &common, &recorded.path)?;
    let run_shape = rederive(&recorded.path)?;
    let rows = fidelity::compare(c.shape, &run_shape);
    crate::output::print(&format!(
        "iolab: the derived job's fidelity on {}: each property of the trace, and of its run derived again, seed {seed}, {clock} clock\n{}",
        c.target,
        properties_table(&rows)
    ))?;
    let failed: Vec<&str> = rows.iter().filter(|r| !r.pass).map(|r| r.property).collect();
    let replayed = replay(c, &common)?;
    let sides = [
        Side { source: format!("replay of {}", c.trace), docs: vec![replayed] },
        Side { source: "the derived job".into(), docs: vec![derived] },
    ];
    let comparison = compare::compare(&sides, &CompareOptions::default()).map_err(usage)?;
    let verdict = match failed.is_empty() {
        true => "fidelity: PASS, every property within its tolerance".to_string(),
        false => format!("fidelity: FAIL, out of tolerance: {}", failed.join(", ")),
    };
    crate::output::print(&format!(
        "\nwhat the storage did: the trace replayed (A) and the job run (B)\n{}(B's 'better' and 'worse' are its distance from the replay: a faithful job changes nothing)\n{verdict}\n",
        TextExporter.render(&comparison)
    ))?;
    Ok(if failed.is_empty() { ExitStatus::Ok } else { ExitStatus::Fail })
}

/// The properties table: property, trace, run, difference, tolerance, verdict.
fn properties_table(rows: &[PropertyCheck]) -> String {
    let head = ["property", "trace", "run", "difference", "tolerance", ""];
    let cells: Vec<[&str; 6]> = rows
        .iter()
        .map(|r| {
            let verdict = if r.pass { "PASS" } else { "FAIL" };
            [r.property, r.trace.as_str(), r.run.as_str(), r.difference.as_str(), r.tolerance, verdict]
        })
        .collect();
    let width =
        |i: usize| cells.iter().map(|c| c[i].chars().count()).chain([head[i].len()]).max().unwrap_or(0);
    let widths: Vec<usize> = (0..6).map(width).collect();
    let line = |c: &[&str; 6]| {
        let padded: Vec<String> = c.iter().zip(&widths).map(|(s, &w)| format!("{s:<w$}")).collect();
        padded.join("  ").trim_end().to_string() + "\n"
    };
    std::iter::once(line(&head)).chain(cells.iter().map(line)).collect()
}

/// The trace file of the derived job's run, removed when dropped.
struct Recording {
    path: String,
}

impl Recording {
    fn new() -> Recording {
        let dir = std::env::temp_dir();
        let path = dir.join(format!("iolab-derive-check-{}.iolabtrace", std::process::id()));
        Recording { path: path.to_string_lossy().into_owned() }
    }
}

impl Drop for Recording {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// The shape of the run recorded at `path` (its one target).
fn rederive(path: &str) -> Result<Shape> {
    let mut t = crate::trace_file::open(path)?;
    let mut deriver = Deriver::new();
    while let Some(r) = t.next_record().map_err(usage)? {
        deriver.add(&r);
    }
    deriver.finish();
    deriver
        .shape(0)
        .ok_or_else(|| anyhow::anyhow!("the derived job's run recorded no reads or writes (a bug)"))
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

/// The derived job on the target (each of its targets there), for the trace's span, recorded into `trace`.
fn run_derived(c: &DeriveCheck<'_>, common: &[&str], trace: &str) -> Result<Box<RunResult>> {
    let job = JobSpec::from_toml(c.job, "the derived job").map_err(usage)?;
    let targets: Vec<String> = job.targets.keys().map(|name| format!("{name}={}", c.target)).collect();
    let duration = format!("{:.3}s", c.span_s.max(0.001));
    let mut words: Vec<&str> = vec!["--duration", &duration, "--ramp", "0s", "--trace", trace];
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
