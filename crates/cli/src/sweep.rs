//! `iolab sweep`: one job across values of one or more fields (`--qd 1..64:x2`, `--bs 512..1m:x2`,
//! `--set read_pct=0,50,100`), each point repeated `--trials` times, with the knee and the `--max-p99` point
//! found along the load axis; plus steady-state detection (`--steady-state`), which `iolab run` shares.
//!
//! A point is the `iolab run` arguments with the swept fields set to that point's values, built by
//! [`crate::run::build_job`] and run by [`crate::run::execute`]; so a point's result is exactly what
//! `iolab run` would print for the same flags. Every point's job is built and dry-run (planned, targets
//! probed, plan bound) before the first one runs, so a bad value anywhere in a list is an error with nothing
//! created. The analysis and the renderings are pure and live in `iolab_report::sweep`. docs/SWEEPS.md is
//! the user's guide.

use crate::args::RunArgs;
use crate::run::{build_job, execute, outcome_of, parse_interval, usage, ExecOptions, Executed, Outcome};
use anyhow::{Context, Result};
use clap::Args;
use iolab_report::export::steady_state_line;
use iolab_report::steady::{SteadyStateResult, SteadyStateRule, SteadyStateTracker};
use iolab_report::sweep::{
    PointSummary, SweepAxis, SweepPoint, SweepResult, TrialMetrics, DEFAULT_KNEE_IOPS_GAIN_PCT,
    DEFAULT_KNEE_LAT_GROWTH_PCT, SWEEP_SCHEMA,
};
use iolab_report::{CsvExporter, Document, JsonExporter, RunResult, TextExporter};
use iolab_spec::units::{format_size, parse_count, parse_duration_ns, parse_size};
use iolab_spec::{JobSpec, Place};
use std::collections::BTreeMap;
use std::io::IsTerminal;

/// Most points one sweep may have (the product of the lists' lengths).
pub const MAX_POINTS: usize = 1000;
/// Most trials per point.
pub const MAX_TRIALS: u32 = 100;

/// `iolab sweep` options: every `iolab run` option, where `--qd`, `--bs`, `--workers`, `--rate` and `--cache`
/// take lists.
#[derive(Args, Debug, Default)]
pub struct SweepArgs {
    /// The run options (job file, target, ...). `--qd`, `--bs`, `--workers`, `--rate` and `--cache` take
    /// lists (`--cache 0,25%,50%,100%` is the seeds' cache-size table): comma lists ('1,2,4,8') and ranges 'FROM..TO:xF' (multiply by F) or 'FROM..TO:+STEP' (add STEP), mixed
    /// freely ('1,3..9:+3'). A block-size split ('4k/60:8k/40') is one value.
    #[command(flatten)]
    pub run: RunArgs,
    /// Sweep any job key by name: KEY=VALUES, with VALUES a list as for --qd (e.g. 'read_pct=0,50,100',
    /// 'rw=randread,randwrite', 'size=1g..8g:x2'). Repeatable; several swept fields give the cross product:
    /// outermost first the non-load fields (bs, then --set keys in the order given), then workers, rate and
    /// qd innermost. At most 1000 points.
    #[arg(long = "set", value_name = "KEY=VALUES")]
    pub set: Vec<String>,
    /// Runs per point, 1-100. Trial t (from 0) of every point uses seed BASE+t, BASE being --seed (or the
    /// job's seed, or a fresh one), printed. With 2 or more, each metric gets its mean, a Student-t 95 %
    /// confidence interval and its spread (min..max, coefficient of variation). Default 1.
    #[arg(long, value_name = "N", default_value = "1", allow_hyphen_values = true)]
    pub trials: String,
    /// Knee rule, IOPS side: the knee is the first point after which IOPS grows by less than this percent
    /// while p99 latency grows by more than --knee-lat-growth. Default 10.
    #[arg(long, value_name = "PCT", allow_hyphen_values = true)]
    pub knee_iops_gain: Option<String>,
    /// Knee rule, latency side (see --knee-iops-gain). Default 20.
    #[arg(long, value_name = "PCT", allow_hyphen_values = true)]
    pub knee_lat_growth: Option<String>,
    /// Marks, on each line of the load axis, the highest load whose p99 latency stays at or under this
    /// duration (e.g. '2ms'); points after the first one over it do not count.
    #[arg(long, value_name = "DUR", allow_hyphen_values = true)]
    pub max_p99: Option<String>,
}

