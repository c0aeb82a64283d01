//! The training run's document: the dataset generated, the training, and the figures assembled from the
//! timelines (samples/s and MiB/s over the wall-clock time; AU from [`crate::au`]), the verdict, the
//! client's cost and the warnings.

use crate::au::{self, TrainStep};
use crate::config::{LoadedWorkload, TrainConfig};
use crate::dataset;
use crate::train::{self, Trained};
use crate::usage::{cpu_and_peak_rss, host_memory};
use crate::AiError;
use iolab_report::ai::{
    AiConfigView, AiTrainResult, AuVerdict, ClientCost, DatasetFigures, EpochFigures, StepRow,
    TrainingFigures, AI_DISCLAIMER, AI_TRAIN_SCHEMA, TIMELINE_ROWS,
};
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

/// What a run tells its caller as it goes.
pub trait Notices: Sync {
    /// A line for people.
    fn notice(&self, text: &str);
}

/// Steps per epoch per accelerator below which MLPerf Storage's rules say the run is too short.
pub const MIN_STEPS_PER_EPOCH: u64 = 500;

/// Generates, trains, and assembles the document.
pub fn generate_and_train(
    loaded: &LoadedWorkload,
    dir: &Path,
    seed: u64,
    stop: &AtomicBool,
    notices: &dyn Notices,
) -> Result<AiTrainResult, AiError> {
    let c = &loaded.config;
    notices.notice(&format!(
        "generating {} {} files in {} ({})",
        c.num_files,
        c.format.name(),
        dir.display(),
        iolab_device::format_bytes(dataset::planned_bytes(c, seed))
    ));
    let (cpu0, _) = cpu_and_peak_rss();
    let t = Instant::now();
    let data = dataset::generate(c, dir, seed, stop, &|_| {})?;
    let generated = DatasetFigures {
        files: data.files.len() as u64,
        samples: c.num_files * c.samples_per_file,
        bytes: data.bytes(),
        generate_s: t.elapsed().as_secs_f64(),
        generate_cpu_s: cpu_and_peak_rss().0 - cpu0,
    };
    notices.notice(&format!(
        "training: {} accelerator(s), {} step(s) per epoch each, {} epoch(s)",
        c.accelerators,
        train::steps_per_epoch(c),
        c.epochs
    ));
    let started_at = iolab_doc::time::format_rfc3339(unix_now());
    let (cpu1, _) = cpu_and_peak_rss();
    let trained = train::train(c, &data, seed, stop)?;
    let (cpu2, peak) = cpu_and_peak_rss();
    if trained.epochs.is_empty() {
        return Err(AiError::Interrupted);
    }
    let client = ClientCost {
        cpu_s: cpu2 - cpu1,
        cpu_s_per_accelerator: (cpu2 - cpu1) / c.accelerators as f64,
        peak_rss_bytes: peak,
    };
    let doc = assemble(loaded, dir, seed, started_at, generated, (&trained, client), host_memory());
    doc.assert_consistent();
    Ok(doc)
}

/// Trains on the emulated device `target` (its text `shown`) on virtual time, and assembles the document:
/// nothing is generated (the dataset is laid out on the model), the client's CPU is the simulation's.
pub fn emulate(
    loaded: &LoadedWorkload,
    (target, shown): (&iolab_spec::TargetSpec, &str),
    seed: u64,
) -> Result<AiTrainResult, AiError> {
    let c = &loaded.config;
    let started_at = iolab_doc::time::format_rfc3339(unix_now());
    let (cpu0, _) = cpu_and_peak_rss();
    let trained = crate::emulated::train_emulated(c, target, seed)?;
    let (cpu1, peak) = cpu_and_peak_rss();
    let dataset = DatasetFigures {
        files: c.num_files,
        samples: c.num_files * c.samples_per_file,
        bytes: dataset::planned_bytes(c, seed),
        generate_s: 0.0,
        generate_cpu_s: 0.0,
    };
    let client = ClientCost {
        cpu_s: cpu1 - cpu0,
        cpu_s_per_accelerator: (cpu1 - cpu0) / c.accelerators as f64,
        peak_rss_bytes: peak,
    };
    let mut doc = assemble(loaded, Path::new(shown), seed, started_at, dataset, (&trained, client), None);
    doc.emulated = Some(shown.to_string());
    doc.assert_consistent();
    Ok(doc)
}

fn unix_now() -> f64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64())
}

