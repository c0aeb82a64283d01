//! [`Layer`]: the worker and access-spec settings of one level of a job (its top, a `[worker.NAME]` table, a
//! `[[spec]]` table, the command line's forced layer), every one optional so that levels merge.

use super::values::{DataPattern, Dedupe, Rw};
use crate::target::TargetSpec;
use crate::units::{Arrival, Band, BlockSizes, Dist};
use serde::{Deserialize, Serialize};

/// Largest queue depth per worker (io_uring ring entries are sized from it).
pub const MAX_QD: u32 = 4096;

/// Worker and access-spec settings; every field optional so layers can be merged (later wins).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Layer {
    /// Targets of the worker.
    pub target: Option<Vec<TargetSpec>>,
    /// Size of files to create (and of the region, when no `length`).
    pub size: Option<u64>,
    /// Start of the worker's region in each target.
    pub offset: Option<u64>,
    /// Length of the worker's region (default: to the end of the target).
    pub length: Option<u64>,
    /// A walk over bands of the region (fio's `zonemode=strided`): the worker's I/O stays in one band until it
    /// has moved the band's bytes, then moves on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub band: Option<Band>,
    /// Outstanding I/Os per worker.
    pub qd: Option<u32>,
    /// Open-loop rate in IOPS (at the top level: total, split over workers; in a worker table: that worker's).
    pub rate: Option<f64>,
    /// Open-loop rate as a bandwidth, bytes per second (`rate = "100MB/s"`), split as `rate` is; the plan turns
    /// it into IOPS at the worker's mean I/O size. At most one of `rate` and `rate_bytes` is set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_bytes: Option<f64>,
    /// Inter-arrival law in open loop.
    pub arrival: Option<Arrival>,
    /// Think time in closed loop: after each burst of `burst` I/Os, the worker waits for them to complete,
    /// then idles this long before the next burst (fio's `thinktime`, Iometer's transfer delay).
    pub think: Option<u64>,
    /// I/Os per burst between think times (fio's `thinktime_blocks`, Iometer's burst length); default 1.
    pub burst: Option<u32>,
    /// How long after the run's start the worker issues its first I/O, ns: (low, high), each worker drawing
    /// its own from the range (fio's `startdelay`); default none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_delay: Option<(u64, u64)>,
    /// The worker's weight in its flow group (fio's `flow`): the group's workers issue I/Os in the ratio of
    /// their weights.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flow: Option<u32>,
    /// The worker's flow group (fio's `flow_id`); default 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flow_id: Option<u32>,
    /// How long a worker ahead of its flow share waits before it looks again, ns (fio's `flow_sleep`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flow_sleep: Option<u64>,
    /// The latency the queue-depth search holds the worker to, ns (fio's `latency_target`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_target: Option<u64>,
    /// How long each depth of the search runs before it decides, ns (fio's `latency_window`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_window: Option<u64>,
    /// The share of a window's I/Os that must meet the target, percent (fio's `latency_percentile`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_percentile: Option<f64>,
    /// Written data.
    pub data: Option<DataPattern>,
    /// A share of writes whose data repeats an earlier write's (fio's dedupe options).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dedupe: Option<Dedupe>,
    /// Read back written blocks as the run goes (fio's `verify_backlog`, `verify_backlog_batch`): after every
    /// `.0` writes, `.1` reads of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify_backlog: Option<(u32, u32)>,
    /// Every write is issued atomic (RWF_ATOMIC: all of it or none of it reaches the medium; fio's `atomic`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub atomic: Option<bool>,
    /// Flush (fsync) after every this many writes; 0: never.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fsync: Option<u32>,
    /// Flush (fdatasync: data, and only the metadata needed to read it) after every this many writes; 0: never.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fdatasync: Option<u32>,
    /// Whether each write is durable when it completes (O_DSYNC, O_SYNC).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync: Option<crate::WriteSync>,
    /// Block sizes.
    pub bs: Option<BlockSizes>,
    /// Pattern shorthand.
    pub rw: Option<Rw>,
    /// Share of reads, percent.
    pub read_pct: Option<f64>,
    /// Share of random (vs sequential) offsets, percent.
    pub random_pct: Option<f64>,
    /// Share of ops that are trims (discards), percent; the rest are reads and writes by `read_pct`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trim_pct: Option<f64>,
    /// Offset alignment of random I/O (default: the I/O's own size).
    pub align: Option<u64>,
    /// Bytes the sequential cursor skips after each sequential I/O; negative: it moves backwards (fio's
    /// `rw=read:8k`, `rw=read:-8k`). Default 0: contiguous.
    pub seq_skip: Option<i64>,
    /// I/Os per random offset (fio's `rw=randread:N`): each random offset starts a run of N I/Os, the rest
    /// sequential after it, or at the identical offset when the flag is set (fio's `rw_sequencer`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub random_run: Option<(u32, bool)>,
    /// Trims and writes in pairs: each trim is followed by a write of the same block (fio's `rw=trimwrite`);
    /// with `trim_pct = 50` and `read_pct = 0`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trim_then_write: Option<bool>,
    /// Spread of random offsets.
    pub dist: Option<Dist>,
    /// Relative weight of an access spec among the worker's specs.
    pub weight: Option<u32>,
}

impl Layer {
    /// `self` with every field that `over` sets replaced by `over`'s value.
    pub fn merged(&self, over: &Layer) -> Layer {
        macro_rules! pick {
            ($($f:ident),*) => { Layer { $($f: over.$f.clone().or_else(|| self.$f.clone())),* } };
        }
        let mut merged = pick!(
            target,
            size,
            offset,
            length,
            band,
            qd,
            rate,
            rate_bytes,
            arrival,
            think,
            burst,
            start_delay,
            flow,
            flow_id,
            flow_sleep,
            latency_target,
            latency_window,
            latency_percentile,
            data,
            dedupe,
            verify_backlog,
            atomic,
            fsync,
            fdatasync,
            sync,
            bs,
            rw,
            read_pct,
            random_pct,
            trim_pct,
            align,
            seq_skip,
            random_run,
            trim_then_write,
            dist,
            weight
        );
        // A rate is one setting in one of two units: the layer that sets it sets both.
        if over.rate.is_some() || over.rate_bytes.is_some() {
            (merged.rate, merged.rate_bytes) = (over.rate, over.rate_bytes);
        }
        debug_assert!(merged.rate.is_none() || merged.rate_bytes.is_none(), "one rate, in one unit");
        debug_assert!(
            [merged.read_pct, merged.random_pct, merged.trim_pct]
                .iter()
                .flatten()
                .all(|p| (0.0..=100.0).contains(p)),
            "shares are percentages"
        );
        merged
    }

    /// True when no field is set.
    pub fn is_empty(&self) -> bool {
        *self == Layer::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Place;

    #[test]
    fn layer_merge_prefers_the_later_layer() {
        let flag = Place::Flag("--qd".into());
        let mut a = Layer::default();
        a.set("qd", "4", &flag).unwrap();
        a.set("bs", "4k", &flag).unwrap();
        let mut b = Layer::default();
        b.set("qd", "32", &flag).unwrap();
        let m = a.merged(&b);
        assert_eq!(m.qd, Some(32));
        assert_eq!(m.bs.unwrap().max(), 4096);
    }
}
