//! Accelerator utilization, as MLPerf Storage defines it: the share of the time the accelerators computed.
//! Each accelerator's epoch is a run of steps, each a wait for its batch, then its computation. AU is the
//! computation summed over every step of every accelerator-epoch, over the same steps' total time less
//! each accelerator-epoch's first wait (the loader's start: a pipeline fills once per epoch, whatever the
//! storage; DLIO leaves it out too). Samples per second leave nothing out: they are samples over the
//! wall-clock time of the run. Pure arithmetic on given timelines, so it is tested exactly.

/// One step of one accelerator, nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TrainStep {
    /// Waited for the batch.
    pub wait_ns: u64,
    /// Computed.
    pub compute_ns: u64,
}

/// AU's parts over a set of accelerator-epochs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Utilization {
    /// Computation, summed.
    pub compute_ns: u64,
    /// Waits, summed, first steps included.
    pub wait_ns: u64,
    /// The first steps' waits, left out of AU.
    pub first_wait_ns: u64,
    /// `compute / (compute + wait - first waits)`, percent; `None` when no accelerator-epoch had a step
    /// after its first (nothing is left to judge the storage by), or no time at all remains.
    pub au_pct: Option<f64>,
}

/// AU over `runs`, each the steps of one accelerator in one epoch, in order.
pub fn utilization<'a>(runs: impl IntoIterator<Item = &'a [TrainStep]>) -> Utilization {
    let (mut compute, mut wait, mut first, mut judged) = (0u64, 0u64, 0u64, false);
    for steps in runs {
        compute += steps.iter().map(|s| s.compute_ns).sum::<u64>();
        wait += steps.iter().map(|s| s.wait_ns).sum::<u64>();
        first += steps.first().map_or(0, |s| s.wait_ns);
        judged |= steps.len() >= 2;
    }
    let total = compute + wait - first;
    let au_pct = (judged && total > 0).then(|| compute as f64 / total as f64 * 100.0);
    Utilization { compute_ns: compute, wait_ns: wait, first_wait_ns: first, au_pct }
}

/// Samples per second over `elapsed_ns` of wall-clock time; `None` for no time.
pub fn rate(samples: u64, elapsed_ns: u64) -> Option<f64> {
    (elapsed_ns > 0).then(|| samples as f64 / (elapsed_ns as f64 / 1e9))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn step(wait_ms: u64, compute_ms: u64) -> TrainStep {
        TrainStep { wait_ns: wait_ms * MS, compute_ns: compute_ms * MS }
    }

    #[test]
    fn au_is_compute_over_time_without_the_first_wait() {
        // Waits 100, 10, 30 ms; computes 50 ms each: 150 / (150 + 140 - 100) = 150 / 190.
        let a = [step(100, 50), step(10, 50), step(30, 50)];
        let u = utilization([&a[..]]);
        assert_eq!((u.compute_ns, u.wait_ns, u.first_wait_ns), (150 * MS, 140 * MS, 100 * MS));
        assert_eq!(u.au_pct, Some(150.0 / 190.0 * 100.0));
    }

    #[test]
    fn the_first_wait_of_every_accelerator_epoch_is_left_out_and_only_that() {
        let e1 = [step(400, 10), step(0, 10)];
        let e2 = [step(400, 10), step(10, 10)];
        let u = utilization([&e1[..], &e2[..]]);
        assert_eq!(u.first_wait_ns, 800 * MS);
        // 40 / (40 + 810 - 800).
        assert_eq!(u.au_pct, Some(40.0 / 50.0 * 100.0));
        // A storage that never makes the accelerator wait after the first batch: 100 %.
        let fed = [step(1000, 5), step(0, 5), step(0, 5)];
        assert_eq!(utilization([&fed[..]]).au_pct, Some(100.0));
    }

    #[test]
    fn with_one_step_per_epoch_au_has_no_value_but_samples_per_second_do() {
        // DLIO's four-accelerator anchor (docs/AI.md): too few steps; DLIO prints 0.0, iolab says why.
        let one = [step(300, 323)];
        assert_eq!(utilization([&one[..], &one[..]]).au_pct, None);
        assert_eq!(utilization(std::iter::empty::<&[TrainStep]>()).au_pct, None);
        // The first wait counts in samples per second: 7 samples over 623 ms.
        assert_eq!(rate(7, 623 * MS), Some(7.0 / 0.623));
        assert_eq!(rate(7, 0), None);
    }

    #[test]
    fn no_computation_is_zero_au() {
        let a = [step(5, 0), step(5, 0)];
        assert_eq!(utilization([&a[..]]).au_pct, Some(0.0));
    }
}
