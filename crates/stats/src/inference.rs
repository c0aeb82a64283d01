//! Inference over a handful of values: mean, variance, spread, Student-t confidence intervals and Welch's
//! t-test. One definition of each quantity for the whole program: the run warnings (per-interval IOPS), the
//! sweep summaries (per-point trials) and `iolab compare` (per-side trials) all call these.
//!
//! # Definitions
//!
//! With values x₁..xₙ:
//!
//! ```text
//! mean            m  = Σxᵢ / n
//! sample variance s² = Σ(xᵢ − m)² / (n − 1)          (Bessel's correction; 0 for n < 2)
//! sample sd       s  = √s²
//! CV              s / |m|                          (None for n < 2, a zero or non-finite mean)
//! 95 % CI         m ± t₀.₉₇₅,ₙ₋₁ · s / √n
//! ```
//!
//! **Why the sample (n − 1) variance everywhere**, the coefficient of variation included: every series this
//! program summarises is a sample of what the storage would do, never the whole population: a few trials of a
//! configuration, or the intervals of one run standing for the device's behaviour over time. The n − 1
//! divisor makes s² unbiased for the population variance; dividing by n underestimates it, most for the short
//! series iolab sees (3 trials: by a third). One divisor also means a CV printed by a sweep and a CV in a
//! run's variability warning are the same number for the same values. (Before issue 13 the warning used the
//! population divisor; on the 10+ intervals a warning needs the difference is under 5 %.)
//!
//! # Student's t and Welch's test
//!
//! The 97.5 % quantile of Student's t ([`student_t_975`]) comes from a table for 1..=30 degrees of freedom
//! (exact to 3 decimals) and the Cornish-Fisher expansion above. Welch's unequal-variances t-test, two-sided
//! ([`welch_t_test`]), with sample means m₁, m₂, sample variances s₁², s₂² and sizes n₁, n₂:
//!
//! ```text
//! t  = (m₂ − m₁) / √(s₁²/n₁ + s₂²/n₂)
//! ν  = (s₁²/n₁ + s₂²/n₂)² / ( (s₁²/n₁)²/(n₁−1) + (s₂²/n₂)²/(n₂−1) )          (Welch–Satterthwaite)
//! p  = 2·(1 − F_ν(|t|)) = I_{ν/(ν+t²)}(ν/2, 1/2)
//! ```
//!
//! where F_ν is Student's t distribution function and I_x(a, b) the regularized incomplete beta function
//! (Abramowitz & Stegun 26.7.1 and 26.5.27), computed by its continued fraction with the modified Lentz
//! method (Numerical Recipes, 3rd ed., §6.4), with ln Γ from the Lanczos approximation (g = 7, 9 terms;
//! relative error ~1e-15). References: B. L. Welch, "The generalization of Student's problem when several
//! different population variances are involved", Biometrika 34 (1947); F. E. Satterthwaite, Biometrics
//! Bulletin 2 (1946). When both sides have zero spread the test degenerates: equal means give p = 1,
//! different means p = 0 (a deterministic difference, e.g. an emulated device on virtual time).

/// Arithmetic mean, Σxᵢ / n; 0 for an empty slice.
pub fn mean(values: &[f64]) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    values.iter().sum::<f64>() / values.len() as f64
}

/// Mean and sample variance Σ(xᵢ − m)² / (n − 1) (see the module header for why n − 1); the variance is 0
/// for fewer than 2 values, the mean 0 for none.
pub fn mean_and_sample_variance(values: &[f64]) -> (f64, f64) {
    let m = mean(values);
    if values.len() < 2 {
        return (m, 0.0);
    }
    let ss = values.iter().map(|x| (x - m) * (x - m)).sum::<f64>();
    (m, ss / (values.len() - 1) as f64)
}

/// Sample variance (n − 1 divisor); 0 for fewer than 2 values.
pub fn sample_variance(values: &[f64]) -> f64 {
    mean_and_sample_variance(values).1
}

/// Sample standard deviation, √[`sample_variance`].
pub fn sample_sd(values: &[f64]) -> f64 {
    sample_variance(values).sqrt()
}

/// Coefficient of variation: sample standard deviation / |mean|. `None` for fewer than 2 values, a zero or
/// non-finite mean.
pub fn coefficient_of_variation(values: &[f64]) -> Option<f64> {
    if values.len() < 2 {
        return None;
    }
    let (m, var) = mean_and_sample_variance(values);
    if m == 0.0 || !m.is_finite() {
        return None;
    }
    Some(var.sqrt() / m.abs())
}