/// Steady-state options, shared by `iolab run` and `iolab sweep` (flattened into [`RunArgs`]).
#[derive(Args, Debug, Default, Clone)]
pub struct SteadyStateFlags {
    /// Run until the workload is steady (fio's steadystate=iops:PCT): METRIC:PCT, METRIC being iops (all ops
    /// per second) or lat (mean response time), steady when every interval of the last
    /// --steady-state-window is within PCT % of the window's mean. The run then ends, complete; the
    /// --steady-state-limit replaces --duration. The result's 'steady_state' says whether it was reached,
    /// after how long, and the window's values. In a sweep this preconditions once, with the first point's
    /// job, before the first point.
    #[arg(long, value_name = "METRIC:PCT")]
    pub steady_state: Option<String>,
    /// Window of --steady-state. Default 30s; at least 2 intervals.
    #[arg(long, value_name = "DUR", allow_hyphen_values = true)]
    pub steady_state_window: Option<String>,
    /// Longest a --steady-state run lasts (after the ramp), steady or not. Default 10m.
    #[arg(long, value_name = "DUR", allow_hyphen_values = true)]
    pub steady_state_limit: Option<String>,
}

/// The steady-state rule the flags ask for; `None` without `--steady-state`.
pub fn steady_rule(f: &SteadyStateFlags) -> Result<Option<SteadyStateRule>> {
    let Some(text) = &f.steady_state else {
        if f.steady_state_window.is_some() || f.steady_state_limit.is_some() {
            return Err(usage(
                "'--steady-state-window' and '--steady-state-limit' need '--steady-state METRIC:PCT'",
            ));
        }
        return Ok(None);
    };
    const EXP: &str = "METRIC:PCT with METRIC iops or lat and PCT above 0, e.g. 'iops:5%'";
    let bad = || usage(format!("invalid value '{text}' for '--steady-state': expected {EXP}"));
    let (metric, pct) = text.split_once(':').ok_or_else(bad)?;
    let metric = match metric.trim() {
        "iops" => "iops",
        "lat" => "lat",
        _ => return Err(bad()),
    };
    let pct = iolab_spec::units::parse_percent(pct).map_err(|_| bad())?;
    if pct <= 0.0 {
        return Err(bad());
    }
    let dur = |flag: &str, v: &Option<String>, default: &str| -> Result<f64> {
        let t = v.as_deref().unwrap_or(default);
        match parse_duration_ns(t) {
            Ok(ns) if ns > 0 => Ok(ns as f64 / 1e9),
            _ => Err(usage(format!(
                "invalid value '{t}' for '{flag}': expected a duration above 0, e.g. '30s'"
            ))),
        }
    };
    let window_s = dur("--steady-state-window", &f.steady_state_window, "30s")?;
    let limit_s = dur("--steady-state-limit", &f.steady_state_limit, "10m")?;
    if window_s > limit_s {
        return Err(usage(format!(
            "'--steady-state-window' ({window_s} s) is longer than '--steady-state-limit' ({limit_s} s): the window could never fill"
        )));
    }
    Ok(Some(SteadyStateRule { metric: metric.into(), max_dev_pct: pct, window_s, limit_s }))
}

