//! Users and transactions, resolved: from `[users]` and `[[transaction]]` ([`iolab_spec::loadgen`]) to one
//! [`WorkerTxnPlan`] per worker thread, and the pure generator of transactions and their I/Os ([`TxnGen`]).
//!
//! Resolution: the users are split as evenly as possible over the workers; every worker gets every target any
//! transaction touches (in one order, so a step's target index is the same in every worker), and as many
//! slots (`qd`) as its users may have transactions in progress (`users x outstanding`): each transaction in
//! progress holds one slot, for one I/O at a time, because its steps run in order. In rate mode the worker's
//! arrival rate is `users x per-user rate` (LoadGen's dispatch interval is day length / total tasks, so the
//! merged stream of many users is what matters, not which user a task belongs to).
//!
//! Checks here: a rate is given in rate mode, no more workers than users, at most [`iolab_spec::MAX_QD`] slots
//! per worker, step targets resolve and are of one kind (files/devices, or in-process), and no `ios`/`bytes`
//! limits (a transaction run is timed).

use crate::dist::SlotSampler;
use crate::gen::{GenOp, OpKind};
use crate::{AccessPlan, Plan, PlanError, Region, WorkerPlan, DEFAULT_BS};
use iolab_rng::Rng;
use iolab_spec::loadgen::{LoadgenMode, LoadgenSpec, StepSpec};
use iolab_spec::{Arrival, BlockSizeWeight, Dist, JobSpec, Layer, NamedTarget, TargetSpec};
use serde::Serialize;

/// Capacity of each worker's ring of pending arrivals (rate mode): 65,536 entries of 16 bytes = 1 MiB.
/// Arrivals beyond it stay in the schedule (they are not lost and nothing is allocated) and are counted from
/// the schedule's mean rate until there is room.
pub const PENDING_CAP: usize = 65_536;

/// LoadGen's overload guard: it stops with `SwordfishExceptionTooMuchLoad` when unfinished tasks (queued +
/// executing) exceed 1.5 x users (docs/SOURCES.md §3). iolab warns and keeps running.
pub const OVERLOAD_FACTOR: f64 = 1.5;

/// The job's users and transactions, resolved (for the report and `--dry-run`).
#[derive(Clone, Debug, Serialize)]
pub struct LoadgenPlan {
    /// Users in all.
    pub users: u32,
    /// Rate or stress.
    pub mode: LoadgenMode,
    /// Transactions per user per hour (rate mode).
    pub per_user_per_hour: Option<f64>,
    /// The rate as typed (`500/8h`).
    pub rate_text: Option<String>,
    /// Transactions a user may have in progress at once.
    pub outstanding: u32,
    /// Inter-arrival law in rate mode.
    pub arrival: Arrival,
    /// Offered transactions per second, all users (rate mode).
    pub offered_per_s: Option<f64>,
    /// The transaction types.
    pub transactions: Vec<TxnPlan>,
}

/// One transaction type.
#[derive(Clone, Debug, Serialize)]
pub struct TxnPlan {
    /// Its name.
    pub name: String,
    /// Relative share.
    pub weight: u32,
    /// Its I/Os, in order.
    pub steps: Vec<StepPlan>,
}

/// One I/O of a transaction.
#[derive(Clone, Debug, Serialize)]
pub struct StepPlan {
    /// Index into the worker's targets (the same in every worker of the job).
    pub target: u16,
    /// Write (true) or read.
    pub write: bool,
    /// Random (true) or sequential.
    pub random: bool,
    /// Bytes.
    pub len: u32,
    /// Spread of random offsets.
    pub dist: Dist,
}

/// One worker's share of the users.
#[derive(Clone, Debug, Serialize)]
pub struct WorkerTxnPlan {
    /// Users of this worker.
    pub users: u32,
    /// Rate or stress.
    pub mode: LoadgenMode,
    /// Transactions a user may have in progress at once.
    pub outstanding: u32,
    /// Arrivals per second of this worker (rate mode): users x per-user rate.
    pub rate_per_s: Option<f64>,
    /// Inter-arrival law.
    pub arrival: Arrival,
    /// The transaction types.
    pub transactions: Vec<TxnPlan>,
}

/// (target, its `[targets]` name, its declared size, read by some step, written by some step).
type StepTarget = (TargetSpec, Option<String>, Option<u64>, bool, bool);

