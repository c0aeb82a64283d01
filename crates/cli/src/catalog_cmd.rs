//! The results catalog on the command line: the flags every run, sweep and search takes to be saved
//! (`--db`, `--no-save`, `--tag`, `--note`), the [`Saver`] that opens the catalog before a run starts and
//! saves the document after it, and the commands that read it back: `iolab runs`, `show`, `export`, `rm`.
//!
//! The catalog itself (file layout, migrations, concurrency) is `iolab-catalog`; this module only turns
//! arguments into its calls and its entries into the renderings `iolab run` and `iolab sweep` already print.
//! docs/CATALOG.md describes both.

use crate::run::{usage, write_out, Outcome};
use anyhow::{Context, Result};
use clap::{ArgGroup, Args};
use iolab_catalog::{Catalog, Entry, EntryKind, Filter, Summary};
use iolab_report::find_max::FindMaxResult;
use iolab_report::sweep::SweepResult;
use iolab_report::{CsvExporter, Document, RunResult, TextExporter};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Catalog options of `iolab run`, `iolab sweep` and `--find-max`.
#[derive(Args, Debug, Default, Clone)]
pub struct CatalogFlags {
    /// Results catalog (SQLite file) to save in. Default: $IOLAB_DB, else $XDG_DATA_HOME/iolab/results.db,
    /// else ~/.local/share/iolab/results.db (the directory is created). `iolab runs` lists what it holds.
    #[arg(long, value_name = "PATH", help_heading = "Catalog")]
    pub db: Option<PathBuf>,
    /// Do not save this run, sweep or search in the catalog. --dry-run never saves.
    #[arg(long, help_heading = "Catalog")]
    pub no_save: bool,
    /// Tag the saved entry, KEY=VALUE (e.g. --tag hba=qle2560 --tag site=lab1); repeatable, each key once.
    /// `iolab runs --tag KEY=VALUE` finds it.
    #[arg(long, value_name = "KEY=VALUE", help_heading = "Catalog")]
    pub tag: Vec<String>,
    /// A note saved with the entry (shown by `iolab runs` and `iolab show`).
    #[arg(long, value_name = "TEXT", help_heading = "Catalog")]
    pub note: Option<String>,
}

/// `--db` of the commands that read the catalog.
#[derive(Args, Debug, Default, Clone)]
pub struct DbFlag {
    /// Results catalog (SQLite file). Default: $IOLAB_DB, else $XDG_DATA_HOME/iolab/results.db, else
    /// ~/.local/share/iolab/results.db.
    #[arg(long, value_name = "PATH")]
    pub db: Option<PathBuf>,
}

/// `iolab runs` options.
#[derive(Args, Debug, Default, Clone)]
pub struct RunsArgs {
    /// Catalog location.
    #[command(flatten)]
    pub db: DbFlag,
    /// Only entries with this tag, KEY=VALUE; repeatable (all must match).
    #[arg(long, value_name = "KEY=VALUE")]
    pub tag: Vec<String>,
    /// Only entries of this job or profile name (exactly, as the NAME column shows it).
    #[arg(long, value_name = "NAME")]
    pub profile: Option<String>,
    /// Only entries with a target whose name contains this text (case-sensitive), e.g. 'nvme0' or 'mem:'.
    #[arg(long, value_name = "TEXT")]
    pub target: Option<String>,
    /// Only entries saved at or after this time: RFC 3339 (2025-03-01T14:30:00Z, or with an offset) or a
    /// day, 2025-03-01 (midnight UTC).
    #[arg(long, value_name = "DATE")]
    pub since: Option<String>,
    /// Only entries saved before this time: RFC 3339, or a day (2025-03-01 includes that whole day, UTC).
    #[arg(long, value_name = "DATE")]
    pub until: Option<String>,
    /// Only entries of this kind: run, sweep or find-max.
    #[arg(long, value_name = "KIND")]
    pub kind: Option<String>,
    /// At most this many entries (the newest). Default: all.
    #[arg(long, value_name = "N")]
    pub limit: Option<String>,
    /// Print the list as JSON (an array of entries without their documents; `iolab export ID --json` gives a
    /// document).
    #[arg(long)]
    pub json: bool,
}

