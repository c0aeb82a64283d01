//! `iolab profiles`: the built-in profiles, one line each with its description and sources, or one of them as the job file it is
//! (`iolab profiles show NAME > job.toml` gives a file that runs the same).

use crate::args::{ProfilesAction, ProfilesArgs};
use crate::exit::ExitStatus;
use crate::profile::{profile_text, PROFILES};
use anyhow::Result;
use iolab_spec::JobSpec;
use std::io::Write;

/// Runs `iolab profiles`.
pub fn profiles_cmd(args: &ProfilesArgs) -> Result<ExitStatus> {
    let mut out = std::io::stdout().lock();
    match &args.action {
        Some(ProfilesAction::Show { name }) => {
            out.write_all(profile_text(name)?.as_bytes())?;
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
