//! Tests of the HTML and Markdown renderings on fixed data: every section present, text from documents
//! escaped, log axes where latency spans decades, no script and no URL anywhere in the page.

use std::collections::BTreeMap;

use iolab_stats::LatencyHistogram;

use super::*;
use crate::sweep::{PointSummary, SweepAxis, SweepPoint, SweepResult, TrialMetrics, SWEEP_SCHEMA};
use crate::RunResult;

fn run_doc(label: &str, r: RunResult) -> ReportDoc {
    ReportDoc {
        label: label.into(),
        source: format!("{label}.json"),
        tags: Vec::new(),
        note: None,
        body: Box::new(r),
    }
}

/// The fixed run of `crate::tests`, with a real read histogram spanning 100 µs to 20 ms.
fn run_with_histogram() -> RunResult {
    let mut r = crate::tests::sample();
    let mut h = LatencyHistogram::new();
    for i in 0..100_000u64 {
        h.record(100_000 + (i % 1000) * 100);
    }
    for _ in 0..100 {
        h.record(20_000_000);
    }
    r.histograms.as_mut().unwrap().read = Some(h.to_base64());
    r
}

/// A sweep along `key` with values `values` (point i: IOPS 10k * min(i+1, 4), p99 doubling past 4 points).
fn sweep(key: &str, values: &[&str], load: bool) -> SweepResult {
    let base = crate::tests::sample();
    let points = values
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let iops = 10_000.0 * (i as f64 + 1.0).min(4.0);
            let p99 = 100_000.0 * 2f64.powi(i.saturating_sub(3) as i32 * 2);
            let t = TrialMetrics {
                seed: 1,
                partial: false,
                iops,
                mb_s: iops * 4096.0 / 1e6,
                lat_mean_ns: Some(p99 / 2.0),
                lat_p99_ns: Some(p99),
                achieved_depth: 1.0,
                read_lat_mean_ns: None,
                cache_read_pct: None,
                flush_p99_ns: None,
            };
            SweepPoint {
                index: i,
                params: BTreeMap::from([(key.to_string(), v.to_string())]),
                line: 0,
                load: if load { v.parse().ok() } else { None },
                result: base.clone(),
                trials: Vec::new(),
                summary: PointSummary::from_trials(&[t]),
            }
        })
        .collect();
    let mut s = SweepResult {
        schema: SWEEP_SCHEMA.into(),
        iolab_version: "0.1.0".into(),
        started_at: "2025-01-02T03:04:05Z".into(),
        partial: false,
        base_seed: 1,
        trials: 1,
        axes: vec![SweepAxis { key: key.into(), values: values.iter().map(|v| v.to_string()).collect() }],
        load_axis: load.then(|| key.to_string()),
        points_planned: values.len(),
        preconditioning: None,
        points,
        knee: None,
        max_p99: None,
    };
    s.analyze(10.0, 20.0, None);
    s
}

fn sweep_doc(label: &str, s: SweepResult) -> ReportDoc {
    ReportDoc {
        label: label.into(),
        source: format!("{label}.json"),
        tags: Vec::new(),
        note: None,
        body: Box::new(s),
    }
}

fn charts(html: &str) -> Vec<&str> {
    html.split("data-chart=\"").skip(1).filter_map(|s| s.split('"').next()).collect()
}

fn assert_self_contained(html: &str) {
    let lower = html.to_ascii_lowercase();
    assert!(!lower.contains("http"), "a URL in the page");
    assert!(!lower.contains("<script"), "a script in the page");
    assert!(!lower.contains("src="), "an external resource");
    assert!(!lower.contains("href="), "a link");
    assert!(!lower.contains("@import") && !lower.contains("url("), "CSS fetching something");
}

#[test]
fn html_single_run_has_every_section() {
    let html = render_html("report", &[run_doc("run1", run_with_histogram())]);
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.trim_end().ends_with("</html>"));
    for needle in [
        "<h1>report</h1>",
        "Run: run1",
        ">IOPS<",
        ">throughput<",
        ">mean latency<",
        ">p99 latency<",
        ">achieved depth<",
        ">CPU per I/O<",
        ">warnings<",
        "<h3>Operations</h3>",
        "Warnings (2)",
        "<h3>Environment</h3>",
        "Configuration (the resolved job",
        "read_percent",
        "AMD EPYC 7443P",
        "<th>layout</th>",
        "3 extents before the run, 4 after, 1,234 split I/Os",
    ] {
        assert!(html.contains(needle), "missing {needle}");
    }
    assert_eq!(charts(&html), ["percentiles", "timeseries-iops", "timeseries-latency"]);
    assert!(!html.contains("Runs side by side"));
    assert!(!html.contains("verdict"), "no verdict card without a verdict");
    assert_self_contained(&html);
}

