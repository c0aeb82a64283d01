//! What sits between a worker and its targets: emulated devices (one shared model and data store per `sim:`
//! target), links (`link:`), the run's block cache (`--cache`) and, on virtual time, the run's one timeline.
//! Built once per run, after the targets are probed and opened, before the workers start; each worker gets
//! its share through `Layers::worker`. Devices, links and the cache device are shared by the workers that
//! use them on either clock.

use crate::{Error, Result};
use iolab_cache::{Cache, CacheConfig};
use iolab_device::{OpenRequest, TargetKind};
use iolab_engine::cache::{RealDevice, WorkerCache, WRITE_BACK_STAGING};
use iolab_engine::link::SharedLink;
use iolab_engine::sim::SimTarget;
use iolab_engine::timeline::Timeline;
use iolab_engine::EngineChoice;
use iolab_plan::sizing::DataKept;
use iolab_plan::{Plan, WorkerPlan};
use iolab_sim::{LinkTiming, SharedDevice, SparseStore};
use iolab_spec::cache::DEFAULT_CACHE_LINE;
use iolab_spec::{CacheSize, CacheSpec, ClockKind, TargetSpec};
use std::sync::{Arc, Mutex};

/// The run's devices, links and cache.
pub struct Layers {
    /// Per run target: its emulated device and data (sim: targets only).
    pub sims: Vec<Option<SimTarget>>,
    /// Per run target: the link in front of it, shared by the workers using it.
    pub links: Vec<Option<SharedLink>>,
    /// The block cache.
    pub cache: Option<RunCache>,
    /// On virtual time, the run's timeline: every worker takes a seat on it.
    timeline: Option<Arc<Timeline>>,
    /// Whether emulated devices and the cache keep written data, and why (see [`DataKept`]).
    pub data: DataKept,
}

/// The run's block cache and how it was resolved.
pub struct RunCache {
    /// The cache.
    pub cache: Arc<Cache>,
    /// The emulated cache device timing hits, if any.
    pub dev: Option<Arc<SharedDevice>>,
    /// Its size.
    pub dev_size: u64,
    /// The cache device's name ("mem" for RAM).
    pub dev_name: String,
    /// A real cache device (`--cache-dev PATH`), opened: appended to each worker's files.
    pub dev_file: Option<Arc<std::fs::File>>,
    /// The cache device's seal, when it is a file of iolab's: its mark is set again when the cache goes.
    pub dev_seal: Option<iolab_device::ownership::Seal>,
    /// Sequential cutoff.
    pub seq_cutoff: u64,
    /// Capacity asked for, after resolving a percentage and the memory cap.
    pub capacity_bytes: u64,
    /// Shrink when memory runs low.
    pub shrink: bool,
    /// Shrinks so far.
    pub shrinks: Vec<iolab_report::cache::CacheShrink>,
}

/// Memory is low when MemAvailable falls below this share of MemTotal (and at least [`LOW_MEM_FLOOR`]).
const LOW_MEM_SHARE: f64 = 0.05;
/// The smallest MemAvailable counted as low.
const LOW_MEM_FLOOR: u64 = 256 << 20;

impl RunCache {
    /// Once a second while the run goes on (`--cache-shrink`): when the machine's available memory is low,
    /// gives back a quarter of the cache; when it is plentiful again, grows back towards the configured size.
    pub fn watch_memory(&mut self, t_s: f64) {
        if !self.shrink {
            return;
        }
        let avail = iolab_device::mem_available_bytes();
        if avail == 0 {
            return;
        }
        let low = ((iolab_device::mem_total_bytes() as f64 * LOW_MEM_SHARE) as u64).max(LOW_MEM_FLOOR);
        let now = self.cache.stats().capacity_bytes;
        if avail < low {
            let line = self.cache.config().line_bytes as u64;
            let target = (now / 4 * 3) / line * line;
            if target >= line && target < now {
                let capacity_bytes = self.cache.set_capacity(target);
                self.shrinks.push(iolab_report::cache::CacheShrink {
                    t_s,
                    mem_available_bytes: avail,
                    capacity_bytes,
                });
            }
        } else if avail > 4 * low && now < self.capacity_bytes {
            let headroom = avail - 4 * low;
            self.cache.set_capacity((now + headroom.min(self.capacity_bytes - now)).min(self.capacity_bytes));
        }
    }

