//! The report as Markdown for tickets (`iolab report --format md`): the same inputs and numbers as the HTML
//! page, with the figures as tables (GitHub-flavoured pipe tables): runs side by side, per sweep its points
//! along each swept field with the knee marked, per run its summary, latency percentiles and warnings; per
//! database run its facts, transactions, consistency conditions and devices, database runs side by side, a
//! database sweep's points with the knee, a tpch query set's queries and a copy's line and devices.

use std::fmt::Write as _;

use super::db_figures;
use super::figures::{run_curve, PERCENTILE_COLUMNS};
use super::names::workload;
use super::ReportDoc;
use crate::format::{format_count, format_duration_ns, format_rate};
use crate::hosts;
use crate::model::OpSummary;
use crate::plugin::Page;
use crate::sweep::SweepResult;
use crate::RunResult;

/// Escapes a table cell: pipes, line breaks and HTML-significant characters (Markdown renderers pass raw
/// HTML through).
pub(crate) fn cell(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '|' => out.push_str("\\|"),
            '\n' | '\r' => out.push(' '),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '`' => out.push_str("\\`"),
            '*' => out.push_str("\\*"),
            '_' => out.push_str("\\_"),
            _ => out.push(c),
        }
    }
    out
}

fn table(out: &mut String, header: &[&str], right: &[bool], rows: &[Vec<String>]) {
    let _ = writeln!(out, "| {} |", header.iter().map(|h| cell(h)).collect::<Vec<_>>().join(" | "));
    let seps: Vec<&str> = (0..header.len())
        .map(|i| if right.get(i).copied().unwrap_or(false) { "---:" } else { "---" })
        .collect();
    let _ = writeln!(out, "| {} |", seps.join(" | "));
    for r in rows {
        let _ = writeln!(out, "| {} |", r.iter().map(|c| cell(c)).collect::<Vec<_>>().join(" | "));
    }
    out.push('\n');
}

fn lat(s: &OpSummary, f: fn(&iolab_stats::LatSummary) -> f64) -> String {
    s.lat_ns.as_ref().map_or("-".into(), |l| format_duration_ns(f(l)))
}

/// Renders the report as Markdown: the title and the table of inputs, then each kind's parts
/// (`lay_out`).
pub fn render_markdown(title: &str, docs: &[ReportDoc]) -> String {
    let mut page = Page::default();
    let _ = writeln!(page.out, "## {}\n", cell(title));
    let rows: Vec<Vec<String>> = docs
        .iter()
        .map(|d| {
            let (kind, started) = super::kind_and_start(d);
            let tags: Vec<String> = d.tags.iter().map(|(k, v)| format!("{k}={v}")).collect();
            vec![
                d.label.clone(),
                kind.into(),
                d.source.clone(),
                started,
                tags.join(", "),
                d.note.clone().unwrap_or_default(),
            ]
        })
        .collect();
    table(&mut page.out, &["input", "kind", "source", "started", "tags", "note"], &[], &rows);
    warnings_md(&mut page.out, docs);
    super::lay_out(&mut page, docs, |k| k.markdown());
    page.out
}

