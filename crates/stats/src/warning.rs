//! Warnings are data: conditions that make a result questionable, stored in the result.
//!
//! The cli (and [`series_warnings`] here) decide *when* to warn; every [`Warning`] is kept in the
//! result document, exported in JSON with a `kind` tag, and rendered by iolab-report as
//! `warning: <message>` plus a tailored `hint:` (hyperfine's `output/warnings.rs`, but as data). The
//! statistics behind them (coefficient of variation, median) are [`crate::inference`]'s.

use crate::inference::{coefficient_of_variation, median};

/// Achieved mean depth below this fraction of the requested depth raises [`Warning::LowDepth`].
pub const LOW_DEPTH_RATIO: f64 = 0.80;

/// A file target with at least this many extents, averaging under [`FRAGMENTED_MEAN_EXTENT_BYTES`], raises
/// [`Warning::FragmentedTarget`]. A fresh ext4 gives a file reserved in one call one extent per 128 MiB block
/// group at worst, so up to 1 GiB fewer than 8: never called fragmented.
pub const FRAGMENTED_MIN_EXTENTS: u64 = 8;

/// See [`FRAGMENTED_MIN_EXTENTS`]. Writers that allocate a file as they go get ext4's preallocation windows,
/// 2 to 8 MiB each, while a reservation in one call gets pieces of up to a block group (128 MiB); 16 MiB
/// lies between. At 16 MiB a disk streaming 150 MB/s seeks (about 10 ms) once per 110 ms of transfer, and
/// a random 1 MiB I/O crosses a boundary 6 % of the time.
pub const FRAGMENTED_MEAN_EXTENT_BYTES: u64 = 16 << 20;

/// Per-interval IOPS coefficient of variation (sample standard deviation / mean, as everywhere:
/// [`crate::inference`]) above this raises [`Warning::HighVariability`]. 10% is where run-to-run comparisons
/// of a few percent stop being meaningful.
pub const HIGH_CV: f64 = 0.10;

/// A write-back cache that took the run's writes without ever filling raises [`Warning::WriteCacheNeverFilled`]
/// when its dirty data peaked above this share of what it took: the device or target behind it drained less
/// than three quarters of the writes. One that keeps up (a rate the media sustains) holds a few writes at a
/// time, a vanishing share of a run's.
pub const WRITE_CACHE_GROWTH_SHARE: f64 = 0.25;

/// A first interval below this fraction of the median interval raises
/// [`Warning::FirstIntervalSlow`].
pub const FIRST_INTERVAL_SLOW_RATIO: f64 = 0.50;

/// A measurement window shorter than this (seconds) raises [`Warning::ShortRun`].
pub const SHORT_RUN_S: f64 = 5.0;

/// Open loop: an achieved rate below this fraction of the offered rate (or any arrival still pending at the
/// end) raises [`Warning::RateNotSustained`]. 5% below the offer is beyond the jitter of a sustained rate.
pub const RATE_SUSTAINED_RATIO: f64 = 0.95;

/// Open loop: when the lag's p99 (iolab's own delay in issuing an op) exceeds this share of the response
/// time's p99, [`Warning::DispatchLag`] is raised: a tenth of the figure a reader judges is not the storage's.
pub const LAG_SHARE: f64 = 0.1;

/// Below this the lag is not worth a warning whatever its share (a response p99 of a few microseconds on a
/// RAM disk).
pub const LAG_FLOOR_NS: u64 = 5_000;

/// The share of a run's arrivals that may still be pending at its end on a rate the target sustains
/// (arrivals due while every slot was busy): a backlog larger than this, and than three standard deviations
/// of a Poisson arrival count, grew through the run.
pub const RATE_BACKLOG_SHARE: f64 = 0.01;

/// Warnings derived from the per-interval IOPS of the whole run (complete intervals only):
/// [`Warning::HighVariability`] and [`Warning::FirstIntervalSlow`]. `ramp_s` is the run's ramp, for their hints.
pub fn series_warnings(interval_iops: &[f64], ramp_s: f64) -> Vec<Warning> {
    let mut warnings = Vec::new();
    if let Some(cv) = coefficient_of_variation(interval_iops) {
        if cv > HIGH_CV {
            warnings.push(Warning::HighVariability { metric: "iops".to_string(), cv, ramp_s: Some(ramp_s) });
        }
    }
    if interval_iops.len() >= 3 {
        if let Some(median_iops) = median(interval_iops) {
            let first_iops = interval_iops[0];
            if first_iops < FIRST_INTERVAL_SLOW_RATIO * median_iops {
                warnings.push(Warning::FirstIntervalSlow { first_iops, median_iops, ramp_s: Some(ramp_s) });
            }
        }
    }
    warnings
}

