//! The commands that read the results catalog back: `iolab runs`, `show`, `export`, `rm`. (Saving a run,
//! sweep or search is [`crate::saving`]; the flags are in [`crate::args`].)
//!
//! The catalog itself (file layout, migrations, concurrency) is `iolab-catalog`; this module only turns
//! arguments into its calls and its entries into the renderings `iolab run` and `iolab sweep` already print.
//! docs/CATALOG.md describes both.

use crate::args::{DbFlag, ExportArgs, RmArgs, RunsArgs, ShowArgs};
use crate::exit::{usage, ExitStatus};
use crate::output::{print, write_all};
use crate::saving::{db_path, open_catalog, parse_tags};
use anyhow::Result;
use iolab_catalog::{Catalog, Entry, Filter, Summary};
use iolab_report::kinds::{self, entry_kind};
use iolab_report::plugin::{Column, ColumnShown};
use iolab_report::{CsvExporter, Document, TextExporter};
use serde_json::Value;
use std::path::Path;

/// Opens a catalog that must already exist (the reading commands never create one).
fn open_existing(db: &DbFlag) -> Result<Catalog> {
    let path = db_path(&db.db);
    if !path.exists() {
        return Err(usage(format!(
            "no catalog at '{}' (iolab run and iolab sweep create it when they save; --db PATH or IOLAB_DB picks another)",
            path.display()
        )));
    }
    open_catalog(&path).map_err(usage)
}

/// A stored kind (`find_max`) as users type it (`find-max`); a kind this iolab does not know as stored.
fn kind_label(stored: &str) -> String {
    entry_kind(stored).map_or_else(|| stored.to_string(), |(_, e)| e.printed().to_string())
}

/// The kind `--kind` names, as stored; an unknown one is an error listing the kinds.
fn kind_arg(text: &str) -> Result<String> {
    match entry_kind(text) {
        Some((_, e)) => Ok(e.stored.to_string()),
        None => {
            let names: Vec<&str> = kinds::entry_kinds().map(|(_, e)| e.printed()).collect();
            let (last, rest) = names.split_last().map_or(("", &[][..]), |(l, r)| (*l, r));
            Err(usage(format!("invalid value '{text}' for '--kind': expected {} or {last}", rest.join(", "))))
        }
    }
}

/// A `--since`/`--until` value in Unix seconds: a day, an RFC 3339 time, or a duration ago with its unit
/// (`1h`, `30m`, `90s`, `2d`; a bare number is refused, as it could be a year).
fn time_arg(flag: &str, t: &str, end_of_day: bool) -> Result<f64> {
    if let Some(at) = iolab_doc::time::parse_date(t, end_of_day) {
        return Ok(at);
    }
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    ago_s(t).map(|ago| now.as_secs_f64() - ago).ok_or_else(|| {
        usage(format!(
            "invalid value '{t}' for '{flag}': expected a day (2025-03-01), an RFC 3339 time \
             (2025-03-01T14:30:00Z) or a duration ago (30m, 1h, 2d)"
        ))
    })
}

/// A duration with its unit in seconds: iolab's durations (`90s`, `30m`, `1h`) and days (`2d`).
fn ago_s(t: &str) -> Option<f64> {
    let t = t.trim();
    if let Some(days) = t.strip_suffix('d').and_then(|d| d.parse::<f64>().ok()) {
        return (days.is_finite() && days >= 0.0).then_some(days * 86_400.0);
    }
    let with_unit = t.ends_with(|c: char| c.is_ascii_alphabetic());
    let ns = iolab_spec::units::parse_duration_ns(t).ok().filter(|_| with_unit)?;
    Some(ns as f64 / 1e9)
}