/// Runs `job` until steady (or the rule's limit): the job's duration becomes the limit, and each finished
/// interval is fed to a [`SteadyStateTracker`]; reaching steady state ends the measurement, complete.
pub fn run_until_steady(
    mut job: JobSpec,
    rule: &SteadyStateRule,
    interval_ns: u64,
    quiet: bool,
    live: bool,
) -> Result<(Box<RunResult>, SteadyStateResult)> {
    job.duration_ns = Some((rule.limit_s * 1e9) as u64);
    job.ios = None;
    job.bytes = None;
    let mut tracker = SteadyStateTracker::new(rule.clone(), interval_ns as f64 / 1e9);
    let mut cb = |_k: u64, p: &iolab_stats::TimePoint| tracker.push(p.iops, p.lat_mean_ns);
    let mut opts = ExecOptions { interval_ns, quiet, live, on_interval: Some(&mut cb), check: None };
    let _note = crate::progress::MeasureNote::set("until steady");
    let result = match execute(job, false, &mut opts)? {
        Executed::Done(r) => r,
        Executed::DryRun(_) => anyhow::bail!("a steady-state run cannot be a dry run (bug)"),
    };
    Ok((result, tracker.result()))
}

/// What kind of value a key takes, for ranges and the load axis.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    /// Bytes: '4k', '1m'.
    Size,
    /// A number: '8', '10k'.
    Count,
    /// Anything else: lists only.
    Text,
}

fn kind_of(key: &str) -> Kind {
    match key {
        "bs" | "size" | "offset" | "length" | "align" | "bytes" => Kind::Size,
        "qd" | "workers" | "rate" | "ios" | "read_pct" | "random_pct" | "weight" | "seed" => Kind::Count,
        _ => Kind::Text,
    }
}

/// Load axes, outermost first: the knee is found along the innermost one swept.
const LOAD_KEYS: [&str; 3] = ["workers", "rate", "qd"];

/// Parses a list: comma-separated items, each a value or a range 'FROM..TO:xF' / 'FROM..TO:+STEP'.
fn parse_list(flag: &str, key: &str, text: &str) -> Result<Vec<String>> {
    let kind = kind_of(key);
    let err = |why: &str| usage(format!("invalid value '{text}' for '{flag}': {why}"));
    let mut out: Vec<String> = Vec::new();
    for item in text.split(',') {
        let item = item.trim();
        if item.is_empty() {
            return Err(err("expected a comma-separated list of values or ranges such as '1,2,4' or '1..64:x2'; found an empty item"));
        }
        let Some((from, rest)) = item.split_once("..") else {
            out.push(item.to_string());
            continue;
        };
        if kind == Kind::Text {
            return Err(err(&format!(
                "'{item}' is a range, but '{key}' is not numeric; list its values instead"
            )));
        }
        let (to, step) = rest.split_once(':').ok_or_else(|| {
            err(&format!("the range '{item}' has no step; expected FROM..TO:xFACTOR or FROM..TO:+STEP, e.g. '1..64:x2'"))
        })?;
        let num = |t: &str| -> Result<f64> {
            let v = match kind {
                Kind::Size => parse_size(t).map(|v| v as f64),
                _ => parse_count(t),
            };
            v.map_err(|e| err(&format!("'{t}' in the range '{item}' is not valid: expected {e}")))
        };
        let (from_v, to_v) = (num(from)?, num(to)?);
        if from_v > to_v {
            return Err(err(&format!("the range '{item}' runs backwards; expected FROM <= TO")));
        }
        let step = step.trim();
        let next: Box<dyn Fn(f64) -> f64> = if let Some(f) = step.strip_prefix('x').or(step.strip_prefix('*'))
        {
            let f: f64 =
                f.trim().parse().ok().filter(|f: &f64| f.is_finite() && *f > 1.0).ok_or_else(|| {
                    err(&format!("the step '{step}' of '{item}' is not a factor above 1; expected e.g. 'x2'"))
                })?;
            if from_v <= 0.0 {
                return Err(err(&format!("the range '{item}' multiplies from 0; start at 1 or more")));
            }
            Box::new(move |v| v * f)
        } else if let Some(s) = step.strip_prefix('+') {
            let s = num(s)?;
            if s <= 0.0 {
                return Err(err(&format!("the step '{step}' of '{item}' is not above 0")));
            }
            Box::new(move |v| v + s)
        } else {
            return Err(err(&format!(
                "the step '{step}' of '{item}' is neither xFACTOR nor +STEP, e.g. 'x2' or '+4k'"
            )));
        };
        let mut v = from_v;
        while v <= to_v * (1.0 + 1e-12) {
            if out.len() > MAX_POINTS {
                return Err(err(&format!("more than {MAX_POINTS} values")));
            }
            out.push(match kind {
                Kind::Size => format_size(v.round() as u64),
                _ if v.fract() == 0.0 => format!("{v:.0}"),
                _ => format!("{v}"),
            });
            v = next(v);
        }
    }
    Ok(out)
}

