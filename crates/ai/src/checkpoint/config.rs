//! A checkpoint workload as DLIO describes it: a workload YAML file (mlcommons/storage's
//! `configs/dlio/workload/llama3_*.yaml`, dlio_benchmark's `configs/workload/llama_*.yaml`) or a built-in,
//! with `--param KEY=VALUE` over it, read by the same YAML reader as a training workload's. Every key is
//! honoured, ignored with why, or refused by name (the one `match` is `apply`).

use super::shards::{Parallelism, Transformer};
use crate::config::{yaml, ConfigError};
use iolab_report::ai::IgnoredOption;

/// What a checkpoint run writes and reads, and how.
#[derive(Clone, Debug, PartialEq)]
pub struct CheckpointConfig {
    /// `model.name`, else the built-in's or the file's name.
    pub name: String,
    /// `built-in llama3-8b` or the file's path.
    pub source: String,
    /// The model.
    pub model: Transformer,
    /// `model.model_datatype` and `model.optimizer_datatype` as written.
    pub datatypes: (String, String),
    /// TP, PP, ZeRO; `data` is `model.parallelism.data` (0: unset) until [`CheckpointConfig::parallelism`].
    pub parallelism: Parallelism,
    /// `checkpoint.mode: subset`.
    pub subset: bool,
    /// `checkpoint.num_checkpoints_write`.
    pub writes: u64,
    /// `checkpoint.num_checkpoints_read`.
    pub reads: u64,
    /// `checkpoint.fsync`.
    pub fsync: bool,
    /// `checkpoint.rank_sync`: every rank waits for the others before its checkpoint's time ends.
    pub rank_sync: bool,
    /// `checkpoint.time_between_checkpoints`, seconds (DLIO's computation before each checkpoint).
    pub between_s: f64,
    /// `checkpoint.odirect` (iolab's): reads with O_DIRECT, else the files are dropped from the page cache.
    pub odirect: bool,
    /// Ranks (simulated accelerators): `--num-accelerators`, else [`CheckpointConfig::default_ranks`].
    pub ranks: u64,
}

impl Default for CheckpointConfig {
    /// DLIO's defaults (its `ConfigArguments`).
    fn default() -> CheckpointConfig {
        CheckpointConfig {
            name: "default".into(),
            source: String::new(),
            model: Transformer {
                num_layers: 0,
                hidden: 2048,
                ffn: 8192,
                vocab: 32000,
                heads: 32,
                kv_heads: 8,
                model_bytes: 2,
                optimizer_bytes: 4,
            },
            datatypes: ("fp16".into(), "fp32".into()),
            parallelism: Parallelism { tensor: 1, pipeline: 1, data: 0, zero_stage: 0 },
            subset: false,
            writes: 0,
            reads: 0,
            fsync: false,
            rank_sync: false,
            between_s: 0.0,
            odirect: false,
            ranks: 0,
        }
    }
}

impl CheckpointConfig {
    /// The parallelism of a run of [`CheckpointConfig::ranks`] ranks: DP is `model.parallelism.data` in
    /// subset mode, else ranks / (TP × PP), as DLIO sets it.
    pub fn parallelism(&self) -> Parallelism {
        let p = self.parallelism;
        let data = if self.subset { p.data } else { self.ranks / p.model() };
        Parallelism { data, ..p }
    }

    /// Ranks when `--num-accelerators` is not given: a built-in's MLPerf Storage CLOSED count, else
    /// TP × PP × DP in subset mode, else TP × PP (one data-parallel instance).
    pub fn default_ranks(&self, builtin_ranks: Option<u64>) -> u64 {
        let p = self.parallelism;
        builtin_ranks.unwrap_or(if self.subset { p.model() * p.data } else { p.model() })
    }

