//! The points of a sweep, run: every point's job checked (dry-run) before the first runs, an optional
//! preconditioning until steady, every point × trial run and judged, then one sweep document saved and
//! written. `iolab sweep` builds the points from its lists ([`crate::sweep`]); `iolab run` builds them from a
//! job's `[[phase]]` tables ([`run_phases`]): phases are the points of a sweep along a `phase` axis.

use crate::args::{ProfileFlags, RunArgs};
use crate::exec::{execute, execute_with, ShowMode};
use crate::exit::{usage, ExitStatus};
use crate::job::parse_interval;
use crate::output::{print, Outputs};
use crate::steady::run_until_steady;
use anyhow::{Context, Result};
use iolab_device::WriteGate;
use iolab_report::export::steady_state_line;
use iolab_report::steady::SteadyStateRule;
use iolab_report::sweep::{
    SweepAxis, SweepResult, DEFAULT_KNEE_IOPS_GAIN_PCT, DEFAULT_KNEE_LAT_GROWTH_PCT, SWEEP_SCHEMA,
};
use iolab_report::{CsvExporter, Document, JsonExporter, RunResult, TextExporter};
use iolab_run::replay::ReplaySource;
use iolab_run::sweep::{load_axis, Axis, Point, Sweep, Trial};
use iolab_run::Executed;
use iolab_run::Runner;
use iolab_spec::JobSpec;
use std::io::IsTerminal;

/// A fresh base seed (OS-keyed hasher, time, pid), short enough to type back.
pub fn fresh_seed() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0),
    );
    h.write_u32(std::process::id());
    h.finish() % 1_000_000_000_000
}

/// The sweep's own options, checked before anything else.
pub struct Options {
    /// Runs per point (`--trials`).
    pub trials: u32,
    /// `--knee-iops-gain`.
    pub knee_iops_gain_pct: f64,
    /// `--knee-lat-growth`.
    pub knee_lat_growth_pct: f64,
    /// `--max-p99`.
    pub max_p99_ns: Option<u64>,
    /// `--steady-state`: precondition with the first point until steady.
    pub rule: Option<SteadyStateRule>,
    /// `--interval`.
    pub interval_ns: u64,
}

/// Dry-runs every point's job (plan, probe, bind: nothing created); per point its `--dry-run` document and
/// its planned ramp + duration (for the ETA of the whole sweep).
fn check_points(
    points: &[Point],
    jobs: &[JobSpec],
    interval_ns: u64,
    gate: &WriteGate,
) -> Result<(Vec<serde_json::Value>, Vec<Option<f64>>)> {
    let mut dry = Vec::new();
    let mut planned_s: Vec<Option<f64>> = Vec::new();
    for (i, (p, job)) in points.iter().zip(jobs).enumerate() {
        let mut job = job.clone();
        point_trace(&mut job, (i, points.len()), (0, 1));
        let doc = execute(job, true, interval_ns, ShowMode { quiet: true, live: false }, gate)
            .with_context(|| format!("sweep point {}", p.describe()))?;
        if let Executed::DryRun(d) = doc {
            planned_s.push(crate::progress::planned_run_s(&d));
            dry.push(serde_json::json!({ "params": p.params, "plan": d }));
        }
    }
    Ok((dry, planned_s))
}

