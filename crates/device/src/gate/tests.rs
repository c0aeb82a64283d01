//! The write gate on real files: collisions by identity, outputs refused where no file belongs, and
//! atomic replacement.

use super::*;
use crate::helddir::DirState;
use std::os::unix::fs::symlink;

fn dir() -> tempfile::TempDir {
    tempfile::tempdir().expect("temp dir")
}

fn s(p: &Path) -> String {
    p.to_str().expect("utf-8 path").to_string()
}

#[test]
fn two_outputs_on_one_file_are_refused_also_through_a_symlink_or_dotdot() {
    let d = dir();
    let x = d.path().join("x.json");
    let mut gate = WriteGate::new();
    gate.output("--json", &s(&x)).unwrap();
    let e = gate.output("--csv", &s(&x)).unwrap_err();
    assert!(matches!(e, GateError::Collision { .. }), "{e}");
    assert!(e.to_string().contains("--json") && e.to_string().contains("--csv"), "{e}");
    // The same new file named another way: a path through `..`, and a symlinked directory.
    let sub = d.path().join("sub");
    fs::create_dir(&sub).unwrap();
    let dotdot = sub.join("..").join("x.json");
    assert!(gate.output("-o", &s(&dotdot)).is_err());
    symlink(d.path(), d.path().join("again")).unwrap();
    assert!(gate.output("-o", &s(&d.path().join("again").join("x.json"))).is_err());
    // An existing file, through a symlink to it.
    let y = d.path().join("y.json");
    fs::write(&y, "{}").unwrap();
    symlink(&y, d.path().join("y-link")).unwrap();
    gate.output("--json2", &s(&y)).unwrap();
    assert!(gate.output("--csv2", &s(&d.path().join("y-link"))).is_err());
}

#[test]
fn stdout_takes_one_output() {
    let mut gate = WriteGate::new();
    gate.output("--json", "-").unwrap();
    let e = gate.output("--csv", "-").unwrap_err();
    assert!(matches!(e, GateError::BothStdout { .. }), "{e}");
}

#[test]
fn a_journal_or_output_on_a_target_is_refused_but_targets_may_share() {
    let d = dir();
    let t = d.path().join("target.dat");
    fs::write(&t, vec![0u8; 4096]).unwrap();
    let mut gate = WriteGate::new();
    gate.target(&s(&t), Access::Reads).unwrap();
    gate.target(&s(&t), Access::Writes).unwrap();
    let e = gate.journal("--journal", &s(&t), NamedBy::CommandLine).unwrap_err();
    assert!(e.to_string().contains("never writes a target"), "{e}");
    assert!(gate.output("--json", &s(&t)).is_err());
    // Two reads of one file are no collision; a read and a write are.
    let mut gate = WriteGate::new();
    gate.claim("--journal", &s(&t), Access::Reads).unwrap();
    gate.target(&s(&t), Access::Reads).unwrap();
    assert!(gate.claim("the catalog", &s(&t), Access::Writes).is_err());
}

#[test]
fn dev_null_takes_every_output() {
    let mut gate = WriteGate::new();
    gate.output("--json", "/dev/null").unwrap().write(b"{}").unwrap();
    gate.output("--csv", "/dev/null").unwrap().write(b"a,b").unwrap();
}

#[test]
fn outputs_are_refused_where_no_file_belongs() {
    let d = dir();
    let mut gate = WriteGate::new();
    let e = gate.output("--json", &s(d.path())).unwrap_err();
    assert!(e.to_string().contains("is a directory"), "{e}");
    let e = gate.output("--json", &s(&d.path().join("missing/x.json"))).unwrap_err();
    assert!(e.to_string().contains("does not exist"), "{e}");
    symlink(d.path().join("nowhere"), d.path().join("dangling")).unwrap();
    let e = gate.output("--json", &s(&d.path().join("dangling"))).unwrap_err();
    assert!(e.to_string().contains("which does not exist"), "{e}");
    assert!(!d.path().join("nowhere").exists());
    // A disk image, a catalog and a journal are never replaced by an output; a journal may replace a journal.
    let mut image = vec![0u8; 2048];
    image[1080..1082].copy_from_slice(&[0x53, 0xEF]);
    for (name, bytes) in [("disk.img", image), ("cat.db", b"SQLite format 3\0....".to_vec())] {
        let p = d.path().join(name);
        fs::write(&p, &bytes).unwrap();
        let e = gate.output("--json", &s(&p)).unwrap_err();
        assert!(e.to_string().contains("signature"), "{e}");
        assert!(fs::read(&p).unwrap() == bytes, "{name} changed");
    }
    let j = d.path().join("old.journal");
    fs::write(&j, b"IOLABJNL....").unwrap();
    assert!(gate.output("--json", &s(&j)).is_err());
    gate.journal("--journal", &s(&j), NamedBy::CommandLine).unwrap();
}