/// The runs' summary: a row each, their percentiles, and with several each against the first.
pub(crate) fn runs_summary(out: &mut String, runs: &[(&ReportDoc, &RunResult)]) {
    out.push_str("### Summary\n\n");
    let rows: Vec<Vec<String>> = runs
        .iter()
        .map(|(d, r)| {
            let a = &r.total.all;
            vec![
                d.label.clone(),
                workload(r),
                format_rate(a.iops, 0),
                format_rate(a.mb_s, 1),
                lat(a, |l| l.mean),
                lat(a, |l| l.p99 as f64),
                lat(a, |l| l.p999 as f64),
                lat(a, |l| l.max as f64),
                format!("{:.1} of {}", r.depth.achieved, r.depth.requested),
                format_duration_ns(r.cpu.cpu_ns_per_io),
                r.verdict.as_ref().map_or("-".into(), |v| v.word()),
                r.warnings.len().to_string(),
            ]
        })
        .collect();
    table(
        out,
        &[
            "run", "workload", "IOPS", "MB/s", "mean", "p99", "p99.9", "max", "depth", "CPU/IO", "verdict",
            "warnings",
        ],
        &[false, false, true, true, true, true, true, true, true, true, false, true],
        &rows,
    );
    out.push_str("### Response-time percentiles (all ops)\n\n");
    let mut header = vec!["run"];
    header.extend(PERCENTILE_COLUMNS.iter().map(|c| c.0));
    let rows: Vec<Vec<String>> = runs
        .iter()
        .map(|(d, r)| {
            let mut row = vec![d.label.clone()];
            row.extend(PERCENTILE_COLUMNS.iter().map(|(_, f)| lat(&r.total.all, *f)));
            row
        })
        .collect();
    let right: Vec<bool> = header.iter().enumerate().map(|(i, _)| i > 0).collect();
    table(out, &header, &right, &rows);
    if runs.len() >= 2 {
        comparison(out, runs);
    }
}

/// A document shown as its text, in a code block under `title`: a find-max search, miss-ratio curves.
pub(crate) fn as_text(out: &mut String, title: &str, d: &ReportDoc) {
    let _ = writeln!(out, "### {title}: {}\n", cell(&d.label));
    let _ = writeln!(out, "```\n{}```\n", d.body.text());
}

/// Right-alignment of a numbers table: every column but the first.
fn numbers(n: usize) -> Vec<bool> {
    (0..n).map(|i| i > 0).collect()
}

/// What opens a database document's part: its disclaimer in italics, when it has one, and its environment
/// (machine, storage under the database) as a two-column table, when it has one.
pub(crate) fn db_header_md(out: &mut String, h: &crate::db::DbHeader) {
    if let Some(d) = &h.disclaimer {
        let _ = writeln!(out, "*{}.*\n", cell(d));
    }
    if let Some(env) = &h.env {
        facts_md(out, crate::db_rows::env_rows(env));
    }
}

/// A devices table with its title, when there are devices.
fn devices_md(out: &mut String, title: &str, devices: &[crate::db::DeviceView]) {
    if devices.is_empty() {
        return;
    }
    let _ = writeln!(out, "{title}:\n");
    let cols = &crate::db_rows::DEVICE_COLUMNS;
    table(out, cols, &numbers(cols.len()), &crate::db_rows::device_rows(devices));
}

/// The database's own I/O with its title, when something counted it (or said why not).
fn database_io_md(out: &mut String, io: Option<&crate::db::DatabaseIo>) {
    let Some(io) = io else { return };
    let _ = writeln!(out, "{}\n", crate::db_rows::database_io_title(io));
    if io.source.is_some() {
        let cols = &crate::db_rows::DATABASE_IO_COLUMNS;
        table(out, cols, &numbers(cols.len()), &crate::db_rows::database_io_rows(io));
        let _ = writeln!(out, "Not seen: {}.\n", io.unseen);
    }
}

/// A database part's facts, as a two-column table.
fn facts_md(out: &mut String, facts: Vec<(&str, String)>) {
    let facts: Vec<Vec<String>> = facts.into_iter().map(|(k, v)| vec![k.to_string(), v]).collect();
    table(out, &["", ""], &[], &facts);
}

/// Every input's warnings ([`crate::plugin::Document::warnings`]) under the table of inputs, as the page's
/// `Warnings` section: written here for every input of every kind, so no kind's part can leave them out. One
/// `- warning: ` line each (the tests count them).
fn warnings_md(out: &mut String, docs: &[ReportDoc]) {
    let all: Vec<(&ReportDoc, crate::plugin::Warned)> =
        docs.iter().flat_map(|d| d.body.warnings().into_iter().map(move |w| (d, w))).collect();
    let _ = writeln!(out, "### Warnings ({})\n", all.len());
    if all.is_empty() {
        out.push_str("None: no input carries a warning.\n\n");
        return;
    }
    for (d, w) in &all {
        let at = if w.at.is_empty() { String::new() } else { format!(" at {}", cell(&w.at)) };
        let hint = if w.hint.is_empty() { String::new() } else { format!(" (hint: {})", cell(&w.hint)) };
        let _ = writeln!(out, "- warning: {}{at}: {}{hint}", cell(&d.label), cell(&w.text));
    }
    out.push('\n');
}

