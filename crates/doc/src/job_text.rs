//! What the job files iolab writes need of TOML (the fio and Iometer importers, `iolab profiles derive`):
//! they are written as text, with a comment beside each key, which a TOML serialiser would not keep.

/// `s` as a TOML basic string: quotes and backslashes escaped, control characters as `\uXXXX`.
pub fn quote(s: &str) -> String {
    let mut q = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => q.push_str("\\\""),
            '\\' => q.push_str("\\\\"),
            c if (c as u32) < 0x20 => q.push_str(&format!("\\u{:04x}", c as u32)),
            c => q.push(c),
        }
    }
    q.push('"');
    q
}

#[cfg(test)]
mod tests {
    #[test]
    fn quotes_backslashes_and_controls_are_escaped() {
        assert_eq!(super::quote("a\"b\\c\n"), "\"a\\\"b\\\\c\\u000a\"");
    }
}