#[test]
fn html_percentile_curve_from_histogram_is_log_when_latency_spans_decades() {
    let html = render_html("t", &[run_doc("run1", run_with_histogram())]);
    let fig = html.split("data-chart=\"percentiles\"").nth(1).unwrap().split("</figure>").next().unwrap();
    assert!(fig.contains("response time (log scale)"), "{fig}");
    // Ticks at whole decades and 1-2-5 within them, and percentile labels on x.
    assert!(fig.contains("\n100 µs\n</text>") && fig.contains("\n10.0 ms\n</text>"), "{fig}");
    assert!(fig.contains("\n99.9%\n</text>"), "{fig}");
}

#[test]
fn html_timeseries_latency_is_linear_when_it_does_not_span_a_decade() {
    let html = render_html("t", &[run_doc("run1", crate::tests::sample())]);
    let fig =
        html.split("data-chart=\"timeseries-latency\"").nth(1).unwrap().split("</figure>").next().unwrap();
    assert!(!fig.contains("log scale"), "{fig}");
}

#[test]
fn html_escapes_document_text() {
    let mut r = crate::tests::sample();
    r.env.targets[0].name = "/data/<evil>".into();
    r.config = serde_json::json!({ "k<": "v>&" }).into();
    let mut d = run_doc("<script>alert(1)</script>", r);
    d.tags = vec![("hba".into(), "q<l>e&\"".into())];
    d.note = Some("note <b>bold</b>".into());
    d.source = "/tmp/a'b.json".into();
    let html = render_html("title <i>", &[d]);
    assert!(!html.contains("<script>") && !html.contains("<b>bold") && !html.contains("<evil>"));
    assert!(!html.contains("<i>"));
    for needle in [
        "&lt;script&gt;alert(1)&lt;/script&gt;",
        "q&lt;l&gt;e&amp;&quot;",
        "note &lt;b&gt;bold&lt;/b&gt;",
        "a&#39;b",
        "/data/&lt;evil&gt;",
        "k&lt;",
        "v&gt;&amp;",
        "title &lt;i&gt;",
    ] {
        assert!(html.contains(needle), "missing {needle}");
    }
    assert_self_contained(&html);
}

#[test]
fn html_several_runs_get_bars_and_overlaid_percentiles() {
    let mut b = crate::tests::sample();
    b.total.all.iops /= 2.0;
    let html = render_html("t", &[run_doc("a", crate::tests::sample()), run_doc("b", b)]);
    assert!(html.contains("Runs side by side"));
    let c = charts(&html);
    assert_eq!(c.iter().filter(|k| **k == "bars").count(), 4, "{c:?}");
    assert!(html.contains("Response-time percentiles, all runs"));
    assert!(html.contains("Run: a") && html.contains("Run: b"));
    assert_self_contained(&html);
}

#[test]
fn html_qd_sweep_charts_iops_and_latency_with_knee() {
    let s = sweep("qd", &["1", "2", "4", "8", "16", "32"], true);
    assert!(s.knee.as_ref().unwrap().lines[0].point.is_some());
    let html = render_html("t", &[sweep_doc("s", s)]);
    assert_eq!(charts(&html), ["sweep-qd-throughput", "sweep-qd-latency"]);
    assert!(html.contains("IOPS against outstanding I/Os"));
    assert!(html.contains("Response time against outstanding I/Os"));
    assert!(html.contains("outstanding I/Os per worker (qd) (log scale)"));
    assert!(html.contains("knee (qd=8)"));
    assert!(html.contains("<tr class=\"mark\">"));
    assert_self_contained(&html);
}

#[test]
fn html_bs_sweep_charts_mb_s_against_block_size() {
    let html = render_html("t", &[sweep_doc("s", sweep("bs", &["4k", "16k", "64k", "256k"], false))]);
    assert!(html.contains("MB/s against block size"));
    assert!(html.contains("\n4 KiB\n</text>") && html.contains("\n256 KiB\n</text>"), "ticks in bytes");
}

#[test]
fn html_cache_sweep_is_drawn_generically_against_the_param() {
    let html = render_html(
        "t",
        &[sweep_doc("s", sweep("cache", &["0%", "25%", "30%", "50%", "75%", "100%"], false))],
    );
    // No reads in the points: no read-latency chart.
    assert_eq!(charts(&html), ["sweep-cache-throughput", "sweep-cache-latency"]);
    assert!(html.contains("IOPS against cache size"));
    assert!(html.contains("Response time against cache size"));
    assert!(html.contains("share of the target cached (%)"));
    assert!(html.contains("\n25%\n</text>"));
    // A non-numeric field is drawn on a categorical axis.
    let html = render_html("t", &[sweep_doc("s", sweep("rw", &["randread", "randwrite"], false))]);
    assert!(html.contains("IOPS against rw") && html.contains("\nrandwrite\n</text>"));
}

