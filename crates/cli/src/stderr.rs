//! Every message for a person on stderr (notices, warnings, errors, progress lines and bars) goes through
//! here, escaped as the text on stdout is ([`iolab_report::escape_control`], the one sanitizer of both
//! streams): a name from a job file or a trace (a target, a key's value, a path) never drives the reader's
//! terminal with a control sequence. This crate's `eprintln!` and `eprint!` are this module's [`line`] and
//! [`text`] (the macros in `main.rs` shadow the standard ones), so no message of the binary bypasses it;
//! progress bars take their text through [`clean`].

use std::borrow::Cow;
use std::fmt;
use std::io::Write;

/// `text` with every control character but newline and tab shown as an escape (`\x1b`).
pub fn clean(text: &str) -> Cow<'_, str> {
    iolab_report::escape_control(text)
}

/// Writes `args`, escaped, and a newline to stderr (what this crate's `eprintln!` does).
pub fn line(args: fmt::Arguments<'_>) {
    let text = args.to_string();
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{}", clean(&text));
}

/// Writes `args`, escaped, to stderr without a newline (what this crate's `eprint!` does).
pub fn text(args: fmt::Arguments<'_>) {
    let text = args.to_string();
    let mut err = std::io::stderr().lock();
    let _ = write!(err, "{}", clean(&text));
    let _ = err.flush();
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_crates_eprintln_is_the_escaping_one() {
        // The macro in main.rs: it formats as the standard one does and escapes what it formatted.
        let name = "\x1b]0;pwned\x07";
        assert_eq!(super::clean(&format!("creating '{name}'")), "creating '\\x1b]0;pwned\\x07'");
        eprintln!("a line from a test, escaped: {name}");
        eprintln!();
    }
}
