//! Latency histogram: the one place where samples (latencies in nanoseconds) are recorded.
//!
//! The engine records every completion into a [`LatencyHistogram`]; workers' histograms are merged
//! (never averaged) into the run totals, and percentiles are read from the merged histogram only.
//! [`LatSummary`] is the small, serialisable digest the report prints and exports.

use base64::Engine as _;
use hdrhistogram::serialization::{Deserializer, Serializer, V2Serializer};
use hdrhistogram::Histogram;

/// Highest value the HDR part resolves: one hour in nanoseconds. Larger samples saturate.
pub const LATENCY_NS_MAX: u64 = 3_600_000_000_000;

/// Significant decimal digits of [`LatencyHistogram::new`] (relative error <= 0.1%).
pub const FINE_SIGFIG: u8 = 3;

/// Significant decimal digits of [`LatencyHistogram::coarse`] (relative error <= 1%).
pub const COARSE_SIGFIG: u8 = 2;

/// Magic at the start of the serialised form ("iolab histogram, version 1").
const ENCODING_MAGIC: &[u8; 4] = b"IOH1";

/// Bytes of the exact-statistics prefix: magic, min, max, saturated, sum, sum of squares.
const PREFIX_SIZE_BYTES: usize = 4 + 8 + 8 + 8 + 16 + 16;

/// Latency histogram in nanoseconds.
///
/// # Scheme
///
/// An HDR histogram (Gil Tene's HdrHistogram, the `hdrhistogram` crate), log-linear like fio's
/// `stat.h` histogram: values are grouped in power-of-two *buckets*, and each bucket is split into
/// `2^k` linear *sub-buckets*. With 3 significant digits the sub-bucket count is 2048
/// (the smallest power of two >= 2 x 10^3), so:
///
/// - values 0..=2047 ns are recorded exactly (one sub-bucket per nanosecond);
/// - above that, a sub-bucket of bucket `b` is `2^b` ns wide and starts at >= `1024 x 2^b` ns,
///   so the relative width of any sub-bucket is at most 1/1024 = 0.098%.
///
/// # Error bound
///
/// [`quantile`](Self::quantile) returns the highest value equivalent to the sub-bucket that holds
/// the requested rank, clamped into the exact `[min, max]`. It is therefore never below the exact
/// order statistic and at most 0.1% above it (1% for [`coarse`](Self::coarse), which has 256
/// sub-buckets, 1/128 = 0.78%). Merging never adds error when both sides have the same precision.
///
/// # Range
///
/// 1 ns ..= [`LATENCY_NS_MAX`] (1 hour). A value of 0 is recorded as 1 ns in the HDR part (the
/// exact minimum stays 0). Values above one hour are recorded into the top sub-bucket and counted
/// in [`saturated`](Self::saturated) (reported as a `HistogramSaturated` warning).
///
/// # Exact statistics
///
/// Beside the HDR counts the histogram keeps the exact min, max, sum (u128) and sum of squares
/// (u128) of the real values, so [`min`](Self::min), [`max`](Self::max), [`mean`](Self::mean) and
/// [`stdev`](Self::stdev) carry no binning error. u128 cannot overflow for the sum: 2^64 samples
/// of one hour each is 6.6 x 10^31 < 3.4 x 10^38. The sum of squares saturates only for samples
/// far beyond the one-hour range.
///
/// # Memory cost
///
/// Measured by `histogram_memory_cost_is_as_documented` (u64 counters, 8 bytes each):
///
/// - fine (3 digits):   33,792 counters = 270,336 bytes of counts, plus the 160-byte struct;
/// - coarse (2 digits):  4,608 counters =  36,864 bytes of counts.
///
/// The counts array is allocated once by the constructor; [`record`](Self::record) never allocates.
#[derive(Clone, Debug)]
pub struct LatencyHistogram {
    hdr: Histogram<u64>,
    /// Exact smallest recorded value; `u64::MAX` when empty.
    min_ns: u64,
    /// Exact largest recorded value; 0 when empty.
    max_ns: u64,
    sum_ns: u128,
    sum_squares_ns: u128,
    saturated_count: u64,
}

