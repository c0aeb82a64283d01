//! Iometer saved configurations (`.icf`), translated into iolab job files.
//!
//! [`translate`] reads the text of an ICF file (versions 2006.07.27 to 1.1.0: `'TEST SETUP`,
//! `'RESULTS DISPLAY`, `'ACCESS SPECIFICATIONS` and `'MANAGER LIST` sections of `'Key` lines, each followed by
//! its value lines) and writes an iolab job file: each worker becomes a `[worker.NAME]` table with its targets
//! as named targets (`[targets]`, mapped by the user with `--target NAME=PATH`), its outstanding I/Os and disk
//! region, and its access specification as weighted `[[worker.NAME.spec]]` tables (workers with several assigned
//! specs: one `[[phase]]` per Iometer test, test N running every worker's Nth spec). Every key is preceded by a
//! `# iometer: ... (line N)` comment naming the setting it came from. What iolab cannot express is refused with
//! an [`IcfError`] quoting the line; cycling test types, which a job file cannot hold, are described in
//! [`Translation::warnings`] as the equivalent `iolab sweep` flags. docs/IOMETER.md has the full table.

mod emit;
mod lines;
mod model;

#[cfg(test)]
mod tests;

/// The result of [`translate`].
#[derive(Clone, Debug, PartialEq)]
pub struct Translation {
    /// The iolab job file (TOML), a `# iometer: ... (line N)` comment above each key.
    pub toml: String,
    /// The targets the job declares in `[targets]`, in order of first use; the user maps each to a path.
    pub targets: Vec<IometerTarget>,
    /// Settings skipped or only described, each with its line: unknown keys, idle workers, cycling test
    /// types (with the `iolab sweep` flags that run the same cycle).
    pub warnings: Vec<String>,
}

/// One Iometer target and the name it has in the translated job file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IometerTarget {
    /// The name in `[targets]` (`PHYSICALDRIVE_1`); workers use it as `@NAME`, the user maps it with
    /// `--target NAME=PATH`.
    pub name: String,
    /// The target as Iometer named it (`PHYSICALDRIVE:1`, `1: "VENDOR PRODUCT"`, `sdc`, `E:`).
    pub iometer: String,
    /// The 1-based line where it is first assigned.
    pub line: usize,
}

/// Why an ICF file cannot be translated. Every variant names the line and quotes what the user wrote.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IcfError {
    /// A line that is not what the format has at that place.
    #[error("{file}, line {line}: expected {expected}, found {found}")]
    Syntax {
        /// The ICF file's name.
        file: String,
        /// The 1-based line.
        line: usize,
        /// What was expected there.
        expected: String,
        /// What is there.
        found: String,
    },
    /// A value that does not parse, or that iolab cannot take.
    #[error("{file}, line {line}: invalid value '{value}' for {what}: expected {expected}")]
    BadValue {
        /// The ICF file's name.
        file: String,
        /// The 1-based line.
        line: usize,
        /// The setting.
        what: String,
        /// The value as written.
        value: String,
        /// What was expected.
        expected: String,
    },
    /// A file that would make a job bigger than iolab runs (workers, phases, worker tables).
    #[error("{file}, line {line}: {found}; {limit}")]
    TooBig {
        /// The ICF file's name.
        file: String,
        /// The 1-based line of the first thing past the limit.
        line: usize,
        /// What the file asks for, counted.
        found: String,
        /// The limit it is over.
        limit: String,
    },
    /// A setting that would change the I/O and that iolab's job format cannot express.
    #[error("{file}, line {line}: {what} has no iolab equivalent: {why}")]
    Unsupported {
        /// The ICF file's name.
        file: String,
        /// The 1-based line.
        line: usize,
        /// The setting, quoted.
        what: String,
        /// Why iolab cannot run it.
        why: String,
    },
}

/// Translates an Iometer configuration file into an iolab job file. `source_name` names the file in errors.
pub fn translate(text: &str, source_name: &str) -> Result<Translation, IcfError> {
    translate_given(text, source_name, false)
}

/// [`translate`] for a run given one plain `--target PATH` (`one_target`): a worker with an access spec and
/// no target (a configuration saved as a template, as vendors ship them) runs on that target, with a
/// warning saying so, where without it the worker is left out as Iometer leaves it idle.
pub fn translate_given(text: &str, source_name: &str, one_target: bool) -> Result<Translation, IcfError> {
    let mut warnings = Vec::new();
    let split = lines::split(text, source_name)?;
    let cfg = model::read(split, source_name, &mut warnings)?;
    let (toml, targets) = emit::job_file(&cfg, source_name, one_target, &mut warnings)?;
    if let Err(e) = iolab_spec::JobSpec::from_toml(&toml, source_name) {
        // Every value was checked with iolab's own parsers as it was written; this is a bug if it happens.
        return Err(IcfError::Syntax {
            file: source_name.to_string(),
            line: 0,
            expected: format!("a translation iolab accepts (this is a bug in iolab-import: {e})"),
            found: "a job file iolab refuses".into(),
        });
    }
    Ok(Translation { toml, targets, warnings })
}

/// Section headers only Iometer configuration files have.
const ICF_SECTIONS: &[&str] = &["'test setup", "'access specifications", "'manager list", "'results display"];

/// True when `text` looks like an Iometer configuration file: a `Version` first line or one of its
/// `'TEST SETUP`, `'ACCESS SPECIFICATIONS`, `'MANAGER LIST` or `'RESULTS DISPLAY` section headers. fio job files
/// and iolab (TOML) job files have neither.
pub fn looks_like_icf(text: &str) -> bool {
    let mut lines = text.lines().map(|l| l.trim().trim_start_matches('\u{feff}')).filter(|l| !l.is_empty());
    let Some(first) = lines.next() else { return false };
    let header = |l: &str| {
        let l = l.to_ascii_lowercase();
        ICF_SECTIONS.iter().any(|s| l.starts_with(s))
    };
    let versioned = first.get(..8).is_some_and(|w| w.eq_ignore_ascii_case("version "))
        && first.get(8..).and_then(|r| r.trim().chars().next()).is_some_and(|c| c.is_ascii_digit());
    versioned || header(first) || lines.take(200).any(header)
}
