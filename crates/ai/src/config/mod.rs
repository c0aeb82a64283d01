//! A training workload as DLIO describes it: a workload YAML file (dlio_benchmark's
//! `configs/workload/*.yaml`, mlcommons/storage's `configs/dlio/workload/*.yaml`) or a built-in one, with
//! `--param KEY=VALUE` over it in DLIO's dotted keys. Every key is one of three things (`keys`): honoured
//! (it sets [`TrainConfig`]), ignored (it changes no I/O: listed in the document with why), or refused by
//! name (it would change the I/O in a way iolab does not do yet), as fio job files are imported.

pub mod builtin;
mod keys;
pub mod yaml;

use iolab_report::ai::IgnoredOption;

/// What a training run reads, and how.
#[derive(Clone, Debug, PartialEq)]
pub struct TrainConfig {
    /// The workload's name (`model.name`, else the built-in's or the file's).
    pub name: String,
    /// `built-in unet3d` or the file's path.
    pub source: String,
    /// The files' format.
    pub format: DataFormat,
    /// Training files (`dataset.num_files_train`).
    pub num_files: u64,
    /// Samples per file (`dataset.num_samples_per_file`).
    pub samples_per_file: u64,
    /// Mean bytes of a sample (`dataset.record_length_bytes`).
    pub record_length: u64,
    /// Its standard deviation across files (`dataset.record_length_bytes_stdev`).
    pub record_stdev: u64,
    /// Subdirectories the files are spread over (`dataset.num_subfolders_train`; 0: none).
    pub subfolders: u64,
    /// Samples per step per accelerator (`reader.batch_size`).
    pub batch_size: u64,
    /// Reader threads per accelerator (`reader.read_threads`; 0: the accelerator's thread reads).
    pub read_threads: u64,
    /// Batches a reader thread may hold ready (`reader.prefetch_size`).
    pub prefetch: u64,
    /// `reader.file_shuffle`.
    pub file_shuffle: Shuffle,
    /// `reader.sample_shuffle`.
    pub sample_shuffle: Shuffle,
    /// `reader.odirect`.
    pub odirect: bool,
    /// `train.epochs`.
    pub epochs: u64,
    /// Seconds of computation per step (`train.computation_time`).
    pub computation_s: f64,
    /// Its standard deviation (`train.computation_time_stdev`).
    pub computation_stdev_s: f64,
    /// `train.seed`; `None`: a fresh one.
    pub seed: Option<u64>,
    /// `train.seed_change_epoch`: each epoch shuffles with seed + epoch.
    pub seed_change_epoch: bool,
    /// `metric.au`, a fraction.
    pub min_au: Option<f64>,
    /// Simulated accelerators (`--num-accelerators`).
    pub accelerators: u64,
    /// Bytes a streamed format is read in (`reader.transfer_size`; TensorFlow's 256 KiB by default).
    pub transfer_size: Option<u64>,
}

impl Default for TrainConfig {
    /// DLIO's defaults where it has one (its `ConfigArguments`), npz where it writes tfrecord.
    fn default() -> TrainConfig {
        TrainConfig {
            name: "default".into(),
            source: String::new(),
            format: DataFormat::Npz,
            num_files: 8,
            samples_per_file: 1,
            record_length: 65536,
            record_stdev: 0,
            subfolders: 0,
            batch_size: 1,
            read_threads: 1,
            prefetch: 2,
            file_shuffle: Shuffle::Off,
            sample_shuffle: Shuffle::Off,
            odirect: false,
            epochs: 1,
            computation_s: 0.0,
            computation_stdev_s: 0.0,
            seed: None,
            seed_change_epoch: true,
            min_au: None,
            accelerators: 1,
            transfer_size: None,
        }
    }
}

/// A dataset file format iolab writes and reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DataFormat {
    /// NumPy's `.npz`: a zip of `.npy` arrays (`x`: the samples, `y`: their labels), stored.
    Npz,
    /// NumPy's `.npy`: one array of the samples.
    Npy,
    /// TensorFlow's TFRecord: a record per sample, read by DLIO's TensorFlow reader as a stream.
    Tfrecord,
}

impl DataFormat {
    /// As DLIO names it.
    pub fn name(self) -> &'static str {
        match self {
            DataFormat::Npz => "npz",
            DataFormat::Npy => "npy",
            DataFormat::Tfrecord => "tfrecord",
        }
    }

    /// Read as a stream of records, file by file (DLIO's TFRecord reader), rather than by sample index.
    pub fn streamed(self) -> bool {
        self == DataFormat::Tfrecord
    }
}

