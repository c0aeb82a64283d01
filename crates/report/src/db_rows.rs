//! The tables of database runs (`iolab db`) as rows of text, one place for every rendering: the printed
//! result, the HTML page and the Markdown report show the same transactions, devices, sweep points, tpch
//! queries and copy facts.

use crate::db::{DatabaseIo, DbEngine, DeviceView, TxResult};
use crate::db_copy::CopyResult;
use crate::db_sweep::{DbSweepResult, KNEE_TRANSACTION};
use crate::db_tpch::TpchResult;
use crate::format::{format_bytes, format_count, format_duration_ns, format_rate};

/// Where an engine's files were, and how much they took: `/mnt/t/db, 37.2 MiB`, or `the server at URL`.
pub(crate) fn engine_place(e: &DbEngine) -> String {
    let place = match (&e.dir, &e.url) {
        (_, Some(url)) => format!("the server at {url}"),
        (Some(dir), None) => dir.clone(),
        (None, None) => "-".into(),
    };
    let size = e.size_bytes.map(|b| format!(", {}", format_bytes(b))).unwrap_or_default();
    format!("{place}{size}")
}

/// A database document's environment as (name, value) rows, one place for every rendering: `machine` (host,
/// kernel, CPUs, memory), then `storage` for its directory (file system, mount options, device, write cache).
pub(crate) fn env_rows(e: &crate::Env) -> Vec<(&'static str, String)> {
    let machine = format!(
        "{} · {} · {} × {} · {} memory",
        e.hostname,
        e.kernel,
        e.cpu_count,
        e.cpu_model,
        format_bytes(e.mem_total_bytes)
    );
    let mut out = vec![("machine", machine)];
    for t in &e.targets {
        let fs = t.fs_type.as_deref().unwrap_or("unknown file system");
        let options = t.mount_options.as_ref().map(|o| format!(" ({o})")).unwrap_or_default();
        let device = match &t.device_model {
            Some(d) => format!("on {d}, write cache: {}", t.write_cache.as_deref().unwrap_or("unknown")),
            None => "on no block device".into(),
        };
        out.push(("storage", format!("{}: {fs}{options} {device}", t.name)));
    }
    out
}

/// The columns of [`tx_rows`].
pub(crate) const TX_COLUMNS: [&str; 11] = [
    "transaction",
    "committed",
    "rolled back",
    "retries",
    "failed",
    "per min",
    "mean",
    "p50",
    "p95",
    "p99",
    "max",
];

/// One row per transaction type (or operation, for a key-value workload): counts, rate, response times.
pub(crate) fn tx_rows(transactions: &[TxResult]) -> Vec<Vec<String>> {
    transactions
        .iter()
        .map(|t| {
            let l = t.latency_ns.as_ref();
            let ns = |v: Option<u64>| v.map_or("-".into(), |v| format_duration_ns(v as f64));
            vec![
                t.name.clone(),
                format_count(t.committed),
                format_count(t.rolled_back),
                format_count(t.retries),
                format_count(t.failed),
                format_rate(t.per_minute, 0),
                l.map_or("-".into(), |l| format_duration_ns(l.mean)),
                ns(l.map(|l| l.p50)),
                ns(l.map(|l| l.p95)),
                ns(l.map(|l| l.p99)),
                ns(l.map(|l| l.max)),
            ]
        })
        .collect()
}

/// The columns of [`device_rows`].
pub(crate) const DEVICE_COLUMNS: [&str; 13] = [
    "device",
    "read/s",
    "write/s",
    "flush/s",
    "discards",
    "read",
    "written",
    "read size",
    "write size",
    "read lat",
    "write lat",
    "flush lat",
    "busy",
];

/// One row per block device under the database: rates, bytes, sizes, times per request, busy share.
pub(crate) fn device_rows(devices: &[DeviceView]) -> Vec<Vec<String>> {
    let opt = |v: Option<f64>, f: &dyn Fn(f64) -> String| v.map_or("-".into(), f);
    devices
        .iter()
        .map(|d| {
            vec![
                format!("{} ({})", d.name, d.role),
                format_rate(d.read_iops, 1),
                format_rate(d.write_iops, 1),
                format_rate(d.flushes_per_s, 1),
                format_count(d.discards),
                format_bytes(d.read_bytes),
                format_bytes(d.write_bytes),
                opt(d.read_mean_bytes, &|b| format_bytes(b.round() as u64)),
                opt(d.write_mean_bytes, &|b| format_bytes(b.round() as u64)),
                opt(d.read_mean_ms, &|m| format!("{m:.2} ms")),
                opt(d.write_mean_ms, &|m| format!("{m:.2} ms")),
                opt(d.flush_mean_ms, &|m| format!("{m:.2} ms")),
                format!("{:.0}%", d.busy * 100.0),
            ]
        })
        .collect()
}

