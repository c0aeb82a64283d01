//! `[worker.NAME]` tables (worker and access-spec keys, `count`, their `[[worker.NAME.spec]]` tables) and
//! `[[spec]]` tables (access-spec keys alone).

use super::{each_text, scalar_text};
use crate::consent::Consent;
use crate::error::{suggest, Place, SpecError};
use crate::job::jobspec::WorkerSpec;
use crate::job::keys::{self, range_u32, Sets, SPEC_KEYS, WORKER_KEYS};
use crate::job::layer::Layer;
use crate::units::MAX_WORKERS;

/// Reads an array of access-spec tables written `table` (`[[spec]]`, `[[worker.db.spec]]`).
pub(super) fn read_specs(value: &toml::Value, file: &str, table: &str) -> Result<Vec<Layer>, SpecError> {
    let items = value.as_array().ok_or_else(|| SpecError::Conflict {
        place: Place::Key { file: file.into(), table: String::new(), key: "spec".into() },
        message: format!("expected an array of tables, written {table}"),
    })?;
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let tname = format!("{table} #{}", i + 1);
        let t = item.as_table().ok_or_else(|| SpecError::Conflict {
            place: Place::Key { file: file.into(), table: tname.clone(), key: "spec".into() },
            message: "expected a table of access-spec keys".into(),
        })?;
        let mut layer = Layer::default();
        for (key, v) in t {
            let place = Place::Key { file: file.into(), table: tname.clone(), key: key.clone() };
            match keys::find(key).map(|k| (k, k.sets)) {
                Some((k, Sets::Spec(set))) => each_text(k, v, &place, |text| set(&mut layer, text, &place))?,
                _ => {
                    return Err(SpecError::UnknownKey {
                        file: file.into(),
                        table: tname,
                        key: key.clone(),
                        suggestion: suggest(key, SPEC_KEYS).map(str::to_string),
                    })
                }
            }
        }
        out.push(layer);
    }
    if out.len() > 100 {
        return Err(SpecError::Conflict {
            place: Place::Key { file: file.into(), table: table.into(), key: "spec".into() },
            message: "at most 100 access specs per worker (Iometer's limit)".into(),
        });
    }
    Ok(out)
}

/// Reads the worker tables of a `worker` key (`[worker.NAME]`, `[phase.worker.NAME]`; `example` shows one
/// when it holds none), refusing more tables than a run has workers (each is at least one) before any is read.
pub(super) fn read_workers(
    value: &toml::Value,
    place: &Place,
    file: &str,
    example: &str,
) -> Result<Vec<WorkerSpec>, SpecError> {
    let workers = value.as_table().ok_or_else(|| SpecError::Conflict {
        place: place.clone(),
        message: format!("expected worker tables such as {example}"),
    })?;
    if workers.len() > MAX_WORKERS as usize {
        return Err(SpecError::Conflict {
            place: place.clone(),
            message: format!("{} worker tables; a run has at most {MAX_WORKERS} workers", workers.len()),
        });
    }
    workers.iter().map(|(name, w)| read_worker(name, w, file)).collect()
}

/// Reads the table `[worker.NAME]` (also `[phase.worker.NAME]`).
fn read_worker(name: &str, value: &toml::Value, file: &str) -> Result<WorkerSpec, SpecError> {
    let tname = format!("[worker.{name}]");
    let t = value.as_table().ok_or_else(|| SpecError::Conflict {
        place: Place::Key { file: file.into(), table: String::new(), key: format!("worker.{name}") },
        message: "expected a table".into(),
    })?;
    let mut w = WorkerSpec { name: name.to_string(), count: 1, layer: Layer::default(), specs: Vec::new() };
    let known: Vec<&str> = WORKER_KEYS.iter().chain(SPEC_KEYS).copied().chain(["count", "spec"]).collect();
    for (key, v) in t {
        let place = Place::Key { file: file.into(), table: tname.clone(), key: key.clone() };
        match key.as_str() {
            "count" => {
                w.count = range_u32(&place, &scalar_text(v, &place)?, 1, MAX_WORKERS, "a whole number")?
            }
            "spec" => w.specs = read_specs(v, file, &format!("[[worker.{name}.spec]]"))?,
            _ => {
                let unknown = |run_key: bool| SpecError::UnknownKey {
                    file: file.into(),
                    table: tname.clone(),
                    key: if run_key {
                        format!("{key}' (a run setting: put it at the top of the file)")
                    } else {
                        key.clone()
                    },
                    suggestion: if run_key { None } else { suggest(key, &known).map(str::to_string) },
                };
                match keys::find(key) {
                    Some(k) => match k.sets {
                        Sets::Worker(set) | Sets::Spec(set) => {
                            each_text(k, v, &place, |text| set(&mut w.layer, text, &place))?
                        }
                        Sets::Consent(_) => return Err(Consent::refuse(key, &place)),
                        Sets::Run(_) | Sets::Phase(_) => return Err(unknown(true)),
                    },
                    None => return Err(unknown(false)),
                }
            }
        }
    }
    Ok(w)
}
