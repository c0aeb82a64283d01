//! The bulk load both TPC-derived workloads build with ([`crate::tpcc::build`], [`crate::tpch::load`]): the
//! tables made, then the data generated in units of work and handed to the engine in chunks of
//! [`CHUNK_ROWS`] ([`Conn::load`]: COPY on PostgreSQL, batched prepared INSERTs in one transaction on
//! SQLite, each connection made cheap to load on with [`Conn::loading`]), on several connections at once
//! where the engine allows ([`crate::Dialect::parallel_load`]: up to [`MAX_LOADERS`], not more than CPUs;
//! SQLite has one writer); the rows told after each chunk, the stop flag read before each chunk and each
//! statement after the load; then the keys (where the dialect adds them late), the secondary indexes and
//! statistics. Timed from the first CREATE to the last statistic.
//!
//! A workload gives its tables, its indexes and its units with the generator of each; every unit draws
//! from its own stream of the seed, so the database is the same whatever the number of loaders.

use crate::database::{Conn, Database, Dialect};
use crate::{DbError, Value, WorkloadError};
use iolab_report::db::{DbBuild, TableRows};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// Rows per bulk load call.
pub const CHUNK_ROWS: usize = 10_000;
/// Loaders at most (connections loading at once).
pub const MAX_LOADERS: u32 = 8;

/// A table: its name, its columns with types, and its primary key (none for TPC-C's HISTORY).
pub struct Table {
    /// Its name.
    pub name: &'static str,
    /// `name type` for each column, in the order the loader writes them.
    pub columns: &'static [(&'static str, &'static str)],
    /// Its primary key's columns.
    pub key: &'static [&'static str],
}

impl Table {
    /// The column names.
    pub fn column_names(&self) -> Vec<&'static str> {
        self.columns.iter().map(|c| c.0).collect()
    }
}

/// The CREATE TABLE statements for `tables` (keys inline unless the dialect adds them after the load).
pub fn create_tables(tables: &[Table], d: &Dialect) -> String {
    let mut sql = String::new();
    for t in tables {
        let mut cols: Vec<String> = t.columns.iter().map(|(n, ty)| format!("{n} {ty}")).collect();
        let inline = !t.key.is_empty() && !d.keys_after_load;
        if inline {
            cols.push(format!("PRIMARY KEY ({})", t.key.join(", ")));
        }
        let options = if inline { d.keyed_table_options } else { "" };
        sql.push_str(&format!("CREATE TABLE {} ({}){options};\n", t.name, cols.join(", ")));
    }
    sql
}

/// The statements run after the load: the keys of `tables` (when added late), `indexes`, statistics.
pub fn after_load(tables: &[Table], indexes: &[&str], d: &Dialect) -> Vec<String> {
    let mut out = Vec::new();
    if d.keys_after_load {
        for t in tables.iter().filter(|t| !t.key.is_empty()) {
            out.push(format!("ALTER TABLE {} ADD PRIMARY KEY ({})", t.name, t.key.join(", ")));
        }
    }
    out.extend(indexes.iter().map(|i| i.to_string()));
    out.push("ANALYZE".into());
    out
}

/// Rows loaded, per table (in the order of the workload's tables).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RowCounts<const N: usize>(pub [u64; N]);

impl<const N: usize> Default for RowCounts<N> {
    fn default() -> Self {
        RowCounts([0; N])
    }
}

impl<const N: usize> RowCounts<N> {
    /// Adds `other`.
    pub fn add(&mut self, other: &RowCounts<N>) {
        for (a, b) in self.0.iter_mut().zip(other.0) {
            *a += b;
        }
    }
}

/// What a loader is told to tell: rows loaded, after each chunk (it may be called from several loading
/// threads at once).
pub type OnRows<'a> = &'a (dyn Fn(u64) + Sync);

/// What a build did.
#[derive(Debug)]
pub struct Built<const N: usize> {
    /// Seconds it took.
    pub seconds: f64,
    /// Connections that loaded at once.
    pub loaders: u32,
    /// Rows per table.
    pub rows: RowCounts<N>,
}

