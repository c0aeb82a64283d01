//! `iolab report`: one self-contained HTML page (or Markdown for a ticket) from run results and sweeps,
//! given as catalog ids or as the JSON files `iolab run --json` and `iolab sweep --json` write. Two or more
//! `tag:` selectors that each select several documents are the sides of the comparison `iolab compare`
//! makes of them (`iolab_report::kinds::compare::ReportedComparison`), shown in place of the documents.
//!
//! All inputs are read and checked before anything is written: a bad input (missing file, not JSON, another
//! schema, unknown id) is a usage error (exit 2) that quotes it, and no output file is created. The page
//! itself is made by `iolab_report::html` (docs/REPORTS.md).

use std::path::Path;

use anyhow::Result;
use iolab_catalog::Catalog;
use iolab_report::compare::Side;
use iolab_report::html::{render_html, render_markdown, ReportDoc};
use iolab_report::kinds::compare::ReportedComparison;
use iolab_report::kinds::{self, Unreadable};
use iolab_report::Document;

use crate::args::{OutputFormat, ReportArgs};
use crate::exit::{usage, ExitStatus};
use crate::output::write_all;
use clap::ValueEnum;
use iolab_device::{Access, WriteGate};

/// Runs `iolab report`.
pub fn report(args: &ReportArgs) -> Result<ExitStatus> {
    let format = args.format.unwrap_or_else(|| match &args.output {
        Some(p) if Path::new(p).extension().is_some_and(|e| e.eq_ignore_ascii_case("md")) => OutputFormat::Md,
        _ => OutputFormat::Html,
    });
    if !matches!(format, OutputFormat::Html | OutputFormat::Md) {
        let name = format.to_possible_value().map_or(String::new(), |v| v.get_name().to_string());
        return Err(usage(format!("invalid value '{name}' for '--format': iolab report writes html or md")));
    }
    // The inputs that are files are claimed as read, so `-o` can never overwrite one of them.
    let mut gate = WriteGate::new();
    for input in args.inputs.iter().filter(|i| Path::new(i).is_file()) {
        gate.claim("report input", input, Access::Reads).map_err(usage)?;
    }
    let out = gate.output("-o", args.output.as_deref().unwrap_or("-")).map_err(usage)?;
    let mut catalog: Option<Catalog> = None;
    let mut selected = Vec::with_capacity(args.inputs.len());
    for input in &args.inputs {
        match crate::saving::tag_query(input) {
            Some(tags) => {
                selected.push((input, load_tagged(input, tags?, args.db.as_deref(), &mut catalog)?))
            }
            None => selected.push((input, vec![load(input, args.db.as_deref(), &mut catalog)?])),
        }
    }
    let mut docs = match compared(&selected, args.quiet) {
        Some(c) => vec![c],
        None => selected.into_iter().flat_map(|(_, d)| d).collect(),
    };
    disambiguate_labels(&mut docs);
    let title = args.title.clone().unwrap_or_else(|| {
        let names: Vec<&str> = docs.iter().map(|d| d.label.as_str()).collect();
        format!("iolab report: {}", names.join(", "))
    });
    let text = match format {
        OutputFormat::Md => render_markdown(&title, &docs),
        _ => render_html(&title, &docs),
    };
    let bytes = text.len();
    write_all(vec![(&out, Ok(text))])?;
    if let (Some(file), false) = (args.output.as_deref().filter(|f| *f != "-"), args.quiet) {
        eprintln!("iolab: report written to {file} ({} bytes)", iolab_report::format_count(bytes as u64));
    }
    Ok(ExitStatus::Ok)
}

/// With two or more inputs that each select several documents (`tag:cfg=qd4 tag:cfg=qd32`): their comparison
/// as `iolab compare` makes it, each input a side whose documents are its trials (one computation,
/// `iolab_report::compare`), in place of the documents one by one. `None` otherwise, or when they do not
/// compare (said on stderr unless `quiet`: each is then reported on its own).
fn compared(selected: &[(&String, Vec<ReportDoc>)], quiet: bool) -> Option<ReportDoc> {
    if selected.len() < 2 || selected.iter().any(|(_, docs)| docs.len() < 2) {
        return None;
    }
    let sides: Vec<Side> = selected
        .iter()
        .map(|(input, docs)| Side {
            source: input.to_string(),
            docs: docs.iter().map(|d| d.body.clone()).collect(),
        })
        .collect();
    match ReportedComparison::of(&sides) {
        Ok(c) => {
            let inputs: Vec<&str> = selected.iter().map(|(i, _)| i.as_str()).collect();
            Some(ReportDoc {
                label: inputs.join(" vs "),
                source: format!("iolab compare {}", inputs.join(" ")),
                tags: Vec::new(),
                note: None,
                body: Box::new(c),
            })
        }
        Err(e) => {
            if !quiet {
                eprintln!("iolab: the inputs are not compared ({e}): each of their documents is reported on its own");
            }
            None
        }
    }
}

