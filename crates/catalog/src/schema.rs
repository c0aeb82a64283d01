//! The catalog's on-disk layout and how a file is recognised, refused or upgraded.
//!
//! The schema version is SQLite's `PRAGMA user_version` (in the file header, so it can be read before
//! trusting any table, and written in the same transaction as the migration that changes it). The header's
//! `PRAGMA application_id` marks the file as an iolab catalog, so a database of another program is refused
//! instead of being "migrated". A `meta` table keeps human-readable facts (which iolab created and last
//! migrated the file).
//!
//! Opening never writes before the file has been recognised: the header and table list are read first, and
//! a file that is not a database, belongs to another program, or has a newer schema is refused untouched.
//! Only then is WAL mode set and are the missing migrations applied, in one `BEGIN IMMEDIATE` transaction
//! that re-reads the version (two processes creating one catalog at once do the work once).

use rusqlite::{Connection, TransactionBehavior};
use std::path::Path;

use crate::CatalogError;

/// `PRAGMA application_id` of an iolab catalog: "IOLB" in ASCII.
pub const APPLICATION_ID: i32 = 0x494F_4C42;

/// One step of the schema's history: applied to a catalog whose version is below `version`.
pub struct Migration {
    /// The version a catalog has after this step.
    pub version: i64,
    /// What the step does (kept in `meta` as the last migration applied).
    pub description: &'static str,
    /// The SQL, run in the migration transaction.
    pub sql: &'static str,
    /// After the SQL, recompute every entry's extracted columns from its stored document (for steps that add
    /// columns: the document is the source of truth, the columns are an index of it).
    pub reextract: bool,
}

