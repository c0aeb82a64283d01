//! fio's number forms: sizes with `kb_base` prefixes, times with a per-option default unit, booleans.
//!
//! With `kb_base=1024` (fio's default, "compatibility mode") `k`, `kb`, `K` and `KB` are 1024 and the IEC forms
//! `ki`/`KiB` are 1000; with `kb_base=1000` the two swap. Suffixes are not case sensitive; `b` means bytes.

/// Parses a fio size: `4096`, `4k`, `4KiB`, `1.5g`, `0x1000`. `None` when it is not one.
pub fn parse_size(text: &str, kb_base: u64) -> Option<u64> {
    let t = text.trim();
    if let Some(hex) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        return u64::from_str_radix(hex, 16).ok();
    }
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    if num.is_empty() {
        return None;
    }
    let mult = unit_multiplier(&unit.trim().to_ascii_lowercase(), kb_base)?;
    if num.contains('.') {
        let v: f64 = num.parse().ok()?;
        let total = v * mult as f64;
        return (total.fract() == 0.0 && total < 9.0e18).then_some(total as u64);
    }
    num.parse::<u64>().ok()?.checked_mul(mult)
}

fn unit_multiplier(unit: &str, kb_base: u64) -> Option<u64> {
    let u = unit.strip_suffix('b').unwrap_or(unit);
    if u.is_empty() {
        return Some(1);
    }
    let (prefix, iec) = match u.strip_suffix('i') {
        Some(p) => (p, true),
        None => (u, false),
    };
    let power = match prefix {
        "k" => 1,
        "m" => 2,
        "g" => 3,
        "t" => 4,
        "p" => 5,
        _ => return None,
    };
    // kb_base=1024: plain prefixes are binary and IEC ones decimal; kb_base=1000: the standard meanings.
    let binary = if kb_base == 1000 { iec } else { !iec };
    let base: u64 = if binary { 1024 } else { 1000 };
    Some(base.pow(power))
}

/// Parses a fio time into nanoseconds; a bare number is in `default_unit_ns`.
pub fn parse_time_ns(text: &str, default_unit_ns: u64) -> Option<u64> {
    let t = text.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let v: f64 = num.parse().ok()?;
    let mult = match unit.trim().to_ascii_lowercase().as_str() {
        "" => default_unit_ns as f64,
        "us" | "usec" => 1e3,
        "ms" | "msec" => 1e6,
        "s" | "sec" => 1e9,
        "m" | "min" => 60e9,
        "h" => 3600e9,
        "d" => 86400e9,
        _ => return None,
    };
    let ns = v * mult;
    (ns.is_finite() && ns < 1.0e19).then_some(ns.round() as u64)
}

/// Parses a fio boolean: a bare flag is true, else `1`/`0` (and the words true/false, yes/no, on/off).
pub fn parse_bool(value: Option<&str>) -> Option<bool> {
    match value.map(|v| v.trim().to_ascii_lowercase()) {
        None => Some(true),
        Some(v) => match v.as_str() {
            "1" | "true" | "yes" | "on" => Some(true),
            "0" | "false" | "no" | "off" => Some(false),
            _ => None,
        },
    }
}

/// Splits a per-direction value (`read,write[,trim]`) into its read, write and trim parts. A part left empty
/// is `None` (fio's default for that direction); a value without a comma applies to all three, and the last
/// value given applies to the directions after it unless it ends with a comma (`8k,32k` gives trims 32k,
/// `8k,32k,` leaves them at the default).
pub fn per_direction(value: &str) -> [Option<String>; 3] {
    let parts: Vec<&str> = value.split(',').map(str::trim).collect();
    let pick = |s: &str| (!s.is_empty()).then(|| s.to_string());
    match parts.as_slice() {
        [one] => [pick(one), pick(one), pick(one)],
        [r, w] => [pick(r), pick(w), pick(w)],
        [r, w, t, ..] => [pick(r), pick(w), pick(t)],
        [] => [None, None, None],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_follow_kb_base() {
        assert_eq!(parse_size("4k", 1024), Some(4096));
        assert_eq!(parse_size("4KB", 1024), Some(4096));
        assert_eq!(parse_size("4KiB", 1024), Some(4000));
        assert_eq!(parse_size("4KiB", 1000), Some(4096));
        assert_eq!(parse_size("4k", 1000), Some(4000));
        assert_eq!(parse_size("1m", 1024), Some(1 << 20));
        assert_eq!(parse_size("1.5g", 1024), Some(3 << 29));
        assert_eq!(parse_size("0x1000", 1024), Some(4096));
        assert_eq!(parse_size("512b", 1024), Some(512));
        assert_eq!(parse_size("4q", 1024), None);
        assert_eq!(parse_size("", 1024), None);
    }

    #[test]
    fn times_use_the_option_default_unit() {
        assert_eq!(parse_time_ns("60", 1_000_000_000), Some(60_000_000_000));
        assert_eq!(parse_time_ns("2m", 1_000_000_000), Some(120_000_000_000));
        assert_eq!(parse_time_ns("500", 1_000), Some(500_000));
        assert_eq!(parse_time_ns("10ms", 1_000), Some(10_000_000));
        assert_eq!(parse_time_ns("1h", 1), Some(3_600_000_000_000));
        assert_eq!(parse_time_ns("5x", 1), None);
    }

    #[test]
    fn per_direction_values_split() {
        let s = |v: &str| Some(v.to_string());
        assert_eq!(per_direction("4k"), [s("4k"), s("4k"), s("4k")]);
        assert_eq!(per_direction("4k,8k"), [s("4k"), s("8k"), s("8k")]);
        assert_eq!(per_direction(",8k"), [None, s("8k"), s("8k")]);
        assert_eq!(per_direction("4k,"), [s("4k"), None, None]);
        assert_eq!(per_direction("4k,8k,"), [s("4k"), s("8k"), None]);
        assert_eq!(per_direction("4k,8k,16k"), [s("4k"), s("8k"), s("16k")]);
        assert_eq!(per_direction(",,16k"), [None, None, s("16k")]);
    }
}
