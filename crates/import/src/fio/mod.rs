//! fio job files, translated into iolab job files.
//!
//! [`translate`] reads the text of a fio job file (`[global]` defaults inherited by the job sections after
//! it, `key=value` options and bare flags) and writes an iolab job file: each fio job section becomes a
//! `[worker.NAME]` table (`numjobs` its `count`; with `stonewall` after the first job, `[phase.worker.NAME]` in
//! one `[[phase]]` per stonewall), run-wide options (runtime, ramp, engine, direct, seed,
//! verification, I/O limits) become top-level keys, and every key is preceded by a
//! `# fio: KEY=VALUE (section [S], line N)` comment naming the option it came from. Options that do not
//! change the I/O are listed in [`Translation::ignored`]; options that would change it and have no iolab
//! equivalent are refused with a [`FioError`] that quotes them. docs/FIO.md has the full table.

mod emit;
mod entry;
mod ini;
mod job;
mod options;
pub(crate) mod units;
mod vars;

pub use vars::FioVars;

#[cfg(test)]
mod tests;

use options::Class;

/// The result of [`translate`].
#[derive(Clone, Debug, PartialEq)]
pub struct Translation {
    /// The iolab job file (TOML), a `# fio: ...` comment above each key saying which option it came from.
    pub toml: String,
    /// Options dropped because they do not change the I/O, in file order.
    pub ignored: Vec<Ignored>,
    /// Where fio and the translation may issue different I/O although every option was translated, in job
    /// order (also written as `# note:` comments in [`Translation::toml`]).
    pub notes: Vec<Note>,
}

/// One difference between what fio issues and what the translation issues, said rather than refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Note {
    /// The section it is about.
    pub section: String,
    /// The 1-based line of the option it is about (the section header's when no option is).
    pub line: usize,
    /// What differs, and how to compare like with like.
    pub text: String,
}

/// What the command line says about the run a fio file is translated for (`iolab run FILE --target ...`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Given {
    /// The size in bytes of the one target given on the command line, when known: a job with no `size`
    /// (nor `io_size`, `number_ios` or `time_based`) then does fio's one pass over it instead of being refused.
    pub target_bytes: Option<u64>,
    /// The one target given has a size of its own that iolab does not change (a block device, or a `mem:`,
    /// `null:` or `sim:` target): fio's `size` is then the region its I/O goes to, clamped to what exists, as
    /// fio does on an existing device (filesetup.c, io_u.c), not the size of a file to create.
    pub target_fixed: bool,
}

/// One fio option that was dropped because it does not change the I/O.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ignored {
    /// The option as written.
    pub option: String,
    /// The section it is in (`global` for `[global]`).
    pub section: String,
    /// Its 1-based line.
    pub line: usize,
    /// One line of why it can be dropped.
    pub why: String,
}

/// Why a fio job file cannot be translated. Every variant quotes what the user wrote and where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FioError {
    /// An option fio has, which would change the I/O, and which iolab cannot express.
    #[error("{file}, line {line}, [{section}]: fio option '{option}' has no iolab equivalent: {why}")]
    Unsupported {
        /// The fio file's name.
        file: String,
        /// The option as written.
        option: String,
        /// Its section.
        section: String,
        /// Its 1-based line.
        line: usize,
        /// Why iolab cannot run it.
        why: String,
    },
    /// An option the translator does not know (a typo, or an option of a newer fio).
    #[error("{file}, line {line}, [{section}]: unknown fio option '{option}'; it is refused because it may change the I/O")]
    UnknownOption {
        /// The fio file's name.
        file: String,
        /// The option as written.
        option: String,
        /// Its section.
        section: String,
        /// Its 1-based line.
        line: usize,
    },
    /// An `ioengine` iolab does not have.
    #[error("{file}, line {line}, [{section}]: ioengine '{engine}' is not a block engine iolab has (iolab runs libaio, io_uring and posixaio jobs on io_uring, psync/sync/pvsync/pvsync2/vsync on sync, and null on a null: target)")]
    UnsupportedEngine {
        /// The fio file's name.
        file: String,
        /// The engine as written.
        engine: String,
        /// Its section.
        section: String,
        /// Its 1-based line.
        line: usize,
    },
    /// A value that does not parse, or is out of range.
    #[error("{file}, line {line}, [{section}]: invalid value '{value}' for fio option '{option}': expected {expected}")]
    BadValue {
        /// The fio file's name.
        file: String,
        /// The option as written.
        option: String,
        /// The value as written.
        value: String,
        /// What was expected.
        expected: String,
        /// Its section.
        section: String,
        /// Its 1-based line.
        line: usize,
    },
    /// A file that would make a job bigger than iolab runs (workers, phases, worker tables).
    #[error("{file}: {found}; {limit}")]
    TooBig {
        /// The fio file's name.
        file: String,
        /// What the file asks for, counted.
        found: String,
        /// The limit it is over.
        limit: String,
    },
    /// A `--section` name the file has no job section of (or `global`), quoted, with the file's job sections.
    #[error("{file}: invalid value '{name}' for '--section': expected {expected}")]
    Section {
        /// The fio file's name.
        file: String,
        /// The name as typed.
        name: String,
        /// What was expected, listing the file's job sections.
        expected: String,
    },
    /// A line that is not a section header, an option or a comment.
    #[error("{file}, line {line}: expected {expected}, found '{found}'")]
    Syntax {
        /// The fio file's name.
        file: String,
        /// Its 1-based line.
        line: usize,
        /// What was expected there.
        expected: String,
        /// The line as written.
        found: String,
    },
}

