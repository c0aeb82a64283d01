//! Pass/fail thresholds (`[verdict]` in a job file, `--max-db-read-avg` and friends on the command line),
//! Jetstress-style.
//!
//! Jetstress fails a run when a database instance's read latency averages over 20 ms or peaks over 50 ms, or
//! a log instance's write latency averages over 10 ms or peaks over 50 ms (docs/SOURCES.md §2.6, from a
//! JetstressCmd log), or when the achieved transactional IOPS fall short of the target. These are the
//! defaults here; every one can be changed. The checks themselves are evaluated by the cli on the result's
//! worker groups (`db*` groups' reads, `log*` groups' writes); this module only holds what the user asked for.

use crate::error::{suggest, Place, SpecError};
use crate::units::{parse_count, parse_duration_ns, parse_percent};
use serde::{Deserialize, Serialize};

/// Keys of the `[verdict]` table (each also a flag: `max_db_read_avg` is `--max-db-read-avg`).
pub const VERDICT_KEYS: &[&str] = &[
    "max_db_read_avg",
    "max_db_read_max",
    "max_log_write_avg",
    "max_log_write_max",
    "max_flush_p99",
    "min_iops",
    "iops_tolerance",
    "standard_duration",
];

/// The run length Jetstress's performance test takes, and so the length an Exchange verdict's standard
/// requires unless `standard_duration` says otherwise: 2 hours (Microsoft's Jetstress guide).
pub const EXCHANGE_STANDARD_DURATION_NS: u64 = 2 * 3600 * 1_000_000_000;

/// Default database read latency limit, average: 20 ms [S docs/SOURCES.md §2.6].
pub const DEFAULT_DB_READ_AVG_NS: u64 = 20_000_000;
/// Default database read latency limit, maximum (per-interval mean): 50 ms [S §2.6].
pub const DEFAULT_DB_READ_MAX_NS: u64 = 50_000_000;
/// Default log write latency limit, average: 10 ms [S §2.6].
pub const DEFAULT_LOG_WRITE_AVG_NS: u64 = 10_000_000;
/// Default log write latency limit, maximum (per-interval mean): 50 ms [S §2.6].
pub const DEFAULT_LOG_WRITE_MAX_NS: u64 = 50_000_000;
/// Default tolerance of "achieved IOPS >= target", percent. An open-loop run cannot exceed its offered rate,
/// and Poisson arrival counts over a 10 s run at 120 IOPS vary by about 2.9 % (sqrt(1200) / 1200); 5 % is
/// also where the run warns that a rate was not sustained.
pub const DEFAULT_IOPS_TOLERANCE_PCT: f64 = 5.0;

/// The `[verdict]` table; unset fields take the defaults above when the verdict is evaluated.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct VerdictSpec {
    /// Largest allowed average read response time of each database group, ns.
    pub max_db_read_avg_ns: Option<u64>,
    /// Largest allowed per-interval mean read response time of each database group, ns.
    pub max_db_read_max_ns: Option<u64>,
    /// Largest allowed average write response time of each log group, ns.
    pub max_log_write_avg_ns: Option<u64>,
    /// Largest allowed per-interval mean write response time of each log group, ns.
    pub max_log_write_max_ns: Option<u64>,
    /// Largest allowed 99th percentile of the run's flushes (fsync, fdatasync), ns: etcd's disk check (10 ms).
    /// No default: checked only when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_flush_p99_ns: Option<u64>,
    /// Smallest acceptable database IOPS (default: the database groups' offered rate).
    pub min_iops: Option<f64>,
    /// How far below the target the achieved IOPS may be and still pass, percent.
    pub iops_tolerance_pct: Option<f64>,
    /// The run length the verdict's standard requires (Jetstress: 2 h); a shorter run's verdict is
    /// provisional. Default: 2 h for a job with `[exchange]`, none otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub standard_duration_ns: Option<u64>,
}

