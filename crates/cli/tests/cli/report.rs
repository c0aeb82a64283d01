//! `iolab report` end to end, and checked in a real browser.
//!
//! Reports are made for (a) one run, (b) a queue-depth sweep with 3 trials per point and `--max-p99`, (c)
//! two runs, (d) a run of a profile with several worker groups and (e) a run with a row per host (MPI
//! ranks), from JSON files of runs on the emulated device. Each page is then opened in headless Chromium (Debian's `chromium`, which `.ci/run` installs): it
//! must load with no console message and no failed request, its DOM must hold every chart, and each chart
//! must have drawn. To check the drawing, the charts' SVGs are laid out one under the other at the size of
//! their `viewBox`, screenshotted, and each chart's rectangle of the PNG must have enough non-white pixels
//! and enough coloured ones (series and bars are coloured; axes, grid and text are grey or black). To check
//! the layout, a copy of the page with a measuring script is loaded 1280 px wide: the charts of each row
//! must fill the width of their grid. Without Chromium the browser part prints `skipped: chromium not
//! installed`.
//!
//! Bad inputs are usage errors (exit 2) that quote the input and write nothing.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::util::{iolab, tempdir, SIM};

/// Width of the browser window the layout is checked at: a laptop's page.
const PAGE_W: u32 = 1280;

/// Runs `iolab ARGS` in `dir`, asserting exit code 0.
fn ok(dir: &Path, args: &[&str]) {
    let out = iolab().current_dir(dir).args(args).output().expect("spawn iolab");
    assert_eq!(
        out.status.code(),
        Some(0),
        "iolab {} failed: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Writes run1.json, run2.json and sweep.json (emulated device, virtual time) into `dir`.
fn make_inputs(dir: &Path) {
    ok(
        dir,
        &[&["run"][..], &SIM, &["-d", "3s", "--ramp", "0", "--qd", "16", "--json", "run1.json", "-q"]]
            .concat(),
    );
    ok(
        dir,
        &[
            "run",
            "--target",
            "sim:fixed,latency=300us,servers=4",
            "--clock",
            "virtual",
            "--seed",
            "2",
            "-d",
            "3s",
            "--ramp",
            "0",
            "--rw",
            "randrw",
            "--read-pct",
            "70",
            "--json",
            "run2.json",
            "-q",
        ],
    );
    ok(
        dir,
        &[
            &["sweep"][..],
            &SIM,
            &["--qd", "1..64:x4", "-d", "1s", "--ramp", "0", "--trials", "3", "--max-p99", "300us"],
            &["--json", "sweep.json", "-q"],
        ]
        .concat(),
    );
    ok(
        dir,
        &[
            "run",
            "--profile",
            "oltp",
            "--target",
            "data=sim:ssd",
            "--target",
            "log=sim:fixed,latency=50us",
            "--clock",
            "virtual",
            "--seed",
            "3",
            "-d",
            "2s",
            "--json",
            "oltp.json",
            "-q",
        ],
    );
    with_two_hosts(&dir.join("run1.json"), &dir.join("hosts.json"));
}

/// `from` as if it had run over two hosts (MPI ranks): a `hosts[]` row per rank and the `ranks` figures.
fn with_two_hosts(from: &Path, to: &Path) {
    let mut r: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(from).unwrap()).unwrap();
    let row = |rank: u32| {
        serde_json::json!({
            "rank": rank, "host": format!("node{rank}"), "workers": 1, "total": r["total"], "cpu": r["cpu"],
            "start_offset_s": 0.0, "done_s": 3.0, "warnings": [], "kernel": "Linux 6.8.0", "cpu_model": "EPYC",
        })
    };
    r["hosts"] = serde_json::json!([row(0), row(1)]);
    r["ranks"] = serde_json::json!({
        "size": 2, "start_skew_s": 0.00002, "first_done_s": 3.0, "last_done_s": 3.0, "stonewall": false,
    });
    std::fs::write(to, serde_json::to_string(&r).unwrap()).unwrap();
}

/// The Chromium binary: `$CHROMIUM`, else `chromium` or `chromium-browser` on the PATH.
pub(crate) fn chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .flat_map(|d| ["chromium", "chromium-browser"].map(|n| d.join(n)))
        .find(|p| p.is_file())
}

