//! Data verification and fault injection for a run (`--verify`, `--journal`, `--inject`), and the checks of
//! `iolab verify TARGET` ([`CheckMode`]), which re-reads a target written earlier with `--verify`.
//!
//! The run's [`Verifier`] and [`Faults`] are built once, after the targets are opened and before the workers
//! start; each worker gets its share ([`RunIntegrity::worker`]): the verifier's id of each of its targets (the
//! run's target index) and its regions (what its read-back pass reads and where a misdirected write lands).

use crate::target::RunTarget;
use crate::{Error, Result};
use iolab_engine::fault::{Faults, WorkerFaults};
use iolab_engine::verify::{WorkerDurable, WorkerVerify};
use iolab_plan::{Plan, Region, TargetGeometry, WorkerPlan};
use iolab_spec::{JobSpec, VerifyFail};
use iolab_stats::Warning;
use iolab_verify::{FailMode, InjectResult, TargetInfo, Verifier, VerifyConfig, VerifyResult};
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// How `iolab verify` checks a target written earlier.
#[derive(Clone, Debug)]
pub enum CheckMode {
    /// Against the acknowledged generations kept in a journal.
    Journal(PathBuf),
    /// Each block for self-consistency (checksum, offset, one generation in all its sectors).
    SelfCheck {
        /// The verification block the target was written with.
        block_bytes: u32,
    },
}

/// The run's verifier and faults.
#[derive(Default)]
pub struct RunIntegrity {
    /// The verifier, with `--verify`, `--journal` or in `iolab verify`.
    pub verifier: Option<Arc<Verifier>>,
    /// The faults, with `--inject`.
    pub faults: Option<Arc<Faults>>,
    /// Read back what each worker wrote after the run (not in `iolab verify`, which only reads).
    readback: bool,
    /// Stop at the first I/O error.
    pub stop_on_error: bool,
    /// The smallest write each target (by run id) accepts: where a torn write may be cut.
    write_units: Vec<u32>,
    /// The journal's periodic checkpoints while the run goes on.
    checkpoints: std::sync::Mutex<Option<iolab_verify::JournalCheckpoints>>,
    /// The durable-write log's commits while the run goes on.
    commits: std::sync::Mutex<Option<iolab_verify::durable::DurableCommits>>,
}

/// How often the journal is brought up to date during a run (each time: the targets are made durable, then the
/// whole journal is rewritten): what a crash can leave unjudged is at most this much of the run's writes.
const JOURNAL_PERIOD: std::time::Duration = std::time::Duration::from_secs(5);

/// Checks `--verify` and `--journal` before anything is created: the workload writes, its block sizes can
/// carry headers, the journal's directory exists. Returns the verification block when the run verifies.
pub fn check_job(
    job: &JobSpec,
    plan: &Plan,
    regions: &[Vec<Region>],
    check: Option<&CheckMode>,
) -> Result<Option<u32>> {
    let spec = &job.integrity;
    if check.is_some() || !spec.verifying() {
        return Ok(None);
    }
    if !plan.targets.iter().any(|t| t.writes) {
        return Err(Error::usage(
            "--verify checks what this run writes, but the workload only reads; to check a target written \
             earlier, use 'iolab verify TARGET' (with --journal FILE if the run kept one)",
        ));
    }
    refuse_trims(plan)?;
    refuse_dedupe(plan)?;
    let (sizes, align) = iolab_plan::sizing::verify_block_sizes(plan, regions);
    let block = Verifier::choose_block(&sizes, align).map_err(|e| Error::usage(format!("--verify: {e}")))?;
    for (i, t) in plan.targets.iter().enumerate() {
        if let Some(other) = plan.targets[..i].iter().find(|o| o.spec == t.spec && !t.spec.is_virtual()) {
            return Err(Error::usage(format!(
                "--verify: target '{}' is given twice; one target per file, or a block written through one \
                 would look misdirected through the other",
                other.name
            )));
        }
    }
    if let Some(j) = &spec.journal {
        if let Some(t) = plan.targets.iter().find(|t| t.spec.is_virtual()) {
            return Err(Error::usage(format!(
                "--journal '{j}': target '{}' lives in this process and is gone after it ends; a journal is for \
                 files and devices that outlive a crash",
                t.name
            )));
        }
        let path = std::path::Path::new(j);
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(std::path::Path::new("."));
        if !dir.is_dir() {
            return Err(Error::usage(format!(
                "invalid value '{j}' for '--journal': the directory '{}' does not exist",
                dir.display()
            )));
        }
        if path.is_dir() {
            return Err(Error::usage(format!(
                "invalid value '{j}' for '--journal': it is a directory; give a file"
            )));
        }
    }
    Ok(Some(block))
}

