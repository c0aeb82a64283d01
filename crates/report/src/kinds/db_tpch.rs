//! An analytics query set (`iolab.dbtpch/1`, [`TpchResult`], `iolab db tpch`): kept in the catalog as
//! `db_tpch` (typed `db-tpch`), listed by the total of its query times and their geometric mean; on the
//! report's page each query's time as a table and bars; compared with query sets only: each query's time,
//! the total and the geometric mean, shown as ratios too, and the devices over the set.

use serde_json::Value;

use super::columns::{db_columns, QUERIES};
use crate::compare::db::{db_notes, EngineOn};
use crate::compare::metrics::{device_keys, device_metrics};
use crate::db::DeviceView;
use crate::db_tpch::{TpchResult, DB_TPCH_SCHEMA, TPCH_DISCLAIMER};
use crate::export::{json::pretty, text};
use crate::html::{db_page, markdown};
use crate::plugin::catalog::f64_at;
use crate::plugin::{
    Warned,
    parse_as, Better, Column, Comparing, Document, EntryKind, Kind, Metric, Page, Part, Peers, ComparedPoint,
    ReportDoc, Stage, ComparedTrial, Unit,
};

/// The kind of tpch query sets.
pub struct TpchKind;

impl Kind for TpchKind {
    fn schema(&self) -> &'static str {
        DB_TPCH_SCHEMA
    }
    fn name(&self) -> &'static str {
        "db tpch"
    }
    fn parse(&self, doc: Value) -> Result<Box<dyn Document>, String> {
        parse_as::<TpchResult>(self, doc)
    }
    fn entries(&self) -> &'static [EntryKind] {
        &[EntryKind { stored: "db_tpch", typed: &["db-tpch", "dbtpch"], what: "`iolab db tpch` query sets" }]
    }
    fn columns(&self, doc: &Value, c: &mut iolab_doc::Columns) {
        db_columns(doc, c);
        c.set_figure("query_total_s", f64_at(doc, "/power/total_s"));
        c.set_figure("query_geomean_s", f64_at(doc, "/power/geomean_s"));
    }
    fn listing(&self) -> &'static [&'static Column] {
        &[&QUERIES]
    }
    fn html(&self) -> &'static [Part] {
        &[Part::Each(Stage::DatabaseEach, section)]
    }
    fn markdown(&self) -> &'static [Part] {
        &[Part::Each(Stage::DatabaseEach, section_md)]
    }
    fn without_csv(&self) -> Option<&'static str> {
        Some(super::columns::DATABASE_RUN_WITHOUT_CSV)
    }
    fn compare(&self) -> Option<&'static dyn Comparing> {
        Some(&TpchKind)
    }
}

impl Document for TpchResult {
    fn kind(&self) -> &'static dyn Kind {
        &TpchKind
    }
    fn text(&self) -> String {
        text::db_tpch::tpch(self)
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

fn section(p: &mut Page, d: &ReportDoc) {
    if let Some(r) = d.body.as_any().downcast_ref::<TpchResult>() {
        db_page::tpch_section(&mut p.out, d, r, &mut p.charts);
    }
}

fn section_md(p: &mut Page, d: &ReportDoc) {
    if let Some(r) = d.body.as_any().downcast_ref::<TpchResult>() {
        markdown::tpch_md(&mut p.out, d, r);
    }
}

impl Comparing for TpchKind {
    fn name(&self) -> &'static str {
        "db_tpch"
    }
    fn one(&self) -> &'static str {
        "a tpch query set, iolab db tpch"
    }
    fn many(&self) -> &'static str {
        "tpch query sets"
    }
    fn peers(&self) -> Peers {
        Peers::OwnKind
    }
    fn metric_names(&self) -> &'static [(&'static str, &'static str)] {
        &[("time", "time"), ("query_total", "query_total"), ("query_geomean", "query_geomean")]
    }
    fn points<'a>(&self, doc: &'a dyn Document) -> Vec<ComparedPoint<'a>> {
        vec![ComparedPoint { params: None, trials: vec![ComparedTrial::document(doc)] }]
    }
    fn side(
        &self,
        docs: &[&dyn Document],
        letter: &str,
        source: &str,
        notes: &mut Vec<String>,
    ) -> (Vec<String>, Vec<u64>) {
        let t: Vec<&TpchResult> = docs.iter().filter_map(|d| d.as_any().downcast_ref()).collect();
        if t.iter().any(|r| r.partial) {
            notes.push(format!("side {letter} ('{source}') includes a partial (interrupted) query set"));
        }
        let config = |r: &TpchResult| (r.config.scale, r.engine.name.clone());
        if t.iter().any(|r| config(r) != config(t[0])) {
            notes.push(format!(
                "side {letter} ('{source}'): its query sets have different scales or engines; they are treated as trials of one"
            ));
        }
        (Vec::new(), t.iter().map(|r| r.header.seed).collect())
    }
    fn notes(&self, sides: &[(&str, Vec<&dyn Document>)]) -> Vec<String> {
        db_notes(sides, Some(TPCH_DISCLAIMER), |d| d.as_any().downcast_ref().map(on).into_iter().collect())
    }
    /// The total and the geometric mean of the query times, each query's time (in the first set's order; a
    /// query not every side ran drops out where the values are gathered), and the devices over the set.
    fn metrics(&self, trials: &[Vec<ComparedTrial<'_>>]) -> Vec<Metric> {
        let sets: Vec<&TpchResult> = trials.iter().flatten().filter_map(|t| t.get::<TpchResult>()).collect();
        let time = (Unit::Ns, Better::Lower);
        let total = |t: ComparedTrial<'_>| t.get::<TpchResult>().map(|r| r.power.total_s * 1e9);
        let geomean = |t: ComparedTrial<'_>| t.get::<TpchResult>().map(|r| r.power.geomean_s * 1e9);
        let mut metrics = vec![
            Metric::new("query_total", "total query time", "database", time, total).with_ratio(),
            Metric::new("query_geomean", "geometric mean of query times", "database", time, geomean).with_ratio(),
        ];
        let mut numbers: Vec<u32> = Vec::new();
        for q in sets.iter().flat_map(|r| &r.queries) {
            if !numbers.contains(&q.number) {
                numbers.push(q.number);
            }
        }
        for n in numbers {
            let query = move |t: ComparedTrial<'_>| {
                let r = t.get::<TpchResult>()?;
                r.queries.iter().find(|q| q.number == n).map(|q| q.seconds * 1e9)
            };
            metrics.push(Metric::new(format!("q{n}.time"), format!("Q{n} time"), format!("query:{n}"), time, query).with_ratio());
        }
        let lists: Vec<&[DeviceView]> = sets.iter().map(|r| r.devices.as_slice()).collect();
        for key in device_keys(&lists) {
            metrics.extend(device_metrics(&key, &key, devices));
        }
        metrics
    }
}

/// A query set's engine and the devices under it, for the notes.
fn on(r: &TpchResult) -> EngineOn<'_> {
    (r.engine.name.as_str(), r.devices.iter().collect())
}

/// Where a query set's devices are, and the time they cover.
fn devices(trial: ComparedTrial<'_>) -> Option<(&[DeviceView], f64)> {
    trial.get::<TpchResult>().map(|r| (r.devices.as_slice(), r.power.measured_s))
}
