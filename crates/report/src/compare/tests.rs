//! Tests of the comparison: the rules in the module header, on fixed runs and sweeps, and its renderings.

use super::*;
use crate::tests::{json, markdown, text};

#[test]
fn verdict_within_half_a_tenth_percent_is_same_not_better_or_worse() {
    assert_eq!(change_verdict(Better::Higher, 30_021.8, 30_021.7), ChangeVerdict::Same);
    assert_eq!(change_verdict(Better::Lower, 100.0, 100.04), ChangeVerdict::Same);
    assert_eq!(change_verdict(Better::Higher, 100.0, 100.1), ChangeVerdict::Better);
    assert_eq!(change_verdict(Better::Lower, 100.0, 100.1), ChangeVerdict::Worse);
}
use crate::sweep::{PointSummary, SweepAxis, SweepPoint, SweepResult, TrialMetrics, SWEEP_SCHEMA};
use crate::{HistogramSet, OpSet, RunResult};
use iolab_stats::OpStats;

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol
}

/// A single-group read-only run with `ops` reads of `lat_ns` each (and `slow` reads of `slow_ns`) over 1 s.
fn run_with(ops: u64, lat_ns: u64, slow: u64, slow_ns: u64, seed: u64) -> RunResult {
    let mut read = OpStats::new();
    for _ in 0..ops {
        read.record_ok(4096, 4096, lat_ns, lat_ns);
    }
    for _ in 0..slow {
        read.record_ok(4096, 4096, slow_ns, slow_ns);
    }
    let write = OpStats::new();
    let mut r = crate::tests::sample();
    r.seed = seed;
    r.run_id = format!("run{seed}");
    r.total = OpSet::from_stats(&read, &write, 1.0);
    r.groups.truncate(1);
    r.groups[0].total.read = r.total.read.clone();
    r.groups[0].total.write = r.total.write.clone();
    r.groups[0].total.all = r.total.all.clone();
    r.depth.achieved = r.total.all.littles_law_depth();
    r.cpu.cpu_ns_per_io = Some(1000.0);
    r.histograms = Some(HistogramSet::from_stats(&read, &write));
    r
}

/// Documents as a side holds them.
pub(crate) fn boxed<T: crate::Document + Clone>(docs: Vec<T>) -> Vec<Box<dyn crate::Document>> {
    docs.into_iter().map(|d| Box::new(d) as Box<dyn crate::Document>).collect()
}

fn runs(source: &str, r: Vec<RunResult>) -> Side {
    Side { source: source.to_string(), docs: boxed(r) }
}

fn metric<'a>(u: &'a UnitComparison, key: &str) -> &'a MetricComparison {
    u.metrics.iter().find(|m| m.key == key).unwrap_or_else(|| {
        panic!("no metric {key} in {:?}", u.metrics.iter().map(|m| &m.key).collect::<Vec<_>>())
    })
}

#[test]
fn format_pct_uses_whole_percents_from_ten_and_signs() {
    assert_eq!(format_pct(133.33), "+133%");
    assert_eq!(format_pct(-80.04), "-80%");
    assert_eq!(format_pct(399.0), "+399%");
    assert_eq!(format_pct(2.54), "+2.5%");
    assert_eq!(format_pct(-0.04), "-0.0%");
    assert_eq!(format_pct(9.96), "+10%");
    assert_eq!(format_pct(0.0), "0%");
    assert_eq!(format_pct(f64::NAN), "n/a");
    assert_eq!(change_phrase("IOPS", Some(133.0)), "IOPS +133%");
    assert_eq!(change_phrase("read p99", Some(-80.0)), "read p99 -80%");
    assert_eq!(change_phrase("IOPS", None), "IOPS n/a (baseline 0)");
}

#[test]
fn verdict_follows_the_metric_direction() {
    assert_eq!(change_verdict(Better::Higher, 100.0, 233.0), ChangeVerdict::Better);
    assert_eq!(change_verdict(Better::Higher, 100.0, 50.0), ChangeVerdict::Worse);
    assert_eq!(change_verdict(Better::Lower, 100.0, 20.0), ChangeVerdict::Better);
    assert_eq!(change_verdict(Better::Lower, 100.0, 120.0), ChangeVerdict::Worse);
    assert_eq!(change_verdict(Better::Lower, 100.0, 100.0), ChangeVerdict::Same);
    assert_eq!(change_verdict(Better::Neither, 100.0, 120.0), ChangeVerdict::Neutral);
}

