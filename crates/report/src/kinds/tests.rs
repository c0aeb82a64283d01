//! Tests of the registry: every kind is named once, recognised by its schema and read back; the catalog's
//! columns of each kind (what the catalog's own extraction computed before the kinds declared them); and a
//! kind that exists for the tests only ([`super::toy`]), declared in one file and one line of the list, goes
//! through every path: read, rendered, listed, reported and compared.

use serde_json::{json, Value};

use super::toy::{ToyResult, TOY_SCHEMA};
use super::*;
use crate::compare::{compare, CompareOptions, MetricFilter, Side};
use crate::html::{render_html, render_markdown, ReportDoc};
use crate::{JsonExporter, TextExporter};

/// A real `iolab.result/1` document (sim target, virtual clock, seed 1), as `--json` wrote it.
const RUN: &str = include_str!("../../../catalog/testdata/run.json");

fn toy(ops_per_s: f64) -> ToyResult {
    ToyResult {
        schema: TOY_SCHEMA.into(),
        iolab_version: "0.1.0".into(),
        ops_per_s,
        read_p99_ns: 1e6 / ops_per_s,
    }
}

#[test]
fn every_kind_and_entry_kind_is_named_once() {
    let mut seen: Vec<&str> = Vec::new();
    for k in KINDS {
        for name in [k.schema(), k.name()] {
            assert!(!seen.contains(&name), "{name} names two kinds");
            seen.push(name);
        }
    }
    let mut typed: Vec<&str> = Vec::new();
    for (_, e) in entry_kinds() {
        for name in std::iter::once(e.stored).chain(e.typed.iter().copied()) {
            assert!(!typed.contains(&name) || name == e.stored, "{name} names two entry kinds");
            typed.push(name);
        }
    }
    let places: Vec<u16> = listing().iter().map(|c| c.place).collect();
    assert!(places.windows(2).all(|w| w[0] < w[1]), "one column a place: {places:?}");
}

#[test]
fn entry_kinds_parse_as_stored_and_as_typed() {
    let stored = |t: &str| entry_kind(t).map(|(_, e)| e.stored);
    assert_eq!(stored("find-max"), Some("find_max"));
    assert_eq!(stored("Sweep"), Some("sweep"));
    assert_eq!(stored("runs"), None);
    assert_eq!(stored("db-sweep"), Some("db_sweep"));
    assert_eq!(stored("dbtpch"), Some("db_tpch"));
    assert_eq!(stored("db_copy"), Some("db_copy"));
    assert_eq!(stored(" verify "), Some("verify"));
    let (kind, e) = entry_kind("verify").unwrap();
    assert_eq!((kind.name(), e.printed()), ("run", "verify"), "a check holds a run's document");
    assert_eq!(entry_kind("db-tpch").unwrap().1.printed(), "db-tpch");
}

#[test]
fn a_document_is_recognised_by_its_schema_and_read_back() {
    let docs: Vec<Box<dyn Document>> = vec![
        Box::new(crate::tests::sample()),
        Box::new(crate::db::tests::sample()),
        Box::new(crate::db_sweep::tests::sample()),
        Box::new(crate::db_tpch::tests::sample()),
        Box::new(crate::db_copy::tests::sample()),
        Box::new(crate::mrc::tests::sample()),
        Box::new(toy(1000.0)),
    ];
    for d in docs {
        let json = JsonExporter.render(d.as_ref());
        let back = parse_text(&json).unwrap_or_else(|e| panic!("{}: {e}", d.kind().name()));
        assert_eq!(back.kind(), d.kind());
        assert_eq!(TextExporter.render(back.as_ref()), TextExporter.render(d.as_ref()));
        assert_eq!(JsonExporter.render(back.as_ref()), json);
    }
    assert_eq!(parse_text("{}").unwrap_err(), Unreadable::NoSchema);
    assert!(matches!(parse(json!({"schema": "iolab.other/1"})), Err(Unreadable::UnknownSchema(_))));
    assert!(matches!(parse(json!({"schema": "iolab.db/1"})), Err(Unreadable::Invalid("iolab.db/1", _))));
    assert!(expected(|k| k.compare().is_some()).starts_with("iolab.result/1 (run), iolab.sweep/1 (sweep), "));
}