/// `iolab run` of a job with `[[phase]]` tables: the phases run in order, each its own run with its own
/// result, as the points of a sweep along a `phase` axis: one table of the phases, one `iolab.sweep/1`
/// document for `--json`/`--csv`, one catalog entry.
pub fn run_phases(run: &RunArgs, job: &JobSpec) -> Result<ExitStatus> {
    if run.steady.steady_state.is_some() {
        return Err(usage("'--steady-state' runs one job until steady; a job with [[phase]] tables runs its phases as they are"));
    }
    let opts = Options {
        trials: 1,
        knee_iops_gain_pct: DEFAULT_KNEE_IOPS_GAIN_PCT,
        knee_lat_growth_pct: DEFAULT_KNEE_LAT_GROWTH_PCT,
        max_p99_ns: None,
        rule: None,
        interval_ns: parse_interval(&run.interval)?,
    };
    let phases = job.phase_jobs();
    let names: Vec<String> = phases.iter().map(|(n, _)| n.clone().unwrap_or_default()).collect();
    let axes = [Axis { key: "phase".into(), flag: "[[phase]]".into(), values: names }];
    let mut points = iolab_run::sweep::points(&axes).map_err(usage)?;
    for (p, (_, j)) in points.iter_mut().zip(&phases) {
        p.seed = j.seed;
    }
    let jobs: Vec<JobSpec> = phases.into_iter().map(|(_, j)| j).collect();
    let replays = vec![None; jobs.len()];
    run_points(run, &opts, &axes, points, (jobs, replays))
}

/// Runs the points of a sweep (or the phases of a job) after every check, and saves and writes the sweep.
/// Each point has its job and, for a sweep over a trace, the trace it replays.
pub fn run_points(
    run: &RunArgs,
    opts: &Options,
    axes: &[Axis],
    points: Vec<Point>,
    (jobs, replays): (Vec<JobSpec>, Vec<Option<ReplaySource>>),
) -> Result<ExitStatus> {
    let args_run = run;
    let base_seed = jobs.first().and_then(|j| j.seed).unwrap_or_else(fresh_seed);
    let quiet = run.quiet;
    // Outputs and the catalog are claimed, and every point checked against them, before anything is created
    // or run: a path refused, a collision or a bad catalog is an exit-2 error with nothing done.
    let mut gate = WriteGate::new();
    if let Some(src) = replays.iter().flatten().next() {
        gate.claim("the trace to replay", &src.path, iolab_device::Access::Reads).map_err(usage)?;
    }
    crate::output::claim_job_file(&mut gate, args_run.job.as_deref())?;
    let outputs = Outputs::claim(&mut gate, args_run.json.as_deref(), args_run.csv.as_deref())?;
    let saver = crate::saving::Saver::open(&args_run.catalog, quiet, args_run.dry_run, &mut gate)?;
    let (dry, planned_s) = check_points(&points, &jobs, opts.interval_ns, &gate)?;
    if !args_run.dry_run {
        crate::metrics::serve(args_run.metrics.as_deref())?;
    }
    if args_run.dry_run {
        let doc = serde_json::json!({ "schema": SWEEP_SCHEMA, "dry_run": true, "base_seed": base_seed, "trials": opts.trials, "points": dry });
        print(&serde_json::to_string_pretty(&doc)?)?;
        return Ok(ExitStatus::Ok);
    }

    // 2. Run: preconditioning once, then every point × trial, holding the scratch files throughout.
    let _scratch_guard = iolab_device::ScratchGuard;
    let terminal = !quiet && std::io::stderr().is_terminal();
    let mut doc = new_doc(axes, base_seed, opts.trials, points.len());
    let runs_s = planned_s.iter().flat_map(|&s| std::iter::repeat_n(s, opts.trials as usize)).collect();
    let overall = crate::progress::OverallBar::sweep(terminal, runs_s);
    let mut unwritten = 0;
    if let (Some(rule), Some(first), Some(job)) = (&opts.rule, points.first(), jobs.first()) {
        if terminal {
            let what = format!(
                "preconditioning with {} until steady ({})",
                first.describe(),
                args_run.steady.steady_state.as_deref().unwrap_or("")
            );
            overall.println(&format!("iolab: {what}"));
            overall.begin(&what, false);
        }
        let mut job = job.clone();
        job.seed = Some(job.seed.unwrap_or(base_seed));
        let shown = ShowMode { quiet, live: terminal };
        let (r, mut ss, n) = run_until_steady(job, rule, opts.interval_ns, shown, &gate)?;
        unwritten += n;
        ss.params = Some(first.params.clone());
        if terminal {
            overall.println(&format!("iolab: preconditioning: {}", steady_state_line(&ss)));
        }
        doc.preconditioning = Some(ss);
        if r.partial || crate::signals::stop_requested() {
            doc.partial = true;
        }
    }
    if !doc.partial {
        let mut runner = TrialRunner {
            points: &points,
            jobs: &jobs,
            replays: &replays,
            unwritten: 0,
            trials: opts.trials,
            interval_ns: opts.interval_ns,
            quiet,
            terminal,
            gate: &gate,
            overall: &overall,
            profile: &args_run.profile,
        };
        let ran = iolab_run::sweep::run(Sweep::new(&points, opts.trials, base_seed), &mut runner)?;
        doc.points = ran.points;
        doc.partial = ran.partial;
        unwritten += runner.unwritten;
    }
    drop(overall);
    doc.analyze(opts.knee_iops_gain_pct, opts.knee_lat_growth_pct, opts.max_p99_ns);

    // 3. Save (one catalog entry for the whole sweep), then output.
    let saved = crate::saving::save(
        saver.as_ref(),
        iolab_catalog::EntryKind::Sweep,
        &JsonExporter.render(&Document::Sweep(&doc)),
    );
    let written = write_sweep(&doc, quiet, &outputs);
    saved?;
    written?;
    if unwritten > 0 {
        return Err(crate::exit::outputs_not_written(unwritten));
    }
    Ok(exit_status(&doc))
}

