//! `[targets]`: the named targets a job declares (`db = "/data/db.edb"`, `db = { path = "...", size = "200G" }`),
//! which its workers use as `target = "@db"` and the command line sets with `--target db=PATH`.

use super::scalar_text;
use crate::error::{suggest, Place, SpecError};
use crate::job::jobspec::NamedTarget;
use crate::job::keys::positive_size;
use crate::target::{is_target_name, TargetSpec};
use std::collections::BTreeMap;

/// Reads the `[targets]` table of `file`.
pub(super) fn read_targets(
    value: &toml::Value,
    file: &str,
) -> Result<BTreeMap<String, NamedTarget>, SpecError> {
    let conflict = |key: &str, message: String| SpecError::Conflict {
        place: Place::Key { file: file.into(), table: "[targets]".into(), key: key.into() },
        message,
    };
    let t = value.as_table().ok_or_else(|| {
        conflict("targets", "expected a table such as [targets] with db = \"/data/db.edb\"".into())
    })?;
    let mut out = BTreeMap::new();
    for (name, v) in t {
        if !is_target_name(name) {
            return Err(conflict(name, "a target name is a letter, then letters, digits, '_' or '-'".into()));
        }
        let place = Place::Key { file: file.into(), table: "[targets]".into(), key: name.clone() };
        let mut nt = NamedTarget::default();
        match v {
            toml::Value::Table(fields) => {
                for (k, fv) in fields {
                    let place =
                        Place::Key { file: file.into(), table: format!("[targets.{name}]"), key: k.clone() };
                    let text = scalar_text(fv, &place)?;
                    match k.as_str() {
                        "path" | "target" => nt.spec = Some(TargetSpec::parse_named(&text, &place)?),
                        "size" => nt.size = Some(positive_size(&place, &text)?),
                        "footprint" => nt.footprint = Some(positive_size(&place, &text)?),
                        _ => {
                            return Err(SpecError::UnknownKey {
                                file: file.into(),
                                table: format!("[targets.{name}]"),
                                key: k.clone(),
                                suggestion: suggest(k, &["path", "size", "footprint"]).map(str::to_string),
                            })
                        }
                    }
                }
            }
            other => nt.spec = Some(TargetSpec::parse_named(&scalar_text(other, &place)?, &place)?),
        }
        if nt.size.is_some() && nt.footprint.is_some() {
            return Err(conflict(
                name,
                "'size' (the file to create) or 'footprint' (the span the workers address, which also sizes a created file), not both".into(),
            ));
        }
        out.insert(name.clone(), nt);
    }
    Ok(out)
}
