//! The analytics run document (`iolab.dbtpch/1`, `iolab db tpch --json`): TPC-H-derived queries on a real
//! database whose files live on the storage under test. What ran (engine, scale, runs, the order), how the
//! database was built, each query's answer size, times and what the block devices under the database did
//! while it ran (/proc/diskstats deltas), the set's total and geometric mean (power-test-like), and the
//! devices over the whole query window. Plain data; the text rendering lives in `export`.

use crate::db::{DbBuild, DbEngine, DbHeader, DeviceView};
use serde::{Deserialize, Serialize};

/// The `schema` value of an analytics run document.
pub const DB_TPCH_SCHEMA: &str = "iolab.dbtpch/1";

/// What every analytics document says of itself.
pub const TPCH_DISCLAIMER: &str = "derived from the TPC-H specification; not TPC-H compliant, and not comparable with published TPC results";

/// One analytics run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TpchResult {
    /// Schema [`DB_TPCH_SCHEMA`], workload `tpch`, [`TPCH_DISCLAIMER`], the seed of the generated data and
    /// the start; flattened.
    #[serde(flatten)]
    pub header: DbHeader,
    /// The database engine and where it ran.
    pub engine: DbEngine,
    /// The workload's settings.
    pub config: TpchConfig,
    /// Schema and load.
    pub build: DbBuild,
    /// Each query, in the order they ran (the power test's stream order).
    pub queries: Vec<QueryResult>,
    /// The set as a whole.
    pub power: TpchPower,
    /// The block devices under the database's files over all the queries (from before the first to after
    /// the last); empty for a server of the user's own or a file system on no block device.
    pub devices: Vec<DeviceView>,
    /// The database's own I/O over the window the device table covers, beside the devices'; absent where
    /// nothing counted it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub database_io: Option<crate::db::DatabaseIo>,
    /// What a reader should know before trusting the numbers.
    pub warnings: Vec<String>,
    /// Interrupted (Ctrl-C, SIGTERM, SIGHUP): the queries after the interruption did not run.
    pub partial: bool,
    /// The power test's refresh functions (`--refresh`): RF1 before the queries, RF2 after them. Absent
    /// when they did not run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh: Option<TpchRefreshPair>,
    /// The throughput test (`--streams S`): S query streams at once, and with `--refresh` a refresh
    /// stream beside them. Absent when it did not run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throughput: Option<TpchThroughput>,
    /// The figures TPC-H's metrics define, computed from these times (derived, not comparable with
    /// published TPC results). Absent unless all 22 queries ran, uninterrupted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub derived: Option<TpchDerived>,
}

/// One refresh function's run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TpchRefresh {
    /// `RF1` (new sales: orders inserted with their lines) or `RF2` (old sales: the oldest orders deleted
    /// with their lines).
    pub function: String,
    /// The refresh pair it belongs to (1 in the power test, 2 onwards in the throughput test's refresh
    /// stream): which orders it inserts or deletes.
    pub pair: u32,
    /// Orders inserted or deleted (SF × 1,500).
    pub orders: u64,
    /// Lines inserted or deleted with them.
    pub lineitems: u64,
    /// Seconds from its first statement to its commit (one transaction).
    pub seconds: f64,
    /// What the devices under the database did during it; empty in the throughput test, where the query
    /// streams share the devices (see the test's own view).
    pub devices: Vec<DeviceView>,
}

/// The power test's refresh pair.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TpchRefreshPair {
    /// RF1, run before the first query.
    pub rf1: TpchRefresh,
    /// RF2, run after the last query.
    pub rf2: TpchRefresh,
}

