//! The op generator: the next I/O of a worker (target, read or write, offset, length), from its access specs
//! and its seeded stream. Called once per I/O on the hot path: no allocation, no division by zero, no panics;
//! a spec or size with a single choice consumes no random numbers.

use crate::dist::SlotSampler;
use crate::{Region, WorkerPlan};
use iolab_rng::Rng;

/// What an op does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OpKind {
    /// Reads `len` bytes at `offset`.
    Read,
    /// Writes `len` bytes at `offset`.
    Write,
    /// Makes the target's completed writes durable (fsync or fdatasync; on a block device, a cache flush);
    /// `offset` and `len` are 0.
    Flush,
    /// Discards `len` bytes at `offset` (trim; a punched hole in a file): their data is gone.
    Trim,
}

impl OpKind {
    /// The name in results and traces: `read`, `write`, `flush`, `trim`.
    pub fn name(self) -> &'static str {
        match self {
            OpKind::Read => "read",
            OpKind::Write => "write",
            OpKind::Flush => "flush",
            OpKind::Trim => "trim",
        }
    }
}

/// One generated I/O.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GenOp {
    /// Index into the worker's targets.
    pub target: u16,
    /// What it does.
    pub kind: OpKind,
    /// Byte offset in the target.
    pub offset: u64,
    /// Length in bytes.
    pub len: u32,
}

#[derive(Clone, Debug)]
struct SizeGen {
    size: u64,
    /// Random offsets per target: sampler over that target's slots for this size.
    samplers: Vec<SlotSampler>,
    align: u64,
}

#[derive(Clone, Debug)]
struct SpecGen {
    /// Cumulative weights of the sizes.
    size_cum: Vec<u64>,
    sizes: Vec<SizeGen>,
    /// Reads if a 32-bit draw is below this; u64 so 100% is reachable.
    read_below: u64,
    random_below: u64,
    /// Trims if a 32-bit draw is below this (no draw when 0, so jobs without trims keep their stream).
    trim_below: u64,
    /// Bytes the sequential cursor skips after each sequential I/O; negative: backwards.
    seq_skip: i64,
    /// I/Os per random offset (1: every random I/O draws its own), and whether the rest are at its offset.
    random_run: u32,
    run_identical: bool,
    /// Each trim is followed by a write of the same block.
    trim_then_write: bool,
}

/// The next sequential offset after one that ended at `end` (relative to the region), with a skip of `skip`
/// bytes, as fio's `get_next_seq_offset` (io_u.c): the first I/O (`end` 0) takes no skip; past the region's
/// end the cursor starts again at 0, and backwards, past its start, at the end plus the (negative) skip.
fn skipped(end: u64, skip: i64, length: u64) -> u64 {
    if end == 0 || skip == 0 {
        return end;
    }
    let pos = end as i128 + skip as i128;
    if (0..length as i128).contains(&pos) {
        pos as u64
    } else if skip > 0 {
        0
    } else {
        (length as i128 + skip as i128).max(0) as u64
    }
}

/// Generates a worker's I/O.
#[derive(Clone, Debug)]
pub struct OpGen {
    rng: Rng,
    spec_cum: Vec<u64>,
    specs: Vec<SpecGen>,
    regions: Vec<Region>,
    /// Next sequential offset per target, relative to the region start.
    seq_next: Vec<u64>,
    next_target: usize,
    /// With `random_run`: I/Os left in the current run (0: a run starts), and each target's last offset.
    run_left: u32,
    last_start: Vec<u64>,
    /// The write that follows the last trim of a `trim_then_write` spec.
    paired_write: Option<GenOp>,
}

fn pct_threshold(pct: f64) -> u64 {
    ((pct / 100.0) * (1u64 << 32) as f64).round() as u64
}

fn pick(cum: &[u64], rng: &mut Rng) -> usize {
    if cum.len() == 1 {
        return 0;
    }
    let r = rng.below(*cum.last().unwrap_or(&1));
    cum.iter().position(|&c| r < c).unwrap_or(cum.len() - 1)
}

