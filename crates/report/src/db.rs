//! The database run document (`iolab.db/1`, `iolab db tpcc --json`): a real database's workload on the
//! storage under test. What ran (engine, server, warehouses, users, seed), how the database was built, what
//! the users did (NOPM and TPM as HammerDB reports them, per transaction type: counts, rollbacks, retries and
//! response-time percentiles from HDR histograms), whether the TPC-C consistency conditions held afterwards,
//! and what the block devices under the database's files did in the measured window (/proc/diskstats deltas).
//! Plain data; the text rendering lives in `export`.

use iolab_stats::LatSummary;
use serde::{Deserialize, Serialize};

/// The `schema` value of a database run document.
pub const DB_SCHEMA: &str = "iolab.db/1";

/// What every db document says of itself.
pub const TPCC_DISCLAIMER: &str = "derived from the TPC-C specification; not TPC-C compliant, and not comparable with published TPC results";

/// What every database document (`iolab.db/1`, `iolab.dbtpch/1`, `iolab.dbcopy/1`, `iolab.dbsweep/1`)
/// says of itself first, flattened into its top level: the schema, the iolab, the workload and what it is
/// not, the seed and the start. One type, one renderer (`export::text::db::header_lines`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DbHeader {
    /// The document's schema (`iolab.db/1`, ...).
    pub schema: String,
    /// The iolab that ran it.
    pub iolab_version: String,
    /// The workload: `tpcc`, `tpch` or `copy`.
    pub workload: String,
    /// What the workload is not ([`TPCC_DISCLAIMER`], `TPCH_DISCLAIMER`); none for a copy, which runs no
    /// TPC workload.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disclaimer: Option<String>,
    /// The seed of every random choice (the database's data, and each tpcc user's stream).
    pub seed: u64,
    /// Start of the run, seconds since the Unix epoch.
    pub start_unix_s: u64,
    /// The machine and the storage under the database's directory, the same block a run result has (its one
    /// target the directory: file system, mount options, device, write cache); absent for a user's server
    /// (`--url`, which may run elsewhere) and in documents of an older iolab.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<crate::Env>,
}

impl DbHeader {
    /// A header written by this iolab.
    pub fn new(
        schema: &str,
        workload: &str,
        disclaimer: Option<&str>,
        seed: u64,
        start_unix_s: u64,
    ) -> DbHeader {
        DbHeader {
            schema: schema.into(),
            iolab_version: env!("CARGO_PKG_VERSION").into(),
            workload: workload.into(),
            disclaimer: disclaimer.map(str::to_string),
            seed,
            start_unix_s,
            env: None,
        }
    }
}

/// One database run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DbResult {
    /// What it is (schema [`DB_SCHEMA`], workload `tpcc`, [`TPCC_DISCLAIMER`]), its seed (the load's data
    /// and each user's stream) and when it started; flattened, so the JSON keeps these keys at its top.
    #[serde(flatten)]
    pub header: DbHeader,
    /// The database engine and where it ran.
    pub engine: DbEngine,
    /// The workload's settings.
    pub config: TpccConfig,
    /// Schema and load.
    pub build: DbBuild,
    /// The measured window.
    pub run: TpccRun,
    /// TPC-C consistency conditions checked on the database after the run.
    pub consistency: Vec<ConsistencyCheck>,
    /// The block devices under the database's files over the measured window; empty for a server of the
    /// user's own (`--url`), or a file system on no block device.
    pub devices: Vec<DeviceView>,
    /// The database's own I/O over the measured window, beside the devices'; absent where nothing counted it
    /// (a document of an older iolab, or a workload run outside the harness).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub database_io: Option<DatabaseIo>,
    /// The database's size against the memory that could hold it (`--memory`'s budget, else the machine's);
    /// absent without a directory (`--url`) and in documents of iolab before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_fit: Option<crate::db_window::MemoryFit>,
    /// What a reader should know before trusting the numbers.
    pub warnings: Vec<String>,
    /// The run was interrupted (Ctrl-C, SIGTERM, SIGHUP): its window is shorter than asked.
    pub partial: bool,
}

