//! Training, as DLIO's PyTorch loader runs it: every epoch, the samples of the dataset in order (files
//! shuffled, then samples, when asked, with the seed plus the epoch), dealt to the accelerators in
//! contiguous shares; each accelerator takes `batch_size` samples a step, the rest dropped. An accelerator
//! is a thread that waits for its next batch and then computes (sleeps `computation_time`, on the real
//! clock); its `read_threads` reader threads read batches ahead, reader `w` the batches `w`, `w + n`, ...,
//! each holding at most `prefetch_size` ready, as a DataLoader's workers do. A sample read opens its file
//! (O_DIRECT when asked) and reads the sample's bytes; its latency goes into an HDR histogram.

use crate::au::TrainStep;
use crate::config::{Shuffle, TrainConfig};
use crate::dataset::{normal, Dataset};
use crate::AiError;
use iolab_rng::Rng;
use iolab_stats::LatencyHistogram;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{sync_channel, Receiver};
use std::sync::Barrier;
use std::time::{Duration, Instant};

/// A sample: its file and its place in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SampleRef {
    /// The file, by its index in the dataset.
    pub file: u32,
    /// The sample in the file.
    pub index: u32,
}

/// The order of the samples in `epoch` (from 1): files in order or shuffled, then the samples of each, the
/// whole list shuffled when samples are.
pub fn epoch_order(c: &TrainConfig, seed: u64, epoch: u64) -> Vec<SampleRef> {
    let epoch_seed = if c.seed_change_epoch { seed.wrapping_add(epoch) } else { seed };
    let mut rng = Rng::new(epoch_seed);
    let mut files: Vec<u32> = (0..c.num_files as u32).collect();
    if c.file_shuffle != Shuffle::Off {
        shuffle(&mut files, &mut rng);
    }
    let mut order: Vec<SampleRef> = files
        .iter()
        .flat_map(|&file| (0..c.samples_per_file as u32).map(move |index| SampleRef { file, index }))
        .collect();
    if c.sample_shuffle != Shuffle::Off {
        shuffle(&mut order, &mut rng);
    }
    order
}

/// The samples accelerator `a` takes in `epoch`, in order: exactly its steps' batches.
pub fn accelerator_samples(c: &TrainConfig, seed: u64, epoch: u64, a: u64) -> Vec<SampleRef> {
    let need = steps_per_epoch(c) as usize * c.batch_size as usize;
    if !c.format.streamed() {
        let share = (c.num_files * c.samples_per_file / c.accelerators) as usize;
        return epoch_order(c, seed, epoch)[a as usize * share..][..need].to_vec();
    }
    let stream = stream_order(c, a);
    assert!(!stream.is_empty() || need == 0, "every accelerator has records to read");
    stream.iter().copied().cycle().take(need).collect()
}

/// The records accelerator `a` reads, as DLIO's TFRecord reader reads them: the files sharded across the
/// accelerators (file `a`, `a + n`, ...; when there are fewer files than accelerators, every file and then
/// every `n`th record), `read_threads` files read at once, a record from each in turn (TensorFlow's
/// `interleave` with `cycle_length = read_threads`), each file's records in order. Files and samples are
/// not shuffled on the storage: DLIO lists the files unshuffled and shuffles samples in memory.
pub fn stream_order(c: &TrainConfig, a: u64) -> Vec<SampleRef> {
    let n = c.accelerators;
    let cycle = c.read_threads.max(1) as usize;
    let per_file = c.samples_per_file as u32;
    if c.num_files >= n {
        let files: Vec<u32> = (a..c.num_files).step_by(n as usize).map(|f| f as u32).collect();
        return interleave(&files, per_file, cycle);
    }
    let files: Vec<u32> = (0..c.num_files as u32).collect();
    interleave(&files, per_file, cycle).into_iter().skip(a as usize).step_by(n as usize).collect()
}

/// `files`' records, `cycle` files at a time, one record from each in turn; a file that ends gives its
/// place to the next.
fn interleave(files: &[u32], per_file: u32, cycle: usize) -> Vec<SampleRef> {
    let mut next = files.iter().copied();
    let mut slots: Vec<SampleRef> =
        next.by_ref().take(cycle).map(|file| SampleRef { file, index: 0 }).collect();
    let mut out = Vec::with_capacity(files.len() * per_file as usize);
    while !slots.is_empty() {
        let mut i = 0;
        while i < slots.len() {
            out.push(slots[i]);
            if slots[i].index + 1 < per_file {
                slots[i].index += 1;
            } else if let Some(file) = next.next() {
                slots[i] = SampleRef { file, index: 0 };
            } else {
                slots.remove(i);
                continue;
            }
            i += 1;
        }
    }
    out
}

