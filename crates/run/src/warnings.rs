//! The warnings a finished run deserves, derived from plain numbers ([`RunFacts`]) so every rule is tested
//! without a run. Every threshold is a named constant of `iolab_stats` ([`iolab_stats::LOW_DEPTH_RATIO`],
//! [`iolab_stats::RATE_SUSTAINED_RATIO`], [`iolab_stats::SHORT_RUN_S`], and the series rules of
//! [`iolab_stats::series_warnings`]). The order of the warnings is the order of the checks here, and it is
//! part of the result document.

use iolab_stats::Warning;

/// A file or block device target, as the warnings need it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PathTarget {
    /// Its name.
    pub name: String,
    /// Its size.
    pub size_bytes: u64,
    /// The run reads it.
    pub reads: bool,
    /// It lives on tmpfs (RAM).
    pub tmpfs: bool,
    /// It is (or lives on) a loop device reading its backing file through the page cache: that file.
    pub loop_cached_backing: Option<String>,
}

/// A file target's layout, as the warnings need it: the more fragmented of its states before and after the run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LayoutFacts {
    /// Its name.
    pub name: String,
    /// Extents (physically contiguous records merged).
    pub extents: u64,
    /// Bytes those extents map.
    pub mapped_bytes: u64,
    /// I/Os of the run that crossed an extent boundary.
    pub split_ios: u64,
    /// Extents before the run (after iolab prepared it) and after it.
    pub extents_before: u64,
    /// See [`LayoutFacts::extents_before`].
    pub extents_after: u64,
    /// The file's size less [`LayoutFacts::mapped_bytes`]: its holes.
    pub holes_bytes: u64,
    /// Trims the run's workers on it completed in the window: each punched a hole (fallocate PUNCH_HOLE).
    pub trims: u64,
}

impl LayoutFacts {
    /// Fragmented: at least [`iolab_stats::FRAGMENTED_MIN_EXTENTS`] extents, and on average smaller than
    /// [`iolab_stats::FRAGMENTED_MEAN_EXTENT_BYTES`].
    pub fn fragmented(&self) -> bool {
        self.extents >= iolab_stats::FRAGMENTED_MIN_EXTENTS
            && self.mapped_bytes / self.extents < iolab_stats::FRAGMENTED_MEAN_EXTENT_BYTES
    }
}

/// The open-loop numbers: what was offered and what came of it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RateFacts {
    /// Offered arrival rate, IOPS.
    pub offered_iops: f64,
    /// Achieved completion rate, IOPS.
    pub achieved_iops: f64,
    /// Arrivals not yet submitted when the run ended.
    pub backlog_at_end: u64,
    /// Poisson arrivals: the count in a window is random (standard deviation √N), not exact.
    pub poisson: bool,
    /// The lag of each open-loop group, when measured: a group's lateness is judged against its own
    /// response times, not those of the whole run (a 40 IOPS checkpoint worker beside 23k IOPS of others).
    pub lags: Vec<GroupLag>,
}

/// One open-loop group's lag p99 (submission minus scheduled arrival) and its response time's p99, ns.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GroupLag {
    /// The group's name, when the run has more than one group (else the run is the group).
    pub group: Option<String>,
    /// Its workers' lag p99.
    pub lag_p99_ns: u64,
    /// Its workers' response time p99 (reads and writes).
    pub response_p99_ns: u64,
}

impl RateFacts {
    /// The offered rate was not sustained: arrivals still pending at the end, or fewer completions than offered
    /// by more than [`iolab_stats::RATE_SUSTAINED_RATIO`] allows and, for Poisson arrivals, by more than three
    /// standard deviations of the arrival count over `measured_s` (a short run at a low rate is not a failure
    /// to sustain it: 40 IOPS for 2 s offers 80 ± 9 arrivals).
    ///
    /// The backlog at the end is judged against what a queue that keeps up holds at a random moment: at most
    /// [`iolab_stats::RATE_BACKLOG_SHARE`] of the arrivals, or one standard deviation of a Poisson count (one
    /// arrival for a fixed schedule); a backlog that grew through the run ends larger than that. One pending arrival at the end of a Poisson run is chance, not saturation.
    pub fn not_sustained(&self, measured_s: f64) -> bool {
        let expected = self.offered_iops * measured_s;
        let spread = if self.poisson { 3.0 * expected.sqrt() } else { 0.0 };
        let shortfall = (self.offered_iops - self.achieved_iops) * measured_s;
        let allowed = ((1.0 - iolab_stats::RATE_SUSTAINED_RATIO) * expected).max(spread);
        let queue_spread = if self.poisson { expected.sqrt() } else { 1.0 };
        let backlog_allowed = (iolab_stats::RATE_BACKLOG_SHARE * expected).max(queue_spread);
        shortfall > allowed || self.backlog_at_end as f64 > backlog_allowed
    }
}