/// A tpch query set: its facts, each query's time and reads, the power line, the devices.
pub(crate) fn tpch_md(out: &mut String, d: &ReportDoc, r: &crate::db_tpch::TpchResult) {
    let _ = writeln!(out, "### Analytics queries (tpch): {}\n", cell(&d.label));
    db_header_md(out, &r.header);
    let _ = writeln!(out, "**{}**\n", cell(&crate::db_rows::power_text(r)));
    if let Some(line) = crate::db_rows::derived_text(r) {
        let _ = writeln!(out, "{}\n", cell(&line));
    }
    let cols = &crate::db_rows::QUERY_COLUMNS;
    let mut right = numbers(cols.len());
    right[1] = false;
    table(out, cols, &right, &crate::db_rows::query_rows(r));
    devices_md(out, "Devices under the database, all the queries", &r.devices);
    database_io_md(out, r.database_io.as_ref());
    facts_md(out, db_figures::tpch_facts(r));
}

/// A database copy: the copy's line, both sides' devices, the facts.
pub(crate) fn copy_md(out: &mut String, d: &ReportDoc, r: &crate::db_copy::CopyResult) {
    let _ = writeln!(out, "### Database copy: {}\n", cell(&d.label));
    db_header_md(out, &r.header);
    let _ = writeln!(out, "**{}**\n", cell(&crate::db_rows::copy_text(r)));
    devices_md(out, "Devices under the source, during the copy", &r.source_devices);
    devices_md(out, "Devices under the destination, during the copy", &r.destination_devices);
    database_io_md(out, r.database_io.as_ref());
    facts_md(out, db_figures::copy_facts(r));
}

/// Several tpcc runs side by side: workload, users, NOPM, TPM, new-order p99, consistency.
fn db_side_by_side(out: &mut String, dbs: &[(&ReportDoc, &crate::db::DbResult)]) {
    out.push_str("### Database runs side by side\n\n");
    let rows: Vec<Vec<String>> = dbs
        .iter()
        .map(|(d, r)| {
            let no = r.run.transactions.iter().find(|t| t.name == crate::db_sweep::KNEE_TRANSACTION);
            let p99 = no
                .and_then(|t| t.latency_ns.as_ref())
                .map_or("-".into(), |l| format_duration_ns(l.p99 as f64));
            vec![
                d.label.clone(),
                format!("{} {}", r.header.workload, r.engine.name),
                format_count(r.config.users as u64),
                format_rate(r.run.nopm, 0),
                format_rate(r.run.tpm, 0),
                p99,
                if r.consistent() { "passed".into() } else { "FAILED".into() },
            ]
        })
        .collect();
    let header = ["run", "workload", "users", "NOPM", "TPM", "new_order p99", "consistency"];
    table(out, &header, &[false, false, true, true, true, true, false], &rows);
}

/// The tpcc runs: side by side when several, then each run's facts, transactions, consistency conditions,
/// devices and warnings.
pub(crate) fn db_runs(out: &mut String, dbs: &[(&ReportDoc, &crate::db::DbResult)]) {
    if dbs.len() >= 2 {
        db_side_by_side(out, dbs);
    }
    for (d, r) in dbs {
        let _ = writeln!(out, "### Database run: {}\n", cell(&d.label));
        db_header_md(out, &r.header);
        facts_md(out, db_figures::facts(r));
        table(
            out,
            &crate::db_rows::TX_COLUMNS,
            &numbers(crate::db_rows::TX_COLUMNS.len()),
            &crate::db_rows::tx_rows(&r.run.transactions),
        );
        let checks: Vec<Vec<String>> = r
            .consistency
            .iter()
            .map(|k| {
                let result = if k.passed {
                    "passed".to_string()
                } else {
                    format!("FAILED ({})", crate::format::counted(k.violations, "violation"))
                };
                vec![k.condition.to_string(), k.rule.clone(), result]
            })
            .collect();
        table(out, &["consistency condition", "rule", "result"], &[], &checks);
        devices_md(out, "Devices under the database, measured window", &r.devices);
        database_io_md(out, r.database_io.as_ref());
        intervals_md(out, r);
    }
}