impl<const N: usize> Built<N> {
    /// The build as the documents show it, its rows named by `tables` (the workload's, in load order).
    pub fn view(&self, tables: &[Table; N]) -> DbBuild {
        DbBuild {
            seconds: self.seconds,
            loaders: self.loaders,
            rows: tables
                .iter()
                .zip(self.rows.0)
                .map(|(t, rows)| TableRows { table: t.name.into(), rows })
                .collect(),
        }
    }
}

/// Collects a unit's rows per table and hands them to the engine in chunks.
pub struct Writer<'a, const N: usize> {
    tables: &'static [Table; N],
    conn: &'a mut dyn Conn,
    stop: &'a AtomicBool,
    on_rows: OnRows<'a>,
    pending: Vec<Vec<Vec<Value>>>,
    counts: RowCounts<N>,
}

impl<const N: usize> Writer<'_, N> {
    /// Adds `row` to table `table` (its index in the workload's tables), loading the table's rows when
    /// they make a chunk.
    pub fn push(&mut self, table: usize, row: Vec<Value>) -> Result<(), WorkloadError> {
        self.pending[table].push(row);
        if self.pending[table].len() >= CHUNK_ROWS {
            self.flush(table)?;
        }
        Ok(())
    }

    fn flush(&mut self, i: usize) -> Result<(), WorkloadError> {
        if self.stop.load(Ordering::Relaxed) {
            return Err(WorkloadError::Interrupted);
        }
        let rows = std::mem::take(&mut self.pending[i]);
        if rows.is_empty() {
            return Ok(());
        }
        let t = &self.tables[i];
        self.conn.load(t.name, &t.column_names(), &rows).map_err(|e| {
            WorkloadError::Db(DbError {
                retryable: false,
                message: format!("loading {}: {}", t.name, e.message),
            })
        })?;
        self.counts.0[i] += rows.len() as u64;
        (self.on_rows)(rows.len() as u64);
        Ok(())
    }

    fn finish(mut self) -> Result<RowCounts<N>, WorkloadError> {
        for i in 0..N {
            self.flush(i)?;
        }
        Ok(self.counts)
    }
}

/// Writes one unit's rows.
pub type Generate<'a, const N: usize, U> =
    &'a (dyn Fn(&mut Writer<'_, N>, &U) -> Result<(), WorkloadError> + Sync);

/// A workload's load: its tables, its secondary indexes, and its data in units of work.
pub struct Load<'a, const N: usize, U> {
    /// The tables, in load order.
    pub tables: &'static [Table; N],
    /// The CREATE INDEX statements run after the load.
    pub indexes: &'static [&'static str],
    /// Units loaded first, one after another on the first connection.
    pub first: Vec<U>,
    /// The units then, on several connections where the engine allows (the biggest first, so the loaders
    /// finish together).
    pub units: Vec<U>,
    /// Writes a unit's rows.
    pub generate: Generate<'a, N, U>,
}

impl<const N: usize, U: Sync> Load<'_, N, U> {
    /// Loads `unit` on `conn`.
    fn unit(
        &self,
        conn: &mut dyn Conn,
        unit: &U,
        stop: &AtomicBool,
        on_rows: OnRows<'_>,
    ) -> Result<RowCounts<N>, WorkloadError> {
        let pending = vec![Vec::new(); N];
        let mut w =
            Writer { tables: self.tables, conn, stop, on_rows, pending, counts: RowCounts::default() };
        (self.generate)(&mut w, unit)?;
        w.finish()
    }

    /// Loads the units on `loaders` connections of their own, each taking the next unit until none is
    /// left or one fails.
    fn parallel(
        &self,
        engine: &dyn Database,
        loaders: u32,
        stop: &AtomicBool,
        on_rows: OnRows<'_>,
    ) -> Result<RowCounts<N>, WorkloadError> {
        let next = AtomicUsize::new(0);
        let total = Mutex::new(RowCounts::default());
        let failed = AtomicBool::new(false);
        let loader = || -> Result<(), WorkloadError> {
            let mut c = engine.connect()?;
            c.loading(true)?;
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= self.units.len() || failed.load(Ordering::Relaxed) {
                    return Ok(());
                }
                match self.unit(c.as_mut(), &self.units[i], stop, on_rows) {
                    Ok(r) => total.lock().unwrap_or_else(|p| p.into_inner()).add(&r),
                    Err(e) => {
                        failed.store(true, Ordering::Relaxed);
                        return Err(e);
                    }
                }
            }
        };
        let results: Vec<Result<(), WorkloadError>> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..loaders).map(|_| scope.spawn(loader)).collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or(Err(WorkloadError::Setup("a loader panicked".into()))))
                .collect()
        });
        for r in results {
            r?;
        }
        Ok(total.into_inner().unwrap_or_else(|p| p.into_inner()))
    }
}

