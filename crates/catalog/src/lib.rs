//! iolab-catalog: every run, sweep and search kept in one SQLite file, so runs can be listed, shown,
//! exported, compared and reported later (`iolab runs`, `show`, `export`, `rm`, `compare`, `report`).
//!
//! Each entry keeps the **full document** exactly as `--json` writes it (an `iolab.result/1` run, an
//! `iolab.sweep/1` sweep, an `iolab.findmax/1` search, a database run, ...). A run's document already carries
//! the resolved configuration (`config`), the environment (`env`) and the merged HDR histograms
//! (`histograms`, base64), so percentiles can be recomputed and runs merged later from the catalog alone.
//! Beside it the catalog keeps its kind, an index of columns read out of the document (timestamps, profile,
//! targets, partial, and the headline figures in a table of their own), the user's tags (a separate table)
//! and note.
//!
//! The catalog knows no kind of document: the caller names an entry's kind (`run`, `db_tpch`) and gives the
//! [`Indexer`] that reads a document's columns (`iolab-report`'s `kinds::index`), so a new kind of document
//! needs no migration and no change here.
//!
//! The file is versioned (`PRAGMA user_version`, see [`schema`]) and migrated forward when an older iolab
//! made it; a catalog from a newer iolab, or a file that is not a catalog, is refused and never written.
//! Several processes may write one catalog at once: WAL mode, a 10 s busy timeout and one short
//! transaction per save. docs/CATALOG.md has the details.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod extract;
pub mod schema;

pub use iolab_doc::listing::{Columns, Indexer};
use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// Errors of the catalog. Each names the catalog's path and says what to do.
#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    /// Never returned; kept so code written against the first (stub) API still compiles.
    #[error("the catalog is not implemented yet")]
    Unimplemented,
    /// The directory of a new catalog could not be created.
    #[error("cannot create the catalog directory '{}': {source}\n  hint: pass --db PATH (or set IOLAB_DB) to put the catalog elsewhere, or --no-save", path.display())]
    CreateDir {
        /// The directory.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not an iolab catalog (not a database, corrupt, or another program's database).
    #[error("'{}' is not an iolab catalog: {reason}; it was not changed\n  hint: move it away, or pass --db PATH (or set IOLAB_DB) to use another catalog", path.display())]
    NotACatalog {
        /// The file.
        path: PathBuf,
        /// What was found.
        reason: String,
    },
    /// The catalog was written by a newer iolab whose schema this one cannot read.
    #[error("catalog '{}' was written by a newer iolab (schema version {found}; this iolab reads versions up to {supported}); it was not changed\n  hint: upgrade iolab, or pass --db PATH (or set IOLAB_DB) to use another catalog", path.display())]
    NewerSchema {
        /// The file.
        path: PathBuf,
        /// Its schema version.
        found: i64,
        /// The newest version this iolab reads.
        supported: i64,
    },
    /// No entry has this id or an id starting with it.
    #[error("no entry '{id}' in catalog '{}'; `iolab runs` lists the ids", path.display())]
    NotFound {
        /// As typed.
        id: String,
        /// The catalog.
        path: PathBuf,
    },
    /// Several entries start with this prefix.
    #[error("id '{prefix}' is ambiguous in catalog '{}': it starts {}; type more of it", path.display(), candidates.join(", "))]
    Ambiguous {
        /// As typed.
        prefix: String,
        /// The catalog.
        path: PathBuf,
        /// The ids it starts (at most 10).
        candidates: Vec<String>,
    },
    /// An id that cannot be one (empty, or not hex digits).
    #[error("invalid id '{id}': expected the hex digits of an id or its start, as `iolab runs` lists them")]
    BadId {
        /// As typed.
        id: String,
    },
    /// A tag with an empty key, or a key given twice.
    #[error("invalid tag '{tag}': {reason}")]
    BadTag {
        /// As `key=value`.
        tag: String,
        /// What is wrong.
        reason: String,
    },
    /// A document that cannot be saved as the given kind.
    #[error("cannot save this document as a {kind}: {reason}")]
    BadDocument {
        /// The kind asked for.
        kind: String,
        /// What is wrong.
        reason: String,
    },
    /// SQLite's quick check found damage (bad pages behind an intact header): checked before a run, so a
    /// damaged catalog is refused before anything runs, and left as it is.
    #[error("catalog '{}' is damaged (SQLite's quick_check: {findings}); it was not changed\n  hint: recover what it holds with `sqlite3 FILE .recover`, or pass --db PATH (or set IOLAB_DB) to use another catalog, or --no-save", path.display())]
    Damaged {
        /// The catalog.
        path: PathBuf,
        /// What the check found (its first lines).
        findings: String,
    },
    /// The catalog cannot be written (a read-only file, directory or filesystem).
    #[error("catalog '{}' cannot be written ({reason}); nothing was run\n  hint: pass --db PATH (or set IOLAB_DB) to use a writable catalog, or --no-save", path.display())]
    ReadOnly {
        /// The catalog.
        path: PathBuf,
        /// What SQLite or the filesystem said.
        reason: String,
    },
    /// The catalog's filesystem is full.
    #[error("catalog '{}': disk full (no space left on the filesystem that holds it)\n  hint: free space there, or pass --db PATH (or set IOLAB_DB) to use a catalog elsewhere", path.display())]
    DiskFull {
        /// The catalog.
        path: PathBuf,
    },
    /// Any other SQLite failure (busy past the timeout, permissions).
    #[error("catalog '{}': {source}", path.display())]
    Sqlite {
        /// The catalog.
        path: PathBuf,
        /// SQLite's error.
        source: rusqlite::Error,
    },
}

