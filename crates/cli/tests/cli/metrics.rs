//! Issue 16, live metrics: `--metrics ADDR:PORT` serves the run's figures in the OpenMetrics text format
//! while it runs. The test scrapes it during a 3-second open-loop run on `null:` (no I/O, so no disk), and
//! checks that a port that cannot be listened on is refused before anything runs.

use crate::util::iolab;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

/// A port nobody listens on now (bound and released).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// `GET /metrics` with a bare HTTP/1.0 request: the response's status line and body.
fn scrape(port: u16) -> Option<(String, String)> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    s.write_all(b"GET /metrics HTTP/1.0\r\nHost: localhost\r\n\r\n").ok()?;
    let mut text = String::new();
    s.read_to_string(&mut text).ok()?;
    let (head, body) = text.split_once("\r\n\r\n")?;
    Some((head.to_string(), body.to_string()))
}

/// The value of the first sample line that starts with `prefix`.
fn sample(body: &str, prefix: &str) -> Option<f64> {
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
