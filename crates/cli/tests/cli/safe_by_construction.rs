//! Issue 24, rules 1-7: the safety rules that close whole classes, each tried as an adversary would. Tests
//! that need root, loop devices, `mkfs.ext4`, `mount`, `mkswap`/`swapon` or `sqlite3` print `SKIP: reason`
//! without them. Every refusal must be exit 2 with the victim byte-identical.

use crate::util::{iolab, is_root, tempdir, write_run};
use std::path::{Path, PathBuf};
use std::process::Command;

fn sh(cmd: &str, args: &[&str]) -> Result<String, String> {
    let out = Command::new(cmd).args(args).output().map_err(|e| format!("{cmd}: {e}"))?;
    if !out.status.success() {
        return Err(format!("{cmd} {}: {}", args.join(" "), String::from_utf8_lossy(&out.stderr).trim()));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn skip(test: &str, why: &str) {
    iolab_testkit::skip(format_args!("{test}: {why}"));
}

/// Loop devices and mounts of one test, undone in reverse order on drop; the loop-device lock held throughout.
struct Stack {
    loops: Vec<String>,
    mounts: Vec<PathBuf>,
    _serial: std::sync::MutexGuard<'static, ()>,
}

impl Stack {
    fn new() -> Stack {
        Stack { loops: Vec::new(), mounts: Vec::new(), _serial: crate::util::loop_lock() }
    }

    fn attach(&mut self, file: &Path, offset: Option<u64>) -> Result<String, String> {
        let mut args = vec!["--find".to_string(), "--show".to_string()];
        if let Some(o) = offset {
            args.extend(["--offset".to_string(), o.to_string()]);
        }
        args.push(file.display().to_string());
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let dev = sh("losetup", &args)?;
        self.loops.push(dev.clone());
        Ok(dev)
    }

    /// Mounts an overlay at `at` of `lower` under `upper` (`work` beside them).
    fn overlay(&mut self, lower: &Path, upper: &Path, work: &Path, at: &Path) -> Result<(), String> {
        for d in [lower, upper, work, at] {
            std::fs::create_dir_all(d).map_err(|e| e.to_string())?;
        }
        let opts =
            format!("lowerdir={},upperdir={},workdir={}", lower.display(), upper.display(), work.display());
        sh("mount", &["-t", "overlay", "overlay", "-o", &opts, at.to_str().unwrap()])?;
        self.mounts.push(at.to_path_buf());
        Ok(())
    }

    fn mount(&mut self, dev: &str, at: &Path) -> Result<(), String> {
        std::fs::create_dir_all(at).map_err(|e| e.to_string())?;
        sh("mount", &[dev, at.to_str().unwrap()])?;
        self.mounts.push(at.to_path_buf());
        Ok(())
    }
}

impl Drop for Stack {
    fn drop(&mut self) {
        for m in self.mounts.drain(..).rev() {
            crate::util::unmount(&m);
        }
        for l in self.loops.drain(..).rev() {
            let _ = Command::new("losetup").args(["-d", &l]).status();
        }
    }
}

fn mkfs_ext4(what: &str) -> Result<(), String> {
    sh("mkfs.ext4", &["-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", what]).map(|_| ())
}

/// Rule 1: a job file (or a profile, or an import) never grants consent. Today's `vendor.toml` with
/// `allow_write_device = true` and `destroy_data = true` is refused, naming the flag, before anything runs.
#[test]
fn consent_in_a_job_file_is_refused_naming_the_flag() {
    let dir = tempdir();
    let victim = dir.path().join("disk.img");
    std::fs::write(&victim, vec![0xabu8; 1 << 20]).unwrap();
    for (key, flag) in [("allow_write_device", "--allow-write-device"), ("destroy_data", "--destroy-data")] {
        let job = dir.path().join(format!("{key}.toml"));
        std::fs::write(&job, format!("rw = \"randwrite\"\n{key} = true\n")).unwrap();
        let (code, stderr) = write_run(&[job.to_str().unwrap(), "--target", victim.to_str().unwrap()]);
        assert_eq!(code, Some(2), "{stderr}");
        assert!(stderr.contains(key) && stderr.contains(flag) && stderr.contains("command line"), "{stderr}");
    }
    // In a worker table, and through `--set` in a sweep, it is refused alike.
    let job = dir.path().join("worker.toml");
    std::fs::write(&job, "[worker.w]\nrw = \"randwrite\"\ndestroy_data = true\n").unwrap();
    let (code, stderr) = write_run(&[job.to_str().unwrap(), "--target", victim.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{stderr}");
    let out = iolab()
        .args(["sweep", "--target", victim.to_str().unwrap(), "--rw", "randwrite", "--set"])
        .args(["destroy_data=true,false", "-d", "1s", "--no-save", "-q"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(std::fs::read(&victim).unwrap(), vec![0xabu8; 1 << 20], "nothing was written");
}

/// Rule 2: the loop-backing check compares identities, not sysfs path text. A backing file whose name ends
/// in a space, and one whose attached name was removed while a hard link remains (`... (deleted)`), are
/// found, mounted or not, even with --destroy-data.
#[test]
fn a_loop_backing_file_is_found_by_identity_whatever_its_name() {
    let test = "loop backing by identity";
    if !is_root() {
        return skip(test, "needs root");
    }
    let dir = tempdir();
    let spaced = dir.path().join("disk.img ");
    std::fs::write(&spaced, vec![0u8; 32 << 20]).unwrap();
    if let Err(why) = mkfs_ext4(spaced.to_str().unwrap()) {
        return skip(test, &format!("mkfs.ext4: {why}"));
    }
    let removed = dir.path().join("attached.img");
    let link = dir.path().join("hard-link.img");
    std::fs::copy(&spaced, &removed).unwrap();
    std::fs::hard_link(&removed, &link).unwrap();
    let mut stack = Stack::new();
    let (a, b) = match (stack.attach(&spaced, None), stack.attach(&removed, None)) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(why), _) | (_, Err(why)) => return skip(test, &format!("losetup: {why}")),
    };
    std::fs::remove_file(&removed).unwrap();
    if stack.mount(&a, &dir.path().join("mnt")).is_err() {
        return skip(test, "mount failed");
    }
    for (file, dev) in [(&spaced, &a), (&link, &b)] {
        let before = std::fs::read(file).unwrap();
        let (code, stderr) =
            write_run(&["--target", file.to_str().unwrap(), "--rw", "randwrite", "--destroy-data"]);
        assert_eq!(code, Some(2), "{}: {stderr}", file.display());
        assert!(stderr.contains(&format!("backs the loop device {dev}")), "{stderr}");
        assert!(std::fs::read(file).unwrap() == before, "{} was written", file.display());
    }
}

/// Issue 35, class 4: in use means in use, whatever the path. Through overlayfs a file has two identities
/// (the merged one, on the overlay's device, and the layer's): a loop device attached to the merged path,
/// and a process holding the merged path open, make the upper-layer path in use, and one holding the layer
/// file makes the merged path in use; each write is refused, even with --destroy-data, the bytes unchanged.
#[test]
fn a_file_in_use_through_overlayfs_is_in_use_under_its_layer_path_too() {
    let test = "overlayfs identities";
    if !is_root() {
        return skip(test, "needs root");
    }
    let dir = tempdir();
    let (upper, merged) = (dir.path().join("upper"), dir.path().join("merged"));
    let mut stack = Stack::new();
    let lower = dir.path().join("lower");
    if let Err(why) = stack.overlay(&lower, &upper, &dir.path().join("work"), &merged) {
        return skip(test, &format!("cannot mount overlayfs: {why}"));
    }
    for name in ["disk.img", "held.dat", "layer-held.dat"] {
        std::fs::write(merged.join(name), vec![7u8; 4 << 20]).unwrap();
    }
    if let Err(why) = stack.attach(&merged.join("disk.img"), None) {
        return skip(test, &format!("losetup: {why}"));
    }
    let mut holders: Vec<std::process::Child> = Vec::new();
    for held in [merged.join("held.dat"), upper.join("layer-held.dat")] {
        let f = std::fs::File::open(held).unwrap();
        holders.push(Command::new("sleep").arg("30").stdin(f).spawn().unwrap());
    }
    let cases = [
        (upper.join("disk.img"), "backs the loop device"),
        (upper.join("held.dat"), "held open by"),
        (merged.join("layer-held.dat"), "held open by"),
    ];
    for (file, why) in &cases {
        let before = std::fs::read(file).unwrap();
        let (code, stderr) =
            write_run(&["--target", file.to_str().unwrap(), "--rw", "randwrite", "--destroy-data"]);
        assert_eq!(code, Some(2), "{}: {stderr}", file.display());
        assert!(stderr.contains(why), "{}: {stderr}", file.display());
        assert!(std::fs::read(file).unwrap() == before, "{} was written", file.display());
    }
    for mut h in holders {
        let _ = h.kill();
        let _ = h.wait();
    }
}

/// Rule 3: whatever is built on a device protects it. A loop device stacked on another at an offset, with
/// a mounted ext4, makes the lower device in use: refused with --allow-write-device, even with
/// --destroy-data, and e2fsck finds the file system clean afterwards.
#[test]
fn a_device_with_a_mounted_file_system_stacked_on_it_is_never_written() {
    let test = "stacked loop devices";
    if !is_root() {
        return skip(test, "needs root");
    }
    let dir = tempdir();
    let image = dir.path().join("lower.img");
    std::fs::write(&image, vec![0u8; 48 << 20]).unwrap();
    let mut stack = Stack::new();
    let lower = match stack.attach(&image, None) {
        Ok(d) => d,
        Err(why) => return skip(test, &format!("losetup: {why}")),
    };
    let upper = stack.attach(Path::new(&lower), Some(8 << 20)).expect("a loop device over a loop device");
    if let Err(why) = mkfs_ext4(&upper) {
        return skip(test, &format!("mkfs.ext4: {why}"));
    }
    let before = std::fs::read(&image).unwrap();
    stack.mount(&upper, &dir.path().join("mnt")).expect("mount the upper device");
    for consent in [&["--allow-write-device"][..], &["--allow-write-device", "--destroy-data"][..]] {
        let mut args = vec!["--target", lower.as_str(), "--rw", "randwrite"];
        args.extend_from_slice(consent);
        let (code, stderr) = write_run(&args);
        assert_eq!(code, Some(2), "{stderr}");
        assert!(
            stderr.contains(&upper) && stderr.contains("mounted at"),
            "names what is built on it: {stderr}"
        );
    }
    crate::util::unmount(&dir.path().join("mnt"));
    stack.mounts.clear();
    // Unmounted, the stacked device is still built on it: refused until it is detached.
    let (code, stderr) =
        write_run(&["--target", lower.as_str(), "--rw", "randwrite", "--allow-write-device"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains(&upper), "{stderr}");
    let _ = Command::new("sync").status();
    assert!(std::fs::read(&image).unwrap()[..8 << 20] == before[..8 << 20], "the lower device's own bytes");
    sh("e2fsck", &["-f", "-n", &upper]).expect("the stacked file system is intact");
}

/// Rule 3, downwards: a loop device's bytes live beneath it. A loop device over a mounted device, and a
/// second loop device over the file a mounted one is backed by, are in use: refused even with
/// --destroy-data.
#[test]
fn a_loop_device_over_bytes_in_use_is_never_written() {
    let test = "loop devices over bytes in use";
    if !is_root() {
        return skip(test, "needs root");
    }
    let dir = tempdir();
    let image = dir.path().join("fs.img");
    std::fs::write(&image, vec![0u8; 32 << 20]).unwrap();
    if let Err(why) = mkfs_ext4(image.to_str().unwrap()) {
        return skip(test, &format!("mkfs.ext4: {why}"));
    }
    let mut stack = Stack::new();
    let mounted = match stack.attach(&image, None) {
        Ok(d) => d,
        Err(why) => return skip(test, &format!("losetup: {why}")),
    };
    stack.mount(&mounted, &dir.path().join("mnt")).expect("mount");
    let over_device = stack.attach(Path::new(&mounted), Some(1 << 20)).expect("loop over the mounted device");
    let same_file = stack.attach(&image, Some(4 << 20)).expect("a second loop over the same file");
    let before = std::fs::read(&image).unwrap();
    for dev in [&over_device, &same_file] {
        let args = ["--target", dev.as_str(), "--rw", "randwrite", "--allow-write-device", "--destroy-data"];
        let (code, stderr) = write_run(&args);
        assert_eq!(code, Some(2), "{dev}: {stderr}");
        assert!(stderr.contains(&mounted) && stderr.contains("mounted at"), "{dev}: {stderr}");
    }
    assert!(std::fs::read(&image).unwrap() == before, "the mounted file system's image changed");
}

/// Rule 4: iolab overwrites, without a flag, only what it made. An ordinary text file, a qcow2 image and
/// the `-wal` of a live SQLite database are each refused (naming the file, its size, what it holds and the
/// flag) and left byte-identical; a file iolab created is written again freely.
#[test]
fn a_write_job_overwrites_only_what_iolab_made() {
    let dir = tempdir();
    let text = dir.path().join("notes.txt");
    std::fs::write(&text, "a line of someone's notes\n".repeat(400_000)).unwrap();
    let qcow = dir.path().join("vm.qcow2");
    let mut q = vec![0u8; 1 << 20];
    q[..4].copy_from_slice(b"QFI\xfb");
    std::fs::write(&qcow, &q).unwrap();
    for (file, holds, flag) in [(&text, "text", "--overwrite"), (&qcow, "qcow2 disk image", "--destroy-data")]
    {
        let before = std::fs::read(file).unwrap();
        let (code, stderr) =
            write_run(&["--target", file.to_str().unwrap(), "--rw", "randwrite", "--buffered"]);
        assert_eq!(code, Some(2), "{stderr}");
        assert!(
            stderr.contains(file.to_str().unwrap()) && stderr.contains(holds) && stderr.contains(flag),
            "{stderr}"
        );
        assert!(std::fs::read(file).unwrap() == before, "{} was changed", file.display());
    }
    let (code, stderr) =
        write_run(&["--target", text.to_str().unwrap(), "--rw", "randwrite", "--buffered", "--overwrite"]);
    assert_eq!(code, Some(0), "consent typed: {stderr}");
    // iolab's own file: created, then written by a second run with no flag.
    let ours = dir.path().join("ours.dat");
    let args = ["--target", ours.to_str().unwrap(), "--size", "8M", "--rw", "randwrite", "--buffered"];
    assert_eq!(write_run(&args).0, Some(0));
    let (code, stderr) = write_run(&args);
    assert_eq!(code, Some(0), "a file iolab made: {stderr}");
}

/// Rules 4 and 5 on a live database: the `-wal` file of an SQLite database that another process has open
/// is refused (in use, even with --destroy-data), and its committed rows survive.
#[test]
fn the_wal_file_of_a_live_sqlite_database_is_never_written() {
    let test = "live SQLite -wal";
    let dir = tempdir();
    let db = dir.path().join("live.db");
    let script = "PRAGMA journal_mode=WAL;\nPRAGMA wal_autocheckpoint=0;\nCREATE TABLE t(x);\n\
                  INSERT INTO t VALUES ('committed');\nSELECT x FROM t;\n.shell sleep 20\n";
    let child = Command::new("sqlite3")
        .arg(&db)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn();
    let Ok(mut child) = child else { return skip(test, "sqlite3 is not installed") };
    use std::io::Write;
    child.stdin.as_mut().unwrap().write_all(script.as_bytes()).unwrap();
    let wal = dir.path().join("live.db-wal");
    for _ in 0..100 {
        if std::fs::metadata(&wal).is_ok_and(|m| m.len() > 0) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let before = std::fs::read(&wal).unwrap_or_default();
    let (code, stderr) =
        write_run(&["--target", wal.to_str().unwrap(), "--rw", "randwrite", "--buffered", "--destroy-data"]);
    let (code2, stderr2) = write_run(&["--target", wal.to_str().unwrap(), "--rw", "randwrite", "--buffered"]);
    let _ = child.kill();
    let _ = child.wait();
    if before.is_empty() {
        return skip(test, "sqlite3 did not leave a -wal file");
    }
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("sqlite3") && stderr.contains("not even with --destroy-data"), "{stderr}");
    assert_eq!(code2, Some(2), "{stderr2}");
    let rows = sh("sqlite3", &[db.to_str().unwrap(), "SELECT x FROM t"]).unwrap_or_default();
    assert_eq!(rows, "committed", "the committed row survives");
}

/// Rule 5: an active swap file is in use (found by inode in /proc/swaps), refused even with --destroy-data.
#[test]
fn an_active_swap_file_is_never_written() {
    let test = "swap file";
    if !is_root() {
        return skip(test, "needs root");
    }
    let dir = tempdir();
    let swap = dir.path().join("swapfile");
    std::fs::write(&swap, vec![0u8; 16 << 20]).unwrap();
    std::fs::set_permissions(&swap, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    if let Err(why) =
        sh("mkswap", &[swap.to_str().unwrap()]).and_then(|_| sh("swapon", &[swap.to_str().unwrap()]))
    {
        return skip(test, &format!("swapon: {why}"));
    }
    // An active swap file cannot be renamed or linked (the kernel refuses): it is found by inode all the same.
    let renamed = swap;
    let before = std::fs::read(&renamed).unwrap();
    let (code, stderr) = write_run(&[
        "--target",
        renamed.to_str().unwrap(),
        "--rw",
        "randwrite",
        "--buffered",
        "--destroy-data",
    ]);
    let _ = sh("swapoff", &[renamed.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("in use as swap"), "{stderr}");
    assert!(std::fs::read(&renamed).unwrap() == before, "the swap file was written");
}

/// Rule 6: another user's symlink in a world-writable directory is never followed, for a target or an
/// output, whatever `fs.protected_symlinks` says.
#[test]
fn another_users_symlink_in_a_shared_directory_is_never_followed() {
    let test = "protected symlinks";
    if !is_root() {
        return skip(test, "needs root to own a symlink as another user");
    }
    let dir = tempdir();
    let shared = dir.path().join("shared");
    std::fs::create_dir(&shared).unwrap();
    std::fs::set_permissions(&shared, std::os::unix::fs::PermissionsExt::from_mode(0o1777)).unwrap();
    let precious = dir.path().join("precious");
    std::fs::write(&precious, b"root's precious data").unwrap();
    let planted = shared.join("test.dat");
    std::os::unix::fs::symlink(&precious, &planted).unwrap();
    std::os::unix::fs::lchown(&planted, Some(65534), Some(65534)).unwrap();
    let target = planted.to_str().unwrap();
    let cases: [&[&str]; 3] = [
        &["--target", target, "--size", "8M", "--rw", "randwrite", "--buffered", "--overwrite"],
        &["--target", "sim:fixed,latency=100us", "--clock", "virtual", "--json", target],
        &["--target", "sim:fixed,latency=100us", "--clock", "virtual", "--csv", target],
    ];
    for args in cases {
        let (code, stderr) = write_run(args);
        assert_eq!(code, Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains("symlink owned by user 65534"), "{stderr}");
        assert_eq!(std::fs::read(&precious).unwrap(), b"root's precious data");
    }
    assert!(std::fs::symlink_metadata(&planted).unwrap().file_type().is_symlink(), "the link is left alone");
    // A hard link there is another name for a file elsewhere (anyone could have made it while the kernel's
    // protected_hardlinks is off): never written, whatever the flags.
    let hard = shared.join("hard.dat");
    std::fs::hard_link(&precious, &hard).unwrap();
    let args = ["--target", hard.to_str().unwrap(), "--rw", "randwrite", "--buffered", "--destroy-data"];
    let (code, stderr) = write_run(&args);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("hard link"), "{stderr}");
    assert_eq!(std::fs::read(&precious).unwrap(), b"root's precious data");
}

/// Rule 7: the job file is an input, claimed in the gate: an output on it is refused and it is unchanged.
#[test]
fn an_output_on_the_job_file_is_refused_and_the_job_file_unchanged() {
    let dir = tempdir();
    let job = dir.path().join("job.toml");
    let text = "rw = \"randread\"\nqd = 4\n";
    std::fs::write(&job, text).unwrap();
    let j = job.to_str().unwrap();
    let sim = ["--target", "sim:fixed,latency=100us", "--clock", "virtual", "-d", "1s", "-q", "--no-save"];
    for out_flag in ["--json", "--csv", "--trace"] {
        let out = iolab().args(["run", j]).args(sim).args([out_flag, j]).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{out_flag}: {}", String::from_utf8_lossy(&out.stderr));
        assert!(String::from_utf8_lossy(&out.stderr).contains("the job file"), "{out_flag}");
        assert_eq!(std::fs::read_to_string(&job).unwrap(), text, "{out_flag} replaced the job file");
    }
    let out = iolab().args(["sweep", j]).args(sim).args(["--qd", "1,2", "--json", j]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "sweep: {}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(std::fs::read_to_string(&job).unwrap(), text);
    // compare's inputs are claimed too.
    let a = dir.path().join("a.json");
    let b = dir.path().join("b.json");
    for side in [&a, &b] {
        let out = iolab().args(["run"]).args(sim).args(["--json", side.to_str().unwrap()]).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let a_bytes = std::fs::read(&a).unwrap();
    let (sa, sb) = (a.to_str().unwrap(), b.to_str().unwrap());
    let out = iolab().args(["compare", sa, sb, "--json", sa]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "compare: {}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(std::fs::read(&a).unwrap(), a_bytes, "compare replaced its own input");
}
