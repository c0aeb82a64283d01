//! The printed analytics run (`iolab db tpch`): what ran, the build, how the query set started (cold or
//! warm), one line per query (its answer's rows, its time, and what the database's device read while it
//! ran), the set's total and geometric mean, and the devices over all the queries.

use std::fmt::Write as _;

use super::db::{build_line, devices_table, engine_lines};
use crate::db_tpch::TpchResult;
use crate::format::{format_bytes, format_count, format_duration_ns, table};

pub(crate) fn tpch(r: &TpchResult) -> String {
    let c = &r.config;
    let mut out = format!(
        "iolab {} · db {} · seed {} · {} · scale {} · {} run{} of each query, {} start{}\n",
        r.iolab_version,
        r.workload,
        r.seed,
        r.engine.name,
        c.scale,
        c.runs,
        if c.runs == 1 { "" } else { "s" },
        c.start,
        if r.partial { " (interrupted: partial)" } else { "" },
    );
    let _ = writeln!(out, "note    {}", r.disclaimer);
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
    let device = r.queries.iter().find_map(|q| q.devices.first()).map(|d| d.name.clone());
    let rows: Vec<Vec<String>> = r
        .queries
        .iter()
        .map(|q| {
            let d = device.as_ref().and_then(|n| q.devices.iter().find(|d| &d.name == n));
            let busy_s: f64 = q.runs_s.iter().sum();
            let mut row = vec![
                format!("Q{}", q.number),
                q.title.clone(),
                format_count(q.rows),
                format_duration_ns(q.seconds * 1e9),
            ];
            match d {
                Some(d) => row.extend([
                    format_count(d.reads),
                    format_bytes(d.read_bytes),
                    if busy_s > 0.0 {
                        format!("{:.1}", d.read_bytes as f64 / 1e6 / busy_s)
                    } else {
                        "-".into()
                    },
                ]),
                None => row.extend(["-".into(), "-".into(), "-".into()]),
            }
            row
        })
        .collect();
    if let Some(name) = &device {
        let _ = writeln!(out, "reads: the device {name}, during the query's runs");
    }
    out.push_str(&table(&["query", "", "rows", "time", "reads", "read", "read MB/s"], &rows));
    let p = &r.power;
    let _ = writeln!(
        out,
        "\npower   {} queries: {} in all, geometric mean {} ({} measured{})",
        p.queries,
        format_duration_ns(p.total_s * 1e9),
        format_duration_ns(p.geomean_s * 1e9),
        format_duration_ns(p.measured_s * 1e9),
        if c.runs > 1 { ", every run" } else { "" },
    );
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