/// A document to save.
#[derive(Clone, Debug)]
pub struct NewEntry {
    /// Its kind, as stored (`run`, `find_max`, `db_tpch`).
    pub kind: String,
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
    /// Its kind, as stored (`run`, `find_max`, `db_tpch`).
    pub kind: String,
    /// When it was saved, seconds since the Unix epoch.
    pub saved_unix_s: f64,
    /// Tags.
    pub tags: Vec<(String, String)>,
    /// Note.
    pub note: Option<String>,
    /// The full document.
    pub doc: serde_json::Value,
    /// The document's text exactly as saved (what `--json` wrote, byte for byte); [`Entry::doc`] is it parsed.
    #[serde(skip)]
    pub doc_text: String,
    /// The indexed columns (profile, targets, headline numbers, ...).
    #[serde(skip)]
    pub summary: Summary,
}

/// One entry without its document: what `iolab runs` lists.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Summary {
    /// Short, stable id (hex).
    pub id: String,
    /// Its kind, as stored (`run`, `sweep`, `find_max`).
    pub kind: String,
    /// When it was saved, seconds since the Unix epoch.
    pub saved_unix_s: f64,
    /// The facts read out of the document (start, profile, targets, headline numbers, ...).
    #[serde(flatten)]
    pub columns: Columns,
    /// Tags, sorted by key.
    pub tags: Vec<(String, String)>,
    /// Note.
    pub note: Option<String>,
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
    /// Only this kind, as stored.
    pub kind: Option<String>,
    /// At most this many.
    pub limit: Option<usize>,
}

/// An open catalog.
pub struct Catalog {
    path: PathBuf,
    conn: Connection,
    index: Indexer,
}

/// The columns [`Summary`] is read from, in this order (its figures are a table of their own).
const SUMMARY_COLUMNS: &str =
    "id, kind, saved_unix_s, started_at, started_unix_s, run_id, profile, targets, partial, note, iolab_version";

fn now_unix_s() -> f64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs_f64()).unwrap_or(0.0)
}

/// Checks tags: non-empty keys, each key once.
fn check_tags(tags: &[(String, String)]) -> Result<(), CatalogError> {
    for (i, (k, v)) in tags.iter().enumerate() {
        let tag = format!("{k}={v}");
        if k.trim().is_empty() {
            return Err(CatalogError::BadTag { tag, reason: "the key is empty; expected KEY=VALUE".into() });
        }
        if tags[..i].iter().any(|(k2, _)| k2 == k) {
            return Err(CatalogError::BadTag { tag, reason: format!("key '{k}' is given twice") });
        }
    }
    Ok(())
}

impl Catalog {
    /// The default path: `$IOLAB_DB`, else `$XDG_DATA_HOME/iolab/results.db`, else
    /// `~/.local/share/iolab/results.db`. Empty variables count as unset (as the XDG spec says); without any,
    /// `./iolab-results.db`.
    pub fn default_path() -> PathBuf {
        let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
        if let Some(p) = var("IOLAB_DB") {
            return PathBuf::from(p);
        }
        if let Some(d) = var("XDG_DATA_HOME").filter(|d| Path::new(d).is_absolute()) {
            return Path::new(&d).join("iolab").join("results.db");
        }
        match var("HOME") {
            Some(h) => Path::new(&h).join(".local/share/iolab/results.db"),
            None => PathBuf::from("iolab-results.db"),
        }
    }