    /// The result's `cache` block; `sources` are the workers' read latencies by source.
    pub fn result(&self, sources: &[&iolab_engine::ReadSources]) -> iolab_report::cache::CacheResult {
        let counters = self.cache.stats();
        let mut from_cache = iolab_stats::LatencyHistogram::new();
        let mut from_target = iolab_stats::LatencyHistogram::new();
        let mut hit_service = iolab_stats::LatencyHistogram::new();
        let mut hit_dispatch = iolab_stats::LatencyHistogram::new();
        for s in sources {
            from_cache.merge(&s.from_cache);
            from_target.merge(&s.from_target);
            hit_service.merge(&s.hit_service);
            hit_dispatch.merge(&s.hit_dispatch);
        }
        // Reads by source in the measurement window (the cache's own counters run from the start, ramp and
        // exit write-back included).
        let (window_hits, window_misses) = (from_cache.count(), from_target.count());
        let reads = window_hits + window_misses;
        let cfg = self.cache.config();
        iolab_report::cache::CacheResult {
            mode: cfg.mode.as_str().to_string(),
            policy: cfg.policy.as_str().to_string(),
            line_bytes: cfg.line_bytes,
            device: self.dev_name.clone(),
            configured_bytes: self.capacity_bytes,
            hit_ratio: if reads > 0 { window_hits as f64 / reads as f64 } else { 0.0 },
            window_reads_from_cache: window_hits,
            window_reads_from_target: window_misses,
            dirty_after_exit: self.cache.dirty_lines(),
            counters,
            latency: iolab_report::cache::CacheLatency {
                from_cache: from_cache.summary(),
                from_target: from_target.summary(),
                hit_service: hit_service.summary(),
                hit_dispatch: hit_dispatch.summary(),
            },
            shrinks: self.shrinks.clone(),
        }
    }
}

/// RAM an emulated device may fill with written data: a quarter of what is available now, shared by the run's
/// emulated devices.
fn store_cap(devices: usize) -> u64 {
    let avail = iolab_device::mem_available_bytes();
    let avail = if avail == 0 { 4 << 30 } else { avail };
    avail / 4 / devices.max(1) as u64
}

impl Layers {
    /// Builds the layers for `plan`; `regions[w][i]` is worker `w`'s region in its `i`-th target (from
    /// `Plan::bind`). Errors are usage errors.
    /// `verifying`: the run checks what it reads (`--verify`), so emulated devices keep data.
    pub fn build(
        plan: &Plan,
        cache: &CacheSpec,
        regions: &[Vec<iolab_plan::Region>],
        verifying: bool,
    ) -> Result<Layers> {
        let data = DataKept::of(plan, cache, verifying);
        let n = plan.targets.len();
        let virtual_clock = plan.clock == ClockKind::Virtual;
        let staging = if cache.enabled() { WRITE_BACK_STAGING as usize } else { 0 };
        let mut users = vec![0usize; n];
        let mut depth = vec![0usize; n];
        for w in &plan.workers {
            check_worker_kinds(plan, w)?;
            for &t in &w.targets {
                users[t] += 1;
                depth[t] = depth[t].max(w.qd as usize + staging);
            }
        }
        let sim_count = plan.targets.iter().filter(|t| matches!(t.spec.base(), TargetSpec::Sim(_))).count();
        let mut sims = Vec::with_capacity(n);
        let mut links = Vec::with_capacity(n);
        for (i, t) in plan.targets.iter().enumerate() {
            links.push(match &t.spec {
                TargetSpec::Link { link, .. } => Some(Arc::new(Mutex::new(LinkTiming::new(link)))),
                _ => None,
            });
            match t.spec.base() {
                TargetSpec::Sim(sim) => {
                    let clients = plan.workers.len();
                    let in_flight = depth[i] * users[i];
                    let model = iolab_sim::build(
                        sim,
                        plan.seed ^ (i as u64).wrapping_mul(0x9E37_79B9),
                        in_flight.max(1),
                    );
                    let device = Arc::new(SharedDevice::new(model, clients, depth[i].max(1)));
                    let store = (data == DataKept::Verify)
                        .then(|| Arc::new(SparseStore::new(sim.size_bytes(), store_cap(sim_count))));
                    sims.push(Some(SimTarget { device, store }));
                }
                _ => sims.push(None),
            }
        }
        let cache = if cache.enabled() {
            Some(build_cache(plan, cache, &iolab_plan::sizing::addressed_bytes(plan, regions), data.kept())?)
        } else {
            None
        };
        let timeline = virtual_clock.then(|| {
            let mut devices: Vec<_> = sims.iter().flatten().map(|st| st.device.clone()).collect();
            devices.extend(cache.as_ref().and_then(|c| c.dev.clone()));
            Timeline::new(plan.workers.len(), devices)
        });
        Ok(Layers { sims, links, cache, timeline, data })
    }

