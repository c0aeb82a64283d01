//! `iolab ai` flags: AI training storage workloads (docs/AI.md).

use super::{CatalogFlags, KeySet, SomeKeys};

/// `iolab ai` options.
#[derive(clap::Args, Debug, Clone)]
pub struct AiArgs {
    /// The workload.
    #[command(subcommand)]
    pub what: AiWhat,
}

/// The workloads of `iolab ai`.
#[derive(clap::Subcommand, Debug, Clone)]
pub enum AiWhat {
    /// Training data loading as DLIO runs it: generate the dataset (npz or npy files) in --data-dir, then
    /// read it in batches with simulated accelerators that compute (sleep) per step; report samples/s,
    /// MiB/s, accelerator utilization (AU) and PASS/FAIL against the workload's minimum AU. CONFIG is a DLIO
    /// workload YAML file or a built-in: tiny (the default, a smoke test), unet3d, resnet50, cosmoflow
    /// (MLPerf-Storage-compatible; not MLPerf results).
    Train(Box<TrainArgs>),
    /// Checkpoints as DLIO writes them: a transformer's model and optimizer state sharded over tensor,
    /// pipeline and ZeRO data-parallel ranks (a thread each), num_checkpoints_write checkpoints written
    /// (fsynced as configured), dropped from the page cache, num_checkpoints_read read back; time per
    /// checkpoint and GiB/s per rank, the run's figure the slowest rank's. CONFIG is a DLIO workload YAML
    /// file or a built-in: tiny (the default), llama3-8b, llama3-70b, llama3-405b, llama3-1t
    /// (MLPerf-Storage-compatible; not MLPerf results).
    Checkpoint(Box<CheckpointArgs>),
}

/// `iolab ai train` options.
#[derive(clap::Args, Debug, Clone)]
pub struct TrainArgs {
    /// A DLIO workload YAML file, or a built-in workload: tiny, unet3d, resnet50, cosmoflow.
    #[arg(value_name = "CONFIG", default_value = "tiny")]
    pub config: String,
    /// Set a workload option in DLIO's dotted keys, over the file (repeatable): --param
    /// dataset.num_files_train=64 --param train.epochs=1. Options that change no I/O are listed as ignored;
    /// options iolab cannot honour are refused by name.
    #[arg(long, value_name = "KEY=VALUE")]
    pub param: Vec<String>,
    /// Simulated accelerators on this host (threads, each with its reader threads). Default 1.
    #[arg(long, value_name = "N", default_value = "1")]
    pub num_accelerators: String,
    /// The directory for the dataset, on the storage under test. It must not exist (iolab creates it, marks
    /// it as its own and removes it after the run, also on Ctrl-C) or be one iolab made earlier. Default:
    /// iolab-ai-PID in $IOLAB_SCRATCH_DIR or the current directory. An emulated device instead
    /// ('sim:array,...', 'link:fc32g,sim:...'; docs/EMULATION.md) runs on virtual time: nothing is
    /// written, and every figure but the client's is the model's.
    #[arg(long, value_name = "DIR")]
    pub data_dir: Option<String>,
    /// Search for the most accelerators the storage feeds at the workload's minimum AU (metric.au):
    /// double from one until AU falls under it, then halve the gap; the answer and one more run again with
    /// the next seed. On an emulated --data-dir (sim:...), where each run takes seconds.
    #[arg(long)]
    pub find_max: bool,
    /// --seed.
    #[command(flatten)]
    pub keys: SomeKeys<AiKeys>,
    /// Write the result as JSON (iolab.aitrain/1) to FILE; '-' for stdout.
    #[arg(long, value_name = "FILE")]
    pub json: Option<String>,
    /// Print nothing but errors.
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// Results catalog: where the result is saved (as kind ai-train), its tags and note.
    #[command(flatten)]
    pub catalog: CatalogFlags,
}

/// `iolab ai checkpoint` options.
#[derive(clap::Args, Debug, Clone)]
pub struct CheckpointArgs {
    /// A DLIO workload YAML file, or a built-in workload: tiny, llama3-8b, llama3-70b, llama3-405b,
    /// llama3-1t.
    #[arg(value_name = "CONFIG", default_value = "tiny")]
    pub config: String,
    /// Set a workload option in DLIO's dotted keys, over the file (repeatable): --param
    /// checkpoint.num_checkpoints_write=1 --param model.num_layers=4. Options that change no I/O are listed
    /// as ignored; options iolab cannot honour are refused by name.
    #[arg(long, value_name = "KEY=VALUE")]
    pub param: Vec<String>,
    /// Ranks on this host (simulated accelerators: a thread each). Default: a built-in's MLPerf Storage
    /// CLOSED count (8, 64, 512, 1024), else TP x PP (x DP in subset mode).
    #[arg(long, value_name = "N")]
    pub num_accelerators: Option<String>,
    /// The directory for the checkpoints, on the storage under test. It must not exist (iolab creates it,
    /// marks it as its own and removes it after the run, also on Ctrl-C) or be one iolab made earlier.
    /// Default: iolab-ai-PID in $IOLAB_SCRATCH_DIR or the current directory.
    #[arg(long, value_name = "DIR")]
    pub data_dir: Option<String>,
    /// Write the result as JSON (iolab.aicheckpoint/1) to FILE; '-' for stdout.
    #[arg(long, value_name = "FILE")]
    pub json: Option<String>,
    /// Print nothing but errors.
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// Results catalog: where the result is saved (as kind ai-checkpoint), its tags and note.
    #[command(flatten)]
    pub catalog: CatalogFlags,
}

/// `--seed` of an AI training run: `iolab run`'s own flag (one definition), in a training run's words.
#[derive(Clone, Copy, Debug, Default)]
pub struct AiKeys;

impl KeySet for AiKeys {
    const KEYS: &'static [(&'static str, Option<&'static str>)] = &[(
        "seed",
        Some("The seed of the dataset's contents and of every shuffle. Default: the workload's train.seed, else a fresh one (printed)."),
    )];
}
