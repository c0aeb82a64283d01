//! `iolab profiles`: the built-in profiles, one line each, or one of them as the job file it is
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
                let desc = JobSpec::from_toml(text, &format!("profiles/{name}.toml"))
                    .ok()
                    .and_then(|j| j.profile)
                    .and_then(|p| p.description)
                    .unwrap_or_else(|| "(no [profile] description)".into());
                writeln!(out, "{name:<width$}  {desc}")?;
            }
        }
    }
    out.flush()?;
    Ok(ExitStatus::Ok)
}
