//! The miss-ratio curve document (`iolab.mrc/1`, `iolab mrc --json`): the trace it was computed from, one
//! curve per policy (points of cache size and miss ratio), each curve's knee, and the recommended cache size.
//! Plain data; renderings live in `export` (text, JSON, CSV) and `html` (the chart).

use serde::{Deserialize, Serialize};

/// The `schema` value of an MRC document.
pub const MRC_SCHEMA: &str = "iolab.mrc/1";

/// Miss-ratio curves of one trace.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MrcResult {
    /// Always [`MRC_SCHEMA`].
    pub schema: String,
    /// The iolab that computed it.
    pub iolab_version: String,
    /// The trace and the references made of it.
    pub trace: MrcTrace,
    /// One curve per policy, LRU first.
    pub curves: Vec<MrcCurve>,
    /// The size recommended from the first curve, if any size serves anything.
    pub recommendation: Option<MrcRecommendation>,
}

/// The trace a document was computed from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MrcTrace {
    /// The file as given.
    pub path: String,
    /// Its format as recognised.
    pub format: String,
    /// Records read (good ones).
    pub records: u64,
    /// Records that could not be read.
    pub bad_records: u64,
    /// Ops that made references (reads, and writes unless `reads_only`).
    pub ops: u64,
    /// References: cache lines touched, or requests.
    pub references: u64,
    /// Distinct objects referenced (estimated from the sample when sampled).
    pub objects: u64,
    /// `line` (cache lines of `line_bytes`) or `request` (each request's start, unit size).
    pub object: String,
    /// Bytes per cache line, for `object` = `line`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line_bytes: Option<u64>,
    /// Whether the miss ratio is of reads only (`writes` is `install` or `ignore`).
    pub reads_only: bool,
    /// What writes did: `count` (counted like reads), `install` (used or installed their lines uncounted,
    /// as in a cache that writes fill), `ignore` (passed over). Absent in documents before it was kept.
    #[serde(default = "count")]
    pub writes: String,
    /// Writes that installed lines uncounted (`writes` = `install`).
    #[serde(default)]
    pub installing_writes: u64,
    /// How the counted requests sit on cache lines (`object` = `line`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alignment: Option<MrcAlignment>,
}

fn count() -> String {
    "count".into()
}

/// How the counted requests of a trace sit on its cache lines: a cache that fills only whole lines (iolab's)
/// does not install a line a request covers in part, so it misses more than a curve that counts every line
/// touched.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MrcAlignment {
    /// Counted requests.
    pub requests: u64,
    /// Of those, requests that cover part of their first or last line.
    pub partial: u64,
    /// The most common start offset within a line among partial requests, other than 0.
    pub common_start_bytes: Option<u64>,
    /// How many requests start there.
    pub common_start_requests: u64,
}

impl MrcTrace {
    /// What the miss ratio counts, in words: "reads and writes", "reads (writes install lines)", "reads
    /// (writes passed over)".
    pub fn counted_text(&self) -> &'static str {
        match (self.reads_only, self.writes.as_str()) {
            (false, _) => "reads and writes",
            (true, "install") => "reads (writes install lines)",
            (true, "ignore") => "reads (writes passed over)",
            (true, _) => "reads",
        }
    }

    /// A sentence when many requests cover lines in part (a tenth or more): how many, and where most start.
    pub fn alignment_text(&self) -> Option<String> {
        let a = self.alignment.as_ref()?;
        let line = self.line_bytes?;
        if a.requests == 0 || a.partial * 10 < a.requests {
            return None;
        }
        let start = match a.common_start_bytes {
            Some(b) if a.common_start_requests * 2 >= a.partial => {
                format!(
                    ", most of them ({:.0}%) starting {b} bytes into a line",
                    100.0 * a.common_start_requests as f64 / a.partial as f64
                )
            }
            _ => String::new(),
        };
        Some(format!(
            "{:.0}% of the counted requests cover part of a {} line{start}: a cache that fills whole lines only \
             (iolab's) does not install those lines, so it misses more than this curve says; with lines of {} \
             (--line here, --cache-line in a replay) they cover whole lines",
            100.0 * a.partial as f64 / a.requests as f64,
            crate::format_bytes(line),
            smallest_line(a.common_start_bytes.unwrap_or(512)),
        ))
    }
}

/// The largest power of two (at least 512) dividing `offset`, as `--line` takes it (`512`, `4k`): lines of
/// that size make requests at `offset` start on a line.
fn smallest_line(offset: u64) -> String {
    match 1u64 << offset.max(512).trailing_zeros().clamp(9, 30) {
        b if b < 1024 => b.to_string(),
        b => format!("{}k", b / 1024),
    }
}

/// One curve.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MrcCurve {
    /// `lru`, `arc` or `s3-fifo`.
    pub policy: String,
    /// `exact` (stack distances), `shards-fixed-rate`, `shards-fixed-size`, `simulation` or
    /// `miniature-simulation` (a simulation of a spatial sample in a cache scaled by its rate).
    pub method: String,
    /// The share of objects sampled (1 when every reference was used).
    pub sample_rate: f64,
    /// Points in size order.
    pub points: Vec<MrcPoint>,
    /// Where the curve bends most (see docs/TRACES.md), if it bends.
    pub knee: Option<MrcPoint>,
}

/// A cache size and its miss ratio.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct MrcPoint {
    /// Cache size in bytes (cache lines).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_bytes: Option<u64>,
    /// Cache size in objects (requests as objects).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_objects: Option<u64>,
    /// Misses per reference.
    pub miss_ratio: f64,
}

