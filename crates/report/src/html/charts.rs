//! Charts as inline SVG, drawn with plotters' SVG backend: line charts (linear or logarithmic axes, one
//! series per line) and bar charts (one bar per category).
//!
//! Every chart has a title, axis labels with units and a legend. Series differ in colour **and** in line
//! style (solid, dashed, dotted) **and** in marker shape, so they stay apart when printed in grey. Axes are
//! one runtime-chosen type ([`ChartAxis`]) so a chart can switch between linear and log scales without a generic
//! explosion: the axis owns its tick positions (1-2-5 per decade on log scales, the swept values on a sweep's
//! x axis, percentiles on a latency-percentile axis) and formats its own labels in the chart's unit.
//!
//! Text is emitted as SVG `<text>` elements (plotters escapes it), rendered by the browser's own fonts: the
//! crate is built without font support, so its layout estimates are rough, which the margins allow for.
//! Non-finite points, and non-positive points on a log axis, are dropped rather than drawn; a chart with no
//! point left is not drawn at all (the caller shows a note instead). Nothing here panics on data.

use std::ops::Range;

use plotters::coord::ranged1d::{KeyPointHint, NoDefaultFormatting, Ranged, ValueFormatter};
use plotters::prelude::*;
use plotters::style::text_anchor;

use crate::format::{format_bytes, format_duration_ns};

/// Size of a chart, pixels of its SVG `viewBox`: one of the two columns of a 1280 px page. The page scales
/// the SVG to its column's width (`width="100%"`), so the text keeps about this size on screen.
pub(crate) const CHART_SIZE: (u32, u32) = (640, 360);
/// Size of a chart that spans both columns (the last of an odd number): as tall, twice as wide and the gap.
pub(crate) const WIDE_CHART_SIZE: (u32, u32) = (1300, 360);
/// The width of a [`CHART_SIZE`] chart's plot area, less its axis labels and margins, px.
const PLOT_WIDTH_PX: f64 = 520.0;
/// The width of one character of an axis label (12 px sans-serif), px, rounded up.
const LABEL_CHAR_PX: f64 = 7.5;
/// The least space between two axis labels, px.
const LABEL_GAP_PX: f64 = 6.0;
/// Colour of limit lines (`--max-p99`): dark red, apart from the palette.
const LIMIT_COLOR: RGBColor = RGBColor(0xa0, 0x14, 0x0c);

/// Colours of the series, in order: an Okabe-Ito-like palette whose lightness differs from one entry to
/// the next, so neighbours stay apart in grey.
const PALETTE: [RGBColor; 6] = [
    RGBColor(0x0b, 0x3c, 0x8c),
    RGBColor(0xe6, 0x9f, 0x00),
    RGBColor(0x00, 0x9e, 0x73),
    RGBColor(0xd5, 0x5e, 0x00),
    RGBColor(0x6a, 0x3d, 0x9a),
    RGBColor(0x56, 0xb4, 0xe9),
];

/// How an axis formats its tick labels.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Fmt {
    /// A count or rate, compact: `950`, `12.5k`, `1.20M`.
    Count,
    /// Nanoseconds, shown as a duration: `850 ns`, `1.82 ms`.
    Nanos,
    /// Bytes, binary units: `4 KiB`.
    Bytes,
    /// Seconds: `10 s`.
    Seconds,
    /// A percentage value: `25%`.
    Percent,
    /// The `1/(1-p)` axis of a percentile curve, labelled as the percentile: `99.9%`.
    Percentile,
    /// Categories at 0, 1, 2, ...
    Category(Vec<String>),
    /// A plain number with up to 3 significant figures.
    Plain,
}

impl Fmt {
    /// The label of `v`.
    pub(crate) fn format(&self, v: f64) -> String {
        match self {
            Fmt::Count => compact(v),
            Fmt::Nanos => format_duration_ns(v),
            Fmt::Bytes => {
                if v.is_finite() && v >= 0.0 && v < u64::MAX as f64 {
                    let text = format_bytes(v.round() as u64);
                    match text.split_once(' ') {
                        Some((num, unit)) if num.contains('.') => {
                            format!("{} {unit}", num.trim_end_matches('0').trim_end_matches('.'))
                        }
                        _ => text,
                    }
                } else {
                    "-".into()
                }
            }
            Fmt::Seconds => format!("{} s", plain(v)),
            Fmt::Percent => format!("{}%", plain(v)),
            Fmt::Percentile => {
                if v.is_finite() && v >= 1.0 {
                    let p = 100.0 * (1.0 - 1.0 / v);
                    let text = format!("{p:.5}");
                    let text = text.trim_end_matches('0').trim_end_matches('.');
                    format!("{text}%")
                } else {
                    "0%".into()
                }
            }
            Fmt::Category(names) => {
                let i = v.round();
                if i >= 0.0 && (i as usize) < names.len() && (v - i).abs() < 1e-6 {
                    names[i as usize].clone()
                } else {
                    String::new()
                }
            }
            Fmt::Plain => plain(v),
        }
    }
}