/// A condition that makes a result questionable. Serialised with a `kind` tag in snake_case.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Warning {
    /// Achieved mean depth (Little's law) is below [`LOW_DEPTH_RATIO`] of the requested depth.
    LowDepth {
        /// Requested depth (sum of qd over workers).
        requested: f64,
        /// Achieved mean depth.
        achieved: f64,
        /// The engine that ran the workers (`sync`, `io_uring`, `mem`, `null`, `sim`), when recorded: the hint
        /// offers `--engine=io_uring` only to a run on the sync engine (or one from before this field).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        engine: Option<String>,
    },
    /// Per-interval `metric` varies more than [`HIGH_CV`].
    HighVariability {
        /// What varied, e.g. "iops".
        metric: String,
        /// Coefficient of variation (sample standard deviation / mean).
        cv: f64,
        /// The run's ramp, seconds, when recorded: the hint says to add `--ramp` only when there was none.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ramp_s: Option<f64>,
    },
    /// Buffered I/O (`--buffered`, or `direct = false`): results include the page cache.
    BufferedIo {
        /// Who set `direct = false` when the user did not type `--buffered` (a profile, a job file), as the
        /// hint names it: "the profile 'etcd'". `None` when typed (or in documents from before it was recorded).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        set_by: Option<String>,
    },
    /// Buffered reads on a target smaller than RAM: reads are probably served from memory.
    PageCacheLikely {
        /// Target name.
        target: String,
        /// Target size.
        target_bytes: u64,
        /// Total RAM.
        mem_total_bytes: u64,
        /// Who set buffered I/O, as in [`Warning::BufferedIo`].
        #[serde(default, skip_serializing_if = "Option::is_none")]
        set_by: Option<String>,
    },
    /// The first interval was much slower than the median: warm-up is in the measurement.
    FirstIntervalSlow {
        /// IOPS of the first interval.
        first_iops: f64,
        /// Median IOPS over all intervals.
        median_iops: f64,
        /// The run's ramp, seconds, when recorded: the hint says to add `--ramp` only when there was none.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ramp_s: Option<f64>,
    },
    /// Open loop: the target did not keep up with the offered rate.
    RateNotSustained {
        /// Offered arrival rate.
        offered_iops: f64,
        /// Achieved completion rate.
        achieved_iops: f64,
        /// Arrivals not yet submitted when the run ended.
        backlog_at_end: u64,
    },
    /// Open loop: iolab's own delay in issuing ops (lag: submission minus scheduled arrival) is a material
    /// share ([`LAG_SHARE`]) of the response time's p99, which includes it.
    DispatchLag {
        /// The lag's 99th percentile, ns.
        lag_p99_ns: u64,
        /// The response time's 99th percentile, ns, over the same workers (the group's).
        response_p99_ns: u64,
        /// The open-loop group whose lag and response times these are, when the run has several groups.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        group: Option<String>,
    },
    /// Some completions failed.
    Errors {
        /// Failed completions.
        count: u64,
    },
    /// Some completions failed, and the run injected EIO (`--inject eio@N`): the errors are (at least in part)
    /// the injected ones, not the device's.
    InjectedErrors {
        /// Failed completions in the window.
        count: u64,
    },
    /// Some completions transferred fewer bytes than requested.
    ShortIo {
        /// Short completions.
        count: u64,
    },
    /// The sync engine does one I/O at a time per worker, so qd > 1 is not honoured.
    SyncEngineDepth {
        /// Requested per-worker qd.
        requested: u32,
    },
    /// The requested engine was unavailable and the sync engine was used.
    EngineFallback {
        /// Why the fallback happened.
        reason: String,
    },
    /// The target file is sparse: reads of holes do not touch the device.
    FileHasHoles {
        /// Target name.
        target: String,
    },
    /// A file target is fragmented (before or after the run, whichever is worse): at least
    /// [`FRAGMENTED_MIN_EXTENTS`] extents averaging under [`FRAGMENTED_MEAN_EXTENT_BYTES`].
    FragmentedTarget {
        /// Target name.
        target: String,
        /// Extents (physically contiguous pieces).
        extents: u64,
        /// Their mean size, bytes.
        mean_extent_bytes: u64,
        /// I/Os of the run that crossed an extent boundary.
        split_ios: u64,
        /// Bytes of the file that are holes (its size less what its extents map): iolab creates files
        /// without; trims punch them. 0 in documents from before it was recorded.
        #[serde(default, skip_serializing_if = "is_zero")]
        holes_bytes: u64,
        /// This run trimmed it (so its own trims punched those holes).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        trimmed: bool,
    },
    /// The run trimmed a file (`trim_pct`): each trim punched a hole (fallocate PUNCH_HOLE), which the file
    /// keeps after the run, so the next run on it meets holes and more extents.
    TrimmedFile {
        /// Target name.
        target: String,
        /// Trims completed in the window (the ramp's punched holes too).
        trims: u64,
        /// Extents before the run and after it.
        extents_before: u64,
        /// See `extents_before`.
        extents_after: u64,
        /// Bytes of the file that are holes after the run.
        holes_bytes: u64,
    },
    /// The measurement window is shorter than [`SHORT_RUN_S`].
    ShortRun {
        /// Measured seconds.
        measured_s: f64,
    },
    /// Some latencies exceeded the histogram range (1 h) and were binned at its top.
    HistogramSaturated {
        /// Saturated samples.
        count: u64,
    },
    /// A target is smaller than the job's `footprint` of it (`[targets]`): its workers address the whole
    /// target, the footprint scaled down.
    FootprintScaled {
        /// Target name.
        target: String,
        /// The job's footprint of it.
        footprint_bytes: u64,
        /// The target's size.
        size_bytes: u64,
    },
    /// The target lives in tmpfs or another RAM-backed filesystem.
    TmpfsTarget {
        /// Target name.
        target: String,
    },
    /// The target is (or lives on) a loop device that reads its backing file through the page cache (sysfs
    /// `loop/dio` is 0): its reads may be served from memory even with O_DIRECT.
    LoopPageCache {
        /// Target name.
        target: String,
        /// The loop device's backing file.
        backing_file: String,
    },
    /// Users and transactions: the backlog (dispatched, not completed) exceeded LoadGen's overload guard of
    /// 1.5 x users. LoadGen stops there (`SwordfishExceptionTooMuchLoad`); iolab keeps running and counting.
    TransactionOverload {
        /// Users.
        users: u32,
        /// Largest backlog seen in the window.
        backlog_max: u64,
        /// Backlog when the run ended.
        backlog_at_end: u64,
    },
    /// On virtual time, an emulated device used by several workers: each worker drove its own copy. Raised by
    /// iolab before all workers of a virtual-time run shared one timeline; kept so results saved then still load.
    VirtualDeviceCopies {
        /// Target name.
        target: String,
        /// Workers using it.
        workers: u32,
    },
    /// An emulated device stopped keeping written data (its memory cap was reached).
    EmulatedDataDropped {
        /// Target name.
        target: String,
        /// Bytes it kept.
        kept_bytes: u64,
    },
    /// The block cache was shrunk because the machine ran low on memory.
    CacheShrunk {
        /// Times it shrank.
        times: u32,
        /// Capacity at the end.
        capacity_bytes: u64,
    },
    /// A write-back cache took the run's writes and never filled: no write waited for room and its dirty data
    /// grew through the run (the device or target behind it did not keep up, [`WRITE_CACHE_GROWTH_SHARE`]).
    /// Every write completed at the cache's speed; the device or target behind it was never the limit.
    WriteCacheNeverFilled {
        /// The target behind the cache (iolab's block cache: the first of the run's targets, "and N more").
        target: String,
        /// `device`: the emulated device's own write cache; `block_cache`: iolab's block cache in write-back
        /// mode.
        cache: String,
        /// The cache's size.
        size_bytes: u64,
        /// Bytes of the writes it took.
        written_bytes: u64,
        /// The most dirty data it held at once.
        peak_dirty_bytes: u64,
        /// At the rate the run filled it, seconds from the first write until it is full; absent when it never
        /// fills (the run's data set fits in iolab's block cache).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        fill_s: Option<f64>,
        /// Likewise, bytes written until it is full.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        fill_bytes: Option<u64>,
    },
    /// A write-back cache still held dirty lines after the run (write-backs failed).
    CacheDirtyAtExit {
        /// Dirty lines left.
        lines: u64,
    },
    /// The device under the run's targets did much more than the run ([`much_more`]): another process shared
    /// it, or the kernel wrote back buffered data for it. iolab's figures are its own I/O; the device's
    /// counters (/proc/diskstats) hold everyone's.
    SharedDevice {
        /// The device's kernel name.
        device: String,
        /// What it read over the window, bytes.
        device_read_bytes: u64,
        /// What it wrote.
        device_write_bytes: u64,
        /// What the run read.
        own_read_bytes: u64,
        /// What the run wrote.
        own_write_bytes: u64,
    },
    /// `--verify` found blocks that do not hold what was last written to them.
    DataMismatch {
        /// Distinct blocks that failed.
        blocks: u64,
        /// Failed reads of them (a block read twice counts twice).
        reads: u64,
        /// Classes found, e.g. "2 lost_write, 1 torn_write".
        classes: String,
    },
    /// The read-back pass of `--verify` could not read some written blocks (I/O errors, short reads), so
    /// they were not checked.
    ReadbackIncomplete {
        /// Written blocks not read back.
        blocks: u64,
    },
    /// The window did not end on time ([`crate::InFlightAtEnd::late`]): I/Os in flight at its end completed
    /// long after it, longer than any I/O the window recorded, so its figures leave the stall out.
    WindowEndedLate {
        /// I/Os in flight at the end.
        ops: u64,
        /// From the end to the last of them completing, in nanoseconds.
        drained_ns: u64,
        /// The longest of them, from its intended start, in nanoseconds.
        longest_ns: u64,
    },
}

