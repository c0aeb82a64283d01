//! The printed analytics run (`iolab db tpch`): what ran, the build, how the query set started (cold or
//! warm), one line per query (its answer's rows, its time, and what the database's device read while it
//! ran), the set's total and geometric mean, the refresh functions, the devices over the power test; then
//! the throughput test (each stream's time and order, the queries' times by stream, the refresh stream,
//! the devices over the test) and the derived figures, when they ran.

use std::fmt::Write as _;

use super::db::{build_line, database_io_text, devices_table, engine_lines, header_lines};
use crate::db_tpch::{TpchDerived, TpchRefresh, TpchResult, TpchThroughput};
use crate::format::{format_bytes, format_count, format_duration_ns, table};

pub(crate) fn tpch(r: &TpchResult) -> String {
    let c = &r.config;
    let what = [
        r.engine.name.clone(),
        format!("scale {}", c.scale),
        format!("{} run{} of each query, {} start", c.runs, if c.runs == 1 { "" } else { "s" }, c.start),
    ];
    let mut out = header_lines(&r.header, &what, r.partial);
    out.push_str(&engine_lines(&r.engine));
    out.push_str(&build_line(&r.build));
    match c.evicted_bytes {
        Some(b) if c.start == "cold" => {
            let _ = writeln!(
                out,
                "start   cold: {} of the database's files written back and dropped from the page cache first",
                format_bytes(b)
            );
        }
        _ => {
            let _ = writeln!(out, "start   {}: the page cache as the build left it", c.start);
        }
    }
    out.push('\n');
    if let Some(name) = crate::db_rows::query_device(r) {
        let _ = writeln!(out, "reads: the device {name}, during the query's runs");
    }
    out.push_str(&table(&crate::db_rows::QUERY_COLUMNS, &crate::db_rows::query_rows(r)));
    let _ = writeln!(out, "\npower   {}", crate::db_rows::power_text(r));
    let rewritten: Vec<String> =
        r.queries.iter().filter(|q| q.rewrite.is_some()).map(|q| format!("Q{}", q.number)).collect();
    if !rewritten.is_empty() {
        let _ = writeln!(out, "        rewritten for both engines (docs/DB.md): {}", rewritten.join(", "));
    }
    if let Some(pair) = &r.refresh {
        for f in [&pair.rf1, &pair.rf2] {
            out.push_str(&refresh_line(f));
        }
    }
    if !r.devices.is_empty() {
        out.push('\n');
        out.push_str(&devices_table(
            if r.refresh.is_some() {
                "devices under the database, from RF1 to RF2 (/proc/diskstats):"
            } else {
                "devices under the database, from the first query to the last (/proc/diskstats):"
            },
            &r.devices,
        ));
    }
    out.push_str(&database_io_text(r.database_io.as_ref()));
    if let Some(t) = &r.throughput {
        out.push_str(&throughput(t));
    }
    if let Some(d) = &r.derived {
        out.push_str(&derived(d));
    }
    for w in &r.warnings {
        let _ = writeln!(out, "warning: {w}");
    }
    out
}

/// A refresh function: what it inserted or deleted, its time, and what the device read and wrote.
fn refresh_line(f: &TpchRefresh) -> String {
    let verb = if f.function == "RF1" { "inserted" } else { "deleted" };
    let device = f.devices.first().map_or(String::new(), |d| {
        format!(
            ", {} read, {} written on {}",
            format_bytes(d.read_bytes),
            format_bytes(d.write_bytes),
            d.name
        )
    });
    format!(
        "refresh {} (pair {}): {} orders and {} lines {verb} in {}, one transaction{device}\n",
        f.function,
        f.pair,
        format_count(f.orders),
        format_count(f.lineitems),
        format_duration_ns(f.seconds * 1e9),
    )
}

/// The throughput test: its elapsed time, each stream's time and order, a table of the queries' times
/// by stream, the refresh stream and the devices over the test.
fn throughput(t: &TpchThroughput) -> String {
    let mut out = format!(
        "\nthroughput test: {} query stream{} at once{}, {} elapsed (order: the spec's Appendix A)\n",
        t.streams,
        if t.streams == 1 { "" } else { "s" },
        if t.refresh.is_empty() { "" } else { " and a refresh stream" },
        format_duration_ns(t.elapsed_s * 1e9),
    );
    for s in &t.query_streams {
        let order: Vec<String> = s.queries.iter().map(|q| q.number.to_string()).collect();
        let _ = writeln!(
            out,
            "stream {}: {} ({})",
            s.stream,
            format_duration_ns(s.seconds * 1e9),
            order.join(" ")
        );
    }
    let mut numbers: Vec<u32> =
        t.query_streams.iter().flat_map(|s| s.queries.iter().map(|q| q.number)).collect();
    numbers.sort_unstable();
    numbers.dedup();
    let rows: Vec<Vec<String>> = numbers
        .iter()
        .map(|n| {
            let mut row = vec![format!("Q{n}")];
            row.extend(t.query_streams.iter().map(|s| {
                s.queries
                    .iter()
                    .find(|q| q.number == *n)
                    .map_or("-".into(), |q| format_duration_ns(q.seconds * 1e9))
            }));
            row
        })
        .collect();
    let heads: Vec<String> = t.query_streams.iter().map(|s| format!("stream {}", s.stream)).collect();
    let mut header = vec!["query"];
    header.extend(heads.iter().map(String::as_str));
    out.push_str(&table(&header, &rows));
    for f in &t.refresh {
        out.push_str(&refresh_line(f));
    }
    if !t.devices.is_empty() {
        out.push_str(&devices_table("devices under the database over the throughput test:", &t.devices));
    }
    out
}

/// TPC-H's figures, computed from this run and named as derived.
fn derived(d: &TpchDerived) -> String {
    let mut out = format!("\nderived ({})\n", d.note);
    let _ = writeln!(
        out,
        "        geometric mean of the 22 query times {}",
        format_duration_ns(d.geomean_s * 1e9)
    );
    let _ = writeln!(out, "        Power@Size {:.1} (over {})", d.power_at_size, d.power_basis);
    if let (Some(t), Some(q)) = (d.throughput_at_size, d.qphh_at_size) {
        let _ = writeln!(out, "        Throughput@Size {t:.1}");
        let _ = writeln!(out, "        QphH@Size {q:.1} (the composite, √(Power × Throughput))");
    }
    out
}
