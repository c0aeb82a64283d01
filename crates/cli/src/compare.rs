//! `iolab compare A B [C ...]`: resolves each side (a catalog ID or unique prefix, a tag query, a result or
//! sweep JSON file, a database run or sweep of `iolab db`, or a comma-joined list of files or IDs whose runs
//! are the side's trials) into documents,
//! and hands them to `iolab_report::compare`, which does all the arithmetic and the renderings. This file is
//! glue: resolving, error messages that quote what the user typed, and output.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use iolab_catalog::{Catalog, Filter};
use iolab_report::compare::{self, CompareOptions, MetricFilter, Side};
use iolab_report::kinds::{self, Unreadable};
use iolab_report::{Document, JsonExporter, TextExporter};

use crate::args::{CompareArgs, OutputFormat};
use crate::exit::{usage, ExitStatus};
use crate::output::{claim, print, write_all};

/// The documents one input stands for: all of one kind that compares (a side's trials, or its sweeps).
type Docs = Vec<Box<dyn Document>>;

/// The catalog, opened on first use (so comparing files needs none), never created.
struct LazyCatalog {
    path: PathBuf,
    open: Option<Catalog>,
}

impl LazyCatalog {
    fn get(&mut self, input: &str) -> Result<&Catalog> {
        if self.open.is_none() {
            if !self.path.exists() {
                return Err(usage(format!(
                    "'{input}' is not a file, and there is no catalog at '{}' to look it up in\n  hint: give a path to a result or sweep JSON file, or the catalog with --db PATH (or IOLAB_DB)",
                    self.path.display()
                )));
            }
            let c = crate::saving::open_catalog(&self.path)
                .map_err(usage)
                .with_context(|| format!("looking up '{input}'"))?;
            self.open = Some(c);
        }
        // Just set above.
        self.open.as_ref().ok_or_else(|| anyhow::anyhow!("catalog not open"))
    }
}

/// The document `v`, from `what` (a path or an ID, for messages), as a document of a kind that compares.
fn parse_doc(v: serde_json::Value, what: &str) -> Result<Docs> {
    let takes = || kinds::expected(|k| k.compare().is_some());
    let doc = kinds::parse(v).map_err(|e| match e {
        Unreadable::NoSchema => usage(format!(
            "'{what}' is not an iolab result or sweep: it has no \"schema\" field (expected {})",
            takes()
        )),
        Unreadable::UnknownSchema(other) => {
            usage(format!("'{what}' is a '{other}' document; compare takes {}", takes()))
        }
        Unreadable::Invalid(_, e) => usage(format!("'{what}' is {e}")),
        Unreadable::NotJson(e) => usage(format!("'{what}' is not JSON: {e}")),
    })?;
    if doc.kind().compare().is_none() {
        return Err(usage(format!(
            "'{what}' is a '{}' document; compare takes {}",
            doc.kind().schema(),
            takes()
        )));
    }
    Ok(vec![doc])
}

fn read_file(path: &str) -> Result<Docs> {
    let text =
        iolab_spec::input::read_text(path.as_ref(), "the input", iolab_spec::input::MAX_DOCUMENT_BYTES)
            .map_err(usage)?;
    let v: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| usage(format!("'{path}' is not an iolab result or sweep: it is not JSON ({e})")))?;
    parse_doc(v, path)
}

