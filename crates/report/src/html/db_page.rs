//! The database sections of the HTML page (`iolab db`): several tpcc runs side by side, then one section per
//! tpcc run (cards, transactions, consistency conditions, devices, facts), per sweep over users, per tpch
//! query set (cards, each query's time as a table and bars, the devices) and per copy (cards, both sides'
//! devices). Every section opens with the same header ([`db_header`]): what ran, on which engine, the seed,
//! the document's disclaimer and the catalog note.

use std::fmt::Write as _;

use super::db_figures;
use super::parts::{card, numbers_table, Grid};
use super::{escape_html as esc, ReportDoc};
use crate::db::{DbHeader, DbResult, DeviceView};
use crate::db_copy::CopyResult;
use crate::db_tpch::TpchResult;
use crate::format::{format_duration_ns, format_rate};

/// The tpcc runs: side by side when several, then one section each.
pub(crate) fn db_sections(out: &mut String, dbs: &[(&ReportDoc, &DbResult)], n: &mut usize) {
    if dbs.len() >= 2 {
        db_comparison_section(out, dbs, n);
    }
    for (i, (d, r)) in dbs.iter().enumerate() {
        db_section(out, i, d, r, n);
    }
}

/// The header every database section carries: `WORKLOAD on ENGINE · seed N · WHAT`, marked when
/// interrupted, the document's disclaimer (TPC-C's, TPC-H's; none for a copy), the catalog note and the
/// environment (machine, storage under the database).
pub(crate) fn db_header(
    out: &mut String,
    d: &ReportDoc,
    h: &DbHeader,
    engine: &str,
    what: &str,
    partial: bool,
) {
    let _ = writeln!(
        out,
        "<p class=\"meta\">{} on {} · seed {} · {}{}</p>",
        esc(&h.workload),
        esc(engine),
        h.seed,
        esc(what),
        if partial { " · <b>partial (stopped early)</b>" } else { "" }
    );
    if let Some(disclaimer) = &h.disclaimer {
        let _ = writeln!(out, "<p class=\"meta warn\">{}.</p>", esc(disclaimer));
    }
    if let Some(note) = &d.note {
        let _ = writeln!(out, "<p class=\"meta\">note: {}</p>", esc(note));
    }
    env_part(out, h);
}

/// The machine and the storage under the database (a document of an older iolab has none: nothing shown).
fn env_part(out: &mut String, h: &DbHeader) {
    let Some(env) = &h.env else { return };
    out.push_str("<h3>Environment</h3>\n<table class=\"facts env\">");
    for (k, v) in crate::db_rows::env_rows(env) {
        let _ = writeln!(out, "<tr><th>{}</th><td>{}</td></tr>", esc(k), esc(&v));
    }
    out.push_str("</table>\n");
}

/// A devices table under `title`, or why there is none.
pub(crate) fn devices_part(out: &mut String, title: &str, devices: &[DeviceView]) {
    let _ = writeln!(out, "<h3>{}</h3>", esc(title));
    if devices.is_empty() {
        out.push_str("<p class=\"meta\">None: a server of your own (--url), or a file system on no block device.</p>\n");
    } else {
        numbers_table(out, &crate::db_rows::DEVICE_COLUMNS, &crate::db_rows::device_rows(devices));
    }
}

/// The database's own I/O under the devices' table: its table and what it cannot see, or why it was not
/// counted; nothing where nothing counted it.
pub(crate) fn database_io_part(out: &mut String, io: Option<&crate::db::DatabaseIo>) {
    let Some(io) = io else { return };
    let _ = writeln!(out, "<h3>{}</h3>", esc(crate::db_rows::database_io_title(io).trim_end_matches(':')));
    if io.source.is_some() {
        numbers_table(out, &crate::db_rows::DATABASE_IO_COLUMNS, &crate::db_rows::database_io_rows(io));
        let _ = writeln!(out, "<p class=\"meta\">Not seen: {}.</p>", esc(&io.unseen));
    }
}

/// The facts table that closes a section, under its own heading (its warnings are the page's, under
/// Warnings: [`super::parts::warnings_section`]).
pub(crate) fn facts_part(out: &mut String, facts: &[(&str, String)]) {
    out.push_str("<h3>Engine and settings</h3>\n<table class=\"facts\">");
    for (k, v) in facts {
        let _ = writeln!(out, "<tr><th>{}</th><td>{}</td></tr>", esc(k), esc(v));
    }
    out.push_str("</table>\n");
}

