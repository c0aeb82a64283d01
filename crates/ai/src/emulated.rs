//! Training on an emulated device (`--data-dir sim:...`, or a `link:` in front of one) on virtual time: the
//! same accelerators, readers, prefetch, batches and sample order as [`crate::train`], as a discrete-event
//! simulation against an `iolab-sim` model, so "how many accelerators can this array feed" takes seconds and
//! no hardware. Nothing is written: the dataset is laid out on the emulated device (file after file, each
//! at a 4 KiB boundary) and every sample read is the model's requests at those offsets, as the real loader
//! would issue them (a sample or a run of records in pieces of 16 MiB or the transfer size, one request at
//! a time per reader). Every read reaches the device (no page cache). The accelerators' computation is
//! virtual time too, so AU is exact for the model and the seed.

use crate::au::TrainStep;
use crate::config::TrainConfig;
use crate::dataset::sample_sizes;
use crate::format::{self, SampleLayout};
use crate::train::{
    accelerator_samples, compute_time, AcceleratorEpoch, SampleRef, Trained, CHUNK, TF_BUFFER,
};
use crate::AiError;
use iolab_rng::Rng;
use iolab_sim::{Done, Model, Request};
use iolab_spec::TargetSpec;
use iolab_stats::LatencyHistogram;
use std::collections::VecDeque;

/// Where each file of the dataset lies on the emulated device.
struct Placed {
    base: Vec<u64>,
    layout: Vec<SampleLayout>,
}

/// Lays the dataset out on a device of `capacity` bytes; refuses a dataset larger than it.
fn place(c: &TrainConfig, seed: u64, capacity: u64) -> Result<Placed, AiError> {
    let layout: Vec<SampleLayout> =
        sample_sizes(c, seed).iter().map(|&len| format::layout(c.format, c.samples_per_file, len)).collect();
    let mut base = Vec::with_capacity(layout.len());
    let mut at = 0u64;
    for l in &layout {
        base.push(at);
        at = (at + l.file_len).next_multiple_of(4096);
    }
    if at > capacity {
        return Err(AiError::Config(format!(
            "the dataset ({}) does not fit on the emulated device ({}): give the device a size (size=...) or fewer files (--param dataset.num_files_train=N)",
            iolab_device::format_bytes(at),
            iolab_device::format_bytes(capacity)
        )));
    }
    Ok(Placed { base, layout })
}

/// A read in progress: the requests left of one sample (or run of records) of a batch.
struct Reading {
    /// The batch, by its step.
    step: usize,
    /// The next sample of the batch to read.
    next_sample: usize,
    /// The current range's next offset and end, on the device.
    pos: u64,
    end: u64,
    /// When the current sample (or request, for a streamed format) began, ns.
    since: u64,
    /// Bytes of the batch read so far.
    bytes: u64,
}

/// One reader thread of one accelerator: its batches `w, w + n, ...` in order.
struct Reader {
    steps: Vec<usize>,
    next: usize,
    ready: VecDeque<(usize, u64)>,
    held: Option<(usize, u64)>,
    reading: Option<Reading>,
}

/// One accelerator: its batches, its readers, and what it is doing.
struct Accel {
    batches: Vec<Vec<SampleRef>>,
    readers: Vec<Reader>,
    step: usize,
    /// Waiting for `step` since this time, or computing until `.1` after waiting `.0`.
    waiting_since: Option<u64>,
    computing: Option<(u64, u64, u64)>,
    done: AcceleratorEpoch,
    rng: Rng,
}

/// The simulation of one epoch: the accelerators and the device model.
struct Epoch<'a> {
    c: &'a TrainConfig,
    placed: &'a Placed,
    accels: Vec<Accel>,
    model: &'a mut dyn Model,
    latency: &'a mut LatencyHistogram,
    prefetch: usize,
    on_demand: bool,
    piece: u64,
    streamed: bool,
}