    /// The engine, links and cache for worker `w`; `targets` are the run's targets, open.
    pub(crate) fn worker(
        &self,
        w: &WorkerPlan,
        targets: &[crate::target::RunTarget],
        file_engine_sync: bool,
    ) -> Result<(EngineChoice, Vec<Option<SharedLink>>, Option<WorkerCache>)> {
        let first = w.targets[0];
        let engine = match self.sims[first].is_some() {
            true => {
                let mut targets = Vec::new();
                for &t in &w.targets {
                    let Some(st) = &self.sims[t] else {
                        return Err(Error::internal("worker mixes emulated and other targets (bug)"));
                    };
                    targets.push(st.clone());
                }
                let seat = self.timeline.as_ref().map(|t| t.seat(w.index as usize));
                EngineChoice::Sim { targets, client: w.index as usize, seat }
            }
            false => match &targets[first].opened.mem {
                Some(store) => EngineChoice::Mem(store.clone()),
                None if matches!(targets[first].opened.probe.kind, iolab_device::TargetKind::Null) => {
                    EngineChoice::Null
                }
                None if file_engine_sync => EngineChoice::Sync,
                None => EngineChoice::Uring,
            },
        };
        let links = w.targets.iter().map(|&t| self.links[t].clone()).collect();
        let cache = self.cache.as_ref().map(|rc| WorkerCache {
            cache: rc.cache.clone(),
            ids: w.targets.iter().map(|&t| t as u16).collect(),
            dev: rc.dev.as_ref().map(|d| (d.clone(), w.index as usize)),
            dev_size: rc.dev_size,
            seq_cutoff: rc.seq_cutoff,
            first_staging_buf: 2 * w.qd,
            real_dev: rc.dev_file.as_ref().map(|_| RealDevice {
                target: w.targets.len() as u16,
                size_bytes: rc.dev_size,
                first_buf: 2 * w.qd + WRITE_BACK_STAGING,
            }),
        });
        Ok((engine, links, cache))
    }

    /// Whether the run's workers take turns on one timeline (virtual time): they then run together, on one
    /// thread ([`iolab_engine::run_on_timeline`]).
    pub fn on_timeline(&self) -> bool {
        self.timeline.is_some()
    }

    /// The real cache device's file, to append to every worker's files after its own targets (so its engine
    /// target number is the number of the worker's targets, as [`RealDevice::target`] says).
    pub fn cache_dev_file(&self) -> Option<Arc<std::fs::File>> {
        self.cache.as_ref().and_then(|rc| rc.dev_file.clone())
    }
}

/// A worker's targets must all be served by one engine: all files and devices, or all of one virtual kind.
fn check_worker_kinds(plan: &Plan, w: &WorkerPlan) -> Result<()> {
    let kind = |t: &TargetSpec| match t.base() {
        TargetSpec::Path { .. } => 0,
        TargetSpec::Mem { .. } => 1,
        TargetSpec::Null { .. } => 2,
        TargetSpec::Sim(_) => 3,
        _ => 4,
    };
    let first = kind(&plan.targets[w.targets[0]].spec);
    if let Some(&other) = w.targets.iter().find(|&&t| kind(&plan.targets[t].spec) != first) {
        return Err(Error::usage(format!(
            "worker '{}' mixes '{}' and '{}', which need different engines; give them to separate workers",
            w.name, plan.targets[w.targets[0]].name, plan.targets[other].name
        )));
    }
    Ok(())
}

/// What a RAM cache hit costs on virtual time: about a lookup, a 4 KiB copy and a kernel filter driver's path
/// (docs/CACHE.md).
const RAM_HIT_VIRTUAL_NS: u64 = 1_000;

