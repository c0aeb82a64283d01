//! `iolab profiles`: the built-in profiles, one line each with its description and sources, or one of them as the job file it is
//! (`iolab profiles show NAME > job.toml` gives a file that runs the same), or a job file derived from a block
//! I/O trace (`iolab profiles derive TRACE`, [`iolab_trace::derive`]).

use crate::args::{ProfilesAction, ProfilesArgs};
use crate::exit::{usage, ExitStatus};
use crate::profile::{profile_text, PROFILES};
use anyhow::Result;
use iolab_device::{Access, WriteGate};
use iolab_spec::JobSpec;
use iolab_trace::derive::{Deriver, Load};
use std::io::Write;

/// Runs `iolab profiles`.
pub fn profiles_cmd(args: &ProfilesArgs) -> Result<ExitStatus> {
    let mut out = std::io::stdout().lock();
    match &args.action {
        Some(ProfilesAction::Show { name }) => {
            out.write_all(profile_text(name)?.as_bytes())?;
        }
        Some(ProfilesAction::Derive { trace, output, name, closed }) => {
            return derive(trace, output.as_deref(), name.as_deref(), *closed);
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

/// `iolab profiles derive TRACE`: the trace read once into a [`Deriver`], its job file checked by the job
/// reader (a job that does not read back is iolab's bug) and written to `-o FILE` or stdout.
fn derive(trace: &str, output: Option<&str>, name: Option<&str>, closed: bool) -> Result<ExitStatus> {
    let mut gate = WriteGate::new();
    gate.claim("the trace to derive from", trace, Access::Reads).map_err(usage)?;
    let out = gate.output("-o", output.unwrap_or("-")).map_err(usage)?;
    let mut t = crate::trace_file::open(trace)?;
    let mut deriver = Deriver::new();
    while let Some(r) = t.next_record().map_err(usage)? {
        deriver.add(&r);
    }
    crate::trace_file::report_bad(&t, trace);
    let file_name = std::path::Path::new(trace).file_stem().map(|s| s.to_string_lossy().into_owned());
    let name = name.map(str::to_string).or(file_name).unwrap_or_else(|| "derived".into());
    let load = if closed { Load::Closed } else { Load::Open };
    let job = deriver.job_toml(&name, trace, t.targets(), load).map_err(usage)?;
    JobSpec::from_toml(&job, "the derived job").map_err(|e| {
        anyhow::anyhow!("the job derived from '{trace}' does not read back (a bug in iolab): {e}")
    })?;
    crate::output::write_all(vec![(&out, Ok(job))])?;
    Ok(ExitStatus::Ok)
}
