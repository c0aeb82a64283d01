//! One iolab key of the job file being written, with its value and the fio options (or defaults) it came
//! from. A leaf: the job translation (`job`) makes entries, and the writer (`emit`) writes them; neither
//! knows the other's side of an entry.

use super::Src;
use iolab_spec::{Place, SpecError};

/// Where an iolab key's value came from.
#[derive(Clone, Debug, PartialEq)]
pub enum Origin {
    /// A fio option as written.
    Opt(Src),
    /// A fio default (the option is not set); the text says which and what it is.
    Default(String),
}

impl Origin {
    /// The origin in words, without the comment's `# fio: `.
    pub fn describe(&self) -> String {
        self.comment().trim_start_matches("# fio: ").to_string()
    }

    /// The `# fio: ...` comment line (without its newline) written above the key.
    pub(super) fn comment(&self) -> String {
        match self {
            Origin::Opt(s) => match &s.value {
                Some(v) => format!("# fio: {}={} (section [{}], line {})", s.key, v, s.section, s.line),
                None => format!("# fio: {} (section [{}], line {})", s.key, s.section, s.line),
            },
            Origin::Default(text) => format!("# fio: {text}"),
        }
    }
}

/// One iolab key with its value and origins.
#[derive(Clone, Debug, PartialEq)]
pub struct TranslatedKey {
    /// The iolab key.
    pub key: &'static str,
    /// The value as iolab's parser reads it (unquoted).
    pub text: String,
    /// The fio options (or defaults) behind it.
    pub origins: Vec<Origin>,
    /// A difference a fio user should know about, written as a `# note:` line.
    pub note: Option<String>,
}

/// Keys whose values are written bare, as TOML numbers.
const NUMBER_KEYS: &[&str] = &[
    "qd",
    "rate",
    "burst",
    "flow",
    "flow_id",
    "latency_percentile",
    "read_pct",
    "random_pct",
    "trim_pct",
    "weight",
    "count",
    "seed",
    "ios",
    "workers",
    "fsync",
    "fdatasync",
];
/// Keys whose values are written bare, as TOML booleans.
const BOOL_KEYS: &[&str] = &["direct", "verify", "atomic"];

impl TranslatedKey {
    /// An entry whose value iolab's own parser for `key` accepts; `Err` says what it expected.
    pub fn new(key: &'static str, text: String, origins: Vec<Origin>) -> Result<TranslatedKey, String> {
        check(key, &text)?;
        Ok(TranslatedKey { key, text, origins, note: None })
    }

    /// The same entry with a note.
    pub fn with_note(mut self, note: impl Into<String>) -> TranslatedKey {
        self.note = Some(note.into());
        self
    }

    /// The value as TOML: numbers and booleans bare, anything else a quoted string.
    fn value(&self) -> String {
        if NUMBER_KEYS.contains(&self.key) || BOOL_KEYS.contains(&self.key) {
            self.text.clone()
        } else {
            crate::quote(&self.text)
        }
    }

    /// Writes the entry: its origins' comments, its note, then `key = value`.
    pub(super) fn write(&self, out: &mut String) {
        for o in &self.origins {
            out.push_str(&o.comment());
            out.push('\n');
        }
        if let Some(n) = &self.note {
            out.push_str(&format!("# note: {n}\n"));
        }
        out.push_str(&format!("{} = {}\n", self.key, self.value()));
    }
}

/// Whether iolab's own parser for `key` accepts `text` (`count` is checked here: it is a table's, not a
/// layer's); `Err` says what it expected.
fn check(key: &str, text: &str) -> Result<(), String> {
    let place = Place::Flag(key.to_string());
    let r = if key == "count" {
        match text.parse::<u32>() {
            Ok(n) if (1..=iolab_spec::MAX_WORKERS).contains(&n) => Ok(true),
            _ => return Err(format!("a number of jobs from 1 to {}", iolab_spec::MAX_WORKERS)),
        }
    } else {
        iolab_spec::keys::check(key, text, &place)
    };
    match r {
        Ok(true) => Ok(()),
        Ok(false) => Err(format!("a value iolab has a key for (no key '{key}')")),
        Err(SpecError::InvalidValue { expected, .. }) => Err(format!("{expected} (iolab's '{key}')")),
        Err(e) => Err(e.to_string()),
    }
}
