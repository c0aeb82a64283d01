//! `iolab db copy`: the seed study's snapshot replication. A database is built (a tpcc database of
//! `--warehouses`, or a tpch one at `--scale`), made whole (a checkpoint), by default written back and
//! dropped from the page cache (so the copy reads the source from its device, as a copy of a database that
//! was not just written would), then copied into a second directory the engine's own way
//! ([`Database::copy_to`]: SQLite's online backup API, PostgreSQL's `pg_basebackup` over the private server's
//! socket), durable before the clock stops. Reported: the time, the bytes and files copied, their rate,
//! and what the devices under the source and under the destination did during the copy.

use crate::database::sqlite::FILE_NAME as SQLITE_FILE;
use crate::database::Database;
use crate::devices::{self, DeviceWindow};
use crate::workload::{Context, StorageSettings, UsersPoint, Workload, WorkloadObserver};
use crate::WorkloadError;
use iolab_device::diskstats;
use iolab_report::db::{DbBuild, DbHeader};
use iolab_report::db_copy::{CopyResult, CopyRun, CopySource, DB_COPY_SCHEMA};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Instant;

/// A copy shorter than this is flagged: too short for a bandwidth to mean much.
pub const SHORT_COPY_S: f64 = 1.0;

/// The database to build and copy.
#[derive(Clone, Debug)]
pub enum Source {
    /// A TPC-C-derived database.
    Tpcc {
        /// Warehouses.
        warehouses: u64,
        /// Items.
        items: u64,
    },
    /// A TPC-H-derived database.
    Tpch {
        /// The scale factor.
        scale: f64,
    },
}

/// What `iolab db copy` asks.
#[derive(Clone, Debug)]
pub struct Options {
    /// The database.
    pub source: Source,
    /// The seed of its data.
    pub seed: u64,
    /// Drop the source's files from the page cache before the copy.
    pub evict: bool,
}

/// Where the engine keeps the database in `dir`: the SQLite file, or PostgreSQL's data directory.
fn database_path(engine: &dyn Database, dir: &Path) -> PathBuf {
    if engine.name() == "sqlite" {
        dir.join(SQLITE_FILE)
    } else {
        dir.join("pgdata")
    }
}

/// Bytes and files at `path` (a file, or a directory's files).
fn size(path: &Path) -> (u64, u64) {
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() => (m.len(), 1),
        Ok(_) => (devices::dir_bytes(path), devices::dir_files(path)),
        Err(_) => (0, 0),
    }
}