/// The run's block cache, as the warnings need it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CacheFacts {
    /// Times the cache shrank for memory.
    pub shrinks: u32,
    /// Its capacity at the end.
    pub capacity_bytes: u64,
    /// Dirty lines left when the run ended.
    pub dirty_after_exit: u64,
}

/// A write-back cache's fill over the run (an emulated device's own, or iolab's block cache), as the
/// warnings need it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WriteCacheFacts {
    /// The target behind it.
    pub target: String,
    /// `device` or `block_cache` ([`Warning::WriteCacheNeverFilled`]).
    pub cache: &'static str,
    /// Its size.
    pub size_bytes: u64,
    /// Bytes of the writes it took.
    pub written_bytes: u64,
    /// The most dirty data it held at once.
    pub peak_dirty_bytes: u64,
    /// Writes that found it full (they waited for room, or went to the target instead).
    pub full_writes: u64,
    /// The time its dirty data took to grow to that peak, ns: from the first write (a device's cache), or
    /// the run's ramp and window (iolab's block cache).
    pub growth_ns: u64,
    /// The run's data set fits in it, so it can never fill (iolab's block cache).
    pub fits: bool,
}

impl WriteCacheFacts {
    /// It never filled, and not because the media kept up: no write found it full, and its dirty data peaked
    /// above [`iolab_stats::WRITE_CACHE_GROWTH_SHARE`] of what it took.
    pub fn never_filled(&self) -> bool {
        self.full_writes == 0
            && self.written_bytes > 0
            && self.peak_dirty_bytes as f64
                > iolab_stats::WRITE_CACHE_GROWTH_SHARE * self.written_bytes as f64
    }

    /// The warning, with how long (and how much writing) the run's rate takes to fill it: its size over the
    /// rate its dirty data grew at, and over the share of the writes that stayed dirty.
    fn warning(&self) -> Warning {
        let grew = !self.fits && self.growth_ns > 0 && self.peak_dirty_bytes > 0;
        let per_dirty_byte = |x: f64| x * self.size_bytes as f64 / self.peak_dirty_bytes as f64;
        Warning::WriteCacheNeverFilled {
            target: self.target.clone(),
            cache: self.cache.to_string(),
            size_bytes: self.size_bytes,
            written_bytes: self.written_bytes,
            peak_dirty_bytes: self.peak_dirty_bytes,
            fill_s: grew.then(|| per_dirty_byte(self.growth_ns as f64 / 1e9)),
            fill_bytes: grew.then(|| per_dirty_byte(self.written_bytes as f64) as u64),
        }
    }
}

