//! Issue 25, item 15: fio's own example job files (tests/data/fio-examples, the 47 of fio's `examples/` that
//! use block engines), imported as `iolab run FILE --target mem:1G` imports them (with what a file's header
//! says it is run with: `vars`, `target`). At least 37 of 47 import (issue 36 aimed for 38: the other 10 need
//! I/O iolab does not issue, docs/FIO.md); every refusal names the option (or engine) behind it, and the
//! zoned-device examples stay refused.

use iolab_import::fio::{translate_with, FioVars};
use iolab_import::{translate_given, FioError, Given};
use std::path::PathBuf;

/// The target size `--target mem:1G` gives.
const TARGET: Given = Given { target_bytes: Some(1 << 30), target_fixed: true };

/// The target a file is imported for: `mem:1G`'s size, but for cross-stripe-verify.fio the drive its header
/// assumes ("the drive is at around 30 * 124G in size": its 30 clones start 124g apart), as a block device of
/// 30 × 124 GiB; on `mem:1G` its clones past the first would start past the end, where fio fails them.
fn target(file: &str) -> Given {
    match file {
        "cross-stripe-verify.fio" => Given { target_bytes: Some(30 * (124 << 30)), target_fixed: true },
        _ => TARGET,
    }
}

/// This process's variables, with `FIO_BS=4096` where it is not set: the block size sprandom.fio's own header
/// runs it with (`env FIO_BS=4096 fio ... examples/sprandom.fio`); and the sections a file's header runs it
/// with: xnvme-compare.fio's `fio examples/xnvme-compare.fio --section=default ...`.
fn vars(file: &str) -> FioVars {
    let mut v = FioVars::of_process();
    v.env.entry("FIO_BS".into()).or_insert_with(|| "4096".into());
    if file == "xnvme-compare.fio" {
        v.sections = vec!["default".into()];
    }
    v
}

fn examples() -> Vec<(String, String)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/fio-examples");
    let mut out: Vec<(String, String)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "fio"))
        .map(|p| {
            (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read_to_string(&p).unwrap())
        })
        .collect();
    out.sort();
    out
}

/// The option a refusal names, and the refusal's text.
fn refusal(e: &FioError) -> (String, String) {
    let option = match e {
        FioError::Unsupported { option, .. } | FioError::UnknownOption { option, .. } => option.clone(),
        FioError::BadValue { option, .. } => option.clone(),
        FioError::UnsupportedEngine { engine, .. } => format!("ioengine={engine}"),
        FioError::Section { .. } | FioError::TooBig { .. } | FioError::Syntax { .. } => String::new(),
    };
    (option, e.to_string())
}

#[test]
fn fio_examples_import_and_each_refusal_names_its_option() {
    let all = examples();
    assert_eq!(all.len(), 47, "the block-engine examples of fio's examples/");
    let mut imported = 0;
    for (name, text) in &all {
        match translate_with(text, name, target(name), &vars(name)) {
            Ok(t) => {
                imported += 1;
                let ignored: Vec<&str> = t.ignored.iter().map(|i| i.option.as_str()).collect();
                println!("imported {name}: ignored {ignored:?}");
            }
            Err(e) => {
                let (option, text) = refusal(&e);
                println!("refused  {name}: {text}");
                assert!(
                    !option.is_empty()
                        && text.contains(&format!("'{}'", option.trim_start_matches("ioengine="))),
                    "{name}: {text}"
                );
            }
        }
    }
    let share = imported as f64 / all.len() as f64;
    println!("{imported} of {} import ({:.0}%)", all.len(), share * 100.0);
    // Measured: 12 of 47 before issue 25 (26%), 23 of 47 after its first pass (49%), 25 of 47 (53%) since the
    // per-command priorities (cmdprio_*) are ignored; still 25 since trims and flushes (issue 27): the examples
    // with them are enospc-pressure (its randtrim job translates, its verifier job is refused for
    // create_on_open and verify_backlog) and a zoned one. The 80% (38) issue 25 aimed for is out of reach without
    // accepting options that change the I/O; docs/FIO.md lists why each of the other 22 is refused.
    // Issue 36: 26 of 47 (55%) with `size` on the fixed-size target cut to it (four examples ran past
    // `mem:1G`'s end) and `rw=read:-8k` as `seq_skip`; 29 (62%) with `startdelay` (1mbs_clients) and `flow`
    // (butterfly, flow); 30 (64%) with `latency_target` as the depth search (latency-profile); 32 (68%) with
    // `zonemode=strided` as the `band` walk (disk-zone-profile) and `random_distribution=sequence` as
    // `dist = "sequence:..."` (sequence-distribution); 33 (70%) with `sprandom` as `dist = "sprandom:..."`
    // (sprandom.fio, with the FIO_BS=4096 its header gives); 35 (74%) with duplicate writes (`dedupe`:
    // dedupe-global) and atomic writes (`atomic`: atomic-verify). `verify_backlog` translates since then too,
    // but its two examples wait for other gaps: cross-stripe-verify for `offset_increment`, enospc-pressure
    // for per-job runtimes in one phase. xnvme-compare was refused as fio 3.33 refuses it without its
    // `${FIO_*}` variables; 36 (77%) with fio's `--section`, which its header gives (`--section=default`: the
    // `[override]` section that reads them is skipped unread, as fio skips it); 37 (79%) with
    // `offset_increment` as a worker table per clone with its own offset (cross-stripe-verify, on the drive of
    // 30 x 124 GiB its header assumes: `target`).
    assert!(imported >= 37, "{imported} of {} import", all.len());
}

#[test]
fn zoned_examples_stay_refused_by_name() {
    for (name, text) in examples() {
        if !text.lines().any(|l| l.trim_start().starts_with("zonemode=zbd")) {
            continue;
        }
        let e = translate_given(&text, &name, TARGET).expect_err(&name);
        let (option, text) = refusal(&e);
        assert!(option.starts_with("zone") || option == "ioengine=libzbc", "{name}: {text}");
    }
}