#[test]
fn index_reads_a_runs_columns() {
    let doc: Value = serde_json::from_str(RUN).unwrap();
    let c = index("run", &doc).unwrap();
    assert_eq!(c.profile.as_deref(), Some("randread 4k qd32"));
    assert_eq!(c.targets, ["sim:fixed,latency=100us,servers=8,size=1G"]);
    assert_eq!(c.figure("iops"), Some(79_996.0));
    assert_eq!(c.figure("p99_ns"), Some(400_000.0));
    assert_eq!(c.run_id.as_deref(), Some("d89d1678"));
    assert!(!c.partial);
    assert_eq!(index("verify", &doc).unwrap(), c, "a check lists as a run does");
    assert_eq!(index("sweep", &doc).unwrap_err(), "its schema is 'iolab.result/1'");
    assert!(index("runz", &doc).unwrap_err().contains("'runz'"));
    assert_eq!(
        index("run", &json!([1, 2, 3])).unwrap(),
        iolab_doc::Columns::default(),
        "garbage: no columns"
    );
}

#[test]
fn columns_of_a_sweep_take_the_best_point() {
    let doc = json!({
        "started_at": "2025-01-01T00:00:00Z",
        "partial": false,
        "points": [
            {"result": {"config": {"plan": {"name": "j", "targets": [{"name": "mem:1G"}]}},
                        "total": {"all": {"iops": 10.0, "mb_s": 1.0, "lat_ns": {"p99": 5}}}}},
            {"result": {"config": {"plan": {"name": "j", "targets": [{"name": "mem:1G"}, {"name": "null:1G"}]}},
                        "total": {"all": {"iops": 20.0, "mb_s": 2.0, "lat_ns": {"p99": 9}}}}}
        ]
    });
    let c = index("sweep", &doc).unwrap();
    assert_eq!(c.profile.as_deref(), Some("j"));
    assert_eq!(c.targets, ["mem:1G", "null:1G"]);
    assert_eq!((c.figure("iops"), c.figure("mb_s"), c.figure("p99_ns")), (Some(20.0), Some(2.0), Some(9.0)));
}

/// Issue 37, item 8: `iolab runs` showed a 3-trial sweep's first trial (42,433 IOPS) where its own table
/// shows the mean (33,048.7): the list shows the best point's means, and says they are.
#[test]
fn columns_of_a_sweep_with_trials_are_the_best_point_s_means() {
    let m = |mean: f64| json!({"mean": mean});
    let doc = json!({
        "points": [
            {"result": {"total": {"all": {"iops": 42433.0, "mb_s": 9.0, "lat_ns": {"p99": 1}}}},
             "summary": {"n": 3, "iops": m(33048.7), "mb_s": m(4.0), "lat_p99_ns": m(700.0)}},
            {"result": {"total": {"all": {"iops": 30000.0, "mb_s": 9.0, "lat_ns": {"p99": 1}}}},
             "summary": {"n": 3, "iops": m(34000.0), "mb_s": m(5.0), "lat_p99_ns": m(800.0)}}
        ]
    });
    let c = index("sweep", &doc).unwrap();
    let figures = (c.figure("iops"), c.figure("mb_s"), c.figure("p99_ns"), c.figure("trials"));
    assert_eq!(figures, (Some(34000.0), Some(5.0), Some(800.0), Some(3.0)), "the best mean, not a trial");
    assert_eq!((super::columns::TRIALS.cell)(&c), "mean of 3 trials");
}

#[test]
fn columns_of_a_db_run_and_of_a_sweep_over_users() {
    let run = |users: u32, nopm: f64| {
        json!({
            "schema": "iolab.db/1", "workload": "tpcc", "start_unix_s": 1_700_000_000u64, "partial": false,
            "engine": {"name": "sqlite", "dir": "/mnt/t/db"},
            "config": {"users": users},
            "run": {"nopm": nopm, "transactions": [
                {"name": "payment", "latency_ns": {"p99": 1000}},
                {"name": "new_order", "latency_ns": {"p99": 5000}}]},
            "devices": [{"name": "nvme0n1p1"}, {"name": "nvme0n1"}]
        })
    };
    let c = index("db", &run(1, 1500.0)).unwrap();
    assert_eq!(c.profile.as_deref(), Some("tpcc sqlite"));
    assert_eq!(c.targets, ["nvme0n1p1", "nvme0n1"]);
    assert_eq!((c.figure("nopm"), c.figure("p99_ns"), c.figure("iops")), (Some(1500.0), Some(5000.0), None));
    assert_eq!(c.started_at.as_deref(), Some("2023-11-14T22:13:20Z"));
    let sweep = json!({
        "schema": "iolab.dbsweep/1", "partial": true,
        "points": [{"users": 1, "result": run(1, 1500.0)}, {"users": 2, "result": run(2, 2500.0)}]
    });
    let c = index("db_sweep", &sweep).unwrap();
    assert_eq!((c.figure("nopm"), c.partial), (Some(2500.0), true));
    let mut no_devices = run(1, 1.0);
    no_devices["devices"] = json!([]);
    assert_eq!(index("db", &no_devices).unwrap().targets, ["/mnt/t/db"]);
}