fn err(message: String) -> PlanError {
    PlanError(message)
}

/// Resolves `lg` into `plan`: pushes the targets and one [`WorkerPlan`] per worker, and sets `plan.loadgen`.
pub fn resolve(
    job: &JobSpec,
    lg: &LoadgenSpec,
    default_target: Option<&TargetSpec>,
    plan: &mut Plan,
) -> Result<(), PlanError> {
    let users = Users::of(job, lg)?;
    // Step targets: a plain --target replaces them all (so a profile runs on `mem:` or `sim:` as given);
    // otherwise `@NAME` resolves through [targets], and a step without one uses the job's target.
    let base = job.defaults.merged(&job.forced);
    if base.band.is_some() {
        return Err(err("'band' walks a worker's offsets over bands; users' transactions place their own \
                        steps (give 'band' to a job without [users])"
            .into()));
    }
    if base.verify_backlog.is_some() {
        return Err(err(
            "'verify_backlog' reads back a worker's plain writes; a job with users and transactions \
             has none (its steps are checked by --verify as they complete)"
                .into(),
        ));
    }
    let forced = forced_target(job)?;
    let fallback = job.defaults.target.as_ref().and_then(|l| l.first()).or(default_target);
    let (targets, transactions) = resolve_transactions(job, lg, forced.as_ref(), fallback, plan.direct)?;
    let worker_targets = add_step_targets(plan, &targets, &base)?;
    let specs = mirror_specs(&transactions);
    let max_bs = specs.iter().map(|s| s.bs[0].size_bytes).max().unwrap_or(DEFAULT_BS);
    let all_virtual = targets.iter().all(|t| t.0.is_virtual());
    for i in 0..users.n_workers {
        let w_users = users.count / users.n_workers + u32::from(i < users.count % users.n_workers);
        let slots = w_users as u64 * users.outstanding as u64;
        let name = if users.n_workers > 1 { format!("users.{}", i + 1) } else { "users".to_string() };
        check_slots(&name, w_users, users.outstanding, slots, max_bs)?;
        plan.workers.push(WorkerPlan {
            index: i,
            name,
            group: "users".into(),
            targets: worker_targets.clone(),
            qd: slots as u32,
            rate_iops: None,
            arrival: users.arrival,
            arrival_burst: 1,
            think: None,
            start_delay_ns: 0,
            flow: None,
            latency_target: None,
            data: base.data.unwrap_or_default(),
            dedupe: crate::writes::dedupe_of("users", &base)?,
            verify_backlog: None,
            atomic: crate::writes::atomic_of("users", &base, plan.direct, all_virtual)?,
            region_offset: base.offset.unwrap_or(0),
            region_length: base.length,
            band: None,
            specs: specs.clone(),
            ios: None,
            bytes: None,
            max_bs,
            loadgen: Some(WorkerTxnPlan {
                users: w_users,
                mode: users.mode,
                outstanding: users.outstanding,
                rate_per_s: users.rate_per_s(lg, w_users),
                arrival: users.arrival,
                transactions: transactions.clone(),
            }),
            durability: crate::Durability::default(),
        });
    }
    plan.loadgen = Some(LoadgenPlan {
        users: users.count,
        mode: users.mode,
        per_user_per_hour: lg.users.per_user_per_hour,
        rate_text: lg.users.rate_text.clone(),
        outstanding: users.outstanding,
        arrival: users.arrival,
        offered_per_s: users.rate_per_s(lg, users.count),
        transactions,
    });
    Ok(())
}

/// `[users]` with its defaults applied.
struct Users {
    /// Users in all.
    count: u32,
    /// Rate or stress.
    mode: LoadgenMode,
    /// Transactions a user may have in progress at once.
    outstanding: u32,
    /// Inter-arrival law.
    arrival: Arrival,
    /// Worker threads.
    n_workers: u32,
}

