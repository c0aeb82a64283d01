//! The fidelity of a derived job: each property it claims to keep ([`Shape`]), the trace's against a
//! re-derivation of a run of the job, with a tolerance and a verdict per property ([`compare`]).
//!
//! | property | measure | passes when |
//! |---|---|---|
//! | rate | ops (reads, writes, discards) per second of the span | within 5 % |
//! | reads, writes, flushes, trims | each a share of all ops | within 2 points |
//! | sequential reads, sequential writes | a share of the reads, of the writes | within 3 points |
//! | read sizes, write sizes | the distribution of sizes over power-of-two classes (mean shown) | distance at most 0.05 |
//! | random read zones, random write zones | shares in [`ZONES`] zones of the footprint (hottest shown) | distance at most 0.10 |
//! | footprint | lowest to highest byte addressed | within 10 % |
//! | burstiness | ops per instant, (CV² of the gaps + 1) / 2 | within 0.5 or 20 % |
//!
//! A distance is the total variation distance (half the sum of the absolute differences of the shares: 0
//! the same, 1 nothing in common). A property neither side has (no random writes in either) passes.

use crate::derive::{Shape, ZONES};
use std::collections::HashMap;

/// One property compared.
#[derive(Clone, Debug, PartialEq)]
pub struct PropertyCheck {
    /// What is compared.
    pub property: &'static str,
    /// The trace's value, as text.
    pub trace: String,
    /// The run's value, as text.
    pub run: String,
    /// How far apart, as text.
    pub difference: String,
    /// What passes, as text.
    pub tolerance: &'static str,
    /// Whether it is within the tolerance.
    pub pass: bool,
}

/// Each property of the trace's shape (`trace`) against the run's (`run`).
pub fn compare(trace: &Shape, run: &Shape) -> Vec<PropertyCheck> {
    let mut rows = vec![rate(trace, run)];
    let all = |s: &Shape| (s.reads + s.writes + s.flushes + s.trims).max(1) as f64;
    let mix = |s: &Shape| [s.reads, s.writes, s.flushes, s.trims];
    for (i, name) in ["reads", "writes", "flushes", "trims"].into_iter().enumerate() {
        let (a, b) = (mix(trace)[i] as f64 / all(trace), mix(run)[i] as f64 / all(run));
        rows.push(points(name, a, b, 2.0, "±2 points"));
    }
    let seq = |n: u64, of: u64| if of == 0 { 0.0 } else { n as f64 / of as f64 };
    rows.push(points(
        "sequential reads (of reads)",
        seq(trace.seq_reads, trace.reads),
        seq(run.seq_reads, run.reads),
        3.0,
        "±3 points",
    ));
    rows.push(points(
        "sequential writes (of writes)",
        seq(trace.seq_writes, trace.writes),
        seq(run.seq_writes, run.writes),
        3.0,
        "±3 points",
    ));
    rows.push(sizes("read sizes", &trace.read_sizes, &run.read_sizes));
    rows.push(sizes("write sizes", &trace.write_sizes, &run.write_sizes));
    rows.push(zones("random read zones", &trace.read_zones, &run.read_zones));
    rows.push(zones("random write zones", &trace.write_zones, &run.write_zones));
    rows.push(footprint(trace.footprint_bytes, run.footprint_bytes));
    rows.push(burstiness(trace.gaps_cv2, run.gaps_cv2));
    rows
}

/// Ops per second of the span.
fn rate(trace: &Shape, run: &Shape) -> PropertyCheck {
    let iops = |s: &Shape| s.span_s.map(|span| (s.reads + s.writes + s.trims) as f64 / span);
    let (a, b) = (iops(trace), iops(run));
    let text = |v: Option<f64>| v.map_or("no span".into(), |v| format!("{v:.3}/s"));
    let change = a.zip(b).map(|(a, b)| b / a - 1.0);
    PropertyCheck {
        property: "rate",
        trace: text(a),
        run: text(b),
        difference: change.map_or("-".into(), |c| format!("{:+.1} %", c * 100.0)),
        tolerance: "±5 %",
        pass: change.map_or(a.is_none() && b.is_none(), |c| c.abs() <= 0.05),
    }
}

/// A share (0..1) in percent, passing within `tol` points.
fn points(property: &'static str, a: f64, b: f64, tol: f64, tolerance: &'static str) -> PropertyCheck {
    let d = (b - a) * 100.0;
    PropertyCheck {
        property,
        trace: format!("{:.1} %", a * 100.0),
        run: format!("{:.1} %", b * 100.0),
        difference: format!("{d:+.1} points"),
        tolerance,
        pass: d.abs() <= tol,
    }
}