/// Several database runs side by side: NOPM, TPM and new-order p99 bars, the new-order percentile curves.
fn db_comparison_section(out: &mut String, runs: &[(&ReportDoc, &DbResult)], n: &mut usize) {
    out.push_str("<section class=\"compare\" id=\"db-compare\">\n<h2>Database runs side by side</h2>\n");
    let docs: Vec<&ReportDoc> = runs.iter().map(|(d, _)| *d).collect();
    let names = super::names::workload_names(&docs);
    let pairs: Vec<(&str, &DbResult)> = names.iter().zip(runs).map(|(n, (_, r))| (n.as_str(), *r)).collect();
    let mut grid = Grid::default();
    for c in db_figures::db_comparison_bars(&pairs) {
        let caption = format!("{} of each database run.", c.title);
        grid.bar("db-bars", c, &caption);
    }
    grid.line(
        "db-percentiles",
        db_figures::db_comparison_percentiles(&pairs),
        "new_order response time at each percentile, from each run's merged HDR histogram.",
    );
    grid.write(out, n);
    out.push_str("</section>\n");
}

/// One tpcc run: what ran, the cards, the figures, the transactions, the consistency conditions, the
/// devices under the database, warnings and facts.
fn db_section(out: &mut String, i: usize, d: &ReportDoc, r: &DbResult, n: &mut usize) {
    let _ = writeln!(out, "<section class=\"db\" id=\"db-{}\">", i + 1);
    let _ = writeln!(out, "<h2>Database run: {}</h2>", esc(&d.label));
    let what = format!("{:.2} s measured after {:.0} s ramp", r.run.measured_s, r.config.ramp_s);
    db_header(out, d, &r.header, &r.engine.name, &what, r.partial);
    db_cards(out, r);
    let mut grid = Grid::default();
    grid.bar(
        "db-tx-latency",
        db_figures::tx_latency_bars(&d.label, &r.run.transactions, "transaction"),
        "p50, p95 and p99 response time of each transaction type, from its first statement to its commit or rollback, retries included.",
    );
    grid.line(
        "db-tx-percentiles",
        db_figures::tx_percentile_chart(&d.label, r),
        "Each transaction type's response time at each percentile, from its merged HDR histogram.",
    );
    if let Some(c) = db_figures::device_bars(&d.label, &r.devices) {
        grid.bar("db-devices", c, "Reads, writes and flushes per second of each block device under the database over the measured window (/proc/diskstats deltas; other processes' I/O on the device included).");
    }
    for c in db_figures::over_time_charts(&d.label, r) {
        let (kind, caption) = if c.title.starts_with("NOPM") {
            ("db-nopm-over-time", "New orders per minute in each interval of the measured window (a checkpoint stall is a dip).")
        } else {
            ("db-device-latency-over-time", "Mean time a read and a write spent in the device under the database's file system, in each interval (/proc/diskstats; other processes' I/O on the device included).")
        };
        grid.line(kind, c, caption);
    }
    grid.write(out, n);
    out.push_str("<h3>Transactions</h3>\n");
    numbers_table(out, &crate::db_rows::TX_COLUMNS, &crate::db_rows::tx_rows(&r.run.transactions));
    consistency_table(out, r);
    devices_part(out, "Devices under the database (measured window)", &r.devices);
    database_io_part(out, r.database_io.as_ref());
    facts_part(out, &db_figures::facts(r));
    out.push_str("</section>\n");
}

/// A tpcc run's cards: NOPM, TPM, new-order p99, users, consistency, warnings.
fn db_cards(out: &mut String, r: &DbResult) {
    out.push_str("<div class=\"cards\">");
    let db_count = r.run.nopm_database.map(|v| format!("the database counted {}", format_rate(v, 0)));
    let nopm_sub = db_count.unwrap_or_else(|| "new orders per minute".into());
    card(out, "NOPM", &format_rate(r.run.nopm, 0), &nopm_sub, "");
    card(out, "TPM", &format_rate(r.run.tpm, 0), "transactions per minute", "");
    let p99 = r.run.transactions.iter().find(|t| t.name == crate::db_sweep::KNEE_TRANSACTION);
    if let Some(l) = p99.and_then(|t| t.latency_ns.as_ref()) {
        let p50 = format!("p50 {}", format_duration_ns(l.p50 as f64));
        card(out, "new_order p99", &format_duration_ns(l.p99 as f64), &p50, "");
    }
    card(
        out,
        "users",
        &r.config.users.to_string(),
        &crate::format::counted(r.config.warehouses as u64, "warehouse"),
        "",
    );
    let (text, class) = if r.consistent() { ("passed", "pass") } else { ("FAILED", "fail") };
    card(out, "consistency", text, &format!("{} conditions", r.consistency.len()), class);
    warnings_card(out, r.warnings.len());
    out.push_str("</div>\n");
}