/// `iolab show` options.
#[derive(Args, Debug, Default, Clone)]
pub struct ShowArgs {
    /// Entry id, or a unique start of one (as `iolab runs` lists them).
    #[arg(value_name = "ID")]
    pub id: String,
    /// Catalog location.
    #[command(flatten)]
    pub db: DbFlag,
}

/// `iolab export` options.
#[derive(Args, Debug, Default, Clone)]
#[command(group(ArgGroup::new("format").required(true).args(["json", "csv"])))]
pub struct ExportArgs {
    /// Entry id, or a unique start of one.
    #[arg(value_name = "ID")]
    pub id: String,
    /// The stored document, exactly as `--json` wrote it (iolab.result/1, iolab.sweep/1 or iolab.findmax/1).
    #[arg(long)]
    pub json: bool,
    /// CSV: a run's time series (one row per interval), a sweep's points (one row per point) or a search's
    /// steps (one row per step).
    #[arg(long)]
    pub csv: bool,
    /// Write to FILE instead of stdout.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<String>,
    /// Catalog location.
    #[command(flatten)]
    pub db: DbFlag,
}

/// `iolab rm` options.
#[derive(Args, Debug, Default, Clone)]
pub struct RmArgs {
    /// Entry ids (or unique starts of them). All are checked before any is removed.
    #[arg(value_name = "ID", required = true)]
    pub ids: Vec<String>,
    /// Catalog location.
    #[command(flatten)]
    pub db: DbFlag,
}

/// Parses one `--tag KEY=VALUE`.
pub fn parse_tag(text: &str) -> Result<(String, String)> {
    match text.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.to_string())),
        _ => Err(usage(format!(
            "invalid value '{text}' for '--tag': expected KEY=VALUE with a non-empty KEY, e.g. 'hba=qle2560'"
        ))),
    }
}

/// Parses every `--tag`; a key given twice is an error.
fn parse_tags(texts: &[String]) -> Result<Vec<(String, String)>> {
    let mut tags: Vec<(String, String)> = Vec::new();
    for t in texts {
        let (k, v) = parse_tag(t)?;
        if tags.iter().any(|(k2, _)| *k2 == k) {
            return Err(usage(format!("invalid value '{t}' for '--tag': key '{k}' is given twice")));
        }
        tags.push((k, v));
    }
    Ok(tags)
}

fn db_path(db: &Option<PathBuf>) -> PathBuf {
    db.clone().unwrap_or_else(Catalog::default_path)
}

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

/// An open catalog and what to save with the next document: made before a run starts (a catalog that
/// cannot be opened is an exit-2 error before anything is created or run), used after it.
pub struct Saver {
    catalog: Catalog,
    tags: Vec<(String, String)>,
    note: Option<String>,
    quiet: bool,
}

impl Saver {
    /// Checks the tags and opens the catalog, unless `--no-save` or `--dry-run` (then `None`).
    pub fn open(flags: &CatalogFlags, quiet: bool, dry_run: bool) -> Result<Option<Saver>> {
        let tags = parse_tags(&flags.tag)?;
        if flags.no_save || dry_run {
            return Ok(None);
        }
        let path = db_path(&flags.db);
        let catalog = Catalog::open(&path).map_err(usage)?;
        Ok(Some(Saver { catalog, tags, note: flags.note.clone(), quiet }))
    }

    /// Saves a document (its `--json` text) and says so on stderr.
    pub fn save(&self, kind: EntryKind, text: &str) -> Result<String> {
        let id = self
            .catalog
            .save_text(kind, text, &self.tags, self.note.as_deref())
            .map_err(usage)
            .with_context(|| format!("the {} finished but was not saved in the catalog", kind_name(kind)))?;
        if !self.quiet {
            eprintln!("iolab: saved as {id} in {}", self.catalog.path().display());
        }
        Ok(id)
    }
}