    /// What DLIO refuses too (utils/config.py `validate`), and what leaves nothing to do.
    pub fn check(&self) -> Result<(), ConfigError> {
        let (m, p) = (&self.model, &self.parallelism);
        let fail = |s: String| Err(ConfigError(s));
        if m.num_layers == 0 {
            return fail("model.num_layers is not set: iolab writes the checkpoints of transformer models (model.type: transformer, model.num_layers, model.transformer.*)".into());
        }
        if m.num_layers < p.pipeline {
            return fail(format!("model.num_layers {} is below model.parallelism.pipeline {}: a pipeline stage would hold no layer", m.num_layers, p.pipeline));
        }
        if p.pipeline > 1 && p.zero_stage == 3 {
            return fail(format!("model.parallelism.zero_stage 3 with model.parallelism.pipeline {}: ZeRO stage 3 does not go with pipeline parallelism (DLIO refuses it too)", p.pipeline));
        }
        if self.subset && p.data == 0 {
            return fail("checkpoint.mode: subset needs model.parallelism.data (the data-parallel instances of the whole job)".into());
        }
        if !self.subset && p.data > 0 {
            return fail(format!("model.parallelism.data: {} is only taken with checkpoint.mode=subset; in the default mode it is the ranks over TP x PP", p.data));
        }
        let mp = p.model();
        if !self.subset && self.ranks % mp != 0 {
            return fail(format!("invalid value '{}' for '--num-accelerators': expected a multiple of TP x PP = {} x {} = {mp} (or checkpoint.mode=subset)", self.ranks, p.tensor, p.pipeline));
        }
        if self.subset && self.ranks > mp * p.data {
            return fail(format!("invalid value '{}' for '--num-accelerators': subset mode runs at most TP x PP x DP = {} ranks", self.ranks, mp * p.data));
        }
        if self.reads > self.writes {
            return fail(format!("checkpoint.num_checkpoints_read {} is more than checkpoint.num_checkpoints_write {}: iolab reads the checkpoints it wrote in the same run", self.reads, self.writes));
        }
        if self.writes == 0 {
            return fail("checkpoint.num_checkpoints_write is 0: nothing to write or read (--param checkpoint.num_checkpoints_write=N)".into());
        }
        Ok(())
    }
}

/// A checkpoint workload read: its settings and the options it left out.
#[derive(Clone, Debug)]
pub struct LoadedCheckpoint {
    /// The settings.
    pub config: CheckpointConfig,
    /// Options that change no I/O.
    pub ignored: Vec<IgnoredOption>,
    /// MLPerf Storage's CLOSED rank count of a built-in (the default `--num-accelerators`).
    pub builtin_ranks: Option<u64>,
}

/// Reads `config` (a workload file's path or a built-in's name) with `params` over it.
pub fn load(config: &str, params: &[String]) -> Result<LoadedCheckpoint, ConfigError> {
    let builtin = super::builtin::builtin(config);
    let (text, source, file) = match (std::path::Path::new(config).is_file(), builtin) {
        (true, _) => {
            let text = std::fs::read_to_string(config)
                .map_err(|e| ConfigError(format!("cannot read the workload file '{config}': {e}")))?;
            let file = std::path::Path::new(config)
                .file_name()
                .map_or(config.to_string(), |f| f.to_string_lossy().into_owned());
            (text, config.to_string(), file)
        }
        (false, Some(b)) => (b.yaml.to_string(), format!("built-in {config}"), format!("built-in {config}")),
        (false, None) => {
            let names: Vec<&str> = super::builtin::BUILTINS.iter().map(|b| b.name).collect();
            return Err(ConfigError(format!(
                "invalid value '{config}' for 'CONFIG': not a file, nor a built-in checkpoint workload ({})",
                names.join(", ")
            )));
        }
    };
    let mut values: Vec<(String, String, String)> = yaml::entries(&text)
        .map_err(|e| ConfigError(format!("{source}: {e}")))?
        .into_iter()
        .map(|e| (e.key, e.value, format!("line {} of {file}", e.line)))
        .collect();
    for p in params {
        let Some((k, v)) = p.split_once('=') else {
            return Err(ConfigError(format!(
                "invalid value '{p}' for '--param': expected KEY=VALUE (e.g. checkpoint.num_checkpoints_write=1)"
            )));
        };
        let k = k.trim().trim_start_matches("++").trim_start_matches("workload.");
        values.retain(|(key, _, _)| key != k);
        values.push((k.to_string(), v.trim().to_string(), format!("--param {p}")));
    }
    let name = if builtin.is_some() && !std::path::Path::new(config).is_file() { config } else { &file };
    let mut c = CheckpointConfig { name: name.to_string(), source, ..CheckpointConfig::default() };
    let mut ignored = Vec::new();
    for (key, value, place) in &values {
        match apply(&mut c, key, value) {
            Ok(None) => {}
            Ok(Some(why)) => {
                ignored.push(IgnoredOption { key: key.clone(), value: value.clone(), why: why.into() })
            }
            Err(why) => return Err(ConfigError(format!("{key}: '{value}' ({place}): {why}"))),
        }
    }
    Ok(LoadedCheckpoint { config: c, ignored, builtin_ranks: builtin.map(|b| b.ranks) })
}