/// The throughput test.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TpchThroughput {
    /// Query streams (S).
    pub streams: u32,
    /// Where each stream's order comes from: `appendix-a` (the spec's ordering table, stream s taking
    /// row s mod 41).
    pub ordering: String,
    /// Each query stream.
    pub query_streams: Vec<TpchStream>,
    /// The refresh stream's functions, RF1 and RF2 of each pair in the order they ran; empty without
    /// `--refresh`.
    pub refresh: Vec<TpchRefresh>,
    /// Seconds from the first stream's start to the last one's end, the refresh stream included (the
    /// spec's Ts).
    pub elapsed_s: f64,
    /// The block devices under the database's files over the whole test.
    pub devices: Vec<DeviceView>,
}

/// One query stream of the throughput test.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TpchStream {
    /// Its number, 1 to S.
    pub stream: u32,
    /// Seconds from its first query's start to its last one's end.
    pub seconds: f64,
    /// Its queries, in the order they ran.
    pub queries: Vec<TpchStreamQuery>,
}

/// One query of a stream.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TpchStreamQuery {
    /// Its number, 1 to 22.
    pub number: u32,
    /// Rows in its answer.
    pub rows: u64,
    /// Seconds, from sending it to its last row.
    pub seconds: f64,
}

/// TPC-H's figures (clause 5.4), computed from this run's times; derived from TPC-H, not comparable with
/// published TPC results.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TpchDerived {
    /// What the figures are not ([`TPCH_DERIVED_NOTE`]).
    pub note: String,
    /// The geometric mean of the power test's 22 query times, seconds (HammerDB's headline).
    pub geomean_s: f64,
    /// 3600 × SF over the geometric mean of the power test's 22 query times and its 2 refresh times
    /// (the 22 query times alone without `--refresh`), each time at least the longest / 1000 (clause
    /// 5.4.1.4); unrounded.
    pub power_at_size: f64,
    /// What `power_at_size` is taken over: `22 queries and RF1, RF2`, or `22 queries (no refresh)`.
    pub power_basis: String,
    /// S × 22 × 3600 / Ts × SF, with the throughput test's elapsed time Ts; absent without one.
    pub throughput_at_size: Option<f64>,
    /// The composite, √(Power@Size × Throughput@Size) (the spec's QphH@Size); absent without a
    /// throughput test.
    pub qphh_at_size: Option<f64>,
}

/// What the derived figures say of themselves.
pub const TPCH_DERIVED_NOTE: &str = "derived from TPC-H, not comparable with published TPC results";

/// The workload's settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TpchConfig {
    /// The scale factor (SF 1 is about 1 GB of raw data: 6 million lines).
    pub scale: f64,
    /// Times the query set ran, back to back; each query's headline time is the median of its runs.
    pub runs: u32,
    /// The query numbers in the order they ran.
    pub order: Vec<u32>,
    /// `cold` (the database's files were written back and dropped from the page cache before the first
    /// query) or `warm` (left as the build left them).
    pub start: String,
    /// Bytes of the database's files dropped from the page cache before the first query (cold start).
    pub evicted_bytes: Option<u64>,
}

/// One query.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QueryResult {
    /// Its number, 1 to 22.
    pub number: u32,
    /// The spec's name for it.
    pub title: String,
    /// How the SQL differs from the spec's text (beyond date arithmetic done in advance), if it does.
    pub rewrite: Option<String>,
    /// Rows in its answer.
    pub rows: u64,
    /// Seconds: the median of its runs, from sending the query to the last row received.
    pub seconds: f64,
    /// Seconds of each run.
    pub runs_s: Vec<f64>,
    /// What the devices under the database did during its runs (summed over them).
    pub devices: Vec<DeviceView>,
}

