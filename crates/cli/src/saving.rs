//! Saving in the results catalog: the [`Saver`] that every run, sweep and search opens before it starts (a
//! catalog that cannot be opened, or a bad `--tag`, is an exit-2 error before anything is created or run)
//! and uses after it, to save its document. The catalog itself (file layout, migrations, concurrency) is
//! `iolab-catalog`; docs/CATALOG.md describes it.

use crate::args::CatalogFlags;
use crate::exit::usage;
use anyhow::{Context, Result};
use iolab_catalog::{Catalog, CatalogError};
use iolab_device::{Access, WriteGate};
use iolab_report::plugin::EntryKind;
use iolab_report::Document;
use std::path::{Path, PathBuf};

/// Parses one `--tag KEY=VALUE`.
pub fn parse_tag(text: &str) -> Result<(String, String)> {
    match text.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.to_string())),
        _ => Err(usage(format!(
            "invalid value '{text}' for '--tag': expected KEY=VALUE with a non-empty KEY, e.g. 'hba=qle2560'"
        ))),
    }
}

/// Parses every `--tag`; a key given twice is an error.
pub fn parse_tags(texts: &[String]) -> Result<Vec<(String, String)>> {
    let mut tags: Vec<(String, String)> = Vec::new();
    for t in texts {
        let (k, v) = parse_tag(t)?;
        if tags.iter().any(|(k2, _)| *k2 == k) {
            return Err(usage(format!("invalid value '{t}' for '--tag': key '{k}' is given twice")));
        }
        tags.push((k, v));
    }
    Ok(tags)
}

/// A tag query, `tag:KEY=VALUE[,KEY=VALUE...]` (what `compare` and `report` take beside ids and files): `None`
/// when `input` is not one, else its pairs, or an error that quotes the input.
pub fn tag_query(input: &str) -> Option<Result<Vec<(String, String)>>> {
    let query = input.strip_prefix("tag:")?;
    let mut tags = Vec::new();
    for part in query.split(',') {
        match part.split_once('=') {
            Some((k, v)) if !k.trim().is_empty() => tags.push((k.trim().to_string(), v.trim().to_string())),
            _ => {
                return Some(Err(usage(format!(
                    "invalid tag query '{input}': '{part}' is not KEY=VALUE; expected tag:KEY=VALUE[,KEY=VALUE...]"
                ))))
            }
        }
    }
    Some(Ok(tags))
}

/// Opens the catalog at `path` with iolab's kinds of documents (which read each document's columns).
pub fn open_catalog(path: &Path) -> Result<Catalog, CatalogError> {
    Catalog::open(path, iolab_report::kinds::index)
}

/// The kind of catalog entry a document is saved as: its kind's (`iolab verify` names its own).
pub fn entry(doc: &dyn Document) -> Result<&'static EntryKind> {
    iolab_report::kinds::entry_of(doc)
        .ok_or_else(|| anyhow::anyhow!("a {} document is not kept in the catalog", doc.kind().name()))
}

/// The catalog's path: `--db`, else the default (`$IOLAB_DB`, XDG, home).
pub fn db_path(db: &Option<PathBuf>) -> PathBuf {
    db.clone().unwrap_or_else(Catalog::default_path)
}

/// The catalog and what to save with the next document: made before a run starts (a catalog that cannot be
/// opened, or could not be created, is an exit-2 error before anything is created or run), used after it. A
/// catalog not there yet is created by the first save, so a run refused later creates nothing.
pub struct Saver {
    path: PathBuf,
    catalog: std::cell::OnceCell<Catalog>,
    tags: Vec<(String, String)>,
    note: Option<String>,
    quiet: bool,
}

impl Saver {
    /// Checks the tags and opens the catalog, unless `--no-save` or `--dry-run` (then `None`); its path is
    /// claimed in `gate`, so no output or target of the command can be the catalog.
    pub fn open(
        flags: &CatalogFlags,
        quiet: bool,
        dry_run: bool,
        gate: &mut WriteGate,
    ) -> Result<Option<Saver>> {
        let tags = parse_tags(&flags.tag)?;
        if flags.no_save || dry_run {
            return Ok(None);
        }
        let path = db_path(&flags.db);
        gate.claim("the catalog", &path.to_string_lossy(), Access::Writes).map_err(usage)?;
        let catalog = std::cell::OnceCell::new();
        check_room(&path)?;
        if std::fs::symlink_metadata(&path).is_ok() {
            let opened = open_catalog(&path).map_err(usage)?;
            opened.check_ready_to_save().map_err(usage)?;
            let _ = catalog.set(opened);
        } else {
            iolab_device::gate::check_can_create(&path)
                .map_err(|why| usage(format!("cannot create the catalog '{}': {why}", path.display())))?;
        }
        Ok(Some(Saver { path, catalog, tags, note: flags.note.clone(), quiet }))
    }