impl VerdictSpec {
    /// Sets one key from its text (the job file and the flags share this parser). `Ok(false)` for an
    /// unknown key.
    pub fn set(&mut self, key: &str, text: &str, place: &Place) -> Result<bool, SpecError> {
        let dur = || -> Result<u64, SpecError> {
            let v = parse_duration_ns(text).map_err(|e| SpecError::invalid(place, text, e))?;
            if v == 0 {
                return Err(SpecError::invalid(place, text, "a latency above 0, e.g. '20ms'"));
            }
            Ok(v)
        };
        match key {
            "max_db_read_avg" => self.max_db_read_avg_ns = Some(dur()?),
            "max_db_read_max" => self.max_db_read_max_ns = Some(dur()?),
            "max_log_write_avg" => self.max_log_write_avg_ns = Some(dur()?),
            "max_log_write_max" => self.max_log_write_max_ns = Some(dur()?),
            "max_flush_p99" => self.max_flush_p99_ns = Some(dur()?),
            "standard_duration" => self.standard_duration_ns = Some(dur()?),
            "min_iops" => {
                let v = parse_count(text).map_err(|e| SpecError::invalid(place, text, e))?;
                if v <= 0.0 {
                    return Err(SpecError::invalid(
                        place,
                        text,
                        "an IOPS figure above 0, e.g. '1000' or '1.5k'",
                    ));
                }
                self.min_iops = Some(v)
            }
            "iops_tolerance" => {
                self.iops_tolerance_pct =
                    Some(parse_percent(text).map_err(|e| SpecError::invalid(place, text, e))?)
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Parses the `[verdict]` table (an empty table means: the defaults).
    pub fn from_toml(value: &toml::Value, file: &str) -> Result<Self, SpecError> {
        let table = value.as_table().ok_or_else(|| SpecError::Conflict {
            place: Place::Key { file: file.into(), table: String::new(), key: "verdict".into() },
            message: "expected a table such as [verdict] with max_db_read_avg = \"20ms\"".into(),
        })?;
        let mut v = VerdictSpec::default();
        for (key, value) in table {
            let place = Place::Key { file: file.into(), table: "[verdict]".into(), key: key.clone() };
            let text = match value {
                toml::Value::String(s) => s.clone(),
                toml::Value::Integer(i) => i.to_string(),
                toml::Value::Float(f) => f.to_string(),
                other => return Err(SpecError::invalid(&place, other.to_string(), "a string or a number")),
            };
            if !v.set(key, &text, &place)? {
                return Err(SpecError::UnknownKey {
                    file: file.into(),
                    table: "[verdict]".into(),
                    key: key.clone(),
                    suggestion: suggest(key, VERDICT_KEYS).map(str::to_string),
                });
            }
        }
        Ok(v)
    }

    /// `self` with every field `over` sets replaced by `over`'s value.
    pub fn merged(&self, over: &VerdictSpec) -> VerdictSpec {
        VerdictSpec {
            max_db_read_avg_ns: over.max_db_read_avg_ns.or(self.max_db_read_avg_ns),
            max_db_read_max_ns: over.max_db_read_max_ns.or(self.max_db_read_max_ns),
            max_log_write_avg_ns: over.max_log_write_avg_ns.or(self.max_log_write_avg_ns),
            max_log_write_max_ns: over.max_log_write_max_ns.or(self.max_log_write_max_ns),
            max_flush_p99_ns: over.max_flush_p99_ns.or(self.max_flush_p99_ns),
            min_iops: over.min_iops.or(self.min_iops),
            iops_tolerance_pct: over.iops_tolerance_pct.or(self.iops_tolerance_pct),
            standard_duration_ns: over.standard_duration_ns.or(self.standard_duration_ns),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<VerdictSpec, SpecError> {
        let v: toml::Table = text.parse().unwrap();
        VerdictSpec::from_toml(&toml::Value::Table(v), "j.toml")
    }

    #[test]
    fn verdict_table_parses_durations_and_counts() {
        let v = parse("max_db_read_avg = \"15ms\"\nmin_iops = \"1.5k\"\niops_tolerance = 2").unwrap();
        assert_eq!(v.max_db_read_avg_ns, Some(15_000_000));
        assert_eq!(v.min_iops, Some(1500.0));
        assert_eq!(v.iops_tolerance_pct, Some(2.0));
        assert_eq!(parse("").unwrap(), VerdictSpec::default());
    }

    #[test]
    fn verdict_bad_values_and_keys_are_errors() {
        let e = parse("max_db_read_avg = \"fast\"").unwrap_err().to_string();
        assert!(e.starts_with("invalid value 'fast' for 'max_db_read_avg' in [verdict]"), "{e}");
        let e = parse("max_db_read_avgg = \"1ms\"").unwrap_err().to_string();
        assert!(e.contains("did you mean 'max_db_read_avg'?"), "{e}");
        assert!(parse("max_log_write_max = \"0\"").is_err());
        assert!(parse("min_iops = -3").is_err());
    }

    #[test]
    fn verdict_merge_prefers_the_later_layer() {
        let a = parse("max_db_read_avg = \"15ms\"\nmin_iops = 10").unwrap();
        let b = parse("min_iops = 20").unwrap();
        let m = a.merged(&b);
        assert_eq!((m.max_db_read_avg_ns, m.min_iops), (Some(15_000_000), Some(20.0)));
    }
}