/// What `iolab export` writes, and where: CSV (else JSON) and the file (`-` for stdout). `--csv [FILE]` or
/// `--json [FILE]` say the format; without either, the extension of `-o`'s file (.csv or .json) does. The
/// file is `--json`'s or `--csv`'s, else `-o`'s, else stdout; given twice, it is refused.
fn export_to(args: &ExportArgs) -> Result<(bool, String)> {
    let given = args.csv.as_deref().map(|f| (true, f)).or(args.json.as_deref().map(|f| (false, f)));
    if let Some((csv, file)) = given {
        return match (file, args.output.as_deref()) {
            ("-", out) => Ok((csv, out.unwrap_or("-").to_string())),
            (f, None) => Ok((csv, f.to_string())),
            (f, Some(o)) => Err(usage(format!(
                "'{f}' and '-o {o}': give the file once, to --{} or to -o",
                if csv { "csv" } else { "json" }
            ))),
        };
    }
    let file = args.output.as_deref().unwrap_or("-");
    match std::path::Path::new(file).extension().map(|x| x.to_ascii_lowercase()) {
        Some(x) if x == "csv" => Ok((true, file.to_string())),
        Some(x) if x == "json" => Ok((false, file.to_string())),
        _ if file == "-" => Err(usage(format!(
            "`iolab export {}` needs a format: --json (the stored document) or --csv, or -o FILE.json / -o FILE.csv",
            args.id
        ))),
        _ => Err(usage(format!(
            "cannot tell the format from '-o {file}': give --json (the stored document) or --csv, or a .json or .csv file"
        ))),
    }
}

/// `iolab runs`.
pub fn runs(args: &RunsArgs) -> Result<ExitStatus> {
    let date = |flag: &str, text: &Option<String>, end: bool| -> Result<Option<f64>> {
        text.as_ref().map(|t| time_arg(flag, t, end)).transpose()
    };
    let filter = Filter {
        tags: parse_tags(&args.tag)?,
        profile: args.profile.clone(),
        target: args.target.clone(),
        since_unix_s: date("--since", &args.since, false)?,
        until_unix_s: date("--until", &args.until, true)?,
        kind: args.kind.as_deref().map(kind_arg).transpose()?,
        limit: args
            .limit
            .as_ref()
            .map(|l| {
                l.trim().parse::<usize>().ok().filter(|n| *n > 0).ok_or_else(|| {
                    usage(format!("invalid value '{l}' for '--limit': expected a whole number above 0"))
                })
            })
            .transpose()?,
    };
    let path = db_path(&args.db.db);
    // `--json FILE` is an output like any other: claimed beside the catalog, which it may not be.
    let mut gate = iolab_device::WriteGate::new();
    if path.exists() {
        gate.claim("the catalog", &path.display().to_string(), iolab_device::Access::Reads).map_err(usage)?;
    }
    let json_out = crate::output::claim(&mut gate, "--json", args.json.as_deref())?;
    let list = if path.exists() {
        open_catalog(&path).map_err(usage)?.summaries(&filter).map_err(usage)?
    } else {
        Vec::new()
    };
    if let Some(out) = &json_out {
        let figures = shown_figures(&list);
        let rows: Vec<Value> = list.iter().map(|s| summary_json(s, &figures)).collect();
        crate::output::write_all(vec![(out, Ok(serde_json::to_string_pretty(&rows)? + "\n"))])?;
        return Ok(ExitStatus::Ok);
    }
    if list.is_empty() {
        if path.exists() {
            eprintln!("iolab: no entries match in '{}'", path.display());
        } else {
            eprintln!("iolab: no catalog at '{}' yet; iolab run and iolab sweep save there", path.display());
        }
        return Ok(ExitStatus::Ok);
    }
    print(&runs_table(&list))?;
    Ok(ExitStatus::Ok)
}