/// The schema's history, oldest first. Append only: a released step is never edited, since catalogs in the
/// field are at its version.
pub const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        description: "entries (full document, kind, timestamps, profile, targets, note) and tags",
        sql: "
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE entries (
    id           TEXT PRIMARY KEY,
    kind         TEXT NOT NULL CHECK (kind IN ('run', 'sweep', 'find_max')),
    saved_unix_s REAL NOT NULL,
    started_at   TEXT,
    run_id       TEXT,
    profile      TEXT,
    targets      TEXT NOT NULL DEFAULT '',
    partial      INTEGER NOT NULL DEFAULT 0,
    note         TEXT,
    doc          TEXT NOT NULL
);
CREATE INDEX entries_saved ON entries (saved_unix_s);
CREATE TABLE tags (
    entry_id TEXT NOT NULL REFERENCES entries (id) ON DELETE CASCADE,
    key      TEXT NOT NULL,
    value    TEXT NOT NULL,
    PRIMARY KEY (entry_id, key)
) WITHOUT ROWID;
CREATE INDEX tags_key_value ON tags (key, value);
",
        reextract: false,
    },
    Migration {
        version: 2,
        description: "headline columns for listing (IOPS, MB/s, p99), start time and iolab version",
        sql: "
ALTER TABLE entries ADD COLUMN started_unix_s REAL;
ALTER TABLE entries ADD COLUMN iops REAL;
ALTER TABLE entries ADD COLUMN mb_s REAL;
ALTER TABLE entries ADD COLUMN p99_ns REAL;
ALTER TABLE entries ADD COLUMN iolab_version TEXT;
CREATE INDEX entries_profile ON entries (profile);
",
        reextract: true,
    },
    Migration {
        version: 3,
        description: "a kind of its own for `iolab verify` checks, which were saved as runs",
        // SQLite cannot change a CHECK constraint in place: the table is rebuilt (SQLite's documented
        // 12-step procedure; `migrate` turns foreign keys off around it, so dropping the old table does not
        // cascade to the tags). Checks saved as runs are recognised by what `iolab verify` made: a job named
        // 'verify ...' with a verify section whose targets are all read-only.
        sql: "
CREATE TABLE entries_v3 (
    id             TEXT PRIMARY KEY,
    kind           TEXT NOT NULL CHECK (kind IN ('run', 'sweep', 'find_max', 'verify')),
    saved_unix_s   REAL NOT NULL,
    started_at     TEXT,
    run_id         TEXT,
    profile        TEXT,
    targets        TEXT NOT NULL DEFAULT '',
    partial        INTEGER NOT NULL DEFAULT 0,
    note           TEXT,
    doc            TEXT NOT NULL,
    started_unix_s REAL,
    iops           REAL,
    mb_s           REAL,
    p99_ns         REAL,
    iolab_version  TEXT
);
INSERT INTO entries_v3 (id, kind, saved_unix_s, started_at, run_id, profile, targets, partial, note, doc,
                        started_unix_s, iops, mb_s, p99_ns, iolab_version)
    SELECT id, kind, saved_unix_s, started_at, run_id, profile, targets, partial, note, doc,
           started_unix_s, iops, mb_s, p99_ns, iolab_version FROM entries;
DROP TABLE entries;
ALTER TABLE entries_v3 RENAME TO entries;
CREATE INDEX entries_saved ON entries (saved_unix_s);
CREATE INDEX entries_profile ON entries (profile);
UPDATE entries SET kind = 'verify'
 WHERE kind = 'run' AND json_valid(doc)
   AND json_extract(doc, '$.config.plan.name') LIKE 'verify %'
   AND json_type(doc, '$.verify') = 'object'
   AND NOT EXISTS (SELECT 1 FROM json_each(doc, '$.config.plan.targets') AS t
                    WHERE json_extract(t.value, '$.writes') = 1);
",
        reextract: false,
    },
    Migration {
        version: 4,
        description:
            "kinds for database runs (`iolab db`) and their sweeps over users, and their headline NOPM",
        // The CHECK constraint again (rebuilt as in step 3), and a column for the headline of a database run:
        // new orders per minute. Database runs were not saved before, so nothing moves between kinds.
        sql: "
CREATE TABLE entries_v4 (
    id             TEXT PRIMARY KEY,
    kind           TEXT NOT NULL CHECK (kind IN ('run', 'sweep', 'find_max', 'verify', 'db', 'db_sweep')),
    saved_unix_s   REAL NOT NULL,
    started_at     TEXT,
    run_id         TEXT,
    profile        TEXT,
    targets        TEXT NOT NULL DEFAULT '',
    partial        INTEGER NOT NULL DEFAULT 0,
    note           TEXT,
    doc            TEXT NOT NULL,
    started_unix_s REAL,
    iops           REAL,
    mb_s           REAL,
    p99_ns         REAL,
    iolab_version  TEXT,
    nopm           REAL
);
INSERT INTO entries_v4 (id, kind, saved_unix_s, started_at, run_id, profile, targets, partial, note, doc,
                        started_unix_s, iops, mb_s, p99_ns, iolab_version)
    SELECT id, kind, saved_unix_s, started_at, run_id, profile, targets, partial, note, doc,
           started_unix_s, iops, mb_s, p99_ns, iolab_version FROM entries;
DROP TABLE entries;
ALTER TABLE entries_v4 RENAME TO entries;
CREATE INDEX entries_saved ON entries (saved_unix_s);
CREATE INDEX entries_profile ON entries (profile);
",
        reextract: false,
    },
    Migration {
        version: 5,
        description: "kinds for tpch query sets and database copies (`iolab db tpch`, `iolab db copy`), and the query sets' headline times",
        // The CHECK constraint again (rebuilt as in step 3), and two columns for the headline of a tpch
        // query set: the sum of its query times and their geometric mean, in seconds (a copy's headline is
        // its MB/s, in `mb_s`). Neither kind was saved before, so nothing moves between kinds.
        sql: "
CREATE TABLE entries_v5 (
    id              TEXT PRIMARY KEY,
    kind            TEXT NOT NULL CHECK (kind IN ('run', 'sweep', 'find_max', 'verify', 'db', 'db_sweep',
                                                  'db_tpch', 'db_copy')),
    saved_unix_s    REAL NOT NULL,
    started_at      TEXT,
    run_id          TEXT,
    profile         TEXT,
    targets         TEXT NOT NULL DEFAULT '',
    partial         INTEGER NOT NULL DEFAULT 0,
    note            TEXT,
    doc             TEXT NOT NULL,
    started_unix_s  REAL,
    iops            REAL,
    mb_s            REAL,
    p99_ns          REAL,
    iolab_version   TEXT,
    nopm            REAL,
    query_total_s   REAL,
    query_geomean_s REAL
);
INSERT INTO entries_v5 (id, kind, saved_unix_s, started_at, run_id, profile, targets, partial, note, doc,
                        started_unix_s, iops, mb_s, p99_ns, iolab_version, nopm)
    SELECT id, kind, saved_unix_s, started_at, run_id, profile, targets, partial, note, doc,
           started_unix_s, iops, mb_s, p99_ns, iolab_version, nopm FROM entries;
DROP TABLE entries;
ALTER TABLE entries_v5 RENAME TO entries;
CREATE INDEX entries_saved ON entries (saved_unix_s);
CREATE INDEX entries_profile ON entries (profile);
",
        reextract: false,
    },
    Migration {
        version: 6,
        description: "any kind of entry (no list of kinds in the schema), and the headline figures in a table of their own",
        // The last rebuild for a kind: the CHECK constraint goes (the caller's registry of document kinds
        // says which kinds there are, and reads their columns), and so do the headline columns of particular
        // kinds (IOPS, MB/s, p99, NOPM, the query times): each entry's figures become rows of `figures`, a
        // key and a value, so a new kind with a new headline needs no migration either. Every value moves
        // as it is; nothing is recomputed.
        sql: "
CREATE TABLE entries_v6 (
    id             TEXT PRIMARY KEY,
    kind           TEXT NOT NULL,
    saved_unix_s   REAL NOT NULL,
    started_at     TEXT,
    run_id         TEXT,
    profile        TEXT,
    targets        TEXT NOT NULL DEFAULT '',
    partial        INTEGER NOT NULL DEFAULT 0,
    note           TEXT,
    doc            TEXT NOT NULL,
    started_unix_s REAL,
    iolab_version  TEXT
);
INSERT INTO entries_v6 (id, kind, saved_unix_s, started_at, run_id, profile, targets, partial, note, doc,
                        started_unix_s, iolab_version)
    SELECT id, kind, saved_unix_s, started_at, run_id, profile, targets, partial, note, doc,
           started_unix_s, iolab_version FROM entries;
CREATE TABLE figures (
    entry_id TEXT NOT NULL REFERENCES entries (id) ON DELETE CASCADE,
    key      TEXT NOT NULL,
    value    REAL NOT NULL,
    PRIMARY KEY (entry_id, key)
) WITHOUT ROWID;
INSERT INTO figures (entry_id, key, value)
          SELECT id, 'iops', iops FROM entries WHERE iops IS NOT NULL
UNION ALL SELECT id, 'mb_s', mb_s FROM entries WHERE mb_s IS NOT NULL
UNION ALL SELECT id, 'p99_ns', p99_ns FROM entries WHERE p99_ns IS NOT NULL
UNION ALL SELECT id, 'nopm', nopm FROM entries WHERE nopm IS NOT NULL
UNION ALL SELECT id, 'query_total_s', query_total_s FROM entries WHERE query_total_s IS NOT NULL
UNION ALL SELECT id, 'query_geomean_s', query_geomean_s FROM entries WHERE query_geomean_s IS NOT NULL;
DROP TABLE entries;
ALTER TABLE entries_v6 RENAME TO entries;
CREATE INDEX entries_saved ON entries (saved_unix_s);
CREATE INDEX entries_profile ON entries (profile);
",
        reextract: false,
    },
];

