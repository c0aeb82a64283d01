//! iolab-catalog: every run, sweep and search kept in one SQLite file, so runs can be listed, shown,
//! exported, compared and reported later (`iolab runs`, `show`, `export`, `rm`, `compare`, `report`).
//!
//! STUB: the API below is the contract; the implementation is being written.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// What kind of document an entry holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EntryKind {
    /// One run: an `iolab.result/1` document.
    Run,
    /// A sweep: an `iolab.sweep/1` document.
    Sweep,
    /// A `--find-max` search: an `iolab.findmax/1` document.
    FindMax,
}

/// Errors of the catalog.
#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    /// Not written yet.
    #[error("the catalog is not implemented yet")]
    Unimplemented,
}

/// A document to save.
#[derive(Clone, Debug)]
pub struct NewEntry {
    /// Its kind.
    pub kind: EntryKind,
    /// The full document (result, sweep or search JSON), as written by `--json`.
    pub doc: serde_json::Value,
    /// `--tag key=value` pairs.
    pub tags: Vec<(String, String)>,
    /// `--note TEXT`.
    pub note: Option<String>,
}

/// A saved entry.
#[derive(Clone, Debug, Serialize)]
pub struct Entry {
    /// Short, stable id (hex).
    pub id: String,
    /// Its kind.
    pub kind: EntryKind,
    /// When it was saved, seconds since the Unix epoch.
    pub saved_unix_s: f64,
    /// Tags.
    pub tags: Vec<(String, String)>,
    /// Note.
    pub note: Option<String>,
    /// The full document.
    pub doc: serde_json::Value,
}

/// Which entries `list` returns (all conditions must hold); newest first.
#[derive(Clone, Debug, Default)]
pub struct Filter {
    /// Every one of these tags.
    pub tags: Vec<(String, String)>,
    /// Profile name.
    pub profile: Option<String>,
    /// A substring of a target name.
    pub target: Option<String>,
    /// Saved at or after, Unix seconds.
    pub since_unix_s: Option<f64>,
    /// Saved before, Unix seconds.
    pub until_unix_s: Option<f64>,
    /// Only this kind.
    pub kind: Option<EntryKind>,
    /// At most this many.
    pub limit: Option<usize>,
}

/// An open catalog.
pub struct Catalog {
    _path: PathBuf,
}

impl Catalog {
    /// The default path: `$IOLAB_DB`, else `$XDG_DATA_HOME/iolab/results.db`, else
    /// `~/.local/share/iolab/results.db`.
    pub fn default_path() -> PathBuf {
        PathBuf::from("results.db")
    }

    /// Opens (creating if missing, migrating an older schema) the catalog at `path`. A catalog from a newer
    /// iolab, or a file that is not one, is an error and is never modified.
    pub fn open(path: &Path) -> Result<Catalog, CatalogError> {
        let _ = path;
        Err(CatalogError::Unimplemented)
    }

    /// Saves an entry and returns its id.
    pub fn save(&self, entry: &NewEntry) -> Result<String, CatalogError> {
        let _ = entry;
        Err(CatalogError::Unimplemented)
    }

    /// The entry with this id (or a unique prefix of one).
    pub fn get(&self, id: &str) -> Result<Entry, CatalogError> {
        let _ = id;
        Err(CatalogError::Unimplemented)
    }

    /// Entries matching `filter`, newest first.
    pub fn list(&self, filter: &Filter) -> Result<Vec<Entry>, CatalogError> {
        let _ = filter;
        Err(CatalogError::Unimplemented)
    }

    /// Removes the entry with this id (or a unique prefix); returns its full id.
    pub fn remove(&self, id: &str) -> Result<String, CatalogError> {
        let _ = id;
        Err(CatalogError::Unimplemented)
    }
}
