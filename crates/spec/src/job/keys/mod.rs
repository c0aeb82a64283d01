//! One definition per job key, as ripgrep defines its flags (crates/core/flags/defs.rs there): each
//! [`Key`] in [`KEYS`] holds the key's name in TOML and JSON, its command-line flag (long and short names,
//! aliases, value name, heading, completion values), the doc `--help` shows for it, where it is valid (run,
//! phase, worker or access-spec level, or the command line alone), how its text is parsed and applied to a
//! [`JobSpec`] or [`Layer`], and the texts its unit test tries ([`Key::good`], [`Key::bad`]).
//!
//! Everything else reads these definitions and writes no key again: the key lists ([`RUN_KEYS`],
//! [`WORKER_KEYS`], [`SPEC_KEYS`], [`PHASE_RUN_KEYS`], [`CONSENT_KEYS`]) are computed from them at compile
//! time; the job-file reader ([`JobSpec::from_toml`]) looks each key up here; [`Layer::set`] and
//! [`JobSpec::set_run`] are lookups; the command line builds its flags from them and applies what was typed
//! with [`Key::apply_flag`]; sweeps (`--set KEY=...`) and the fio and Iometer importers check a value with
//! [`check`]. Adding a key is adding its definition to [`KEYS`] (and, for a new setting, the field it sets).
//!
//! [`KEYS`] is in the order of the lists: run keys, worker keys, access-spec keys, consent. A suggestion for
//! a mistyped key takes the first of equally close keys, so the order is part of what a user sees.

mod defs;
mod parse;

pub use defs::KEYS;
pub(crate) use parse::{positive_size, range_u32};

use super::jobspec::JobSpec;
use super::layer::Layer;
use crate::consent::Consent;
use crate::error::{Place, SpecError};

/// Sets a run setting of a job from its text; errors name the place and quote the text.
pub type SetRun = fn(&mut JobSpec, &str, &Place) -> Result<(), SpecError>;
/// Sets a worker or access-spec setting of a layer from its text.
pub type SetLayer = fn(&mut Layer, &str, &Place) -> Result<(), SpecError>;

/// Where a key is valid, and what its text sets there.
#[derive(Clone, Copy, Debug)]
pub enum Sets {
    /// A run setting: the top of a job file.
    Run(SetRun),
    /// A run setting that a `[[phase]]` table may set for itself too.
    Phase(SetRun),
    /// A worker setting: the top of a job file (every worker's default) and `[worker.NAME]` tables; on the
    /// command line, the forced layer (every worker).
    Worker(SetLayer),
    /// An access-spec setting: where worker settings are, and in `[[spec]]` tables.
    Spec(SetLayer),
    /// Consent to destroy data: the command line alone. A job file, a profile, an import or a sweep that
    /// names it is refused ([`Consent::refuse`]).
    Consent(fn(&mut Consent)),
}

/// Where a key is valid ([`Sets`] without its setter).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// [`Sets::Run`].
    Run,
    /// [`Sets::Phase`].
    Phase,
    /// [`Sets::Worker`].
    Worker,
    /// [`Sets::Spec`].
    Spec,
    /// [`Sets::Consent`].
    CommandLine,
}

impl Scope {
    const fn bit(self) -> u8 {
        1 << self as u8
    }
}

/// How many values a key takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Count {
    /// One; given again, the later wins.
    One,
    /// Any number: the flag is repeatable and the job-file value may be an array (`inject`).
    Many,
    /// As [`Count::Many`], and an empty array is refused (`target`).
    AtLeastOne,
}

/// What a flag takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Takes {
    /// A value, shown in `--help` under this name (`--qd <N>`).
    Value(&'static str),
    /// Nothing: the flag stands for this text of its key (`--buffered` is `direct = false`).
    Switch(&'static str),
}

/// A key's command-line flag.
#[derive(Clone, Copy, Debug)]
pub struct Flag {
    /// The long name, without dashes (`read-pct`).
    pub long: &'static str,
    /// The short name (`-t`).
    pub short: Option<char>,
    /// A value, or a switch.
    pub takes: Takes,
    /// Whether a value may start with '-' (a negative number is then refused by the key's parser, quoting it,
    /// rather than by clap as an unknown flag).
    pub hyphen_values: bool,
    /// Other names that work and are not shown (`rwmixread`, fio's).
    pub aliases: &'static [&'static str],
    /// Other names that work and are shown (`io-depth`).
    pub visible_aliases: &'static [&'static str],
    /// The `--help` heading it is listed under; `None`: the command's options.
    pub heading: Option<&'static str>,
    /// The values shell completions offer (the key's parser still decides, and may take more).
    pub candidates: &'static [&'static str],
    /// What the flag does where it means more than the key: `--target NAME=TARGET` sets a named target.
    /// `None`: the key's own setter.
    pub on_command_line: Option<SetRun>,
}