/// One swept field.
struct Axis {
    key: String,
    /// The flag the user typed (`--qd`, `--set read_pct`), for errors.
    flag: String,
    values: Vec<String>,
}

/// The swept fields, in cross-product order (outermost first).
fn axes(args: &SweepArgs) -> Result<Vec<Axis>> {
    let r = &args.run;
    let mut v: Vec<Axis> = Vec::new();
    for (key, flag, value) in [
        ("cache", "--cache", &r.cache),
        ("bs", "--bs", &r.bs),
        ("workers", "--workers", &r.workers),
        ("rate", "--rate", &r.rate),
        ("qd", "--qd", &r.qd),
    ] {
        if let Some(text) = value {
            v.push(Axis { key: key.into(), flag: flag.into(), values: parse_list(flag, key, text)? });
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
        if single_flag(r, key).is_some() {
            return Err(usage(format!("'{flag}' sweeps '{key}', which its own flag also sets; give one")));
        }
        let values = parse_list(&flag, key, values)?;
        // Each value through the key's own parser now, so an error names what the user typed.
        let place = Place::Flag(flag.clone());
        for value in &values {
            let mut probe = JobSpec::default();
            if !probe.forced.set(key, value, &place).map_err(usage)? {
                probe.set_run(key, value, &place).map_err(usage)?;
            }
        }
        v.push(Axis { key: key.into(), flag, values });
    }
    // Non-load fields outermost (in the order above), then workers, rate, qd.
    v.sort_by_key(|a| LOAD_KEYS.iter().position(|k| *k == a.key).map_or(0, |i| i + 1));
    Ok(v)
}

/// The RunArgs field that carries `key`, if any (so a swept value takes the same path as the flag).
fn single_flag<'a>(r: &'a RunArgs, key: &str) -> Option<&'a String> {
    match key {
        "size" => r.size.as_ref(),
        "offset" => r.offset.as_ref(),
        "length" => r.length.as_ref(),
        "rw" => r.rw.as_ref(),
        "read_pct" => r.read_pct.as_ref(),
        "random_pct" => r.random_pct.as_ref(),
        "align" => r.align.as_ref(),
        "dist" => r.dist.as_ref(),
        "arrival" => r.arrival.as_ref(),
        "data" => r.data.as_ref(),
        "duration" => r.duration.as_ref(),
        "ramp" => r.ramp.as_ref(),
        "ios" => r.ios.as_ref(),
        "bytes" => r.bytes.as_ref(),
        "seed" => r.seed.as_ref(),
        "engine" => r.engine.as_ref(),
        "clock" => r.clock.as_ref(),
        "cache_dev" => r.cache_dev.as_ref(),
        "cache_line" => r.cache_line.as_ref(),
        "cache_mode" => r.cache_mode.as_ref(),
        "cache_policy" => r.cache_policy.as_ref(),
        "cache_admit" => r.cache_admit.as_ref(),
        "cache_seq_cutoff" => r.cache_seq_cutoff.as_ref(),
        "cache_max_mem" => r.cache_max_mem.as_ref(),
        "cache_dirty_max" => r.cache_dirty_max.as_ref(),
        _ => None,
    }
}