#[test]
fn columns_of_a_query_set_and_of_a_copy() {
    let tpch = json!({
        "schema": "iolab.dbtpch/1", "workload": "tpch", "start_unix_s": 1_735_689_600u64, "partial": false,
        "engine": {"name": "sqlite", "dir": "/mnt/gen5/db"},
        "power": {"total_s": 8.5, "geomean_s": 4.25}, "devices": [{"name": "nvme0n1"}],
    });
    let c = index("db_tpch", &tpch).unwrap();
    assert_eq!((c.figure("query_total_s"), c.figure("query_geomean_s")), (Some(8.5), Some(4.25)));
    assert_eq!(
        (c.profile.as_deref(), c.targets.as_slice()),
        (Some("tpch sqlite"), &["nvme0n1".to_string()][..])
    );
    let copy = json!({
        "schema": "iolab.dbcopy/1", "workload": "copy", "start_unix_s": 1_735_689_600u64,
        "engine": {"name": "postgres", "dir": "/mnt/a/db"}, "copy": {"seconds": 1.5, "mb_per_s": 177.0},
        "source_devices": [{"name": "loop0"}], "destination_devices": [{"name": "loop1"}, {"name": "loop0"}],
    });
    let c = index("db_copy", &copy).unwrap();
    assert_eq!((c.figure("mb_s"), c.profile.as_deref()), (Some(177.0), Some("copy postgres")));
    assert_eq!(c.targets, ["loop0", "loop1"]);
    assert!(index("db", &tpch).is_err() && index("db_tpch", &copy).is_err(), "each only its own schema");
}

/// The `--metric` names, in the order the filter lists them when refusing one (the I/O metrics, the
/// database's, a query set's, a copy's, a ycsb run's, an AI training run's, then the toy's).
#[test]
fn metric_names_gather_every_kinds_in_order() {
    let names: Vec<&str> = metric_names().into_iter().map(|(n, _)| n).collect();
    let before = "iops, mb_s, mbs, mb/s, mean, p50, p99, p999, p99.9, max, service_mean, service, cpu_per_io, cpu, \
                  depth, tx_per_hour, tx/hour, latency, lat, tx, nopm, tpm, per_minute, p95, busy, device, time, \
                  query_total, query_geomean, copy_time";
    assert_eq!(names.join(", "), format!("{before}, ops_per_s, ops, au, samples, toy_ops_per_s, toy_ops"));
}

/// The iolab runs columns, in their places: a YCSB run's ops/s and the toy's between MB/s and NOPM, an AI
/// training run's AU and samples/s after NOPM, then a checkpoint run's write and read GiB/s; what a sweep's figures are (means over trials) after them.
#[test]
fn listing_columns_come_from_the_kinds_in_their_places() {
    let headers: Vec<&str> = listing().iter().map(|c| c.header).collect();
    let want = [
        "IOPS",
        "MB/s",
        "ops/s",
        "toy ops/s",
        "NOPM",
        "AU",
        "samples/s",
        "ckpt write GiB/s",
        "ckpt read GiB/s",
        "queries (total / geomean)",
        "p99",
        "figures",
    ];
    assert_eq!(headers, want);
}