#[test]
fn two_runs_iops_doubled_latency_halved_marks_b_better() {
    let a = run_with(40_000, 800_000, 0, 0, 1);
    let b = run_with(80_000, 400_000, 0, 0, 2);
    let c = compare(&[runs("a.json", vec![a]), runs("b.json", vec![b])], &CompareOptions::default()).unwrap();
    assert_eq!(c.schema, COMPARE_SCHEMA);
    let u = &c.units[0];
    let iops = metric(u, "iops");
    assert_eq!(iops.better, Better::Higher);
    assert_eq!(iops.changes[0].diff, 40_000.0);
    assert_eq!(iops.changes[0].pct, Some(100.0));
    assert_eq!(iops.changes[0].phrase, "IOPS +100%");
    assert_eq!(iops.changes[0].verdict, ChangeVerdict::Better);
    assert_eq!(iops.best, vec!["B"]);
    assert_eq!(iops.sides[0].source, ValueSource::SingleRun);
    assert!(iops.changes[0].test.is_none(), "one trial a side: no test");
    let mean = metric(u, "mean");
    assert_eq!(mean.better, Better::Lower);
    assert_eq!(mean.changes[0].phrase, "mean latency -50%");
    assert_eq!(mean.changes[0].verdict, ChangeVerdict::Better);
    assert_eq!(mean.best, vec!["B"]);
    let cpu = metric(u, "cpu_per_io");
    assert_eq!((cpu.changes[0].verdict, cpu.best.len()), (ChangeVerdict::Same, 0), "equal values: no best");
    let depth = metric(u, "depth");
    assert_eq!((depth.better, depth.changes[0].verdict), (Better::Neither, ChangeVerdict::Neutral));
    // Read-only: no separate read rows (they repeat "all"), no group rows (one group repeats the totals).
    assert!(u.metrics.iter().all(|m| !m.key.starts_with("read.") && !m.key.starts_with("group.")));
    let text = text(&c);
    assert!(text.contains("B vs A: IOPS +100% (better)"), "{text}");
    assert!(text.contains("80,000.0 *"), "{text}");
    let md = markdown(&c);
    assert!(md.contains("| **80,000.0** |"), "{md}");
    let json: serde_json::Value = serde_json::from_str(&json(&c)).unwrap();
    assert_eq!(json["schema"], "iolab.compare/1");
    assert_eq!(json["units"][0]["metrics"][0]["changes"][0]["phrase"], "IOPS +100%");
}

#[test]
fn three_sides_compare_each_with_the_baseline_and_mark_the_best() {
    let a = run_with(40_000, 800_000, 0, 0, 1);
    let b = run_with(80_000, 400_000, 0, 0, 2);
    let c3 = run_with(20_000, 1_600_000, 0, 0, 3);
    let c =
        compare(&[runs("a", vec![a]), runs("b", vec![b]), runs("c", vec![c3])], &CompareOptions::default())
            .unwrap();
    let iops = metric(&c.units[0], "iops");
    assert_eq!(iops.changes.len(), 2);
    assert_eq!(iops.changes[1].side, "C");
    assert_eq!(iops.changes[1].phrase, "IOPS -50%");
    assert_eq!(iops.changes[1].verdict, ChangeVerdict::Worse);
    assert_eq!(iops.best, vec!["B"]);
    let text = text(&c);
    assert!(text.contains("C vs A: IOPS -50% (worse)"), "{text}");
}

#[test]
fn welch_matches_a_worked_example() {
    // Wikipedia's Welch example (t.test(c(27.5,21.0,19.0,23.6,17.0,17.9,16.9,20.1,21.9,22.6,23.1,19.6,19.0,21.7,21.4),
    //            c(27.1,22.0,20.8,23.4,23.4,23.5,25.8,22.0,24.8,20.2,21.9,22.1,22.9,20.5,24.4)))
    // t = -2.4554, df = 24.989, p-value = 0.02138 (checked by numeric integration of the t density)
    let a = [27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6, 23.1, 19.6, 19.0, 21.7, 21.4];
    let b = [27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2, 21.9, 22.1, 22.9, 20.5, 24.4];
    let w = WelchTest::from_trials(&a, &b, 0.05).unwrap();
    // t is side - baseline here, so positive.
    assert!(close(w.t.unwrap(), 2.455_356, 1e-6), "{w:?}");
    assert!(close(w.df, 24.988_529, 1e-6), "{w:?}");
    assert!(close(w.p, 0.021_378, 1e-6), "{w:?}");
    assert!(w.significant);
    assert!(!WelchTest::from_trials(&a, &b, 0.01).unwrap().significant);
}

#[test]
fn welch_degenerate_cases() {
    assert!(WelchTest::from_trials(&[1.0], &[2.0, 3.0], 0.05).is_none());
    let same = WelchTest::from_trials(&[5.0, 5.0, 5.0], &[5.0, 5.0, 5.0], 0.05).unwrap();
    assert_eq!((same.t, same.p, same.significant), (Some(0.0), 1.0, false));
    let diff = WelchTest::from_trials(&[5.0, 5.0, 5.0], &[6.0, 6.0, 6.0], 0.05).unwrap();
    assert_eq!((diff.t, diff.df, diff.p, diff.significant), (None, 4.0, 0.0, true));
    let nan = WelchTest::from_trials(&[f64::NAN, 1.0, 2.0], &[1.0, 2.0, 3.0], 0.05).unwrap();
    assert!(nan.p.is_finite());
}