/// The workload makes writes durable (synchronous writes or flushes): with a journal, the run keeps a
/// durable-write log.
fn makes_writes_durable(plan: &Plan) -> bool {
    plan.workers.iter().any(|w| w.durability.flush_every > 0 || w.durability.write_sync.is_durable())
}

/// The run has a write-back block cache.
fn write_back_cache(job: &JobSpec) -> bool {
    job.cache.enabled() && job.cache.mode == Some(iolab_spec::CacheMode::WriteBack)
}

/// The run's verifier: from a journal or a self-check (`check`), or one for `--verify`, keeping its journal
/// in `journal_dir` (held from the write gate's claim); `None` otherwise.
fn verifier(
    job: &JobSpec,
    plan: &Plan,
    regions: &[Vec<Region>],
    (check, journal_dir): (Option<&CheckMode>, Option<&std::fs::File>),
    targets: &[TargetInfo],
    run_id: u64,
) -> Result<Option<Verifier>> {
    let spec = &job.integrity;
    let fail = match spec.verify_fail.unwrap_or_default() {
        VerifyFail::Stop => FailMode::Stop,
        VerifyFail::Continue => FailMode::Continue,
    };
    Ok(match check {
        Some(CheckMode::Journal(path)) => Some(
            Verifier::from_journal(path, targets.to_vec())
                .map_err(|e| Error::usage(format!("--journal '{}': {e}", path.display())))?,
        ),
        Some(CheckMode::SelfCheck { block_bytes }) => {
            Some(Verifier::self_check(*block_bytes, targets.to_vec()))
        }
        None if spec.verifying() => {
            let block_bytes = check_job(job, plan, regions, None)?.unwrap_or(iolab_verify::DEFAULT_BLOCK);
            let cfg = VerifyConfig {
                block_bytes,
                run_id,
                targets: targets.to_vec(),
                fail,
                journal: journal_place(spec.journal.as_deref(), journal_dir)?,
            };
            Some(Verifier::new(cfg).map_err(|e| Error::usage(format!("--verify: {e}")))?)
        }
        None => None,
    })
}

/// The journal's place: its path in the directory the write gate held at the claim.
fn journal_place(
    path: Option<&str>,
    dir: Option<&std::fs::File>,
) -> Result<Option<iolab_verify::journal::JournalPlace>> {
    let (Some(path), Some(dir)) = (path, dir) else { return Ok(None) };
    let usage = |e: std::io::Error| Error::usage(format!("--journal '{path}': {e}"));
    let dir = dir.try_clone().map_err(usage)?;
    let place = iolab_verify::journal::JournalPlace::in_dir(dir, std::path::Path::new(path))
        .map_err(|e| Error::usage(format!("--journal: {e}")))?;
    Ok(Some(place))
}

/// Verifying a workload that trims is refused: what a trimmed block reads back is not defined.
fn refuse_trims(plan: &Plan) -> Result<()> {
    if plan.workers.iter().any(|w| w.specs.iter().any(|s| s.trim_pct > 0.0)) {
        return Err(Error::usage(
            "--verify checks that every block reads back what was last written to it, but this workload trims \
             ('trim_pct', --trim-pct), and what a trimmed block reads back is not defined; verify a workload \
             without trims",
        ));
    }
    Ok(())
}

