//! The values of a sweep flag (`iolab sweep --qd 1..64:x2`, `--bs 512..1m:x2`, `--set read_pct=0,50,100`):
//! comma-separated values and ranges, each range a start, an end and a step that multiplies (`x2`) or adds
//! (`+4k`). Sizes come back in binary units (`4K`), counts as plain numbers, so every value is one that the
//! job's own key parser accepts. Pure parsing of what the user typed, like the rest of this crate.

use crate::units::{format_size, parse_count, parse_size};

/// What kind of value a key takes, for ranges and the load axis.
#[derive(Clone, Copy, PartialEq)]
pub enum ValueKind {
    /// Bytes: '4k', '1m'.
    Size,
    /// A number: '8', '10k'.
    Count,
    /// Anything else: lists only.
    Text,
}

/// The kind of value a job key takes.
pub fn kind_of(key: &str) -> ValueKind {
    match key {
        "bs" | "size" | "offset" | "length" | "align" | "bytes" => ValueKind::Size,
        "qd" | "workers" | "rate" | "ios" | "read_pct" | "random_pct" | "weight" | "seed" => ValueKind::Count,
        _ => ValueKind::Text,
    }
}

/// Parses a list: comma-separated items, each a value or a range 'FROM..TO:xF' / 'FROM..TO:+STEP', into at
/// most `max_values` values. The error is the whole message, quoting `flag` and `text`.
pub fn parse_list(flag: &str, key: &str, text: &str, max_values: usize) -> Result<Vec<String>, String> {
    let kind = kind_of(key);
    let err = |why: &str| format!("invalid value '{text}' for '{flag}': {why}");
    let mut out: Vec<String> = Vec::new();
    for item in text.split(',') {
        let item = item.trim();
        if item.is_empty() {
            return Err(err("expected a comma-separated list of values or ranges such as '1,2,4' or '1..64:x2'; found an empty item"));
        }
        let Some((from, rest)) = item.split_once("..") else {
            out.push(item.to_string());
            continue;
        };
        if kind == ValueKind::Text {
            return Err(err(&format!(
                "'{item}' is a range, but '{key}' is not numeric; list its values instead"
            )));
        }
        let (to, step) = rest.split_once(':').ok_or_else(|| {
            err(&format!("the range '{item}' has no step; expected FROM..TO:xFACTOR or FROM..TO:+STEP, e.g. '1..64:x2'"))
        })?;
        let num = |t: &str| -> Result<f64, String> {
            let v = match kind {
                ValueKind::Size => parse_size(t).map(|v| v as f64),
                _ => parse_count(t),
            };
            v.map_err(|e| err(&format!("'{t}' in the range '{item}' is not valid: expected {e}")))
        };
        let (from_v, to_v) = (num(from)?, num(to)?);
        if from_v > to_v {
            return Err(err(&format!("the range '{item}' runs backwards; expected FROM <= TO")));
        }
        let step = step.trim();
        let next: Box<dyn Fn(f64) -> f64> = if let Some(f) = step.strip_prefix('x').or(step.strip_prefix('*'))
        {
            let f: f64 =
                f.trim().parse().ok().filter(|f: &f64| f.is_finite() && *f > 1.0).ok_or_else(|| {
                    err(&format!("the step '{step}' of '{item}' is not a factor above 1; expected e.g. 'x2'"))
                })?;
            if from_v <= 0.0 {
                return Err(err(&format!("the range '{item}' multiplies from 0; start at 1 or more")));
            }
            Box::new(move |v| v * f)
        } else if let Some(s) = step.strip_prefix('+') {
            let s = num(s)?;
            if s <= 0.0 {
                return Err(err(&format!("the step '{step}' of '{item}' is not above 0")));
            }
            Box::new(move |v| v + s)
        } else {
            return Err(err(&format!(
                "the step '{step}' of '{item}' is neither xFACTOR nor +STEP, e.g. 'x2' or '+4k'"
            )));
        };
        let mut v = from_v;
        while v <= to_v * (1.0 + 1e-12) {
            if out.len() > max_values {
                return Err(err(&format!("more than {max_values} values")));
            }
            out.push(match kind {
                ValueKind::Size => format_size(v.round() as u64),
                _ if v.fract() == 0.0 => format!("{v:.0}"),
                _ => format!("{v}"),
            });
            v = next(v);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(key: &str, text: &str) -> Vec<String> {
        parse_list("--x", key, text, 1000).unwrap()
    }

    fn err(key: &str, text: &str) -> String {
        parse_list("--x", key, text, 1000).unwrap_err()
    }

    #[test]
    fn list_comma_and_ranges() {
        assert_eq!(list("qd", "1,2,4"), ["1", "2", "4"]);
        assert_eq!(list("qd", "1..64:x2"), ["1", "2", "4", "8", "16", "32", "64"]);
        assert_eq!(list("qd", "1..10:x2"), ["1", "2", "4", "8"]);
        assert_eq!(list("rate", "1000..3000:+1000"), ["1000", "2000", "3000"]);
        assert_eq!(list("rate", "10k..20k:+5k"), ["10000", "15000", "20000"]);
        assert_eq!(list("qd", "1,3..9:+3"), ["1", "3", "6", "9"]);
    }

    #[test]
    fn list_sizes_format_back_in_binary_units() {
        assert_eq!(list("bs", "512..4k:x2"), ["512", "1K", "2K", "4K"]);
        assert_eq!(list("bs", "4k..16k:+4k"), ["4K", "8K", "12K", "16K"]);
        assert_eq!(list("bs", "512..1m:x2").len(), 12);
    }

    #[test]
    fn list_block_size_split_is_one_value() {
        assert_eq!(list("bs", "4k/60:8k/40"), ["4k/60:8k/40"]);
        assert_eq!(list("bs", "4k/60:8k/40,64k"), ["4k/60:8k/40", "64k"]);
    }

    #[test]
    fn list_errors_quote_flag_and_text() {
        assert!(err("qd", "1,,2").starts_with("invalid value '1,,2' for '--x': "), "{}", err("qd", "1,,2"));
        assert!(err("qd", "").contains("empty item"));
        assert!(err("qd", "64..1:x2").contains("backwards"));
        assert!(err("qd", "1..64").contains("no step"));
        assert!(err("qd", "1..64:x1").contains("factor above 1"));
        assert!(err("qd", "1..64:y2").contains("neither"));
        assert!(err("qd", "0..64:x2").contains("from 0"));
        assert!(err("qd", "1..q:x2").contains("'q' in the range"));
        assert!(err("rw", "a..b:x2").contains("not numeric"));
        assert!(err("qd", "1..1000000:+1").contains("more than 1000"));
    }
}
