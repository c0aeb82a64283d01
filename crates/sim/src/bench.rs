//! A closed-loop load on virtual time, to measure a model without an engine: `qd` requests are kept in
//! flight, each completion immediately submits the next, and offsets are uniformly random (aligned to the
//! request size) over the device. Used by the tests and by the precision table in docs/BENCHMARKS.md
//! (`cargo test -p iolab-sim --release -- --nocapture precision_table`).

use crate::{Done, Model, ReqKind, Request};
use iolab_rng::SplitMix64;

/// What [`closed_loop`] drives.
#[derive(Clone, Copy, Debug)]
pub struct ClosedLoad {
    /// Requests kept in flight.
    pub qd: usize,
    /// Bytes per request.
    pub len: u32,
    /// Share of writes, 0.0 to 1.0.
    pub write_fraction: f64,
    /// Offsets are uniform over [0, region) (aligned to `len`).
    pub region: u64,
    /// Completions before the measurement starts.
    pub warmup: u64,
    /// Completions measured.
    pub ios: u64,
    /// Seed of the offsets and the read/write choice.
    pub seed: u64,
}

/// What [`closed_loop`] measured, over the measurement window only.
#[derive(Clone, Copy, Debug)]
pub struct LoopMeasured {
    /// Completions measured.
    pub ios: u64,
    /// Length of the window, ns.
    pub elapsed_ns: u64,
    /// Completions per second.
    pub iops: f64,
    /// Mean latency (submission to completion) of the measured requests, ns.
    pub mean_latency_ns: f64,
    /// Time-averaged number of requests in flight over the window.
    pub mean_in_flight: f64,
}

impl LoopMeasured {
    /// Little's law: mean in flight / (throughput x mean latency); 1.0 when it holds exactly.
    pub fn littles_ratio(&self) -> f64 {
        self.mean_in_flight / (self.iops / 1e9 * self.mean_latency_ns)
    }
}

/// Runs `load` against `model` from virtual time 0 and returns the measurement.
pub fn closed_loop(model: &mut dyn Model, load: &ClosedLoad) -> LoopMeasured {
    let qd = load.qd.max(1);
    let mut rng = SplitMix64::new(load.seed);
    let blocks = (load.region / load.len.max(1) as u64).max(1);
    let mut submitted_at = vec![0u64; qd];
    let mut done: Vec<Done> = Vec::with_capacity(qd * 2);
    let next = |rng: &mut SplitMix64, tag: u64| {
        let kind = if rng.next_f64() < load.write_fraction { ReqKind::Write } else { ReqKind::Read };
        Request { tag, kind, durable: false, offset: rng.below(blocks) * load.len as u64, len: load.len }
    };
    for tag in 0..qd as u64 {
        model.submit(0, next(&mut rng, tag));
    }
    let mut completed = 0u64;
    let (mut t_start, mut last_t) = (0u64, 0u64);
    let (mut lat_sum, mut area, mut measured) = (0f64, 0f64, 0u64);
    let total = load.warmup + load.ios;
    while completed < total {
        let t = model.next_event_ns().expect("requests in flight");
        assert!(t >= last_t, "time went backwards: {t} < {last_t}");
        if completed >= load.warmup {
            area += model.in_flight() as f64 * (t - last_t) as f64;
        }
        last_t = t;
        done.clear();
        model.advance(t, &mut done);
        for d in &done {
            completed += 1;
            if completed == load.warmup {
                t_start = t;
            } else if completed > load.warmup && completed <= total {
                measured += 1;
                lat_sum += (d.at_ns - submitted_at[d.tag as usize]) as f64;
            }
            if completed == load.warmup && load.warmup > 0 {
                area = 0.0;
            }
        }
        for d in &done {
            submitted_at[d.tag as usize] = t;
            model.submit(t, next(&mut rng, d.tag));
        }
    }
    let elapsed = last_t - t_start;
    LoopMeasured {
        ios: measured,
        elapsed_ns: elapsed,
        iops: measured as f64 * 1e9 / elapsed.max(1) as f64,
        mean_latency_ns: lat_sum / measured.max(1) as f64,
        mean_in_flight: area / elapsed.max(1) as f64,
    }
}