/// The source as built: its build, its workload's name, and its warehouses and items (tpcc) or scale
/// (tpch).
type Built = (DbBuild, &'static str, Option<u32>, Option<u32>, Option<f64>);

/// Builds the source database the options name.
fn build_source(
    engine: &dyn Database,
    o: &Options,
    stop: &AtomicBool,
    observer: &dyn WorkloadObserver,
) -> Result<Built, WorkloadError> {
    Ok(match &o.source {
        Source::Tpcc { warehouses, items } => {
            observer.notice(&format!(
                "building {warehouses} TPC-C warehouse{} ({items} items) on {}",
                if *warehouses == 1 { "" } else { "s" },
                engine.version()
            ));
            let expected = crate::tpcc::build::expected_rows(*warehouses, *items);
            let on_rows = |n| observer.loaded(n, expected);
            let b = crate::tpcc::build::build(engine, *warehouses, *items, o.seed, stop, &on_rows)?;
            let view = b.view(&crate::tpcc::schema::TABLES);
            (view, "tpcc", Some(*warehouses as u32), Some(*items as u32), None)
        }
        Source::Tpch { scale } => {
            observer.notice(&format!(
                "generating and loading TPC-H data at scale {scale} on {}",
                engine.version()
            ));
            let expected = crate::tpch::load::expected_rows(&crate::tpch::gen::Scale::new(*scale));
            let b =
                crate::tpch::load::build(engine, *scale, o.seed, stop, &|n| observer.loaded(n, expected))?;
            (b.view(&crate::tpch::schema::TABLES), "tpch", None, None, Some(*scale))
        }
    })
}

/// The devices of both lists, each once.
fn union(a: &[diskstats::BlockDevice], b: &[diskstats::BlockDevice]) -> Vec<diskstats::BlockDevice> {
    let mut all = a.to_vec();
    for d in b {
        if !all.iter().any(|a| a.name == d.name) {
            all.push(d.clone());
        }
    }
    all
}

/// What a reader should know: shared devices, a source that read nothing though cold, a warm source, a
/// copy too short to say much.
fn warnings(
    o: &Options,
    source_devices: &[diskstats::BlockDevice],
    destination_devices: &[diskstats::BlockDevice],
    source_views: &[iolab_report::db::DeviceView],
    seconds: f64,
) -> Vec<String> {
    let mut warnings = Vec::new();
    let shared: Vec<&str> = source_devices
        .iter()
        .filter(|s| destination_devices.iter().any(|d| d.name == s.name))
        .map(|d| d.name.as_str())
        .collect();
    if !shared.is_empty() {
        warnings.push(format!(
            "the source and the destination share {}: its numbers hold the copy's reads and its writes together",
            shared.join(", ")
        ));
    }
    if o.evict && !source_views.is_empty() && source_views.iter().all(|d| d.reads == 0) {
        warnings.push(
            "the source's devices read nothing during the copy, though its files were dropped from the page cache: the engine served them from its own memory"
                .into(),
        );
    }
    if !o.evict {
        warnings.push(
            "--warm: the source was copied from the page cache as the build left it, so the source's device was not read"
                .into(),
        );
    }
    if seconds < SHORT_COPY_S {
        warnings.push(format!(
            "the copy took {seconds:.2} s: too short for its rate to say much about the devices; build a larger database (--warehouses, --scale)"
        ));
    }
    warnings
}

/// The copy workload: a database built, made whole (and cold), then copied into the harness's first other
/// directory ([`Context::also`]).
pub struct Copy {
    o: Options,
    start_unix_s: u64,
    source: Option<BuiltSource>,
    result: Option<CopyResult>,
}

/// The source as built, and where it is.
struct BuiltSource {
    built: Built,
    dir: PathBuf,
    size_bytes: u64,
    evicted: Option<u64>,
}

impl Copy {
    /// The workload of `o`.
    pub fn new(o: Options) -> Copy {
        Copy { o, start_unix_s: 0, source: None, result: None }
    }
}

impl Workload for Copy {
    type Document = CopyResult;

    fn name(&self) -> &'static str {
        "copy"
    }

    fn seed(&self) -> u64 {
        self.o.seed
    }

    fn connections(&self) -> u32 {
        crate::bulk::MAX_LOADERS + 10
    }

    fn users(&self) -> Vec<u32> {
        vec![1]
    }

    /// SQLite's backup runs inside iolab; PostgreSQL's copy is `pg_basebackup`, iolab's child.
    fn iolab_does_io(&self) -> bool {
        true
    }

    /// The source database, and its copy under `--to`.
    fn space_need(&self, database: crate::database::DatabaseKind) -> Option<crate::workload::SpaceNeed> {
        let (bytes, sized_by, flag) = match self.o.source {
            Source::Tpcc { warehouses, items } => (
                crate::sizes::tpcc_bytes(database, warehouses, items),
                format!("--warehouses {warehouses} with {items} items"),
                "--warehouses",
            ),
            Source::Tpch { scale } => {
                (crate::sizes::tpch_bytes(database, scale), format!("--scale {scale}"), "--scale")
            }
        };
        Some(crate::workload::SpaceNeed { bytes: vec![bytes, bytes], sized_by, flag })
    }

    fn build(&mut self, cx: &Context<'_>) -> Result<(), WorkloadError> {
        self.start_unix_s =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
        let engine = cx.database;
        let dir = engine
            .dir()
            .ok_or_else(|| {
                WorkloadError::Setup(
                    "iolab db copy needs a database whose files iolab keeps (not --url)".into(),
                )
            })?
            .to_path_buf();
        let built = build_source(engine, &self.o, cx.stop, cx.observer)?;
        engine.checkpoint()?;
        let (size_bytes, _) = size(&database_path(engine, &dir));
        let evicted = self.o.evict.then(|| devices::evict(&dir));
        self.source = Some(BuiltSource { built, dir, size_bytes, evicted });
        Ok(())
    }

    fn run(&mut self, cx: &Context<'_>, _: UsersPoint) -> Result<(), WorkloadError> {
        let to = cx
            .also
            .first()
            .ok_or_else(|| WorkloadError::Setup("iolab db copy needs a destination (--to)".into()))?;
        let source = self.source.as_ref().expect("the harness builds first");
        self.result = Some(copy(cx, &self.o, self.start_unix_s, source, to)?);
        Ok(())
    }

    fn document(&mut self, _: &Context<'_>, storage: &StorageSettings) -> Result<CopyResult, WorkloadError> {
        let mut doc = self.result.take().expect("the harness runs before the document");
        doc.engine.settings.extend(storage.memory.iter().chain(&storage.throttle).cloned());
        Ok(doc)
    }
}