#[test]
fn html_cache_sweep_draws_iops_and_read_latency_against_the_cache_size() {
    // The FabricCache table's shape: IOPS rising, mean read latency falling, 4.7 ms -> 0.9 ms.
    let mut s = sweep("cache", &["0", "25%", "50%", "100%"], false);
    let read_ms = [4.7, 3.1, 2.0, 0.9];
    for (p, ms) in s.points.iter_mut().zip(read_ms) {
        let mut t = TrialMetrics {
            seed: 1,
            partial: false,
            iops: p.summary.iops.mean,
            mb_s: p.summary.mb_s.mean,
            lat_mean_ns: p.summary.lat_mean_ns.as_ref().map(|m| m.mean),
            lat_p99_ns: p.summary.lat_p99_ns.as_ref().map(|m| m.mean),
            achieved_depth: 1.0,
            read_lat_mean_ns: None,
            cache_read_pct: None,
            flush_p99_ns: None,
        };
        t.read_lat_mean_ns = Some(ms * 1e6);
        p.summary = PointSummary::from_trials(&[t]);
    }
    let html = render_html("t", &[sweep_doc("s", s)]);
    assert_eq!(charts(&html), ["sweep-cache-throughput", "sweep-cache-latency", "sweep-cache-read-latency"]);
    assert!(html.contains("IOPS against cache size"));
    assert!(html.contains("Read latency against cache size"));
    assert!(html.contains("mean read response time"));
    // The series is in the SVG and its legend.
    let fig = &html[html.find("sweep-cache-read-latency").unwrap()..];
    assert!(fig.contains("<svg") && fig.contains("mean read"), "{}", &fig[..fig.len().min(2000)]);
    // The y axis spans the read latencies (ticks in ms), not the all-ops latencies of the chart before.
    let svg = &fig[..fig.find("</svg>").unwrap()];
    assert!(svg.contains(" ms"), "read latency ticks in milliseconds");
    assert_self_contained(&html);
}

#[test]
fn html_two_sweeps_are_overlaid_with_their_labels() {
    let html = render_html(
        "t",
        &[
            sweep_doc("qlogic", sweep("qd", &["1", "2", "4", "8"], true)),
            sweep_doc("emulex", sweep("qd", &["1", "2", "4", "8"], true)),
        ],
    );
    assert_eq!(charts(&html).len(), 2);
    assert!(
        html.contains("\nqlogic\n</text>") && html.contains("\nemulex\n</text>"),
        "legend names the sweeps"
    );
    assert!(html.contains("qlogic p99") && html.contains("emulex mean"));
}

#[test]
fn html_verdict_and_loadgen_sections_when_present() {
    let mut r = crate::tests::sample();
    r.verdict = Some(crate::verdict::Verdict {
        pass: false,
        reasons: vec!["db read avg 25 ms > 20 ms".into()],
        ..Default::default()
    });
    r.loadgen = Some(crate::loadgen::LoadgenResult {
        users: 100,
        mode: "rate".into(),
        backlog: (0..5)
            .map(|i| crate::loadgen::BacklogPoint { t_s: i as f64, dispatched: 10, completed: 9, backlog: i })
            .collect(),
        overload_threshold: 150.0,
        ..Default::default()
    });
    let html = render_html("t", &[run_doc("x", r)]);
    assert!(html.contains("Verdict: <span class=\"fail\">FAIL</span>"));
    assert!(html.contains("db read avg 25 ms &gt; 20 ms"));
    assert!(html.contains("Users and transactions (LoadGen)"));
    assert!(charts(&html).contains(&"backlog"));
}

#[test]
fn markdown_has_tables_and_escapes_cells() {
    let mut a = run_doc("a|b", run_with_histogram());
    a.note = Some("line1\nline2 <x>".into());
    let md = render_markdown(
        "Title",
        &[
            a,
            run_doc("c", crate::tests::sample()),
            sweep_doc("s", sweep("qd", &["1", "2", "4", "8", "16"], true)),
        ],
    );
    assert!(md.starts_with("## Title\n"));
    for needle in [
        "| a\\|b | run |",
        "line1 line2 &lt;x&gt;",
        "### Summary",
        "### Response-time percentiles (all ops)",
        "### Against a\\|b",
        "### Sweep: s",
        "| qd | IOPS |",
        "knee",
        "### Run: c",
        "/data/f (file, 3 extents before the run, 4 after, 1,234 split I/Os)",
        "- warning: c: ",
        "Percentile curve (all ops):",
    ] {
        assert!(md.contains(needle), "missing {needle}\n{md}");
    }
    assert!(!md.contains("<x>"));
}