/// A new kind is one file and one line of the list: nothing else in the crate names the toy, and it is read,
/// rendered, indexed, listed, reported and compared like every kind.
#[test]
fn a_new_kind_goes_through_every_path_from_its_one_file() {
    let doc = parse_text(&JsonExporter.render(&toy(1000.0))).unwrap();
    assert_eq!(TextExporter.render(doc.as_ref()), "toy: 1000 ops/s, read p99 1000 ns\n");
    assert_eq!(
        crate::CsvExporter.render(doc.as_ref()).unwrap_err().to_string(),
        "a toy document has no csv form"
    );
    let c = index("toy", &serde_json::to_value(toy(1000.0)).unwrap()).unwrap();
    assert_eq!(c.figure("toy_ops_per_s"), Some(1000.0));
    let ops = listing().into_iter().find(|c| c.header == "toy ops/s").unwrap();
    assert_eq!((ops.cell)(&c), "1000");
    assert_eq!(entry_kind("toy").map(|(k, _)| k.name()), Some("toy"));
    let input = |label: &str, body: Box<dyn Document>| ReportDoc {
        label: label.into(),
        source: format!("{label}.json"),
        tags: Vec::new(),
        note: None,
        body,
    };
    let docs = [input("t", doc.clone()), input("r", Box::new(crate::tests::sample()))];
    let html = render_html("toys", &docs);
    assert!(html.contains("<td>toy</td>") && html.contains("<h2>Toy: t</h2>"), "{html}");
    assert!(html.find("Toy: t").unwrap() > html.find("id=\"run-1\"").unwrap(), "after the runs' sections");
    assert!(render_markdown("toys", &docs).contains("### Toy: t"));
    let side = |source: &str, d: Box<dyn Document>| Side { source: source.into(), docs: vec![d] };
    let c = compare(&[side("a", doc.clone()), side("b", Box::new(toy(2000.0)))], &CompareOptions::default())
        .unwrap();
    assert_eq!(c.kind, "toy");
    assert_eq!(c.units[0].metrics[0].changes[0].phrase, "toy ops/s +100%");
    let only = MetricFilter::parse("toy_ops", &metric_names()).unwrap();
    let c = compare(
        &[side("a", doc.clone()), side("b", Box::new(toy(2000.0)))],
        &CompareOptions { metrics: only, ..CompareOptions::default() },
    )
    .unwrap();
    assert_eq!(c.units[0].metrics.len(), 1);
    let e =
        compare(&[side("a", doc), side("r", Box::new(crate::tests::sample()))], &CompareOptions::default())
            .unwrap_err();
    assert!(e.to_string().contains("cannot compare 'a' (a toy run) with 'r' (an I/O run)"), "{e}");
}

/// The warnings a kind's test document carries.
const WARNINGS: [&str; 3] = [
    "the devices read nothing in the window: the database was served from memory",
    "a <second> warning & its \"quotes\"",
    "a third warning",
];

/// A document of `kind` carrying warnings where the kind has them ([`WARNINGS`], or the stats crate's for
/// I/O runs), with what its warnings say; every kind of [`KINDS`] must have one here.
fn warned(kind: &dyn Kind) -> (Box<dyn Document>, Vec<String>) {
    use iolab_stats::Warning;
    let strings = || WARNINGS.iter().map(|w| w.to_string()).collect::<Vec<_>>();
    let stats = vec![
        Warning::HighVariability { metric: "iops".into(), cv: 0.4, ramp_s: None },
        Warning::BufferedIo { set_by: None },
        Warning::HighVariability { metric: "p99".into(), cv: 0.5, ramp_s: Some(2.0) },
    ];
    let messages = |w: &[Warning]| w.iter().map(Warning::message).collect::<Vec<_>>();
    let doc: Box<dyn Document> = match kind.name() {
        "run" => Box::new(crate::RunResult { warnings: stats.clone(), ..crate::tests::sample() }),
        "sweep" => {
            let mut s = crate::sweep::tests::sample_sweep();
            s.points.iter_mut().for_each(|p| p.result.warnings.clear());
            s.points[1].result.warnings = stats[..2].to_vec();
            s.points[3].result.warnings = stats[2..].to_vec();
            Box::new(s)
        }
        "compare" => {
            let side = |s: &str| Side { source: s.into(), docs: vec![Box::new(crate::tests::sample())] };
            Box::new(compare(&[side("a"), side("b")], &CompareOptions::default()).unwrap())
        }
        "find-max" => Box::new(crate::find_max::FindMaxResult::new("mailboxes", 1000.0, 10.0, String::new())),
        "mrc" => Box::new(crate::mrc::tests::sample()),
        "db" => Box::new(crate::db::DbResult { warnings: strings(), ..crate::db::tests::sample() }),
        "db sweep" => {
            // The same warning at two user counts is one warning, as the sweep's text prints it.
            let mut s = crate::db_sweep::tests::sample();
            s.points[0].result.warnings = strings();
            for p in &mut s.points[1..] {
                p.result.warnings = vec![WARNINGS[0].to_string()];
            }
            Box::new(s)
        }
        "db tpch" => {
            Box::new(crate::db_tpch::TpchResult { warnings: strings(), ..crate::db_tpch::tests::sample() })
        }
        "db copy" => {
            Box::new(crate::db_copy::CopyResult { warnings: strings(), ..crate::db_copy::tests::sample() })
        }
        "db ycsb" => Box::new(ycsb(strings())),
        "ai train" => {
            // A document `iolab ai train` wrote (the built-in tiny workload), its warnings replaced.
            let text = include_str!("testdata/ai_train.json");
            let doc: crate::ai::AiTrainResult = serde_json::from_str(text).expect("an ai-train document");
            Box::new(crate::ai::AiTrainResult { warnings: strings(), ..doc })
        }
        "ai checkpoint" => {
            // A document `iolab ai checkpoint` wrote (the built-in tiny workload), its warnings replaced.
            let doc: super::ai_checkpoint::AiCheckpointResult =
                serde_json::from_str(include_str!("testdata/ai_checkpoint.json"))
                    .expect("an ai-checkpoint document");
            Box::new(super::ai_checkpoint::AiCheckpointResult { warnings: strings(), ..doc })
        }
        "toy" => Box::new(toy(1000.0)),
        other => panic!("kind '{other}' has no document with warnings in this test: add one"),
    };
    let want = match kind.name() {
        "run" | "sweep" => messages(&stats),
        "db" | "db sweep" | "db tpch" | "db copy" | "db ycsb" | "ai train" | "ai checkpoint" => strings(),
        _ => Vec::new(),
    };
    (doc, want)
}

