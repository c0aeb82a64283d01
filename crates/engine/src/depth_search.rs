//! The queue-depth search of a worker with a latency target (`latency_target`), as fio's io_u.c
//! `lat_target_*` functions do it: the worker starts at depth 1; at the end of each window it steps up if
//! the window's I/Os met the target (the share `percentile` of them took at most the target from submission
//! to completion), and down if they did not. Up doubles the depth until a depth has failed, then bisects
//! between the depth that met the target and the lowest that failed (`high`), which creeps up by one after
//! three successes in a row just below it; down bisects towards the highest depth that met it (`low`), and
//! waits for the I/Os in flight to complete before issuing again (fio's `io_u_quiesce`). With a percentile of
//! 100, one I/O over the target steps down at once. The search goes on for the whole run (fio's
//! `latency_run=1`); it never goes above the worker's `qd` nor below 1.

use iolab_plan::LatencyTarget;

/// Where a worker's depth search is.
#[derive(Clone, Debug)]
pub struct DepthSearch {
    plan: LatencyTarget,
    /// The most it tries: the worker's `qd`.
    max: u32,
    /// The depth now.
    depth: u32,
    /// The highest depth that met the target.
    low: u32,
    /// The lowest depth that failed (the most at first).
    high: u32,
    /// Successes in a row just below `high`.
    stable: u32,
    /// The window's start, its I/Os and those over the target.
    window_start: u64,
    ios: u64,
    over: u64,
    /// After a step down: nothing is issued until the I/Os in flight have completed.
    quiesce: bool,
}

impl DepthSearch {
    /// A search up to `max` starting at `now`.
    pub fn new(plan: LatencyTarget, max: u32, now: u64) -> DepthSearch {
        DepthSearch {
            plan,
            max,
            depth: 1,
            low: 1,
            high: max,
            stable: 0,
            window_start: now,
            ios: 0,
            over: 0,
            quiesce: false,
        }
    }

    /// The depth now.
    pub fn depth(&self) -> u32 {
        self.depth
    }

    /// Whether a worker with `taken` I/Os in flight may issue one more (`drained`: none in flight), ending
    /// the wait after a step down once it is drained.
    pub fn may_issue(&mut self, taken: usize, drained: bool) -> bool {
        if self.quiesce && drained {
            self.quiesce = false;
        }
        !self.quiesce && taken < self.depth as usize
    }

    /// A read or write completed `svc_ns` after its submission, at `now`.
    pub fn completed(&mut self, svc_ns: u64, now: u64) {
        self.ios += 1;
        if svc_ns > self.plan.target_ns {
            if self.plan.percentile >= 100.0 {
                self.down(now);
            } else {
                self.over += 1;
            }
        }
    }

    /// At `now`: at the window's end, up or down by what its I/Os did.
    pub fn check(&mut self, now: u64) {
        if now.saturating_sub(self.window_start) < self.plan.window_ns {
            return;
        }
        // No I/O in the window fails it, as fio's 0/0 does.
        let met = if self.ios == 0 { 0.0 } else { (self.ios - self.over) as f64 / self.ios as f64 * 100.0 };
        if met >= self.plan.percentile {
            self.up(now);
        } else {
            self.down(now);
        }
    }

    fn new_window(&mut self, now: u64) {
        (self.window_start, self.ios, self.over) = (now, 0, 0);
    }

    /// fio's `lat_target_success`.
    fn up(&mut self, now: u64) {
        self.low = self.depth;
        if self.depth + 1 == self.high {
            self.stable += 1;
            if self.stable >= 3 {
                self.high += 1;
                self.stable = 0;
            }
        }
        self.depth = if self.high != self.max { (self.depth + self.high) / 2 } else { self.depth * 2 };
        self.depth = self.depth.clamp(1, self.max);
        self.new_window(now);
    }

    /// fio's `__lat_target_failed`: at depth 1 it stays there.
    fn down(&mut self, now: u64) {
        if self.depth > 1 {
            self.high = self.depth;
            if self.depth == self.low {
                self.low -= 1;
            }
            self.depth = ((self.depth + self.low) / 2).max(1);
            self.stable = 0;
            self.quiesce = true;
        }
        self.new_window(now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A device whose latency is 100 us up to depth 4 and grows past it: with a target of 150 us the search
    /// doubles to 4, fails at 8, bisects, and settles at 4 (5 is tried now and then as `high` creeps up).
    #[test]
    fn the_search_settles_at_the_deepest_depth_that_meets_the_target() {
        let plan = LatencyTarget { target_ns: 150_000, window_ns: 1_000_000, percentile: 100.0 };
        let mut s = DepthSearch::new(plan, 32, 0);
        let mut seen = Vec::new();
        for w in 1..=40u64 {
            let lat = 100_000 * u64::from(s.depth().div_ceil(4));
            s.completed(lat, w * 1_000_000 - 1);
            s.check(w * 1_000_000);
            seen.push(s.depth());
        }
        assert_eq!(&seen[..4], &[2, 4, 8, 6], "{seen:?}");
        assert!(seen[10..].iter().all(|d| (4..=5).contains(d)), "{seen:?}");
        assert!(seen[10..].iter().filter(|d| **d == 4).count() > 20, "{seen:?}");
    }
}