/// One option as written, with where it is: the unit every translated key points back to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Src {
    /// The option as written (lower-cased).
    pub key: String,
    /// The value; `None` for a bare flag.
    pub value: Option<String>,
    /// Its section.
    pub section: String,
    /// Its 1-based line.
    pub line: usize,
}

impl Src {
    /// The value as written, `""` for a bare flag.
    pub fn text(&self) -> &str {
        self.value.as_deref().unwrap_or("")
    }
}

/// Translates a fio job file into an iolab job file. `source_name` names the file in errors.
pub fn translate(text: &str, source_name: &str) -> Result<Translation, FioError> {
    translate_given(text, source_name, Given::default())
}

/// [`translate`], for a run whose command line gives what `given` says (the target's size). `${NAME}`,
/// `$pagesize`, `$mb_memory` and `$ncpus` in values are this process's, as fio substitutes them.
pub fn translate_given(text: &str, source_name: &str, given: Given) -> Result<Translation, FioError> {
    translate_with(text, source_name, given, &FioVars::of_process())
}

/// [`translate_given`] with the values `vars` gives for fio's substitutions (each one made is a note), reading
/// only the job sections `vars.sections` names (fio's `--section`), when it names any.
pub fn translate_with(
    text: &str,
    source_name: &str,
    given: Given,
    vars: &FioVars,
) -> Result<Translation, FioError> {
    let mut sections = ini::parse(text, source_name, &vars.sections)?;
    let substituted = vars.expand(&mut sections, source_name)?;
    check_engines(&sections, source_name)?;
    let mut ignored = Vec::new();
    let mut global = job::Opts::default();
    let mut jobs = Vec::new();
    let mut phase = Vec::new();
    for section in &sections {
        let mut own = job::Opts::default();
        for raw in &section.options {
            let src = Src {
                key: raw.key.clone(),
                value: raw.value.clone(),
                section: section.name.clone(),
                line: raw.line,
            };
            if let Some(src) = classify(src, source_name, &mut ignored)? {
                own.insert(options::canonical(&raw.key).to_string(), src);
            }
        }
        if section.is_global() {
            global.extend(own);
        } else {
            let mut opts = global.clone();
            opts.extend(own);
            let mut job = job::resolve(source_name, section, &opts, given)?;
            wait_for(&opts, &mut job, &mut phase, source_name)?;
            jobs.push(job);
        }
    }
    if let Some(first) = jobs.first_mut() {
        first.notes.splice(0..0, substituted);
    }
    let toml = emit::job_file(source_name, &jobs)?;
    if let Err(e) = iolab_spec::JobSpec::from_toml(&toml, source_name) {
        // Every key was checked with iolab's own parsers as it was made; this is a bug if it happens.
        return Err(FioError::Syntax {
            file: source_name.to_string(),
            line: 0,
            expected: format!("a translation iolab accepts (this is a bug in iolab-import: {e})"),
            found: String::new(),
        });
    }
    let notes = jobs.iter().flat_map(|j| j.notes.clone()).collect();
    Ok(Translation { toml, ignored, notes })
}

/// `wait_for=NAME`: a job that waits for the only job of the phase before it starts a new phase, as `stonewall`
/// does; waiting for one job while others run on is refused. `phase` holds the names of the current phase's jobs.
fn wait_for(
    opts: &job::Opts,
    job: &mut job::Job,
    phase: &mut Vec<String>,
    file: &str,
) -> Result<(), FioError> {
    if let Some(src) = opts.get("wait_for") {
        let name = src.text().trim();
        if phase.len() != 1 || phase[0] != name {
            return Err(FioError::Unsupported {
                file: file.to_string(),
                option: src.key.clone(),
                section: src.section.clone(),
                line: src.line,
                why: format!(
                    "fio starts this job when job '{name}' ends; iolab's phases start when every job before ends, \
                     and the jobs running then are {phase:?} (wait_for works here when it names the only one)"
                ),
            });
        }
        job.wall = Some(src.clone());
    }
    if job.wall.is_some() {
        phase.clear();
    }
    phase.push(job.name.clone());
    Ok(())
}

