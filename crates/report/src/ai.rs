//! The AI training document (`iolab.aitrain/1`, `iolab ai train --json`): a DLIO-style training run's data
//! loading, as MLPerf Storage measures it (docs/AI.md): samples/s and MiB/s over the whole run, the
//! accelerator utilization (AU: compute time over total time, each epoch's first step's wait for data left
//! out), per-sample read latency in an HDR histogram, the verdict against the workload's minimum AU, and the
//! client's own CPU and memory, apart from the storage's figures.

use iolab_stats::LatSummary;
use serde::{Deserialize, Serialize};

/// The schema of [`AiTrainResult`].
pub const AI_TRAIN_SCHEMA: &str = "iolab.aitrain/1";

/// What every AI document says of the name it borrows.
pub const AI_DISCLAIMER: &str =
    "an MLPerf-Storage-compatible workload run by iolab: not an MLPerf result, not reviewed by MLCommons";

/// One training run (`iolab ai train`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AiTrainResult {
    /// Always [`AI_TRAIN_SCHEMA`].
    pub schema: String,
    /// The iolab that ran it.
    pub iolab_version: String,
    /// The workload's name (`unet3d`, or the YAML's `model.name`).
    pub workload: String,
    /// Where the workload came from: `built-in unet3d` or the YAML file's path.
    pub source: String,
    /// [`AI_DISCLAIMER`].
    pub disclaimer: String,
    /// The seed of the dataset's contents and of every shuffle.
    pub seed: u64,
    /// When training started, RFC 3339.
    pub started_at: String,
    /// The workload as run.
    pub config: AiConfigView,
    /// Options of the workload that change no I/O, each with why.
    pub ignored: Vec<IgnoredOption>,
    /// The dataset generated.
    pub dataset: DatasetFigures,
    /// The training's figures.
    pub training: TrainingFigures,
    /// Per-sample read latency (the sample's file opened and its bytes read); `None` without samples.
    pub latency_ns: Option<LatSummary>,
    /// The per-sample read latency histogram (`iolab-hdr/1`, base64).
    pub histogram: String,
    /// The client's own cost (this process), apart from the storage's figures.
    pub client: ClientCost,
    /// PASS/FAIL against the workload's minimum AU; `None` when it names none or AU has no value.
    pub verdict: Option<AuVerdict>,
    /// What a reader must know to trust the figures (page cache, too few steps, small datasets).
    pub warnings: Vec<String>,
    /// Stopped early (Ctrl-C): the figures cover the steps that ran.
    pub partial: bool,
    /// The storage was this emulated device (`--data-dir sim:...`), on virtual time: every figure but the
    /// client's is the model's, nothing was written, and no page cache stood between.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub emulated: Option<String>,
    /// `--find-max`: the most accelerators the storage fed at the workload's minimum AU, and each run of
    /// the search; the document's own figures are the answer's run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub find_max: Option<AiFindMax>,
}

/// A search for the most accelerators the storage feeds at the workload's minimum AU (`--find-max`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AiFindMax {
    /// The answer: the most accelerators whose run passed (0: not even one).
    pub accelerators: u64,
    /// The minimum AU searched against, percent.
    pub min_au_pct: f64,
    /// Every run, in the order run: doubling, then halving the gap, then the confirmation.
    pub tried: Vec<AiFleetStep>,
    /// The confirmation (the answer and one more, each again with the next seed) agreed with the search;
    /// when not, the answer is at the edge of the noise (the warnings say so).
    pub confirmed: bool,
    /// The most accelerators the dataset allows (two steps each, so AU has a value).
    pub limit: u64,
}

/// One run of a `--find-max` search.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct AiFleetStep {
    /// Accelerators.
    pub accelerators: u64,
    /// The seed of this run.
    pub seed: u64,
    /// AU, percent; `None` when it has no value.
    pub au_pct: Option<f64>,
    /// AU at or over the minimum.
    pub passed: bool,
    /// A confirmation run (after the search).
    pub confirmation: bool,
}

/// The workload as it ran, after the YAML, the built-in and `--param`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AiConfigView {
    /// `npz` or `npy`.
    pub format: String,
    /// Training files.
    pub num_files: u64,
    /// Samples in each file.
    pub samples_per_file: u64,
    /// Mean bytes of a sample.
    pub record_length_bytes: u64,
    /// Standard deviation of a file's sample size, bytes.
    pub record_length_bytes_stdev: u64,
    /// Samples per step, per accelerator.
    pub batch_size: u64,
    /// Reader threads per accelerator (0: the accelerator's own thread reads).
    pub read_threads: u64,
    /// Batches each reader thread may have ready ahead.
    pub prefetch_batches: u64,
    /// Epochs.
    pub epochs: u64,
    /// Seconds of computation per step (the simulated accelerator).
    pub computation_time_s: f64,
    /// Standard deviation of it, seconds.
    pub computation_time_stdev_s: f64,
    /// Simulated accelerators (threads on this host).
    pub accelerators: u64,
    /// Reads with O_DIRECT (`reader.odirect`); else through the page cache.
    pub odirect: bool,
    /// A streamed format (TFRecord) is read a file's records at a time, in reads of this many bytes
    /// (`reader.transfer_size`, else TensorFlow's 256 KiB), and the latency is of each read; absent: each
    /// sample is read on its own and the latency is the sample's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transfer_size_bytes: Option<u64>,
    /// `off`, `seed` or `random`.
    pub file_shuffle: String,
    /// `off`, `seed` or `random`.
    pub sample_shuffle: String,
    /// The minimum AU of the workload (`metric.au`), percent.
    pub min_au_pct: Option<f64>,
    /// The dataset's directory.
    pub data_dir: String,
}

