//! A database copy (`iolab.dbcopy/1`, [`CopyResult`], `iolab db copy`): kept in the catalog as `db_copy`
//! (typed `db-copy`), listed by its MB/s; on the report's page its time, rate and both sides' devices;
//! compared with copies only: the time (as a ratio too), the rate, the source's devices and the
//! destination's.

use serde_json::Value;

use super::columns::{db_columns, MB_S};
use crate::compare::db::{db_notes, EngineOn};
use crate::compare::metrics::{device_keys, device_metrics, DeviceSource};
use crate::db::DeviceView;
use crate::db_copy::{CopyResult, DB_COPY_SCHEMA};
use crate::export::{json::pretty, text};
use crate::html::{db_page, markdown};
use crate::plugin::catalog::{f64_at, push_unique};
use crate::plugin::{
    Warned,
    parse_as, Better, Column, Comparing, Document, EntryKind, Kind, Metric, Page, Part, Peers, ComparedPoint,
    ReportDoc, Stage, ComparedTrial, Unit,
};

/// The kind of database copies.
pub struct CopyKind;

impl Kind for CopyKind {
    fn schema(&self) -> &'static str {
        DB_COPY_SCHEMA
    }
    fn name(&self) -> &'static str {
        "db copy"
    }
    fn parse(&self, doc: Value) -> Result<Box<dyn Document>, String> {
        parse_as::<CopyResult>(self, doc)
    }
    fn entries(&self) -> &'static [EntryKind] {
        &[EntryKind { stored: "db_copy", typed: &["db-copy", "dbcopy"], what: "`iolab db copy` copies" }]
    }
    /// Its targets are the source's devices, then the destination's (before `db_columns`, whose fallback
    /// to the directory applies only when there are none); its headline its MB/s.
    fn columns(&self, doc: &Value, c: &mut iolab_doc::Columns) {
        for d in ["source_devices", "destination_devices"].iter().filter_map(|k| doc.get(*k)) {
            for n in d.as_array().into_iter().flatten().filter_map(|d| d.get("name")?.as_str()) {
                push_unique(&mut c.targets, n);
            }
        }
        db_columns(doc, c);
        c.set_figure("mb_s", f64_at(doc, "/copy/mb_per_s"));
    }
    fn listing(&self) -> &'static [&'static Column] {
        &[&MB_S]
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
        Some(&CopyKind)
    }
}

impl Document for CopyResult {
    fn kind(&self) -> &'static dyn Kind {
        &CopyKind
    }
    fn text(&self) -> String {
        text::db_copy::copy(self)
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
    if let Some(r) = d.body.as_any().downcast_ref::<CopyResult>() {
        db_page::copy_section(&mut p.out, d, r, &mut p.charts);
    }
}

fn section_md(p: &mut Page, d: &ReportDoc) {
    if let Some(r) = d.body.as_any().downcast_ref::<CopyResult>() {
        markdown::copy_md(&mut p.out, d, r);
    }
}

impl Comparing for CopyKind {
    fn name(&self) -> &'static str {
        "db_copy"
    }
    fn one(&self) -> &'static str {
        "a database copy, iolab db copy"
    }
    fn many(&self) -> &'static str {
        "database copies"
    }
    fn peers(&self) -> Peers {
        Peers::OwnKind
    }
    fn metric_names(&self) -> &'static [(&'static str, &'static str)] {
        &[("copy_time", "copy_time")]
    }
    fn points<'a>(&self, doc: &'a dyn Document) -> Vec<ComparedPoint<'a>> {
        vec![ComparedPoint { params: None, trials: vec![ComparedTrial::document(doc)] }]
    }
    fn side(
        &self,
        docs: &[&dyn Document],
        _letter: &str,
        _source: &str,
        _notes: &mut Vec<String>,
    ) -> (Vec<String>, Vec<u64>) {
        let c = docs.iter().filter_map(|d| d.as_any().downcast_ref::<CopyResult>());
        (Vec::new(), c.map(|r| r.header.seed).collect())
    }
    fn notes(&self, sides: &[(&str, Vec<&dyn Document>)]) -> Vec<String> {
        db_notes(sides, None, |d| d.as_any().downcast_ref().map(on).into_iter().collect())
    }
    /// The time and the rate, then the source's devices and the destination's, each matched by role as a
    /// tpcc run's are.
    fn metrics(&self, trials: &[Vec<ComparedTrial<'_>>]) -> Vec<Metric> {
        let copies: Vec<&CopyResult> = trials.iter().flatten().filter_map(|t| t.get::<CopyResult>()).collect();
        let of = |t: ComparedTrial<'_>| t.get::<CopyResult>().map(|r| (r.copy.seconds, r.copy.mb_per_s));
        let mut metrics = vec![
            Metric::new("copy_time", "copy time", "database", (Unit::Ns, Better::Lower), move |t| {
                of(t).map(|c| c.0 * 1e9)
            })
            .with_ratio(),
            Metric::new("mb_s", "MB/s", "database", (Unit::MbS, Better::Higher), move |t| of(t).map(|c| c.1)),
        ];
        let sources: Vec<&[DeviceView]> = copies.iter().map(|r| r.source_devices.as_slice()).collect();
        device_side(SOURCE, &sources, source_devices, &mut metrics);
        let destinations: Vec<&[DeviceView]> = copies.iter().map(|r| r.destination_devices.as_slice()).collect();
        device_side(DESTINATION, &destinations, destination_devices, &mut metrics);
        metrics
    }
}

/// The metrics of one side's devices (the source's or the destination's), their keys after `prefix`.
fn device_side(prefix: &str, lists: &[&[DeviceView]], source: DeviceSource, metrics: &mut Vec<Metric>) {
    for key in device_keys(lists) {
        metrics.extend(device_metrics(&format!("{prefix}{key}"), &key, source));
    }
}

/// The prefixes of a copy's device keys: the source's devices and the destination's compare apart.
const SOURCE: &str = "source.";
const DESTINATION: &str = "destination.";

/// A copy's engine and the devices under both sides, for the notes.
fn on(r: &CopyResult) -> EngineOn<'_> {
    (r.engine.name.as_str(), r.source_devices.iter().chain(&r.destination_devices).collect())
}

fn source_devices(trial: ComparedTrial<'_>) -> Option<(&[DeviceView], f64)> {
    trial.get::<CopyResult>().map(|r| (r.source_devices.as_slice(), r.copy.seconds))
}

fn destination_devices(trial: ComparedTrial<'_>) -> Option<(&[DeviceView], f64)> {
    trial.get::<CopyResult>().map(|r| (r.destination_devices.as_slice(), r.copy.seconds))
}
