//! The figures' data, taken from the documents: percentile curves from the merged histograms, time series,
//! sweep lines along each swept field, comparison bars. The HTML page draws them as charts and the Markdown
//! rendering prints the same numbers as tables, so the two never disagree.

use std::collections::BTreeMap;

use iolab_stats::{LatSummary, LatencyHistogram};

use super::charts::{Annotation, BarChart, BarSet, ChartAxis, Fmt, Legend, Limit, LineChart, Series};
use crate::format::format_duration_ns;
use crate::model::{GroupResult, OpSummary};
use crate::sweep::{MetricSummary, PointSummary, SweepPoint, SweepResult};
use crate::RunResult;

/// Sampling of the percentile curve: 10 points per decade of `1/(1-p)`, up to 99.999 %.
const PERCENTILE_STEPS_PER_DECADE: u32 = 10;
/// Deepest percentile drawn: 99.999 % (`1/(1-p) = 10^5`).
const PERCENTILE_MAX_DECADES: u32 = 5;

/// The response-time histogram of one op kind (`read`, `write`, or `all` = both merged), decoded from the
/// document; `None` when the document has none (older documents) or it does not decode.
pub(crate) fn histogram(r: &RunResult, kind: &str) -> Option<LatencyHistogram> {
    let h = r.histograms.as_ref()?;
    let decode = |s: &Option<String>| s.as_deref().and_then(|b| LatencyHistogram::from_base64(b).ok());
    match kind {
        "read" => decode(&h.read),
        "write" => decode(&h.write),
        _ => match (decode(&h.read), decode(&h.write)) {
            (Some(mut a), Some(b)) => {
                a.merge(&b);
                Some(a)
            }
            (a, b) => a.or(b),
        },
    }
}

/// Points `(1/(1-p), latency ns)` of the percentile curve of `h`: `p` from 0 to 99.999 %, never deeper than
/// the sample count resolves (`1/(1-p) <= count`), ending with the exact maximum.
pub(crate) fn curve_from_histogram(h: &LatencyHistogram) -> Vec<(f64, f64)> {
    let count = h.count() as f64;
    if count == 0.0 {
        return Vec::new();
    }
    let mut pts = Vec::new();
    for k in 0..=PERCENTILE_STEPS_PER_DECADE * PERCENTILE_MAX_DECADES {
        let x = 10f64.powf(k as f64 / PERCENTILE_STEPS_PER_DECADE as f64);
        if x > count {
            break;
        }
        let p = 1.0 - 1.0 / x;
        pts.extend(h.quantile(p).map(|v| (x, v as f64)));
    }
    let last_x = pts.last().map_or(1.0, |p| p.0);
    if count > last_x * 1.01 {
        pts.push((count.min(10f64.powi(PERCENTILE_MAX_DECADES as i32)), h.max() as f64));
    }
    pts
}

/// The percentile curve from a digest alone (documents without histograms): min, p50 ... p99.99, max.
pub(crate) fn curve_from_summary(l: &LatSummary, ops: u64) -> Vec<(f64, f64)> {
    let count = ops as f64;
    let mut pts: Vec<(f64, f64)> = [
        (1.0, l.min),
        (2.0, l.p50),
        (10.0, l.p90),
        (20.0, l.p95),
        (100.0, l.p99),
        (1e3, l.p999),
        (1e4, l.p9999),
    ]
    .into_iter()
    .filter(|(x, _)| *x <= count.max(1.0))
    .map(|(x, v)| (x, v as f64))
    .collect();
    if count > pts.last().map_or(1.0, |p| p.0) {
        pts.push((count.min(1e5), l.max as f64));
    }
    pts
}

/// The op kinds a run has: `read`, `write`, or both.
fn kinds(r: &RunResult) -> Vec<&'static str> {
    let mut k = Vec::new();
    if r.total.read.ops > 0 {
        k.push("read");
    }
    if r.total.write.ops > 0 {
        k.push("write");
    }
    k
}

