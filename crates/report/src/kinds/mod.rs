//! Every kind of document iolab writes, one file each, and the one list of them ([`KINDS`]): what each
//! declares (its schema, its name, how it is read, its catalog entries and columns, its parts of a report,
//! what compare reads from it) is in its file, as a [`Kind`] (the trait is [`crate::plugin`]'s, ripgrep's
//! flag definitions are the model).
//!
//! Everything that depends on the kind of a document asks here: which kind a JSON document is
//! ([`recognise`], [`parse`]: the one place that works it out), what a catalog entry kind is called
//! ([`entry_kind`], [`entry_kinds`]), the catalog's columns of a document ([`index`], what the catalog
//! calls), the columns `iolab runs` shows ([`listing`]) and the names `--metric` takes ([`metric_names`]).
//!
//! Adding a kind is one file here (its model, its renderings and its declarations, or a declaration that
//! points at them) and one line in [`KINDS`]'s list (docs/ARCHITECTURE.md, "Adding a document kind").

use serde_json::Value;

use crate::plugin::catalog::common_columns;
use crate::plugin::{Column, Document, EntryKind, Kind};

mod columns;
mod plan_name;
#[cfg(test)]
mod tests;

/// Declares the kinds: each line is a module of this folder and the kind it declares, in the order the
/// registry lists them (the order `iolab runs --kind`'s help, the `--metric` names and the messages that
/// list kinds follow).
macro_rules! kinds {
    ($($(#[$attr:meta])* $module:ident :: $kind:ident),* $(,)?) => {
        $($(#[$attr])* pub mod $module;)*
        /// Every kind, in order.
        pub static KINDS: &[&dyn Kind] = &[$($(#[$attr])* &$module::$kind),*];
    };
}

kinds! {
    run::RunKind,
    sweep::SweepKind,
    compare::CompareKind,
    find_max::FindMaxKind,
    mrc::MrcKind,
    db::TpccKind,
    db_sweep::TpccSweepKind,
    db_tpch::TpchKind,
    db_copy::CopyKind,
    db_ycsb::YcsbKind,
    ai_train::AiTrainKind,
    ai_checkpoint::AiCheckpointKind,
    #[cfg(test)]
    toy::ToyKind,
}

/// Why a JSON document is not one this iolab reads.
#[derive(Clone, Debug, PartialEq)]
pub enum Unreadable {
    /// Not JSON at all.
    NotJson(String),
    /// No `schema` field (not an iolab document).
    NoSchema,
    /// A schema no kind has (another program's document, or a newer iolab's).
    UnknownSchema(String),
    /// Its kind's, but its fields do not fit: the schema, and what does not fit.
    Invalid(&'static str, String),
}

impl std::fmt::Display for Unreadable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unreadable::NotJson(e) => write!(f, "not JSON: {e}"),
            Unreadable::NoSchema => write!(f, "no \"schema\" field"),
            Unreadable::UnknownSchema(s) => {
                write!(f, "schema '{s}' is not an iolab document this iolab reads")
            }
            Unreadable::Invalid(_, e) => f.write_str(e),
        }
    }
}

impl std::error::Error for Unreadable {}

/// The kind of a JSON document, by its `schema` field.
pub fn recognise(doc: &Value) -> Result<&'static dyn Kind, Unreadable> {
    let schema = doc.get("schema").and_then(Value::as_str).ok_or(Unreadable::NoSchema)?;
    KINDS
        .iter()
        .copied()
        .find(|k| k.schema() == schema)
        .ok_or_else(|| Unreadable::UnknownSchema(schema.into()))
}

/// Reads a JSON document of any kind, recognised by its `schema` field.
pub fn parse(doc: Value) -> Result<Box<dyn Document>, Unreadable> {
    let kind = recognise(&doc)?;
    kind.parse(doc).map_err(|e| Unreadable::Invalid(kind.schema(), e))
}

/// Reads a document from its JSON text.
pub fn parse_text(text: &str) -> Result<Box<dyn Document>, Unreadable> {
    parse(serde_json::from_str(text).map_err(|e| Unreadable::NotJson(e.to_string()))?)
}

/// The kinds `accepts` keeps, as a message lists what it expected: `iolab.result/1 (run), ...`.
pub fn expected(accepts: impl Fn(&dyn Kind) -> bool) -> String {
    let names: Vec<String> =
        KINDS.iter().filter(|k| accepts(**k)).map(|k| format!("{} ({})", k.schema(), k.name())).collect();
    match names.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// Every kind of catalog entry, with the kind of document it holds, in the order of [`KINDS`].
pub fn entry_kinds() -> impl Iterator<Item = (&'static dyn Kind, &'static EntryKind)> {
    KINDS.iter().flat_map(|k| k.entries().iter().map(move |e| (*k, e)))
}

/// The kind of catalog entry `text` names, as stored (`find_max`) or as users type it (`find-max`).
pub fn entry_kind(text: &str) -> Option<(&'static dyn Kind, &'static EntryKind)> {
    entry_kinds().find(|(_, e)| e.is_named(text))
}

/// The entry kind a document is saved as: its kind's first (a run's is `run`; `iolab verify` names
/// its own).
pub fn entry_of(doc: &dyn Document) -> Option<&'static EntryKind> {
    doc.kind().entries().first()
}

/// The catalog's columns of a document kept as entry kind `stored`: the common ones, then its kind's. What
/// the catalog calls ([`iolab_doc::listing::Indexer`]); an unknown kind, or a document of another schema, is
/// an error saying so.
pub fn index(stored: &str, doc: &Value) -> Result<iolab_doc::Columns, String> {
    let (kind, _) = entry_kinds()
        .find(|(_, e)| e.stored == stored)
        .ok_or_else(|| format!("'{stored}' is not a kind of entry this iolab knows"))?;
    if let Some(schema) = doc.get("schema").and_then(Value::as_str) {
        if schema != kind.schema() {
            return Err(format!("its schema is '{schema}'"));
        }
    }
    let mut c = common_columns(doc);
    kind.columns(doc, &mut c);
    Ok(c)
}

/// The columns of `iolab runs` for headline figures, every kind's, in their places.
pub fn listing() -> Vec<&'static Column> {
    let mut all: Vec<&'static Column> = Vec::new();
    for c in KINDS.iter().flat_map(|k| k.listing()) {
        if !all.iter().any(|x| x.header == c.header) {
            all.push(c);
        }
    }
    all.sort_by_key(|c| c.place);
    all
}

/// The names `--metric` takes, every comparable kind's, each once, in the order of [`KINDS`].
pub fn metric_names() -> Vec<(&'static str, &'static str)> {
    let mut all: Vec<(&'static str, &'static str)> = Vec::new();
    for n in KINDS.iter().filter_map(|k| k.compare()).flat_map(|c| c.metric_names()) {
        if !all.iter().any(|x| x.0 == n.0) {
            all.push(*n);
        }
    }
    all
}