/// Fisher-Yates.
fn shuffle<T>(v: &mut [T], rng: &mut Rng) {
    for i in (1..v.len()).rev() {
        v.swap(i, rng.below(i as u64 + 1) as usize);
    }
}

/// Steps each accelerator takes in an epoch.
pub fn steps_per_epoch(c: &TrainConfig) -> u64 {
    c.num_files * c.samples_per_file / c.accelerators / c.batch_size
}

/// What one accelerator did in one epoch.
#[derive(Clone, Debug, Default)]
pub struct AcceleratorEpoch {
    /// Its steps, in order.
    pub steps: Vec<TrainStep>,
    /// When its first step began and its last ended, ns from the training's start.
    pub span_ns: (u64, u64),
    /// Samples it consumed.
    pub samples: u64,
    /// Sample bytes read.
    pub bytes: u64,
}

/// What training did: per epoch, per accelerator; the sample read latencies; the wall-clock time.
pub struct Trained {
    /// `epochs[e][a]`.
    pub epochs: Vec<Vec<AcceleratorEpoch>>,
    /// Every sample read.
    pub latency: LatencyHistogram,
    /// From the start to the last accelerator's end, ns.
    pub elapsed_ns: u64,
    /// Stopped early.
    pub stopped: bool,
}

/// Trains `c` on `data`.
pub fn train(c: &TrainConfig, data: &Dataset, seed: u64, stop: &AtomicBool) -> Result<Trained, AiError> {
    let start = Instant::now();
    let barrier = Barrier::new(c.accelerators as usize);
    let results: Vec<Result<(Vec<AcceleratorEpoch>, LatencyHistogram), AiError>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..c.accelerators)
            .map(|a| {
                let barrier = &barrier;
                std::thread::Builder::new()
                    .name(format!("iolab-ai-accel-{a}"))
                    .spawn_scoped(s, move || accelerator(c, data, seed, a, start, barrier, stop))
                    .expect("spawning an accelerator thread")
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))).collect()
    });
    let elapsed_ns = start.elapsed().as_nanos() as u64;
    let mut epochs: Vec<Vec<AcceleratorEpoch>> = vec![Vec::new(); c.epochs as usize];
    let mut latency = LatencyHistogram::new();
    for r in results {
        let (per_epoch, hist) = r?;
        latency.merge(&hist);
        for (e, ae) in per_epoch.into_iter().enumerate() {
            epochs[e].push(ae);
        }
    }
    epochs.retain(|e| e.iter().any(|a| !a.steps.is_empty()));
    Ok(Trained { epochs, latency, elapsed_ns, stopped: stop.load(Ordering::Relaxed) })
}

/// One accelerator's epochs.
fn accelerator(
    c: &TrainConfig,
    data: &Dataset,
    seed: u64,
    a: u64,
    start: Instant,
    barrier: &Barrier,
    stop: &AtomicBool,
) -> Result<(Vec<AcceleratorEpoch>, LatencyHistogram), AiError> {
    let mut compute_rng = Rng::for_worker(seed ^ 0xA11C, a as u32);
    let mut out = Vec::new();
    let mut latency = LatencyHistogram::new();
    for epoch in 1..=c.epochs {
        barrier.wait();
        let mine = accelerator_samples(c, seed, epoch, a);
        let batches: Vec<&[SampleRef]> = mine.chunks(c.batch_size as usize).collect();
        let mut ae = AcceleratorEpoch::default();
        let r = std::thread::scope(|s| -> Result<(), AiError> {
            let mut loader = Loader::start(s, c, data, &batches, stop);
            let first = start.elapsed().as_nanos() as u64;
            for (k, batch) in batches.iter().enumerate() {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                let t0 = Instant::now();
                let (bytes, hist) = loader.next(k, data)?;
                let t1 = Instant::now();
                latency.merge(&hist);
                std::thread::sleep(compute_time(c, &mut compute_rng));
                let t2 = Instant::now();
                ae.steps.push(TrainStep { wait_ns: nanos(t1 - t0), compute_ns: nanos(t2 - t1) });
                ae.samples += batch.len() as u64;
                ae.bytes += bytes;
            }
            ae.span_ns = (first, start.elapsed().as_nanos() as u64);
            loader.finish();
            Ok(())
        });
        r?;
        out.push(ae);
    }
    Ok((out, latency))
}

fn nanos(d: Duration) -> u64 {
    d.as_nanos() as u64
}

/// This step's computation: `computation_time`, with its stdev drawn when it has one.
pub(crate) fn compute_time(c: &TrainConfig, rng: &mut Rng) -> Duration {
    let s = if c.computation_stdev_s > 0.0 {
        c.computation_s + normal(rng) * c.computation_stdev_s
    } else {
        c.computation_s
    };
    Duration::from_secs_f64(s.max(0.0))
}