const NO_IO: &str = "changes no I/O";
const NO_TRAINING: &str = "a training setting; 'iolab ai checkpoint' runs no training";

/// Applies `key` = `value` to `c`: `Ok(None)` set, `Ok(Some(why))` ignored, `Err(why)` refused.
fn apply(c: &mut CheckpointConfig, key: &str, value: &str) -> Result<Option<&'static str>, String> {
    let (m, p) = (&mut c.model, &mut c.parallelism);
    match key {
        "model.name" if !value.is_empty() => c.name = value.to_string(),
        "model.type" => one_of(value, &["transformer"], "iolab computes the shards of transformer models")?,
        "model.num_layers" => m.num_layers = whole(value, 1, 1 << 16)?,
        "model.model_datatype" => (m.model_bytes, c.datatypes.0) = (datatype(value)?, value.into()),
        "model.optimizer_datatype" => (m.optimizer_bytes, c.datatypes.1) = (datatype(value)?, value.into()),
        "model.parallelism.tensor" => p.tensor = whole(value, 1, 1 << 16)?,
        "model.parallelism.pipeline" => p.pipeline = whole(value, 1, 1 << 16)?,
        "model.parallelism.data" => p.data = whole(value, 1, 1 << 20)?,
        "model.parallelism.zero_stage" => p.zero_stage = whole(value, 0, 3)?,
        "model.transformer.vocab_size" => m.vocab = whole(value, 1, 1 << 24)?,
        "model.transformer.hidden_size" => m.hidden = whole(value, 1, 1 << 20)?,
        "model.transformer.ffn_hidden_size" => m.ffn = whole(value, 1, 1 << 22)?,
        "model.transformer.num_attention_heads" => m.heads = whole(value, 1, 1 << 16)?,
        "model.transformer.num_kv_heads" => m.kv_heads = whole(value, 1, 1 << 16)?,
        "checkpoint.num_checkpoints_write" => c.writes = count(value)?,
        "checkpoint.num_checkpoints_read" => c.reads = count(value)?,
        "checkpoint.fsync" => c.fsync = boolean(value)?,
        "checkpoint.rank_sync" => c.rank_sync = boolean(value)?,
        "checkpoint.odirect" => c.odirect = boolean(value)?,
        "checkpoint.time_between_checkpoints" => c.between_s = seconds(value)?,
        "checkpoint.mode" => {
            c.subset = match value {
                "default" => false,
                "subset" => true,
                _ => return Err("expected default or subset".into()),
            }
        }
        "workflow.checkpoint" if !boolean(value)? => {
            return Err("'iolab ai checkpoint' writes checkpoints; this workload writes none".into())
        }
        "workflow.train" if boolean(value)? => return Err(
            "checkpoints taken during training are not run by iolab yet; --param workflow.train=False writes and reads them back to back, as DLIO's checkpoint-only workflow does".into(),
        ),
        "workflow.checkpoint" | "workflow.train" => {}
        "checkpoint.randomize_tensor" if !boolean(value)? => {
            return Err("iolab writes random (incompressible) tensors; DLIO's torch.ones would flatter a compressing or deduplicating storage".into())
        }
        _ => return other(key),
    }
    Ok(None)
}

