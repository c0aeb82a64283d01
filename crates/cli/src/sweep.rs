//! `iolab sweep`: one job across values of one or more fields (`--qd 1..64:x2`, `--bs 512..1m:x2`,
//! `--set read_pct=0,50,100`), each point repeated `--trials` times, with the knee and the `--max-p99` point
//! found along the load axis.
//!
//! This module parses the lists into axes and maps a point's values onto the `iolab run` arguments: a point
//! is the `iolab run` arguments with the swept fields set to that point's values, built by
//! [`crate::job::build_job`] and run by [`iolab_run::execute`]; so a point's result is exactly what
//! `iolab run` would print for the same flags. The cross product, the trials and their seeds are
//! [`iolab_run::sweep`]. Every point's job is built and dry-run (planned, targets
//! probed, plan bound) before the first one runs, so a bad value anywhere in a list is an error with nothing
//! created. The analysis and the renderings are pure and live in `iolab_report::sweep`. docs/SWEEPS.md is
//! the user's guide.

use crate::args::SweepArgs;
use crate::exit::{usage, ExitStatus};
use crate::job::{build_job, steady_rule};
use crate::points::SweepOptions;
use anyhow::{Context, Result};
use iolab_report::sweep::{DEFAULT_KNEE_IOPS_GAIN_PCT, DEFAULT_KNEE_LAT_GROWTH_PCT};
use iolab_run::sweep::{order_axes, Axis, Point, MAX_POINTS, MAX_TRIALS};
use iolab_spec::units::parse_duration_ns;
use iolab_spec::JobSpec;
use iolab_spec::Place;

/// Parses a sweep list flag into its values ([`iolab_spec::sweep::parse_list`]), at most [`MAX_POINTS`].
fn parse_list(flag: &str, key: &str, text: &str) -> Result<Vec<String>> {
    iolab_spec::sweep::parse_list(flag, key, text, MAX_POINTS).map_err(usage)
}

/// The flags of `iolab run` that take a list in a sweep (`--qd 1,2,4`), by key.
const LIST_FLAGS: [&str; 5] = ["cache", "bs", "workers", "rate", "qd"];

/// The swept fields, in cross-product order (outermost first).
fn axes(args: &SweepArgs) -> Result<Vec<Axis>> {
    let r = &args.run;
    let mut v: Vec<Axis> = Vec::new();
    for key in LIST_FLAGS {
        if let Some(text) = r.keys.get(key) {
            let flag = format!("--{key}");
            v.push(Axis { key: key.into(), values: parse_list(&flag, key, text)?, flag });
        }
    }
    let known: Vec<&str> = iolab_spec::RUN_KEYS
        .iter()
        .chain(iolab_spec::WORKER_KEYS)
        .chain(iolab_spec::SPEC_KEYS)
        .copied()
        .collect();
    for s in &args.set {
        let Some((key, values)) = s.split_once('=') else {
            return Err(usage(format!(
                "invalid value '{s}' for '--set': expected KEY=VALUES, e.g. 'read_pct=0,50,100'"
            )));
        };
        let key = key.trim();
        let flag = format!("--set {key}");
        if iolab_spec::CONSENT_KEYS.contains(&key) {
            return Err(usage(iolab_spec::Consent::refuse(key, &iolab_spec::Place::Flag(flag))));
        }
        if !known.contains(&key) {
            let hint = iolab_spec::error::suggest(key, &known)
                .map(|k| format!("; did you mean '{k}'?"))
                .unwrap_or_default();
            return Err(usage(format!(
                "invalid value '{s}' for '--set': '{key}' is not a job key{hint} (keys are as in a job file: qd, bs, read_pct, ...)"
            )));
        }
        if key == "target" {
            return Err(usage(format!(
                "invalid value '{s}' for '--set': targets cannot be swept (a target such as 'sim:fixed,latency=..' contains commas); run one sweep per target"
            )));
        }
        if let Some(prev) = v.iter().find(|a| a.key == key) {
            return Err(usage(format!(
                "'{flag}' sweeps '{key}', which '{}' already sets; give one",
                prev.flag
            )));
        }
        if r.keys.is_given(key) {
            return Err(usage(format!("'{flag}' sweeps '{key}', which its own flag also sets; give one")));
        }
        let values = parse_list(&flag, key, values)?;
        // Each value through the key's own parser now, so an error names what the user typed.
        let place = Place::Flag(flag.clone());
        for value in &values {
            iolab_spec::keys::check(key, value, &place).map_err(usage)?;
        }
        v.push(Axis { key: key.into(), flag, values });
    }
    replay_axes(args, &mut v)?;
    // Non-load fields outermost (in the order above), then workers, rate, qd.
    order_axes(&mut v);
    Ok(v)
}

