//! `sim:hdd`: one actuator over spinning platters.
//!
//! Geometry is a linear map: byte offset `o` lies on track `floor(o / T)` at angle `frac(o / T)` of a
//! revolution, where `T = media rate x revolution time` is the bytes per track, and the track's radial
//! position is `o / size` of the full stroke. A request costs
//!
//! `overhead + seek(distance) + rotational wait + len / media`.
//!
//! - Seek: 0 on the same track, else `track_seek + b sqrt(x)` with `x` the distance as a fraction of the
//!   stroke. For two uniformly random offsets E[sqrt(x)] = 8/15, so `b = (seek_avg - track_seek) x 15/8`
//!   makes the mean seek equal the datasheet's average seek (read and write calibrated separately). The
//!   implied full-stroke seek is `track_seek + b`.
//! - Rotation: the platter turns at `rpm` from a seeded phase; the wait is from the angle under the head when
//!   the seek ends to the request's angle. With random offsets it averages half a revolution.
//! - Sequential: a request starting exactly where the previous one ended skips seek and rotation (the
//!   drive's read-ahead and write streaming): `overhead + len / media`.
//! - Queueing: of the waiting requests, the first `queue_depth` (in arrival order) are candidates and the one
//!   with the shortest positioning time (seek + rotation) goes next (SPTF); the rest wait FIFO. A request that
//!   has waited more than `4 x (queue_depth + 4)` mean random service times goes next regardless (aging, as
//!   drives do to bound starvation; at depth 64 on a 10K disk that is about 1.9 s). `queue_depth=1` is plain FIFO.
//!
//! This is the mechanism behind the drive's write cache ([`crate::wcache`]), which [`crate::build`] puts in
//! front (volatile on the presets, write-through for array members).
//!
//! Not modelled: zoned recording (the media rate is one figure), head switches, read hits in the drive's
//! buffer, and defect remapping.

use super::dist::{ServiceDist, MEAN_SQRT_DISTANCE};
use crate::{Done, Model, Request};
use iolab_rng::SplitMix64;
use iolab_spec::HddParams;
use std::collections::VecDeque;

/// A request that has waited longer than this many mean random service times per queue slot
/// (`4 x (queue_depth + 4)` services in all) goes next regardless of position.
const AGE_LIMIT_SERVICES: f64 = 4.0;

/// Derived geometry of a disk (all times in ns).
#[derive(Clone, Copy, Debug)]
pub struct Geometry {
    /// One revolution.
    pub rev_ns: f64,
    /// Bytes per track.
    pub track_bytes: f64,
    /// Tracks on the disk (size / track bytes).
    pub tracks: f64,
    /// Transfer time per byte at the media rate.
    pub ns_per_byte: f64,
    /// Seek curve coefficient for reads: seek(x) = track_seek + b sqrt(x).
    pub b_read_ns: f64,
    /// The same for writes.
    pub b_write_ns: f64,
}

impl Geometry {
    /// The geometry of `p`.
    pub fn new(p: &HddParams) -> Geometry {
        let rev_ns = 60e9 / p.rpm.max(1) as f64;
        let bytes_per_ns = p.media_mb_s * 1e6 / 1e9;
        let track_bytes = (bytes_per_ns * rev_ns).max(512.0);
        let track = p.track_seek_ns as f64;
        let k = 1.0 / MEAN_SQRT_DISTANCE;
        Geometry {
            rev_ns,
            track_bytes,
            tracks: (p.size_bytes as f64 / track_bytes).max(1.0),
            ns_per_byte: 1.0 / bytes_per_ns,
            b_read_ns: (p.seek_read_ns as f64 - track).max(0.0) * k,
            b_write_ns: (p.seek_write_ns as f64 - track).max(0.0) * k,
        }
    }
}