/// A tpcc run's window over time: a row per interval (the worst ones of a long window).
fn intervals_md(out: &mut String, r: &crate::db::DbResult) {
    let Some(s) = r.run.intervals.as_ref().filter(|s| !s.intervals.is_empty()) else { return };
    let device = s.device.as_deref().map_or(String::new(), |d| format!(", device {d}"));
    let _ = writeln!(
        out,
        "**Over time** ({} s intervals{device})
",
        s.interval_s
    );
    let (rows, left) = crate::db_rows::interval_rows(s);
    let cols = &crate::db_rows::INTERVAL_COLUMNS;
    table(out, cols, &numbers(cols.len()), &rows);
    if !left.is_empty() {
        let _ = writeln!(out, "Shown: {left}.\n");
    }
}

/// A tpcc sweep over users: its points with the knee.
pub(crate) fn db_sweep_md(out: &mut String, d: &ReportDoc, s: &crate::db_sweep::DbSweepResult) {
    let _ = writeln!(out, "### Database sweep over users: {}\n", cell(&d.label));
    db_header_md(out, &s.header);
    table(
        out,
        &crate::db_rows::SWEEP_COLUMNS,
        &numbers(crate::db_rows::SWEEP_COLUMNS.len() - 1),
        &crate::db_rows::sweep_rows(s, "knee"),
    );
    if let Some(k) = &s.knee {
        let at = k.users.map_or("beyond the sweep".to_string(), |u| crate::format::counted(u as u64, "user"));
        let _ = writeln!(
            out,
            "Knee (first user count after which NOPM gains < {:.0}% while {} p99 grows > {:.0}%): {at}.\n",
            k.nopm_gain_pct, k.transaction, k.p99_growth_pct
        );
    }
    let windows = crate::db_rows::sweep_window_rows(s);
    if !windows.is_empty() {
        table(out, &crate::db_rows::SWEEP_WINDOW_COLUMNS, &[false; 4], &windows);
    }
}

/// Each run against the first: IOPS, MB/s, mean and p99 as a percent change, in the seeds' language.
fn comparison(out: &mut String, runs: &[(&ReportDoc, &RunResult)]) {
    let (base_d, base) = runs[0];
    let _ = writeln!(out, "### Against {}\n", cell(&base_d.label));
    let pct = |a: f64, b: f64| {
        if a > 0.0 && a.is_finite() && b.is_finite() {
            format!("{:+.0}%", (b - a) / a * 100.0)
        } else {
            "-".into()
        }
    };
    let lat_of = |r: &RunResult, f: fn(&iolab_stats::LatSummary) -> f64| {
        r.total.all.lat_ns.as_ref().map_or(f64::NAN, f)
    };
    let rows: Vec<Vec<String>> = runs[1..]
        .iter()
        .map(|(d, r)| {
            vec![
                d.label.clone(),
                pct(base.total.all.iops, r.total.all.iops),
                pct(base.total.all.mb_s, r.total.all.mb_s),
                pct(lat_of(base, |l| l.mean), lat_of(r, |l| l.mean)),
                pct(lat_of(base, |l| l.p99 as f64), lat_of(r, |l| l.p99 as f64)),
            ]
        })
        .collect();
    table(
        out,
        &["run", "IOPS", "MB/s", "mean latency", "p99 latency"],
        &[false, true, true, true, true],
        &rows,
    );
}

