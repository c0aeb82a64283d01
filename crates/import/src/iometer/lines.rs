//! The line level of an ICF file: key lines (`'Key`), their value lines, comment lines and `Version` lines.

use super::IcfError;

/// One value line: its 1-based line number and its trimmed text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValueLine {
    /// 1-based line number.
    pub line: usize,
    /// The trimmed text.
    pub text: String,
}

/// One key line with the value lines that follow it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Item {
    /// The key as written, without the quote and without trailing `=` rulers.
    pub key: String,
    /// The key lower-cased, for matching.
    pub norm: String,
    /// 1-based line number of the key line.
    pub line: usize,
    /// The value lines.
    pub values: Vec<ValueLine>,
}

impl Item {
    /// True when the normalised key starts with `prefix` (lower case).
    pub fn is(&self, prefix: &str) -> bool {
        self.norm.starts_with(prefix)
    }

    /// The first value line, or a syntax error naming the key.
    pub fn value(&self, file: &str, what: &str) -> Result<&ValueLine, IcfError> {
        self.values.first().ok_or_else(|| IcfError::Syntax {
            file: file.to_string(),
            line: self.line,
            expected: format!("a value line after '{}: {what}", self.key),
            found: "nothing".into(),
        })
    }
}

/// The file as key items, plus the Iometer version named on its `Version` line.
#[derive(Debug, Default)]
pub struct Lines {
    /// The version text (`1.1.0`, `2006.07.27`), if the file names one.
    pub version: Option<String>,
    /// The key items in file order.
    pub items: Vec<Item>,
}

/// A line starting with `'` and then a blank (or nothing) is a comment, such as `' hours  minutes  seconds`.
fn is_comment(line: &str) -> bool {
    line.strip_prefix('\'').is_some_and(|rest| rest.is_empty() || rest.starts_with(char::is_whitespace))
}

/// Splits the text into items. A value line before the first key line is an error (unless it is `Version`).
pub fn split(text: &str, file: &str) -> Result<Lines, IcfError> {
    let mut out = Lines::default();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let t = raw.trim().trim_start_matches('\u{feff}');
        if t.is_empty() || is_comment(t) {
            continue;
        }
        if let Some(key) = t.strip_prefix('\'') {
            let key = key.trim_end_matches('=').trim().to_string();
            let norm = key.to_ascii_lowercase();
            out.items.push(Item { key, norm, line, values: Vec::new() });
        } else if let Some(v) = version_of(t) {
            out.version.get_or_insert(v);
        } else if let Some(item) = out.items.last_mut() {
            item.values.push(ValueLine { line, text: t.to_string() });
        } else {
            return Err(IcfError::Syntax {
                file: file.into(),
                line,
                expected: "an Iometer configuration: a 'Version' line or a key line starting with '".into(),
                found: t.to_string(),
            });
        }
    }
    Ok(out)
}

fn version_of(line: &str) -> Option<String> {
    let (word, rest) = line.split_once(char::is_whitespace)?;
    word.eq_ignore_ascii_case("version").then(|| rest.trim().to_string())
}

/// The fields of a value line, split on commas and blanks (`0  1  30`, `16,DISABLED,1`).
pub fn fields(text: &str) -> Vec<&str> {
    text.split(|c: char| c == ',' || c.is_whitespace()).filter(|f| !f.is_empty()).collect()
}

/// The fields of a comma-separated value line, each trimmed (empty fields kept).
pub fn comma_fields(text: &str) -> Vec<&str> {
    text.split(',').map(str::trim).collect()
}
