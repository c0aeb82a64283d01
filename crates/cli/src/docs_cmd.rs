//! `iolab completions SHELL` and `iolab man`: shell completions (clap_complete) and man pages (clap_mangen),
//! generated from the clap definitions in `args/`, so they never drift from the flags.

use crate::args::Cli;
use crate::exit::{usage, ExitStatus};
use crate::output::write_all;
use anyhow::Result;
use clap::CommandFactory;
use iolab_device::WriteGate;

/// Prints the completion script for `shell`.
pub fn completions(shell: clap_complete::Shell) -> Result<ExitStatus> {
    let mut cmd = Cli::command();
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut cmd, "iolab", &mut out);
    std::io::Write::write_all(&mut std::io::stdout().lock(), &out)?;
    Ok(ExitStatus::Ok)
}

/// Prints iolab(1), or writes iolab.1 and one page per command (`iolab-run.1`, ...) into `dir`, each through
/// the write gate (atomically, never over a device or a file with a signature).
pub fn man(dir: Option<&str>) -> Result<ExitStatus> {
    let cmd = Cli::command();
    let Some(dir) = dir else {
        std::io::Write::write_all(&mut std::io::stdout().lock(), &render(&cmd)?)?;
        return Ok(ExitStatus::Ok);
    };
    let mut pages = vec![("iolab.1".to_string(), render(&cmd)?)];
    for sub in cmd.get_subcommands() {
        let name = format!("iolab-{}", sub.get_name());
        let page = sub.clone().name(name.clone());
        pages.push((format!("{name}.1"), render(&page)?));
    }
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

fn render(cmd: &clap::Command) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    clap_mangen::Man::new(cmd.clone()).render(&mut out)?;
    Ok(out)
}