/// The engine and where its files were.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DbEngine {
    /// `sqlite` or `postgres`.
    pub name: String,
    /// The engine's version as it reports it.
    pub version: String,
    /// The directory of the database's files (absent for `--url`).
    pub dir: Option<String>,
    /// The user's server (`--url`), its password left out.
    pub url: Option<String>,
    /// A private server iolab started: the account it ran as.
    pub server_user: Option<String>,
    /// Settings that decide durability and caching: journal mode, synchronous, shared buffers, fsync.
    pub settings: Vec<Setting>,
    /// Bytes in the database's directory at the end of the run.
    pub size_bytes: Option<u64>,
}

/// One engine setting.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Setting {
    /// Its name (`synchronous`, `shared_buffers`).
    pub name: String,
    /// Its value as the engine reports it.
    pub value: String,
}

/// The workload's settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TpccConfig {
    /// Warehouses built.
    pub warehouses: u32,
    /// Users (one connection and one thread each), each on a home warehouse (user i on warehouse
    /// i mod warehouses + 1).
    pub users: u32,
    /// Items (the spec's 100,000 unless `--items`); each warehouse stocks every item.
    pub items: u32,
    /// Customers per district (the spec's 3,000).
    pub customers_per_district: u32,
    /// Seconds of ramp before the measured window.
    pub ramp_s: f64,
    /// Seconds asked for the measured window.
    pub duration_s: f64,
    /// Keying and think time: none (HammerDB's default), so each user runs transactions back to back.
    pub think_time: bool,
    /// The mix, percent of each transaction type (from a shuffled deck of 100 cards per user).
    pub mix: Vec<MixShare>,
}

/// One transaction type's share of the mix.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MixShare {
    /// `new_order`, `payment`, `order_status`, `delivery` or `stock_level`.
    pub name: String,
    /// Percent.
    pub pct: u32,
}

/// Schema and load.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DbBuild {
    /// Seconds from the first CREATE to the last index.
    pub seconds: f64,
    /// Connections that loaded warehouses at once.
    pub loaders: u32,
    /// Rows loaded per table.
    pub rows: Vec<TableRows>,
}

/// Rows of one table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TableRows {
    /// The table.
    pub table: String,
    /// Rows loaded.
    pub rows: u64,
}

/// The measured window.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TpccRun {
    /// Seconds measured (shorter than asked when interrupted).
    pub measured_s: f64,
    /// New orders committed per minute (HammerDB's NOPM), counted by the users.
    pub nopm: f64,
    /// Transactions completed per minute, every type, committed or rolled back as the spec asks (HammerDB's
    /// TPM counts the database's commits and rollbacks; this counts the workload's).
    pub tpm: f64,
    /// New orders per minute from the database itself: the growth of the districts' `d_next_o_id` over the
    /// window, HammerDB's own way, as a check of `nopm`.
    pub nopm_database: Option<f64>,
    /// Per transaction type, in the mix's order.
    pub transactions: Vec<TxResult>,
    /// Deliveries' districts skipped: no new order waiting (the spec lets a delivery skip them).
    pub delivery_districts_skipped: u64,
    /// What was still running when the window ended (absent in documents of iolab before it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_end: Option<WindowEnd>,
    /// The window interval by interval: NOPM, and the device's latency and bytes (a checkpoint stall shows);
    /// absent in documents of iolab before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intervals: Option<crate::db_window::DbIntervals>,
    /// The CPU of the engine and of iolab over the window, and whether the run was CPU-bound; absent in
    /// documents of iolab before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<crate::db_window::DbCpu>,
}

/// How long an operation may complete past the window's end, or the window's close be late, before the
/// window counts as not ended on time ([`WindowEnd::late`]).
pub const LATE_AFTER_S: f64 = 1.0;

/// What was in flight when a measured window ended: the figures count only what completed inside the
/// window, so a stall at its end shows here, not in them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct WindowEnd {
    /// Operations (transactions) running when the window ended; each completed after it, uncounted.
    pub in_flight: u64,
    /// Seconds past the window's end the last of them took to complete (or to be given up); null when
    /// none was in flight.
    pub longest_past_end_s: Option<f64>,
    /// Seconds past its end the window was closed (its edges read); 0 when on time.
    pub closed_late_s: f64,
    /// The window did not end on time: an operation in flight completed, or the window was closed, more
    /// than [`LATE_AFTER_S`] past its end. The document then carries a warning.
    pub late: bool,
}

