//! A kind that exists for the tests only (`iolab.toy/1`, a key-value workload's throughput and read p99):
//! what a new kind is, in one file and one line of [`super::KINDS`]. Its model, its renderings and its
//! declarations are all here, with a catalog column and a compare metric no other kind has, and nothing
//! else in the crate names it: the registry's tests (`kinds/tests.rs`) read, render, list, report and
//! compare it through the same paths as every kind.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::export::json::pretty;
use crate::html::escape_html;
use crate::plugin::catalog::f64_at;
use crate::plugin::{
    Warned,
    parse_as, Better, Column, Comparing, Document, EntryKind, Kind, Metric, Page, Part, Peers, ComparedPoint,
    ReportDoc, ColumnShown, Stage, ComparedTrial, Unit,
};

/// The schema of a toy document.
pub const TOY_SCHEMA: &str = "iolab.toy/1";

/// A toy key-value run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToyResult {
    /// Always [`TOY_SCHEMA`].
    pub schema: String,
    /// The iolab that wrote it.
    pub iolab_version: String,
    /// Operations per second.
    pub ops_per_s: f64,
    /// The reads' 99th percentile, ns.
    pub read_p99_ns: f64,
}

/// The kind of toy documents.
pub struct ToyKind;

/// The `iolab runs` column of its throughput, between MB/s and NOPM.
const OPS: Column = Column {
    header: "toy ops/s",
    place: 26,
    shown: ColumnShown::WhenAny,
    figures: &["toy_ops_per_s"],
    cell: |c| c.figure("toy_ops_per_s").map_or("-".into(), |v| format!("{v:.0}")),
};

impl Kind for ToyKind {
    fn schema(&self) -> &'static str {
        TOY_SCHEMA
    }
    fn name(&self) -> &'static str {
        "toy"
    }
    fn parse(&self, doc: Value) -> Result<Box<dyn Document>, String> {
        parse_as::<ToyResult>(self, doc)
    }
    fn entries(&self) -> &'static [EntryKind] {
        &[EntryKind { stored: "toy", typed: &["toy"], what: "toy runs" }]
    }
    fn columns(&self, doc: &Value, c: &mut iolab_doc::Columns) {
        c.profile = Some("toy".into());
        c.set_figure("toy_ops_per_s", f64_at(doc, "/ops_per_s"));
    }
    fn listing(&self) -> &'static [&'static Column] {
        &[&OPS]
    }
    fn html(&self) -> &'static [Part] {
        &[Part::Each(Stage::DatabaseEach, section)]
    }
    fn markdown(&self) -> &'static [Part] {
        &[Part::Each(Stage::DatabaseEach, section_md)]
    }
    fn compare(&self) -> Option<&'static dyn Comparing> {
        Some(&ToyKind)
    }
}

impl Document for ToyResult {
    fn kind(&self) -> &'static dyn Kind {
        &ToyKind
    }
    fn text(&self) -> String {
        format!("toy: {:.0} ops/s, read p99 {:.0} ns\n", self.ops_per_s, self.read_p99_ns)
    }
    fn json(&self) -> String {
        pretty(self) + "\n"
    }
    fn iolab_version(&self) -> String {
        self.iolab_version.clone()
    }
    fn warnings(&self) -> Vec<Warned> {
        Vec::new()
    }
}

fn section(p: &mut Page, d: &ReportDoc) {
    let _ = std::fmt::Write::write_fmt(
        &mut p.out,
        format_args!("<h2>Toy: {}</h2>\n<pre>{}</pre>\n", escape_html(&d.label), escape_html(&d.body.text())),
    );
}

fn section_md(p: &mut Page, d: &ReportDoc) {
    p.out.push_str(&format!("### Toy: {}\n\n{}\n", d.label, d.body.text()));
}

impl Comparing for ToyKind {
    fn name(&self) -> &'static str {
        "toy"
    }
    fn one(&self) -> &'static str {
        "a toy run"
    }
    fn many(&self) -> &'static str {
        "toy runs"
    }
    fn peers(&self) -> Peers {
        Peers::OwnKind
    }
    fn metric_names(&self) -> &'static [(&'static str, &'static str)] {
        &[("toy_ops_per_s", "toy_ops_per_s"), ("toy_ops", "toy_ops_per_s")]
    }
    fn points<'a>(&self, doc: &'a dyn Document) -> Vec<ComparedPoint<'a>> {
        vec![ComparedPoint { params: None, trials: vec![ComparedTrial::document(doc)] }]
    }
    fn side(&self, docs: &[&dyn Document], _: &str, _: &str, _: &mut Vec<String>) -> (Vec<String>, Vec<u64>) {
        (Vec::new(), vec![0; docs.len()])
    }
    fn metrics(&self, _trials: &[Vec<ComparedTrial<'_>>]) -> Vec<Metric> {
        let of = |t: ComparedTrial<'_>| t.get::<ToyResult>().cloned();
        vec![
            Metric::new("toy_ops_per_s", "toy ops/s", "total", (Unit::Iops, Better::Higher), move |t| {
                of(t).map(|r| r.ops_per_s)
            }),
            Metric::new("read.p99", "read p99", "total", (Unit::Ns, Better::Lower), move |t| {
                of(t).map(|r| r.read_p99_ns)
            }),
        ]
    }
}