/// The percentile curve of one kind of a run (`read`, `write` or `all`).
pub(crate) fn run_curve(r: &RunResult, kind: &str) -> Vec<(f64, f64)> {
    if let Some(h) = histogram(r, kind) {
        return curve_from_histogram(&h);
    }
    let s = match kind {
        "read" => &r.total.read,
        "write" => &r.total.write,
        _ => &r.total.all,
    };
    s.lat_ns.as_ref().map_or_else(Vec::new, |l| curve_from_summary(l, s.ops))
}

/// A percentile chart of `series` (points from [`run_curve`]).
pub(crate) fn percentile_chart(title: String, series: Vec<Series>) -> LineChart {
    let xs: Vec<f64> = series.iter().flat_map(|s| s.points.iter().map(|p| p.0)).collect();
    let ys: Vec<f64> = series.iter().flat_map(|s| s.points.iter().map(|p| p.1)).collect();
    let max_x = xs.iter().copied().fold(1.0, f64::max);
    LineChart {
        title,
        x_desc: "percentile (log scale of 1/(1-p))".into(),
        y_desc: format!(
            "response time{}",
            if super::charts::spans_decades(&ys) { " (log scale)" } else { "" }
        ),
        x: ChartAxis::percentile(max_x),
        y: ChartAxis::auto(&ys, Fmt::Nanos),
        series,
        marks: Vec::new(),
        limits: Vec::new(),
        legend: Legend::UpperLeft,
    }
}

/// The latency percentile curve of one run: reads and writes apart, and merged when both exist.
pub(crate) fn run_percentile_chart(label: &str, r: &RunResult) -> LineChart {
    let k = kinds(r);
    let mut series: Vec<Series> =
        k.iter().map(|kind| Series::new(format!("{kind}s"), run_curve(r, kind))).collect();
    if k.len() > 1 {
        series.push(Series::new("all", run_curve(r, "all")));
    }
    percentile_chart(format!("Response-time percentiles: {label}"), series)
}

/// The per-interval time series of a run: IOPS (reads and writes apart when both exist), then mean and p99
/// latency.
pub(crate) fn timeseries_charts(label: &str, r: &RunResult) -> Vec<LineChart> {
    let ts = &r.timeseries;
    if ts.is_empty() {
        return Vec::new();
    }
    let t: Vec<f64> = ts.iter().map(|p| p.t_s + p.interval_s).collect();
    let both = ts.iter().any(|p| p.read_iops > 0.0) && ts.iter().any(|p| p.write_iops > 0.0);
    let mut iops = vec![Series::new("all ops", t.iter().zip(ts).map(|(&x, p)| (x, p.iops)).collect())];
    if both {
        iops.push(Series::new("reads", t.iter().zip(ts).map(|(&x, p)| (x, p.read_iops)).collect()));
        iops.push(Series::new("writes", t.iter().zip(ts).map(|(&x, p)| (x, p.write_iops)).collect()));
    }
    let interval = ts.first().map_or(1.0, |p| p.interval_s);
    let x_desc =
        format!("time since measurement start (s; {} s intervals)", super::charts::compact(interval));
    let iops_y: Vec<f64> = iops.iter().flat_map(|s| s.points.iter().map(|p| p.1)).collect();
    let lat = vec![
        Series::new("mean", t.iter().zip(ts).filter_map(|(&x, p)| Some((x, p.lat_mean_ns?))).collect()),
        Series::new("p99", t.iter().zip(ts).filter_map(|(&x, p)| Some((x, p.lat_p99_ns? as f64))).collect()),
    ];
    let lat_y: Vec<f64> = lat.iter().flat_map(|s| s.points.iter().map(|p| p.1)).collect();
    let log = super::charts::spans_decades(&lat_y);
    vec![
        LineChart {
            title: format!("IOPS per interval: {label}"),
            x_desc: x_desc.clone(),
            y_desc: "IOPS (ops/s)".into(),
            x: ChartAxis::linear_x(&t, Fmt::Seconds),
            y: ChartAxis::linear(&iops_y, true, Fmt::Count),
            series: iops,
            marks: Vec::new(),
            limits: Vec::new(),
            legend: Legend::LowerRight,
        },
        LineChart {
            title: format!("Response time per interval: {label}"),
            x_desc,
            y_desc: format!("response time{}", if log { " (log scale)" } else { "" }),
            x: ChartAxis::linear_x(&t, Fmt::Seconds),
            y: ChartAxis::auto(&lat_y, Fmt::Nanos),
            series: lat,
            marks: Vec::new(),
            limits: Vec::new(),
            legend: Legend::UpperRight,
        },
    ]
}

