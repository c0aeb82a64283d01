//! TPC-H's figures (clause 5.4) computed from a run's times, named as derived: they are not comparable
//! with published TPC results (iolab's data, the validation parameters, no audit).
//!
//! - Power@Size = 3600 × SF / (the geometric mean of the power test's 22 query times and its 2 refresh
//!   times), each time first raised to at least the longest / 1000 (clause 5.4.1.4); without refresh, the
//!   geometric mean of the 22 query times alone. Times are in seconds, unrounded.
//! - Throughput@Size = S × 22 × 3600 / Ts × SF, Ts the throughput test's elapsed time in seconds.
//! - QphH@Size = √(Power@Size × Throughput@Size).

use super::geomean;
use iolab_report::db_tpch::{QueryResult, TpchDerived, TpchRefreshPair, TpchThroughput, TPCH_DERIVED_NOTE};

/// The figures, when the power test ran all 22 queries (and the throughput test, if any, every stream's
/// 22); `None` otherwise.
pub fn derived(
    sf: f64,
    queries: &[QueryResult],
    refresh: Option<&TpchRefreshPair>,
    throughput: Option<&TpchThroughput>,
) -> Option<TpchDerived> {
    if queries.len() != 22 {
        return None;
    }
    let query_times: Vec<f64> = queries.iter().map(|q| q.seconds).collect();
    let mut times = query_times.clone();
    times.extend(refresh.iter().flat_map(|r| [r.rf1.seconds, r.rf2.seconds]));
    let power_at_size = power_at_size(sf, &times);
    let throughput_at_size = throughput
        .filter(|t| t.elapsed_s > 0.0 && t.query_streams.iter().all(|s| s.queries.len() == 22))
        .map(|t| f64::from(t.streams) * 22.0 * 3600.0 / t.elapsed_s * sf);
    Some(TpchDerived {
        note: TPCH_DERIVED_NOTE.into(),
        geomean_s: geomean(&query_times),
        power_at_size,
        power_basis: if refresh.is_some() { "22 queries and RF1, RF2" } else { "22 queries (no refresh)" }
            .into(),
        throughput_at_size,
        qphh_at_size: throughput_at_size.map(|t| (power_at_size * t).sqrt()),
    })
}

/// 3600 × SF over the geometric mean of `times`, each raised to at least the longest / 1000.
pub fn power_at_size(sf: f64, times: &[f64]) -> f64 {
    let floor = times.iter().copied().fold(0.0, f64::max) / 1_000.0;
    let raised: Vec<f64> = times.iter().map(|t| t.max(floor)).collect();
    3_600.0 * sf / geomean(&raised)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn power_raises_the_shortest_times_to_a_thousandth_of_the_longest() {
        // Geometric mean of 1 and 4 is 2: 3600 × 1 / 2.
        assert!((power_at_size(1.0, &[1.0, 4.0]) - 1_800.0).abs() < 1e-9);
        // 0.0001 counts as 10 / 1000 = 0.01: the mean of 0.01 and 10 is 0.316…
        let p = power_at_size(0.1, &[0.0001, 10.0]);
        assert!((p - 360.0 / (0.01f64 * 10.0).sqrt()).abs() < 1e-6, "{p}");
    }
}
