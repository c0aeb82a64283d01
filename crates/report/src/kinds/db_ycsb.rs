//! A YCSB-style key-value run (`iolab.dbycsb/1`, [`YcsbResult`], `iolab db ycsb`): YCSB's CoreWorkload (one
//! table of records, each a key and ten 100-byte fields; workloads A to F as mixes of read, update, insert,
//! scan and read-modify-write over Zipfian, latest or uniform keys) on a real database on the storage under
//! test. Its model, its renderings and its declarations are all in this file: kept in the catalog as
//! `db_ycsb` (typed `db-ycsb`), listed by its operations per second and read p99; on the report's page its
//! cards, operations and devices; compared with YCSB runs only, per operation and per device.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::columns::{db_columns, DATABASE_RUN_WITHOUT_CSV, P99};
use crate::compare::metrics::{device_keys, device_metrics};
use crate::db::{DbBuild, DbEngine, DbHeader, DeviceView, MixShare, TxResult};
use crate::export::json::pretty;
use crate::export::text::db::{build_line, database_io_text, devices_table, engine_lines, header_lines};
use crate::format::{format_count, format_duration_ns, format_rate, table};
use crate::html::db_page::{database_io_part, db_header, devices_part, facts_part, warnings_card};
use crate::html::parts::{card, numbers_table, Grid};
use crate::html::{db_figures, escape_html as esc};
use crate::plugin::catalog::f64_at;
use crate::plugin::{
    Warned,
    parse_as, Better, Column, Comparing, Document, EntryKind, Kind, Metric, Page, Part, Peers, ComparedPoint,
    ReportDoc, ColumnShown, Stage, ComparedTrial, Unit,
};

/// The `schema` value of a YCSB run document.
pub const DB_YCSB_SCHEMA: &str = "iolab.dbycsb/1";

/// What every YCSB document says of itself.
pub const YCSB_DISCLAIMER: &str =
    "YCSB-style: YCSB's CoreWorkload on iolab's own client; its numbers compare with YCSB's in kind, not digit for digit";

/// One YCSB run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct YcsbResult {
    /// What it is (schema [`DB_YCSB_SCHEMA`], workload `ycsb`), its seed and its start.
    #[serde(flatten)]
    pub header: DbHeader,
    /// The database engine and where it ran.
    pub engine: DbEngine,
    /// The workload's settings.
    pub config: YcsbConfig,
    /// The table's load.
    pub build: DbBuild,
    /// The measured window.
    pub run: YcsbRun,
    /// The block devices under the database's files over the measured window.
    pub devices: Vec<DeviceView>,
    /// The database's own I/O over the window the device table covers, beside the devices'; absent where
    /// nothing counted it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub database_io: Option<crate::db::DatabaseIo>,
    /// What a reader should know before trusting the numbers.
    pub warnings: Vec<String>,
    /// The run was interrupted: its window is shorter than asked.
    pub partial: bool,
}

/// A YCSB run's settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct YcsbConfig {
    /// The workload's letter, `a` to `f`, as YCSB names its workload files.
    pub workload: String,
    /// Records loaded (YCSB's `recordcount`).
    pub records: u64,
    /// Fields per record (`fieldcount`).
    pub fields: u32,
    /// Bytes per field (`fieldlength`).
    pub field_bytes: u32,
    /// Which records the operations favour (`requestdistribution`): `zipfian`, `latest` or `uniform`.
    pub distribution: String,
    /// The longest scan, records (`maxscanlength`; the length is uniform from 1).
    pub max_scan: u32,
    /// Users (YCSB's `threadcount`): one connection and one thread each, no think time.
    pub users: u32,
    /// Seconds of ramp before the measured window.
    pub ramp_s: f64,
    /// Seconds asked for the measured window.
    pub duration_s: f64,
    /// The mix, percent of each operation.
    pub mix: Vec<MixShare>,
}

/// The measured window of a YCSB run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct YcsbRun {
    /// Seconds measured.
    pub measured_s: f64,
    /// Operations completed per second, every kind (YCSB's `[OVERALL] Throughput(ops/sec)`).
    pub ops_per_s: f64,
    /// Per operation (`read`, `update`, `insert`, `scan`, `read_modify_write`): counts, rate per minute,
    /// response times from HDR histograms.
    pub operations: Vec<TxResult>,
    /// What was still running when the window ended (absent in documents of iolab before it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_end: Option<crate::db::WindowEnd>,
}

impl YcsbRun {
    /// An operation's results, by name.
    pub fn operation(&self, name: &str) -> Option<&TxResult> {
        self.operations.iter().find(|t| t.name == name)
    }
}

/// The operations a YCSB run may have, in its document's order.
const OPERATIONS: [&str; 5] = ["read", "update", "insert", "scan", "read_modify_write"];

/// The kind of YCSB runs.
pub struct YcsbKind;

/// The `iolab runs` column of a YCSB run's throughput.
const OPS: Column = Column {
    header: "ops/s",
    place: 25,
    shown: ColumnShown::WhenAny,
    figures: &["ops_per_s"],
    cell: |c| c.figure("ops_per_s").map_or("-".into(), |v| format_rate(v, 0)),
};

