//! Issue 16, live metrics: `--metrics ADDR:PORT` serves the run's figures in the OpenMetrics text format
//! while it runs. The test scrapes it during a 3-second open-loop run on `null:` (no I/O, so no disk), and
//! checks that a port that cannot be listened on is refused before anything runs.

use crate::util::iolab;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

/// A port nobody listens on now (bound and released).
pub(crate) fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// `GET /metrics` with a bare HTTP/1.0 request: the response's status line and body.
pub(crate) fn scrape(port: u16) -> Option<(String, String)> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    s.write_all(b"GET /metrics HTTP/1.0\r\nHost: localhost\r\n\r\n").ok()?;
    let mut text = String::new();
    s.read_to_string(&mut text).ok()?;
    let (head, body) = text.split_once("\r\n\r\n")?;
    Some((head.to_string(), body.to_string()))
}

/// The value of the first sample line that starts with `prefix`.
pub(crate) fn sample(body: &str, prefix: &str) -> Option<f64> {
    body.lines().find(|l| l.starts_with(prefix))?.rsplit(' ').next()?.parse().ok()
}

#[test]
fn metrics_are_served_while_a_run_goes_on() {
    let port = free_port();
    let addr = format!("127.0.0.1:{port}");
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("iolab"))
        .args(["run", "--target", "null:1G", "--rate", "2000", "-d", "3s", "--ramp", "0", "-q", "--no-save"])
        .args(["--metrics", &addr])
        .spawn()
        .expect("spawn iolab");
    // Wait for the first finished interval (1 s) to be served.
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut found = None;
    while Instant::now() < deadline {
        if let Some((head, body)) = scrape(port) {
            if sample(&body, "iolab_iops{group=\"all\",targets=\"\",op=\"all\"}").is_some_and(|v| v > 0.0) {
                found = Some((head, body));
                break;
            }
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let status = child.wait().expect("iolab ends");
    let (head, body) = found.expect("a scrape during the run saw the run's IOPS");
    assert!(status.success());
    assert!(head.starts_with("HTTP/1.") && head.contains(" 200"), "{head}");
    assert!(head.to_ascii_lowercase().contains("application/openmetrics-text"), "{head}");
    assert!(body.trim_end().ends_with("# EOF"), "OpenMetrics ends with # EOF: {body}");
    let iops = sample(&body, "iolab_iops{group=\"worker\",targets=\"null:1G\",op=\"read\"}").unwrap();
    assert!((iops - 2000.0).abs() < 200.0, "per-group IOPS {iops}: {body}");
    assert_eq!(sample(&body, "iolab_offered_iops{group=\"worker\",targets=\"null:1G\"}"), Some(2000.0));
    assert!(body.contains(
        "iolab_response_time_seconds{group=\"worker\",targets=\"null:1G\",op=\"read\",quantile=\"0.99\"}"
    ));
    assert!(body.contains("iolab_ops_total{"), "{body}");
    let backlog = sample(&body, "iolab_backlog{group=\"worker\",targets=\"null:1G\"}");
    assert!(
        backlog.is_some_and(|b| b < 100.0),
        "open-loop backlog exported, small at 2,000 IOPS on null: {body}"
    );
}

#[test]
fn a_metrics_address_that_cannot_be_listened_on_is_refused_first() {
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    for bad in [addr.as_str(), "not-an-address"] {
        let out = iolab()
            .args(["run", "--target", "null:1G", "-d", "1s", "-q", "--no-save", "--metrics", bad])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{bad}: {stderr}");
        assert!(stderr.contains("--metrics") && stderr.contains(bad), "{stderr}");
    }
}

/// `iolab run` on `null:` at a low rate for `secs`, serving `--metrics` at `port`; the caller kills it.
fn serving(port: u16, extra: &[&str]) -> std::process::Child {
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("iolab"))
        .args(["run", "--rate", "500", "-d", "60s", "--ramp", "0", "-q", "--no-save"])
        .args(["--metrics", &format!("127.0.0.1:{port}")])
        .args(extra)
        .spawn()
        .expect("spawn iolab");
    let deadline = Instant::now() + Duration::from_secs(10);
    while scrape(port).is_none() {
        assert!(Instant::now() < deadline, "the metrics endpoint did not come up");
        std::thread::sleep(Duration::from_millis(100));
    }
    child
}

/// Ends a child this test started, by its id.
fn stop(mut child: std::process::Child) {
    let _ = child.kill();
    let _ = child.wait();
}

/// A field of /proc/PID/status in KiB (`VmRSS`).
fn status_kib(pid: u32, field: &str) -> u64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = s.lines().find(|l| l.starts_with(field)).unwrap_or_else(|| panic!("no {field} in {s}"));
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// The threads of process `pid`.
fn threads(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/task")).unwrap().count()
}

#[test]
fn metrics_an_endless_header_is_cut_off_without_growing_memory() {
    let port = free_port();
    let child = serving(port, &["--target", "null:1G"]);
    let rss_before = status_kib(child.id(), "VmRSS:");
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_write_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(b"GET /metrics HTTP/1.0\r\nX-Endless: ").unwrap();
    let chunk = vec![b'a'; 64 << 10];
    let (mut sent, started) = (0usize, Instant::now());
    // 256 MiB unless iolab cuts the connection first (as it must: its header bound is a few KiB).
    let cut = loop {
        if sent >= 256 << 20 || started.elapsed() > Duration::from_secs(20) {
            break false;
        }
        match s.write(&chunk) {
            Ok(n) => sent += n,
            Err(_) => break true,
        }
    };
    let grown_kib = status_kib(child.id(), "VmRSS:").saturating_sub(rss_before);
    let answers = scrape(port).is_some();
    stop(child);
    assert!(cut, "iolab read {} MiB of one header line and did not close the connection", sent >> 20);
    assert!(grown_kib < 16 << 10, "iolab's memory grew {grown_kib} KiB while reading one endless header");
    assert!(answers, "the endpoint still answers a real scrape afterwards");
}