/// A number with up to 3 significant figures, no trailing zeros: `0.5`, `12`, `1234`.
fn plain(v: f64) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    let a = v.abs();
    let text = if a >= 100.0 || a == 0.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    };
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

/// A count with a k/M/G suffix: `950`, `12.5k`, `1.2M`.
pub(crate) fn compact(v: f64) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    let a = v.abs();
    let (scaled, suffix) = if a >= 1e9 {
        (v / 1e9, "G")
    } else if a >= 1e6 {
        (v / 1e6, "M")
    } else if a >= 1e3 {
        (v / 1e3, "k")
    } else {
        (v, "")
    };
    format!("{}{suffix}", plain(scaled))
}

/// One axis: its range, scale, ticks and label format.
#[derive(Clone, Debug)]
pub(crate) struct ChartAxis {
    lo: f64,
    hi: f64,
    log: bool,
    major: Vec<f64>,
    minor: Vec<f64>,
    fmt: Fmt,
}

impl ChartAxis {
    /// A linear axis over the data `values`, from 0 when `from_zero` (counts, rates), with "nice" ticks.
    pub(crate) fn linear(values: &[f64], from_zero: bool, fmt: Fmt) -> ChartAxis {
        ChartAxis::linear_with(values, from_zero, 0.08, fmt)
    }

    /// A linear x axis over `values` (time): no headroom past the last point.
    pub(crate) fn linear_x(values: &[f64], fmt: Fmt) -> ChartAxis {
        ChartAxis::linear_with(values, true, 0.0, fmt)
    }

    /// A linear axis with `headroom` (a fraction of the span) above the highest value.
    fn linear_with(values: &[f64], from_zero: bool, headroom: f64, fmt: Fmt) -> ChartAxis {
        let finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
        let (mut lo, mut hi) = min_max(&finite).unwrap_or((0.0, 1.0));
        if from_zero {
            lo = lo.min(0.0);
        }
        if hi <= lo {
            hi = lo + if lo == 0.0 { 1.0 } else { lo.abs() * 0.1 };
        }
        let step = nice_step((hi - lo) / 5.0);
        let lo = (lo / step).floor() * step;
        // Headroom above the highest point for the legend.
        let hi = ((hi + (hi - lo) * headroom) / step - 1e-9).ceil() * step;
        let major: Vec<f64> =
            (0..=200).map(|i| lo + step * i as f64).take_while(|v| *v <= hi + step * 1e-9).collect();
        ChartAxis { lo, hi, log: false, minor: major.clone(), major, fmt }
    }

    /// A logarithmic axis over positive data `values`, widened to whole decades: ticks at 1, 2 and 5 per
    /// decade when it spans at most three decades, else at each power of ten.
    pub(crate) fn log(values: &[f64], fmt: Fmt) -> ChartAxis {
        let positive: Vec<f64> = values.iter().copied().filter(|v| v.is_finite() && *v > 0.0).collect();
        let (lo, hi) = min_max(&positive).unwrap_or((1.0, 10.0));
        let d_lo = lo.log10().floor() as i32;
        let mut d_hi = hi.log10().ceil() as i32;
        if d_hi <= d_lo {
            d_hi = d_lo + 1;
        }
        let decades = d_hi - d_lo;
        let mut major = Vec::new();
        let mut minor = Vec::new();
        for d in d_lo..=d_hi {
            let base = 10f64.powi(d);
            for m in 1..10 {
                let v = base * m as f64;
                if v > 10f64.powi(d_hi) * 1.0001 {
                    break;
                }
                minor.push(v);
                if m == 1 || (decades <= 3 && (m == 2 || m == 5)) {
                    major.push(v);
                }
            }
        }
        ChartAxis { lo: 10f64.powi(d_lo), hi: 10f64.powi(d_hi), log: true, major, minor, fmt }
    }

    /// Log if the positive `values` span at least a decade (`max / min >= 10`), else linear from zero.
    pub(crate) fn auto(values: &[f64], fmt: Fmt) -> ChartAxis {
        if spans_decades(values) {
            ChartAxis::log(values, fmt)
        } else {
            ChartAxis::linear(values, true, fmt)
        }
    }

