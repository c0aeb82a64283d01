//! `sim:ssd`: a flash device with `channels` independent units.
//!
//! A request waits FIFO for a free channel, then takes `median x e^(sigma Z)` (Z standard normal, drawn from
//! the seeded generator), where the median is `read` or `write` for up to 4 KiB plus the time of the bytes
//! beyond 4 KiB at the direction's bandwidth. The bytes of each direction also cross a pipe at `read_bw` or
//! `write_bw`, one transfer after another: the request completes at
//! `max(channel start + service, pipe start + len / bw)`, and holds its channel until then.
//!
//! This is the flash behind the drive's write cache ([`crate::wcache`]), which [`crate::build`] puts in front.
//!
//! Not modelled: garbage collection and write amplification (no steady-state write cliff), read hits in the
//! DRAM cache, read/write interference inside a die, and a shared bandwidth budget between directions.

use super::dist::{normal_cdf, ServiceDist};
use crate::{Done, Model, Request};
use iolab_rng::SplitMix64;
use iolab_spec::SsdParams;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Median service of one `len`-byte request: the 4 KiB latency plus the bytes beyond 4 KiB at the bandwidth.
pub fn median_ns(p: &SsdParams, write: bool, len: u32) -> f64 {
    let (base, mb_s) = if write { (p.write_ns, p.write_mb_s) } else { (p.read_ns, p.read_mb_s) };
    base as f64 + (len as f64 - 4096.0).max(0.0) * 1e3 / mb_s
}

impl ServiceDist {
    /// The distribution for an SSD request of `len` bytes (the bandwidth pipe is ignored: it binds only for
    /// large transfers).
    pub fn ssd(p: &SsdParams, write: bool, len: u32) -> ServiceDist {
        ServiceDist::Ssd { median: median_ns(p, write, len), sigma: p.sigma }
    }
}

/// The flash model.
pub struct Ssd {
    p: SsdParams,
    rng: SplitMix64,
    channels: BinaryHeap<Reverse<u64>>,
    due: BinaryHeap<Reverse<(u64, u64, u64)>>,
    seq: u64,
    /// When each direction's pipe is next free, ns (read, write), kept fractional to avoid drift.
    pipe_free: [f64; 2],
}

impl Ssd {
    /// A device with parameters `p`, service times drawn from `seed`, room for `max_in_flight`.
    pub fn new(p: &SsdParams, seed: u64, max_in_flight: usize) -> Ssd {
        let n = (p.channels as usize).min(max_in_flight.max(1)).max(1);
        let mut channels = BinaryHeap::with_capacity(n);
        for _ in 0..n {
            channels.push(Reverse(0));
        }
        Ssd {
            p: p.clone(),
            rng: SplitMix64::derived(seed, 0x0053_5344),
            channels,
            due: BinaryHeap::with_capacity(max_in_flight.max(1)),
            seq: 0,
            pipe_free: [0.0; 2],
        }
    }
}

impl Model for Ssd {
    fn submit(&mut self, now_ns: u64, req: Request) {
        let Reverse(free) = self.channels.pop().unwrap_or(Reverse(0));
        let start = free.max(now_ns) as f64;
        let factor = if self.p.sigma > 0.0 { (self.p.sigma * self.rng.normal()).exp() } else { 1.0 };
        let (write, len) = req.media_op();
        let service = median_ns(&self.p, write, len) * factor;
        let dir = write as usize;
        let mb_s = if write { self.p.write_mb_s } else { self.p.read_mb_s };
        let pipe_start = self.pipe_free[dir].max(start);
        let pipe_end = pipe_start + len as f64 * 1e3 / mb_s;
        self.pipe_free[dir] = pipe_end;
        let done = (start + service).max(pipe_end).round() as u64;
        self.channels.push(Reverse(done));
        self.due.push(Reverse((done, self.seq, req.tag)));
        self.seq += 1;
    }
    fn next_event_ns(&self) -> Option<u64> {
        self.due.peek().map(|Reverse((t, _, _))| *t)
    }
    fn advance(&mut self, now_ns: u64, done: &mut Vec<Done>) {
        while let Some(Reverse((t, _, tag))) = self.due.peek().copied() {
            if t > now_ns {
                break;
            }
            self.due.pop();
            done.push(Done { tag, at_ns: t });
        }
    }
    fn in_flight(&self) -> usize {
        self.due.len()
    }
    /// E[max(m f, P)] with f log-normal (median 1, sigma) and P = len / bw the pipe time:
    /// `m e^(s^2/2) + P Phi(d) - m e^(s^2/2) Phi(d - s)` with `d = ln(P / m) / s`.
    fn expected_service_ns(&self, write: bool, len: u32) -> f64 {
        let m = median_ns(&self.p, write, len);
        let mb_s = if write { self.p.write_mb_s } else { self.p.read_mb_s };
        let pipe = len as f64 * 1e3 / mb_s;
        let s = self.p.sigma;
        if s == 0.0 {
            return m.max(pipe);
        }
        let mean = m * (s * s / 2.0).exp();
        if pipe <= 0.0 {
            return mean;
        }
        let d = (pipe / m).ln() / s;
        mean + pipe * normal_cdf(d) - mean * normal_cdf(d - s)
    }
}