/// The schema version this iolab writes and reads.
pub const LATEST: i64 = MIGRATIONS[MIGRATIONS.len() - 1].version;

/// How long a writer waits for another process's write transaction before giving up.
pub const BUSY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// What the header and table list say, read without writing.
struct Inspection {
    application_id: i32,
    version: i64,
    tables: Vec<String>,
}

/// Reads the header and table list in one read transaction, so a catalog another process is creating at
/// this moment is seen either before or after, never half made.
fn inspect(conn: &Connection) -> rusqlite::Result<Inspection> {
    if !conn.is_autocommit() {
        return inspect_snapshot(conn);
    }
    conn.execute_batch("BEGIN DEFERRED")?;
    let found = inspect_snapshot(conn);
    let end = conn.execute_batch("COMMIT");
    let found = found?;
    end?;
    Ok(found)
}

fn inspect_snapshot(conn: &Connection) -> rusqlite::Result<Inspection> {
    let application_id: i32 = conn.query_row("PRAGMA application_id", [], |r| r.get(0))?;
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    let mut stmt = conn.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")?;
    let tables = stmt.query_map([], |r| r.get::<_, String>(0))?.collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(Inspection { application_id, version, tables })
}

/// Whether an SQLite error means "this file is not (or no longer) a database".
fn is_not_a_database(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::NotADatabase) | Some(rusqlite::ErrorCode::DatabaseCorrupt)
    )
}

/// Maps an SQLite error while reading an unknown file: "not a database" and "corrupt" become
/// [`CatalogError::NotACatalog`], anything else (busy, permissions) stays an SQLite error.
pub fn open_error(path: &Path, e: rusqlite::Error) -> CatalogError {
    if is_not_a_database(&e) {
        CatalogError::NotACatalog { path: path.to_path_buf(), reason: e.to_string() }
    } else {
        crate::sql_error(path, e)
    }
}

/// Checks that the file at `path` (open on `conn`) is an iolab catalog this iolab can read, or an empty
/// database to create one in; writes nothing.
pub fn check(conn: &Connection, path: &Path) -> Result<(), CatalogError> {
    let found = inspect(conn).map_err(|e| open_error(path, e))?;
    let empty = found.application_id == 0 && found.version == 0 && found.tables.is_empty();
    if empty {
        return Ok(());
    }
    if found.application_id != APPLICATION_ID {
        let tables = if found.tables.is_empty() {
            "no tables".to_string()
        } else {
            format!("tables {}", found.tables.join(", "))
        };
        return Err(CatalogError::NotACatalog {
            path: path.to_path_buf(),
            reason: format!(
                "an SQLite database of another program (application id {:#x}, {tables})",
                found.application_id
            ),
        });
    }
    if found.version > LATEST {
        return Err(CatalogError::NewerSchema {
            path: path.to_path_buf(),
            found: found.version,
            supported: LATEST,
        });
    }
    Ok(())
}

