//! The op generator: the next I/O of a worker (target, read or write, offset, length), from its access specs
//! and its seeded stream. Called once per I/O on the hot path: no allocation, no division by zero, no panics;
//! a spec or size with a single choice consumes no random numbers.

use crate::dist::SlotSampler;
use crate::sprandom::SpRandom;
use crate::{Region, WorkerPlan};
use iolab_rng::Rng;
use iolab_spec::{Band, Dist};

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
    /// Ops generated so far per kind (read, write, trim): the k of a `sequence` distribution, as fio counts
    /// its issued I/Os per direction.
    issued: [u64; 3],
    /// The band walk, with each target's band start (relative to the region) and bytes moved in it.
    band: Option<Band>,
    band_start: Vec<u64>,
    band_bytes: Vec<u64>,
    /// fio's SPRandom preconditioning, when the worker's spec asks for it: where its writes go.
    sprandom: Option<SpRandom>,
}

/// The index of an op kind in [`OpGen`]'s per-kind counts.
fn kind_index(kind: OpKind) -> usize {
    match kind {
        OpKind::Read => 0,
        OpKind::Write | OpKind::Flush => 1,
        OpKind::Trim => 2,
    }
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
                        // With a band walk, random offsets are drawn within the band, as fio's last_block is.
                        let span = worker.band.map_or(r.length, |band| band.size.min(r.length));
                        let slots = if span >= b.size_bytes { (span - b.size_bytes) / align + 1 } else { 1 };
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
        let sprandom = worker.specs.first().zip(regions.first()).and_then(|(s, r)| match s.dist {
            Dist::Sprandom { op, regions: n } => {
                let bs = s.bs.first().map_or(4096, |b| b.size_bytes).max(1);
                let align = s.align.unwrap_or(bs).max(1);
                let blocks = r.length.saturating_sub(bs) / align + 1;
                Some(SpRandom::new(blocks, align, op, n, rng.clone().next_u64() ^ 0x5350_5241))
            }
            _ => None,
        });
        OpGen {
            sprandom,
            rng,
            spec_cum,
            specs,
            regions: regions.to_vec(),
            seq_next: vec![0; regions.len()],
            next_target: 0,
            run_left: 0,
            last_start: vec![0; regions.len()],
            paired_write: None,
            issued: [0; 3],
            band: worker.band,
            band_start: vec![0; regions.len()],
            band_bytes: vec![0; regions.len()],
        }
    }

    /// Counts a generated op: per kind, and in its target's band.
    #[inline]
    fn count(&mut self, op: GenOp) -> GenOp {
        self.issued[kind_index(op.kind)] += 1;
        if self.band.is_some() {
            self.band_bytes[op.target as usize] += op.len as u64;
        }
        op
    }

    /// Before an op on target `t` with a band walk: once the band has had its bytes, the next band, `size +
    /// skip` further (the first again when it starts at or past the region's end), as fio's
    /// `setup_strided_zone_mode`; the sequential cursor starts at the band's start.
    fn band_turn(&mut self, t: usize, band: Band) {
        if self.band_bytes[t] < band.bytes {
            return;
        }
        self.band_bytes[t] = 0;
        let next = self.band_start[t].saturating_add(band.size).saturating_add(band.skip);
        self.band_start[t] = if next >= self.regions[t].length { 0 } else { next };
        self.seq_next[t] = self.band_start[t];
    }

    /// The offset (relative to the region) of an op of `len` bytes in target `t`'s band: `slot` (random, in
    /// the band) or the next sequential one, which goes back to the band's start at its end (fio's zone range,
    /// gone over again while the band's bytes last). An I/O that would run past the region's end starts the
    /// walk over at the first band (fio ends the job there).
    fn in_band(&mut self, t: usize, band: Band, slot: Option<u64>, len: u64) -> u64 {
        for _ in 0..2 {
            let start = self.band_start[t];
            let rel = match slot {
                Some(s) => start + s,
                None if self.seq_next[t] >= start + band.size || self.seq_next[t] < start => start,
                None => self.seq_next[t],
            };
            if rel + len <= self.regions[t].length {
                if slot.is_none() {
                    self.seq_next[t] = rel + len;
                }
                return rel;
            }
            (self.band_start[t], self.band_bytes[t], self.seq_next[t]) = (0, 0, 0);
        }
        0
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
            return self.count(write);
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
        let slot = random.then(|| {
            if let (Some(spr), OpKind::Write) = (self.sprandom.as_mut(), kind) {
                return spr.next_block() * size.align;
            }
            let sampler = &size.samplers[t];
            sampler.nth(self.issued[kind_index(kind)]).unwrap_or_else(|| sampler.sample(&mut self.rng))
                * size.align
        });
        let rel = if let Some(band) = self.band {
            self.band_turn(t, band);
            self.in_band(t, band, slot, len)
        } else if follow && identical {
            self.last_start[t].min(region.length.saturating_sub(len))
        } else if let Some(slot) = slot {
            slot
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
        self.count(op)
    }
}