    /// Opens (creating if missing, migrating an older schema) the catalog at `path`, whose documents' columns
    /// `index` reads (when they are saved, and when a migration asks for them again). A catalog from a newer
    /// iolab, or a file that is not one, is an error and is never modified.
    pub fn open(path: &Path, index: Indexer) -> Result<Catalog, CatalogError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            if !dir.is_dir() {
                std::fs::create_dir_all(dir)
                    .map_err(|source| CatalogError::CreateDir { path: dir.to_path_buf(), source })?;
            }
        }
        let sql_err = |source| sql_error(path, source);
        let conn = Connection::open(path).map_err(sql_err)?;
        conn.busy_timeout(schema::BUSY_TIMEOUT).map_err(sql_err)?;
        schema::check(&conn, path)?;
        schema::configure(&conn, path)?;
        schema::migrate(&conn, path, &|conn| reextract_all(conn, index))?;
        Ok(Catalog { path: path.to_path_buf(), conn, index })
    }

    /// The file this catalog lives in.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn sql_err(&self, source: rusqlite::Error) -> CatalogError {
        sql_error(&self.path, source)
    }

    /// Checks, before a run, that a document can be saved here afterwards: SQLite's quick check finds no
    /// damage, and a write transaction can start (the file, its directory and its filesystem are writable).
    /// Nothing is written: the transaction is rolled back. A catalog that fails is left as it was, so the
    /// caller can refuse the run before anything is created. `quick_check` reads every page once: on a
    /// catalog of 5,002 runs (51 MB) it took 0.04-0.10 s with the file in the page cache and 1.1 s from a
    /// cold cache on a virtio disk (docs/CATALOG.md), cheap beside any run.
    pub fn check_ready_to_save(&self) -> Result<(), CatalogError> {
        let mut stmt = self.conn.prepare("PRAGMA quick_check(5)").map_err(|e| self.sql_err(e))?;
        let lines: Vec<String> =
            stmt.query_map([], |r| r.get(0)).and_then(|rows| rows.collect()).map_err(|e| self.damaged(e))?;
        if lines != ["ok"] {
            return Err(CatalogError::Damaged { path: self.path.clone(), findings: lines.join("; ") });
        }
        if self.conn.is_readonly(rusqlite::MAIN_DB).unwrap_or(false) {
            return Err(CatalogError::ReadOnly {
                path: self.path.clone(),
                reason: "SQLite opened it read-only".into(),
            });
        }
        // A write lock needs the file and, in WAL mode, its -wal and -shm files to be writable.
        let tx = rusqlite::Transaction::new_unchecked(&self.conn, TransactionBehavior::Immediate)
            .map_err(|e| self.unwritable(e))?;
        tx.execute("UPDATE entries SET note = note WHERE 0", []).map_err(|e| self.unwritable(e))?;
        tx.rollback().map_err(|e| self.unwritable(e))
    }

    fn damaged(&self, e: rusqlite::Error) -> CatalogError {
        match e.sqlite_error_code() {
            Some(rusqlite::ErrorCode::DatabaseCorrupt) | Some(rusqlite::ErrorCode::NotADatabase) => {
                CatalogError::Damaged { path: self.path.clone(), findings: e.to_string() }
            }
            _ => self.sql_err(e),
        }
    }

    fn unwritable(&self, e: rusqlite::Error) -> CatalogError {
        match e.sqlite_error_code() {
            Some(rusqlite::ErrorCode::ReadOnly) | Some(rusqlite::ErrorCode::CannotOpen) => {
                CatalogError::ReadOnly { path: self.path.clone(), reason: e.to_string() }
            }
            _ => self.sql_err(e),
        }
    }

    /// Saves an entry and returns its id. The document is stored as pretty JSON; to keep the exact text
    /// `--json` wrote, use [`Catalog::save_text`].
    pub fn save(&self, entry: &NewEntry) -> Result<String, CatalogError> {
        let text = serde_json::to_string_pretty(&entry.doc)
            .map_err(|e| CatalogError::BadDocument { kind: entry.kind.clone(), reason: e.to_string() })?;
        self.insert(&entry.kind, &text, &entry.doc, &entry.tags, entry.note.as_deref())
    }

    /// Saves a document given as JSON text, stored byte for byte (so `iolab export --json` gives back exactly
    /// what `--json` wrote), and returns its id. The text must be a JSON object the indexer takes as `kind`.
    pub fn save_text(
        &self,
        kind: &str,
        text: &str,
        tags: &[(String, String)],
        note: Option<&str>,
    ) -> Result<String, CatalogError> {
        let doc: serde_json::Value = serde_json::from_str(text).map_err(|e| CatalogError::BadDocument {
            kind: kind.to_string(),
            reason: format!("not JSON: {e}"),
        })?;
        self.insert(kind, text, &doc, tags, note)
    }

    fn insert(
        &self,
        kind: &str,
        text: &str,
        doc: &serde_json::Value,
        tags: &[(String, String)],
        note: Option<&str>,
    ) -> Result<String, CatalogError> {
        let bad = |reason: String| CatalogError::BadDocument { kind: kind.to_string(), reason };
        if !doc.is_object() {
            return Err(bad("not a JSON object".into()));
        }
        let c = (self.index)(kind, doc).map_err(bad)?;
        check_tags(tags)?;
        let saved = now_unix_s();
        // One short write transaction: pick a free id, insert the entry and its tags.
        let tx = rusqlite::Transaction::new_unchecked(&self.conn, TransactionBehavior::Immediate)
            .map_err(|e| self.sql_err(e))?;
        let mut id = String::new();
        for candidate in extract::id_candidates(kind, c.run_id.as_deref(), text) {
            let taken: bool = tx
                .query_row("SELECT EXISTS (SELECT 1 FROM entries WHERE id = ?1)", [&candidate], |r| r.get(0))
                .map_err(|e| self.sql_err(e))?;
            if !taken {
                id = candidate;
                break;
            }
        }
        tx.execute(
            "INSERT INTO entries (id, kind, saved_unix_s, started_at, run_id, profile, targets, partial, note, doc,
                                  started_unix_s, iolab_version)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
            params![
                id,
                kind,
                saved,
                c.started_at,
                c.run_id,
                c.profile,
                c.targets.join("\n"),
                c.partial,
                note,
                text,
                c.started_unix_s,
                c.iolab_version
            ],
        )
        .map_err(|e| self.sql_err(e))?;
        put_figures(&tx, &id, &c.figures).map_err(|e| self.sql_err(e))?;
        for (k, v) in tags {
            tx.execute("INSERT INTO tags (entry_id, key, value) VALUES (?1, ?2, ?3)", params![id, k, v])
                .map_err(|e| self.sql_err(e))?;
        }
        tx.commit().map_err(|e| self.sql_err(e))?;
        Ok(id)
    }

    /// The full id of the entry with this id, or the only one starting with it. An exact id wins over a
    /// longer id it starts (ids grow on collision, so `abcd1234` and `abcd1234ef` can both exist).
    pub fn resolve(&self, id: &str) -> Result<String, CatalogError> {
        let want = id.trim().to_ascii_lowercase();
        if want.is_empty() || !want.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(CatalogError::BadId { id: id.to_string() });
        }
        let mut stmt = self
            .conn
            .prepare("SELECT id FROM entries WHERE substr(id, 1, ?2) = ?1 ORDER BY length(id), id LIMIT 11")
            .map_err(|e| self.sql_err(e))?;
        let found: Vec<String> = stmt
            .query_map(params![want, want.len() as i64], |r| r.get(0))
            .and_then(|rows| rows.collect())
            .map_err(|e| self.sql_err(e))?;
        match found.as_slice() {
            [] => Err(CatalogError::NotFound { id: id.to_string(), path: self.path.clone() }),
            [one] => Ok(one.clone()),
            [first, ..] if *first == want => Ok(first.clone()),
            many => Err(CatalogError::Ambiguous {
                prefix: id.to_string(),
                path: self.path.clone(),
                candidates: many.iter().take(10).cloned().collect(),
            }),
        }
    }

    fn figures_of(&self, id: &str) -> Result<std::collections::BTreeMap<String, f64>, CatalogError> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT key, value FROM figures WHERE entry_id = ?1")
            .map_err(|e| self.sql_err(e))?;
        let rows = stmt
            .query_map([id], |r| Ok((r.get(0)?, r.get(1)?)))
            .and_then(|rows| rows.collect())
            .map_err(|e| self.sql_err(e));
        rows
    }

    fn tags_of(&self, id: &str) -> Result<Vec<(String, String)>, CatalogError> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT key, value FROM tags WHERE entry_id = ?1 ORDER BY key")
            .map_err(|e| self.sql_err(e))?;
        let rows = stmt
            .query_map([id], |r| Ok((r.get(0)?, r.get(1)?)))
            .and_then(|rows| rows.collect())
            .map_err(|e| self.sql_err(e));
        rows
    }

    /// The entry with this id (or a unique prefix of one).
    pub fn get(&self, id: &str) -> Result<Entry, CatalogError> {
        let full = self.resolve(id)?;
        let sql = format!("SELECT {SUMMARY_COLUMNS}, doc FROM entries WHERE id = ?1");
        let row = self
            .conn
            .query_row(&sql, [&full], |r| Ok((summary_of_row(r)?, r.get::<_, String>(11)?)))
            .optional()
            .map_err(|e| self.sql_err(e))?;
        // Removed by another process between resolve and read.
        let (mut summary, doc_text) =
            row.ok_or_else(|| CatalogError::NotFound { id: id.to_string(), path: self.path.clone() })?;
        summary.tags = self.tags_of(&full)?;
        summary.columns.figures = self.figures_of(&full)?;
        Ok(entry_of(summary, doc_text))
    }

    /// Summaries of the entries matching `filter`, newest first: what `iolab runs` lists, without reading the
    /// documents.
    pub fn summaries(&self, filter: &Filter) -> Result<Vec<Summary>, CatalogError> {
        let mut sql = format!("SELECT {SUMMARY_COLUMNS} FROM entries e WHERE 1");
        let mut args: Vec<rusqlite::types::Value> = Vec::new();
        let arg = |v: rusqlite::types::Value, args: &mut Vec<rusqlite::types::Value>| {
            args.push(v);
            format!("?{}", args.len())
        };
        for (k, v) in &filter.tags {
            let (a, b) = (arg(k.clone().into(), &mut args), arg(v.clone().into(), &mut args));
            sql += &format!(
                " AND EXISTS (SELECT 1 FROM tags t WHERE t.entry_id = e.id AND t.key = {a} AND t.value = {b})"
            );
        }
        if let Some(p) = &filter.profile {
            sql += &format!(" AND e.profile = {}", arg(p.clone().into(), &mut args));
        }
        if let Some(t) = &filter.target {
            sql += &format!(" AND instr(e.targets, {}) > 0", arg(t.clone().into(), &mut args));
        }
        if let Some(s) = filter.since_unix_s {
            sql += &format!(" AND e.saved_unix_s >= {}", arg(s.into(), &mut args));
        }
        if let Some(u) = filter.until_unix_s {
            sql += &format!(" AND e.saved_unix_s < {}", arg(u.into(), &mut args));
        }
        if let Some(k) = &filter.kind {
            sql += &format!(" AND e.kind = {}", arg(k.clone().into(), &mut args));
        }
        sql += " ORDER BY e.saved_unix_s DESC, e.rowid DESC";
        if let Some(n) = filter.limit {
            sql += &format!(" LIMIT {}", arg(i64::try_from(n).unwrap_or(i64::MAX).into(), &mut args));
        }
        let mut stmt = self.conn.prepare(&sql).map_err(|e| self.sql_err(e))?;
        let mut out: Vec<Summary> = stmt
            .query_map(rusqlite::params_from_iter(args.iter()), summary_of_row)
            .and_then(|rows| rows.collect())
            .map_err(|e| self.sql_err(e))?;
        for s in &mut out {
            s.tags = self.tags_of(&s.id)?;
            s.columns.figures = self.figures_of(&s.id)?;
        }
        Ok(out)
    }

    /// Entries matching `filter`, newest first.
    pub fn list(&self, filter: &Filter) -> Result<Vec<Entry>, CatalogError> {
        let mut out = Vec::new();
        for s in self.summaries(filter)? {
            let doc: Option<String> = self
                .conn
                .query_row("SELECT doc FROM entries WHERE id = ?1", [&s.id], |r| r.get(0))
                .optional()
                .map_err(|e| self.sql_err(e))?;
            if let Some(text) = doc {
                out.push(entry_of(s, text));
            }
        }
        Ok(out)
    }

    /// Removes the entry with this id (or a unique prefix); returns its full id.
    pub fn remove(&self, id: &str) -> Result<String, CatalogError> {
        let full = self.resolve(id)?;
        let n =
            self.conn.execute("DELETE FROM entries WHERE id = ?1", [&full]).map_err(|e| self.sql_err(e))?;
        if n == 0 {
            return Err(CatalogError::NotFound { id: id.to_string(), path: self.path.clone() });
        }
        Ok(full)
    }

    /// Runs `PRAGMA integrity_check`; `Ok(())` when SQLite answers "ok", else its findings.
    pub fn integrity_check(&self) -> Result<(), String> {
        let mut stmt = self.conn.prepare("PRAGMA integrity_check").map_err(|e| e.to_string())?;
        let lines: Vec<String> =
            stmt.query_map([], |r| r.get(0)).and_then(|rows| rows.collect()).map_err(|e| e.to_string())?;
        if lines == ["ok"] {
            Ok(())
        } else {
            Err(lines.join("; "))
        }
    }
}