/// Trains `c` on `target` (an emulated device) on virtual time.
pub fn train_emulated(c: &TrainConfig, target: &TargetSpec, seed: u64) -> Result<Trained, AiError> {
    let capacity = match target {
        TargetSpec::Sim(s) => s.size_bytes(),
        TargetSpec::Link { target, .. } => match target.as_ref() {
            TargetSpec::Sim(s) => s.size_bytes(),
            _ => 0,
        },
        _ => 0,
    };
    let placed = place(c, seed, capacity)?;
    let readers = c.read_threads.max(1) as usize;
    let in_flight = c.accelerators as usize * readers;
    let mut model = iolab_sim::build_target(target, seed, in_flight)
        .ok_or_else(|| AiError::Config("--data-dir: an emulated device ('sim:...') was expected".into()))?;
    let mut latency = LatencyHistogram::new();
    let mut epochs = Vec::new();
    let mut rngs: Vec<Rng> = (0..c.accelerators).map(|a| Rng::for_worker(seed ^ 0xA11C, a as u32)).collect();
    let mut now = 0;
    for epoch in 1..=c.epochs {
        let accels = (0..c.accelerators)
            .map(|a| accel(c, seed, epoch, a, std::mem::replace(&mut rngs[a as usize], Rng::new(0)), now))
            .collect();
        let mut e = Epoch {
            c,
            placed: &placed,
            accels,
            model: model.as_mut(),
            latency: &mut latency,
            prefetch: c.prefetch as usize,
            on_demand: c.read_threads == 0,
            piece: if c.format.streamed() { c.transfer_size.unwrap_or(TF_BUFFER) } else { CHUNK },
            streamed: c.format.streamed(),
        };
        now = e.run(now);
        let done: Vec<AcceleratorEpoch> = e
            .accels
            .into_iter()
            .enumerate()
            .map(|(a, x)| {
                rngs[a] = x.rng;
                x.done
            })
            .collect();
        epochs.push(done);
    }
    Ok(Trained { epochs, latency, elapsed_ns: now, stopped: false })
}

fn accel(c: &TrainConfig, seed: u64, epoch: u64, a: u64, rng: Rng, now: u64) -> Accel {
    let samples = accelerator_samples(c, seed, epoch, a);
    let batches: Vec<Vec<SampleRef>> = samples.chunks(c.batch_size as usize).map(<[_]>::to_vec).collect();
    let n = c.read_threads.max(1) as usize;
    let readers = (0..n)
        .map(|w| Reader {
            steps: (w..batches.len()).step_by(n).collect(),
            next: 0,
            ready: VecDeque::new(),
            held: None,
            reading: None,
        })
        .collect();
    let done = AcceleratorEpoch { span_ns: (now, now), ..AcceleratorEpoch::default() };
    Accel { batches, readers, step: 0, waiting_since: Some(now), computing: None, done, rng }
}

