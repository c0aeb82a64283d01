//! The INI layer of a fio job file: sections, `key=value` lines and bare flags, with line numbers.

use super::FioError;

/// One option as written: `key=value`, or a bare flag (`time_based`, value `None`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawOption {
    /// The option name, lower-cased, as typed otherwise.
    pub key: String,
    /// The value as typed (trimmed), `None` for a bare flag.
    pub value: Option<String>,
    /// 1-based line number.
    pub line: usize,
}

/// One `[name]` section and its options, in file order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Section {
    /// The name between the brackets.
    pub name: String,
    /// 1-based line of the header.
    pub line: usize,
    /// The options, in file order.
    pub options: Vec<RawOption>,
}

impl Section {
    /// True for `[global]`, whose options are defaults for the job sections after it.
    pub fn is_global(&self) -> bool {
        self.name == "global"
    }
}

/// Splits the text into sections. A `#` or `;` starts a comment that runs to the end of its line, as in fio.
/// With `only` (fio's `--section NAME`, repeatable) non-empty, a job section named in it is read and any other
/// is skipped unread, its lines and all, as fio's `skip_this_section` (init.c) skips it; a section whose name
/// starts with `global` is always read, as in fio. A name in `only` that no section has, or `global`, is
/// refused ([`FioError::Section`]), naming the file's job sections.
pub fn parse(text: &str, file: &str, only: &[String]) -> Result<Vec<Section>, FioError> {
    let mut sections: Vec<Section> = Vec::new();
    let (mut jobs, mut names, mut skipping) = (0, Vec::<String>::new(), false);
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        // fio (parse.c, strip_blank_end) ends every line at its first ';' or '#': a comment after a value too.
        let t = raw.split([';', '#']).next().unwrap_or("").trim();
        if t.is_empty() {
            continue;
        }
        if let Some(rest) = t.strip_prefix('[') {
            let name = rest.strip_suffix(']').map(str::trim).unwrap_or("");
            if name.is_empty() || name.contains(['[', ']']) {
                return Err(syntax(file, line, "a section header such as [global] or [job1]", t));
            }
            if !name.starts_with("global") && !names.iter().any(|n| n == name) {
                names.push(name.to_string());
            }
            skipping = !only.is_empty() && !name.starts_with("global") && !only.iter().any(|o| o == name);
            if skipping {
                continue;
            }
            sections.push(Section { name: name.to_string(), line, options: Vec::new() });
            jobs += usize::from(name != "global");
            check_job_count(jobs, line, file, t)?;
            continue;
        }
        if skipping {
            continue;
        }
        let Some(section) = sections.last_mut() else {
            return Err(syntax(
                file,
                line,
                "a section header such as [global] or [job1] before any option",
                t,
            ));
        };
        section.options.push(option(t, line, file)?);
    }
    check_only(only, &names, file)?;
    if !sections.iter().any(|s| !s.is_global()) {
        let last = text.lines().count().max(1);
        return Err(syntax(file, last, "at least one job section (a section other than [global])", ""));
    }
    Ok(sections)
}

/// Refuses a `--section` name that names no job section of the file (`names`), and `global`, which fio reads
/// whatever `--section` says and refuses as the only section ("can't use global as only section").
fn check_only(only: &[String], names: &[String], file: &str) -> Result<(), FioError> {
    let listed = || match names {
        [] => "none".to_string(),
        _ => names.iter().map(|n| format!("[{n}]")).collect::<Vec<_>>().join(", "),
    };
    for name in only {
        let expected = if name == "global" {
            format!(
                "the name of a job section: fio reads [global] whatever --section says (the file's job \
                 sections: {})",
                listed()
            )
        } else if !names.contains(name) {
            format!("the name of one of the file's job sections: {}", listed())
        } else {
            continue;
        };
        return Err(FioError::Section { file: file.to_string(), name: name.clone(), expected });
    }
    Ok(())
}

/// Refuses a job section past the most a run can hold (each is at least one worker, or one phase), when its
/// header is read: nothing is built for the sections of a file that cannot run.
fn check_job_count(jobs: usize, line: usize, file: &str, header: &str) -> Result<(), FioError> {
    let max = iolab_spec::MAX_WORKERS as usize;
    if jobs <= max {
        return Ok(());
    }
    let phases = iolab_spec::MAX_PHASES;
    let expected =
        format!("at most {max} job sections (a run has at most {max} workers, a job {phases} phases)");
    Err(syntax(file, line, &expected, header))
}

fn option(t: &str, line: usize, file: &str) -> Result<RawOption, FioError> {
    let (key, value) = match t.split_once('=') {
        Some((k, v)) => (k.trim(), Some(v.trim().to_string())),
        None => (t, None),
    };
    let valid = !key.is_empty()
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        && key.chars().next().is_some_and(|c| c.is_ascii_alphabetic());
    if !valid {
        return Err(syntax(file, line, "'option=value' or a bare option name such as 'time_based'", t));
    }
    Ok(RawOption { key: key.to_ascii_lowercase(), value, line })
}

fn syntax(file: &str, line: usize, expected: &str, found: &str) -> FioError {
    FioError::Syntax {
        file: file.to_string(),
        line,
        expected: expected.to_string(),
        found: found.to_string(),
    }
}