impl OpGen {
    /// A generator for `worker` over its bound `regions` (one per target), with stream `rng`.
    pub fn new(worker: &WorkerPlan, regions: &[Region], rng: Rng) -> OpGen {
        let mut spec_cum = Vec::new();
        let mut specs = Vec::new();
        let mut acc = 0u64;
        for s in &worker.specs {
            acc += s.weight as u64;
            spec_cum.push(acc);
            let mut size_cum = Vec::new();
            let mut sizes = Vec::new();
            let mut sacc = 0u64;
            for b in &s.bs {
                sacc += b.weight as u64;
                size_cum.push(sacc);
                let align = s.align.unwrap_or(b.size_bytes).max(1);
                let samplers = regions
                    .iter()
                    .map(|r| {
                        let slots =
                            if r.length >= b.size_bytes { (r.length - b.size_bytes) / align + 1 } else { 1 };
                        SlotSampler::new(&s.dist, slots)
                    })
                    .collect();
                sizes.push(SizeGen { size: b.size_bytes, samplers, align });
            }
            specs.push(SpecGen {
                size_cum,
                sizes,
                read_below: pct_threshold(s.read_pct),
                random_below: pct_threshold(s.random_pct),
                trim_below: pct_threshold(s.trim_pct),
                seq_skip: s.seq_skip,
                random_run: s.random_run.max(1),
                run_identical: s.random_run_identical,
                trim_then_write: s.trim_then_write,
            });
        }
        OpGen {
            rng,
            spec_cum,
            specs,
            regions: regions.to_vec(),
            seq_next: vec![0; regions.len()],
            next_target: 0,
            run_left: 0,
            last_start: vec![0; regions.len()],
            paired_write: None,
        }
    }

    #[inline]
    fn coin(&mut self, below: u64) -> bool {
        if below == 0 {
            false
        } else if below >= 1 << 32 {
            true
        } else {
            (self.rng.next_u64() >> 32) < below
        }
    }

    /// The next I/O. Targets are used round-robin, as Iometer does.
    #[inline]
    pub fn next_op(&mut self) -> GenOp {
        if let Some(write) = self.paired_write.take() {
            return write;
        }
        let t = self.next_target;
        self.next_target = if t + 1 == self.regions.len() { 0 } else { t + 1 };
        let si = pick(&self.spec_cum, &mut self.rng);
        let spec = &self.specs[si];
        let (read_below, random_below, trim_below) = (spec.read_below, spec.random_below, spec.trim_below);
        let (skip, run, identical) = (spec.seq_skip, spec.random_run, spec.run_identical);
        let zi = pick(&self.specs[si].size_cum, &mut self.rng);
        let pairs = spec.trim_then_write;
        // A pair's first op is its trim; a trim only when the spec has any (no draw otherwise, so a job without
        // trims keeps its stream).
        let kind = if pairs || (trim_below != 0 && self.coin(trim_below)) {
            OpKind::Trim
        } else if self.coin(read_below) {
            OpKind::Read
        } else {
            OpKind::Write
        };
        // Within a random run (fio's rw=randread:N), only its last I/O draws as the spec says (fio's
        // get_next_offset counts down and draws at 0); the others follow the I/O before.
        let follow = run > 1 && {
            if self.run_left == 0 {
                self.run_left = run;
            }
            self.run_left -= 1;
            self.run_left != 0
        };
        let random = !follow && self.coin(random_below);
        let region = self.regions[t];
        let size = &self.specs[si].sizes[zi];
        let len = size.size;
        let rel = if follow && identical {
            self.last_start[t].min(region.length.saturating_sub(len))
        } else if random {
            size.samplers[t].sample(&mut self.rng) * size.align
        } else {
            let mut next = skipped(self.seq_next[t], skip, region.length);
            if next + len > region.length {
                next = 0;
            }
            self.seq_next[t] = next + len;
            next
        };
        if run > 1 {
            // fio's last position is every I/O's end, random or not.
            (self.seq_next[t], self.last_start[t]) = (rel + len, rel);
        }
        let op = GenOp { target: t as u16, kind, offset: region.offset + rel, len: len as u32 };
        if pairs {
            self.paired_write = Some(GenOp { kind: OpKind::Write, ..op });
        }
        op
    }
}