/// The recommended cache size.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct MrcRecommendation {
    /// The size, with its miss ratio.
    pub point: MrcPoint,
    /// Hits per reference at that size.
    pub hit_ratio: f64,
    /// The best hit ratio on the curve: what any size could serve (first references always miss).
    pub best_hit_ratio: f64,
    /// The share of the best the recommendation reaches at least.
    pub share_of_best: f64,
}

impl MrcPoint {
    /// The size as people read it: `24.0 GiB` or `1,000 objects`.
    pub fn size_text(&self) -> String {
        match (self.cache_bytes, self.cache_objects) {
            (Some(b), _) => crate::format_bytes(b),
            (None, Some(o)) => crate::format::counted(o, "object"),
            (None, None) => "?".into(),
        }
    }

    /// The size as a number, bytes or objects.
    pub fn size(&self) -> u64 {
        self.cache_bytes.or(self.cache_objects).unwrap_or(0)
    }
}

impl MrcTrace {
    /// What one reference is, in words for a share: "counted in the 512 B cache lines they touch" or
    /// "counted in requests" (a run's cache counts read requests; see `CacheResult::summary_lines`).
    pub fn unit_text(&self) -> String {
        match self.line_bytes.filter(|_| self.object == "line") {
            Some(line) => {
                format!("counted in the {} cache lines they touch", crate::format::format_bytes(line))
            }
            None => "counted in requests".to_string(),
        }
    }
}

impl MrcResult {
    /// The recommendation in one sentence: "a 24.0 GiB cache would serve 85% of reads (...)".
    pub fn recommendation_text(&self) -> Option<String> {
        let r = self.recommendation?;
        let what = if self.trace.reads_only { "reads" } else { "reads and writes" };
        let policy = self.curves.first().map_or("lru", |c| c.policy.as_str());
        Some(format!(
            "a {} cache would serve {:.0}% of {what}, {} ({policy}; the most any size on the curve serves is \
             {:.1}%: the rest are first references)",
            r.point.size_text(),
            100.0 * r.hit_ratio,
            self.trace.unit_text(),
            100.0 * r.best_hit_ratio,
        ))
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::{CsvExporter, JsonExporter, TextExporter};

    /// A document with every key: a line-based curve and a request-based point, a knee, a recommendation.
    pub(crate) fn sample() -> MrcResult {
        let p = |b: u64, m: f64| MrcPoint { cache_bytes: Some(b), cache_objects: None, miss_ratio: m };
        let points = vec![p(4096, 0.9), p(1 << 20, 0.5), p(4 << 20, 0.3), p(16 << 20, 0.29)];
        MrcResult {
            schema: MRC_SCHEMA.into(),
            iolab_version: "0.1.0".into(),
            trace: MrcTrace {
                path: "t.csv".into(),
                format: "CloudPhysics CSV".into(),
                records: 10,
                bad_records: 1,
                ops: 9,
                references: 12,
                objects: 7,
                object: "line".into(),
                line_bytes: Some(4096),
                reads_only: true,
                writes: "install".into(),
                installing_writes: 3,
                alignment: Some(MrcAlignment {
                    requests: 9,
                    partial: 8,
                    common_start_bytes: Some(3584),
                    common_start_requests: 7,
                }),
            },
            curves: vec![
                MrcCurve {
                    policy: "lru".into(),
                    method: "exact".into(),
                    sample_rate: 1.0,
                    points: points.clone(),
                    knee: Some(points[2]),
                },
                MrcCurve {
                    policy: "arc".into(),
                    method: "simulation".into(),
                    sample_rate: 1.0,
                    points: vec![MrcPoint { cache_bytes: None, cache_objects: Some(3), miss_ratio: 0.4 }],
                    knee: None,
                },
            ],
            recommendation: Some(MrcRecommendation {
                point: points[2],
                hit_ratio: 0.7,
                best_hit_ratio: 0.71,
                share_of_best: 0.95,
            }),
        }
    }

    /// Issue 25, item 10: a share says what it counts. `mrc --line` counts the cache lines reads touch; a run's
    /// cache counts read requests; each sentence says which.
    #[test]
    fn the_recommendation_says_whether_it_counts_lines_or_requests() {
        let m = sample();
        let text = m.recommendation_text().unwrap();
        assert!(text.contains("of reads, counted in the 4.00 KiB cache lines they touch"), "{text}");
        let mut requests = m.clone();
        requests.trace.object = "request".into();
        requests.trace.line_bytes = None;
        let text = requests.recommendation_text().unwrap();
        assert!(text.contains("of reads, counted in requests"), "{text}");
    }

    #[test]
    fn every_key_is_in_the_schema_and_back() {
        let m = sample();
        let v: serde_json::Value = serde_json::from_str(&JsonExporter.render(&m)).unwrap();
        crate::schema_check::check_document(&v, crate::schema_check::MRC_SCHEMA);
        let back: MrcResult = serde_json::from_value(v).unwrap();
        assert_eq!(back, m);
        let mut none = m.clone();
        none.recommendation = None;
        let v = serde_json::to_value(&none).unwrap();
        crate::schema_check::check_document(&v, crate::schema_check::MRC_SCHEMA);
    }

    #[test]
    fn text_and_csv() {
        let m = sample();
        let text = TextExporter.render(&m);
        assert!(text.contains("a 4.00 MiB cache would serve 70% of reads"), "{text}");
        assert!(text.contains("knee    lru: 4.00 MiB"), "{text}");
        assert!(text.contains("89% of the counted requests cover part of a 4.00 KiB line, most of them (88%) starting 3584 bytes into a line"), "{text}");
        assert!(text.contains("with lines of 512 (--line here"), "{text}");
        let csv = CsvExporter.render(&m).unwrap();
        assert_eq!(csv.lines().count(), 6);
        assert!(csv.contains("arc,simulation,1,,3,0.4"), "{csv}");
    }
}