/// How a real cache device (`--cache-dev PATH`) is opened: like a target that is written, with the same
/// safety rules (a block device needs `--allow-write-device`, and `--destroy-data` when it is mounted, in use
/// or carries a signature). A missing path becomes a scratch file of the cache's size (`bytes`), removed at
/// exit and on Ctrl-C; an existing file is used at its own size, except iolab's own scratch file from an
/// earlier sweep point, which grows to the size asked. Only real targets can have one.
fn cache_dev_request(plan: &Plan, path: &str, bytes: u64) -> Result<OpenRequest> {
    if let Some(t) = plan.targets.iter().find(|t| t.spec.is_virtual()) {
        return Err(Error::usage(format!(
            "invalid value '{path}' for '--cache-dev': a file or device as the cache device needs real targets, but '{}' is emulated; use mem:SIZE or an emulated device (sim:ssd)",
            t.name
        )));
    }
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.into());
    // A cache device that is also a target was refused by the write gate (prepare's `claim_paths`).
    let meta = std::fs::metadata(path);
    if meta.is_err() && absolute.starts_with("/dev") {
        return Err(Error::usage(format!(
            "invalid value '{path}' for '--cache-dev': no such device; expected an existing block device, a file (created as a scratch file when missing), mem:SIZE or an emulated device (sim:ssd)"
        )));
    }
    let is_device =
        meta.as_ref().is_ok_and(|m| std::os::unix::fs::FileTypeExt::is_block_device(&m.file_type()));
    let missing = meta.is_err();
    let ours = iolab_device::scratch::is_scratch(&absolute);
    let mut req = OpenRequest::new(TargetSpec::Path { path: path.to_string() });
    req.direct = plan.direct;
    req.writes = true;
    req.consent = plan.consent();
    req.scratch = missing;
    req.create_size = if !is_device && (missing || ours) { Some(bytes) } else { None };
    Ok(req)
}

/// A target error on the cache device, worded for `--cache-dev`.
fn cache_dev_error(path: &str, e: iolab_device::TargetError) -> Error {
    Error::usage(format!("invalid value '{path}' for '--cache-dev': {e}"))
}

/// Checks a real cache device before anything is created (probe only, no side effects): called by the run
/// after binding the plan. mem: and sim: devices need no check.
pub fn check_cache_dev(plan: &Plan, spec: &CacheSpec, regions: &[Vec<iolab_plan::Region>]) -> Result<()> {
    let Some(TargetSpec::Path { path }) = &spec.dev else { return Ok(()) };
    let line = spec.line_bytes.unwrap_or(DEFAULT_CACHE_LINE);
    let bytes = iolab_plan::sizing::cache_asked_bytes(
        spec,
        &iolab_plan::sizing::addressed_bytes(plan, regions),
        line,
    );
    let bytes = spec.max_mem_bytes.map_or(bytes, |cap| bytes.min(cap));
    let req = cache_dev_request(plan, path, (bytes - bytes % line).max(line))?;
    let probe = iolab_device::probe(&req).map_err(|e| cache_dev_error(path, e))?;
    if !matches!(probe.kind, TargetKind::File | TargetKind::BlockDevice) {
        return Err(Error::usage(format!(
            "invalid value '{path}' for '--cache-dev': expected a file or a block device"
        )));
    }
    Ok(())
}

/// Where the cache's data lives and what times its hits.
struct CacheDevice {
    /// The emulated device timing hits, if any.
    dev: Option<Arc<SharedDevice>>,
    /// Its size.
    dev_size: u64,
    /// Its name ("mem" for RAM).
    dev_name: String,
    /// A real cache device, opened.
    dev_file: Option<Arc<std::fs::File>>,
    /// Its seal, when it is a file of iolab's.
    dev_seal: Option<iolab_device::ownership::Seal>,
}

