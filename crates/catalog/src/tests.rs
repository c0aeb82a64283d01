//! Unit tests of the catalog on real files in temporary directories: save, get, list filters, remove, id
//! prefixes and collisions, migrations from an older layout, and the refusals (newer schema, not a
//! database, another program's database), each checking that the refused file is byte-for-byte untouched.

use super::*;
use serde_json::json;

/// A real `iolab.result/1` document (sim target, virtual clock, seed 1), as `--json` wrote it.
const RUN: &str = include_str!("../testdata/run.json");

/// What reads a document's columns: iolab's kinds of documents, as the binary passes them.
const INDEX: Indexer = iolab_report::kinds::index;

fn temp() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("sub").join("results.db");
    (dir, path)
}

fn tags(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

/// A run document with its own run id, profile, target and IOPS.
fn run_doc(run_id: &str, profile: &str, target: &str, iops: f64) -> serde_json::Value {
    json!({
        "schema": "iolab.result/1",
        "run_id": run_id,
        "started_at": "2025-01-01T00:00:00Z",
        "started_unix_s": 1_735_689_600.0,
        "partial": false,
        "config": {"plan": {"name": profile, "targets": [{"name": target}]}},
        "total": {"all": {"iops": iops, "mb_s": iops * 4096.0 / 1e6, "lat_ns": {"p99": 1000}}},
    })
}

fn save_run(c: &Catalog, run_id: &str, profile: &str, target: &str, t: &[(&str, &str)]) -> String {
    c.save(&NewEntry {
        kind: "run".into(),
        doc: run_doc(run_id, profile, target, 1000.0),
        tags: tags(t),
        note: None,
    })
    .expect("save")
}

#[test]
fn open_creates_the_directory_and_a_current_catalog() {
    let (_d, path) = temp();
    let c = Catalog::open(&path, INDEX).unwrap();
    assert_eq!(c.path(), path);
    let v: i64 = c.conn.query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap();
    let app: i32 = c.conn.query_row("PRAGMA application_id", [], |r| r.get(0)).unwrap();
    let mode: String = c.conn.query_row("PRAGMA journal_mode", [], |r| r.get(0)).unwrap();
    assert_eq!((v, app, mode.as_str()), (schema::LATEST, schema::APPLICATION_ID, "wal"));
    drop(c);
    // Opening again changes nothing and still works.
    let c = Catalog::open(&path, INDEX).unwrap();
    assert!(c.summaries(&Filter::default()).unwrap().is_empty());
}

#[test]
fn save_text_round_trips_the_document_byte_for_byte() {
    let (_d, path) = temp();
    let c = Catalog::open(&path, INDEX).unwrap();
    let id = c.save_text("run", RUN, &tags(&[("hba", "qle2560")]), Some("first")).unwrap();
    assert_eq!(id, "d89d1678", "a run's id is its run_id");
    let e = c.get(&id).unwrap();
    assert_eq!(e.doc_text, RUN);
    assert_eq!(e.doc, serde_json::from_str::<serde_json::Value>(RUN).unwrap());
    assert_eq!(e.kind, "run");
    assert_eq!(e.tags, tags(&[("hba", "qle2560")]));
    assert_eq!(e.note.as_deref(), Some("first"));
    let s = &e.summary;
    assert_eq!(s.columns.profile.as_deref(), Some("randread 4k qd32"));
    assert_eq!(s.columns.targets, ["sim:fixed,latency=100us,servers=8,size=1G"]);
    assert_eq!(s.columns.figure("iops"), Some(79_996.0));
    assert_eq!(s.columns.figure("p99_ns"), Some(400_000.0));
    assert_eq!(s.columns.run_id.as_deref(), Some("d89d1678"));
    assert!(!s.columns.partial);
    // The histograms travel inside the document.
    assert!(e.doc["histograms"]["read"].as_str().is_some_and(|h| !h.is_empty()));
}

#[test]
fn same_run_id_twice_gets_a_longer_id_and_exact_ids_win() {
    let (_d, path) = temp();
    let c = Catalog::open(&path, INDEX).unwrap();
    let a = save_run(&c, "abcd1234", "p", "t", &[]);
    let b = c
        .save(&NewEntry {
            kind: "run".into(),
            doc: run_doc("abcd1234", "q", "t", 1.0),
            tags: vec![],
            note: None,
        })
        .unwrap();
    let b2 = c
        .save(&NewEntry {
            kind: "run".into(),
            doc: run_doc("abcd1234", "q", "t", 1.0),
            tags: vec![],
            note: None,
        })
        .unwrap();
    assert_eq!(a, "abcd1234");
    assert_eq!(b.len(), 10, "{b}");
    assert!(b.starts_with("abcd1234"));
    assert_ne!(b2, b, "the same document saved again gets its own id");
    assert_eq!(c.resolve("abcd1234").unwrap(), a, "an exact id wins over longer ids it starts");
    assert_eq!(c.resolve(&b).unwrap(), b);
    match c.resolve("abcd") {
        Err(CatalogError::Ambiguous { candidates, .. }) => assert_eq!(candidates.len(), 3),
        other => panic!("expected ambiguous, got {other:?}"),
    }
    let msg = c.resolve("abcd").unwrap_err().to_string();
    assert!(msg.contains("'abcd' is ambiguous") && msg.contains("abcd1234,"), "{msg}");
}

#[test]
fn prefixes_resolve_and_bad_ids_are_errors() {
    let (_d, path) = temp();
    let c = Catalog::open(&path, INDEX).unwrap();
    let a = save_run(&c, "12345678", "p", "t", &[]);
    save_run(&c, "9abcdef0", "p", "t", &[]);
    assert_eq!(c.get("123").unwrap().id, a);
    assert_eq!(c.get("1234567").unwrap().id, a);
    assert_eq!(c.get("12345678").unwrap().id, a);
    assert!(matches!(c.get("ffff"), Err(CatalogError::NotFound { .. })));
    assert!(matches!(c.get("123456789"), Err(CatalogError::NotFound { .. })));
    for bad in ["", "  ", "xyz", "12%", "1_"] {
        assert!(matches!(c.get(bad), Err(CatalogError::BadId { .. })), "{bad:?}");
    }
    let msg = c.get("ffff").unwrap_err().to_string();
    assert!(msg.contains("no entry 'ffff'") && msg.contains(&path.display().to_string()), "{msg}");
}

#[test]
fn list_filters_by_tag_profile_target_kind_time_and_limit() {
    let (_d, path) = temp();
    let c = Catalog::open(&path, INDEX).unwrap();
    let a = save_run(&c, "00000001", "oltp", "/data/f", &[("hba", "qle2560"), ("site", "lab1")]);
    let b = save_run(&c, "00000002", "oltp", "mem:1G", &[("hba", "lpe32002"), ("site", "lab1")]);
    let s = c
        .save(&NewEntry {
            kind: "sweep".into(),
            doc: json!({"schema": "iolab.sweep/1", "started_at": "2025-01-01T00:00:00Z", "partial": false,
                        "points": [{"result": run_doc("00000003", "vdi", "/data/g", 5.0)}]}),
            tags: tags(&[("site", "lab2")]),
            note: Some("qd sweep".into()),
        })
        .unwrap();
    let ids = |f: Filter| c.list(&f).unwrap().into_iter().map(|e| e.id).collect::<Vec<_>>();
    assert_eq!(ids(Filter::default()), [s.as_str(), b.as_str(), a.as_str()], "newest first");
    assert_eq!(
        ids(Filter { tags: tags(&[("site", "lab1")]), ..Filter::default() }),
        [b.as_str(), a.as_str()]
    );
    assert_eq!(
        ids(Filter { tags: tags(&[("site", "lab1"), ("hba", "qle2560")]), ..Filter::default() }),
        [a.as_str()]
    );
    assert!(ids(Filter { tags: tags(&[("site", "lab3")]), ..Filter::default() }).is_empty());
    assert_eq!(ids(Filter { profile: Some("oltp".into()), ..Filter::default() }), [b.as_str(), a.as_str()]);
    assert_eq!(ids(Filter { profile: Some("vdi".into()), ..Filter::default() }), [s.as_str()]);
    assert_eq!(ids(Filter { target: Some("/data".into()), ..Filter::default() }), [s.as_str(), a.as_str()]);
    assert_eq!(ids(Filter { target: Some("%".into()), ..Filter::default() }), Vec::<String>::new());
    assert_eq!(ids(Filter { kind: Some("sweep".into()), ..Filter::default() }), [s.as_str()]);
    assert_eq!(ids(Filter { kind: Some("find_max".into()), ..Filter::default() }), Vec::<String>::new());
    assert_eq!(ids(Filter { limit: Some(2), ..Filter::default() }), [s.as_str(), b.as_str()]);
    let now = now_unix_s();
    assert_eq!(ids(Filter { since_unix_s: Some(now + 60.0), ..Filter::default() }), Vec::<String>::new());
    assert_eq!(ids(Filter { until_unix_s: Some(now - 60.0), ..Filter::default() }), Vec::<String>::new());
    assert_eq!(
        ids(Filter { since_unix_s: Some(now - 60.0), until_unix_s: Some(now + 60.0), ..Filter::default() })
            .len(),
        3
    );
    let sweep = c.get(&s).unwrap();
    assert_eq!(sweep.kind, "sweep");
    assert_eq!(sweep.summary.columns.figure("iops"), Some(5.0));
    assert_eq!(sweep.note.as_deref(), Some("qd sweep"));
}

#[test]
fn remove_deletes_the_entry_and_its_tags() {
    let (_d, path) = temp();
    let c = Catalog::open(&path, INDEX).unwrap();
    let a = save_run(&c, "aaaa0000", "p", "t", &[("k", "v")]);
    assert_eq!(c.remove("aaaa").unwrap(), a);
    assert!(matches!(c.get(&a), Err(CatalogError::NotFound { .. })));
    assert!(matches!(c.remove(&a), Err(CatalogError::NotFound { .. })));
    let n: i64 = c.conn.query_row("SELECT count(*) FROM tags", [], |r| r.get(0)).unwrap();
    assert_eq!(n, 0);
}

#[test]
fn bad_tags_and_documents_are_refused() {
    let (_d, path) = temp();
    let c = Catalog::open(&path, INDEX).unwrap();
    let e = c.save_text("run", "{}", &tags(&[("", "x")]), None).unwrap_err();
    assert!(e.to_string().contains("invalid tag '=x'"), "{e}");
    let e = c.save_text("run", "{}", &tags(&[("a", "1"), ("a", "2")]), None).unwrap_err();
    assert!(e.to_string().contains("key 'a' is given twice"), "{e}");
    let e = c.save_text("sweep", RUN, &[], None).unwrap_err();
    assert!(e.to_string().contains("its schema is 'iolab.result/1'"), "{e}");
    assert!(c.save_text("run", "[1]", &[], None).is_err());
    assert!(c.save_text("run", "{", &[], None).is_err());
    assert!(c.summaries(&Filter::default()).unwrap().is_empty());
}

/// Builds a catalog at schema version 1, as an iolab of that version left it, with one run in it.
fn make_v1(path: &Path) {
    let conn = Connection::open(path).unwrap();
    conn.execute_batch(schema::MIGRATIONS[0].sql).unwrap();
    conn.execute_batch(&format!(
        "PRAGMA application_id = {}; PRAGMA user_version = 1;",
        schema::APPLICATION_ID
    ))
    .unwrap();
    conn.execute(
        "INSERT INTO entries (id, kind, saved_unix_s, started_at, run_id, profile, targets, partial, note, doc)
         VALUES ('d89d1678', 'run', 1.0, '2025-01-01T00:00:00Z', 'd89d1678', 'iolab', 'x', 0, 'old', ?1)",
        [RUN],
    )
    .unwrap();
    conn.execute("INSERT INTO tags VALUES ('d89d1678', 'site', 'lab1')", []).unwrap();
}

#[test]
fn version_1_catalog_is_migrated_and_its_columns_backfilled() {
    let (_d, path) = temp();
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    make_v1(&path);
    let c = Catalog::open(&path, INDEX).unwrap();
    let v: i64 = c.conn.query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap();
    assert_eq!(v, schema::LATEST);
    let e = c.get("d89d").unwrap();
    assert_eq!(e.doc_text, RUN);
    assert_eq!(e.tags, tags(&[("site", "lab1")]));
    assert_eq!(e.note.as_deref(), Some("old"));
    assert_eq!(
        e.summary.columns.figure("iops"),
        Some(79_996.0),
        "headline columns recomputed from the document"
    );
    assert_eq!(e.summary.columns.targets, ["sim:fixed,latency=100us,servers=8,size=1G"]);
    let last: String =
        c.conn.query_row("SELECT value FROM meta WHERE key = 'last_migration'", [], |r| r.get(0)).unwrap();
    assert!(last.starts_with(&format!("{}:", schema::LATEST)), "{last}");
    // And it works as a current catalog.
    save_run(&c, "00000001", "p", "t", &[]);
    assert_eq!(c.summaries(&Filter::default()).unwrap().len(), 2);
}

/// Issue 14, item 16: `iolab verify` checks were saved as runs and listed among them. Version 3 gives them a
/// kind of their own; a version-2 catalog's checks are recognised and moved, its runs and every tag kept.
#[test]
fn version_2_catalog_gets_its_verify_checks_apart_and_keeps_every_tag() {
    let (_d, path) = temp();
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    make_v1(&path);
    let mut check: serde_json::Value = serde_json::from_str(RUN).unwrap();
    check["config"]["plan"]["name"] = "verify /dev/sdb".into();
    check["verify"] = serde_json::json!({ "blocks_checked": 10, "mismatches": 0 });
    for t in check["config"]["plan"]["targets"].as_array_mut().unwrap() {
        t["writes"] = false.into();
    }
    // A run named like a check that writes stays a run.
    let mut writer = check.clone();
    writer["config"]["plan"]["targets"][0]["writes"] = true.into();
    {
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch(schema::MIGRATIONS[1].sql).unwrap();
        conn.execute_batch("PRAGMA user_version = 2;").unwrap();
        for (id, doc) in [("aaaa0001", &check), ("aaaa0002", &writer)] {
            conn.execute(
                "INSERT INTO entries (id, kind, saved_unix_s, doc) VALUES (?1, 'run', 2.0, ?2)",
                [id, &doc.to_string()],
            )
            .unwrap();
            conn.execute("INSERT INTO tags VALUES (?1, 'site', 'lab2')", [id]).unwrap();
        }
    }
    let c = Catalog::open(&path, INDEX).unwrap();
    assert_eq!(c.get("aaaa0001").unwrap().kind, "verify");
    assert_eq!(c.get("aaaa0002").unwrap().kind, "run");
    assert_eq!(c.get("d89d").unwrap().kind, "run");
    for id in ["aaaa0001", "aaaa0002", "d89d"] {
        assert_eq!(c.get(id).unwrap().tags.len(), 1, "{id} lost its tags");
    }
    let fk: bool = c.conn.query_row("PRAGMA foreign_keys", [], |r| r.get(0)).unwrap();
    assert!(fk, "foreign keys are on again after the migration");
    // New checks are saved as their own kind; a run filter leaves them out.
    c.save(&NewEntry {
        kind: "verify".into(),
        doc: serde_json::from_str(RUN).unwrap(),
        tags: vec![],
        note: None,
    })
    .unwrap();
    let runs = c.summaries(&Filter { kind: Some("run".into()), ..Filter::default() }).unwrap();
    assert_eq!(runs.len(), 2);
}

fn assert_refused_untouched(path: &Path, expect: &str) {
    let before = std::fs::read(path).unwrap();
    let e = Catalog::open(path, INDEX).err().expect("open must fail");
    let msg = e.to_string();
    assert!(msg.contains(&path.display().to_string()), "names the path: {msg}");
    assert!(msg.contains(expect), "{msg}");
    assert!(msg.contains("not changed") && msg.contains("--db"), "says what to do: {msg}");
    assert_eq!(std::fs::read(path).unwrap(), before, "the refused file is unchanged");
    // Twice: the first refusal left nothing behind that changes the second.
    assert!(Catalog::open(path, INDEX).is_err());
    assert_eq!(std::fs::read(path).unwrap(), before);
}

#[test]
fn newer_catalog_is_refused_untouched() {
    let (_d, path) = temp();
    drop(Catalog::open(&path, INDEX).unwrap());
    {
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch(&format!("PRAGMA user_version = {};", schema::LATEST + 1)).unwrap();
        // Fold the WAL into the main file so the bytes compared are the whole catalog.
        conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);").unwrap();
    }
    assert_refused_untouched(
        &path,
        &format!(
            "newer iolab (schema version {}; this iolab reads versions up to {})",
            schema::LATEST + 1,
            schema::LATEST
        ),
    );
}

