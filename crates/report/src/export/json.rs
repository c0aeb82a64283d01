//! JSON: every document, pretty-printed. A run and a sweep end without a newline, a comparison and a find-max
//! search with one, as each command has always written them.

use std::convert::Infallible;

use serde::Serialize;

use super::{Document, Exporter};

/// The JSON exporter.
#[derive(Clone, Copy, Debug, Default)]
pub struct JsonExporter;

impl JsonExporter {
    /// The document as JSON: every document has one, so this cannot fail ([`Exporter::export`] is the same).
    pub fn render(&self, doc: &Document<'_>) -> String {
        match doc {
            Document::Run(r) => pretty(r),
            Document::Sweep(s) => pretty(s),
            Document::Compare(c) => pretty(c) + "\n",
            Document::FindMax(f) => pretty(f) + "\n",
            Document::Mrc(m) => pretty(m) + "\n",
            Document::Db(d) => pretty(d) + "\n",
            Document::DbSweep(d) => pretty(d) + "\n",
            Document::DbTpch(t) => pretty(t) + "\n",
            Document::DbCopy(c) => pretty(c) + "\n",
        }
    }
}

impl Exporter for JsonExporter {
    type Error = Infallible;

    fn export(&self, doc: &Document<'_>) -> Result<String, Infallible> {
        Ok(self.render(doc))
    }
}

fn pretty<T: Serialize>(doc: &T) -> String {
    match serde_json::to_string_pretty(doc) {
        Ok(s) => s,
        // Only non-string map keys or a failing Serialize impl can fail; the documents have neither.
        Err(e) => unreachable!("document serialisation failed: {e}"),
    }
}