impl Epoch<'_> {
    /// Runs the epoch from `start` (every accelerator at the barrier); returns when the last one is done.
    fn run(&mut self, start: u64) -> u64 {
        let mut now = start;
        let mut done: Vec<Done> = Vec::new();
        self.model.advance(now, &mut done);
        assert!(done.is_empty(), "nothing is in flight between epochs");
        loop {
            self.kick(now);
            if self.accels.iter().all(|a| a.step == a.batches.len() && a.computing.is_none()) {
                return self.accels.iter().map(|a| a.done.span_ns.1).max().unwrap_or(now);
            }
            let compute_end = self.accels.iter().filter_map(|a| a.computing.map(|c| c.2)).min();
            let next = [self.model.next_event_ns(), compute_end].into_iter().flatten().min();
            let t = next.expect("something is in flight or computing while an epoch is under way");
            assert!(t >= now, "virtual time goes forward");
            now = t;
            done.clear();
            self.model.advance(now, &mut done);
            for d in &done {
                self.completed(d.tag, now);
            }
            for a in 0..self.accels.len() {
                if self.accels[a].computing.is_some_and(|c| c.2 <= now) {
                    self.step_done(a, now);
                }
            }
        }
    }

    /// Starts what can start at `now`: idle readers' next batches, waiting accelerators' ready batches.
    fn kick(&mut self, now: u64) {
        for a in 0..self.accels.len() {
            self.take_batch(a, now);
            for w in 0..self.accels[a].readers.len() {
                self.start_read(a, w, now);
            }
            self.take_batch(a, now);
        }
    }

    /// Accelerator `a`, waiting, takes its batch when its reader has it ready, and computes.
    fn take_batch(&mut self, a: usize, now: u64) {
        let x = &mut self.accels[a];
        let (Some(since), None) = (x.waiting_since, x.computing) else { return };
        if x.step == x.batches.len() {
            return;
        }
        let n = x.readers.len();
        let r = &mut x.readers[x.step % n];
        let Some(&(step, bytes)) = r.ready.front() else { return };
        debug_assert_eq!(step, x.step, "a reader's batches come in order");
        r.ready.pop_front();
        if let Some(h) = r.held.take() {
            r.ready.push_back(h);
        }
        let compute = compute_time(self.c, &mut x.rng).as_nanos() as u64;
        x.waiting_since = None;
        x.computing = Some((now - since, now, now + compute));
        x.done.samples += x.batches[step].len() as u64;
        x.done.bytes += bytes;
        let w = x.step % n;
        self.start_read(a, w, now);
    }

    /// Accelerator `a`'s computation ended at `now`: its step is recorded and it waits for the next.
    fn step_done(&mut self, a: usize, now: u64) {
        let x = &mut self.accels[a];
        let (wait_ns, began, _) = x.computing.take().expect("computing");
        x.done.steps.push(TrainStep { wait_ns, compute_ns: now - began });
        x.done.span_ns.1 = now;
        x.step += 1;
        x.waiting_since = Some(now);
        self.take_batch(a, now);
    }

    /// Reader `w` of accelerator `a` begins its next batch when it is free to.
    fn start_read(&mut self, a: usize, w: usize, now: u64) {
        let x = &mut self.accels[a];
        let (step, waiting) = (x.step, x.waiting_since.is_some());
        let r = &mut x.readers[w];
        if r.reading.is_some() || r.held.is_some() || r.next == r.steps.len() {
            return;
        }
        let s = r.steps[r.next];
        // Without reader threads the accelerator reads its own batch, when it needs it.
        if self.on_demand && !(waiting && s == step) {
            return;
        }
        r.next += 1;
        r.reading = Some(Reading { step: s, next_sample: 0, pos: 0, end: 0, since: now, bytes: 0 });
        self.next_range(a, w, now);
    }

    /// The reading of `(a, w)` moves to its batch's next sample (or run of records), or the batch is read.
    fn next_range(&mut self, a: usize, w: usize, now: u64) {
        let x = &mut self.accels[a];
        let rd = x.readers[w].reading.as_mut().expect("reading");
        let batch = &x.batches[rd.step];
        if rd.next_sample == batch.len() {
            let (step, bytes) = (rd.step, rd.bytes);
            let r = &mut x.readers[w];
            r.reading = None;
            if r.ready.len() < self.prefetch.max(1) {
                r.ready.push_back((step, bytes));
            } else {
                r.held = Some((step, bytes));
            }
            self.take_batch(a, now);
            if self.accels[a].readers[w].held.is_none() {
                self.start_read(a, w, now);
            }
            return;
        }
        let first = batch[rd.next_sample];
        let run = if self.streamed {
            batch[rd.next_sample..]
                .iter()
                .zip(first.index..)
                .take_while(|(s, i)| s.file == first.file && s.index == *i)
                .count()
        } else {
            1
        };
        let f = first.file as usize;
        let l = self.placed.layout[f];
        let at = l.data_offset + first.index as u64 * l.sample_len;
        let len = run as u64 * l.sample_len;
        let (start, end) = if self.c.odirect {
            (at / 4096 * 4096, (at + len).next_multiple_of(4096).min(l.file_len.next_multiple_of(4096)))
        } else {
            (at, at + len)
        };
        let base = self.placed.base[f];
        rd.next_sample += run;
        rd.bytes += len;
        rd.pos = base + start;
        rd.end = base + end;
        rd.since = now;
        self.submit(a, w, now);
    }

    /// Submits `(a, w)`'s next request of its current range.
    fn submit(&mut self, a: usize, w: usize, now: u64) {
        let n = self.accels[a].readers.len();
        let rd = self.accels[a].readers[w].reading.as_mut().expect("reading");
        let len = (rd.end - rd.pos).min(self.piece) as u32;
        self.model.submit(now, Request::read((a * n + w) as u64, rd.pos, len));
        rd.pos += len as u64;
    }

    /// A request of reader `tag` completed at `now`.
    fn completed(&mut self, tag: u64, now: u64) {
        let n = self.accels[0].readers.len();
        let (a, w) = (tag as usize / n, tag as usize % n);
        let rd = self.accels[a].readers[w].reading.as_mut().expect("a request of a reading reader");
        if self.streamed {
            self.latency.record(now - rd.since);
            rd.since = now;
        }
        if rd.pos < rd.end {
            self.submit(a, w, now);
            return;
        }
        if !self.streamed {
            self.latency.record(now - rd.since);
        }
        self.next_range(a, w, now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::au::utilization;

    fn fixed(latency: &str) -> TargetSpec {
        TargetSpec::parse(&format!("sim:fixed,latency={latency},servers=64,size=1G")).unwrap()
    }

    fn tiny(accelerators: u64) -> TrainConfig {
        TrainConfig {
            num_files: 8,
            samples_per_file: 1,
            record_length: 4096,
            batch_size: 1,
            read_threads: 1,
            prefetch: 1,
            computation_s: 0.003,
            accelerators,
            ..TrainConfig::default()
        }
    }

    #[test]
    fn au_on_a_fixed_latency_device_is_exact() {
        // One reader, one 4 KiB sample a step, 1 ms a read, 3 ms a step's computation: the reader keeps
        // ahead, so only the first step waits (1 ms, left out of AU): AU is 100 %; samples: 8 in
        // 1 + 8 x 3 ms.
        let t = train_emulated(&tiny(1), &fixed("1ms"), 7).unwrap();
        let steps = &t.epochs[0][0].steps;
        assert_eq!(steps.len(), 8);
        assert_eq!(steps[0], TrainStep { wait_ns: 1_000_000, compute_ns: 3_000_000 });
        assert!(steps[1..].iter().all(|s| s.wait_ns == 0), "{steps:?}");
        assert_eq!(t.elapsed_ns, 25_000_000);
        assert_eq!(utilization(t.epochs[0].iter().map(|a| a.steps.as_slice())).au_pct, Some(100.0));
        // Reads of 5 ms against 3 ms of computation: each step after the first waits 2 ms (the reader
        // starts the next read when the accelerator takes the batch: prefetch 1 holds one more ready).
        let slow = train_emulated(&tiny(1), &fixed("5ms"), 7).unwrap();
        let s = &slow.epochs[0][0].steps;
        assert_eq!(s[0].wait_ns, 5_000_000);
        assert!(s[2..].iter().all(|x| x.wait_ns == 2_000_000), "{s:?}");
        assert_eq!(slow.latency.summary().map(|l| l.max), Some(5_000_000));
    }

    #[test]
    fn a_dataset_larger_than_the_device_is_refused() {
        let c = TrainConfig { record_length: 1 << 30, ..tiny(1) };
        let e = train_emulated(&c, &fixed("1ms"), 1).err().unwrap().to_string();
        assert!(e.starts_with("the dataset (") && e.contains("does not fit on the emulated device"), "{e}");
    }
}
