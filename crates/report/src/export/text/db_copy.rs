//! The printed snapshot copy (`iolab db copy`): the database copied, how, how long, how many bytes at what
//! rate, and what the devices under the source and under the destination did meanwhile.

use std::fmt::Write as _;

use super::db::{devices_table, engine_lines, header_lines};
use crate::db_copy::CopyResult;
use crate::format::{format_bytes, format_count};

pub(crate) fn copy(r: &CopyResult) -> String {
    let s = &r.source;
    let what = crate::db_rows::copy_source(r);
    let mut out = header_lines(&r.header, &[r.engine.name.clone(), what], false);
    out.push_str(&engine_lines(&r.engine));
    let rows: u64 = s.build.rows.iter().map(|t| t.rows).sum();
    let _ = writeln!(
        out,
        "build   {} rows in {:.2} s; the database is {}",
        format_count(rows),
        s.build.seconds,
        format_bytes(s.size_bytes)
    );
    let _ = match s.evicted_bytes {
        Some(b) => writeln!(
            out,
            "source  cold: {} written back and dropped from the page cache before the copy",
            format_bytes(b)
        ),
        None => writeln!(out, "source  warm: left in the page cache as the build left it (--warm)"),
    };
    let _ = writeln!(out, "\ncopy    {} (until durable on the destination)", crate::db_rows::copy_text(r));
    if !r.source_devices.is_empty() {
        out.push('\n');
        out.push_str(&devices_table(
            "devices under the source, during the copy (/proc/diskstats):",
            &r.source_devices,
        ));
    }
    if !r.destination_devices.is_empty() {
        out.push('\n');
        out.push_str(&devices_table(
            "devices under the destination, during the copy (/proc/diskstats):",
            &r.destination_devices,
        ));
    }
    out.push_str(&super::db::database_io_text(r.database_io.as_ref()));
    for w in &r.warnings {
        let _ = writeln!(out, "warning: {w}");
    }
    out
}
