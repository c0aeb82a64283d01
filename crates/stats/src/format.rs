//! Durations in the unit that gives 3 significant figures, as every table prints them: here, at the bottom
//! of the crates, so that a warning's message speaks the units of the tables beside it. `iolab-report`'s
//! formatters re-export it.

/// A duration in the unit that gives 3 significant figures: `850 ns`, `85.3 ns`, `1.82 ms`,
/// `21.3 ms`, `182 µs`, `1.23 s`, `1234 s`. `-` for none (a figure over zero samples), negative or
/// non-finite values.
pub fn format_duration_ns(ns: impl Into<Option<f64>>) -> String {
    let Some(ns) = ns.into().filter(|ns| ns.is_finite() && *ns >= 0.0) else {
        return "-".to_string();
    };
    const UNITS: [(&str, f64); 4] = [("ns", 1.0), ("µs", 1e3), ("ms", 1e6), ("s", 1e9)];
    for (i, &(unit, scale)) in UNITS.iter().enumerate() {
        let v = ns / scale;
        let text = three_significant(v);
        // Move to the next unit when rounding reached 1000 (999.7 ns -> "1.00 µs").
        let rounded: f64 = text.parse().unwrap_or(v);
        if rounded < 1000.0 || i == UNITS.len() - 1 {
            return format!("{text} {unit}");
        }
    }
    unreachable!("the last unit always returns")
}

/// `v` with 3 significant figures (no exponent; values >= 1000 keep all integer digits).
pub fn three_significant(v: f64) -> String {
    if v == 0.0 {
        "0".to_string()
    } else if v < 9.995 {
        format!("{v:.2}")
    } else if v < 99.95 {
        format!("{v:.1}")
    } else {
        format!("{v:.0}")
    }
}