#[test]
fn trials_test_significance_and_merge_percentiles_from_histograms() {
    // Baseline: 3 trials, each 990 fast ops and 10 slow; the p99 of each trial alone is the fast value
    // (rank 990 of 1000), but merging two trials with more slow ops moves it.
    let a: Vec<RunResult> = (0..3).map(|s| run_with(990 + s, 100_000, 10, 5_000_000, s)).collect();
    let b: Vec<RunResult> =
        (0..3).map(|s| run_with(1_980 + s, 50_000, 20 + 10 * s, 9_000_000, 10 + s)).collect();
    let c =
        compare(&[runs("tag:hba=a", a.clone()), runs("tag:hba=b", b.clone())], &CompareOptions::default())
            .unwrap();
    let u = &c.units[0];
    assert_eq!(u.trials, vec![3, 3]);
    let iops = metric(u, "iops");
    assert_eq!(iops.sides[0].source, ValueSource::MeanOfTrials);
    assert_eq!(iops.sides[0].value, 1001.0);
    assert_eq!(iops.sides[0].trials, vec![1000.0, 1001.0, 1002.0]);
    let t = iops.changes[0].test.as_ref().expect("3 trials a side: tested");
    assert!(t.significant && t.p < 1e-3, "{t:?}");
    // p99 of side B: merged histogram of 1980+1981+1982 fast and 20+30+40 slow ops: 90 slow of 6033 ->
    // the slow ops are above rank 0.99 * 6033 = 5972.7, so p99 is slow (9 ms), though two of the
    // three trials alone have a fast p99 (20/2000 and 30/2011 are at or below 1.5 %... only the third is slow).
    let p99 = metric(u, "p99");
    assert_eq!(p99.sides[1].source, ValueSource::MergedHistograms);
    let mut merged = LatencyHistogram::new();
    for r in &b {
        merged.merge(
            &LatencyHistogram::from_base64(r.histograms.as_ref().unwrap().read.as_ref().unwrap()).unwrap(),
        );
    }
    assert_eq!(p99.sides[1].value, merged.quantile(0.99).unwrap() as f64);
    let averaged = p99.sides[1].trials.iter().sum::<f64>() / 3.0;
    assert_eq!(p99.sides[1].mean, averaged);
    assert!(p99.sides[1].value != averaged, "merged, not averaged: {} vs {averaged}", p99.sides[1].value);
    // Mean latency from the merged histogram is the op-weighted mean.
    let mean = metric(u, "mean");
    assert!(close(mean.sides[1].value, merged.mean().unwrap(), 1e-6));
    // Without histograms, the mean of the trials, and a note says so.
    let strip = |v: Vec<RunResult>| {
        v.into_iter()
            .map(|mut r| {
                r.histograms = None;
                r
            })
            .collect::<Vec<_>>()
    };
    let c2 = compare(&[runs("a", strip(a)), runs("b", strip(b))], &CompareOptions::default()).unwrap();
    let p99 = metric(&c2.units[0], "p99");
    assert_eq!((p99.sides[1].source, p99.sides[1].value), (ValueSource::MeanOfTrials, averaged));
    assert!(c2.notes.iter().any(|n| n.contains("means over trials")), "{:?}", c2.notes);
    assert!(c.notes.is_empty(), "{:?}", c.notes);
    let text = text(&c);
    assert!(text.contains("Welch"), "{text}");
    assert!(text.contains("significant"), "{text}");
}

#[test]
fn identical_trials_are_not_significant() {
    let a: Vec<RunResult> = (0..3).map(|s| run_with(1000 + s, 100_000, 0, 0, s)).collect();
    let b: Vec<RunResult> = (0..3).map(|s| run_with(1002 - s, 100_000, 0, 0, s)).collect();
    let c = compare(&[runs("a", a), runs("b", b)], &CompareOptions::default()).unwrap();
    let t = metric(&c.units[0], "iops").changes[0].test.clone().unwrap();
    assert!(!t.significant && close(t.p, 1.0, 1e-12), "{t:?}");
}

#[test]
fn two_trials_are_not_tested() {
    let a: Vec<RunResult> = (0..2).map(|s| run_with(1000 + s, 100_000, 0, 0, s)).collect();
    let b: Vec<RunResult> = (0..3).map(|s| run_with(2000 + s, 100_000, 0, 0, s)).collect();
    let c = compare(&[runs("a", a), runs("b", b)], &CompareOptions::default()).unwrap();
    assert!(metric(&c.units[0], "iops").changes[0].test.is_none());
}

#[test]
fn groups_compared_where_both_sides_have_them() {
    let mut a = crate::tests::sample();
    let mut db = a.groups[0].clone();
    db.name = "db".into();
    db.total.all.iops = 1000.0;
    let mut log = db.clone();
    log.name = "log".into();
    a.groups = vec![db.clone(), log];
    let mut b = a.clone();
    b.groups[0].total.all.iops = 2330.0;
    b.groups.truncate(1);
    let c = compare(&[runs("a", vec![a]), runs("b", vec![b])], &CompareOptions::default()).unwrap();
    let u = &c.units[0];
    let g = metric(u, "group.db.iops");
    assert_eq!(g.changes[0].phrase, "db: IOPS +133%");
    assert_eq!(g.scope, "group:db");
    assert!(u.metrics.iter().all(|m| !m.key.starts_with("group.log.")), "log is only on side A");
    // A read/write mix gets read and write rows.
    assert!(u.metrics.iter().any(|m| m.key == "read.p99"));
    assert!(u.metrics.iter().any(|m| m.key == "write.mean"));
}

