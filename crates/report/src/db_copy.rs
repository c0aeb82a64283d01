//! The snapshot copy document (`iolab.dbcopy/1`, `iolab db copy --json`): a built database copied to a
//! second directory the engine's own way (SQLite's online backup API, PostgreSQL's base backup), timed,
//! with the bytes copied and what the devices under the source and under the destination did meanwhile
//! (/proc/diskstats deltas over the copy). Plain data; the text rendering lives in `export`.

use crate::db::{DbBuild, DbEngine, DbHeader, DeviceView};
use serde::{Deserialize, Serialize};

/// The `schema` value of a copy document.
pub const DB_COPY_SCHEMA: &str = "iolab.dbcopy/1";

/// One copy.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CopyResult {
    /// Schema [`DB_COPY_SCHEMA`], workload `copy` (no disclaimer: no TPC workload runs), the seed of the
    /// database's data and the start of the command; flattened.
    #[serde(flatten)]
    pub header: DbHeader,
    /// The engine of the source database, and where it ran.
    pub engine: DbEngine,
    /// The database copied.
    pub source: CopySource,
    /// The copy.
    pub copy: CopyRun,
    /// The block devices under the source's files over the copy.
    pub source_devices: Vec<DeviceView>,
    /// The block devices under the destination over the copy (the same numbers as `source_devices` where
    /// a device is under both).
    pub destination_devices: Vec<DeviceView>,
    /// The copy's own I/O over the copy (the engine's processes, and iolab's, which runs SQLite's backup
    /// and starts `pg_basebackup`), beside each disk's total; absent in documents of older iolabs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub database_io: Option<crate::db::DatabaseIo>,
    /// What a reader should know before trusting the numbers.
    pub warnings: Vec<String>,
}

/// The database copied: what built it and how big it was.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CopySource {
    /// The workload that built it: `tpcc` or `tpch`.
    pub workload: String,
    /// TPC-C warehouses (a tpcc build).
    pub warehouses: Option<u32>,
    /// TPC-C items (a tpcc build).
    pub items: Option<u32>,
    /// TPC-H scale factor (a tpch build).
    pub scale: Option<f64>,
    /// Schema and load.
    pub build: DbBuild,
    /// The database's size: the SQLite file after a checkpoint (its write-ahead log emptied into it), or
    /// the PostgreSQL data directory.
    pub size_bytes: u64,
    /// Bytes of the source's files written back and dropped from the page cache before the copy, so the
    /// copy reads them from the device (`None`: left cached, `--warm`).
    pub evicted_bytes: Option<u64>,
}

/// The copy itself.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CopyRun {
    /// How: `sqlite-backup` (the online backup API) or `pg_basebackup`.
    pub method: String,
    /// The destination directory.
    pub to: String,
    /// Seconds from the start of the copy until the copy was durable (synced) on the destination.
    pub seconds: f64,
    /// Bytes in the destination's files afterwards.
    pub bytes: u64,
    /// Files in the destination afterwards.
    pub files: u64,
    /// `bytes` over `seconds`, in MB/s (10^6 bytes).
    pub mb_per_s: f64,
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn sample() -> CopyResult {
        let db = crate::db::tests::sample();
        CopyResult {
            header: DbHeader::new(DB_COPY_SCHEMA, "copy", None, 3, 1_700_000_000),
            engine: db.engine.clone(),
            source: CopySource {
                workload: "tpcc".into(),
                warehouses: Some(1),
                items: Some(10_000),
                scale: None,
                build: db.build.clone(),
                size_bytes: 40 << 20,
                evicted_bytes: Some(40 << 20),
            },
            copy: CopyRun {
                method: "pg_basebackup".into(),
                to: "/mnt/b/copy".into(),
                seconds: 0.5,
                bytes: 42 << 20,
                files: 900,
                mb_per_s: 88.1,
            },
            source_devices: db.devices.clone(),
            destination_devices: db.devices,
            database_io: Some(crate::db::tests::database_io_sample()),
            warnings: vec![],
        }
    }

    #[test]
    fn every_key_is_in_the_schema_and_back() {
        let v = serde_json::to_value(sample()).unwrap();
        crate::schema_check::check_document(&v, crate::schema_check::DB_COPY_SCHEMA);
        let back: CopyResult = serde_json::from_value(v).unwrap();
        assert_eq!(back, sample());
    }

    #[test]
    fn text_says_the_method_the_time_the_bytes_and_both_sides() {
        let text = crate::TextExporter.render(&sample());
        for want in ["pg_basebackup", "0.50 s", "42.0 MiB", "88.1 MB/s", "source", "destination", "vda"] {
            assert!(text.contains(want), "{want:?} in\n{text}");
        }
    }
}
