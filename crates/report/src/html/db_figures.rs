//! The figures of database runs (`iolab db`), from their documents: per run the response times of each
//! transaction type (bars of p50, p95 and p99; percentile curves from the merged HDR histograms) and what the
//! devices under the database did; several runs side by side (NOPM, TPM, new-order p99); a sweep over users,
//! NOPM and new-order response times against users with the knee marked. The HTML page draws them and the
//! Markdown report prints the same numbers as tables.

use super::charts::{Annotation, BarChart, BarSet, ChartAxis, Fmt, Legend, LineChart, Series};
use super::figures::{curve_from_histogram, curve_from_summary, one_bar_each, percentile_chart};
use crate::db::{DbBuild, DbEngine, DbResult, TxResult};
use crate::db_copy::CopyResult;
use crate::db_sweep::{DbSweepResult, KNEE_TRANSACTION};
use crate::db_tpch::TpchResult;
use iolab_stats::{LatSummary, LatencyHistogram};

/// A whole-nanosecond field of a latency summary (p50, p95, p99).
type NsField = fn(&LatSummary) -> u64;

/// The response-time columns of a transaction: name and field.
pub(crate) const TX_PERCENTILES: [(&str, NsField); 3] =
    [("p50", |l| l.p50), ("p95", |l| l.p95), ("p99", |l| l.p99)];

/// Each transaction type's (or, `noun` says, operation's) p50, p95 and p99 response time, side by side.
pub(crate) fn tx_latency_bars(label: &str, transactions: &[TxResult], noun: &str) -> BarChart {
    let names: Vec<String> = transactions.iter().map(|t| t.name.clone()).collect();
    let sets = TX_PERCENTILES
        .iter()
        .map(|(name, f)| BarSet {
            name: name.to_string(),
            values: transactions
                .iter()
                .map(|t| t.latency_ns.as_ref().map_or(f64::NAN, |l| f(l) as f64))
                .collect(),
        })
        .collect();
    BarChart {
        title: format!("Response time per {noun}: {label}"),
        y_desc: "response time".into(),
        names,
        sets,
        fmt: Fmt::Nanos,
    }
}

/// The percentile curve of each transaction type, from its histogram (its summary when that does not decode).
pub(crate) fn tx_percentile_chart(label: &str, r: &DbResult) -> LineChart {
    let series = r
        .run
        .transactions
        .iter()
        .filter(|t| t.committed + t.rolled_back > 0)
        .map(|t| {
            let points = match LatencyHistogram::from_base64(&t.histogram) {
                Ok(h) if h.count() > 0 => curve_from_histogram(&h),
                _ => t
                    .latency_ns
                    .as_ref()
                    .map_or_else(Vec::new, |l| curve_from_summary(l, t.committed + t.rolled_back)),
            };
            Series::new(t.name.clone(), points)
        })
        .collect();
    percentile_chart(format!("Transaction response-time percentiles: {label}"), series)
}

/// What each device under a database did per second: reads, writes and flushes.
pub(crate) fn device_bars(label: &str, devices: &[crate::db::DeviceView]) -> Option<BarChart> {
    if devices.is_empty() {
        return None;
    }
    let set = |name: &str, f: fn(&crate::db::DeviceView) -> f64| BarSet {
        name: name.into(),
        values: devices.iter().map(f).collect(),
    };
    Some(BarChart {
        title: format!("Devices under the database: {label}"),
        y_desc: "requests per second".into(),
        names: devices.iter().map(|d| format!("{} ({})", d.name, d.role)).collect(),
        sets: vec![
            set("reads/s", |d| d.read_iops),
            set("writes/s", |d| d.write_iops),
            set("flushes/s", |d| d.flushes_per_s),
        ],
        fmt: Fmt::Count,
    })
}

