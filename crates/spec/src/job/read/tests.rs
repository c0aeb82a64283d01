use crate::job::{JobSpec, Prealloc, Rw};
use crate::Place;

#[test]
fn toml_job_with_worker_tables_parses() {
    let job = JobSpec::from_toml(
        r#"
        duration = "30s"
        ramp = "5s"
        seed = 7
        target = "mem:1G"
        [worker.db]
        count = 4
        qd = 16
        [[worker.db.spec]]
        bs = "8k"
        read_pct = 70
        random_pct = 100
        weight = 3
        [[worker.db.spec]]
        bs = "64k"
        rw = "read"
        [worker.log]
        bs = "4k"
        rw = "write"
        qd = 1
        "#,
        "j.toml",
    )
    .unwrap();
    assert_eq!(job.duration_ns, Some(30_000_000_000));
    assert_eq!(job.worker_tables.len(), 2);
    assert_eq!(job.worker_tables[0].count, 4);
    assert_eq!(job.worker_tables[0].specs.len(), 2);
    assert_eq!(job.worker_tables[1].layer.rw, Some(Rw::Write));
}

#[test]
fn toml_unknown_key_suggests_the_close_one() {
    let e = JobSpec::from_toml("read_pc = 70\n", "j.toml").unwrap_err();
    assert_eq!(e.to_string(), "job file 'j.toml': unknown key 'read_pc'; did you mean 'read_pct'?");
    let e = JobSpec::from_toml("[worker.a]\nqdd = 3\n", "j.toml").unwrap_err();
    assert!(e.to_string().contains("[worker.a]: unknown key 'qdd'; did you mean 'qd'?"), "{e}");
}

#[test]
fn toml_out_of_range_value_names_key_and_table() {
    let e = JobSpec::from_toml("[worker.db]\nqd = 0\n", "j.toml").unwrap_err();
    assert_eq!(e.to_string(), "invalid value '0' for 'qd' in [worker.db] of job file 'j.toml': expected a whole number from 1 to 4096");
}

#[test]
fn toml_syntax_error_is_reported_with_file() {
    let e = JobSpec::from_toml("qd = = 3", "j.toml").unwrap_err();
    assert!(e.to_string().starts_with("job file 'j.toml' is not valid TOML"), "{e}");
}

#[test]
fn workers_count_with_worker_tables_is_conflict() {
    assert!(JobSpec::from_toml("workers = 2\n[worker.a]\nqd = 1\n", "j.toml").is_err());
}

#[test]
fn prealloc_key_takes_its_modes_and_names_them_when_refused() {
    let job = JobSpec::from_toml("prealloc = \"none\"\n", "j.toml").unwrap();
    assert_eq!(job.prealloc, Some(Prealloc::None));
    let mut cli = JobSpec::default();
    cli.set_run("prealloc", "write", &Place::Flag("--prealloc".into())).unwrap();
    let mut job = job;
    job.apply_overrides(&cli);
    assert_eq!(job.prealloc, Some(Prealloc::Write), "the flag wins over the file");
    let e = JobSpec::from_toml("prealloc = \"posix\"\n", "j.toml").unwrap_err().to_string();
    assert!(e.contains("'posix'") && e.contains("'fallocate', 'write', 'reserve' or 'none'"), "{e}");
    for p in [Prealloc::Fallocate, Prealloc::Write, Prealloc::Reserve, Prealloc::None] {
        let mut j = JobSpec::default();
        j.set_run("prealloc", p.as_str(), &Place::Flag("--prealloc".into())).unwrap();
        assert_eq!(j.prealloc, Some(p), "one name everywhere");
    }
}

#[test]
fn a_list_is_taken_where_a_key_takes_several() {
    let job = JobSpec::from_toml(
        "target = [\"mem:1G\", \"mem:2G\"]\ninject = [\"eio@10\", \"eio@20\"]\n",
        "j.toml",
    )
    .unwrap();
    assert_eq!(job.defaults.target.as_ref().map(Vec::len), Some(2));
    assert_eq!(job.integrity.inject.len(), 2);
    let e = JobSpec::from_toml("target = []\n", "j.toml").unwrap_err().to_string();
    assert_eq!(e, "invalid value '[]' for 'target' in job file 'j.toml': expected at least one target");
    assert!(JobSpec::from_toml("inject = []\n", "j.toml").is_ok(), "no fault is a list of none");
    let e = JobSpec::from_toml("qd = [1, 2]\n", "j.toml").unwrap_err().to_string();
    assert!(e.contains("expected a single value"), "{e}");
}

#[test]
fn a_key_out_of_its_place_is_named_as_such() {
    let e = JobSpec::from_toml("[worker.a]\nduration = \"5s\"\n", "j.toml").unwrap_err().to_string();
    assert!(e.contains("unknown key 'duration' (a run setting: put it at the top of the file)"), "{e}");
    let e = JobSpec::from_toml("[[spec]]\nqd = 4\n", "j.toml").unwrap_err().to_string();
    assert!(e.contains("[[spec]] #1: unknown key 'qd'"), "{e}");
    let e = JobSpec::from_toml("[[phase]]\nseed = 4\n", "j.toml").unwrap_err().to_string();
    assert!(e.contains("[[phase]] #1: unknown key 'seed'"), "{e}");
    for table in ["", "[worker.a]\n"] {
        let e = JobSpec::from_toml(&format!("{table}overwrite = true\n"), "j.toml").unwrap_err().to_string();
        assert!(e.contains("type --overwrite on the command line"), "{e}");
    }
}

/// Issue 37, item 1: who set `direct` survives the command line unless it changes `direct`: typing
/// `--buffered` over a profile's `direct = false` leaves the profile as its setter (dropping the flag would
/// not give O_DIRECT); a flag that changes it makes it the user's.
#[test]
fn direct_set_by_is_cleared_only_by_a_flag_that_changes_direct() {
    let flag = |value: &str| {
        let mut cli = JobSpec::default();
        cli.set_run("direct", value, &Place::Flag("--buffered".into())).unwrap();
        cli
    };
    let mut job = JobSpec::from_toml("direct = false\n", "j.toml").unwrap();
    job.direct_set_by = Some("the profile 'etcd'".into());
    job.apply_overrides(&flag("false"));
    assert_eq!(job.direct_set_by.as_deref(), Some("the profile 'etcd'"));
    job.apply_overrides(&JobSpec::default());
    assert_eq!(job.direct_set_by.as_deref(), Some("the profile 'etcd'"), "no flag: still the profile's");
    job.apply_overrides(&flag("true"));
    assert_eq!((job.direct, job.direct_set_by), (Some(true), None));
}
