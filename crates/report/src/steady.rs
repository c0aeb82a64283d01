//! Steady-state detection (`--steady-state METRIC:PCT`): the rule, the tracker that follows a run interval by
//! interval, and what it found. Used by a run (its `steady_state` section) and by a sweep's preconditioning,
//! so it belongs to neither document.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// How steady state is judged (`--steady-state METRIC:PCT`), after fio's `steadystate=iops:PCT`: over the
/// last `window_intervals` intervals, every interval's value is within `max_dev_pct` % of the window's mean
/// (max |v - mean| / mean * 100 <= PCT). fio's `_slope` variants are not implemented.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SteadyStateRule {
    /// `iops` (all ops per second) or `lat` (mean response time per interval).
    pub metric: String,
    /// Largest allowed deviation from the window's mean, percent.
    pub max_dev_pct: f64,
    /// Window length in seconds.
    pub window_s: f64,
    /// Time limit in seconds: the run ends there, steady or not.
    pub limit_s: f64,
}

/// What a steady-state run found.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SteadyStateResult {
    /// The criterion.
    pub rule: SteadyStateRule,
    /// Steady state was reached within the limit.
    pub reached: bool,
    /// Measured seconds when it was reached (or when the run ended without reaching it).
    pub after_s: f64,
    /// The window's per-interval values at the end (oldest first), in the metric's unit.
    pub window: Vec<f64>,
    /// The window's mean.
    pub window_mean: f64,
    /// The window's largest deviation from its mean, percent of the mean.
    pub window_max_dev_pct: f64,
    /// The measured part of the preconditioning run, only in a sweep's `preconditioning` (with `--json`,
    /// the run's full numbers are in the text summary).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<BTreeMap<String, String>>,
}

/// Follows a run interval by interval and says when the window is steady.
#[derive(Clone, Debug)]
pub struct SteadyStateTracker {
    rule: SteadyStateRule,
    window_intervals: usize,
    values: std::collections::VecDeque<f64>,
    seen: u64,
    reached: bool,
    interval_s: f64,
}

impl SteadyStateTracker {
    /// A tracker for `rule` over intervals of `interval_s` seconds; the window holds
    /// `ceil(window_s / interval_s)` intervals (at least 2).
    pub fn new(rule: SteadyStateRule, interval_s: f64) -> Self {
        let n = if interval_s > 0.0 { (rule.window_s / interval_s).ceil() } else { 2.0 };
        let window_intervals = (n.clamp(2.0, 1_000_000.0)) as usize;
        Self {
            rule,
            window_intervals,
            values: std::collections::VecDeque::with_capacity(window_intervals),
            seen: 0,
            reached: false,
            interval_s,
        }
    }

    /// Adds one finished interval (its IOPS and mean latency, None when no op succeeded in it); returns true
    /// when the window is steady. Once steady, later intervals are ignored. On latency, an interval without a
    /// latency empties the window: steadiness is never found across a gap.
    pub fn push(&mut self, iops: f64, lat_mean_ns: Option<f64>) -> bool {
        if self.reached {
            // The run is ending; its last, shorter interval must not change what was found.
            return true;
        }
        self.seen += 1;
        let v = if self.rule.metric == "lat" { lat_mean_ns } else { Some(iops) };
        let Some(v) = v else {
            self.values.clear();
            return false;
        };
        if self.values.len() == self.window_intervals {
            self.values.pop_front();
        }
        self.values.push_back(v);
        if !self.reached && self.values.len() == self.window_intervals {
            let (mean, dev) = self.stats();
            self.reached = mean > 0.0 && dev <= self.rule.max_dev_pct;
        }
        self.reached
    }

    fn stats(&self) -> (f64, f64) {
        let n = self.values.len().max(1) as f64;
        let mean = self.values.iter().sum::<f64>() / n;
        let dev = self.values.iter().map(|v| (v - mean).abs()).fold(0.0, f64::max);
        (mean, if mean > 0.0 { dev / mean * 100.0 } else { f64::INFINITY })
    }

    /// The result so far.
    pub fn result(&self) -> SteadyStateResult {
        let (mean, dev) = self.stats();
        SteadyStateResult {
            rule: self.rule.clone(),
            reached: self.reached,
            after_s: self.seen as f64 * self.interval_s,
            window: self.values.iter().copied().collect(),
            window_mean: mean,
            window_max_dev_pct: if dev.is_finite() { dev } else { 0.0 },
            params: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steady_state_needs_a_full_window_within_pct() {
        let rule = SteadyStateRule { metric: "iops".into(), max_dev_pct: 5.0, window_s: 3.0, limit_s: 60.0 };
        let mut t = SteadyStateTracker::new(rule, 1.0);
        assert!(!t.push(100.0, None));
        assert!(!t.push(200.0, None));
        assert!(!t.push(210.0, None), "window 100,200,210 is not steady");
        // 200, 210, 200: mean 203.3, largest deviation 6.7 = 3.3 % of the mean.
        assert!(t.push(200.0, None));
        let r = t.result();
        assert!(r.reached);
        assert_eq!(r.window, vec![200.0, 210.0, 200.0]);
        assert_eq!(r.after_s, 4.0);
        assert!((r.window_max_dev_pct - 6.666_667 / 203.333_333 * 100.0).abs() < 1e-3);
    }

    #[test]
    fn steady_state_on_latency_uses_mean_latency() {
        let rule = SteadyStateRule { metric: "lat".into(), max_dev_pct: 1.0, window_s: 2.0, limit_s: 60.0 };
        let mut t = SteadyStateTracker::new(rule, 1.0);
        assert!(!t.push(1.0, Some(100.0)));
        assert!(t.push(5000.0, Some(100.5)), "IOPS vary wildly but latency does not");
    }
}