#[test]
fn a_block_device_is_never_an_output() {
    let Some(dev) = ["/dev/loop0", "/dev/sda", "/dev/vda", "/dev/nvme0n1"]
        .into_iter()
        .find(|p| fs::metadata(p).is_ok_and(|m| m.file_type().is_block_device()))
    else {
        iolab_testkit::skip(format_args!("no block device node found"));
        return;
    };
    let e = WriteGate::new().output("--json", dev).unwrap_err();
    assert!(e.to_string().contains("is a block device"), "{e}");
    // Through a symlink too.
    let d = dir();
    symlink(dev, d.path().join("typo")).unwrap();
    let e = WriteGate::new().output("-o", &s(&d.path().join("typo"))).unwrap_err();
    assert!(e.to_string().contains("is a block device"), "{e}");
}

#[test]
fn a_write_replaces_the_file_atomically_and_keeps_its_mode_and_symlinks() {
    let d = dir();
    let p = d.path().join("r.json");
    fs::write(&p, "old").unwrap();
    fs::set_permissions(&p, fs::Permissions::from_mode(0o600)).unwrap();
    let link = d.path().join("r-link.json");
    symlink(&p, &link).unwrap();
    let out = WriteGate::new().output("--json", &s(&link)).unwrap();
    out.write(b"new").unwrap();
    assert_eq!(fs::read_to_string(&p).unwrap(), "new");
    assert!(fs::symlink_metadata(&link).unwrap().file_type().is_symlink(), "the symlink was replaced");
    assert_eq!(fs::metadata(&p).unwrap().mode() & 0o777, 0o600);
    let left: Vec<_> = fs::read_dir(d.path()).unwrap().flatten().map(|e| e.file_name()).collect();
    assert_eq!(left.len(), 2, "a temporary file was left: {left:?}");
}

#[test]
fn a_taken_temporary_name_is_never_followed() {
    let d = dir();
    let p = d.path().join("r.json");
    let victim = d.path().join("victim");
    fs::write(&victim, "keep").unwrap();
    // Whoever guessed the first temporary name (a symlink to a victim) gets nothing written through it.
    symlink(&victim, d.path().join(format!(".r.json.iolab-{}-0.tmp", std::process::id()))).unwrap();
    WriteGate::new().output("--json", &s(&p)).unwrap().write(b"doc").unwrap();
    assert_eq!(fs::read_to_string(&victim).unwrap(), "keep");
    assert_eq!(fs::read_to_string(&p).unwrap(), "doc");
}

/// A full file system: the old file stays whole, no temporary file is left, and the error says "disk full".
/// Needs root (a small tmpfs mount).
#[test]
fn a_full_disk_leaves_the_old_file_whole() {
    if !crate::error::running_as_root() {
        iolab_testkit::skip(format_args!("needs root for a tmpfs mount"));
        return;
    }
    let d = dir();
    let status = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=64k", "tmpfs"])
        .arg(d.path())
        .status();
    if !status.is_ok_and(|s| s.success()) {
        iolab_testkit::skip(format_args!("cannot mount a tmpfs"));
        return;
    }
    let p = d.path().join("r.json");
    fs::write(&p, "old document").unwrap();
    let result = WriteGate::new().output("--json", &s(&p)).unwrap().write(&vec![b'x'; 1 << 20]);
    let old = fs::read_to_string(&p);
    let left = fs::read_dir(d.path()).unwrap().count();
    let _ = std::process::Command::new("umount").arg(d.path()).status();
    let e = result.unwrap_err();
    assert!(e.to_string().contains("disk full"), "{e}");
    assert!(!e.is_refusal());
    assert_eq!(old.unwrap(), "old document");
    assert_eq!(left, 1, "a temporary file was left");
}