#[test]
fn metrics_a_client_that_sends_nothing_is_closed_within_seconds() {
    let port = free_port();
    let child = serving(port, &["--target", "null:1G"]);
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s.write_all(b"GET /metr").unwrap();
    let started = Instant::now();
    let mut buf = [0u8; 256];
    let closed = match s.read(&mut buf) {
        Ok(_) => true,
        Err(e) => !matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut),
    };
    let took = started.elapsed();
    stop(child);
    assert!(closed && took < Duration::from_secs(10), "a half-sent request was held {took:?}");
}

#[test]
fn metrics_200_idle_connections_make_no_threads_and_a_scrape_still_answers() {
    let port = free_port();
    let child = serving(port, &["--target", "null:1G"]);
    let before = threads(child.id());
    let idle: Vec<TcpStream> =
        (0..200).filter_map(|_| TcpStream::connect(("127.0.0.1", port)).ok()).collect();
    std::thread::sleep(Duration::from_millis(500));
    let during = threads(child.id());
    let answered = scrape(port);
    stop(child);
    drop(idle);
    assert!(during <= before + 1, "200 idle connections took iolab from {before} threads to {during}");
    let (head, _) = answered.expect("a real scrape is answered beside 200 idle connections");
    assert!(head.contains(" 200"), "{head}");
}

/// Asserts every line of an OpenMetrics text body parses: `# TYPE|HELP|UNIT ...`, a sample
/// `name{label="value",...} number` whose values use only the escapes `\\`, `\"` and `\n`, and `# EOF` last.
fn assert_valid_openmetrics(body: &str) {
    let lines: Vec<&str> = body.lines().collect();
    assert_eq!(lines.last(), Some(&"# EOF"), "the body ends with # EOF: {body}");
    for line in &lines[..lines.len() - 1] {
        if let Some(meta) = line.strip_prefix("# ") {
            let kind = meta.split(' ').next().unwrap_or("");
            assert!(
                ["TYPE", "HELP", "UNIT"].contains(&kind),
                "a comment line that is not metadata: {line:?}"
            );
            continue;
        }
        let rest = line.trim_start_matches(|c: char| c.is_ascii_alphanumeric() || c == '_' || c == ':');
        let value = match rest.strip_prefix('{') {
            Some(labels) => parse_labels(labels).unwrap_or_else(|e| panic!("{e} in {line:?}")),
            None => rest,
        };
        let value = value.strip_prefix(' ').unwrap_or_else(|| panic!("no value in {line:?}"));
        assert!(value.parse::<f64>().is_ok(), "the value of {line:?} is not a number");
    }
}

/// Reads `name="value",...}` and returns what follows the closing brace.
fn parse_labels(mut s: &str) -> Result<&str, String> {
    loop {
        if let Some(rest) = s.strip_prefix('}') {
            return Ok(rest);
        }
        let eq = s.find("=\"").ok_or("a label without =\"")?;
        if !s[..eq].chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(format!("a bad label name {:?}", &s[..eq]));
        }
        let mut chars = s[eq + 2..].char_indices();
        let end = loop {
            match chars.next().ok_or("an unterminated label value")? {
                (_, '\\') => match chars.next() {
                    Some((_, '\\' | '"' | 'n')) => {}
                    other => return Err(format!("a bad escape {other:?}")),
                },
                (i, '"') => break eq + 2 + i + 1,
                (_, '\n') => return Err("a raw newline in a label value".into()),
                _ => {}
            }
        };
        s = s[end..].strip_prefix(',').unwrap_or(&s[end..]);
    }
}

#[test]
fn metrics_names_with_quotes_braces_and_newlines_yield_a_valid_scrape() {
    let dir = crate::util::tempdir();
    let target = dir.path().join("a\"b}\\c\nd");
    let job = dir.path().join("evil.toml");
    let evil = "w\\\"} 1\\niolab_iops{group=\\\"all\\\"} 99999999\\n# x";
    std::fs::write(&job, format!("[worker.\"{evil}\"]\nsize = \"1M\"\nrw = \"randread\"\n")).unwrap();
    let port = free_port();
    let target_arg = target.to_str().unwrap();
    let child = serving(port, &[job.to_str().unwrap(), "--target", target_arg, "--buffered"]);
    let deadline = Instant::now() + Duration::from_secs(10);
    let body = loop {
        let (_, body) = scrape(port).expect("a scrape is answered");
        if body.contains("iolab_iops{") || Instant::now() > deadline {
            break body;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    stop(child);
    assert!(body.contains("iolab_iops{"), "the run's figures were served: {body}");
    assert_valid_openmetrics(&body);
    assert!(!body.lines().any(|l| l.starts_with("iolab_iops{group=\"all\"} ")), "injected: {body}");
    assert!(body.contains("a\\\"b}\\\\c\\nd"), "the target path is there, escaped: {body}");
}
