//! Dates as users type them for `--since` and `--until` (RFC 3339 or `YYYY-MM-DD`, UTC) and as the catalog
//! prints them. Civil-date arithmetic is Howard Hinnant's (days from 1970-01-01, proleptic Gregorian), so the
//! crate needs no date library.

/// Days since 1970-01-01 of a civil date.
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Civil date of days since 1970-01-01.
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

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

fn digits(s: &str, n: usize) -> Option<i64> {
    (s.len() == n && s.bytes().all(|b| b.is_ascii_digit())).then(|| s.parse().ok()).flatten()
}

/// Parses `YYYY-MM-DD` into (days since the epoch).
fn parse_day(s: &str) -> Option<i64> {
    let mut parts = s.split('-');
    let (y, m, d) = (digits(parts.next()?, 4)?, digits(parts.next()?, 2)?, digits(parts.next()?, 2)?);
    if parts.next().is_some() || !(1..=12).contains(&m) || d < 1 || d > days_in_month(y, m) {
        return None;
    }
    Some(days_from_civil(y, m, d))
}

/// Parses a date for `--since` / `--until`: RFC 3339 (`2025-03-01T14:30:00Z`, `2025-03-01T14:30:00.5+02:00`,
/// a space instead of `T` allowed) or a day, `2025-03-01`, meaning its start in UTC, or with `end_of_day`
/// the start of the next day (so `--until 2025-03-01` includes that whole day). Returns Unix seconds, or
/// `None` when the text is neither form.
pub fn parse_date(text: &str, end_of_day: bool) -> Option<f64> {
    let t = text.trim();
    if t.len() == 10 {
        return parse_day(t).map(|d| (d + i64::from(end_of_day)) as f64 * 86_400.0);
    }
    let (day, rest) = (t.get(..10)?, t.get(10..)?);
    let days = parse_day(day)?;
    let rest = rest.strip_prefix(['T', 't', ' '])?;
    // hh:mm:ss[.frac] then Z or ±hh:mm
    let (clock, offset_s) = if let Some(c) = rest.strip_suffix(['Z', 'z']) {
        (c, 0i64)
    } else {
        let at = rest.rfind(['+', '-'])?;
        let (c, off) = rest.split_at(at);
        let sign = if off.starts_with('-') { -1 } else { 1 };
        let (oh, om) = off[1..].split_once(':')?;
        let (oh, om) = (digits(oh, 2)?, digits(om, 2)?);
        if oh > 23 || om > 59 {
            return None;
        }
        (c, sign * (oh * 3600 + om * 60))
    };
    let (hms, frac) = match clock.split_once('.') {
        Some((h, f)) if !f.is_empty() && f.bytes().all(|b| b.is_ascii_digit()) => {
            (h, format!("0.{f}").parse::<f64>().ok()?)
        }
        Some(_) => return None,
        None => (clock, 0.0),
    };
    let mut p = hms.split(':');
    let (h, m, s) = (digits(p.next()?, 2)?, digits(p.next()?, 2)?, digits(p.next()?, 2)?);
    if p.next().is_some() || h > 23 || m > 59 || s > 60 {
        return None;
    }
    Some((days * 86_400 + h * 3600 + m * 60 + s - offset_s) as f64 + frac)
}

/// Unix seconds as `YYYY-MM-DD HH:MM` (UTC), for tables.
pub fn format_minute(unix_s: f64) -> String {
    if !unix_s.is_finite() {
        return "-".into();
    }
    let secs = unix_s.floor() as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (y, m, d) = civil_from_days(days);
    format!("{y:04}-{m:02}-{d:02} {:02}:{:02}", rem / 3600, rem / 60 % 60)
}

/// Unix seconds as RFC 3339 UTC, to the second (`2025-03-01T14:30:00Z`).
pub fn format_rfc3339(unix_s: f64) -> String {
    if !unix_s.is_finite() {
        return "-".into();
    }
    let secs = unix_s.floor() as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (y, m, d) = civil_from_days(days);
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z", rem / 3600, rem / 60 % 60, rem % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn day_is_midnight_utc_and_until_includes_it() {
        assert_eq!(parse_date("1970-01-02", false), Some(86_400.0));
        assert_eq!(parse_date("1970-01-02", true), Some(2.0 * 86_400.0));
        assert_eq!(parse_date("2024-02-29", false), Some(1_709_164_800.0));
    }

    #[test]
    fn rfc3339_with_offsets_and_fractions() {
        assert_eq!(parse_date("2025-03-01T14:30:00Z", false), Some(1_740_839_400.0));
        assert_eq!(parse_date("2025-03-01T16:30:00+02:00", false), Some(1_740_839_400.0));
        assert_eq!(parse_date("2025-03-01 14:30:00.5z", false), Some(1_740_839_400.5));
        assert_eq!(parse_date("2025-03-01T13:30:00-01:00", false), Some(1_740_839_400.0));
    }

    #[test]
    fn bad_dates_are_none() {
        for bad in [
            "",
            "yesterday",
            "2025-13-01",
            "2023-02-29",
            "2025-3-1",
            "2025-03-01T25:00:00Z",
            "2025-03-01T14:30Z",
            "2025-03-01T14:30:00",
            "2025-03-01T14:30:00.Z",
            "2025-03-01T14:30:00+2",
            "２０２５-03-01",
        ] {
            assert_eq!(parse_date(bad, false), None, "{bad}");
        }
    }

    #[test]
    fn format_round_trips() {
        let t = parse_date("2025-03-01T14:30:59Z", false).unwrap();
        assert_eq!(format_rfc3339(t), "2025-03-01T14:30:59Z");
        assert_eq!(format_minute(t), "2025-03-01 14:30");
        assert_eq!(format_minute(f64::NAN), "-");
    }
}
