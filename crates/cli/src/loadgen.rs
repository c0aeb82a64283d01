//! LoadGen-style users and transactions: the command-line flags (layered on the job's `[users]` through the
//! same parser, [`iolab_spec::loadgen::UsersSpec::set`]) and the result section, merged from the workers'
//! transaction counts, histograms and per-interval backlog. See docs/LOADGEN.md.

use crate::args::LoadgenFlags;
use iolab_engine::WorkerOutput;
use iolab_plan::loadgen::OVERLOAD_FACTOR;
use iolab_plan::Plan;
use iolab_report::loadgen::{BacklogPoint, LoadgenResult, TransactionResult};
use iolab_spec::loadgen::{LoadgenMode, UsersSpec};
use iolab_spec::{JobSpec, Place, SpecError};
use iolab_stats::{LatencyHistogram, Warning};
use std::collections::BTreeMap;

/// Layers the flags on the job's `[users]`. A flag without `[[transaction]]` tables is an error.
pub fn apply_flags(flags: &LoadgenFlags, job: &mut JobSpec) -> Result<(), SpecError> {
    let mut over = UsersSpec::default();
    let mut first = None;
    for (key, flag, value) in [
        ("count", "--users", &flags.users),
        ("rate", "--user-rate", &flags.user_rate),
        ("outstanding", "--outstanding", &flags.outstanding),
    ] {
        if let Some(v) = value {
            over.set(key, v, &Place::Flag(flag.into()))?;
            first = first.or(Some(flag));
        }
    }
    if flags.stress {
        over.mode = Some(LoadgenMode::Stress);
        first = first.or(Some("--stress"));
    } else if flags.user_rate.is_some() {
        over.mode = Some(LoadgenMode::Rate);
    }
    let Some(flag) = first else { return Ok(()) };
    match &mut job.loadgen {
        Some(lg) => {
            lg.users = lg.users.merged(&over);
            Ok(())
        }
        None => Err(SpecError::Conflict {
            place: Place::Flag(flag.into()),
            message: "needs a job file or profile with [[transaction]] tables (what a user's transaction does); see docs/LOADGEN.md".into(),
        }),
    }
}

/// True for a rate-mode transaction run (open loop: a low achieved depth is expected, not a warning).
pub fn rate_mode(plan: &Plan) -> bool {
    plan.loadgen.as_ref().is_some_and(|l| l.mode == LoadgenMode::Rate)
}

