//! The training dataset, generated as DLIO generates it: `num_files_train` files of `num_samples_per_file`
//! samples, each file's sample size drawn from a normal distribution (`record_length_bytes`, its
//! `_stdev`), under `train/` (spread over `num_subfolders_train` subdirectories, file `i` in `i mod n`),
//! named as DLIO names them (`img_3_of_16.npz`). Each file is synced and dropped from the page cache when
//! written, so the first epoch reads the storage, not memory.

use crate::config::{DataFormat, TrainConfig};
use crate::format::{self, SampleLayout, NPZ_MAX_BYTES};
use crate::AiError;
use iolab_rng::Rng;
use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// One file of the dataset.
#[derive(Clone, Debug)]
pub struct DataFile {
    /// Its path.
    pub path: PathBuf,
    /// Where its samples are.
    pub layout: SampleLayout,
}

/// The dataset generated.
#[derive(Clone, Debug, Default)]
pub struct Dataset {
    /// Its files, in their order (file `i` is `img_{i+1}_of_{n}`).
    pub files: Vec<DataFile>,
}

impl Dataset {
    /// Bytes on disk.
    pub fn bytes(&self) -> u64 {
        self.files.iter().map(|f| f.layout.file_len).sum()
    }
}

/// Each file's sample size, drawn from the seed (at least 1 byte).
pub fn sample_sizes(c: &TrainConfig, seed: u64) -> Vec<u64> {
    let mut rng = Rng::for_worker(seed, u32::MAX);
    (0..c.num_files)
        .map(|_| {
            let z = normal(&mut rng);
            (c.record_length as f64 + z * c.record_stdev as f64).round().max(1.0) as u64
        })
        .collect()
}

/// A standard normal draw (Box-Muller).
pub fn normal(rng: &mut Rng) -> f64 {
    let u1 = rng.unit_f64().max(f64::MIN_POSITIVE);
    let u2 = rng.unit_f64();
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

/// The bytes the dataset will take, before anything is written.
pub fn planned_bytes(c: &TrainConfig, seed: u64) -> u64 {
    sample_sizes(c, seed).iter().map(|&len| format::layout(c.format, c.samples_per_file, len).file_len).sum()
}

/// Writes the dataset into `dir`; `written(files so far)` after each file. A raised `stop` ends it with
/// [`AiError::Interrupted`].
pub fn generate(
    c: &TrainConfig,
    dir: &Path,
    seed: u64,
    stop: &AtomicBool,
    written: &dyn Fn(u64),
) -> Result<Dataset, AiError> {
    let sizes = sample_sizes(c, seed);
    let largest = sizes.iter().max().copied().unwrap_or(0);
    if c.format == DataFormat::Npz
        && format::layout(c.format, c.samples_per_file, largest).file_len > NPZ_MAX_BYTES
    {
        return Err(AiError::Config(format!(
            "dataset: a file of {} samples of up to {largest} bytes is over 4 GiB, which an npz without ZIP64 cannot hold; use fewer samples per file or dataset.format=npy",
            c.samples_per_file
        )));
    }
    let mut files = Vec::with_capacity(sizes.len());
    for (i, &len) in sizes.iter().enumerate() {
        if stop.load(Ordering::Relaxed) {
            return Err(AiError::Interrupted);
        }
        let sub = if c.subfolders > 0 {
            dir.join("train").join((i as u64 % c.subfolders).to_string())
        } else {
            dir.join("train")
        };
        std::fs::create_dir_all(&sub).map_err(|e| AiError::io(format!("making '{}'", sub.display()), e))?;
        let path = sub.join(format!("img_{}_of_{}.{}", i + 1, c.num_files, c.format.name()));
        let mut rng = Rng::for_worker(seed, i as u32);
        let layout = write_one(&path, c, len, &mut rng)?;
        files.push(DataFile { path, layout });
        written(i as u64 + 1);
    }
    Ok(Dataset { files })
}

/// Writes, syncs and drops one file from the page cache.
fn write_one(path: &Path, c: &TrainConfig, len: u64, rng: &mut Rng) -> Result<SampleLayout, AiError> {
    let err = |e| AiError::io(format!("writing '{}'", path.display()), e);
    let mut f = File::options().write(true).create_new(true).open(path).map_err(err)?;
    let layout = format::write(&mut f, c.format, c.samples_per_file, len, rng).map_err(err)?;
    f.sync_all().map_err(err)?;
    drop_cached(&f);
    Ok(layout)
}

/// Asks the kernel to drop `f`'s pages from the page cache (synced first, so they are clean).
pub fn drop_cached(f: &File) {
    // SAFETY: posix_fadvise takes a descriptor this `File` owns and plain integers; it reads no memory of ours.
    unsafe {
        libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_follow_the_mean_and_stdev_and_the_seed() {
        let c = TrainConfig {
            num_files: 2000,
            record_length: 100_000,
            record_stdev: 10_000,
            ..TrainConfig::default()
        };
        let s = sample_sizes(&c, 7);
        assert_eq!(s, sample_sizes(&c, 7));
        let mean = s.iter().sum::<u64>() as f64 / s.len() as f64;
        assert!((mean - 100_000.0).abs() < 1_000.0, "{mean}");
        let flat = TrainConfig { record_stdev: 0, ..c };
        assert!(sample_sizes(&flat, 7).iter().all(|&x| x == 100_000));
    }

    #[test]
    fn a_dataset_is_files_of_their_planned_size() {
        let t = tempfile::tempdir().unwrap();
        let c = TrainConfig {
            num_files: 3,
            samples_per_file: 2,
            record_length: 5000,
            subfolders: 2,
            ..TrainConfig::default()
        };
        let d = generate(&c, t.path(), 1, &AtomicBool::new(false), &|_| {}).unwrap();
        assert_eq!(d.bytes(), planned_bytes(&c, 1));
        assert!(t.path().join("train/0/img_1_of_3.npz").is_file());
        assert!(t.path().join("train/1/img_2_of_3.npz").is_file());
        assert_eq!(std::fs::metadata(&d.files[2].path).unwrap().len(), d.files[2].layout.file_len);
    }
}