/// The columns of [`database_io_rows`].
pub(crate) const DATABASE_IO_COLUMNS: [&str; 8] =
    ["disk", "read/s", "write/s", "discards", "read", "written", "disk read", "disk written"];

/// One row per whole disk: what the database issued to it beside what the disk did in all.
pub(crate) fn database_io_rows(io: &DatabaseIo) -> Vec<Vec<String>> {
    let bytes = |b: Option<u64>| b.map_or("-".into(), format_bytes);
    io.disks
        .iter()
        .map(|d| {
            vec![
                d.name.clone(),
                format_rate(d.read_iops, 1),
                format_rate(d.write_iops, 1),
                d.discards.map_or("-".into(), format_count),
                format_bytes(d.read_bytes),
                format_bytes(d.write_bytes),
                bytes(d.device_read_bytes),
                bytes(d.device_write_bytes),
            ]
        })
        .collect()
}

/// The title over the database's own I/O: whose, and how counted or why not.
pub(crate) fn database_io_title(io: &DatabaseIo) -> String {
    match (&io.source, &io.unmeasured) {
        (Some(source), _) => format!("the database's own I/O, same window ({}; {source}):", io.whose),
        (None, why) => format!(
            "the database's own I/O ({}): not measured: {}",
            io.whose,
            why.as_deref().unwrap_or("no reason given")
        ),
    }
}

/// The columns of [`sweep_rows`].
pub(crate) const SWEEP_COLUMNS: [&str; 12] = [
    "users",
    "NOPM",
    "TPM",
    "new_order p50",
    "p95",
    "p99",
    "retries",
    "failed",
    "consistency",
    "dev write/s",
    "flush/s",
    "mark",
];

/// One row per point of a sweep over users; the knee's row is marked `knee_mark`, the peak's `peak`.
pub(crate) fn sweep_rows(s: &DbSweepResult, knee_mark: &str) -> Vec<Vec<String>> {
    let knee = s.knee.as_ref().and_then(|k| k.point);
    let peak = s.peak().map(|p| p.users);
    s.points
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let r = &p.result;
            let no = r.run.transactions.iter().find(|t| t.name == KNEE_TRANSACTION);
            let lat = |f: fn(&iolab_stats::LatSummary) -> u64| {
                no.and_then(|t| t.latency_ns.as_ref()).map_or("-".into(), |l| format_duration_ns(f(l) as f64))
            };
            let sum = |f: fn(&crate::db::DeviceView) -> f64| r.devices.iter().map(f).sum::<f64>();
            let mut mark = Vec::new();
            if knee == Some(i) {
                mark.push(knee_mark);
            }
            if peak == Some(p.users) && s.points.len() > 1 {
                mark.push("peak");
            }
            if r.partial {
                mark.push("partial");
            }
            vec![
                p.users.to_string(),
                format_rate(r.run.nopm, 0),
                format_rate(r.run.tpm, 0),
                lat(|l| l.p50),
                lat(|l| l.p95),
                lat(|l| l.p99),
                format_count(r.run.transactions.iter().map(|t| t.retries).sum()),
                format_count(r.run.transactions.iter().map(|t| t.failed).sum()),
                if r.consistent() { "passed".into() } else { "FAILED".into() },
                if r.devices.is_empty() { "-".into() } else { format_rate(sum(|d| d.write_iops), 0) },
                if r.devices.is_empty() { "-".into() } else { format_rate(sum(|d| d.flushes_per_s), 0) },
                mark.join(", "),
            ]
        })
        .collect()
}

/// The columns of [`query_rows`].
pub(crate) const QUERY_COLUMNS: [&str; 7] = ["query", "", "rows", "time", "reads", "read", "read MB/s"];

/// The device whose reads [`query_rows`] shows: the first device any query saw.
pub(crate) fn query_device(r: &TpchResult) -> Option<&str> {
    r.queries.iter().find_map(|q| q.devices.first()).map(|d| d.name.as_str())
}