/// Sets `key` to `value` in the point's arguments; `false` when RunArgs has no field for it.
fn set_field(r: &mut RunArgs, key: &str, value: &str) -> bool {
    let v = Some(value.to_string());
    match key {
        "bs" => r.bs = v,
        "qd" => r.qd = v,
        "workers" => r.workers = v,
        "rate" => r.rate = v,
        "size" => r.size = v,
        "offset" => r.offset = v,
        "length" => r.length = v,
        "rw" => r.rw = v,
        "read_pct" => r.read_pct = v,
        "random_pct" => r.random_pct = v,
        "align" => r.align = v,
        "dist" => r.dist = v,
        "arrival" => r.arrival = v,
        "data" => r.data = v,
        "duration" => r.duration = v,
        "ramp" => r.ramp = v,
        "ios" => r.ios = v,
        "bytes" => r.bytes = v,
        "seed" => r.seed = v,
        "engine" => r.engine = v,
        "clock" => r.clock = v,
        "cache" => r.cache = v,
        "cache_dev" => r.cache_dev = v,
        "cache_line" => r.cache_line = v,
        "cache_mode" => r.cache_mode = v,
        "cache_policy" => r.cache_policy = v,
        "cache_admit" => r.cache_admit = v,
        "cache_seq_cutoff" => r.cache_seq_cutoff = v,
        "cache_max_mem" => r.cache_max_mem = v,
        "cache_dirty_max" => r.cache_dirty_max = v,
        _ => return false,
    }
    true
}

/// One point, ready to run.
struct Planned {
    params: BTreeMap<String, String>,
    job: JobSpec,
    line: usize,
    load: Option<f64>,
}

/// Builds every point's job (and so checks every value) before anything runs.
fn plan_points(args: &SweepArgs, axes: &[Axis], load_axis: Option<&str>) -> Result<Vec<Planned>> {
    let count =
        axes.iter().try_fold(1usize, |n, a| n.checked_mul(a.values.len()).filter(|&n| n <= MAX_POINTS));
    let Some(count) = count else {
        let sizes: Vec<String> = axes.iter().map(|a| format!("{} {}", a.flag, a.values.len())).collect();
        return Err(usage(format!(
            "the sweep has more than {MAX_POINTS} points ({}); shorten a list or split the sweep",
            sizes.join(" × ")
        )));
    };
    let mut points = Vec::with_capacity(count);
    let mut lines: Vec<BTreeMap<String, String>> = Vec::new();
    for i in 0..count {
        // Odometer: the last axis varies fastest.
        let mut rem = i;
        let mut chosen: Vec<(&Axis, &String)> = Vec::with_capacity(axes.len());
        for a in axes.iter().rev() {
            chosen.push((a, &a.values[rem % a.values.len()]));
            rem /= a.values.len();
        }
        chosen.reverse();
        let mut run = args.run.clone();
        let mut extra = JobSpec::default();
        let mut params = BTreeMap::new();
        for (a, value) in &chosen {
            // A one-value "list" is a plain setting, applied but not shown as swept.
            if a.values.len() > 1 {
                params.insert(a.key.clone(), (*value).clone());
            }
            if !set_field(&mut run, &a.key, value) {
                let place = Place::Flag(a.flag.clone());
                let known = extra.forced.set(&a.key, value, &place).map_err(usage)?
                    || extra.set_run(&a.key, value, &place).map_err(usage)?;
                if !known {
                    return Err(usage(format!("'{}': '{}' cannot be swept", a.flag, a.key)));
                }
            }
        }
        let ctx = || format!("sweep point {}", describe(&params));
        let mut job = build_job(&run).with_context(ctx)?;
        job.apply_overrides(&extra);
        let mut line_key = params.clone();
        let load = load_axis.and_then(|k| line_key.remove(k)).and_then(|v| parse_count(&v).ok());
        let line = match lines.iter().position(|l| *l == line_key) {
            Some(l) => l,
            None => {
                lines.push(line_key);
                lines.len() - 1
            }
        };
        points.push(Planned { params, job, line, load });
    }
    Ok(points)
}

