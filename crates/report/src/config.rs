//! A run's `config`: the resolved job it followed, as the run serialised it (`plan`, `regions`,
//! `interval_s`), or as an import could reconstruct it (a fio result's plan has no regions, and workers only
//! where fio said something of them).
//!
//! The document keeps it whole, so a result reads back and writes out byte for byte whoever produced it; the
//! report reads it only through [`RunConfig::plan`], one typed view of the fields any rendering uses, never
//! through paths into the JSON.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The resolved job of a run (the module doc says why it is kept whole).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct RunConfig(Value);

impl From<Value> for RunConfig {
    fn from(v: Value) -> Self {
        RunConfig(v)
    }
}

impl RunConfig {
    /// The config as stored in the document.
    pub fn as_value(&self) -> &Value {
        &self.0
    }

    /// The plan's fields that renderings read; each absent one empty (an imported run's plan has fewer).
    pub fn plan(&self) -> PlanView {
        self.0.get("plan").cloned().and_then(|p| serde_json::from_value(p).ok()).unwrap_or_default()
    }
}

/// What renderings read of a plan.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct PlanView {
    /// The job's name.
    pub name: Option<String>,
    /// The run's targets, in plan order.
    pub targets: Vec<PlanTarget>,
    /// The workers, in plan order.
    pub workers: Vec<PlanWorker>,
}

/// A target of the plan.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct PlanTarget {
    /// Its name in the run.
    pub name: String,
    /// What it is (`iolab-spec`'s target, as serialised: `kind`, and a link's `target`, an emulated
    /// device's `wcache`, ...).
    pub spec: Value,
}

/// A worker of the plan.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct PlanWorker {
    /// Queue depth.
    pub qd: Option<u64>,
    /// Offered rate, IOPS (open loop).
    pub rate_iops: Option<f64>,
    /// Its access specs (`rw`, `bs`, ... as serialised; `iolab-doc`'s `workload` reads them).
    pub specs: Vec<Value>,
    /// What it asked of durability; absent when nothing.
    pub durability: Option<PlanDurability>,
}

/// A worker's durability, as the plan wrote it.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct PlanDurability {
    /// `dsync` or `sync` when its writes are synchronous.
    pub write_sync: Option<String>,
    /// A flush after every this many writes (0: none).
    pub flush_every: u64,
    /// The flush is an fdatasync (else an fsync).
    pub flush_data_only: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_config_reads_back_whole_and_its_plan_typed() {
        let text = r#"{"interval_s":1.0,"plan":{"name":"j","targets":[{"name":"t","spec":{"kind":"null"}}],"workers":[{"durability":{"flush_data_only":false,"flush_every":0,"write_sync":"dsync"},"qd":4,"rate_iops":null,"specs":[{"rw":"read"}]}],"x":[1]},"regions":[]}"#;
        let c: RunConfig = serde_json::from_str(text).unwrap();
        assert_eq!(serde_json::to_string(&c).unwrap(), text, "kept whole");
        let p = c.plan();
        assert_eq!(p.name.as_deref(), Some("j"));
        assert_eq!((p.targets[0].name.as_str(), p.workers[0].qd), ("t", Some(4)));
        assert_eq!(p.workers[0].durability.as_ref().unwrap().write_sync.as_deref(), Some("dsync"));
        let none: RunConfig = serde_json::from_str(r#"{"k<":"v>&"}"#).unwrap();
        assert!(none.plan().name.is_none() && none.plan().workers.is_empty(), "no plan: an empty view");
    }
}