/// Percentile digest of a [`LatencyHistogram`], in nanoseconds.
///
/// `min`, `max`, `mean` and `stdev` are exact. The percentiles are within 0.1% (fine histogram)
/// above the exact order statistic, see [`LatencyHistogram`].
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LatSummary {
    /// Exact minimum.
    pub min: u64,
    /// Exact arithmetic mean.
    pub mean: f64,
    /// Sample standard deviation (n - 1 in the denominator, as fio does).
    pub stdev: f64,
    /// 50th percentile (median).
    pub p50: u64,
    /// 90th percentile.
    pub p90: u64,
    /// 95th percentile.
    pub p95: u64,
    /// 99th percentile.
    pub p99: u64,
    /// 99.9th percentile.
    pub p999: u64,
    /// 99.99th percentile.
    pub p9999: u64,
    /// Exact maximum.
    pub max: u64,
}

/// Why [`LatencyHistogram::from_base64`] rejected its input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HistogramDecodeError {
    /// The text is not valid standard base64.
    Base64(String),
    /// The decoded bytes do not start with the iolab histogram prefix, or it is truncated.
    BadPrefix,
    /// The HDR V2 payload after the prefix could not be decoded.
    Hdr(String),
    /// The payload decoded, but its range or precision is not one iolab writes.
    UnexpectedLayout {
        /// Significant digits found in the payload.
        sigfig: u8,
        /// Highest trackable value found in the payload.
        high: u64,
    },
}

impl std::fmt::Display for HistogramDecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Base64(e) => write!(f, "histogram is not valid base64: {e}"),
            Self::BadPrefix => write!(f, "histogram does not start with the iolab 'IOH1' prefix"),
            Self::Hdr(e) => write!(f, "histogram HDR payload is invalid: {e}"),
            Self::UnexpectedLayout { sigfig, high } => write!(
                f,
                "histogram layout is unexpected: {sigfig} significant digits, highest value {high}; \
                 expected {FINE_SIGFIG} or {COARSE_SIGFIG} digits and {LATENCY_NS_MAX}"
            ),
        }
    }
}

impl std::error::Error for HistogramDecodeError {}

impl Default for LatencyHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl LatencyHistogram {
    /// A fine histogram: 3 significant digits (<= 0.1% error), about 270 KB.
    pub fn new() -> Self {
        Self::with_sigfig(FINE_SIGFIG)
    }

    /// A coarse histogram: 2 significant digits (<= 1% error), about 37 KB.
    ///
    /// Meant for per-interval (per-second) histograms, where many are kept alive or flushed.
    pub fn coarse() -> Self {
        Self::with_sigfig(COARSE_SIGFIG)
    }

    fn with_sigfig(sigfig: u8) -> Self {
        let hdr = match Histogram::new_with_bounds(1, LATENCY_NS_MAX, sigfig) {
            Ok(h) => h,
            // The bounds are constants checked by the tests; this cannot happen at run time.
            Err(e) => unreachable!("constant histogram bounds rejected: {e:?}"),
        };
        Self::from_parts(hdr)
    }

    fn from_parts(hdr: Histogram<u64>) -> Self {
        Self { hdr, min_ns: u64::MAX, max_ns: 0, sum_ns: 0, sum_squares_ns: 0, saturated_count: 0 }
    }

    /// Significant digits of the HDR part (3 for fine, 2 for coarse).
    pub fn sigfig(&self) -> u8 {
        self.hdr.sigfig()
    }

    /// Records one sample. Hot path: no allocation, no panic.
    #[inline]
    pub fn record(&mut self, ns: u64) {
        let binned_ns = if ns > LATENCY_NS_MAX {
            self.saturated_count += 1;
            LATENCY_NS_MAX
        } else {
            ns.max(1)
        };
        self.hdr.saturating_record(binned_ns);
        self.min_ns = self.min_ns.min(ns);
        self.max_ns = self.max_ns.max(ns);
        self.sum_ns += u128::from(ns);
        let square = u128::from(ns) * u128::from(ns);
        self.sum_squares_ns = self.sum_squares_ns.saturating_add(square);
    }

