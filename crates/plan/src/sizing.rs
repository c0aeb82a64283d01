//! Arithmetic on a bound plan (the plan and the regions [`Plan::bind`] gave its workers) that later stages
//! size themselves by: the span of each target the workers address (what a percentage cache is a share of),
//! the cache's size before any device or memory cap, and the transfer sizes and offset alignment a
//! verification block must divide. Pure functions, so the numbers are tested here rather than through a run.

use crate::{Plan, Region};
use iolab_spec::{CacheSize, CacheSpec};

/// Per run target, the span of it the workers address (from the lowest region start to the highest end): the
/// data set a percentage cache is a share of (the whole target unless `offset`/`length` narrow it). A target
/// no worker addresses spans 0 bytes. `regions[w][i]` is worker `w`'s region in its `i`-th target.
pub fn addressed_bytes(plan: &Plan, regions: &[Vec<Region>]) -> Vec<u64> {
    let mut span: Vec<Option<(u64, u64)>> = vec![None; plan.targets.len()];
    for (w, rs) in plan.workers.iter().zip(regions) {
        for (&t, r) in w.targets.iter().zip(rs) {
            let (lo, hi) = (r.offset, r.offset + r.length);
            span[t] = Some(span[t].map_or((lo, hi), |(a, b)| (a.min(lo), b.max(hi))));
        }
    }
    span.iter().map(|s| s.map_or(0, |(a, b)| b - a)).collect()
}

/// The cache's size before any device or memory cap: a size, or a share of the `addressed` bytes (see
/// [`addressed_bytes`]), at most the data set rounded up to whole `line`s.
pub fn cache_asked_bytes(spec: &CacheSpec, addressed: &[u64], line: u64) -> u64 {
    let total: u64 = addressed.iter().sum();
    let bytes = match spec.size {
        Some(CacheSize::Bytes(b)) => b,
        Some(CacheSize::Percent(p)) => (total as f64 * p / 100.0) as u64,
        None => 0,
    };
    bytes.min(total.div_ceil(line) * line)
}

/// Whether a run's emulated devices and its cache keep the data written to them. They need to only when
/// something reads it back and checks it: `--verify`. A cache in front of a real file or device always keeps
/// its lines (they are that target's data, and a write-back writes them there). Otherwise they keep metadata
/// only, so an emulated array of any size, and a cache of any size over one, fit in a little memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DataKept {
    /// Nothing is kept: no emulated target, no cache, or nothing checks the data.
    No,
    /// `--verify` reads back what was written.
    Verify,
    /// The cache is in front of a real file or device.
    RealTarget,
}

impl DataKept {
    /// What `plan` keeps, with `cache` and `verifying` (`--verify`).
    pub fn of(plan: &Plan, cache: &CacheSpec, verifying: bool) -> DataKept {
        let real = plan.targets.iter().any(|t| !matches!(t.spec.base(), iolab_spec::TargetSpec::Sim(_)));
        let real_dev = matches!(cache.dev, Some(iolab_spec::TargetSpec::Path { .. }));
        if verifying {
            DataKept::Verify
        } else if cache.enabled() && (real || real_dev) {
            DataKept::RealTarget
        } else {
            DataKept::No
        }
    }

    /// Whether anything keeps data.
    pub fn kept(self) -> bool {
        self != DataKept::No
    }
}

/// RAM one cache line's metadata takes (index, policy, state): an upper bound, used for a cache that keeps no
/// data.
pub const METADATA_BYTES_PER_LINE: u64 = 64;

/// The memory a run takes before it starts, by what takes it: every worker's I/O buffers (two per slot,
/// each as large as its largest block), the `mem:` RAM disks, and the cache's data store.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemoryNeed {
    /// The workers' I/O buffers: 2 x qd x largest block size, per worker.
    pub buffers_bytes: u64,
    /// The `mem:` targets' sizes.
    pub ram_disks_bytes: u64,
    /// The cache's data, as asked (`--cache`, capped by `--cache-max-mem`), or only its lines' metadata when
    /// it keeps no data ([`DataKept`]).
    pub cache_bytes: u64,
}

impl MemoryNeed {
    /// The run's need: `cache_line` is the cache's line size (the default when the job sets none).
    pub fn of(
        plan: &Plan,
        regions: &[Vec<Region>],
        cache: &CacheSpec,
        cache_line: u64,
        data: DataKept,
    ) -> MemoryNeed {
        let buffers_bytes = plan.workers.iter().map(|w| 2 * w.qd as u64 * w.max_bs).sum();
        let ram_disks_bytes = plan
            .targets
            .iter()
            .filter_map(|t| match t.spec.base() {
                iolab_spec::TargetSpec::Mem { size_bytes } => Some(*size_bytes),
                _ => None,
            })
            .sum();
        let asked = cache_asked_bytes(cache, &addressed_bytes(plan, regions), cache_line);
        let cache_bytes = cache.max_mem_bytes.map_or(asked, |cap| asked.min(cap));
        let cache_bytes =
            if data.kept() { cache_bytes } else { cache_bytes / cache_line.max(1) * METADATA_BYTES_PER_LINE };
        MemoryNeed { buffers_bytes, ram_disks_bytes, cache_bytes }
    }

