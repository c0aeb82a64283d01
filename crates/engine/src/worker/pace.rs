//! How a worker waits for a scheduled arrival on the real clock: it sleeps until the arrival minus a margin,
//! then spins (polls, reaping completions) to the arrival, so a timer that wakes late costs no lag as long as
//! it is less late than the margin.
//!
//! The margin is chosen from what the worker measures, not assumed: every timed wait for an arrival that ends
//! with nothing completed says how late the kernel woke the worker ([`Pacer::learn`]). The margin is twice
//! the largest of the latest [`WAKE_SAMPLES`] of those, plus [`HEADROOM_NS`] for one pass of the poll loop
//! ([`choose_margin`]), and never more than its cap ([`margin_cap`]), which bounds the CPU the spin costs:
//! half a percent of a core ([`SPIN_BUDGET_NS_PER_S`]) but never under [`MARGIN_FLOOR_NS`] an arrival (fio
//! spends more than that per I/O), nor over an eighth of the mean time between arrivals ([`SPIN_SHARE`]) or
//! [`MARGIN_MAX_NS`]. So the spin costs no more CPU than fio spends at the same rate (docs/BENCHMARKS.md,
//! "Open-loop lag"). Before anything is measured the margin is [`FIRST_MARGIN_NS`]. The ramp is its
//! calibration: the margin of the measured window comes from wake-ups measured before it.
//!
//! Over 20k IOPS (a mean gap under [`MIN_SLEEP_NS`]) a sleep and its wake-up cost as much CPU as the gap
//! itself, so the worker neither spins nor sleeps less than [`MIN_SLEEP_NS`]: it issues on waking every
//! arrival that fell due ([`wait_coalesced`]), each with its own lag, as fio batches rate-limited I/O.
//!
//! What it chose, its cap and every wake-up's lateness go into the result
//! (`rate.margin_ns`, `rate.margin_cap_ns`, `rate.wake_late_ns`). On virtual time nothing of this applies:
//! a worker wakes at the arrival exactly.

use iolab_stats::LatencyHistogram;

/// The latest wake-ups the margin is chosen from.
pub(crate) const WAKE_SAMPLES: usize = 128;

/// Wake-ups between two choices of the margin when none came later than it covers.
pub(crate) const RECHOOSE_EVERY: u64 = 16;

/// The margin before any wake-up was measured.
pub(crate) const FIRST_MARGIN_NS: u64 = 20_000;

/// The longest margin.
pub(crate) const MARGIN_MAX_NS: u64 = 1_000_000;

/// The margin is at most the mean time between arrivals divided by this: at high rates, the spin's share of
/// a core.
pub(crate) const SPIN_SHARE: u64 = 8;

/// The spin's CPU budget, nanoseconds of spin per second (0.5 % of a core): the margin is at most this
/// divided by the rate, unless that is under [`MARGIN_FLOOR_NS`].
pub(crate) const SPIN_BUDGET_NS_PER_S: u64 = 5_000_000;

/// The margin the budget always allows (within an eighth of the gap): under fio's own CPU per I/O.
pub(crate) const MARGIN_FLOOR_NS: u64 = 12_500;

/// Added to the measured lateness: one pass of the poll loop.
pub(crate) const HEADROOM_NS: u64 = 2_000;

/// The shortest sleep of a worker whose mean time between arrivals is under it (rates over 20k IOPS): a
/// wake-up costs a few microseconds of CPU and comes tens late, so sleeping between arrivals this close
/// costs as much CPU as spinning; such a worker sleeps at least this long and issues on waking every arrival
/// that fell due meanwhile (each with its lag), as fio batches its rate-limited I/O.
pub(crate) const MIN_SLEEP_NS: u64 = 50_000;