impl Flag {
    /// A flag named `long` that takes a value shown as `value_name`; the rest as most flags have it.
    pub const fn value(long: &'static str, value_name: &'static str) -> Flag {
        Flag {
            long,
            short: None,
            takes: Takes::Value(value_name),
            hyphen_values: false,
            aliases: &[],
            visible_aliases: &[],
            heading: None,
            candidates: &[],
            on_command_line: None,
        }
    }

    /// A switch named `long` that stands for `text` of its key.
    pub const fn switch(long: &'static str, text: &'static str) -> Flag {
        Flag { takes: Takes::Switch(text), ..Flag::value(long, "") }
    }

    /// With the short name `c`.
    pub const fn short(self, c: char) -> Flag {
        Flag { short: Some(c), ..self }
    }

    /// Taking values that start with '-'.
    pub const fn hyphens(self) -> Flag {
        Flag { hyphen_values: true, ..self }
    }

    /// With these hidden aliases.
    pub const fn aliases(self, aliases: &'static [&'static str]) -> Flag {
        Flag { aliases, ..self }
    }

    /// With these aliases, shown.
    pub const fn visible_aliases(self, visible_aliases: &'static [&'static str]) -> Flag {
        Flag { visible_aliases, ..self }
    }

    /// Listed under `heading` in `--help`.
    pub const fn heading(self, heading: &'static str) -> Flag {
        Flag { heading: Some(heading), ..self }
    }

    /// Offering these values to shell completions.
    pub const fn candidates(self, candidates: &'static [&'static str]) -> Flag {
        Flag { candidates, ..self }
    }

    /// Doing `set` when typed, instead of the key's own setter.
    pub const fn on_command_line(self, set: SetRun) -> Flag {
        Flag { on_command_line: Some(set), ..self }
    }
}

/// One job key: its name, flag, doc, where it is valid and how it parses and applies itself.
#[derive(Clone, Copy, Debug)]
pub struct Key {
    /// The key in TOML and JSON (`read_pct`).
    pub name: &'static str,
    /// What it does; for a key with a flag, exactly what `--help` shows for the flag (the final period
    /// dropped there, as for every one-paragraph help).
    pub doc: &'static str,
    /// Its command-line flag; `None` for a key of job files (and `--set`) alone.
    pub flag: Option<Flag>,
    /// Where it is valid and what it sets.
    pub sets: Sets,
    /// How many values it takes.
    pub count: Count,
    /// Texts the key takes: its unit test applies each and checks that it sets something.
    pub good: &'static [&'static str],
    /// Texts the key refuses: its unit test checks that each is an error that quotes the text.
    pub bad: &'static [&'static str],
}

impl Key {
    /// Where the key is valid.
    pub const fn scope(&self) -> Scope {
        match self.sets {
            Sets::Run(_) => Scope::Run,
            Sets::Phase(_) => Scope::Phase,
            Sets::Worker(_) => Scope::Worker,
            Sets::Spec(_) => Scope::Spec,
            Sets::Consent(_) => Scope::CommandLine,
        }
    }

    /// Whether a job file (and so a profile, an import or a sweep) may set it: every key but consent.
    pub fn in_job_files(&self) -> bool {
        self.scope() != Scope::CommandLine
    }

    /// Applies `text` to `job` as the command line does: a run setting to the job, a worker or access-spec
    /// setting to its forced layer (every worker), consent to its consent. Errors name `place`.
    pub fn apply(&self, job: &mut JobSpec, text: &str, place: &Place) -> Result<(), SpecError> {
        match self.sets {
            Sets::Run(set) | Sets::Phase(set) => set(job, text, place),
            Sets::Worker(set) | Sets::Spec(set) => set(&mut job.forced, text, place),
            Sets::Consent(grant) => {
                grant(&mut job.consent);
                Ok(())
            }
        }
    }