/// One row of `iolab runs --json`: the entry's facts, and each headline figure a kind lists (null where it
/// has none).
fn summary_json(s: &Summary, figures: &[&Column]) -> Value {
    let tags: serde_json::Map<String, Value> =
        s.tags.iter().map(|(k, v)| (k.clone(), Value::String(v.clone()))).collect();
    let mut row = serde_json::json!({
        "id": s.id,
        "kind": kind_label(&s.kind),
        "saved_at": iolab_doc::time::format_rfc3339(s.saved_unix_s),
        "saved_unix_s": s.saved_unix_s,
        "started_at": s.columns.started_at,
        "run_id": s.columns.run_id,
        "profile": s.columns.profile,
        "targets": s.columns.targets,
        "partial": s.columns.partial,
        "tags": tags,
        "note": s.note,
        "iolab_version": s.columns.iolab_version,
    });
    for key in figures.iter().flat_map(|c| c.figures) {
        row[*key] = serde_json::json!(s.columns.figure(key));
    }
    row
}

/// The figure columns a list shows, in `iolab runs` and in its JSON alike: those always shown, and those
/// some entry of the list has (a kind's own headline, such as a YCSB run's ops/s, only where one is listed).
fn shown_figures(list: &[Summary]) -> Vec<&'static Column> {
    kinds::listing()
        .into_iter()
        .filter(|c| {
            c.shown == ColumnShown::Always || list.iter().any(|s| s.columns.figure(c.figures[0]).is_some())
        })
        .collect()
}

/// Shortens `text` to at most `max` characters, marking the cut.
fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_string()
    } else {
        let mut s: String = text.chars().take(max.saturating_sub(1)).collect();
        s.push('…');
        s
    }
}

/// The `iolab runs` table: newest first. The headline figures are in the columns the kinds declare
/// (`kinds::listing`), between the targets and the tags: IOPS, MB/s and p99 always; the others (NOPM, a
/// tpch query set's times) when an entry listed has them.
fn runs_table(list: &[Summary]) -> String {
    let figures = shown_figures(list);
    let mut header = vec!["id", "when (UTC)", "kind", "name", "targets"];
    header.extend(figures.iter().map(|c| c.header));
    header.extend(["tags", "note"]);
    let right: Vec<bool> = (0..header.len()).map(|i| i >= 5 && i < 5 + figures.len()).collect();
    let rows: Vec<Vec<String>> = list.iter().map(|s| runs_row(s, &figures)).collect();
    // Numbers right-aligned, text left-aligned.
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for r in &rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let mut out = String::new();
    let mut line = |cells: &[String]| {
        let mut l = String::new();
        for (i, c) in cells.iter().enumerate() {
            let pad = " ".repeat(widths[i] - c.chars().count());
            if i > 0 {
                l.push_str("  ");
            }
            if right[i] {
                l.push_str(&pad);
                l.push_str(c);
            } else {
                l.push_str(c);
                l.push_str(&pad);
            }
        }
        out.push_str(l.trim_end());
        out.push('\n');
    };
    line(&header.iter().map(|h| h.to_string()).collect::<Vec<_>>());
    for r in &rows {
        line(r);
    }
    out
}

/// One entry's row of the `iolab runs` table, with the cells of `figures`.
fn runs_row(s: &Summary, figures: &[&Column]) -> Vec<String> {
    let kind = kind_label(&s.kind);
    let when = s.columns.started_unix_s.unwrap_or(s.saved_unix_s);
    let targets = match s.columns.targets.as_slice() {
        [] => "-".to_string(),
        [a] => a.clone(),
        [a, b] => format!("{a}, {b}"),
        [a, rest @ ..] => format!("{a} +{}", rest.len()),
    };
    let tags: Vec<String> = s.tags.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let mut row = vec![
        s.id.clone(),
        iolab_doc::time::format_minute(when),
        if s.columns.partial { format!("{kind} (partial)") } else { kind },
        clip(s.columns.profile.as_deref().unwrap_or("-"), 24),
        clip(&targets, 36),
    ];
    row.extend(figures.iter().map(|c| (c.cell)(&s.columns)));
    row.push(if tags.is_empty() { "-".into() } else { clip(&tags.join(" "), 40) });
    row.push(clip(&s.note.as_deref().unwrap_or("-").replace('\n', " "), 40));
    row
}

