//! Phases: a job whose `[[phase]]` tables run one after another, each with its own workers and its own
//! result (fio's `stonewall`, Iometer's list of access specifications run in order).
//!
//! ```toml
//! duration = "30s"            # run settings are every phase's, unless a phase sets its own
//! target = "/data/f"
//!
//! [[phase]]
//! name = "fill"
//! bytes = "8G"
//! [phase.worker.writer]
//! rw = "write"
//! bs = "1M"
//!
//! [[phase]]
//! name = "oltp"
//! [phase.worker.db]
//! count = 4
//! rw = "randrw"
//! read_pct = 70
//! ```
//!
//! Each phase becomes a complete job ([`JobSpec::phase_jobs`]): the file's run settings and defaults, the
//! phase's worker tables, and the phase's own `duration`, `ramp`, `ios` or `bytes` where it sets them. A
//! command-line value wins over both.

use crate::error::{Place, SpecError};
use crate::job::{read_worker, scalar_text, JobSpec, WorkerSpec};
use serde::{Deserialize, Serialize};

/// The run settings a phase may set for itself.
pub const PHASE_RUN_KEYS: &[&str] = &["duration", "ramp", "ios", "bytes"];

/// One `[[phase]]` table.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PhaseSpec {
    /// `name` (default `phase N`).
    pub name: String,
    /// Its `[phase.worker.NAME]` tables; none means the file's default worker.
    pub worker_tables: Vec<WorkerSpec>,
    /// Its own `duration`, `ramp`, `ios` and `bytes`, parsed as the top-level keys are.
    pub run: JobSpec,
}

/// Reads the `phase` array of tables of `file`.
pub(crate) fn read_phases(value: &toml::Value, file: &str) -> Result<Vec<PhaseSpec>, SpecError> {
    let top = Place::Key { file: file.into(), table: String::new(), key: "phase".into() };
    let tables = value.as_array().filter(|a| a.iter().all(toml::Value::is_table)).ok_or_else(|| {
        SpecError::Conflict { place: top.clone(), message: "expected [[phase]] tables".into() }
    })?;
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
            "worker" => {
                let workers = v.as_table().ok_or_else(|| SpecError::Conflict {
                    place: place.clone(),
                    message: "expected worker tables such as [phase.worker.db]".into(),
                })?;
                for (name, w) in workers {
                    p.worker_tables.push(read_worker(name, w, file)?);
                }
            }
            k if PHASE_RUN_KEYS.contains(&k) => {
                p.run.set_run(k, &scalar_text(v, &place)?, &place)?;
            }
            _ => {
                let known: Vec<&str> = PHASE_RUN_KEYS.iter().copied().chain(["name", "worker"]).collect();
                return Err(SpecError::UnknownKey {
                    file: file.into(),
                    table: tname,
                    key: key.clone(),
                    suggestion: crate::error::suggest(key, &known).map(str::to_string),
                });
            }
        }
    }
    Ok(p)
}

impl JobSpec {
    /// The jobs a job with phases runs, in order, each with its phase's name; a job without phases is one job
    /// named `None`. Each phase's job is the file's job with the phase's workers and run settings; its name is
    /// the job's name (or file) and the phase's (`oltp.toml [load]`).
    pub fn phase_jobs(&self) -> Vec<(Option<String>, JobSpec)> {
        if self.phases.is_empty() {
            return vec![(None, self.clone())];
        }
        let base = self.name.clone().or_else(|| self.file.clone()).unwrap_or_else(|| "job".into());
        self.phases.iter().map(|p| (Some(p.name.clone()), self.phase_job(p, &base))).collect()
    }

    fn phase_job(&self, p: &PhaseSpec, base: &str) -> JobSpec {
        let mut job = self.clone();
        job.phases.clear();
        job.worker_tables = p.worker_tables.clone();
        if p.run.ramp_ns.is_some() {
            job.ramp_ns = p.run.ramp_ns;
        }
        if p.run.duration_ns.is_some() {
            job.duration_ns = p.run.duration_ns;
        }
        if p.run.ios.is_some() || p.run.bytes.is_some() {
            // A phase bounded by a size (a fill) ends there, not at the file's duration.
            job.ios = p.run.ios;
            job.bytes = p.run.bytes;
            if p.run.duration_ns.is_none() {
                job.duration_ns = None;
            }
        }
        job.name = Some(format!("{base} [{}]", p.name));
        job
    }

    /// Lets the command line win over every phase: a run setting given there is taken out of the phases, and
    /// `--workers` sets every phase's worker counts (called by [`JobSpec::apply_overrides`]).
    pub(crate) fn apply_overrides_to_phases(&mut self, cli: &JobSpec) {
        for p in &mut self.phases {
            if cli.duration_ns.is_some() || cli.ios.is_some() || cli.bytes.is_some() {
                p.run.duration_ns = None;
                p.run.ios = None;
                p.run.bytes = None;
            }
            if cli.ramp_ns.is_some() {
                p.run.ramp_ns = None;
            }
            if let Some(n) = cli.workers {
                for w in &mut p.worker_tables {
                    w.count = n;
                }
            }
        }
    }
}
