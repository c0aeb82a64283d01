//! iolab-stats: the statistics stage of the pipeline (engine → **stats** → report).
//!
//! Pure code, no I/O and no clocks: the engine feeds it completions, the cli merges workers and
//! derives warnings, the report serialises the results. Principles:
//!
//! - latency percentiles come from merged HDR histograms ([`LatencyHistogram`]), never averaged;
//! - min, max and mean are exact (tracked beside the histogram);
//! - bytes are what the completion transferred, short and failed I/O are counted ([`OpStats`]);
//! - warnings are data ([`Warning`]), stored in the result and rendered by iolab-report;
//! - one definition of each statistic over a few values (mean, sample variance, CV, Student-t interval,
//!   Welch's test): [`inference`], used by the warnings, the sweeps and `iolab compare`;
//! - no figure from nothing: a mean, quantile or per-op figure over zero samples is `None` (null in JSON,
//!   `-` in text), never 0 or a total: [`LatencyHistogram::mean`], [`LatencyHistogram::quantile`], [`per_op`].

#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod format;
mod histogram;
pub mod inference;
mod interval;
mod op;
mod warning;
mod window_end;

pub use histogram::{
    HistogramDecodeError, LatSummary, LatencyHistogram, COARSE_SIGFIG, FINE_SIGFIG, LATENCY_NS_MAX,
};
pub use interval::{IntervalOp, IntervalStats, IntervalTxn, TimePoint, TimeSeries, DEFAULT_TIMESERIES_CAP};
pub use op::OpStats;
pub use window_end::{InFlightAtEnd, LATE_END_NS, LATE_END_RATIO};

/// `total` per op over `ops` ops (e.g. CPU seconds per I/O); None when there were none, never `total`
/// itself or a division by a made-up 1.
pub fn per_op(total: f64, ops: u64) -> Option<f64> {
    (ops > 0).then(|| total / ops as f64)
}
pub use warning::{
    much_more, series_warnings, Warning, FIRST_INTERVAL_SLOW_RATIO, FRAGMENTED_MEAN_EXTENT_BYTES,
    FRAGMENTED_MIN_EXTENTS, HIGH_CV, LAG_FLOOR_NS, LAG_SHARE, LOW_DEPTH_RATIO, MUCH_MORE_FLOOR_BYTES,
    MUCH_MORE_RATIO, RATE_BACKLOG_SHARE, RATE_SUSTAINED_RATIO, SHORT_RUN_S, WRITE_CACHE_GROWTH_SHARE,
};
