//! `iolab verify TARGET`: one sequential read pass over a target written earlier with `--verify`, every
//! block checked against the journal (`--journal FILE`, also after a crash) or for self-consistency. The
//! pass is an ordinary read-only run whose workers check what they read (docs/VERIFY.md).

use crate::args::VerifyArgs;
use crate::exit::{usage, ExitStatus};
use crate::session::{Claims, Session};
use anyhow::Result;
use iolab_run::CheckMode;
use std::path::PathBuf;

/// Runs `iolab verify`: one sequential read pass over the whole target, every block checked.
pub fn verify_cmd(a: &VerifyArgs) -> Result<ExitStatus> {
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
        keys: crate::args::KeyFlags::default()
            .with("rw", "read")
            .with("random_pct", "0")
            .with("qd", a.keys.get("qd").unwrap_or("16"))
            .with("target", a.target.as_str()),
        quiet: a.quiet,
        json: a.json.clone(),
        ..Default::default()
    };
    // The read size: every byte of the target is read once, so it must divide the target's size.
    let job = crate::job::build_job(&run)?;
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
    let bs = match a.keys.get("bs") {
        Some(t) => t.to_string(),
        None => {
            let mut bs = 1u64 << 20;
            while size % bs != 0 {
                bs /= 2;
            }
            bs.to_string()
        }
    };
    run.keys.set("bs", Some(bs));
    run.keys.set("bytes", Some(size.to_string()));
    let mut job = crate::job::build_job(&run)?;
    job.name.get_or_insert_with(|| format!("verify {}", a.target));
    let check = match &a.journal {
        Some(j) => CheckMode::Journal(PathBuf::from(j)),
        None => CheckMode::SelfCheck { block_bytes },
    };
    let _scratch_guard = iolab_device::ScratchGuard;
    let mut session = Session::open(Claims {
        reads: None,
        job_file: None,
        json: a.json.as_deref(),
        csv: None,
        catalog: &a.catalog,
        metrics: None,
        quiet: a.quiet,
        dry_run: false,
    })?;
    let mut opts = session.options(session.shown());
    opts.check = Some(check);
    let result = session.run_with(job, opts)?;
    let json = iolab_report::JsonExporter.render(&*result);
    let written = |outputs: &crate::output::Outputs| crate::output::output(&result, a.quiet, outputs);
    session.conclude((&iolab_report::kinds::run::VERIFY, &json), written, ExitStatus::of(&result))
}