#[test]
fn doc_body_from_json_names_what_it_found() {
    let from_json = |text: &str| crate::kinds::parse_text(text).map_err(|e| e.to_string());
    let kind = |text: &str| from_json(text).map(|d| d.kind().name());
    let r = crate::tests::json(&crate::tests::sample());
    assert!(matches!(kind(&r), Ok("run")));
    let s = crate::tests::json(&sweep("qd", &["1", "2"], true));
    assert!(matches!(kind(&s), Ok("sweep")));
    assert!(from_json("nope").unwrap_err().starts_with("not JSON"));
    assert!(from_json("{}").unwrap_err().contains("no \"schema\" field"));
    assert!(matches!(kind(r#"{"schema":"iolab.findmax/1"}"#), Ok("find-max")));
    assert!(from_json(r#"{"schema":"iolab.other/1"}"#).unwrap_err().contains("'iolab.other/1'"));
    assert!(from_json(r#"{"schema":"iolab.result/1"}"#).unwrap_err().contains("not a valid iolab.result/1"));
}

#[test]
fn html_empty_and_degenerate_inputs_do_not_panic() {
    let mut r = crate::tests::sample();
    r.timeseries.clear();
    r.total.all.lat_ns = None;
    r.total.read.ops = 0;
    r.total.write.ops = 0;
    r.histograms = None;
    r.total.all.iops = f64::NAN;
    let html = render_html("t", &[run_doc("x", r.clone()), run_doc("y", r)]);
    assert!(html.contains("not drawn"));
    let empty = render_html("t", &[]);
    assert!(empty.contains("</html>"));
    let s = SweepResult { points: Vec::new(), ..sweep("qd", &["1"], true) };
    let _ = render_html("t", &[sweep_doc("s", s.clone())]);
    let _ = render_markdown("t", &[sweep_doc("s", s)]);
}

/// Issue 15, item 9: the Markdown report had two "99.999%" columns: curve points at 99,000 and 100,000 both
/// round to the decade 1/(1-p) = 10^5. One column per decade.
#[test]
fn markdown_percentile_curve_has_one_column_per_decade() {
    let curve = [(1.0, 1.0), (10.0, 2.0), (99_000.0, 3.0), (100_000.0, 4.0), (1e6, 5.0)];
    let picks = super::markdown::decade_picks(&curve);
    let xs: Vec<f64> = picks.iter().map(|p| p.0).collect();
    assert_eq!(xs, [1.0, 10.0, 99_000.0, 1e6]);
}

/// The `<svg ...>` start tags of a page.
fn svg_tags(html: &str) -> Vec<&str> {
    html.split("<svg").skip(1).filter_map(|s| s.split('>').next()).collect()
}

/// Issue 15, item 10: the charts were a fixed 640 px and left half of a 1280 px page empty. They now scale
/// to their column (`width="100%"` over the `viewBox`), two columns wide, and the last of an odd number
/// spans both, drawn wide.
#[test]
fn html_charts_scale_to_the_page_width() {
    let html = render_html("t", &[run_doc("run1", run_with_histogram())]);
    let tags = svg_tags(&html);
    assert_eq!(tags.len(), 3);
    for t in &tags {
        assert!(t.contains("width=\"100%\"") && t.contains("viewBox=\"0 0 "), "{t}");
        assert!(!t.contains("height="), "no fixed height: {t}");
    }
    assert!(tags[0].contains("viewBox=\"0 0 640 360\"") && tags[2].contains("viewBox=\"0 0 1300 360\""));
    assert_eq!(html.matches("<figure class=\"chart wide\"").count(), 1, "the third of three is wide");
    assert!(
        html.contains("grid-template-columns") && html.contains("figure.chart.wide { grid-column: 1 / -1; }")
    );
}

/// A qd sweep whose points ran 3 trials each: IOPS 90/100/110 % of the sweep's, p99 the same.
fn sweep_with_trials() -> SweepResult {
    let mut s = sweep("qd", &["1", "2", "4", "8"], true);
    s.trials = 3;
    for p in &mut s.points {
        let one = TrialMetrics::from_result(&p.result);
        let base = (p.summary.iops.mean, p.summary.lat_p99_ns.as_ref().expect("a p99").mean);
        p.trials = [0.9, 1.0, 1.1]
            .iter()
            .map(|f| TrialMetrics { iops: base.0 * f, lat_p99_ns: Some(base.1 * f), ..one.clone() })
            .collect();
        p.summary = PointSummary::from_trials(&p.trials);
    }
    s
}

/// Issue 15, item 10: a sweep run with `--trials` had no error bars. Each point now carries the 95 %
/// confidence interval of its mean as a bar, and the caption says so.
#[test]
fn html_sweep_with_trials_draws_error_bars_of_the_95_interval() {
    let s = sweep_with_trials();
    let refs = [figures::SweepRef { label: String::new(), sweep: &s }];
    let charts = figures::sweep_charts(&refs, "qd");
    let iops = &charts[0].series[0];
    assert_eq!(iops.errors.len(), 4);
    let p = &s.points[1].summary.iops;
    assert_eq!(iops.errors[1], (2.0, p.ci95_low.unwrap(), p.ci95_high.unwrap()));
    let p99 = charts[1].series.iter().find(|x| x.name == "p99").unwrap();
    assert_eq!(p99.errors.len(), 4, "latency points have bars too");
    let html = render_html("t", &[sweep_doc("s", s.clone())]);
    assert!(html.contains("Error bars: the 95 % confidence interval of the mean over the 3 trials"));
    // One trial: no interval, no bar, no such caption.
    let one = sweep("qd", &["1", "2", "4", "8"], true);
    let refs = [figures::SweepRef { label: String::new(), sweep: &one }];
    assert!(figures::sweep_charts(&refs, "qd")[0].series[0].errors.is_empty());
    let html_one = render_html("t", &[sweep_doc("s", one)]);
    assert!(!html_one.contains("Error bars"));
    // Drawn: each bar is three lines (the bar and its two caps), 4 points x 3 series (IOPS, mean, p99); the
    // axes reach the bars' ends, which may add a grid line or two.
    let lines = |h: &str| h.matches("<polyline").count();
    assert!(lines(&html) >= lines(&html_one) + 4 * 3 * 3, "error bars in the SVG");
}

/// Issue 15, item 10: `--max-p99` drew no limit line. The latency chart now has a dashed line at the limit,
/// labelled with it, and its axis reaches the limit.
#[test]
fn html_max_p99_sweep_draws_the_limit_line_with_its_label() {
    let mut s = sweep("qd", &["1", "2", "4", "8", "16", "32"], true);
    s.analyze(10.0, 20.0, Some(300_000));
    let refs = [figures::SweepRef { label: String::new(), sweep: &s }];
    let charts = figures::sweep_charts(&refs, "qd");
    assert!(charts[0].limits.is_empty(), "no limit on the IOPS chart");
    assert_eq!(charts[1].limits.len(), 1);
    assert_eq!(charts[1].limits[0].y, 300_000.0);
    let html = render_html("t", &[sweep_doc("s", s)]);
    let latency_svg =
        html.split("data-chart=\"sweep-qd-latency\"").nth(1).unwrap().split("</svg>").next().unwrap();
    assert!(latency_svg.contains("p99 limit 300 µs (--max-p99)"), "{latency_svg}");
    assert!(latency_svg.contains("stroke=\"#A0140C\""), "the line is drawn in the limit colour");
    assert!(html.contains("Dashed red line: the p99 limit of --max-p99 (300 µs)"));
}

/// `r` with a resolved plan: one worker table of `workers` workers at `qd`, reads `read_pct` %, 4 KiB
/// random, on `target`.
fn with_plan(mut r: RunResult, name: &str, qd: u32, read_pct: f64, target: &str) -> RunResult {
    let worker = serde_json::json!({
        "group": "worker", "qd": qd, "rate_iops": null,
        "specs": [{ "read_pct": read_pct, "random_pct": 100.0, "bs": [{ "size_bytes": 4096, "weight": 1 }] }]
    });
    r.config =
        serde_json::json!({ "plan": { "name": name, "workers": [worker], "targets": [{ "name": target }] } })
            .into();
    r
}

/// Issue 15, item 10: series were named by file name (`run`, `run2`). They are named by workload: what
/// differs between the inputs, with the job name; the file name only when two workloads are the same.
#[test]
fn html_series_are_named_by_their_workload() {
    let a = with_plan(crate::tests::sample(), "iolab", 16, 100.0, "sim:ssd");
    let b = with_plan(crate::tests::sample(), "iolab", 32, 70.0, "sim:ssd");
    let html = render_html("t", &[run_doc("run", a.clone()), run_doc("run2", b)]);
    let bars = html.split("data-chart=\"bars\"").nth(1).unwrap();
    assert!(
        bars.contains("\nrandread qd 16\n</text>") && bars.contains("\nrandrw 70/30 qd 32\n</text>"),
        "{bars}"
    );
    assert!(html.contains("workload: randread 4k qd 16 on sim:ssd"));
    let md = render_markdown("t", &[run_doc("run", a.clone())]);
    assert!(
        md.contains("| run | randread 4k qd 16 on sim:ssd |"),
        "the Markdown summary says the workload: {md}"
    );
    let docs = [run_doc("x", a.clone()), run_doc("y", a.clone())];
    assert_eq!(
        names::workload_names(&docs.iter().collect::<Vec<_>>()),
        ["x", "y"],
        "the same workload: the inputs' names"
    );
    let oltp = with_plan(a, "oltp", 16, 100.0, "sim:ssd");
    let docs = [run_doc("x", oltp.clone()), run_doc("y", oltp)];
    assert_eq!(names::workload_names(&docs.iter().collect::<Vec<_>>()), ["oltp (x)", "oltp (y)"]);
}

/// Issue 15, item 10: a run with several worker groups (OLTP data vs log) got a table but no chart. It gets
/// IOPS and latency bars per group.
#[test]
fn html_run_with_two_groups_charts_each_group() {
    let r = crate::tests::with_groups(2_000_000.0, 3_000_000.0, 500_000.0, 1_000.0);
    let html = render_html("t", &[run_doc("oltp", r.clone())]);
    let c = charts(&html);
    assert!(c.contains(&"groups-iops") && c.contains(&"groups-latency"), "{c:?}");
    let bars = figures::group_bars("oltp", &r);
    assert_eq!(bars[0].names, r.groups.iter().map(|g| g.name.clone()).collect::<Vec<_>>());
    let one = crate::tests::sample();
    assert!(figures::group_bars("one", &one).is_empty(), "one group: no group chart");
}

#[test]
fn miss_ratio_curves_are_drawn_with_the_recommendation() {
    let m = crate::mrc::tests::sample();
    let json = serde_json::to_string(&m).unwrap();
    let body = crate::kinds::parse_text(&json).unwrap();
    let doc = ReportDoc { label: "trace".into(), source: "mrc.json".into(), tags: vec![], note: None, body };
    let html = render_html("curves", std::slice::from_ref(&doc));
    assert!(html.contains("data-chart=\"mrc\""), "no MRC chart drawn");
    assert!(html.contains("a 4.00 MiB cache would serve 70% of reads"), "no recommendation");
    let md = render_markdown("curves", &[doc]);
    assert!(
        md.contains("### Miss-ratio curves: trace") && md.contains("recommendation: a 4.00 MiB cache"),
        "{md}"
    );
}

#[test]
fn every_rendering_of_a_replay_says_what_was_replayed_skipped_and_the_lag() {
    let r = crate::tests::sample_replay();
    let want = [
        "run.iolabtrace at 2x: 49,982 of 49,984 records replayed, skipped 1 beyond_target, 1 not_read_or_write",
        "lag (submit - scheduled start) mean 1.20 µs p50 800 ns p99 4.00 µs max 30.0 µs",
        "the trace clock ticks every 1.00 ms: up to 12 records share a start time, spread evenly over the tick (--spread)",
    ];
    let text = crate::tests::text(&r);
    let html = render_html("t", &[run_doc("replay", r.clone())]);
    // Markdown escapes the underscores of the reasons.
    let md = render_markdown("t", &[run_doc("replay", r)]).replace('\\', "");
    for (what, out) in [("text", &text), ("html", &html), ("markdown", &md)] {
        for w in want {
            assert!(out.contains(w), "{what} lacks {w:?}:\n{out}");
        }
    }
    assert!(text.contains("replay  run.iolabtrace"), "{text}");
    assert!(!crate::tests::text(&crate::tests::sample()).contains("replay"));
}

#[test]
fn html_and_markdown_of_a_run_over_several_hosts_have_a_row_per_rank_and_the_ranks_line() {
    let r = crate::tests::sample_hosts();
    let html = render_html("report", &[run_doc("mpi", r.clone())]);
    assert!(html.contains("<h3>Hosts (2 ranks)</h3>"), "{html}");
    for h in crate::hosts::HOST_COLUMNS {
        assert!(html.contains(&format!(">{h}</th>")), "column {h}");
    }
    assert!(html.contains("<td>node1</td>") && html.contains("<td>node2</td>"));
    assert!(
        html.contains("2 ranks: start skew 20.0 µs, first done 10.000 s, last done 10.010 s</p>"),
        "{html}"
    );
    assert_self_contained(&html);
    let md = render_markdown("report", &[run_doc("mpi", r)]);
    assert!(md.contains("Hosts (2 ranks):"), "{md}");
    assert!(
        md.contains("| rank | host | ops | IOPS | MB/s | mean | p99 | cpu s | done s | warnings |"),
        "{md}"
    );
    assert!(md.contains("| 1 | node2 |"), "{md}");
    assert!(md.contains("2 ranks: start skew 20.0 µs, first done 10.000 s, last done 10.010 s"), "{md}");
    let single = crate::tests::sample();
    assert!(!render_html("report", &[run_doc("one", single.clone())]).contains("Hosts ("));
    assert!(!render_markdown("report", &[run_doc("one", single)]).contains("Hosts ("));
}

/// Issue 25, item 1 (b): an open-loop run's page shows iolab's own lag apart.
#[test]
fn an_open_loop_run_page_has_the_lag_card() {
    let html = render_html("t", &[run_doc("run1", crate::tests::sample_open_loop())]);
    assert!(html.contains("issue lag p99"), "the lag card");
    assert!(html.contains("in flight at end") && html.contains("7 I/Os"), "what the window's end left out");
}

/// Issue 25, item 4: a sweep's page says what each point's warnings are, not only how many.
#[test]
fn a_sweep_page_lists_each_points_warnings() {
    let mut doc = sweep("qd", &["1", "2", "4"], false);
    doc.points[0].result.warnings =
        vec![iolab_stats::Warning::HighVariability { metric: "iops".into(), cv: 0.4, ramp_s: None }];
    let html = render_html("t", &[sweep_doc("s", doc)]);
    assert!(html.contains("iops varied a lot"), "the warning in words");
}

/// Issue 25, item 5: a sweep's points table has each worker group's IOPS and mean beside the total.
#[test]
fn a_sweep_page_shows_each_group() {
    let mut doc = sweep("qd", &["1", "2"], true);
    for p in &mut doc.points {
        let mut db = p.result.groups[0].clone();
        db.name = "db".into();
        let mut log = db.clone();
        log.name = "log".into();
        p.result.groups = vec![db, log];
    }
    let html = render_html("t", &[sweep_doc("s", doc)]);
    assert!(html.contains("db IOPS</th>") && html.contains("log mean</th>"), "group columns");
}

/// Issue 25, item 7: a sweep report says what was tested (environment, targets, resolved job), and its
/// caption promises a knee ring only where there is a knee.
#[test]
fn a_sweep_page_says_what_was_tested_and_no_ring_without_a_knee() {
    let doc = sweep("qd", &["1", "2", "4"], true);
    let html = render_html("t", &[sweep_doc("s", doc)]);
    assert!(html.contains("What was tested") && html.contains("<h3>Environment</h3>"), "environment");
    assert!(html.contains("Configuration (the resolved job"), "configuration");
    assert!(!html.contains("a ring marks the knee"), "no knee, no ring promised");
}

fn db_doc(label: &str, body: Box<dyn crate::Document>) -> ReportDoc {
    ReportDoc { label: label.into(), source: format!("{label}.json"), tags: Vec::new(), note: None, body }
}

#[test]
fn html_db_run_shows_nopm_transactions_consistency_devices_and_the_disclaimer() {
    let mut r = crate::db::tests::sample();
    r.engine.dir = Some("/mnt/<gen5>".into());
    let html = render_html("db", &[db_doc("gen5", Box::new(r))]);
    for needle in [
        "Database run: gen5",
        ">NOPM<",
        ">1,500<",
        ">TPM<",
        ">new_order p99<",
        "not TPC-C compliant",
        "<h3>Transactions</h3>",
        "W_YTD = sum(D_YTD)",
        "vda (filesystem)",
        "/mnt/&lt;gen5&gt;",
        ">passed<",
        "the database&#39;s own I/O, same window (the PostgreSQL server&#39;s processes; cgroup-v1 blkio",
        ">disk written<",
        "Not seen: the kernel&#39;s writeback.",
    ] {
        assert!(html.contains(needle), "missing {needle}");
    }
    assert_eq!(
        charts(&html),
        [
            "db-tx-latency",
            "db-tx-percentiles",
            "db-devices",
            "db-nopm-over-time",
            "db-device-latency-over-time"
        ]
    );
    assert!(!html.contains("not drawn"), "every chart drew");
    assert_self_contained(&html);
}

/// Issue 37, item 5: what a DBA needs beside the totals, on the page and in Markdown: NOPM and the
/// device's latency over time (the worst interval named), the CPU with whether it was CPU-bound, and the
/// database against memory on one line.
#[test]
fn a_db_run_shows_the_window_over_time_its_cpu_and_its_size_against_memory() {
    let r = crate::db::tests::sample();
    let docs = [db_doc("gen5", Box::new(r))];
    let html = render_html("db", &docs);
    let md = render_markdown("db", &docs);
    for needle in [
        "2 intervals of 1 s: NOPM 1,200 to 1,800",
        "worst 1-2 s: NOPM 1,200, loop3 read 0.20 ms / write 9.50 ms mean, 3.5 MiB/s written",
        "not CPU-bound: the PostgreSQL server",
        "database 150 MiB = 1.8 % of 8.00 GiB memory (held in memory",
    ] {
        let escaped = needle.replace('\'', "&#39;");
        assert!(html.contains(&escaped), "missing {needle} in the page");
        assert!(md.contains(needle), "missing {needle} in\n{md}");
    }
    assert!(md.contains("**Over time** (1 s intervals, device loop3)"), "{md}");
    assert!(md.contains("| 1-2 s | 1,200 | 2,640 | 10.0 | 250.0 | 200 µs | 9.50 ms | 3.5 |"), "{md}");
    let text = crate::Document::text(&crate::db::tests::sample());
    assert!(
        text.contains("over time  2 intervals of 1 s") && text.contains("CPU        not CPU-bound"),
        "{text}"
    );
    assert!(text.contains("memory     database 150 MiB"), "{text}");
}

#[test]
fn html_db_runs_side_by_side_and_a_sweep_over_users_with_its_knee() {
    let a = crate::db::tests::sample();
    let mut b = a.clone();
    b.run.nopm = 3000.0;
    let s = crate::db_sweep::tests::sample();
    let docs = [db_doc("gen5", Box::new(a)), db_doc("gen6", Box::new(b)), db_doc("users", Box::new(s))];
    let html = render_html("db", &docs);
    let kinds = charts(&html);
    assert_eq!(&kinds[..4], ["db-bars", "db-bars", "db-bars", "db-percentiles"]);
    assert_eq!(&kinds[kinds.len() - 2..], ["db-sweep-nopm", "db-sweep-latency"]);
    assert!(html.contains("Database runs side by side") && html.contains("Database sweep over users: users"));
    assert!(html.contains("knee: 4 users") && html.contains(">4 users<"), "the knee is marked and carded");
    assert!(!html.contains("not drawn"));
    let md = render_markdown("db", &docs);
    for needle in [
        "### Database runs side by side",
        "| gen6 | tpcc postgres | 2 | 3,000 |",
        "### Database run: gen5",
        "| new\\_order | 50 | 1 | 2 | 0 |",
        "### Database sweep over users: users",
        "| 4 | 2,500 |",
        "knee",
        "Knee (first user count after which NOPM gains < 10% while new_order p99 grows > 20%): 4 users.",
        "not TPC-C compliant",
    ] {
        assert!(md.contains(needle), "missing {needle} in\n{md}");
    }
}

#[test]
fn html_and_markdown_tpch_show_each_query_the_total_the_geomean_and_the_devices() {
    let mut t = crate::db_tpch::tests::sample();
    t.queries[1].title = "minimum <cost> supplier".into();
    let docs = [db_doc("tpch-gen5", Box::new(t))];
    let html = render_html("db", &docs);
    for needle in [
        "Analytics queries (tpch): tpch-gen5",
        ">total query time<",
        ">512 ms<",
        ">geometric mean<",
        ">77.5 ms<",
        "not TPC-H compliant",
        "<h3>Queries</h3>",
        "minimum &lt;cost&gt; supplier",
        "vda (filesystem)",
    ] {
        assert!(html.contains(needle), "missing {needle}");
    }
    assert_eq!(charts(&html), ["db-tpch-queries", "db-devices"]);
    assert!(!html.contains("not drawn"), "every chart drew");
    assert_self_contained(&html);
    let md = render_markdown("db", &docs);
    for needle in [
        "### Analytics queries (tpch): tpch-gen5",
        "**2 queries: 512 ms in all, geometric mean 77.5 ms",
        "| Q14 | promotion effect | 1 | 12.0 ms |",
        "| Q2 | minimum &lt;cost&gt; supplier | 4 | 500 ms |",
        "not TPC-H compliant",
        "| vda (filesystem) |",
        "the database's own I/O, same window (the PostgreSQL server's processes; cgroup-v1 blkio",
        "| vda | 4.0 | 45.0 | 0 | 32.0 KiB | 360 KiB | 40.0 KiB | 400 KiB |",
    ] {
        assert!(md.contains(needle), "missing {needle} in\n{md}");
    }
}

#[test]
fn html_and_markdown_copy_show_the_time_the_rate_and_both_sides() {
    let c = crate::db_copy::tests::sample();
    let docs = [db_doc("copy-gen5", Box::new(c))];
    let html = render_html("db", &docs);
    for needle in [
        "Database copy: copy-gen5",
        ">copy time<",
        ">0.50 s<",
        ">88.1<",
        "pg_basebackup",
        "Devices under the source (the copy)",
        "Devices under the destination (the copy)",
    ] {
        assert!(html.contains(needle), "missing {needle}");
    }
    assert!(!html.contains("TPC-"), "a copy runs no TPC workload and carries no TPC disclaimer");
    assert_eq!(charts(&html), ["db-devices", "db-devices"]);
    assert_self_contained(&html);
    let md = render_markdown("db", &docs);
    for needle in [
        "### Database copy: copy-gen5",
        "**pg\\_basebackup to /mnt/b/copy: 0.50 s, 42.0 MiB in 900 files, 88.1 MB/s**",
        "Devices under the source, during the copy:",
        "Devices under the destination, during the copy:",
    ] {
        assert!(md.contains(needle), "missing {needle} in\n{md}");
    }
}

/// Issue 37, item 4: the tpch report lacked Power@Size (the text prints it), and its engine table sat under
/// "Warnings (0)". The page has a Power@Size card and the derived line, the Markdown the line, and the facts
/// their own heading.
#[test]
fn a_tpch_report_shows_power_at_size_and_its_engine_table_under_its_own_heading() {
    let t = crate::db_tpch::tests::sample();
    let power = t.derived.as_ref().expect("the sample has derived figures").power_at_size;
    let docs = [db_doc("tpch", Box::new(t))];
    let html = render_html("db", &docs);
    assert!(html.contains(">Power@Size<") && html.contains(&format!(">{power:.1}<")), "a card");
    assert!(html.contains(&format!("Power@Size {power:.1} (over ")), "the derived line");
    let facts = html.find("<table class=\"facts\">").expect("the facts table");
    let heading = html[..facts].rfind("<h3>").unwrap();
    assert_eq!(&html[heading..facts], "<h3>Engine and settings</h3>\n");
    let md = render_markdown("db", &docs);
    assert!(md.contains(&format!("Power@Size {power:.1} (over ")), "{md}");
}

/// Issue 37, item 4: the database runs side by side were named by their catalog ids; they are named by what
/// tells them apart (their workload and engine, users, warehouses, the engine's settings), the input's name
/// only where that is all the same.
#[test]
fn db_runs_side_by_side_are_named_by_engine_and_settings() {
    let a = crate::db::tests::sample();
    let mut b = a.clone();
    b.config.users = 8;
    b.engine.settings = vec![crate::db::Setting { name: "shared_buffers".into(), value: "1GB".into() }];
    let docs = [db_doc("1a2b3c4d", Box::new(a.clone())), db_doc("5e6f7a8b", Box::new(b))];
    let html = render_html("db", &docs);
    let side = &html[html.find("id=\"db-compare\"").unwrap()..];
    let side = &side[..side.find("</section>").unwrap()];
    assert!(side.contains("8 users") && side.contains("shared_buffers=1GB"), "{side}");
    assert!(side.contains(&format!("{} on {}", a.header.workload, a.engine.name)), "{side}");
    assert!(!side.contains("1a2b3c4d") && !side.contains("5e6f7a8b"), "not by id: {side}");
    let same = [db_doc("1a2b3c4d", Box::new(a.clone())), db_doc("5e6f7a8b", Box::new(a))];
    let html = render_html("db", &same);
    assert!(html.contains("(5e6f7a8b)"), "the same runs are told apart by their names");
}