/// Each tpch query's time (the median of its runs), in the order they ran.
pub(crate) fn query_time_bars(label: &str, r: &TpchResult) -> BarChart {
    BarChart {
        title: format!("Query times: {label}"),
        y_desc: "time".into(),
        names: r.queries.iter().map(|q| format!("Q{}", q.number)).collect(),
        sets: vec![BarSet {
            name: "time".into(),
            values: r.queries.iter().map(|q| q.seconds * 1e9).collect(),
        }],
        fmt: Fmt::Nanos,
    }
}

/// The new-order response time at `f` of a run, ns (NaN without one).
fn knee_tx(r: &DbResult, f: fn(&LatSummary) -> u64) -> f64 {
    r.run
        .transactions
        .iter()
        .find(|t| t.name == KNEE_TRANSACTION)
        .and_then(|t| t.latency_ns.as_ref())
        .map_or(f64::NAN, |l| f(l) as f64)
}

/// Several database runs side by side: NOPM, TPM and new-order p99 per run.
pub(crate) fn db_comparison_bars(runs: &[(&str, &DbResult)]) -> Vec<BarChart> {
    let names: Vec<String> = runs.iter().map(|(l, _)| l.to_string()).collect();
    let one = |title: &str, y_desc: &str, values: Vec<f64>, fmt: Fmt| {
        one_bar_each(&names, title, y_desc, values, fmt)
    };
    vec![
        one(
            "NOPM per run",
            "new orders per minute",
            runs.iter().map(|(_, r)| r.run.nopm).collect(),
            Fmt::Count,
        ),
        one(
            "TPM per run",
            "transactions per minute",
            runs.iter().map(|(_, r)| r.run.tpm).collect(),
            Fmt::Count,
        ),
        one(
            "new_order p99 per run",
            "new_order p99 response time",
            runs.iter().map(|(_, r)| knee_tx(r, |l| l.p99)).collect(),
            Fmt::Nanos,
        ),
    ]
}

/// The new-order percentile curves of several runs, overlaid.
pub(crate) fn db_comparison_percentiles(runs: &[(&str, &DbResult)]) -> LineChart {
    let series = runs
        .iter()
        .map(|(l, r)| {
            let t = r.run.transactions.iter().find(|t| t.name == KNEE_TRANSACTION);
            let points = t
                .and_then(|t| LatencyHistogram::from_base64(&t.histogram).ok())
                .map_or_else(Vec::new, |h| curve_from_histogram(&h));
            Series::new(*l, points)
        })
        .collect();
    percentile_chart("new_order response-time percentiles, all runs".into(), series)
}

/// A sweep over users: NOPM and TPM against users (the knee marked), and new-order p50, p95 and p99 against
/// users.
pub(crate) fn db_sweep_charts(label: &str, s: &DbSweepResult) -> Vec<LineChart> {
    let xs: Vec<f64> = s.points.iter().map(|p| p.users as f64).collect();
    let line = |name: &str, f: &dyn Fn(&DbResult) -> f64| {
        Series::new(
            name,
            s.points.iter().map(|p| (p.users as f64, f(&p.result))).filter(|p| p.1.is_finite()).collect(),
        )
    };
    let rates = vec![line("NOPM", &|r| r.run.nopm), line("TPM", &|r| r.run.tpm)];
    let lat: Vec<Series> = TX_PERCENTILES
        .iter()
        .map(|(n, f)| line(&format!("{KNEE_TRANSACTION} {n}"), &|r| knee_tx(r, *f)))
        .collect();
    let knee = s.knee.as_ref().and_then(|k| k.point).and_then(|i| s.points.get(i));
    let mark = |y: f64| {
        knee.map(|p| Annotation {
            at: (p.users as f64, y),
            label: format!("knee: {}", crate::format::counted(p.users as u64, "user")),
        })
    };
    let x = ChartAxis::through(&xs, Fmt::Plain);
    let x_desc = format!("users{}", if x.is_log() { " (log scale)" } else { "" });
    let ys = |series: &[Series]| -> Vec<f64> {
        series.iter().flat_map(|s| s.points.iter().map(|p| p.1)).collect()
    };
    let lat_axis = ChartAxis::auto(&ys(&lat), Fmt::Nanos);
    vec![
        LineChart {
            title: format!("NOPM and TPM against users: {label}"),
            x_desc: x_desc.clone(),
            y_desc: "per minute".into(),
            x: x.clone(),
            y: ChartAxis::linear(&ys(&rates), true, Fmt::Count),
            marks: mark(knee.map_or(0.0, |p| p.result.run.nopm)).into_iter().collect(),
            series: rates,
            limits: Vec::new(),
            legend: Legend::LowerRight,
        },
        LineChart {
            title: format!("{KNEE_TRANSACTION} response time against users: {label}"),
            x_desc,
            y_desc: format!("response time{}", if lat_axis.is_log() { " (log scale)" } else { "" }),
            x,
            y: lat_axis,
            // The ring alone: the NOPM chart names the knee, and a label here can meet the upper-left
            // legend when the knee is the first point.
            marks: mark(knee.map_or(0.0, |p| knee_tx(&p.result, |l| l.p99)))
                .map(|m| Annotation { label: String::new(), ..m })
                .into_iter()
                .collect(),
            series: lat,
            limits: Vec::new(),
            legend: Legend::UpperLeft,
        },
    ]
}