/// Verifying duplicate writes is refused: every verified block carries a header of its own (offset,
/// generation), so no block could be a copy of another.
fn refuse_dedupe(plan: &Plan) -> Result<()> {
    if let Some(w) = plan.workers.iter().find(|w| w.dedupe.is_some()) {
        return Err(Error::usage(format!(
            "--verify stamps a header of its own (offset, generation, checksum) in every block written, but \
             worker '{}' asks that a share of its writes be copies of earlier ones ('dedupe', fio's \
             dedupe_percentage), which no block with a header can be; verify without 'dedupe', or measure \
             'dedupe' without --verify",
            w.name
        )));
    }
    Ok(())
}

/// The run's injected faults, at the verifier's block size (or the one it would choose); `None` without
/// `--inject`.
fn faults(
    job: &JobSpec,
    plan: &Plan,
    regions: &[Vec<Region>],
    verifier: Option<&Verifier>,
) -> Result<Option<Arc<Faults>>> {
    let spec = &job.integrity;
    if let Some(s) = spec.inject.iter().find(|s| s.kind == iolab_spec::InjectKind::EarlyFlushAck) {
        if !write_back_cache(job) {
            return Err(Error::usage(format!(
                "invalid value '{}' for '--inject': early-flush-ack makes a write-back block cache \
                 acknowledge flushes before writing its dirty lines back, but this run has none; add \
                 --cache SIZE --cache-mode write-back",
                s.text
            )));
        }
    }
    Ok(match spec.inject.is_empty() {
        true => None,
        false => {
            let block = match &verifier {
                Some(v) => v.block_bytes(),
                None => {
                    refuse_trims(plan)?;
                    let (sizes, align) = iolab_plan::sizing::verify_block_sizes(plan, regions);
                    Verifier::choose_block(&sizes, align).unwrap_or(iolab_verify::DEFAULT_BLOCK)
                }
            };
            Some(Arc::new(Faults::new(spec.inject.clone(), plan.seed, block)))
        }
    })
}

impl RunIntegrity {
    /// Builds the run's verifier and faults. The targets' geometry gives their usable sizes and alignment units,
    /// `run_id` goes into every header. Errors are usage errors (nothing has been written yet).
    pub(crate) fn build(
        job: &JobSpec,
        plan: &Plan,
        regions: &[Vec<Region>],
        targets: &[RunTarget],
        (check, journal_dir): (Option<&CheckMode>, Option<&std::fs::File>),
        run_id: u64,
    ) -> Result<RunIntegrity> {
        let geometry: Vec<TargetGeometry> = targets.iter().map(|t| t.prepared.geometry).collect();
        let files: Vec<Option<Arc<std::fs::File>>> = targets.iter().map(|t| t.file.clone()).collect();
        let sizes: Vec<u64> = geometry.iter().map(|g| g.size_bytes).collect();
        // A target that takes any byte offset (buffered, in-process) still tears at sectors, as a disk does.
        let write_units = geometry.iter().map(|g| g.block_bytes.max(512)).collect();
        let spec = &job.integrity;
        let targets: Vec<TargetInfo> = plan
            .targets
            .iter()
            .zip(&sizes)
            .map(|(t, &size_bytes)| TargetInfo { name: t.name.clone(), size_bytes })
            .collect();
        let verifier = verifier(job, plan, regions, (check, journal_dir), &targets, run_id)?;
        let faults = faults(job, plan, regions, verifier.as_ref())?;
        let keeps_journal = spec.journal.is_some() && check.is_none();
        let mut verifier = verifier;
        if let Some(v) = verifier.as_mut().filter(|_| keeps_journal && makes_writes_durable(plan)) {
            // Before the first write: the workload will be told writes are durable between checkpoints.
            v.start_durable_log().map_err(|e| Error::usage(format!("--journal: {e}")))?;
        }
        let verifier = verifier.map(Arc::new);
        let (mut checkpoints, mut commits) = (None, None);
        if let Some(v) = verifier.as_ref().filter(|_| keeps_journal) {
            // The journal records what the targets hold only once they are durable: it needs their files.
            for (id, f) in files.iter().enumerate() {
                if let Some(f) = f {
                    v.set_target_file(id as u16, f.clone());
                }
            }
            // A write-back cache acknowledges writes it holds in RAM: syncing the targets does not make them
            // durable, so a checkpoint would vouch for what a crash loses by design. Then only the writes the
            // workload made durable (the durable-write log) and the final journal, written once the cache has
            // written everything back, vouch for anything.
            if !write_back_cache(job) {
                checkpoints = Some(v.checkpoint_every(JOURNAL_PERIOD));
            }
            commits = v.durable_log().map(|l| l.commit_every(iolab_verify::durable::COMMIT_PERIOD));
        }
        Ok(RunIntegrity {
            checkpoints: std::sync::Mutex::new(checkpoints),
            commits: std::sync::Mutex::new(commits),
            verifier,
            faults,
            readback: check.is_none(),
            stop_on_error: spec.stop_on_error.unwrap_or(false),
            write_units,
        })
    }

