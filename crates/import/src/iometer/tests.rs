use super::*;
use iolab_spec::JobSpec;

const TWO: &str = include_str!("testdata/two_workers_1_1_0.icf");
const OLD: &str = include_str!("testdata/one_worker_2006_07_27.icf");

fn job(t: &Translation) -> JobSpec {
    JobSpec::from_toml(&t.toml, "out.toml").unwrap_or_else(|e| panic!("{e}\n{}", t.toml))
}

fn err(text: &str) -> String {
    translate(text, "t.icf").unwrap_err().to_string()
}

#[test]
fn two_workers_with_several_targets_translate() {
    let t = translate(TWO, "two.icf").unwrap();
    let j = job(&t);
    assert_eq!(j.name.as_deref(), Some("oltp mix"));
    assert_eq!(j.duration_ns, Some(90_000_000_000));
    assert_eq!(j.ramp_ns, Some(10_000_000_000));
    assert_eq!(j.seed, Some(42));
    assert_eq!(j.worker_tables.len(), 2);
    let w1 = &j.worker_tables[0];
    assert_eq!(w1.name, "Worker_1");
    assert_eq!(w1.layer.target.as_ref().unwrap().len(), 2);
    assert_eq!(w1.layer.offset, Some(2048 * 512));
    assert_eq!(w1.layer.length, Some(1 << 30));
    assert_eq!(w1.specs.len(), 2);
    assert_eq!(w1.specs[0].weight, Some(90));
    assert_eq!(w1.specs[0].read_pct, Some(70.0));
    assert_eq!(w1.specs[1].align, Some(512));
    let names: Vec<(&str, &str)> = t.targets.iter().map(|n| (n.name.as_str(), n.iometer.as_str())).collect();
    assert_eq!(
        names,
        [
            ("PHYSICALDRIVE_1", "PHYSICALDRIVE:1"),
            ("PHYSICALDRIVE_2", "PHYSICALDRIVE:2"),
            ("E_LOGS", "E: \"LOGS\"")
        ]
    );
    assert!(j.targets.contains_key("E_LOGS"));
    assert!(t.warnings.is_empty(), "{:?}", t.warnings);
}

#[test]
fn every_key_has_an_iometer_comment_with_its_line() {
    let t = translate(TWO, "two.icf").unwrap();
    let lines: Vec<&str> = t.toml.lines().collect();
    for (i, l) in lines.iter().enumerate() {
        let is_key = l.contains(" = ") && !l.starts_with('#');
        if is_key && !l.ends_with("{}") {
            let above = lines[..i].iter().rev().find(|p| !p.starts_with("# note:")).unwrap();
            assert!(above.starts_with("# iometer: ") && above.contains("(line "), "{l} has {above}");
        }
    }
    assert!(
        t.toml.contains("# iometer: 'Run Time (h m s) = 0          1          30 (line 7)"),
        "{}",
        t.toml
    );
}

#[test]
fn outstanding_ios_are_per_target() {
    let t = translate(TWO, "two.icf").unwrap();
    let j = job(&t);
    assert_eq!(j.worker_tables[0].layer.qd, Some(32), "16 per target x 2 targets");
    assert_eq!(j.worker_tables[1].layer.qd, Some(1));
    assert!(t.toml.contains("so qd = 16 x 2"));
}

#[test]
fn old_format_translates_and_describes_the_queue_depth_cycle() {
    let t = translate(OLD, "old.icf").unwrap();
    let j = job(&t);
    assert_eq!(j.duration_ns, Some(60_000_000_000));
    assert_eq!(j.name, None);
    assert_eq!(j.worker_tables[0].layer.qd, Some(8));
    assert_eq!(t.targets[0].name, "sdc");
    assert_eq!(t.warnings.len(), 1, "{:?}", t.warnings);
    assert!(t.warnings[0].contains("CYCLE_OUTSTANDING_IOS"), "{}", t.warnings[0]);
    assert!(t.warnings[0].contains("`iolab sweep JOB --qd 1,2,4,8,16,32`"), "{}", t.warnings[0]);
}