/// The engine's facts: where it ran, its settings, a private server's account.
fn engine_facts(e: &DbEngine) -> Vec<(&'static str, String)> {
    let settings: Vec<String> = e.settings.iter().map(|s| format!("{}={}", s.name, s.value)).collect();
    let mut out = vec![
        ("engine", format!("{} in {}", e.version, crate::db_rows::engine_place(e))),
        ("settings", settings.join(", ")),
    ];
    if let Some(u) = &e.server_user {
        out.insert(1, ("server", format!("private, run as {u}, Unix socket only")));
    }
    out
}

/// The build's fact: rows, seconds, loaders.
fn build_fact(b: &DbBuild) -> (&'static str, String) {
    let rows: u64 = b.rows.iter().map(|t| t.rows).sum();
    let loaders = if b.loaders == 1 { "" } else { "s" };
    (
        "build",
        format!(
            "{} rows in {:.2} s ({} loader{loaders})",
            crate::format::format_count(rows),
            b.seconds,
            b.loaders
        ),
    )
}

/// The facts of a run as (name, value) rows: engine, where, the load, the build, NOPM and TPM.
pub(crate) fn facts(r: &DbResult) -> Vec<(&'static str, String)> {
    use crate::format::{format_count, format_rate};
    let c = &r.config;
    let mut out = engine_facts(&r.engine);
    out.push((
        "load",
        format!(
            "{} warehouse{}, {} items, {} user{}, no think time, {:.0} s ramp, {:.2} s measured",
            c.warehouses,
            if c.warehouses == 1 { "" } else { "s" },
            format_count(c.items as u64),
            c.users,
            if c.users == 1 { "" } else { "s" },
            c.ramp_s,
            r.run.measured_s
        ),
    ));
    out.push(build_fact(&r.build));
    let db_count = r.run.nopm_database.map(|n| format!(" (the database's count: {})", format_rate(n, 0)));
    out.push(("NOPM", format!("{}{}", format_rate(r.run.nopm, 0), db_count.unwrap_or_default())));
    out.push(("TPM", format_rate(r.run.tpm, 0)));
    out.extend(crate::db_rows::window_facts(r));
    out
}