/// A YCSB run made of a tpcc run's parts.
fn ycsb(warnings: Vec<String>) -> super::db_ycsb::YcsbResult {
    let db = crate::db::tests::sample();
    super::db_ycsb::YcsbResult {
        header: crate::db::DbHeader { schema: super::db_ycsb::DB_YCSB_SCHEMA.into(), ..db.header },
        engine: db.engine,
        config: super::db_ycsb::YcsbConfig {
            workload: "a".into(),
            records: 1000,
            fields: 10,
            field_bytes: 100,
            distribution: "zipfian".into(),
            max_scan: 100,
            users: 4,
            ramp_s: 1.0,
            duration_s: 5.0,
            mix: Vec::new(),
        },
        build: db.build,
        run: super::db_ycsb::YcsbRun {
            measured_s: 5.0,
            ops_per_s: 1000.0,
            operations: db.run.transactions,
            window_end: None,
        },
        devices: db.devices,
        database_io: db.database_io,
        warnings,
        partial: false,
    }
}

/// Issue 37, item 4: a sweep over users printed three warnings, and the report's page and Markdown showed
/// none (its section had no place for them). The report now lists every input's warnings itself, whatever
/// its kind: for every kind of the registry, a document with N warnings has N in its text, N rows of the
/// page's Warnings table and N `- warning:` lines of the Markdown, each saying what the text says.
#[test]
fn every_kinds_warnings_reach_the_text_the_page_and_the_markdown() {
    for kind in KINDS {
        let (doc, want) = warned(*kind);
        let name = kind.name();
        assert_eq!(doc.kind(), *kind);
        let texts: Vec<String> = doc.warnings().into_iter().map(|w| w.text).collect();
        assert_eq!(texts, want, "{name}: its warnings");
        let text = TextExporter.render(doc.as_ref());
        for w in &want {
            assert!(text.contains(w.as_str()), "{name}: the text lacks '{w}':\n{text}");
        }
        let docs = [ReportDoc {
            label: "in".into(),
            source: "in.json".into(),
            tags: Vec::new(),
            note: None,
            body: doc,
        }];
        let html = render_html("w", &docs);
        assert_eq!(html.matches("<tr class=\"warning\">").count(), want.len(), "{name}: rows of the page");
        assert!(html.contains(&format!("<h2>Warnings ({})</h2>", want.len())), "{name}");
        for w in &want {
            assert!(html.contains(&crate::html::escape_html(w)), "{name}: the page lacks '{w}'");
        }
        let md = render_markdown("w", &docs);
        assert_eq!(md.matches("\n- warning: ").count(), want.len(), "{name}: lines of the Markdown:\n{md}");
        assert!(md.contains(&format!("### Warnings ({})", want.len())), "{name}");
        for w in &want {
            assert!(md.contains(&crate::html::markdown::cell(w)), "{name}: the Markdown lacks '{w}'");
        }
    }
}
