//! `iolab import fio FILE` and `iolab import iometer FILE`: a fio job file or an Iometer configuration as the
//! iolab job file that runs the same I/O. The translations are `iolab-import`'s; here are the file read, what
//! was ignored said on stderr, and the output written through the write gate.

use crate::args::{ImportArgs, ImportWhat};
use crate::exit::{usage, ExitStatus};
use crate::output::write_all;
use anyhow::Result;
use iolab_device::{Access, WriteGate};

/// A translation: the file's text and name, and `quiet`, to an iolab job file's text.
type Translate = fn(&str, &str, bool) -> Result<String>;

/// Runs `iolab import`.
pub fn import(args: &ImportArgs) -> Result<ExitStatus> {
    let (file, output, quiet, translate): (_, _, _, Translate) = match &args.what {
        ImportWhat::Fio { file, output, quiet } => (file, output, *quiet, crate::job::translate_fio),
        ImportWhat::Iometer { file, output, quiet } => (file, output, *quiet, crate::job::translate_icf),
    };
    let mut gate = WriteGate::new();
    gate.claim("the file to import", file, Access::Reads).map_err(usage)?;
    let out = gate.output("-o", output.as_deref().unwrap_or("-")).map_err(usage)?;
    let text = crate::job::read_text(file)?;
    let toml = translate(&text, file, quiet)?;
    write_all(vec![(&out, Ok(toml))])?;
    Ok(ExitStatus::Ok)
}
