//! The small parsers the key definitions share: a whole number in a range, a size above zero, a boolean, and
//! the error that quotes the text and names its place.

use crate::error::{Place, SpecError};
use crate::units::parse_size;

/// `parsed`, or the error that names `place`, quotes `text` and says what a unit parser expected.
pub(super) fn quoted<T>(parsed: Result<T, String>, text: &str, place: &Place) -> Result<T, SpecError> {
    parsed.map_err(|e| SpecError::invalid(place, text, e))
}

/// A whole number from `lo` to `hi`; `what` names it in the error ("a whole number").
pub(crate) fn range_u32(place: &Place, text: &str, lo: u32, hi: u32, what: &str) -> Result<u32, SpecError> {
    let expected = || format!("{what} from {lo} to {hi}");
    let v: i64 = text.trim().parse().map_err(|_| SpecError::invalid(place, text, expected()))?;
    if v < lo as i64 || v > hi as i64 {
        return Err(SpecError::invalid(place, text, expected()));
    }
    Ok(v as u32)
}

/// A size above 0 ('8G').
pub(crate) fn positive_size(place: &Place, text: &str) -> Result<u64, SpecError> {
    let v = quoted(parse_size(text), text, place)?;
    if v == 0 {
        return Err(SpecError::invalid(place, text, "a size above 0, e.g. '8G'"));
    }
    Ok(v)
}

/// `true`, `yes`, `1`, `on` or their opposites.
pub(super) fn parse_bool(place: &Place, text: &str) -> Result<bool, SpecError> {
    match text.trim() {
        "true" | "yes" | "1" | "on" => Ok(true),
        "false" | "no" | "0" | "off" => Ok(false),
        _ => Err(SpecError::invalid(place, text, "true or false")),
    }
}