/// Copies the built `source` into `to` (an empty directory iolab made) over the measured window and returns
/// the document.
fn copy(
    cx: &Context<'_>,
    o: &Options,
    start_unix_s: u64,
    source: &BuiltSource,
    to: &Path,
) -> Result<CopyResult, WorkloadError> {
    let (engine, observer) = (cx.database, cx.observer);
    let BuiltSource { built: (build, workload, warehouses, items, scale), dir, size_bytes, evicted } = source;
    observer.notice(&format!(
        "built in {:.1} s ({}); copying it to {}",
        build.seconds,
        iolab_report::format_bytes(*size_bytes),
        to.display()
    ));
    let source_devices = diskstats::devices_under(dir);
    let destination_devices = diskstats::devices_under(to);
    let all = union(&source_devices, &destination_devices);
    observer.window(true);
    let window = DeviceWindow::over(all);
    let started = Instant::now();
    let method = engine.copy_to(to, cx.stop)?;
    let seconds = started.elapsed().as_secs_f64();
    let (deltas, _) = window.deltas();
    observer.window(false);
    let every: Vec<_> = deltas.iter().map(|(d, c)| devices::device_view(d, c, seconds)).collect();
    let database_io = devices::beside(observer.database_io(), &every, seconds);
    let (bytes, files) = size(&database_path(engine, to));
    let view = |list: &[diskstats::BlockDevice]| {
        deltas
            .iter()
            .filter(|(d, _)| list.iter().any(|l| l.name == d.name))
            .map(|(d, c)| devices::device_view(d, c, seconds))
            .collect::<Vec<_>>()
    };
    let (source_views, destination_views) = (view(&source_devices), view(&destination_devices));
    let mut warnings = warnings(o, &source_devices, &destination_devices, &source_views, seconds);
    warnings.extend(devices::database_io_warnings(database_io.as_ref()));
    Ok(CopyResult {
        header: DbHeader {
            env: crate::environment(engine, Some(devices::dir_bytes(dir))),
            ..DbHeader::new(DB_COPY_SCHEMA, "copy", None, o.seed, start_unix_s)
        },
        engine: crate::engine_view(engine, Some(devices::dir_bytes(dir))),
        source: CopySource {
            workload: (*workload).into(),
            warehouses: *warehouses,
            items: *items,
            scale: *scale,
            build: build.clone(),
            size_bytes: *size_bytes,
            evicted_bytes: *evicted,
        },
        copy: CopyRun {
            method: method.into(),
            to: to.display().to_string(),
            seconds,
            bytes,
            files,
            mb_per_s: if seconds > 0.0 { bytes as f64 / 1e6 / seconds } else { 0.0 },
        },
        source_devices: source_views,
        destination_devices: destination_views,
        database_io,
        warnings,
    })
}
