//! Several hosts, one run: what [`crate::execute`] does when the caller gives it a [`RunSync`] (the binary's
//! MPI glue, `iolab-multihost`). This crate never sees MPI: a `RunSync` is one collective, `allgather`, that
//! every rank calls at the same points in the same order, and that never returns when a rank is missing (the
//! implementation ends the whole run with a message naming it).
//!
//! The points: the job (rank 0's, with `{rank}`, `{size}` and `{host}` put into target paths and open-loop
//! rates split over ranks), agreement after `prepare` and after opening (any rank's error fails every rank,
//! and the targets a rank created are removed again), the common start, and the results: every rank sends
//! its workers' outputs ([`crate::wire`]) and every rank assembles the same merged result, as if all workers
//! had been local (numbered across ranks), with a row per host.

use crate::assemble::{self, Finished};
use crate::collect::{GroupInterval, IntervalSeries};
use crate::wire::{WireInterval, WireOutput};
use crate::{Error, Result};
use iolab_device::OpenedTarget;
use iolab_engine::WorkerOutput;
use iolab_plan::WorkerPlan;
use iolab_report::{Cpu, HostResult, OpSet, RanksResult, RunResult};
use iolab_spec::JobSpec;
use iolab_stats::OpStats;
use iolab_verify::VerifyResult;
use serde::{Deserialize, Serialize};

/// The collectives of a run over several hosts (MPI ranks). Every rank calls [`RunSync::allgather`] at
/// the same points of a run, in the same order.
pub trait RunSync: Send + Sync {
    /// This rank, 0 to `size - 1`.
    fn rank(&self) -> u32;
    /// The number of ranks.
    fn size(&self) -> u32;
    /// The name of this rank's host.
    fn host(&self) -> String;
    /// Every rank's `mine`, in rank order. `stage` names the point in messages. A rank that does not arrive
    /// within a bounded wait ends the run on every rank (the implementation names it); this never returns
    /// an error.
    fn allgather(&self, stage: &str, mine: Vec<u8>) -> Vec<Vec<u8>>;
    /// Open-loop rates are per rank (`--rate-per-rank`) rather than totals split over the ranks.
    fn rate_per_rank(&self) -> bool {
        false
    }
    /// `--stonewall`: every rank ends its measurement (complete) when the first rank's workers are done.
    fn stonewall(&self) -> bool {
        false
    }
    /// Tells every other rank that this rank ended the measurement (with `--stonewall`, its workers are
    /// done; rank 0's interval hook ended it): once per run, before the agreement that all are done.
    fn announce_done(&self) {}
    /// Whether some other rank has announced the end of the measurement (without waiting).
    fn other_done(&self) -> bool {
        false
    }
    /// Takes in `messages` announcements of other ranks (after the agreement that all are done, so every
    /// one was sent).
    fn drain_done(&self, messages: u32) {
        let _ = messages;
    }
}

/// The job every rank runs: rank 0's (so a job file or flags read on rank 0 decide; consent excepted, which
/// is each rank's own command line's), its target paths with
/// `{rank}`, `{size}` and `{host}` replaced by this rank's values, and its rates split over the ranks unless
/// they are per rank.
pub(crate) fn share_job(sync: &dyn RunSync, mut job: JobSpec) -> Result<JobSpec> {
    // Consent is never serialised: each rank keeps what its own command line typed.
    let consent = job.consent;
    let mine = if sync.rank() == 0 {
        job.seed.get_or_insert_with(iolab_plan::fresh_seed);
        serde_json::to_vec(&job).map_err(|e| Error::internal(e).context("encoding the job for the ranks"))?
    } else {
        Vec::new()
    };
    let all = sync.allgather("job", mine);
    let job: JobSpec =
        serde_json::from_slice(&all[0]).map_err(|e| Error::internal(e).context("decoding rank 0's job"))?;
    per_rank_trace(job.trace.as_deref(), sync.size())?;
    let host = sync.host();
    let place = iolab_spec::RankPlace { rank: sync.rank(), size: sync.size(), host: &host };
    let divisor = if sync.rate_per_rank() { 1.0 } else { sync.size() as f64 };
    let mut job = job.for_rank(&place, divisor);
    job.seed = job.seed.map(|s| rank_seed(s, sync.rank()));
    job.consent = consent;
    Ok(job)
}

