//! Duplicate writes (the `dedupe` key, fio's dedupe options): a worker's writes are unique or copies of an
//! earlier unique write, as fio's `get_buf_state` (io_u.c) and its working set (dedupe.c) choose them.
//!
//! A unique write's data is generated from a seed of its own: worker `w`'s `u`-th unique write has seed
//! `content_seed(run seed, w, u)`, so any worker can regenerate any worker's unique data (the working set
//! shared by `global` workers needs that). Each 4 KiB of a write is random from its seed (as much of it as the
//! data pattern says; the rest stays zero), so a copy equals its original over their common length. A copy
//! repeats the last unique write (`repeat`), or one of the first unique writes drawn uniformly (`set=`): the
//! working set, whose pages a `global` worker spreads over the sharing workers as fio does (page `i` is the
//! `i mod per`-th unique write of the worker `i div per` places after it in the sharing list, `per` = pages /
//! workers sharing). Writes
//! are not stamped with their offset then: that would make every copy unique.

use crate::buffers::{fill_random, random_len};
use iolab_plan::writes::DedupePlan;
use iolab_plan::{Region, WorkerPlan};
use iolab_rng::{splitmix64, Rng};
use iolab_spec::DataPattern;

/// A worker's duplicate writes as they go: which the next write is, and what it holds.
pub(crate) struct DedupeState {
    plan: DedupePlan,
    /// Pages of the working set (0 in `repeat` mode).
    set_pages: u64,
    /// The run seed every worker's unique data comes from.
    seed: u64,
    /// Draws of copy or unique, and of a working-set page.
    rng: Rng,
    /// Unique writes so far.
    unique: u64,
    /// This worker's index.
    worker: u32,
    data: DataPattern,
}

impl DedupeState {
    /// The state of a worker whose region is `region_bytes` long and whose smallest write is `min_write`
    /// bytes, in a run with seed `seed`.
    pub(crate) fn new(
        plan: DedupePlan,
        data: DataPattern,
        seed: u64,
        worker: u32,
        region_bytes: u64,
        min_write: u64,
    ) -> DedupeState {
        let set_pages =
            plan.working_set_pct.map_or(0, |p| (region_bytes / 100 * u64::from(p)) / min_write.max(1));
        let set_pages = set_pages.max(u64::from(plan.working_set_pct.is_some()));
        let rng = Rng::for_worker(seed ^ crate::salts::DEDUPE, worker);
        DedupeState { plan, set_pages, seed, rng, unique: 0, worker, data }
    }

    /// The state of worker `w` (over `regions`, the first one's length sizing the working set, as fio's one
    /// file does) in a run with seed `seed`; `None` without `dedupe`.
    pub(crate) fn of_worker(w: &WorkerPlan, regions: &[Region], seed: u64) -> Option<DedupeState> {
        let plan = w.dedupe.clone()?;
        let min_write = w.specs.iter().flat_map(|s| s.bs.iter().map(|b| b.size_bytes)).min().unwrap_or(4096);
        let region = regions.first().map_or(0, |r| r.length);
        Some(DedupeState::new(plan, w.data, seed, w.index, region, min_write))
    }

    /// Fills `buf[..len]` with the next write's data; returns whether it is a copy of an earlier write's.
    pub(crate) fn fill(&mut self, buf: &mut [u8], len: usize) -> bool {
        let copy = self.rng.below(100) < u64::from(self.plan.pct);
        let (worker, u) = if !copy {
            self.unique += 1;
            (self.worker, self.unique - 1)
        } else if self.set_pages == 0 {
            (self.worker, self.unique.saturating_sub(1))
        } else {
            let i = self.rng.below(self.set_pages);
            self.set_page(i)
        };
        fill_seeded(&mut buf[..len], content_seed(self.seed, worker, u), self.data);
        copy
    }

    /// The unique write (worker, its index) behind working-set page `i`.
    fn set_page(&self, i: u64) -> (u32, u64) {
        let shared = &self.plan.shared_by;
        let Some(me) = shared.iter().position(|w| *w == self.worker) else { return (self.worker, i) };
        let per = (self.set_pages / shared.len() as u64).max(1);
        (shared[((me as u64 + i / per) % shared.len() as u64) as usize], i % per)
    }
}