impl WindowEnd {
    /// The warning for a window that did not end on time; none when it did.
    pub fn warning(&self) -> Option<String> {
        if !self.late {
            return None;
        }
        Some(format!(
            "the window did not end on time: {} operations were in flight at its end, the last completing {:.2} s after it, and the window was closed {:.2} s late; the figures count only what completed inside the window, so this stall is not in them",
            self.in_flight,
            self.longest_past_end_s.unwrap_or(0.0),
            self.closed_late_s
        ))
    }
}

/// One transaction type in the window.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TxResult {
    /// Its name.
    pub name: String,
    /// Committed.
    pub committed: u64,
    /// Rolled back on purpose (new-order's 1 % with an unused item).
    pub rolled_back: u64,
    /// Attempts that met a busy database, a serialization failure or a deadlock and were run again.
    pub retries: u64,
    /// Transactions given up after too many retries.
    pub failed: u64,
    /// Completed (committed or rolled back) per minute.
    pub per_minute: f64,
    /// Response time, from the transaction's start to its commit or rollback, retries included; `None`
    /// without completions.
    pub latency_ns: Option<LatSummary>,
    /// The merged response-time histogram (`iolab-hdr/1`, base64), for later merging and curves.
    pub histogram: String,
}

/// One TPC-C consistency condition (clause 3.3.2).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ConsistencyCheck {
    /// Its number (1 to 4).
    pub condition: u32,
    /// What it says.
    pub rule: String,
    /// Whether every warehouse or district met it.
    pub passed: bool,
    /// Warehouses or districts that did not.
    pub violations: u64,
    /// The first violation, in words.
    pub example: Option<String>,
}

/// What one block device did in the measured window.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DeviceView {
    /// The kernel's name.
    pub name: String,
    /// `filesystem`, `disk` or `member` (see `iolab_device::diskstats::BlockDevice`).
    pub role: String,
    /// Its model, device-mapper name or loop backing file.
    pub model: Option<String>,
    /// Reads completed.
    pub reads: u64,
    /// Writes completed.
    pub writes: u64,
    /// Flushes completed.
    pub flushes: u64,
    /// Discards completed.
    pub discards: u64,
    /// Bytes read.
    pub read_bytes: u64,
    /// Bytes written.
    pub write_bytes: u64,
    /// Bytes discarded.
    pub discard_bytes: u64,
    /// Reads per second.
    pub read_iops: f64,
    /// Writes per second.
    pub write_iops: f64,
    /// Flushes per second.
    pub flushes_per_s: f64,
    /// Mean read size in bytes.
    pub read_mean_bytes: Option<f64>,
    /// Mean write size in bytes.
    pub write_mean_bytes: Option<f64>,
    /// Mean time a read spent in the device, in ms (/proc/diskstats' milliseconds over reads).
    pub read_mean_ms: Option<f64>,
    /// Mean time a write spent in the device, in ms.
    pub write_mean_ms: Option<f64>,
    /// Mean time a flush spent in the device, in ms.
    pub flush_mean_ms: Option<f64>,
    /// Share of the window the device had I/O in flight, 0 to 1.
    pub busy: f64,
}

/// The I/O the database's own processes issued over the measured window (a private PostgreSQL server's
/// processes, or iolab's own for SQLite, which runs inside it), from the block I/O accounting of a cgroup
/// holding them, beside what each disk did in all (/proc/diskstats). Either `source` and `disks`, or
/// `unmeasured`: never a silent 0.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DatabaseIo {
    /// Whose I/O was counted: `the PostgreSQL server's processes`, `iolab's process (SQLite runs in it)`.
    pub whose: String,
    /// The cgroup counted and its controller: `cgroup-v1 blkio /sys/fs/cgroup/blkio/iolab-acct-42`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// Why it could not be counted (not root, no block I/O controller, a server of the user's own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unmeasured: Option<String>,
    /// Per whole disk counted: the database's I/O beside the disk's.
    pub disks: Vec<DatabaseDiskIo>,
    /// What the accounting cannot see.
    pub unseen: String,
}

/// The database's I/O to one whole disk over the window, beside the disk's own totals.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DatabaseDiskIo {
    /// The disk's kernel name, as the device table names it.
    pub name: String,
    /// Reads the database submitted (before the block layer merges or splits them).
    pub reads: u64,
    /// Writes it submitted (cgroup v1: with its flushes, which carry no data, among them).
    pub writes: u64,
    /// Bytes it read.
    pub read_bytes: u64,
    /// Bytes it wrote.
    pub write_bytes: u64,
    /// Discards it submitted, where the kernel counts them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub discards: Option<u64>,
    /// Reads a second.
    pub read_iops: f64,
    /// Writes a second.
    pub write_iops: f64,
    /// Bytes the disk read in all over the window (the device table's), when it has the disk.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_read_bytes: Option<u64>,
    /// Bytes the disk wrote in all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_write_bytes: Option<u64>,
}

