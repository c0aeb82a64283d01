//! `iolab import fio FILE`: a fio job file as the iolab job file that runs the same I/O. The translation is
//! `iolab-import`'s; here are the file read, the ignored options said on stderr, and the output written
//! through the write gate.

use crate::args::{ImportArgs, ImportWhat};
use crate::exit::{usage, ExitStatus};
use crate::output::write_all;
use anyhow::Result;
use iolab_device::{Access, WriteGate};

/// Runs `iolab import`.
pub fn import(args: &ImportArgs) -> Result<ExitStatus> {
    match &args.what {
        ImportWhat::Fio { file, output, quiet } => {
            let mut gate = WriteGate::new();
            gate.claim("the fio job file", file, Access::Reads).map_err(usage)?;
            let out = gate.output("-o", output.as_deref().unwrap_or("-")).map_err(usage)?;
            let text = crate::job::read_text(file)?;
            let toml = crate::job::translate_fio(&text, file, *quiet)?;
            write_all(vec![(&out, Ok(toml))])?;
            Ok(ExitStatus::Ok)
        }
    }
}