/// Everything the run-level warnings are derived from.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunFacts {
    /// Open loop (a rate was given).
    pub open_loop: bool,
    /// A rate-mode transaction run (open loop too: a low depth is expected).
    pub rate_mode: bool,
    /// The depth asked for (sum of the workers' queue depths).
    pub requested_depth: u32,
    /// The depth achieved (Little's law, summed over the workers).
    pub achieved_depth: f64,
    /// The engine that ran the workers (`sync`, `io_uring`, `mem`, `null`, `sim`), for the low-depth hint.
    pub engine: String,
    /// The ramp, seconds, for the hints of the warnings about warm-up.
    pub ramp_s: f64,
    /// Ops completed in the window.
    pub total_ops: u64,
    /// IOPS of each full-length interval.
    pub interval_iops: Vec<f64>,
    /// The run was on virtual time (wall-clock rules do not apply).
    pub virtual_time: bool,
    /// The run had a duration (not `--ios`/`--bytes`).
    pub timed: bool,
    /// O_DIRECT.
    pub direct: bool,
    /// Who set buffered I/O when the user did not type `--buffered` (a profile, a job file), for the hints.
    pub buffered_set_by: Option<String>,
    /// The file and block device targets.
    pub path_targets: Vec<PathTarget>,
    /// The machine's memory.
    pub mem_total_bytes: u64,
    /// Targets (files) with holes that the run reads.
    pub targets_with_holes: Vec<String>,
    /// The file targets' layouts.
    pub layouts: Vec<LayoutFacts>,
    /// Open loop: the rate.
    pub rate: Option<RateFacts>,
    /// I/O errors.
    pub errors: u64,
    /// The run injects EIO (`--inject eio@N`).
    pub eio_injected: bool,
    /// Short reads and writes.
    pub short_ios: u64,
    /// Latencies beyond the histogram's range.
    pub saturated: u64,
    /// The measured window, seconds.
    pub measured_s: f64,
    /// The block cache, if any.
    pub cache: Option<CacheFacts>,
    /// Emulated targets whose written data outgrew RAM: (name, bytes kept).
    pub dropped_data: Vec<(String, u64)>,
    /// The write-back caches the run wrote into: emulated devices' own, iolab's block cache.
    pub write_caches: Vec<WriteCacheFacts>,
    /// The I/Os in flight when the window closed.
    pub in_flight_at_end: iolab_stats::InFlightAtEnd,
    /// The longest I/O the window recorded (any kind), ns; `None` when it recorded none.
    pub max_recorded_ns: Option<u64>,
    /// A worker flushes every N writes (`fsync`, `fdatasync`): it drains its queue before each flush by
    /// design, so its mean depth is below the requested one without any CPU or device limit.
    pub drains_for_flushes: bool,
    /// The one block device under the run's file and device targets, with what it and the run moved over
    /// the window; `None` when the targets are on none, on several, or the counters could not be read.
    pub device_io: Option<DeviceShare>,
}

/// What a block device did over the window (/proc/diskstats), beside the run's own I/O.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DeviceShare {
    /// Its kernel name.
    pub device: String,
    /// Bytes it read.
    pub device_read_bytes: u64,
    /// Bytes it wrote.
    pub device_write_bytes: u64,
    /// Bytes the run read.
    pub own_read_bytes: u64,
    /// Bytes the run wrote.
    pub own_write_bytes: u64,
}

impl DeviceShare {
    /// The warning when the device did much more than the run, reads or writes.
    fn warning(&self) -> Option<Warning> {
        let more = iolab_stats::much_more(self.device_read_bytes, self.own_read_bytes)
            || iolab_stats::much_more(self.device_write_bytes, self.own_write_bytes);
        more.then(|| Warning::SharedDevice {
            device: self.device.clone(),
            device_read_bytes: self.device_read_bytes,
            device_write_bytes: self.device_write_bytes,
            own_read_bytes: self.own_read_bytes,
            own_write_bytes: self.own_write_bytes,
        })
    }
}