    /// Worker `w`'s share; `regions` are its regions in its targets.
    pub fn worker(
        &self,
        w: &WorkerPlan,
        regions: &[Region],
        stop: &Arc<AtomicBool>,
    ) -> (Option<WorkerVerify>, Option<WorkerFaults>) {
        let ids: Vec<u16> = w.targets.iter().map(|&t| t as u16).collect();
        let spans: Vec<(u64, u64)> = regions.iter().map(|r| (r.offset, r.length)).collect();
        let verify = self.verifier.as_ref().map(|v| WorkerVerify {
            verifier: v.clone(),
            ids: ids.clone(),
            regions: spans.clone(),
            readback: self.readback,
            stop: stop.clone(),
            durable: v
                .durable_log()
                .map(|log| WorkerDurable { log: log.clone(), flushes: w.durability.flush_every > 0 }),
        });
        let faults = self.faults.as_ref().map(|f| WorkerFaults {
            faults: f.clone(),
            ids,
            regions: spans,
            worker: w.index,
            units: w.targets.iter().map(|&t| self.write_units.get(t).copied().unwrap_or(512)).collect(),
            verifier: self.verifier.clone(),
        });
        (verify, faults)
    }

    /// The result's `verify` and `inject` blocks, and the warning a mismatch deserves. Makes the journal durable
    /// first (every write has been acknowledged by now), as a final journal when `cache_dirty_lines` is 0: a
    /// write-back cache that still holds dirty lines has not put every acknowledged write on the targets, and
    /// then the last checkpoint and the durable-write log stay as they are.
    pub fn results(
        &self,
        warnings: &mut Vec<Warning>,
        cache_dirty_lines: u64,
    ) -> Result<(Option<VerifyResult>, Option<InjectResult>)> {
        let verify = match &self.verifier {
            None => None,
            Some(v) => {
                let ck = self.checkpoints.lock().unwrap_or_else(|p| p.into_inner()).take();
                if let Some(ck) = ck {
                    ck.stop().map_err(|e| Error::internal(format!("--journal: {e}")))?;
                }
                let commits = self.commits.lock().unwrap_or_else(|p| p.into_inner()).take();
                if let Some(c) = commits {
                    c.stop().map_err(|e| Error::internal(format!("--journal: {e}")))?;
                }
                if cache_dirty_lines == 0 {
                    v.sync_journal().map_err(|e| Error::internal(format!("--journal: {e}")))?;
                }
                Some(v.result())
            }
        };
        if let Some(r) = verify.as_ref().filter(|r| r.mismatches > 0) {
            let c = &r.by_class;
            let classes: Vec<String> = [
                (c.corrupt_payload, "corrupt_payload"),
                (c.torn_write, "torn_write"),
                (c.lost_write, "lost_write"),
                (c.misdirected_write, "misdirected_write"),
            ]
            .iter()
            .filter(|(n, _)| *n > 0)
            .map(|(n, k)| format!("{n} {k}"))
            .collect();
            warnings.push(Warning::DataMismatch {
                blocks: r.mismatched_blocks,
                reads: r.mismatches,
                classes: classes.join(", "),
            });
        }
        if let Some(r) = verify.as_ref().filter(|r| r.readback_unread_blocks > 0) {
            warnings.push(Warning::ReadbackIncomplete { blocks: r.readback_unread_blocks });
        }
        let inject = self.faults.as_ref().map(|f| {
            let blocks = self.verifier.as_ref().map(|v| v.mismatch_blocks());
            f.result(blocks.as_deref())
        });
        Ok((verify, inject))
    }
}