fn looks_like_id(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Adds `more` to the documents of `input` so far: a side is one kind of document.
fn merge(into: &mut Option<Docs>, more: Docs, input: &str) -> Result<()> {
    let Some(docs) = into.as_mut() else {
        *into = Some(more);
        return Ok(());
    };
    let what = |d: &Docs| d.first().and_then(|d| d.kind().compare()).map_or("documents", |c| c.many());
    if let (Some(a), Some(b)) = (docs.first(), more.first()) {
        if a.kind() != b.kind() {
            return Err(usage(format!(
                "'{input}' mixes {} and {}; a side is one kind of document",
                what(docs),
                what(&more)
            )));
        }
    }
    docs.extend(more);
    Ok(())
}

/// The documents an input stands for.
fn resolve(input: &str, catalog: &mut LazyCatalog) -> Result<Docs> {
    if let Some(tags) = crate::saving::tag_query(input) {
        let tags = tags?;
        let cat = catalog.get(input)?;
        let entries = cat
            .list(&Filter { tags, ..Filter::default() })
            .map_err(usage)
            .with_context(|| format!("looking up '{input}'"))?;
        if entries.is_empty() {
            return Err(usage(format!(
                "no run in catalog '{}' matches '{input}'; `iolab runs --tag KEY=VALUE` lists what does",
                cat.path().display()
            )));
        }
        let mut docs = None;
        // Oldest first, so trials are in the order they ran.
        for e in entries.into_iter().rev() {
            let d = parse_doc(e.doc, &format!("{} (matched by {input})", e.id))?;
            merge(&mut docs, d, input)?;
        }
        return docs.ok_or_else(|| usage(format!("'{input}' holds no run to compare")));
    }
    // A path wins, even one with commas in it.
    if Path::new(input).is_file() {
        return read_file(input);
    }
    let mut docs = None;
    for piece in input.split(',').map(str::trim) {
        let d = if Path::new(piece).is_file() {
            read_file(piece)?
        } else if looks_like_id(piece) {
            let entry = catalog.get(piece)?.get(piece).map_err(usage)?;
            parse_doc(entry.doc, piece)?
        } else if piece.is_empty() {
            return Err(usage(format!("'{input}' has an empty item; expected FILE[,FILE...] or ID[,ID...]")));
        } else {
            return Err(usage(format!(
                "'{piece}' is neither a file nor a catalog id (hex digits, as `iolab runs` lists them)"
            )));
        };
        merge(&mut docs, d, input)?;
    }
    docs.ok_or_else(|| usage(format!("'{input}' holds no run to compare")))
}

fn parse_alpha(text: Option<&str>) -> Result<f64> {
    let Some(t) = text else { return Ok(compare::DEFAULT_ALPHA) };
    match t.trim().parse::<f64>() {
        Ok(a) if a > 0.0 && a < 1.0 => Ok(a),
        _ => Err(usage(format!(
            "invalid value '{t}' for '--alpha': expected a number between 0 and 1, e.g. 0.05"
        ))),
    }
}

/// `iolab compare`.
pub fn compare(args: &CompareArgs) -> Result<ExitStatus> {
    if args.format == OutputFormat::Html {
        return Err(usage(
            "invalid value 'html' for '--format': iolab compare writes text or md (iolab report writes html)",
        ));
    }
    let alpha = parse_alpha(args.alpha.as_deref())?;
    let metrics = MetricFilter::parse(&args.metric.join(","), &kinds::metric_names()).map_err(usage)?;
    // The sides that are files are inputs, claimed as read: `--json` on one of them is refused.
    let mut gate = iolab_device::WriteGate::new();
    for input in args.sides.iter().filter(|i| std::path::Path::new(i.as_str()).is_file()) {
        gate.claim("compare input", input, iolab_device::Access::Reads).map_err(usage)?;
    }
    let json = claim(&mut gate, "--json", args.json.as_deref())?;
    let mut catalog = LazyCatalog { path: args.db.clone().unwrap_or_else(Catalog::default_path), open: None };
    let mut sides = Vec::with_capacity(args.sides.len());
    for input in &args.sides {
        let docs = resolve(input, &mut catalog)?;
        sides.push(Side { source: input.clone(), docs });
    }
    let c = compare::compare(&sides, &CompareOptions { alpha, metrics }).map_err(usage)?;
    if args.json.as_deref() != Some("-") {
        let text = match args.format {
            OutputFormat::Md => iolab_report::MarkdownExporter.render(&c)?,
            _ => TextExporter.render(&c),
        };
        print(&text)?;
    }
    write_all(json.iter().map(|o| (o, Ok(JsonExporter.render(&c)))).collect())?;
    Ok(ExitStatus::Ok)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alpha_out_of_range_quotes_the_text() {
        assert_eq!(parse_alpha(None).unwrap(), 0.05);
        assert_eq!(parse_alpha(Some("0.01")).unwrap(), 0.01);
        let e = parse_alpha(Some("5%")).unwrap_err();
        assert!(format!("{e:#}").contains("invalid value '5%' for '--alpha'"), "{e:#}");
        assert!(parse_alpha(Some("1")).is_err());
    }
}