/// The LoadGen backlog over time, with LoadGen's overload limit.
pub(crate) fn backlog_chart(label: &str, r: &RunResult) -> Option<LineChart> {
    let lg = r.loadgen.as_ref()?;
    if lg.backlog.is_empty() {
        return None;
    }
    let t: Vec<f64> = lg.backlog.iter().map(|p| p.t_s).collect();
    let series = vec![Series::new("backlog", lg.backlog.iter().map(|p| (p.t_s, p.backlog as f64)).collect())];
    let limits = vec![Limit {
        y: lg.overload_threshold,
        label: format!("overload limit {} (1.5 × users)", super::charts::compact(lg.overload_threshold)),
    }];
    Some(LineChart {
        title: format!("Transactions dispatched and not completed: {label}"),
        x_desc: "time since measurement start (s)".into(),
        y_desc: "transactions".into(),
        x: ChartAxis::linear_x(&t, Fmt::Seconds),
        y: ChartAxis::linear(&y_extent(&series, &limits), true, Fmt::Count),
        series,
        marks: Vec::new(),
        limits,
        legend: Legend::UpperLeft,
    })
}

/// A swept value as a number on its axis: the load for the load axis, bytes for sizes (`4k` = 4096),
/// `25%` = 25, `20k` = 20,000 otherwise; `None` when it is not a number (then the axis is categorical).
pub(crate) fn axis_value(key: &str, text: &str, p: &SweepPoint, load_axis: Option<&str>) -> Option<f64> {
    if load_axis == Some(key) {
        if let Some(l) = p.load {
            return Some(l);
        }
    }
    let t = text.trim();
    let is_size = matches!(key, "bs" | "size" | "align" | "offset" | "length");
    let t = t.strip_suffix('%').unwrap_or(t);
    let lower = t.to_ascii_lowercase();
    let lower = if is_size { lower.trim_end_matches("ib").trim_end_matches('b').to_string() } else { lower };
    let (num, mult) = match lower.chars().last() {
        Some('k') => (&lower[..lower.len() - 1], if is_size { 1024.0 } else { 1e3 }),
        Some('m') => (&lower[..lower.len() - 1], if is_size { 1024.0 * 1024.0 } else { 1e6 }),
        Some('g') => (&lower[..lower.len() - 1], if is_size { 1024f64.powi(3) } else { 1e9 }),
        _ => (lower.as_str(), 1.0),
    };
    num.parse::<f64>().ok().filter(|v| v.is_finite()).map(|v| v * mult)
}

/// How a swept field is named on an axis, and its tick format.
pub(crate) fn axis_desc(key: &str, values: &[String]) -> (String, Fmt) {
    let pct = values.iter().all(|v| v.trim().ends_with('%')) || key.ends_with("pct") || key == "cache";
    match key {
        "qd" => ("outstanding I/Os per worker (qd)".into(), Fmt::Plain),
        "workers" => ("workers".into(), Fmt::Plain),
        "rate" => ("offered rate (IOPS)".into(), Fmt::Count),
        "bs" => ("block size".into(), Fmt::Bytes),
        "cache" => ("share of the target cached (%)".into(), Fmt::Percent),
        "read_pct" => ("reads (%)".into(), Fmt::Percent),
        "random_pct" => ("random offsets (%)".into(), Fmt::Percent),
        _ if pct => (format!("{key} (%)"), Fmt::Percent),
        _ => (key.to_string(), Fmt::Plain),
    }
}

