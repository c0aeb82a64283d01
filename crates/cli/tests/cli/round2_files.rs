//! Issue 35, classes 2, 7, 11 and 12: a mark that cannot outlive the data, consent for outputs only from the
//! command line, bounded input, and every stream escaped. Every refusal is exit 2 with the victim unchanged.

use crate::util::{iolab, tempdir};
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// `iolab run ARGS` for a short write, not saved: (exit code, stderr).
fn write_run(args: &[&str]) -> (Option<i32>, String) {
    let out = iolab()
        .args(["run", "-d", "1s", "--ramp", "0", "--bs", "4k", "--qd", "4", "-q", "--no-save"])
        .args(args)
        .output()
        .expect("spawn iolab");
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// True when `path` carries iolab's mark (`user.iolab`).
fn has_mark(path: &Path) -> bool {
    let c_path = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: both strings are NUL-terminated and live across the call; a null buffer of size 0 only asks
    // for the value's length.
    let n = unsafe { libc::getxattr(c_path.as_ptr(), c"user.iolab".as_ptr(), std::ptr::null_mut(), 0) };
    n > 0
}

/// Class 2: a file iolab made and wrote is written again freely by the next run; once other data is copied
/// over it (the same inode, its mark still on), it is someone else's: refused without --overwrite, unchanged.
#[test]
fn a_mark_whose_data_was_replaced_no_longer_vouches_for_it() {
    let dir = tempdir();
    let img = dir.path().join("old-iolab-file.img");
    let target = img.to_str().unwrap();
    let (code, stderr) = write_run(&["--target", target, "--size", "8M", "--rw", "randwrite", "--buffered"]);
    assert_eq!(code, Some(0), "{stderr}");
    if !has_mark(&img) {
        iolab_testkit::skip(format_args!("this file system keeps no user extended attributes"));
        return;
    }
    let again = ["--target", target, "--rw", "randwrite", "--buffered"];
    let (code, stderr) = write_run(&again);
    assert_eq!(code, Some(0), "a file iolab made and wrote: {stderr}");
    let (code, stderr) = write_run(&again);
    assert_eq!(code, Some(0), "written twice, still iolab's: {stderr}");
    let ino = std::fs::metadata(&img).unwrap().ino();
    let csv = "id,name,balance\n".to_string() + &"42,someone,1000\n".repeat(100_000);
    std::fs::write(&img, &csv).unwrap();
    assert_eq!(std::fs::metadata(&img).unwrap().ino(), ino, "cp keeps the inode");
    assert!(has_mark(&img), "and the mark");
    let (code, stderr) = write_run(&again);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("changed since iolab last wrote it") && stderr.contains("--overwrite"),
        "{stderr}"
    );
    assert!(std::fs::read(&img).unwrap() == csv.as_bytes(), "the CSV was changed");
    let (code, stderr) = write_run(&[&again[..], &["--overwrite"]].concat());
    assert_eq!(code, Some(0), "consent typed: {stderr}");
}