    /// Adds all samples of `other`, of either precision, to `self`.
    ///
    /// Same precision: counts are added bucket by bucket, no added error. Coarse into fine: each
    /// coarse sub-bucket is re-recorded at its lowest value, so those samples keep the coarse
    /// error bound. The exact statistics are always merged exactly.
    pub fn merge(&mut self, other: &LatencyHistogram) {
        if other.count() == 0 {
            return;
        }
        let want = self.count() + other.count();
        if self.hdr.add(&other.hdr).is_err() {
            // Both sides share the same range, so `add` cannot fail; re-record to be safe anyway.
            for v in other.hdr.iter_recorded() {
                self.hdr.saturating_record_n(v.value_iterated_to(), v.count_at_value());
            }
        }
        self.min_ns = self.min_ns.min(other.min_ns);
        self.max_ns = self.max_ns.max(other.max_ns);
        self.sum_ns = self.sum_ns.saturating_add(other.sum_ns);
        self.sum_squares_ns = self.sum_squares_ns.saturating_add(other.sum_squares_ns);
        self.saturated_count += other.saturated_count;
        debug_assert_eq!(self.count(), want, "a merge keeps every sample");
        debug_assert!(self.min_ns <= self.max_ns, "min <= max after a merge");
    }

    /// Number of samples.
    pub fn count(&self) -> u64 {
        self.hdr.len()
    }

    /// Exact smallest sample, 0 when empty.
    pub fn min(&self) -> u64 {
        if self.count() == 0 {
            0
        } else {
            self.min_ns
        }
    }

    /// Exact largest sample, 0 when empty.
    pub fn max(&self) -> u64 {
        self.max_ns
    }

    /// Exact sum of all samples.
    pub fn sum_ns(&self) -> u128 {
        self.sum_ns
    }

    /// Samples above [`LATENCY_NS_MAX`], binned into the top sub-bucket.
    pub fn saturated(&self) -> u64 {
        self.saturated_count
    }

    /// Exact arithmetic mean; None when empty (no figure from zero samples).
    pub fn mean(&self) -> Option<f64> {
        let n = self.count();
        (n > 0).then(|| self.sum_ns as f64 / n as f64)
    }

    /// Sample standard deviation (n - 1 denominator, as fio), 0 for fewer than 2 samples.
    ///
    /// Computed as `(n * sum_sq - sum^2) / (n * (n - 1))` in exact integers when that fits in
    /// u128 (no cancellation error), otherwise in f64.
    pub fn stdev(&self) -> f64 {
        let n = self.count();
        if n < 2 {
            return 0.0;
        }
        let n128 = u128::from(n);
        let exact = n128
            .checked_mul(self.sum_squares_ns)
            .zip(self.sum_ns.checked_mul(self.sum_ns))
            .and_then(|(a, b)| a.checked_sub(b));
        let variance = match exact {
            Some(numerator) => numerator as f64 / (n as f64 * (n - 1) as f64),
            None => {
                let nf = n as f64;
                let mean = self.sum_ns as f64 / nf;
                ((self.sum_squares_ns as f64 - mean * self.sum_ns as f64) / (nf - 1.0)).max(0.0)
            }
        };
        variance.sqrt()
    }

    /// Value at quantile `q` (0..=1, clamped): the smallest value that at least a fraction `q` of
    /// the samples are at or below (HDR convention), reported as the top of its sub-bucket and
    /// clamped into the exact `[min, max]`. None when empty.
    pub fn quantile(&self, q: f64) -> Option<u64> {
        if self.count() == 0 {
            return None;
        }
        let q = if q.is_nan() { 0.0 } else { q.clamp(0.0, 1.0) };
        // The ends are exact: q = 0 is the exact min, q = 1 the exact max (even when saturated).
        let v = if q == 0.0 {
            self.min()
        } else if q == 1.0 {
            self.max()
        } else {
            self.hdr.value_at_quantile(q)
        };
        Some(v.clamp(self.min(), self.max()))
    }

    /// Digest of the histogram; `None` when empty.
    pub fn summary(&self) -> Option<LatSummary> {
        Some(LatSummary {
            min: self.min(),
            mean: self.mean()?,
            stdev: self.stdev(),
            p50: self.quantile(0.50)?,
            p90: self.quantile(0.90)?,
            p95: self.quantile(0.95)?,
            p99: self.quantile(0.99)?,
            p999: self.quantile(0.999)?,
            p9999: self.quantile(0.9999)?,
            max: self.max(),
        })
    }

