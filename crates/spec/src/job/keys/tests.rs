use super::*;
use std::collections::BTreeSet;

/// Each definition's unit test: its good texts set something, its bad ones are errors that quote the text
/// and name the place, from a flag and from a job file alike.
#[test]
fn every_key_takes_its_good_texts_and_refuses_its_bad_ones() {
    let file = |k: &Key| Place::Key { file: "j.toml".into(), table: String::new(), key: k.name.into() };
    for key in KEYS {
        assert!(!key.good.is_empty(), "{}: no good text to test", key.name);
        for place in [key.flag_place(), file(key)] {
            for text in key.good {
                let mut job = JobSpec::default();
                key.apply(&mut job, text, &place).unwrap_or_else(|e| panic!("{} = {text:?}: {e}", key.name));
                assert_ne!(job, JobSpec::default(), "{} = {text:?} set nothing", key.name);
            }
            for text in key.bad {
                let e = key.apply(&mut JobSpec::default(), text, &place).expect_err(text).to_string();
                assert!(e.starts_with(&format!("invalid value '{text}' for {place}: expected")), "{e}");
            }
        }
    }
}

/// A key given on the command line reaches the job it overrides: a new run setting missing from
/// `JobSpec::apply_overrides` fails here.
#[test]
fn every_key_on_the_command_line_reaches_the_job() {
    for key in KEYS {
        let mut cli = JobSpec::default();
        key.apply_flag(&mut cli, key.good[0]).unwrap_or_else(|e| panic!("{}: {e}", key.name));
        let mut job = JobSpec::default();
        job.apply_overrides(&cli);
        assert_ne!(job, JobSpec::default(), "--{} is lost by apply_overrides", key.name);
    }
}

#[test]
fn a_key_is_named_once_and_a_flag_once() {
    let names: BTreeSet<&str> = KEYS.iter().map(|k| k.name).collect();
    assert_eq!(names.len(), KEYS.len(), "a key defined twice");
    let mut flags = BTreeSet::new();
    for f in KEYS.iter().filter_map(|k| k.flag) {
        for name in [f.long].iter().chain(f.aliases).chain(f.visible_aliases) {
            assert!(flags.insert(name.to_string()), "--{name} names two keys");
        }
        if let Some(c) = f.short {
            assert!(flags.insert(c.to_string()), "-{c} names two keys");
        }
    }
}

/// One name everywhere: `--read-pct` is `read_pct`. `--buffered` is the one flag that names the opposite of
/// its key (`direct = false`).
#[test]
fn a_flag_is_its_key_with_dashes() {
    for k in KEYS {
        if let Some(f) = k.flag {
            let same = f.long.replace('-', "_") == k.name;
            assert!(same || (k.name, f.long) == ("direct", "buffered"), "--{} sets '{}'", f.long, k.name);
        }
    }
}

#[test]
fn a_flags_doc_is_one_paragraph_of_sentences() {
    for k in KEYS {
        assert!(!k.doc.contains('\n') && !k.doc.contains("  "), "{}: {:?}", k.name, k.doc);
        assert!(k.doc.ends_with('.'), "{}: a doc ends its sentence", k.name);
    }
}

#[test]
fn the_lists_come_from_the_definitions_in_their_order() {
    let of = |scopes: &[Scope]| -> Vec<&str> {
        KEYS.iter().filter(|k| scopes.contains(&k.scope())).map(|k| k.name).collect()
    };
    assert_eq!(RUN_KEYS, of(&[Scope::Run, Scope::Phase]));
    assert_eq!(PHASE_RUN_KEYS, of(&[Scope::Phase]));
    assert_eq!(WORKER_KEYS, of(&[Scope::Worker]));
    assert_eq!(SPEC_KEYS, of(&[Scope::Spec]));
    assert_eq!(CONSENT_KEYS, of(&[Scope::CommandLine]));
    assert_eq!(PHASE_RUN_KEYS, ["duration", "ramp", "ios", "bytes"]);
    assert_eq!(CONSENT_KEYS, ["allow_write_device", "destroy_data", "overwrite"]);
    // The lists keep the order they had when written by hand: the first of equally close keys is the one
    // an unknown key's suggestion names ('qs' at the top of a job file: 'ios', a run key, before 'qd').
    assert_eq!(crate::error::suggest("qs", &[RUN_KEYS, WORKER_KEYS, SPEC_KEYS].concat()), Some("ios"));
    assert_eq!(crate::error::suggest("rd", SPEC_KEYS), Some("bs"));
}