#[test]
fn crlf_reads_the_same() {
    let crlf = TWO.replace('\n', "\r\n");
    assert_eq!(translate(&crlf, "two.icf").unwrap(), translate(TWO, "two.icf").unwrap());
}

#[test]
fn keys_are_case_insensitive_and_unknown_keys_are_warned_about() {
    let text = OLD
        .replace("'Test Type", "'TEST TYPE")
        .replace("'Ramp Up Time (s)\n\t0\n", "'Ramp Up Time (s)\n\t0\n'Frobnicate\n\t3\n");
    let t = translate(&text, "old.icf").unwrap();
    assert!(
        t.warnings.iter().any(|w| w.contains("line 10: unknown test setup key 'Frobnicate'")),
        "{:?}",
        t.warnings
    );
}

#[test]
fn weights_not_summing_to_100_are_refused() {
    let text = OLD.replace("4096,100,100,100,0,1,0,0", "4096,60,100,100,0,1,0,0\n\t8192,30,100,100,0,1,0,0");
    let e = err(&text);
    assert!(
        e.contains("line 36") && e.contains("'4K; 100% Read; 100% random'") && e.contains("sum to 90"),
        "{e}"
    );
}

#[test]
fn reply_and_delay_are_refused() {
    let e = err(&OLD.replace("4096,100,100,100,0,1,0,0", "4096,100,100,100,0,1,0,512"));
    assert!(e.contains("line 38") && e.contains("reply size of 512"), "{e}");
}

/// A worker's think time (ns) and burst.
type Think = (Option<u64>, Option<u32>);

fn think_of(w: &iolab_spec::WorkerSpec) -> Think {
    (w.layer.think, w.layer.burst)
}

#[test]
fn transfer_delay_is_think_and_burst_length_is_burst() {
    let t =
        translate(&OLD.replace("4096,100,100,100,0,1,0,0", "4096,100,100,100,10,4,0,0"), "t.icf").unwrap();
    assert_eq!(think_of(&job(&t).worker_tables[0]), (Some(10_000_000), Some(4)));
    assert!(t.toml.contains("# iometer: delay (ms) = 10 (line 38)\n# note: "), "{}", t.toml);
    assert!(t.toml.contains("think = \"10ms\"\n# iometer: burst = 4 (line 38)\nburst = 4\n"), "{}", t.toml);
    assert!(t.toml.contains("waits until all of its I/Os complete"), "{}", t.toml);
    // Burst length 0 or 1: one I/O per delay.
    for b in ["0", "1"] {
        let text = OLD.replace("4096,100,100,100,0,1,0,0", &format!("4096,100,100,100,250,{b},0,0"));
        let t = translate(&text, "t.icf").unwrap();
        assert_eq!(think_of(&job(&t).worker_tables[0]), (Some(250_000_000), Some(1)), "{}", t.toml);
    }
    // Every line of a spec with the same delay and burst; the other worker (delay 0) has no think time.
    let text = TWO
        .replace("8192,90,70,100,0,1,8192,0", "8192,90,70,100,5,2,8192,0")
        .replace("65536,10,100,0,0,1,0,0", "65536,10,100,0,5,2,0,0");
    let t = translate(&text, "two.icf").unwrap();
    let j = job(&t);
    assert_eq!(think_of(&j.worker_tables[0]), (Some(5_000_000), Some(2)));
    assert_eq!(think_of(&j.worker_tables[1]), (None, None));
    assert_eq!(j.worker_tables[0].specs.len(), 2);
}

