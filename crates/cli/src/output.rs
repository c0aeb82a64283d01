//! Where results go: stdout or a file (`--json -`, `--json FILE`), and a run's text summary, JSON and CSV.

use anyhow::{Context, Result};
use iolab_report::RunResult;
use iolab_report::{CsvExporter, Document, JsonExporter, TextExporter};
use std::io::Write;

/// Writes `text` to `path`, or to stdout for `-`, where control characters (but newlines and tabs) are shown
/// as escapes ([`iolab_report::escape_control`]): a note, tag or name must not drive the reader's terminal.
/// JSON is unchanged by this (serde escapes control characters in strings).
pub fn write_out(path: &str, text: &str) -> std::io::Result<()> {
    if path == "-" {
        let text = iolab_report::escape_control(text);
        let mut out = std::io::stdout().lock();
        out.write_all(text.as_bytes())?;
        if !text.ends_with('\n') {
            out.write_all(b"\n")?;
        }
        out.flush()
    } else {
        std::fs::write(path, text)
    }
}

/// Prints the text summary (unless quiet or stdout carries JSON/CSV) and writes `--json` / `--csv`.
pub fn output(result: &RunResult, quiet: bool, json: Option<&str>, csv: Option<&str>) -> Result<()> {
    if !quiet && json != Some("-") && csv != Some("-") {
        write_out("-", &TextExporter.render(&Document::Run(result)))?;
    }
    if let Some(path) = json {
        write_out(path, &JsonExporter.render(&Document::Run(result)))
            .with_context(|| format!("writing --json '{path}'"))?;
    }
    if let Some(path) = csv {
        write_out(path, &CsvExporter.render(&Document::Run(result))?)
            .with_context(|| format!("writing --csv '{path}'"))?;
    }
    Ok(())
}