/// Reads one input: a file when the path exists, else a catalog id.
fn load(input: &str, db: Option<&Path>, catalog: &mut Option<Catalog>) -> Result<ReportDoc> {
    let path = Path::new(input);
    if path.is_file() {
        let text = iolab_spec::input::read_text(path, "report input", iolab_spec::input::MAX_DOCUMENT_BYTES)
            .map_err(usage)?;
        let body = report_input(kinds::parse_text(&text))
            .map_err(|e| usage(format!("report input '{input}': {e}")))?;
        let label = path.file_stem().map_or_else(|| input.to_string(), |s| s.to_string_lossy().into_owned());
        return Ok(ReportDoc { label, source: input.to_string(), tags: Vec::new(), note: None, body });
    }
    if path.exists() {
        return Err(usage(format!("report input '{input}': not a file")));
    }
    let looks_like_id =
        !input.is_empty() && input.len() <= 64 && input.chars().all(|c| c.is_ascii_alphanumeric());
    if !looks_like_id {
        return Err(usage(format!("report input '{input}': no such file (and not a catalog id)")));
    }
    let db_path = db.map_or_else(Catalog::default_path, Path::to_path_buf);
    let c = open_catalog(input, db, catalog)?;
    let entry = c.get(input).map_err(|e| {
        usage(format!(
            "report input '{input}': no such file, and not an id in the catalog '{}': {e}",
            db_path.display()
        ))
    })?;
    entry_doc(input, entry)
}

/// The catalog, opened on first use; an input that needs it names it when it cannot be read.
fn open_catalog<'c>(input: &str, db: Option<&Path>, catalog: &'c mut Option<Catalog>) -> Result<&'c Catalog> {
    if catalog.is_none() {
        let db_path = db.map_or_else(Catalog::default_path, Path::to_path_buf);
        let c = crate::saving::open_catalog(&db_path).map_err(|e| {
            usage(format!(
                "report input '{input}': no such file, and the catalog '{}' cannot be read to look it up: {e}",
                db_path.display()
            ))
        })?;
        *catalog = Some(c);
    }
    catalog.as_ref().ok_or_else(|| usage(format!("report input '{input}': the catalog is not open")))
}

/// The runs, sweeps and searches of the catalog whose tags match a `tag:` query, oldest first (as `compare`
/// takes them).
fn load_tagged(
    input: &str,
    tags: Vec<(String, String)>,
    db: Option<&Path>,
    catalog: &mut Option<Catalog>,
) -> Result<Vec<ReportDoc>> {
    let c = open_catalog(input, db, catalog)?;
    let entries = c.list(&iolab_catalog::Filter { tags, ..Default::default() }).map_err(usage)?;
    let docs: Vec<ReportDoc> =
        entries.into_iter().rev().map(|e| entry_doc(input, e)).collect::<Result<_>>()?;
    if docs.is_empty() {
        return Err(usage(format!(
            "report input '{input}': no run, sweep or search in catalog '{}' matches; `iolab runs --tag KEY=VALUE` lists what does",
            c.path().display()
        )));
    }
    Ok(docs)
}

/// A catalog entry as a report input, labelled by its id and tags.
fn entry_doc(input: &str, entry: iolab_catalog::Entry) -> Result<ReportDoc> {
    let body = report_input(kinds::parse(entry.doc))
        .map_err(|e| usage(format!("report input '{input}' (catalog): {e}")))?;
    let label = if entry.tags.is_empty() {
        entry.id.clone()
    } else {
        let tags: Vec<String> = entry.tags.iter().map(|(k, v)| format!("{k}={v}")).collect();
        format!("{} {}", entry.id, tags.join(","))
    };
    Ok(ReportDoc { label, source: format!("catalog {}", entry.id), tags: entry.tags, note: entry.note, body })
}

/// A document read as a report input: of a kind the report takes (a run, a sweep, a search, a database
/// run, ...), else why not, naming what was found and what the report takes.
fn report_input(doc: Result<Box<dyn Document>, Unreadable>) -> Result<Box<dyn Document>, String> {
    let takes = || kinds::expected(|k| !k.html().is_empty());
    match doc {
        Ok(d) if !d.kind().html().is_empty() => Ok(d),
        Ok(d) => Err(format!("schema '{}' cannot be reported; expected {}", d.kind().schema(), takes())),
        Err(Unreadable::UnknownSchema(s)) => {
            Err(format!("schema '{s}' cannot be reported; expected {}", takes()))
        }
        Err(Unreadable::NoSchema) => Err(format!("no \"schema\" field; expected {}", takes())),
        Err(e) => Err(e.to_string()),
    }
}

/// Makes labels unique (`run`, `run (2)`), since they name lines and bars.
fn disambiguate_labels(docs: &mut [ReportDoc]) {
    for i in 1..docs.len() {
        let base = docs[i].label.clone();
        let mut n = 2;
        while docs[..i].iter().any(|d| d.label == docs[i].label) {
            docs[i].label = format!("{base} ({n})");
            n += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn disambiguate_labels_numbers_repeats() {
        let doc = |l: &str| ReportDoc {
            label: l.into(),
            source: String::new(),
            tags: Vec::new(),
            note: None,
            body: Box::new(iolab_report::sweep::SweepResult {
                schema: String::new(),
                iolab_version: String::new(),
                started_at: String::new(),
                partial: false,
                base_seed: 0,
                trials: 1,
                axes: Vec::new(),
                load_axis: None,
                points_planned: 0,
                preconditioning: None,
                points: Vec::new(),
                knee: None,
                max_p99: None,
            }),
        };
        let mut docs = vec![doc("a"), doc("a"), doc("a")];
        disambiguate_labels(&mut docs);
        let labels: Vec<&str> = docs.iter().map(|d| d.label.as_str()).collect();
        assert_eq!(labels, ["a", "a (2)", "a (3)"]);
    }
}