#[test]
fn delay_zero_translates_as_before() {
    // Any burst length with delay 0 is continuous I/O: nothing is written for it.
    let base = translate(OLD, "t.icf").unwrap();
    let t =
        translate(&OLD.replace("4096,100,100,100,0,1,0,0", "4096,100,100,100,0,16,0,0"), "t.icf").unwrap();
    // Only the echo of the spec line in its comment differs.
    assert_eq!(t.toml.replace("0,0,16,0,0 (line 38)", "0,0,1,0,0 (line 38)"), base.toml);
    assert_eq!(think_of(&job(&t).worker_tables[0]), (None, None));
    assert!(!t.toml.contains("think") && !t.toml.contains("burst"), "{}", t.toml);
}

#[test]
fn lines_of_a_spec_with_different_delays_are_refused() {
    let e = err(&TWO.replace("8192,90,70,100,0,1,8192,0", "8192,90,70,100,5,2,8192,0"));
    assert!(e.contains("t.icf, line 41:") && e.contains("'OLTP 8K, 70% read'"), "{e}");
    assert!(e.contains("line 40: delay 5 ms, burst 2; line 41: delay 0 ms, burst 1"), "{e}");
    let e = err(&TWO
        .replace("8192,90,70,100,0,1,8192,0", "8192,90,70,100,5,2,8192,0")
        .replace("65536,10,100,0,0,1,0,0", "65536,10,100,0,5,3,0,0"));
    assert!(e.contains("line 41:") && e.contains("per worker"), "{e}");
    // A line with 0% of the I/O does not run, so its delay does not matter.
    let t = translate(
        &OLD.replace("4096,100,100,100,0,1,0,0", "4096,100,100,100,7,1,0,0\n\t8192,0,100,100,0,1,0,0"),
        "t.icf",
    )
    .unwrap();
    assert_eq!(think_of(&job(&t).worker_tables[0]), (Some(7_000_000), Some(1)));
    // A delay iolab cannot idle (over 1h) is a bad value.
    let e = err(&OLD.replace("4096,100,100,100,0,1,0,0", "4096,100,100,100,3600001,1,0,0"));
    assert!(e.contains("line 38") && e.contains("delay (ms)"), "{e}");
}

#[test]
fn transfer_delay_in_phases_is_per_worker_and_test() {
    // Worker 1 runs OLTP (delay 5, burst 2) then Scan (no delay); worker 2 Log (delay 20) then OLTP.
    let text = three_workers_two_tests()
        .replace("8192,90,70,100,0,1,8192,0", "8192,90,70,100,5,2,8192,0")
        .replace("65536,10,100,0,0,1,0,0", "65536,10,100,0,5,2,0,0")
        .replace("4096,100,0,0,0,1,0,0", "4096,100,0,0,20,0,0,0");
    let t = translate(&text, "three.icf").unwrap();
    let phases = job(&t).phase_jobs();
    let view: Vec<Vec<(String, Think)>> = phases
        .iter()
        .map(|(_, p)| p.worker_tables.iter().map(|w| (w.name.clone(), think_of(w))).collect())
        .collect();
    let ms = |n: u64, b: u32| (Some(n * 1_000_000), Some(b));
    assert_eq!(
        view,
        [
            vec![
                ("Worker_1".to_string(), ms(5, 2)),
                ("Worker_2".to_string(), ms(20, 1)),
                ("Worker_3".to_string(), (None, None))
            ],
            vec![("Worker_1".to_string(), (None, None)), ("Worker_2".to_string(), ms(5, 2))],
        ],
        "{}",
        t.toml
    );
}

