//! Service-time distributions of one request on an idle device with a uniformly random offset, used for the
//! analytic figures ([`crate::Model::expected_service_ns`]) of arrays, where the mean of the slower of two or
//! more member requests is needed. Everything is computed on the stack; nothing allocates.
//!
//! This module is the leaf the device models share: it knows no model. Each model builds its own
//! distribution from its parameters (`ServiceDist::hdd` in [`super::hdd`], `ServiceDist::ssd` in
//! [`super::ssd`]), and uses [`MEAN_SQRT_DISTANCE`] and [`normal_cdf`] from here.

/// E[sqrt(|U - V|)] for U, V independent uniform on [0, 1]: the distance x has density 2(1 - x), and
/// the integral of sqrt(x) 2(1 - x) over [0, 1] is 2 (2/3 - 2/5) = 8/15.
pub const MEAN_SQRT_DISTANCE: f64 = 8.0 / 15.0;

/// The standard normal distribution function, from erfc (Numerical Recipes' Chebyshev fit, relative error
/// below 1.2e-7).
pub fn normal_cdf(x: f64) -> f64 {
    0.5 * erfc(-x / std::f64::consts::SQRT_2)
}

fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let r = t
        * (-z * z - 1.265_512_23
            + t * (1.000_023_68
                + t * (0.374_091_96
                    + t * (0.096_784_18
                        + t * (-0.186_288_06
                            + t * (0.278_868_07
                                + t * (-1.135_203_98
                                    + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77)))))))))
            .exp();
    if x >= 0.0 {
        r
    } else {
        2.0 - r
    }
}

/// The service time of one request of a fixed kind and size on an idle member (built by
/// `ServiceDist::hdd` and `ServiceDist::ssd`, defined beside their models).
#[derive(Clone, Copy, Debug)]
pub enum ServiceDist {
    /// `c + S + R`: fixed part c (overhead + transfer), seek S = track + B sqrt(x) with x the distance of two
    /// uniform points (density 2(1 - x)), B = b sqrt(span), and rotational wait R uniform on [0, rev).
    Hdd {
        /// Overhead plus transfer, ns.
        fixed: f64,
        /// Track-to-track seek, ns.
        track: f64,
        /// Seek curve coefficient times sqrt(span), ns.
        b: f64,
        /// One revolution, ns.
        rev: f64,
    },
    /// `m e^(sigma Z)`: log-normal around the median m.
    Ssd {
        /// Median, ns.
        median: f64,
        /// Sigma of the log.
        sigma: f64,
    },
}

impl ServiceDist {
    /// The mean.
    pub fn mean(&self) -> f64 {
        match *self {
            ServiceDist::Hdd { fixed, track, b, rev } => fixed + track + b * MEAN_SQRT_DISTANCE + rev / 2.0,
            ServiceDist::Ssd { median, sigma } => median * (sigma * sigma / 2.0).exp(),
        }
    }

    /// An upper bound of the support (or a point beyond which the tail is negligible).
    fn hi(&self) -> f64 {
        match *self {
            ServiceDist::Hdd { fixed, track, b, rev } => fixed + track + b + rev,
            ServiceDist::Ssd { median, sigma } => median * (9.0 * sigma).exp(),
        }
    }

    /// P(service <= u).
    pub fn cdf(&self, u: f64) -> f64 {
        match *self {
            ServiceDist::Hdd { fixed, track, b, rev } => {
                // F_{S+R}(v) = (I(v) - I(v - rev)) / rev with I the integral of F_S.
                let i = |s: f64| -> f64 {
                    if s <= track {
                        0.0
                    } else if b <= 0.0 || s >= track + b {
                        b * (2.0 / 3.0 - 1.0 / 5.0) + (s - track - b)
                    } else {
                        let y = (s - track) / b;
                        b * (2.0 * y * y * y / 3.0 - y.powi(5) / 5.0)
                    }
                };
                let v = u - fixed;
                if rev <= 0.0 {
                    return if v >= track + b { 1.0 } else { 0.0 };
                }
                ((i(v) - i(v - rev)) / rev).clamp(0.0, 1.0)
            }
            ServiceDist::Ssd { median, sigma } => {
                if u <= 0.0 {
                    0.0
                } else if sigma == 0.0 {
                    if u >= median {
                        1.0
                    } else {
                        0.0
                    }
                } else {
                    normal_cdf((u / median).ln() / sigma)
                }
            }
        }
    }

    /// E[max of k independent draws] = integral over u >= 0 of 1 - F(u)^k.
    pub fn mean_max(&self, k: u32) -> f64 {
        if k <= 1 {
            return self.mean();
        }
        if let ServiceDist::Ssd { median, sigma } = *self {
            if sigma == 0.0 {
                return median;
            }
        }
        const STEPS: usize = 40_000;
        let hi = self.hi();
        let h = hi / STEPS as f64;
        let mut sum = 0.0;
        for i in 0..STEPS {
            let u = (i as f64 + 0.5) * h;
            sum += 1.0 - self.cdf(u).powi(k as i32);
        }
        sum * h
    }

    /// E[g(|X - Y|)] for X, Y independent draws, by a midpoint grid of the distribution.
    pub fn mean_of_gap(&self, g: impl Fn(f64) -> f64) -> f64 {
        const K: usize = 1200;
        let hi = self.hi();
        let h = hi / K as f64;
        let mut p = [0.0f64; K];
        let mut prev = self.cdf(0.0);
        let mut total = 0.0;
        for (i, pi) in p.iter_mut().enumerate() {
            let c = self.cdf((i + 1) as f64 * h);
            *pi = (c - prev).max(0.0);
            total += *pi;
            prev = c;
        }
        let mut sum = 0.0;
        for i in 0..K {
            if p[i] == 0.0 {
                continue;
            }
            sum += p[i] * p[i] * g(0.0);
            for j in (i + 1)..K {
                sum += 2.0 * p[i] * p[j] * g((j - i) as f64 * h);
            }
        }
        sum / (total * total)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normal_cdf_known_points() {
        assert!((normal_cdf(0.0) - 0.5).abs() < 1e-7);
        assert!((normal_cdf(1.0) - 0.841_344_746).abs() < 1e-6);
        assert!((normal_cdf(-1.959_964) - 0.025).abs() < 1e-6);
    }

    #[test]
    fn numeric_max_matches_closed_forms() {
        // Log-normal: E[max of 2] = 2 m e^(s^2/2) Phi(s / sqrt 2).
        let d = ServiceDist::Ssd { median: 100.0, sigma: 0.5 };
        let exact = 2.0 * 100.0 * (0.125f64).exp() * normal_cdf(0.5 / std::f64::consts::SQRT_2);
        assert!((d.mean_max(2) / exact - 1.0).abs() < 1e-4, "{} vs {exact}", d.mean_max(2));
        // HDD: mean from the CDF equals the closed form.
        let h = ServiceDist::Hdd { fixed: 200.0, track: 300.0, b: 6000.0, rev: 6000.0 };
        assert!((h.mean_max(1) / h.mean() - 1.0).abs() < 1e-9);
        let num: f64 = {
            let n = 40_000;
            let hi = h.hi();
            (0..n).map(|i| 1.0 - h.cdf((i as f64 + 0.5) * hi / n as f64)).sum::<f64>() * hi / n as f64
        };
        assert!((num / h.mean() - 1.0).abs() < 1e-4, "{num} vs {}", h.mean());
        assert!(h.mean_max(2) > h.mean());
        let e_gap = h.mean_of_gap(|d| d);
        assert!(e_gap > 0.0 && e_gap < h.hi());
    }
}
