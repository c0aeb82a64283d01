//! `iolab import fio FILE` and `iolab import iometer FILE`: a fio job file or an Iometer configuration as the
//! iolab job file that runs the same I/O. The translations are `iolab-import`'s; here are the file read, what
//! was ignored said on stderr, and the output written through the write gate.

use crate::args::{ImportArgs, ImportWhat};
use crate::exit::{usage, ExitStatus};
use crate::output::write_all;
use anyhow::Result;
use iolab_device::{Access, WriteGate};

/// Runs `iolab import`.
pub fn import(args: &ImportArgs) -> Result<ExitStatus> {
    let (file, output, quiet, sections) = match &args.what {
        ImportWhat::Fio { file, output, quiet, sections } => (file, output, *quiet, Some(&sections.section)),
        ImportWhat::Iometer { file, output, quiet } => (file, output, *quiet, None),
        ImportWhat::FioResult { file, quiet, catalog } => return fio_result(file, *quiet, catalog),
    };
    let mut gate = WriteGate::new();
    gate.claim("the file to import", file, Access::Reads).map_err(usage)?;
    let out = gate.output("-o", output.as_deref().unwrap_or("-")).map_err(usage)?;
    let text = iolab_spec::input::read_text(
        file.as_ref(),
        "the file to import",
        iolab_spec::input::MAX_JOB_FILE_BYTES,
    )
    .map_err(usage)?;
    let toml = match sections {
        Some(sections) => crate::job::translate_fio(&text, file, quiet, sections)?,
        None => crate::job::translate_icf(&text, file, quiet)?,
    };
    write_all(vec![(&out, Ok(toml))])?;
    Ok(ExitStatus::Ok)
}

/// `iolab import fio-result FILE.json`: each fio reporting group saved as a run measured by fio, tagged
/// `measured_by=fio` (unless the user gave that key), its text printed unless quiet.
fn fio_result(file: &str, quiet: bool, flags: &crate::args::CatalogFlags) -> Result<ExitStatus> {
    if flags.no_save {
        return Err(usage("'iolab import fio-result' saves in the catalog; --no-save leaves nothing to do"));
    }
    let text =
        iolab_spec::input::read_text(file.as_ref(), "the fio result", iolab_spec::input::MAX_DOCUMENT_BYTES)
            .map_err(usage)?;
    let results = iolab_import::to_results(&text, file).map_err(usage)?;
    let mut flags = flags.clone();
    if !crate::saving::parse_tags(&flags.tag)?.iter().any(|(k, _)| k == "measured_by") {
        flags.tag.push("measured_by=fio".into());
    }
    let saver = crate::saving::Saver::open(&flags, quiet, false, &mut WriteGate::new())?
        .expect("a catalog to save in: --no-save was refused above");
    for r in &results {
        saver.save(crate::saving::entry(r)?, &iolab_report::JsonExporter.render(r))?;
        if !quiet {
            crate::output::print(&iolab_report::TextExporter.render(r))?;
        }
    }
    Ok(ExitStatus::Ok)
}