impl Users {
    /// The job's users, once the job is known to fit a `[users]` run (no tables or limits, a rate, enough users).
    fn of(job: &JobSpec, lg: &LoadgenSpec) -> Result<Users, PlanError> {
        let u = &lg.users;
        let users = u.count.unwrap_or(1);
        let mode = u.mode.unwrap_or_default();
        let outstanding = u.outstanding.unwrap_or(1);
        let arrival = u.arrival.unwrap_or(Arrival::Poisson);
        let n_workers = u.workers.or(job.workers).unwrap_or(1);
        if !job.worker_tables.is_empty() {
            return Err(err(
                "a job with [users] takes its workers from [users] ('workers'); remove the [worker.NAME] tables"
                    .into(),
            ));
        }
        if job.ios.is_some() || job.bytes.is_some() {
            return Err(err(
                "'ios' and 'bytes' limits do not apply to [users] runs; give a 'duration'".into()
            ));
        }
        if mode == LoadgenMode::Rate && u.per_user_per_hour.is_none() {
            return Err(err(
                "[users] in rate mode needs 'rate' (transactions per user, e.g. rate = \"500/8h\"), or mode = \"stress\" (--stress)"
                    .into(),
            ));
        }
        if n_workers > users {
            return Err(err(format!(
                "{n_workers} workers for {users} user{} ([users] 'workers'/'count'); every worker needs at least one user",
                if users == 1 { "" } else { "s" }
            )));
        }
        if n_workers > iolab_spec::MAX_WORKERS {
            return Err(err(format!("{n_workers} workers; at most {}", iolab_spec::MAX_WORKERS)));
        }
        Ok(Users { count: users, mode, outstanding, arrival, n_workers })
    }

    /// Transactions per second offered by `users` users in rate mode; None in stress mode.
    fn rate_per_s(&self, lg: &LoadgenSpec, users: u32) -> Option<f64> {
        if self.mode == LoadgenMode::Rate {
            lg.users.per_user_per_hour.map(|r| r * users as f64 / 3600.0)
        } else {
            None
        }
    }
}

/// The plain `--target` that replaces every step's target, if one was given (more than one is an error).
fn forced_target(job: &JobSpec) -> Result<Option<TargetSpec>, PlanError> {
    match &job.forced.target {
        Some(list) if list.len() > 1 => Err(err(
            "a [users] job takes one plain --target (it replaces every step's target) or named ones (--target db=PATH)"
                .into(),
        )),
        Some(list) => Ok(list.first().cloned()),
        None => Ok(None),
    }
}

/// The transactions' steps, and their distinct targets in first-use order with how the steps use them.
fn resolve_transactions(
    job: &JobSpec,
    lg: &LoadgenSpec,
    forced: Option<&TargetSpec>,
    fallback: Option<&TargetSpec>,
    direct: bool,
) -> Result<(Vec<StepTarget>, Vec<TxnPlan>), PlanError> {
    let mut targets: Vec<StepTarget> = Vec::new();
    let mut transactions = Vec::new();
    for t in &lg.transactions {
        let mut steps = Vec::new();
        for (k, s) in t.steps.iter().enumerate() {
            let where_ = || format!("transaction '{}', step {}", t.name, k + 1);
            let (spec, role, size) = step_target(job, s, forced, fallback, &where_)?;
            let i = note_step_target(&mut targets, spec, role, size, s.write);
            if direct && s.bs % 512 != 0 {
                return Err(err(format!(
                    "{}: block size {} ('bs') is not a multiple of 512 bytes, which direct I/O needs; use a multiple of the sector size, or --buffered",
                    where_(),
                    s.bs
                )));
            }
            steps.push(StepPlan {
                target: i as u16,
                write: s.write,
                random: s.random,
                len: s.bs as u32,
                dist: s.dist.clone().unwrap_or(Dist::Uniform),
            });
        }
        transactions.push(TxnPlan { name: t.name.clone(), weight: t.weight, steps });
    }
    Ok((targets, transactions))
}

/// One step's (target, its `[targets]` name, its declared size): the forced target, its own, or the fallback.
fn step_target(
    job: &JobSpec,
    s: &StepSpec,
    forced: Option<&TargetSpec>,
    fallback: Option<&TargetSpec>,
    where_: &dyn Fn() -> String,
) -> Result<(TargetSpec, Option<String>, Option<u64>), PlanError> {
    match (forced, &s.target) {
        (Some(f), _) => Ok((f.clone(), None, None)),
        (None, Some(TargetSpec::Named { name })) => match job.targets.get(name) {
            Some(NamedTarget { spec: Some(sp), size, .. }) => Ok((sp.clone(), Some(name.clone()), *size)),
            Some(NamedTarget { spec: None, .. }) => Err(err(format!(
                "{} uses target '@{name}', which has no path; give --target {name}=PATH",
                where_()
            ))),
            None => Err(err(format!("{} uses target '@{name}', which [targets] does not declare", where_()))),
        },
        (None, Some(other)) => Ok((other.clone(), None, None)),
        (None, None) => match fallback {
            Some(f) => Ok((f.clone(), None, None)),
            None => Err(err(format!(
                "{} has no target; give it one (target = \"@db\") or give --target PATH",
                where_()
            ))),
        },
    }
}

