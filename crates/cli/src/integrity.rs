//! `iolab verify TARGET`: re-reads a target written earlier with `--verify` and checks every block, as a
//! read-only run with a check ([`iolab_run::CheckMode`]; verification itself is `iolab_run::integrity`'s).

use crate::run::usage;
use anyhow::Result;
use iolab_run::CheckMode;
use std::path::PathBuf;

/// `iolab verify` options.
#[derive(clap::Args, Debug, Default, Clone)]
pub struct VerifyArgs {
    /// The target written earlier with --verify: a file, a block device (read only; nothing is written).
    pub target: String,
    /// The journal the writing run kept (--journal): checks each block against its last acknowledged write.
    #[arg(long, value_name = "FILE")]
    pub journal: Option<String>,
    /// Without a journal: the verification block the target was written with. Default 4K.
    #[arg(long, value_name = "SIZE")]
    pub block: Option<String>,
    /// Reads in flight. Default 16.
    #[arg(long, value_name = "N", default_value = "16")]
    pub qd: String,
    /// Read size (a multiple of the verification block). Default: up to 1M, the largest power of two dividing
    /// the target's size.
    #[arg(long, value_name = "SIZE")]
    pub bs: Option<String>,
    /// Write the result as JSON to FILE; '-' for stdout.
    #[arg(long, value_name = "FILE")]
    pub json: Option<String>,
    /// Print nothing but errors.
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// Results catalog options.
    #[command(flatten)]
    pub catalog: crate::catalog_cmd::CatalogFlags,
}

/// Runs `iolab verify`: one sequential read pass over the whole target, every block checked.
pub fn verify_cmd(a: &VerifyArgs) -> Result<crate::run::Outcome> {
    let block_bytes = match &a.block {
        None => iolab_verify::DEFAULT_BLOCK,
        Some(t) => iolab_spec::units::parse_size(t)
            .ok()
            .filter(|b| b.is_power_of_two() && (512..=1 << 20).contains(b))
            .map(|b| b as u32)
            .ok_or_else(|| {
                usage(format!(
                    "invalid value '{t}' for '--block': expected a power of two from 512 to 1M, e.g. '4K'"
                ))
            })?,
    };
    if a.journal.is_some() && a.block.is_some() {
        return Err(usage("--block is for checks without a journal; the journal records the block size"));
    }
    let mut run = crate::args::RunArgs {
        target: vec![a.target.clone()],
        rw: Some("read".into()),
        random_pct: Some("0".into()),
        qd: Some(a.qd.clone()),
        quiet: a.quiet,
        json: a.json.clone(),
        ..Default::default()
    };
    // The read size: every byte of the target is read once, so it must divide the target's size.
    let job = crate::run::build_job(&run)?;
    let spec =
        job.forced.target.as_ref().and_then(|t| t.first().cloned()).ok_or_else(|| usage("no target"))?;
    let probe = iolab_device::probe(&iolab_device::OpenRequest::new(spec)).map_err(usage)?;
    let size = probe.size_bytes;
    if size == 0 || size % block_bytes as u64 != 0 {
        return Err(usage(format!(
            "'{}' is {size} bytes, not a whole number of {block_bytes}-byte verification blocks",
            a.target
        )));
    }
    let bs = match &a.bs {
        Some(t) => t.clone(),
        None => {
            let mut bs = 1u64 << 20;
            while size % bs != 0 {
                bs /= 2;
            }
            bs.to_string()
        }
    };
    run.bs = Some(bs);
    run.bytes = Some(size.to_string());
    let mut job = crate::run::build_job(&run)?;
    job.name.get_or_insert_with(|| format!("verify {}", a.target));
    let check = match &a.journal {
        Some(j) => CheckMode::Journal(PathBuf::from(j)),
        None => CheckMode::SelfCheck { block_bytes },
    };
    let _scratch_guard = iolab_device::ScratchGuard;
    let saver = crate::catalog_cmd::Saver::open(&a.catalog, a.quiet, false)?;
    let live = !a.quiet && std::io::IsTerminal::is_terminal(&std::io::stderr());
    let mut opts = crate::run::exec_options(1_000_000_000, a.quiet, live);
    opts.check = Some(check);
    let result = match iolab_run::execute(job, false, &mut opts).map_err(crate::run::run_error)? {
        iolab_run::Executed::Done(r) => r,
        iolab_run::Executed::DryRun(_) => unreachable!("not a dry run"),
    };
    let saved = crate::catalog_cmd::save(
        saver.as_ref(),
        iolab_catalog::EntryKind::Run,
        &iolab_report::to_json(&result),
    );
    crate::run::output(&result, a.quiet, a.json.as_deref(), None)?;
    saved?;
    Ok(crate::run::outcome_of(&result))
}