/// Runs headless Chromium with `args` on `url`, with its own profile directory; returns (stdout, stderr).
/// Killed after 90 s.
fn run_chromium(bin: &Path, profile: &Path, args: &[String], url: &str) -> (String, String) {
    let mut child = Command::new(bin)
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--hide-scrollbars"])
        .arg("--force-device-scale-factor=1")
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start chromium");
    let (mut so, mut se) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let t_out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut so, &mut s);
        s
    });
    let t_err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut se, &mut s);
        s
    });
    let start = Instant::now();
    loop {
        if child.try_wait().expect("wait for chromium").is_some() {
            break;
        }
        if start.elapsed() > Duration::from_secs(90) {
            let _ = child.kill();
            panic!("chromium did not finish within 90 s on {url}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.wait();
    (t_out.join().unwrap_or_default(), t_err.join().unwrap_or_default())
}

/// The SVG of each `<figure class="chart">` of a report, with its `data-chart` kind.
fn chart_svgs(html: &str) -> Vec<(String, String)> {
    html.split("<figure class=\"chart")
        .skip(1)
        .map(|f| {
            let kind =
                f.split("data-chart=\"").nth(1).and_then(|s| s.split('"').next()).unwrap_or("").to_string();
            let svg = f
                .find("<svg")
                .and_then(|a| f.find("</svg>").map(|b| f[a..b + 6].to_string()))
                .unwrap_or_default();
            (kind, svg)
        })
        .collect()
}

/// Loads `report` in Chromium and checks the page, then screenshots its charts and checks each drew.
pub(crate) fn check_in_browser(bin: &Path, dir: &Path, report: &Path, want_charts: usize) {
    let html = std::fs::read_to_string(report).expect("read the report");
    let profile = dir.join("chromium-profile");
    let url = format!("file://{}", report.display());
    // 1. The page loads: DOM dumped, every chart in it, no console message, no failed load.
    let (dom, log) = run_chromium(
        bin,
        &profile,
        &["--enable-logging=stderr".into(), "--v=0".into(), "--dump-dom".into()],
        &url,
    );
    assert!(
        dom.contains("</html>") || dom.contains("</body>"),
        "no DOM from chromium for {url}\nstderr: {log}"
    );
    assert_eq!(dom.matches("<figure class=\"chart").count(), want_charts, "charts in the DOM of {url}");
    assert_eq!(dom.matches("<svg").count(), want_charts, "SVGs in the DOM of {url}");
    for line in log.lines() {
        let bad = line.contains(":CONSOLE")
            || line.contains("net::ERR_")
            || line.contains("Refused to")
            || line.contains("Uncaught");
        assert!(!bad, "browser console or load error on {url}: {line}");
    }

    // 2. Each chart drew: one screenshot of all charts stacked at known positions.
    let svgs = chart_svgs(&html);
    assert_eq!(svgs.len(), want_charts);
    check_drawn(bin, dir, report, &svgs);
    // 3. The charts fill the page: at 1280 px, each row of the grid is filled.
    check_layout(bin, dir, report, &html);
}

/// The `viewBox` size of an SVG: the size it is drawn at.
fn view_box(svg: &str) -> (u32, u32) {
    let v = svg.split("viewBox=\"").nth(1).and_then(|s| s.split('"').next()).unwrap_or("");
    let n: Vec<u32> = v.split(' ').filter_map(|x| x.parse().ok()).collect();
    assert_eq!(n.len(), 4, "a viewBox in {}", &svg[..svg.len().min(200)]);
    (n[2], n[3])
}

/// Lays the charts out one under the other at their `viewBox` size, screenshots them, and checks that each
/// chart's rectangle has enough ink and enough colour.
fn check_drawn(bin: &Path, dir: &Path, report: &Path, svgs: &[(String, String)]) {
    let sizes: Vec<(u32, u32)> = svgs.iter().map(|(_, svg)| view_box(svg)).collect();
    let width = sizes.iter().map(|s| s.0).max().unwrap_or(1);
    let tops: Vec<u32> = sizes.iter().scan(0, |top, s| Some(std::mem::replace(top, *top + s.1))).collect();
    let height: u32 = sizes.iter().map(|s| s.1).sum();
    let mut sheet = String::from("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><style>body{margin:0;background:#fff}div{position:absolute;left:0;overflow:hidden}</style></head><body>");
    for ((_, svg), ((w, h), top)) in svgs.iter().zip(sizes.iter().zip(&tops)) {
        sheet.push_str(&format!("<div style=\"top:{top}px;width:{w}px;height:{h}px\">{svg}</div>"));
    }
    sheet.push_str("</body></html>");
    let sheet_path = dir.join(format!("{}-sheet.html", report.file_stem().unwrap().to_string_lossy()));
    std::fs::write(&sheet_path, sheet).unwrap();
    let png_path = sheet_path.with_extension("png");
    let (_, log) = run_chromium(
        bin,
        &dir.join("chromium-profile"),
        &[format!("--window-size={width},{height}"), format!("--screenshot={}", png_path.display())],
        &format!("file://{}", sheet_path.display()),
    );
    let file = std::fs::File::open(&png_path)
        .unwrap_or_else(|e| panic!("no screenshot {} ({e}): {log}", png_path.display()));
    let mut reader = png::Decoder::new(std::io::BufReader::new(file)).read_info().expect("a PNG");
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).expect("decode the screenshot");
    let channels = info.color_type.samples();
    assert!(info.width >= width && info.height >= height, "screenshot {}x{}", info.width, info.height);
    for (i, ((kind, _), ((w, h), top))) in svgs.iter().zip(sizes.iter().zip(&tops)).enumerate() {
        let (mut ink, mut colour) = (0u32, 0u32);
        for y in *top..top + h {
            for x in 0..*w {
                let o = (y as usize * info.line_size) + x as usize * channels;
                let (r, g, b) = (buf[o] as i32, buf[o + 1] as i32, buf[o + 2] as i32);
                if r < 235 || g < 235 || b < 235 {
                    ink += 1;
                }
                if r.max(g).max(b) - r.min(g).min(b) > 60 {
                    colour += 1;
                }
            }
        }
        let total = w * h;
        assert!(
            ink > total / 50,
            "chart {i} ({kind}) of {} looks empty: {ink} of {total} pixels drawn",
            report.display()
        );
        assert!(
            colour > 150,
            "chart {i} ({kind}) of {} has no series drawn: {colour} coloured pixels",
            report.display()
        );
    }
}

/// Loads a copy of the report with a measuring script, `PAGE_W` px wide, and checks that the charts of each
/// row of each grid fill at least 90 % of the grid's width (a fixed 640 px chart alone on a row left half
/// of a 1280 px page empty).
fn check_layout(bin: &Path, dir: &Path, report: &Path, html: &str) {
    const MEASURE: &str = "<script>const rows = []; for (const g of document.querySelectorAll('.charts')) { const w = g.clientWidth; const by = new Map(); for (const s of g.querySelectorAll('svg')) { const r = s.getBoundingClientRect(); const y = Math.round(r.top); by.set(y, (by.get(y) || 0) + r.width); } for (const [y, sum] of by) rows.push(Math.round(100 * sum / w)); } document.body.insertAdjacentHTML('beforeend', '<pre id=\"fill\">' + rows.join(',') + '</pre>');</script>";
    let path = dir.join(format!("{}-layout.html", report.file_stem().unwrap().to_string_lossy()));
    std::fs::write(&path, html.replace("</body>", &format!("{MEASURE}</body>"))).unwrap();
    let (dom, log) = run_chromium(
        bin,
        &dir.join("chromium-profile"),
        &[format!("--window-size={PAGE_W},900"), "--dump-dom".into()],
        &format!("file://{}", path.display()),
    );
    // The last match: the first is in the script itself.
    let fill = dom.rsplit("<pre id=\"fill\">").next().filter(|_| dom.matches("id=\"fill\"").count() > 1);
    let fill = fill.and_then(|s| s.split("</pre>").next());
    let fill = fill.unwrap_or_else(|| panic!("no layout measured for {}: {log}", report.display()));
    let rows: Vec<u32> = fill.split(',').filter_map(|x| x.parse().ok()).collect();
    assert!(!rows.is_empty(), "no chart row measured in {}", report.display());
    for (i, pct) in rows.iter().enumerate() {
        assert!(
            *pct >= 90,
            "row {i} of the charts of {} fills {pct} % of its width at {PAGE_W} px: {rows:?}",
            report.display()
        );
    }
}

#[test]
fn report_single_run_sweep_and_two_runs_render_in_chromium() {
    let dir = tempdir();
    let d = dir.path();
    make_inputs(d);
    let cases: [(&str, &[&str], usize); 5] = [
        // percentile curve, IOPS and latency per interval
        ("single.html", &["run1.json"], 3),
        // IOPS and latency against qd, with error bars and the p99 limit
        ("sweep.html", &["sweep.json"], 2),
        // 4 bars, overlaid percentiles, then 3 charts per run (run2 has reads and writes)
        ("two.html", &["run1.json", "run2.json"], 5 + 3 + 3),
        // 3 charts, then IOPS and latency per worker group
        ("groups.html", &["oltp.json"], 3 + 2),
        // the run's 3 charts, and its table of hosts (MPI ranks) beside them
        ("hosts.html", &["hosts.json"], 3),
    ];
    for (out, inputs, _) in &cases {
        let mut args = vec!["report"];
        args.extend_from_slice(inputs);
        args.extend(["-o", out, "--title", "browser <check>"]);
        ok(d, &args);
        let html = std::fs::read_to_string(d.join(out)).unwrap();
        assert!(html.contains("<title>browser &lt;check&gt;</title>"));
        assert!(!html.to_ascii_lowercase().contains("http"), "no URL in {out}");
    }
    let md = iolab()
        .current_dir(d)
        .args(["report", "run1.json", "sweep.json", "--format", "md"])
        .output()
        .unwrap();
    assert_eq!(md.status.code(), Some(0));
    let md = String::from_utf8_lossy(&md.stdout);
    assert!(
        md.contains("### Summary") && md.contains("### Sweep: sweep") && md.contains("| qd | IOPS |"),
        "{md}"
    );
    let hosts = std::fs::read_to_string(d.join("hosts.html")).unwrap();
    assert!(hosts.contains("<h3>Hosts (2 ranks)</h3>") && hosts.contains("<td>node1</td>"), "{hosts}");
    let sweep_html = std::fs::read_to_string(d.join("sweep.html")).unwrap();
    assert!(sweep_html.contains("p99 limit 300 µs (--max-p99)") && sweep_html.contains("over the 3 trials"));
    let two = std::fs::read_to_string(d.join("two.html")).unwrap();
    assert!(
        two.contains("\nrandread qd 16 on sim:") && !two.contains("\nrun1\n</text>"),
        "bars named by workload"
    );

    let Some(bin) = chromium() else {
        iolab_testkit::skip(format_args!("chromium not installed"));
        return;
    };
    for (out, _, n) in &cases {
        check_in_browser(&bin, d, &d.join(out), *n);
    }
}

#[test]
fn report_bad_inputs_exit_2_quoting_the_input_and_write_nothing() {
    let dir = tempdir();
    let d = dir.path();
    std::fs::write(d.join("notjson.json"), "hello").unwrap();
    std::fs::write(d.join("other.json"), r#"{"schema":"something/9"}"#).unwrap();
    let db = d.join("no-such-dir").join("results.db");
    for (input, says) in [
        ("missing.json", "'missing.json'"),
        ("notjson.json", "not JSON"),
        ("other.json", "schema 'something/9'"),
        ("abc123", "'abc123'"),
    ] {
        let out = iolab()
            .current_dir(d)
            .args(["report", input, "-o", "out.html", "--db"])
            .arg(&db)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{input}: {err}");
        assert!(err.contains(&format!("'{input}'")) && err.contains(says), "{input}: {err}");
        assert!(!d.join("out.html").exists(), "{input}: a report was written");
    }
}

/// Issue 15, item 10: `iolab report tag:...` was refused although `compare` takes tag queries. A tag query
/// stands for every run and sweep it matches, oldest first.
#[test]
fn report_takes_tag_queries_as_compare_does() {
    let dir = tempdir();
    let db = dir.path().join("results.db");
    for (latency, hba) in [("100us", "qle2560"), ("80us", "lpe32002")] {
        let target = format!("sim:fixed,latency={latency},servers=8");
        let out = iolab()
            .env("IOLAB_DB", &db)
            .args(["run", "--target", &target, "--clock", "virtual", "--seed", "1", "-d", "1s", "-q"])
            .args(["--tag", "site=lab1", "--tag", &format!("hba={hba}")])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let md = dir.path().join("r.md");
    let out = iolab()
        .env("IOLAB_DB", &db)
        .args(["report", "tag:site=lab1", "-o", md.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let text = std::fs::read_to_string(&md).unwrap();
    assert!(text.contains("hba=qle2560") && text.contains("hba=lpe32002"), "{text}");
    let out = iolab().env("IOLAB_DB", &db).args(["report", "tag:site=nowhere"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no run, sweep or search"));
}

/// Issue 37, item 4: `report tag:cfg=qd4 tag:cfg=qd32` showed six runs one by one where `compare` shows two
/// sides of three trials each. Two selectors of several runs each are now compared as compare compares them:
/// the Markdown report carries compare's own Markdown, the page its sides, trials, noise and verdict, and no
/// run's section; the runs' warnings stay in the page's warnings.
#[test]
fn report_of_two_selectors_shows_the_comparison_compare_shows() {
    let dir = tempdir();
    let db = dir.path().join("results.db");
    for (qd, seeds) in [("4", [1, 2, 3]), ("32", [4, 5, 6])] {
        for seed in seeds {
            let out = iolab()
                .env("IOLAB_DB", &db)
                .args(["run", "--target", "sim:fixed,latency=100us,servers=8", "--clock", "virtual"])
                .args(["--seed", &seed.to_string(), "-d", "1s", "-q", "--qd", qd, "--tag"])
                .arg(format!("cfg=qd{qd}"))
                .output()
                .unwrap();
            assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        }
    }
    let sides = ["tag:cfg=qd4", "tag:cfg=qd32"];
    let compared =
        iolab().env("IOLAB_DB", &db).args(["compare", "--format", "md"]).args(sides).output().unwrap();
    assert_eq!(compared.status.code(), Some(0), "{}", String::from_utf8_lossy(&compared.stderr));
    let compared = String::from_utf8(compared.stdout).unwrap();
    assert!(compared.contains("3 runs as trials") && compared.contains("Welch"), "{compared}");
    let (md, html) = (dir.path().join("r.md"), dir.path().join("r.html"));
    for out_file in [&md, &html] {
        let out =
            iolab().env("IOLAB_DB", &db).arg("report").args(sides).arg("-o").arg(out_file).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let md = std::fs::read_to_string(&md).unwrap();
    assert!(
        md.contains(compared.trim_end()),
        "compare's Markdown, whole, in the report:\n{md}\n---\n{compared}"
    );
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("<h2>Comparison: tag:cfg=qd4 vs tag:cfg=qd32</h2>"), "{page}");
    assert_eq!(page.matches("<li class=\"side\">").count(), 2, "two sides");
    assert_eq!(page.matches("3 runs as trials").count(), 2, "three trials each");
    assert!(page.contains("B Welch") && page.contains("B vs A: IOPS"), "the test and the verdict");
    assert!(page.contains(" ±"), "the noise over trials");
    assert_eq!(page.matches("<section class=\"run\"").count(), 0, "not six runs one by one");
    assert!(
        page.contains("documents of iolab 0.") && page.contains("Z</td><td></td>"),
        "the first run's version and start"
    );
    assert_fits_1280_px(dir.path(), &html);
}

/// What the page measures of itself in Chromium ([`MEASURE_ALL`]): the text of its Warnings section, the
/// elements whose box leaves the window's width, the chart labels drawn outside their chart, and the pairs of
/// labels of one chart that overlap.
const MEASURE_ALL: &str = r#"<script>(() => {
const W = document.documentElement.clientWidth;
const name = e => { const t = (e.textContent || '').trim().slice(0, 60); return e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + (e.className && typeof e.className === 'string' ? '.' + e.className : '') + ' "' + t + '"'; };
const out = { width: W, warnings: '', clipped: [], outside: [], overlaps: [] };
const w = document.getElementById('warnings');
if (w) out.warnings = w.innerText;
for (const e of document.body.querySelectorAll('*')) {
  if (e.closest('svg') || e.id === 'measured') continue;
  const r = e.getBoundingClientRect();
  if (r.width === 0 && r.height === 0) continue;
  if (r.left < -0.5 || r.right > W + 0.5) out.clipped.push(name(e) + ' spans ' + Math.round(r.left) + '..' + Math.round(r.right));
}
for (const svg of document.querySelectorAll('figure.chart svg')) {
  const box = svg.getBoundingClientRect();
  const texts = [...svg.querySelectorAll('text')].map(t => [t, t.getBoundingClientRect()]).filter(([, r]) => r.width > 0);
  const chart = svg.closest('figure').dataset.chart;
  for (const [t, r] of texts) {
    if (r.left < box.left - 1 || r.right > box.right + 1 || r.top < box.top - 1 || r.bottom > box.bottom + 1)
      out.outside.push(chart + ': "' + t.textContent.trim() + '"');
  }
  for (let i = 0; i < texts.length; i++) for (let j = i + 1; j < texts.length; j++) {
    const [a, ra] = texts[i], [b, rb] = texts[j];
    const x = Math.min(ra.right, rb.right) - Math.max(ra.left, rb.left);
    const y = Math.min(ra.bottom, rb.bottom) - Math.max(ra.top, rb.top);
    if (x > 1 && y > 1) out.overlaps.push(chart + ': "' + a.textContent.trim() + '" and "' + b.textContent.trim() + '"');
  }
}
const pre = document.createElement('pre');
pre.id = 'measured';
pre.textContent = JSON.stringify(out);
document.body.appendChild(pre);
})();</script>"#;

/// Loads a copy of `report` with [`MEASURE_ALL`], `PAGE_W` px wide, and returns what it measured.
/// Opens `report` in Chromium 1280 px wide and asserts nothing on it is clipped, drawn outside its chart or
/// overlapping (what [`MEASURE_ALL`] measures); skips without Chromium.
pub(crate) fn assert_fits_1280_px(dir: &Path, report: &Path) {
    let Some(bin) = chromium() else {
        return iolab_testkit::skip(format_args!(
            "chromium not installed; {} is not measured",
            report.display()
        ));
    };
    let m = measure_all(&bin, dir, report);
    for key in ["clipped", "outside", "overlaps"] {
        assert_eq!(
            m[key].as_array().map_or(0, Vec::len),
            0,
            "{}: {key} at {PAGE_W} px: {}",
            report.display(),
            m[key]
        );
    }
}

fn measure_all(bin: &Path, dir: &Path, report: &Path) -> serde_json::Value {
    let html = std::fs::read_to_string(report).expect("read the report");
    let path = dir.join(format!("{}-measured.html", report.file_stem().unwrap().to_string_lossy()));
    std::fs::write(&path, html.replace("</body>", &format!("{MEASURE_ALL}</body>"))).unwrap();
    let (dom, log) = run_chromium(
        bin,
        &dir.join("chromium-profile"),
        &[format!("--window-size={PAGE_W},900"), "--dump-dom".into()],
        &format!("file://{}", path.display()),
    );
    let json = dom.rsplit("<pre id=\"measured\">").next().filter(|_| dom.contains("<pre id=\"measured\">"));
    let json = json.and_then(|s| s.split("</pre>").next());
    let json = json.unwrap_or_else(|| panic!("nothing measured in {}: {log}", report.display()));
    let json = json.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", "\"").replace("&amp;", "&");
    serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}: {json}"))
}

/// The kinds the catalog of fixtures/catalog-v5 has none of, made fresh as JSON files in `d`: a ycsb run
/// (SQLite, 1 s; its environment block on the page too) and the miss-ratio curves of a small fio iolog.
fn fresh_documents(d: &Path) -> [(&'static str, String); 5] {
    let ycsb = d.join("ycsb.json");
    let out = iolab()
        .current_dir(d)
        .args([
            "db",
            "ycsb",
            "--records",
            "2000",
            "--ramp",
            "0s",
            "-d",
            "1s",
            "--seed",
            "3",
            "--workload",
            "c",
        ])
        .args(["--users", "1", "--no-save", "-q", "--json"])
        .arg(&ycsb)
        .output()
        .unwrap();
    assert!(out.status.success(), "db ycsb: {}", String::from_utf8_lossy(&out.stderr));
    let log = d.join("ops.log");
    let iolog = "fio version 2 iolog\n/dev/sdb add\n/dev/sdb open\n/dev/sdb read 0 8192\n/dev/sdb read 4096 4096\n/dev/sdb write 0 4096\n/dev/sdb read 12288 4096\n/dev/sdb read 0 8192\n/dev/sdb close\n";
    std::fs::write(&log, iolog).unwrap();
    let mrc = d.join("mrc.json");
    let out = iolab()
        .arg("mrc")
        .arg(&log)
        .args(["--sizes", "4k,8k,16k", "--policy", "lru,arc,s3-fifo", "--json"])
        .arg(&mrc)
        .output()
        .unwrap();
    assert!(out.status.success(), "mrc: {}", String::from_utf8_lossy(&out.stderr));
    let [train, fleet, checkpoint] = ai_documents(d);
    [
        ("db-ycsb", ycsb.display().to_string()),
        ("mrc", mrc.display().to_string()),
        ("ai-train", train),
        ("ai-train-find-max", fleet),
        ("ai-checkpoint", checkpoint),
    ]
}

/// An AI training run (the tiny built-in, on real storage), a `--find-max` on an emulated device, and a tiny
/// checkpoint run, as JSON files in `d`.
fn ai_documents(d: &Path) -> [String; 3] {
    let runs: [(&str, &[&str]); 3] = [
        ("train.json", &["ai", "train", "--seed", "3"]),
        (
            "fleet.json",
            &[
                "ai",
                "train",
                "--seed",
                "3",
                "--data-dir",
                "sim:fixed,latency=1ms,servers=1,size=1G",
                "--find-max",
            ],
        ),
        ("checkpoint.json", &["ai", "checkpoint"]),
    ];
    runs.map(|(file, args)| {
        let path = d.join(file);
        let out = iolab()
            .current_dir(d)
            .args(args)
            .args(["--no-save", "-q", "--json"])
            .arg(&path)
            .output()
            .unwrap();
        assert!(
            matches!(out.status.code(), Some(0 | 1)),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        path.display().to_string()
    })
}

/// Issue 37, item 4: a report of each kind of document iolab saves, from the catalog of an earlier iolab
/// (fixtures/catalog-v5: a run, a sweep, a find-max search, a verify check, a tpcc run, a sweep over users, a
/// tpch query set, a copy) and made fresh (a ycsb run, miss-ratio curves, AI training on real and emulated
/// storage, an AI checkpoint run: [`fresh_documents`]), and of all of
/// them at once, opened in Chromium 1280 px wide: every warning of its
/// documents is on the page (in its Warnings section, as `Document::warnings` says them), no element reaches
/// past the window's width, no chart label is drawn outside its chart, and no two labels of a chart overlap.
#[test]
fn every_kind_of_report_keeps_its_warnings_and_fits_1280_px_in_chromium() {
    let dir = tempdir();
    let d = dir.path();
    let fixture = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/cli/fixtures/catalog-v5/catalog.db");
    std::fs::copy(fixture, d.join("catalog.db")).unwrap();
    let db = d.join("catalog.db");
    let fresh = fresh_documents(d);
    let kinds = [
        ("run", "83734017"),
        ("sweep", "bdad9279"),
        ("find-max", "2a287b5f"),
        ("verify", "2b084ce5"),
        ("db", "6b934314"),
        ("db-sweep", "c161b2e6"),
        ("db-tpch", "061a9399"),
        ("db-copy", "372d9f7b"),
        (fresh[0].0, fresh[0].1.as_str()),
        (fresh[1].0, fresh[1].1.as_str()),
        (fresh[2].0, fresh[2].1.as_str()),
        (fresh[3].0, fresh[3].1.as_str()),
        (fresh[4].0, fresh[4].1.as_str()),
    ];
    let mut pages: Vec<(String, Vec<String>)> = Vec::new();
    let all: Vec<&str> = kinds.iter().map(|(_, id)| *id).collect();
    for (name, ids) in kinds.iter().map(|(k, id)| (k.to_string(), vec![*id])).chain([("all".into(), all)]) {
        let mut warnings = Vec::new();
        for id in &ids {
            let text = if id.ends_with(".json") {
                std::fs::read_to_string(id).unwrap()
            } else {
                let out = iolab().args(["export", id, "--json", "--db"]).arg(&db).output().unwrap();
                assert!(out.status.success(), "export {id}: {}", String::from_utf8_lossy(&out.stderr));
                String::from_utf8_lossy(&out.stdout).into_owned()
            };
            let doc = iolab_report::kinds::parse_text(&text).unwrap();
            warnings.extend(doc.warnings().into_iter().map(|w| w.text));
        }
        let page = d.join(format!("{name}.html"));
        let out = iolab().args(["report", "--db"]).arg(&db).args(&ids).arg("-o").arg(&page).output().unwrap();
        assert!(out.status.success(), "report {name}: {}", String::from_utf8_lossy(&out.stderr));
        let html = std::fs::read_to_string(&page).unwrap();
        assert_eq!(html.matches("<tr class=\"warning\">").count(), warnings.len(), "{name}: warnings' rows");
        pages.push((name, warnings));
    }
    assert!(pages.iter().any(|(_, w)| !w.is_empty()), "some document of the fixture has warnings");
    let Some(bin) = chromium() else {
        iolab_testkit::skip(format_args!("chromium not installed"));
        return;
    };
    let mut wrong = Vec::new();
    for (name, warnings) in &pages {
        let m = measure_all(&bin, d, &d.join(format!("{name}.html")));
        assert_eq!(m["width"], PAGE_W, "{name}: the window's width");
        let shown = m["warnings"].as_str().unwrap().split_whitespace().collect::<Vec<_>>().join(" ");
        for w in warnings {
            let w = w.split_whitespace().collect::<Vec<_>>().join(" ");
            if !shown.contains(&w) {
                wrong.push(format!("{name}: warning not on the page: {w}"));
            }
        }
        for (what, key) in
            [("clipped", "clipped"), ("outside its chart", "outside"), ("overlapping", "overlaps")]
        {
            for e in m[key].as_array().unwrap() {
                wrong.push(format!("{name}: {what}: {}", e.as_str().unwrap()));
            }
        }
    }
    assert!(wrong.is_empty(), "at {PAGE_W} px:\n{}", wrong.join("\n"));
}