    /// Applies `text` as typed with the key's flag: what the flag means on the command line
    /// ([`Flag::on_command_line`]) where it means more than the key, else [`Key::apply`]; errors name the
    /// flag ([`Key::flag_place`]).
    pub fn apply_flag(&self, job: &mut JobSpec, text: &str) -> Result<(), SpecError> {
        let place = self.flag_place();
        match self.flag.and_then(|f| f.on_command_line) {
            Some(set) => set(job, text, &place),
            None => self.apply(job, text, &place),
        }
    }

    /// The place a command-line value of the key is reported at: `--read-pct`; for a key without a flag,
    /// which only `--set` gives, `--set weight`.
    pub fn flag_place(&self) -> Place {
        Place::Flag(match self.flag {
            Some(f) => format!("--{}", f.long),
            None => format!("--set {}", self.name),
        })
    }
}

/// The key named `name` (any scope).
pub fn find(name: &str) -> Option<&'static Key> {
    KEYS.iter().find(|k| k.name == name)
}

/// Whether the parser of the job-file key `name` takes `text`: `Ok(false)` when no job file has such a key
/// (consent keys included), the key's error (naming `place`) when it refuses the text. For values made
/// elsewhere (sweep lists, imported fio and Iometer files) to be checked by the parser a job file's would be.
pub fn check(name: &str, text: &str, place: &Place) -> Result<bool, SpecError> {
    match find(name).filter(|k| k.in_job_files()) {
        Some(key) => key.apply(&mut JobSpec::default(), text, place).map(|()| true),
        None => Ok(false),
    }
}

const fn count(mask: u8) -> usize {
    let (mut i, mut n) = (0, 0);
    while i < KEYS.len() {
        if KEYS[i].scope().bit() & mask != 0 {
            n += 1;
        }
        i += 1;
    }
    n
}

/// The names of the keys whose scope is in `mask`, in the order of [`KEYS`].
const fn names<const N: usize>(mask: u8) -> [&'static str; N] {
    let mut out = [""; N];
    let (mut i, mut n) = (0, 0);
    while i < KEYS.len() {
        if KEYS[i].scope().bit() & mask != 0 {
            out[n] = KEYS[i].name;
            n += 1;
        }
        i += 1;
    }
    out
}

const RUN: u8 = Scope::Run.bit() | Scope::Phase.bit();
const PHASE: u8 = Scope::Phase.bit();
const WORKER: u8 = Scope::Worker.bit();
const SPEC: u8 = Scope::Spec.bit();
const CONSENT: u8 = Scope::CommandLine.bit();

/// Keys valid only at the top level of a job file (from [`KEYS`]).
pub const RUN_KEYS: &[&str] = &names::<{ count(RUN) }>(RUN);
/// The run settings a phase may set for itself (from [`KEYS`]).
pub const PHASE_RUN_KEYS: &[&str] = &names::<{ count(PHASE) }>(PHASE);
/// Keys of one worker (valid at the top level as defaults, and in `[worker.NAME]`; from [`KEYS`]).
pub const WORKER_KEYS: &[&str] = &names::<{ count(WORKER) }>(WORKER);
/// Keys of one access spec (valid at the top level, in `[worker.NAME]` and in `[[spec]]` tables; from
/// [`KEYS`]).
pub const SPEC_KEYS: &[&str] = &names::<{ count(SPEC) }>(SPEC);
/// The keys a job file might use to grant consent, each refused wherever it appears ([`Consent::refuse`]);
/// from [`KEYS`].
pub const CONSENT_KEYS: &[&str] = &names::<{ count(CONSENT) }>(CONSENT);

impl Layer {
    /// Sets one worker or spec key from its text. `place` names where the text came from (for errors).
    /// Returns `Ok(false)` when `key` is not a layer key.
    pub fn set(&mut self, key: &str, text: &str, place: &Place) -> Result<bool, SpecError> {
        match find(key).map(|k| k.sets) {
            Some(Sets::Worker(set) | Sets::Spec(set)) => set(self, text, place).map(|()| true),
            _ => Ok(false),
        }
    }
}

impl JobSpec {
    /// Sets one run-level key from its text. Returns `Ok(false)` when `key` is not a run key; a consent key
    /// is refused.
    pub fn set_run(&mut self, key: &str, text: &str, place: &Place) -> Result<bool, SpecError> {
        match find(key).map(|k| k.sets) {
            Some(Sets::Run(set) | Sets::Phase(set)) => set(self, text, place).map(|()| true),
            Some(Sets::Consent(_)) => Err(Consent::refuse(key, place)),
            _ => Ok(false),
        }
    }
}

#[cfg(test)]
mod tests;
