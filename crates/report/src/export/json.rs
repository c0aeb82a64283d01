//! JSON: every document, pretty-printed. A run and a sweep end without a newline, a comparison and a find-max
//! search with one, as each command has always written them.

use std::convert::Infallible;

use serde::Serialize;

use super::Exporter;
use crate::plugin::Document;

/// The JSON exporter.
#[derive(Clone, Copy, Debug, Default)]
pub struct JsonExporter;

impl JsonExporter {
    /// The document as JSON: every document has one, so this cannot fail ([`Exporter::export`] is the same).
    pub fn render(&self, doc: &dyn Document) -> String {
        doc.json()
    }
}

impl Exporter for JsonExporter {
    type Error = Infallible;

    fn export(&self, doc: &dyn Document) -> Result<String, Infallible> {
        Ok(self.render(doc))
    }
}

/// A document as pretty-printed JSON.
pub(crate) fn pretty<T: Serialize>(doc: &T) -> String {
    match serde_json::to_string_pretty(doc) {
        Ok(s) => s,
        // Only non-string map keys or a failing Serialize impl can fail; the documents have neither.
        Err(e) => unreachable!("document serialisation failed: {e}"),
    }
}
