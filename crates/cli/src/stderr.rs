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

/// Makes panic messages go through [`line`] too: a panic can quote a name from a job file or a trace (an
/// assertion's message, an `expect`), and the standard hook prints it raw. Same words as the standard hook.
pub fn escape_panic_messages() {
    std::panic::set_hook(Box::new(|info| {
        let payload = info.payload();
        let message = payload
            .downcast_ref::<&str>()
            .copied()
            .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
            .unwrap_or("Box<dyn Any>");
        let thread = std::thread::current();
        let at = info.location().map(ToString::to_string);
        line(format_args!("{}", panic_text(thread.name(), at.as_deref(), message)));
        let backtrace = std::env::var_os("RUST_BACKTRACE").is_some_and(|v| v != "0");
        if backtrace {
            line(format_args!("{}", std::backtrace::Backtrace::force_capture()));
        } else {
            line(format_args!(
                "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace"
            ));
        }
    }));
}

/// The standard hook's first lines: `thread 'NAME' panicked at FILE:LINE:COL:` and the message.
fn panic_text(thread: Option<&str>, at: Option<&str>, message: &str) -> String {
    let at = at.map(|l| format!(" at {l}")).unwrap_or_default();
    format!("thread '{}' panicked{at}:\n{message}", thread.unwrap_or("<unnamed>"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_panic_message_is_escaped_as_every_line() {
        let text = super::panic_text(Some("main"), Some("src/x.rs:1:2"), "no target '\x1b[2J'");
        assert_eq!(super::clean(&text), "thread 'main' panicked at src/x.rs:1:2:\nno target '\\x1b[2J'");
    }

    #[test]
    fn the_crates_eprintln_is_the_escaping_one() {
        // The macro in main.rs: it formats as the standard one does and escapes what it formatted.
        let name = "\x1b]0;pwned\x07";
        assert_eq!(super::clean(&format!("creating '{name}'")), "creating '\\x1b]0;pwned\\x07'");
        eprintln!("a line from a test, escaped: {name}");
        eprintln!();
    }
}