    /// An x axis through given positions (a sweep's values): logarithmic when they are positive and span a
    /// factor of 8 or more (`qd 1..64:x2`, `bs 4k..1m:x2`), else linear; a grid line at every value, and
    /// labels at the values that leave room for each other ([`ChartAxis::spaced`]: `25%` and `30%` of a cache
    /// axis to 100% would overlap, so `30%` is left unlabelled).
    pub(crate) fn through(values: &[f64], fmt: Fmt) -> ChartAxis {
        let mut ticks: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
        ticks.sort_by(f64::total_cmp);
        ticks.dedup();
        let Some((lo, hi)) = min_max(&ticks) else {
            return ChartAxis::linear(&[], true, fmt);
        };
        let log = lo > 0.0 && hi / lo >= 8.0;
        let (lo, hi) = if log {
            (lo / 1.3, hi * 1.3)
        } else if hi > lo {
            let pad = (hi - lo) * 0.05;
            (lo - pad, hi + pad)
        } else {
            (lo - 1.0, hi + 1.0)
        };
        let mut axis = ChartAxis { lo, hi, log, minor: ticks.clone(), major: Vec::new(), fmt };
        axis.major = axis.spaced(&ticks);
        axis
    }

    /// The `ticks` whose labels do not overlap on a chart's plot ([`PLOT_WIDTH_PX`] wide, labels
    /// [`LABEL_CHAR_PX`] a character), kept from the left: the first always, then each one far enough from the
    /// last kept.
    fn spaced(&self, ticks: &[f64]) -> Vec<f64> {
        let at = |v: f64| -> f64 {
            let t = if self.log {
                (v.ln() - self.lo.ln()) / (self.hi.ln() - self.lo.ln())
            } else {
                (v - self.lo) / (self.hi - self.lo)
            };
            t * PLOT_WIDTH_PX
        };
        let half_width = |v: f64| self.fmt.format(v).chars().count() as f64 * LABEL_CHAR_PX / 2.0;
        let mut kept: Vec<f64> = Vec::new();
        for &v in ticks {
            let clear =
                kept.last().is_none_or(|&k| at(v) - at(k) >= half_width(k) + half_width(v) + LABEL_GAP_PX);
            if clear {
                kept.push(v);
            }
        }
        kept
    }

    /// The x axis of a percentile curve: `1/(1-p)` on a log scale from 1 (0 %) to the next power of ten
    /// above `max_x`, ticks at 0, 90, 99, 99.9 ... %.
    pub(crate) fn percentile(max_x: f64) -> ChartAxis {
        let d_hi = if max_x.is_finite() && max_x > 10.0 { max_x.log10().ceil() as i32 } else { 1 };
        let major: Vec<f64> = (0..=d_hi).map(|d| 10f64.powi(d)).collect();
        ChartAxis {
            lo: 1.0,
            hi: 10f64.powi(d_hi),
            log: true,
            minor: major.clone(),
            major,
            fmt: Fmt::Percentile,
        }
    }

    /// A categorical axis: one slot per name, centred on 0, 1, 2, ...
    pub(crate) fn categories(names: Vec<String>) -> ChartAxis {
        let n = names.len().max(1);
        let major: Vec<f64> = (0..names.len()).map(|i| i as f64).collect();
        ChartAxis {
            lo: -0.5,
            hi: n as f64 - 0.5,
            log: false,
            minor: major.clone(),
            major,
            fmt: Fmt::Category(names),
        }
    }

    /// The axis is logarithmic.
    pub(crate) fn is_log(&self) -> bool {
        self.log
    }

    /// A point may be drawn on this axis.
    fn accepts(&self, v: f64) -> bool {
        v.is_finite() && (!self.log || v > 0.0)
    }
}

impl Ranged for ChartAxis {
    type FormatOption = NoDefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let t = if self.log {
            (value.max(f64::MIN_POSITIVE).ln() - self.lo.ln()) / (self.hi.ln() - self.lo.ln())
        } else {
            (value - self.lo) / (self.hi - self.lo)
        };
        let t = if t.is_finite() { t.clamp(-1.0, 2.0) } else { 0.0 };
        limit.0 + (t * (limit.1 - limit.0) as f64).round() as i32
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        let pts = if hint.weight().allow_light_points() { &self.minor } else { &self.major };
        pts.iter().copied().filter(|v| *v >= self.lo - 1e-9 && *v <= self.hi * (1.0 + 1e-9)).collect()
    }

    fn range(&self) -> Range<f64> {
        self.lo..self.hi
    }
}

impl ValueFormatter<f64> for ChartAxis {
    fn format_ext(&self, value: &f64) -> String {
        self.fmt.format(*value)
    }
}

/// The smallest and largest of `values`, `None` when empty.
fn min_max(values: &[f64]) -> Option<(f64, f64)> {
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (lo.is_finite() && hi.is_finite()).then_some((lo, hi))
}

