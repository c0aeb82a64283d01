//! RFC 3339 timestamps without a date library (the catalog's formatting: UTC, to the second).

/// Civil date (year, month, day) of days since 1970-01-01 (Howard Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(month <= 2), month, day)
}

/// Unix seconds as RFC 3339 UTC, to the second (`2025-03-01T14:30:00Z`).
pub(crate) fn format_rfc3339(unix_s: f64) -> String {
    let secs = if unix_s.is_finite() { unix_s.floor() as i64 } else { 0 };
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (y, m, d) = civil_from_days(days);
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z", rem / 3600, rem / 60 % 60, rem % 60)
}

#[cfg(test)]
mod tests {
    #[test]
    fn formats_utc_seconds() {
        assert_eq!(super::format_rfc3339(0.0), "1970-01-01T00:00:00Z");
        assert_eq!(super::format_rfc3339(1_709_164_800.5), "2024-02-29T00:00:00Z");
    }
}