/// Resolves `--cache-dev` (opening a real one); lowers `bytes` to what the device holds.
fn cache_device(plan: &Plan, spec: &CacheSpec, bytes: &mut u64, line: u64) -> Result<CacheDevice> {
    let virtual_clock = plan.clock == ClockKind::Virtual;
    // Each worker may have its queue depth and a write-back's staging buffers at the cache device.
    let per_client = plan.workers.iter().map(|w| (w.qd + WRITE_BACK_STAGING) as usize).max().unwrap_or(1);
    let mut dev_file = None;
    let mut dev_seal = None;
    let (dev, dev_size, dev_name) = match &spec.dev {
        // On virtual time the host's own work takes no time, so a RAM hit is given a fixed cost; otherwise a
        // fully cached run would never move the clock.
        None | Some(TargetSpec::Mem { .. }) if virtual_clock => {
            let ram = iolab_spec::SimSpec::Fixed {
                latency_ns: RAM_HIT_VIRTUAL_NS,
                servers: 64,
                size_bytes: 1 << 40,
            };
            let model = iolab_sim::build(&ram, 0, per_client * plan.workers.len());
            if let Some(TargetSpec::Mem { size_bytes }) = &spec.dev {
                *bytes = (*bytes).min(*size_bytes);
            }
            (Some(Arc::new(SharedDevice::new(model, plan.workers.len(), per_client))), 1 << 40, "mem".to_string())
        }
        None => (None, u64::MAX, "mem".to_string()),
        Some(TargetSpec::Mem { size_bytes }) => {
            *bytes = (*bytes).min(*size_bytes);
            (None, *size_bytes, "mem".to_string())
        }
        Some(t @ TargetSpec::Sim(sim)) => {
            *bytes = (*bytes).min(sim.size_bytes());
            let model = iolab_sim::build(sim, plan.seed ^ 0xCAC4E, per_client * plan.workers.len());
            (
                Some(Arc::new(SharedDevice::new(model, plan.workers.len(), per_client))),
                sim.size_bytes(),
                t.display_name(),
            )
        }
        Some(TargetSpec::Path { path }) => {
            let want = spec.max_mem_bytes.map_or(*bytes, |cap| (*bytes).min(cap));
            let req = cache_dev_request(plan, path, (want - want % line).max(line))?;
            let opened = iolab_device::open(&req).map_err(|e| cache_dev_error(path, e))?;
            if opened.probe.logical_block_size as u64 > line {
                return Err(Error::usage(format!(
                    "invalid value '{path}' for '--cache-dev': its logical block size ({} bytes) is larger than a cache line ({line} bytes); raise --cache-line",
                    opened.probe.logical_block_size
                )));
            }
            let size = opened.probe.size_bytes / line * line;
            if size == 0 {
                return Err(Error::usage(format!(
                    "invalid value '{path}' for '--cache-dev': smaller than one {line}-byte cache line"
                )));
            }
            *bytes = (*bytes).min(size);
            dev_file = opened.file.map(Arc::new);
            dev_seal = opened.seal;
            (None, size, path.clone())
        }
        Some(other) => {
            return Err(Error::usage(format!(
                "invalid value '{}' for '--cache-dev': expected mem:SIZE, an emulated device (sim:ssd) or a file or block device",
                other.display_name()
            )))
        }
    };
    Ok(CacheDevice { dev, dev_size, dev_name, dev_file, dev_seal })
}

fn build_cache(plan: &Plan, spec: &CacheSpec, addressed: &[u64], keep_data: bool) -> Result<RunCache> {
    let line = spec.line_bytes.unwrap_or(DEFAULT_CACHE_LINE);
    let mut bytes = iolab_plan::sizing::cache_asked_bytes(spec, addressed, line);
    let CacheDevice { dev, dev_size, dev_name, dev_file, dev_seal } =
        cache_device(plan, spec, &mut bytes, line)?;
    if let Some(cap) = spec.max_mem_bytes {
        bytes = bytes.min(cap);
    }
    bytes -= bytes % line;
    if bytes == 0 {
        return Err(Error::usage(format!(
            "--cache {}: less than one {}-byte line",
            match spec.size {
                Some(CacheSize::Percent(p)) => format!("{p}%"),
                Some(CacheSize::Bytes(b)) => iolab_spec::units::format_size(b),
                None => "0".into(),
            },
            line
        )));
    }
    let headroom = iolab_device::memory_headroom();
    let ram = if keep_data { bytes } else { bytes / line * iolab_plan::sizing::METADATA_BYTES_PER_LINE };
    if !headroom.fits(ram) {
        return Err(Error::usage(format!(
            "the cache needs {} of RAM but only {} is available ({}); lower --cache or set --cache-max-mem",
            iolab_report::format_bytes(ram),
            iolab_report::format_bytes(headroom.bytes),
            headroom.limit.describe()
        )));
    }
    let config = CacheConfig {
        capacity_bytes: bytes,
        line_bytes: line as u32,
        mode: spec.mode.unwrap_or_default(),
        policy: spec.policy.unwrap_or_default(),
        admit_after: spec.admit_after.unwrap_or(1),
        dirty_max_pct: spec.dirty_max_pct.unwrap_or(50.0),
        targets: plan.targets.len() as u16,
        keep_data,
    };
    let cache = Cache::new(config).map_err(|e| Error::usage(format!("--cache: {e}")))?;
    Ok(RunCache {
        cache: Arc::new(cache),
        dev,
        dev_size,
        dev_name,
        dev_file,
        dev_seal,
        seq_cutoff: spec.seq_cutoff_bytes.unwrap_or(0),
        capacity_bytes: bytes,
        shrink: spec.shrink.unwrap_or(false),
        shrinks: Vec::new(),
    })
}
