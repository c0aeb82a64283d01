//! What a catalog lists a document by: the [`Columns`] read out of it (start, name, targets, headline
//! figures), which the report's document kinds compute (`iolab-report`'s `kinds`) and the catalog stores
//! beside the document, so neither crate depends on the other. The document stays the source of truth; the
//! columns are an index of it.

use std::collections::BTreeMap;

/// The indexed facts of one document.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Columns {
    /// RFC 3339 start of the run, sweep or search.
    pub started_at: Option<String>,
    /// Start, Unix seconds.
    pub started_unix_s: Option<f64>,
    /// The run's own id (`run_id`), for runs.
    pub run_id: Option<String>,
    /// The name it lists under: the job or profile (`config.plan.name`), a run without one by its workload,
    /// a database run by its workload and engine (`tpcc sqlite`).
    pub profile: Option<String>,
    /// Target display names (a database run's devices), in order, without duplicates.
    pub targets: Vec<String>,
    /// Interrupted (Ctrl-C): the document is partial.
    pub partial: bool,
    /// iolab version that wrote the document.
    pub iolab_version: Option<String>,
    /// The headline figures, by key (`iops`, `mb_s`, `p99_ns`, `nopm`, ...): which a document has depends on
    /// its kind, and each kind declares how `iolab runs` shows them.
    pub figures: BTreeMap<String, f64>,
}

impl Columns {
    /// The figure `key`, when the document has it.
    pub fn figure(&self, key: &str) -> Option<f64> {
        self.figures.get(key).copied()
    }

    /// Sets the figure `key` to `value`, or leaves it out when there is none (or it is not a number JSON can
    /// hold).
    pub fn set_figure(&mut self, key: &str, value: Option<f64>) {
        match value.filter(|v| v.is_finite()) {
            Some(v) => self.figures.insert(key.to_string(), v),
            None => self.figures.remove(key),
        };
    }
}

/// How a catalog computes an entry's columns: from the entry's kind as stored (`run`, `db_tpch`) and its
/// document; an error says why the document cannot be kept as that kind (an unknown kind, another schema).
pub type Indexer = fn(kind: &str, doc: &serde_json::Value) -> Result<Columns, String>;