/// The query set as a whole.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TpchPower {
    /// Queries that ran.
    pub queries: u32,
    /// The sum of the queries' times (a power test's elapsed time, without refresh functions).
    pub total_s: f64,
    /// The geometric mean of the queries' times (what TPC-H's Power metric is built on).
    pub geomean_s: f64,
    /// Wall-clock seconds from the first query's start to the last one's end, every run included.
    pub measured_s: f64,
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A small document with every optional part filled.
    pub(crate) fn sample() -> TpchResult {
        let mut engine = crate::db::tests::sample().engine;
        engine.name = "sqlite".into();
        let device = crate::db::tests::sample().devices[0].clone();
        TpchResult {
            header: DbHeader::new(DB_TPCH_SCHEMA, "tpch", Some(TPCH_DISCLAIMER), 7, 1_700_000_000),
            engine,
            config: TpchConfig {
                scale: 0.01,
                runs: 1,
                order: vec![14, 2],
                start: "cold".into(),
                evicted_bytes: Some(15 << 20),
            },
            build: crate::db::tests::sample().build,
            queries: vec![
                QueryResult {
                    number: 14,
                    title: "promotion effect".into(),
                    rewrite: None,
                    rows: 1,
                    seconds: 0.012,
                    runs_s: vec![0.012],
                    devices: vec![device.clone()],
                },
                QueryResult {
                    number: 2,
                    title: "minimum cost supplier".into(),
                    rewrite: Some("none really".into()),
                    rows: 4,
                    seconds: 0.5,
                    runs_s: vec![0.5],
                    devices: vec![],
                },
            ],
            power: TpchPower { queries: 2, total_s: 0.512, geomean_s: 0.0775, measured_s: 0.52 },
            devices: vec![device.clone()],
            database_io: Some(crate::db::tests::database_io_sample()),
            warnings: vec!["a warning".into()],
            partial: false,
            refresh: Some(TpchRefreshPair {
                rf1: refresh("RF1", vec![device.clone()]),
                rf2: refresh("RF2", vec![]),
            }),
            throughput: Some(TpchThroughput {
                streams: 1,
                ordering: "appendix-a".into(),
                query_streams: vec![TpchStream {
                    stream: 1,
                    seconds: 0.6,
                    queries: vec![TpchStreamQuery { number: 14, rows: 1, seconds: 0.1 }],
                }],
                refresh: vec![refresh("RF1", vec![]), refresh("RF2", vec![])],
                elapsed_s: 0.7,
                devices: vec![device.clone()],
            }),
            derived: Some(TpchDerived {
                note: TPCH_DERIVED_NOTE.into(),
                geomean_s: 0.0775,
                power_at_size: 464.5,
                power_basis: "22 queries and RF1, RF2".into(),
                throughput_at_size: Some(1131.4),
                qphh_at_size: Some(725.0),
            }),
        }
    }

    fn refresh(function: &str, devices: Vec<DeviceView>) -> TpchRefresh {
        TpchRefresh { function: function.into(), pair: 1, orders: 15, lineitems: 61, seconds: 0.004, devices }
    }

    #[test]
    fn a_document_without_the_new_parts_still_reads() {
        let mut v = serde_json::to_value(sample()).unwrap();
        for key in ["refresh", "throughput", "derived"] {
            v.as_object_mut().unwrap().remove(key);
        }
        let back: TpchResult = serde_json::from_value(v).unwrap();
        assert!(back.refresh.is_none() && back.throughput.is_none() && back.derived.is_none());
        let again = serde_json::to_value(&back).unwrap();
        assert!(again.get("refresh").is_none(), "absent when not run");
    }

    #[test]
    fn every_key_is_in_the_schema_and_back() {
        let v = serde_json::to_value(sample()).unwrap();
        crate::schema_check::check_document(&v, crate::schema_check::DB_TPCH_SCHEMA);
        let back: TpchResult = serde_json::from_value(v).unwrap();
        assert_eq!(back, sample());
    }

    #[test]
    fn text_says_each_query_its_rows_the_power_line_and_the_disclaimer() {
        let text = crate::TextExporter.render(&sample());
        for want in [
            "Q14",
            "promotion effect",
            "Q2",
            "geometric mean",
            "not TPC-H compliant",
            "vda",
            "cold",
            "RF1",
            "stream 1",
            "Power@Size",
            "Throughput@Size",
            "QphH@Size",
            TPCH_DERIVED_NOTE,
        ] {
            assert!(text.contains(want), "{want:?} in\n{text}");
        }
    }
}