#[test]
fn repeatable_keys_take_many_and_switches_stand_for_a_text() {
    let many: Vec<&str> = KEYS.iter().filter(|k| k.count != Count::One).map(|k| k.name).collect();
    assert_eq!(many, ["inject", "target"]);
    for k in KEYS {
        if let Some(Flag { takes: Takes::Switch(text), .. }) = k.flag {
            assert!(k.good.contains(&text), "--{}'s text {text:?} is not among its good texts", k.name);
        }
    }
}

#[test]
fn consent_is_the_command_lines_alone() {
    let place = Place::Key { file: "j.toml".into(), table: String::new(), key: "overwrite".into() };
    for name in CONSENT_KEYS {
        let e = JobSpec::default().set_run(name, "true", &place).unwrap_err().to_string();
        assert!(e.contains("never read from a job file"), "{e}");
        assert!(!Layer::default().set(name, "true", &place).unwrap());
        assert!(!check(name, "true", &place).unwrap(), "{name} is no job-file key");
        let mut job = JobSpec::default();
        find(name).unwrap().apply_flag(&mut job, "true").unwrap();
        assert_ne!(job.consent, Consent::default(), "--{name} grants consent");
    }
}

#[test]
fn every_layer_field_has_a_key() {
    // Each layer key sets a distinct field, and the keys cover every field: a new field without a key fails
    // here.
    let place = Place::Flag("x".into());
    let mut l = Layer::default();
    for k in KEYS.iter().filter(|k| matches!(k.scope(), Scope::Worker | Scope::Spec)) {
        assert!(l.set(k.name, k.good[0], &place).unwrap(), "{}", k.name);
    }
    let fields = toml::Value::try_from(&l).unwrap().as_table().unwrap().len();
    assert_eq!(fields, WORKER_KEYS.len() + SPEC_KEYS.len());
}

#[test]
fn run_keys_parse_and_reject_bad_values() {
    let mut j = JobSpec::default();
    let p = Place::Flag("--duration".into());
    assert!(j.set_run("duration", "-5s", &p).is_err());
    assert!(j.set_run("duration", "0", &p).is_err());
    j.set_run("seed", "0xff", &p).unwrap();
    assert_eq!(j.seed, Some(255));
    assert!(j.set_run("engine", "aio", &p).is_err());
    j.set_run("engine", "libaio", &p).unwrap();
    assert_eq!(j.engine, Some(crate::EngineKind::IoUring), "fio's libaio runs on io_uring");
    assert!(!j.set_run("qd", "4", &p).unwrap(), "a worker key is no run key");
    assert!(!Layer::default().set("seed", "4", &p).unwrap(), "a run key is no layer key");
}

#[test]
fn a_target_flag_names_a_declared_target_or_replaces_them_all() {
    let target = find("target").unwrap();
    let mut job = JobSpec::default();
    target.apply_flag(&mut job, "db=/data/db.edb").unwrap();
    target.apply_flag(&mut job, "sim:fixed,latency=1ms,servers=1,size=1G").unwrap();
    assert_eq!(job.targets["db"].spec, Some(TargetSpec::Path { path: "/data/db.edb".into() }));
    assert_eq!(job.forced.target.as_ref().map(Vec::len), Some(1));
    let e = target.apply_flag(&mut job, "db=@log").unwrap_err().to_string();
    assert!(e.starts_with("invalid value '@log' for '--target'"), "{e}");
}

#[test]
fn a_value_is_checked_by_its_keys_parser() {
    let p = Place::Flag("--set qd".into());
    assert!(check("qd", "16", &p).unwrap());
    assert!(!check("qdd", "16", &p).unwrap());
    let e = check("qd", "0", &p).unwrap_err().to_string();
    assert_eq!(e, "invalid value '0' for '--set qd': expected a whole number from 1 to 4096");
}

use crate::target::TargetSpec;