/// A batch read: its sample bytes and their latencies.
type Batch = Result<(u64, LatencyHistogram), AiError>;

/// The reader threads of one accelerator's epoch, or none (`read_threads: 0`).
struct Loader<'b> {
    readers: Vec<Receiver<Batch>>,
    batches: &'b [&'b [SampleRef]],
    how: ReadHow,
}

impl<'b> Loader<'b> {
    fn start<'s>(
        s: &'s std::thread::Scope<'s, '_>,
        c: &'s TrainConfig,
        data: &'s Dataset,
        batches: &'b [&'b [SampleRef]],
        stop: &'s AtomicBool,
    ) -> Loader<'b>
    where
        'b: 's,
    {
        let n = c.read_threads as usize;
        let readers = (0..n)
            .map(|w| {
                let (tx, rx) = sync_channel::<Batch>(c.prefetch as usize);
                s.spawn(move || {
                    for k in (w..batches.len()).step_by(n) {
                        if stop.load(Ordering::Relaxed)
                            || tx.send(read_batch(batches[k], data, ReadHow::of(c))).is_err()
                        {
                            return;
                        }
                    }
                });
                rx
            })
            .collect();
        Loader { readers, batches, how: ReadHow::of(c) }
    }

    /// Batch `k`: from its reader, or read now.
    fn next(&mut self, k: usize, data: &Dataset) -> Batch {
        if self.readers.is_empty() {
            return read_batch(self.batches[k], data, self.how);
        }
        let n = self.readers.len();
        self.readers[k % n].recv().map_err(|_| AiError::Interrupted)?
    }

    /// Lets the readers go (a stopped epoch's readers see their receivers dropped).
    fn finish(self) {
        drop(self.readers);
    }
}

/// The alignment of O_DIRECT reads.
const ALIGN: u64 = 4096;

/// How a loader reads: O_DIRECT or not, and for a streamed format the transfer size.
#[derive(Clone, Copy)]
struct ReadHow {
    odirect: bool,
    /// `Some(bytes)`: consecutive records of a file are read as one range, in reads of this size, each
    /// read's latency recorded (TensorFlow's buffered record reader); `None`: each sample on its own.
    transfer: Option<u64>,
}

impl ReadHow {
    fn of(c: &TrainConfig) -> ReadHow {
        let transfer = c.format.streamed().then(|| c.transfer_size.unwrap_or(TF_BUFFER));
        ReadHow { odirect: c.odirect, transfer }
    }
}

/// TensorFlow's read buffer for a TFRecordDataset without `buffer_size`.
pub const TF_BUFFER: u64 = 256 << 10;

/// Reads every sample of `batch`.
fn read_batch(batch: &[SampleRef], data: &Dataset, how: ReadHow) -> Batch {
    let mut hist = LatencyHistogram::new();
    let mut bytes = 0;
    let mut buf = AlignedBuf::default();
    let mut rest = batch;
    while let Some(first) = rest.first() {
        let f = &data.files[first.file as usize];
        let run = match how.transfer {
            Some(_) => rest
                .iter()
                .zip(first.index..)
                .take_while(|(s, i)| s.file == first.file && s.index == *i)
                .count(),
            None => 1,
        };
        let at = f.layout.data_offset + first.index as u64 * f.layout.sample_len;
        let len = run as u64 * f.layout.sample_len;
        let t = Instant::now();
        let per_read = how.transfer.is_some().then_some(&mut hist);
        read_range(&f.path, at, len, how, &mut buf, per_read)
            .map_err(|e| AiError::io(format!("reading a sample of '{}'", f.path.display()), e))?;
        if how.transfer.is_none() {
            hist.record(nanos(t.elapsed()));
        }
        bytes += len;
        rest = &rest[run..];
    }
    Ok((bytes, hist))
}

/// Opens `path` and reads `len` bytes at `at` (with O_DIRECT: the aligned range around them), in reads of
/// the transfer size (else of [`CHUNK`]), each read's latency into `per_read` when given.
fn read_range(
    path: &std::path::Path,
    at: u64,
    len: u64,
    how: ReadHow,
    buf: &mut AlignedBuf,
    mut per_read: Option<&mut LatencyHistogram>,
) -> std::io::Result<()> {
    let mut o = std::fs::File::options();
    o.read(true);
    let (start, end) = if how.odirect {
        o.custom_flags(libc::O_DIRECT);
        (at / ALIGN * ALIGN, (at + len).next_multiple_of(ALIGN))
    } else {
        (at, at + len)
    };
    let f = o.open(path)?;
    let size = how.transfer.map_or(CHUNK, |t| if how.odirect { t.next_multiple_of(ALIGN) } else { t });
    let chunk = buf.get((end - start).min(size) as usize);
    let mut pos = start;
    while pos < end {
        let want = ((end - pos) as usize).min(chunk.len());
        let t = Instant::now();
        let got = f.read_at(&mut chunk[..want], pos)?;
        if let Some(h) = per_read.as_deref_mut() {
            h.record(nanos(t.elapsed()));
        }
        if got == 0 {
            break; // the end of the file inside the aligned range
        }
        pos += got as u64;
    }
    Ok(())
}

