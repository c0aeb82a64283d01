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
    /// What a reader should know before trusting the numbers.
    pub warnings: Vec<String>,
    /// Interrupted (Ctrl-C, SIGTERM, SIGHUP): the queries after the interruption did not run.
    pub partial: bool,
}

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
            devices: vec![device],
            warnings: vec!["a warning".into()],
            partial: false,
        }
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
        let text = crate::TextExporter.render(&crate::Document::DbTpch(&sample()));
        for want in ["Q14", "promotion effect", "Q2", "geometric mean", "not TPC-H compliant", "vda", "cold"]
        {
            assert!(text.contains(want), "{want:?} in\n{text}");
        }
    }
}