/// 1, 2 or 5 times a power of ten, at least `raw`.
fn nice_step(raw: f64) -> f64 {
    if !(raw.is_finite() && raw > 0.0) {
        return 1.0;
    }
    let base = 10f64.powf(raw.log10().floor());
    let m = raw / base;
    let nice = if m <= 1.0 {
        1.0
    } else if m <= 2.0 {
        2.0
    } else if m <= 5.0 {
        5.0
    } else {
        10.0
    };
    nice * base
}

/// The positive values span at least a decade (`max / min >= 10`): plot them on a log axis.
pub(crate) fn spans_decades(values: &[f64]) -> bool {
    let positive: Vec<f64> = values.iter().copied().filter(|v| v.is_finite() && *v > 0.0).collect();
    min_max(&positive).is_some_and(|(lo, hi)| hi / lo >= 10.0)
}

/// One line of a line chart.
#[derive(Clone, Debug, Default)]
pub(crate) struct Series {
    /// Legend text.
    pub name: String,
    /// `(x, y)` points, in drawing order.
    pub points: Vec<(f64, f64)>,
    /// Error bars `(x, low, high)` in the series' colour (a sweep point's interval over its trials); the
    /// caption says which interval.
    pub errors: Vec<(f64, f64, f64)>,
}

impl Series {
    /// A line without error bars.
    pub(crate) fn new(name: impl Into<String>, points: Vec<(f64, f64)>) -> Series {
        Series { name: name.into(), points, errors: Vec::new() }
    }
}

/// A horizontal limit line across the plot (the p99 limit of `--max-p99`), labelled at its left end.
#[derive(Clone, Debug)]
pub(crate) struct Limit {
    /// The limit, in the y axis' unit.
    pub y: f64,
    /// Its label, with the value: `p99 limit 2 ms (--max-p99)`.
    pub label: String,
}

/// An annotated point (the knee of a sweep).
#[derive(Clone, Debug)]
pub(crate) struct Annotation {
    /// Where.
    pub at: (f64, f64),
    /// Its label.
    pub label: String,
}

/// Where the legend sits inside the plot.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Legend {
    /// Upper left.
    UpperLeft,
    /// Lower right.
    LowerRight,
    /// Upper right.
    UpperRight,
}

/// A line chart.
#[derive(Clone, Debug)]
pub(crate) struct LineChart {
    /// Title drawn above the plot.
    pub title: String,
    /// x axis description, with its unit.
    pub x_desc: String,
    /// y axis description, with its unit.
    pub y_desc: String,
    /// The x axis.
    pub x: ChartAxis,
    /// The y axis.
    pub y: ChartAxis,
    /// The lines.
    pub series: Vec<Series>,
    /// Annotated points.
    pub marks: Vec<Annotation>,
    /// Horizontal limit lines.
    pub limits: Vec<Limit>,
    /// Legend position.
    pub legend: Legend,
}

/// Why a chart was not drawn.
pub(crate) type ChartError = String;

/// The shape of marker number `i`, as pixel offsets of a polygon around (0, 0).
fn marker_shape(i: usize) -> Vec<(i32, i32)> {
    match i % 6 {
        0 => vec![(-4, -4), (4, -4), (4, 4), (-4, 4)], // square
        1 => vec![(0, -5), (5, 4), (-5, 4)],           // triangle up
        2 => vec![(0, -5), (5, 0), (0, 5), (-5, 0)],   // diamond
        3 => vec![(0, 5), (5, -4), (-5, -4)],          // triangle down
        4 => vec![
            (-5, -2),
            (-2, -2),
            (-2, -5),
            (2, -5),
            (2, -2),
            (5, -2),
            (5, 2),
            (2, 2),
            (2, 5),
            (-2, 5),
            (-2, 2),
            (-5, 2),
        ], // plus
        _ => vec![(-3, -5), (3, -5), (5, 0), (3, 5), (-3, 5), (-5, 0)], // hexagon
    }
}

/// The marker of series `i` at `offset` (pixels) from an anchor.
fn marker_at(i: usize, offset: (i32, i32)) -> Polygon<(i32, i32)> {
    let color = PALETTE[i % PALETTE.len()];
    let pts = marker_shape(i).into_iter().map(|(x, y)| (x + offset.0, y + offset.1)).collect::<Vec<_>>();
    Polygon::new(pts, color.filled())
}

/// The dash pattern of series `i`: `(dash, gap)` in pixels; `None` for solid.
fn dash(i: usize) -> Option<(u32, u32)> {
    match i % 3 {
        0 => None,
        1 => Some((9, 5)),
        _ => Some((2, 4)),
    }
}

/// The plot area of a chart: both axes are [`ChartAxis`].
type Plot<'a, 'b> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<ChartAxis, ChartAxis>>;