/// Loaders for `units` units on an engine of `dialect`: one where it has one writer, else one per unit
/// up to the CPUs and [`MAX_LOADERS`].
fn loaders(dialect: &Dialect, units: usize) -> u32 {
    if !dialect.parallel_load {
        return 1;
    }
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    units.min(cpus).clamp(1, MAX_LOADERS as usize) as u32
}

/// Builds `load`'s database on `engine`: the tables, the data (the rows told to `on_rows` as they load,
/// from the loading threads), then keys, indexes and statistics.
pub fn build<const N: usize, U: Sync>(
    engine: &dyn Database,
    load: &Load<'_, N, U>,
    stop: &AtomicBool,
    on_rows: OnRows<'_>,
) -> Result<Built<N>, WorkloadError> {
    let started = Instant::now();
    let dialect = engine.dialect();
    let mut conn = engine.connect()?;
    conn.batch(&create_tables(load.tables, &dialect))?;
    conn.loading(true)?;
    let mut rows = RowCounts::default();
    for u in &load.first {
        rows.add(&load.unit(conn.as_mut(), u, stop, on_rows)?);
    }
    let loaders = loaders(&dialect, load.units.len());
    if loaders == 1 {
        for u in &load.units {
            rows.add(&load.unit(conn.as_mut(), u, stop, on_rows)?);
        }
    } else {
        rows.add(&load.parallel(engine, loaders, stop, on_rows)?);
    }
    for sql in after_load(load.tables, load.indexes, &dialect) {
        if stop.load(Ordering::Relaxed) {
            return Err(WorkloadError::Interrupted);
        }
        conn.batch(&sql)?;
    }
    conn.loading(false)?;
    Ok(Built { seconds: started.elapsed().as_secs_f64(), loaders, rows })
}

#[cfg(test)]
mod tests {
    use super::*;

    static TABLES: [Table; 2] = [
        Table { name: "a", columns: &[("x", "integer"), ("y", "text")], key: &["x"] },
        Table { name: "b", columns: &[("z", "integer")], key: &[] },
    ];

    fn dialect(late: bool) -> Dialect {
        Dialect {
            for_update: "",
            keyed_table_options: if late { "" } else { " WITHOUT ROWID" },
            keys_after_load: late,
            parallel_load: late,
        }
    }

    #[test]
    fn keys_go_inline_or_after_the_load_and_a_keyless_table_has_none() {
        assert_eq!(
            create_tables(&TABLES, &dialect(false)),
            "CREATE TABLE a (x integer, y text, PRIMARY KEY (x)) WITHOUT ROWID;\n\
             CREATE TABLE b (z integer);\n"
        );
        assert_eq!(
            create_tables(&TABLES, &dialect(true)),
            "CREATE TABLE a (x integer, y text);\nCREATE TABLE b (z integer);\n"
        );
        assert_eq!(
            after_load(&TABLES, &["CREATE INDEX i ON b (z)"], &dialect(false)),
            ["CREATE INDEX i ON b (z)", "ANALYZE"]
        );
        assert_eq!(
            after_load(&TABLES, &[], &dialect(true)),
            ["ALTER TABLE a ADD PRIMARY KEY (x)", "ANALYZE"]
        );
    }

    #[test]
    fn one_writer_loads_alone_and_others_load_at_most_one_per_unit_cpu_and_the_cap() {
        assert_eq!(loaders(&dialect(false), 100), 1);
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get()) as u32;
        assert_eq!(loaders(&dialect(true), 100), cpus.min(MAX_LOADERS));
        assert_eq!(loaders(&dialect(true), 1), 1);
        assert_eq!(loaders(&dialect(true), 0), 1);
    }
}