/// The keys that name, describe or tune what iolab does not run, and the keys refused outright.
fn other(key: &str) -> Result<Option<&'static str>, String> {
    let section = key.split('.').next().unwrap_or(key);
    Ok(Some(match key {
        "framework" => "iolab writes the tensors' bytes itself; torch.save's container adds a few KiB a file",
        "checkpoint.checkpoint_folder" => "the checkpoints go in --data-dir",
        "checkpoint.randomize_tensor" => "iolab's tensors are random",
        "checkpoint.type" => "DLIO's checkpointing by model parallelism does not read it",
        "checkpoint.recovery_rank_shift" => {
            "a rank reads another host's files; one host here (DLIO's config never sets it: it reads 'recovery_rank_shift' into a misspelt field)"
        }
        "checkpoint.steps_between_checkpoints"
        | "checkpoint.checkpoint_after_epoch"
        | "checkpoint.epochs_between_checkpoints" => {
            "when checkpoints fall in training; here they are written back to back, as DLIO's checkpoint-only workflow does"
        }
        "workflow.generate_data" | "workflow.profiling" | "workflow.debug" => NO_IO,
        _ if key.starts_with("checkpoint.ksm.") => "memory sharing of DLIO's tensors; iolab holds none",
        _ if matches!(section, "output" | "profiling" | "hydra") => NO_IO,
        _ if matches!(section, "dataset" | "reader" | "train" | "metric" | "evaluation") => NO_TRAINING,
        "model.model_size_bytes" | "model.optimization_groups" | "model.layer_parameters" => {
            return Err("predefined tensor sizes (DLIO's older models) are not written yet; iolab computes a transformer's shards from model.num_layers and model.transformer.*".into())
        }
        _ => return Err("not an option of DLIO's checkpoint workloads that iolab knows".into()),
    }))
}

fn whole(v: &str, lo: u64, hi: u64) -> Result<u64, String> {
    match v.parse::<u64>() {
        Ok(n) if (lo..=hi).contains(&n) => Ok(n),
        _ => Err(format!("expected a whole number in {lo}..={hi}")),
    }
}

/// A count of checkpoints: DLIO's -1 (unset) is 0.
fn count(v: &str) -> Result<u64, String> {
    match v.parse::<i64>() {
        Ok(n) if (-1..=10_000).contains(&n) => Ok(n.max(0) as u64),
        _ => Err("expected a whole number in 0..=10000 (or -1, none)".into()),
    }
}

fn datatype(v: &str) -> Result<u64, String> {
    match v {
        "int8" | "uint8" => Ok(1),
        "fp16" | "bf16" => Ok(2),
        "fp32" => Ok(4),
        "fp64" => Ok(8),
        _ => Err("expected a data type: int8, uint8, fp16, bf16, fp32 or fp64".into()),
    }
}

fn seconds(v: &str) -> Result<f64, String> {
    match v.parse::<f64>() {
        Ok(s) if (0.0..=3600.0).contains(&s) => Ok(s),
        Ok(s) if s < 0.0 => Ok(0.0), // DLIO's -1: none
        _ => Err("expected seconds, 0 to 3600".into()),
    }
}

fn boolean(v: &str) -> Result<bool, String> {
    match v {
        "True" | "true" | "1" | "yes" => Ok(true),
        "False" | "false" | "0" | "no" => Ok(false),
        _ => Err("expected True or False".into()),
    }
}

