//! The job-file reader: a TOML job file into a [`JobSpec`]. The top level takes run keys, worker and
//! access-spec keys (every worker's defaults) and the tables of [`TABLE_KEYS`]; `[worker.NAME]`,
//! `[[spec]]` and `[[phase]]` tables take what their scope allows. Each key is looked up in its definition
//! ([`super::keys`]) and its text goes to the key's own setter, the one the command line uses, so a job
//! file and a flag parse a value alike.

mod phase;
mod targets;
mod worker;

use super::jobspec::JobSpec;
use super::keys::{self, Count, Key, Sets, RUN_KEYS, SPEC_KEYS, WORKER_KEYS};
use crate::consent::Consent;
use crate::error::{suggest, Place, SpecError};
use crate::exchange::ExchangeSpec;
use crate::loadgen::LoadgenSpec;
use crate::profile::ProfileMeta;
use crate::verdict::VerdictSpec;

/// Tables valid at the top level of a job file.
pub const TABLE_KEYS: &[&str] =
    &["spec", "worker", "targets", "profile", "exchange", "verdict", "users", "transaction", "phase"];

impl JobSpec {
    /// Parses a job file's text; `file` names it in errors.
    pub fn from_toml(text: &str, file: &str) -> Result<JobSpec, SpecError> {
        let table: toml::Table = text
            .parse()
            .map_err(|e: toml::de::Error| SpecError::Syntax { file: file.into(), message: e.to_string() })?;
        let mut job = JobSpec { file: Some(file.to_string()), ..JobSpec::default() };
        let top_known: Vec<&str> =
            RUN_KEYS.iter().chain(WORKER_KEYS).chain(SPEC_KEYS).chain(TABLE_KEYS).copied().collect();
        for (key, value) in &table {
            let place = Place::Key { file: file.into(), table: String::new(), key: key.clone() };
            match key.as_str() {
                "spec" => job.specs = worker::read_specs(value, file, "[[spec]]")?,
                "targets" => job.targets = targets::read_targets(value, file)?,
                "phase" => job.phases = phase::read_phases(value, file)?,
                "profile" => job.profile = Some(ProfileMeta::from_toml(value, file)?),
                "exchange" => job.exchange = Some(ExchangeSpec::from_toml(value, file)?),
                "verdict" => job.verdict = Some(VerdictSpec::from_toml(value, file)?),
                "users" | "transaction" => {
                    if job.loadgen.is_none() {
                        job.loadgen = Some(LoadgenSpec::from_job_table(&table, file)?);
                    }
                }
                "worker" => job.worker_tables = worker::read_workers(value, &place, file, "[worker.db]")?,
                _ => match keys::find(key) {
                    Some(k) => match k.sets {
                        Sets::Run(set) | Sets::Phase(set) => {
                            each_text(k, value, &place, |text| set(&mut job, text, &place))?
                        }
                        Sets::Worker(set) | Sets::Spec(set) => {
                            each_text(k, value, &place, |text| set(&mut job.defaults, text, &place))?
                        }
                        Sets::Consent(_) => return Err(Consent::refuse(key, &place)),
                    },
                    None => {
                        return Err(SpecError::UnknownKey {
                            file: file.into(),
                            table: String::new(),
                            key: key.clone(),
                            suggestion: suggest(key, &top_known).map(str::to_string),
                        })
                    }
                },
            }
        }
        if !job.phases.is_empty() && !job.worker_tables.is_empty() {
            return Err(SpecError::Conflict {
                place: Place::Key { file: file.into(), table: String::new(), key: "phase".into() },
                message: "[worker.NAME] tables and [[phase]] tables both define workers; put the workers in each phase ([phase.worker.NAME])".into(),
            });
        }
        if job.workers.is_some() && !job.worker_tables.is_empty() {
            return Err(SpecError::Conflict {
                place: Place::Key { file: file.into(), table: String::new(), key: "workers".into() },
                message: "'workers' counts default workers; with [worker.NAME] tables, set 'count' inside each table".into(),
            });
        }
        Ok(job)
    }
}

/// The text of a scalar TOML value, as the user wrote it (strings without quotes).
pub(crate) fn scalar_text(v: &toml::Value, place: &Place) -> Result<String, SpecError> {
    match v {
        toml::Value::String(s) => Ok(s.clone()),
        toml::Value::Integer(i) => Ok(i.to_string()),
        toml::Value::Float(f) => Ok(f.to_string()),
        toml::Value::Boolean(b) => Ok(b.to_string()),
        other => {
            Err(SpecError::invalid(place, other.to_string(), "a single value (string, number or boolean)"))
        }
    }
}

/// Calls `set` with each text of `key`'s value, in order: each item of an array for a key that takes
/// several ([`Count`]; an empty array refused where the key needs one), else the one scalar.
fn each_text(
    key: &Key,
    value: &toml::Value,
    place: &Place,
    mut set: impl FnMut(&str) -> Result<(), SpecError>,
) -> Result<(), SpecError> {
    match value {
        toml::Value::Array(items) if key.count != Count::One => {
            if items.is_empty() && key.count == Count::AtLeastOne {
                return Err(SpecError::invalid(place, "[]", format!("at least one {}", key.name)));
            }
            items.iter().try_for_each(|item| set(&scalar_text(item, place)?))
        }
        one => set(&scalar_text(one, place)?),
    }
}

#[cfg(test)]
mod tests;