/// Sets WAL mode (readers never block the writer, and a crash mid-write leaves the last commit intact) and
/// the per-connection settings. Only called on a recognised catalog or an empty file.
pub fn configure(conn: &Connection, path: &Path) -> Result<(), CatalogError> {
    let sql_err = |e| crate::sql_error(path, e);
    // Switching to WAL takes an exclusive lock once per file; the busy handler covers a concurrent opener,
    // and a few retries cover the cases where SQLite reports busy without calling it.
    let mut attempt = 0;
    loop {
        match conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get::<_, String>(0)) {
            Ok(_) => break,
            Err(e)
                if attempt < 50
                    && matches!(
                        e.sqlite_error_code(),
                        Some(rusqlite::ErrorCode::DatabaseBusy) | Some(rusqlite::ErrorCode::DatabaseLocked)
                    ) =>
            {
                attempt += 1;
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            Err(e) => return Err(open_error(path, e)),
        }
    }
    // NORMAL is safe in WAL mode: a power loss may drop the last commits, never corrupt the file.
    conn.execute_batch("PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;").map_err(sql_err)?;
    Ok(())
}

/// Applies the migrations the catalog lacks, in one transaction. `reextract` is called inside it when a
/// step asks for the extracted columns to be recomputed.
pub fn migrate(
    conn: &Connection,
    path: &Path,
    reextract: &dyn Fn(&Connection) -> rusqlite::Result<()>,
) -> Result<(), CatalogError> {
    let sql_err = |e| crate::sql_error(path, e);
    let version: i64 =
        conn.query_row("PRAGMA user_version", [], |r| r.get(0)).map_err(|e| open_error(path, e))?;
    if version == LATEST {
        return Ok(());
    }
    // Off around the migration (it cannot change inside a transaction): a step that rebuilds a table drops
    // the old one, which with foreign keys on would delete the tags that refer to it. Checked before commit.
    conn.execute_batch("PRAGMA foreign_keys = OFF").map_err(sql_err)?;
    let migrated = migrate_in_transaction(conn, path, reextract);
    let restored = conn.execute_batch("PRAGMA foreign_keys = ON").map_err(sql_err);
    migrated?;
    restored
}

/// [`migrate`]'s transaction: every missing step, the version and `meta`, and a foreign-key check.
fn migrate_in_transaction(
    conn: &Connection,
    path: &Path,
    reextract: &dyn Fn(&Connection) -> rusqlite::Result<()>,
) -> Result<(), CatalogError> {
    let sql_err = |e| crate::sql_error(path, e);
    let tx = rusqlite::Transaction::new_unchecked(conn, TransactionBehavior::Immediate).map_err(sql_err)?;
    // Another process may have migrated (or created) the catalog while this one waited for the lock.
    check(&tx, path)?;
    let version: i64 = tx.query_row("PRAGMA user_version", [], |r| r.get(0)).map_err(sql_err)?;
    let mut again = false;
    let mut last = None;
    for m in MIGRATIONS.iter().filter(|m| m.version > version) {
        tx.execute_batch(m.sql).map_err(sql_err)?;
        again |= m.reextract;
        last = Some(m);
    }
    if let Some(m) = last {
        if again {
            reextract(&tx).map_err(sql_err)?;
        }
        let broken: i64 = tx
            .query_row("SELECT count(*) FROM pragma_foreign_key_check", [], |r| r.get(0))
            .map_err(sql_err)?;
        if broken > 0 {
            // Rolled back when `tx` drops: the catalog stays at its version, unchanged.
            return Err(CatalogError::Damaged {
                path: path.to_path_buf(),
                findings: format!(
                    "upgrading to version {} would leave {broken} tags without their entry",
                    m.version
                ),
            });
        }
        let iolab = env!("CARGO_PKG_VERSION");
        tx.execute_batch(&format!(
            "PRAGMA application_id = {APPLICATION_ID}; PRAGMA user_version = {LATEST};"
        ))
        .map_err(sql_err)?;
        let mut put = tx
            .prepare(
                "INSERT INTO meta (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET value = ?2",
            )
            .map_err(sql_err)?;
        if version == 0 {
            put.execute(["created_by", &format!("iolab {iolab}")]).map_err(sql_err)?;
        }
        put.execute(["migrated_by", &format!("iolab {iolab}")]).map_err(sql_err)?;
        put.execute(["last_migration", &format!("{}: {}", m.version, m.description)]).map_err(sql_err)?;
        drop(put);
    }
    tx.commit().map_err(sql_err)
}