#[test]
fn metric_filter_selects_by_name_and_refuses_unknown() {
    let a = crate::tests::sample();
    let mut b = a.clone();
    b.total.all.iops *= 2.0;
    let opts = CompareOptions {
        metrics: MetricFilter::parse("iops,read.p99", &crate::kinds::metric_names()).unwrap(),
        ..Default::default()
    };
    let c = compare(&[runs("a", vec![a.clone()]), runs("b", vec![b.clone()])], &opts).unwrap();
    let keys: Vec<&str> = c.units[0].metrics.iter().map(|m| m.key.as_str()).collect();
    assert_eq!(keys, vec!["iops", "read.iops", "read.p99", "write.iops"], "display order");
    let opts = CompareOptions {
        metrics: MetricFilter::parse("p99.9", &crate::kinds::metric_names()).unwrap(),
        ..Default::default()
    };
    let c = compare(&[runs("a", vec![a.clone()]), runs("b", vec![b.clone()])], &opts).unwrap();
    assert!(c.units[0].metrics.iter().all(|m| m.key.ends_with("p999")));
    let e = MetricFilter::parse("iops,p98", &crate::kinds::metric_names()).unwrap_err().to_string();
    assert!(e.starts_with("invalid value 'p98' for '--metric'"), "{e}");
    let opts = CompareOptions {
        metrics: MetricFilter::parse("tx", &crate::kinds::metric_names()).unwrap(),
        ..Default::default()
    };
    let e = compare(&[runs("a", vec![a.clone()]), runs("b", vec![b])], &opts).unwrap_err();
    assert!(matches!(e, CompareError::Metric(_)), "{e}");
}

#[test]
fn loadgen_transactions_per_hour_and_latency_are_compared() {
    let mut a = crate::tests::sample();
    let lg = crate::loadgen::LoadgenResult {
        users: 1000,
        transactions_per_hour: 10_000.0,
        latency_ns: a.total.all.lat_ns,
        ..Default::default()
    };
    a.loadgen = Some(lg);
    let mut b = a.clone();
    if let Some(l) = b.loadgen.as_mut() {
        l.transactions_per_hour = 17_500.0;
    }
    let c = compare(&[runs("a", vec![a]), runs("b", vec![b])], &CompareOptions::default()).unwrap();
    let tx = metric(&c.units[0], "tx.tx_per_hour");
    assert_eq!(tx.changes[0].phrase, "tx/hour +75%");
    assert_eq!(tx.changes[0].verdict, ChangeVerdict::Better);
    assert_eq!(metric(&c.units[0], "tx.p99").label, "tx p99");
}

fn sweep(points: &[(&str, f64)], trials: usize) -> SweepResult {
    let base = crate::tests::sample();
    let points = points
        .iter()
        .enumerate()
        .map(|(i, &(qd, iops))| {
            let mut result = base.clone();
            result.total.all.iops = iops;
            let t: Vec<TrialMetrics> = (0..trials)
                .map(|k| TrialMetrics {
                    seed: k as u64,
                    partial: false,
                    iops: iops + k as f64,
                    mb_s: iops * 4096.0 / 1e6,
                    lat_mean_ns: Some(1e5),
                    lat_p99_ns: Some(2e5),
                    achieved_depth: 1.0,
                    read_lat_mean_ns: None,
                    cache_read_pct: None,
                    flush_p99_ns: None,
                })
                .collect();
            SweepPoint {
                index: i,
                params: BTreeMap::from([("qd".to_string(), qd.to_string())]),
                line: 0,
                load: qd.parse().ok(),
                result,
                summary: PointSummary::from_trials(&t),
                trials: if trials > 1 { t } else { Vec::new() },
            }
        })
        .collect();
    SweepResult {
        schema: SWEEP_SCHEMA.into(),
        iolab_version: "0.1.0".into(),
        started_at: "2025-01-02T03:04:05Z".into(),
        partial: false,
        base_seed: 1,
        trials: trials as u32,
        axes: vec![SweepAxis { key: "qd".into(), values: vec![] }],
        load_axis: Some("qd".into()),
        points_planned: 0,
        preconditioning: None,
        points,
        knee: None,
        max_p99: None,
    }
}

fn sweeps(source: &str, w: SweepResult) -> Side {
    Side { source: source.into(), docs: boxed(vec![w]) }
}