/// SQLite's error as a catalog error; a write that failed for want of space says "disk full", also when SQLite
/// reports it as a generic I/O error (it does when the WAL or shared-memory file cannot grow).
pub(crate) fn sql_error(path: &Path, source: rusqlite::Error) -> CatalogError {
    match source.sqlite_error_code() {
        Some(rusqlite::ErrorCode::DiskFull) => CatalogError::DiskFull { path: path.to_path_buf() },
        Some(rusqlite::ErrorCode::SystemIoFailure) if filesystem_full(path) => {
            CatalogError::DiskFull { path: path.to_path_buf() }
        }
        _ => CatalogError::Sqlite { path: path.to_path_buf(), source },
    }
}

/// Whether the filesystem holding `path` has no block left for an unprivileged writer.
fn filesystem_full(path: &Path) -> bool {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    nix::sys::statvfs::statvfs(dir).is_ok_and(|s| s.blocks_available() == 0)
}

fn summary_of_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Summary> {
    let targets: String = r.get(7)?;
    Ok(Summary {
        id: r.get(0)?,
        kind: r.get(1)?,
        saved_unix_s: r.get(2)?,
        columns: Columns {
            started_at: r.get(3)?,
            started_unix_s: r.get(4)?,
            run_id: r.get(5)?,
            profile: r.get(6)?,
            targets: targets.split('\n').filter(|t| !t.is_empty()).map(str::to_string).collect(),
            partial: r.get(8)?,
            iolab_version: r.get(10)?,
            figures: Default::default(),
        },
        note: r.get(9)?,
        tags: Vec::new(),
    })
}

