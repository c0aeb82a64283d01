//! The printed database run (`iolab db tpcc`): what ran, the build, NOPM and TPM as HammerDB prints them, a
//! table per transaction type (counts, rollbacks, retries, response-time percentiles), the consistency
//! conditions, and the block devices under the database.

use std::fmt::Write as _;

use crate::db::{DatabaseIo, DbBuild, DbEngine, DbHeader, DbResult, DeviceView};
use crate::format::{format_count, format_rate, table};

pub(crate) fn db(r: &DbResult) -> String {
    let e = &r.engine;
    let c = &r.config;
    let what = [e.name.clone(), format!("measured {:.2} s after {:.2} s ramp", r.run.measured_s, c.ramp_s)];
    let mut out = header_lines(&r.header, &what, r.partial);
    out.push_str(&engine_lines(e));
    let mix: Vec<String> = c.mix.iter().map(|m| format!("{} {}%", m.name, m.pct)).collect();
    let _ = writeln!(
        out,
        "load    {}, {} items, {}, no think time; mix {}",
        crate::format::counted(c.warehouses as u64, "warehouse"),
        format_count(c.items as u64),
        crate::format::counted(c.users as u64, "user"),
        mix.join(", "),
    );
    out.push_str(&build_line(&r.build));
    out.push('\n');
    let db_check = match r.run.nopm_database {
        Some(n) => format!(" (database: {})", format_rate(n, 0)),
        None => String::new(),
    };
    let _ =
        writeln!(out, "NOPM {}{db_check}   TPM {}", format_rate(r.run.nopm, 0), format_rate(r.run.tpm, 0));
    for (k, v) in crate::db_rows::window_facts(r) {
        let _ = writeln!(out, "{k:<11}{v}");
    }
    out.push('\n');
    out.push_str(&tx_table(r));
    if r.run.delivery_districts_skipped > 0 {
        let _ = writeln!(
            out,
            "delivery skipped {} districts with no new order waiting",
            format_count(r.run.delivery_districts_skipped)
        );
    }
    out.push('\n');
    for k in &r.consistency {
        let verdict =
            if k.passed { "passed".to_string() } else { format!("FAILED ({} violations)", k.violations) };
        let _ = writeln!(out, "consistency condition {}: {:<52} {verdict}", k.condition, k.rule);
        if let Some(x) = &k.example {
            let _ = writeln!(out, "        e.g. {x}");
        }
    }
    if !r.devices.is_empty() {
        out.push('\n');
        out.push_str(&device_table(r));
    }
    out.push_str(&database_io_text(r.database_io.as_ref()));
    for w in &r.warnings {
        let _ = writeln!(out, "warning: {w}");
    }
    out
}

fn tx_table(r: &DbResult) -> String {
    let mut header = crate::db_rows::TX_COLUMNS;
    header[0] = "";
    table(&header, &crate::db_rows::tx_rows(&r.run.transactions))
}

fn device_table(r: &DbResult) -> String {
    devices_table("devices under the database, measured window (/proc/diskstats):", &r.devices)
}

/// The devices' table under `title` (shared by every db document).
pub(crate) fn devices_table(title: &str, devices: &[DeviceView]) -> String {
    let mut out = format!("{title}\n");
    out.push_str(&table(&crate::db_rows::DEVICE_COLUMNS, &crate::db_rows::device_rows(devices)));
    out
}

/// The database's own I/O under the devices' table (shared by every db document that has it): its table
/// and what it cannot see, or why it was not counted; nothing where nothing counted it.
pub(crate) fn database_io_text(io: Option<&DatabaseIo>) -> String {
    let Some(io) = io else { return String::new() };
    let mut out = format!("{}\n", crate::db_rows::database_io_title(io));
    if io.source.is_some() {
        out.push_str(&table(&crate::db_rows::DATABASE_IO_COLUMNS, &crate::db_rows::database_io_rows(io)));
        let _ = writeln!(out, "not seen: {}", io.unseen);
    }
    out
}

/// The first lines of every db document: `iolab VERSION · db WORKLOAD · seed N · WHAT...`, marked when
/// interrupted, and the disclaimer's `note` line when the document has one.
pub(crate) fn header_lines(h: &DbHeader, what: &[String], partial: bool) -> String {
    let mut out = format!("iolab {} · db {} · seed {}", h.iolab_version, h.workload, h.seed);
    for w in what {
        let _ = write!(out, " · {w}");
    }
    out.push_str(if partial { " (interrupted: partial)\n" } else { "\n" });
    if let Some(d) = &h.disclaimer {
        let _ = writeln!(out, "note    {d}");
    }
    for (k, v) in h.env.as_ref().map(crate::db_rows::env_rows).unwrap_or_default() {
        let _ = writeln!(out, "{k:<8}{v}");
    }
    out
}

/// The engine's lines: where it ran, its size, a private server's account, its settings.
pub(crate) fn engine_lines(e: &DbEngine) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "engine  {} in {}", e.version, crate::db_rows::engine_place(e));
    if let Some(u) = &e.server_user {
        let _ = writeln!(out, "server  private, run as {u}, Unix socket only");
    }
    if !e.settings.is_empty() {
        let s: Vec<String> = e.settings.iter().map(|s| format!("{}={}", s.name, s.value)).collect();
        let _ = writeln!(out, "        {}", s.join(", "));
    }
    out
}

/// The build's line: rows, seconds, loaders.
pub(crate) fn build_line(b: &DbBuild) -> String {
    let rows: u64 = b.rows.iter().map(|t| t.rows).sum();
    format!(
        "build   {} rows in {:.2} s ({} loader{})\n",
        format_count(rows),
        b.seconds,
        b.loaders,
        if b.loaders == 1 { "" } else { "s" },
    )
}