/// One row per tpch query, in the order they ran: its number and title, rows, time, and what
/// [`query_device`] read during its runs (reads, bytes, MB/s over the runs' time).
pub(crate) fn query_rows(r: &TpchResult) -> Vec<Vec<String>> {
    let device = query_device(r);
    r.queries
        .iter()
        .map(|q| {
            let d = device.and_then(|n| q.devices.iter().find(|d| d.name == n));
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
        .collect()
}

/// The power line's figures: `22 queries: 8.53 s in all, geometric mean 236 ms (8.53 s measured)`.
pub(crate) fn power_text(r: &TpchResult) -> String {
    let p = &r.power;
    format!(
        "{} queries: {} in all, geometric mean {} ({} measured{})",
        p.queries,
        format_duration_ns(p.total_s * 1e9),
        format_duration_ns(p.geomean_s * 1e9),
        format_duration_ns(p.measured_s * 1e9),
        if r.config.runs > 1 { ", every run" } else { "" },
    )
}

/// TPC-H's derived figures in a line, named as derived: `derived from TPC-H, not comparable with published
/// TPC results: Power@Size 464.5 (over 22 queries (no refresh)); Throughput@Size ...; QphH@Size ...`. None
/// for a set without them (not the 22 queries).
pub(crate) fn derived_text(r: &TpchResult) -> Option<String> {
    let d = r.derived.as_ref()?;
    let mut line = format!("{}: Power@Size {:.1} (over {})", d.note, d.power_at_size, d.power_basis);
    if let (Some(t), Some(q)) = (d.throughput_at_size, d.qphh_at_size) {
        line.push_str(&format!("; Throughput@Size {t:.1}; QphH@Size {q:.1}"));
    }
    Some(line)
}

/// What a copy copied: `tpcc, 4 warehouses, 100,000 items` or `tpch, scale 0.1`.
pub(crate) fn copy_source(r: &CopyResult) -> String {
    let s = &r.source;
    match (s.warehouses, s.scale) {
        (Some(w), _) => format!(
            "tpcc, {w} warehouse{}, {} items",
            if w == 1 { "" } else { "s" },
            format_count(s.items.unwrap_or(0) as u64)
        ),
        (None, Some(sf)) => format!("tpch, scale {sf}"),
        _ => s.workload.clone(),
    }
}

/// The copy's line: `pg_basebackup to DIR: 2.77 s, 467 MiB in 994 files, 177.0 MB/s`.
pub(crate) fn copy_text(r: &CopyResult) -> String {
    let c = &r.copy;
    format!(
        "{} to {}: {:.2} s, {} in {} file{}, {:.1} MB/s",
        c.method,
        c.to,
        c.seconds,
        format_bytes(c.bytes),
        format_count(c.files),
        if c.files == 1 { "" } else { "s" },
        c.mb_per_s,
    )
}

/// The columns of [`interval_rows`].
pub(crate) const INTERVAL_COLUMNS: [&str; 8] =
    ["interval", "NOPM", "TPM", "read/s", "write/s", "read mean", "write mean", "write MiB/s"];

/// The intervals at most this many rows show whole; beyond, the worst ones by NOPM.
pub(crate) const INTERVAL_ROWS: usize = 60;

/// A tpcc window's intervals, a row each (all of them up to [`INTERVAL_ROWS`], else the
/// [`INTERVAL_ROWS`] of lowest NOPM, in time order), and what the rows leave out (empty when nothing).
pub(crate) fn interval_rows(s: &crate::db_window::DbIntervals) -> (Vec<Vec<String>>, String) {
    let mut shown: Vec<&crate::db_window::DbInterval> = s.intervals.iter().collect();
    let mut left = String::new();
    if shown.len() > INTERVAL_ROWS {
        shown.sort_by(|a, b| a.nopm.total_cmp(&b.nopm));
        shown.truncate(INTERVAL_ROWS);
        shown.sort_by(|a, b| a.start_s.total_cmp(&b.start_s));
        left = format!(
            "the {INTERVAL_ROWS} intervals of lowest NOPM of {}, in time order (the JSON has them all)",
            s.intervals.len()
        );
    }
    let ms = |m: Option<f64>| m.map_or("-".to_string(), |m| format_duration_ns(m * 1e6));
    let rows = shown
        .iter()
        .map(|i| {
            vec![
                crate::db_window::span(i),
                format_rate(i.nopm, 0),
                format_rate(i.tpm, 0),
                format_rate(i.read_iops, 1),
                format_rate(i.write_iops, 1),
                ms(i.read_mean_ms),
                ms(i.write_mean_ms),
                format!("{:.1}", i.write_mib_s),
            ]
        })
        .collect();
    (rows, left)
}

/// What a DBA reads beside the totals: the window over time, the CPU, the database against memory (each
/// where the document has it).
/// The columns of [`sweep_window_rows`].
pub(crate) const SWEEP_WINDOW_COLUMNS: [&str; 4] = ["users", "over time", "CPU", "memory"];

/// Each point of a sweep over users with its window's facts ([`window_facts`]), a row each; none for points
/// of older documents, which have none.
pub(crate) fn sweep_window_rows(s: &DbSweepResult) -> Vec<Vec<String>> {
    let rows = s.points.iter().map(|p| {
        let facts = window_facts(&p.result);
        let get = |k: &str| facts.iter().find(|(n, _)| *n == k).map_or("-".to_string(), |(_, v)| v.clone());
        (!facts.is_empty()).then(|| vec![p.users.to_string(), get("over time"), get("CPU"), get("memory")])
    });
    rows.flatten().collect()
}

pub(crate) fn window_facts(r: &crate::db::DbResult) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    if let Some(s) = &r.run.intervals {
        out.push(("over time", s.summary(r.run.nopm)));
    }
    if let Some(c) = &r.run.cpu {
        out.push(("CPU", c.says.clone()));
    }
    if let Some(m) = &r.memory_fit {
        out.push(("memory", m.says.clone()));
    }
    out
}