/// How the margin is chosen, for the result and the text.
pub const MARGIN_RULE: &str = "twice the latest 128 wake-ups' largest lateness + 2 us, capped at the larger \
     of 0.5 % of a core (5 ms per second / rate) and 12.5 us, within 1/8 of the mean gap and 1 ms; over 20k \
     IOPS, sleeps of at least 50 us, arrivals due meanwhile issued on waking";

/// The cap on the margin of a worker offered `rate_iops` (None: no rate of its own, e.g. a replay): the
/// larger of the CPU budget's share of each arrival and [`MARGIN_FLOOR_NS`], within an eighth of the mean
/// gap and [`MARGIN_MAX_NS`].
pub(crate) fn margin_cap(rate_iops: Option<f64>) -> u64 {
    match rate_iops {
        Some(r) if r > 0.0 => {
            let budget = ((SPIN_BUDGET_NS_PER_S as f64 / r) as u64).max(MARGIN_FLOOR_NS);
            budget.min((1e9 / r / SPIN_SHARE as f64) as u64).min(MARGIN_MAX_NS)
        }
        _ => MARGIN_MAX_NS,
    }
}

/// The margin for the measured lateness `late`, capped at `cap`: twice the largest plus [`HEADROOM_NS`]
/// ([`FIRST_MARGIN_NS`] when nothing was measured). Twice, because a new wake-up exceeds the largest of the
/// latest 128 about once in 129 (for wake-ups alike), which alone would put the lag's p99 at the margin's
/// edge; the cap, not the factor, bounds the CPU.
pub(crate) fn choose_margin(late: &[u64], cap: u64) -> u64 {
    match late.iter().max() {
        None => FIRST_MARGIN_NS.min(cap),
        Some(&most) => most.saturating_mul(2).saturating_add(HEADROOM_NS).min(cap),
    }
}

/// What to do at `now` about an arrival due at `arrival`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Wait {
    /// Sleep (in the engine's wait, completions still end it) until this instant.
    Sleep(u64),
    /// Poll: the arrival is within the margin (or past).
    Spin,
}

/// The wait for an arrival due at `arrival` at `now` with margin `margin`: sleep until `arrival - margin`
/// while that is in the future, spin from then on.
pub(crate) fn wait_for(now: u64, arrival: u64, margin: u64) -> Wait {
    if arrival.saturating_sub(now) > margin {
        Wait::Sleep(arrival - margin)
    } else {
        Wait::Spin
    }
}

/// [`wait_for`] for a worker whose arrivals are `coalesce` (mean gap under [`MIN_SLEEP_NS`]): it never
/// spins and never sleeps less than [`MIN_SLEEP_NS`]; an arrival already due is issued at once.
pub(crate) fn wait_coalesced(now: u64, arrival: u64) -> Wait {
    if arrival <= now {
        Wait::Spin
    } else {
        Wait::Sleep(arrival.max(now + MIN_SLEEP_NS))
    }
}

/// A worker's pacing on the real clock: its margin and what it was chosen from.
pub(crate) struct Pacer {
    /// The latest wake-ups' lateness, a ring.
    late: [u64; WAKE_SAMPLES],
    /// How many wake-ups were measured in all.
    measured: u64,
    margin_ns: u64,
    cap_ns: u64,
    /// The mean gap is under [`MIN_SLEEP_NS`]: [`wait_coalesced`].
    coalesce: bool,
    /// Every measured wake-up's lateness, ramp included.
    wake_late: Box<LatencyHistogram>,
}

impl Pacer {
    /// The pacer of a worker offered `rate_iops`.
    pub(crate) fn new(rate_iops: Option<f64>) -> Pacer {
        let cap_ns = margin_cap(rate_iops);
        Pacer {
            late: [0; WAKE_SAMPLES],
            measured: 0,
            margin_ns: choose_margin(&[], cap_ns),
            cap_ns,
            coalesce: rate_iops.is_some_and(|r| r * MIN_SLEEP_NS as f64 > 1e9),
            wake_late: Box::new(LatencyHistogram::coarse()),
        }
    }