fn entry_of(summary: Summary, doc_text: String) -> Entry {
    let doc = serde_json::from_str(&doc_text).unwrap_or(serde_json::Value::Null);
    Entry {
        id: summary.id.clone(),
        kind: summary.kind.clone(),
        saved_unix_s: summary.saved_unix_s,
        tags: summary.tags.clone(),
        note: summary.note.clone(),
        doc,
        doc_text,
        summary,
    }
}

/// Replaces an entry's headline figures.
fn put_figures(
    conn: &Connection,
    id: &str,
    figures: &std::collections::BTreeMap<String, f64>,
) -> rusqlite::Result<()> {
    conn.execute("DELETE FROM figures WHERE entry_id = ?1", [id])?;
    let mut insert = conn.prepare_cached("INSERT INTO figures (entry_id, key, value) VALUES (?1, ?2, ?3)")?;
    for (k, v) in figures {
        insert.execute(params![id, k, v])?;
    }
    Ok(())
}

/// Recomputes every entry's extracted columns from its document with `index` (a migration that adds columns
/// asks for it); an entry whose kind `index` does not know keeps the columns it has.
fn reextract_all(conn: &Connection, index: Indexer) -> rusqlite::Result<()> {
    let rows: Vec<(String, String, String)> = {
        let mut stmt = conn.prepare("SELECT id, kind, doc FROM entries")?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
        rows.collect::<rusqlite::Result<_>>()?
    };
    let mut update = conn.prepare(
        "UPDATE entries SET started_at = ?2, started_unix_s = ?3, run_id = ?4, profile = ?5, targets = ?6,
                            partial = ?7, iolab_version = ?8
         WHERE id = ?1",
    )?;
    for (id, kind, text) in rows {
        let doc: serde_json::Value = serde_json::from_str(&text).unwrap_or(serde_json::Value::Null);
        let Ok(c) = index(&kind, &doc) else { continue };
        update.execute(params![
            id,
            c.started_at,
            c.started_unix_s,
            c.run_id,
            c.profile,
            c.targets.join("\n"),
            c.partial,
            c.iolab_version
        ])?;
        put_figures(conn, &id, &c.figures)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