/// The index of `spec` among the step targets, adding it on first use; folds in its name, size and direction.
fn note_step_target(
    targets: &mut Vec<StepTarget>,
    spec: TargetSpec,
    role: Option<String>,
    size: Option<u64>,
    write: bool,
) -> usize {
    let i = match targets.iter().position(|x| x.0 == spec) {
        Some(i) => i,
        None => {
            targets.push((spec, role.clone(), None, false, false));
            targets.len() - 1
        }
    };
    let e = &mut targets[i];
    if e.1.is_none() {
        e.1 = role;
    }
    e.2 = e.2.max(size);
    e.3 |= !write;
    e.4 |= write;
    i
}

/// The plan indices of the step targets, added to `plan`, once they are known to be of one kind.
fn add_step_targets(plan: &mut Plan, targets: &[StepTarget], base: &Layer) -> Result<Vec<usize>, PlanError> {
    let kinds: Vec<bool> = targets.iter().map(|t| t.0.is_virtual()).collect();
    if kinds.iter().any(|v| *v) && kinds.iter().any(|v| !*v) {
        return Err(err(
            "the transactions mix files/devices with mem:/null:/sim: targets; a worker runs one kind".into(),
        ));
    }
    let mut worker_targets = Vec::new();
    for (spec, role, size, reads, writes) in targets {
        let used = crate::TargetUse {
            reads: *reads,
            writes: *writes,
            create_size: base.size.max(*size),
            footprint: None,
        };
        worker_targets.push(plan.add_target(spec, role.as_deref(), used));
    }
    Ok(worker_targets)
}

/// Access specs mirroring the steps, one per distinct size and direction.
fn mirror_specs(transactions: &[TxnPlan]) -> Vec<AccessPlan> {
    // So `Plan::bind` checks their sizes and alignment against the targets, and `--dry-run` shows them; the
    // transaction driver does not use them.
    let mut specs: Vec<AccessPlan> = Vec::new();
    for s in transactions.iter().flat_map(|t| &t.steps) {
        let read_pct = if s.write { 0.0 } else { 100.0 };
        let random_pct = if s.random { 100.0 } else { 0.0 };
        let size = s.len as u64;
        if !specs
            .iter()
            .any(|a| a.bs[0].size_bytes == size && a.read_pct == read_pct && a.random_pct == random_pct)
        {
            specs.push(AccessPlan {
                trim_pct: 0.0,
                weight: 1,
                bs: vec![BlockSizeWeight { size_bytes: size, weight: 1 }],
                read_pct,
                random_pct,
                align: None,
                seq_skip: 0,
                random_run: 1,
                random_run_identical: false,
                trim_then_write: false,
                dist: s.dist.clone(),
            });
        }
    }
    specs
}

/// Whether a worker's transactions in progress fit [`iolab_spec::MAX_QD`] slots and the per-worker buffer limit.
fn check_slots(name: &str, w_users: u32, outstanding: u32, slots: u64, max_bs: u64) -> Result<(), PlanError> {
    if slots > iolab_spec::MAX_QD as u64 {
        return Err(err(format!(
            "worker '{name}': {w_users} user{} x {outstanding} outstanding = {slots} transactions in progress at once; at most {} per worker: spread the users over more workers ([users] workers = N)",
            if w_users == 1 { "" } else { "s" },
            iolab_spec::MAX_QD
        )));
    }
    let buffer_bytes = 2 * slots * max_bs;
    if buffer_bytes > crate::MAX_BUFFER_BYTES_PER_WORKER {
        return Err(err(format!(
            "worker '{name}': {slots} transactions in progress x block size {} need {} of I/O buffers; at most {} per worker (more [users] workers, or a lower 'outstanding')",
            iolab_spec::units::format_size(max_bs),
            iolab_spec::units::format_size(buffer_bytes),
            iolab_spec::units::format_size(crate::MAX_BUFFER_BYTES_PER_WORKER)
        )));
    }
    Ok(())
}