/// Half the sum of the absolute differences of two distributions of shares.
fn distance<K: std::hash::Hash + Eq + Copy>(a: &HashMap<K, f64>, b: &HashMap<K, f64>) -> f64 {
    let keys: std::collections::HashSet<K> = a.keys().chain(b.keys()).copied().collect();
    keys.iter().map(|k| (a.get(k).unwrap_or(&0.0) - b.get(k).unwrap_or(&0.0)).abs()).sum::<f64>() / 2.0
}

/// Two size mixes: their distance, their means shown.
fn sizes(property: &'static str, a: &[(u32, u64)], b: &[(u32, u64)]) -> PropertyCheck {
    let shares = |s: &[(u32, u64)]| {
        let n: u64 = s.iter().map(|x| x.1).sum();
        let mut m: HashMap<u32, f64> = HashMap::new();
        for &(size, c) in s {
            *m.entry(size.next_power_of_two()).or_default() += c as f64 / n.max(1) as f64;
        }
        (m, n)
    };
    let mean = |s: &[(u32, u64)], n: u64| match n {
        0 => "none".to_string(),
        _ => format!(
            "mean {:.1} KiB",
            s.iter().map(|&(z, c)| z as f64 * c as f64).sum::<f64>() / n as f64 / 1024.0
        ),
    };
    let ((ma, na), (mb, nb)) = (shares(a), shares(b));
    let d = if na == 0 && nb == 0 { 0.0 } else { distance(&ma, &mb) };
    PropertyCheck {
        property,
        trace: mean(a, na),
        run: mean(b, nb),
        difference: format!("distance {d:.3}"),
        tolerance: "≤ 0.05",
        pass: d <= 0.05,
    }
}

/// Two zone maps: their distance, each one's hottest zone shown.
fn zones(property: &'static str, a: &[f64; ZONES], b: &[f64; ZONES]) -> PropertyCheck {
    let map = |z: &[f64; ZONES]| z.iter().copied().enumerate().collect::<HashMap<usize, f64>>();
    let empty = |z: &[f64; ZONES]| z.iter().all(|&x| x == 0.0);
    let hottest = |z: &[f64; ZONES]| {
        if empty(z) {
            return "none".to_string();
        }
        let (i, s) = z.iter().enumerate().fold((0, 0.0), |m, (i, &s)| if s > m.1 { (i, s) } else { m });
        let w = 100 / ZONES;
        format!("{:.0} % in {}-{} %", s * 100.0, i * w, (i + 1) * w)
    };
    let d = if empty(a) && empty(b) { 0.0 } else { distance(&map(a), &map(b)) };
    PropertyCheck {
        property,
        trace: hottest(a),
        run: hottest(b),
        difference: format!("distance {d:.3}"),
        tolerance: "≤ 0.10",
        pass: d <= 0.10,
    }
}

fn footprint(a: u64, b: u64) -> PropertyCheck {
    let gib = |v: u64| format!("{:.2} GiB", v as f64 / (1u64 << 30) as f64);
    let change = b as f64 / a.max(1) as f64 - 1.0;
    PropertyCheck {
        property: "footprint",
        trace: gib(a),
        run: gib(b),
        difference: format!("{:+.1} %", change * 100.0),
        tolerance: "±10 %",
        pass: change.abs() <= 0.10,
    }
}

/// Ops per instant of batched Poisson arrivals with the gaps' CV²: (CV² + 1) / 2.
fn burstiness(a: Option<f64>, b: Option<f64>) -> PropertyCheck {
    let per_instant = |cv2: f64| (cv2 + 1.0) / 2.0;
    let text = |v: Option<f64>| v.map_or("no gaps".into(), |c| format!("{:.2} (CV² {c:.2})", per_instant(c)));
    let d = a.zip(b).map(|(a, b)| per_instant(b) - per_instant(a));
    let pass = match (a, d) {
        (Some(a), Some(d)) => d.abs() <= (0.2 * per_instant(a)).max(0.5),
        _ => a.is_none() && b.is_none(),
    };
    PropertyCheck {
        property: "burstiness (ops per instant)",
        trace: text(a),
        run: text(b),
        difference: d.map_or("-".into(), |d| format!("{d:+.2}")),
        tolerance: "±0.5 or ±20 %",
        pass,
    }
}

#[cfg(test)]
mod tests;
