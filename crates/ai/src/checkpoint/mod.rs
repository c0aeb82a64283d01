//! Checkpoint storage (`iolab ai checkpoint`, docs/AI.md): DLIO's checkpoint workloads (MLPerf Storage's
//! llama3 8B, 70B, 405B and 1T). A workload ([`config`]: a DLIO YAML file or a built-in, [`builtin`]) gives a
//! transformer and its tensor, pipeline and ZeRO data parallelism; [`shards`] is DLIO's arithmetic of each
//! rank's files; [`mod@run`] writes `num_checkpoints_write` checkpoints with a thread a rank, keeps them out of
//! the page cache, and reads `num_checkpoints_read` back ([`io`]: the bytes); [`document`] assembles the
//! `iolab.aicheckpoint/1` document: time per checkpoint and throughput per rank, the run's figure the
//! slowest rank's.
//!
//! As [`crate::run`]: a library call that prints nothing, makes the data directory the caller claimed and
//! removes it on every path, and refuses (before anything is made, [`check_space`]) a run whose checkpoints
//! do not fit.

pub mod builtin;
pub mod config;
pub mod document;
pub mod io;
pub mod run;
pub mod shards;

pub use config::{load, CheckpointConfig, LoadedCheckpoint};

use crate::{AiError, Notices};
use iolab_device::{format_bytes, HeldDir};
use iolab_report::kinds::ai_checkpoint::AiCheckpointResult;
use std::path::Path;
use std::sync::atomic::AtomicBool;

/// Writes and reads the checkpoints of `loaded` in `held` (made now, removed before returning) and returns
/// the document. `stop` ends the run after the checkpoint under way (a partial document), or before the
/// first one ([`AiError::Interrupted`]).
pub fn run(
    loaded: &LoadedCheckpoint,
    held: HeldDir,
    seed: u64,
    stop: &AtomicBool,
    notices: &dyn Notices,
) -> Result<AiCheckpointResult, AiError> {
    loaded.config.check().map_err(|e| AiError::Config(e.0))?;
    let dir = crate::dir::DataDir::make(held)?;
    let path = dir.path().to_path_buf();
    let result = document::write_and_read(loaded, &path, seed, stop, notices);
    let removed = dir.remove();
    let doc = result?;
    removed.map_err(|e| AiError::io("removing the data directory".into(), e))?;
    Ok(doc)
}

/// Room left beside the checkpoints: a twentieth, and at least 16 MiB (directories, the file system's own).
fn margin(bytes: u64) -> u64 {
    (bytes / 20).max(16 << 20)
}

/// Refuses a run whose checkpoints (`num_checkpoints_write` of them, all kept, as DLIO keeps them) need
/// more than the free space of the file system `dir` will be on, with the sizes and what makes them
/// smaller. Nothing known (a statvfs that fails) passes.
pub fn check_space(c: &CheckpointConfig, dir: &str) -> Result<(), AiError> {
    let per = run::ShardPlan::of(c).bytes();
    let need = per.saturating_mul(c.writes);
    let Some(free) = free_bytes(Path::new(dir)) else { return Ok(()) };
    if need.saturating_add(margin(need)) <= free {
        return Ok(());
    }
    Err(AiError::Config(format!(
        "--data-dir '{dir}': {} checkpoint(s) of {} ({} ranks) need {} and a margin of {}, and its file system has {} free; write fewer (--param checkpoint.num_checkpoints_write=1 --param checkpoint.num_checkpoints_read=1), run part of the job (--param checkpoint.mode=subset --param model.parallelism.data=N --num-accelerators M), a smaller model (--param model.num_layers=N), or give a --data-dir with room",
        c.writes,
        format_bytes(per),
        c.ranks,
        format_bytes(need),
        format_bytes(margin(need)),
        format_bytes(free)
    )))
}

/// Free bytes for an unprivileged writer (statvfs `f_bavail`) of the file system `dir` is or will be on.
fn free_bytes(dir: &Path) -> Option<u64> {
    let abs = std::path::absolute(dir).ok()?;
    let at = abs.ancestors().find(|a| a.exists())?;
    let c = std::ffi::CString::new(at.as_os_str().as_encoded_bytes()).ok()?;
    // SAFETY: statvfs writes one `statvfs` into the zeroed value we pass and reads the NUL-terminated path,
    // both alive across the call.
    let st = unsafe {
        let mut st: libc::statvfs = std::mem::zeroed();
        (libc::statvfs(c.as_ptr(), &mut st) == 0).then_some(st)?
    };
    Some(st.f_bavail as u64 * st.f_frsize as u64)
}

/// Said before the run: the checkpoint's size and what will be done.
fn say_plan(c: &CheckpointConfig, plan: &run::ShardPlan, dir: &Path, notices: &dyn Notices) {
    let p = plan.parallelism;
    notices.notice(&format!(
        "checkpoint of {} in {}: {} ranks (TP {} x PP {} x DP {}, ZeRO {}), {} written{}, {} read",
        format_bytes(plan.bytes()),
        dir.display(),
        c.ranks,
        p.tensor,
        p.pipeline,
        p.data,
        p.zero_stage,
        c.writes,
        if c.fsync { " with fsync" } else { "" },
        c.reads
    ));
}
