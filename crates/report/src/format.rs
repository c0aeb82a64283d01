//! Number formatters and the aligned table every text rendering uses, and the cli reuses.
//!
//! Modelled on hyperfine's output: no decoration, aligned columns, each value in the unit that
//! gives 3 significant figures (ns, µs, ms, s), counts with thousands separators, throughput in
//! MB/s (10^6 bytes per second, as fio's "MB/s"). A leaf module: the models and the renderers depend on
//! it, it depends on neither.

pub use iolab_stats::format::format_duration_ns;
use iolab_stats::format::three_significant;

/// A size in binary units with 3 significant figures: `512 B`, `4.00 KiB`, `8.00 GiB`.
pub fn format_bytes(n: u64) -> String {
    const UNITS: [&str; 7] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if n < 1024 {
        return format!("{n} B");
    }
    let mut v = n as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit < UNITS.len() - 1 {
        v /= 1024.0;
        unit += 1;
    }
    let text = three_significant(v);
    if text == "1024" && unit < UNITS.len() - 1 {
        return format!("1.00 {}", UNITS[unit + 1]);
    }
    format!("{text} {}", UNITS[unit])
}

/// A count and its noun, singular or plural as the count asks, the count with thousands separators: `1 user`,
/// `2 users`, `1,000 users` (`noun` is the singular; the plural adds an s).
pub fn counted(n: u64, noun: &str) -> String {
    format!("{} {noun}{}", format_count(n), if n == 1 { "" } else { "s" })
}

/// An integer with thousands separators: `1,000,579`.
pub fn format_count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A non-negative rate with thousands separators and `decimals` decimals: `70,012.3`.
pub fn format_rate(v: f64, decimals: usize) -> String {
    if !v.is_finite() || v < 0.0 {
        return "-".to_string();
    }
    let text = format!("{v:.decimals$}");
    let (int, frac) = match text.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (text.as_str(), None),
    };
    let grouped = format_count(int.parse().unwrap_or(0));
    match frac {
        Some(f) => format!("{grouped}.{f}"),
        None => grouped,
    }
}

/// Right-aligned table; the first column (labels) is left-aligned.
pub(crate) fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let columns = header.len();
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let mut line = |cells: &[String]| {
        let mut text = String::new();
        for (i, cell) in cells.iter().enumerate().take(columns) {
            let pad = widths[i].saturating_sub(cell.chars().count());
            if i == 0 {
                text.push_str(cell);
                text.push_str(&" ".repeat(pad));
            } else {
                text.push_str("  ");
                text.push_str(&" ".repeat(pad));
                text.push_str(cell);
            }
        }
        out.push_str(text.trim_end());
        out.push('\n');
    };
    let header: Vec<String> = header.iter().map(|h| h.to_string()).collect();
    line(&header);
    for row in rows {
        line(row);
    }
    out
}

/// `text` with every control character except newline and tab shown as a visible escape (`\x1b`, `\u{9b}`),
/// for text that goes to a terminal. Notes, tags, job and target names come from users and from catalogs
/// others wrote: printed raw, an ESC sequence in one of them could clear or retitle the reader's terminal.
pub fn escape_control(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(|c| c.is_control() && c != '\n' && c != '\t') {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' | '\t' => out.push(c),
            c if c.is_control() && (c as u32) < 0x80 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    std::borrow::Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_control_shows_escapes_and_keeps_newlines_tabs_and_unicode() {
        assert_eq!(escape_control("plain\ttext\n"), "plain\ttext\n");
        assert!(matches!(escape_control("plain"), std::borrow::Cow::Borrowed(_)));
        assert_eq!(escape_control("a\x1b]0;pwned\x07b"), "a\\x1b]0;pwned\\x07b");
        assert_eq!(escape_control("\x1b[2J\r"), "\\x1b[2J\\x0d");
        assert_eq!(escape_control("csi \u{9b}31m µs"), "csi \\u{9b}31m µs");
    }

    #[test]
    fn format_duration_ns_picks_unit_for_three_significant_figures() {
        assert_eq!(format_duration_ns(850.0), "850 ns");
        assert_eq!(format_duration_ns(85.34), "85.3 ns");
        assert_eq!(format_duration_ns(5.0), "5.00 ns");
        assert_eq!(format_duration_ns(0.0), "0 ns");
        assert_eq!(format_duration_ns(999.7), "1.00 µs");
        assert_eq!(format_duration_ns(182_400.0), "182 µs");
        assert_eq!(format_duration_ns(1_820_000.0), "1.82 ms");
        assert_eq!(format_duration_ns(21_340_000.0), "21.3 ms");
        assert_eq!(format_duration_ns(1.234e9), "1.23 s");
        assert_eq!(format_duration_ns(1_234e9), "1234 s");
        assert_eq!(format_duration_ns(f64::NAN), "-");
    }

    #[test]
    fn format_bytes_uses_binary_units() {
        assert_eq!(format_bytes(0), "0 B");
        assert_eq!(format_bytes(1023), "1023 B");
        assert_eq!(format_bytes(4096), "4.00 KiB");
        assert_eq!(format_bytes(8 << 30), "8.00 GiB");
        assert_eq!(format_bytes(1_500_000_000), "1.40 GiB");
        assert_eq!(format_bytes((1 << 30) - 1), "1.00 GiB");
    }

    #[test]
    fn format_count_groups_thousands() {
        assert_eq!(format_count(0), "0");
        assert_eq!(format_count(999), "999");
        assert_eq!(format_count(1000), "1,000");
        assert_eq!(format_count(1_000_579), "1,000,579");
        assert_eq!(format_count(u64::MAX), "18,446,744,073,709,551,615");
    }

    #[test]
    fn format_rate_groups_and_rounds() {
        assert_eq!(format_rate(70_012.34, 1), "70,012.3");
        assert_eq!(format_rate(999.96, 1), "1,000.0");
        assert_eq!(format_rate(5000.0, 0), "5,000");
    }
}