    /// Forgets all samples, keeping the allocation.
    pub fn reset(&mut self) {
        self.hdr.reset();
        self.min_ns = u64::MAX;
        self.max_ns = 0;
        self.sum_ns = 0;
        self.sum_squares_ns = 0;
        self.saturated_count = 0;
    }

    /// Standard base64 of: a 60-byte prefix (`IOH1`, then big-endian exact min, max, saturated
    /// count, u128 sum, u128 sum of squares) followed by the uncompressed HDR V2 encoding.
    ///
    /// The HDR part can be read by any HdrHistogram implementation after skipping the prefix.
    pub fn to_base64(&self) -> String {
        let mut bytes = Vec::with_capacity(PREFIX_SIZE_BYTES + 1024);
        bytes.extend_from_slice(ENCODING_MAGIC);
        bytes.extend_from_slice(&self.min_ns.to_be_bytes());
        bytes.extend_from_slice(&self.max_ns.to_be_bytes());
        bytes.extend_from_slice(&self.saturated_count.to_be_bytes());
        bytes.extend_from_slice(&self.sum_ns.to_be_bytes());
        bytes.extend_from_slice(&self.sum_squares_ns.to_be_bytes());
        if let Err(e) = V2Serializer::new().serialize(&self.hdr, &mut bytes) {
            // Writing into a Vec cannot fail; the only other error is a usize overflow.
            unreachable!("HDR V2 serialisation into a Vec failed: {e:?}");
        }
        base64::engine::general_purpose::STANDARD.encode(bytes)
    }

