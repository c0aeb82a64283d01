//! Profile metadata (`[profile]` in a job file): what a built-in or user profile is for, where its numbers
//! come from and what a run should show. `iolab profiles` lists `description` one line per profile; the
//! fields are also kept in the job so a result can say which profile produced it. The metadata never changes
//! what runs: the worker tables do that.

use crate::error::{suggest, Place, SpecError};
use serde::{Deserialize, Serialize};

/// Keys of the `[profile]` table.
pub const PROFILE_KEYS: &[&str] = &["description", "sources", "expected"];

/// The `[profile]` table.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ProfileMeta {
    /// One line: what the profile models (listed by `iolab profiles`).
    pub description: Option<String>,
    /// Where the numbers come from (docs/SOURCES.md sections, seed documents, original sources).
    pub sources: Vec<String>,
    /// What a run should show on healthy storage, and what to look at.
    pub expected: Option<String>,
}

impl ProfileMeta {
    /// Parses the `[profile]` table: `description` and `expected` are strings, `sources` a string or an
    /// array of strings. Unknown keys are errors with a did-you-mean suggestion.
    pub fn from_toml(value: &toml::Value, file: &str) -> Result<Self, SpecError> {
        let table = value.as_table().ok_or_else(|| SpecError::Conflict {
            place: Place::Key { file: file.into(), table: String::new(), key: "profile".into() },
            message: "expected a table such as [profile] with description = \"...\"".into(),
        })?;
        let mut meta = ProfileMeta::default();
        for (key, v) in table {
            let place = Place::Key { file: file.into(), table: "[profile]".into(), key: key.clone() };
            let text = |v: &toml::Value| -> Result<String, SpecError> {
                v.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| SpecError::invalid(&place, v.to_string(), "a string"))
            };
            match key.as_str() {
                "description" => meta.description = Some(text(v)?),
                "expected" => meta.expected = Some(text(v)?),
                "sources" => {
                    meta.sources = match v {
                        toml::Value::Array(items) => items.iter().map(text).collect::<Result<_, _>>()?,
                        other => vec![text(other)?],
                    }
                }
                _ => {
                    return Err(SpecError::UnknownKey {
                        file: file.into(),
                        table: "[profile]".into(),
                        key: key.clone(),
                        suggestion: suggest(key, PROFILE_KEYS).map(str::to_string),
                    })
                }
            }
        }
        Ok(meta)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<ProfileMeta, SpecError> {
        let v: toml::Table = text.parse().unwrap();
        ProfileMeta::from_toml(&toml::Value::Table(v), "p.toml")
    }

    #[test]
    fn profile_table_parses_string_or_array_sources() {
        let m = parse("description = \"d\"\nsources = [\"a\", \"b\"]\nexpected = \"e\"").unwrap();
        assert_eq!(m.description.as_deref(), Some("d"));
        assert_eq!(m.sources, vec!["a", "b"]);
        assert_eq!(parse("sources = \"one\"").unwrap().sources, vec!["one"]);
    }

    #[test]
    fn profile_unknown_key_suggests() {
        let e = parse("descripton = \"d\"").unwrap_err().to_string();
        assert!(e.contains("unknown key 'descripton'; did you mean 'description'?"), "{e}");
        assert!(parse("description = 3").is_err());
    }
}
