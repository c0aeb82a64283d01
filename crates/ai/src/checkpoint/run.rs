//! The checkpoints written, then read, as DLIO's checkpoint-only workflow runs them (main.py
//! `_checkpoint_write`, `_checkpoint_read`): before each checkpoint the ranks compute
//! (`time_between_checkpoints`, not timed) and meet at a barrier; each rank's time runs from the barrier to
//! the end of its own files (to the end of every rank's with `rank_sync`). Checkpoint `k` is the directory
//! `global_epoch1_step{k}`; the reads read checkpoints 1 to `num_checkpoints_read`. A rank is a thread.
//!
//! Between the two phases, not timed, every file to be read is synced and dropped from the page cache
//! (`POSIX_FADV_DONTNEED`), and what stays cached is counted (`mincore`); with `checkpoint.odirect` the
//! reads bypass the cache instead. After each checkpoint written with fsync its files are dropped too (they
//! are clean: the page cache does not fill up over the checkpoints); without fsync they are left as DLIO
//! leaves them (dropping dirty pages would start their write-back early).

use super::io::{self, Buffer};
use super::shards::{Parallelism, ShardFile};
use super::CheckpointConfig;
use crate::AiError;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Barrier;
use std::time::{Duration, Instant};

/// Every rank's files of one checkpoint.
#[derive(Clone, Debug)]
pub struct ShardPlan {
    /// The parallelism the shards follow.
    pub parallelism: Parallelism,
    /// `ranks[r]`: rank r's files, in the order it writes them.
    pub ranks: Vec<Vec<ShardFile>>,
}

impl ShardPlan {
    /// The plan of `c`.
    pub fn of(c: &CheckpointConfig) -> ShardPlan {
        let p = c.parallelism();
        ShardPlan { parallelism: p, ranks: (0..c.ranks).map(|r| c.model.rank_files(&p, r)).collect() }
    }

    /// Bytes of one checkpoint, all ranks.
    pub fn bytes(&self) -> u64 {
        self.ranks.iter().flatten().map(|f| f.bytes).sum()
    }
}

/// The times of one phase.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PhaseTimes {
    /// `checkpoints[k][r]`: rank r's nanoseconds in checkpoint k (0 for a rank without files).
    pub checkpoints: Vec<Vec<u64>>,
    /// From the first checkpoint's start to the last one's end, ns.
    pub elapsed_ns: u64,
}

/// The directory of checkpoint `k` (from 1), as DLIO names it.
pub fn checkpoint_dir(dir: &Path, k: u64) -> PathBuf {
    dir.join(format!("global_epoch1_step{k}"))
}

/// What a phase does to one file.
#[derive(Clone, Copy)]
enum Op {
    Write { fsync: bool },
    Read { odirect: bool },
}

/// Writes `c.writes` checkpoints into `dir`; a raised `stop` ends the phase after the checkpoint under way.
pub fn write(
    c: &CheckpointConfig,
    plan: &ShardPlan,
    dir: &Path,
    bufs: &mut [Buffer],
    stop: &AtomicBool,
) -> Result<PhaseTimes, AiError> {
    phase(c, plan, dir, bufs, stop, c.writes, Op::Write { fsync: c.fsync })
}

/// Reads checkpoints 1 to `c.reads` back.
pub fn read(
    c: &CheckpointConfig,
    plan: &ShardPlan,
    dir: &Path,
    bufs: &mut [Buffer],
    stop: &AtomicBool,
) -> Result<PhaseTimes, AiError> {
    phase(c, plan, dir, bufs, stop, c.reads, Op::Read { odirect: c.odirect })
}

