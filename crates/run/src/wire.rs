//! A worker's output as it travels between ranks of a run over several hosts: plain serde data, every
//! histogram in its exact `iolab-hdr/1` encoding ([`LatencyHistogram::to_base64`]), so the ranks' histograms
//! merge on the receiving side bucket by bucket, exactly as local workers' do.

use crate::{Error, Result};
use iolab_engine::{Pacing, ReadSources, TxnStats, WorkerOutput};
use iolab_stats::{IntervalOp, IntervalStats, IntervalTxn, LatencyHistogram, OpStats};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One op kind's statistics on the wire.
#[derive(Serialize, Deserialize)]
pub(crate) struct WireOps {
    ops: u64,
    bytes: u64,
    short: u64,
    errors: u64,
    errors_by_errno: BTreeMap<i32, u64>,
    lat: String,
    service_lat: String,
}

/// Transactions on the wire.
#[derive(Serialize, Deserialize)]
pub(crate) struct WireTxn {
    counts: [u64; 7],
    dispatched_by_type: Vec<u64>,
    latency_by_type: Vec<String>,
    latency: String,
}

/// One worker's output on the wire.
#[derive(Serialize, Deserialize)]
pub(crate) struct WireOutput {
    /// The worker's index on its own rank.
    pub(crate) index: u32,
    engine: String,
    features: Vec<String>,
    read: WireOps,
    write: WireOps,
    /// Flushes and trims (absent from a rank of an iolab without them).
    #[serde(default)]
    flush: Option<WireOps>,
    #[serde(default)]
    trim: Option<WireOps>,
    window_ns: u64,
    ramp_ns: u64,
    backlog_at_end: u64,
    /// The I/Os in flight at the window's end (absent from a rank of an iolab before it was counted).
    #[serde(default)]
    in_flight_at_end: iolab_stats::InFlightAtEnd,
    retries: u64,
    stopped_early: bool,
    txn: Option<WireTxn>,
    read_sources: Option<(String, String)>,
    /// Cache hits' service time and dispatch delay (`iolab-hdr/1`; absent from a rank of an iolab before they
    /// were kept apart).
    #[serde(default)]
    hit_times: Option<(String, String)>,
    per_target: Option<Vec<(WireOps, WireOps)>>,
    split_ios: Vec<u64>,
    /// Open loop: the lag histogram (`iolab-hdr/1`).
    #[serde(default)]
    lag: Option<String>,
    /// Open loop on the real clock: the margin, its cap and the wake-ups' lateness histogram (absent from a
    /// rank of an iolab before it was reported).
    #[serde(default)]
    pacing: Option<(u64, u64, String)>,
}

impl WireOps {
    fn of(s: &OpStats) -> WireOps {
        WireOps {
            ops: s.ops,
            bytes: s.bytes,
            short: s.short,
            errors: s.errors,
            errors_by_errno: s.errors_by_errno.clone(),
            lat: s.lat.to_base64(),
            service_lat: s.service_lat.to_base64(),
        }
    }

    fn stats(self) -> Result<OpStats> {
        let mut s = OpStats::new();
        s.ops = self.ops;
        s.bytes = self.bytes;
        s.short = self.short;
        s.errors = self.errors;
        s.errors_by_errno = self.errors_by_errno;
        s.lat = histogram(&self.lat)?;
        s.service_lat = histogram(&self.service_lat)?;
        Ok(s)
    }
}

fn histogram(text: &str) -> Result<LatencyHistogram> {
    LatencyHistogram::from_base64(text).map_err(|e| Error::internal(format!("a rank's histogram: {e:?}")))
}

impl WireTxn {
    fn of(t: &TxnStats) -> WireTxn {
        WireTxn {
            counts: [
                t.dispatched,
                t.completed,
                t.failed,
                t.backlog_at_end,
                t.backlog_max,
                t.executing_max,
                t.beyond_ring,
            ],
            dispatched_by_type: t.dispatched_by_type.clone(),
            latency_by_type: t.latency_by_type.iter().map(LatencyHistogram::to_base64).collect(),
            latency: t.latency.to_base64(),
        }
    }

