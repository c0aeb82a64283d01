//! The checkpoint run's document: the writes, the page cache dropped, the reads, and the figures assembled
//! from the ranks' times as DLIO and MLPerf Storage define them: a rank's throughput in a checkpoint is the
//! checkpoint's bytes (all ranks: DLIO's "checkpoint size") over the rank's time, averaged over the
//! checkpoints; the run's is the minimum across ranks, its duration the maximum.

use super::run::{self, PhaseTimes, ShardPlan};
use super::{CheckpointConfig, LoadedCheckpoint};
use crate::usage::cpu_and_peak_rss;
use crate::{AiError, Notices};
use iolab_report::ai::{ClientCost, AI_DISCLAIMER};
use iolab_report::kinds::ai_checkpoint::{
    AiCheckpointResult, CheckpointSize, CheckpointView, PageCacheView, PhaseFigures, RankFigures, RankPhase,
    AI_CHECKPOINT_SCHEMA,
};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

const GIB: f64 = 1_073_741_824.0;

/// Writes, drops, reads, and assembles the document.
pub fn write_and_read(
    loaded: &LoadedCheckpoint,
    dir: &Path,
    seed: u64,
    stop: &AtomicBool,
    notices: &dyn Notices,
) -> Result<AiCheckpointResult, AiError> {
    let c = &loaded.config;
    let plan = ShardPlan::of(c);
    super::say_plan(c, &plan, dir, notices);
    let mut bufs: Vec<_> = (0..c.ranks).map(|r| super::io::Buffer::new(seed, r)).collect();
    let started_at = iolab_doc::time::format_rfc3339(unix_now());
    let (cpu0, _) = cpu_and_peak_rss();
    let written = run::write(c, &plan, dir, &mut bufs, stop)?;
    if written.checkpoints.is_empty() {
        return Err(AiError::Interrupted);
    }
    let reads = if stop.load(Ordering::Relaxed) { 0 } else { c.reads.min(written.checkpoints.len() as u64) };
    let cached = match (reads, c.odirect) {
        (0, _) | (_, true) => None,
        (n, false) => Some(run::drop_checkpoints(&plan, dir, n)?),
    };
    let read = if reads > 0 {
        notices.notice(&format!("reading {reads} checkpoint(s) back"));
        run::read(&CheckpointConfig { reads, ..c.clone() }, &plan, dir, &mut bufs, stop)?
    } else {
        PhaseTimes::default()
    };
    let (cpu1, peak) = cpu_and_peak_rss();
    let client = ClientCost {
        cpu_s: cpu1 - cpu0,
        cpu_s_per_accelerator: (cpu1 - cpu0) / c.ranks as f64,
        peak_rss_bytes: peak,
    };
    let partial = stop.load(Ordering::Relaxed);
    let doc = assemble(loaded, dir, &plan, (&written, &read), cached, client, started_at, partial);
    doc.assert_consistent();
    Ok(doc)
}

fn unix_now() -> f64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64())
}