/// The result section, from the workers' outputs and the merged intervals (indexed from the window start);
/// pushes the overload warning. `None` for plain runs.
pub fn result(
    plan: &Plan,
    outputs: &[WorkerOutput],
    intervals: &BTreeMap<u64, iolab_stats::IntervalTxn>,
    measured_s: f64,
    interval_ns: u64,
    warnings: &mut Vec<Warning>,
) -> Option<LoadgenResult> {
    let lg = plan.loadgen.as_ref()?;
    let n_types = lg.transactions.len();
    let mut all = LatencyHistogram::new();
    let mut by_type: Vec<LatencyHistogram> = (0..n_types).map(|_| LatencyHistogram::new()).collect();
    let mut dispatched_by_type = vec![0u64; n_types];
    let (mut dispatched, mut completed, mut failed) = (0u64, 0u64, 0u64);
    let (mut backlog_at_end, mut executing_max, mut beyond_ring) = (0u64, 0u64, 0u64);
    let mut backlog_max_workers = 0u64;
    for t in outputs.iter().filter_map(|o| o.txn.as_ref()) {
        all.merge(&t.latency);
        for (h, o) in by_type.iter_mut().zip(&t.latency_by_type) {
            h.merge(o);
        }
        for (d, o) in dispatched_by_type.iter_mut().zip(&t.dispatched_by_type) {
            *d += o;
        }
        dispatched += t.dispatched;
        completed += t.completed;
        failed += t.failed;
        backlog_at_end += t.backlog_at_end;
        executing_max += t.executing_max;
        beyond_ring += t.beyond_ring;
        // Workers peak at different moments; the sum of their peaks bounds the run's peak from above.
        backlog_max_workers += t.backlog_max;
    }
    let interval_s = interval_ns as f64 / 1e9;
    let n_intervals = ((measured_s / interval_s).ceil() as u64).max(1);
    let mut backlog = Vec::new();
    for k in 0..n_intervals {
        let p = intervals.get(&k).copied().unwrap_or_default();
        backlog.push(BacklogPoint {
            t_s: ((k + 1) as f64 * interval_s).min(measured_s),
            dispatched: p.dispatched,
            completed: p.completed,
            backlog: p.backlog,
        });
    }
    // The run's peak: the largest merged interval sample, or at least the end; with one worker, its exact peak.
    let sampled_max = backlog.iter().map(|p| p.backlog).max().unwrap_or(0).max(backlog_at_end);
    let backlog_max = if outputs.len() == 1 { backlog_max_workers.max(sampled_max) } else { sampled_max };
    let per_hour = |n: u64| if measured_s > 0.0 { n as f64 * 3600.0 / measured_s } else { 0.0 };
    let threshold = OVERLOAD_FACTOR * lg.users as f64;
    // Only rate mode can fall behind: in stress mode the storage sets the pace and the backlog is the
    // transactions in progress, bounded by users x outstanding by construction.
    let overload = lg.mode == LoadgenMode::Rate && backlog_max as f64 > threshold;
    if overload {
        warnings.push(Warning::TransactionOverload { users: lg.users, backlog_max, backlog_at_end });
    }
    let transactions = lg
        .transactions
        .iter()
        .zip(&by_type)
        .zip(&dispatched_by_type)
        .map(|((t, h), d)| TransactionResult {
            name: t.name.clone(),
            weight: t.weight,
            steps: t.steps.len() as u32,
            dispatched: *d,
            completed: h.count(),
            transactions_per_hour: per_hour(h.count()),
            latency_ns: h.summary(),
        })
        .collect();
    let rate = lg.mode == LoadgenMode::Rate;
    Some(LoadgenResult {
        users: lg.users,
        mode: lg.mode.as_str().to_string(),
        outstanding_per_user: lg.outstanding,
        rate: if rate { lg.rate_text.clone() } else { None },
        arrival: if rate { Some(format!("{:?}", lg.arrival).to_lowercase()) } else { None },
        offered_per_s: lg.offered_per_s,
        offered_per_hour: lg.offered_per_s.map(|s| s * 3600.0),
        dispatched,
        completed,
        failed,
        transactions_per_s: per_hour(completed) / 3600.0,
        transactions_per_hour: per_hour(completed),
        latency_ns: all.summary(),
        transactions,
        backlog_at_end,
        backlog_max,
        executing_max,
        beyond_ring,
        overload_threshold: threshold,
        overload,
        backlog,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_need_transactions_and_layer_on_users() {
        let mut job = JobSpec::default();
        let flags = LoadgenFlags { users: Some("10".into()), ..Default::default() };
        let e = apply_flags(&flags, &mut job).unwrap_err();
        assert!(
            e.to_string().starts_with("'--users': needs a job file or profile with [[transaction]]"),
            "{e}"
        );
        let mut job = JobSpec::from_toml(
            "[users]\ncount = 3\nrate = '1/h'\n[[transaction]]\nname='a'\nsteps=[{rw='read'}]\n",
            "j",
        )
        .unwrap();
        let flags = LoadgenFlags { users: Some("10".into()), stress: true, ..Default::default() };
        apply_flags(&flags, &mut job).unwrap();
        let u = &job.loadgen.as_ref().unwrap().users;
        assert_eq!((u.count, u.mode), (Some(10), Some(LoadgenMode::Stress)));
        let bad = LoadgenFlags { users: Some("0".into()), ..Default::default() };
        let e = apply_flags(&bad, &mut job).unwrap_err();
        assert!(e.to_string().starts_with("invalid value '0' for '--users'"), "{e}");
    }
}