/// TWO with a third spec ("Scan 64K read") and a third worker; worker 1 runs OLTP then Scan, worker 2 Log then
/// OLTP, worker 3 Scan only.
fn three_workers_two_tests() -> String {
    let scan = "'Access specification name,default assignment\n\tScan 64K read,NONE\n\
                'size,% of size,% reads,% random,delay,burst,align,reply\n\t65536,100,100,0,0,1,0,0\n\
                'END access specifications";
    let third = "'Worker\n\tWorker 3\n'Worker type\n\tDISK\n'Default target settings for worker\n\
                 'Number of outstanding IOs,test connection rate,transactions per connection,use fixed seed,fixed seed value\n\
                 \t4,DISABLED,1,DISABLED,0\n'End default target settings for worker\n\
                 'Assigned access specs\n\tScan 64K read\n'End assigned access specs\n\
                 'Target assignments\n'Target\n\tPHYSICALDRIVE:3\n'Target type\n\tDISK\n'End target\n\
                 'End target assignments\n'End worker\n'End manager";
    TWO.replace("'END access specifications", scan)
        .replace("\tOLTP 8K, 70% read\n'End assigned", "\tOLTP 8K, 70% read\n\tScan 64K read\n'End assigned")
        .replace(
            "\tLog 4K seq write\n'End assigned",
            "\tLog 4K seq write\n\tOLTP 8K, 70% read\n'End assigned",
        )
        .replace("'End manager", third)
}

/// A phase as (name, [(worker table, read share of each spec)], duration, ramp).
type PhaseView = (String, Vec<(String, Vec<Option<f64>>)>, Option<u64>, Option<u64>);

#[test]
fn several_assigned_specs_become_one_phase_per_test() {
    let t = translate(&three_workers_two_tests(), "three.icf").unwrap();
    let j = job(&t);
    assert!(j.worker_tables.is_empty(), "{}", t.toml);
    let phases = j.phase_jobs();
    let view: Vec<PhaseView> = phases
        .iter()
        .map(|(name, p)| {
            let workers = p
                .worker_tables
                .iter()
                .map(|w| (w.name.clone(), w.specs.iter().map(|s| s.read_pct).collect()))
                .collect();
            (name.clone().unwrap(), workers, p.duration_ns, p.ramp_ns)
        })
        .collect();
    let (d, r) = (Some(90_000_000_000), Some(10_000_000_000));
    assert_eq!(
        view,
        vec![
            (
                "OLTP 8K, 70% read + Log 4K seq write + Scan 64K read".to_string(),
                vec![
                    ("Worker_1".to_string(), vec![Some(70.0), Some(100.0)]),
                    ("Worker_2".to_string(), vec![Some(0.0)]),
                    ("Worker_3".to_string(), vec![Some(100.0)]),
                ],
                d,
                r
            ),
            (
                "Scan 64K read + OLTP 8K, 70% read".to_string(),
                vec![
                    ("Worker_1".to_string(), vec![Some(100.0)]),
                    ("Worker_2".to_string(), vec![Some(70.0), Some(100.0)]),
                ],
                d,
                r
            ),
        ]
    );
    // Each phase's workers keep their own targets, queue depth and region.
    let p2 = &phases[1].1;
    assert_eq!(p2.worker_tables[0].layer.qd, Some(32));
    assert_eq!(p2.worker_tables[0].layer.offset, Some(2048 * 512));
    assert_eq!(p2.worker_tables[1].layer.qd, Some(1));
    assert_eq!(phases[0].1.worker_tables[2].layer.qd, Some(4));
    assert_eq!(j.seed, Some(42));
    assert_eq!(t.targets.len(), 4);
    assert!(
        t.toml.contains("[[phase]]\n# iometer: test 2 of 2: each worker's assigned access spec 2 (lines "),
        "{}",
        t.toml
    );
    assert!(
        t.warnings.iter().any(|w| w.contains("'Worker 3' has no access spec for test 2 of 2")),
        "{:?}",
        t.warnings
    );
}

