//! From flags to what runs: the job `iolab run` (and each sweep point, search step and `iolab verify`)
//! asks for, the `--interval`, and the `--steady-state` rule. The job file or profile comes first, the
//! flags on top, then the users flags and Exchange sizing, each through `iolab-spec`'s parsers so an error
//! quotes what the user typed.

use crate::args::{RunArgs, SteadyStateFlags};
use crate::exit::usage;
use anyhow::Result;
use iolab_report::steady::SteadyStateRule;
use iolab_spec::units::parse_duration_ns;
use iolab_spec::JobSpec;

/// The job `iolab run` asked for: the job file, then the command-line flags on top.
pub fn build_job(args: &RunArgs) -> Result<JobSpec> {
    let mut job = match (&args.job, crate::profile::load(&args.profile)?) {
        (Some(_), Some(_)) => {
            return Err(usage("give a job file or --profile NAME, not both (`iolab profiles show NAME > job.toml` makes a job file to edit)"))
        }
        (Some(path), None) => {
            let targets: Vec<String> = args.keys.all("target").map(str::to_string).collect();
            load_job_file(path, args.quiet, &targets, &args.fio.section)?
        }
        (None, job) if !args.fio.section.is_empty() => {
            let what = if job.is_some() { "a profile" } else { "no job file" };
            return Err(usage(format!(
                "--section '{}' picks job sections of a fio job file, but this run has {what}; give the fio job \
                 file (`iolab run FILE.fio --section NAME`)",
                args.fio.section[0]
            )));
        }
        (None, Some(job)) => job,
        (None, None) => JobSpec::default(),
    };
    let cli = args.to_overrides().map_err(usage)?;
    if !args.quiet {
        for note in args.keys.notes() {
            eprintln!("iolab: note: {note}");
        }
    }
    let given: Vec<String> = cli.targets.keys().cloned().collect();
    job.check_target_names(&given).map_err(usage)?;
    job.direct_set_by = job.direct.and(set_by(args));
    job.apply_overrides(&cli);
    crate::loadgen::apply_flags(&args.loadgen, &mut job).map_err(usage)?;
    crate::profile::resolve(&mut job, &args.profile)?;
    Ok(job)
}

/// Who set the job's settings before the command line's: "the profile 'etcd'" or "the job file 'j.toml'",
/// as hints name them ([`JobSpec::direct_set_by`]).
fn set_by(args: &RunArgs) -> Option<String> {
    match (&args.profile.profile, &args.job) {
        (Some(name), _) => Some(format!("the profile '{name}'")),
        (None, Some(path)) => Some(format!("the job file '{path}'")),
        (None, None) => None,
    }
}

/// Reads a job file: iolab's TOML, a fio job file or an Iometer configuration (recognised by their content,
/// whatever their name), translated as `iolab import` translates them; `targets` are the `--target` values: a
/// fio job with no size does one pass over the one target given (when its size is known), and an Iometer
/// target they already map is not announced. `sections` (`--section`) picks a fio file's job sections; with
/// any other file it is refused.
fn load_job_file(path: &str, quiet: bool, targets: &[String], sections: &[String]) -> Result<JobSpec> {
    let text = read_text(path)?;
    let fio = iolab_import::looks_like_fio(&text);
    if let (Some(name), false) = (sections.first(), fio) {
        return Err(usage(format!(
            "--section '{name}' picks job sections of a fio job file, but '{path}' is {}",
            if iolab_import::iometer::looks_like_icf(&text) {
                "an Iometer configuration"
            } else {
                "an iolab job file"
            }
        )));
    }
    let toml = if fio {
        let given = given_target(targets);
        translate_fio_given(&text, path, (quiet, sections), given)?
    } else if iolab_import::iometer::looks_like_icf(&text) {
        translate_icf_mapped(&text, path, quiet, targets)?
    } else {
        text
    };
    JobSpec::from_toml(&toml, path).map_err(usage)
}

/// Reads a job file the user named; a missing or unreadable one is the user's error, quoting the path.
pub fn read_text(path: &str) -> Result<String> {
    iolab_spec::input::read_text(path.as_ref(), "the job file", iolab_spec::input::MAX_JOB_FILE_BYTES)
        .map_err(usage)
}

/// Translates a fio job file's text into an iolab job file's, reading only the job sections `sections` names
/// (fio's `--section`; all when empty), saying on stderr (unless `quiet`) each option dropped because it does
/// not change the I/O.
pub fn translate_fio(text: &str, file: &str, quiet: bool, sections: &[String]) -> Result<String> {
    translate_fio_given(text, file, (quiet, sections), iolab_import::Given::default())
}