#[test]
fn sweeps_are_compared_per_point_matched_by_params() {
    let a = sweep(&[("1", 1000.0), ("2", 2000.0), ("4", 3000.0)], 1);
    let b = sweep(&[("2", 3140.0), ("4", 6000.0), ("8", 9000.0)], 1);
    let c = compare(&[sweeps("a.json", a), sweeps("b.json", b)], &CompareOptions::default()).unwrap();
    assert_eq!(c.kind, "sweeps");
    assert_eq!(c.units.len(), 2);
    let p2 = &c.units[0];
    assert_eq!(p2.params.as_ref().unwrap()["qd"], "2");
    assert_eq!(metric(p2, "iops").changes[0].phrase, "IOPS +57%");
    assert_eq!(metric(&c.units[1], "iops").changes[0].phrase, "IOPS +100%");
    let unmatched: Vec<(&str, &Vec<String>)> =
        c.unmatched_points.iter().map(|p| (p.params["qd"].as_str(), &p.present_in)).collect();
    assert_eq!(unmatched, vec![("1", &vec!["A".to_string()]), ("8", &vec!["B".to_string()])]);
    let text = text(&c);
    assert!(text.contains("point qd=2"), "{text}");
    assert!(text.contains("point qd=1 only in A: not compared"), "{text}");
}

#[test]
fn sweep_points_with_trials_compare_headline_metrics_with_the_test() {
    let a = sweep(&[("2", 1000.0)], 3);
    let b = sweep(&[("2", 1570.0)], 3);
    let c = compare(&[sweeps("a", a), sweeps("b", b)], &CompareOptions::default()).unwrap();
    let u = &c.units[0];
    assert_eq!(u.trials, vec![3, 3]);
    let keys: Vec<&str> = u.metrics.iter().map(|m| m.key.as_str()).collect();
    assert_eq!(keys, vec!["iops", "mb_s", "mean", "p99", "depth"]);
    let iops = metric(u, "iops");
    assert_eq!(iops.sides[0].value, 1001.0);
    assert!(iops.changes[0].test.as_ref().unwrap().significant);
}

#[test]
fn bad_inputs_are_errors_quoting_the_side() {
    let r = crate::tests::sample();
    let e = compare(&[runs("a", vec![r.clone()])], &CompareOptions::default()).unwrap_err();
    assert_eq!(e, CompareError::TooFewSides(1));
    let e = compare(&[runs("a", vec![r.clone()]), runs("tag:x=y", vec![])], &CompareOptions::default())
        .unwrap_err();
    assert_eq!(e.to_string(), "'tag:x=y' holds no run to compare");
    let e = compare(
        &[runs("r.json", vec![r.clone()]), sweeps("s.json", sweep(&[("1", 1.0)], 1))],
        &CompareOptions::default(),
    )
    .unwrap_err();
    assert!(e.to_string().contains("'r.json' (runs) with 's.json' (a sweep)"), "{e}");
    let opts = CompareOptions { alpha: 1.5, ..Default::default() };
    let e = compare(&[runs("a", vec![r.clone()]), runs("b", vec![r])], &opts).unwrap_err();
    assert!(e.to_string().contains("'--alpha'"), "{e}");
    let e = compare(
        &[sweeps("a", sweep(&[("1", 1.0)], 1)), sweeps("b", sweep(&[("2", 1.0)], 1))],
        &CompareOptions::default(),
    )
    .unwrap_err();
    assert_eq!(e, CompareError::NoCommonPoint);
}

#[test]
fn zero_baseline_has_no_percentage_and_no_panic() {
    let mut a = crate::tests::sample();
    a.cpu.cpu_ns_per_io = Some(0.0);
    let b = crate::tests::sample();
    let c = compare(&[runs("a", vec![a]), runs("b", vec![b])], &CompareOptions::default()).unwrap();
    let cpu = metric(&c.units[0], "cpu_per_io");
    assert_eq!(cpu.changes[0].pct, None);
    assert_eq!(cpu.changes[0].phrase, "CPU per I/O n/a (baseline 0)");
    let _ = text(&c);
    let _ = markdown(&c);
}

#[test]
fn compare_json_matches_the_compare_schema() {
    use crate::schema_check::{check_document, COMPARE_SCHEMA as SCHEMA_TEXT};
    let schema: serde_json::Value = serde_json::from_str(SCHEMA_TEXT).unwrap();
    assert_eq!(schema["properties"]["schema"]["const"], COMPARE_SCHEMA);
    // Runs with trials (tests, merged histograms, notes) and sweeps (params, unmatched points).
    let a: Vec<RunResult> = (0..3).map(|s| run_with(990 + s, 100_000, 10, 5_000_000, s)).collect();
    let b: Vec<RunResult> = (0..3).map(|s| run_with(1_980 + s, 50_000, 20, 9_000_000, 10 + s)).collect();
    let mut stripped = b.clone();
    stripped[0].histograms = None;
    let runs_doc = compare(&[runs("a", a), runs("b", stripped)], &CompareOptions::default()).unwrap();
    assert!(!runs_doc.notes.is_empty());
    let sweeps_doc = compare(
        &[sweeps("a", sweep(&[("1", 1.0), ("2", 2.0)], 3)), sweeps("b", sweep(&[("2", 3.0), ("4", 4.0)], 3))],
        &CompareOptions::default(),
    )
    .unwrap();
    assert!(!sweeps_doc.unmatched_points.is_empty());
    for c in [&runs_doc, &sweeps_doc] {
        let v: serde_json::Value = serde_json::from_str(&json(c)).unwrap();
        check_document(&v, SCHEMA_TEXT);
        assert_eq!(schema["properties"].as_object().unwrap().len(), v.as_object().unwrap().len());
    }
}