#[test]
fn idle_entries_and_all_idle_tests() {
    // Worker 2's second spec is Idle: it sits out test 2 only.
    let text = TWO
        .replace(
            "\tOLTP 8K, 70% read\n'End assigned",
            "\tOLTP 8K, 70% read\n\tLog 4K seq write\n'End assigned",
        )
        .replace("\tLog 4K seq write\n'End assigned", "\tLog 4K seq write\n\tIdle\n'End assigned");
    let t = translate(&text, "t.icf").unwrap();
    let names: Vec<(Option<String>, usize)> =
        job(&t).phase_jobs().into_iter().map(|(n, p)| (n, p.worker_tables.len())).collect();
    assert_eq!(
        names,
        [(Some("OLTP 8K, 70% read + Log 4K seq write".into()), 2), (Some("Log 4K seq write".into()), 1)]
    );
    assert!(t.warnings.iter().any(|w| w.contains("Idle spec in test 2")), "{:?}", t.warnings);
    // A test where every worker is idle has no phase.
    let text = TWO
        .replace("\tOLTP 8K, 70% read\n'End assigned", "\tIdle\n\tOLTP 8K, 70% read\n'End assigned")
        .replace("\tLog 4K seq write\n'End assigned", "\tIdle\n'End assigned");
    let t = translate(&text, "t.icf").unwrap();
    assert_eq!(job(&t).phases.len(), 1);
    assert!(t.warnings.iter().any(|w| w.contains("test 1 of 2 runs no worker")), "{:?}", t.warnings);
    // An unknown spec in a list names its line.
    let e =
        err(&TWO.replace("\tOLTP 8K, 70% read\n'End assigned", "\tOLTP 8K, 70% read\n\tNope\n'End assigned"));
    assert!(e.contains("'Nope'"), "{e}");
}

#[test]
fn malformed_lines_name_their_line() {
    let e = err(&OLD.replace("0          0          60", "0   sixty"));
    assert_eq!(e, "t.icf, line 7: invalid value '0   sixty' for 'Run Time: expected three numbers: hours minutes seconds");
    let e = err(&OLD.replace("4096,100,100,100,0,1,0,0", "4096,100,100"));
    assert!(
        e.starts_with("t.icf, line 38: invalid value '4096,100,100'") && e.contains("eight whole numbers"),
        "{e}"
    );
    let e = err("hello\n'TEST SETUP\n");
    assert!(e.starts_with("t.icf, line 1: expected an Iometer configuration"), "{e}");
    let e = err(&OLD.replace("'END manager list", ""));
    assert!(e.contains("line 40") && e.contains("'END manager list"), "{e}");
    let e = err(&OLD.replace("\t4K; 100% Read; 100% random\n'End assigned", "\tNo such spec\n'End assigned"));
    assert!(e.contains("line 56") && e.contains("'No such spec'"), "{e}");
}

#[test]
fn network_workers_and_second_managers_are_refused() {
    let e = err(&OLD.replace("'Worker type\n\tDISK", "'Worker type\n\tNETWORK"));
    assert!(e.contains("line 48") && e.contains("NETWORK"), "{e}");
    let second = "'Manager ID, manager name\n\t2,other\n'Worker\n\tW\n'Assigned access specs\n\tx\n'End manager\n'END manager list";
    let e = err(&OLD.replace("'END manager list", second));
    assert!(e.contains("second manager"), "{e}");
}

#[test]
fn idle_workers_are_left_out_with_a_warning() {
    let text = TWO.replace("\tLog 4K seq write\n'End assigned", "\tIdle\n'End assigned");
    let t = translate(&text, "two.icf").unwrap();
    assert_eq!(job(&t).worker_tables.len(), 1);
    assert!(t.warnings.iter().any(|w| w.contains("Idle")), "{:?}", t.warnings);
}

#[test]
fn icf_is_told_from_fio_and_toml() {
    assert!(looks_like_icf(TWO));
    assert!(looks_like_icf(OLD));
    assert!(looks_like_icf("'ACCESS SPECIFICATIONS ===\n"));
    assert!(!looks_like_icf("[global]\nioengine=libaio\n[job]\nrw=randread\n"));
    assert!(!looks_like_icf("duration = \"30s\"\n[worker.db]\nqd = 4\n"));
    assert!(!looks_like_icf(""));
    assert!(!crate::fio::looks_like_fio(TWO));
}