pub(crate) fn warnings_card(out: &mut String, w: usize) {
    let (sub, class) = if w == 0 { ("none", "") } else { ("listed under Warnings", "warn") };
    card(out, "warnings", &w.to_string(), sub, class);
}

/// The TPC-C consistency conditions, checked after the run.
fn consistency_table(out: &mut String, r: &DbResult) {
    out.push_str("<h3>Consistency conditions (TPC-C clause 3.3.2), checked after the run</h3>\n<table><tr><th>condition</th><th>rule</th><th>result</th></tr>\n");
    for k in &r.consistency {
        let (text, class) = if k.passed {
            ("passed".to_string(), "pass")
        } else {
            let example = k.example.as_ref().map(|e| format!("; e.g. {e}")).unwrap_or_default();
            (format!("FAILED ({} violations{example})", k.violations), "fail")
        };
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td class=\"mono\">{}</td><td class=\"{class}\">{}</td></tr>",
            k.condition,
            esc(&k.rule),
            esc(&text)
        );
    }
    out.push_str("</table>\n");
}

/// A database sweep over users: cards, NOPM and response times against users with the knee, the points.
pub(crate) fn db_sweep_section(
    out: &mut String,
    d: &ReportDoc,
    s: &crate::db_sweep::DbSweepResult,
    n: &mut usize,
) {
    let _ =
        writeln!(out, "<section class=\"db-sweep\">\n<h2>Database sweep over users: {}</h2>", esc(&d.label));
    let engine = s.points.first().map_or("-", |p| p.result.engine.name.as_str());
    let users: Vec<String> = s.users.iter().map(u32::to_string).collect();
    db_header(out, d, &s.header, engine, &format!("users {}", users.join(", ")), s.partial);
    out.push_str("<div class=\"cards\">");
    if let Some(p) = s.peak() {
        card(
            out,
            "peak NOPM",
            &format_rate(p.result.run.nopm, 0),
            &format!("at {}", crate::format::counted(p.users as u64, "user")),
            "",
        );
    }
    if let Some(k) = &s.knee {
        let at = k.users.map_or("beyond the sweep".to_string(), |u| crate::format::counted(u as u64, "user"));
        let rule =
            format!("< {:.0} % NOPM for > {:.0} % {} p99", k.nopm_gain_pct, k.p99_growth_pct, k.transaction);
        card(out, "knee", &at, &rule, "");
    }
    let (text, class) = if s.consistent() { ("passed", "pass") } else { ("FAILED", "fail") };
    card(out, "consistency", text, "at every point", class);
    out.push_str("</div>\n");
    let mut grid = Grid::default();
    let captions = [
        ("db-sweep-nopm", "New orders and transactions per minute at each user count; a ring marks the knee (more users buy latency, not new orders)."),
        ("db-sweep-latency", "new_order p50, p95 and p99 response time at each user count."),
    ];
    for (c, (kind, caption)) in db_figures::db_sweep_charts(&d.label, s).into_iter().zip(captions) {
        grid.line(kind, c, caption);
    }
    grid.write(out, n);
    numbers_table(out, &crate::db_rows::SWEEP_COLUMNS, &crate::db_rows::sweep_rows(s, "knee"));
    let windows = crate::db_rows::sweep_window_rows(s);
    if !windows.is_empty() {
        out.push_str("<h3>Each point's window: over time, CPU, memory</h3>\n<table><tr>");
        for h in crate::db_rows::SWEEP_WINDOW_COLUMNS {
            let _ = write!(out, "<th>{}</th>", esc(h));
        }
        out.push_str("</tr>\n");
        for row in &windows {
            let cells: Vec<String> = row.iter().map(|c| format!("<td>{}</td>", esc(c))).collect();
            let _ = writeln!(out, "<tr>{}</tr>", cells.concat());
        }
        out.push_str("</table>\n");
    }
    out.push_str("</section>\n");
}