fn phase(
    c: &CheckpointConfig,
    plan: &ShardPlan,
    dir: &Path,
    bufs: &mut [Buffer],
    stop: &AtomicBool,
    count: u64,
    op: Op,
) -> Result<PhaseTimes, AiError> {
    let start = Instant::now();
    let mut out = PhaseTimes::default();
    for k in 1..=count {
        if !wait(c.between_s, stop) {
            break;
        }
        let at = checkpoint_dir(dir, k);
        if let Op::Write { .. } = op {
            std::fs::create_dir(&at).map_err(|e| AiError::io(format!("making '{}'", at.display()), e))?;
        }
        out.checkpoints.push(one(plan, &at, k, bufs, op, c.rank_sync)?);
        if let Op::Write { fsync: true } = op {
            drop_all(plan, &at, false)?;
        }
    }
    out.elapsed_ns = start.elapsed().as_nanos() as u64;
    Ok(out)
}

/// Waits `secs` (DLIO's computation between checkpoints) in slices, so a stop is heard within 50 ms;
/// false when stopped.
fn wait(secs: f64, stop: &AtomicBool) -> bool {
    let end = Instant::now() + Duration::from_secs_f64(secs);
    while !stop.load(Ordering::Relaxed) {
        let left = end.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return true;
        }
        std::thread::sleep(left.min(Duration::from_millis(50)));
    }
    false
}

/// One checkpoint: every rank's files, each rank timed from the common barrier.
fn one(
    plan: &ShardPlan,
    at: &Path,
    k: u64,
    bufs: &mut [Buffer],
    op: Op,
    rank_sync: bool,
) -> Result<Vec<u64>, AiError> {
    let barrier = Barrier::new(plan.ranks.len());
    let times: Vec<Result<u64, AiError>> = std::thread::scope(|s| {
        let handles: Vec<_> = plan
            .ranks
            .iter()
            .zip(bufs.iter_mut())
            .enumerate()
            .map(|(r, (files, buf))| {
                let barrier = &barrier;
                std::thread::Builder::new()
                    .name(format!("iolab-ckpt-rank-{r}"))
                    .spawn_scoped(s, move || {
                        barrier.wait();
                        let t0 = Instant::now();
                        let done = rank_files(files, at, (k << 40) ^ ((r as u64) << 20), buf, op);
                        if rank_sync {
                            barrier.wait();
                        }
                        done.map(|()| t0.elapsed().as_nanos() as u64)
                    })
                    .expect("spawning a rank's thread")
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))).collect()
    });
    times.into_iter().collect()
}

/// One rank's files of one checkpoint.
fn rank_files(files: &[ShardFile], at: &Path, tag: u64, buf: &mut Buffer, op: Op) -> Result<(), AiError> {
    for (i, f) in files.iter().enumerate() {
        let path = at.join(&f.name);
        let done = match op {
            Op::Write { fsync } => io::write_shard(&path, f.bytes, tag ^ i as u64, fsync, buf),
            Op::Read { odirect } => io::read_shard(&path, odirect, buf),
        };
        let what = if let Op::Write { .. } = op { "writing" } else { "reading" };
        let n = done.map_err(|e| AiError::io(format!("{what} '{}'", path.display()), e))?;
        assert_eq!(n, f.bytes, "{what} '{}': every byte of the shard", path.display());
    }
    Ok(())
}

/// Syncs and drops every file of the checkpoints 1 to `count` from the page cache; returns the bytes
/// still cached after (`mincore`).
pub fn drop_checkpoints(plan: &ShardPlan, dir: &Path, count: u64) -> Result<u64, AiError> {
    let mut left = 0;
    for k in 1..=count {
        left += drop_all(plan, &checkpoint_dir(dir, k), true)?;
    }
    Ok(left)
}

/// Drops the files of one checkpoint from the page cache (synced first when `sync`).
fn drop_all(plan: &ShardPlan, at: &Path, sync: bool) -> Result<u64, AiError> {
    let mut left = 0;
    for f in plan.ranks.iter().flatten() {
        let path = at.join(&f.name);
        let err = |e| AiError::io(format!("dropping '{}' from the page cache", path.display()), e);
        left += if sync {
            io::drop_from_cache(&path).map_err(err)?
        } else {
            let file = std::fs::File::open(&path).map_err(err)?;
            crate::dataset::drop_cached(&file);
            0
        };
    }
    Ok(left)
}
