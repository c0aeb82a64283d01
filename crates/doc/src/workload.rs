//! A workload in words, read from a result's resolved plan (`config.plan`), as fio names its workloads: the
//! I/O mix of an access spec (`randread`, `rw 70/30`) and its block size (`4k`). The catalog names an unnamed
//! run with them, and the report's legends name their inputs with them.

use serde_json::Value;

/// The plan name of a run without a job file, profile or `--name`.
pub const DEFAULT_JOB_NAME: &str = "iolab";

/// An access spec's mix as fio names it: `randread`, `write`, `randrw 70/30`, `rw 70/30 (50% random)`.
pub fn io_text(spec: &Value) -> String {
    let read = spec["read_pct"].as_f64().unwrap_or(0.0);
    let random = spec["random_pct"].as_f64().unwrap_or(0.0);
    let prefix = if random >= 100.0 { "rand" } else { "" };
    let op = match read {
        r if r >= 100.0 => "read".to_string(),
        r if r <= 0.0 => "write".to_string(),
        r => format!("rw {}/{}", r.round(), (100.0 - r).round()),
    };
    match random {
        x if x >= 100.0 || x <= 0.0 => format!("{prefix}{op}"),
        x => format!("{op} ({}% random)", x.round()),
    }
}

/// An access spec's block size: `4k`, `1m`, or `4k-64k` for a mix.
pub fn bs_text(spec: &Value) -> String {
    let sizes: Vec<u64> =
        spec["bs"].as_array().into_iter().flatten().filter_map(|b| b["size_bytes"].as_u64()).collect();
    match (sizes.iter().min(), sizes.iter().max()) {
        (Some(lo), Some(hi)) if lo == hi => size_text(*lo),
        (Some(lo), Some(hi)) => format!("{}-{}", size_text(*lo), size_text(*hi)),
        _ => String::new(),
    }
}

/// A block size as fio writes it: `512`, `4k`, `1m`.
fn size_text(b: u64) -> String {
    const K: u64 = 1024;
    if b >= K * K && b % (K * K) == 0 {
        format!("{}m", b / (K * K))
    } else if b >= K && b % K == 0 {
        format!("{}k", b / K)
    } else {
        b.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn mixes_and_sizes_are_named_as_fio_names_them() {
        let spec = |read: f64, random: f64| json!({"read_pct": read, "random_pct": random});
        assert_eq!(io_text(&spec(100.0, 100.0)), "randread");
        assert_eq!(io_text(&spec(0.0, 0.0)), "write");
        assert_eq!(io_text(&spec(70.0, 100.0)), "randrw 70/30");
        assert_eq!(io_text(&spec(70.0, 50.0)), "rw 70/30 (50% random)");
        let bs =
            |sizes: &[u64]| json!({"bs": sizes.iter().map(|s| json!({"size_bytes": s})).collect::<Vec<_>>()});
        assert_eq!(bs_text(&bs(&[4096])), "4k");
        assert_eq!(bs_text(&bs(&[4096, 65536])), "4k-64k");
        assert_eq!(bs_text(&bs(&[512, 1 << 20])), "512-1m");
        assert_eq!(bs_text(&json!({})), "");
    }
}
