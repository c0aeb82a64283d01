//! Spec errors: every one names where the value came from (the flag or the job-file key the user typed),
//! quotes the original text and says what was expected, in the style of ripgrep's `human.rs`:
//!
//! ```text
//! error: invalid value '4q' for '--bs': expected a size such as '4K', or a weighted split such as '4K/60:8K/20:64K/20'
//! error: job file 'oltp.toml', [worker.db]: unknown key 'io_dpth'; did you mean 'qd'?
//! ```

use std::fmt;

/// Where a value came from: a command-line flag or a key in a job file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Place {
    /// A command-line flag, as typed (e.g. `--bs`).
    Flag(String),
    /// A key in a job file.
    Key {
        /// The job file path.
        file: String,
        /// The table, e.g. `[worker.db]`, or empty for the top level.
        table: String,
        /// The key.
        key: String,
    },
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Place::Flag(flag) => write!(f, "'{flag}'"),
            Place::Key { file, table, key } if table.is_empty() => write!(f, "'{key}' in job file '{file}'"),
            Place::Key { file, table, key } => write!(f, "'{key}' in {table} of job file '{file}'"),
        }
    }
}

/// An error in what the user asked for. Exit code 2.
#[derive(Debug, thiserror::Error)]
pub enum SpecError {
    /// A value that does not parse or is out of range.
    #[error("invalid value '{original}' for {place}: expected {expected}")]
    InvalidValue {
        /// The flag or key.
        place: Place,
        /// What the user typed.
        original: String,
        /// The form or range that was expected.
        expected: String,
    },
    /// A key the job file format does not have.
    #[error("job file '{file}'{}: unknown key '{key}'{}", table_suffix(.table), suggestion_suffix(.suggestion))]
    UnknownKey {
        /// The job file path.
        file: String,
        /// The table, or empty for the top level.
        table: String,
        /// The unknown key.
        key: String,
        /// The closest known key, if one is close.
        suggestion: Option<String>,
    },
    /// The job file cannot be read.
    #[error("cannot read job file '{file}': {source}")]
    Io {
        /// The job file path.
        file: String,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The job file is not valid TOML.
    #[error("job file '{file}' is not valid TOML: {message}")]
    Syntax {
        /// The job file path.
        file: String,
        /// The TOML parser's message (with line and column).
        message: String,
    },
    /// A job file that is not a regular file, too big, or unreadable.
    #[error(transparent)]
    Input(#[from] crate::input::InputError),
    /// Values that are fine alone but not together.
    #[error("{place}: {message}")]
    Conflict {
        /// The flag or key at fault.
        place: Place,
        /// What is wrong and what to do.
        message: String,
    },
}

fn table_suffix(table: &str) -> String {
    if table.is_empty() {
        String::new()
    } else {
        format!(", {table}")
    }
}

fn suggestion_suffix(s: &Option<String>) -> String {
    match s {
        Some(s) => format!("; did you mean '{s}'?"),
        None => String::new(),
    }
}

/// The known key closest to `key` (Jaro-Winkler >= 0.8, or an edit distance of at most 2), if any.
pub fn suggest<'a>(key: &str, known: &[&'a str]) -> Option<&'a str> {
    let norm = |s: &str| s.replace(['-', '_'], "").to_ascii_lowercase();
    let k = norm(key);
    let mut best: Option<(&str, f64)> = None;
    for cand in known {
        let c = norm(cand);
        let mut score = strsim::jaro_winkler(&k, &c);
        if strsim::levenshtein(&k, &c) <= 2 {
            score = score.max(0.85);
        }
        if score >= 0.8 && best.is_none_or(|(_, b)| score > b) {
            best = Some((cand, score));
        }
    }
    best.map(|(c, _)| c)
}

impl SpecError {
    /// Builds an [`SpecError::InvalidValue`].
    pub fn invalid(place: &Place, original: impl Into<String>, expected: impl Into<String>) -> SpecError {
        SpecError::InvalidValue { place: place.clone(), original: original.into(), expected: expected.into() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalid_value_message_quotes_flag_and_input() {
        let e = SpecError::invalid(&Place::Flag("--bs".into()), "4q", "a size such as '4K'");
        assert_eq!(e.to_string(), "invalid value '4q' for '--bs': expected a size such as '4K'");
    }

    #[test]
    fn suggest_finds_close_key() {
        assert_eq!(suggest("read_pc", &["read_pct", "random_pct", "qd"]), Some("read_pct"));
        assert_eq!(suggest("iodepth", &["qd", "bs"]), None);
        assert_eq!(suggest("durration", &["duration", "ramp"]), Some("duration"));
    }

    #[test]
    fn unknown_key_message_has_table_and_suggestion() {
        let e = SpecError::UnknownKey {
            file: "j.toml".into(),
            table: "[worker.db]".into(),
            key: "read_pc".into(),
            suggestion: Some("read_pct".into()),
        };
        assert_eq!(
            e.to_string(),
            "job file 'j.toml', [worker.db]: unknown key 'read_pc'; did you mean 'read_pct'?"
        );
    }
}