/// With `--replay`: refuses axes of the trace's own workload and adds `--speed`'s. Without it, refuses the
/// replay's flags.
fn replay_axes(args: &SweepArgs, v: &mut Vec<Axis>) -> Result<()> {
    let Some(trace) = &args.replay else {
        if let Some(flag) = [args.speed.as_ref().map(|_| "--speed"), args.map.first().map(|_| "--map")]
            .into_iter()
            .flatten()
            .next()
        {
            return Err(usage(format!("'{flag}' applies to a replay: give the trace with '--replay TRACE'")));
        }
        return Ok(());
    };
    let from_the_trace = |key: &str| crate::replaying::FROM_THE_TRACE.contains(&key);
    if let Some(a) = v.iter().find(|a| from_the_trace(&a.key)) {
        return Err(usage(format!(
            "'{}' sweeps '{}', which '--replay {trace}' takes from the trace; sweep --cache, --qd, --workers, --speed or --set cache_policy=...",
            a.flag, a.key
        )));
    }
    if let Some(text) = &args.speed {
        let values = parse_list("--speed", "speed", text)?;
        for value in &values {
            crate::replaying::parse_speed(value)?;
        }
        v.push(Axis { key: "speed".into(), flag: "--speed".into(), values });
    }
    Ok(())
}

/// Builds every point's job (and so checks every value) before anything runs; each point learns the seed
/// its job fixes. With `--replay`, each point's job is the replay's (the workload set from the trace) and
/// its source the trace (read once) at the point's speed.
fn plan_points(args: &SweepArgs, axes: &[Axis]) -> Result<(Vec<Point>, Vec<JobSpec>, Replays)> {
    let loaded = args
        .replay
        .as_deref()
        .map(|t| crate::replaying::load(t, &args.map, args.spread, &args.run))
        .transpose()?;
    let mut points = iolab_run::sweep::points(axes).map_err(usage)?;
    let mut jobs = Vec::with_capacity(points.len());
    let mut replays = Vec::with_capacity(points.len());
    for (index, p) in points.iter_mut().enumerate() {
        let mut run = args.run.clone();
        if index > 0 {
            run.keys.forget_notes(); // said with the first point's job
        }
        let mut speed = Some(1.0);
        for (a, value) in axes.iter().zip(&p.values) {
            if a.key == "speed" {
                speed = crate::replaying::parse_speed(value)?;
            } else {
                // A swept value takes the path of the flag: the point is `iolab run` with that flag.
                run.keys.set(&a.key, Some(value.clone()));
            }
        }
        if let Some(l) = &loaded {
            l.set_workload(&mut run)?;
        }
        replays.push(loaded.as_ref().map(|l| l.at(speed)));
        let ctx = || format!("sweep point {}", p.describe());
        let job = build_job(&run).with_context(ctx)?;
        p.seed = job.seed;
        jobs.push(job);
    }
    Ok((points, jobs, replays))
}

/// Per point, the trace it replays (`iolab sweep --replay`), or none.
type Replays = Vec<Option<iolab_run::replay::ReplaySource>>;

fn parse_pct(flag: &str, v: &Option<String>, default: f64) -> Result<f64> {
    match v {
        None => Ok(default),
        Some(t) => iolab_spec::units::parse_percent(t)
            .map_err(|e| usage(format!("invalid value '{t}' for '{flag}': expected {e}"))),
    }
}

/// The sweep's own options, parsed from its flags before anything else.
fn parse_options(args: &SweepArgs) -> Result<SweepOptions> {
    let trials: u32 =
        args.trials.trim().parse().ok().filter(|t| (1..=MAX_TRIALS).contains(t)).ok_or_else(|| {
            usage(format!(
                "invalid value '{}' for '--trials': expected a whole number from 1 to {MAX_TRIALS}",
                args.trials
            ))
        })?;
    let knee_iops_gain_pct = parse_pct("--knee-iops-gain", &args.knee_iops_gain, DEFAULT_KNEE_IOPS_GAIN_PCT)?;
    let knee_lat_growth_pct =
        parse_pct("--knee-lat-growth", &args.knee_lat_growth, DEFAULT_KNEE_LAT_GROWTH_PCT)?;
    let max_p99_ns = match &args.max_p99 {
        None => None,
        Some(t) => Some(parse_duration_ns(t).ok().filter(|&n| n > 0).ok_or_else(|| {
            usage(format!("invalid value '{t}' for '--max-p99': expected a duration above 0, e.g. '2ms'"))
        })?),
    };
    let rule = steady_rule(&args.run.steady)?;
    Ok(SweepOptions { trials, knee_iops_gain_pct, knee_lat_growth_pct, max_p99_ns, rule })
}

/// Runs `iolab sweep`.
pub fn sweep(args: &SweepArgs) -> Result<ExitStatus> {
    // 1. Everything that can reject the input, before anything is created.
    let opts = parse_options(args)?;
    let axes = axes(args)?;
    let (points, jobs, replays) = plan_points(args, &axes)?;
    if args.replay.is_some() && args.run.steady.steady_state.is_some() {
        return Err(usage("a replay replays the trace once: '--steady-state' does not apply"));
    }
    crate::points::run_points(&args.run, &opts, &axes, points, (jobs, replays))
}