/// The seed of worker `worker`'s `u`-th unique write.
fn content_seed(seed: u64, worker: u32, u: u64) -> u64 {
    let mut s = seed
        ^ crate::salts::DEDUPE_DATA
        ^ u64::from(worker).rotate_left(40)
        ^ u.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    splitmix64(&mut s)
}

/// Fills `bytes` (whole 4 KiB pieces, the last one maybe shorter) with the data of seed `seed`: each 4 KiB
/// random from its own state, as much of it as `data` says.
pub(crate) fn fill_seeded(bytes: &mut [u8], seed: u64, data: DataPattern) {
    let random = random_len(data);
    for (i, chunk) in bytes.chunks_mut(4096).enumerate() {
        let mut s = seed ^ (i as u64).wrapping_mul(0xD6E8_FEB8_6659_FD93);
        let n = random.min(chunk.len()) & !7;
        fill_random(&mut chunk[..n], splitmix64(&mut s) | 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(pct: u8, set: Option<u8>, shared_by: &[u32]) -> DedupePlan {
        DedupePlan { pct, working_set_pct: set, global: !shared_by.is_empty(), shared_by: shared_by.to_vec() }
    }

    fn dedupe(p: DedupePlan, worker: u32, region: u64) -> DedupeState {
        DedupeState::new(p, DataPattern::Random, 7, worker, region, 4096)
    }

    /// The data of `n` writes of 4 KiB.
    fn writes(d: &mut DedupeState, n: usize) -> Vec<Vec<u8>> {
        let mut buf = vec![0u8; 4096];
        (0..n)
            .map(|_| {
                d.fill(&mut buf, 4096);
                buf.clone()
            })
            .collect()
    }

    fn distinct(w: &[Vec<u8>]) -> usize {
        let mut v = w.to_vec();
        v.sort();
        v.dedup();
        v.len()
    }

    #[test]
    fn repeat_mode_copies_the_last_unique_write_at_the_share_asked() {
        let w = writes(&mut dedupe(plan(50, None, &[]), 0, 1 << 30), 10_000);
        let unique = distinct(&w);
        assert!((4_800..5_200).contains(&unique), "{unique} unique of 10000");
        let mut seen: Vec<&Vec<u8>> = Vec::new();
        for b in &w {
            if seen.contains(&b) {
                assert_eq!(Some(&b), seen.last(), "a copy repeats the last unique write");
            } else {
                seen.push(b);
            }
        }
    }

    #[test]
    fn working_set_copies_come_from_the_first_unique_writes() {
        // 4 MiB region, 25% set: 256 pages of 4 KiB.
        let w = writes(&mut dedupe(plan(30, Some(25), &[]), 0, 4 << 20), 4_000);
        let unique = distinct(&w);
        assert!((2_700..2_900).contains(&unique), "{unique} unique of 4000");
        let mut first: Vec<&Vec<u8>> = Vec::new();
        for (i, b) in w.iter().enumerate() {
            if !w[..i].contains(b) {
                first.push(b);
            } else {
                assert!(
                    first.iter().take(256).any(|f| *f == b),
                    "write {i} copies one of the first 256 unique writes"
                );
            }
        }
    }

    #[test]
    fn workers_write_their_own_data_unless_they_share_a_global_set() {
        let own = |w| writes(&mut dedupe(plan(50, Some(50), &[]), w, 1 << 20), 2_000);
        let (a, b) = (own(0), own(1));
        assert_eq!(b.iter().filter(|x| a.contains(x)).count(), 0, "two workers, no block in common");
        let global = |w| writes(&mut dedupe(plan(50, Some(50), &[0, 1]), w, 1 << 20), 2_000);
        let (a, b) = (global(0), global(1));
        let shared = b.iter().filter(|x| a.contains(x)).count();
        assert!(shared > 300, "worker 1 copies worker 0's writes ({shared} of 2000)");
    }

    #[test]
    fn compressible_copies_keep_their_zero_tail() {
        let mut d =
            DedupeState::new(plan(50, None, &[]), DataPattern::Compressible { pct: 50 }, 7, 0, 1 << 20, 4096);
        for b in writes(&mut d, 10) {
            assert!(b[2048..].iter().all(|&x| x == 0));
            assert!(b[..2048].iter().filter(|&&x| x == 0).count() < 64);
        }
    }
}