/// [`Warning::SharedDevice`]'s message: (device, the run's own) bytes read, then written.
fn shared_device(device: &str, read: (u64, u64), written: (u64, u64)) -> String {
    let fmt = mib;
    let said: Vec<String> = [("read", read), ("wrote", written)]
        .iter()
        .filter(|(_, (d, own))| much_more(*d, *own))
        .map(|(verb, (d, own))| format!("{device} {verb} {}, iolab {}", fmt(*d), fmt(*own)))
        .collect();
    format!(
        "the device did much more than this run ({}): another process shared it, or the kernel wrote back \
         buffered data for it; the figures are iolab's own I/O, /proc/diskstats counts everyone's",
        said.join("; ")
    )
}

/// [`Warning::WriteCacheNeverFilled`]'s message: what was written into which cache, and its peak.
fn never_filled(
    target: &str,
    cache: &str,
    size_bytes: u64,
    written_bytes: u64,
    peak_dirty_bytes: u64,
) -> String {
    let behind = behind_word(cache);
    let (written, size, peak) = (mib(written_bytes), mib(size_bytes), mib(peak_dirty_bytes));
    let what = match cache {
        "block_cache" => format!("iolab's {size} write-back block cache over '{target}'"),
        _ => format!("the {size} write cache of '{target}'"),
    };
    format!(
        "the run wrote {written} into {what}, which never filled (at most {peak} dirty at once): the \
         {behind} behind it was never the limit"
    )
}

