//! The job-key flags of `iolab run` (and of `iolab sweep` and `iolab replay`, which take every run flag),
//! made from their definitions in `iolab-spec` ([`iolab_spec::keys`]): each flag's names, value name,
//! heading, completion values and help are its definition's, built with clap's builder API, and what the
//! user typed is kept as (key, text) pairs in command-line order ([`KeyFlags`]), for each key's own setter
//! to apply ([`KeyFlags::to_job`]). No flag of a job key is declared here: adding a key to
//! [`iolab_spec::keys::KEYS`] adds its flag, placed in `--help` by [`HELP_ORDER`].

use super::hints::{Candidates, FioMeans, FIO_FLAGS};
use clap::builder::StringValueParser;
use clap::parser::ValueSource;
use clap::{Arg, ArgAction, ArgMatches, Args, Command, FromArgMatches};
use iolab_spec::keys::{find, Count, Flag, Key, Takes, KEYS};
use iolab_spec::{EngineKind, JobSpec, SpecError};

/// Where `iolab run --help` lists the key flags: in three runs, with the command's own options between them
/// (`--rate-per-rank` and `--stonewall` after the first, the outputs after the third). The definitions are in the order of the job-file key lists, which a mistyped key's suggestion
/// follows; `--help` keeps its own order, grouped for a reader. Every key with a flag is here once (a test
/// checks).
pub const HELP_ORDER: [&[&str]; 3] = [
    &[
        "name",
        "target",
        "size",
        "prealloc",
        "offset",
        "length",
        "rw",
        "read_pct",
        "random_pct",
        "trim_pct",
        "fsync",
        "fdatasync",
        "sync",
        "bs",
        "align",
        "dist",
        "qd",
        "workers",
        "rate",
    ],
    &[
        "arrival", "think", "burst", "data", "duration", "ramp", "ios", "bytes", "seed", "engine", "direct",
        "clock", "interval",
    ],
    &[
        "allow_write_device",
        "destroy_data",
        "overwrite",
        "cache",
        "cache_dev",
        "cache_line",
        "cache_mode",
        "cache_policy",
        "cache_admit",
        "cache_seq_cutoff",
        "cache_max_mem",
        "cache_shrink",
        "cache_dirty_max",
        "throttle",
        "verify",
        "verify_fail",
        "journal",
        "inject",
        "stop_on_error",
        "trace",
    ],
];

/// The job keys given on the command line, as typed and in the order typed (a switch as the text it stands
/// for: `--buffered` is `direct` = `false`). Flattened into [`super::RunArgs`], it adds the flags of the first
/// run of [`HELP_ORDER`] and collects every key flag; [`MoreKeyFlags`] add the other runs.
#[derive(Clone, Debug, Default)]
pub struct KeyFlags {
    given: Vec<(&'static Key, String)>,
    /// What iolab made of fio's spellings typed (`--time_based`, `--ioengine=libaio`), to say on stderr.
    notes: Vec<String>,
}

impl KeyFlags {
    /// The text of `key`, the last one given.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.given.iter().rev().find(|(k, _)| k.name == key).map(|(_, t)| t.as_str())
    }

    /// Every text of `key` (a repeatable flag's), in order.
    pub fn all<'a>(&'a self, key: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.given.iter().filter(move |(k, _)| k.name == key).map(|(_, t)| t.as_str())
    }

    /// What iolab made of fio's flags and values given (each a line for stderr, without `iolab: `).
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// Drops [`KeyFlags::notes`], said already (a sweep's later points).
    pub fn forget_notes(&mut self) {
        self.notes.clear();
    }

    /// Whether `key` is given.
    pub fn is_given(&self, key: &str) -> bool {
        self.given.iter().any(|(k, _)| k.name == key)
    }

    /// `key` given `text` after what is given; a key given before keeps its texts (a repeatable key's list
    /// grows).
    pub fn with(mut self, key: &str, text: impl Into<String>) -> KeyFlags {
        self.given.push((job_key(key), text.into()));
        self
    }

    /// `key` set to `texts` (one: `Some(text)`; none, taking it out: `None`): whatever was given for it before
    /// is replaced where it was given (a key not given comes last), as a point of a sweep replaces a listed
    /// flag's value.
    pub fn set(&mut self, key: &str, texts: impl IntoIterator<Item = String>) {
        let key = job_key(key);
        let at = self.given.iter().position(|(k, _)| k.name == key.name).unwrap_or(self.given.len());
        self.given.retain(|(k, _)| k.name != key.name);
        let at = at.min(self.given.len());
        self.given.splice(at..at, texts.into_iter().map(|t| (key, t)));
    }

    /// The command line's part of the job: each key applied by its own setter ([`Key::apply_flag`]), in the
    /// order typed: run keys to the job, worker and access-spec keys to its forced layer, consent to its
    /// consent. An error names the flag and quotes the text.
    pub fn to_job(&self) -> Result<JobSpec, SpecError> {
        let mut job = JobSpec::default();
        for (key, text) in &self.given {
            key.apply_flag(&mut job, text)?;
        }
        Ok(job)
    }
}

