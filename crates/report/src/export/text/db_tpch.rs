//! The printed analytics run (`iolab db tpch`): what ran, the build, how the query set started (cold or
//! warm), one line per query (its answer's rows, its time, and what the database's device read while it
//! ran), the set's total and geometric mean, and the devices over all the queries.

use std::fmt::Write as _;

use super::db::{build_line, devices_table, engine_lines, header_lines};
use crate::db_tpch::TpchResult;
use crate::format::{format_bytes, table};

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
    if !r.devices.is_empty() {
        out.push('\n');
        out.push_str(&devices_table(
            "devices under the database, from the first query to the last (/proc/diskstats):",
            &r.devices,
        ));
    }
    for w in &r.warnings {
        let _ = writeln!(out, "warning: {w}");
    }
    out
}
