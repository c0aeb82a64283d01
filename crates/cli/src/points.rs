//! The points of a sweep, run: every point's job checked (dry-run) before the first runs, an optional
//! preconditioning until steady, every point × trial run and judged, then one sweep document saved and
//! written. `iolab sweep` builds the points from its lists ([`crate::sweep`]); `iolab run` builds them from a
//! job's `[[phase]]` tables ([`run_phases`]): phases are the points of a sweep along a `phase` axis.

use crate::args::RunArgs;
use crate::exit::{usage, ExitStatus};
use crate::output::{print, Outputs};
use crate::session::Session;
use crate::steady::run_until_steady;
use anyhow::{Context, Result};
use iolab_report::export::steady_state_line;
use iolab_report::steady::SteadyStateRule;
use iolab_report::sweep::{
    SweepAxis, SweepResult, DEFAULT_KNEE_IOPS_GAIN_PCT, DEFAULT_KNEE_LAT_GROWTH_PCT, SWEEP_SCHEMA,
};
use iolab_report::{CsvExporter, JsonExporter, RunResult, TextExporter};
use iolab_run::replay::ReplaySource;
use iolab_run::sweep::{load_axis, Axis, Point, Sweep, Trial};
use iolab_run::Runner;
use iolab_spec::JobSpec;

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
pub struct SweepOptions {
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
}

/// Dry-runs every point's job (plan, probe, bind: nothing created); per point its `--dry-run` document and
/// its planned ramp + duration (for the ETA of the whole sweep).
fn check_points(
    points: &[Point],
    jobs: &[JobSpec],
    session: &Session,
) -> Result<(Vec<serde_json::Value>, Vec<Option<f64>>)> {
    let mut dry = Vec::new();
    let mut planned_s: Vec<Option<f64>> = Vec::new();
    for (i, (p, job)) in points.iter().zip(jobs).enumerate() {
        let mut job = job.clone();
        point_trace(&mut job, (i, points.len()), (0, 1));
        let d = session.dry_run(job).with_context(|| format!("sweep point {}", p.describe()))?;
        planned_s.push(d.planned_s());
        dry.push(serde_json::json!({ "params": p.params, "plan": d }));
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
    let opts = SweepOptions {
        trials: 1,
        knee_iops_gain_pct: DEFAULT_KNEE_IOPS_GAIN_PCT,
        knee_lat_growth_pct: DEFAULT_KNEE_LAT_GROWTH_PCT,
        max_p99_ns: None,
        rule: None,
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
    opts: &SweepOptions,
    axes: &[Axis],
    points: Vec<Point>,
    (jobs, replays): (Vec<JobSpec>, Vec<Option<ReplaySource>>),
) -> Result<ExitStatus> {
    let base_seed = jobs.first().and_then(|j| j.seed).unwrap_or_else(fresh_seed);
    let quiet = run.quiet;
    let mut session = Session::of_run(run, replays.iter().flatten().next().map(|src| src.path.as_str()))?;
    let (dry, planned_s) = check_points(&points, &jobs, &session)?;
    if run.dry_run {
        let doc = serde_json::json!({ "schema": SWEEP_SCHEMA, "dry_run": true, "base_seed": base_seed, "trials": opts.trials, "points": dry });
        print(&serde_json::to_string_pretty(&doc)?)?;
        return Ok(ExitStatus::Ok);
    }

    // 2. Run: preconditioning once, then every point × trial, holding the scratch files throughout.
    let _scratch_guard = iolab_device::ScratchGuard;
    let terminal = session.shown().live;
    let mut doc = new_doc(axes, base_seed, opts.trials, points.len());
    let runs_s = planned_s.iter().flat_map(|&s| std::iter::repeat_n(s, opts.trials as usize)).collect();
    let overall = crate::progress::OverallBar::sweep(terminal, runs_s);
    if let (Some(rule), Some(first), Some(job)) = (&opts.rule, points.first(), jobs.first()) {
        if terminal {
            let what = format!(
                "preconditioning with {} until steady ({})",
                first.describe(),
                run.steady.steady_state.as_deref().unwrap_or("")
            );
            overall.println(&format!("iolab: {what}"));
            overall.begin(&what, false);
        }
        let mut job = job.clone();
        job.seed = Some(job.seed.unwrap_or(base_seed));
        let (r, mut ss) = run_until_steady(job, rule, &mut session)?;
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
            trials: opts.trials,
            terminal,
            session: &mut session,
            overall: &overall,
        };
        let ran = iolab_run::sweep::run(Sweep::new(&points, opts.trials, base_seed), &mut runner)?;
        doc.points = ran.points;
        doc.partial = ran.partial;
    }
    drop(overall);
    debug_assert!(doc.points.len() <= points.len(), "no more results than points");
    debug_assert!(doc.partial || doc.points.len() == points.len(), "a complete sweep ran every point");
    doc.analyze(opts.knee_iops_gain_pct, opts.knee_lat_growth_pct, opts.max_p99_ns);

    // 3. Save (one catalog entry for the whole sweep), then output.
    let json = JsonExporter.render(&doc);
    let written = |outputs: &Outputs| write_sweep(&doc, quiet, outputs);
    session.conclude((crate::saving::entry(&doc)?, &json), written, exit_status(&doc))
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
        print(&TextExporter.render(doc))?;
    }
    outputs.write(|| JsonExporter.render(doc), || CsvExporter.render(doc).map_err(anyhow::Error::new))
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

/// Runs the sweep's trials for real in the session: each point's job with the trial's seed (the run judges
/// it against the job's verdict), its progress on the overall bar.
struct TrialRunner<'a> {
    points: &'a [Point],
    jobs: &'a [JobSpec],
    /// Per point, the trace it replays (`iolab sweep --replay`).
    replays: &'a [Option<ReplaySource>],
    trials: u32,
    terminal: bool,
    session: &'a mut Session,
    overall: &'a crate::progress::OverallBar,
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
        let replay = self.replays[t.point].clone();
        let r = self.session.run(job, replay).with_context(|| format!("sweep point {}", p.describe()))?;
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