/// The warnings `f` deserves, in the result's order.
pub fn run_warnings(f: &RunFacts) -> Vec<Warning> {
    let mut w = Vec::new();
    if !f.open_loop
        && !f.rate_mode
        && !f.drains_for_flushes
        && f.achieved_depth < iolab_stats::LOW_DEPTH_RATIO * f.requested_depth as f64
        && f.total_ops > 0
    {
        let engine = Some(f.engine.clone()).filter(|e| !e.is_empty());
        w.push(Warning::LowDepth { requested: f.requested_depth as f64, achieved: f.achieved_depth, engine });
    }
    if !f.virtual_time {
        w.extend(iolab_stats::series_warnings(&f.interval_iops, f.ramp_s));
    }
    target_warnings(f, &mut w);
    w.extend(f.device_io.as_ref().and_then(DeviceShare::warning));
    if let Some(r) = &f.rate {
        for g in &r.lags {
            let (lag, response) = (g.lag_p99_ns, g.response_p99_ns);
            if lag >= iolab_stats::LAG_FLOOR_NS && lag as f64 > iolab_stats::LAG_SHARE * response as f64 {
                w.push(Warning::DispatchLag {
                    lag_p99_ns: lag,
                    response_p99_ns: response,
                    group: g.group.clone(),
                });
            }
        }
        if r.not_sustained(f.measured_s) {
            w.push(Warning::RateNotSustained {
                offered_iops: r.offered_iops,
                achieved_iops: r.achieved_iops,
                backlog_at_end: r.backlog_at_end,
            });
        }
    }
    if f.errors > 0 {
        w.push(if f.eio_injected {
            Warning::InjectedErrors { count: f.errors }
        } else {
            Warning::Errors { count: f.errors }
        });
    }
    if f.short_ios > 0 {
        w.push(Warning::ShortIo { count: f.short_ios });
    }
    if f.saturated > 0 {
        w.push(Warning::HistogramSaturated { count: f.saturated });
    }
    if f.measured_s < iolab_stats::SHORT_RUN_S && !f.virtual_time && f.timed {
        w.push(Warning::ShortRun { measured_s: f.measured_s });
    }
    if let Some(c) = &f.cache {
        if c.shrinks > 0 {
            w.push(Warning::CacheShrunk { times: c.shrinks, capacity_bytes: c.capacity_bytes });
        }
        if c.dirty_after_exit > 0 {
            w.push(Warning::CacheDirtyAtExit { lines: c.dirty_after_exit });
        }
    }
    for (target, kept_bytes) in &f.dropped_data {
        w.push(Warning::EmulatedDataDropped { target: target.clone(), kept_bytes: *kept_bytes });
    }
    w.extend(f.write_caches.iter().filter(|c| c.never_filled()).map(WriteCacheFacts::warning));
    let end = f.in_flight_at_end;
    if end.late(f.max_recorded_ns) {
        w.push(Warning::WindowEndedLate {
            ops: end.ops,
            drained_ns: end.drained_ns,
            longest_ns: end.longest_ns,
        });
    }
    w
}