/// Median of `values` (mean of the two middle values for an even count); `None` when empty.
pub fn median(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mid = sorted.len() / 2;
    Some(if sorted.len() % 2 == 0 { (sorted[mid - 1] + sorted[mid]) / 2.0 } else { sorted[mid] })
}

/// The two-sided 95 % quantile of Student's t distribution (t_{0.975, df}), the multiplier of the standard
/// error in the confidence interval. Exact to 3 decimals from a table for df 1..=30; above, the
/// Cornish-Fisher expansion around the normal quantile 1.959964 (error below 1e-4 for df > 30). NaN for 0.
pub fn student_t_975(df: u32) -> f64 {
    const T: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145,
        2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048,
        2.045, 2.042,
    ];
    match df {
        0 => f64::NAN,
        1..=30 => T[df as usize - 1],
        _ => {
            let z: f64 = 1.959_964;
            let d = df as f64;
            z + (z.powi(3) + z) / (4.0 * d) + (5.0 * z.powi(5) + 16.0 * z.powi(3) + 3.0 * z) / (96.0 * d * d)
        }
    }
}

/// Two-sided 95 % confidence interval of the mean, m ± t_{0.975,n−1} · s/√n (s the sample standard deviation),
/// as `(low, high)`; `None` for fewer than 2 values.
pub fn confidence_interval_95(values: &[f64]) -> Option<(f64, f64)> {
    let n = values.len();
    if n < 2 {
        return None;
    }
    let (m, var) = mean_and_sample_variance(values);
    let half = student_t_975(n as u32 - 1) * var.sqrt() / (n as f64).sqrt();
    Some((m - half, m + half))
}