impl Warning {
    /// One-line statement of what was observed, with the numbers.
    pub fn message(&self) -> String {
        match self {
            Self::LowDepth { requested, achieved, .. } => format!(
                "achieved queue depth {achieved:.1} is {:.0}% of the requested {requested:.0}",
                percent(*achieved, *requested)
            ),
            Self::HighVariability { metric, cv, .. } => {
                format!("{metric} varied a lot between intervals (coefficient of variation {:.1}%)", cv * 100.0)
            }
            Self::BufferedIo { .. } => "buffered I/O: results include the page cache".to_string(),
            Self::PageCacheLikely { target, target_bytes, mem_total_bytes, .. } => format!(
                "'{target}' ({} MiB) is smaller than RAM ({} MiB) and I/O is buffered: reads are likely served from the page cache",
                target_bytes / (1 << 20),
                mem_total_bytes / (1 << 20)
            ),
            Self::FirstIntervalSlow { first_iops, median_iops, .. } => format!(
                "the first interval ({first_iops:.0} IOPS) was much slower than the median ({median_iops:.0} IOPS)"
            ),
            Self::RateNotSustained { offered_iops, achieved_iops, backlog_at_end } => format!(
                "offered rate not sustained: {achieved_iops:.1} of {offered_iops:.1} IOPS achieved, {backlog_at_end} arrivals pending at the end"
            ),
            Self::DispatchLag { lag_p99_ns, response_p99_ns, group } => format!(
                "iolab issued ops late{}: lag p99 {} is {:.0}% of the response p99 {}, which includes it",
                group.as_ref().map_or(String::new(), |g| format!(" in group '{g}'")),
                crate::format::format_duration_ns(*lag_p99_ns as f64),
                100.0 * *lag_p99_ns as f64 / (*response_p99_ns).max(1) as f64,
                crate::format::format_duration_ns(*response_p99_ns as f64)
            ),
            Self::Errors { count } => format!("{count} I/O errors"),
            Self::InjectedErrors { count } => format!("{count} I/O errors, with EIO injected by --inject"),
            Self::ShortIo { count } => format!("{count} short reads or writes (fewer bytes than requested)"),
            Self::SyncEngineDepth { requested } => {
                format!("the sync engine does one I/O at a time per worker; qd {requested} is not used")
            }
            Self::EngineFallback { reason } => format!("io_uring unavailable, the sync engine was used: {reason}"),
            Self::FileHasHoles { target } => format!("'{target}' has holes (sparse file)"),
            Self::FragmentedTarget { target, extents, mean_extent_bytes, split_ios, holes_bytes, trimmed } => format!(
                "'{target}' is fragmented: {extents} extents of {} on average{}; {split_ios} I/Os of this run crossed an extent boundary",
                extent_size(*mean_extent_bytes),
                holes_said(*holes_bytes, *trimmed)
            ),
            Self::TrimmedFile { target, trims, extents_before, extents_after, holes_bytes } => format!(
                "the run's trims punched holes in '{target}' ({trims} trims in the window, fallocate \
                 PUNCH_HOLE): it has {} of holes and {extents_after} extents now ({extents_before} before the run)",
                mib(*holes_bytes)
            ),
            Self::ShortRun { measured_s } => format!("only {measured_s:.2} s were measured"),
            Self::HistogramSaturated { count } => {
                format!("{count} latencies exceeded 1 hour and were recorded as 1 hour in the percentiles")
            }
            Self::FootprintScaled { target, footprint_bytes, size_bytes } => format!(
                "'{target}' ({:.2} GiB) is smaller than the job's footprint of it ({:.2} GiB): its workers addressed the whole target, the footprint scaled to {:.1} %",
                *size_bytes as f64 / (1u64 << 30) as f64,
                *footprint_bytes as f64 / (1u64 << 30) as f64,
                100.0 * *size_bytes as f64 / (*footprint_bytes).max(1) as f64
            ),
            Self::TmpfsTarget { target } => format!("'{target}' is on tmpfs: this measures memory, not a device"),
            Self::LoopPageCache { target, backing_file } => format!(
                "'{target}' is a loop device over '{backing_file}' without direct I/O (loop/dio = 0): reads may be served from the page cache of the backing file"
            ),
            Self::TransactionOverload { users, backlog_max, backlog_at_end } => format!(
                "the storage did not keep up with the users: up to {backlog_max} transactions dispatched and not completed ({backlog_at_end} at the end), more than 1.5 x {users} user{} (LoadGen's overload limit)",
                if *users == 1 { "" } else { "s" }
            ),
            Self::VirtualDeviceCopies { target, workers } => format!(
                "'{target}' is used by {workers} workers on virtual time: each worker drove its own copy of the device"
            ),
            Self::EmulatedDataDropped { target, kept_bytes } => format!(
                "'{target}' reached its memory cap ({} MiB of written data): later writes were timed but not kept",
                kept_bytes >> 20
            ),
            Self::CacheShrunk { times, capacity_bytes } => format!(
                "the cache shrank {times} times because memory ran low, to {} MiB",
                capacity_bytes >> 20
            ),
            Self::CacheDirtyAtExit { lines } => {
                format!("{lines} dirty cache lines could not be written back at the end")
            }
            Self::WriteCacheNeverFilled { target, cache, size_bytes, written_bytes, peak_dirty_bytes, .. } => {
                never_filled(target, cache, *size_bytes, *written_bytes, *peak_dirty_bytes)
            }
            Self::SharedDevice { device, device_read_bytes, device_write_bytes, own_read_bytes, own_write_bytes } => {
                shared_device(device, (*device_read_bytes, *own_read_bytes), (*device_write_bytes, *own_write_bytes))
            }
            Self::DataMismatch { blocks, reads, classes } => {
                format!("DATA MISMATCH: {blocks} blocks failed verification, in {reads} reads ({classes})")
            }
            Self::ReadbackIncomplete { blocks } => {
                format!("the read-back pass could not read {blocks} written blocks: they were not verified")
            }
            Self::WindowEndedLate { ops, drained_ns, longest_ns } => format!(
                "the window did not end on time: {ops} I/Os in flight at its end completed up to {} after it \
                 (the longest took {}), longer than any I/O in the figures, which leave them out",
                seconds(*drained_ns),
                seconds(*longest_ns)
            ),
        }
    }