/// A plotters error as the reason a chart was not drawn.
fn failed<E: std::fmt::Display>(e: E) -> ChartError {
    e.to_string()
}

/// The plot of a chart on `root`: title above, room for the axes' labels, the mesh drawn.
fn plot<'a, 'b>(
    root: &'a DrawingArea<SVGBackend<'b>, plotters::coord::Shift>,
    title: &str,
    (x, y): (ChartAxis, ChartAxis),
    (x_desc, y_desc): (&str, &str),
) -> Result<Plot<'a, 'b>, ChartError> {
    let mut chart = ChartBuilder::on(root)
        .caption(title, ("sans-serif", 22))
        .margin(12)
        .margin_right(34)
        .x_label_area_size(48)
        .y_label_area_size(80)
        .build_cartesian_2d(x, y)
        .map_err(failed)?;
    let mut mesh = chart.configure_mesh();
    if x_desc.is_empty() {
        mesh.disable_x_mesh();
    }
    mesh.x_desc(x_desc)
        .y_desc(y_desc)
        .axis_desc_style(("sans-serif", 16))
        .label_style(("sans-serif", 15))
        .bold_line_style(RGBColor(0xd0, 0xd0, 0xd0))
        .light_line_style(RGBColor(0xf0, 0xf0, 0xf0))
        .draw()
        .map_err(failed)?;
    Ok(chart)
}

/// The series of `c` with the points (and error bars) its axes can draw; series left empty are dropped.
fn drawable(c: &LineChart) -> Vec<Series> {
    c.series
        .iter()
        .map(|s| Series {
            name: s.name.clone(),
            points: s.points.iter().copied().filter(|&(x, y)| c.x.accepts(x) && c.y.accepts(y)).collect(),
            errors: s
                .errors
                .iter()
                .filter(|&&(x, _, hi)| c.x.accepts(x) && c.y.accepts(hi))
                .map(|&(x, lo, hi)| (x, if c.y.accepts(lo) { lo } else { c.y.lo }, hi))
                .collect(),
        })
        .filter(|s| !s.points.is_empty())
        .collect()
}

/// Renders `c` to an SVG string whose `viewBox` is `size` pixels.
pub(crate) fn line_svg(c: &LineChart, size: (u32, u32)) -> Result<String, ChartError> {
    let series = drawable(c);
    if series.is_empty() {
        return Err("no data to draw".into());
    }
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        root.fill(&WHITE).map_err(failed)?;
        let axes = (c.x.clone(), c.y.clone());
        let mut chart = plot(&root, &c.title, axes, (&c.x_desc, &c.y_desc))?;
        for (i, s) in series.iter().enumerate() {
            draw_line(&mut chart, i, s)?;
            draw_errors(&mut chart, i, s)?;
        }
        draw_limits(&mut chart, c)?;
        draw_marks(&mut chart, c)?;
        draw_legend(&mut chart, c.legend)?;
        root.present().map_err(failed)?;
    }
    Ok(svg)
}

/// Series `i`: its line (solid, dashed or dotted), its markers, and its legend entry.
fn draw_line<'a, 'b: 'a>(chart: &mut Plot<'a, 'b>, i: usize, s: &Series) -> Result<(), ChartError> {
    let color = PALETTE[i % PALETTE.len()];
    let style = color.stroke_width(2);
    let anno = match dash(i) {
        None => chart.draw_series(LineSeries::new(s.points.iter().copied(), style)),
        Some((d, g)) => chart.draw_series(DashedLineSeries::new(s.points.iter().copied(), d, g, style)),
    }
    .map_err(failed)?;
    anno.label(s.name.as_str()).legend(move |(x, y)| {
        let seg = legend_segments(i);
        let line = |k: usize| PathElement::new(vec![(seg[k].0, 0), (seg[k].1, 0)], color.stroke_width(2));
        EmptyElement::at((x, y)) + line(0) + line(1) + line(2) + marker_at(i, (12, 0))
    });
    // Markers: at every point when there are few, else at about 40 of them.
    let stride = s.points.len().div_ceil(40).max(1);
    chart
        .draw_series(s.points.iter().step_by(stride).map(|&p| EmptyElement::at(p) + marker_at(i, (0, 0))))
        .map_err(failed)?;
    Ok(())
}

/// Series `i`'s error bars: a vertical line from low to high with a cap at each end.
fn draw_errors(chart: &mut Plot<'_, '_>, i: usize, s: &Series) -> Result<(), ChartError> {
    let style = PALETTE[i % PALETTE.len()].stroke_width(2);
    let cap = move |at: (f64, f64)| EmptyElement::at(at) + PathElement::new(vec![(-5, 0), (5, 0)], style);
    for &(x, lo, hi) in &s.errors {
        chart
            .draw_series([PathElement::new(vec![(x, lo), (x, hi)], style)].into_iter().map(|e| e.into_dyn()))
            .map_err(failed)?;
        chart.draw_series([cap((x, lo)), cap((x, hi))]).map_err(failed)?;
    }
    Ok(())
}