#[derive(Clone, Debug)]
struct StepGen {
    target: usize,
    write: bool,
    random: bool,
    len: u64,
    sampler: SlotSampler,
}

/// Generates a worker's transactions (type by weight) and each step's I/O, from its seeded stream. Called per
/// transaction and per step on the hot path: no allocation; a single choice consumes no random numbers.
#[derive(Clone, Debug)]
pub struct TxnGen {
    rng: Rng,
    txn_cum: Vec<u64>,
    steps: Vec<Vec<StepGen>>,
    regions: Vec<Region>,
    /// Next sequential offset per target, relative to the region start.
    seq_next: Vec<u64>,
}

impl TxnGen {
    /// A generator for `plan` over the worker's bound `regions` (one per target), with stream `rng`.
    pub fn new(plan: &WorkerTxnPlan, regions: &[Region], rng: Rng) -> TxnGen {
        let mut txn_cum = Vec::new();
        let mut acc = 0u64;
        let mut steps = Vec::new();
        for t in &plan.transactions {
            acc += t.weight as u64;
            txn_cum.push(acc);
            steps.push(
                t.steps
                    .iter()
                    .map(|s| {
                        let len = s.len as u64;
                        let r = regions
                            .get(s.target as usize)
                            .copied()
                            .unwrap_or(Region { offset: 0, length: len });
                        let slots = if r.length >= len { (r.length - len) / len.max(1) + 1 } else { 1 };
                        StepGen {
                            target: s.target as usize,
                            write: s.write,
                            random: s.random,
                            len,
                            sampler: SlotSampler::new(&s.dist, slots),
                        }
                    })
                    .collect(),
            );
        }
        TxnGen { rng, txn_cum, steps, regions: regions.to_vec(), seq_next: vec![0; regions.len()] }
    }

    /// The type of the next transaction (index into the plan's transactions), by weight.
    #[inline]
    pub fn next_txn(&mut self) -> u16 {
        if self.txn_cum.len() == 1 {
            return 0;
        }
        let total = *self.txn_cum.last().unwrap_or(&1);
        let r = self.rng.below(total.max(1));
        self.txn_cum.iter().position(|&c| r < c).unwrap_or(self.txn_cum.len() - 1) as u16
    }

    /// Number of steps of transaction type `txn`.
    #[inline]
    pub fn step_count(&self, txn: u16) -> u16 {
        self.steps[txn as usize].len() as u16
    }

