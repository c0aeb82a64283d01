//! The names of a query's columns, as each engine gives them: a workload reads its results by these names
//! ([`iolab_db::database::Rows`]), so SQLite and PostgreSQL must agree on them for every kind of select
//! list the workloads write: plain columns (through a table alias too), `RETURNING`, and expressions with a
//! lower-case alias. An alias in capitals is where they part (PostgreSQL folds it, SQLite keeps it), which is
//! why the workloads' aliases are lower case.

use iolab_db::database::postgres::Postgres;
use iolab_db::database::server::ServerOptions;
use iolab_db::database::sqlite::Sqlite;
use iolab_db::{Database, Value};
use std::os::unix::fs::PermissionsExt;
use std::sync::atomic::AtomicBool;

/// Each query and the names both engines give its columns.
const AGREED: [(&str, &[&str]); 4] = [
    ("SELECT w_id, w_ytd FROM w WHERE w_id = $1", &["w_id", "w_ytd"]),
    ("UPDATE w SET w_ytd = w_ytd + 1 WHERE w_id = $1 RETURNING w_name, w_ytd", &["w_name", "w_ytd"]),
    (
        "SELECT x.w_id, CAST(sum(x.w_ytd) AS bigint) AS next_ids, count(*) AS n, max(x.w_id) - min(x.w_id) + 1 \
         AS span FROM w x WHERE x.w_id >= $1 GROUP BY x.w_id",
        &["w_id", "next_ids", "n", "span"],
    ),
    (
        "SELECT x.w_id, y.total FROM w x JOIN (SELECT w_id, CAST(sum(w_ytd) AS bigint) AS total FROM w \
         GROUP BY w_id) y ON y.w_id = x.w_id WHERE x.w_id = $1",
        &["w_id", "total"],
    ),
];

/// The names `engine` gives each of [`AGREED`]'s queries, and an alias written `Mixed_Case`.
fn names(engine: &dyn Database) -> (Vec<Vec<String>>, String) {
    let mut c = engine.connect().unwrap();
    c.batch("CREATE TABLE w (w_id integer PRIMARY KEY, w_name varchar(10), w_ytd bigint)").unwrap();
    c.batch("INSERT INTO w VALUES (1, 'one', 10), (2, 'two', 20)").unwrap();
    let agreed =
        AGREED.iter().map(|(sql, _)| c.query(sql, &[Value::Int(1)]).unwrap().columns().to_vec()).collect();
    let mixed = c.query("SELECT w_id AS Mixed_Case FROM w", &[]).unwrap().columns()[0].clone();
    (agreed, mixed)
}

/// What [`AGREED`] says.
fn expected() -> Vec<Vec<String>> {
    AGREED.iter().map(|(_, names)| names.iter().map(|n| n.to_string()).collect()).collect()
}

#[test]
fn sqlite_names_columns_as_written() {
    let t = tempfile::tempdir().unwrap();
    let (agreed, mixed) = names(&Sqlite::new(t.path()));
    assert_eq!(agreed, expected());
    assert_eq!(mixed, "Mixed_Case");
}

#[test]
fn postgres_names_them_as_sqlite_does_and_folds_an_alias_to_lower_case() {
    if !nix::unistd::geteuid().is_root() || iolab_db::database::server::find_bindir().is_err() {
        return iolab_testkit::skip(format_args!("needs root and PostgreSQL's server programs"));
    }
    let p = tempfile::Builder::new().prefix("iolab-columns-").tempdir_in("/tmp").unwrap();
    std::fs::set_permissions(p.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let dir = p.path().join("db");
    std::fs::create_dir(&dir).unwrap();
    let options = ServerOptions { shared_buffers_bytes: 32 << 20, max_connections: 20 };
    let mut pg = Postgres::private(&dir, &options, false, &AtomicBool::new(false)).unwrap();
    let (agreed, mixed) = names(&pg);
    pg.close().unwrap();
    assert_eq!(agreed, expected());
    assert_eq!(mixed, "mixed_case");
}