#[test]
fn windows_disk_names_become_target_names() {
    let t = translate(&OLD.replace("\tsdc\n", "\t1: \"VENDOR PRODUCT\"\n"), "old.icf").unwrap();
    assert_eq!(t.targets[0].name, "disk1_VENDOR_PRODUCT");
    assert_eq!(t.targets[0].iometer, "1: \"VENDOR PRODUCT\"");
    job(&t);
}

#[test]
fn workers_tests_and_tables_are_bounded_before_translation() {
    let specs = |n: usize| -> String { (0..n).map(|_| "\tOLTP 8K, 70% read\n").collect() };
    let many =
        |n: usize| TWO.replace("\tOLTP 8K, 70% read\n'End assigned", &format!("{}'End assigned", specs(n)));
    let t = translate(&many(iolab_spec::MAX_PHASES), "t.icf").unwrap();
    assert_eq!(job(&t).phases.len(), iolab_spec::MAX_PHASES);
    let e = err(&many(2000));
    assert!(e.contains("has 2000 assigned access specs") && e.contains("at most 1000 phases"), "{e}");
    let worker = TWO.split("'Worker\n").nth(2).unwrap().split("'End manager").next().unwrap();
    let workers = format!("'Worker\n{worker}").repeat(1100);
    let e = err(&TWO.replace("'End manager", &format!("{workers}'End manager")));
    assert!(e.contains("1102 workers") && e.contains("at most 1024"), "{e}");
    let wide = format!("'Worker\n{}", worker.replace("\tLog 4K seq write\n", &specs(5))).repeat(1000);
    let e = err(&TWO.replace("'End manager", &format!("{wide}'End manager")));
    assert!(
        e.contains("1002 workers over 5 tests make 5010 worker tables") && e.contains("at most 4096"),
        "{e}"
    );
}

/// Issue 24, item 13: numbers read from the file are multiplied with checked arithmetic; an overflow is refused,
/// quoting the value, never wrapped (a starting sector of 2^64-1 became offset 18446744073709551104).
#[test]
fn numbers_that_overflow_are_refused_quoting_the_value() {
    let cases = [
        ("2097152,2048,2", "2097152,18446744073709551615,2", "18446744073709551615"),
        ("2097152,2048,2", "36028797018963968,0,2", "36028797018963968"),
        ("0          1          30", "5124095576030432 0 0", "5124095576030432"),
        ("0          1          30", "0 0 18446744073709551615", "18446744073709551615"),
        ("16,DISABLED,1,ENABLED,42", "9223372036854775808,DISABLED,1,ENABLED,42", "9223372036854775808"),
    ];
    for (from, to, quoted) in cases {
        let e = err(&TWO.replacen(from, to, 1));
        let refused = e.contains("too large") || e.contains("at most");
        assert!(e.contains(&format!("'{to}'")) && e.contains(quoted) && refused, "{to}: {e}");
    }
}

/// Issue 36, item 8: a configuration whose workers have access specs and no targets (a template, as vendors
/// ship them) is refused alone, naming the way out; given one `--target`, its workers run on it (no `target`
/// key: the command line's is every worker's), each said in a warning.
#[test]
fn a_template_without_targets_runs_on_the_one_target_given() {
    let template = OLD.replace("'Target\n\tsdc\n'Target type\n\tDISK\n'End target\n", "");
    assert_ne!(template, OLD, "the target assignment was taken out");
    let e = err(&template);
    assert!(e.contains("a template, runs with one --target PATH"), "{e}");
    let t = translate_given(&template, "t.icf", true).unwrap();
    let j = job(&t);
    assert_eq!(j.worker_tables.len(), 1);
    assert_eq!(j.worker_tables[0].layer.target, None, "{}", t.toml);
    assert_eq!(j.worker_tables[0].layer.qd, Some(8));
    assert!(t.warnings.iter().any(|w| w.contains("no target (a template)")), "{:?}", t.warnings);
    assert!(t.targets.is_empty());
}
