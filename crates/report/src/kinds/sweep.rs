//! A sweep (`iolab.sweep/1`, [`SweepResult`]): kept in the catalog as `sweep`, listed by its best point's
//! IOPS, MB/s and p99; on the report's page all sweeps together (their figures along each swept field,
//! several overlaid); compared point by point (`compare::io`).

use serde_json::Value;

use super::columns::{run_columns, IOPS, MB_S, P99, TRIALS};
use crate::export::{csv, json::pretty, text};
use crate::html::{markdown, names, page};
use crate::plugin::catalog::f64_at;
use crate::plugin::{
    Warned,
    docs_of, parse_as, Column, Comparing, Document, EntryKind, Facet, Kind, Page, Part, ReportDoc, Stage,
};
use crate::sweep::{SweepResult, SWEEP_SCHEMA};

/// The kind of sweeps.
pub struct SweepKind;

impl Kind for SweepKind {
    fn schema(&self) -> &'static str {
        SWEEP_SCHEMA
    }
    fn name(&self) -> &'static str {
        "sweep"
    }
    fn parse(&self, doc: Value) -> Result<Box<dyn Document>, String> {
        parse_as::<SweepResult>(self, doc)
    }
    fn entries(&self) -> &'static [EntryKind] {
        &[EntryKind { stored: "sweep", typed: &["sweep"], what: "sweeps" }]
    }
    /// Its name, start and targets from its points' runs; its headline is its best point (highest IOPS), with
    /// that point's MB/s and p99: each the mean over the point's trials, as the sweep's own table shows them
    /// (a point's `result` is its first trial's run), and the number of trials when more than one.
    fn columns(&self, doc: &Value, c: &mut iolab_doc::Columns) {
        let points = doc.get("points").and_then(Value::as_array);
        let axes = doc.get("axes").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
        let swept: Vec<&str> = axes.iter().filter_map(|a| a["key"].as_str()).collect();
        let mut best: Option<iolab_doc::Columns> = None;
        for p in points.into_iter().flatten() {
            let r = &p["result"];
            let mut point = iolab_doc::Columns::default();
            run_columns(r, &swept, &mut point);
            point_means(p, &mut point);
            c.profile = c.profile.take().or(point.profile.take());
            c.started_unix_s = c.started_unix_s.or_else(|| f64_at(r, "/started_unix_s"));
            for t in &point.targets {
                crate::plugin::catalog::push_unique(&mut c.targets, t);
            }
            if best.as_ref().is_none_or(|b| point.figure("iops") > b.figure("iops")) {
                best = Some(point);
            }
        }
        if let Some(b) = best {
            for key in ["iops", "mb_s", "p99_ns", "trials"] {
                c.set_figure(key, b.figure(key));
            }
        }
    }
    fn listing(&self) -> &'static [&'static Column] {
        &[&IOPS, &MB_S, &P99, &TRIALS]
    }
    fn html(&self) -> &'static [Part] {
        &[Part::Group(Stage::Sweeps, sweeps)]
    }
    fn markdown(&self) -> &'static [Part] {
        &[Part::Each(Stage::Sweeps, sweep_md)]
    }
    fn compare(&self) -> Option<&'static dyn Comparing> {
        Some(&crate::compare::io::SWEEPS)
    }
}

impl Document for SweepResult {
    fn kind(&self) -> &'static dyn Kind {
        &SweepKind
    }
    fn text(&self) -> String {
        text::sweep::sweep(self)
    }
    /// Pretty JSON, without a newline at the end (as `iolab sweep --json` has always written it).
    fn json(&self) -> String {
        pretty(self)
    }
    fn csv(&self) -> Option<String> {
        Some(csv::sweep(self))
    }
    fn started_at(&self) -> String {
        self.started_at.clone()
    }
    fn iolab_version(&self) -> String {
        self.iolab_version.clone()
    }
    fn facets(&self) -> Vec<Facet> {
        names::sweep_facets(self)
    }
    /// Each point's warnings, at the point's swept values (`qd=4`), as its text prints them.
    fn warnings(&self) -> Vec<Warned> {
        let mut out = Vec::new();
        for p in &self.points {
            let at: Vec<String> = self
                .axes
                .iter()
                .map(|a| format!("{}={}", a.key, p.params.get(&a.key).cloned().unwrap_or_default()))
                .collect();
            out.extend(p.result.warnings.iter().map(|w| Warned::stats(at.join(" "), w)));
        }
        out
    }
}

/// The sweeps' section: cards, figures along each swept field, tables.
fn sweeps(p: &mut Page, docs: &[&ReportDoc]) {
    page::sweeps_section(&mut p.out, &docs_of::<SweepResult>(docs), &mut p.charts);
}

/// A sweep in Markdown: its points along each swept field, the knee marked.
fn sweep_md(p: &mut Page, d: &ReportDoc) {
    if let Some(s) = d.body.as_any().downcast_ref::<SweepResult>() {
        markdown::sweep(&mut p.out, d, s);
    }
}

/// A point's headline figures as the sweep's table shows them: the means over its trials (its `summary`),
/// with their number when above one; a point without a summary keeps its run's.
fn point_means(point: &Value, c: &mut iolab_doc::Columns) {
    let Some(summary) = point.get("summary").filter(|s| s.is_object()) else { return };
    c.set_figure("iops", f64_at(summary, "/iops/mean"));
    c.set_figure("mb_s", f64_at(summary, "/mb_s/mean"));
    c.set_figure("p99_ns", f64_at(summary, "/lat_p99_ns/mean"));
    c.set_figure("trials", f64_at(summary, "/n").filter(|n| *n > 1.0));
}