    /// What to do about it, when there is something to do.
    pub fn hint(&self) -> Option<String> {
        let hint = match self {
            Self::LowDepth { engine, .. } => return Some(low_depth_hint(engine.as_deref())),
            Self::HighVariability { ramp_s, .. } => {
                return Some(format!(
                    "results are noisy: close background load, run longer (--duration), {} to skip warm-up, \
                     or check the timeseries for periodic stalls (GC, writeback)",
                    ramp_advice(*ramp_s)
                ))
            }
            Self::BufferedIo { set_by } => return Some(buffered_hint(set_by.as_deref())),
            Self::PageCacheLikely { set_by, .. } => {
                return Some(format!("{}, or use a target larger than RAM", buffered_hint(set_by.as_deref())))
            }
            Self::FirstIntervalSlow { ramp_s, .. } => {
                return Some(format!("{} to exclude warm-up from the measurement", ramp_advice(*ramp_s)))
            }
            Self::RateNotSustained { .. } => {
                "the target is saturated at this rate; lower --rate or raise qd; latencies include queueing delay"
            }
            Self::DispatchLag { .. } => {
                "the issuing thread woke late or was busy (timer wake-up, scheduling, other load on its CPU): \
                 the response times hold that delay; run on an idle machine, with fewer workers than cores, or \
                 read the storage's part in the service times"
            }
            Self::Errors { .. } => "see the errors section (by errno); the device or filesystem may be failing",
            Self::InjectedErrors { .. } => {
                "the injected count on the 'injected' line covers the whole run, ramp included; these are the window's"
            }
            Self::ShortIo { .. } => {
                "short I/O usually means the target is smaller than the offsets used, or end of file was hit"
            }
            Self::SyncEngineDepth { .. } => "use --engine=io_uring for qd > 1, or add workers (--workers) for concurrency",
            Self::EngineFallback { .. } => {
                "check sysctl kernel.io_uring_disabled and seccomp; or pass --engine=sync explicitly to silence this"
            }
            Self::FileHasHoles { .. } => "pre-fill the file (or let iolab create it) so reads reach the device",
            Self::FragmentedTarget { holes_bytes, .. } if *holes_bytes > 0 => {
                "an I/O across an extent boundary becomes two device commands (and a seek on a disk), and a read \
                 of a hole returns zeros without the device, so results measure the file's layout as well as the \
                 device: remove the file so that iolab creates it afresh, and give runs with trims (trim_pct) a \
                 file of their own"
            }
            Self::TrimmedFile { .. } => {
                "the holes stay: the next run on this file reads zeros from them without the device and meets \
                 its extents (a 'fragmented' warning); remove the file so that iolab creates it afresh, or trim a \
                 block device or a sim: target"
            }
            Self::FragmentedTarget { .. } => {
                "an I/O across an extent boundary becomes two device commands (and a seek on a disk), so results \
                 measure the file's layout as well as the device: recreate the file with --prealloc fallocate \
                 (the default), or defragment it (e4defrag, xfs_fsr)"
            }
            Self::ShortRun { .. } => "run for at least 5 s (--duration) for stable numbers",
            Self::HistogramSaturated { .. } => "percentiles at the top are lower bounds; max is still exact",
            Self::FootprintScaled { .. } => {
                "the shares of the hot zones are kept, the span is not: fewer seeks and more cache hits than the trace had; give a target at least the footprint's size to run it whole"
            }
            Self::TmpfsTarget { .. } => "put the target on the device you want to measure",
            Self::SharedDevice { .. } => {
                "run where nothing else uses the device (iostat or /proc/diskstats show its traffic)"
            }
            Self::LoopPageCache { .. } => {
                "attach the loop device with direct I/O (losetup --direct-io=on), or measure the device under \
                 the backing file"
            }
            Self::TransactionOverload { .. } => {
                "LoadGen would stop here (too much load); fewer users, a lower rate or faster storage; transaction latencies include the wait"
            }
            Self::VirtualDeviceCopies { .. } => {
                "one worker with a deeper qd shares one device exactly on virtual time; or use --clock real, where all workers share it"
            }
            Self::EmulatedDataDropped { .. } => {
                "reads of data written after that return zeros; use a smaller device size (size=) or region"
            }
            Self::CacheShrunk { .. } => "hit ratios changed during the run; cap the cache with --cache-max-mem",
            Self::CacheDirtyAtExit { .. } => "the target failed write-backs: see the errors; acknowledged writes were lost",
            Self::WriteCacheNeverFilled { cache, fill_s, fill_bytes, .. } => {
                return Some(never_filled_hint(cache, *fill_s, *fill_bytes))
            }
            Self::DataMismatch { .. } => {
                "the storage returned data other than what was acknowledged: see verify.first_mismatches for \
                 offsets, headers and hex dumps (docs/VERIFY.md explains each class)"
            }
            Self::ReadbackIncomplete { .. } => {
                "the target failed reads after the run: check its health (dmesg), then run `iolab verify` on it"
            }
            Self::WindowEndedLate { .. } => {
                "the storage stalled at the end of the window (a frozen file system, a device or controller \
                 reset, a cache flushing): check dmesg and the last intervals of the time series, and run \
                 again to see whether the stall repeats"
            }
        };
        Some(hint.to_string())
    }
}