/// One sweep with its label, as a report input.
pub(crate) struct SweepRef<'a> {
    /// Legend prefix (empty when only one sweep is reported).
    pub label: String,
    /// The sweep.
    pub sweep: &'a SweepResult,
}

/// Points of one line of a sweep chart: `(x, point)` sorted by x.
struct Line<'a> {
    name: String,
    points: Vec<(f64, &'a SweepPoint)>,
}

/// The lines along `key`: per sweep, points grouped by their other swept values.
fn lines_along<'a>(sweeps: &[SweepRef<'a>], key: &str) -> (Vec<Line<'a>>, Vec<String>, bool) {
    let mut all_values: Vec<String> = Vec::new();
    for s in sweeps {
        if let Some(a) = s.sweep.axes.iter().find(|a| a.key == key) {
            for v in &a.values {
                if !all_values.contains(v) {
                    all_values.push(v.clone());
                }
            }
        }
    }
    // Numeric when every value of every sweep parses; else categorical in first-seen order.
    let numeric = sweeps.iter().all(|s| {
        s.sweep.points.iter().all(|p| {
            p.params.get(key).is_none_or(|v| axis_value(key, v, p, s.sweep.load_axis.as_deref()).is_some())
        })
    });
    let mut lines = Vec::new();
    for s in sweeps {
        let mut groups: BTreeMap<String, Vec<(f64, &SweepPoint)>> = BTreeMap::new();
        let mut order: Vec<String> = Vec::new();
        for p in &s.sweep.points {
            let Some(v) = p.params.get(key) else { continue };
            let x = if numeric {
                axis_value(key, v, p, s.sweep.load_axis.as_deref()).unwrap_or(0.0)
            } else {
                all_values.iter().position(|a| a == v).unwrap_or(0) as f64
            };
            let rest: Vec<String> =
                p.params.iter().filter(|(k, _)| k.as_str() != key).map(|(k, v)| format!("{k}={v}")).collect();
            let name = match (s.label.is_empty(), rest.is_empty()) {
                (true, true) => String::new(),
                (true, false) => rest.join(", "),
                (false, true) => s.label.clone(),
                (false, false) => format!("{}: {}", s.label, rest.join(", ")),
            };
            if !order.contains(&name) {
                order.push(name.clone());
            }
            groups.entry(name).or_default().push((x, p));
        }
        for name in order {
            let mut points = groups.remove(&name).unwrap_or_default();
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            lines.push(Line { name, points });
        }
    }
    (lines, all_values, numeric)
}