impl Kind for YcsbKind {
    fn schema(&self) -> &'static str {
        DB_YCSB_SCHEMA
    }
    fn name(&self) -> &'static str {
        "db ycsb"
    }
    fn parse(&self, doc: Value) -> Result<Box<dyn Document>, String> {
        parse_as::<YcsbResult>(self, doc)
    }
    fn entries(&self) -> &'static [EntryKind] {
        &[EntryKind { stored: "db_ycsb", typed: &["db-ycsb", "dbycsb", "ycsb"], what: "`iolab db ycsb` runs" }]
    }
    /// The database's columns, its ops/s, and its reads' p99 (its updates' in a mix without reads).
    fn columns(&self, doc: &Value, c: &mut iolab_doc::Columns) {
        db_columns(doc, c);
        c.set_figure("ops_per_s", f64_at(doc, "/run/ops_per_s"));
        let ops = doc.pointer("/run/operations").and_then(Value::as_array).into_iter().flatten();
        let with_p99 = ops.filter(|t| t.pointer("/latency_ns/p99").is_some());
        let first = with_p99.clone().find(|t| t["name"] == "read").or_else(|| with_p99.into_iter().next());
        c.set_figure("p99_ns", first.and_then(|t| f64_at(t, "/latency_ns/p99")));
    }
    fn listing(&self) -> &'static [&'static Column] {
        &[&OPS, &P99]
    }
    fn html(&self) -> &'static [Part] {
        &[Part::Each(Stage::DatabaseEach, section)]
    }
    fn markdown(&self) -> &'static [Part] {
        &[Part::Each(Stage::DatabaseEach, section_md)]
    }
    fn without_csv(&self) -> Option<&'static str> {
        Some(DATABASE_RUN_WITHOUT_CSV)
    }
    fn compare(&self) -> Option<&'static dyn Comparing> {
        Some(&YcsbKind)
    }
}

impl Document for YcsbResult {
    fn kind(&self) -> &'static dyn Kind {
        &YcsbKind
    }
    fn text(&self) -> String {
        text(self)
    }
    fn json(&self) -> String {
        pretty(self) + "\n"
    }
    fn started_at(&self) -> String {
        super::db::started_at(&self.header)
    }
    fn iolab_version(&self) -> String {
        self.header.iolab_version.clone()
    }
    fn warnings(&self) -> Vec<Warned> {
        self.warnings.iter().map(Warned::of).collect()
    }
}

/// What the run was: `workload a (zipfian), 100,000 records of 10 × 100 B, 4 users; mix read 50%, ...`.
fn load_words(r: &YcsbResult) -> String {
    let c = &r.config;
    let mix: Vec<String> = c.mix.iter().filter(|m| m.pct > 0).map(|m| format!("{} {}%", m.name, m.pct)).collect();
    format!(
        "workload {} ({}), {} records of {} × {} B, {} user{}, no think time; mix {}",
        c.workload,
        c.distribution,
        format_count(c.records),
        c.fields,
        c.field_bytes,
        c.users,
        if c.users == 1 { "" } else { "s" },
        mix.join(", ")
    )
}

/// The operations' table: counts, rate per minute, response times.
fn operations_table(r: &YcsbResult) -> String {
    let mut header = crate::db_rows::TX_COLUMNS;
    header[0] = "";
    table(&header, &crate::db_rows::tx_rows(&r.run.operations))
}

/// As `iolab db ycsb` prints it.
fn text(r: &YcsbResult) -> String {
    let what = [r.engine.name.clone(), format!("measured {:.2} s after {:.2} s ramp", r.run.measured_s, r.config.ramp_s)];
    let mut out = header_lines(&r.header, &what, r.partial);
    out.push_str(&engine_lines(&r.engine));
    let _ = writeln!(out, "load    {}", load_words(r));
    out.push_str(&build_line(&r.build));
    let _ = writeln!(out, "\nops/s {}\n", format_rate(r.run.ops_per_s, 1));
    out.push_str(&operations_table(r));
    if !r.devices.is_empty() {
        out.push('\n');
        out.push_str(&devices_table("devices under the database, measured window (/proc/diskstats):", &r.devices));
    }
    out.push_str(&database_io_text(r.database_io.as_ref()));
    for w in &r.warnings {
        let _ = writeln!(out, "warning: {w}");
    }
    out
}

