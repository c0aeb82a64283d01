//! `[[phase]]` tables: each phase's name, its `[phase.worker.NAME]` tables and the run settings it sets for
//! itself ([`PHASE_RUN_KEYS`]). `crate::phase` makes the jobs they run.

use super::scalar_text;
use super::worker::read_workers;
use crate::error::{suggest, Place, SpecError};
use crate::job::jobspec::PhaseSpec;
use crate::job::keys::PHASE_RUN_KEYS;
use crate::units::{MAX_PHASES, MAX_WORKER_TABLES};

/// Reads the `phase` array of tables of `file`.
pub(super) fn read_phases(value: &toml::Value, file: &str) -> Result<Vec<PhaseSpec>, SpecError> {
    let top = Place::Key { file: file.into(), table: String::new(), key: "phase".into() };
    let tables = value.as_array().filter(|a| a.iter().all(toml::Value::is_table)).ok_or_else(|| {
        SpecError::Conflict { place: top.clone(), message: "expected [[phase]] tables".into() }
    })?;
    if tables.len() > MAX_PHASES {
        return Err(SpecError::Conflict {
            place: top,
            message: format!("{} [[phase]] tables; a job runs at most {MAX_PHASES} phases", tables.len()),
        });
    }
    let worker_tables: usize =
        tables.iter().map(|t| t.get("worker").and_then(toml::Value::as_table).map_or(0, |w| w.len())).sum();
    if worker_tables > MAX_WORKER_TABLES {
        return Err(SpecError::Conflict {
            place: top,
            message: format!("{worker_tables} [phase.worker.NAME] tables over all phases; a job has at most {MAX_WORKER_TABLES}"),
        });
    }
    tables.iter().enumerate().map(|(i, t)| read_phase(i, t, file)).collect()
}

fn read_phase(index: usize, value: &toml::Value, file: &str) -> Result<PhaseSpec, SpecError> {
    let table = value.as_table().expect("checked by read_phases");
    let tname = format!("[[phase]] #{}", index + 1);
    let mut p = PhaseSpec { name: format!("phase {}", index + 1), ..PhaseSpec::default() };
    for (key, v) in table {
        let place = Place::Key { file: file.into(), table: tname.clone(), key: key.clone() };
        match key.as_str() {
            "name" => p.name = scalar_text(v, &place)?,
            "worker" => p.worker_tables = read_workers(v, &place, file, "[phase.worker.db]")?,
            _ if PHASE_RUN_KEYS.contains(&key.as_str()) => {
                p.run.set_run(key, &scalar_text(v, &place)?, &place)?;
            }
            _ => {
                let known: Vec<&str> = PHASE_RUN_KEYS.iter().copied().chain(["name", "worker"]).collect();
                return Err(SpecError::UnknownKey {
                    file: file.into(),
                    table: tname,
                    key: key.clone(),
                    suggestion: suggest(key, &known).map(str::to_string),
                });
            }
        }
    }
    Ok(p)
}
