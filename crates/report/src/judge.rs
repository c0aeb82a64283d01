//! Judging a run against Jetstress-style thresholds: fills a [`Verdict`] from a [`RunResult`] (the rules are
//! in [`crate::verdict`]'s header). Kept apart from the verdict's data so the run model, which holds a verdict,
//! and the judging, which reads a run, do not import each other.

use crate::model::{GroupResult, OpSummary, RunResult};
use crate::verdict::{Check, Thresholds, Verdict};

fn latency_check(
    name: &str,
    group: &str,
    limit: f64,
    measured: Option<f64>,
    single: Option<f64>,
    checks: &mut Vec<Check>,
) {
    let pass = measured.is_some_and(|m| m <= limit);
    checks.push(Check {
        name: name.into(),
        group: group.into(),
        limit,
        measured,
        unit: "ns".into(),
        single_io_max_ns: single,
        pass,
    });
}

/// Judges `r`: database checks on the groups named in `db_groups` (when empty, on the whole run's reads, if
/// any), log checks on `log_groups`, and the IOPS check.
pub fn evaluate(r: &RunResult, t: &Thresholds, db_groups: &[String], log_groups: &[String]) -> Verdict {
    let mut checks = Vec::new();
    let find = |n: &String| r.groups.iter().find(|g| &g.name == n);
    let dbs: Vec<&GroupResult> = db_groups.iter().filter_map(find).collect();
    let logs: Vec<&GroupResult> = log_groups.iter().filter_map(find).collect();
    let avg = |s: &OpSummary| s.lat_ns.as_ref().map(|l| l.mean);
    let max1 = |s: &OpSummary| s.lat_ns.as_ref().map(|l| l.max as f64);
    if dbs.is_empty() {
        if r.total.read.ops > 0 {
            let imax = r.groups.iter().filter_map(|g| g.read_interval_mean_max_ns).reduce(f64::max);
            latency_check("db_read_avg", "all", t.db_read_avg_ns, avg(&r.total.read), None, &mut checks);
            let single = max1(&r.total.read);
            latency_check("db_read_max", "all", t.db_read_max_ns, imax, single, &mut checks);
        }
    } else {
        for g in &dbs {
            latency_check("db_read_avg", &g.name, t.db_read_avg_ns, avg(&g.total.read), None, &mut checks);
            let (imax, single) = (g.read_interval_mean_max_ns, max1(&g.total.read));
            latency_check("db_read_max", &g.name, t.db_read_max_ns, imax, single, &mut checks);
        }
    }
    for g in &logs {
        latency_check("log_write_avg", &g.name, t.log_write_avg_ns, avg(&g.total.write), None, &mut checks);
        let (imax, single) = (g.write_interval_mean_max_ns, max1(&g.total.write));
        latency_check("log_write_max", &g.name, t.log_write_max_ns, imax, single, &mut checks);
    }
    if let Some(limit) = t.flush_p99_ns {
        let p99 = r.total.flush.as_ref().and_then(|f| f.lat_ns.as_ref()).map(|l| l.p99 as f64);
        latency_check("flush_p99", "all", limit, p99, None, &mut checks);
    }
    let (achieved, offered) = if dbs.is_empty() {
        (r.total.all.iops, r.rate.as_ref().map(|x| x.offered_iops))
    } else {
        let offered: Vec<f64> = dbs.iter().filter_map(|g| g.rate_iops).collect();
        (dbs.iter().map(|g| g.total.all.iops).sum(), (!offered.is_empty()).then(|| offered.iter().sum()))
    };
    let target = t.min_iops.or(offered);
    if let Some(target) = target {
        let limit = target * (1.0 - t.iops_tolerance_pct / 100.0);
        let group = if dbs.is_empty() { "all".to_string() } else { db_groups.join("+") };
        checks.push(Check {
            name: "iops".into(),
            group,
            limit,
            measured: Some(achieved),
            unit: "iops".into(),
            single_io_max_ns: None,
            pass: achieved >= limit,
        });
    }
    let mut reasons: Vec<String> = checks.iter().filter(|c| !c.pass).map(Check::reason).collect();
    if r.partial {
        reasons.push("the run was stopped early; a partial run cannot pass".into());
    }
    Verdict {
        pass: reasons.is_empty(),
        reasons,
        achieved_iops: Some(achieved),
        target_iops: target,
        iops_tolerance_pct: t.iops_tolerance_pct,
        checks,
        sizing: None,
        provisional: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::{names, sample, with_groups};

    #[test]
    fn verdict_all_within_limits_passes() {
        let r = with_groups(5e6, 30e6, 2e6, 980.0);
        let (d, l) = names();
        let v = evaluate(&r, &Thresholds::default(), &d, &l);
        assert!(v.pass, "{:?}", v.reasons);
        assert_eq!(v.checks.len(), 5);
        assert_eq!(v.target_iops, Some(1000.0));
        // The max check uses the per-interval mean, and shows the single-I/O max (21.3 ms) beside it.
        let max = v.checks.iter().find(|c| c.name == "db_read_max").unwrap();
        assert_eq!((max.measured, max.single_io_max_ns), (Some(30e6), Some(21_300_000.0)));
    }

    #[test]
    fn verdict_each_limit_fails_on_its_own() {
        let (d, l) = names();
        let t = Thresholds::default();
        let fail = |r: RunResult, what: &str| {
            let v = evaluate(&r, &t, &d, &l);
            assert!(!v.pass);
            assert_eq!(v.reasons.len(), 1, "{:?}", v.reasons);
            assert!(v.reasons[0].starts_with(what), "{:?}", v.reasons);
        };
        fail(with_groups(20.1e6, 30e6, 2e6, 1000.0), "db read avg");
        fail(with_groups(5e6, 50.1e6, 2e6, 1000.0), "db read max");
        fail(with_groups(5e6, 30e6, 10.1e6, 1000.0), "log write avg"); // imax 20.2 ms is fine
        fail(with_groups(5e6, 30e6, 2e6, 949.0), "db IOPS");
    }

    #[test]
    fn verdict_iops_tolerance_boundary_and_explicit_target() {
        let (d, l) = names();
        let mut t = Thresholds::default();
        assert!(evaluate(&with_groups(5e6, 6e6, 1e6, 950.0), &t, &d, &l).pass);
        assert!(!evaluate(&with_groups(5e6, 6e6, 1e6, 949.9), &t, &d, &l).pass);
        t.min_iops = Some(2000.0);
        t.iops_tolerance_pct = 0.0;
        let v = evaluate(&with_groups(5e6, 6e6, 1e6, 1999.0), &t, &d, &l);
        assert_eq!((v.pass, v.target_iops), (false, Some(2000.0)));
    }

    #[test]
    fn verdict_without_db_groups_checks_the_whole_run_and_partial_fails() {
        let mut r = sample();
        let v = evaluate(&r, &Thresholds::default(), &[], &[]);
        // Closed loop, no target: only the two read checks.
        assert_eq!(v.checks.len(), 2);
        assert!(v.pass);
        r.partial = true;
        assert!(!evaluate(&r, &Thresholds::default(), &[], &[]).pass);
    }
}