/// The largest read issued for a sample; bigger samples are read in pieces of it.
pub(crate) const CHUNK: u64 = 16 << 20;

/// A buffer aligned for O_DIRECT, grown as needed.
#[derive(Default)]
struct AlignedBuf {
    v: Vec<u8>,
}

impl AlignedBuf {
    fn get(&mut self, len: usize) -> &mut [u8] {
        let need = len + ALIGN as usize;
        if self.v.len() < need {
            self.v = vec![0u8; need];
        }
        let off = self.v.as_ptr().align_offset(ALIGN as usize);
        &mut self.v[off..off + len]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_epoch_is_every_sample_once_shuffled_by_the_seed_and_the_epoch() {
        let c = TrainConfig {
            num_files: 10,
            samples_per_file: 3,
            file_shuffle: Shuffle::Seed,
            sample_shuffle: Shuffle::Seed,
            ..TrainConfig::default()
        };
        let e1 = epoch_order(&c, 9, 1);
        let mut sorted = e1.clone();
        sorted.sort_by_key(|s| (s.file, s.index));
        assert_eq!(sorted.len(), 30);
        assert!(sorted.windows(2).all(|w| w[0] != w[1]));
        assert_eq!(e1, epoch_order(&c, 9, 1));
        assert_ne!(e1, epoch_order(&c, 9, 2), "seed_change_epoch");
        let off = TrainConfig { file_shuffle: Shuffle::Off, sample_shuffle: Shuffle::Off, ..c };
        assert_eq!(epoch_order(&off, 9, 1), sorted);
    }

    #[test]
    fn steps_drop_what_does_not_fill_a_batch() {
        let c = TrainConfig {
            num_files: 64,
            samples_per_file: 1,
            batch_size: 7,
            accelerators: 4,
            ..TrainConfig::default()
        };
        assert_eq!(steps_per_epoch(&c), 2, "DLIO's four-accelerator anchor: 16 samples each, 2 steps of 7");
    }

    fn refs(v: &[(u32, u32)]) -> Vec<SampleRef> {
        v.iter().map(|&(file, index)| SampleRef { file, index }).collect()
    }

    #[test]
    fn tfrecord_files_are_sharded_and_interleaved_as_tensorflow_reads_them() {
        let c = TrainConfig {
            format: crate::config::DataFormat::Tfrecord,
            num_files: 4,
            samples_per_file: 3,
            accelerators: 2,
            read_threads: 2,
            batch_size: 2,
            sample_shuffle: Shuffle::Seed,
            file_shuffle: Shuffle::Seed,
            ..TrainConfig::default()
        };
        // Accelerator 0 reads files 0 and 2, a record of each in turn; the shuffles are in memory.
        let a0 = refs(&[(0, 0), (2, 0), (0, 1), (2, 1), (0, 2), (2, 2)]);
        assert_eq!(accelerator_samples(&c, 5, 1, 0), a0);
        assert_eq!(accelerator_samples(&c, 5, 2, 0), a0, "the same on the storage every epoch");
        assert_eq!(accelerator_samples(&c, 5, 1, 1)[..2], refs(&[(1, 0), (3, 0)]));
        // A file that ends gives its place in the cycle to the next.
        assert_eq!(interleave(&[0, 1, 2], 2, 2), refs(&[(0, 0), (1, 0), (0, 1), (1, 1), (2, 0), (2, 1)]));
        // Fewer files than accelerators: every file, then every nth record.
        let few =
            TrainConfig { num_files: 1, samples_per_file: 4, read_threads: 0, batch_size: 1, ..c.clone() };
        assert_eq!(stream_order(&few, 1), refs(&[(0, 1), (0, 3)]));
        // An accelerator with fewer records than its steps need reads its stream again.
        let uneven = TrainConfig { num_files: 3, samples_per_file: 2, batch_size: 1, ..c };
        assert_eq!(steps_per_epoch(&uneven), 3);
        assert_eq!(accelerator_samples(&uneven, 5, 1, 1), refs(&[(1, 0), (1, 1), (1, 0)]));
    }
}