/// `--trace` over several ranks: each rank records its own ops into its own file, so the path must hold
/// `{rank}`; without it the ranks would write one file over each other, and every rank refuses alike before
/// anything is written.
fn per_rank_trace(path: Option<&str>, size: u32) -> Result<()> {
    match path {
        Some(p) if size > 1 && !p.contains("{rank}") => Err(Error::Ranks(format!(
            "--trace '{p}': {size} ranks would each write this one file; add {{rank}} to the path (for \
             example '{p}.{{rank}}') so that every rank writes its own"
        ))),
        _ => Ok(()),
    }
}

/// `iolab replay` is one trace from one host: under several ranks every rank refuses alike, before anything
/// is opened (replaying one trace on every host would multiply its load, and its lag would be one rank's).
pub(crate) fn one_host_replay(sync: &dyn RunSync, trace: &str) -> Result<()> {
    match sync.size() {
        0 | 1 => Ok(()),
        size => Err(Error::Ranks(format!(
            "replaying '{trace}' under {size} ranks: a replay is one trace from one host; run it without mpirun \
             (or with -np 1)"
        ))),
    }
}

/// The seed rank `rank` runs with when the run's seed is `seed`: rank 0 the seed itself, every other rank
/// its own stream (so ranks on one shared target do not repeat each other's offsets), reproducible from
/// the printed seed.
pub fn rank_seed(seed: u64, rank: u32) -> u64 {
    if rank == 0 {
        return seed;
    }
    let mut s = seed ^ (rank as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    iolab_rng::splitmix64(&mut s)
}

/// Every rank's outcome of one stage: this rank's `local` when every rank succeeded; otherwise an error on
/// every rank naming the rank(s) that failed, their host and their error.
pub(crate) fn agree<T>(sync: &dyn RunSync, stage: &str, local: Result<T>) -> Result<T> {
    let mine = match &local {
        Ok(_) => Vec::new(),
        Err(e) => e.to_string().into_bytes(),
    };
    let all = sync.allgather(stage, mine);
    let hosts = hosts(sync);
    let failed: Vec<String> = all
        .iter()
        .enumerate()
        .filter(|(_, m)| !m.is_empty())
        .map(|(r, m)| format!("rank {r} (host {}): {}", hosts[r], String::from_utf8_lossy(m)))
        .collect();
    match local {
        Ok(v) if failed.is_empty() => Ok(v),
        _ => Err(Error::Ranks(failed.join("; "))),
    }
}

/// The host name of every rank, in rank order (one collective).
fn hosts(sync: &dyn RunSync) -> Vec<String> {
    sync.allgather("hosts", sync.host().into_bytes())
        .into_iter()
        .map(|h| String::from_utf8_lossy(&h).into_owned())
        .collect()
}

/// Opening agreed: this rank's targets when every rank opened its own; otherwise the targets this rank
/// created are removed again (nothing is left behind on any host) and every rank fails.
pub(crate) fn agree_opened(
    sync: &dyn RunSync,
    opened: Result<Vec<OpenedTarget>>,
    paths: &[Option<String>],
) -> Result<Vec<OpenedTarget>> {
    let created: Vec<String> = match &opened {
        Ok(targets) => targets
            .iter()
            .zip(paths)
            .filter(|(t, _)| t.created && !t.scratch)
            .filter_map(|(_, p)| p.clone())
            .collect(),
        Err(_) => Vec::new(),
    };
    let agreed = agree(sync, "open", opened);
    if agreed.is_err() {
        for p in created {
            let _ = std::fs::remove_file(p);
        }
    }
    agreed
}

/// The common start: every rank says when it is ready (Unix seconds); all release their workers at the
/// latest of those plus a margin, by their own clocks. Returns when this rank released (Unix seconds).
pub(crate) fn start_together(sync: &dyn RunSync) -> f64 {
    const MARGIN_S: f64 = 0.05;
    let ready = unix_now().to_be_bytes().to_vec();
    let all = sync.allgather("start", ready);
    let latest = all.iter().map(|b| f64_of(b)).fold(0.0, f64::max);
    let at = latest + MARGIN_S;
    // Sleep, not spin: ranks sharing cores would starve each other (a spinning rank delays the next).
    let left = at - unix_now();
    if left > 0.0 {
        std::thread::sleep(std::time::Duration::from_secs_f64(left));
    }
    unix_now()
}

/// The workers are done: with `--stonewall`, the other ranks are told; then every rank's outcome, as
/// [`agree`]. `announced` says whether this rank already told the others (rank 0's interval hook ended the
/// measurement). Every announcement is then taken in, so none is left over for the next run of a sweep.
pub(crate) fn done<T>(sync: Option<&dyn RunSync>, outputs: Result<T>, announced: bool) -> Result<T> {
    let Some(s) = sync else { return outputs };
    let mut announced = announced;
    if s.stonewall() && !announced {
        s.announce_done();
        announced = true;
    }
    let agreed = agree(s, "done", outputs);
    let all = s.allgather("announced", vec![u8::from(announced)]);
    let others = all.iter().enumerate().filter(|(r, a)| *r != s.rank() as usize && a.first() == Some(&1));
    s.drain_done(others.count() as u32);
    agreed
}

/// What one rank sends with its results.
#[derive(Serialize, Deserialize)]
pub(crate) struct RankReport {
    /// The rank.
    pub rank: u32,
    /// Its host.
    pub host: String,
    /// When it released its workers, Unix seconds.
    pub started_unix_s: f64,
    /// When its workers had all finished, Unix seconds.
    pub done_unix_s: f64,
    /// Its process's CPU over the measurement.
    pub cpu: iolab_report::Cpu,
    /// Its warnings from preparing.
    pub warnings: Vec<iolab_stats::Warning>,
    /// Its workers' outputs ([`crate::wire`]).
    pub outputs: Vec<crate::wire::WireOutput>,
    /// Its intervals (its workers' merged), for the run's time series.
    pub intervals: Vec<WireInterval>,
    /// Its groups' intervals, for the groups' largest per-interval mean response times.
    pub group_intervals: Vec<GroupInterval>,
    /// Its host's kernel and CPU model.
    pub kernel: String,
    pub cpu_model: String,
}

/// Every rank's report, in rank order.
pub(crate) fn gather_reports(sync: &dyn RunSync, mine: &RankReport) -> Result<Vec<RankReport>> {
    let bytes =
        serde_json::to_vec(mine).map_err(|e| Error::internal(e).context("encoding this rank's results"))?;
    sync.allgather("results", bytes)
        .iter()
        .enumerate()
        .map(|(r, b)| {
            serde_json::from_slice(b)
                .map_err(|e| Error::internal(e).context(format_args!("decoding rank {r}'s results")))
        })
        .collect()
}

/// The merged result of a run over several hosts, the same on every rank: every rank's workers (numbered
/// across ranks, rank by rank) assembled as if they had been local, with a row per host and the ranks'
/// start skew and finishing times. `times` is when this rank released its workers and when they were done.
pub(crate) fn result_over_ranks(
    sync: &dyn RunSync,
    mut run: Finished,
    times: (f64, f64),
) -> Result<RunResult> {
    let local_ops: u64 = run.outputs.iter().map(|o| o.read.ops + o.write.ops).sum();
    let mine = RankReport {
        rank: sync.rank(),
        host: sync.host(),
        started_unix_s: times.0,
        done_unix_s: times.1,
        cpu: assemble::cpu(run.collected.cpu_start, run.cpu_end, local_ops),
        warnings: run.warnings.clone(),
        outputs: run.outputs.iter().map(WireOutput::of).collect(),
        intervals: run.collected.series.take_kept(),
        group_intervals: run.collected.group_kept.take().unwrap_or_default(),
        kernel: crate::env::kernel(),
        cpu_model: crate::env::cpu_model(),
    };
    let mut reports = gather_reports(sync, &mine)?;
    run.collected.series = merged_series(&mut reports, run.plan.interval_ns, run.plan.loadgen.is_some())?;
    let groups = run.collected.group_interval_max.len();
    run.collected.group_interval_max = merged_group_maxima(&mut reports, groups);
    let n = run.plan.workers.len() as u32;
    let mut outputs = Vec::new();
    let mut per_rank = Vec::new();
    for r in &mut reports {
        let first = outputs.len();
        for o in std::mem::take(&mut r.outputs) {
            let index = r.rank * n + o.index;
            outputs.push(o.output(index)?);
        }
        per_rank.push(first..outputs.len());
    }
    let measured_s = outputs.iter().map(|o| o.window_ns).max().unwrap_or(0) as f64 / 1e9;
    let start = reports.iter().map(|r| r.started_unix_s).fold(f64::INFINITY, f64::min);
    let hosts: Vec<HostResult> = reports
        .iter()
        .zip(&per_rank)
        .map(|(r, range)| host_row(r, &outputs[range.clone()], measured_s, start))
        .collect();
    run.plan.workers = (0..sync.size())
        .flat_map(|r| run.plan.workers.iter().map(move |w| (r, w)))
        .map(|(r, w)| WorkerPlan { index: r * n + w.index, name: format!("{}@{r}", w.name), ..w.clone() })
        .collect();
    run.outputs = outputs;
    let mut result = assemble::result(run)?;
    result.cpu = cpu_over_hosts(&hosts, result.total.all.ops);
    let done = reports.iter().map(|r| r.done_unix_s - start);
    result.ranks = Some(RanksResult {
        size: sync.size(),
        start_skew_s: hosts.iter().map(|h| h.start_offset_s).fold(0.0, f64::max),
        first_done_s: done.clone().fold(f64::INFINITY, f64::min),
        last_done_s: done.fold(0.0, f64::max),
        stonewall: sync.stonewall(),
    });
    result.hosts = hosts;
    merge_verify(sync, &mut result)?;
    Ok(result)
}

/// The run's time series over every rank: interval i of every rank merged (ops, bytes and transactions
/// summed, the coarse response-time histograms bucket by bucket), as the workers' intervals merge on one
/// host. The ranks released their workers at one agreed instant, so their intervals are aligned. One
/// interval is decoded at a time.
fn merged_series(reports: &mut [RankReport], interval_ns: u64, txn: bool) -> Result<IntervalSeries> {
    let mut all: Vec<WireInterval> =
        reports.iter_mut().flat_map(|r| std::mem::take(&mut r.intervals)).collect();
    all.sort_by_key(|w| w.index);
    let mut series = IntervalSeries::new(interval_ns, txn, false);
    let decoded = all.into_iter().map(WireInterval::stats);
    merge_runs(decoded, |s| (0, s.index), |a, b| a.merge(b), |s| series.finished(s))?;
    Ok(series)
}

/// The groups' largest per-interval mean read and write response times over every rank: each group's
/// interval i summed over the ranks (ops and summed response times), then its means.
fn merged_group_maxima(reports: &mut [RankReport], groups: usize) -> Vec<(Option<f64>, Option<f64>)> {
    let mut all: Vec<GroupInterval> =
        reports.iter_mut().flat_map(|r| std::mem::take(&mut r.group_intervals)).collect();
    all.sort_by_key(|g| (g.group, g.index));
    let mut max = vec![(None, None); groups];
    let fold = |g: GroupInterval| {
        if let Some(m) = max.get_mut(g.group as usize) {
            g.fold(m);
        }
    };
    let _ = merge_runs(all.into_iter().map(Ok), |g| (g.group as u64, g.index), GroupInterval::add, fold);
    max
}

/// Merges the consecutive items of `items` (sorted by `key`) that have one key with `add`, and hands each
/// merged item to `emit`, in order; the first error stops it.
fn merge_runs<T>(
    items: impl Iterator<Item = Result<T>>,
    key: impl Fn(&T) -> (u64, u64),
    add: impl Fn(&mut T, &T),
    mut emit: impl FnMut(T),
) -> Result<()> {
    let mut current: Option<T> = None;
    for item in items {
        let item = item?;
        match current.as_mut() {
            Some(c) if key(c) == key(&item) => add(c, &item),
            _ => {
                if let Some(done) = current.replace(item) {
                    emit(done);
                }
            }
        }
    }
    if let Some(last) = current {
        emit(last);
    }
    Ok(())
}

/// Verification is each rank's own (its verifier knows its own writes): every rank's counts and first
/// mismatches go into the result's `verify`, so a mismatch on any rank shows (and sets the exit code).
fn merge_verify(sync: &dyn RunSync, result: &mut RunResult) -> Result<()> {
    let mine = serde_json::to_vec(&result.verify)
        .map_err(|e| Error::internal(e).context("encoding verification"))?;
    let all = sync.allgather("verify", mine);
    let mut merged: Option<VerifyResult> = None;
    for (r, bytes) in all.iter().enumerate() {
        let v: Option<VerifyResult> = serde_json::from_slice(bytes)
            .map_err(|e| Error::internal(e).context(format_args!("decoding rank {r}'s verification")))?;
        merged = match (merged, v) {
            (Some(mut m), Some(v)) => {
                add_verify(&mut m, v);
                Some(m)
            }
            (m, v) => m.or(v),
        };
    }
    result.verify = merged;
    Ok(())
}

/// Adds one rank's verification counts to another's.
fn add_verify(m: &mut VerifyResult, v: VerifyResult) {
    m.blocks_checked += v.blocks_checked;
    m.blocks_skipped_in_flight += v.blocks_skipped_in_flight;
    m.blocks_never_written += v.blocks_never_written;
    m.readback_blocks += v.readback_blocks;
    m.readback_unread_blocks += v.readback_unread_blocks;
    m.mismatches += v.mismatches;
    m.mismatched_blocks += v.mismatched_blocks;
    m.by_class.corrupt_payload += v.by_class.corrupt_payload;
    m.by_class.torn_write += v.by_class.torn_write;
    m.by_class.lost_write += v.by_class.lost_write;
    m.by_class.misdirected_write += v.by_class.misdirected_write;
    let room = iolab_verify::FIRST_MISMATCHES.saturating_sub(m.first_mismatches.len());
    m.first_mismatches.extend(v.first_mismatches.into_iter().take(room));
    m.stopped |= v.stopped;
    match (&mut m.durable, v.durable) {
        (Some(a), Some(b)) => {
            a.records += b.records;
            a.not_logged += b.not_logged;
            a.blocks_raised += b.blocks_raised;
            a.torn_tail_bytes += b.torn_tail_bytes;
            a.mismatched_blocks += b.mismatched_blocks;
        }
        (a @ None, b) => *a = b,
        (Some(_), None) => {}
    }
}

/// One rank's row: its own totals over the run's measured time.
fn host_row(r: &RankReport, outputs: &[WorkerOutput], measured_s: f64, start: f64) -> HostResult {
    let (mut read, mut write) = (OpStats::new(), OpStats::new());
    for o in outputs {
        read.merge(&o.read);
        write.merge(&o.write);
    }
    HostResult {
        rank: r.rank,
        host: r.host.clone(),
        workers: outputs.len() as u32,
        total: OpSet::from_stats(&read, &write, measured_s),
        cpu: r.cpu.clone(),
        start_offset_s: r.started_unix_s - start,
        done_s: r.done_unix_s - start,
        warnings: r.warnings.clone(),
        kernel: r.kernel.clone(),
        cpu_model: r.cpu_model.clone(),
    }
}

/// The run's CPU: every host's process summed (cores used add up across hosts), per I/O of all of them.
fn cpu_over_hosts(hosts: &[HostResult], ops: u64) -> Cpu {
    let user_s: f64 = hosts.iter().map(|h| h.cpu.user_s).sum();
    let sys_s: f64 = hosts.iter().map(|h| h.cpu.sys_s).sum();
    Cpu {
        user_s,
        sys_s,
        cpu_ns_per_io: iolab_stats::per_op(user_s + sys_s, ops).map(|s| s * 1e9),
        cores_used: hosts.iter().map(|h| h.cpu.cores_used).sum(),
        peak_rss_bytes: hosts.iter().filter_map(|h| h.cpu.peak_rss_bytes).max(),
    }
}

/// Now, Unix seconds.
pub(crate) fn unix_now() -> f64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64())
}