#[test]
fn a_journal_checkpoint_file_that_is_not_iolabs_is_refused() {
    let d = dir();
    let j = d.path().join("run.journal");
    let tmp = d.path().join("run.journal.tmp");
    // A leftover of an interrupted checkpoint is fine; anything else there is someone's.
    fs::write(&tmp, b"IOLABJNL....").unwrap();
    WriteGate::new().journal("--journal", &s(&j), NamedBy::CommandLine).unwrap();
    fs::write(&tmp, b"someone's notes").unwrap();
    assert!(WriteGate::new().journal("--journal", &s(&j), NamedBy::CommandLine).is_err());
    fs::remove_file(&tmp).unwrap();
    symlink(d.path().join("victim"), &tmp).unwrap();
    let e = WriteGate::new().journal("--journal", &s(&j), NamedBy::CommandLine).unwrap_err();
    assert!(e.to_string().contains("checkpoint file"), "{e}");
}

/// Issue 27, item 6: the durable-write log beside a journal (`PATH.durable`) is removed and written anew by
/// the run: an earlier run's log is fine, anything else there is someone's, and a target of that name is
/// refused.
#[test]
fn a_journal_durable_log_that_is_not_iolabs_is_refused() {
    let d = dir();
    let j = d.path().join("run.journal");
    let log = d.path().join("run.journal.durable");
    fs::write(&log, b"IOLABDUR....").unwrap();
    WriteGate::new().journal("--journal", &s(&j), NamedBy::CommandLine).unwrap();
    fs::write(&log, b"IOLABJNL, a journal, not a log").unwrap();
    let e = WriteGate::new().journal("--journal", &s(&j), NamedBy::CommandLine).unwrap_err();
    assert!(e.to_string().contains("durable-write log"), "{e}");
    fs::remove_file(&log).unwrap();
    symlink(d.path().join("victim"), &log).unwrap();
    assert!(WriteGate::new().journal("--journal", &s(&j), NamedBy::CommandLine).is_err());
    fs::remove_file(&log).unwrap();
    let mut gate = WriteGate::new();
    gate.journal("--journal", &s(&j), NamedBy::CommandLine).unwrap();
    assert!(gate.target(&s(&log), Access::Writes).is_err(), "a target where the log goes");
}

#[test]
fn a_database_dir_is_new_or_ours_and_anything_else_is_refused() {
    let d = dir();
    let new = d.path().join("db");
    let mut gate = WriteGate::new();
    let mut held = gate.database_dir("--dir", &s(&new), &[]).unwrap();
    assert_eq!(held.state(), DirState::New);
    fs::create_dir(&new).unwrap();
    let e = WriteGate::new().database_dir("--dir", &s(&new), &[]).unwrap_err();
    assert!(e.to_string().contains("a directory iolab did not make"), "{e}");
    fs::remove_dir(&new).unwrap();
    held.make().unwrap();
    drop(held);
    if crate::ownership::dir_is_ours(&fs::File::open(&new).unwrap()) {
        let again = WriteGate::new().database_dir("--dir", &s(&new), &[]).unwrap();
        assert_eq!(again.state(), DirState::Ours);
    }
    let file = d.path().join("f");
    fs::write(&file, b"x").unwrap();
    assert!(WriteGate::new()
        .database_dir("--dir", &s(&file), &[])
        .unwrap_err()
        .to_string()
        .contains("not a directory"));
    let e = WriteGate::new().database_dir("--dir", &s(&d.path().join("no/such/db")), &[]).unwrap_err();
    assert!(e.to_string().contains("does not exist"), "{e}");
}

#[test]
fn a_path_inside_a_directory_iolab_removes_is_refused_whichever_comes_first() {
    let d = dir();
    let db = d.path().join("db");
    // A directory not there yet: the output claimed first, then the directory.
    let mut gate = WriteGate::new();
    gate.claim("the catalog", &s(&db.join("cat.db")), Access::Writes).unwrap();
    let e = gate.database_dir("--dir", &s(&db), &[]).unwrap_err();
    assert!(e.to_string().contains("the catalog '") && e.to_string().contains("lies inside --dir"), "{e}");
    // One of iolab's, there already, reached through a symlink: the directory first, then the output.
    let mut held = WriteGate::new().database_dir("--dir", &s(&db), &[]).unwrap();
    held.make().unwrap();
    if !crate::ownership::dir_is_ours(&fs::File::open(&db).unwrap()) {
        iolab_testkit::skip(format_args!("no mark can be kept here"));
        return;
    }
    drop(held);
    symlink(&db, d.path().join("link")).unwrap();
    let mut gate = WriteGate::new();
    let _held = gate.database_dir("--dir", &s(&db), &[]).unwrap();
    let e = gate.output("--json", &s(&d.path().join("link/out.json"))).unwrap_err();
    assert!(matches!(e, GateError::Inside { .. }), "{e}");
    assert!(e.is_refusal());
    gate.output("--csv", &s(&d.path().join("out.csv"))).unwrap();
}