/// [`translate_fio`] for a run whose command line gives `given`; the notes (where fio would issue other I/O)
/// are said too.
fn translate_fio_given(
    text: &str,
    file: &str,
    (quiet, sections): (bool, &[String]),
    given: iolab_import::Given,
) -> Result<String> {
    let vars = iolab_import::FioVars { sections: sections.to_vec(), ..iolab_import::FioVars::of_process() };
    let t = iolab_import::translate_with(text, file, given, &vars).map_err(usage)?;
    if !quiet {
        for i in &t.ignored {
            eprintln!(
                "iolab: {file}: ignored fio option '{}' ([{}], line {}): {}",
                i.option, i.section, i.line, i.why
            );
        }
        for n in &t.notes {
            eprintln!("iolab: {file}: note ([{}], line {}): {}", n.section, n.line, n.text);
        }
    }
    Ok(t.toml)
}

/// What a fio job is told of the one `--target` given: its size when iolab knows it without probing, and
/// whether that size is fixed (anything but a regular file, which iolab may extend as fio does).
fn given_target(targets: &[String]) -> iolab_import::Given {
    match target_bytes(targets) {
        Some((n, fixed)) => iolab_import::Given { target_bytes: Some(n), target_fixed: fixed },
        None => iolab_import::Given::default(),
    }
}

/// The size of the one `--target` given, when iolab knows it without probing: a `mem:`, `null:` or `sim:`
/// target, a regular file or a block device (its end, read-only); `None` otherwise. The flag says the size is
/// fixed (every one but a regular file).
fn target_bytes(targets: &[String]) -> Option<(u64, bool)> {
    use iolab_spec::TargetSpec;
    use std::os::unix::fs::FileTypeExt;
    let [t] = targets else { return None };
    match TargetSpec::parse(t).ok()? {
        TargetSpec::Mem { size_bytes } | TargetSpec::Null { size_bytes } => Some((size_bytes, true)),
        TargetSpec::Sim(s) => Some((s.size_bytes(), true)),
        TargetSpec::Path { path } => {
            let kind = std::fs::metadata(&path).ok()?.file_type();
            if kind.is_file() {
                return std::fs::metadata(&path).ok().map(|m| (m.len(), false));
            }
            if !kind.is_block_device() {
                return None; // never opened: a FIFO's open would wait for a writer
            }
            let mut f = std::fs::File::open(&path).ok()?;
            std::io::Seek::seek(&mut f, std::io::SeekFrom::End(0)).ok().map(|n| (n, true))
        }
        _ => None,
    }
}

/// Translates an Iometer configuration's text into an iolab job file's, saying on stderr (unless `quiet`) the
/// named targets to map with `--target NAME=PATH` and what was skipped or needs `iolab sweep`.
pub fn translate_icf(text: &str, file: &str, quiet: bool) -> Result<String> {
    translate_icf_mapped(text, file, quiet, &[])
}

/// [`translate_icf`] for a run given `targets` (its `--target` values): a target they map (`NAME=PATH`), or
/// all of them after a plain `--target PATH`, is not announced; with one plain `--target PATH`, workers with
/// no target (a template's) run on it.
fn translate_icf_mapped(text: &str, file: &str, quiet: bool, targets: &[String]) -> Result<String> {
    let one_plain = matches!(targets, [t] if !t.split_once('=').is_some_and(|(n, _)| iolab_spec::target::is_target_name(n)));
    let t = iolab_import::iometer::translate_given(text, file, one_plain).map_err(usage)?;
    if !quiet {
        for target in t.targets.iter().filter(|t| !is_mapped(&t.name, targets)) {
            eprintln!(
                "iolab: {file}: Iometer target '{}' is named '{}' (line {}): map it with --target {}=PATH",
                target.iometer, target.name, target.line, target.name
            );
        }
        for w in &t.warnings {
            eprintln!("iolab: {file}: {w}");
        }
    }
    Ok(t.toml)
}

/// Does a `--target` value map the job's target `name`: `name=PATH`, or a plain target that replaces them all.
fn is_mapped(name: &str, targets: &[String]) -> bool {
    targets.iter().any(|t| match t.split_once('=') {
        Some((n, _)) if iolab_spec::target::is_target_name(n) => n == name,
        _ => true,
    })
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

#[cfg(test)]
mod tests {
    use super::*;

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