    fn stats(self) -> Result<TxnStats> {
        let [dispatched, completed, failed, backlog_at_end, backlog_max, executing_max, beyond_ring] =
            self.counts;
        Ok(TxnStats {
            dispatched,
            completed,
            failed,
            dispatched_by_type: self.dispatched_by_type,
            latency_by_type: self.latency_by_type.iter().map(|h| histogram(h)).collect::<Result<_>>()?,
            latency: histogram(&self.latency)?,
            backlog_at_end,
            backlog_max,
            executing_max,
            beyond_ring,
        })
    }
}

impl WireOutput {
    /// `o` for the wire.
    pub(crate) fn of(o: &WorkerOutput) -> WireOutput {
        WireOutput {
            index: o.index,
            engine: o.engine.to_string(),
            features: o.features.clone(),
            read: WireOps::of(&o.read),
            write: WireOps::of(&o.write),
            flush: Some(WireOps::of(&o.flush)),
            trim: Some(WireOps::of(&o.trim)),
            window_ns: o.window_ns,
            ramp_ns: o.ramp_ns,
            backlog_at_end: o.backlog_at_end,
            in_flight_at_end: o.in_flight_at_end,
            retries: o.retries,
            stopped_early: o.stopped_early,
            txn: o.txn.as_ref().map(WireTxn::of),
            read_sources: o
                .read_sources
                .as_ref()
                .map(|r| (r.from_cache.to_base64(), r.from_target.to_base64())),
            hit_times: o
                .read_sources
                .as_ref()
                .map(|r| (r.hit_service.to_base64(), r.hit_dispatch.to_base64())),
            per_target: o
                .per_target
                .as_ref()
                .map(|pt| pt.iter().map(|(r, w)| (WireOps::of(r), WireOps::of(w))).collect()),
            split_ios: o.split_ios.clone(),
            lag: o.lag.as_ref().map(|l| l.to_base64()),
            pacing: o.pacing.as_ref().map(|p| (p.margin_ns, p.cap_ns, p.wake_late.to_base64())),
        }
    }

    /// The worker's output again, numbered `index`.
    pub(crate) fn output(self, index: u32) -> Result<WorkerOutput> {
        let read_sources = match self.read_sources {
            Some((c, t)) => {
                let (hit_service, hit_dispatch) = match &self.hit_times {
                    Some((s, d)) => (histogram(s)?, histogram(d)?),
                    None => Default::default(),
                };
                let (from_cache, from_target) = (histogram(&c)?, histogram(&t)?);
                Some(Box::new(ReadSources { from_cache, from_target, hit_service, hit_dispatch }))
            }
            None => None,
        };
        let per_target = match self.per_target {
            Some(pt) => {
                Some(pt.into_iter().map(|(r, w)| Ok((r.stats()?, w.stats()?))).collect::<Result<_>>()?)
            }
            None => None,
        };
        Ok(WorkerOutput {
            index,
            engine: engine_name(&self.engine),
            features: self.features,
            read: self.read.stats()?,
            write: self.write.stats()?,
            flush: self.flush.map(WireOps::stats).transpose()?.unwrap_or_default(),
            trim: self.trim.map(WireOps::stats).transpose()?.unwrap_or_default(),
            window_ns: self.window_ns,
            ramp_ns: self.ramp_ns,
            backlog_at_end: self.backlog_at_end,
            in_flight_at_end: self.in_flight_at_end,
            retries: self.retries,
            stopped_early: self.stopped_early,
            txn: self.txn.map(WireTxn::stats).transpose()?,
            read_sources,
            per_target,
            split_ios: self.split_ios,
            // Trace waits are said on the rank that has them, before the outputs cross; the lag crosses (an
            // open-loop run's, merged like the latencies; a replay runs on one host, docs/MULTIHOST.md).
            trace_waits: 0,
            lag: self.lag.as_deref().map(histogram).transpose()?.map(Box::new),
            pacing: match self.pacing {
                Some((margin_ns, cap_ns, late)) => {
                    Some(Pacing { margin_ns, cap_ns, wake_late: Box::new(histogram(&late)?) })
                }
                None => None,
            },
        })
    }
}

