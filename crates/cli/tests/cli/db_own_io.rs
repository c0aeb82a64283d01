//! The database's own I/O apart from everyone else's (issue 37, item 1): `iolab db` counts what the
//! database's processes issued (for SQLite, iolab's own) in a cgroup's block I/O accounting and puts it
//! beside the device table's whole-device figures. Root only (loop devices, mounts, cgroups): each test says
//! SKIP and passes otherwise.

use crate::db_storage::Ext4;
use crate::util::iolab;
use serde_json::Value;
use std::fs::OpenOptions;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Another process's I/O on the same file system until `done`: O_DIRECT 1 MiB writes and reads over a
/// 32 MiB file of its own, so the device does it whatever the page cache holds. Returns the bytes.
fn neighbour(file: &Path, done: Arc<AtomicBool>) -> std::thread::JoinHandle<u64> {
    const CHUNK: usize = 1 << 20;
    const SIZE: u64 = 32 << 20;
    let f = OpenOptions::new()
        .create(true)
        .truncate(true)
        .read(true)
        .write(true)
        .custom_flags(libc::O_DIRECT)
        .open(file)
        .unwrap();
    std::thread::spawn(move || {
        let mut buf = vec![7u8; CHUNK + 4096];
        let at = buf.as_ptr().align_offset(4096);
        let chunk = &mut buf[at..at + CHUNK];
        let (mut bytes, mut pos) = (0u64, 0u64);
        while !done.load(Ordering::Relaxed) {
            f.write_all_at(chunk, pos).unwrap();
            if pos > 0 {
                f.read_exact_at(chunk, pos - CHUNK as u64).unwrap();
            }
            bytes += 2 * CHUNK as u64;
            pos = (pos + CHUNK as u64) % SIZE;
        }
        bytes
    })
}

/// A warm SQLite tpcc (its database in the page cache) while another process writes and reads the same
/// device: the device table counts both, the database's own I/O only iolab's (SQLite runs in it), counted in
/// a blkio cgroup of its own: its writes (commits) are some of the device's, its reads next to none, so the
/// "much more" warning fires, and "served from memory" follows the database's reads, not the device's
/// (which the neighbour's fill). The text shows the lines, and the cgroup is gone after.
#[test]
fn the_database_s_own_io_stands_apart_from_a_neighbour_s() {
    if iolab_device::throttle::detect().is_none() {
        return iolab_testkit::skip(format_args!("no cgroup block I/O controller"));
    }
    let fs = match Ext4::new(256) {
        Ok(f) => f,
        Err(why) => return iolab_testkit::skip(why),
    };
    let dir = fs.path("db");
    let args = [
        "db",
        "tpcc",
        "--dir",
        dir.to_str().unwrap(),
        "--items",
        "10000",
        "--users",
        "1",
        "--ramp",
        "1s",
        "--duration",
        "2s",
        "--seed",
        "5",
    ];
    let done = Arc::new(AtomicBool::new(false));
    let other = neighbour(&fs.path("neighbour"), done.clone());
    let json = tempfile::NamedTempFile::new().unwrap();
    let out = iolab().args(args).args(["--json", json.path().to_str().unwrap()]).output().unwrap();
    done.store(true, Ordering::Relaxed);
    let moved = other.join().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&std::fs::read(json.path()).unwrap()).unwrap();
    let io = &v["database_io"];
    assert!(io["source"].as_str().is_some_and(|s| s.contains("iolab-acct-")), "{io}");
    assert_eq!(io["whose"], "iolab's process (SQLite runs in it)");
    let name = fs.name();
    let disk = io["disks"].as_array().unwrap().iter().find(|d| d["name"] == name).expect("the loop device");
    let n = |k: &str| disk[k].as_u64().unwrap_or_else(|| panic!("{k} in {disk}"));
    let dev = v["devices"].as_array().unwrap().iter().find(|d| d["name"] == name).unwrap();
    assert_eq!(n("device_write_bytes"), dev["write_bytes"].as_u64().unwrap());
    assert!(n("writes") > 0 && n("write_bytes") > 0, "commits write: {disk}");
    assert!(n("write_bytes") < n("device_write_bytes"), "the neighbour wrote too ({moved} bytes): {disk}");
    // A warm database reads next to nothing itself (a block of the file system's now and then).
    assert!(n("read_bytes") < 1 << 20, "a warm database: {disk}");
    assert!(n("device_read_bytes") >= 16 << 20, "the neighbour read: {disk}");
    let warnings: Vec<&str> = v["warnings"].as_array().unwrap().iter().map(|w| w.as_str().unwrap()).collect();
    let said = |what: &str| warnings.iter().any(|w| w.contains(what));
    assert!(
        said("the devices did much more than the database (") && said(&format!("{name} read ")),
        "{warnings:?}"
    );
    // Served from memory is the database's reads, not the device's: the neighbour's do not hide it.
    assert_eq!(said("served from memory"), n("read_bytes") == 0, "{warnings:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("the database's own I/O, same window"), "{text}");
    assert!(text.contains("not seen: "), "{text}");
    iolab_report::schema_check::check_document(&v, iolab_report::schema_check::DB_SCHEMA);
    let left = crate::db_storage::left_cgroups(Path::new("/sys/fs/cgroup"), "iolab-acct-");
    assert!(left.is_empty(), "cgroups left: {left:?}");
}