    /// The margin now.
    #[cfg(test)]
    pub(crate) fn margin(&self) -> u64 {
        self.margin_ns
    }

    /// The wait for an arrival due at `arrival`, at `now`.
    #[inline]
    pub(crate) fn wait(&self, now: u64, arrival: u64) -> Wait {
        if self.coalesce {
            return wait_coalesced(now, arrival);
        }
        wait_for(now, arrival, self.margin_ns)
    }

    /// Learns from one timed wait, asked to end at `deadline` and ended at `now` with nothing completed:
    /// its lateness joins the latest wake-ups, and the margin is chosen again at once when this one was
    /// later than the margin covers and the cap allows more, else every [`RECHOOSE_EVERY`] wake-ups (so a
    /// margin comes down when wake-ups are prompt again, and choosing costs little at high rates).
    pub(crate) fn learn(&mut self, deadline: u64, now: u64) {
        let late = now.saturating_sub(deadline);
        self.wake_late.record(late);
        self.late[(self.measured % WAKE_SAMPLES as u64) as usize] = late;
        self.measured += 1;
        let uncovered = late + HEADROOM_NS > self.margin_ns && self.margin_ns < self.cap_ns;
        if uncovered || self.measured % RECHOOSE_EVERY == 0 {
            let n = (self.measured as usize).min(WAKE_SAMPLES);
            self.margin_ns = choose_margin(&self.late[..n], self.cap_ns);
        }
    }

    /// What the worker reports: its margin at the end, the cap, and every wake-up's lateness.
    pub(crate) fn into_output(self) -> Pacing {
        Pacing { margin_ns: self.margin_ns, cap_ns: self.cap_ns, wake_late: self.wake_late }
    }
}

/// An open-loop worker's pacing on the real clock, as reported: see the module's documentation.
#[derive(Clone, Debug)]
pub struct Pacing {
    /// The margin at the end of the run: how long before each arrival the worker stopped sleeping.
    pub margin_ns: u64,
    /// The most the margin could be for this worker's rate.
    pub cap_ns: u64,
    /// The lateness of every measured wake-up (timed waits for an arrival that ended with nothing completed).
    pub wake_late: Box<LatencyHistogram>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn margin_is_twice_the_largest_lateness_plus_headroom_and_capped() {
        let late: Vec<u64> = (1..=100).map(|i| i * 1_000).collect();
        assert_eq!(choose_margin(&late, u64::MAX), 200_000 + HEADROOM_NS);
        assert_eq!(choose_margin(&late, 40_000), 40_000, "capped");
        assert_eq!(choose_margin(&[30_000, 5_000, 7_000], u64::MAX), 60_000 + HEADROOM_NS);
        assert_eq!(choose_margin(&[u64::MAX], u64::MAX), u64::MAX, "saturates");
        assert_eq!(choose_margin(&[], u64::MAX), FIRST_MARGIN_NS, "nothing measured yet");
        assert_eq!(choose_margin(&[], 5_000), 5_000, "the first margin is capped too");
    }

    #[test]
    fn over_20k_iops_a_worker_never_spins_and_sleeps_at_least_50_us() {
        assert_eq!(wait_coalesced(1_000, 11_000), Wait::Sleep(1_000 + MIN_SLEEP_NS), "an arrival 10 us away");
        assert_eq!(wait_coalesced(1_000, 200_000), Wait::Sleep(200_000), "far: to the arrival itself");
        assert_eq!(wait_coalesced(11_000, 11_000), Wait::Spin, "due: issued at once");
        let p = Pacer::new(Some(100_000.0));
        assert_eq!(p.wait(0, 10_000), Wait::Sleep(MIN_SLEEP_NS));
        let p = Pacer::new(Some(20_000.0));
        assert_eq!(p.wait(0, 50_000), Wait::Sleep(50_000 - p.margin()), "a 50 us gap: not coalesced");
    }