/// The limit lines of `c`: dashed, dark red, across the plot, labelled above their left end (the lightest
/// load, usually below the curves that cross the limit).
fn draw_limits(chart: &mut Plot<'_, '_>, c: &LineChart) -> Result<(), ChartError> {
    let style = LIMIT_COLOR.stroke_width(2);
    for l in c.limits.iter().filter(|l| c.y.accepts(l.y)) {
        chart
            .draw_series(DashedLineSeries::new([(c.x.lo, l.y), (c.x.hi, l.y)], 12, 6, style))
            .map_err(failed)?;
        let font = ("sans-serif", 15)
            .into_font()
            .color(&LIMIT_COLOR)
            .pos(text_anchor::Pos::new(text_anchor::HPos::Left, text_anchor::VPos::Bottom));
        let label = EmptyElement::at((c.x.lo, l.y)) + Text::new(l.label.clone(), (6, -4), font);
        chart.draw_series(std::iter::once(label)).map_err(failed)?;
    }
    Ok(())
}

/// The annotated points of `c` (knees): a ring and a label.
fn draw_marks(chart: &mut Plot<'_, '_>, c: &LineChart) -> Result<(), ChartError> {
    for m in c.marks.iter().filter(|m| c.x.accepts(m.at.0) && c.y.accepts(m.at.1)) {
        let ring = EmptyElement::at(m.at) + Circle::new((0, 0), 9, BLACK.stroke_width(2));
        chart.draw_series(std::iter::once(ring)).map_err(failed)?;
        if !m.label.is_empty() {
            let font = ("sans-serif", 16).into_font().color(&BLACK);
            let text = EmptyElement::at(m.at) + Text::new(m.label.clone(), (10, -22), font);
            chart.draw_series(std::iter::once(text)).map_err(failed)?;
        }
    }
    Ok(())
}

/// The legend box of the labelled series, at `legend`.
fn draw_legend<'a, 'b: 'a>(chart: &mut Plot<'a, 'b>, legend: Legend) -> Result<(), ChartError> {
    let pos = match legend {
        Legend::UpperLeft => SeriesLabelPosition::UpperLeft,
        Legend::LowerRight => SeriesLabelPosition::LowerRight,
        Legend::UpperRight => SeriesLabelPosition::UpperRight,
    };
    chart
        .configure_series_labels()
        .position(pos)
        .label_font(("sans-serif", 15))
        .background_style(WHITE.mix(0.85))
        .border_style(RGBColor(0x99, 0x99, 0x99))
        .draw()
        .map_err(failed)
}

/// The three segments (pixel spans) of series `i`'s legend line: contiguous for solid, apart for dashed
/// and dotted, matching [`dash`].
fn legend_segments(i: usize) -> [(i32, i32); 3] {
    match dash(i) {
        None => [(0, 8), (8, 16), (16, 24)],
        Some((d, _)) if d > 4 => [(0, 6), (9, 15), (18, 24)],
        Some(_) => [(0, 3), (10, 13), (20, 23)],
    }
}

/// One set of bars of a bar chart: a value per category, in one colour.
#[derive(Clone, Debug)]
pub(crate) struct BarSet {
    /// Legend text (not drawn when the chart has one set).
    pub name: String,
    /// One value per category; a non-finite value leaves its bar out.
    pub values: Vec<f64>,
}

/// A bar chart: per category (run, worker group) one bar of each set side by side, its value printed
/// above it.
#[derive(Clone, Debug)]
pub(crate) struct BarChart {
    /// Title drawn above the plot.
    pub title: String,
    /// y axis description, with its unit.
    pub y_desc: String,
    /// The categories, left to right.
    pub names: Vec<String>,
    /// The sets of bars; with several, a legend names them.
    pub sets: Vec<BarSet>,
    /// Format of the values and y ticks.
    pub fmt: Fmt,
}

/// Renders `c` to an SVG string whose `viewBox` is `size` pixels.
pub(crate) fn bar_svg(c: &BarChart, size: (u32, u32)) -> Result<String, ChartError> {
    let n = c.names.len();
    let values: Vec<f64> = c.sets.iter().flat_map(|s| s.values.iter().take(n).copied()).collect();
    if n == 0 || values.iter().all(|v| !v.is_finite()) {
        return Err("no data to draw".into());
    }
    let short: Vec<String> = c.names.iter().map(|s| truncate(s, (90 / n).max(8))).collect();
    let axes = (ChartAxis::categories(short), ChartAxis::linear(&values, true, c.fmt.clone()));
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        root.fill(&WHITE).map_err(failed)?;
        let mut chart = plot(&root, &c.title, axes, ("", &c.y_desc))?;
        let labelled = values_fit(c, size.0);
        for (j, set) in c.sets.iter().enumerate() {
            draw_bar_set(&mut chart, c, j, set, labelled)?;
        }
        if c.sets.len() > 1 {
            draw_legend(&mut chart, Legend::UpperRight)?;
        }
        root.present().map_err(failed)?;
    }
    Ok(svg)
}

