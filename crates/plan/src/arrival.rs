//! Open-loop arrival schedules: when each I/O is *meant* to start.
//!
//! Latency in open loop is measured from these intended starts, not from the moment the I/O could be
//! submitted, so a storage system that falls behind shows its queueing delay instead of hiding it
//! (coordinated omission). Fixed arrivals are computed as `start + k / rate` (no accumulated drift);
//! Poisson arrivals add exponential gaps with mean `1 / rate`. In bursts of `n` ([`Arrivals::in_bursts`]),
//! `n` arrivals share each instant and the instants come at `rate / n`: the mean rate is kept, and the
//! squared coefficient of variation of the gaps becomes `2n - 1` for Poisson instants (1 for plain Poisson).

use iolab_rng::Rng;
use iolab_spec::Arrival;

/// The schedule of one worker.
#[derive(Clone, Debug)]
pub struct Arrivals {
    start_ns: u64,
    period_ns: f64,
    poisson: bool,
    k: u64,
    next_ns: u64,
    acc_ns: f64,
    rng: Rng,
    /// Arrivals per instant, and how many of the current instant's are left after this one.
    burst: u32,
    left: u32,
}

impl Arrivals {
    /// A schedule of `rate_iops` from `start_ns` on.
    pub fn new(rate_iops: f64, arrival: Arrival, start_ns: u64, rng: Rng) -> Arrivals {
        let period_ns = 1e9 / rate_iops;
        let mut a = Arrivals {
            start_ns,
            period_ns,
            poisson: arrival == Arrival::Poisson,
            k: 0,
            next_ns: start_ns,
            acc_ns: 0.0,
            rng,
            burst: 1,
            left: 0,
        };
        if a.poisson {
            a.advance();
        }
        a
    }

    /// The schedule in bursts of `n` arrivals at one instant, at the same mean rate (the instants `n` times
    /// further apart); taken before the first arrival.
    pub fn in_bursts(mut self, n: u32) -> Arrivals {
        let n = n.max(1);
        if n == 1 {
            return self;
        }
        self.period_ns *= n as f64;
        (self.k, self.acc_ns, self.next_ns) = (0, 0.0, self.start_ns);
        if self.poisson {
            self.advance_instant();
        }
        self.burst = n;
        self.left = n - 1;
        self
    }

    /// The intended start of the next arrival.
    #[inline]
    pub fn peek(&self) -> u64 {
        self.next_ns
    }

    /// Takes the next arrival and returns its intended start.
    #[inline]
    pub fn take(&mut self) -> u64 {
        let t = self.next_ns;
        self.advance();
        t
    }

    /// How many arrivals are due before `t` and not yet taken (the open-loop backlog). Computed from the mean
    /// rate, so it is exact for fixed arrivals and the expected value for Poisson ones.
    pub fn due_before(&self, t: u64) -> u64 {
        if self.next_ns >= t {
            return 0;
        }
        let instants = ((t - self.next_ns) as f64 / self.period_ns).floor() as u64;
        instants * self.burst as u64 + self.left as u64 + 1
    }

    fn advance(&mut self) {
        if self.left > 0 {
            self.left -= 1;
            return;
        }
        self.left = self.burst - 1;
        self.advance_instant();
    }

    fn advance_instant(&mut self) {
        if self.poisson {
            // Inverse transform: -ln(1-u) is Exp(1) for u in [0,1).
            self.acc_ns += -(1.0 - self.rng.unit_f64()).ln() * self.period_ns;
            self.next_ns = self.start_ns + self.acc_ns as u64;
        } else {
            self.k += 1;
            self.next_ns = self.start_ns + (self.k as f64 * self.period_ns).round() as u64;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_arrivals_do_not_drift() {
        let mut a = Arrivals::new(3.0, Arrival::Fixed, 0, Rng::new(1));
        let mut last = 0;
        for _ in 0..3_000_001 {
            last = a.take();
        }
        assert_eq!(last, 1_000_000_000_000_000);
    }

    #[test]
    fn poisson_arrivals_have_the_asked_mean_rate() {
        let mut a = Arrivals::new(1000.0, Arrival::Poisson, 0, Rng::new(2));
        let n = 100_000;
        let mut t = 0;
        for _ in 0..n {
            t = a.take();
        }
        let rate = n as f64 / (t as f64 / 1e9);
        assert!((rate - 1000.0).abs() < 15.0, "rate {rate}");
    }

    #[test]
    fn bursts_keep_the_rate_and_share_their_instant() {
        let mut a = Arrivals::new(1000.0, Arrival::Poisson, 0, Rng::new(3)).in_bursts(8);
        let n = 80_000;
        let times: Vec<u64> = (0..n).map(|_| a.take()).collect();
        assert!(times.chunks(8).all(|c| c.iter().all(|&t| t == c[0])), "eight at each instant");
        let rate = n as f64 / (times[n - 1] as f64 / 1e9);
        assert!((rate - 1000.0).abs() < 25.0, "rate {rate}");
        let gaps: Vec<f64> = times.windows(2).map(|w| (w[1] - w[0]) as f64).collect();
        let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
        let var = gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / gaps.len() as f64;
        let cv2 = var / mean / mean;
        assert!((cv2 - 15.0).abs() < 1.0, "squared CV of the gaps {cv2} (2n - 1 = 15)");
        let fixed = Arrivals::new(10.0, Arrival::Fixed, 0, Rng::new(1)).in_bursts(4);
        assert_eq!(fixed.due_before(500_000_000), 8, "two instants of four, at 0 and 400 ms");
    }
}
