//! The find-max document against what `iolab run --find-max` has always written, and its renderings.

use serde_json::{json, Value};

use super::*;
use crate::tests::{csv, json, text};
use crate::verdict::Check;

/// A step's verdict as the search fills it: database latency and IOPS checks, an Exchange sizing.
fn verdict(pass: bool, achieved: f64) -> Verdict {
    let check = |name: &str, limit: f64, measured: f64, unit: &str| Check {
        name: name.into(),
        group: "db".into(),
        limit,
        measured: Some(measured),
        unit: unit.into(),
        single_io_max_ns: (unit == "ns").then_some(5e6),
        pass: measured <= limit || unit == "iops" && measured >= limit,
    };
    Verdict {
        pass,
        reasons: if pass {
            vec![]
        } else {
            vec!["db IOPS: achieved 1,500.0 < 1,900.0 (target less tolerance)".into()]
        },
        achieved_iops: Some(achieved),
        target_iops: Some(2000.0),
        iops_tolerance_pct: 5.0,
        checks: vec![check("db_read_avg", 20e6, 5e6, "ns"), check("iops", 1900.0, achieved, "iops")],
        sizing: Some(crate::verdict::Sizing::sample(2000, "2,000 mailboxes")),
        provisional: Vec::new(),
    }
}

fn search() -> FindMaxResult {
    let mut f = FindMaxResult::new("mailboxes", 1000.0, 20.0, "2025-01-02T03:04:05Z".into());
    f.steps.push(FindMaxStep::new(1000.0, 2.0, verdict(true, 998.0)));
    f.steps.push(FindMaxStep::new(2000.0, 2.0, verdict(false, 1500.0)));
    f.max = Some(1000.0);
    f.profile = Some("exchange-2010".into());
    f.targets = Some(vec!["sim:fixed".into()]);
    f
}

#[test]
fn find_max_json_is_byte_identical_to_the_untyped_document() {
    // The document exactly as crates/cli/src/profile.rs built it with `json!` before it had a type, plus
    // `limited_by` (issue 14: why a search stopped before it converged), and `confirmed`, `noise`, each step's
    // `repeat` and `run_id` (issue 25: the boundary run again, the answer's noise, each step's run saved).
    let f = search();
    let untyped = json!({
        "confirmed": f.confirmed,
        "noise": f.noise,
        "schema": "iolab.findmax/1",
        "iolab_version": f.iolab_version,
        "started_at": f.started_at,
        "profile": f.profile,
        "targets": f.targets,
        "variable": f.variable,
        "start": f.start,
        "resolution_pct": f.resolution_pct,
        "interrupted": f.interrupted,
        "limited_by": f.limited_by,
        "max": f.max,
        "steps": f.steps.iter().map(|s| json!({
            "value": s.value,
            "pass": s.verdict.pass,
            "target_iops": s.verdict.target_iops,
            "achieved_iops": s.verdict.achieved_iops,
            "measured_s": s.measured_s,
            "reasons": s.verdict.reasons,
            "repeat": s.repeat,
            "run_id": s.run_id,
            "verdict": s.verdict,
        })).collect::<Vec<_>>(),
    });
    assert_eq!(json(&f), serde_json::to_string_pretty(&untyped).unwrap() + "\n");
}

#[test]
fn find_max_golden_document_round_trips_byte_for_byte() {
    // The golden file of `iolab run --profile exchange-2010 ... --find-max` (less its volatile fields).
    let golden = include_str!("../../../cli/tests/cli/golden/exchange_find_max.json");
    let f: FindMaxResult = serde_json::from_str(golden).unwrap();
    assert_eq!(f.schema, FIND_MAX_SCHEMA);
    let mut v: Value = serde_json::from_str(&json(&f)).unwrap();
    crate::schema_check::check_document(&v, crate::schema_check::FIND_MAX_SCHEMA);
    for k in ["iolab_version", "started_at"] {
        v.as_object_mut().unwrap().remove(k);
    }
    // The golden runs scrub `run_id` (a catalog id) wherever it is.
    for s in v["steps"].as_array_mut().unwrap() {
        s.as_object_mut().unwrap().remove("run_id");
    }
    assert_eq!(serde_json::to_string_pretty(&v).unwrap() + "\n", golden);
}