/// A path a job file named may only become a new regular file: nothing there (a file, a dangling symlink, a
/// FIFO, a terminal, standard output) and a directory above it; a file put there after the claim is left as
/// it is (the output is not written); the command line may replace.
#[test]
fn a_path_a_job_file_named_only_creates_a_new_file() {
    let d = dir();
    let by = NamedBy::JobFile;
    let file = d.path().join("file");
    fs::write(&file, b"keep").unwrap();
    let dangling = d.path().join("dangling");
    symlink(d.path().join("nowhere"), &dangling).unwrap();
    let fifo = d.path().join("fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    for (path, is) in [
        (s(&file), "an existing regular file"),
        (s(&dangling), "a symlink"),
        (s(&fifo), "a FIFO"),
        ("/dev/null".into(), "a character device"),
        ("-".into(), "standard output"),
        (s(&file.join("x")), "not a directory"),
    ] {
        let e = WriteGate::new().output_named("--trace", &path, by).unwrap_err();
        assert!(matches!(e, GateError::NotNew { .. }), "{path}: {e}");
        assert!(e.to_string().contains(is) && e.to_string().contains("--trace"), "{path}: {e}");
        assert!(WriteGate::new().journal("--journal", &path, by).is_err(), "{path}");
    }
    WriteGate::new().output_named("--trace", &s(&file), NamedBy::CommandLine).unwrap();
    let j = d.path().join("j");
    fs::write(d.path().join("j.durable"), b"x").unwrap();
    assert!(WriteGate::new().journal("--journal", &s(&j), by).is_err(), "a log beside it");
    let new = d.path().join("new");
    let out = WriteGate::new().output_named("--trace", &s(&new), by).unwrap();
    fs::write(&new, b"put there meanwhile").unwrap();
    assert!(out.write(b"trace").is_err());
    assert_eq!(fs::read(&new).unwrap(), b"put there meanwhile");
    fs::remove_file(&new).unwrap();
    out.write(b"trace").unwrap();
    assert_eq!(fs::read(&new).unwrap(), b"trace");
    // Claimed as new by this process (a sweep's next point): its regular file may be written again.
    WriteGate::new().output_named("--trace", &s(&new), by).unwrap();
    let leftovers = fs::read_dir(d.path())
        .unwrap()
        .filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().contains(".tmp"))
        .count();
    assert_eq!(leftovers, 0, "no temporary file left");
}

/// Issue 35, class 3: an output's path is resolved once. Its directory swapped for a symlink to another
/// after the claim (renamed away, a link put at its name), the output still lands in the directory that
/// was claimed and checked, for a new file, a replaced one and one written as it goes; the other directory
/// gets nothing.
#[test]
fn an_output_lands_where_it_was_claimed_though_its_directory_was_swapped_for_a_symlink() {
    let d = dir();
    let (out, moved, elsewhere) = (d.path().join("out"), d.path().join("moved"), d.path().join("elsewhere"));
    fs::create_dir(&out).unwrap();
    fs::create_dir(&elsewhere).unwrap();
    fs::write(out.join("old.json"), b"old").unwrap();
    let mut gate = WriteGate::new();
    let new = gate.output("--json", &s(&out.join("new.json"))).unwrap();
    let old = gate.output("--csv", &s(&out.join("old.json"))).unwrap();
    let stream = gate.output("--trace", &s(&out.join("trace.bin"))).unwrap().stream().unwrap();
    fs::rename(&out, &moved).unwrap();
    symlink(&elsewhere, &out).unwrap();
    new.write(b"new").unwrap();
    old.write(b"replaced").unwrap();
    stream.writer().unwrap().write_all(b"trace").unwrap();
    stream.commit().unwrap();
    assert_eq!(fs::read(moved.join("new.json")).unwrap(), b"new");
    assert_eq!(fs::read(moved.join("old.json")).unwrap(), b"replaced");
    assert_eq!(fs::read(moved.join("trace.bin")).unwrap(), b"trace");
    assert_eq!(
        fs::read_dir(&elsewhere).unwrap().count(),
        0,
        "nothing written through the swapped-in symlink"
    );
}
