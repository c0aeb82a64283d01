//! `iolab profiles`: the built-in profiles, one line each with its description and sources, or one of them as the job file it is
//! (`iolab profiles show NAME > job.toml` gives a file that runs the same), or a job file derived from a block
//! I/O trace (`iolab profiles derive TRACE`, [`iolab_trace::derive`]).

use crate::args::{CheckKeys, ProfilesAction, ProfilesArgs, SomeKeys};
use crate::exit::{usage, ExitStatus};
use crate::profile::{profile_text, PROFILES};
use anyhow::Result;
use iolab_device::{Access, WriteGate};
use iolab_spec::JobSpec;
use iolab_trace::derive::{Deriver, Loop};
use std::io::Write;

/// Runs `iolab profiles`.
pub fn profiles_cmd(args: &ProfilesArgs) -> Result<ExitStatus> {
    let mut out = std::io::stdout().lock();
    match &args.action {
        Some(ProfilesAction::Show { name }) => {
            out.write_all(profile_text(name)?.as_bytes())?;
        }
        Some(ProfilesAction::Derive { trace, output, name, closed, check, keys }) => {
            let how = Derive { output: output.as_deref(), name: name.as_deref(), closed: *closed };
            return derive(trace, &how, check.as_deref(), keys);
        }
        None => {
            let width = PROFILES.iter().map(|(n, _)| n.len()).max().unwrap_or(0);
            for (name, text) in PROFILES {
                let meta =
                    JobSpec::from_toml(text, &format!("profiles/{name}.toml")).ok().and_then(|j| j.profile);
                let meta = meta.unwrap_or_default();
                let desc = meta.description.unwrap_or_else(|| "(no [profile] description)".into());
                let sources = match meta.sources.is_empty() {
                    true => String::new(),
                    false => format!("  (sources: {})", meta.sources.join("; ")),
                };
                writeln!(out, "{name:<width$}  {desc}{sources}")?;
            }
        }
    }
    out.flush()?;
    Ok(ExitStatus::Ok)
}

/// How `iolab profiles derive` writes its job: `-o`, `--name`, `--closed`.
struct Derive<'a> {
    output: Option<&'a str>,
    name: Option<&'a str>,
    closed: bool,
}

/// `iolab profiles derive TRACE`: the trace read once into a [`Deriver`], its job file checked by the job
/// reader (a job that does not read back is iolab's bug) and written to `-o FILE` or stdout; with `--check
/// TARGET`, to `-o FILE` only, and the fidelity check ([`crate::derive_check`]) printed.
fn derive(
    trace: &str,
    how: &Derive<'_>,
    check: Option<&str>,
    keys: &SomeKeys<CheckKeys>,
) -> Result<ExitStatus> {
    let (output, name, closed) = (how.output, how.name, how.closed);
    let seed = keys.to_job().map_err(usage)?.seed;
    if seed.is_some() && check.is_none() {
        return Err(usage("--seed is the seed of --check's two runs: add --check TARGET, or drop --seed"));
    }
    let seed = seed.unwrap_or(1);
    let mut gate = WriteGate::new();
    gate.claim("the trace to derive from", trace, Access::Reads).map_err(usage)?;
    let out = match (output, check) {
        (None, Some(_)) => None,
        (output, _) => Some(gate.output("-o", output.unwrap_or("-")).map_err(usage)?),
    };
    let mut t = crate::trace_file::open(trace)?;
    let mut deriver = Deriver::new();
    while let Some(r) = t.next_record().map_err(usage)? {
        deriver.add(&r);
    }
    deriver.finish();
    crate::trace_file::report_bad(&t, trace);
    let file_name = std::path::Path::new(trace).file_stem().map(|s| s.to_string_lossy().into_owned());
    let name = name.map(str::to_string).or(file_name).unwrap_or_else(|| "derived".into());
    let load = if closed { Loop::Closed } else { Loop::Open };
    let job = deriver.job_toml(&name, trace, t.targets(), load).map_err(usage)?;
    JobSpec::from_toml(&job, "the derived job").map_err(|e| {
        anyhow::anyhow!("the job derived from '{trace}' does not read back (a bug in iolab): {e}")
    })?;
    let Some(target) = check else {
        crate::output::write_all(out.iter().map(|o| (o, Ok(job.clone()))).collect())?;
        return Ok(ExitStatus::Ok);
    };
    if t.targets().len() != 1 {
        return Err(usage(format!(
            "--check {target}: '{trace}' has {} devices; the check replays a trace of one device (split it, or check by hand: docs/TRACES.md)",
            t.targets().len()
        )));
    }
    crate::output::write_all(out.iter().map(|o| (o, Ok(job.clone()))).collect())?;
    let span_s = deriver.span_s().unwrap_or(1.0);
    let shape =
        deriver.shape(0).ok_or_else(|| usage(format!("'{trace}' has no reads, writes or discards")))?;
    let check = crate::derive_check::DeriveCheck { trace, job: &job, target, seed, span_s, shape: &shape };
    crate::derive_check::check(&check)
}