pub use iolab_stats::{much_more, MUCH_MORE_FLOOR_BYTES, MUCH_MORE_RATIO};

impl DatabaseIo {
    /// The bytes the database read from its disks, when counted.
    pub fn read_bytes(&self) -> Option<u64> {
        self.source.as_ref().map(|_| self.disks.iter().map(|d| d.read_bytes).sum())
    }

    /// The warning when a disk did much more than the database ([`much_more`]), reads or writes: the
    /// device table's figures are then not the database's.
    pub fn warning(&self) -> Option<String> {
        let fmt = crate::format_bytes;
        let mut said = Vec::new();
        for d in &self.disks {
            for (verb, device, own) in
                [("read", d.device_read_bytes, d.read_bytes), ("wrote", d.device_write_bytes, d.write_bytes)]
            {
                if let Some(device) = device.filter(|&b| much_more(b, own)) {
                    said.push(format!("{} {verb} {}, the database {}", d.name, fmt(device), fmt(own)));
                }
            }
        }
        (!said.is_empty()).then(|| {
            format!(
                "the devices did much more than the database ({}): other processes shared them, or the kernel wrote back for it ({}); the device table counts them all, the database's own I/O is the lines under it",
                said.join("; "),
                self.unseen
            )
        })
    }
}

impl DbResult {
    /// The consistency conditions passed, all of them (and at least one was checked).
    pub fn consistent(&self) -> bool {
        !self.consistency.is_empty() && self.consistency.iter().all(|c| c.passed)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A small document with every optional part filled.
    pub(crate) fn sample() -> DbResult {
        let mut h = iolab_stats::LatencyHistogram::new();
        for v in [1_000_000, 2_000_000, 5_000_000] {
            h.record(v);
        }
        DbResult {
            header: DbHeader::new(DB_SCHEMA, "tpcc", Some(TPCC_DISCLAIMER), 42, 1_700_000_000),
            engine: DbEngine {
                name: "postgres".into(),
                version: "PostgreSQL 15.8".into(),
                dir: Some("/mnt/t/iolab-db".into()),
                url: None,
                server_user: Some("postgres (uid 101)".into()),
                settings: vec![Setting { name: "shared_buffers".into(), value: "32MB".into() }],
                size_bytes: Some(150 << 20),
            },
            config: TpccConfig {
                warehouses: 1,
                users: 2,
                items: 100_000,
                customers_per_district: 3000,
                ramp_s: 1.0,
                duration_s: 2.0,
                think_time: false,
                mix: vec![MixShare { name: "new_order".into(), pct: 45 }],
            },
            build: DbBuild {
                seconds: 3.5,
                loaders: 1,
                rows: vec![TableRows { table: "item".into(), rows: 100_000 }],
            },
            run: TpccRun {
                measured_s: 2.0,
                nopm: 1500.0,
                tpm: 3300.0,
                nopm_database: Some(1500.0),
                transactions: vec![TxResult {
                    name: "new_order".into(),
                    committed: 50,
                    rolled_back: 1,
                    retries: 2,
                    failed: 0,
                    per_minute: 1530.0,
                    latency_ns: h.summary(),
                    histogram: h.to_base64(),
                }],
                delivery_districts_skipped: 0,
                window_end: None,
                intervals: Some(crate::db_window::DbIntervals {
                    interval_s: 1.0,
                    device: Some("loop3".into()),
                    intervals: [(0.0, 1800.0, 0.4), (1.0, 1200.0, 9.5)]
                        .map(|(start_s, nopm, write_ms)| crate::db_window::DbInterval {
                            start_s,
                            seconds: 1.0,
                            nopm,
                            tpm: nopm * 2.2,
                            read_iops: 10.0,
                            write_iops: 250.0,
                            read_mean_ms: Some(0.2),
                            write_mean_ms: Some(write_ms),
                            write_mib_s: 3.5,
                        })
                        .to_vec(),
                }),
                cpu: Some(crate::db_window::DbCpu::assess(
                    4,
                    2,
                    Some(1.1),
                    0.3,
                    ("the PostgreSQL server's processes", Some(0.6)),
                )),
            },
            consistency: vec![ConsistencyCheck {
                condition: 1,
                rule: "W_YTD = sum(D_YTD)".into(),
                passed: true,
                violations: 0,
                example: None,
            }],
            devices: vec![DeviceView {
                name: "vda".into(),
                role: "filesystem".into(),
                model: None,
                reads: 10,
                writes: 100,
                flushes: 50,
                discards: 0,
                read_bytes: 40960,
                write_bytes: 409600,
                discard_bytes: 0,
                read_iops: 5.0,
                write_iops: 50.0,
                flushes_per_s: 25.0,
                read_mean_bytes: Some(4096.0),
                write_mean_bytes: Some(4096.0),
                read_mean_ms: Some(0.5),
                write_mean_ms: Some(1.0),
                flush_mean_ms: Some(2.0),
                busy: 0.4,
            }],
            database_io: Some(database_io_sample()),
            memory_fit: crate::db_window::MemoryFit::of(150 << 20, 8 << 30, false),
            warnings: vec!["a warning".into()],
            partial: false,
        }
    }

    /// The database's own I/O on `vda`: every field filled.
    pub(crate) fn database_io_sample() -> DatabaseIo {
        DatabaseIo {
            whose: "the PostgreSQL server's processes".into(),
            source: Some("cgroup-v1 blkio /sys/fs/cgroup/blkio/iolab-acct-42".into()),
            unmeasured: None,
            disks: vec![DatabaseDiskIo {
                name: "vda".into(),
                reads: 8,
                writes: 90,
                read_bytes: 32768,
                write_bytes: 368640,
                discards: Some(0),
                read_iops: 4.0,
                write_iops: 45.0,
                device_read_bytes: Some(40960),
                device_write_bytes: Some(409600),
            }],
            unseen: "the kernel's writeback".into(),
        }
    }

    #[test]
    fn much_more_is_twice_the_database_and_16_mib_more() {
        const MIB: u64 = 1 << 20;
        assert!(much_more(17 * MIB, 0));
        assert!(!much_more(15 * MIB, 0), "under the floor");
        assert!(!much_more(40 * MIB, 20 * MIB), "twice is not more than twice");
        assert!(much_more(41 * MIB, 20 * MIB));
        assert!(!much_more(100 * MIB, 90 * MIB));
        let mut io = database_io_sample();
        assert_eq!(io.warning(), None);
        assert_eq!(io.read_bytes(), Some(32768));
        io.disks[0].device_write_bytes = Some(45 * MIB);
        let w = io.warning().unwrap();
        assert!(
            w.starts_with(
                "the devices did much more than the database (vda wrote 45.0 MiB, the database 360 KiB)"
            ),
            "{w}"
        );
        io.source = None;
        assert_eq!(io.read_bytes(), None, "not counted is not 0");
    }

    #[test]
    fn every_key_is_in_the_schema_and_back() {
        let v = serde_json::to_value(sample()).unwrap();
        crate::schema_check::check_document(&v, crate::schema_check::DB_SCHEMA);
        let back: DbResult = serde_json::from_value(v).unwrap();
        assert_eq!(back, sample());
    }

    #[test]
    fn text_says_nopm_each_check_and_the_disclaimer() {
        let text = crate::TextExporter.render(&sample());
        for want in ["NOPM", "1,500", "new_order", "condition 1", "passed", "vda", "not TPC-C compliant"] {
            assert!(text.contains(want), "{want:?} in\n{text}");
        }
        // The database's own I/O under the devices, or why it was not counted.
        assert!(text.contains("the database's own I/O, same window (the PostgreSQL server's processes; cgroup-v1 blkio /sys/fs/cgroup/blkio/iolab-acct-42):\ndisk"), "{text}");
        assert!(text.contains("not seen: the kernel's writeback\n"), "{text}");
        let mut r = sample();
        let io = r.database_io.as_mut().unwrap();
        (io.source, io.disks, io.unmeasured) = (None, Vec::new(), Some("iolab is not root".into()));
        let text = crate::TextExporter.render(&r);
        assert!(text.contains("the database's own I/O (the PostgreSQL server's processes): not measured: iolab is not root\n"), "{text}");
        assert!(!text.contains("not seen"), "{text}");
    }
}