/// [`Warning::FragmentedTarget`]'s words on its holes: none without; this run's trims when it trimmed the file,
/// else what punches them (iolab creates files without holes).
fn holes_said(holes_bytes: u64, trimmed: bool) -> String {
    match (holes_bytes, trimmed) {
        (0, _) => String::new(),
        (h, true) => format!(", with {} of holes that this run's trims punched", mib(h)),
        (h, false) => {
            format!(", with {} of holes (trims punch them: a run with trim_pct on this file)", mib(h))
        }
    }
}

/// A mean extent's size: "18 KiB" under 1 MiB (where "0.0 MiB" would say nothing), else as [`mib`].
fn extent_size(bytes: u64) -> String {
    if bytes < 1 << 20 {
        format!("{:.0} KiB", bytes as f64 / 1024.0)
    } else {
        mib(bytes)
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// [`Warning::BufferedIo`]'s hint: `--buffered` is named only when the user typed it; buffered I/O that a
/// profile or a job file set is theirs, and the way to O_DIRECT is a job file with `direct = true`.
fn buffered_hint(set_by: Option<&str>) -> String {
    match set_by {
        None => "drop --buffered to measure the device with O_DIRECT".to_string(),
        Some(by) if by.starts_with("the profile '") => {
            let name = by.trim_start_matches("the profile '").trim_end_matches('\'');
            format!(
                "{by} sets buffered I/O (direct = false), as the check it follows does, so this is by design, \
                 not a flag you typed; to measure the device with O_DIRECT, run a copy of the profile with \
                 direct = true (`iolab profiles show {name} > job.toml`)"
            )
        }
        Some(by) => format!(
            "{by} sets buffered I/O (direct = false), not a flag you typed; set direct = true there to measure \
             the device with O_DIRECT"
        ),
    }
}

/// What is behind a [`Warning::WriteCacheNeverFilled`] cache.
fn behind_word(cache: &str) -> &'static str {
    match cache {
        "block_cache" => "target",
        _ => "media",
    }
}

/// [`Warning::WriteCacheNeverFilled`]'s hint: how long to run, or how much to write first, for the cache to
/// be full when the window starts (half as long again as the estimate, which assumes the run's rate holds).
fn never_filled_hint(cache: &str, fill_s: Option<f64>, fill_bytes: Option<u64>) -> String {
    let behind = behind_word(cache);
    match (fill_s, fill_bytes) {
        (Some(s), Some(b)) => format!(
            "the figures are the cache's, not the {behind}'s: at this rate it fills after about {s:.1} s and {} \
             of writes; give the run a --ramp of at least {:.0} s, or precondition with at least {} of writes, \
             so the window measures the {behind} behind the cache (or measure the cache on purpose, and say so)",
            mib(b),
            (1.5 * s).ceil().max(1.0),
            mib(b + b / 2)
        ),
        _ => format!(
            "the run's data set fits in the cache, which never fills however long the run: a --cache smaller \
             than the data set measures the {behind} behind it"
        ),
    }
}

/// `bytes` as the tables give sizes: "2.5 MiB" under 10 MiB, "37 MiB", "1.00 GiB" from 1 GiB.
fn mib(bytes: u64) -> String {
    let m = bytes as f64 / (1u64 << 20) as f64;
    if m >= 1024.0 {
        format!("{:.2} GiB", m / 1024.0)
    } else if m >= 10.0 {
        format!("{m:.0} MiB")
    } else {
        format!("{m:.1} MiB")
    }
}

/// [`Warning::LowDepth`]'s hint: `--engine=io_uring` is offered only where the sync engine ran (or the engine
/// was not recorded); `mem:`, `null:` and `sim:` targets have no engine to choose.
fn low_depth_hint(engine: Option<&str>) -> String {
    let engine_advice = match engine {
        None | Some("sync") => ", or compare with --engine=io_uring",
        _ => "",
    };
    format!(
        "the workers could not keep the queue full (CPU-bound submission, or a device/engine limit); \
         add workers (--workers) or check CPU use{engine_advice}"
    )
}

/// "add --ramp" when the run had no ramp (or it was not recorded), else a longer one than it had.
fn ramp_advice(ramp_s: Option<f64>) -> String {
    match ramp_s {
        Some(r) if r > 0.0 => format!("give a longer --ramp than the {r} s used"),
        _ => "add --ramp".to_string(),
    }
}

/// `ns` in seconds, as the warning's numbers are read: "8.02 s", "350.0 ms".
fn seconds(ns: u64) -> String {
    if ns >= 1_000_000_000 {
        format!("{:.2} s", ns as f64 / 1e9)
    } else {
        format!("{:.1} ms", ns as f64 / 1e6)
    }
}

fn percent(part: f64, whole: f64) -> f64 {
    if whole > 0.0 {
        part / whole * 100.0
    } else {
        0.0
    }
}

/// A device did "much more" than the I/O under test (a database's, iolab's own) when its bytes (read, or
/// written) are more than this many times that I/O's ...
pub const MUCH_MORE_RATIO: f64 = 2.0;

/// ... and at least this many bytes more (docs/DB.md, "The database's own I/O").
pub const MUCH_MORE_FLOOR_BYTES: u64 = 16 << 20;

/// Whether `device` bytes are much more than `own` ([`MUCH_MORE_RATIO`] and [`MUCH_MORE_FLOOR_BYTES`]).
pub fn much_more(device: u64, own: u64) -> bool {
    device as f64 > MUCH_MORE_RATIO * own as f64 && device.saturating_sub(own) >= MUCH_MORE_FLOOR_BYTES
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 37, item 3: the lag warning speaks the units of the tables beside it, not "69402.6 us".
    #[test]
    fn the_dispatch_lag_warning_speaks_the_tables_units() {
        let w = Warning::DispatchLag { lag_p99_ns: 69_402_600, response_p99_ns: 80_000_000, group: None };
        assert_eq!(
            w.message(),
            "iolab issued ops late: lag p99 69.4 ms is 87% of the response p99 80.0 ms, which includes it"
        );
    }

    #[test]
    fn series_warnings_flags_noise_and_slow_start() {
        let w = series_warnings(&[100.0, 1000.0, 1000.0, 1000.0, 1000.0], 0.0);
        assert!(
            matches!(w[0], Warning::HighVariability { ref metric, cv, .. } if metric == "iops" && cv > HIGH_CV)
        );
        assert_eq!(
            w[1],
            Warning::FirstIntervalSlow { first_iops: 100.0, median_iops: 1000.0, ramp_s: Some(0.0) }
        );
        assert!(series_warnings(&[1000.0, 1010.0, 990.0], 0.0).is_empty());
    }

    #[test]
    fn warning_serialises_with_snake_case_kind_tag() {
        let w = Warning::LowDepth { requested: 32.0, achieved: 12.5, engine: None };
        let json = serde_json::to_string(&w).unwrap();
        assert_eq!(json, r#"{"kind":"low_depth","requested":32.0,"achieved":12.5}"#);
        assert_eq!(serde_json::from_str::<Warning>(&json).unwrap(), w);
        let typed = Warning::BufferedIo { set_by: None };
        assert_eq!(serde_json::to_string(&typed).unwrap(), r#"{"kind":"buffered_io"}"#);
        assert_eq!(serde_json::from_str::<Warning>(r#"{"kind":"buffered_io"}"#).unwrap(), typed);
    }

    /// A fragmented file with holes says where they came from: this run's trims, or a run with trims.
    #[test]
    fn fragmented_target_names_the_trims_behind_its_holes() {
        let w = |holes_bytes, trimmed| Warning::FragmentedTarget {
            target: "f".into(),
            extents: 1397,
            mean_extent_bytes: 1 << 20,
            split_ios: 0,
            holes_bytes,
            trimmed,
        };
        assert!(!w(0, false).message().contains("holes"), "{}", w(0, false).message());
        let small = Warning::FragmentedTarget {
            target: "f".into(),
            extents: 337,
            mean_extent_bytes: 18 << 10,
            split_ios: 0,
            holes_bytes: 0,
            trimmed: false,
        };
        assert!(small.message().contains("extents of 18 KiB on average"), "{}", small.message());
        assert!(w(5 << 20, true).message().contains("5.0 MiB of holes that this run's trims punched"));
        assert!(w(5 << 20, false).message().contains("trims punch them"), "{}", w(5 << 20, false).message());
        assert!(w(5 << 20, false).hint().unwrap().contains("remove the file"));
        let json = serde_json::to_string(&w(0, false)).unwrap();
        assert!(!json.contains("holes") && !json.contains("trimmed"), "{json}");
    }

    /// A hint names `--buffered` only when the user typed it: a profile's or a job file's buffered I/O is
    /// said to be theirs, with what the user can do instead.
    #[test]
    fn buffered_hint_names_who_set_it() {
        let hint = |by: Option<&str>| Warning::BufferedIo { set_by: by.map(str::to_string) }.hint().unwrap();
        assert!(hint(None).contains("drop --buffered"));
        let profile = hint(Some("the profile 'etcd'"));
        assert!(
            !profile.contains("--buffered") && profile.contains("the profile 'etcd' sets buffered I/O"),
            "{profile}"
        );
        assert!(
            profile.contains("direct = true") && profile.contains("iolab profiles show etcd >"),
            "{profile}"
        );
        let file = hint(Some("the job file 'j.toml'"));
        assert!(!file.contains("--buffered") && file.contains("set direct = true there"), "{file}");
        let cached = Warning::PageCacheLikely {
            target: "f".into(),
            target_bytes: 1,
            mem_total_bytes: 2,
            set_by: Some("the profile 'etcd'".into()),
        };
        assert!(!cached.hint().unwrap().contains("--buffered"), "{:?}", cached.hint());
    }

    #[test]
    fn warning_every_kind_has_message_and_hint() {
        let all = [
            Warning::LowDepth { requested: 32.0, achieved: 8.0, engine: None },
            Warning::HighVariability { metric: "iops".into(), cv: 0.2, ramp_s: None },
            Warning::BufferedIo { set_by: None },
            Warning::PageCacheLikely {
                target: "f".into(),
                target_bytes: 1 << 30,
                mem_total_bytes: 16 << 30,
                set_by: None,
            },
            Warning::FirstIntervalSlow { first_iops: 1.0, median_iops: 10.0, ramp_s: None },
            Warning::RateNotSustained { offered_iops: 10.0, achieved_iops: 5.0, backlog_at_end: 3 },
            Warning::DispatchLag {
                lag_p99_ns: 90_000,
                response_p99_ns: 100_000,
                group: Some("checkpoint".into()),
            },
            Warning::Errors { count: 1 },
            Warning::ShortIo { count: 1 },
            Warning::SyncEngineDepth { requested: 32 },
            Warning::EngineFallback { reason: "EPERM".into() },
            Warning::FileHasHoles { target: "f".into() },
            Warning::FragmentedTarget {
                target: "f".into(),
                extents: 30,
                mean_extent_bytes: 2 << 20,
                split_ios: 5,
                holes_bytes: 0,
                trimmed: false,
            },
            Warning::TrimmedFile {
                target: "f".into(),
                trims: 3,
                extents_before: 1,
                extents_after: 7,
                holes_bytes: 12 << 10,
            },
            Warning::ShortRun { measured_s: 1.0 },
            Warning::HistogramSaturated { count: 1 },
            Warning::TmpfsTarget { target: "f".into() },
            Warning::FootprintScaled { target: "f".into(), footprint_bytes: 2 << 30, size_bytes: 1 << 30 },
            Warning::LoopPageCache { target: "/dev/loop0".into(), backing_file: "/x.img".into() },
            Warning::WriteCacheNeverFilled {
                target: "f".into(),
                cache: "block_cache".into(),
                size_bytes: 1 << 30,
                written_bytes: 1 << 29,
                peak_dirty_bytes: 1 << 29,
                fill_s: None,
                fill_bytes: None,
            },
        ];
        for w in all {
            assert!(!w.message().is_empty());
            assert!(w.hint().is_some_and(|h| !h.is_empty()));
        }
        assert_eq!(
            Warning::LowDepth { requested: 32.0, achieved: 8.0, engine: None }.message(),
            "achieved queue depth 8.0 is 25% of the requested 32"
        );
    }

    #[test]
    fn low_depth_offers_io_uring_only_after_the_sync_engine() {
        let hint = |engine: Option<&str>| {
            let w = Warning::LowDepth { requested: 32.0, achieved: 5.3, engine: engine.map(str::to_string) };
            w.hint().unwrap()
        };
        assert!(hint(Some("sync")).contains("--engine=io_uring"));
        assert!(hint(None).contains("--engine=io_uring"), "results saved before the field");
        for engine in ["null", "mem", "sim", "io_uring"] {
            assert!(!hint(Some(engine)).contains("--engine"), "{engine}: {}", hint(Some(engine)));
        }
    }

    #[test]
    fn noise_and_slow_start_say_add_ramp_only_without_one() {
        let noisy =
            |ramp_s| Warning::HighVariability { metric: "iops".into(), cv: 0.2, ramp_s }.hint().unwrap();
        assert!(noisy(Some(0.0)).contains("add --ramp") && noisy(None).contains("add --ramp"));
        assert!(noisy(Some(1.0)).contains("a longer --ramp than the 1 s used"), "{}", noisy(Some(1.0)));
        let slow = Warning::FirstIntervalSlow { first_iops: 1.0, median_iops: 10.0, ramp_s: Some(1.0) };
        let hint = slow.hint().unwrap();
        assert!(!hint.contains("add --ramp") && hint.contains("a longer --ramp"), "{hint}");
        let back: Warning =
            serde_json::from_str(r#"{"kind":"high_variability","metric":"iops","cv":0.2}"#).unwrap();
        assert_eq!(back, Warning::HighVariability { metric: "iops".into(), cv: 0.2, ramp_s: None });
    }
}