/// DLIO's shuffle setting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shuffle {
    /// In order.
    Off,
    /// Shuffled with the run's seed.
    Seed,
    /// Shuffled with a fresh seed (iolab draws it and prints it like any seed).
    Random,
}

impl Shuffle {
    /// As DLIO writes it.
    pub fn name(self) -> &'static str {
        match self {
            Shuffle::Off => "off",
            Shuffle::Seed => "seed",
            Shuffle::Random => "random",
        }
    }
}

/// A workload read: its settings and the options it left out.
#[derive(Clone, Debug)]
pub struct LoadedWorkload {
    /// The settings.
    pub config: TrainConfig,
    /// Options that change no I/O.
    pub ignored: Vec<IgnoredOption>,
}

/// Why a workload is not run; always the user's input (exit 2).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct ConfigError(pub String);

/// Where a value came from, for messages: `line 12 of unet3d.yaml` or `--param`.
#[derive(Clone, Debug)]
struct Place(String);

/// Reads `config` (a workload file's path or a built-in's name) with `params` (`KEY=VALUE`, DLIO's dotted
/// keys) over it.
pub fn load(config: &str, params: &[String]) -> Result<LoadedWorkload, ConfigError> {
    let (text, source, file) = source_text(config)?;
    let mut values: Vec<(String, String, Place)> = yaml::entries(&text)
        .map_err(|e| ConfigError(format!("{source}: {e}")))?
        .into_iter()
        .map(|e| (e.key, e.value, Place(format!("line {} of {file}", e.line))))
        .collect();
    for p in params {
        let Some((k, v)) = p.split_once('=') else {
            return Err(ConfigError(format!(
                "invalid value '{p}' for '--param': expected KEY=VALUE (e.g. dataset.num_files_train=64)"
            )));
        };
        let k = k.trim().trim_start_matches("++").trim_start_matches("workload.");
        values.retain(|(key, _, _)| key != k);
        values.push((k.to_string(), v.trim().to_string(), Place(format!("--param {p}"))));
    }
    let mut config = TrainConfig {
        name: builtin_name(config).unwrap_or(&file).to_string(),
        source,
        ..TrainConfig::default()
    };
    let mut ignored = Vec::new();
    for (key, value, place) in &values {
        match keys::apply(&mut config, key, value) {
            keys::KeyOutcome::Set => {}
            keys::KeyOutcome::Ignored(why) => {
                ignored.push(IgnoredOption { key: key.clone(), value: value.clone(), why: why.into() })
            }
            keys::KeyOutcome::Refused(why) => {
                return Err(ConfigError(format!("{key}: '{value}' ({}): {why}", place.0)));
            }
        }
    }
    if config.transfer_size.is_some() && !config.format.streamed() {
        let (key, value, _) = values.iter().rev().find(|(k, _, _)| k == "reader.transfer_size").expect("set");
        ignored.push(IgnoredOption {
            key: key.clone(),
            value: value.clone(),
            why: "only DLIO's TFRecord reader reads in transfers of this size".into(),
        });
        config.transfer_size = None;
    }
    keys::check_together(
        &config,
        &values.iter().map(|(k, v, _)| (k.as_str(), v.as_str())).collect::<Vec<_>>(),
    )
    .map_err(ConfigError)?;
    Ok(LoadedWorkload { config, ignored })
}

fn builtin_name(config: &str) -> Option<&str> {
    builtin::builtin(config).map(|_| config)
}

/// The YAML of `config`, what to call it in the document, and in messages.
fn source_text(config: &str) -> Result<(String, String, String), ConfigError> {
    let path = std::path::Path::new(config);
    if path.is_file() {
        let text = std::fs::read_to_string(path)
            .map_err(|e| ConfigError(format!("cannot read the workload file '{config}': {e}")))?;
        let file = path.file_name().map_or(config.to_string(), |f| f.to_string_lossy().into_owned());
        return Ok((text, config.to_string(), file));
    }
    match builtin::builtin(config) {
        Some(text) => Ok((text.to_string(), format!("built-in {config}"), format!("built-in {config}"))),
        None => {
            let names: Vec<&str> = builtin::BUILTINS.iter().map(|(n, _)| *n).collect();
            Err(ConfigError(format!(
                "invalid value '{config}' for 'CONFIG': not a file, nor a built-in workload ({})",
                names.join(", ")
            )))
        }
    }
}

#[cfg(test)]
mod tests;
