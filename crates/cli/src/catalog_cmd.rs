//! The commands that read the results catalog back: `iolab runs`, `show`, `export`, `rm`. (Saving a run,
//! sweep or search is [`crate::saving`]; the flags are in [`crate::args`].)
//!
//! The catalog itself (file layout, migrations, concurrency) is `iolab-catalog`; this module only turns
//! arguments into its calls and its entries into the renderings `iolab run` and `iolab sweep` already print.
//! docs/CATALOG.md describes both.

use crate::args::{DbFlag, ExportArgs, RmArgs, RunsArgs, ShowArgs};
use crate::exit::{usage, ExitStatus};
use crate::output::{print, write_all};
use crate::saving::{db_path, kind_name, parse_tags};
use anyhow::Result;
use iolab_catalog::{Catalog, Entry, EntryKind, Filter, Summary};
use iolab_report::db::DbResult;
use iolab_report::db_copy::CopyResult;
use iolab_report::db_sweep::DbSweepResult;
use iolab_report::db_tpch::TpchResult;
use iolab_report::find_max::FindMaxResult;
use iolab_report::sweep::SweepResult;
use iolab_report::{CsvExporter, Document, RunResult, TextExporter};
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
    Catalog::open(&path).map_err(usage)
}

/// A stored kind (`find_max`) as users type it (`find-max`).
fn kind_label(stored: &str) -> String {
    EntryKind::parse(stored).map_or_else(|| stored.to_string(), |k| kind_name(k).to_string())
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

/// Does `iolab export` write CSV (else JSON): `--csv` or `--json`, or without either the extension of `-o`'s
/// file (.csv or .json).
fn wants_csv(args: &ExportArgs) -> Result<bool> {
    if args.csv || args.json {
        return Ok(args.csv);
    }
    let file = args.output.as_deref().unwrap_or("-");
    match std::path::Path::new(file).extension().map(|x| x.to_ascii_lowercase()) {
        Some(x) if x == "csv" => Ok(true),
        Some(x) if x == "json" => Ok(false),
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
        kind: args
            .kind
            .as_ref()
            .map(|k| {
                EntryKind::parse(k).ok_or_else(|| {
                    usage(format!(
                        "invalid value '{k}' for '--kind': expected run, sweep, find-max, verify, db or db-sweep"
                    ))
                })
            })
            .transpose()?,
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
    let list = if path.exists() {
        Catalog::open(&path).map_err(usage)?.summaries(&filter).map_err(usage)?
    } else {
        Vec::new()
    };
    if args.json {
        let rows: Vec<Value> = list.iter().map(summary_json).collect();
        print(&serde_json::to_string_pretty(&rows)?)?;
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

/// One row of `iolab runs --json`.
fn summary_json(s: &Summary) -> Value {
    let tags: serde_json::Map<String, Value> =
        s.tags.iter().map(|(k, v)| (k.clone(), Value::String(v.clone()))).collect();
    serde_json::json!({
        "id": s.id,
        "kind": kind_label(&s.kind),
        "saved_at": iolab_doc::time::format_rfc3339(s.saved_unix_s),
        "saved_unix_s": s.saved_unix_s,
        "started_at": s.columns.started_at,
        "run_id": s.columns.run_id,
        "profile": s.columns.profile,
        "targets": s.columns.targets,
        "partial": s.columns.partial,
        "iops": s.columns.iops,
        "mb_s": s.columns.mb_s,
        "p99_ns": s.columns.p99_ns,
        "nopm": s.columns.nopm,
        "query_total_s": s.columns.query_total_s,
        "query_geomean_s": s.columns.query_geomean_s,
        "tags": tags,
        "note": s.note,
        "iolab_version": s.columns.iolab_version,
    })
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

/// The `iolab runs` table: newest first. With a tpcc run among the entries, a NOPM column after MB/s (and
/// p99 is its new-order p99); with a tpch query set, a `queries` column after it: the total of the query
/// times and their geometric mean. A copy's headline is its MB/s.
fn runs_table(list: &[Summary]) -> String {
    let nopm = list.iter().any(|s| s.columns.nopm.is_some());
    let queries = list.iter().any(|s| s.columns.query_total_s.is_some());
    let mut header =
        vec!["id", "when (UTC)", "kind", "name", "targets", "IOPS", "MB/s", "p99", "tags", "note"];
    let mut right = vec![false, false, false, false, false, true, true, true, false, false];
    if queries {
        header.insert(7, "queries (total / geomean)");
        right.insert(7, true);
    }
    if nopm {
        header.insert(7, "NOPM");
        right.insert(7, true);
    }
    let rows: Vec<Vec<String>> = list
        .iter()
        .map(|s| {
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
                if s.columns.partial { format!("{kind} (partial)") } else { kind.to_string() },
                clip(s.columns.profile.as_deref().unwrap_or("-"), 24),
                clip(&targets, 36),
                s.columns.iops.map_or("-".into(), |v| iolab_report::format_rate(v, 1)),
                s.columns.mb_s.map_or("-".into(), |v| iolab_report::format_rate(v, 1)),
                s.columns.p99_ns.map_or("-".into(), iolab_report::format_duration_ns),
                if tags.is_empty() { "-".into() } else { clip(&tags.join(" "), 40) },
                clip(&s.note.as_deref().unwrap_or("-").replace('\n', " "), 40),
            ];
            if queries {
                row.insert(7, query_times(&s.columns));
            }
            if nopm {
                row.insert(7, s.columns.nopm.map_or("-".into(), |v| iolab_report::format_rate(v, 0)));
            }
            row
        })
        .collect();
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

/// A tpch query set's headline in `iolab runs`: `8.53 s / 236 ms`, or `-`.
fn query_times(c: &iolab_catalog::Columns) -> String {
    let s = |v: Option<f64>| v.map_or("-".into(), |v| iolab_report::format_duration_ns(v * 1e9));
    match c.query_total_s {
        Some(_) => format!("{} / {}", s(c.query_total_s), s(c.query_geomean_s)),
        None => "-".into(),
    }
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

/// The document rendered as the command that made it prints it; a document this iolab cannot read (another
/// version's) as pretty JSON.
fn render(e: &Entry) -> String {
    let rendered = match e.kind {
        EntryKind::Run | EntryKind::Verify => {
            RunResult::from_json(&e.doc_text).ok().map(|r| TextExporter.render(&Document::Run(&r)))
        }
        EntryKind::Sweep => serde_json::from_str::<SweepResult>(&e.doc_text)
            .ok()
            .map(|s| TextExporter.render(&Document::Sweep(&s))),
        EntryKind::FindMax => serde_json::from_str::<FindMaxResult>(&e.doc_text)
            .ok()
            .map(|f| TextExporter.render(&Document::FindMax(&f))),
        EntryKind::Db => {
            serde_json::from_str::<DbResult>(&e.doc_text).ok().map(|d| TextExporter.render(&Document::Db(&d)))
        }
        EntryKind::DbSweep => serde_json::from_str::<DbSweepResult>(&e.doc_text)
            .ok()
            .map(|s| TextExporter.render(&Document::DbSweep(&s))),
        EntryKind::DbTpch => serde_json::from_str::<TpchResult>(&e.doc_text)
            .ok()
            .map(|t| TextExporter.render(&Document::DbTpch(&t))),
        EntryKind::DbCopy => serde_json::from_str::<CopyResult>(&e.doc_text)
            .ok()
            .map(|c| TextExporter.render(&Document::DbCopy(&c))),
    };
    rendered.unwrap_or_else(|| {
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
        kind_name(e.kind),
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
    let csv = wants_csv(args)?;
    let out =
        iolab_device::WriteGate::new().output("-o", args.output.as_deref().unwrap_or("-")).map_err(usage)?;
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
        let csv = match e.kind {
            EntryKind::Run | EntryKind::Verify => {
                RunResult::from_json(&e.doc_text).map(|r| CsvExporter.render(&Document::Run(&r)))
            }
            EntryKind::Sweep => serde_json::from_str::<SweepResult>(&e.doc_text)
                .map(|s| CsvExporter.render(&Document::Sweep(&s))),
            EntryKind::FindMax => serde_json::from_str::<FindMaxResult>(&e.doc_text)
                .map(|f| CsvExporter.render(&Document::FindMax(&f))),
            EntryKind::DbSweep => serde_json::from_str::<DbSweepResult>(&e.doc_text)
                .map(|s| CsvExporter.render(&Document::DbSweep(&s))),
            EntryKind::Db | EntryKind::DbTpch | EntryKind::DbCopy => {
                return Err(usage(format!(
                    "entry {} is a database run: it has no CSV form (its numbers are one window's, with no time series); `iolab export {} --json` gives its document",
                    e.id, e.id
                )))
            }
        };
        csv.map_err(|_| unreadable())??
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
