//! Where results go: the text summary on stdout, and the `--json`/`--csv`/`-o` outputs, each claimed in the
//! command's [`WriteGate`] before anything runs and written atomically after (`iolab_device::gate`).

use crate::exit::{outputs_not_written, usage};
use anyhow::Result;
use iolab_device::{GateError, Output, WriteGate};
use iolab_report::RunResult;
use iolab_report::{CsvExporter, JsonExporter, TextExporter};
use std::io::Write;

/// Prints `text` on stdout, where control characters (but newlines and tabs) are shown as escapes
/// ([`iolab_report::escape_control`]): a note, tag or name must not drive the reader's terminal. JSON is
/// unchanged by this (serde escapes control characters in strings).
pub fn print(text: &str) -> std::io::Result<()> {
    // Over several hosts, rank 0 prints for all.
    if crate::ranks::follower() {
        return Ok(());
    }
    let text = iolab_report::escape_control(text);
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    if !text.ends_with('\n') {
        out.write_all(b"\n")?;
    }
    out.flush()
}

/// Claims the output `path` of `flag` in `gate`; a path that is refused is the user's error (exit code 2).
pub fn claim(gate: &mut WriteGate, flag: &str, path: Option<&str>) -> Result<Option<Output>> {
    path.map(|p| gate.output(flag, p)).transpose().map_err(usage)
}

/// Claims the command's job file (TOML, fio or Iometer) as an input: an output or a target on it is then a
/// collision, refused before anything is written, as for every other input.
pub fn claim_job_file(gate: &mut WriteGate, job: Option<&str>) -> Result<()> {
    job.map(|p| gate.claim("the job file", p, iolab_device::Access::Reads)).transpose().map_err(usage)?;
    Ok(())
}

/// The `--json` and `--csv` outputs of a command.
pub struct Outputs {
    /// `--json`.
    pub json: Option<Output>,
    /// `--csv`.
    pub csv: Option<Output>,
}

impl Outputs {
    /// Claims `--json` and `--csv` in `gate`: refused paths and collisions are exit-2 errors before the run.
    pub fn claim(gate: &mut WriteGate, json: Option<&str>, csv: Option<&str>) -> Result<Outputs> {
        Ok(Outputs { json: claim(gate, "--json", json)?, csv: claim(gate, "--csv", csv)? })
    }

    /// True when one of them is standard output, which then carries no text summary.
    pub fn on_stdout(&self) -> bool {
        [&self.json, &self.csv].into_iter().flatten().any(Output::is_stdout)
    }

    /// Writes each output there is, rendered on demand; see [`write_all`].
    pub fn write(&self, json: impl FnOnce() -> String, csv: impl FnOnce() -> Result<String>) -> Result<()> {
        let mut written = Vec::new();
        if let Some(out) = &self.json {
            written.push((out, Ok(json())));
        }
        if let Some(out) = &self.csv {
            written.push((out, csv()));
        }
        write_all(written)
    }
}

/// Writes each `(output, text)`; one that fails does not stop the others. Each output not written is said
/// on stderr, and the error ends the command with exit code 3 ([`crate::exit::OUTPUTS_NOT_WRITTEN`]); a
/// closed stdout ends it quietly (0, as for `iolab run | head`).
pub fn write_all(outputs: Vec<(&Output, Result<String>)>) -> Result<()> {
    let mut failed = 0;
    for (out, text) in outputs {
        let result = text.and_then(|t| write_one(out, &t).map_err(anyhow::Error::new));
        match result {
            Ok(()) => {}
            Err(e) if closed_stdout(&e) => return Err(e),
            Err(e) => {
                eprintln!("iolab: {e}");
                failed += 1;
            }
        }
    }
    if failed > 0 {
        return Err(outputs_not_written(failed));
    }
    Ok(())
}

/// Writes `text` to one output: shown for a terminal on stdout ([`print`]), as it is elsewhere.
pub fn write_one(out: &Output, text: &str) -> Result<(), GateError> {
    if out.is_stdout() {
        let escaped = iolab_report::escape_control(text);
        let mut bytes = escaped.into_owned().into_bytes();
        if !bytes.ends_with(b"\n") {
            bytes.push(b'\n');
        }
        return out.write(&bytes);
    }
    out.write(text.as_bytes())
}

fn closed_stdout(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// Prints the text summary (unless quiet or stdout carries JSON/CSV) and writes `--json` / `--csv`.
pub fn output(result: &RunResult, quiet: bool, outputs: &Outputs) -> Result<()> {
    if !quiet && !outputs.on_stdout() {
        print(&TextExporter.render(result))?;
    }
    outputs.write(|| JsonExporter.render(result), || CsvExporter.render(result).map_err(anyhow::Error::new))
}
