//! The built-in workloads, written as DLIO workload files and read through the same reader as a user's:
//! `tiny` (a smoke test: 16 files of 256 KiB) and the MLPerf-Storage-compatible training workloads with the
//! parameters of mlcommons/storage's `configs/dlio/workload/*_h100.yaml` (unet3d, resnet50, cosmoflow).
//! resnet50 and cosmoflow read TFRecord files, as MLPerf Storage's do.

/// `(name, YAML)` of each built-in workload.
pub const BUILTINS: &[(&str, &str)] =
    &[("tiny", TINY), ("unet3d", UNET3D), ("resnet50", RESNET50), ("cosmoflow", COSMOFLOW)];

/// The YAML of a built-in workload.
pub fn builtin(name: &str) -> Option<&'static str> {
    BUILTINS.iter().find(|(n, _)| *n == name).map(|(_, y)| *y)
}

const TINY: &str = "\
model:
  name: tiny
dataset:
  format: npz
  num_files_train: 16
  num_samples_per_file: 1
  record_length_bytes: 262144
reader:
  batch_size: 4
  read_threads: 2
  file_shuffle: seed
  sample_shuffle: seed
train:
  epochs: 1
  computation_time: 0.005
metric:
  au: 0.90
";

const UNET3D: &str = "\
model:
  name: unet3d
dataset:
  format: npz
  num_files_train: 168
  num_samples_per_file: 1
  record_length_bytes: 146600628
  record_length_bytes_stdev: 68341808
  record_length_bytes_resize: 2097152
reader:
  batch_size: 7
  read_threads: 4
  file_shuffle: seed
  sample_shuffle: seed
train:
  epochs: 5
  computation_time: 0.323
metric:
  au: 0.90
";

const RESNET50: &str = "\
model:
  name: resnet50
dataset:
  format: tfrecord
  num_files_train: 1024
  num_samples_per_file: 1251
  record_length_bytes: 114660.07
  record_length_bytes_resize: 150528
reader:
  batch_size: 400
  read_threads: 8
train:
  epochs: 5
  computation_time: 0.224
metric:
  au: 0.90
";

const COSMOFLOW: &str = "\
model:
  name: cosmoflow
dataset:
  format: tfrecord
  num_files_train: 524288
  num_samples_per_file: 1
  record_length_bytes: 2828486
  record_length_bytes_stdev: 71311
reader:
  batch_size: 1
  read_threads: 4
  file_shuffle: seed
  sample_shuffle: seed
train:
  epochs: 5
  computation_time: 0.00350
metric:
  au: 0.70
";
