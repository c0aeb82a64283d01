//! The HTML page: inline CSS, inline SVG charts, tables; no script, font or URL.
//!
//! Layout, top to bottom: the title and the inputs; with several runs a comparison (bars and overlaid
//! percentile curves); with sweeps their figures along each swept field and their point tables; then one
//! section per run with summary cards, verdict, charts and tables; then the database runs (`iolab db`: side
//! by side when several, then one section each) and database sweeps over users. Every chart sits in a
//! `<figure class="chart" data-chart="KIND">`, which the browser test (crates/cli/tests/cli/report.rs) finds.

use std::fmt::Write as _;

use serde_json::Value;

use super::charts::Series;
use super::figures::{
    backlog_chart, comparison_bars, group_bars, percentile_chart, run_curve, run_percentile_chart,
    sweep_charts, swept_keys, timeseries_charts, SweepRef, PERCENTILE_COLUMNS,
};
use super::names::{workload, workload_names};
use super::parts::{card, Grid};
use super::{escape_html as esc, ReportDoc};
use crate::format::{format_bytes, format_count, format_duration_ns, format_rate};
use crate::hosts;
use crate::model::OpSummary;
use crate::plugin::{Document, Page};
use crate::sweep::SweepResult;
use crate::RunResult;

/// Most configuration rows shown per run; the rest are counted.
const CONFIG_ROWS_MAX: usize = 400;

const CSS: &str = r#"
:root { color-scheme: light; }
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; margin: 0 auto;
  max-width: 1400px; padding: 16px 24px 48px; color: #1a1a1a; background: #fff; line-height: 1.4; }