fn one_of(v: &str, good: &[&str], why: &str) -> Result<(), String> {
    if good.contains(&v) {
        Ok(())
    } else {
        Err(format!("{why}; expected {}", good.join(" or ")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> String {
        format!("{}/tests/fixtures/dlio/{name}.yaml", env!("CARGO_MANIFEST_DIR"))
    }

    #[test]
    fn mlperf_storage_llama3_files_read_as_dlio_reads_them() {
        for (f, layers, tp, pp, zero) in [
            ("mlc_llama3_8b", 32, 1, 1, 3),
            ("mlc_llama3_70b", 80, 8, 1, 3),
            ("mlc_llama3_405b", 126, 8, 32, 1),
            ("mlc_llama3_1t", 128, 8, 64, 1),
        ] {
            let l = load(&fixture(f), &[]).unwrap();
            let c = &l.config;
            assert_eq!(c.model.num_layers, layers, "{f}");
            assert_eq!(
                (c.parallelism.tensor, c.parallelism.pipeline, c.parallelism.zero_stage),
                (tp, pp, zero)
            );
            assert_eq!((c.writes, c.reads, c.fsync, c.between_s), (10, 10, true, 5.0), "{f}");
            let ignored: Vec<&str> = l.ignored.iter().map(|i| i.key.as_str()).collect();
            assert_eq!(
                ignored,
                ["framework", "workflow.generate_data", "checkpoint.checkpoint_folder"],
                "{f}"
            );
        }
    }

    #[test]
    fn what_iolab_does_not_do_is_refused_by_name() {
        let e = load(&fixture("dlio_llama_1t"), &[]).unwrap_err().0;
        assert!(e.starts_with("workflow.train: 'True' (line 23 of dlio_llama_1t.yaml)"), "{e}");
        let e = load(&fixture("dlio_megatron_deepspeed_LLNL"), &[]).unwrap_err().0;
        assert!(e.starts_with("model.type: 'megatron_deepspeed' (line 4 of"), "{e}");
        let e = load("tiny", &["checkpoint.randomize_tensor=False".into()]).unwrap_err().0;
        assert!(e.contains("(--param checkpoint.randomize_tensor=False)"), "{e}");
    }

    #[test]
    fn subset_mode_runs_one_host_s_share_as_mlpstorage_asks_it() {
        // mlpstorage on one host: llama3-405b with checkpoint.mode=subset, model.parallelism.data=2 and 8
        // processes: ranks 0-7 are stage 0's tensor ranks of data-parallel rank 0, each writing the
        // embedding and layers 1-4 (3,713,269,760 bytes) and its optimizer share (9,513,171,840 bytes, the
        // parameters over all 512 ranks: shards.rs works both out).
        let params = ["checkpoint.mode=subset".to_string(), "model.parallelism.data=2".to_string()];
        let mut c = load("llama3-405b", &params).unwrap().config;
        c.ranks = 8;
        c.check().unwrap();
        let plan = crate::checkpoint::run::ShardPlan::of(&c);
        assert_eq!(plan.parallelism.data, 2);
        assert_eq!(plan.bytes(), 8 * (3_713_269_760 + 9_513_171_840));
        c.ranks = 513;
        assert!(c.check().unwrap_err().0.contains("subset mode runs at most TP x PP x DP = 512 ranks"));
    }

    #[test]
    fn dlio_refusals_are_iolab_refusals() {
        let mut c = load("tiny", &[]).unwrap().config;
        c.ranks = 3;
        assert!(c.check().unwrap_err().0.contains("'--num-accelerators': expected a multiple of TP x PP"));
        c.ranks = 4;
        c.reads = c.writes + 1;
        assert!(c.check().unwrap_err().0.contains("is more than checkpoint.num_checkpoints_write"));
        let c = load("tiny", &["model.parallelism.data=2".into()]).unwrap().config;
        assert!(c.check().unwrap_err().0.contains("only taken with checkpoint.mode=subset"));
    }
}