/// The report's section: cards, the operations' response times and devices as charts and tables.
fn section(p: &mut Page, d: &ReportDoc) {
    let Some(r) = d.body.as_any().downcast_ref::<YcsbResult>() else { return };
    let out = &mut p.out;
    let _ = writeln!(out, "<section class=\"db-ycsb\">\n<h2>YCSB run: {}</h2>", esc(&d.label));
    let what = format!("{:.2} s measured after {:.0} s ramp", r.run.measured_s, r.config.ramp_s);
    db_header(out, d, &r.header, &r.engine.name, &what, r.partial);
    out.push_str("<div class=\"cards\">");
    card(out, "ops/s", &format_rate(r.run.ops_per_s, 0), "operations per second, every kind", "");
    if let Some(l) = r.run.operation("read").and_then(|t| t.latency_ns.as_ref()) {
        let p50 = format!("p50 {}", format_duration_ns(l.p50 as f64));
        card(out, "read p99", &format_duration_ns(l.p99 as f64), &p50, "");
    }
    let c = &r.config;
    card(out, "workload", &c.workload.to_uppercase(), &c.distribution, "");
    card(out, "users", &c.users.to_string(), &format!("{} records", format_count(c.records)), "");
    warnings_card(out, r.warnings.len());
    out.push_str("</div>\n");
    let mut grid = Grid::default();
    let ops = &r.run.operations;
    let caption = "p50, p95 and p99 response time of each operation, from its first statement to its commit, retries included.";
    grid.bar("db-tx-latency", db_figures::tx_latency_bars(&d.label, ops, "operation"), caption);
    if let Some(c) = db_figures::device_bars(&d.label, &r.devices) {
        grid.bar("db-devices", c, "Reads, writes and flushes per second of each block device under the database over the measured window (/proc/diskstats deltas).");
    }
    grid.write(out, &mut p.charts);
    out.push_str("<h3>Operations</h3>\n");
    numbers_table(out, &crate::db_rows::TX_COLUMNS, &crate::db_rows::tx_rows(ops));
    devices_part(out, "Devices under the database (measured window)", &r.devices);
    database_io_part(out, r.database_io.as_ref());
    let facts = [("load", load_words(r)), ("engine", r.engine.version.clone()), ("ops/s", format_rate(r.run.ops_per_s, 1))];
    facts_part(out, &facts.iter().map(|(k, v)| (*k, v.clone())).collect::<Vec<_>>());
    out.push_str("</section>\n");
}

/// The Markdown report's section: what ran, the operations' table (its warnings are the report's, under
/// Warnings).
fn section_md(p: &mut Page, d: &ReportDoc) {
    let Some(r) = d.body.as_any().downcast_ref::<YcsbResult>() else { return };
    let _ = writeln!(p.out, "### YCSB run: {}\n", d.label);
    crate::html::markdown::db_header_md(&mut p.out, &r.header);
    let _ = writeln!(p.out, "{}; ops/s {}\n", load_words(r), format_rate(r.run.ops_per_s, 1));
    let _ = writeln!(p.out, "```\n{}```\n", operations_table(r));
}

impl Comparing for YcsbKind {
    fn name(&self) -> &'static str {
        "db_ycsb"
    }
    fn one(&self) -> &'static str {
        "a YCSB run, iolab db ycsb"
    }
    fn many(&self) -> &'static str {
        "YCSB runs"
    }
    fn peers(&self) -> Peers {
        Peers::OwnKind
    }
    fn metric_names(&self) -> &'static [(&'static str, &'static str)] {
        &[("ops_per_s", "ops_per_s"), ("ops", "ops_per_s")]
    }
    fn points<'a>(&self, doc: &'a dyn Document) -> Vec<ComparedPoint<'a>> {
        vec![ComparedPoint { params: None, trials: vec![ComparedTrial::document(doc)] }]
    }
    fn side(&self, docs: &[&dyn Document], _: &str, _: &str, _: &mut Vec<String>) -> (Vec<String>, Vec<u64>) {
        let runs = docs.iter().filter_map(|d| d.as_any().downcast_ref::<YcsbResult>());
        (Vec::new(), runs.map(|r| r.header.seed).collect())
    }
    /// Throughput, each operation's p99 (of the operations the runs did), then the devices.
    fn metrics(&self, trials: &[Vec<ComparedTrial<'_>>]) -> Vec<Metric> {
        let runs: Vec<&YcsbResult> = trials.iter().flatten().filter_map(|t| t.get::<YcsbResult>()).collect();
        let mut metrics = vec![Metric::new("ops_per_s", "ops/s", "database", (Unit::Iops, Better::Higher), |t| {
            t.get::<YcsbResult>().map(|r| r.run.ops_per_s)
        })];
        for op in OPERATIONS {
            if runs.iter().any(|r| r.run.operation(op).is_some_and(|t| t.latency_ns.is_some())) {
                let p99 = move |t: ComparedTrial<'_>| {
                    let r = t.get::<YcsbResult>()?;
                    r.run.operation(op)?.latency_ns.as_ref().map(|l| l.p99 as f64)
                };
                let (key, label) = (format!("{op}.p99"), format!("{op} p99"));
                metrics.push(Metric::new(key, label, op, (Unit::Ns, Better::Lower), p99));
            }
        }
        let lists: Vec<&[DeviceView]> = runs.iter().map(|r| r.devices.as_slice()).collect();
        for key in device_keys(&lists) {
            metrics.extend(device_metrics(&key, &key, devices));
        }
        metrics
    }
}

fn devices(trial: ComparedTrial<'_>) -> Option<(&[DeviceView], f64)> {
    trial.get::<YcsbResult>().map(|r| (r.devices.as_slice(), r.run.measured_s))
}