/// The document of a run; `memory`: the host's, for the page-cache warning (none on an emulated device).
pub fn assemble(
    loaded: &LoadedWorkload,
    dir: &Path,
    seed: u64,
    started_at: String,
    dataset: DatasetFigures,
    (t, client): (&Trained, ClientCost),
    memory: Option<u64>,
) -> AiTrainResult {
    let c = &loaded.config;
    let training = figures(c, t);
    let verdict = match (c.min_au, training.au_pct) {
        (Some(min), Some(au)) => {
            Some(AuVerdict { passed: au >= min * 100.0, min_au_pct: min * 100.0, au_pct: au })
        }
        _ => None,
    };
    let warnings = warnings(c, &dataset, &training, memory);
    AiTrainResult {
        schema: AI_TRAIN_SCHEMA.into(),
        iolab_version: env!("CARGO_PKG_VERSION").into(),
        workload: c.name.clone(),
        source: c.source.clone(),
        disclaimer: AI_DISCLAIMER.into(),
        seed,
        started_at,
        config: view(c, dir),
        ignored: loaded.ignored.clone(),
        dataset,
        latency_ns: t.latency.summary(),
        histogram: t.latency.to_base64(),
        training,
        client,
        verdict,
        warnings,
        partial: t.stopped,
        emulated: None,
        find_max: None,
    }
}

fn view(c: &TrainConfig, dir: &Path) -> AiConfigView {
    AiConfigView {
        format: c.format.name().into(),
        num_files: c.num_files,
        samples_per_file: c.samples_per_file,
        record_length_bytes: c.record_length,
        record_length_bytes_stdev: c.record_stdev,
        batch_size: c.batch_size,
        read_threads: c.read_threads,
        prefetch_batches: c.prefetch,
        epochs: c.epochs,
        computation_time_s: c.computation_s,
        computation_time_stdev_s: c.computation_stdev_s,
        accelerators: c.accelerators,
        odirect: c.odirect,
        transfer_size_bytes: c.format.streamed().then(|| c.transfer_size.unwrap_or(crate::train::TF_BUFFER)),
        file_shuffle: c.file_shuffle.name().into(),
        sample_shuffle: c.sample_shuffle.name().into(),
        min_au_pct: c.min_au.map(|a| a * 100.0),
        data_dir: dir.display().to_string(),
    }
}

const MIB: f64 = 1_048_576.0;

/// The training's figures from its timelines.
pub fn figures(c: &TrainConfig, t: &Trained) -> TrainingFigures {
    let all = au::utilization(t.epochs.iter().flatten().map(|a| a.steps.as_slice()));
    let samples: u64 = t.epochs.iter().flatten().map(|a| a.samples).sum();
    let bytes: u64 = t.epochs.iter().flatten().map(|a| a.bytes).sum();
    let epochs = t
        .epochs
        .iter()
        .enumerate()
        .map(|(e, accs)| {
            let span = accs.iter().map(|a| a.span_ns.0).min().unwrap_or(0)
                ..accs.iter().map(|a| a.span_ns.1).max().unwrap_or(0);
            let n = accs.iter().map(|a| a.samples).sum();
            EpochFigures {
                epoch: e as u64 + 1,
                samples: n,
                elapsed_s: (span.end - span.start) as f64 / 1e9,
                samples_per_s: au::rate(n, span.end - span.start).unwrap_or(0.0),
                au_pct: au::utilization(accs.iter().map(|a| a.steps.as_slice())).au_pct,
            }
        })
        .collect();
    let rows = timeline(t);
    let total_steps: usize = t.epochs.iter().flatten().map(|a| a.steps.len()).sum();
    let ns = |v: u64| v as f64 / 1e9;
    TrainingFigures {
        steps_per_epoch: train::steps_per_epoch(c),
        samples,
        bytes_read: bytes,
        elapsed_s: ns(t.elapsed_ns),
        samples_per_s: au::rate(samples, t.elapsed_ns).unwrap_or(0.0),
        mib_per_s: au::rate(bytes, t.elapsed_ns).unwrap_or(0.0) / MIB,
        au_pct: all.au_pct,
        compute_s: ns(all.compute_ns),
        wait_s: ns(all.wait_ns),
        first_wait_s: ns(all.first_wait_ns),
        epochs,
        timeline_left_out: (total_steps - rows.len()) as u64,
        timeline: rows,
    }
}

/// The first steps, epoch by epoch, accelerator by accelerator.
fn timeline(t: &Trained) -> Vec<StepRow> {
    let rows = t.epochs.iter().enumerate().flat_map(|(e, accs)| {
        accs.iter().enumerate().flat_map(move |(a, acc)| {
            acc.steps.iter().enumerate().map(move |(k, s): (usize, &TrainStep)| StepRow {
                accelerator: a as u64,
                epoch: e as u64 + 1,
                step: k as u64,
                wait_s: s.wait_ns as f64 / 1e9,
                compute_s: s.compute_ns as f64 / 1e9,
            })
        })
    });
    rows.take(TIMELINE_ROWS).collect()
}