/// An option of the workload that changes no I/O.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IgnoredOption {
    /// Its dotted key (`framework`, `reader.data_loader`).
    pub key: String,
    /// Its value as written.
    pub value: String,
    /// Why iolab can leave it out.
    pub why: String,
}

/// The dataset iolab generated.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DatasetFigures {
    /// Files.
    pub files: u64,
    /// Samples.
    pub samples: u64,
    /// Bytes on disk (headers included).
    pub bytes: u64,
    /// Seconds generating it (written, synced and dropped from the page cache).
    pub generate_s: f64,
    /// CPU seconds of this process generating it.
    pub generate_cpu_s: f64,
}

/// The training's figures.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrainingFigures {
    /// Steps each accelerator takes per epoch (its samples over the batch size, the rest dropped).
    pub steps_per_epoch: u64,
    /// Samples consumed, all accelerators.
    pub samples: u64,
    /// Bytes of sample data read.
    pub bytes_read: u64,
    /// Seconds from the first accelerator's start to the last one's end.
    pub elapsed_s: f64,
    /// Samples per second over the whole run (first steps included).
    pub samples_per_s: f64,
    /// MiB per second of sample data over the whole run (DLIO's "MB/second").
    pub mib_per_s: f64,
    /// Accelerator utilization, percent: compute time over total time with each epoch's first wait left out;
    /// `None` when no step remains after that (see the warnings).
    pub au_pct: Option<f64>,
    /// Seconds the accelerators computed, summed.
    pub compute_s: f64,
    /// Seconds the accelerators waited for data, summed (first steps included).
    pub wait_s: f64,
    /// Of that, the seconds of each epoch's first step, left out of AU.
    pub first_wait_s: f64,
    /// Each epoch.
    pub epochs: Vec<EpochFigures>,
    /// The first steps of the run, every accelerator's, in the order they ended (at most
    /// [`TIMELINE_ROWS`]).
    pub timeline: Vec<StepRow>,
    /// Steps not in `timeline`.
    pub timeline_left_out: u64,
}

/// At most this many steps are kept in a document's timeline.
pub const TIMELINE_ROWS: usize = 2000;

/// One epoch's figures, all accelerators.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EpochFigures {
    /// From 1.
    pub epoch: u64,
    /// Samples.
    pub samples: u64,
    /// Seconds, the slowest accelerator's.
    pub elapsed_s: f64,
    /// Samples per second.
    pub samples_per_s: f64,
    /// AU, percent.
    pub au_pct: Option<f64>,
}

/// One step of one accelerator.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepRow {
    /// The accelerator, from 0.
    pub accelerator: u64,
    /// The epoch, from 1.
    pub epoch: u64,
    /// The step in its epoch, from 0.
    pub step: u64,
    /// Seconds waited for the batch.
    pub wait_s: f64,
    /// Seconds computed.
    pub compute_s: f64,
}

/// What the client (this process) cost.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClientCost {
    /// CPU seconds (user and system) of this process while training.
    pub cpu_s: f64,
    /// The same per simulated accelerator.
    pub cpu_s_per_accelerator: f64,
    /// The process's peak resident memory, bytes.
    pub peak_rss_bytes: u64,
}

/// The verdict against the workload's minimum AU, as Exchange verdicts are worded.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AuVerdict {
    /// PASS or FAIL.
    pub passed: bool,
    /// The minimum, percent.
    pub min_au_pct: f64,
    /// The AU measured, percent.
    pub au_pct: f64,
}

impl AiTrainResult {
    /// Checks what must hold of a document as it is assembled.
    pub fn assert_consistent(&self) {
        let t = &self.training;
        assert_eq!(t.epochs.iter().map(|e| e.samples).sum::<u64>(), t.samples, "epochs add up to the run");
        if let Some(au) = t.au_pct {
            assert!((0.0..=100.0 + 1e-9).contains(&au), "AU {au} is a percentage");
        }
        if let Some(v) = &self.verdict {
            assert_eq!(v.passed, v.au_pct >= v.min_au_pct, "the verdict follows its numbers");
        }
    }
}