/// The font size of the values above the bars of a chart with `sets` sets, px.
fn value_font_px(sets: usize) -> u32 {
    if sets > 2 {
        13
    } else {
        16
    }
}

/// Whether every value of `c` fits above its bar, `width` px being the chart's: each value's text no wider
/// than its bar's slot (so neighbouring values cannot overlap). Where they do not fit, the bars go without
/// them: the section's table has every number.
fn values_fit(c: &BarChart, width: u32) -> bool {
    let plot = f64::from(width.saturating_sub(12 + 34 + 80));
    let slot = plot / c.names.len().max(1) as f64 * 0.8 / c.sets.len().max(1) as f64;
    let widest = c.sets.iter().flat_map(|s| &s.values).filter(|v| v.is_finite()).map(|v| c.fmt.format(*v));
    let widest = widest.map(|t| t.chars().count()).max().unwrap_or(0);
    // A sans-serif digit is about 0.6 em wide.
    widest as f64 * 0.6 * f64::from(value_font_px(c.sets.len())) <= slot
}

/// Set `j` of `c`: its bars (coloured by category with one set, by set with several), each outlined and,
/// when `labelled`, with its value above it.
fn draw_bar_set<'a, 'b: 'a>(
    chart: &mut Plot<'a, 'b>,
    c: &BarChart,
    j: usize,
    set: &BarSet,
    labelled: bool,
) -> Result<(), ChartError> {
    let m = c.sets.len();
    let width = 0.8 / m as f64;
    let set_color = PALETTE[j % PALETTE.len()];
    let value_font = ("sans-serif", value_font_px(m))
        .into_font()
        .color(&BLACK)
        .pos(text_anchor::Pos::new(text_anchor::HPos::Center, text_anchor::VPos::Bottom));
    for (i, &v) in set.values.iter().take(c.names.len()).enumerate().filter(|(_, v)| v.is_finite()) {
        let color = if m == 1 { PALETTE[i % PALETTE.len()] } else { set_color };
        let x0 = i as f64 - 0.4 + j as f64 * width;
        let (x0, x1) = (x0 + width * 0.05, x0 + width * 0.95);
        chart.draw_series([Rectangle::new([(x0, 0.0), (x1, v)], color.filled())]).map_err(failed)?;
        chart.draw_series([Rectangle::new([(x0, 0.0), (x1, v)], BLACK.stroke_width(1))]).map_err(failed)?;
        if !labelled {
            continue;
        }
        let text =
            EmptyElement::at(((x0 + x1) / 2.0, v)) + Text::new(c.fmt.format(v), (0, -8), value_font.clone());
        chart.draw_series(std::iter::once(text)).map_err(failed)?;
    }
    if m > 1 {
        // An empty series carries the set's legend entry.
        chart
            .draw_series(std::iter::empty::<Rectangle<(f64, f64)>>())
            .map_err(failed)?
            .label(set.name.as_str())
            .legend(move |(x, y)| Rectangle::new([(x, y - 6), (x + 18, y + 6)], set_color.filled()));
    }
    Ok(())
}