h1 { font-size: 1.6em; margin: 0.4em 0 0.2em; }
h2 { font-size: 1.3em; margin: 1.6em 0 0.4em; border-bottom: 2px solid #0b3c8c; padding-bottom: 4px; }
h3 { font-size: 1.05em; margin: 1.2em 0 0.4em; }
.meta { color: #555; font-size: 0.9em; margin: 0.2em 0; }
.cards { display: flex; flex-wrap: wrap; gap: 10px; margin: 12px 0; }
.card { border: 1px solid #ccc; border-radius: 6px; padding: 8px 14px; min-width: 120px; background: #fafafa; }
.card .k { font-size: 0.78em; color: #555; text-transform: uppercase; letter-spacing: 0.03em; }
.card .v { font-size: 1.35em; font-weight: 600; }
.card .s { font-size: 0.78em; color: #555; }
.pass { color: #0a6b2f; border-color: #0a6b2f; } .fail { color: #a0140c; border-color: #a0140c; }
.card.pass, .card.fail { border-width: 2px; }
.charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(min(100%, 480px), 1fr)); gap: 12px; }
figure.chart { margin: 0; border: 1px solid #ddd; border-radius: 4px; padding: 4px; background: #fff;
  break-inside: avoid; min-width: 0; }
figure.chart.wide { grid-column: 1 / -1; }
figure.chart svg { display: block; width: 100%; height: auto; }
figure.chart figcaption { font-size: 0.8em; color: #555; padding: 2px 4px; }
p.nochart { color: #777; font-style: italic; }
table { border-collapse: collapse; margin: 6px 0 12px; font-size: 0.88em; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: left; vertical-align: top; overflow-wrap: break-word; }
td.mono, td .mono, td code { overflow-wrap: anywhere; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
th { background: #eef2f8; }
tr.mark td { font-weight: 600; }
.warn { color: #8a4b00; }
code, .mono { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 0.92em; }
details summary { cursor: pointer; color: #0b3c8c; }
@media print { body { max-width: none; padding: 0; } h2 { break-after: avoid; } section { break-inside: auto; } }
"#;

/// Renders the whole report: the title and the inputs, then each kind's parts (`lay_out`), then
/// what made it.
pub fn render_html(title: &str, docs: &[ReportDoc]) -> String {
    let mut page = Page::default();
    let _ = write!(
        page.out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>{}</title>\n<style>{CSS}</style>\n</head>\n<body>\n",
        esc(title)
    );
    let _ = writeln!(page.out, "<h1>{}</h1>", esc(title));
    inputs_table(&mut page.out, docs);
    super::parts::warnings_section(&mut page.out, docs);
    super::lay_out(&mut page, docs, |k| k.html());
    let version = docs.iter().map(|d| d.body.iolab_version()).next().unwrap_or_default();
    let _ = writeln!(
        page.out,
        "<p class=\"meta\">Made by <code>iolab report</code> from documents of iolab {}. Response times run from each I/O's intended start; percentiles come from merged HDR histograms (≤ 0.1 % error). MB/s is 10<sup>6</sup> bytes per second.</p>",
        esc(&version)
    );
    page.out.push_str("</body>\n</html>\n");
    page.out
}

fn inputs_table(out: &mut String, docs: &[ReportDoc]) {
    out.push_str("<table class=\"inputs\"><tr><th>input</th><th>kind</th><th>source</th><th>started</th><th>tags</th><th>note</th></tr>\n");
    for d in docs {
        let (kind, started) = super::kind_and_start(d);
        let tags: Vec<String> = d.tags.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{kind}</td><td class=\"mono\">{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&d.label),
            esc(&d.source),
            esc(&started),
            esc(&tags.join(", ")),
            esc(d.note.as_deref().unwrap_or(""))
        );
    }
    out.push_str("</table>\n");
}

fn lat_text(s: &OpSummary, f: fn(&iolab_stats::LatSummary) -> f64) -> String {
    s.lat_ns.as_ref().map_or("-".into(), |l| format_duration_ns(f(l)))
}

fn run_cards(out: &mut String, r: &RunResult) {
    out.push_str("<div class=\"cards\">");
    let all = &r.total.all;
    card(
        out,
        "IOPS",
        &format_rate(all.iops, 0),
        &format!("{} ops in {:.2} s", format_count(all.ops), r.measured_s),
        "",
    );
    card(
        out,
        "throughput",
        &format!("{} MB/s", format_rate(all.mb_s, 1)),
        &format!("{} MiB/s", format_rate(all.mib_s, 1)),
        "",
    );
    card(out, "mean latency", &lat_text(all, |l| l.mean), "response time, all ops", "");
    card(
        out,
        "p99 latency",
        &lat_text(all, |l| l.p99 as f64),
        &format!("p99.9 {}", lat_text(all, |l| l.p999 as f64)),
        "",
    );
    card(
        out,
        "achieved depth",
        &format!("{:.1}", r.depth.achieved),
        &format!("of {} requested", r.depth.requested),
        "",
    );
    card(
        out,
        "CPU per I/O",
        &format_duration_ns(r.cpu.cpu_ns_per_io),
        &format!("{:.2} cores", r.cpu.cores_used),
        "",
    );
    if let Some(rate) = &r.rate {
        card(
            out,
            "offered rate",
            &format!("{} IOPS", format_rate(rate.offered_iops, 0)),
            &format!("{} arrivals, {} pending at end", rate.arrival, format_count(rate.backlog_at_end)),
            "",
        );
        if let Some(l) = &rate.lag_ns {
            card(
                out,
                "issue lag p99",
                &format_duration_ns(l.p99 as f64),
                &format!(
                    "p50 {}: iolab's own delay, in the response times",
                    format_duration_ns(l.p50 as f64)
                ),
                "",
            );
        }
    }
    if let Some(end) = r.in_flight_at_end.filter(|e| e.ops > 0) {
        card(
            out,
            "in flight at end",
            &format!("{} I/Os", format_count(end.ops)),
            &format!(
                "last done {} after the end, longest {}; not in the figures",
                format_duration_ns(end.drained_ns as f64),
                format_duration_ns(end.longest_ns as f64)
            ),
            "",
        );
    }
    if let Some(v) = &r.verdict {
        let class = if v.pass { "pass" } else { "fail" };
        let detail = match v.provisional.as_slice() {
            [] => format!("{} checks", v.checks.len()),
            why => format!("{} checks; provisional: {}", v.checks.len(), why.join("; ")),
        };
        card(out, "verdict", &v.word(), &detail, class);
    }
    let w = r.warnings.len();
    card(
        out,
        "warnings",
        &w.to_string(),
        if w == 0 { "none" } else { "listed under Warnings" },
        if w > 0 { "warn" } else { "" },
    );
    if r.errors.total > 0 {
        card(out, "I/O errors", &format_count(r.errors.total), "failed completions", "fail");
    }
    out.push_str("</div>\n");
}

fn op_table(out: &mut String, r: &RunResult) {
    out.push_str(
        "<table><tr><th>ops</th><th class=\"n\">count</th><th class=\"n\">IOPS</th><th class=\"n\">MB/s</th>",
    );
    for (name, _) in PERCENTILE_COLUMNS {
        let _ = write!(out, "<th class=\"n\">{name}</th>");
    }
    out.push_str("<th class=\"n\">short</th><th class=\"n\">errors</th></tr>\n");
    let mut rows: Vec<(String, &OpSummary)> =
        crate::durability::op_rows(r).into_iter().map(|(name, s)| (name.to_string(), s)).collect();
    // Several targets: a row each (reads and writes together), as Iometer shows disks.
    if r.targets.len() > 1 {
        rows.extend(r.targets.iter().map(|t| (format!("target {}", t.name), &t.all)));
    }
    for (name, s) in rows {
        let _ = write!(
            out,
            "<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>",
            esc(&name),
            format_count(s.ops),
            format_rate(s.iops, 1),
            format_rate(s.mb_s, 1)
        );
        for (_, f) in PERCENTILE_COLUMNS {
            let _ = write!(out, "<td class=\"n\">{}</td>", lat_text(s, f));
        }
        let _ = writeln!(out, "<td class=\"n\">{}</td><td class=\"n\">{}</td></tr>", s.short, s.errors);
    }
    out.push_str("</table>\n");
}

/// A run over several hosts: a row per rank, then the ranks' start skew and finishing times
/// ([`crate::hosts`], as the text summary and the Markdown report).
fn hosts_table(out: &mut String, r: &RunResult) {
    if r.hosts.is_empty() {
        return;
    }
    let class = |i: usize| if hosts::numeric_column(i) { " class=\"n\"" } else { "" };
    let _ = writeln!(out, "<h3>Hosts ({} ranks)</h3>", r.hosts.len());
    out.push_str("<table><tr>");
    for (i, h) in hosts::HOST_COLUMNS.iter().enumerate() {
        let _ = write!(out, "<th{}>{h}</th>", class(i));
    }
    out.push_str("</tr>\n");
    for row in hosts::host_rows(r) {
        out.push_str("<tr>");
        for (i, c) in row.iter().enumerate() {
            let _ = write!(out, "<td{}>{}</td>", class(i), esc(c));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table>\n");
    if let Some(k) = &r.ranks {
        let _ = writeln!(out, "<p class=\"meta\">{} ranks: {}</p>", k.size, esc(&hosts::ranks_line(k)));
    }
}

pub(crate) fn run_section(out: &mut String, i: usize, d: &ReportDoc, r: &RunResult, n: &mut usize) {
    let _ = writeln!(out, "<section class=\"run\" id=\"run-{}\">", i + 1);
    let _ = writeln!(out, "<h2>Run: {}</h2>", esc(&d.label));
    let run_id: String = r.run_id.chars().take(8).collect();
    let _ = writeln!(
        out,
        "<p class=\"meta\">run {} · started {} · seed {} · measured {:.2} s after {:.2} s ramp · engine {}{}</p>",
        esc(&run_id),
        esc(&r.started_at),
        r.seed,
        r.measured_s,
        r.ramp_s,
        esc(&r.env.engine),
        if r.partial { " · <b>partial (stopped early)</b>" } else { "" }
    );
    let _ = writeln!(out, "<p class=\"meta\">workload: {}</p>", esc(&workload(r)));
    if let Some(note) = &d.note {
        let _ = writeln!(out, "<p class=\"meta\">note: {}</p>", esc(note));
    }
    run_cards(out, r);
    verdict_block(out, r);
    run_charts(&d.label, r).write(out, n);
    out.push_str("<h3>Operations</h3>\n");
    op_table(out, r);
    hosts_table(out, r);
    cache_block(out, r);
    replay_block(out, r);
    groups_table(out, r);
    loadgen_block(out, r);
    env_tables(out, r);
    config_table(out, r);
    out.push_str("</section>\n");
}

/// A run's charts: percentile curve, time series, LoadGen backlog and, with several worker groups, the
/// groups side by side.
fn run_charts(label: &str, r: &RunResult) -> Grid {
    let mut grid = Grid::default();
    grid.line(
        "percentiles",
        run_percentile_chart(label, r),
        "Response time at each percentile, from the merged HDR histograms: the right end is the tail (p99.9, p99.99, max).",
    );
    let ts_captions = [
        ("timeseries-iops", "Completed I/Os per second in each measured interval (ramp excluded)."),
        ("timeseries-latency", "Mean and p99 response time in each interval (p99 from a ≤ 1 % histogram)."),
    ];
    for (c, (kind, caption)) in timeseries_charts(label, r).into_iter().zip(ts_captions) {
        grid.line(kind, c, caption);
    }
    if let Some(c) = backlog_chart(label, r) {
        let caption = "LoadGen transactions dispatched and not completed at the end of each interval; the dashed line is LoadGen's overload limit.";
        grid.line("backlog", c, caption);
    }
    let group_captions = [
        ("groups-iops", "IOPS of each worker group over the measured window, reads and writes apart."),
        (
            "groups-latency",
            "p50 and p99 response time of each worker group's reads and writes, from its merged histograms.",
        ),
    ];
    for (c, (kind, caption)) in group_bars(label, r).into_iter().zip(group_captions) {
        grid.bar(kind, c, caption);
    }
    grid
}

fn verdict_block(out: &mut String, r: &RunResult) {
    let Some(v) = &r.verdict else { return };
    let (text, class) = if v.pass { ("PASS", "pass") } else { ("FAIL", "fail") };
    let _ = writeln!(out, "<h3>Verdict: <span class=\"{class}\">{text}</span></h3>");
    if let Some(summary) = v.sizing.as_ref().map(|s| s.summary.as_str()) {
        let _ = writeln!(out, "<p class=\"meta\">sizing: {}</p>", esc(summary));
    }
    out.push_str("<table><tr><th>check</th><th>group</th><th class=\"n\">measured</th><th class=\"n\">limit</th><th class=\"n\">slowest single I/O</th><th>result</th></tr>\n");
    for c in &v.checks {
        let val = |x: f64| {
            if c.unit == "ns" {
                format_duration_ns(x)
            } else {
                format!("{} IOPS", format_rate(x, 1))
            }
        };
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}{}</td><td class=\"n\">{}</td><td class=\"{}\">{}</td></tr>",
            esc(&c.name),
            esc(&c.group),
            c.measured.map_or("-".into(), val),
            if c.unit == "ns" { "≤ " } else { "≥ " },
            val(c.limit),
            c.single_io_max_ns.map_or(String::new(), format_duration_ns),
            if c.pass { "pass" } else { "fail" },
            if c.pass { "pass" } else { "FAIL" }
        );
    }
    out.push_str("</table>\n");
    for reason in &v.reasons {
        let _ = writeln!(out, "<p class=\"fail\">{}</p>", esc(reason));
    }
}

fn groups_table(out: &mut String, r: &RunResult) {
    if r.groups.len() < 2 {
        return;
    }
    out.push_str("<h3>Worker groups</h3>\n<table><tr><th>group</th><th class=\"n\">workers</th><th>targets</th><th class=\"n\">IOPS</th><th class=\"n\">MB/s</th><th class=\"n\">read mean</th><th class=\"n\">read p99</th><th class=\"n\">write mean</th><th class=\"n\">write p99</th><th class=\"n\">depth</th></tr>\n");
    for g in &r.groups {
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td class=\"n\">{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{:.1}</td></tr>",
            esc(&g.name),
            g.workers,
            esc(&g.targets.join(", ")),
            format_rate(g.total.all.iops, 1),
            format_rate(g.total.all.mb_s, 1),
            lat_text(&g.total.read, |l| l.mean),
            lat_text(&g.total.read, |l| l.p99 as f64),
            lat_text(&g.total.write, |l| l.mean),
            lat_text(&g.total.write, |l| l.p99 as f64),
            g.achieved_depth
        );
    }
    out.push_str("</table>\n");
}

fn loadgen_block(out: &mut String, r: &RunResult) {
    let Some(lg) = &r.loadgen else { return };
    out.push_str("<h3>Users and transactions (LoadGen)</h3>\n<table>");
    let mut row = |k: &str, v: String| {
        let _ = writeln!(out, "<tr><th>{}</th><td>{}</td></tr>", esc(k), esc(&v));
    };
    row(
        "users",
        format!("{} ({} mode, {} outstanding per user)", lg.users, lg.mode, lg.outstanding_per_user),
    );
    if let Some(rate) = &lg.rate {
        row("per-user rate", format!("{rate} ({})", lg.arrival.clone().unwrap_or_default()));
    }
    if let Some(o) = lg.offered_per_hour {
        row("offered", format!("{} transactions/hour", format_rate(o, 0)));
    }
    row(
        "dispatched / completed / failed",
        format!(
            "{} / {} / {}",
            format_count(lg.dispatched),
            format_count(lg.completed),
            format_count(lg.failed)
        ),
    );
    row("completed", format!("{} per hour", format_rate(lg.transactions_per_hour, 0)));
    row(
        "backlog",
        format!(
            "max {} · at end {} · overload limit {:.0}{}",
            lg.backlog_max,
            lg.backlog_at_end,
            lg.overload_threshold,
            if lg.overload { " · OVERLOADED" } else { "" }
        ),
    );
    out.push_str("</table>\n");
    if !lg.transactions.is_empty() {
        out.push_str("<table><tr><th>transaction</th><th class=\"n\">weight</th><th class=\"n\">steps</th><th class=\"n\">completed</th><th class=\"n\">per hour</th><th class=\"n\">mean</th><th class=\"n\">p99</th><th class=\"n\">max</th></tr>\n");
        for t in &lg.transactions {
            let l = |f: fn(&iolab_stats::LatSummary) -> f64| {
                t.latency_ns.as_ref().map_or("-".into(), |x| format_duration_ns(f(x)))
            };
            let _ = writeln!(
                out,
                "<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
                esc(&t.name),
                t.weight,
                t.steps,
                format_count(t.completed),
                format_rate(t.transactions_per_hour, 0),
                l(|x| x.mean),
                l(|x| x.p99 as f64),
                l(|x| x.max as f64)
            );
        }
        out.push_str("</table>\n");
    }
}

/// The block cache of a run, when it had one: the figures above include its hits.
fn cache_block(out: &mut String, r: &RunResult) {
    let Some(c) = &r.cache else { return };
    out.push_str("<h3>Cache</h3>\n<ul class=\"cache\">\n");
    for line in c.summary_lines() {
        let _ = writeln!(out, "<li>{}</li>", esc(&line));
    }
    out.push_str("</ul>\n");
}

/// The trace a replay issued, and its lag.
fn replay_block(out: &mut String, r: &RunResult) {
    let Some(replay) = &r.replay else { return };
    out.push_str("<h3>Replay</h3>\n<ul class=\"cache\">\n");
    for line in replay.summary_lines() {
        let _ = writeln!(out, "<li>{}</li>", esc(&line));
    }
    out.push_str("</ul>\n");
}

fn env_tables(out: &mut String, r: &RunResult) {
    let e = &r.env;
    out.push_str("<h3>Environment</h3>\n<table>");
    for (k, v) in [
        ("host", e.hostname.clone()),
        ("kernel", e.kernel.clone()),
        ("CPU", format!("{} × {}", e.cpu_count, e.cpu_model)),
        ("memory", format_bytes(e.mem_total_bytes)),
        ("engine", format!("{} {}", e.engine, e.engine_features.join(", "))),
        ("iolab", r.iolab_version.clone()),
    ] {
        let _ = writeln!(out, "<tr><th>{k}</th><td>{}</td></tr>", esc(&v));
    }
    out.push_str("</table>\n");
    if !e.targets.is_empty() {
        out.push_str("<table><tr><th>target</th><th>kind</th><th class=\"n\">size</th><th>filesystem</th><th>device</th><th>O_DIRECT</th><th class=\"n\">sector</th><th>scratch</th><th>layout</th></tr>\n");
        for t in &e.targets {
            let _ = writeln!(
                out,
                "<tr><td class=\"mono\">{}</td><td>{}</td><td class=\"n\">{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"n\">{}</td><td>{}</td><td>{}</td></tr>",
                esc(&t.name),
                esc(&t.kind),
                format_bytes(t.size_bytes),
                esc(t.fs_type.as_deref().unwrap_or("-")),
                esc(t.device_model.as_deref().unwrap_or("-")),
                if t.direct { "yes" } else { "no" },
                t.logical_block_size,
                if t.scratch { "yes (removed)" } else { "no" },
                esc(&t.layout.as_ref().map_or_else(|| "-".to_string(), |l| l.summary()))
            );
        }
        out.push_str("</table>\n");
    }
}

/// `config` flattened to `a.b[0].c = value` rows.
pub(crate) fn flatten(prefix: &str, v: &Value, rows: &mut Vec<(String, String)>) {
    if rows.len() > CONFIG_ROWS_MAX * 4 {
        return;
    }
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let p = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                flatten(&p, x, rows);
            }
        }
        Value::Array(a) if a.iter().any(|x| x.is_object() || x.is_array()) => {
            for (i, x) in a.iter().enumerate() {
                flatten(&format!("{prefix}[{i}]"), x, rows);
            }
        }
        Value::String(s) => rows.push((prefix.to_string(), s.clone())),
        other => rows.push((prefix.to_string(), other.to_string())),
    }
}

fn config_table(out: &mut String, r: &RunResult) {
    let mut rows = Vec::new();
    flatten("", r.config.as_value(), &mut rows);
    let _ =
        writeln!(out, "<details><summary>Configuration (the resolved job, {} values)</summary>", rows.len());
    out.push_str("<table><tr><th>key</th><th>value</th></tr>\n");
    for (k, v) in rows.iter().take(CONFIG_ROWS_MAX) {
        let _ =
            writeln!(out, "<tr><td class=\"mono\">{}</td><td class=\"mono\">{}</td></tr>", esc(k), esc(v));
    }
    if rows.len() > CONFIG_ROWS_MAX {
        let _ = writeln!(
            out,
            "<tr><td colspan=\"2\">… {} more in the JSON document</td></tr>",
            rows.len() - CONFIG_ROWS_MAX
        );
    }
    out.push_str("</table></details>\n");
}

/// Several runs side by side: bars of their headline figures, their percentile curves overlaid, a table.
pub(crate) fn comparison_section(out: &mut String, runs: &[(&ReportDoc, &RunResult)], n: &mut usize) {
    out.push_str("<section class=\"compare\" id=\"compare\">\n<h2>Runs side by side</h2>\n");
    let docs: Vec<&ReportDoc> = runs.iter().map(|(d, _)| *d).collect();
    let names = workload_names(&docs);
    let pairs: Vec<(&str, &RunResult)> = names.iter().zip(runs).map(|(l, (_, r))| (l.as_str(), *r)).collect();
    let mut grid = Grid::default();
    for c in comparison_bars(&pairs) {
        let caption = format!("{} of each run (all ops).", c.title);
        grid.bar("bars", c, &caption);
    }
    let series: Vec<Series> = pairs.iter().map(|(l, r)| Series::new(*l, run_curve(r, "all"))).collect();
    grid.line(
        "percentiles",
        percentile_chart("Response-time percentiles, all runs".into(), series),
        "All ops of each run, from the merged HDR histograms.",
    );
    grid.write(out, n);
    out.push_str("<table><tr><th>run</th><th>workload</th><th class=\"n\">IOPS</th><th class=\"n\">MB/s</th><th class=\"n\">mean</th><th class=\"n\">p99</th><th class=\"n\">p99.9</th><th class=\"n\">max</th><th class=\"n\">depth</th><th class=\"n\">CPU/IO</th><th class=\"n\">warnings</th></tr>\n");
    for (d, r) in runs {
        let a = &r.total.all;
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{:.1}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
            esc(&d.label),
            esc(&workload(r)),
            format_rate(a.iops, 1),
            format_rate(a.mb_s, 1),
            lat_text(a, |l| l.mean),
            lat_text(a, |l| l.p99 as f64),
            lat_text(a, |l| l.p999 as f64),
            lat_text(a, |l| l.max as f64),
            r.depth.achieved,
            format_duration_ns(r.cpu.cpu_ns_per_io),
            r.warnings.len()
        );
    }
    out.push_str("</table>\n</section>\n");
}

/// The sweeps: their cards, their figures along each swept field (several overlaid), their tables.
pub(crate) fn sweeps_section(out: &mut String, sweeps: &[(&ReportDoc, &SweepResult)], n: &mut usize) {
    out.push_str("<section class=\"sweeps\" id=\"sweeps\">\n");
    let _ = writeln!(out, "<h2>{}</h2>", if sweeps.len() > 1 { "Sweeps" } else { "Sweep" });
    let docs: Vec<&ReportDoc> = sweeps.iter().map(|(d, _)| *d).collect();
    let names = workload_names(&docs);
    let refs: Vec<SweepRef<'_>> = names
        .into_iter()
        .zip(sweeps)
        .map(|(name, (_, s))| SweepRef {
            label: if sweeps.len() > 1 { name } else { String::new() },
            sweep: s,
        })
        .collect();
    for (d, s) in sweeps {
        sweep_cards(out, d, s);
    }
    let mut grid = Grid::default();
    for key in swept_keys(&refs) {
        for (k, c) in sweep_charts(&refs, &key).into_iter().enumerate() {
            grid.line(&sweep_chart_kind(&key, k), c, &sweep_caption(&refs, &key, k));
        }
    }
    grid.write(out, n);
    for (d, s) in sweeps {
        sweep_table(out, d, s);
        sweep_tested(out, s);
    }
    out.push_str("</section>\n");
}

/// What a sweep tested, as a run's report says it: the environment and targets, and the resolved job, of
/// its first point (every point runs the same job but for the swept values, which the table shows).
fn sweep_tested(out: &mut String, s: &SweepResult) {
    let Some(first) = s.points.first() else { return };
    out.push_str("<p class=\"meta\">What was tested: the first point's environment, targets and resolved job; the other points differ only in the swept values.</p>\n");
    env_tables(out, &first.result);
    config_table(out, &first.result);
}

/// The `data-chart` kind of chart `k` along `key` (as [`sweep_charts`] orders them).
fn sweep_chart_kind(key: &str, k: usize) -> String {
    match k {
        0 => format!("sweep-{key}-throughput"),
        1 => format!("sweep-{key}-latency"),
        _ => format!("sweep-{key}-read-latency"),
    }
}

/// The caption of chart `k` along `key`: what it draws, what the error bars are (with trials) and the
/// p99 limit line (with `--max-p99`).
fn sweep_caption(refs: &[SweepRef<'_>], key: &str, k: usize) -> String {
    let knee = refs.iter().any(|r| {
        r.sweep.knee.as_ref().is_some_and(|k| k.axis == key && k.lines.iter().any(|l| l.point.is_some()))
    });
    let ring = if knee { "; a ring marks the knee (more load buys latency, not throughput)" } else { "" };
    let mut caption = match k {
        0 => format!(
            "{} at each value of {key}: the mean over trials per point{ring}.",
            if key == "bs" { "Throughput" } else { "Completed I/Os per second" }
        ),
        1 => format!("Mean and p99 response time at each value of {key}."),
        _ => format!("Mean response time of reads at each value of {key}: what the cache serves."),
    };
    let trials = refs.iter().map(|r| r.sweep.trials).max().unwrap_or(1);
    if trials > 1 && k < 2 {
        caption.push_str(&format!(
            " Error bars: the 95 % confidence interval of the mean over the {trials} trials of each point (Student t)."
        ));
    }
    let limit = refs.iter().find_map(|r| r.sweep.max_p99.as_ref().filter(|m| m.axis == key));
    if let (1, Some(m)) = (k, limit) {
        caption.push_str(&format!(
            " Dashed red line: the p99 limit of --max-p99 ({}); the table marks the highest load within it.",
            format_duration_ns(m.limit_ns as f64)
        ));
    }
    caption
}

fn sweep_cards(out: &mut String, d: &ReportDoc, s: &SweepResult) {
    let _ = writeln!(out, "<h3>{}</h3>", esc(&d.label));
    let axes: Vec<String> = s.axes.iter().map(|a| format!("{} = {}", a.key, a.values.join(", "))).collect();
    let _ = writeln!(
        out,
        "<p class=\"meta\">started {} · base seed {} · {} trial(s) per point{}</p>",
        esc(&s.started_at),
        s.base_seed,
        s.trials,
        if s.partial { " · <b>partial (stopped early)</b>" } else { "" }
    );
    if let Some(note) = &d.note {
        let _ = writeln!(out, "<p class=\"meta\">note: {}</p>", esc(note));
    }
    out.push_str("<div class=\"cards\">");
    card(out, "points", &format!("{} of {}", s.points.len(), s.points_planned), &axes.join("; "), "");
    let best = s.points.iter().max_by(|a, b| a.summary.iops.mean.total_cmp(&b.summary.iops.mean));
    if let Some(b) = best {
        let params: Vec<String> = b.params.iter().map(|(k, v)| format!("{k}={v}")).collect();
        card(out, "peak IOPS", &format_rate(b.summary.iops.mean, 0), &params.join(", "), "");
    }
    let best_mb = s.points.iter().max_by(|a, b| a.summary.mb_s.mean.total_cmp(&b.summary.mb_s.mean));
    if let Some(b) = best_mb {
        let params: Vec<String> = b.params.iter().map(|(k, v)| format!("{k}={v}")).collect();
        card(out, "peak MB/s", &format_rate(b.summary.mb_s.mean, 1), &params.join(", "), "");
    }
    if let Some(k) = &s.knee {
        let marks: Vec<String> =
            k.lines.iter().map(|l| l.value.clone().unwrap_or_else(|| "beyond the sweep".into())).collect();
        card(
            out,
            "knee",
            &format!("{} {}", k.axis, marks.join(" / ")),
            &format!("< {:.0} % IOPS for > {:.0} % p99", k.iops_gain_pct, k.lat_growth_pct),
            "",
        );
    }
    if let Some(m) = &s.max_p99 {
        let marks: Vec<String> =
            m.lines.iter().map(|l| l.value.clone().unwrap_or_else(|| "none".into())).collect();
        card(
            out,
            &format!("max {} within p99", m.axis),
            &marks.join(" / "),
            &format!("p99 ≤ {}", format_duration_ns(m.limit_ns as f64)),
            "",
        );
    }
    let warnings: usize = s.points.iter().map(|p| p.result.warnings.len()).sum();
    let sub = if warnings > 0 { "over all points, listed under Warnings" } else { "over all points" };
    card(out, "warnings", &warnings.to_string(), sub, if warnings > 0 { "warn" } else { "" });
    out.push_str("</div>\n");
}

fn sweep_table(out: &mut String, d: &ReportDoc, s: &SweepResult) {
    let _ = writeln!(out, "<h3>Points: {}</h3>", esc(&d.label));
    out.push_str("<table><tr><th class=\"n\">#</th>");
    let keys: Vec<&str> = s.axes.iter().map(|a| a.key.as_str()).collect();
    for k in &keys {
        let _ = write!(out, "<th>{}</th>", esc(k));
    }
    out.push_str("<th class=\"n\">IOPS</th><th class=\"n\">± 95 %</th><th class=\"n\">MB/s</th><th class=\"n\">mean</th><th class=\"n\">p99</th><th class=\"n\">depth</th>");
    let groups = s.group_names();
    for g in &groups {
        let _ = write!(out, "<th class=\"n\">{0} IOPS</th><th class=\"n\">{0} mean</th>", esc(g));
    }
    out.push_str("<th class=\"n\">warnings</th><th>mark</th></tr>\n");
    let knee = |i: usize| s.knee.as_ref().is_some_and(|k| k.lines.iter().any(|l| l.point == Some(i)));
    let maxp = |i: usize| s.max_p99.as_ref().is_some_and(|k| k.lines.iter().any(|l| l.point == Some(i)));
    for p in &s.points {
        let mut marks = Vec::new();
        if knee(p.index) {
            marks.push("knee");
        }
        if maxp(p.index) {
            marks.push("max within p99");
        }
        let _ = write!(
            out,
            "<tr{}><td class=\"n\">{}</td>",
            if marks.is_empty() { "" } else { " class=\"mark\"" },
            p.index
        );
        for k in &keys {
            let _ = write!(out, "<td>{}</td>", esc(p.params.get(*k).map_or("", String::as_str)));
        }
        let ci = match (p.summary.iops.ci95_low, p.summary.iops.ci95_high) {
            (Some(lo), Some(hi)) => format_rate((hi - lo) / 2.0, 0),
            _ => "-".into(),
        };
        let _ = write!(
            out,
            "<td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{:.1}</td>",
            format_rate(p.summary.iops.mean, 0),
            ci,
            format_rate(p.summary.mb_s.mean, 1),
            format_duration_ns(p.summary.lat_mean_ns.as_ref().map(|m| m.mean)),
            format_duration_ns(p.summary.lat_p99_ns.as_ref().map(|m| m.mean)),
            p.summary.achieved_depth.mean,
        );
        for g in &groups {
            let found = p.result.groups.iter().find(|x| &x.name == g);
            let iops = found.map_or("-".into(), |x| format_rate(x.total.all.iops, 0));
            let mean = format_duration_ns(found.and_then(|x| x.total.all.lat_ns.as_ref()).map(|l| l.mean));
            let _ = write!(out, "<td class=\"n\">{iops}</td><td class=\"n\">{mean}</td>");
        }
        let _ = writeln!(
            out,
            "<td class=\"n\">{}</td><td>{}</td></tr>",
            p.result.warnings.len(),
            marks.join(", ")
        );
    }
    out.push_str("</table>\n");
}

/// A `--find-max` search: each step's worst latency check against its limit, passes and fails apart, and
/// the search's table and answer as `iolab show` prints them (with each step's run id, to report on its own).
pub(crate) fn find_max_section(
    out: &mut String,
    d: &ReportDoc,
    f: &crate::find_max::FindMaxResult,
    n: &mut usize,
) {
    let _ = writeln!(out, "<h2>Find-max search: {}</h2>", esc(&d.label));
    let mut grid = Grid::default();
    let caption = format!(
        "Each step's worst latency check as a share of its limit (100% is the limit), against the {} tried: {}",
        f.variable, d.label
    );
    grid.line("find-max", super::figures::find_max_chart(&d.label, f), &caption);
    grid.write(out, n);
    let text = f.text();
    let _ = writeln!(out, "<pre class=\"mono\">{}</pre>", esc(&text));
}

/// A trace's miss-ratio curves: the chart (a line per policy, sizes on a log scale, the recommendation
/// marked) and the recommendation in words.
pub(crate) fn mrc_section(out: &mut String, d: &ReportDoc, m: &crate::mrc::MrcResult, n: &mut usize) {
    let _ = writeln!(out, "<h2>Miss-ratio curves: {}</h2>", esc(&d.label));
    let _ = writeln!(
        out,
        "<p>{}: {} references of {} ops ({}), {} distinct objects.</p>",
        esc(&m.trace.path),
        format_count(m.trace.references),
        format_count(m.trace.ops),
        m.trace.counted_text(),
        format_count(m.trace.objects)
    );
    if let Some(a) = m.trace.alignment_text() {
        let _ = writeln!(out, "<p>{}</p>", esc(&a));
    }
    let mut grid = Grid::default();
    let caption = format!("Miss ratio against cache size: {}", d.label);
    grid.line("mrc", super::figures::mrc_chart(&d.label, m), &caption);
    grid.write(out, n);
    if let Some(r) = m.recommendation_text() {
        let _ = writeln!(out, "<p><strong>Recommendation:</strong> {}</p>", esc(&r));
    }
}