#[test]
fn garbage_file_is_refused_untouched() {
    let (_d, path) = temp();
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let garbage: Vec<u8> = (0..8192u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
    std::fs::write(&path, &garbage).unwrap();
    assert_refused_untouched(&path, "is not an iolab catalog");
    // A text file too.
    std::fs::write(&path, "hello, I am a note and not a database\n".repeat(50)).unwrap();
    assert_refused_untouched(&path, "is not an iolab catalog");
}

#[test]
fn truncated_catalog_is_refused_untouched() {
    let (_d, path) = temp();
    {
        let c = Catalog::open(&path, INDEX).unwrap();
        for i in 0..50 {
            save_run(&c, &format!("{i:08x}"), "p", "t", &[]);
        }
        c.conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode = DELETE;").unwrap();
    }
    let bytes = std::fs::read(&path).unwrap();
    assert!(bytes.len() > 8192);
    // Keep the header, scramble the pages after the first.
    let mut bad = bytes.clone();
    for b in &mut bad[4096..] {
        *b ^= 0x5a;
    }
    std::fs::write(&path, &bad).unwrap();
    let before = std::fs::read(&path).unwrap();
    match Catalog::open(&path, INDEX) {
        Err(e) => {
            assert!(e.to_string().contains(&path.display().to_string()), "{e}");
            assert_eq!(std::fs::read(&path).unwrap(), before, "the refused file is unchanged");
        }
        // SQLite reads only what it needs; the damage may show later, as an error, never a panic.
        Ok(c) => {
            let _ = c.summaries(&Filter::default());
            assert!(c.integrity_check().is_err());
        }
    }
}

#[test]
fn other_programs_database_is_refused_untouched() {
    let (_d, path) = temp();
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    {
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch("CREATE TABLE contacts (name TEXT); INSERT INTO contacts VALUES ('x');").unwrap();
    }
    assert_refused_untouched(&path, "another program (application id 0x0, tables contacts)");
}

#[test]
fn empty_file_becomes_a_catalog() {
    let (_d, path) = temp();
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, b"").unwrap();
    let c = Catalog::open(&path, INDEX).unwrap();
    save_run(&c, "00000001", "p", "t", &[]);
    assert_eq!(c.integrity_check(), Ok(()));
}