#[test]
fn find_max_renders_without_panicking_on_any_shape() {
    // A shape that does not parse is shown as stored JSON by `iolab show`; whatever parses renders.
    for doc in [
        json!({}),
        json!([]),
        json!({"steps": [{}]}),
        json!({"variable": "rate_iops", "max": null}),
        json!({"steps": [1, "x", null]}),
    ] {
        if let Ok(f) = serde_json::from_value::<FindMaxResult>(doc) {
            let _ = text(&f);
            let _ = csv(&f);
        }
    }
    let doc = json!({"variable": "mailboxes", "max": 300.0, "steps": [
        {"value": 100.0, "pass": true, "target_iops": 18.0, "achieved_iops": 18.1, "measured_s": 1.0},
        {"value": 600.0, "pass": false, "reasons": ["db read avg 30 ms > 20 ms"]}]});
    let f: FindMaxResult = serde_json::from_value(doc).unwrap();
    let t = text(&f);
    assert!(t.contains("max mailboxes that passes: 300"), "{t}");
    assert!(csv(&f).contains("1,100,true,18,18.1,1\n"));
}

#[test]
fn find_max_text_has_a_row_per_step_with_reasons() {
    let t = text(&search());
    let lines: Vec<&str> = t.lines().collect();
    assert_eq!(lines[0], "find-max search over mailboxes · exchange-2010 · started 2025-01-02T03:04:05Z");
    assert!(lines[1].starts_with("step  mailboxes  target IOPS  achieved  db read avg  db read max*"), "{t}");
    assert!(
        lines[2].starts_with("1         1,000      2,000.0     998.0") && lines[2].ends_with("PASS"),
        "{t}"
    );
    assert!(lines[3].starts_with("2         2,000") && lines[3].ends_with("FAIL"), "{t}");
    assert_eq!(lines[4], "step 2 failed: db IOPS: achieved 1,500.0 < 1,900.0 (target less tolerance)");
    assert_eq!(
        lines[5],
        "max mailboxes that passes: 1,000 of 1.00 MiB each (passed 1 of 1 runs; FAIL at 2,000 in 1 of 1; not \
         confirmed: the boundary was not run again; resolution 20% or 1 mailboxes)"
    );
    let c = csv(&search());
    assert_eq!(c, "step,value,pass,target_iops,achieved_iops,measured_s\n1,1000,true,2000,998,2\n2,2000,false,2000,1500,2\n");
}

#[test]
fn find_max_json_matches_the_find_max_schema() {
    let schema: Value = serde_json::from_str(crate::schema_check::FIND_MAX_SCHEMA).unwrap();
    assert_eq!(schema["properties"]["schema"]["const"], FIND_MAX_SCHEMA);
    let v: Value = serde_json::from_str(&json(&search())).unwrap();
    crate::schema_check::check_document(&v, crate::schema_check::FIND_MAX_SCHEMA);
    let mut none = search();
    (none.max, none.profile, none.targets, none.interrupted) = (None, None, None, true);
    none.steps.truncate(1);
    none.steps[0].verdict.sizing = None;
    crate::schema_check::check_document(
        &serde_json::to_value(&none).unwrap(),
        crate::schema_check::FIND_MAX_SCHEMA,
    );
    // Every declared property is serialised (all are required).
    let props = schema["properties"].as_object().unwrap();
    assert_eq!(props.len(), v.as_object().unwrap().len());
}

/// Issue 25, item 6: the answer says whether its boundary held when run again and how noisy the checks were
/// between runs of one value, and names the runs of the steps.
#[test]
fn find_max_text_says_the_boundary_held_and_the_noise() {
    let mut f = search();
    let mut again = verdict(true, 990.0);
    again.checks[0].measured = Some(6e6); // db read avg 5 ms, then 6 ms: 18% of their mean
    f.steps.push(FindMaxStep { repeat: true, ..FindMaxStep::new(1000.0, 2.0, again) });
    f.steps.push(FindMaxStep { repeat: true, ..FindMaxStep::new(2000.0, 2.0, verdict(false, 1400.0)) });
    f.confirmed = true;
    f.noise = FindMaxNoise::of(&f.steps);
    for (i, s) in f.steps.iter_mut().enumerate() {
        s.run_id = Some(format!("r{i}"));
    }
    let n = f.noise.clone().unwrap();
    assert_eq!((n.check.as_str(), n.value), ("db_read_avg (db)", 1000.0));
    assert!((n.spread_pct - 100.0 / 5.5).abs() < 1e-9, "{n:?}");
    let t = text(&f);
    assert!(t.contains("3 (again)") && t.contains(" r2\n"), "{t}");
    assert!(
        t.contains("passed 2 of 2 runs; FAIL at 2,000 in 2 of 2; the boundary held when run again"),
        "{t}"
    );
    assert!(t.contains("noise: db_read_avg (db) moved 18.2% between runs of 1,000"), "{t}");
    let v: Value = serde_json::from_str(&json(&f)).unwrap();
    crate::schema_check::check_document(&v, crate::schema_check::FIND_MAX_SCHEMA);
}