/// The document of a run.
#[allow(clippy::too_many_arguments)]
pub fn assemble(
    loaded: &LoadedCheckpoint,
    dir: &Path,
    plan: &ShardPlan,
    (written, read): (&PhaseTimes, &PhaseTimes),
    cached: Option<u64>,
    client: ClientCost,
    started_at: String,
    partial: bool,
) -> AiCheckpointResult {
    let c = &loaded.config;
    let bytes = plan.bytes();
    let ranks: Vec<RankFigures> = plan
        .ranks
        .iter()
        .enumerate()
        .map(|(r, files)| {
            let own: u64 = files.iter().map(|f| f.bytes).sum();
            let p = plan.parallelism;
            let r = r as u64;
            RankFigures {
                rank: r,
                tensor_rank: r % p.tensor,
                pipeline_rank: (r / p.tensor) % p.pipeline,
                data_rank: r / p.model(),
                files: files.len() as u64,
                bytes: own,
                write: rank_phase(written, r as usize, bytes, own, files.is_empty()),
                read: rank_phase(read, r as usize, bytes, own, files.is_empty()),
            }
        })
        .collect();
    let write = phase_figures(written, &ranks, |r| &r.write);
    let read_f = phase_figures(read, &ranks, |r| &r.read);
    let page_cache = PageCacheView {
        method: if c.odirect { "o_direct" } else { "dropped" }.into(),
        cached_bytes_before_reads: cached,
    };
    let warnings = warnings(c, &page_cache, bytes);
    AiCheckpointResult {
        schema: AI_CHECKPOINT_SCHEMA.into(),
        iolab_version: env!("CARGO_PKG_VERSION").into(),
        workload: c.name.clone(),
        source: c.source.clone(),
        disclaimer: AI_DISCLAIMER.into(),
        started_at,
        config: view(c, plan, dir),
        ignored: loaded.ignored.clone(),
        checkpoint: size(plan),
        page_cache,
        write,
        read: read_f,
        ranks,
        client,
        warnings,
        partial,
    }
}

fn view(c: &CheckpointConfig, plan: &ShardPlan, dir: &Path) -> CheckpointView {
    let (m, p) = (&c.model, plan.parallelism);
    CheckpointView {
        num_layers: m.num_layers,
        hidden_size: m.hidden,
        ffn_hidden_size: m.ffn,
        vocab_size: m.vocab,
        num_attention_heads: m.heads,
        num_kv_heads: m.kv_heads,
        parameters: m.parameters(),
        model_datatype: c.datatypes.0.clone(),
        optimizer_datatype: c.datatypes.1.clone(),
        tensor: p.tensor,
        pipeline: p.pipeline,
        data: p.data,
        zero_stage: p.zero_stage,
        mode: if c.subset { "subset" } else { "default" }.into(),
        ranks: c.ranks,
        num_checkpoints_write: c.writes,
        num_checkpoints_read: c.reads,
        fsync: c.fsync,
        rank_sync: c.rank_sync,
        time_between_checkpoints_s: c.between_s,
        data_dir: dir.display().to_string(),
    }
}

fn size(plan: &ShardPlan) -> CheckpointSize {
    let files = plan.ranks.iter().flatten();
    let model_bytes = files.clone().filter(|f| f.model).map(|f| f.bytes).sum();
    CheckpointSize {
        bytes: plan.bytes(),
        model_bytes,
        optimizer_bytes: plan.bytes() - model_bytes,
        files: files.count() as u64,
        writing_ranks: plan.ranks.iter().filter(|r| !r.is_empty()).count() as u64,
    }
}

/// Rank `r`'s figures in a phase; `None` for a rank without files or a phase that did not run.
fn rank_phase(t: &PhaseTimes, r: usize, checkpoint: u64, own: u64, idle: bool) -> Option<RankPhase> {
    if idle || t.checkpoints.is_empty() {
        return None;
    }
    let seconds: Vec<f64> = t.checkpoints.iter().map(|k| k[r] as f64 / 1e9).collect();
    let n = seconds.len() as f64;
    let mean_s = seconds.iter().sum::<f64>() / n;
    let gib_per_s = seconds.iter().map(|s| checkpoint as f64 / GIB / s.max(1e-9)).sum::<f64>() / n;
    Some(RankPhase { seconds, mean_s, gib_per_s, own_gib_per_s: own as f64 / GIB / mean_s.max(1e-9) })
}