pub(crate) fn sweep(out: &mut String, d: &ReportDoc, s: &SweepResult) {
    let _ = writeln!(out, "### Sweep: {}\n", cell(&d.label));
    let axes: Vec<String> = s.axes.iter().map(|a| format!("{} = {}", a.key, a.values.join(", "))).collect();
    let _ = writeln!(
        out,
        "{} of {} points, {} each; {}.{}\n",
        format_count(s.points.len() as u64),
        format_count(s.points_planned as u64),
        crate::format::counted(s.trials as u64, "trial"),
        cell(&axes.join("; ")),
        if s.partial { " **Partial (stopped early).**" } else { "" }
    );
    let keys: Vec<&str> = s.axes.iter().map(|a| a.key.as_str()).collect();
    let mut header: Vec<&str> = keys.clone();
    header.extend(["IOPS", "± 95 %", "MB/s", "mean", "p99", "depth", "mark"]);
    let knee = |i: usize| s.knee.as_ref().is_some_and(|k| k.lines.iter().any(|l| l.point == Some(i)));
    let maxp = |i: usize| s.max_p99.as_ref().is_some_and(|k| k.lines.iter().any(|l| l.point == Some(i)));
    let rows: Vec<Vec<String>> = s
        .points
        .iter()
        .map(|p| {
            let mut row: Vec<String> =
                keys.iter().map(|k| p.params.get(*k).cloned().unwrap_or_default()).collect();
            let ci = match (p.summary.iops.ci95_low, p.summary.iops.ci95_high) {
                (Some(lo), Some(hi)) => format_rate((hi - lo) / 2.0, 0),
                _ => "-".into(),
            };
            let mut marks = Vec::new();
            if knee(p.index) {
                marks.push("knee");
            }
            if maxp(p.index) {
                marks.push("max within p99");
            }
            row.extend([
                format_rate(p.summary.iops.mean, 0),
                ci,
                format_rate(p.summary.mb_s.mean, 1),
                format_duration_ns(p.summary.lat_mean_ns.as_ref().map(|m| m.mean)),
                format_duration_ns(p.summary.lat_p99_ns.as_ref().map(|m| m.mean)),
                format!("{:.1}", p.summary.achieved_depth.mean),
                marks.join(", "),
            ]);
            row
        })
        .collect();
    let right: Vec<bool> = header.iter().enumerate().map(|(i, h)| i >= keys.len() && *h != "mark").collect();
    table(out, &header, &right, &rows);
    if let Some(k) = &s.knee {
        for l in &k.lines {
            let _ = writeln!(
                out,
                "- knee along {}: {}",
                cell(&k.axis),
                cell(l.value.as_deref().unwrap_or("beyond the sweep"))
            );
        }
        out.push('\n');
    }
}

/// The deep tail from the histogram, when there is one: what the percentile curve draws.
fn percentile_curve(out: &mut String, r: &RunResult) {
    let curve = run_curve(r, "all");
    if curve.len() <= 2 {
        return;
    }
    let picks = decade_picks(&curve);
    if picks.is_empty() {
        return;
    }
    let header: Vec<String> = picks.iter().map(|(x, _)| super::charts::Fmt::Percentile.format(*x)).collect();
    let header_refs: Vec<&str> = header.iter().map(String::as_str).collect();
    let row: Vec<String> = picks.iter().map(|(_, y)| format_duration_ns(*y)).collect();
    out.push_str("Percentile curve (all ops):\n\n");
    table(out, &header_refs, &vec![true; header.len()], &[row]);
}

