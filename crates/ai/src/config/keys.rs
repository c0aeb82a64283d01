//! Every DLIO workload key iolab knows, and what it does with each: one `match`, so the honoured, the
//! ignored and the refused are read in one place (docs/AI.md has the table).

use super::{DataFormat, Shuffle, TrainConfig};

/// What a key does.
pub enum KeyOutcome {
    /// It set the configuration.
    Set,
    /// It changes no I/O: why.
    Ignored(&'static str),
    /// iolab does not do what it asks: why.
    Refused(String),
}

const NO_IO: &str = "changes no I/O";
const LOADER: &str = "the Python loader DLIO emulates; iolab reads the same bytes itself";
const NOT_RUN: &str = "what it configures is not run";

/// Applies `key` = `value` to `c`.
pub fn apply(c: &mut TrainConfig, key: &str, value: &str) -> KeyOutcome {
    let r = match key {
        "model.name" => text(value).map(|v| c.name = v),
        "dataset.format" => format(value).map(|f| c.format = f),
        "dataset.num_files_train" => whole(value, 1, 1 << 32).map(|v| c.num_files = v),
        "dataset.num_samples_per_file" => whole(value, 1, 1 << 32).map(|v| c.samples_per_file = v),
        "dataset.record_length_bytes" | "dataset.record_length" => {
            bytes(value, 1).map(|v| c.record_length = v)
        }
        "dataset.record_length_bytes_stdev" | "dataset.record_length_stdev" => {
            bytes(value, 0).map(|v| c.record_stdev = v)
        }
        "dataset.num_subfolders_train" => whole(value, 0, 1 << 20).map(|v| c.subfolders = v),
        "reader.batch_size" => whole(value, 1, 1 << 20).map(|v| c.batch_size = v),
        "reader.read_threads" => whole(value, 0, 256).map(|v| c.read_threads = v),
        "reader.prefetch_size" => whole(value, 1, 1024).map(|v| c.prefetch = v),
        "reader.file_shuffle" => shuffle(value).map(|s| c.file_shuffle = s),
        "reader.sample_shuffle" => shuffle(value).map(|s| c.sample_shuffle = s),
        "reader.odirect" => boolean(value).map(|b| c.odirect = b),
        "reader.transfer_size" => whole(value, 1, 1 << 30).map(|v| c.transfer_size = Some(v)),
        "train.epochs" => whole(value, 1, 1 << 20).map(|v| c.epochs = v),
        "train.computation_time" => seconds(value).map(|v| c.computation_s = v),
        "train.computation_time_stdev" => seconds(value).map(|v| c.computation_stdev_s = v),
        "train.seed" => whole(value, 0, u64::MAX).map(|v| c.seed = Some(v)),
        "train.seed_change_epoch" => boolean(value).map(|b| c.seed_change_epoch = b),
        "metric.au" => fraction(value).map(|v| c.min_au = Some(v)),
        "workflow.train" => match boolean(value) {
            Ok(true) => return KeyOutcome::Set,
            Ok(false) => {
                Err("'iolab ai train' trains; this workload does not (workflow.train: False)".into())
            }
            Err(e) => Err(e),
        },
        "workflow.evaluation" => match boolean(value) {
            Ok(false) => return KeyOutcome::Ignored(NOT_RUN),
            Ok(true) => {
                Err("evaluation is not run by iolab yet; --param workflow.evaluation=False trains alone"
                    .into())
            }
            Err(e) => Err(e),
        },
        // Checked with the epochs in `check_together`.
        "workflow.checkpoint" => boolean(value).map(|_| ()),
        "reader.read_type" => one_of(value, &["on_demand"], "iolab reads on demand"),
        "reader.file_access" => {
            one_of(value, &["multi"], "iolab opens a file per sample read (DLIO's multi)")
        }
        "dataset.compression" => one_of(value, &["none", "None"], "iolab writes uncompressed files"),
        "storage.storage_type" => {
            one_of(value, &["local_fs"], "iolab reads a local file system (--data-dir)")
        }
        k => return other(k),
    };
    match r {
        Ok(()) => KeyOutcome::Set,
        Err(why) => KeyOutcome::Refused(why),
    }
}

/// Keys that only name, describe or tune what iolab does not run, and keys refused outright.
fn other(key: &str) -> KeyOutcome {
    let section = key.split('.').next().unwrap_or(key);
    match key {
        "framework"
        | "reader.data_loader"
        | "reader.data_loader_classname"
        | "reader.reader_classname"
        | "reader.computation_threads"
        | "reader.pin_memory"
        | "reader.multiprocessing_context"
        | "reader.dont_use_mmap"
        | "reader.data_loader_sampler" => KeyOutcome::Ignored(LOADER),
        "reader.shuffle_size" => KeyOutcome::Ignored(
            "a TensorFlow shuffle buffer; iolab's sample_shuffle shuffles the whole epoch",
        ),
        "dataset.record_length_bytes_resize"
        | "dataset.record_length_resize"
        | "reader.transformed_record_dims"
        | "reader.transformed_record_element_type" => {
            KeyOutcome::Ignored("the size a sample is resized to in memory, after it is read")
        }
        "dataset.data_folder" | "storage.storage_root" => {
            KeyOutcome::Ignored("the dataset goes in --data-dir")
        }
        "dataset.file_prefix" | "dataset.keep_files" | "dataset.generation_buffer_size" => {
            KeyOutcome::Ignored("names or generation only; iolab generates the dataset and removes it")
        }
        "workflow.generate_data" => {
            KeyOutcome::Ignored("iolab always generates the dataset in --data-dir, and removes it after")
        }
        "workflow.profiling"
        | "workflow.debug"
        | "profiling.profiler"
        | "profiling.iostat_devices"
        | "output.folder"
        | "output.log_file"
        | "output.metric"
        | "dataset.num_files_eval"
        | "dataset.num_subfolders_eval"
        | "reader.batch_size_eval" => KeyOutcome::Ignored(NO_IO),
        _ if matches!(section, "model" | "checkpoint" | "evaluation" | "hydra") => {
            KeyOutcome::Ignored(NOT_RUN)
        }
        "reader.preprocess_time"
        | "reader.preprocess_time_stdev"
        | "train.total_training_steps"
        | "dataset.record_dims"
        | "dataset.record_element_bytes"
        | "dataset.record_element_type"
        | "dataset.enable_chunking"
        | "dataset.chunk_size"
        | "dataset.compression_level"
        | "storage.storage_options" => {
            KeyOutcome::Refused("it changes the I/O in a way iolab does not do yet".into())
        }
        _ => KeyOutcome::Refused("not an option of DLIO's workload files that iolab knows".into()),
    }
}

/// What keys say together: a checkpoint that would fall within the epochs run is refused, naming the key.
pub fn check_together(c: &TrainConfig, values: &[(&str, &str)]) -> Result<(), String> {
    let get = |k: &str| values.iter().rev().find(|(key, _)| *key == k).map(|(_, v)| *v);
    if get("workflow.checkpoint").map(boolean) != Some(Ok(true)) {
        return Ok(());
    }
    for k in ["checkpoint.steps_between_checkpoints", "checkpoint.time_between_checkpoints"] {
        if let Some(v) = get(k) {
            return Err(format!(
                "workflow.checkpoint: 'True' with {k}: {v}: checkpoints are not written by 'iolab ai train' yet; --param workflow.checkpoint=False trains alone"
            ));
        }
    }
    let after = get("checkpoint.checkpoint_after_epoch").and_then(|v| v.parse::<u64>().ok()).unwrap_or(1);
    if after <= c.epochs {
        return Err(format!(
            "workflow.checkpoint: 'True': a checkpoint falls after epoch {after} of the {} epochs run, and checkpoints are not written by 'iolab ai train' yet; --param workflow.checkpoint=False trains alone (or fewer epochs: --param train.epochs={})",
            c.epochs,
            after.saturating_sub(1).max(1)
        ));
    }
    Ok(())
}

fn text(v: &str) -> Result<String, String> {
    if v.is_empty() {
        return Err("expected a name".into());
    }
    Ok(v.to_string())
}

fn format(v: &str) -> Result<DataFormat, String> {
    match v {
        "npz" => Ok(DataFormat::Npz),
        "npy" => Ok(DataFormat::Npy),
        "tfrecord" => Ok(DataFormat::Tfrecord),
        "hdf5" | "csv" | "png" | "jpeg" | "indexed_binary" | "mmap_indexed_binary" | "synthetic" | "parquet" => {
            Err(format!("iolab writes npz, npy and tfrecord datasets so far; {v} is not written yet (--param dataset.format=npz reads the same samples and bytes)"))
        }
        _ => Err("expected a format: npz, npy or tfrecord".into()),
    }
}

fn whole(v: &str, lo: u64, hi: u64) -> Result<u64, String> {
    match v.parse::<u64>() {
        Ok(n) if (lo..=hi).contains(&n) => Ok(n),
        _ => Err(format!("expected a whole number in {lo}..={hi}")),
    }
}

/// Bytes: a number, possibly with a fraction (resnet50's 114660.07), rounded.
fn bytes(v: &str, lo: u64) -> Result<u64, String> {
    match v.parse::<f64>() {
        Ok(b) if b.is_finite() && b.round() >= lo as f64 && b < (1u64 << 40) as f64 => Ok(b.round() as u64),
        _ => Err(format!("expected a number of bytes, at least {lo}, below 1 TiB")),
    }
}

fn seconds(v: &str) -> Result<f64, String> {
    match v.parse::<f64>() {
        Ok(s) if s.is_finite() && (0.0..=3600.0).contains(&s) => Ok(s),
        _ => Err("expected seconds, 0 to 3600".into()),
    }
}

fn fraction(v: &str) -> Result<f64, String> {
    match v.parse::<f64>() {
        Ok(f) if (0.0..=1.0).contains(&f) => Ok(f),
        _ => Err("expected a fraction, 0 to 1 (0.90 for 90 %)".into()),
    }
}

fn boolean(v: &str) -> Result<bool, String> {
    match v {
        "True" | "true" | "1" | "yes" => Ok(true),
        "False" | "false" | "0" | "no" => Ok(false),
        _ => Err("expected True or False".into()),
    }
}

fn shuffle(v: &str) -> Result<Shuffle, String> {
    match v {
        "off" | "Off" | "OFF" | "False" | "false" => Ok(Shuffle::Off),
        "seed" | "Seed" | "SEED" => Ok(Shuffle::Seed),
        "random" | "Random" | "RANDOM" => Ok(Shuffle::Random),
        _ => Err("expected off, seed or random".into()),
    }
}

fn one_of(v: &str, good: &[&str], why: &str) -> Result<(), String> {
    if good.contains(&v) {
        Ok(())
    } else {
        Err(format!("{why}; expected {}", good.join(" or ")))
    }
}
