//! What a kind declares for the catalog: the kinds of entries that hold its documents ([`EntryKind`]) and
//! the columns `iolab runs` shows its headline figures in ([`Column`]). The catalog itself knows no kind: it
//! stores the entry kind's name and the [`iolab_doc::Columns`] the kinds compute, so a new kind needs no
//! migration.

use iolab_doc::Columns;
use serde_json::Value;

/// A kind of catalog entry: how the catalog stores it, and how users type it.
#[derive(Debug)]
pub struct EntryKind {
    /// The name stored in the catalog: `run`, `find_max`, `db_tpch`. Never changes once released: catalogs
    /// in the field hold it.
    pub stored: &'static str,
    /// How users type it (`iolab runs --kind`), besides the stored name: `db-tpch`, `dbtpch`. The first is
    /// how `iolab runs` and `iolab show` print it.
    pub typed: &'static [&'static str],
    /// What it is, for `iolab runs --kind`'s help: `iolab db tpch query sets`.
    pub what: &'static str,
}

impl EntryKind {
    /// The name as `iolab runs` prints it: the first typed name.
    pub fn printed(&self) -> &'static str {
        self.typed.first().copied().unwrap_or(self.stored)
    }

    /// Whether `text` names this kind, as stored or as typed, in any case.
    pub fn is_named(&self, text: &str) -> bool {
        let t = text.trim().to_ascii_lowercase();
        t == self.stored || self.typed.contains(&t.as_str())
    }
}

/// When `iolab runs` shows a column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColumnShown {
    /// Always, with `-` where an entry has none of its figures (IOPS, MB/s, p99).
    Always,
    /// When some listed entry has its first figure (NOPM, a tpch query set's times).
    WhenAny,
}

/// A column of the `iolab runs` table, showing headline figures of the kinds that declare it.
#[derive(Debug)]
pub struct Column {
    /// Its heading: `IOPS`, `NOPM`, `queries (total / geomean)`.
    pub header: &'static str,
    /// Where it goes among the figure columns: they are shown in this order (IOPS 10, MB/s 20, NOPM 30,
    /// queries 40, p99 90), between the targets and the tags.
    pub place: u16,
    /// When it is shown.
    pub shown: ColumnShown,
    /// The figures it shows (their keys in [`Columns::figures`]); `iolab runs --json` has each as a field.
    pub figures: &'static [&'static str],
    /// The cell of an entry, `-` when it has none.
    pub cell: fn(&Columns) -> String,
}

/// The columns every document has, read from the fields of its top level that most kinds share: its
/// start, whether it is partial and the iolab version. A kind's [`super::Kind::columns`] adds the rest.
pub fn common_columns(doc: &Value) -> Columns {
    Columns {
        started_at: str_at(doc, "/started_at"),
        started_unix_s: f64_at(doc, "/started_unix_s"),
        partial: doc
            .get("partial")
            .or_else(|| doc.get("interrupted"))
            .and_then(Value::as_bool)
            .unwrap_or(false),
        iolab_version: str_at(doc, "/iolab_version"),
        ..Columns::default()
    }
}

/// The string at a JSON pointer, if there is one.
pub fn str_at(v: &Value, pointer: &str) -> Option<String> {
    v.pointer(pointer).and_then(Value::as_str).map(str::to_string)
}

/// The number at a JSON pointer, if there is one.
pub fn f64_at(v: &Value, pointer: &str) -> Option<f64> {
    v.pointer(pointer).and_then(Value::as_f64)
}

/// Adds `name` to `list` unless it is there.
pub fn push_unique(list: &mut Vec<String>, name: &str) {
    if !list.iter().any(|t| t == name) {
        list.push(name.to_string());
    }
}
