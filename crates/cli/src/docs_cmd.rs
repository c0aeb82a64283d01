//! `iolab completions SHELL` and `iolab man`: shell completions (clap_complete) and man pages (clap_mangen),
//! generated from the clap definitions in `args/`, so they never drift from the flags.

use crate::exit::{usage, ExitStatus};
use crate::output::write_all;
use anyhow::Result;
use iolab_device::WriteGate;

/// Prints the completion script for `shell`.
pub fn completions(shell: clap_complete::Shell) -> Result<ExitStatus> {
    let mut cmd = crate::args::command();
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut cmd, "iolab", &mut out);
    std::io::Write::write_all(&mut std::io::stdout().lock(), &out)?;
    Ok(ExitStatus::Ok)
}

/// Prints iolab(1), or writes iolab.1 and one page per command at every depth (`iolab-run.1`,
/// `iolab-db-tpcc.1`, `iolab-help.1`, ...: every page another one names) into `dir`, each through the write
/// gate (atomically, never over a device or a file with a signature).
pub fn man(dir: Option<&str>) -> Result<ExitStatus> {
    let mut cmd = crate::args::command();
    let Some(dir) = dir else {
        std::io::Write::write_all(&mut std::io::stdout().lock(), &render(&cmd)?)?;
        return Ok(ExitStatus::Ok);
    };
    // `iolab help X` is `iolab X --help`: no page of its own, and no page names one.
    cmd = without_help_subcommands(cmd);
    cmd.build();
    let mut pages = Vec::new();
    add_pages(&cmd, "iolab", &mut pages)?;
    let mut gate = WriteGate::new();
    let mut outputs = Vec::new();
    for (file, text) in pages {
        let path = std::path::Path::new(dir).join(&file);
        let out = gate.output("--dir", &path.to_string_lossy()).map_err(usage)?;
        outputs.push((out, String::from_utf8(text)?));
    }
    write_all(outputs.iter().map(|(o, t)| (o, Ok(t.clone()))).collect())?;
    Ok(ExitStatus::Ok)
}

/// `cmd` and its subcommands without the `help` subcommand clap adds.
fn without_help_subcommands(cmd: clap::Command) -> clap::Command {
    cmd.disable_help_subcommand(true).mut_subcommands(without_help_subcommands)
}

/// The page of `cmd`, named `page` (`iolab-db-tpcc`), and those of its subcommands at every depth, named as
/// clap_mangen names them in a page's SUBCOMMANDS (`PAGE-SUB(1)`).
fn add_pages(cmd: &clap::Command, page: &str, pages: &mut Vec<(String, Vec<u8>)>) -> Result<()> {
    pages.push((format!("{page}.1"), render(&cmd.clone().display_name(page.to_string()))?));
    for sub in cmd.get_subcommands() {
        add_pages(sub, &format!("{page}-{}", sub.get_name()), pages)?;
    }
    Ok(())
}

fn render(cmd: &clap::Command) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    let source = format!("iolab {}", cmd.get_version().unwrap_or_default());
    clap_mangen::Man::new(cmd.clone()).source(source).render(&mut out)?;
    Ok(out)
}
