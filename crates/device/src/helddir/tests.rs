//! Held directories: made, emptied and removed through descriptors, never through a swapped path, a
//! symlink or a mount; taken only with iolab's mark, unlocked, and with nothing in use beneath.

use super::*;
use std::fs;
use std::os::unix::fs::symlink;
use std::process::{Command, Stdio};

fn s(p: &Path) -> String {
    p.display().to_string()
}

/// A directory made and marked by iolab at `path`, its hold let go (as after a `--keep` run); `None` when
/// no mark can be kept here (then the caller skips).
fn kept(path: &Path) -> Option<()> {
    let mut held = HeldDir::claim(&s(path), &[]).unwrap();
    held.make().unwrap();
    let ours = crate::ownership::dir_is_ours(&File::open(path).unwrap());
    if !ours {
        iolab_testkit::skip(format_args!("this file system keeps no mark iolab trusts"));
    }
    ours.then_some(())
}

#[test]
fn a_swapped_parent_changes_nothing_iolab_removes() {
    let t = tempfile::tempdir().unwrap();
    let parent = t.path().join("parent");
    fs::create_dir(&parent).unwrap();
    let victim = t.path().join("victim");
    fs::create_dir_all(victim.join("db")).unwrap();
    fs::write(victim.join("db/precious"), b"not iolab's").unwrap();
    let db = parent.join("db");
    let mut held = HeldDir::claim(&s(&db), &[]).unwrap();
    held.make().unwrap();
    fs::write(db.join("table"), b"iolab's").unwrap();
    // Mid-run: the parent is renamed away and a symlink to another directory put in its place.
    fs::rename(&parent, t.path().join("moved")).unwrap();
    symlink(&victim, &parent).unwrap();
    held.remove().unwrap();
    assert!(victim.join("db/precious").exists(), "the other directory is untouched");
    assert!(!t.path().join("moved/db").exists(), "iolab's own directory, where it went, is removed");
}

#[test]
fn a_symlink_inside_is_removed_and_what_it_names_is_not() {
    let t = tempfile::tempdir().unwrap();
    let other = t.path().join("other");
    fs::create_dir(&other).unwrap();
    fs::write(other.join("keep"), b"x").unwrap();
    let db = t.path().join("db");
    let mut held = HeldDir::claim(&s(&db), &[]).unwrap();
    held.make().unwrap();
    symlink(&other, db.join("link")).unwrap();
    fs::create_dir(db.join("sub")).unwrap();
    symlink(other.join("keep"), db.join("sub/link")).unwrap();
    held.remove().unwrap();
    assert!(!db.exists());
    assert!(other.join("keep").exists());
}

#[test]
fn a_directory_with_only_a_planted_old_mark_is_refused_and_left_alone() {
    let t = tempfile::tempdir().unwrap();
    let db = t.path().join("db");
    fs::create_dir(&db).unwrap();
    fs::write(db.join(crate::ownership::OLD_DIR_MARK), b"planted").unwrap();
    fs::write(db.join("data"), b"someone's").unwrap();
    let e = HeldDir::claim(&s(&db), &[]).map(|_| ()).unwrap_err().to_string();
    assert!(e.contains("an older iolab's mark") && e.contains("rm -r"), "{e}");
    assert!(db.join("data").exists());
    // A planted token for the user's records is no mark either.
    use xattr::FileExt;
    let _ =
        File::open(&db).unwrap().set_xattr(crate::ownership::DIR_TOKEN, b"00112233445566778899aabbccddeeff");
    assert!(HeldDir::claim(&s(&db), &[]).is_err());
}

#[test]
fn a_second_claim_of_a_held_directory_is_refused() {
    let t = tempfile::tempdir().unwrap();
    let db = t.path().join("db");
    if kept(&db).is_none() {
        return;
    }
    let first = HeldDir::claim(&s(&db), &[]).unwrap();
    assert_eq!(first.state(), DirState::Ours);
    let e = HeldDir::claim(&s(&db), &[]).map(|_| ()).unwrap_err().to_string();
    assert!(e.contains("another iolab run is using"), "{e}");
    drop(first);
    HeldDir::claim(&s(&db), &[]).unwrap();
}

#[test]
fn a_kept_directory_with_a_file_held_open_by_another_process_is_refused_and_kept() {
    let t = tempfile::tempdir().unwrap();
    let db = t.path().join("db");
    if kept(&db).is_none() {
        return;
    }
    fs::write(db.join("tpcc.sqlite"), b"a live database").unwrap();
    let mut child = Command::new("sleep")
        .arg("30")
        .stdin(File::open(db.join("tpcc.sqlite")).unwrap())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let e = HeldDir::claim(&s(&db), &[]).map(|_| ()).unwrap_err().to_string();
    let _ = child.kill();
    let _ = child.wait();
    assert!(e.contains("in use") && e.contains(&format!("process {} (sleep)", child.id())), "{e}");
    assert!(db.join("tpcc.sqlite").exists());
    let mut held = HeldDir::claim(&s(&db), &[]).unwrap();
    held.make().unwrap();
    assert!(!db.join("tpcc.sqlite").exists(), "once nothing holds it, it is emptied");
}

#[test]
fn a_file_of_another_account_inside_is_never_removed() {
    if !nix::unistd::geteuid().is_root() {
        iolab_testkit::skip(format_args!("not root: cannot give a file to another account"));
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let db = t.path().join("db");
    let mut held = HeldDir::claim(&s(&db), &[]).unwrap();
    held.make().unwrap();
    fs::write(db.join("theirs"), b"x").unwrap();
    std::os::unix::fs::chown(db.join("theirs"), Some(4242), None).unwrap();
    let e = held.remove().map(|_| ()).unwrap_err().to_string();
    assert!(e.contains("belongs to uid 4242"), "{e}");
    assert!(db.join("theirs").exists());
    let allowed = HeldDir { owners: vec![0, 4242], ..held };
    allowed.remove().unwrap();
    assert!(!db.exists(), "an account named as an owner (a server's) is removed");
}

#[test]
fn a_mount_point_inside_is_never_entered() {
    if !nix::unistd::geteuid().is_root() {
        iolab_testkit::skip(format_args!("not root: cannot mount"));
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let db = t.path().join("db");
    let mut held = HeldDir::claim(&s(&db), &[]).unwrap();
    held.make().unwrap();
    let mnt = db.join("mnt");
    fs::create_dir(&mnt).unwrap();
    let mounted = Command::new("mount").args(["-t", "tmpfs", "iolab-test", &s(&mnt)]).status();
    if !mounted.is_ok_and(|s| s.success()) {
        iolab_testkit::skip(format_args!("cannot mount a tmpfs here"));
        return;
    }
    fs::write(mnt.join("data"), b"on another file system").unwrap();
    let e = held.remove().map_err(|e| e.to_string());
    let data_left = mnt.join("data").exists();
    let _ = Command::new("umount").arg(&mnt).status();
    let e = e.unwrap_err();
    assert!(e.contains("is a mount point"), "{e}");
    assert!(data_left, "nothing on the mount was removed");
    held.remove().unwrap();
    assert!(!db.exists());
}