/// Saves with `saver` if there is one. The caller prints its output next and returns this result after it,
/// so a failed save never hides the numbers of a finished run.
pub fn save(saver: Option<&Saver>, kind: EntryKind, text: &str) -> Result<()> {
    match saver {
        Some(s) => s.save(kind, text).map(|_| ()),
        None => Ok(()),
    }
}

/// What a find-max search records of its runs for the catalog (the search document has no run of its own):
/// the job or profile name and the target names of its first step.
pub struct RunFacts {
    /// `config.plan.name`.
    pub profile: Option<String>,
    /// Target display names.
    pub targets: Vec<String>,
}

impl RunFacts {
    /// The facts of one run.
    pub fn of(r: &RunResult) -> RunFacts {
        RunFacts {
            profile: r.config.pointer("/plan/name").and_then(Value::as_str).map(str::to_string),
            targets: r.env.targets.iter().map(|t| t.name.clone()).collect(),
        }
    }
}

/// The kind as users type it.
fn kind_name(kind: EntryKind) -> &'static str {
    match kind {
        EntryKind::Run => "run",
        EntryKind::Sweep => "sweep",
        EntryKind::FindMax => "find-max",
    }
}

/// A stored kind (`find_max`) as users type it (`find-max`).
fn kind_label(stored: &str) -> String {
    EntryKind::parse(stored).map_or_else(|| stored.to_string(), |k| kind_name(k).to_string())
}

/// `iolab runs`.
pub fn runs(args: &RunsArgs) -> Result<Outcome> {
    let date = |flag: &str, text: &Option<String>, end: bool| -> Result<Option<f64>> {
        text.as_ref()
            .map(|t| {
                iolab_catalog::time::parse_date(t, end).ok_or_else(|| {
                    usage(format!(
                        "invalid value '{t}' for '{flag}': expected a day (2025-03-01) or an RFC 3339 time (2025-03-01T14:30:00Z)"
                    ))
                })
            })
            .transpose()
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
                    usage(format!("invalid value '{k}' for '--kind': expected run, sweep or find-max"))
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
        write_out("-", &serde_json::to_string_pretty(&rows)?)?;
        return Ok(Outcome::Ok);
    }
    if list.is_empty() {
        if path.exists() {
            eprintln!("iolab: no entries match in '{}'", path.display());
        } else {
            eprintln!("iolab: no catalog at '{}' yet; iolab run and iolab sweep save there", path.display());
        }
        return Ok(Outcome::Ok);
    }
    write_out("-", &runs_table(&list))?;
    Ok(Outcome::Ok)
}