/// A tpch query set: cards (total, geometric mean, queries, read from the devices), each query's time as
/// bars and as a table with what the device read, the devices over the set, warnings and facts.
pub(crate) fn tpch_section(out: &mut String, d: &ReportDoc, r: &TpchResult, n: &mut usize) {
    let _ =
        writeln!(out, "<section class=\"db-tpch\">\n<h2>Analytics queries (tpch): {}</h2>", esc(&d.label));
    let c = &r.config;
    let what = format!("scale {} · {} run(s) of each query · {} start", c.scale, c.runs, c.start);
    db_header(out, d, &r.header, &r.engine.name, &what, r.partial);
    out.push_str("<div class=\"cards\">");
    let p = &r.power;
    let measured = format!("{} measured", format_duration_ns(p.measured_s * 1e9));
    card(out, "total query time", &format_duration_ns(p.total_s * 1e9), &measured, "");
    card(out, "geometric mean", &format_duration_ns(p.geomean_s * 1e9), "of the query times", "");
    card(out, "queries", &p.queries.to_string(), &format!("scale {}", c.scale), "");
    let read: u64 = r.devices.iter().map(|d| d.read_bytes).sum();
    card(out, "read", &crate::format::format_bytes(read), "from the devices, over the set", "");
    if let Some(dv) = &r.derived {
        card(out, "Power@Size", &format!("{:.1}", dv.power_at_size), &format!("over {}", dv.power_basis), "");
    }
    warnings_card(out, r.warnings.len());
    out.push_str("</div>\n");
    let mut grid = Grid::default();
    grid.bar(
        "db-tpch-queries",
        db_figures::query_time_bars(&d.label, r),
        "Each query's time (the median of its runs), from sending it to its last row, in the order they ran.",
    );
    if let Some(c) = db_figures::device_bars(&d.label, &r.devices) {
        grid.bar("db-devices", c, "Reads, writes and flushes per second of each block device under the database from the first query to the last (/proc/diskstats deltas).");
    }
    grid.write(out, n);
    out.push_str("<h3>Queries</h3>\n");
    if let Some(name) = crate::db_rows::query_device(r) {
        let _ =
            writeln!(out, "<p class=\"meta\">reads: the device {}, during each query's runs</p>", esc(name));
    }
    numbers_table(out, &crate::db_rows::QUERY_COLUMNS, &crate::db_rows::query_rows(r));
    let _ = writeln!(out, "<p>{}</p>", esc(&crate::db_rows::power_text(r)));
    if let Some(line) = crate::db_rows::derived_text(r) {
        let _ = writeln!(out, "<p class=\"derived\">{}</p>", esc(&line));
    }
    devices_part(out, "Devices under the database (all the queries)", &r.devices);
    database_io_part(out, r.database_io.as_ref());
    facts_part(out, &db_figures::tpch_facts(r));
    out.push_str("</section>\n");
}

/// A database copy: cards (time, MB/s, bytes and files), both sides' devices as bars and tables.
pub(crate) fn copy_section(out: &mut String, d: &ReportDoc, r: &CopyResult, n: &mut usize) {
    let _ = writeln!(out, "<section class=\"db-copy\">\n<h2>Database copy: {}</h2>", esc(&d.label));
    db_header(out, d, &r.header, &r.engine.name, &crate::db_rows::copy_source(r), false);
    let c = &r.copy;
    out.push_str("<div class=\"cards\">");
    card(out, "copy time", &format!("{:.2} s", c.seconds), "until durable on the destination", "");
    card(out, "MB/s", &format!("{:.1}", c.mb_per_s), &c.method, "");
    let files = format!("{} file(s)", crate::format::format_count(c.files));
    card(out, "copied", &crate::format::format_bytes(c.bytes), &files, "");
    warnings_card(out, r.warnings.len());
    out.push_str("</div>\n");
    let mut grid = Grid::default();
    let sides = [("source", &r.source_devices), ("destination", &r.destination_devices)];
    for (side, devices) in sides {
        if let Some(c) = db_figures::device_bars(&format!("{} ({side})", d.label), devices) {
            let caption = format!("Reads, writes and flushes per second of each block device under the {side} during the copy (/proc/diskstats deltas).");
            grid.bar("db-devices", c, &caption);
        }
    }
    grid.write(out, n);
    let _ = writeln!(out, "<p>{}</p>", esc(&crate::db_rows::copy_text(r)));
    devices_part(out, "Devices under the source (the copy)", &r.source_devices);
    devices_part(out, "Devices under the destination (the copy)", &r.destination_devices);
    database_io_part(out, r.database_io.as_ref());
    facts_part(out, &db_figures::copy_facts(r));
    out.push_str("</section>\n");
}