/// `iolab show ID`.
pub fn show(args: &ShowArgs) -> Result<ExitStatus> {
    let catalog = open_existing(&args.db)?;
    let e = catalog.get(&args.id).map_err(usage)?;
    let mut out = render(&e);
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out.push('\n');
    out.push_str(&footer(&e, catalog.path()));
    print(&out)?;
    Ok(ExitStatus::Ok)
}

/// The entry's document, read as its kind's; `None` for a document this iolab cannot read (another
/// version's, or a kind it does not know).
fn document(e: &Entry) -> Option<Box<dyn Document>> {
    let (kind, _) = entry_kind(&e.kind)?;
    kind.parse(e.doc.clone()).ok()
}

/// The document rendered as the command that made it prints it; a document this iolab cannot read (another
/// version's) as pretty JSON.
fn render(e: &Entry) -> String {
    document(e).map(|d| TextExporter.render(d.as_ref())).unwrap_or_else(|| {
        let schema = e.doc["schema"].as_str().unwrap_or("unknown schema");
        let text = serde_json::to_string_pretty(&e.doc).unwrap_or_else(|_| e.doc_text.clone());
        format!("({schema}: this iolab cannot render it; the stored document follows)\n{text}\n")
    })
}

/// The catalog facts under `iolab show`: id, when saved, tags and note.
fn footer(e: &Entry, path: &Path) -> String {
    let mut out = format!(
        "catalog {} · {} · saved {} · {}\n",
        e.id,
        kind_label(&e.kind),
        iolab_doc::time::format_rfc3339(e.saved_unix_s),
        path.display()
    );
    if !e.tags.is_empty() {
        let tags: Vec<String> = e.tags.iter().map(|(k, v)| format!("{k}={v}")).collect();
        out.push_str(&format!("tags    {}\n", tags.join(" ")));
    }
    if let Some(n) = &e.note {
        out.push_str(&format!("note    {n}\n"));
    }
    out
}

/// `iolab export ID --json|--csv`.
pub fn export(args: &ExportArgs) -> Result<ExitStatus> {
    let (csv, file) = export_to(args)?;
    let flag = match (&args.csv, &args.json) {
        (Some(f), _) | (None, Some(f)) if f != "-" => {
            if csv {
                "--csv"
            } else {
                "--json"
            }
        }
        _ => "-o",
    };
    let out = iolab_device::WriteGate::new().output(flag, &file).map_err(usage)?;
    let catalog = open_existing(&args.db)?;
    let e = catalog.get(&args.id).map_err(usage)?;
    let text = if !csv {
        e.doc_text.clone()
    } else {
        let unreadable = || {
            usage(format!(
                "entry {} ({}) cannot be read by this iolab as CSV; `iolab export {} --json` gives the stored document",
                e.id,
                e.doc["schema"].as_str().unwrap_or("unknown schema"),
                e.id
            ))
        };
        let doc = document(&e).ok_or_else(unreadable)?;
        CsvExporter.render(doc.as_ref()).map_err(|_| {
            let kind = doc.kind();
            let why = kind
                .without_csv()
                .map_or_else(|| format!("a {} document: it has no CSV form", kind.name()), str::to_string);
            usage(format!("entry {} is {why}; `iolab export {} --json` gives its document", e.id, e.id))
        })?
    };
    write_all(vec![(&out, Ok(text))])?;
    Ok(ExitStatus::Ok)
}

/// `iolab rm ID...`.
pub fn rm(args: &RmArgs) -> Result<ExitStatus> {
    let catalog = open_existing(&args.db)?;
    let mut ids = Vec::new();
    for id in &args.ids {
        let full = catalog.resolve(id).map_err(usage)?;
        if !ids.contains(&full) {
            ids.push(full);
        }
    }
    for id in &ids {
        catalog.remove(id).map_err(usage)?;
        eprintln!("iolab: removed {id}");
    }
    Ok(ExitStatus::Ok)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clip_marks_the_cut() {
        assert_eq!(clip("abc", 3), "abc");
        assert_eq!(clip("abcd", 3), "ab…");
    }
}