/// One row of `iolab runs --json`.
fn summary_json(s: &Summary) -> Value {
    let tags: serde_json::Map<String, Value> =
        s.tags.iter().map(|(k, v)| (k.clone(), Value::String(v.clone()))).collect();
    serde_json::json!({
        "id": s.id,
        "kind": kind_label(&s.kind),
        "saved_at": iolab_catalog::time::format_rfc3339(s.saved_unix_s),
        "saved_unix_s": s.saved_unix_s,
        "started_at": s.columns.started_at,
        "run_id": s.columns.run_id,
        "profile": s.columns.profile,
        "targets": s.columns.targets,
        "partial": s.columns.partial,
        "iops": s.columns.iops,
        "mb_s": s.columns.mb_s,
        "p99_ns": s.columns.p99_ns,
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

/// The `iolab runs` table: newest first.
fn runs_table(list: &[Summary]) -> String {
    let header = ["id", "when (UTC)", "kind", "name", "targets", "IOPS", "MB/s", "p99", "tags", "note"];
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
            vec![
                s.id.clone(),
                iolab_catalog::time::format_minute(when),
                if s.columns.partial { format!("{kind} (partial)") } else { kind.to_string() },
                clip(s.columns.profile.as_deref().unwrap_or("-"), 24),
                clip(&targets, 36),
                s.columns.iops.map_or("-".into(), |v| iolab_report::format_rate(v, 1)),
                s.columns.mb_s.map_or("-".into(), |v| format!("{v:.1}")),
                s.columns.p99_ns.map_or("-".into(), iolab_report::format_duration_ns),
                if tags.is_empty() { "-".into() } else { clip(&tags.join(" "), 40) },
                clip(&s.note.as_deref().unwrap_or("-").replace('\n', " "), 40),
            ]
        })
        .collect();
    // Numbers right-aligned, text left-aligned.
    let right = [false, false, false, false, false, true, true, true, false, false];
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
    line(&header.map(String::from));
    for r in &rows {
        line(r);
    }
    out
}

/// `iolab show ID`.
pub fn show(args: &ShowArgs) -> Result<Outcome> {
    let catalog = open_existing(&args.db)?;
    let e = catalog.get(&args.id).map_err(usage)?;
    let mut out = render(&e);
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out.push('\n');
    out.push_str(&footer(&e, catalog.path()));
    write_out("-", &out)?;
    Ok(Outcome::Ok)
}

/// The document rendered as the command that made it prints it; a document this iolab cannot read (another
/// version's) as pretty JSON.
fn render(e: &Entry) -> String {
    let rendered = match e.kind {
        EntryKind::Run => {
            RunResult::from_json(&e.doc_text).ok().map(|r| TextExporter.render(&Document::Run(&r)))
        }
        EntryKind::Sweep => serde_json::from_str::<SweepResult>(&e.doc_text)
            .ok()
            .map(|s| TextExporter.render(&Document::Sweep(&s))),
        EntryKind::FindMax => serde_json::from_str::<FindMaxResult>(&e.doc_text)
            .ok()
            .map(|f| TextExporter.render(&Document::FindMax(&f))),
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
        iolab_catalog::time::format_rfc3339(e.saved_unix_s),
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
pub fn export(args: &ExportArgs) -> Result<Outcome> {
    let catalog = open_existing(&args.db)?;
    let e = catalog.get(&args.id).map_err(usage)?;
    let text = if args.json {
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
            EntryKind::Run => {
                RunResult::from_json(&e.doc_text).map(|r| CsvExporter.render(&Document::Run(&r)))
            }
            EntryKind::Sweep => serde_json::from_str::<SweepResult>(&e.doc_text)
                .map(|s| CsvExporter.render(&Document::Sweep(&s))),
            EntryKind::FindMax => serde_json::from_str::<FindMaxResult>(&e.doc_text)
                .map(|f| CsvExporter.render(&Document::FindMax(&f))),
        };
        csv.map_err(|_| unreadable())??
    };
    let to = args.output.as_deref().unwrap_or("-");
    write_out(to, &text).with_context(|| format!("writing '{to}'"))?;
    Ok(Outcome::Ok)
}

/// `iolab rm ID...`.
pub fn rm(args: &RmArgs) -> Result<Outcome> {
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
    Ok(Outcome::Ok)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tag_needs_a_key_and_an_equals_sign() {
        assert_eq!(parse_tag("hba=qle2560").unwrap(), ("hba".into(), "qle2560".into()));
        assert_eq!(parse_tag("k=a=b").unwrap(), ("k".into(), "a=b".into()));
        assert_eq!(parse_tag("k=").unwrap(), ("k".into(), "".into()));
        for bad in ["hba", "=x", " =x", ""] {
            let e = format!("{:#}", parse_tag(bad).unwrap_err());
            assert!(e.contains(&format!("'{bad}' for '--tag'")), "{e}");
        }
        let e = format!("{:#}", parse_tags(&["a=1".into(), "a=2".into()]).unwrap_err());
        assert!(e.contains("key 'a' is given twice"), "{e}");
    }

    #[test]
    fn clip_marks_the_cut() {
        assert_eq!(clip("abc", 3), "abc");
        assert_eq!(clip("abcd", 3), "ab…");
    }
}