    /// The catalog, opened (created) now if it was not there when the command started.
    fn catalog(&self) -> Result<&Catalog> {
        if let Some(c) = self.catalog.get() {
            return Ok(c);
        }
        let opened = open_catalog(&self.path).map_err(usage)?;
        Ok(self.catalog.get_or_init(|| opened))
    }

    /// Saves the run of one step of a search (`text`, kept as `entry`), silently, tagged `find-max` = the
    /// search's start time and with `note`, so the search's document can name it (`run_id`) and `iolab
    /// report` can show it.
    pub fn save_step(
        &self,
        entry: &EntryKind,
        text: &str,
        search_started: &str,
        note: &str,
    ) -> Result<String> {
        let catalog = self.catalog().map_err(|e| not_written(&e))?;
        let tags = [("find-max".to_string(), search_started.to_string())];
        catalog.save_text(entry.stored, text, &tags, Some(note)).map_err(|e| not_written(&e))
    }

    /// Saves a document (its `--json` text) and says so on stderr. The work is done by now, so a catalog
    /// that cannot take it (a full disk) is exit 3, an output not written, naming the catalog; never 2.
    pub fn save(&self, entry: &EntryKind, text: &str) -> Result<String> {
        let not_saved = || format!("the {} finished but was not saved in the catalog", entry.printed());
        let catalog = self.catalog().map_err(|e| not_written(&e)).with_context(not_saved)?;
        let id = catalog
            .save_text(entry.stored, text, &self.tags, self.note.as_deref())
            .map_err(|e| not_written(&e))
            .with_context(not_saved)?;
        if !self.quiet {
            eprintln!("iolab: saved as {id} in {}", catalog.path().display());
        }
        Ok(id)
    }
}

/// The free space below which a catalog's file system counts as full before a command starts: SQLite needs
/// its 32 KiB `-shm` and a few pages of `-wal` before it can even check, and would leave both behind.
const MIN_FREE_BYTES: u64 = 128 << 10;

/// Refuses, before the catalog is opened (which creates its `-wal` and `-shm` files), a catalog whose file
/// system is full, so a refused command creates nothing.
fn check_room(path: &std::path::Path) -> Result<()> {
    let dir = match path.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(d) => d,
        None => std::path::Path::new("."),
    };
    let Ok(st) = nix::sys::statvfs::statvfs(dir) else { return Ok(()) };
    let free = st.blocks_available().saturating_mul(st.fragment_size());
    if free >= MIN_FREE_BYTES {
        return Ok(());
    }
    Err(usage(format!(
        "catalog '{}': disk full ({free} bytes free on the filesystem that holds it, at least {MIN_FREE_BYTES} needed)\n  hint: free space there, or pass --db PATH (or set IOLAB_DB) to use a catalog elsewhere",
        path.display()
    )))
}

/// A save that failed after the work was done: exit 3, its text as the message.
fn not_written(e: &dyn std::fmt::Display) -> anyhow::Error {
    anyhow::Error::new(crate::exit::OutputsNotWritten).context(e.to_string())
}

/// Saves with `saver` if there is one. The caller prints its output next and returns this result after it,
/// so a failed save never hides the numbers of a finished run.
pub fn save(saver: Option<&Saver>, entry: &EntryKind, text: &str) -> Result<()> {
    match saver {
        Some(s) => s.save(entry, text).map(|_| ()),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tag_query_parses_pairs_and_refuses_bare_words() {
        let t = tag_query("tag:hba=qle2560,site=lab1").unwrap().unwrap();
        assert_eq!(t, [("hba".into(), "qle2560".into()), ("site".into(), "lab1".into())]);
        let e = tag_query("tag:hba").unwrap().unwrap_err();
        assert!(format!("{e:#}").contains("invalid tag query 'tag:hba'"), "{e:#}");
        assert!(tag_query("f72bd450").is_none());
    }

    #[test]
    fn tag_needs_a_key_and_an_equals_sign() {
        assert_eq!(parse_tag("hba=qle2560").unwrap(), ("hba".into(), "qle2560".into()));
        assert_eq!(parse_tag("k=a=b").unwrap(), ("k".into(), "a=b".into()));
        assert_eq!(parse_tag("k=").unwrap(), ("k".into(), "".into()));
        for bad in ["hba", "=x", " =x", ""] {
            let e = format!("{:#}", parse_tag(bad).unwrap_err());
            assert!(e.contains(&format!("'{bad}' for '--tag'")), "{e}");
        }
        let e = format!("{:#}", parse_tags(&["a=1".into(), "a=2".into()]).unwrap_err());
        assert!(e.contains("key 'a' is given twice"), "{e}");
    }
}