#[test]
fn a_fio_measured_side_brings_the_definition_notes_to_every_rendering() {
    let a = run_with(1000, 100_000, 0, 0, 1);
    let mut b = run_with(1000, 90_000, 0, 0, 2);
    b.measured_by = crate::tests::sample_fio().measured_by;
    let c =
        compare(&[runs("a.json", vec![a.clone()]), runs("old.json", vec![b])], &CompareOptions::default())
            .unwrap();
    assert!(
        c.notes.iter().any(|n| n.contains("side B ('old.json'): runs measured by fio (fio-3.33)")),
        "{:?}",
        c.notes
    );
    for want in FIO_DEFINITION_NOTES {
        assert!(c.notes.iter().any(|n| n == want), "{want} missing from {:?}", c.notes);
    }
    let (t, md, js) = (text(&c), markdown(&c), json(&c));
    for out in [&t, &md] {
        assert!(
            out.contains("coordinated omission") && out.contains("clat") && out.contains("usr_cpu"),
            "{out}"
        );
    }
    let v: serde_json::Value = serde_json::from_str(&js).unwrap();
    assert!(v["notes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|n| n.as_str().unwrap().contains("coordinated omission")));
    // iolab against iolab: no such notes.
    let c = compare(&[runs("a", vec![a.clone()]), runs("b", vec![a])], &CompareOptions::default()).unwrap();
    assert!(c.notes.iter().all(|n| !n.contains("fio")), "{:?}", c.notes);
}

/// A database run: NOPM, TPM, new-order response times of `lat_ns` (`n` of them) and one device `name`
/// under the file system, `write_ms` per write.
fn db_run(nopm: f64, lat_ns: u64, n: u64, name: &str, write_ms: f64, seed: u64) -> crate::db::DbResult {
    let mut r = crate::db::tests::sample();
    r.header.seed = seed;
    r.run.nopm = nopm;
    r.run.tpm = nopm * 2.2;
    let mut h = LatencyHistogram::new();
    for _ in 0..n {
        h.record(lat_ns);
    }
    let t = &mut r.run.transactions[0];
    (t.committed, t.rolled_back, t.per_minute) = (n, 0, nopm);
    t.latency_ns = h.summary();
    t.histogram = h.to_base64();
    r.devices[0].name = name.into();
    r.devices[0].write_mean_ms = Some(write_ms);
    r
}

fn db(source: &str, r: Vec<crate::db::DbResult>) -> Side {
    Side { source: source.to_string(), docs: boxed(r) }
}

/// The seed's Gen 5 and Gen 6 story: the same database on a faster drive, more new orders per minute and
/// shorter response times; the devices compared by their role though their names differ.
#[test]
fn db_runs_compare_nopm_transactions_and_the_device_by_role() {
    let gen5 = db("gen5", vec![db_run(10_000.0, 8_000_000, 100, "nvme0n1", 0.5, 1)]);
    let gen6 = db("gen6", vec![db_run(15_000.0, 4_000_000, 100, "nvme1n1", 0.2, 1)]);
    let c = compare(&[gen5, gen6], &CompareOptions::default()).unwrap();
    assert_eq!(c.kind, "db");
    let u = &c.units[0];
    let nopm = metric(u, "nopm");
    assert_eq!(nopm.changes[0].phrase, "NOPM +50%");
    assert_eq!(nopm.changes[0].verdict, ChangeVerdict::Better);
    assert_eq!(nopm.best, ["B"]);
    let p99 = metric(u, "txn.new_order.p99");
    assert!(close(p99.changes[0].pct.unwrap(), -50.0, 0.2), "{p99:?}");
    assert_eq!(p99.changes[0].verdict, ChangeVerdict::Better);
    metric(u, "txn.new_order.p95");
    let w = metric(u, "device.filesystem.write.mean");
    assert_eq!(w.label, "device filesystem: write time per request");
    assert!(close(w.sides[1].value, 200_000.0, 1e-6));
    assert_eq!(w.changes[0].verdict, ChangeVerdict::Better);
    assert_eq!(metric(u, "device.filesystem.write.iops").better, Better::Neither);
    assert!(c.notes.iter().any(|n| n.contains("not TPC-C compliant")), "{:?}", c.notes);
    assert!(
        c.notes.iter().any(|n| n.contains("nvme0n1 (filesystem)") && n.contains("nvme1n1")),
        "{:?}",
        c.notes
    );
    crate::schema_check::check_document(
        &serde_json::to_value(&c).unwrap(),
        crate::schema_check::COMPARE_SCHEMA,
    );
    let t = crate::TextExporter.render(&c);
    assert!(t.contains("B vs A: NOPM +50% (better), TPM +50% (better), new_order: p99 -50% (better)"), "{t}");
    let only = MetricFilter::parse("nopm,device", &crate::kinds::metric_names()).unwrap();
    let c = compare(
        &[db("a", vec![db_run(1.0, 1, 1, "x", 1.0, 1)]), db("b", vec![db_run(2.0, 1, 1, "y", 1.0, 1)])],
        &CompareOptions { metrics: only, ..CompareOptions::default() },
    )
    .unwrap();
    assert!(c.units[0].metrics.iter().all(|m| m.key == "nopm" || m.key.starts_with("device.")));
}

#[test]
fn db_trials_merge_response_time_histograms_and_are_tested() {
    let a: Vec<_> = (0..3).map(|i| db_run(10_000.0 + i as f64, 8_000_000, 100 + i, "vda", 0.5, i)).collect();
    let b: Vec<_> = (0..3).map(|i| db_run(15_000.0 + i as f64, 4_000_000, 100, "vda", 0.5, i)).collect();
    let c = compare(&[db("tag:gen=5", a), db("tag:gen=6", b)], &CompareOptions::default()).unwrap();
    let u = &c.units[0];
    assert_eq!(metric(u, "txn.new_order.p99").sides[0].source, ValueSource::MergedHistograms);
    assert!(metric(u, "nopm").changes[0].test.as_ref().unwrap().significant);
}

#[test]
fn a_db_run_and_an_io_run_are_refused_naming_both() {
    let e = compare(
        &[
            db("5a1b", vec![db_run(1.0, 1, 1, "vda", 1.0, 1)]),
            runs("run.json", vec![run_with(10, 1000, 0, 0, 1)]),
        ],
        &CompareOptions::default(),
    )
    .unwrap_err();
    let m = e.to_string();
    assert!(m.contains("'5a1b' (a database run, iolab db)") && m.contains("'run.json' (an I/O run)"), "{m}");
}

#[test]
fn db_sweeps_compare_point_by_point_by_users() {
    let a = crate::db_sweep::tests::sample();
    let mut b = a.clone();
    b.points.truncate(3);
    for p in &mut b.points {
        p.result.run.nopm *= 2.0;
    }
    let side = |s: &str, w| Side { source: s.into(), docs: boxed(vec![w]) };
    let c = compare(&[side("a", a), side("b", b)], &CompareOptions::default()).unwrap();
    assert_eq!(c.kind, "db_sweeps");
    assert_eq!(c.units.len(), 3);
    assert_eq!(c.units[2].params.as_ref().unwrap()["users"], "4");
    assert_eq!(metric(&c.units[0], "nopm").changes[0].phrase, "NOPM +100%");
    assert_eq!(c.unmatched_points.len(), 1);
}

/// A tpch query set whose queries took `scale` times the sample's, on device `name`.
fn tpch_run(scale: f64, name: &str, seed: u64) -> crate::db_tpch::TpchResult {
    let mut r = crate::db_tpch::tests::sample();
    r.header.seed = seed;
    for q in &mut r.queries {
        q.seconds *= scale;
        q.runs_s = vec![q.seconds];
    }
    r.power.total_s = r.queries.iter().map(|q| q.seconds).sum();
    r.power.geomean_s *= scale;
    r.power.measured_s *= scale;
    r.devices[0].name = name.into();
    r
}

fn tpch(source: &str, r: Vec<crate::db_tpch::TpchResult>) -> Side {
    Side { source: source.to_string(), docs: boxed(r) }
}

/// The seed's story: the same query set on faster storage completes in about half the time; the compare
/// says so in one line, and shows each query's time with its ratio.
#[test]
fn tpch_runs_compare_each_query_the_total_and_the_geomean_as_ratios() {
    let c = compare(
        &[tpch("slow", vec![tpch_run(1.0, "loop0", 1)]), tpch("fast", vec![tpch_run(0.52, "loop1", 1)])],
        &CompareOptions::default(),
    )
    .unwrap();
    assert_eq!(c.kind, "db_tpch");
    let u = &c.units[0];
    let total = metric(u, "query_total");
    assert_eq!(total.label, "total query time");
    assert_eq!(total.changes[0].verdict, ChangeVerdict::Better);
    assert_eq!(total.changes[0].phrase, "total query time 0.52x (-48%)");
    let q14 = metric(u, "q14.time");
    assert_eq!(q14.label, "Q14 time");
    assert!(close(q14.sides[1].value, 0.012 * 0.52 * 1e9, 1e-6), "{q14:?}");
    metric(u, "q2.time");
    metric(u, "query_geomean");
    // The devices compare by role though their names differ.
    assert_eq!(metric(u, "device.filesystem.read.iops").better, Better::Neither);
    assert!(c.notes.iter().any(|n| n.contains("not TPC-H compliant")), "{:?}", c.notes);
    crate::schema_check::check_document(
        &serde_json::to_value(&c).unwrap(),
        crate::schema_check::COMPARE_SCHEMA,
    );
    let t = crate::TextExporter.render(&c);
    assert!(t.contains("B vs A: total query time 0.52x (-48%) (better)"), "{t}");
    let row = t.lines().find(|l| l.starts_with("Q14 time")).unwrap_or_else(|| panic!("{t}"));
    assert!(row.contains("0.52x -48% better"), "{row}");
}

#[test]
fn tpch_trials_are_tested_and_a_query_not_every_side_ran_drops_out() {
    let a: Vec<_> = (0..3).map(|i| tpch_run(1.0 + 0.01 * i as f64, "vda", i)).collect();
    let mut b: Vec<_> = (0..3).map(|i| tpch_run(0.5 + 0.01 * i as f64, "vda", i)).collect();
    for r in &mut b {
        r.queries.retain(|q| q.number == 14);
    }
    let c = compare(&[tpch("a", a), tpch("b", b)], &CompareOptions::default()).unwrap();
    let u = &c.units[0];
    assert!(metric(u, "query_total").changes[0].test.as_ref().unwrap().significant);
    assert!(u.metrics.iter().all(|m| m.key != "q2.time"));
    metric(u, "q14.time");
}

#[test]
fn copies_compare_time_rate_and_both_sides_devices() {
    let a = crate::db_copy::tests::sample();
    let mut b = a.clone();
    b.copy.seconds = 0.25;
    b.copy.mb_per_s = 176.2;
    b.destination_devices[0].write_mean_ms = Some(0.5);
    let side = |s: &str, r| Side { source: s.into(), docs: boxed(vec![r]) };
    let c = compare(&[side("a", a), side("b", b)], &CompareOptions::default()).unwrap();
    assert_eq!(c.kind, "db_copy");
    let u = &c.units[0];
    assert_eq!(metric(u, "copy_time").changes[0].phrase, "copy time 0.50x (-50%)");
    assert_eq!(metric(u, "mb_s").changes[0].verdict, ChangeVerdict::Better);
    metric(u, "device.source.filesystem.read.mb_s");
    let w = metric(u, "device.destination.filesystem.write.mean");
    assert_eq!(w.changes[0].verdict, ChangeVerdict::Better);
    let t = crate::TextExporter.render(&c);
    assert!(t.contains("B vs A: MB/s +100% (better), copy time 0.50x (-50%) (better)"), "{t}");
}

#[test]
fn a_tpch_run_beside_a_tpcc_run_a_copy_or_an_io_run_is_refused_naming_both() {
    let others = [
        db("5a1b", vec![db_run(1.0, 1, 1, "vda", 1.0, 1)]),
        Side { source: "c0de".into(), docs: boxed(vec![crate::db_copy::tests::sample()]) },
        runs("run.json", vec![run_with(10, 1000, 0, 0, 1)]),
    ];
    for (other, what) in others.into_iter().zip(["a tpcc run", "a database copy", "an I/O run"]) {
        let source = other.source.clone();
        for sides in [vec![tpch("t.json", vec![tpch_run(1.0, "vda", 1)]), other.clone()], {
            vec![other.clone(), tpch("t.json", vec![tpch_run(1.0, "vda", 1)])]
        }] {
            let m = compare(&sides, &CompareOptions::default()).unwrap_err().to_string();
            assert!(m.contains("'t.json' (a tpch query set, iolab db tpch)"), "{m}");
            assert!(m.contains(&format!("'{source}' ({what}")), "{m}");
        }
    }
}

/// Issue 37, item 5: two tpcc runs whose settings differ (`--memory 32M` against none, other users) were
/// compared without a word of it; the notes (every output's) now name each setting that differs.
#[test]
fn tpcc_runs_whose_settings_differ_say_which() {
    let a = db_run(1500.0, 2_000_000, 100, "vda", 1.0, 1);
    let mut b = db_run(900.0, 4_000_000, 100, "vda", 1.0, 2);
    b.config.users = 16;
    b.engine.settings.push(crate::db::Setting {
        name: "memory_limit".into(),
        value: "32.0 MiB for pages (cgroup-v1, peak 31.9 MiB of pages, 12.0 MiB private memory apart)".into(),
    });
    let c = compare(&[db("a", vec![a.clone()]), db("b", vec![b])], &CompareOptions::default()).unwrap();
    let note = c.notes.iter().find(|n| n.starts_with("settings differ")).expect("a note on the settings");
    assert_eq!(
        note,
        "settings differ between the sides: --users A 2, B 16; --memory A none, B 32.0 MiB for pages; the differences are these settings' as much as the storage's"
    );
    let same = compare(&[db("a", vec![a.clone()]), db("b", vec![a])], &CompareOptions::default()).unwrap();
    assert!(same.notes.iter().all(|n| !n.starts_with("settings differ")), "{:?}", same.notes);
}