/// Buffered I/O, the page cache (of the target or of a loop device's backing file), tmpfs and holes.
fn target_warnings(f: &RunFacts, w: &mut Vec<Warning>) {
    if !f.direct && !f.path_targets.is_empty() {
        w.push(Warning::BufferedIo { set_by: f.buffered_set_by.clone() });
        for t in f.path_targets.iter().filter(|t| t.reads && t.size_bytes < f.mem_total_bytes) {
            w.push(Warning::PageCacheLikely {
                target: t.name.clone(),
                target_bytes: t.size_bytes,
                mem_total_bytes: f.mem_total_bytes,
                set_by: f.buffered_set_by.clone(),
            });
        }
    }
    for t in f.path_targets.iter().filter(|t| t.tmpfs) {
        w.push(Warning::TmpfsTarget { target: t.name.clone() });
    }
    for t in f.path_targets.iter().filter(|t| t.reads) {
        if let Some(backing_file) = &t.loop_cached_backing {
            w.push(Warning::LoopPageCache { target: t.name.clone(), backing_file: backing_file.clone() });
        }
    }
    for name in &f.targets_with_holes {
        w.push(Warning::FileHasHoles { target: name.clone() });
    }
    for l in f.layouts.iter().filter(|l| l.trims > 0) {
        w.push(Warning::TrimmedFile {
            target: l.name.clone(),
            trims: l.trims,
            extents_before: l.extents_before,
            extents_after: l.extents_after,
            holes_bytes: l.holes_bytes,
        });
    }
    for l in f.layouts.iter().filter(|l| l.fragmented()) {
        w.push(Warning::FragmentedTarget {
            target: l.name.clone(),
            extents: l.extents,
            mean_extent_bytes: l.mapped_bytes / l.extents,
            split_ios: l.split_ios,
            holes_bytes: l.holes_bytes,
            trimmed: l.trims > 0,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn closed(requested: u32, achieved: f64) -> RunFacts {
        RunFacts {
            requested_depth: requested,
            achieved_depth: achieved,
            engine: "sync".into(),
            total_ops: 1000,
            virtual_time: true,
            direct: true,
            measured_s: 10.0,
            timed: true,
            ..RunFacts::default()
        }
    }

    #[test]
    fn run_warnings_low_depth_below_the_ratio_only() {
        assert_eq!(run_warnings(&closed(32, 31.0)), vec![]);
        assert_eq!(
            run_warnings(&closed(32, 20.0)),
            vec![Warning::LowDepth { requested: 32.0, achieved: 20.0, engine: Some("sync".into()) }]
        );
        let open = RunFacts { open_loop: true, ..closed(32, 1.0) };
        assert_eq!(run_warnings(&open), vec![]);
        let idle = RunFacts { total_ops: 0, ..closed(32, 0.0) };
        // Issue 37, item 3: `--fsync 8 --qd 8` drains the queue before each flush by design: no
        // "CPU-bound submission" warning for the depth that design gives.
        let flushing = RunFacts { drains_for_flushes: true, ..closed(8, 4.0) };
        assert_eq!(run_warnings(&flushing), vec![]);
        assert_eq!(run_warnings(&idle), vec![]);
    }

    #[test]
    fn hints_fit_the_run_s_engine_and_ramp() {
        let null = RunFacts { engine: "null".into(), ..closed(32, 5.3) };
        let hint = run_warnings(&null)[0].hint().unwrap();
        assert!(!hint.contains("--engine"), "null: has no engine to choose: {hint}");
        let sync = run_warnings(&closed(32, 5.3))[0].hint().unwrap();
        assert!(sync.contains("--engine=io_uring"), "{sync}");
        let noisy = RunFacts {
            virtual_time: false,
            ramp_s: 1.0,
            interval_iops: vec![100.0, 1000.0, 300.0, 1000.0, 900.0],
            ..closed(1, 1.0)
        };
        let w = run_warnings(&noisy);
        assert!(w.iter().any(|w| matches!(w, Warning::HighVariability { .. })), "{w:?}");
        for w in w
            .iter()
            .filter(|w| matches!(w, Warning::HighVariability { .. } | Warning::FirstIntervalSlow { .. }))
        {
            let hint = w.hint().unwrap();
            assert!(!hint.contains("add --ramp") && hint.contains("the 1 s used"), "{hint}");
        }
    }

    #[test]
    fn run_warnings_rate_not_sustained_below_the_ratio_or_with_backlog() {
        let rate = |achieved_iops: f64, backlog_at_end: u64| RunFacts {
            open_loop: true,
            rate: Some(RateFacts {
                offered_iops: 1000.0,
                achieved_iops,
                backlog_at_end,
                poisson: false,
                lags: Vec::new(),
            }),
            ..closed(1, 1.0)
        };
        assert_eq!(run_warnings(&rate(960.0, 0)), vec![]);
        let w = run_warnings(&rate(940.0, 0));
        assert!(matches!(w[..], [Warning::RateNotSustained { backlog_at_end: 0, .. }]), "{w:?}");
        assert_eq!(run_warnings(&rate(1000.0, 3)), vec![], "3 pending of 1,000 offered: timing");
        assert_eq!(run_warnings(&rate(1000.0, 300)).len(), 1, "a backlog of 3 % of the arrivals");
    }

    /// Issue 25, item 1 (c): the lag is warned about when its p99 is a material share of the response p99.
    #[test]
    fn a_lag_that_is_a_material_share_of_the_response_time_is_warned_about() {
        let rate = |lags: Vec<GroupLag>| RunFacts {
            open_loop: true,
            rate: Some(RateFacts {
                offered_iops: 100.0,
                achieved_iops: 100.0,
                backlog_at_end: 0,
                poisson: false,
                lags,
            }),
            ..closed(1, 1.0)
        };
        let one = |lag_p99_ns, response_p99_ns| vec![GroupLag { group: None, lag_p99_ns, response_p99_ns }];
        let w = run_warnings(&rate(one(566_000, 600_000)));
        assert!(matches!(w[..], [Warning::DispatchLag { lag_p99_ns: 566_000, group: None, .. }]), "{w:?}");
        assert_eq!(run_warnings(&rate(one(20_000, 600_000))), vec![], "3 %");
        assert_eq!(run_warnings(&rate(one(3_000, 8_000))), vec![], "under the floor");
        assert_eq!(run_warnings(&rate(Vec::new())), vec![]);
    }

    /// Issue 37, item 3: each open-loop group's lag is judged against its own response p99. The oltp
    /// profile's 40 IOPS checkpoint group (8 ms writes) with a lag p99 of 60 us is on time, though 60 us is
    /// more than a tenth of the 200 us p99 of all the run's I/O; a group whose lag is a tenth of its own
    /// response p99 is named.
    #[test]
    fn each_groups_lag_is_judged_against_its_own_response_time() {
        let facts = |lags| RunFacts {
            open_loop: true,
            rate: Some(RateFacts { offered_iops: 40.0, achieved_iops: 40.0, lags, ..RateFacts::default() }),
            ..closed(1, 1.0)
        };
        let group = |name: &str, lag_p99_ns, response_p99_ns| GroupLag {
            group: Some(name.into()),
            lag_p99_ns,
            response_p99_ns,
        };
        assert_eq!(run_warnings(&facts(vec![group("checkpoint", 60_000, 8_000_000)])), vec![]);
        let late =
            run_warnings(&facts(vec![group("checkpoint", 60_000, 8_000_000), group("log", 90_000, 100_000)]));
        assert_eq!(
            late,
            vec![Warning::DispatchLag {
                lag_p99_ns: 90_000,
                response_p99_ns: 100_000,
                group: Some("log".into())
            }]
        );
    }

    /// Issue 25, item 3: `--rate 10k --arrival poisson` on a target far from saturation ended with one arrival
    /// pending and 9,920.7 of 10,000 IOPS over 3 s, and was warned "not sustained". That is the Poisson count's
    /// own spread (30,000 ± 520). A backlog that grows (2.5 % too much offered: 250 pending after 10 s, within
    /// the 5 % completion rule) is still caught.
    #[test]
    fn a_poisson_run_far_from_saturation_is_sustained_and_a_growing_backlog_is_not() {
        let facts = |offered_iops, achieved_iops, backlog_at_end, poisson| RateFacts {
            offered_iops,
            achieved_iops,
            backlog_at_end,
            poisson,
            lags: Vec::new(),
        };
        assert!(!facts(10_000.0, 9_920.7, 1, true).not_sustained(3.0));
        assert!(facts(1_000.0, 975.0, 250, true).not_sustained(10.0));
        assert!(facts(1_000.0, 975.0, 250, false).not_sustained(10.0));
        assert!(!facts(40.0, 40.0, 1, false).not_sustained(2.0), "one arrival due at the very end");
    }

    /// Poisson arrivals are a random count: 40 IOPS for 2 s offers 80 ± 9 arrivals, so 67 done is chance, not a
    /// rate the target could not sustain; 40 done is not chance. At 1,000 IOPS for 10 s (10,000 ± 100) the
    /// 5 % rule is the wider one.
    #[test]
    fn poisson_rates_allow_for_the_arrival_count_s_spread() {
        let facts = |offered_iops: f64, achieved_iops: f64| RateFacts {
            offered_iops,
            achieved_iops,
            backlog_at_end: 0,
            poisson: true,
            lags: Vec::new(),
        };
        assert!(!facts(40.0, 33.5).not_sustained(2.0));
        assert!(facts(40.0, 20.0).not_sustained(2.0));
        assert!(!facts(1000.0, 960.0).not_sustained(10.0));
        assert!(facts(1000.0, 940.0).not_sustained(10.0));
        assert!(RateFacts { poisson: false, ..facts(40.0, 33.5) }.not_sustained(2.0));
    }

    #[test]
    fn run_warnings_buffered_reads_smaller_than_memory_warn_of_the_page_cache() {
        let t = PathTarget {
            name: "f".into(),
            size_bytes: 1 << 30,
            reads: true,
            tmpfs: true,
            ..Default::default()
        };
        let f = RunFacts {
            direct: false,
            path_targets: vec![t],
            mem_total_bytes: 16 << 30,
            targets_with_holes: vec!["f".into()],
            buffered_set_by: Some("the profile 'p'".into()),
            ..closed(1, 1.0)
        };
        let by = Some("the profile 'p'".to_string());
        assert_eq!(
            run_warnings(&f),
            vec![
                Warning::BufferedIo { set_by: by.clone() },
                Warning::PageCacheLikely {
                    target: "f".into(),
                    target_bytes: 1 << 30,
                    mem_total_bytes: 16 << 30,
                    set_by: by,
                },
                Warning::TmpfsTarget { target: "f".into() },
                Warning::FileHasHoles { target: "f".into() },
            ]
        );
    }

    #[test]
    fn a_loop_device_over_a_page_cached_file_warns_when_read_even_with_o_direct() {
        let read = PathTarget {
            name: "/dev/loop0".into(),
            size_bytes: 1 << 30,
            reads: true,
            loop_cached_backing: Some("/var/tmp/disk.img".into()),
            ..Default::default()
        };
        let f = RunFacts { path_targets: vec![read.clone()], mem_total_bytes: 16 << 30, ..closed(1, 1.0) };
        let expected =
            Warning::LoopPageCache { target: "/dev/loop0".into(), backing_file: "/var/tmp/disk.img".into() };
        assert_eq!(run_warnings(&f), vec![expected]);
        let written = RunFacts { path_targets: vec![PathTarget { reads: false, ..read }], ..f.clone() };
        assert_eq!(run_warnings(&written), vec![], "a write-only run reads nothing from the cache");
    }

    /// Fragmented: 8 extents or more, averaging under 16 MiB. A 64 MiB file in 32 pieces is; in 4 it is not
    /// (a fresh file system gives any file a few pieces); 1 GiB in 8 pieces of 128 MiB (ext4's block groups)
    /// is not either.
    #[test]
    fn run_warnings_fragmented_targets() {
        let m = 1u64 << 20;
        let facts = |extents: u64, mapped_bytes: u64| LayoutFacts {
            name: "f".into(),
            extents,
            mapped_bytes,
            split_ios: 7,
            ..LayoutFacts::default()
        };
        let f = RunFacts {
            layouts: vec![facts(32, 64 * m), facts(4, 64 * m), facts(8, 1024 * m)],
            ..closed(1, 1.0)
        };
        assert_eq!(
            run_warnings(&f),
            vec![Warning::FragmentedTarget {
                target: "f".into(),
                extents: 32,
                mean_extent_bytes: 2 * m,
                split_ios: 7,
                holes_bytes: 0,
                trimmed: false,
            }]
        );
    }

    /// A run that trimmed a file says so (its trims punched holes), and a fragmented file it trimmed says
    /// whose holes they are.
    #[test]
    fn run_warnings_a_trimmed_file_says_its_holes_are_the_trims() {
        let m = 1u64 << 20;
        let trimmed = LayoutFacts {
            name: "f".into(),
            extents: 1397,
            mapped_bytes: 60 * m,
            extents_before: 1,
            extents_after: 1397,
            holes_bytes: 4 * m,
            trims: 1400,
            ..LayoutFacts::default()
        };
        let f = RunFacts { layouts: vec![trimmed], ..closed(1, 1.0) };
        assert_eq!(
            run_warnings(&f),
            vec![
                Warning::TrimmedFile {
                    target: "f".into(),
                    trims: 1400,
                    extents_before: 1,
                    extents_after: 1397,
                    holes_bytes: 4 * m
                },
                Warning::FragmentedTarget {
                    target: "f".into(),
                    extents: 1397,
                    mean_extent_bytes: 60 * m / 1397,
                    split_ios: 0,
                    holes_bytes: 4 * m,
                    trimmed: true,
                },
            ]
        );
    }

    #[test]
    fn run_warnings_short_run_only_on_wall_clock_and_timed() {
        let short = RunFacts { measured_s: 1.0, virtual_time: false, ..closed(1, 1.0) };
        assert_eq!(run_warnings(&short), vec![Warning::ShortRun { measured_s: 1.0 }]);
        assert_eq!(run_warnings(&RunFacts { timed: false, ..short.clone() }), vec![]);
        assert_eq!(run_warnings(&RunFacts { virtual_time: true, ..short }), vec![]);
    }

    /// Issue 35, class 13: a stall at the end of the window (a file system frozen for 8 s) is said, not
    /// censored; a deep queue draining as its I/Os always take is not a stall.
    #[test]
    fn a_window_whose_last_ios_stalled_past_its_end_ended_late() {
        let end = |ops, longest_ns, drained_ns| iolab_stats::InFlightAtEnd { ops, longest_ns, drained_ns };
        let stalled = RunFacts {
            in_flight_at_end: end(4, 8_100_000_000, 8_000_000_000),
            max_recorded_ns: Some(17_000_000),
            ..closed(1, 1.0)
        };
        assert_eq!(
            run_warnings(&stalled),
            vec![Warning::WindowEndedLate { ops: 4, drained_ns: 8_000_000_000, longest_ns: 8_100_000_000 }]
        );
        let queue = RunFacts {
            in_flight_at_end: end(256, 2_100_000_000, 2_000_000_000),
            max_recorded_ns: Some(2_300_000_000),
            ..closed(1, 1.0)
        };
        assert_eq!(run_warnings(&queue), vec![]);
    }

    /// Issue 36, item 3: a write cache that took the run's writes and never filled is said, with how long the
    /// run's rate takes to fill it; one that filled, or that the media kept up with, is not.
    #[test]
    fn a_write_cache_that_never_filled_is_warned_about_with_the_time_to_fill_it() {
        let m = 1u64 << 20;
        let short = WriteCacheFacts {
            target: "sim:hdd,15k".into(),
            cache: "device",
            size_bytes: 64 * m,
            written_bytes: 36 * m,
            peak_dirty_bytes: 32 * m,
            full_writes: 0,
            growth_ns: 1_000_000_000,
            fits: false,
        };
        let f = RunFacts { write_caches: vec![short.clone()], ..closed(1, 1.0) };
        let w = run_warnings(&f);
        let [Warning::WriteCacheNeverFilled { fill_s: Some(s), fill_bytes: Some(b), .. }] = &w[..] else {
            panic!("{w:?}")
        };
        assert!((s - 2.0).abs() < 1e-9 && *b == 72 * m, "64 MiB at 32 MiB a second, 9 written per 8 kept");
        let hint = w[0].hint().unwrap();
        assert!(hint.contains("--ramp of at least 3 s") && hint.contains("108 MiB"), "{hint}");
        assert!(
            w[0].message().contains("wrote 36 MiB into the 64 MiB write cache of 'sim:hdd,15k'"),
            "{}",
            w[0].message()
        );
        let filled = WriteCacheFacts { full_writes: 1, ..short.clone() };
        let kept_up = WriteCacheFacts { written_bytes: 4096 * m, peak_dirty_bytes: 2 * m, ..short.clone() };
        let f = RunFacts { write_caches: vec![filled, kept_up], ..closed(1, 1.0) };
        assert_eq!(run_warnings(&f), vec![]);
        let fits = WriteCacheFacts { cache: "block_cache", fits: true, ..short };
        let w = run_warnings(&RunFacts { write_caches: vec![fits], ..closed(1, 1.0) });
        assert!(matches!(w[..], [Warning::WriteCacheNeverFilled { fill_s: None, .. }]), "{w:?}");
        assert!(w[0].hint().unwrap().contains("data set fits"), "{:?}", w[0].hint());
    }

    #[test]
    fn run_warnings_counts_errors_short_ios_saturation_cache_and_dropped_data() {
        let f = RunFacts {
            errors: 2,
            short_ios: 3,
            saturated: 4,
            cache: Some(CacheFacts { shrinks: 1, capacity_bytes: 64, dirty_after_exit: 5 }),
            dropped_data: vec![("sim".into(), 7)],
            ..closed(1, 1.0)
        };
        assert_eq!(
            run_warnings(&f),
            vec![
                Warning::Errors { count: 2 },
                Warning::ShortIo { count: 3 },
                Warning::HistogramSaturated { count: 4 },
                Warning::CacheShrunk { times: 1, capacity_bytes: 64 },
                Warning::CacheDirtyAtExit { lines: 5 },
                Warning::EmulatedDataDropped { target: "sim".into(), kept_bytes: 7 },
            ]
        );
    }
}