    /// Inverse of [`to_base64`](Self::to_base64); the round trip is exact.
    pub fn from_base64(s: &str) -> Result<Self, HistogramDecodeError> {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(s.trim())
            .map_err(|e| HistogramDecodeError::Base64(e.to_string()))?;
        if bytes.len() < PREFIX_SIZE_BYTES || &bytes[..4] != ENCODING_MAGIC {
            return Err(HistogramDecodeError::BadPrefix);
        }
        let (prefix, payload) = bytes.split_at(PREFIX_SIZE_BYTES);
        let u64_at = |at: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&prefix[at..at + 8]);
            u64::from_be_bytes(b)
        };
        let u128_at = |at: usize| {
            let mut b = [0u8; 16];
            b.copy_from_slice(&prefix[at..at + 16]);
            u128::from_be_bytes(b)
        };
        let mut payload = payload;
        let hdr: Histogram<u64> = Deserializer::new()
            .deserialize(&mut payload)
            .map_err(|e| HistogramDecodeError::Hdr(format!("{e:?}")))?;
        let sigfig = hdr.sigfig();
        if hdr.high() != LATENCY_NS_MAX
            || hdr.low() != 1
            || !(sigfig == FINE_SIGFIG || sigfig == COARSE_SIGFIG)
        {
            return Err(HistogramDecodeError::UnexpectedLayout { sigfig, high: hdr.high() });
        }
        let mut h = Self::from_parts(hdr);
        h.min_ns = u64_at(4);
        h.max_ns = u64_at(12);
        h.saturated_count = u64_at(20);
        h.sum_ns = u128_at(28);
        h.sum_squares_ns = u128_at(44);
        Ok(h)
    }

    /// Bytes used by the counts array (the dominant memory cost).
    pub fn counts_size_bytes(&self) -> usize {
        self.hdr.distinct_values() * std::mem::size_of::<u64>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Exact order statistic with the HDR convention: the value at rank ceil(q * n) (1-based).
    fn exact_quantile(sorted: &[u64], q: f64) -> u64 {
        let rank = ((q * sorted.len() as f64).ceil() as usize).max(1);
        sorted[rank.min(sorted.len()) - 1]
    }

    fn within_relative(got: u64, want: u64, bound: f64) -> bool {
        (got as f64 - want as f64).abs() <= want as f64 * bound
    }

    #[test]
    fn histogram_memory_cost_is_as_documented() {
        let fine = LatencyHistogram::new();
        let coarse = LatencyHistogram::coarse();
        println!(
            "fine: {} bytes of counts, coarse: {} bytes of counts, struct {} bytes",
            fine.counts_size_bytes(),
            coarse.counts_size_bytes(),
            std::mem::size_of::<LatencyHistogram>()
        );
        assert_eq!(fine.counts_size_bytes(), 270_336);
        assert_eq!(coarse.counts_size_bytes(), 36_864);
    }

    #[test]
    fn histogram_empty_reports_zeroes_and_no_summary() {
        let h = LatencyHistogram::new();
        assert_eq!((h.count(), h.min(), h.max(), h.quantile(0.99)), (0, 0, 0, None));
        assert_eq!(h.mean(), None, "no mean from zero samples");
        assert_eq!(h.stdev(), 0.0);
        assert!(h.summary().is_none());
    }

    #[test]
    fn histogram_min_max_mean_are_exact() {
        let mut h = LatencyHistogram::new();
        for v in [123_457u64, 9_999_999, 1_000_001, 77] {
            h.record(v);
        }
        assert_eq!(h.min(), 77);
        assert_eq!(h.max(), 9_999_999);
        assert_eq!(h.sum_ns(), 123_457 + 9_999_999 + 1_000_001 + 77);
        assert_eq!(h.mean().unwrap(), (123_457.0 + 9_999_999.0 + 1_000_001.0 + 77.0) / 4.0);
        // The HDR part alone would report 10_002_431 for the max (top of its sub-bucket).
        assert_eq!(h.quantile(1.0).unwrap(), 9_999_999);
        assert_eq!(h.quantile(0.0).unwrap(), 77);
    }

    #[test]
    fn histogram_stdev_matches_two_pass_sample_stdev() {
        let values: Vec<u64> = (0..1000u64).map(|i| 1_000_000 + i * 37 % 5003).collect();
        let mut h = LatencyHistogram::new();
        values.iter().for_each(|&v| h.record(v));
        let n = values.len() as f64;
        let mean = values.iter().sum::<u64>() as f64 / n;
        let var = values.iter().map(|&v| (v as f64 - mean).powi(2)).sum::<f64>() / (n - 1.0);
        assert!((h.stdev() - var.sqrt()).abs() < 1e-6, "{} vs {}", h.stdev(), var.sqrt());
    }

    #[test]
    fn histogram_zero_is_binned_as_one_but_min_stays_zero() {
        let mut h = LatencyHistogram::new();
        h.record(0);
        h.record(0);
        assert_eq!(h.min(), 0);
        assert_eq!(h.max(), 0);
        assert_eq!(h.quantile(0.5).unwrap(), 0, "clamped into the exact [min, max]");
    }

    #[test]
    fn histogram_quantiles_of_uniform_distribution_are_within_0_1_percent() {
        let mut h = LatencyHistogram::new();
        for v in 1..=1_000_000u64 {
            h.record(v * 10);
        }
        for (q, want) in [(0.5, 5_000_000u64), (0.9, 9_000_000), (0.99, 9_900_000), (0.999, 9_990_000)] {
            let got = h.quantile(q).unwrap();
            assert!(got >= want && within_relative(got, want, 0.001), "q={q}: {got} vs {want}");
        }
    }

    #[test]
    fn histogram_coarse_quantiles_are_within_1_percent() {
        let mut h = LatencyHistogram::coarse();
        for v in 1..=100_000u64 {
            h.record(v * 1000);
        }
        let got = h.quantile(0.99).unwrap();
        assert!(within_relative(got, 99_000_000, 0.01), "{got}");
    }

    #[test]
    fn histogram_value_above_max_goes_to_saturated_count() {
        let mut h = LatencyHistogram::new();
        h.record(1_000);
        h.record(LATENCY_NS_MAX);
        h.record(LATENCY_NS_MAX + 1);
        h.record(u64::MAX);
        assert_eq!(h.saturated(), 2);
        assert_eq!(h.count(), 4);
        assert_eq!(h.max(), u64::MAX, "exact max keeps the real value");
        assert_eq!(h.quantile(1.0).unwrap(), u64::MAX);
        assert!(h.quantile(0.75).unwrap() >= LATENCY_NS_MAX);
    }

    #[test]
    fn histogram_merge_equals_histogram_of_all_values() {
        let a_values: Vec<u64> = (1..=10_000u64).map(|i| i * 100).collect(); // fast worker: 100 ns .. 1 ms
        let b_values: Vec<u64> = (1..=1_000u64).map(|i| 5_000_000 + i * 1000).collect(); // slow worker: ~5-6 ms
        let (mut a, mut b, mut all) =
            (LatencyHistogram::new(), LatencyHistogram::new(), LatencyHistogram::new());
        a_values.iter().for_each(|&v| a.record(v));
        b_values.iter().for_each(|&v| b.record(v));
        a_values.iter().chain(&b_values).for_each(|&v| all.record(v));

        let mut merged = a.clone();
        merged.merge(&b);
        assert_eq!(merged.summary(), all.summary());
        assert_eq!(merged.to_base64(), all.to_base64());

        // Averaging the two workers' p99 is wrong: the true p99 of all samples is in the slow
        // worker's range (~5.9 ms), the average of the p99s is ~3.4 ms.
        let averaged_p99 = (a.quantile(0.99).unwrap() + b.quantile(0.99).unwrap()) / 2;
        let true_p99 = merged.quantile(0.99).unwrap();
        assert!(true_p99 > 5_800_000, "{true_p99}");
        assert!(averaged_p99 < 3_500_000, "{averaged_p99}");
    }

    #[test]
    fn histogram_merge_coarse_into_fine_keeps_counts_and_exact_stats() {
        let mut fine = LatencyHistogram::new();
        let mut coarse = LatencyHistogram::coarse();
        fine.record(1_000);
        for v in [50_000u64, 60_000, 70_000] {
            coarse.record(v);
        }
        fine.merge(&coarse);
        assert_eq!(fine.count(), 4);
        assert_eq!(fine.max(), 70_000);
        assert_eq!(fine.sum_ns(), 181_000);
        assert!(within_relative(fine.quantile(0.75).unwrap(), 60_000, 0.01));

        let mut coarse2 = LatencyHistogram::coarse();
        coarse2.merge(&fine);
        assert_eq!(coarse2.count(), 4);
        assert_eq!(coarse2.min(), 1_000);
    }

    #[test]
    fn histogram_reset_forgets_everything() {
        let mut h = LatencyHistogram::new();
        h.record(u64::MAX);
        h.reset();
        assert_eq!((h.count(), h.max(), h.saturated(), h.sum_ns()), (0, 0, 0, 0));
        h.record(5);
        assert_eq!(h.min(), 5);
    }

    #[test]
    fn histogram_base64_round_trip_is_exact() {
        for mut h in [LatencyHistogram::new(), LatencyHistogram::coarse()] {
            for v in [0u64, 1, 999, 123_456, 98_765_432, LATENCY_NS_MAX * 2] {
                h.record(v);
            }
            let text = h.to_base64();
            let back = LatencyHistogram::from_base64(&text).unwrap();
            assert_eq!(back.summary(), h.summary());
            assert_eq!(back.sum_ns(), h.sum_ns());
            assert_eq!(back.saturated(), 1);
            assert_eq!(back.sigfig(), h.sigfig());
            assert_eq!(back.to_base64(), text);
        }
        let empty = LatencyHistogram::from_base64(&LatencyHistogram::new().to_base64()).unwrap();
        assert_eq!(empty.count(), 0);
        assert!(empty.summary().is_none());
    }

    #[test]
    fn histogram_from_base64_rejects_garbage() {
        assert!(matches!(LatencyHistogram::from_base64("not base64!"), Err(HistogramDecodeError::Base64(_))));
        assert!(matches!(LatencyHistogram::from_base64("AAAA"), Err(HistogramDecodeError::BadPrefix)));
    }

    proptest! {
        #[test]
        fn histogram_quantile_is_within_0_1_percent_of_exact(
            values in proptest::collection::vec(1u64..=LATENCY_NS_MAX, 1..2000),
            q in 0.0f64..=1.0,
        ) {
            let mut h = LatencyHistogram::new();
            values.iter().for_each(|&v| h.record(v));
            let mut sorted = values.clone();
            sorted.sort_unstable();
            prop_assert_eq!(h.min(), sorted[0]);
            prop_assert_eq!(h.max(), *sorted.last().unwrap());
            let want = exact_quantile(&sorted, q);
            let got = h.quantile(q).unwrap();
            prop_assert!(within_relative(got, want, 0.001), "q={} got {} want {}", q, got, want);
        }
    }
}