/// ln Γ(x) for x > 0: the Lanczos approximation with g = 7 and 9 coefficients (relative error about 1e-15),
/// with the reflection formula below 0.5. NaN for x ≤ 0 at the poles.
pub fn ln_gamma(x: f64) -> f64 {
    const G: f64 = 7.0;
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if !x.is_finite() {
        return f64::NAN;
    }
    if x < 0.5 {
        // Γ(x)Γ(1−x) = π / sin(πx)
        let s = (std::f64::consts::PI * x).sin();
        if s == 0.0 {
            return f64::NAN;
        }
        return (std::f64::consts::PI / s.abs()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut a = C[0];
    let t = x + G + 0.5;
    for (i, c) in C.iter().enumerate().skip(1) {
        a += c / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// The continued fraction of the incomplete beta function, by the modified Lentz method (Numerical Recipes
/// 3rd ed., §6.4, `betacf`). Converges fast for x < (a+1)/(a+b+2).
fn beta_continued_fraction(a: f64, b: f64, x: f64) -> f64 {
    const MAX_ITERATIONS: u32 = 10_000;
    const EPS: f64 = 1e-15;
    const TINY: f64 = 1e-300;
    let clamp = |v: f64| if v.abs() < TINY { TINY } else { v };
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 / clamp(1.0 - qab * x / qap);
    let mut h = d;
    for m in 1..=MAX_ITERATIONS {
        let m = f64::from(m);
        let m2 = 2.0 * m;
        // Even step.
        let aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 / clamp(1.0 + aa * d);
        c = clamp(1.0 + aa / c);
        h *= d * c;
        // Odd step.
        let aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 / clamp(1.0 + aa * d);
        c = clamp(1.0 + aa / c);
        let delta = d * c;
        h *= delta;
        if (delta - 1.0).abs() < EPS {
            break;
        }
    }
    h
}

/// The regularized incomplete beta function I_x(a, b) (A&S 26.5.1), for a, b > 0 and x in [0, 1]; NaN
/// outside. Uses the continued fraction directly or through the symmetry I_x(a,b) = 1 − I_{1−x}(b,a),
/// whichever converges fast.
pub fn regularized_incomplete_beta(a: f64, b: f64, x: f64) -> f64 {
    if !(a > 0.0 && b > 0.0 && (0.0..=1.0).contains(&x)) {
        return f64::NAN;
    }
    if x == 0.0 || x == 1.0 {
        return x;
    }
    let ln_front = ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln();
    let front = ln_front.exp();
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_continued_fraction(a, b, x) / a
    } else {
        1.0 - front * beta_continued_fraction(b, a, 1.0 - x) / b
    }
}

/// Two-sided p-value of Student's t statistic `t` with `df` degrees of freedom (df may be fractional, as
/// Welch's is): P(|T| ≥ |t|) = I_{df/(df+t²)}(df/2, 1/2) (A&S 26.7.1). 0 for infinite |t|; NaN for NaN
/// input or df ≤ 0.
pub fn student_t_two_sided_p(t: f64, df: f64) -> f64 {
    if t.is_nan() || df.is_nan() || df <= 0.0 {
        return f64::NAN;
    }
    if t.is_infinite() {
        return 0.0;
    }
    let x = df / (df + t * t);
    regularized_incomplete_beta(df / 2.0, 0.5, x).clamp(0.0, 1.0)
}

/// The outcome of Welch's t-test (see the module header).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WelchOutcome {
    /// (mean of the side − mean of the baseline) / standard error; `None` when infinite (both sides without
    /// spread and different means).
    pub t: Option<f64>,
    /// Welch–Satterthwaite degrees of freedom (n₁ + n₂ − 2 when both spreads are zero).
    pub df: f64,
    /// Two-sided p-value.
    pub p: f64,
}

/// Welch's two-sided t-test of `side` against `base`. `None` when either has fewer than 2 finite values;
/// non-finite values are ignored.
pub fn welch_t_test(base: &[f64], side: &[f64]) -> Option<WelchOutcome> {
    let clean = |v: &[f64]| v.iter().copied().filter(|x| x.is_finite()).collect::<Vec<f64>>();
    let (a, b) = (clean(base), clean(side));
    if a.len() < 2 || b.len() < 2 {
        return None;
    }
    let (m1, v1) = mean_and_sample_variance(&a);
    let (m2, v2) = mean_and_sample_variance(&b);
    let (n1, n2) = (a.len() as f64, b.len() as f64);
    let (q1, q2) = (v1 / n1, v2 / n2);
    let se2 = q1 + q2;
    Some(if se2 > 0.0 {
        let t = (m2 - m1) / se2.sqrt();
        let df = se2 * se2 / (q1 * q1 / (n1 - 1.0) + q2 * q2 / (n2 - 1.0));
        WelchOutcome { t: Some(t), df, p: student_t_two_sided_p(t, df) }
    } else if m1 == m2 {
        WelchOutcome { t: Some(0.0), df: n1 + n2 - 2.0, p: 1.0 }
    } else {
        WelchOutcome { t: None, df: n1 + n2 - 2.0, p: 0.0 }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn coefficient_of_variation_of_constant_series_is_zero() {
        assert_eq!(coefficient_of_variation(&[5.0, 5.0, 5.0]), Some(0.0));
    }

    #[test]
    fn coefficient_of_variation_uses_sample_stdev() {
        // mean 2, sample stdev √2 -> √2 / 2
        assert_eq!(coefficient_of_variation(&[1.0, 3.0]), Some(std::f64::consts::SQRT_2 / 2.0));
    }

    #[test]
    fn coefficient_of_variation_short_or_zero_mean_is_none() {
        assert_eq!(coefficient_of_variation(&[]), None);
        assert_eq!(coefficient_of_variation(&[1.0]), None);
        assert_eq!(coefficient_of_variation(&[0.0, 0.0]), None);
    }

    #[test]
    fn sample_variance_divides_by_n_minus_one() {
        assert_eq!(mean_and_sample_variance(&[90.0, 100.0, 110.0]), (100.0, 100.0));
        assert_eq!(sample_variance(&[4.0]), 0.0);
        assert_eq!(mean_and_sample_variance(&[]), (0.0, 0.0));
        assert_eq!(sample_sd(&[1.0, 3.0]), std::f64::consts::SQRT_2);
    }

    #[test]
    fn median_odd_even_and_empty() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&[]), None);
    }

    #[test]
    fn student_t_975_table_and_expansion() {
        assert_eq!(student_t_975(2), 4.303);
        assert!((student_t_975(40) - 2.021).abs() < 1e-3);
        assert!((student_t_975(120) - 1.980).abs() < 1e-3);
        assert!(student_t_975(0).is_nan());
    }

    #[test]
    fn confidence_interval_95_three_values_uses_student_t() {
        let (lo, hi) = confidence_interval_95(&[90.0, 100.0, 110.0]).unwrap();
        let half = 4.303 * 10.0 / 3f64.sqrt();
        assert!(close(lo, 100.0 - half, 1e-9) && close(hi, 100.0 + half, 1e-9), "{lo} {hi}");
        assert_eq!(confidence_interval_95(&[1.0]), None);
    }

    #[test]
    fn ln_gamma_matches_known_values() {
        assert!(close(ln_gamma(1.0), 0.0, 1e-14));
        assert!(close(ln_gamma(0.5), std::f64::consts::PI.sqrt().ln(), 1e-14));
        assert!(close(ln_gamma(10.0), (362_880.0f64).ln(), 1e-12));
        assert!(close(ln_gamma(0.1), 2.252_712_651_734_206, 1e-12));
    }

    #[test]
    fn incomplete_beta_matches_known_values() {
        // I_x(1, 1) = x; I_x(a, 1) = x^a; I_0.5(a, a) = 0.5.
        assert!(close(regularized_incomplete_beta(1.0, 1.0, 0.3), 0.3, 1e-14));
        assert!(close(regularized_incomplete_beta(3.0, 1.0, 0.4), 0.064, 1e-14));
        assert!(close(regularized_incomplete_beta(7.5, 7.5, 0.5), 0.5, 1e-13));
        assert!(regularized_incomplete_beta(1.0, 1.0, 1.5).is_nan());
        assert!(regularized_incomplete_beta(-1.0, 1.0, 0.5).is_nan());
    }

    #[test]
    fn student_t_p_values_match_tables() {
        // Two-sided p-values 2 * pt(-|t|, df), checked by numeric integration of the t density.
        assert!(close(student_t_two_sided_p(2.0, 10.0), 0.073_388, 1e-5));
        assert!(close(student_t_two_sided_p(3.0, 5.0), 0.030_099, 1e-5));
        // df = 1 is Cauchy: P(|T| >= 1) = 1/2.
        assert!(close(student_t_two_sided_p(1.0, 1.0), 0.5, 1e-12));
        assert!(close(student_t_two_sided_p(-1.0, 1.0), 0.5, 1e-12));
        // The 97.5 % quantiles give p = 0.05.
        assert!(close(student_t_two_sided_p(2.228_138_851_986_274, 10.0), 0.05, 1e-9));
        assert!(close(student_t_two_sided_p(12.706_204_736_174_7, 1.0), 0.05, 1e-9));
        // Large df tends to the normal: 1.959964 -> 0.05.
        assert!(close(student_t_two_sided_p(1.959_963_985, 1e6), 0.05, 1e-5));
        // Fractional df (Welch): 2 * pt(-2.5, 4.5) = 0.059906
        assert!(close(student_t_two_sided_p(2.5, 4.5), 0.059_906, 1e-6));
        assert_eq!(student_t_two_sided_p(0.0, 7.0), 1.0);
        assert_eq!(student_t_two_sided_p(f64::INFINITY, 7.0), 0.0);
        assert!(student_t_two_sided_p(1.0, 0.0).is_nan());
    }

    #[test]
    fn welch_t_test_matches_a_worked_example() {
        // Wikipedia's Welch example: t = -2.4554, df = 24.989, p-value = 0.02138 (t is side - baseline here).
        let a = [27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6, 23.1, 19.6, 19.0, 21.7, 21.4];
        let b = [27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2, 21.9, 22.1, 22.9, 20.5, 24.4];
        let w = welch_t_test(&a, &b).unwrap();
        assert!(close(w.t.unwrap(), 2.455_356, 1e-6), "{w:?}");
        assert!(close(w.df, 24.988_529, 1e-6), "{w:?}");
        assert!(close(w.p, 0.021_378, 1e-6), "{w:?}");
    }

    #[test]
    fn welch_t_test_degenerate_cases() {
        assert!(welch_t_test(&[1.0], &[2.0, 3.0]).is_none());
        let same = welch_t_test(&[5.0, 5.0, 5.0], &[5.0, 5.0, 5.0]).unwrap();
        assert_eq!((same.t, same.p), (Some(0.0), 1.0));
        let diff = welch_t_test(&[5.0, 5.0, 5.0], &[6.0, 6.0, 6.0]).unwrap();
        assert_eq!((diff.t, diff.df, diff.p), (None, 4.0, 0.0));
        assert!(welch_t_test(&[f64::NAN, 1.0, 2.0], &[1.0, 2.0, 3.0]).unwrap().p.is_finite());
    }
}