/// What a reader must know before trusting the figures.
pub fn warnings(
    c: &TrainConfig,
    d: &DatasetFigures,
    t: &TrainingFigures,
    memory: Option<u64>,
) -> Vec<String> {
    let mut w = Vec::new();
    if t.au_pct.is_none() {
        w.push(format!(
            "AU has no value: {} step per epoch per accelerator, and each epoch's first step's wait is left out of AU (DLIO prints 0.0 here); give more files (--param dataset.num_files_train=N) or fewer accelerators",
            t.steps_per_epoch
        ));
    } else if t.steps_per_epoch < MIN_STEPS_PER_EPOCH {
        w.push(format!(
            "{} steps per epoch per accelerator: MLPerf Storage's rules ask for at least {MIN_STEPS_PER_EPOCH}, so that the first step's wait and the epoch's edges weigh little",
            t.steps_per_epoch
        ));
    }
    if c.computation_s == 0.0 {
        w.push("train.computation_time is 0: AU is 0 whatever the storage does".into());
    }
    if let (false, Some(m)) = (c.odirect, memory) {
        if d.bytes < 5 * m {
            let epochs = if c.epochs > 1 {
                "epochs after the first may be read from the page cache, not the storage; "
            } else {
                ""
            };
            w.push(format!(
                "the dataset ({}) is under 5x this host's memory ({}): {epochs}MLPerf Storage's rules ask for a dataset of at least {} (--param dataset.num_files_train=N), or read with --param reader.odirect=True",
                iolab_device::format_bytes(d.bytes),
                iolab_device::format_bytes(m),
                iolab_device::format_bytes(5 * m)
            ));
        }
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::train::AcceleratorEpoch;
    use iolab_stats::LatencyHistogram;

    const MS: u64 = 1_000_000;

    fn acc(steps: &[(u64, u64)], start_ms: u64, samples: u64) -> AcceleratorEpoch {
        let steps: Vec<TrainStep> =
            steps.iter().map(|&(w, c)| TrainStep { wait_ns: w * MS, compute_ns: c * MS }).collect();
        let len: u64 = steps.iter().map(|s| s.wait_ns + s.compute_ns).sum();
        AcceleratorEpoch {
            steps,
            span_ns: (start_ms * MS, start_ms * MS + len),
            samples,
            bytes: samples * 1024,
        }
    }

    #[test]
    fn figures_from_a_given_timeline_are_exact() {
        // Two accelerators, one epoch, batch 2: 3 steps each.
        let c = TrainConfig {
            num_files: 12,
            batch_size: 2,
            accelerators: 2,
            computation_s: 0.05,
            ..TrainConfig::default()
        };
        let t = Trained {
            epochs: vec![vec![
                acc(&[(100, 50), (10, 50), (0, 50)], 0, 6),
                acc(&[(120, 50), (30, 50), (0, 50)], 0, 6),
            ]],
            latency: LatencyHistogram::new(),
            elapsed_ns: 300 * MS,
            stopped: false,
        };
        let f = figures(&c, &t);
        // Compute 300 ms; waits 260 ms of which 220 ms are first steps: 300 / (300 + 40).
        assert_eq!(f.au_pct, Some(300.0 / 340.0 * 100.0));
        assert_eq!(f.first_wait_s, 0.22);
        // Samples per second keep the first waits: 12 samples over 0.3 s.
        assert_eq!(f.samples_per_s, 40.0);
        assert_eq!(f.mib_per_s, 12.0 * 1024.0 / 0.3 / MIB);
        assert_eq!(f.steps_per_epoch, 3);
        assert_eq!(f.timeline.len(), 6);
        assert_eq!(f.epochs[0].elapsed_s, 0.3);
    }

    #[test]
    fn one_step_per_epoch_says_why_au_has_no_value() {
        let c = TrainConfig {
            num_files: 64,
            batch_size: 7,
            accelerators: 8,
            computation_s: 0.323,
            ..TrainConfig::default()
        };
        let t = Trained {
            epochs: vec![vec![acc(&[(300, 323)], 0, 7)]],
            latency: LatencyHistogram::new(),
            elapsed_ns: 623 * MS,
            stopped: false,
        };
        let f = figures(&c, &t);
        assert_eq!(f.au_pct, None);
        assert!(f.samples_per_s > 11.0);
        let d =
            DatasetFigures { files: 64, samples: 64, bytes: 1 << 20, generate_s: 0.0, generate_cpu_s: 0.0 };
        let w = warnings(&c, &d, &f, Some(1 << 30));
        assert!(w[0].starts_with("AU has no value: 1 step per epoch"), "{w:?}");
        assert!(w[1].contains("under 5x this host's memory"), "{w:?}");
    }
}