/// The engine's name as a static string: every rank runs the same build, so it is one of the names this
/// build knows; another (a different build on a rank) is kept as "other".
fn engine_name(name: &str) -> &'static str {
    ["io_uring", "sync", "mem", "sim", "null"].into_iter().find(|n| *n == name).unwrap_or("other")
}

/// One interval of one rank (its workers' intervals merged) on the wire: counts, and the coarse response
/// time histograms of reads and writes in their exact encoding, so interval i of every rank merges as the
/// workers' intervals merge on one host.
#[derive(Serialize, Deserialize)]
pub(crate) struct WireInterval {
    /// The interval's number since the measurement start (the same instant on every rank).
    pub(crate) index: u64,
    /// Reads and writes: ops, bytes, histogram.
    ops: [(u64, u64, String); 2],
    /// Transactions dispatched, completed, and the backlog at the close.
    txn: [u64; 3],
    cache_hits: u64,
    cached: bool,
    backlog: u64,
    /// Flushes and trims completed (absent from a rank of an iolab without them).
    #[serde(default)]
    others: [u64; 2],
}

impl WireInterval {
    /// `s` for the wire.
    pub(crate) fn of(s: &IntervalStats) -> WireInterval {
        let op = |o: &IntervalOp| (o.ops, o.bytes, o.lat.to_base64());
        WireInterval {
            index: s.index,
            ops: [op(&s.read), op(&s.write)],
            txn: [s.txn.dispatched, s.txn.completed, s.txn.backlog],
            cache_hits: s.cache_hits,
            cached: s.cached,
            backlog: s.backlog,
            others: [s.flushes, s.trims],
        }
    }

    /// The interval again.
    pub(crate) fn stats(self) -> Result<IntervalStats> {
        let [read, write] = self.ops;
        let op = |(ops, bytes, lat): (u64, u64, String)| Ok(IntervalOp { ops, bytes, lat: histogram(&lat)? });
        let [dispatched, completed, backlog] = self.txn;
        Ok(IntervalStats {
            index: self.index,
            read: op(read)?,
            write: op(write)?,
            txn: IntervalTxn { dispatched, completed, backlog },
            cache_hits: self.cache_hits,
            cached: self.cached,
            backlog: self.backlog,
            flushes: self.others[0],
            trims: self.others[1],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn op_stats_cross_the_wire_exactly() {
        let mut s = OpStats::new();
        for v in [1_000u64, 2_000, 2_500, 1_000_000] {
            s.lat.record(v);
            s.service_lat.record(v / 2);
        }
        s.ops = 4;
        s.bytes = 16384;
        let back = serde_json::from_slice::<WireOps>(&serde_json::to_vec(&WireOps::of(&s)).unwrap())
            .unwrap()
            .stats()
            .unwrap();
        assert_eq!(back.lat.to_base64(), s.lat.to_base64());
        assert_eq!(back.service_lat.to_base64(), s.service_lat.to_base64());
        assert_eq!((back.ops, back.bytes), (4, 16384));
    }

    #[test]
    fn an_interval_crosses_the_wire_exactly() {
        let mut s = IntervalStats::new(3);
        for v in [1_000u64, 2_000, 900_000] {
            s.record(false, 4096, v);
        }
        s.record(true, 512, 5_000);
        s.cache_hits = 2;
        s.cached = true;
        s.backlog = 4;
        let wire = serde_json::to_vec(&WireInterval::of(&s)).unwrap();
        let back = serde_json::from_slice::<WireInterval>(&wire).unwrap().stats().unwrap();
        assert_eq!(back.index, 3);
        assert_eq!((back.read.ops, back.read.bytes, back.write.ops, back.write.bytes), (3, 12288, 1, 512));
        assert_eq!(back.read.lat.to_base64(), s.read.lat.to_base64());
        assert_eq!(back.read.lat.sigfig(), s.read.lat.sigfig(), "still coarse");
        assert_eq!((back.cache_hits, back.cached, back.backlog), (2, true, 4));
    }
}
