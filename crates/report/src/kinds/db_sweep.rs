//! A tpcc run at several user counts (`iolab.dbsweep/1`, [`DbSweepResult`], `iolab db tpcc --users LIST`):
//! kept in the catalog as `db_sweep` (typed `db-sweep`), listed by its best point; on the report's page
//! NOPM against users with the knee; compared point by point, a point a user count
//! (`compare::db`).

use serde_json::Value;

use super::columns::{db_columns, db_name, NOPM, P99};
use crate::db_sweep::{DbSweepResult, DB_SWEEP_SCHEMA};
use crate::export::{csv, json::pretty, text};
use crate::html::{db_page, markdown};
use crate::plugin::catalog::f64_at;
use crate::plugin::{parse_as, Column, Comparing, Warned, Document, EntryKind, Kind, Page, Part, ReportDoc, Stage};

/// The kind of tpcc sweeps over users.
pub struct TpccSweepKind;

impl Kind for TpccSweepKind {
    fn schema(&self) -> &'static str {
        DB_SWEEP_SCHEMA
    }
    fn name(&self) -> &'static str {
        "db sweep"
    }
    fn parse(&self, doc: Value) -> Result<Box<dyn Document>, String> {
        parse_as::<DbSweepResult>(self, doc)
    }
    fn entries(&self) -> &'static [EntryKind] {
        &[EntryKind {
            stored: "db_sweep",
            typed: &["db-sweep", "dbsweep"],
            what: "`iolab db tpcc` runs over several --users",
        }]
    }
    /// The columns of its point with the most new orders per minute.
    fn columns(&self, doc: &Value, c: &mut iolab_doc::Columns) {
        let points = doc.get("points").and_then(Value::as_array).into_iter().flatten();
        let best = points.map(|p| &p["result"]).max_by(|a, b| {
            f64_at(a, "/run/nopm").unwrap_or(-1.0).total_cmp(&f64_at(b, "/run/nopm").unwrap_or(-1.0))
        });
        match best {
            Some(b) => db_columns(b, c),
            None => c.profile = db_name(doc),
        }
        c.partial = doc.get("partial").and_then(Value::as_bool).unwrap_or(c.partial);
    }
    fn listing(&self) -> &'static [&'static Column] {
        &[&NOPM, &P99]
    }
    fn html(&self) -> &'static [Part] {
        &[Part::Each(Stage::DatabaseEach, section)]
    }
    fn markdown(&self) -> &'static [Part] {
        &[Part::Each(Stage::DatabaseSweeps, section_md)]
    }
    fn compare(&self) -> Option<&'static dyn Comparing> {
        Some(&crate::compare::db::TPCC_SWEEPS)
    }
}

impl Document for DbSweepResult {
    fn kind(&self) -> &'static dyn Kind {
        &TpccSweepKind
    }
    fn text(&self) -> String {
        text::db_sweep::db_sweep(self)
    }
    fn json(&self) -> String {
        pretty(self) + "\n"
    }
    fn csv(&self) -> Option<String> {
        Some(csv::db_sweep(self))
    }
    fn started_at(&self) -> String {
        super::db::started_at(&self.header)
    }
    fn iolab_version(&self) -> String {
        self.header.iolab_version.clone()
    }
    /// Each distinct warning once, at the user counts whose runs gave it (its text prints each once).
    fn warnings(&self) -> Vec<Warned> {
        let mut out: Vec<(Vec<u32>, &String)> = Vec::new();
        for p in &self.points {
            for w in &p.result.warnings {
                match out.iter_mut().find(|(_, t)| *t == w) {
                    Some((users, _)) => users.push(p.users),
                    None => out.push((vec![p.users], w)),
                }
            }
        }
        let at = |users: Vec<u32>| {
            let list: Vec<String> = users.iter().map(u32::to_string).collect();
            format!("users {}", list.join(", "))
        };
        out.into_iter().map(|(users, w)| Warned { at: at(users), ..Warned::of(w.clone()) }).collect()
    }
}

fn section(p: &mut Page, d: &ReportDoc) {
    if let Some(s) = d.body.as_any().downcast_ref::<DbSweepResult>() {
        db_page::db_sweep_section(&mut p.out, d, s, &mut p.charts);
    }
}

fn section_md(p: &mut Page, d: &ReportDoc) {
    if let Some(s) = d.body.as_any().downcast_ref::<DbSweepResult>() {
        markdown::db_sweep_md(&mut p.out, d, s);
    }
}
