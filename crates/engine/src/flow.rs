//! Flow groups (fio's `flow`, `flow_id`): workers that issue I/Os in the ratio of their weights. Each worker
//! counts its own I/Os and the group counts all of them; a worker whose share of the group's count is above
//! its share of the group's weight is ahead and issues nothing until the others catch up, as fio's flow.c
//! `flow_threshold_exceeded` decides. A worker joins its group when it starts issuing (after its start delay)
//! and leaves it when it stops, taking its weight and its count with it, so the workers left are not held
//! back by one that is gone (fio's `flow_init_job`, `flow_exit_job`).

use iolab_plan::WorkerPlan;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// One flow group: the I/Os its workers issued and their weights, shared by them.
#[derive(Debug)]
pub struct FlowGroup {
    /// I/Os issued by the group's workers, plus 1 (fio starts the count at 1).
    issued: AtomicU64,
    /// The weights of the workers in the group now.
    weight: AtomicU64,
}

impl FlowGroup {
    /// A group with no workers yet.
    pub fn new() -> FlowGroup {
        FlowGroup { issued: AtomicU64::new(1), weight: AtomicU64::new(0) }
    }

    /// The group of each worker of `workers` (None for a worker in none), one group per `flow_id`.
    pub fn for_workers(workers: &[WorkerPlan]) -> Vec<Option<Arc<FlowGroup>>> {
        let mut groups: BTreeMap<u32, Arc<FlowGroup>> = BTreeMap::new();
        workers.iter().map(|w| w.flow.map(|f| groups.entry(f.id).or_default().clone())).collect()
    }

    /// A worker of `weight` joins.
    pub fn join(&self, weight: u32) {
        self.weight.fetch_add(weight as u64, Ordering::Relaxed);
    }

    /// A worker of `weight` that issued `mine` I/Os leaves.
    pub fn leave(&self, weight: u32, mine: u64) {
        self.weight.fetch_sub(weight as u64, Ordering::Relaxed);
        self.issued.fetch_sub(mine, Ordering::Relaxed);
    }

    /// Whether a worker of `weight` that issued `mine` I/Os is ahead of its share (and must not issue now).
    pub fn ahead(&self, weight: u32, mine: u64) -> bool {
        let issued = self.issued.load(Ordering::Relaxed).max(1);
        let total = self.weight.load(Ordering::Relaxed).max(1);
        mine as f64 / issued as f64 > weight as f64 / total as f64
    }

    /// Counts one I/O of a worker in the group.
    pub fn count(&self) {
        self.issued.fetch_add(1, Ordering::Relaxed);
    }
}

impl Default for FlowGroup {
    fn default() -> FlowGroup {
        FlowGroup::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Weights 1 and 8: of the I/Os the two issue when both always want to, 1 in 9 is the first's.
    #[test]
    fn workers_issue_in_the_ratio_of_their_weights() {
        let g = FlowGroup::new();
        g.join(1);
        g.join(8);
        let mut mine = [0u64; 2];
        for _ in 0..9000 {
            for (i, w) in [1u32, 8].into_iter().enumerate() {
                if !g.ahead(w, mine[i]) {
                    g.count();
                    mine[i] += 1;
                }
            }
        }
        let share = mine[0] as f64 / (mine[0] + mine[1]) as f64;
        assert!((share - 1.0 / 9.0).abs() < 0.01, "{mine:?}");
        g.leave(1, mine[0]);
        assert!(!g.ahead(8, mine[1]), "alone, the second is never ahead");
    }
}