/// `qd=8 bs=4k`, for messages.
fn describe(params: &BTreeMap<String, String>) -> String {
    if params.is_empty() {
        return "(no swept field)".into();
    }
    params.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" ")
}

fn parse_pct(flag: &str, v: &Option<String>, default: f64) -> Result<f64> {
    match v {
        None => Ok(default),
        Some(t) => iolab_spec::units::parse_percent(t)
            .map_err(|e| usage(format!("invalid value '{t}' for '{flag}': expected {e}"))),
    }
}

/// A fresh base seed (OS-keyed hasher, time, pid), short enough to type back.
fn fresh_seed() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0),
    );
    h.write_u32(std::process::id());
    h.finish() % 1_000_000_000_000
}

/// Runs `iolab sweep`.
pub fn sweep(args: &SweepArgs) -> Result<Outcome> {
    // 1. Everything that can reject the input, before anything is created.
    let trials: u32 =
        args.trials.trim().parse().ok().filter(|t| (1..=MAX_TRIALS).contains(t)).ok_or_else(|| {
            usage(format!(
                "invalid value '{}' for '--trials': expected a whole number from 1 to {MAX_TRIALS}",
                args.trials
            ))
        })?;
    let gain = parse_pct("--knee-iops-gain", &args.knee_iops_gain, DEFAULT_KNEE_IOPS_GAIN_PCT)?;
    let growth = parse_pct("--knee-lat-growth", &args.knee_lat_growth, DEFAULT_KNEE_LAT_GROWTH_PCT)?;
    let max_p99_ns = match &args.max_p99 {
        None => None,
        Some(t) => Some(parse_duration_ns(t).ok().filter(|&n| n > 0).ok_or_else(|| {
            usage(format!("invalid value '{t}' for '--max-p99': expected a duration above 0, e.g. '2ms'"))
        })?),
    };
    let rule = steady_rule(&args.run.steady)?;
    let interval_ns = parse_interval(&args.run.interval)?;
    let axes = axes(args)?;
    let load_axis: Option<String> = axes
        .iter()
        .rev()
        .find(|a| LOAD_KEYS.contains(&a.key.as_str()) && a.values.len() > 1)
        .map(|a| a.key.clone());
    let planned = plan_points(args, &axes, load_axis.as_deref())?;
    let base_seed = planned.first().and_then(|p| p.job.seed).unwrap_or_else(fresh_seed);
    let quiet = args.run.quiet;
    let mut dry = Vec::new();
    // Each point's planned ramp + duration, for the ETA of the whole sweep.
    let mut planned_s: Vec<Option<f64>> = Vec::new();
    for p in &planned {
        let mut check = ExecOptions { interval_ns, quiet: true, live: false, on_interval: None, check: None };
        let doc = execute(p.job.clone(), true, &mut check)
            .with_context(|| format!("sweep point {}", describe(&p.params)))?;
        if let Executed::DryRun(d) = doc {
            planned_s.push(crate::progress::planned_run_s(&d));
            dry.push(serde_json::json!({ "params": p.params, "plan": d }));
        }
    }
    // The catalog opens before anything is created or run: a bad one is an exit-2 error with nothing done.
    let saver = crate::catalog_cmd::Saver::open(&args.run.catalog, quiet, args.run.dry_run)?;
    if args.run.dry_run {
        let doc = serde_json::json!({ "schema": SWEEP_SCHEMA, "dry_run": true, "base_seed": base_seed, "trials": trials, "points": dry });
        crate::run::write_out("-", &serde_json::to_string_pretty(&doc)?)?;
        return Ok(Outcome::Ok);
    }

    // 2. Run: preconditioning once, then every point × trial, holding the scratch files throughout.
    let _scratch_guard = iolab_device::ScratchGuard;
    let terminal = !quiet && std::io::stderr().is_terminal();
    let (started_at, _) = crate::env::now_rfc3339();
    let mut doc = SweepResult {
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
        load_axis: load_axis.clone(),
        points_planned: planned.len(),
        preconditioning: None,
        points: Vec::new(),
        knee: None,
        max_p99: None,
    };
    let runs_s = planned_s.iter().flat_map(|&s| std::iter::repeat_n(s, trials as usize)).collect();
    let overall = crate::progress::OverallBar::sweep(terminal, runs_s);
    if let (Some(rule), Some(first)) = (&rule, planned.first()) {
        if terminal {
            let what = format!(
                "preconditioning with {} until steady ({})",
                describe(&first.params),
                args.run.steady.steady_state.as_deref().unwrap_or("")
            );
            overall.println(&format!("iolab: {what}"));
            overall.begin(&what, false);
        }
        let mut job = first.job.clone();
        job.seed = Some(job.seed.unwrap_or(base_seed));
        let (r, mut ss) = run_until_steady(job, rule, interval_ns, quiet, terminal)?;
        ss.params = Some(first.params.clone());
        if terminal {
            overall.println(&format!("iolab: preconditioning: {}", steady_state_line(&ss)));
        }
        doc.preconditioning = Some(ss);
        if r.partial || crate::signals::stop_requested() {
            doc.partial = true;
        }
    }
    'points: for (index, p) in planned.iter().enumerate() {
        if doc.partial {
            break;
        }
        let mut results: Vec<RunResult> = Vec::new();
        for t in 0..trials {
            if crate::signals::stop_requested() {
                doc.partial = true;
                break;
            }
            if terminal {
                let trial = if trials > 1 { format!(", trial {}/{trials}", t + 1) } else { String::new() };
                overall.begin(
                    &format!("point {}/{}: {}{trial}", index + 1, planned.len(), describe(&p.params)),
                    true,
                );
            }
            let mut job = p.job.clone();
            job.seed = Some(job.seed.unwrap_or(base_seed).wrapping_add(t as u64));
            let judged = job.clone();
            let mut opts = ExecOptions { interval_ns, quiet, live: terminal, on_interval: None, check: None };
            let mut r = match execute(job, false, &mut opts)
                .with_context(|| format!("sweep point {}", describe(&p.params)))?
            {
                Executed::Done(r) => r,
                Executed::DryRun(_) => anyhow::bail!("a sweep point ran as a dry run (bug)"),
            };
            crate::profile::judge(&judged, &args.run.profile, &mut r);
            overall.end();
            let stop = r.partial || crate::signals::stop_requested();
            results.push(*r);
            if stop {
                doc.partial = true;
                break;
            }
        }
        if results.is_empty() {
            break 'points;
        }
        let metrics: Vec<TrialMetrics> = results.iter().map(TrialMetrics::from_result).collect();
        let summary = PointSummary::from_trials(&metrics);
        let mut first = results.swap_remove(0);
        first.partial = first.partial || metrics.iter().any(|m| m.partial);
        doc.points.push(SweepPoint {
            index,
            params: p.params.clone(),
            line: p.line,
            load: p.load,
            result: first,
            trials: if trials > 1 { metrics } else { Vec::new() },
            summary,
        });
    }
    drop(overall);
    doc.analyze(gain, growth, max_p99_ns);

    // 3. Save (one catalog entry for the whole sweep), then output.
    let saved = crate::catalog_cmd::save(
        saver.as_ref(),
        iolab_catalog::EntryKind::Sweep,
        &JsonExporter.render(&Document::Sweep(&doc)),
    );
    let (json, csv) = (args.run.json.as_deref(), args.run.csv.as_deref());
    if !quiet && json != Some("-") && csv != Some("-") {
        crate::run::write_out("-", &TextExporter.render(&Document::Sweep(&doc)))?;
    }
    if let Some(path) = json {
        crate::run::write_out(path, &JsonExporter.render(&Document::Sweep(&doc)))
            .with_context(|| format!("writing --json '{path}'"))?;
    }
    if let Some(path) = csv {
        crate::run::write_out(path, &CsvExporter.render(&Document::Sweep(&doc))?)
            .with_context(|| format!("writing --csv '{path}'"))?;
    }
    saved?;
    let mut outcome = Outcome::Ok;
    for p in &doc.points {
        match outcome_of(&p.result) {
            Outcome::IoErrors => outcome = Outcome::IoErrors,
            Outcome::Fail if matches!(outcome, Outcome::Ok) => outcome = Outcome::Fail,
            _ => {}
        }
    }
    Ok(outcome)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(key: &str, text: &str) -> Vec<String> {
        parse_list("--x", key, text).unwrap()
    }

    fn err(key: &str, text: &str) -> String {
        format!("{:#}", parse_list("--x", key, text).unwrap_err())
    }

    #[test]
    fn list_comma_and_ranges() {
        assert_eq!(list("qd", "1,2,4"), ["1", "2", "4"]);
        assert_eq!(list("qd", "1..64:x2"), ["1", "2", "4", "8", "16", "32", "64"]);
        assert_eq!(list("qd", "1..10:x2"), ["1", "2", "4", "8"]);
        assert_eq!(list("rate", "1000..3000:+1000"), ["1000", "2000", "3000"]);
        assert_eq!(list("rate", "10k..20k:+5k"), ["10000", "15000", "20000"]);
        assert_eq!(list("qd", "1,3..9:+3"), ["1", "3", "6", "9"]);
    }

    #[test]
    fn list_sizes_format_back_in_binary_units() {
        assert_eq!(list("bs", "512..4k:x2"), ["512", "1K", "2K", "4K"]);
        assert_eq!(list("bs", "4k..16k:+4k"), ["4K", "8K", "12K", "16K"]);
        assert_eq!(list("bs", "512..1m:x2").len(), 12);
    }

    #[test]
    fn list_block_size_split_is_one_value() {
        assert_eq!(list("bs", "4k/60:8k/40"), ["4k/60:8k/40"]);
        assert_eq!(list("bs", "4k/60:8k/40,64k"), ["4k/60:8k/40", "64k"]);
    }

    #[test]
    fn list_errors_quote_flag_and_text() {
        assert!(err("qd", "1,,2").starts_with("invalid value '1,,2' for '--x': "), "{}", err("qd", "1,,2"));
        assert!(err("qd", "").contains("empty item"));
        assert!(err("qd", "64..1:x2").contains("backwards"));
        assert!(err("qd", "1..64").contains("no step"));
        assert!(err("qd", "1..64:x1").contains("factor above 1"));
        assert!(err("qd", "1..64:y2").contains("neither"));
        assert!(err("qd", "0..64:x2").contains("from 0"));
        assert!(err("qd", "1..q:x2").contains("'q' in the range"));
        assert!(err("rw", "a..b:x2").contains("not numeric"));
        assert!(err("qd", "1..1000000:+1").contains("more than 1000"));
    }

    #[test]
    fn steady_rule_parses_and_rejects() {
        let f = |s: &str| SteadyStateFlags { steady_state: Some(s.into()), ..Default::default() };
        let r = steady_rule(&f("iops:5%")).unwrap().unwrap();
        assert_eq!((r.metric.as_str(), r.max_dev_pct, r.window_s, r.limit_s), ("iops", 5.0, 30.0, 600.0));
        assert!(format!("{:#}", steady_rule(&f("bw:5")).unwrap_err()).contains("'--steady-state'"));
        assert!(steady_rule(&f("iops:0")).is_err());
        let lone = SteadyStateFlags { steady_state_window: Some("5s".into()), ..Default::default() };
        assert!(steady_rule(&lone).is_err());
        let long = SteadyStateFlags {
            steady_state: Some("lat:2".into()),
            steady_state_window: Some("20m".into()),
            ..Default::default()
        };
        assert!(format!("{:#}", steady_rule(&long).unwrap_err()).contains("never fill"));
    }
}