/// `s` cut to `max` characters with an ellipsis.
pub(crate) fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(max.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 37, item 4: the values above narrow bars (3 percentiles of 5 transactions) overlapped their
    /// neighbours'; a chart whose values do not fit their bars goes without them, one whose values fit keeps
    /// them.
    #[test]
    fn bar_values_are_written_only_where_they_fit_their_bars() {
        let chart = |names: usize, sets: usize| BarChart {
            title: "t".into(),
            y_desc: "time".into(),
            names: (0..names).map(|i| format!("n{i}")).collect(),
            sets: (0..sets)
                .map(|j| BarSet {
                    name: format!("s{j}"),
                    values: (0..names).map(|i| 284_000.0 + (i * 10 + j) as f64 * 1000.0).collect(),
                })
                .collect(),
            fmt: Fmt::Nanos,
        };
        let narrow = bar_svg(&chart(5, 3), CHART_SIZE).unwrap();
        assert!(!narrow.contains("284 µs"), "no values over narrow bars");
        let wide = bar_svg(&chart(2, 1), CHART_SIZE).unwrap();
        assert!(wide.contains("284 µs") && wide.contains("294 µs"), "values over wide bars");
    }

    #[test]
    fn axis_auto_latency_spanning_decades_is_log() {
        assert!(ChartAxis::auto(&[100_000.0, 5_000_000.0], Fmt::Nanos).is_log());
        assert!(!ChartAxis::auto(&[100_000.0, 500_000.0], Fmt::Nanos).is_log());
        assert!(!ChartAxis::auto(&[], Fmt::Nanos).is_log());
    }

    #[test]
    fn axis_log_ticks_are_1_2_5_per_decade() {
        let a = ChartAxis::log(&[150.0, 40_000.0], Fmt::Plain);
        assert_eq!(a.range(), 100.0..100_000.0);
        assert_eq!(
            a.major,
            vec![100.0, 200.0, 500.0, 1000.0, 2000.0, 5000.0, 10_000.0, 20_000.0, 50_000.0, 100_000.0]
        );
    }

    #[test]
    fn axis_through_doubling_values_is_log_with_ticks_at_values() {
        let a = ChartAxis::through(&[1.0, 2.0, 4.0, 8.0, 16.0], Fmt::Plain);
        assert!(a.is_log());
        assert_eq!(a.major, vec![1.0, 2.0, 4.0, 8.0, 16.0]);
        assert!(!ChartAxis::through(&[0.0, 25.0, 50.0, 100.0], Fmt::Percent).is_log());
        // Issue 25, item 7: the README's cache sweep labelled 25% and 30% 23 px apart, on top of each other.
        let cache = ChartAxis::through(&[0.0, 25.0, 30.0, 50.0, 75.0, 100.0], Fmt::Percent);
        assert_eq!(cache.major, [0.0, 25.0, 50.0, 75.0, 100.0]);
        assert_eq!(cache.minor.len(), 6, "a grid line at every value");
        let many: Vec<f64> = (1..=40).map(f64::from).collect();
        let a = ChartAxis::through(&many, Fmt::Plain);
        assert!(a.major.len() <= 20 && a.major[0] == 1.0, "{:?}", a.major);
    }

    #[test]
    fn fmt_labels_are_in_units() {
        assert_eq!(Fmt::Percentile.format(1000.0), "99.9%");
        assert_eq!(Fmt::Percentile.format(2.0), "50%");
        assert_eq!(Fmt::Percentile.format(1.0), "0%");
        assert_eq!(Fmt::Bytes.format(4096.0), "4 KiB");
        assert_eq!(Fmt::Count.format(12_500.0), "12.5k");
        assert_eq!(Fmt::Nanos.format(1_500_000.0), "1.50 ms");
        assert_eq!(Fmt::Category(vec!["a".into()]).format(0.0), "a");
        assert_eq!(Fmt::Category(vec!["a".into()]).format(3.0), "");
    }

    #[test]
    fn line_svg_draws_text_and_paths_and_refuses_empty() {
        let c = LineChart {
            title: "IOPS <&> test".into(),
            x_desc: "x".into(),
            y_desc: "y".into(),
            x: ChartAxis::linear(&[0.0, 10.0], true, Fmt::Plain),
            y: ChartAxis::log(&[1.0, 1000.0], Fmt::Nanos),
            series: vec![
                Series::new("a", vec![(0.0, 1.0), (5.0, 10.0), (10.0, 1000.0)]),
                Series::new("b", vec![(0.0, 2.0), (5.0, -1.0), (10.0, f64::NAN)]),
            ],
            marks: vec![Annotation { at: (5.0, 10.0), label: "knee".into() }],
            limits: Vec::new(),
            legend: Legend::UpperLeft,
        };
        let svg = line_svg(&c, CHART_SIZE).unwrap();
        assert!(svg.starts_with("<svg"), "{svg}");
        assert!(svg.contains("IOPS &lt;&amp;&gt; test"));
        assert!(svg.contains("knee"));
        let mut empty = c.clone();
        empty.series = vec![Series::new("x", vec![(1.0, 0.0)])];
        assert!(line_svg(&empty, CHART_SIZE).is_err());
    }

    #[test]
    fn bar_svg_draws_one_bar_per_name() {
        let c = BarChart {
            title: "IOPS".into(),
            y_desc: "IOPS".into(),
            names: vec!["a".into(), "b".into()],
            sets: vec![BarSet { name: "IOPS".into(), values: vec![10.0, 20.0] }],
            fmt: Fmt::Count,
        };
        let svg = bar_svg(&c, CHART_SIZE).unwrap();
        assert!(svg.contains(">\n20\n</text>"), "{svg}");
        assert!(bar_svg(&BarChart { sets: vec![], ..c }, CHART_SIZE).is_err());
    }
}