pub(crate) fn run_details(out: &mut String, d: &ReportDoc, r: &RunResult) {
    let _ = writeln!(out, "### Run: {}\n", cell(&d.label));
    let targets: Vec<String> = r
        .env
        .targets
        .iter()
        .map(|t| match &t.layout {
            Some(l) => format!("{} ({}, {})", t.name, t.kind, l.summary()),
            None => format!("{} ({})", t.name, t.kind),
        })
        .collect();
    let _ = writeln!(
        out,
        "run {} · seed {} · {:.2} s measured after {:.2} s ramp · engine {} · {}{}\n",
        cell(&r.run_id.chars().take(8).collect::<String>()),
        r.seed,
        r.measured_s,
        r.ramp_s,
        cell(&r.env.engine),
        cell(&targets.join(", ")),
        if r.partial { " · **partial**" } else { "" }
    );
    let mut header = vec!["ops", "count", "IOPS", "MB/s"];
    header.extend(PERCENTILE_COLUMNS.iter().map(|c| c.0));
    let mut named: Vec<(String, &OpSummary)> =
        crate::durability::op_rows(r).into_iter().map(|(n, s)| (n.to_string(), s)).collect();
    // Several targets: a row each (reads and writes together), as Iometer shows disks.
    if r.targets.len() > 1 {
        named.extend(r.targets.iter().map(|t| (format!("target {}", t.name), &t.all)));
    }
    let rows: Vec<Vec<String>> = named
        .iter()
        .map(|(n, s)| {
            let mut row = vec![cell(n), format_count(s.ops), format_rate(s.iops, 1), format_rate(s.mb_s, 1)];
            row.extend(PERCENTILE_COLUMNS.iter().map(|(_, f)| lat(s, *f)));
            row
        })
        .collect();
    let right: Vec<bool> = header.iter().enumerate().map(|(i, _)| i > 0).collect();
    table(out, &header, &right, &rows);
    hosts_table(out, r);
    percentile_curve(out, r);
    if let Some(c) = &r.cache {
        out.push_str("Cache (the figures above include its hits):\n\n");
        for line in c.summary_lines() {
            let _ = writeln!(out, "- {}", cell(&line));
        }
        out.push('\n');
    }
    if let Some(replay) = &r.replay {
        out.push_str("Replay:\n\n");
        for line in replay.summary_lines() {
            let _ = writeln!(out, "- {}", cell(&line));
        }
        out.push('\n');
    }
    if let Some(v) = &r.verdict {
        let _ = writeln!(out, "**Verdict: {}**\n", v.word());
        for reason in &v.reasons {
            let _ = writeln!(out, "- {}", cell(reason));
        }
        for why in &v.provisional {
            let _ = writeln!(out, "- provisional: {}", cell(why));
        }
        if !v.reasons.is_empty() || !v.provisional.is_empty() {
            out.push('\n');
        }
    }
    if let Some(lg) = &r.loadgen {
        let _ = writeln!(
            out,
            "LoadGen: {} ({}), {} transactions/hour completed, backlog max {} (limit {}){}\n",
            crate::format::counted(lg.users as u64, "user"),
            cell(&lg.mode),
            format_rate(lg.transactions_per_hour, 0),
            format_count(lg.backlog_max),
            format_rate(lg.overload_threshold, 0),
            if lg.overload { ", **overloaded**" } else { "" }
        );
    }
}

/// A run over several hosts: a row per rank, then the ranks' start skew and finishing times
/// ([`crate::hosts`], as the text summary and the HTML page).
fn hosts_table(out: &mut String, r: &RunResult) {
    if r.hosts.is_empty() {
        return;
    }
    let _ = writeln!(out, "Hosts ({} ranks):\n", r.hosts.len());
    let right: Vec<bool> = (0..hosts::HOST_COLUMNS.len()).map(hosts::numeric_column).collect();
    table(out, &hosts::HOST_COLUMNS, &right, &hosts::host_rows(r));
    if let Some(k) = &r.ranks {
        let _ = writeln!(out, "{} ranks: {}\n", k.size, cell(&hosts::ranks_line(k)));
    }
}

/// The points of a percentile curve at whole decades of 1/(1-p) (0%, 90%, 99%, 99.9%, ...), one per decade:
/// several points of the curve can round to the same decade (99,000 and 100,000 are both "99.999%").
pub(crate) fn decade_picks(curve: &[(f64, f64)]) -> Vec<&(f64, f64)> {
    let mut picks: Vec<&(f64, f64)> = Vec::new();
    let mut last: Option<i64> = None;
    for point in curve {
        let tenths = (point.0.log10() * 10.0).round() as i64;
        if tenths % 10 == 0 && last != Some(tenths) {
            picks.push(point);
            last = Some(tenths);
        }
    }
    picks
}