    #[test]
    fn cap_is_half_a_percent_of_a_core_but_at_least_the_floor_within_an_eighth_of_the_gap() {
        assert_eq!(margin_cap(Some(1.0)), MARGIN_MAX_NS, "at most 1 ms");
        assert_eq!(margin_cap(Some(10.0)), 500_000, "0.5 % of a core: 5 ms a second over 10 arrivals");
        assert_eq!(margin_cap(Some(100.0)), 50_000);
        assert_eq!(margin_cap(Some(1_000.0)), MARGIN_FLOOR_NS, "the floor, above the budget's 5 us");
        assert_eq!(margin_cap(Some(10_000.0)), 12_500, "the floor is an eighth of the 100 us gap");
        assert_eq!(margin_cap(Some(100_000.0)), 1_250, "an eighth of the gap");
        assert_eq!(margin_cap(None), MARGIN_MAX_NS);
    }

    #[test]
    fn sleeps_until_the_margin_before_the_arrival_then_spins() {
        assert_eq!(wait_for(1_000, 100_000, 20_000), Wait::Sleep(80_000));
        assert_eq!(wait_for(80_000, 100_000, 20_000), Wait::Spin, "exactly the margin away");
        assert_eq!(wait_for(90_000, 100_000, 20_000), Wait::Spin);
        assert_eq!(wait_for(120_000, 100_000, 20_000), Wait::Spin, "already late");
        assert_eq!(wait_for(0, 100_000, 0), Wait::Sleep(100_000), "no margin: sleep to the arrival");
    }

    #[test]
    fn pacer_learns_from_the_latest_wake_ups_and_forgets_older_ones() {
        let mut p = Pacer::new(Some(10.0));
        assert_eq!(p.margin(), FIRST_MARGIN_NS);
        p.learn(1_000_000, 1_200_000);
        assert_eq!(p.margin(), 400_000 + HEADROOM_NS, "one sample: twice its lateness");
        // Through the next choice after the late one left the ring (the 144th wake-up).
        let prompt = WAKE_SAMPLES as u64 + RECHOOSE_EVERY - 1;
        for i in 0..prompt {
            p.learn(i * 10_000_000, i * 10_000_000 + 10_000);
        }
        assert_eq!(p.margin(), 20_000 + HEADROOM_NS, "the late one has left the ring");
        p.learn(5, 2); // woke before the deadline: 0 late
        let out = p.into_output();
        assert_eq!(out.wake_late.count(), prompt + 2, "every wake-up is kept");
        assert_eq!(out.wake_late.max(), 200_000);
        assert_eq!(out.cap_ns, 500_000);
    }

    #[test]
    fn pacer_raises_the_margin_at_once_and_lowers_it_every_16_wake_ups() {
        let mut p = Pacer::new(Some(10.0));
        for _ in 0..2 * RECHOOSE_EVERY {
            p.learn(0, 50_000);
        }
        assert_eq!(p.margin(), 100_000 + HEADROOM_NS, "raised by the first late wake-up");
        for _ in 0..WAKE_SAMPLES - 1 {
            p.learn(0, 3_000);
        }
        assert_eq!(p.measured % RECHOOSE_EVERY, RECHOOSE_EVERY - 1);
        assert_eq!(p.margin(), 100_000 + HEADROOM_NS, "last chosen when 16 late ones were in the ring");
        p.learn(0, 3_000);
        assert_eq!(p.margin(), 6_000 + HEADROOM_NS, "chosen again at the 16th: the late ones are gone");
    }

    #[test]
    fn pacer_margin_never_exceeds_the_cap_of_its_rate() {
        let mut p = Pacer::new(Some(10_000.0));
        p.learn(0, 3_000_000);
        assert_eq!(p.margin(), 12_500);
        assert_eq!(p.wait(0, 100_000), Wait::Sleep(87_500));
    }
}