/// The facts of a tpch query set: engine, settings, the load, the build, the start, the power line.
pub(crate) fn tpch_facts(r: &TpchResult) -> Vec<(&'static str, String)> {
    let c = &r.config;
    let mut out = engine_facts(&r.engine);
    let order: Vec<String> = c.order.iter().map(|q| format!("Q{q}")).collect();
    out.push((
        "load",
        format!("scale {}, {} run(s) of each query, order {}", c.scale, c.runs, order.join(" ")),
    ));
    out.push(build_fact(&r.build));
    let start = match c.evicted_bytes {
        Some(b) => {
            format!("{}: {} dropped from the page cache first", c.start, crate::format::format_bytes(b))
        }
        None => c.start.clone(),
    };
    out.push(("start", start));
    out.push(("power", crate::db_rows::power_text(r)));
    out
}

/// The facts of a copy: engine, settings, the source database, the build, the copy.
pub(crate) fn copy_facts(r: &CopyResult) -> Vec<(&'static str, String)> {
    let s = &r.source;
    let mut out = engine_facts(&r.engine);
    let size = crate::format::format_bytes(s.size_bytes);
    out.push(("source", format!("{}, {size}", crate::db_rows::copy_source(r))));
    out.push(build_fact(&s.build));
    let start = match s.evicted_bytes {
        Some(b) => format!("cold: {} dropped from the page cache first", crate::format::format_bytes(b)),
        None => "warm (--warm)".into(),
    };
    out.push(("start", start));
    out.push(("copy", crate::db_rows::copy_text(r)));
    out
}

/// A tpcc run's window over time: NOPM per interval, and the device's mean read and write latency per
/// interval (a checkpoint stall is an interval of low NOPM and long writes); none without intervals.
pub(crate) fn over_time_charts(label: &str, r: &DbResult) -> Vec<LineChart> {
    let Some(s) = r.run.intervals.as_ref().filter(|s| !s.intervals.is_empty()) else { return Vec::new() };
    let end = |i: &crate::db_window::DbInterval| i.start_s + i.seconds;
    let t: Vec<f64> = s.intervals.iter().map(end).collect();
    let x_desc =
        format!("time since the window opened (s; {} s intervals)", super::charts::compact(s.interval_s));
    let nopm = vec![Series::new("NOPM", s.intervals.iter().map(|i| (end(i), i.nopm)).collect())];
    let nopm_y: Vec<f64> = s.intervals.iter().map(|i| i.nopm).collect();
    let mut charts = vec![LineChart {
        title: format!("NOPM per interval: {label}"),
        x_desc: x_desc.clone(),
        y_desc: "new orders per minute".into(),
        x: ChartAxis::linear_x(&t, Fmt::Seconds),
        y: ChartAxis::linear(&nopm_y, true, Fmt::Count),
        series: nopm,
        marks: Vec::new(),
        limits: Vec::new(),
        legend: Legend::LowerRight,
    }];
    let Some(device) = &s.device else { return charts };
    let ms = |f: fn(&crate::db_window::DbInterval) -> Option<f64>| -> Vec<(f64, f64)> {
        s.intervals.iter().filter_map(|i| Some((end(i), f(i)? * 1e6))).collect()
    };
    // A series of one point is a marker, not a line: the table and the text carry it.
    let lat: Vec<Series> = [
        Series::new("read mean", ms(|i| i.read_mean_ms)),
        Series::new("write mean", ms(|i| i.write_mean_ms)),
    ]
    .into_iter()
    .filter(|s| s.points.len() >= 2)
    .collect();
    let lat_y: Vec<f64> = lat.iter().flat_map(|s| s.points.iter().map(|p| p.1)).collect();
    if !lat_y.is_empty() {
        charts.push(LineChart {
            title: format!("Device latency per interval ({device}): {label}"),
            x_desc,
            y_desc: "mean time in the device".into(),
            x: ChartAxis::linear_x(&t, Fmt::Seconds),
            y: ChartAxis::auto(&lat_y, Fmt::Nanos),
            series: lat.into_iter().filter(|s| !s.points.is_empty()).collect(),
            marks: Vec::new(),
            limits: Vec::new(),
            legend: Legend::UpperRight,
        });
    }
    charts
}
