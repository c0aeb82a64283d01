//! LoadGen-style users and transactions: the command-line flags, layered on the job's `[users]` through the
//! same parser, [`iolab_spec::loadgen::UsersSpec::set`] (the result section is `iolab_run::loadgen`'s). See
//! docs/LOADGEN.md.

use crate::args::LoadgenFlags;
use iolab_spec::loadgen::{LoadgenMode, UsersSpec};
use iolab_spec::{JobSpec, Place, SpecError};

/// Layers the flags on the job's `[users]`. A flag without `[[transaction]]` tables is an error.
pub fn apply_flags(flags: &LoadgenFlags, job: &mut JobSpec) -> Result<(), SpecError> {
    let mut over = UsersSpec::default();
    let mut first = None;
    for (key, flag, value) in [
        ("count", "--users", &flags.users),
        ("rate", "--user-rate", &flags.user_rate),
        ("outstanding", "--outstanding", &flags.outstanding),
    ] {
        if let Some(v) = value {
            over.set(key, v, &Place::Flag(flag.into()))?;
            first = first.or(Some(flag));
        }
    }
    if flags.stress {
        over.mode = Some(LoadgenMode::Stress);
        first = first.or(Some("--stress"));
    } else if flags.user_rate.is_some() {
        over.mode = Some(LoadgenMode::Rate);
    }
    let Some(flag) = first else { return Ok(()) };
    match &mut job.loadgen {
        Some(lg) => {
            lg.users = lg.users.merged(&over);
            Ok(())
        }
        None => Err(SpecError::Conflict {
            place: Place::Flag(flag.into()),
            message: "needs a job file or profile with [[transaction]] tables (what a user's transaction does); see docs/LOADGEN.md".into(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_need_transactions_and_layer_on_users() {
        let mut job = JobSpec::default();
        let flags = LoadgenFlags { users: Some("10".into()), ..Default::default() };
        let e = apply_flags(&flags, &mut job).unwrap_err();
        assert!(
            e.to_string().starts_with("'--users': needs a job file or profile with [[transaction]]"),
            "{e}"
        );
        let mut job = JobSpec::from_toml(
            "[users]\ncount = 3\nrate = '1/h'\n[[transaction]]\nname='a'\nsteps=[{rw='read'}]\n",
            "j",
        )
        .unwrap();
        let flags = LoadgenFlags { users: Some("10".into()), stress: true, ..Default::default() };
        apply_flags(&flags, &mut job).unwrap();
        let u = &job.loadgen.as_ref().unwrap().users;
        assert_eq!((u.count, u.mode), (Some(10), Some(LoadgenMode::Stress)));
        let bad = LoadgenFlags { users: Some("0".into()), ..Default::default() };
        let e = apply_flags(&bad, &mut job).unwrap_err();
        assert!(e.to_string().starts_with("invalid value '0' for '--users'"), "{e}");
    }
}