/// The swept keys of all sweeps, first-seen order.
pub(crate) fn swept_keys(sweeps: &[SweepRef<'_>]) -> Vec<String> {
    let mut keys: Vec<String> = Vec::new();
    for s in sweeps {
        for a in &s.sweep.axes {
            if !keys.contains(&a.key) {
                keys.push(a.key.clone());
            }
        }
    }
    keys
}

/// The charts along swept field `key`: throughput (MB/s along `bs`, IOPS otherwise) and latency (mean and
/// p99), one line per sweep and combination of the other swept fields; knees marked. Along the cache size a
/// third chart draws the mean read latency (when the points have reads).
pub(crate) fn sweep_charts(sweeps: &[SweepRef<'_>], key: &str) -> Vec<LineChart> {
    let (lines, values, numeric) = lines_along(sweeps, key);
    if lines.is_empty() {
        return Vec::new();
    }
    let (desc, fmt) = axis_desc(key, &values);
    let xs: Vec<f64> = lines.iter().flat_map(|l| l.points.iter().map(|p| p.0)).collect();
    let x = if numeric { ChartAxis::through(&xs, fmt) } else { ChartAxis::categories(values.clone()) };
    let mb = key == "bs";
    let thr_metric: Metric = if mb { |s| Some(&s.mb_s) } else { |s| Some(&s.iops) };
    let thr_series: Vec<Series> = lines
        .iter()
        .map(|l| metric_series(l, series_name(l, if mb { "MB/s" } else { "IOPS" }), thr_metric))
        .collect();
    let mut lat_series = Vec::new();
    for l in &lines {
        lat_series.push(metric_series(l, series_name(l, "mean"), |s| s.lat_mean_ns.as_ref()));
        lat_series.push(metric_series(l, series_name(l, "p99"), |s| s.lat_p99_ns.as_ref()));
    }
    let (thr_marks, lat_marks) = knee_marks(sweeps, &lines, key, mb);
    let limits = p99_limits(sweeps, key);
    let lat_axis = ChartAxis::auto(&y_extent(&lat_series, &limits), Fmt::Nanos);
    let x_desc = format!("{desc}{}", log_note(&x));
    let read_lat_chart = read_latency_chart(&lines, key, &x, &x_desc);
    let mut charts = vec![
        LineChart {
            title: format!("{} against {}", if mb { "MB/s" } else { "IOPS" }, short_desc(key)),
            x_desc: x_desc.clone(),
            y_desc: if mb { "throughput (MB/s, 10^6 bytes/s)".into() } else { "IOPS (ops/s)".into() },
            x: x.clone(),
            y: ChartAxis::linear(&y_extent(&thr_series, &[]), true, if mb { Fmt::Plain } else { Fmt::Count }),
            series: thr_series,
            marks: thr_marks,
            limits: Vec::new(),
            legend: Legend::LowerRight,
        },
        LineChart {
            title: format!("Response time against {}", short_desc(key)),
            x_desc,
            y_desc: format!("response time{}", log_note(&lat_axis)),
            x,
            y: lat_axis,
            series: lat_series,
            marks: lat_marks,
            limits,
            // Latency grows with load and block size, so the lower right is clear (and the upper left holds
            // a limit's label); it falls as the cache grows, which clears the upper right.
            legend: if key == "cache" { Legend::UpperRight } else { Legend::LowerRight },
        },
    ];
    charts.extend(read_lat_chart);
    charts
}

/// Reads one metric's statistics over a point's trials.
type Metric = fn(&PointSummary) -> Option<&MetricSummary>;

/// The series of one metric along a line: the mean over trials at each point, and the 95 % confidence
/// interval of that mean as an error bar where the point has one (two trials or more).
fn metric_series(l: &Line<'_>, name: String, metric: Metric) -> Series {
    let points = l.points.iter().filter_map(|(x, p)| Some((*x, metric(&p.summary)?.mean))).collect();
    let errors = l
        .points
        .iter()
        .filter_map(|(x, p)| {
            let m = metric(&p.summary)?;
            Some((*x, m.ci95_low?, m.ci95_high?))
        })
        .collect();
    Series { name, points, errors }
}

/// Every y value a chart must show: its points, its error bars' ends and its limits.
fn y_extent(series: &[Series], limits: &[Limit]) -> Vec<f64> {
    let points = series.iter().flat_map(|s| s.points.iter().map(|p| p.1));
    let bars = series.iter().flat_map(|s| s.errors.iter().flat_map(|e| [e.1, e.2]));
    points.chain(bars).chain(limits.iter().map(|l| l.y)).collect()
}

/// The p99 limit of each sweep that had `--max-p99`, along its load axis `key` (one line per distinct
/// limit; named by the sweep when overlaid sweeps differ).
fn p99_limits(sweeps: &[SweepRef<'_>], key: &str) -> Vec<Limit> {
    let mut limits: Vec<Limit> = Vec::new();
    for s in sweeps {
        let Some(m) = s.sweep.max_p99.as_ref().filter(|m| m.axis == key) else { continue };
        let y = m.limit_ns as f64;
        if limits.iter().any(|l| l.y == y) {
            continue;
        }
        let whose = if s.label.is_empty() { String::new() } else { format!(", {}", s.label) };
        limits.push(Limit { y, label: format!("p99 limit {} (--max-p99{whose})", format_duration_ns(y)) });
    }
    limits
}

/// ` (log scale)` after an axis description when the axis is logarithmic.
fn log_note(a: &ChartAxis) -> &'static str {
    if a.is_log() {
        " (log scale)"
    } else {
        ""
    }
}

/// A line's series name: `what`, after the line's name when it has one (the IOPS or MB/s of a named line
/// is the line's name alone).
fn series_name(l: &Line<'_>, what: &str) -> String {
    match (l.name.is_empty(), what) {
        (true, _) => what.to_string(),
        (false, "IOPS" | "MB/s") => l.name.clone(),
        (false, _) => format!("{} {what}", l.name),
    }
}

/// The knee of each line of the load axis, marked on the throughput and the latency charts.
fn knee_marks(
    sweeps: &[SweepRef<'_>],
    lines: &[Line<'_>],
    key: &str,
    mb: bool,
) -> (Vec<Annotation>, Vec<Annotation>) {
    let mut thr_marks = Vec::new();
    let mut lat_marks = Vec::new();
    for s in sweeps {
        if s.sweep.load_axis.as_deref() != Some(key) {
            continue;
        }
        for m in s.sweep.knee.iter().flat_map(|k| k.lines.iter()) {
            let Some(pt) = m.point.and_then(|i| s.sweep.points.iter().find(|p| p.index == i)) else {
                continue;
            };
            let Some(xv) =
                lines.iter().flat_map(|l| l.points.iter()).find(|(_, p)| std::ptr::eq(*p, pt)).map(|p| p.0)
            else {
                continue;
            };
            let label = format!("knee ({key}={})", m.value.clone().unwrap_or_default());
            thr_marks.push(Annotation {
                at: (xv, if mb { pt.summary.mb_s.mean } else { pt.summary.iops.mean }),
                label: label.clone(),
            });
            if let Some(p99) = &pt.summary.lat_p99_ns {
                lat_marks.push(Annotation { at: (xv, p99.mean), label });
            }
        }
    }
    (thr_marks, lat_marks)
}

/// Along the cache size, the seeds' cache tables (FabricCache) put read latency beside IOPS: reads are what a
/// cache serves, so their mean falls as it grows while writes may not change. `None` along other fields.
fn read_latency_chart(lines: &[Line<'_>], key: &str, x: &ChartAxis, x_desc: &str) -> Option<LineChart> {
    let read_lat_series: Vec<Series> = if key == "cache" {
        lines
            .iter()
            .map(|l| {
                Series::new(
                    series_name(l, "mean read"),
                    l.points
                        .iter()
                        .filter_map(|(x, p)| p.summary.read_lat_mean_ns.as_ref().map(|m| (*x, m.mean)))
                        .collect(),
                )
            })
            .filter(|s| !s.points.is_empty())
            .collect()
    } else {
        Vec::new()
    };
    (!read_lat_series.is_empty()).then(|| {
        let y: Vec<f64> = read_lat_series.iter().flat_map(|s| s.points.iter().map(|p| p.1)).collect();
        let y_axis = ChartAxis::auto(&y, Fmt::Nanos);
        LineChart {
            title: format!("Read latency against {}", short_desc(key)),
            x_desc: x_desc.to_string(),
            y_desc: format!("mean read response time{}", log_note(&y_axis)),
            x: x.clone(),
            y: y_axis,
            series: read_lat_series,
            marks: Vec::new(),
            limits: Vec::new(),
            legend: Legend::UpperRight,
        }
    })
}

/// A swept field in a chart title: `outstanding I/Os`, `block size`, `cache size`.
fn short_desc(key: &str) -> String {
    match key {
        "qd" => "outstanding I/Os".into(),
        "workers" => "workers".into(),
        "rate" => "offered rate".into(),
        "bs" => "block size".into(),
        "cache" => "cache size".into(),
        other => other.to_string(),
    }
}

/// A bar chart of one value per input, named `names` (the inputs side by side).
pub(crate) fn one_bar_each(
    names: &[String],
    title: &str,
    y_desc: &str,
    values: Vec<f64>,
    fmt: Fmt,
) -> BarChart {
    BarChart {
        title: title.into(),
        y_desc: y_desc.into(),
        names: names.to_vec(),
        sets: vec![BarSet { name: String::new(), values }],
        fmt,
    }
}

/// Side-by-side bars for several runs: IOPS, MB/s, mean and p99 response time.
pub(crate) fn comparison_bars(runs: &[(&str, &RunResult)]) -> Vec<BarChart> {
    let names: Vec<String> = runs.iter().map(|(l, _)| l.to_string()).collect();
    let one = |title: &str, y_desc: &str, values: Vec<f64>, fmt: Fmt| {
        one_bar_each(&names, title, y_desc, values, fmt)
    };
    let lat = |f: LatField| -> Vec<f64> {
        runs.iter().map(|(_, r)| r.total.all.lat_ns.as_ref().map_or(f64::NAN, f)).collect()
    };
    vec![
        one("IOPS per run", "IOPS (ops/s)", runs.iter().map(|(_, r)| r.total.all.iops).collect(), Fmt::Count),
        one(
            "Throughput per run",
            "MB/s (10^6 bytes/s)",
            runs.iter().map(|(_, r)| r.total.all.mb_s).collect(),
            Fmt::Plain,
        ),
        one("p99 response time per run", "p99 response time", lat(|l| l.p99 as f64), Fmt::Nanos),
        one("Mean response time per run", "mean response time", lat(|l| l.mean), Fmt::Nanos),
    ]
}

/// A run's worker groups side by side (database vs log), when it has several: IOPS per group, reads and
/// writes apart, and the p50 and p99 response time of each group's reads and of its writes. The time series
/// is the run's, not per group, so these are the window's totals.
pub(crate) fn group_bars(label: &str, r: &RunResult) -> Vec<BarChart> {
    if r.groups.len() < 2 {
        return Vec::new();
    }
    let names: Vec<String> = r.groups.iter().map(|g| g.name.clone()).collect();
    let set = |name: &str, f: &dyn Fn(&GroupResult) -> f64| BarSet {
        name: name.into(),
        values: r.groups.iter().map(f).collect(),
    };
    let lat = |s: &OpSummary, f: LatField| s.lat_ns.as_ref().map_or(f64::NAN, f);
    let iops = vec![set("reads", &|g| g.total.read.iops), set("writes", &|g| g.total.write.iops)];
    let latency = vec![
        set("read p50", &|g| lat(&g.total.read, |l| l.p50 as f64)),
        set("read p99", &|g| lat(&g.total.read, |l| l.p99 as f64)),
        set("write p50", &|g| lat(&g.total.write, |l| l.p50 as f64)),
        set("write p99", &|g| lat(&g.total.write, |l| l.p99 as f64)),
    ];
    let present = |sets: Vec<BarSet>| -> Vec<BarSet> {
        sets.into_iter().filter(|s| s.values.iter().any(|v| v.is_finite() && *v > 0.0)).collect()
    };
    vec![
        BarChart {
            title: format!("IOPS per worker group: {label}"),
            y_desc: "IOPS (ops/s)".into(),
            names: names.clone(),
            sets: present(iops),
            fmt: Fmt::Count,
        },
        BarChart {
            title: format!("Response time per worker group: {label}"),
            y_desc: "response time".into(),
            names,
            sets: present(latency),
            fmt: Fmt::Nanos,
        },
    ]
}

/// Reads one value, ns, out of a latency digest.
pub(crate) type LatField = fn(&LatSummary) -> f64;

/// Percentiles shown in tables: label and the digest field.
pub(crate) const PERCENTILE_COLUMNS: [(&str, LatField); 8] = [
    ("min", |l| l.min as f64),
    ("mean", |l| l.mean),
    ("p50", |l| l.p50 as f64),
    ("p90", |l| l.p90 as f64),
    ("p99", |l| l.p99 as f64),
    ("p99.9", |l| l.p999 as f64),
    ("p99.99", |l| l.p9999 as f64),
    ("max", |l| l.max as f64),
];

/// The miss-ratio curves of a trace: a line per policy, cache size on a log scale, the recommendation marked.
pub(crate) fn mrc_chart(label: &str, m: &crate::mrc::MrcResult) -> LineChart {
    let series: Vec<Series> = m
        .curves
        .iter()
        .map(|c| Series {
            name: format!("{} ({})", c.policy, c.method),
            points: c.points.iter().map(|p| (p.size().max(1) as f64, 100.0 * p.miss_ratio)).collect(),
            errors: Vec::new(),
        })
        .collect();
    let xs: Vec<f64> = series.iter().flat_map(|s| s.points.iter().map(|p| p.0)).collect();
    let bytes = m.trace.line_bytes.is_some();
    let marks = m
        .recommendation
        .iter()
        .map(|r| Annotation {
            at: (r.point.size().max(1) as f64, 100.0 * r.point.miss_ratio),
            label: "recommended".into(),
        })
        .collect();
    LineChart {
        title: format!("Miss ratio against cache size: {label}"),
        x_desc: format!("cache size ({}, log scale)", if bytes { "bytes" } else { "objects" }),
        y_desc: "miss ratio".into(),
        x: ChartAxis::log(&xs, if bytes { Fmt::Bytes } else { Fmt::Count }),
        y: ChartAxis::linear(&[0.0, 100.0], true, Fmt::Percent),
        series,
        marks,
        limits: Vec::new(),
        legend: Legend::LowerRight,
    }
}

/// A find-max search: per step, its worst latency check as a percent of that check's limit, passed and
/// failed steps as two series over the value tried, and the limit at 100%.
pub(crate) fn find_max_chart(label: &str, f: &crate::find_max::FindMaxResult) -> LineChart {
    let worst = |s: &crate::find_max::FindMaxStep| {
        s.verdict
            .checks
            .iter()
            .filter(|c| c.unit == "ns" && c.limit > 0.0)
            .filter_map(|c| c.measured.map(|m| 100.0 * m / c.limit))
            .reduce(f64::max)
    };
    let side = |pass: bool| {
        let mut points: Vec<(f64, f64)> = f
            .steps
            .iter()
            .filter(|s| s.pass == pass)
            .filter_map(|s| worst(s).map(|w| (s.value, w)))
            .collect();
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
        points
    };
    let series = vec![Series::new("passed", side(true)), Series::new("failed", side(false))];
    let xs: Vec<f64> = f.steps.iter().map(|s| s.value).collect();
    let ys: Vec<f64> = series.iter().flat_map(|s| s.points.iter().map(|p| p.1)).chain([100.0]).collect();
    LineChart {
        title: format!("Find-max steps: {label}"),
        x_desc: f.variable.clone(),
        y_desc: "worst latency check, % of its limit".into(),
        x: ChartAxis::linear_x(&xs, Fmt::Count),
        y: ChartAxis::linear(&ys, true, Fmt::Percent),
        series,
        marks: Vec::new(),
        limits: vec![Limit { y: 100.0, label: "limit".into() }],
        legend: Legend::UpperLeft,
    }
}
