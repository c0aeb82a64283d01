//! The built-in checkpoint workloads, written as DLIO workload files and read by the same reader as a user's:
//! `tiny` (the default: a 1.2 M-parameter transformer on 8 ranks, about 17 MiB a checkpoint, for the README and
//! the tests) and MLPerf Storage's llama3 workloads, mlcommons/storage `configs/dlio/workload/llama3_*.yaml`
//! (caa90c9) unchanged, each with the CLOSED division's rank count (mlpstorage's `LLM_ALLOWED_VALUES`): they are
//! MLPerf-Storage-compatible workloads, not MLPerf results.

/// A built-in workload.
pub struct Builtin {
    /// Its name.
    pub name: &'static str,
    /// Its DLIO workload file.
    pub yaml: &'static str,
    /// Its ranks when `--num-accelerators` is not given.
    pub ranks: u64,
}

/// Every built-in checkpoint workload.
pub const BUILTINS: &[Builtin] = &[
    Builtin { name: "tiny", yaml: TINY, ranks: 8 },
    Builtin { name: "llama3-8b", yaml: LLAMA3_8B, ranks: 8 },
    Builtin { name: "llama3-70b", yaml: LLAMA3_70B, ranks: 64 },
    Builtin { name: "llama3-405b", yaml: LLAMA3_405B, ranks: 512 },
    Builtin { name: "llama3-1t", yaml: LLAMA3_1T, ranks: 1024 },
];

/// The built-in `name`.
pub fn builtin(name: &str) -> Option<&'static Builtin> {
    BUILTINS.iter().find(|b| b.name == name)
}

const TINY: &str = "\
model:
  name: tiny
  type: transformer
  num_layers: 4
  model_datatype: fp16
  optimizer_datatype: fp32
  parallelism:
    tensor: 2
    pipeline: 2
    zero_stage: 1
  transformer:
    vocab_size: 1024
    hidden_size: 128
    ffn_hidden_size: 512
    num_attention_heads: 8
    num_kv_heads: 4
workflow:
  generate_data: False
  train: False
  checkpoint: True
checkpoint:
  num_checkpoints_write: 2
  num_checkpoints_read: 2
  fsync: True
";

const LLAMA3_8B: &str = "\
model:
  name: llama_8b
  type: transformer
  num_layers: 32
  model_datatype: fp16
  optimizer_datatype: fp32
  parallelism:
    pipeline: 1
    tensor: 1
    zero_stage: 3
  transformer:
    vocab_size: 128256
    hidden_size: 4096
    ffn_hidden_size: 14336
    num_attention_heads: 32
    num_kv_heads: 8

framework: pytorch

workflow:
  generate_data: False
  train: False
  checkpoint: True

checkpoint:
  checkpoint_folder: checkpoints/llama_8b
  time_between_checkpoints: 5
  num_checkpoints_write: 10
  num_checkpoints_read: 10
  fsync: True
";

const LLAMA3_70B: &str = "\
model:
  name: llama_70b
  type: transformer
  num_layers: 80
  model_datatype: fp16
  optimizer_datatype: fp32
  parallelism:
    tensor: 8
    pipeline: 1
    zero_stage: 3
  transformer:
    vocab_size: 128256
    hidden_size: 8192
    ffn_hidden_size: 28672
    num_attention_heads: 128
    num_kv_heads: 8

framework: pytorch

workflow:
  generate_data: False
  train: False
  checkpoint: True

checkpoint:
  checkpoint_folder: checkpoints/llama_70b
  time_between_checkpoints: 5
  num_checkpoints_write: 10
  num_checkpoints_read: 10
  fsync: True
";

const LLAMA3_405B: &str = "\
model:
  name: llama_405b
  type: transformer
  num_layers: 126
  model_datatype: fp16
  optimizer_datatype: fp32
  parallelism:
    tensor: 8
    pipeline: 32
    zero_stage: 1
  transformer:
    vocab_size: 128256
    hidden_size: 16384
    ffn_hidden_size: 53248
    num_attention_heads: 128
    num_kv_heads: 8

framework: pytorch

workflow:
  generate_data: False
  train: False
  checkpoint: True

checkpoint:
  checkpoint_folder: checkpoints/llama_405b
  time_between_checkpoints: 5
  num_checkpoints_write: 10
  num_checkpoints_read: 10
  fsync: True
";

const LLAMA3_1T: &str = "\
model:
  name: llama_1t
  type: transformer
  num_layers: 128
  model_datatype: fp16
  optimizer_datatype: fp32
  parallelism:
    tensor: 8
    pipeline: 64
    zero_stage: 1
  transformer:
    vocab_size: 128256
    hidden_size: 25872
    ffn_hidden_size: 98304
    num_attention_heads: 192
    num_kv_heads: 32

framework: pytorch

workflow:
  generate_data: False
  train: False
  checkpoint: True

checkpoint:
  checkpoint_folder: checkpoints/llama_1t
  time_between_checkpoints: 5
  num_checkpoints_write: 10
  num_checkpoints_read: 10
  fsync: True
";