/// The definition of `key`, which the code names as a literal.
fn job_key(key: &str) -> &'static Key {
    find(key).unwrap_or_else(|| panic!("'{key}' is no job key"))
}

/// The clap id of a key's flag: its long name as a Rust field would be (`read_pct`, `buffered`).
fn id(flag: &Flag) -> String {
    flag.long.replace('-', "_")
}

/// The help of a flag: its key's doc without the final period, as clap's derive shows a one-paragraph doc.
fn help(doc: &'static str) -> &'static str {
    match doc.strip_suffix('.') {
        Some(short) if !short.ends_with('.') => short,
        _ => doc,
    }
}

/// The long help (`--help`) of a flag: its key's doc, and the names fio has for it (its hidden aliases: they
/// work, and a fio user looking for `--iodepth` finds it here).
fn long_help(doc: &'static str, flag: &Flag) -> String {
    let doc = help(doc);
    if flag.aliases.is_empty() {
        return doc.to_string();
    }
    let names: Vec<String> = flag.aliases.iter().map(|a| format!("--{a}")).collect();
    format!("{doc}\n[also: {} (fio)]", names.join(", "))
}

/// The clap argument of `key`'s flag.
fn arg(key: &Key, flag: &Flag) -> Arg {
    let mut arg = Arg::new(id(flag))
        .long(flag.long)
        .help(help(key.doc))
        .long_help(long_help(key.doc, flag))
        .aliases(flag.aliases)
        .visible_aliases(flag.visible_aliases);
    if let Some(c) = flag.short {
        arg = arg.short(c);
    }
    if let Some(heading) = flag.heading {
        arg = arg.help_heading(heading);
    }
    let Takes::Value(value_name) = flag.takes else {
        return arg.action(ArgAction::SetTrue);
    };
    let action = if key.count == Count::One { ArgAction::Set } else { ArgAction::Append };
    let arg = arg.value_name(value_name).allow_hyphen_values(flag.hyphen_values).action(action);
    if flag.candidates.is_empty() {
        arg.value_parser(StringValueParser::new())
    } else {
        arg.value_parser(Candidates(flag.candidates)).hide_possible_values(true)
    }
}

/// `cmd` with the key flags of run `n` of [`HELP_ORDER`].
fn add_run(cmd: Command, n: usize) -> Command {
    HELP_ORDER[n].iter().fold(cmd, |cmd, name| {
        let key = job_key(name);
        let flag = key.flag.as_ref().unwrap_or_else(|| panic!("'{name}' has no flag"));
        cmd.arg(arg(key, flag))
    })
}

/// The id of fio's flag `long` (apart from every iolab flag's).
fn fio_id(long: &str) -> String {
    format!("fio_{long}")
}

/// `cmd` with fio's flags of [`FIO_FLAGS`], hidden (`--help` names iolab's flags, and fio's names of them).
fn add_fio(cmd: Command) -> Command {
    FIO_FLAGS.iter().fold(cmd, |cmd, f| {
        let arg = Arg::new(fio_id(f.long)).long(f.long).hide(true);
        cmd.arg(match f.values {
            Some(values) => {
                arg.value_parser(values.to_vec()).value_name(values.join("|")).action(ArgAction::Set)
            }
            None => arg.action(ArgAction::SetTrue),
        })
    })
}

impl Args for KeyFlags {
    fn augment_args(cmd: Command) -> Command {
        add_fio(add_run(cmd, 0))
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        Self::augment_args(cmd)
    }
}

impl FromArgMatches for KeyFlags {
    /// Every key flag typed, fio's flags among them ([`FIO_FLAGS`]: a key's text, or a note).
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        let mut flags = KeyFlags::collect(m, KEYS.iter());
        for f in FIO_FLAGS {
            let id = fio_id(f.long);
            if m.value_source(&id) != Some(ValueSource::CommandLine) {
                continue;
            }
            match f.means {
                FioMeans::Key(key) => {
                    if let Some(text) = m.get_one::<String>(&id) {
                        flags.given.push((job_key(key), text.clone()));
                    }
                }
                FioMeans::Same(note) => flags.notes.push(format!("{note}: nothing to change")),
            }
        }
        Ok(flags)
    }

    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        *self = KeyFlags::from_arg_matches(m)?;
        Ok(())
    }
}

impl KeyFlags {
    /// What the flags of `keys` were given in `m`, in the order typed (each of `keys` must be a flag of the
    /// command `m` came from).
    fn collect<'k>(m: &ArgMatches, keys: impl Iterator<Item = &'k Key>) -> KeyFlags {
        let mut given: Vec<(usize, &'static Key, String)> = Vec::new();
        for key in keys {
            let key = job_key(key.name);
            let Some(flag) = &key.flag else { continue };
            let id = id(flag);
            match flag.takes {
                Takes::Switch(text) => {
                    if m.value_source(&id) == Some(ValueSource::CommandLine) && m.get_flag(&id) {
                        given.extend(m.index_of(&id).map(|i| (i, key, text.to_string())));
                    }
                }
                Takes::Value(_) => {
                    if let (Some(texts), Some(at)) = (m.get_many::<String>(&id), m.indices_of(&id)) {
                        given.extend(at.zip(texts).map(|(i, t)| (i, key, t.clone())));
                    }
                }
            }
        }
        given.sort_by_key(|(i, _, _)| *i);
        let notes = given
            .iter()
            .filter(|(_, k, _)| k.name == "engine")
            .filter_map(|(_, _, t)| EngineKind::fio_note(t));
        let notes = notes.collect();
        KeyFlags { given: given.into_iter().map(|(_, k, t)| (k, t)).collect(), notes }
    }
}

