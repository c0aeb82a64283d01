//! `throttle`: slow a block device down with the kernel's own I/O throttling (cgroup v2 `io.max` or cgroup
//! v1 `blkio.throttle.*`), to emulate a slower path on real hardware. The cli applies it (root only).

use crate::units::{parse_count, parse_size};
use serde::{Deserialize, Serialize};

/// Limits per direction; absent = unlimited. Syntax mirrors io.max: `rbps=100M,wbps=50M,riops=2000,wiops=1000`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ThrottleSpec {
    /// Read bytes per second.
    pub rbps: Option<u64>,
    /// Write bytes per second.
    pub wbps: Option<u64>,
    /// Read I/Os per second.
    pub riops: Option<u64>,
    /// Write I/Os per second.
    pub wiops: Option<u64>,
}

impl ThrottleSpec {
    /// Parses `key=value,...` with keys rbps, wbps (sizes per second: `100M`), riops, wiops (counts: `2k`).
    pub fn parse(text: &str) -> Result<ThrottleSpec, String> {
        let expected =
            "'rbps=SIZE', 'wbps=SIZE', 'riops=N' or 'wiops=N', comma-separated, e.g. 'rbps=100M,riops=2k'";
        let mut t = ThrottleSpec::default();
        for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (k, v) = item.split_once('=').ok_or_else(|| format!("{expected}; found '{item}'"))?;
            let bytes = |v: &str| {
                parse_size(v)
                    .ok()
                    .filter(|b| *b > 0)
                    .ok_or_else(|| format!("{k}=SIZE above 0 (e.g. '100M'), found '{v}'"))
            };
            let count = |v: &str| {
                parse_count(v).ok().filter(|c| *c >= 1.0 && c.fract() == 0.0).map(|c| c as u64).ok_or_else(
                    || format!("{k}=N, a whole number of I/Os per second (e.g. '2k'), found '{v}'"),
                )
            };
            match k.trim() {
                "rbps" => t.rbps = Some(bytes(v)?),
                "wbps" => t.wbps = Some(bytes(v)?),
                "riops" => t.riops = Some(count(v)?),
                "wiops" => t.wiops = Some(count(v)?),
                _ => return Err(format!("{expected}; found key '{k}'")),
            }
        }
        if t == ThrottleSpec::default() {
            return Err(expected.to_string());
        }
        Ok(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn throttle_parses_all_keys() {
        let t = ThrottleSpec::parse("rbps=100M,wbps=1G,riops=2k,wiops=500").unwrap();
        assert_eq!(t.rbps, Some(100 << 20));
        assert_eq!(t.wbps, Some(1 << 30));
        assert_eq!(t.riops, Some(2000));
        assert_eq!(t.wiops, Some(500));
    }

    #[test]
    fn throttle_rejects_nonsense() {
        for bad in ["", "rbps", "rbps=0", "xbps=1M", "riops=1.5", "riops=-3"] {
            assert!(ThrottleSpec::parse(bad).is_err(), "{bad}");
        }
    }
}