/// With `--throttle` its cgroup is the account (one cgroup holds the processes for both): the database's own
/// I/O is read there, and says so.
#[test]
fn under_throttle_the_throttle_s_cgroup_counts_the_database_s_io() {
    if iolab_device::throttle::detect().is_none() {
        return iolab_testkit::skip(format_args!("no cgroup block I/O controller"));
    }
    let fs = match Ext4::new(256) {
        Ok(f) => f,
        Err(why) => return iolab_testkit::skip(why),
    };
    let dir = fs.path("db");
    let args = [
        "db",
        "tpcc",
        "--dir",
        dir.to_str().unwrap(),
        "--items",
        "10000",
        "--users",
        "1",
        "--ramp",
        "0s",
        "--duration",
        "1s",
        "--seed",
        "5",
        "-q",
        "--throttle",
        "wiops=100000",
        "--json",
        "-",
    ];
    let out = iolab().args(args).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let io = &v["database_io"];
    let source = io["source"].as_str().unwrap_or_else(|| panic!("{io}"));
    assert!(source.contains("/iolab-") && source.ends_with("(the throttle's)"), "{source}");
    let disk = &io["disks"][0];
    assert!(disk["write_bytes"].as_u64().unwrap() > 0, "{disk}");
    assert!(disk["write_bytes"].as_u64().unwrap() <= disk["device_write_bytes"].as_u64().unwrap(), "{disk}");
}

/// Not root, no cgroup to count in: the document says why the database's own I/O was not counted, in the
/// JSON and the text, never a silent 0.
#[test]
fn not_root_the_database_s_own_io_is_not_measured_and_says_why() {
    let have_setpriv = std::process::Command::new("setpriv").arg("--version").output().is_ok();
    if !crate::util::is_root() || !have_setpriv {
        return iolab_testkit::skip(format_args!(
            "needs root and setpriv(1) to run iolab as another account"
        ));
    }
    use std::os::unix::fs::PermissionsExt;
    let t = tempfile::Builder::new().prefix("iolab-acct-user-").tempdir_in("/tmp").unwrap();
    std::fs::set_permissions(t.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let out = std::process::Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "env", "HOME=/nonexistent"])
        .arg(format!("XDG_STATE_HOME={}", t.path().join("state").display()))
        .arg(assert_cmd::cargo::cargo_bin("iolab"))
        .args(["db", "tpcc", "--dir", t.path().join("db").to_str().unwrap(), "--items", "1000"])
        .args(["--users", "1", "--ramp", "0s", "--duration", "1s", "--seed", "5", "--no-save", "-q"])
        .args(["--json", t.path().join("r.json").to_str().unwrap()])
        .current_dir("/")
        .output()
        .expect("spawn setpriv");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&std::fs::read(t.path().join("r.json")).unwrap()).unwrap();
    let io = &v["database_io"];
    assert!(io["unmeasured"].as_str().is_some_and(|w| w.contains("not root")), "{io}");
    assert!(io.get("source").is_none() && io["disks"].as_array().unwrap().is_empty(), "{io}");
    iolab_report::schema_check::check_document(&v, iolab_report::schema_check::DB_SCHEMA);
}

/// `iolab run` on a device another process shares (issue 37, item 1, "the same for iolab run"): a
/// read-only run on a file of a private ext4 while a neighbour writes and reads its own file there. The
/// device (its /proc/diskstats counters over the window) wrote tens of MiB, the run none: `shared_device`
/// names the device and both sides' bytes. Alone on the device, the same run gives no such warning.
#[test]
fn a_run_on_a_shared_device_says_the_device_did_more_than_the_run() {
    let fs = match Ext4::new(256) {
        Ok(f) => f,
        Err(why) => return iolab_testkit::skip(why),
    };
    let target = fs.path("t");
    let t = target.to_str().unwrap();
    let args = ["--target", t, "--size", "16M", "--rw", "read", "--bs", "64k", "-d", "2s", "--no-save"];
    let shared =
        |v: &Value| v["warnings"].as_array().unwrap().iter().find(|w| w["kind"] == "shared_device").cloned();
    let alone = crate::util::run_json(&args);
    assert_eq!(shared(&alone), None, "{}", alone["warnings"]);
    let done = Arc::new(AtomicBool::new(false));
    let other = neighbour(&fs.path("other"), done.clone());
    let v = crate::util::run_json(&args);
    done.store(true, Ordering::Relaxed);
    other.join().unwrap();
    let w = shared(&v).unwrap_or_else(|| panic!("no shared_device warning: {}", v["warnings"]));
    assert_eq!(w["own_write_bytes"], 0);
    assert!(w["device_write_bytes"].as_u64().unwrap() >= 16 << 20, "{w}");
    assert_eq!(w["own_read_bytes"], v["total"]["read"]["bytes"]);
}