/// The sweep's document before its first run: when it started, its axes, seed and size.
fn new_doc(axes: &[Axis], base_seed: u64, trials: u32, points_planned: usize) -> SweepResult {
    let (started_at, _) = iolab_run::env::now_rfc3339();
    SweepResult {
        schema: SWEEP_SCHEMA.into(),
        iolab_version: env!("CARGO_PKG_VERSION").into(),
        started_at,
        partial: false,
        base_seed,
        trials,
        axes: axes
            .iter()
            .filter(|a| a.values.len() > 1)
            .map(|a| SweepAxis { key: a.key.clone(), values: a.values.clone() })
            .collect(),
        load_axis: load_axis(axes).map(str::to_string),
        points_planned,
        preconditioning: None,
        points: Vec::new(),
        knee: None,
        max_p99: None,
    }
}

/// Prints the sweep's text (unless quiet or stdout carries JSON/CSV) and writes `--json` / `--csv`.
fn write_sweep(doc: &SweepResult, quiet: bool, outputs: &Outputs) -> Result<()> {
    if !quiet && !outputs.on_stdout() {
        print(&TextExporter.render(&Document::Sweep(doc)))?;
    }
    outputs.write(
        || JsonExporter.render(&Document::Sweep(doc)),
        || CsvExporter.render(&Document::Sweep(doc)).map_err(anyhow::Error::new),
    )
}

/// The sweep's exit status: I/O errors at any point first, then a failed verdict at any point.
fn exit_status(doc: &SweepResult) -> ExitStatus {
    let mut status = ExitStatus::Ok;
    for p in &doc.points {
        match ExitStatus::of(&p.result) {
            ExitStatus::IoErrors => status = ExitStatus::IoErrors,
            ExitStatus::Fail if matches!(status, ExitStatus::Ok) => status = ExitStatus::Fail,
            _ => {}
        }
    }
    status
}

/// `--trace FILE` in a sweep: each point records into a file of its own, the point's number (from 1, as
/// the progress shows it, at least two digits) put before the file's extension: `run.iolabtrace` becomes
/// `run.p01.iolabtrace`, `run.p02.iolabtrace`, ...; with several trials, the trial's too (`run.p01.t2...`).
fn point_trace(job: &mut JobSpec, (point, points): (usize, usize), (trial, trials): (u32, u32)) {
    let width = points.to_string().len().max(2);
    let mut tag = format!("p{:0width$}", point + 1);
    if trials > 1 {
        tag.push_str(&format!(".t{}", trial + 1));
    }
    tag_trace(job, &tag);
}

