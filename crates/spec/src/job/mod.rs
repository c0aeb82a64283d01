//! The job model: what one run asked for, in layers.
//!
//! A job has run-level settings (duration, ramp, seed, engine, ...), a default [`Layer`] of worker and
//! access-spec settings, optional default access specs (`[[spec]]`), and optional worker tables
//! (`[worker.NAME]`, each with its own layer and specs). Command-line flags form a *forced* layer that
//! wins over every table, so `iolab run job.toml --qd 16` runs every worker at depth 16.
//!
//! Every key has one name everywhere: `--read-pct` on the command line is `read_pct` in TOML and JSON.
//! Each key is defined once, in [`keys`]: its names, doc, scope and the one parser that the TOML reader,
//! the command line, sweeps and imports all use, so they cannot disagree.
//!
//! One thing a file: `values.rs` (the keys' enumerated values), `layer.rs` ([`Layer`]), `jobspec.rs`
//! ([`JobSpec`] and its parts: worker tables, named targets, phases), `integrity.rs` ([`IntegritySpec`]),
//! `keys/` (the definitions, [`keys::KEYS`]), `read/` (the TOML reader, [`JobSpec::from_toml`]).

mod integrity;
mod jobspec;
pub mod keys;
mod layer;
mod read;
mod values;

pub use integrity::IntegritySpec;
pub use jobspec::{JobSpec, NamedTarget, PhaseSpec, WorkerSpec};
pub use keys::{CONSENT_KEYS, PHASE_RUN_KEYS, RUN_KEYS, SPEC_KEYS, WORKER_KEYS};
pub use layer::{Layer, MAX_QD};
pub use read::TABLE_KEYS;
pub use values::{ClockKind, DataPattern, Dedupe, EngineKind, Prealloc, Rw, VerifyFail};