    /// All of it.
    pub fn total_bytes(&self) -> u64 {
        self.buffers_bytes + self.ram_disks_bytes + self.cache_bytes
    }
}

/// Every transfer size of the plan, and the alignment its offsets share (explicit alignments and the regions'
/// starts; 0 when every offset is 0): a verification block must divide them all, or ops would straddle
/// blocks and go unchecked.
pub fn verify_block_sizes(plan: &Plan, regions: &[Vec<Region>]) -> (Vec<u32>, u64) {
    let mut sizes = Vec::new();
    let mut align = 0u64;
    for r in regions.iter().flatten() {
        align = gcd(align, r.offset);
    }
    for w in &plan.workers {
        for s in &w.specs {
            for b in &s.bs {
                sizes.push(b.size_bytes.min(u32::MAX as u64) as u32);
            }
            if let Some(a) = s.align {
                align = gcd(align, a);
            }
            align = gcd(align, s.seq_skip.unsigned_abs());
        }
    }
    (sizes, align)
}

/// Greatest common divisor; `gcd(0, b) == b`.
fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_spec::{JobSpec, TargetSpec};

    fn plan(toml: &str) -> Plan {
        let job = JobSpec::from_toml(toml, "t.toml").unwrap();
        Plan::from_spec(&job, Some(&TargetSpec::parse("mem:64M").unwrap())).unwrap()
    }

    fn region(offset: u64, length: u64) -> Region {
        Region { offset, length }
    }

    #[test]
    fn gcd_with_zero_is_the_other_number() {
        assert_eq!(gcd(0, 4096), 4096);
        assert_eq!(gcd(4096, 0), 4096);
        assert_eq!(gcd(12288, 8192), 4096);
    }

    #[test]
    fn addressed_bytes_spans_lowest_start_to_highest_end() {
        let p = plan("[worker.a]\n[worker.b]\n");
        assert_eq!(p.targets.len(), 1);
        let regions = vec![vec![region(1 << 20, 4 << 20)], vec![region(8 << 20, 2 << 20)]];
        assert_eq!(addressed_bytes(&p, &regions), vec![(10 << 20) - (1 << 20)]);
    }

    #[test]
    fn addressed_bytes_unaddressed_target_is_zero() {
        let p = plan("");
        assert_eq!(addressed_bytes(&p, &[]), vec![0]);
    }

    #[test]
    fn cache_asked_bytes_percent_is_a_share_capped_at_whole_lines() {
        let mut spec = CacheSpec { size: Some(CacheSize::Percent(50.0)), ..CacheSpec::default() };
        assert_eq!(cache_asked_bytes(&spec, &[1000, 3000], 64), 2000);
        spec.size = Some(CacheSize::Bytes(1 << 30));
        assert_eq!(cache_asked_bytes(&spec, &[1000], 64), 1024);
        spec.size = None;
        assert_eq!(cache_asked_bytes(&spec, &[1000], 64), 0);
    }

    #[test]
    fn memory_need_counts_buffers_ram_disks_and_the_capped_cache() {
        let p = plan("workers = 3\nqd = 8\nbs = '64k'\n");
        let regions = vec![vec![region(0, 64 << 20)]; 3];
        let none = CacheSpec::default();
        let need = MemoryNeed::of(&p, &regions, &none, 4096, DataKept::RealTarget);
        assert_eq!(need.buffers_bytes, 3 * 2 * 8 * (64 << 10), "two buffers per slot, per worker");
        assert_eq!(need.ram_disks_bytes, 64 << 20, "the one mem: target, once");
        assert_eq!(need.cache_bytes, 0);
        let capped = CacheSpec {
            size: Some(CacheSize::Percent(50.0)),
            max_mem_bytes: Some(8 << 20),
            ..CacheSpec::default()
        };
        let need = MemoryNeed::of(&p, &regions, &capped, 4096, DataKept::RealTarget);
        assert_eq!(need.cache_bytes, 8 << 20, "--cache-max-mem caps the cache");
        assert_eq!(need.total_bytes(), 3 * 2 * 8 * (64 << 10) + (64 << 20) + (8 << 20));
    }

    #[test]
    fn verify_block_sizes_collects_sizes_and_shared_alignment() {
        let p = plan("bs = '8k'\n");
        let (sizes, align) = verify_block_sizes(&p, &[vec![region(12288, 1 << 20)]]);
        assert_eq!(sizes, vec![8192]);
        assert_eq!(align, 12288);
        let (_, align) = verify_block_sizes(&p, &[vec![region(0, 1 << 20)]]);
        assert_eq!(align, 0);
    }
}