/// A command's own choice of job-key flags: `iolab db tpcc` takes `--duration`, `--ramp`, `--seed` and
/// `--throttle` from the same definitions as `iolab run`, so they are spelled, aliased and parsed the
/// same (`--seed 0xff`, `-d 2m`), with help in the command's own words (its defaults differ).
pub trait KeySet: Clone + std::fmt::Debug + Default + Send + Sync + 'static {
    /// Each key by name, with the help the command gives its flag (`None`: the key's own doc).
    const KEYS: &'static [(&'static str, Option<&'static str>)];
}

/// The flags of the keys of `S`, flattened into a command's arguments; what the user typed, applied by the
/// keys' own setters ([`SomeKeys::to_job`]).
#[derive(Clone, Debug, Default)]
pub struct SomeKeys<S: KeySet> {
    given: KeyFlags,
    set: std::marker::PhantomData<S>,
}

impl<S: KeySet> SomeKeys<S> {
    /// The keys given, applied to a job by their own setters: an error names the flag and quotes the text.
    pub fn to_job(&self) -> Result<JobSpec, SpecError> {
        self.given.to_job()
    }

    /// The text of `key` as typed (the last one given), for a command that hands it on to a job's flags.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.given.get(key)
    }
}

impl<S: KeySet> Args for SomeKeys<S> {
    fn augment_args(cmd: Command) -> Command {
        S::KEYS.iter().fold(cmd, |cmd, (name, own)| {
            let key = job_key(name);
            let flag = key.flag.as_ref().unwrap_or_else(|| panic!("'{name}' has no flag"));
            let arg = arg(key, flag);
            cmd.arg(match own {
                Some(text) => arg.help(help(text)).long_help(long_help(text, flag)),
                None => arg,
            })
        })
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        Self::augment_args(cmd)
    }
}

impl<S: KeySet> FromArgMatches for SomeKeys<S> {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        let keys = S::KEYS.iter().map(|(name, _)| job_key(name));
        Ok(SomeKeys { given: KeyFlags::collect(m, keys), set: std::marker::PhantomData })
    }

    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(m)?;
        Ok(())
    }
}

/// Adds the key flags of run `N` (1 or 2) of [`HELP_ORDER`] where it is flattened; [`KeyFlags`] collects
/// what they were given.
#[derive(Clone, Copy, Debug, Default)]
pub struct MoreKeyFlags<const N: usize>;

impl<const N: usize> Args for MoreKeyFlags<N> {
    fn augment_args(cmd: Command) -> Command {
        add_run(cmd, N)
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        add_run(cmd, N)
    }
}

impl<const N: usize> FromArgMatches for MoreKeyFlags<N> {
    fn from_arg_matches(_: &ArgMatches) -> Result<Self, clap::Error> {
        Ok(MoreKeyFlags)
    }

    fn update_from_arg_matches(&mut self, _: &ArgMatches) -> Result<(), clap::Error> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_flag_is_placed_in_the_help_once() {
        let placed: Vec<&str> = HELP_ORDER.concat();
        for key in KEYS.iter().filter(|k| k.flag.is_some()) {
            let n = placed.iter().filter(|&&p| p == key.name).count();
            assert_eq!(n, 1, "'{}' has a flag: HELP_ORDER lists it {n} times, not once", key.name);
        }
        assert_eq!(placed.len(), KEYS.iter().filter(|k| k.flag.is_some()).count());
    }

    #[test]
    fn help_drops_a_final_period_as_derive_does() {
        assert_eq!(help("Worker threads. Default 1."), "Worker threads. Default 1");
        assert_eq!(help("rbps=100M,wbps=.."), "rbps=100M,wbps=..");
    }

    #[test]
    fn set_replaces_and_with_adds() {
        let mut k = KeyFlags::default().with("target", "mem:1G").with("target", "mem:2G").with("qd", "4");
        assert_eq!(k.all("target").collect::<Vec<_>>(), ["mem:1G", "mem:2G"]);
        k.set("target", Some("mem:3G".into()));
        k.set("qd", None);
        assert_eq!(k.all("target").collect::<Vec<_>>(), ["mem:3G"]);
        assert!(!k.is_given("qd"));
        assert_eq!(k.get("target"), Some("mem:3G"));
        let mut k = KeyFlags::default().with("qd", "1").with("bs", "4k");
        k.set("qd", Some("8".into()));
        assert_eq!(
            k.given.iter().map(|(k, t)| (k.name, t.as_str())).collect::<Vec<_>>(),
            [("qd", "8"), ("bs", "4k")]
        );
    }
}