/// Puts `tag` before the extension of the job's `--trace` file name (`run.iolabtrace` with `p01`:
/// `run.p01.iolabtrace`; a name without an extension gets it at its end), so that each of several runs of
/// one command (sweep points, find-max steps) records into a file of its own.
pub(crate) fn tag_trace(job: &mut JobSpec, tag: &str) {
    let Some(path) = &job.trace else { return };
    let name_start = path.rfind('/').map_or(0, |i| i + 1);
    job.trace = Some(match path[name_start..].rfind('.').filter(|&i| i > 0) {
        Some(dot) => format!("{}.{tag}{}", &path[..name_start + dot], &path[name_start + dot..]),
        None => format!("{path}.{tag}"),
    });
}

/// Runs the sweep's trials for real: each point's job with the trial's seed, judged against the job's
/// verdict, its progress on the overall bar.
struct TrialRunner<'a> {
    points: &'a [Point],
    jobs: &'a [JobSpec],
    /// Per point, the trace it replays (`iolab sweep --replay`).
    replays: &'a [Option<ReplaySource>],
    /// Outputs of the runs (`--trace`) not written so far, each said.
    unwritten: usize,
    trials: u32,
    interval_ns: u64,
    quiet: bool,
    terminal: bool,
    gate: &'a WriteGate,
    overall: &'a crate::progress::OverallBar,
    profile: &'a ProfileFlags,
}

impl Runner<Trial> for TrialRunner<'_> {
    type Error = anyhow::Error;

    fn run(&mut self, t: Trial) -> Result<RunResult> {
        let p = &self.points[t.point];
        if self.terminal {
            let trials = self.trials;
            let trial = if trials > 1 { format!(", trial {}/{trials}", t.trial + 1) } else { String::new() };
            self.overall.begin(
                &format!("point {}/{}: {}{trial}", t.point + 1, self.points.len(), p.describe()),
                true,
            );
        }
        let mut job = self.jobs[t.point].clone();
        job.seed = Some(t.seed);
        point_trace(&mut job, (t.point, self.points.len()), (t.trial, self.trials));
        let judged = job.clone();
        let shown = ShowMode { quiet: self.quiet, live: self.terminal };
        let replay = self.replays[t.point].clone();
        let mut r = match execute_with(job, false, self.interval_ns, shown, self.gate, replay)
            .with_context(|| format!("sweep point {}", p.describe()))?
        {
            (Executed::Done(r), n) => {
                self.unwritten += n;
                r
            }
            (Executed::DryRun(_), _) => anyhow::bail!("a sweep point ran as a dry run (bug)"),
        };
        crate::profile::judge(&judged, self.profile, &mut r);
        self.overall.end();
        Ok(*r)
    }

    fn stop_requested(&self) -> bool {
        crate::signals::stop_requested()
    }
}

#[cfg(test)]
mod tests {
    use super::point_trace;
    use iolab_spec::JobSpec;

    fn traced(path: &str, point: (usize, usize), trial: (u32, u32)) -> String {
        let mut job = JobSpec { trace: Some(path.into()), ..JobSpec::default() };
        point_trace(&mut job, point, trial);
        job.trace.unwrap()
    }

    #[test]
    fn each_point_and_trial_has_its_own_trace_file() {
        assert_eq!(traced("out/run.iolabtrace", (0, 3), (0, 1)), "out/run.p01.iolabtrace");
        assert_eq!(traced("run.iolabtrace", (99, 120), (1, 3)), "run.p100.t2.iolabtrace");
        assert_eq!(traced("a.d/trace", (2, 3), (0, 1)), "a.d/trace.p03");
        assert_eq!(traced(".hidden", (0, 2), (0, 1)), ".hidden.p01");
    }
}