    /// The I/O of step `step` of a transaction of type `txn`: random offsets aligned to the step's size inside
    /// the region, or the next sequential offset in that target (wrapping at the region's end).
    #[inline]
    pub fn step_op(&mut self, txn: u16, step: u16) -> GenOp {
        let s = &self.steps[txn as usize][step as usize];
        let t = s.target;
        let region = self.regions[t];
        let rel = if s.random {
            s.sampler.sample(&mut self.rng) * s.len
        } else {
            let mut next = self.seq_next[t];
            if next + s.len > region.length {
                next = 0;
            }
            self.seq_next[t] = next + s.len;
            next
        };
        GenOp {
            target: t as u16,
            kind: if s.write { OpKind::Write } else { OpKind::Read },
            offset: region.offset + rel,
            len: s.len as u32,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const JOB: &str = r#"
        duration = "10s"
        [targets]
        db = "mem:1G"
        log = "mem:64M"
        [users]
        count = 1001
        rate = "500/8h"
        workers = 2
        [[transaction]]
        name = "send"
        weight = 3
        steps = [
          { target = "@log", rw = "write", bs = "4k" },
          { target = "@db", rw = "randwrite", bs = "32k", count = 2 },
          { target = "@db", rw = "randread", bs = "32k" },
        ]
        [[transaction]]
        name = "read"
        steps = [{ target = "@db", rw = "randread", bs = "32k" }]
    "#;

    fn plan(text: &str) -> Result<Plan, PlanError> {
        let job = JobSpec::from_toml(text, "j.toml").unwrap();
        Plan::from_spec(&job, None)
    }

    #[test]
    fn users_split_over_workers_with_all_targets() {
        let p = plan(JOB).unwrap();
        assert_eq!(p.workers.len(), 2);
        let lg = p.loadgen.as_ref().unwrap();
        assert_eq!(lg.users, 1001);
        assert!((lg.offered_per_s.unwrap() - 1001.0 * 62.5 / 3600.0).abs() < 1e-9);
        let (a, b) = (p.workers[0].loadgen.as_ref().unwrap(), p.workers[1].loadgen.as_ref().unwrap());
        assert_eq!((a.users, b.users), (501, 500));
        assert_eq!((p.workers[0].qd, p.workers[1].qd), (501, 500));
        assert!((a.rate_per_s.unwrap() - 501.0 * 62.5 / 3600.0).abs() < 1e-9);
        // Both targets, log first (first used), in every worker; the steps point at them.
        assert_eq!(p.targets.len(), 2);
        assert_eq!(p.targets[0].role.as_deref(), Some("log"));
        assert!(p.targets[0].writes && !p.targets[0].reads);
        assert!(p.targets[1].writes && p.targets[1].reads);
        assert_eq!(p.workers[1].targets, vec![0, 1]);
        let send = &a.transactions[0];
        assert_eq!(send.steps.len(), 4);
        assert_eq!((send.steps[0].target, send.steps[1].target), (0, 1));
        assert_eq!(p.workers[0].max_bs, 32768);
    }

    #[test]
    fn rate_mode_needs_a_rate_and_stress_does_not() {
        let no_rate = JOB.replace("rate = \"500/8h\"", "");
        assert!(plan(&no_rate).unwrap_err().0.contains("needs 'rate'"));
        let stress = JOB.replace("rate = \"500/8h\"", "mode = \"stress\"\noutstanding = 2");
        let p = plan(&stress).unwrap();
        assert_eq!(p.workers[0].qd, 1002);
        assert!(p.workers[0].loadgen.as_ref().unwrap().rate_per_s.is_none());
    }

    #[test]
    fn limits_and_unresolved_targets_are_errors() {
        assert!(plan(&JOB.replace("count = 1001", "count = 1"))
            .unwrap_err()
            .0
            .contains("2 workers for 1 user ("));
        assert!(plan(&JOB.replace("workers = 2", "workers = 1").replace("1001", "5000"))
            .unwrap_err()
            .0
            .contains("at most 4096"));
        assert!(plan(&JOB.replace("log = \"mem:64M\"", "")).is_err());
        assert!(plan(&JOB.replace("log = \"mem:64M\"", "log = \"/tmp/x.dat\""))
            .unwrap_err()
            .0
            .contains("mix"));
        let banded = JOB.replace("duration = \"10s\"", "duration = \"10s\"\nband = \"1M:1M\"");
        assert!(plan(&banded).unwrap_err().0.contains("'band' walks a worker's offsets"));
    }

    #[test]
    fn generator_follows_the_steps_inside_regions() {
        let p = plan(JOB).unwrap();
        let w = p.workers[0].loadgen.as_ref().unwrap();
        let regions = [Region { offset: 0, length: 64 << 20 }, Region { offset: 4096, length: 1 << 30 }];
        let mut g = TxnGen::new(w, &regions, Rng::new(5));
        let mut counts = [0u32; 2];
        for _ in 0..4000 {
            let t = g.next_txn();
            counts[t as usize] += 1;
            for k in 0..g.step_count(t) {
                let op = g.step_op(t, k);
                let s = &w.transactions[t as usize].steps[k as usize];
                assert_eq!((op.target, op.kind == OpKind::Write, op.len), (s.target, s.write, s.len));
                let r = regions[op.target as usize];
                assert!(op.offset >= r.offset && op.offset + op.len as u64 <= r.offset + r.length);
                if s.random {
                    assert_eq!((op.offset - r.offset) % op.len as u64, 0);
                }
            }
        }
        // Weights 3:1.
        assert!((2800..3200).contains(&counts[0]), "{counts:?}");
        // The log is appended sequentially.
        let mut g = TxnGen::new(w, &regions, Rng::new(5));
        assert_eq!(g.step_op(0, 0).offset, 0);
        assert_eq!(g.step_op(0, 0).offset, 4096);
    }
}