/// A phase's figures over the ranks that have files: the minimum, mean and maximum GiB/s, the maximum and
/// mean duration.
fn phase_figures(
    t: &PhaseTimes,
    ranks: &[RankFigures],
    of: impl Fn(&RankFigures) -> &Option<RankPhase>,
) -> Option<PhaseFigures> {
    let ps: Vec<&RankPhase> = ranks.iter().filter_map(|r| of(r).as_ref()).collect();
    if ps.is_empty() {
        return None;
    }
    let n = ps.len() as f64;
    let gib = ps.iter().map(|p| p.gib_per_s);
    let secs = ps.iter().map(|p| p.mean_s);
    Some(PhaseFigures {
        checkpoints: t.checkpoints.len() as u64,
        duration_max_s: secs.clone().fold(0.0, f64::max),
        duration_mean_s: secs.sum::<f64>() / n,
        gib_per_s_min: gib.clone().fold(f64::INFINITY, f64::min),
        gib_per_s_mean: gib.clone().sum::<f64>() / n,
        gib_per_s_max: gib.fold(0.0, f64::max),
        elapsed_s: t.elapsed_ns as f64 / 1e9,
    })
}

/// What a reader must know before trusting the figures.
pub fn warnings(c: &CheckpointConfig, cache: &PageCacheView, bytes: u64) -> Vec<String> {
    let mut w = Vec::new();
    if !c.fsync {
        w.push("checkpoint.fsync is False: a write ends in the page cache, so the writes' figures are memory's as much as the storage's (MLPerf Storage requires fsync)".into());
    }
    if let Some(left) = cache.cached_bytes_before_reads.filter(|b| *b > 0) {
        w.push(format!(
            "{} of the checkpoints to read were still in the page cache after they were dropped (a file system that keeps its pages, such as tmpfs): the reads' figures are partly memory's; --param checkpoint.odirect=True reads around the cache",
            iolab_device::format_bytes(left.min(bytes.saturating_mul(c.reads)))
        ));
    }
    if c.subset {
        w.push(format!(
            "subset mode: {} ranks of a TP x PP x DP = {} job write their shards; the whole checkpoint is larger",
            c.ranks,
            c.parallelism.model() * c.parallelism.data
        ));
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checkpoint::load;

    #[test]
    fn figures_from_given_times_are_dlio_s_and_mlperf_storage_s() {
        let mut loaded = load("tiny", &[]).unwrap();
        loaded.config.ranks = 8;
        let plan = ShardPlan::of(&loaded.config);
        let bytes = plan.bytes() as f64;
        // Two checkpoints; rank r takes (r + 1) · 100 ms in the first and 200 ms in the second.
        let t = PhaseTimes {
            checkpoints: vec![(1..=8).map(|r| r * 100_000_000).collect(), vec![200_000_000; 8]],
            elapsed_ns: 2_000_000_000,
        };
        let client = ClientCost { cpu_s: 0.0, cpu_s_per_accelerator: 0.0, peak_rss_bytes: 0 };
        let d = assemble(&loaded, Path::new("d"), &plan, (&t, &t), Some(0), client, String::new(), false);
        d.assert_consistent();
        let w = d.write.unwrap();
        // The slowest rank is 7: (0.8 + 0.2) / 2 = 0.5 s; its GiB/s (C / 0.8 + C / 0.2) / 2.
        assert_eq!(w.duration_max_s, 0.5);
        let c = bytes / GIB;
        assert!((w.gib_per_s_min - (c / 0.8 + c / 0.2) / 2.0).abs() < 1e-12);
        // The fastest is rank 0 (0.1 s, then 0.2 s): (C / 0.1 + C / 0.2) / 2.
        assert!((w.gib_per_s_max - (c / 0.1 + c / 0.2) / 2.0).abs() < 1e-12);
        let r0 = d.ranks[0].write.as_ref().unwrap();
        assert_eq!(r0.seconds, [0.1, 0.2]);
        assert!((r0.own_gib_per_s - d.ranks[0].bytes as f64 / GIB / 0.15).abs() < 1e-12);
        assert_eq!(d.checkpoint.writing_ranks, 8);
        assert_eq!(d.config.data, 2, "8 ranks over TP 2 x PP 2");
        assert!(d.warnings.is_empty(), "{:?}", d.warnings);
    }
}