#[test]
fn a_directory_is_an_error_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let e = Catalog::open(dir.path(), INDEX).err().expect("a directory is not a catalog");
    assert!(e.to_string().contains(&dir.path().display().to_string()), "{e}");
}

#[test]
fn concurrent_writers_in_threads_lose_nothing() {
    let (_d, path) = temp();
    drop(Catalog::open(&path, INDEX).unwrap());
    let threads: Vec<_> = (0..6)
        .map(|t| {
            let path = path.clone();
            std::thread::spawn(move || {
                let c = Catalog::open(&path, INDEX).unwrap();
                for i in 0..20 {
                    save_run(&c, &format!("{t:02x}{i:06x}"), "p", "t", &[("thread", &t.to_string())]);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let c = Catalog::open(&path, INDEX).unwrap();
    assert_eq!(c.summaries(&Filter::default()).unwrap().len(), 120);
    assert_eq!(c.integrity_check(), Ok(()));
}

#[test]
fn concurrent_creators_of_a_new_catalog_agree() {
    for _ in 0..5 {
        let (_d, path) = temp();
        let threads: Vec<_> = (0..4)
            .map(|t| {
                let path = path.clone();
                std::thread::spawn(move || {
                    let c = Catalog::open(&path, INDEX).unwrap();
                    save_run(&c, &format!("{t:08x}"), "p", "t", &[]);
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let c = Catalog::open(&path, INDEX).unwrap();
        assert_eq!(c.summaries(&Filter::default()).unwrap().len(), 4);
    }
}

#[test]
fn default_path_follows_iolab_db_then_xdg_then_home() {
    // Environment variables are process-wide; this is the only test that reads or sets them.
    let saved: Vec<_> =
        ["IOLAB_DB", "XDG_DATA_HOME", "HOME"].iter().map(|k| (*k, std::env::var_os(k))).collect();
    std::env::set_var("IOLAB_DB", "/x/cat.db");
    std::env::set_var("XDG_DATA_HOME", "/xdg");
    std::env::set_var("HOME", "/home/u");
    assert_eq!(Catalog::default_path(), PathBuf::from("/x/cat.db"));
    std::env::set_var("IOLAB_DB", "");
    assert_eq!(Catalog::default_path(), PathBuf::from("/xdg/iolab/results.db"));
    std::env::set_var("XDG_DATA_HOME", "relative/dir");
    assert_eq!(Catalog::default_path(), PathBuf::from("/home/u/.local/share/iolab/results.db"));
    std::env::remove_var("XDG_DATA_HOME");
    assert_eq!(Catalog::default_path(), PathBuf::from("/home/u/.local/share/iolab/results.db"));
    for (k, v) in saved {
        match v {
            Some(v) => std::env::set_var(k, v),
            None => std::env::remove_var(k),
        }
    }
}

#[test]
fn kinds_parse_as_typed_and_by_schema() {}

/// A catalog of `n` runs with the WAL folded in, so the file on disk is the whole catalog.
fn catalog_with_runs(path: &Path, n: usize) {
    let c = Catalog::open(path, INDEX).unwrap();
    for i in 0..n {
        c.save_text("run", &RUN.replace("\"run_id\": \"", &format!("\"run_id\": \"{i:04x}")), &[], None)
            .unwrap();
    }
    c.conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);").unwrap();
}

#[test]
fn check_ready_to_save_damaged_pages_behind_an_intact_header_are_refused_untouched() {
    let (_d, path) = temp();
    catalog_with_runs(&path, 40);
    let mut bytes = std::fs::read(&path).unwrap();
    let page = 4096;
    assert!(bytes.len() > 8 * page, "the catalog spans several pages");
    // Damage the last B-tree page (a table or index page, by its type byte): its cell pointers and cells.
    // The header and the schema page stay intact, so the file still opens as a catalog.
    let btree = (1..bytes.len() / page)
        .rev()
        .map(|i| i * page)
        .find(|&at| matches!(bytes[at], 0x02 | 0x05 | 0x0a | 0x0d))
        .expect("a B-tree page after the first");
    for b in &mut bytes[btree + 1..btree + page] {
        *b ^= 0xa5;
    }
    std::fs::write(&path, &bytes).unwrap();
    let c = Catalog::open(&path, INDEX).expect("the header is intact, so the catalog opens");
    let e = c.check_ready_to_save().expect_err("damage must be found before a run");
    assert!(matches!(e, CatalogError::Damaged { .. }), "{e}");
    assert!(e.to_string().contains("damaged") && e.to_string().contains("not changed"), "{e}");
    drop(c);
    assert!(std::fs::read(&path).unwrap() == bytes, "the damaged catalog is left as it was");
}

#[test]
fn check_ready_to_save_healthy_catalog_passes_and_is_not_written() {
    let (_d, path) = temp();
    catalog_with_runs(&path, 5);
    let before = std::fs::read(&path).unwrap();
    let c = Catalog::open(&path, INDEX).unwrap();
    c.check_ready_to_save().expect("a healthy, writable catalog is ready");
    assert_eq!(c.summaries(&Filter::default()).unwrap().len(), 5);
    c.conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);").unwrap();
    drop(c);
    assert_eq!(std::fs::read(&path).unwrap().len(), before.len());
}

fn is_root() -> bool {
    std::fs::metadata("/proc/self").map(|m| std::os::unix::fs::MetadataExt::uid(&m) == 0).unwrap_or(false)
}

/// A tmpfs of `size` mounted at a new directory under `dir` (root only), unmounted when dropped.
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(dir: &Path, size: &str) -> Option<Tmpfs> {
        let at = dir.join("mnt");
        std::fs::create_dir_all(&at).ok()?;
        let ok = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&at)
            .status()
            .is_ok_and(|s| s.success());
        ok.then_some(Tmpfs(at))
    }

    fn remount_read_only(&self) {
        let s = std::process::Command::new("mount").args(["-o", "remount,ro"]).arg(&self.0).status().unwrap();
        assert!(s.success(), "remount read-only");
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn check_ready_to_save_read_only_catalog_is_refused_before_a_run() {
    let dir = tempfile::tempdir().unwrap();
    let (path, _mount) = if is_root() {
        let Some(m) = Tmpfs::mount(dir.path(), "16m") else {
            iolab_testkit::skip(format_args!("cannot mount a tmpfs"));
            return;
        };
        let path = m.0.join("results.db");
        catalog_with_runs(&path, 3);
        m.remount_read_only();
        (path, Some(m))
    } else {
        let path = dir.path().join("results.db");
        catalog_with_runs(&path, 3);
        let mode = |p: &Path, m| std::fs::set_permissions(p, std::os::unix::fs::PermissionsExt::from_mode(m));
        mode(&path, 0o444).unwrap();
        mode(dir.path(), 0o555).unwrap();
        (path, None)
    };
    let before = std::fs::read(&path).unwrap();
    let refused = match Catalog::open(&path, INDEX) {
        Err(e) => e,
        Ok(c) => c.check_ready_to_save().expect_err("a read-only catalog must be refused before the run"),
    };
    let msg = refused.to_string();
    assert!(msg.contains(&path.display().to_string()), "names the catalog: {msg}");
    assert!(std::fs::read(&path).unwrap() == before, "the refused catalog is left as it was");
    if !is_root() {
        let _ = std::fs::set_permissions(dir.path(), std::os::unix::fs::PermissionsExt::from_mode(0o755));
    }
}

#[test]
fn save_on_a_full_filesystem_says_disk_full() {
    if !is_root() {
        iolab_testkit::skip(format_args!("needs root to mount a small tmpfs"));
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let Some(m) = Tmpfs::mount(dir.path(), "1m") else {
        iolab_testkit::skip(format_args!("cannot mount a tmpfs"));
        return;
    };
    let path = m.0.join("results.db");
    let c = Catalog::open(&path, INDEX).unwrap();
    c.check_ready_to_save().unwrap();
    drop(c);
    // Fill the filesystem to the last block, with the catalog closed (its -wal and -shm files are gone).
    let mut filler = std::fs::File::create(m.0.join("filler")).unwrap();
    let chunk = vec![0x5au8; 4096];
    while std::io::Write::write_all(&mut filler, &chunk).is_ok() {}
    let c = match Catalog::open(&path, INDEX) {
        Ok(c) => c,
        Err(e) => {
            assert!(matches!(e, CatalogError::DiskFull { .. }), "says disk full: {e}");
            return;
        }
    };
    let mut failed = None;
    for i in 0..50 {
        let text = RUN.replace("\"run_id\": \"", &format!("\"run_id\": \"{i:04x}"));
        if let Err(e) = c.save_text("run", &text, &[], None) {
            failed = Some(e);
            break;
        }
    }
    let e = failed.expect("a full filesystem makes a save fail");
    assert!(matches!(e, CatalogError::DiskFull { .. }), "says disk full, not a generic I/O error: {e}");
    assert!(e.to_string().contains("disk full"), "{e}");
}

/// A database run document: its workload, engine, devices and NOPM.
fn db_doc(nopm: f64, device: &str) -> serde_json::Value {
    json!({
        "schema": "iolab.db/1",
        "workload": "tpcc",
        "start_unix_s": 1_735_689_600u64,
        "partial": false,
        "engine": {"name": "postgres", "dir": "/mnt/gen5/db"},
        "run": {"nopm": nopm, "transactions": [{"name": "new_order", "latency_ns": {"p99": 7_000_000}}]},
        "devices": [{"name": device}],
    })
}

#[test]
fn db_runs_are_their_own_kind_with_nopm_as_headline() {
    let (_d, path) = temp();
    let c = Catalog::open(&path, INDEX).unwrap();
    save_run(&c, "0000000a", "oltp", "/dev/sdb", &[]);
    let id = c
        .save(&NewEntry {
            kind: "db".into(),
            doc: db_doc(5606.0, "nvme0n1"),
            tags: tags(&[("gen", "5")]),
            note: None,
        })
        .unwrap();
    let e = c.get(&id).unwrap();
    assert_eq!(e.kind, "db");
    assert_eq!(e.summary.columns.figure("nopm"), Some(5606.0));
    assert_eq!(e.summary.columns.profile.as_deref(), Some("tpcc postgres"));
    assert_eq!(e.summary.columns.targets, ["nvme0n1"]);
    let dbs = c.summaries(&Filter { kind: Some("db".into()), ..Filter::default() }).unwrap();
    assert_eq!(dbs.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(), [id.as_str()]);
    let by_target = c.summaries(&Filter { target: Some("nvme0".into()), ..Filter::default() }).unwrap();
    assert_eq!(by_target.len(), 1);
    // A db document saved as a run (or a run as a db entry) is refused.
    let wrong = c.save(&NewEntry { kind: "run".into(), doc: db_doc(1.0, "sda"), tags: vec![], note: None });
    assert!(matches!(wrong, Err(CatalogError::BadDocument { .. })), "{wrong:?}");
}

#[test]
fn version_3_catalog_takes_db_runs_after_the_upgrade_and_keeps_its_entries() {
    let (_d, path) = temp();
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    make_v1(&path);
    {
        let conn = Connection::open(&path).unwrap();
        // As `schema::migrate` does: step 3 rebuilds the table, which must not cascade to the tags.
        conn.execute_batch("PRAGMA foreign_keys = OFF").unwrap();
        for m in &schema::MIGRATIONS[1..3] {
            conn.execute_batch(m.sql).unwrap();
        }
        conn.execute_batch("PRAGMA user_version = 3;").unwrap();
        let refused = conn.execute(
            "INSERT INTO entries (id, kind, saved_unix_s, doc) VALUES ('bbbb0001', 'db', 2.0, '{}')",
            [],
        );
        assert!(refused.is_err(), "version 3 has no db kind");
    }
    let c = Catalog::open(&path, INDEX).unwrap();
    let before = c.summaries(&Filter::default()).unwrap();
    assert!(!before.is_empty());
    assert!(before.iter().all(|s| s.tags.len() == 1), "tags kept: {before:?}");
    c.save(&NewEntry { kind: "db".into(), doc: db_doc(100.0, "vda"), tags: vec![], note: None }).unwrap();
    assert_eq!(c.summaries(&Filter::default()).unwrap().len(), before.len() + 1);
}

/// A tpch query set document: its engine, devices, total and geometric mean.
fn tpch_doc(total_s: f64, device: &str) -> serde_json::Value {
    json!({
        "schema": "iolab.dbtpch/1",
        "workload": "tpch",
        "start_unix_s": 1_735_689_600u64,
        "partial": false,
        "engine": {"name": "sqlite", "dir": "/mnt/gen5/db"},
        "queries": [{"number": 14, "seconds": total_s}],
        "power": {"queries": 1, "total_s": total_s, "geomean_s": total_s / 2.0, "measured_s": total_s},
        "devices": [{"name": device}],
    })
}

/// A copy document: its engine, both sides' devices, MB/s.
fn copy_doc(mb_per_s: f64) -> serde_json::Value {
    json!({
        "schema": "iolab.dbcopy/1",
        "workload": "copy",
        "start_unix_s": 1_735_689_600u64,
        "engine": {"name": "postgres", "dir": "/mnt/a/db"},
        "copy": {"seconds": 1.5, "mb_per_s": mb_per_s},
        "source_devices": [{"name": "loop0"}],
        "destination_devices": [{"name": "loop1"}, {"name": "loop0"}],
    })
}

#[test]
fn tpch_and_copy_runs_are_their_own_kinds_with_their_headlines() {
    let (_d, path) = temp();
    let c = Catalog::open(&path, INDEX).unwrap();
    let new = |kind: &str, doc| NewEntry {
        kind: kind.into(),
        doc,
        tags: tags(&[("gen", "5")]),
        note: Some("n".into()),
    };
    let t = c.save(&new("db_tpch", tpch_doc(8.5, "nvme0n1"))).unwrap();
    let k = c.save(&new("db_copy", copy_doc(177.0))).unwrap();
    let e = c.get(&t).unwrap();
    assert_eq!(e.kind, "db_tpch");
    assert_eq!(
        (e.summary.columns.figure("query_total_s"), e.summary.columns.figure("query_geomean_s")),
        (Some(8.5), Some(4.25))
    );
    assert_eq!(e.summary.columns.profile.as_deref(), Some("tpch sqlite"));
    assert_eq!(e.summary.columns.targets, ["nvme0n1"]);
    assert_eq!(e.doc, tpch_doc(8.5, "nvme0n1"));
    let e = c.get(&k).unwrap();
    assert_eq!(e.kind, "db_copy");
    assert_eq!(e.summary.columns.figure("mb_s"), Some(177.0));
    assert_eq!(e.summary.columns.profile.as_deref(), Some("copy postgres"));
    assert_eq!(e.summary.columns.targets, ["loop0", "loop1"]);
    let only = |kind: &str| c.summaries(&Filter { kind: Some(kind.into()), ..Filter::default() }).unwrap();
    assert_eq!(only("db_tpch").len(), 1);
    assert_eq!(only("db_copy").len(), 1);
    assert!(only("db").is_empty());
    // A tpch document saved as a tpcc run is refused, and the other way round.
    let wrong = c.save(&new("db", tpch_doc(1.0, "sda")));
    assert!(matches!(wrong, Err(CatalogError::BadDocument { .. })), "{wrong:?}");
    let wrong = c.save(&new("db_tpch", db_doc(1.0, "sda")));
    assert!(matches!(wrong, Err(CatalogError::BadDocument { .. })), "{wrong:?}");
}

#[test]
fn version_4_catalog_takes_tpch_and_copy_runs_after_the_upgrade_and_keeps_its_db_runs() {
    let (_d, path) = temp();
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    make_v1(&path);
    {
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch("PRAGMA foreign_keys = OFF").unwrap();
        for m in &schema::MIGRATIONS[1..4] {
            conn.execute_batch(m.sql).unwrap();
        }
        conn.execute_batch("PRAGMA user_version = 4;").unwrap();
        let doc = db_doc(4321.0, "vda").to_string();
        conn.execute(
            "INSERT INTO entries (id, kind, saved_unix_s, doc, nopm, profile) VALUES ('dddd0001', 'db', 2.0, ?1, 4321.0, 'tpcc postgres')",
            [&doc],
        )
        .unwrap();
        let refused = conn.execute(
            "INSERT INTO entries (id, kind, saved_unix_s, doc) VALUES ('bbbb0001', 'db_tpch', 2.0, '{}')",
            [],
        );
        assert!(refused.is_err(), "version 4 has no db_tpch kind");
    }
    let c = Catalog::open(&path, INDEX).unwrap();
    let v: i64 = c.conn.query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap();
    assert_eq!(v, schema::LATEST);
    let before = c.summaries(&Filter::default()).unwrap();
    let db = before.iter().find(|s| s.id == "dddd0001").expect("the db run is kept");
    assert_eq!((db.kind.as_str(), db.columns.figure("nopm")), ("db", Some(4321.0)));
    assert!(before.iter().filter(|s| s.id != "dddd0001").all(|s| s.tags.len() == 1), "tags kept: {before:?}");
    c.save(&NewEntry { kind: "db_tpch".into(), doc: tpch_doc(2.0, "vda"), tags: vec![], note: None })
        .unwrap();
    c.save(&NewEntry { kind: "db_copy".into(), doc: copy_doc(90.0), tags: vec![], note: None }).unwrap();
    assert_eq!(c.summaries(&Filter::default()).unwrap().len(), before.len() + 2);
}

/// Issue 34, item 4: version 6 drops the list of kinds and moves the headline columns of particular kinds
/// (IOPS, MB/s, p99, NOPM, the query times) into `figures`, each value as it was: nothing recomputed.
#[test]
fn version_5_catalog_moves_its_headline_columns_into_figures_and_keeps_every_entry() {
    let (_d, path) = temp();
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    make_v1(&path);
    {
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch("PRAGMA foreign_keys = OFF").unwrap();
        for m in &schema::MIGRATIONS[1..5] {
            conn.execute_batch(m.sql).unwrap();
        }
        conn.execute_batch("PRAGMA user_version = 5;").unwrap();
        // Values no extraction would give, so a recomputation would show.
        conn.execute(
            "INSERT INTO entries (id, kind, saved_unix_s, doc, profile, iops, mb_s, p99_ns, nopm, query_total_s,
                                  query_geomean_s)
             VALUES ('eeee0001', 'db_tpch', 3.0, ?1, 'tpch sqlite', 1.5, 2.5, 3.5, 4.5, 5.5, 6.5)",
            [tpch_doc(8.5, "vda").to_string()],
        )
        .unwrap();
        conn.execute("INSERT INTO tags VALUES ('eeee0001', 'gen', '5')", []).unwrap();
    }
    let c = Catalog::open(&path, INDEX).unwrap();
    let e = c.get("eeee0001").unwrap();
    let want: Vec<(&str, f64)> = vec![
        ("iops", 1.5),
        ("mb_s", 2.5),
        ("nopm", 4.5),
        ("p99_ns", 3.5),
        ("query_geomean_s", 6.5),
        ("query_total_s", 5.5),
    ];
    let got: Vec<(&str, f64)> = e.summary.columns.figures.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    assert_eq!(got, want);
    assert_eq!(
        (e.kind.as_str(), e.tags.len(), e.summary.columns.profile.as_deref()),
        ("db_tpch", 1, Some("tpch sqlite"))
    );
    assert!(c.get("d89d").is_ok(), "the older entry is kept");
    let check: Vec<String> = {
        let mut stmt = c.conn.prepare("SELECT sql FROM sqlite_master WHERE name = 'entries'").unwrap();
        stmt.query_map([], |r| r.get(0)).unwrap().collect::<rusqlite::Result<_>>().unwrap()
    };
    assert!(!check[0].contains("CHECK"), "no list of kinds left: {}", check[0]);
    c.remove("eeee0001").unwrap();
    let n: i64 = c
        .conn
        .query_row("SELECT count(*) FROM figures WHERE entry_id = 'eeee0001'", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 0, "an entry's figures go with it");
}

/// A kind of document the catalog has never heard of (the caller's indexer knows it) is saved, listed and
/// filtered with no migration and no change here.
#[test]
fn a_new_kind_of_entry_needs_no_migration() {
    fn index(kind: &str, doc: &serde_json::Value) -> Result<Columns, String> {
        if kind != "db_ycsb" {
            return INDEX(kind, doc);
        }
        let mut c = Columns { profile: Some("ycsb a".into()), ..Columns::default() };
        c.set_figure("ops_per_s", doc["ops_per_s"].as_f64());
        Ok(c)
    }
    let (_d, path) = temp();
    let c = Catalog::open(&path, index).unwrap();
    save_run(&c, "0000000a", "oltp", "/dev/sdb", &[]);
    let doc = json!({"schema": "iolab.dbycsb/1", "ops_per_s": 12_345.0});
    let id =
        c.save(&NewEntry { kind: "db_ycsb".into(), doc, tags: tags(&[("w", "a")]), note: None }).unwrap();
    let e = c.get(&id).unwrap();
    assert_eq!((e.kind.as_str(), e.summary.columns.figure("ops_per_s")), ("db_ycsb", Some(12_345.0)));
    let only = c.summaries(&Filter { kind: Some("db_ycsb".into()), ..Filter::default() }).unwrap();
    assert_eq!(only.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(), [id.as_str()]);
    let refused = c.save_text("db_ycssb", "{}", &[], None).unwrap_err().to_string();
    assert!(
        refused.contains("cannot save this document as a db_ycssb") && refused.contains("'db_ycssb'"),
        "{refused}"
    );
}