/// Refuses a job whose engine (its own `ioengine`, else `[global]`'s) iolab does not have, before any other
/// option: a job for another engine would otherwise be refused for an option of that engine's world.
fn check_engines(sections: &[ini::Section], file: &str) -> Result<(), FioError> {
    let mut global: Option<(&ini::Section, &ini::RawOption)> = None;
    for section in sections {
        let own = section.options.iter().rev().find(|o| o.key == "ioengine").map(|o| (section, o));
        let engine = if section.is_global() {
            global = own.or(global);
            continue;
        } else {
            own.or(global)
        };
        let Some((s, o, Some(name))) = engine.map(|(s, o)| (s, o, o.value.as_deref())) else { continue };
        let name = name.trim();
        if options::engine(name).is_none() && !name.contains('$') {
            return Err(FioError::UnsupportedEngine {
                file: file.to_string(),
                engine: name.to_string(),
                section: s.name.clone(),
                line: o.line,
            });
        }
    }
    Ok(())
}

/// Sorts one option: `Some` to translate it, `None` when it was ignored (and recorded), or the refusal.
fn classify(src: Src, file: &str, ignored: &mut Vec<Ignored>) -> Result<Option<Src>, FioError> {
    let canon = options::canonical(&src.key);
    let refuse = |why: &str| FioError::Unsupported {
        file: file.to_string(),
        option: src.key.clone(),
        section: src.section.clone(),
        line: src.line,
        why: why.to_string(),
    };
    match options::classify(canon) {
        Some(Class::Mapped) => Ok(Some(src)),
        Some(Class::Ignored(why)) => {
            ignored.push(Ignored {
                option: src.key.clone(),
                section: src.section.clone(),
                line: src.line,
                why: why.to_string(),
            });
            // Kept for the notes that read it (exitall); the translation reads no other ignored option.
            Ok(Some(src))
        }
        Some(Class::OnlyValues(ok, why)) => {
            let v = src.value.as_deref().map(|v| v.trim().to_ascii_lowercase()).unwrap_or_else(|| "1".into());
            if ok.contains(&v.as_str()) {
                Ok(Some(src))
            } else {
                Err(refuse(why))
            }
        }
        Some(Class::Refused(why)) => Err(refuse(why)),
        None => Err(FioError::UnknownOption {
            file: file.to_string(),
            option: src.key.clone(),
            section: src.section.clone(),
            line: src.line,
        }),
    }
}

/// Options whose names only fio job files use (iolab's own keys are excluded).
const FIO_MARKERS: &[&str] = &[
    "ioengine",
    "iodepth",
    "numjobs",
    "rwmixread",
    "rwmixwrite",
    "time_based",
    "runtime",
    "ramp_time",
    "filename",
    "directory",
    "readwrite",
    "blocksize",
    "bssplit",
    "bsrange",
    "group_reporting",
    "randrepeat",
    "io_size",
    "stonewall",
    "rate_iops",
    "norandommap",
    "random_distribution",
    "thread",
    "buffered",
    "filesize",
    "nrfiles",
];

/// True when `text` looks like a fio job file rather than an iolab (TOML) job file: INI sections, unquoted
/// `key=value` lines or bare flags, and fio option names; no `[[...]]` tables, quoted string values or
/// dotted tables.
pub fn looks_like_fio(text: &str) -> bool {
    let (mut fio, mut toml, mut sections) = (0usize, 0usize, 0usize);
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if line.starts_with("[[") {
            return false;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            sections += 1;
            toml += usize::from(name.contains('.') || name.contains('"'));
            fio += usize::from(name == "global");
            continue;
        }
        let (key, value) = match line.split_once('=') {
            Some((k, v)) => (k.trim(), Some(v.trim())),
            None => (line, None),
        };
        let fio_key = FIO_MARKERS.contains(&key.to_ascii_lowercase().as_str());
        match value {
            None if fio_key || key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') => fio += 1,
            None => toml += 1,
            Some(v) if v.starts_with('"') || v.starts_with('\'') || v.starts_with('{') => toml += 1,
            Some(v) if v == "true" || v == "false" || v.starts_with('[') => toml += 1,
            Some(_) => fio += usize::from(fio_key) + usize::from(!line.contains(" = ")),
        }
    }
    sections > 0 && fio > 0 && fio > toml
}