impl ServiceDist {
    /// The distribution for an HDD request of `len` bytes at random offsets within the first `span` fraction
    /// of the disk.
    pub fn hdd(p: &HddParams, write: bool, len: u32, span: f64) -> ServiceDist {
        let g = Geometry::new(p);
        let b = if write { g.b_write_ns } else { g.b_read_ns };
        ServiceDist::Hdd {
            fixed: p.overhead_ns as f64 + len as f64 * g.ns_per_byte,
            track: p.track_seek_ns as f64,
            b: b * span.clamp(0.0, 1.0).sqrt(),
            rev: g.rev_ns,
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct Queued {
    tag: u64,
    write: bool,
    offset: u64,
    len: u32,
    arrival_ns: u64,
}

/// The rotating-disk model.
pub struct Hdd {
    p: HddParams,
    g: Geometry,
    /// This spindle's actual revolution time (nominal unless built with a speed offset).
    rev_ns: f64,
    phase_ns: f64,
    queue: VecDeque<Queued>,
    /// The request in service: (completion time, tag).
    current: Option<(u64, u64)>,
    head_track: u64,
    last_end: Option<u64>,
    age_limit_ns: u64,
}

impl Hdd {
    /// A disk with parameters `p`, the platter's starting angle drawn from `seed`, room for `max_in_flight`.
    pub fn new(p: &HddParams, seed: u64, max_in_flight: usize) -> Hdd {
        Hdd::with_speed(p, seed, max_in_flight, 1.0)
    }

    /// A disk whose spindle turns `speed` times the nominal rpm (e.g. 1.0005). Arrays give their members
    /// slightly different speeds, as unsynchronised spindles have, so that members (mirrors in particular)
    /// drift in phase instead of staying locked at the angle their seeds gave them.
    pub fn with_speed(p: &HddParams, seed: u64, max_in_flight: usize, speed: f64) -> Hdd {
        let g = Geometry::new(p);
        let mut rng = SplitMix64::derived(seed, 0x0048_4444);
        let phase_ns = rng.next_f64() * g.rev_ns;
        let mean = p.overhead_ns as f64 + p.seek_read_ns as f64 + g.rev_ns / 2.0;
        Hdd {
            p: p.clone(),
            g,
            rev_ns: g.rev_ns / speed,
            phase_ns,
            queue: VecDeque::with_capacity(max_in_flight.max(1)),
            current: None,
            head_track: 0,
            last_end: None,
            age_limit_ns: (AGE_LIMIT_SERVICES * (p.queue_depth.max(1) as f64 + 4.0) * mean) as u64,
        }
    }

    /// The disk's derived geometry.
    pub fn geometry(&self) -> Geometry {
        self.g
    }

    fn track_of(&self, offset: u64) -> u64 {
        (offset as f64 / self.g.track_bytes) as u64
    }

    /// Positioning time (seek + rotational wait) if `q` starts its mechanical phase at `t` (after overhead).
    fn positioning(&self, t: f64, q: &Queued) -> f64 {
        if q.len == 0 || self.last_end == Some(q.offset) {
            return 0.0;
        }
        let target = self.track_of(q.offset);
        let seek = if target == self.head_track {
            0.0
        } else {
            let x = target.abs_diff(self.head_track) as f64 / self.g.tracks;
            let b = if q.write { self.g.b_write_ns } else { self.g.b_read_ns };
            self.p.track_seek_ns as f64 + b * x.min(1.0).sqrt()
        };
        let rev = self.rev_ns;
        let at = t + seek;
        let angle_now = (at + self.phase_ns).rem_euclid(rev);
        let target_angle = (q.offset as f64 / self.g.track_bytes).fract() * rev;
        seek + (target_angle - angle_now).rem_euclid(rev)
    }

    /// Starts the best candidate at `t` (the drive is free and the queue is not empty).
    fn start_next(&mut self, t: u64) {
        let window = (self.p.queue_depth.max(1) as usize).min(self.queue.len());
        let mech_start = t as f64 + self.p.overhead_ns as f64;
        let mut best = 0;
        let front_aged =
            self.queue.front().is_some_and(|q| t.saturating_sub(q.arrival_ns) > self.age_limit_ns);
        if window > 1 && !front_aged {
            let mut best_pos = f64::INFINITY;
            for i in 0..window {
                let pos = self.positioning(mech_start, &self.queue[i]);
                if pos < best_pos {
                    best_pos = pos;
                    best = i;
                }
            }
        }
        let q = self.queue.remove(best).expect("candidate");
        let pos = self.positioning(mech_start, &q);
        let done = mech_start + pos + q.len as f64 * self.g.ns_per_byte;
        let done = (done.round() as u64).max(t);
        if q.len > 0 {
            self.head_track = self.track_of(q.offset + q.len as u64 - 1);
            self.last_end = Some(q.offset + q.len as u64);
        }
        self.current = Some((done, q.tag));
    }
}

impl Model for Hdd {
    fn submit(&mut self, now_ns: u64, req: Request) {
        let (write, len) = req.media_op();
        self.queue.push_back(Queued { tag: req.tag, write, offset: req.offset, len, arrival_ns: now_ns });
        if self.current.is_none() {
            self.start_next(now_ns);
        }
    }
    fn next_event_ns(&self) -> Option<u64> {
        self.current.map(|(t, _)| t)
    }
    fn advance(&mut self, now_ns: u64, done: &mut Vec<Done>) {
        while let Some((t, tag)) = self.current {
            if t > now_ns {
                break;
            }
            done.push(Done { tag, at_ns: t });
            self.current = None;
            if !self.queue.is_empty() {
                self.start_next(t);
            }
        }
    }
    fn in_flight(&self) -> usize {
        self.queue.len() + self.current.is_some() as usize
    }
    /// overhead + mean seek (the datasheet's average) + half a revolution + len / media. Offsets on the same
    /// track as the head (probability about 1 / tracks) are ignored.
    fn expected_service_ns(&self, write: bool, len: u32) -> f64 {
        ServiceDist::hdd(&self.p, write, len, 1.0).mean()
    }
}
