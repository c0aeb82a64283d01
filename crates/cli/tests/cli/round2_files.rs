//! Issue 35, classes 2, 7, 11 and 12: a mark that cannot outlive the data, consent for outputs only from the
//! command line, bounded input, and every stream escaped. Every refusal is exit 2 with the victim unchanged.

use crate::util::{iolab, tempdir, write_run};
use std::os::unix::fs::MetadataExt;
use std::path::Path;

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

/// `iolab run JOB ARGS` on a small file target that iolab creates (exit code, stderr).
fn job_run(dir: &Path, job_text: &str, args: &[&str]) -> (Option<i32>, String) {
    let job = dir.join("job.toml");
    std::fs::write(&job, job_text).unwrap();
    let target = dir.join("t.dat");
    let out = iolab()
        .args(["run", job.to_str().unwrap(), "--target", target.to_str().unwrap(), "--size", "1M"])
        .args([
            "--rw",
            "randwrite",
            "--bs",
            "4k",
            "--qd",
            "2",
            "--ios",
            "64",
            "--buffered",
            "-q",
            "--no-save",
        ])
        .args(args)
        .output()
        .expect("spawn iolab");
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// Class 7: the job-file keys `trace` and `journal` may only create a new regular file. An existing file (a
/// stand-in for /etc/passwd) and a character device are refused, naming the key, the path, what is there and
/// the flag, and left as they were; the same path typed on the command line is the user's consent; a new
/// path from a job file is written.
#[test]
fn a_job_file_names_only_new_files_for_a_run_to_write() {
    let dir = tempdir();
    let victim = dir.path().join("passwd");
    let text = "root:x:0:0:root:/root:/bin/bash\n";
    std::fs::write(&victim, text).unwrap();
    let v = victim.to_str().unwrap();
    for key in ["trace", "journal"] {
        let (code, stderr) = job_run(dir.path(), &format!("{key} = \"{v}\"\n"), &[]);
        assert_eq!(code, Some(2), "{key}: {stderr}");
        for part in [&format!("{key} = '{v}'"), "an existing regular file", &format!("--{key}")] {
            assert!(stderr.contains(part), "{key}: no {part:?} in {stderr}");
        }
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), text, "{key} replaced the file");
    }
    for device in ["/dev/null", "/dev/zero"] {
        let (code, stderr) = job_run(dir.path(), &format!("trace = \"{device}\"\n"), &[]);
        assert_eq!(code, Some(2), "{device}: {stderr}");
        assert!(stderr.contains("a character device"), "{stderr}");
    }
    let (code, stderr) = job_run(dir.path(), "trace = \"/dev/null\"\n", &["--trace", "/dev/null"]);
    assert_eq!(code, Some(0), "typed on the command line: {stderr}");
    let (code, stderr) = job_run(dir.path(), &format!("trace = \"{v}\"\n"), &["--trace", v]);
    assert_eq!(code, Some(0), "typed on the command line: {stderr}");
    assert_ne!(std::fs::read_to_string(&victim).ok().as_deref(), Some(text), "consent typed: replaced");
    for (key, name) in [("trace", "new.iolabtrace"), ("journal", "new.journal")] {
        let new = dir.path().join(name);
        let (code, stderr) = job_run(dir.path(), &format!("{key} = \"{}\"\n", new.display()), &[]);
        assert_eq!(code, Some(0), "{key} on a new path: {stderr}");
        assert!(new.is_file(), "{key}: {} was not written", new.display());
    }
    // A sweep writes its journal at each point: the file its own first point made is its to replace.
    let journal = dir.path().join("sweep.journal");
    let job = dir.path().join("sweep.toml");
    std::fs::write(&job, format!("journal = \"{}\"\n", journal.display())).unwrap();
    let target = dir.path().join("t.dat");
    let out = iolab()
        .args(["sweep", job.to_str().unwrap(), "--target", target.to_str().unwrap(), "--qd", "1,2"])
        .args(["--rw", "randwrite", "--bs", "4k", "--ios", "64", "--buffered", "-q", "--no-save"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(journal.is_file());
}

/// Class 12: stderr is escaped as stdout is. A target named in a job file with an OSC sequence (set the
/// window title) and a CSI one (clear the screen) reaches stderr through the "creating" notice and through an
/// error message: neither carries a raw ESC or BEL byte.
#[test]
fn a_name_with_escape_sequences_never_reaches_stderr_raw() {
    let dir = tempdir();
    let evil = "\\u001b]0;pwned\\u0007\\u001b[2J";
    let new = format!("{}/{evil}.dat", dir.path().display());
    let missing = format!("{}/no-such-dir{evil}/t.dat", dir.path().display());
    for (target, code) in [(new, 0), (missing, 2)] {
        let job = dir.path().join("job.toml");
        std::fs::write(&job, format!("target = \"{target}\"\nsize = \"1M\"\nrw = \"randread\"\n")).unwrap();
        let out = iolab()
            .args(["run", job.to_str().unwrap(), "--bs", "4k", "--qd", "1", "--ios", "16", "--no-save"])
            .args(["--buffered", "--json", "/dev/null"])
            .output()
            .expect("spawn iolab");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{stderr}");
        assert!(stderr.contains("pwned"), "the name is said: {stderr}");
        assert!(!out.stderr.iter().any(|&b| b == 0x1b || b == 0x07), "raw escape on stderr: {stderr:?}");
    }
}

/// `iolab ARGS` with its address space limited to `limit_bytes` (RLIMIT_AS, as `ulimit -v` sets it).
fn iolab_limited(limit_bytes: u64, args: &[&std::ffi::OsStr]) -> std::process::Output {
    use std::os::unix::process::CommandExt;
    let mut c = std::process::Command::new(assert_cmd::cargo::cargo_bin("iolab"));
    c.args(args).env_remove("IOLAB_SCRATCH_DIR").env_remove("IOLAB_MEMINFO");
    let limit = libc::rlimit { rlim_cur: limit_bytes, rlim_max: limit_bytes };
    // SAFETY: between fork and exec the closure only calls setrlimit, which is async-signal-safe, on a
    // value it owns.
    unsafe {
        c.pre_exec(move || {
            if libc::setrlimit(libc::RLIMIT_AS, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    c.output().expect("spawn iolab")
}

/// Class 11: `iolab mrc --exact` on 200 reads of 4 GiB each (200 M references) under an address-space limit
/// of 1 GiB: the estimate counts RLIMIT_AS, not only MemAvailable, and refuses with exit 2 naming the limit,
/// where it used to abort with "memory allocation failed".
#[test]
fn mrc_counts_the_address_space_limit_before_it_allocates() {
    use iolab_trace::{TraceHeader, TraceOp, TraceRecord, TraceWriter};
    let dir = tempdir();
    let path = dir.path().join("huge.trace");
    let header = TraceHeader { targets: vec!["d".into()], ..TraceHeader::default() };
    let mut w = TraceWriter::new(std::fs::File::create(&path).unwrap(), &header).unwrap();
    for i in 0..200u64 {
        w.write(&TraceRecord::new(i, TraceOp::Read, 0, i * (4 << 30), u32::MAX)).unwrap();
    }
    w.finish().unwrap();
    let out = iolab_limited(1 << 30, &["mrc".as_ref(), path.as_os_str(), "--exact".as_ref()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("needs up to") && err.contains("RLIMIT_AS"), "{err}");
}

/// Class 11: a journal and a durable-write log that hold their magic and then 2 GiB of nothing (a sparse
/// file) are refused from their headers, under an address-space limit of 512 MiB that reading them whole
/// would break: exit 2, the version named, nothing read past the header.
#[test]
fn a_huge_journal_or_log_is_refused_from_its_header() {
    let dir = tempdir();
    let target = dir.path().join("t.dat");
    std::fs::write(&target, vec![0u8; 1 << 20]).unwrap();
    let journal = dir.path().join("run.journal");
    let log = dir.path().join("run.journal.durable");
    for (path, magic, version) in [(&journal, &b"IOLABJNL"[..], 7u32), (&log, &b"IOLABDUR"[..], 9)] {
        let mut head = magic.to_vec();
        head.extend_from_slice(&version.to_le_bytes());
        std::fs::write(path, &head).unwrap();
        std::fs::OpenOptions::new().write(true).open(path).unwrap().set_len(2 << 30).unwrap();
    }
    let out = iolab_limited(
        512 << 20,
        &["verify".as_ref(), target.as_os_str(), "--journal".as_ref(), journal.as_os_str()],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("journal version 7"), "{err}");
}

/// Class 3, the journal: its directory is held from the write gate's claim, before the targets are made.
/// The journal's directory swapped for a symlink to another while the target is being filled (after the
/// claim, before the verifier starts): the journal is written in the directory the gate checked, nothing in
/// the one the symlink names.
#[test]
fn the_journal_lands_where_the_gate_checked_even_if_its_directory_is_swapped_during_the_fill() {
    let top = tempdir();
    let (jdir, moved, other) = (top.path().join("jdir"), top.path().join("moved"), top.path().join("other"));
    std::fs::create_dir(&jdir).unwrap();
    std::fs::create_dir(&other).unwrap();
    let target = top.path().join("target.img");
    let journal = jdir.join("run.journal");
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("iolab"))
        .env("IOLAB_DB", crate::util::shared_catalog())
        .args(["run", "--ios", "64", "--ramp", "0", "--bs", "4k", "--rw", "randwrite", "-q", "--no-save"])
        .args(["--size", "512M", "--buffered", "--verify", "--journal"])
        .arg(&journal)
        .arg("--target")
        .arg(&target)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn iolab");
    let since = std::time::Instant::now();
    while !target.exists() {
        assert!(since.elapsed().as_secs() < 30, "the target was never created");
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    std::fs::rename(&jdir, &moved).unwrap();
    std::os::unix::fs::symlink(&other, &jdir).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(moved.join("run.journal").is_file(), "the journal is in the directory the gate checked");
    let strays: Vec<_> = std::fs::read_dir(&other).unwrap().flatten().map(|e| e.file_name()).collect();
    assert!(strays.is_empty(), "written through the swapped-in symlink: {strays:?}");
}