/// An `f64` sent as 8 big-endian bytes (0 when it is not).
fn f64_of(b: &[u8]) -> f64 {
    b.try_into().map(f64::from_be_bytes).unwrap_or(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// How ranks shared a job before it was typed (every string field named `path`, `journal` or `trace`
    /// and every number named `rate` or `rate_bytes`, wherever it sat): the oracle `for_rank` must agree with.
    fn json_rewrite(v: &mut serde_json::Value, put: &dyn Fn(&str) -> String, divisor: f64) {
        match v {
            serde_json::Value::Object(map) => {
                for (k, x) in map.iter_mut() {
                    match (k.as_str(), &*x) {
                        ("path" | "journal" | "trace", serde_json::Value::String(s)) => *x = put(s).into(),
                        ("rate" | "rate_bytes", serde_json::Value::Number(n)) => {
                            if let Some(f) = n.as_f64() {
                                *x = serde_json::json!(f / divisor);
                            }
                        }
                        _ => json_rewrite(x, put, divisor),
                    }
                }
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(|x| json_rewrite(x, put, divisor)),
            _ => {}
        }
    }

    #[test]
    fn placeholders_go_into_paths_and_rates_are_split_as_by_name() {
        let jobs = [
            "trace = \"/t/{rank}.iolabtrace\"\njournal = \"/j/{host}\"\ncache = \"64M\"\ncache_dev = \"/c/{size}\"\n\
             rate = \"1000\"\ntarget = \"/mnt/f.{rank}.{size}.{host}\"\n[targets]\ndb = \"/d/{rank}\"\n\
             [worker.a]\ntarget = \"link:fc8g:/l/{rank}\"\nrate = \"10MB/s\"\n[[spec]]\nbs = \"4k\"\n",
            "name = \"{rank}\"\n[[phase]]\nname = \"p\"\nduration = \"1s\"\n[phase.worker.w]\ntarget = \"/p/{rank}\"\nrate = \"400\"\n",
            include_str!("../../../profiles/seed-condusiv-loadgen.toml"),
        ];
        let place = iolab_spec::RankPlace { rank: 1, size: 4, host: "n2" };
        for text in jobs {
            let job = JobSpec::from_toml(text, "j").unwrap();
            let mut oracle = serde_json::to_value(&job).unwrap();
            json_rewrite(&mut oracle, &|s: &str| place.put(s), 4.0);
            let typed = serde_json::to_value(job.clone().for_rank(&place, 4.0)).unwrap();
            assert_eq!(typed, oracle, "{text}");
            if text.contains("{rank}") {
                assert_ne!(typed, serde_json::to_value(&job).unwrap(), "the job changed: {text}");
            }
        }
    }

    #[test]
    fn group_maxima_are_the_means_of_the_intervals_summed_over_ranks() {
        let gi = |index: u64, read: (u64, u64)| GroupInterval { group: 0, index, ops: [read, (0, 0)] };
        // Interval 0: rank 0 one read of 100 ns, rank 1 three of 300 ns each (mean 250, not 200 averaged);
        // interval 1: a mean of 200.
        let all = vec![gi(0, (1, 100)), gi(0, (3, 900)), gi(1, (2, 400))];
        let mut max = (None, None);
        merge_runs(all.into_iter().map(Ok), |g| (0, g.index), GroupInterval::add, |g| g.fold(&mut max))
            .unwrap();
        assert_eq!(max, (Some(250.0), None));
    }
}
